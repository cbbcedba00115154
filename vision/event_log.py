"""The run's record, written as it happens: events.jsonl and decisions.jsonl.

`events.jsonl` is a plain event log (docs/events.md): the observations vision
made and the umpire inputs of the session, one per line, in time order, with
no ids, so `referee replay` reads it as is and gives each line the id `L<n>`.
The live engine is fed the very same ids, so its calls and the replay's agree.
Decisions and pipeline warnings go to `decisions.jsonl` instead, because the
log reader rightly rejects unknown types. Each line is flushed at once: a crash
loses nothing already called, and what was written stays valid JSON lines.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from rules.decisions import Decision
from rules.events import Event


class EventLog:
    def __init__(self, out_dir: str | Path) -> None:
        self.dir = Path(out_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.events_path = self.dir / "events.jsonl"
        self.decisions_path = self.dir / "decisions.jsonl"
        self._events = self.events_path.open("w", encoding="utf-8")
        self._decisions = self.decisions_path.open("w", encoding="utf-8")
        self.lines = 0
        self.warnings = 0

    def event(self, event: Event) -> Event:
        """Write one event; return it carrying the id replay will give its line."""
        self.lines += 1
        self._write(self._events, event.to_json())
        return event if event.id else replace(event, id=f"L{self.lines}")

    def decision(self, decision: Decision) -> None:
        self._write(self._decisions, {"type": "decision", **decision.to_json()})

    def warning(self, t: float, message: str, **fields: Any) -> None:
        self.warnings += 1
        self._write(self._decisions, {"type": "warning", "t": round(t, 4), "message": message, **fields})

    @staticmethod
    def _write(stream, data: dict[str, Any]) -> None:
        stream.write(json.dumps(data, separators=(",", ":")) + "\n")
        stream.flush()

    def close(self) -> None:
        self._events.close()
        self._decisions.close()

    def __enter__(self) -> "EventLog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
