"""Board point -> slot, space or region, and back: the referee's map legend.

`tolerance_mm` widens the named places (slots, spaces, the table edge) so a
ball whose measured centre is a little off still counts where it visibly rests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from calibration.profile import (
    PiratenbillardProfile,
    Point,
    Region,
    StarClusterProfile,
    TableProfile,
)
from rules.errors import InputError


@dataclass(frozen=True)
class Location:
    """Where a board point lies. `distance_mm` is from the slot/space centre (0 for areas)."""

    region: Region
    position: int | None = None
    slot: int | None = None
    row: int | None = None
    col: int | None = None
    distance_mm: float = 0.0
    zones: tuple[str, ...] = ()


def locate(profile: TableProfile, point: Point, tolerance_mm: float = 0.0) -> Location:
    if isinstance(profile, StarClusterProfile):
        return _locate_star_cluster(profile, point, tolerance_mm)
    return _locate_piratenbillard(profile, point, tolerance_mm)


def _locate_star_cluster(p: StarClusterProfile, point: Point, tol: float) -> Location:
    if not p.table.contains(point, tol):
        return Location(Region.OFF_TABLE)
    point = p.table.clamp(point)
    zones = tuple(
        z.name for z in (*p.multiplier_zones, *p.dead_ball_zones) if z.rect.contains(point)
    )
    best: Location | None = None
    for pos in p.positions:
        for index, centre in enumerate(pos.slots):
            if pos.slot_rect(index).contains(point, tol):
                d = math.dist(point, centre)
                if best is None or d < best.distance_mm:
                    best = Location(Region.SLOT, position=pos.number, slot=index, distance_mm=d, zones=zones)
    if best is not None:
        return best
    if any(g.rect.contains(point) for g in p.gutters):
        return Location(Region.GUTTER, zones=zones)
    if p.board.contains(point):
        return Location(Region.GROUPED, zones=zones)
    # The play area and the strip behind the Play Line, where a ball has come back to the player.
    return Location(Region.PLAY_AREA, zones=zones)


def _locate_piratenbillard(p: PiratenbillardProfile, point: Point, tol: float) -> Location:
    if not p.grid.contains(point, tol):
        return Location(Region.OFF_TABLE)
    x0, y0 = p.space_center(0, 0)
    col = min(max(round((point[0] - x0) / p.pitch_mm), 0), p.cols - 1)
    row = min(max(round((y0 - point[1]) / p.pitch_mm), 0), p.rows - 1)
    if (row, col) in p.missing:
        return Location(Region.OFF_TABLE)
    return Location(
        Region.CELL, row=row, col=col, distance_mm=math.dist(point, p.space_center(row, col))
    )


def slot_center(profile: StarClusterProfile, position: int, slot: int) -> Point:
    for pos in profile.positions:
        if pos.number == position and 0 <= slot < len(pos.slots):
            return pos.slots[slot]
    raise InputError(
        f"no slot {slot} in Position {position} of profile {profile.name!r}; "
        "positions are 1..3 and slots count from 0"
    )


def space_center(profile: PiratenbillardProfile, row: int, col: int) -> Point:
    if not (0 <= row < profile.rows and 0 <= col < profile.cols) or (row, col) in profile.missing:
        raise InputError(
            f"no space at row {row}, col {col} on profile {profile.name!r}; rows and cols are "
            "0..9 and the four corners are missing"
        )
    return profile.space_center(row, col)
