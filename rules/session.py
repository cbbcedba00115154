"""A session file: the umpire's inputs for a refereed match (game start, rounds, choices, calls).

Either JSON lines of umpire events, or a JSON object whose `events` list holds
them (a simulation's truth.json, whose `config` is then the game config the
match was played under). Observations in a truth file are skipped: vision makes
its own; any other type (a misspelt umpire input) is an error. docs/pipeline.md,
"Umpire inputs".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import InputError
from .events import OBSERVATIONS, UMPIRE_INPUTS, Event, LogError, parse_event, shown
from .files import decode_json_lines, loads, read_text

UMPIRE_TYPES = frozenset(cls.TYPE for cls in UMPIRE_INPUTS)
OBSERVATION_TYPES = frozenset(cls.TYPE for cls in OBSERVATIONS)  # in a truth file; skipped
FIX = "give JSON lines of umpire events (docs/events.md) or a truth.json"


@dataclass(frozen=True)
class Session:
    events: tuple[Event, ...]  # umpire inputs, in file order
    config: dict[str, Any] = field(default_factory=dict)  # a truth file's game config; {} for JSON lines


def load_session(path: str | Path) -> Session:
    """Read a session file; any problem is one InputError line naming the file and the entry."""
    text = read_text(path, "session file", fix=FIX)
    config: Any = {}
    rows: list[tuple[int, Any]]  # (entry number: the line of JSON lines, the place in a truth's events list)
    try:
        whole = loads(text)
    except json.JSONDecodeError:  # JSON lines (one line is a whole document, so a bad line fails again there)
        rows = decode_json_lines(text.split("\n"), f"session file {path}", fix=FIX)
    else:
        if isinstance(whole, dict) and "events" in whole:
            events_list, config = whole.get("events"), whole.get("config") or {}
            if not isinstance(events_list, list):
                raise InputError(f"session file {path}: 'events' must be a list of events; {FIX}")
            rows = list(enumerate(events_list, start=1))
        else:
            rows = [(1, whole)]
    if not isinstance(config, dict):
        raise InputError(f"session file {path}: 'config' must be an object of game settings")
    events = []
    for number, row in rows:
        kind = row.get("type") if isinstance(row, dict) else None
        if isinstance(kind, str) and kind in OBSERVATION_TYPES:
            continue  # observations in a truth file: vision makes its own
        if isinstance(row, dict) and not (isinstance(kind, str) and kind in UMPIRE_TYPES):
            raise InputError(f"session file {path} entry {number}: unknown type {shown(kind)}; a session holds "
                             f"umpire inputs ({', '.join(sorted(UMPIRE_TYPES))}), and a truth.json may hold "
                             f"observations too ({', '.join(sorted(OBSERVATION_TYPES))}), which are skipped")
        try:
            events.append(parse_event(row))  # keeps the entry's own id, if any (no line id: L<n> is a log's)
        except LogError as error:
            raise InputError(f"session file {path} entry {number}: {error}") from None
    return Session(tuple(events), dict(config))
