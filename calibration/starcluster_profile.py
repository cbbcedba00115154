"""The Star Cluster Ball table: a tilted table with a Play Line, three comb-like Astrolabe Positions,
gutters, a play area, and optional scoring zones. Everything the calibration layer knows about this
game's table lives here: its JSON, its geometric checks, where a point lies, what to draw.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from calibration.geometry import (
    Feature,
    FeatureKind,
    Markers,
    Point,
    ProfileError,
    Rect,
    Spot,
    Zone,
    check_rect_in_table,
    markers_from_json,
    point_from_json,
    rect_from_json,
    zones_from_json,
)
from rules.colours import BallColour
from rules.events import Location, Place


@dataclass(frozen=True)
class AstrolabePosition:
    """One comb of slots across the table; slot order defines adjacency."""

    number: int
    slots: tuple[Point, ...]
    slot_width_mm: float
    slot_depth_mm: float
    multiplier: float = 1.0

    def slot_rect(self, index: int) -> Rect:
        x, y = self.slots[index]
        w, d = self.slot_width_mm / 2, self.slot_depth_mm / 2
        return Rect(x - w, y - d, x + w, y + d)


@dataclass(frozen=True)
class StarClusterProfile:
    name: str
    table: Rect
    ball_diameter_mm: float
    play_line: tuple[Point, Point]
    play_area: Rect
    board: Rect
    gutters: tuple[Zone, ...]
    positions: tuple[AstrolabePosition, ...]
    multiplier_zones: tuple[Zone, ...]
    dead_ball_zones: tuple[Zone, ...]
    markers: Markers
    ball_colours: tuple[tuple[str, BallColour], ...] = ()  # default ball colours by player id (profile.py)
    game: str = field(default="starcluster", init=False)

    @staticmethod
    def from_json(data: dict[str, Any]) -> StarClusterProfile:
        table = data["table"]
        return StarClusterProfile(
            name=data["name"],
            table=Rect(0.0, 0.0, float(table["width_mm"]), float(table["length_mm"])),
            ball_diameter_mm=float(data["ball_diameter_mm"]),
            play_line=(point_from_json(data["play_line"]["from"]), point_from_json(data["play_line"]["to"])),
            play_area=rect_from_json(data["play_area"]),
            board=rect_from_json(data["board"]),
            gutters=zones_from_json(data["gutters"]),
            positions=tuple(
                AstrolabePosition(
                    number=p["number"],
                    slots=tuple(point_from_json(s) for s in p["slots"]),
                    slot_width_mm=float(p["slot_width_mm"]),
                    slot_depth_mm=float(p["slot_depth_mm"]),
                    multiplier=float(p.get("multiplier", 1.0)),
                )
                for p in data["astrolabe"]["positions"]
            ),
            multiplier_zones=zones_from_json(data.get("multiplier_zones", [])),
            dead_ball_zones=zones_from_json(data.get("dead_ball_zones", []), default_factor=0.0),
            markers=markers_from_json(data["markers"]),
        )

    # ------------------------------------------------------------------ what every profile answers

    @property
    def stacking(self) -> bool:
        """A slot holds one ball: a second one rolls on."""
        return False

    @property
    def playing_field(self) -> Rect:
        """Where the game is played out: the board beyond the play area (hands over it pause a settle)."""
        return self.board

    @property
    def gutter_areas(self) -> tuple[Rect, ...]:
        """The gutters: a ball resting in one is out of play wherever it lies, behind the Play Line too."""
        return tuple(g.rect for g in self.gutters)

    @property
    def rules_settings(self) -> dict[str, Any]:
        """The rules settings this table decides, so they are said once: each Position's slot count."""
        return {"slots_per_position": [len(pos.slots) for pos in sorted(self.positions, key=lambda p: p.number)]}

    def locate(self, point: Point, tolerance_mm: float = 0.0) -> Spot:
        """The slot (nearest centre) within `tolerance_mm`, else the gutter, the board (grouped), the play area."""
        if not self.table.contains(point, tolerance_mm):
            return Spot(Location(Place.OFF_TABLE))
        point = self.table.clamp(point)
        zones = tuple(z.name for z in (*self.multiplier_zones, *self.dead_ball_zones) if z.rect.contains(point))
        best: Spot | None = None
        for pos in self.positions:
            for index, centre in enumerate(pos.slots):
                if pos.slot_rect(index).contains(point, tolerance_mm):
                    d = math.dist(point, centre)
                    if best is None or d < best.distance_mm:
                        best = Spot(Location.slot_at(pos.number, index), d, zones)
        if best is not None:
            return best
        if any(g.rect.contains(point) for g in self.gutters):
            return Spot(Location(Place.GUTTER), zones=zones)
        if self.board.contains(point):
            return Spot(Location(Place.GROUPED), zones=zones)
        # The play area and the strip behind the Play Line, where a ball has come back to the player.
        return Spot(Location(Place.PLAY_AREA), zones=zones)

    @cached_property
    def places(self) -> tuple[tuple[Location, Rect], ...]:
        """Every slot, in position and slot order: the places a settled table is read from, pixel by pixel."""
        return tuple((Location.slot_at(pos.number, i), pos.slot_rect(i)) for pos in self.positions
                     for i in range(len(pos.slots)))

    @cached_property
    def features(self) -> tuple[Feature, ...]:
        """The table's parts in drawing order: play area, board, gutters, slots, then the Play Line on top."""
        return (Feature(FeatureKind.PLAY_AREA, self.play_area), Feature(FeatureKind.BOARD, self.board),
                *(Feature(FeatureKind.GUTTER, g.rect) for g in self.gutters),
                *(Feature(FeatureKind.SLOT, rect) for _, rect in self.places),
                Feature(FeatureKind.PLAY_LINE, a=self.play_line[0], b=self.play_line[1]))

    def slot_center(self, position: int, slot: int) -> Point:
        for pos in self.positions:
            if pos.number == position and 0 <= slot < len(pos.slots):
                return pos.slots[slot]
        raise ProfileError(f"no slot {slot} in Position {position} of profile {self.name!r}; "
                           "positions are 1..3 and slots count from 0")

    # ------------------------------------------------------------------ checks the schema cannot make

    def check(self, label: str) -> None:
        for name, rect in (("play_area", self.play_area), ("board", self.board)):
            check_rect_in_table(rect, self.table, name, label)
        for i, zone in enumerate(self.gutters):
            check_rect_in_table(zone.rect, self.table, f"gutters[{i}]", label)
        for kind, zones in (("multiplier_zones", self.multiplier_zones), ("dead_ball_zones", self.dead_ball_zones)):
            for i, zone in enumerate(zones):
                check_rect_in_table(zone.rect, self.table, f"{kind}[{i}]", label)
        for end in (0, 1):
            if not self.table.contains(self.play_line[end]):
                raise ProfileError(
                    f"profile {label}: field 'play_line.{('from', 'to')[end]}' lies outside the table; "
                    "put the Play Line on the table"
                )
        numbers = [pos.number for pos in self.positions]
        if sorted(numbers) != [1, 2, 3]:
            raise ProfileError(
                f"profile {label}: field 'astrolabe.positions' numbers are {numbers}; "
                "give exactly Positions 1, 2 and 3"
            )
        for i, pos in enumerate(self.positions):
            self._check_position(i, pos, label)
        self._check_zones_against_slots(label)
        ordered = sorted(self.positions, key=lambda pos: pos.number)
        mean_y = [sum(y for _, y in pos.slots) / len(pos.slots) for pos in ordered]
        if not mean_y[0] < mean_y[1] < mean_y[2]:
            raise ProfileError(
                f"profile {label}: field 'astrolabe.positions' are out of order; Position 1 must be "
                "closest to the player (smallest y), Position 3 furthest"
            )

    def _check_position(self, i: int, pos: AstrolabePosition, label: str) -> None:
        where = f"astrolabe.positions[{i}]"
        if pos.slot_width_mm < self.ball_diameter_mm or pos.slot_depth_mm < self.ball_diameter_mm:
            raise ProfileError(
                f"profile {label}: field '{where}.slot_width_mm' or 'slot_depth_mm' is smaller than "
                f"the ball ({self.ball_diameter_mm:g} mm); a ball would not fit"
            )
        for j in range(len(pos.slots)):
            rect = pos.slot_rect(j)
            if not rect.inside(self.table):
                raise ProfileError(
                    f"profile {label}: field '{where}.slots[{j}]' lies outside the table "
                    f"(table is {self.table.x_max:g} x {self.table.y_max:g} mm); move the slot"
                )
            for k in range(j):
                if rect.overlaps(pos.slot_rect(k)):
                    gap = math.dist(pos.slots[j], pos.slots[k])
                    raise ProfileError(
                        f"profile {label}: field '{where}.slots[{j}]' overlaps slot {k} "
                        f"(centres {gap:.1f} mm apart, slot width {pos.slot_width_mm:g} mm); "
                        "move the slot or shrink slot_width_mm"
                    )
        for other in self.positions[:i]:
            for j in range(len(pos.slots)):
                for k in range(len(other.slots)):
                    if pos.slot_rect(j).overlaps(other.slot_rect(k)):
                        raise ProfileError(
                            f"profile {label}: field '{where}.slots[{j}]' overlaps Position "
                            f"{other.number} slot {k}; move one of them"
                        )

    def _check_zones_against_slots(self, label: str) -> None:
        """No slot lies in a gutter, and a scoring zone covers each slot whole or not at all (a slot half in a
        dead-ball zone would score or not by where in it the ball stops)."""
        for at, slot in self.places:
            for i, gutter in enumerate(self.gutters):
                if gutter.rect.overlaps(slot):
                    raise ProfileError(
                        f"profile {label}: field 'gutters[{i}]' overlaps Position {at.position} slot {at.slot}; a "
                        "ball in a slot is in play and one in a gutter out of it, so move one of them"
                    )
            for kind, zones in (("multiplier_zones", self.multiplier_zones), ("dead_ball_zones", self.dead_ball_zones)):
                for i, zone in enumerate(zones):
                    if zone.rect.overlaps(slot) and not slot.inside(zone.rect):
                        raise ProfileError(
                            f"profile {label}: field '{kind}[{i}]' covers part of Position {at.position} slot "
                            f"{at.slot}; make the zone cover the slot whole or leave it out"
                        )
