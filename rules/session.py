"""A session file: the umpire's inputs for a refereed match (game start, rounds, choices, calls).

Either JSON lines of umpire events, or a JSON object whose `events` list holds
them (a simulation's truth.json, whose `config` is then the game config the
match was played under). Observations in a truth file are skipped: vision makes
its own. docs/pipeline.md, "Umpire inputs".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .errors import InputError
from .events import UMPIRE_INPUTS, Event, LogError, parse_event
from .files import decode_json_lines, read_text

UMPIRE_TYPES = frozenset(cls.TYPE for cls in UMPIRE_INPUTS)
FIX = "give JSON lines of umpire events (docs/events.md) or a truth.json"


@dataclass(frozen=True)
class Session:
    events: tuple[Event, ...]  # umpire inputs, in file order
    config: dict[str, Any] = field(default_factory=dict)  # a truth file's game config; {} for JSON lines


def load_session(path: str | Path) -> Session:
    """Read a session file; any problem is one InputError line naming the file and the entry."""
    text = read_text(path, "session file", fix=FIX)
    config: Any = {}
    try:
        whole = json.loads(text)
        if isinstance(whole, dict) and "events" in whole:
            rows, config = whole.get("events"), whole.get("config") or {}
        else:
            rows = [whole]
    except json.JSONDecodeError:
        rows = [row for _, row in decode_json_lines(text.splitlines(), f"session file {path}", fix=FIX)]
    if not isinstance(config, dict):
        raise InputError(f"session file {path}: 'config' must be an object of game settings")
    events = []
    for number, row in enumerate(rows or [], start=1):
        if isinstance(row, dict) and row.get("type") not in UMPIRE_TYPES:
            continue  # observations in a truth file: vision makes its own
        try:
            events.append(replace(parse_event(row), id=row.get("id", "") if isinstance(row, dict) else ""))
        except LogError as error:
            raise InputError(f"session file {path} entry {number}: {error}") from None
    return Session(tuple(events), dict(config))
