"""Piratenbillard settings, validated from a JSON object into a frozen value.

Every reading of the rulebook that could reasonably go two ways is a switch
here, so a table that plays it the other way changes a setting, not the code.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from ..errors import InputError
from ..events import shown

STACK_VIOLATIONS = ("foul", "restrike")
AFTER_END = ("warn", "error")


@dataclass(frozen=True)
class PiratenbillardConfig:
    target_points: int = 7  # PB-6.1: "at least 7 points"; players may agree on another total
    balls_per_player: int = 8  # PB-1.3: one ball on each of the 8 spaces of the starting row
    first_seat: int | None = None  # PB-2.1: the youngest player's seat; None = first player listed
    stack_violation: str = "foul"  # PB-5.3: "foul" = flagged foul, shot stands; "restrike" = also strike again
    after_end: str = "warn"  # PB-7.3: events after the game ended: "warn" (flag, ignore) or "error"
    min_confidence: float = 0.5  # PB-7.2: snapshots below this are flagged for the umpire

    @staticmethod
    def from_dict(data: Any) -> "PiratenbillardConfig":
        if not isinstance(data, dict):
            raise InputError("config: must be a JSON object of settings")
        known = {f.name for f in fields(PiratenbillardConfig)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InputError(f"config: unknown setting {unknown[0]!r}; use one of {', '.join(sorted(known))}")
        defaults = PiratenbillardConfig()
        values = {name: data.get(name, getattr(defaults, name)) for name in known}
        _int_in(values, "target_points", 1, 96 * 3)
        _int_in(values, "balls_per_player", 1, 8)
        if values["first_seat"] is not None:
            _int_in(values, "first_seat", 0, 3)
        _choice(values, "stack_violation", STACK_VIOLATIONS)
        _choice(values, "after_end", AFTER_END)
        value = values["min_confidence"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            raise InputError(f"config: 'min_confidence' must be a number from 0 to 1, got {shown(value)}")
        values["min_confidence"] = float(value)
        return PiratenbillardConfig(**values)


def _int_in(values: dict[str, Any], name: str, low: int, high: int) -> None:
    value = values[name]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"config: {name!r} must be an integer from {low} to {high}, got {shown(value)}")


def _choice(values: dict[str, Any], name: str, choices: tuple[str, ...]) -> None:
    if values[name] not in choices:
        raise InputError(f"config: {name!r} must be one of {', '.join(repr(c) for c in choices)}, "
                         f"got {shown(values[name])}")
