"""Pure valuation of a player's balls in the Astrolabe (SCB-4.x).

Everything that awards slot points goes through `value` and `award`, so the
base score, chain bonus, Grand Slam and multiplier are computed in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..decisions import ScoreItem
from .config import StarClusterConfig

Slot = tuple[int, int]  # (position 1.., slot 0..)


@dataclass(frozen=True)
class PositionValue:
    """One position's worth for one player, split into the parts a breakdown shows."""

    position: int
    base: int = 0
    chain: int = 0
    grand_slam: int = 0
    multiplier: int = 0  # the extra points a ×2/×3 zone adds

    @property
    def total(self) -> int:
        return self.base + self.chain + self.grand_slam + self.multiplier

    def items(self, sign: int = 1) -> list[ScoreItem]:
        p = self.position
        parts = (("base", self.base), ("chain bonus", self.chain), ("Grand Slam", self.grand_slam),
                 ("multiplier zone", self.multiplier))
        return [ScoreItem(f"P{p} {label}", sign * points) for label, points in parts if points]


def runs(slots: Iterable[int]) -> list[int]:
    """Lengths of the maximal runs of adjacent slot indices (a chain is a run of 2 or more)."""
    lengths: list[int] = []
    previous = None
    for index in sorted(set(slots)):
        if previous is not None and index == previous + 1:
            lengths[-1] += 1
        else:
            lengths.append(1)
        previous = index
    return lengths


def value_position(config: StarClusterConfig, position: int, slots: Iterable[int]) -> PositionValue:
    """base·n + bonus·(n−1) per run; doubled if every slot is filled; then the zone multiplier."""
    lengths = runs(slots)
    base = config.base_scores[position - 1] * sum(lengths)
    chain = config.chain_bonus[position - 1] * sum(n - 1 for n in lengths)
    full = sum(lengths) == config.slots_per_position[position - 1]
    slam = base + chain if full else 0
    multiplier = (base + chain + slam) * (config.multiplier(position) - 1)
    return PositionValue(position, base, chain, slam, multiplier)


def value(config: StarClusterConfig, slots: Iterable[Slot]) -> tuple[PositionValue, ...]:
    """A player's worth in every position, from the slots their live (scoring) balls fill."""
    chosen = sorted(set(slots))
    return tuple(value_position(config, p, [s for q, s in chosen if q == p])
                 for p in range(1, config.positions + 1))


def total(config: StarClusterConfig, slots: Iterable[Slot]) -> int:
    return sum(v.total for v in value(config, slots))


def grand_slams(config: StarClusterConfig, slots: Iterable[Slot]) -> tuple[int, ...]:
    """Positions the given slots fill completely."""
    chosen = set(slots)
    return tuple(p for p in range(1, config.positions + 1)
                 if all((p, s) in chosen for s in range(config.slots_per_position[p - 1])))


Points = tuple[int, tuple[ScoreItem, ...]]  # total and its breakdown


def difference(config: StarClusterConfig, before: Iterable[Slot], after: Iterable[Slot]) -> Points:
    """Points and breakdown of going from `before` to `after` (negative parts when balls are lost)."""
    items: list[ScoreItem] = []
    for old, new in zip(value(config, before), value(config, after)):
        delta = PositionValue(new.position, new.base - old.base, new.chain - old.chain,
                              new.grand_slam - old.grand_slam, new.multiplier - old.multiplier)
        items.extend(delta.items())
    return sum(item.points for item in items), tuple(items)


def award(config: StarClusterConfig, live_after: Iterable[Slot], landed: Iterable[Slot]) -> Points:
    """Marginal worth of the balls that `landed` this shot: V(after) − V(after without them)."""
    after = set(live_after)
    return difference(config, after - set(landed), after)
