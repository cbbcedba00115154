"""Star Cluster Ball settings: parsed once from a JSON object into frozen values.

Every reading of an ambiguous rule that has two plausible answers is a field
here (docs/rules.md names the clause each one belongs to), so an
event organiser can pick theirs without touching code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..events import shown

SIDES = ("right", "left")


@dataclass(frozen=True)
class DeadBallRule:
    """SCB-9.4: balls landing in these slots late in a round score nothing."""

    positions: tuple[int, ...] = ()  # whole positions that are dead areas
    slots: tuple[tuple[int, int], ...] = ()  # single (position, slot) dead areas
    from_fraction: float = 0.5  # "the second half of a Round"

    def covers(self, position: int, slot: int) -> bool:
        return position in self.positions or (position, slot) in self.slots


@dataclass(frozen=True)
class OptionalRules:
    grand_slam_finish: bool = False
    blocking: bool = False
    blocking_needs_this_shot: bool = True  # the sandwich must be completed by the current shot
    multipliers: tuple[int, ...] = ()  # per position (index 0 = Position 1); empty = all ×1
    dead_ball: DeadBallRule | None = None


@dataclass(frozen=True)
class StarClusterConfig:
    balls_per_player: int = 10
    slots_per_position: tuple[int, ...] = (7, 5, 3)
    base_scores: tuple[int, ...] = (1, 2, 5)
    chain_bonus: tuple[int, ...] = (1, 2, 5)
    round_seconds: float = 360.0
    tiebreak_seconds: float = 180.0
    rounds_per_game: int = 2
    round_starters: tuple[str, ...] = ("right", "left")  # side that starts round 1, 2, ... (cycled)
    tiebreak_starter: str = "right"  # side that starts the first tie-break round (then alternates)
    tiebreak_no_score: str = "another_round"  # "another_round" | "shared"
    clock: str = "events"  # "events" | "umpire"
    knocked_out_ball_loses_points: bool = False
    void_shot_displaced: str = "restore"  # "restore" | "stand"
    grouping_ends_turn: str = "unless_scored"  # "unless_scored" | "always"
    table_movement_foul_mm: float = 5.0
    review_confidence: float = 0.6  # observations below this are flagged for the umpire
    target_score: int | None = None
    target_round_limit: int | None = None  # with a target: None = play rounds until reached
    best_of: int = 1
    optional_rules: OptionalRules = field(default_factory=OptionalRules)

    @property
    def positions(self) -> int:
        return len(self.slots_per_position)

    def multiplier(self, position: int) -> int:
        mult = self.optional_rules.multipliers
        return mult[position - 1] if mult else 1

    @staticmethod
    def from_dict(data: dict[str, Any]) -> "StarClusterConfig":
        """Validate a JSON config; any bad field raises InputError naming it."""
        return _parse(data)


def _fail(name: str, rule: str, value: Any) -> InputError:
    return InputError(f"config: '{name}' must be {rule}, got {shown(value)}")


def _int(data: dict[str, Any], name: str, default: int, minimum: int, path: str = "") -> int:
    value = data.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _fail(path + name, f"an integer >= {minimum}", value)
    return value


def _num(data: dict[str, Any], name: str, default: float, minimum: float, path: str = "") -> float:
    value = data.get(name, default)
    try:  # an integer too large for a float overflows; NaN and Infinity are no durations or distances
        number = float(value) if not isinstance(value, bool) and isinstance(value, (int, float)) else math.nan
    except OverflowError:
        number = math.nan
    if not math.isfinite(number) or number < minimum:
        raise _fail(path + name, f"a finite number >= {minimum:g}", value)
    return number


def _bool(data: dict[str, Any], name: str, default: bool, path: str = "") -> bool:
    value = data.get(name, default)
    if not isinstance(value, bool):
        raise _fail(path + name, "true or false", value)
    return value


def _choice(data: dict[str, Any], name: str, default: str, choices: tuple[str, ...]) -> str:
    value = data.get(name, default)
    if value not in choices:
        raise _fail(name, " or ".join(repr(c) for c in choices), value)
    return value


def _int_list(data: dict[str, Any], name: str, default: tuple[int, ...], length: int | None,
              minimum: int) -> tuple[int, ...]:
    value = data.get(name, list(default))
    if not isinstance(value, list) or not value or (length is not None and len(value) != length):
        size = f"{length} " if length is not None else ""
        raise _fail(name, f"a list of {size}integers", value)
    for i, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, int) or item < minimum:
            raise _fail(f"{name}.{i}", f"an integer >= {minimum}", item)
    return tuple(value)


KNOWN = {
    "balls_per_player", "slots_per_position", "base_scores", "chain_bonus", "round_seconds", "tiebreak_seconds",
    "rounds_per_game", "round_starters", "tiebreak_starter", "tiebreak_no_score", "clock",
    "knocked_out_ball_loses_points", "void_shot_displaced", "grouping_ends_turn", "table_movement_foul_mm",
    "review_confidence", "target_score", "target_round_limit", "best_of", "optional_rules",
}
KNOWN_OPTIONAL = {"grand_slam_finish", "blocking", "blocking_needs_this_shot", "multipliers", "dead_ball"}


def _parse(data: dict[str, Any]) -> StarClusterConfig:
    if not isinstance(data, dict):
        raise InputError("config: must be a JSON object of settings")
    unknown = sorted(set(data) - KNOWN)
    if unknown:
        raise InputError(f"config: unknown setting {unknown[0]!r}; known settings: {', '.join(sorted(KNOWN))}")
    d = StarClusterConfig()
    slots = _int_list(data, "slots_per_position", d.slots_per_position, None, 1)
    n = len(slots)
    starters = data.get("round_starters", list(d.round_starters))
    if not isinstance(starters, list) or not starters or any(s not in SIDES for s in starters):
        raise _fail("round_starters", "a non-empty list of 'right' / 'left'", starters)
    target = data.get("target_score")
    if target is not None and (isinstance(target, bool) or not isinstance(target, int) or target < 1):
        raise _fail("target_score", "null or an integer >= 1", target)
    limit = data.get("target_round_limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise _fail("target_round_limit", "null or an integer >= 1", limit)
    best_of = _int(data, "best_of", d.best_of, 1)
    if best_of % 2 == 0:
        raise _fail("best_of", "an odd number (1, 3, 5 ...) so a majority exists", best_of)
    review = _num(data, "review_confidence", d.review_confidence, 0.0)
    if review > 1:
        raise _fail("review_confidence", "a number from 0 to 1", review)
    return StarClusterConfig(
        balls_per_player=_int(data, "balls_per_player", d.balls_per_player, 1),
        slots_per_position=slots,
        base_scores=_int_list(data, "base_scores", d.base_scores if n == 3 else (), n, 0),
        chain_bonus=_int_list(data, "chain_bonus", d.chain_bonus if n == 3 else (), n, 0),
        round_seconds=_num(data, "round_seconds", d.round_seconds, 1.0),
        tiebreak_seconds=_num(data, "tiebreak_seconds", d.tiebreak_seconds, 1.0),
        rounds_per_game=_int(data, "rounds_per_game", d.rounds_per_game, 1),
        round_starters=tuple(starters),
        tiebreak_starter=_choice(data, "tiebreak_starter", d.tiebreak_starter, SIDES),
        tiebreak_no_score=_choice(data, "tiebreak_no_score", d.tiebreak_no_score, ("another_round", "shared")),
        clock=_choice(data, "clock", d.clock, ("events", "umpire")),
        knocked_out_ball_loses_points=_bool(data, "knocked_out_ball_loses_points", False),
        void_shot_displaced=_choice(data, "void_shot_displaced", d.void_shot_displaced, ("restore", "stand")),
        grouping_ends_turn=_choice(data, "grouping_ends_turn", d.grouping_ends_turn, ("unless_scored", "always")),
        table_movement_foul_mm=_num(data, "table_movement_foul_mm", d.table_movement_foul_mm, 0.0),
        review_confidence=review,
        target_score=target,
        target_round_limit=limit,
        best_of=best_of,
        optional_rules=_optional(data.get("optional_rules", {}), slots),
    )


def _optional(data: Any, slots: tuple[int, ...]) -> OptionalRules:
    p = "optional_rules."
    if not isinstance(data, dict):
        raise _fail("optional_rules", "an object", data)
    unknown = sorted(set(data) - KNOWN_OPTIONAL)
    if unknown:
        raise InputError(f"config: unknown optional rule {unknown[0]!r}; known: {', '.join(sorted(KNOWN_OPTIONAL))}")
    n = len(slots)
    multipliers: tuple[int, ...] = ()
    raw = data.get("multipliers")
    if raw is not None:
        if not isinstance(raw, dict):
            raise _fail(p + "multipliers", 'an object like {"3": 2}', raw)
        values = [1] * n
        for key in sorted(raw):
            if not (isinstance(key, str) and key.isdigit() and 1 <= int(key) <= n):
                raise _fail(f"{p}multipliers.{key}", f"keyed by a position 1..{n}", key)
            if raw[key] not in (1, 2, 3) or isinstance(raw[key], bool):
                raise _fail(f"{p}multipliers.{key}", "1, 2 or 3", raw[key])
            values[int(key) - 1] = raw[key]
        multipliers = tuple(values)
    return OptionalRules(
        grand_slam_finish=_bool(data, "grand_slam_finish", False, p),
        blocking=_bool(data, "blocking", False, p),
        blocking_needs_this_shot=_bool(data, "blocking_needs_this_shot", True, p),
        multipliers=multipliers,
        dead_ball=_dead_ball(data.get("dead_ball"), slots),
    )


def _dead_ball(raw: Any, slots: tuple[int, ...]) -> DeadBallRule | None:
    p = "optional_rules.dead_ball"
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _fail(p, 'an object like {"positions": [3], "from_fraction": 0.5}', raw)
    positions = raw.get("positions", [])
    if not isinstance(positions, list) or any(not isinstance(x, int) or isinstance(x, bool)
                                              or not 1 <= x <= len(slots) for x in positions):
        raise _fail(p + ".positions", f"a list of positions 1..{len(slots)}", positions)
    cells = raw.get("slots", [])
    ok = isinstance(cells, list) and all(
        isinstance(c, list) and len(c) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in c)
        and 1 <= c[0] <= len(slots) and 0 <= c[1] < slots[c[0] - 1] for c in cells)
    if not ok:
        raise _fail(p + ".slots", "a list of [position, slot] pairs on the table", cells)
    if not positions and not cells:
        raise _fail(p, "an object naming 'positions' or 'slots'", raw)
    fraction = _num(raw, "from_fraction", 0.5, 0.0, p + ".")
    if fraction > 1:
        raise _fail(p + ".from_fraction", "a number from 0 to 1", fraction)
    return DeadBallRule(tuple(sorted(set(positions))), tuple(sorted({(c[0], c[1]) for c in cells})), fraction)
