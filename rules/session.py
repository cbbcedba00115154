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

UMPIRE_TYPES = frozenset(cls.TYPE for cls in UMPIRE_INPUTS)


@dataclass(frozen=True)
class Session:
    events: tuple[Event, ...]  # umpire inputs, in file order
    config: dict[str, Any] = field(default_factory=dict)  # a truth file's game config; {} for JSON lines


def load_session(path: str | Path) -> Session:
    """Read a session file; any problem is one InputError line naming the file and the entry."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"session file {path} does not exist; check the path") from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"session file {path} cannot be read ({error}); pass a UTF-8 JSON-lines file") from None
    config: Any = {}
    try:
        whole = json.loads(text)
        if isinstance(whole, dict) and "events" in whole:
            rows, config = whole.get("events"), whole.get("config") or {}
        else:
            rows = [whole]
    except json.JSONDecodeError:
        try:
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as error:
            raise InputError(f"session file {path}: not JSON lines ({error.msg}); one umpire event per line") \
                from None
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
