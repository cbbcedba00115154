"""Table profiles: the measured geometry of one physical table, in millimetres.

A profile is a JSON file (see docs/formats.md). Loading checks it against the
game's JSON Schema and then against geometry the schema cannot express
(overlapping slots, a slot off the table), so every later stage can trust it.
Board coordinates: origin at the near-left (Star Cluster Ball) or south-west
(Piratenbillard) corner, x to the right / east, y away from the player / north,
z up out of the table plane.
"""

from __future__ import annotations

import enum
import json
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from calibration.aruco import dictionary_size
from rules.errors import InputError

Point = tuple[float, float]

DEFAULT_PROFILES = {
    "starcluster": "starcluster_default.json",
    "piratenbillard": "piratenbillard_default.json",
}


class ProfileError(InputError):
    """A profile file that cannot be used; the message names the field."""


class Region(enum.Enum):
    """Where on the table a point lies; values are the event model's names."""

    SLOT = "slot"
    PLAY_AREA = "play_area"
    GUTTER = "gutter"
    GROUPED = "grouped"
    CELL = "cell"
    OFF_TABLE = "off_table"


@dataclass(frozen=True)
class Rect:
    """An axis-aligned rectangle in board millimetres."""

    x_min: float
    y_min: float
    x_max: float
    y_max: float

    def contains(self, point: Point, tolerance_mm: float = 0.0) -> bool:
        x, y = point
        return (
            self.x_min - tolerance_mm <= x <= self.x_max + tolerance_mm
            and self.y_min - tolerance_mm <= y <= self.y_max + tolerance_mm
        )

    def overlaps(self, other: Rect) -> bool:
        return (
            self.x_min < other.x_max
            and other.x_min < self.x_max
            and self.y_min < other.y_max
            and other.y_min < self.y_max
        )

    def clamp(self, point: Point) -> Point:
        return (
            min(max(point[0], self.x_min), self.x_max),
            min(max(point[1], self.y_min), self.y_max),
        )

    @property
    def corners(self) -> tuple[Point, Point, Point, Point]:
        """Counter-clockwise seen from above, starting near-left."""
        return (
            (self.x_min, self.y_min),
            (self.x_max, self.y_min),
            (self.x_max, self.y_max),
            (self.x_min, self.y_max),
        )


@dataclass(frozen=True)
class Marker:
    """A printed ArUco marker, upright when read from the near (south) edge."""

    id: int
    center: Point
    size_mm: float

    @property
    def corners(self) -> tuple[Point, Point, Point, Point]:
        """Board points in ArUco's corner order: top-left, top-right, bottom-right, bottom-left."""
        cx, cy = self.center
        h = self.size_mm / 2
        return ((cx - h, cy + h), (cx + h, cy + h), (cx + h, cy - h), (cx - h, cy - h))


@dataclass(frozen=True)
class Markers:
    dictionary: str
    markers: tuple[Marker, ...]

    def by_id(self) -> dict[int, Marker]:
        return {m.id: m for m in self.markers}


@dataclass(frozen=True)
class Zone:
    """A named rectangle with an optional score factor (multiplier or dead-ball zone)."""

    name: str
    rect: Rect
    factor: float = 1.0


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
    game: str = "starcluster"


@dataclass(frozen=True)
class Seat:
    """A player's seat and the edge line of the grid that is its starting row."""

    seat: int
    side: str
    line: str  # "row" or "col"
    index: int


@dataclass(frozen=True)
class PiratenbillardProfile:
    name: str
    table: Rect
    ball_diameter_mm: float
    rows: int
    cols: int
    space_size_mm: float
    pitch_mm: float
    off_board_margin_mm: float
    missing: frozenset[tuple[int, int]]
    seats: tuple[Seat, ...]
    markers: Markers
    game: str = "piratenbillard"

    @property
    def grid(self) -> Rect:
        """The playing field: the outer edge of the outermost spaces."""
        extent_x = (self.cols - 1) * self.pitch_mm + self.space_size_mm
        extent_y = (self.rows - 1) * self.pitch_mm + self.space_size_mm
        m = self.off_board_margin_mm
        return Rect(m, self.table.y_max - m - extent_y, m + extent_x, self.table.y_max - m)

    def spaces(self) -> list[tuple[int, int]]:
        return [
            (r, c)
            for r in range(self.rows)
            for c in range(self.cols)
            if (r, c) not in self.missing
        ]

    def space_center(self, row: int, col: int) -> Point:
        g = self.grid
        half = self.space_size_mm / 2
        return (g.x_min + half + col * self.pitch_mm, g.y_max - half - row * self.pitch_mm)

    def starting_cells(self, seat: int) -> list[tuple[int, int]]:
        s = next(s for s in self.seats if s.seat == seat)
        if s.line == "row":
            cells = [(s.index, c) for c in range(self.cols)]
        else:
            cells = [(r, s.index) for r in range(self.rows)]
        return [cell for cell in cells if cell not in self.missing]


TableProfile = StarClusterProfile | PiratenbillardProfile


def load_profile(source: str | Path) -> TableProfile:
    """Load a profile file, or a shipped default by game name ("starcluster", "piratenbillard")."""
    name = str(source)
    if name in DEFAULT_PROFILES:
        text = resources.files("calibration.profiles").joinpath(DEFAULT_PROFILES[name]).read_text()
        return parse_profile(json.loads(text), f"default {name}")
    path = Path(source)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ProfileError(
            f"profile {path}: file not found; pass a profile JSON file or one of "
            f"{', '.join(DEFAULT_PROFILES)}"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ProfileError(f"profile {path}: not readable JSON ({error}); fix the file") from None
    return parse_profile(data, str(path))


def parse_profile(data: Any, label: str) -> TableProfile:
    """Validate parsed JSON and build the profile; `label` names it in errors."""
    if not isinstance(data, dict) or data.get("game") not in DEFAULT_PROFILES:
        raise ProfileError(
            f"profile {label}: field 'game' must be one of {', '.join(DEFAULT_PROFILES)}; "
            "say which game the table is for"
        )
    schema_name = f"{data['game']}_profile.schema.json"
    _check_schema(data, schema_name, f"profile {label}")
    if data["game"] == "starcluster":
        profile: TableProfile = _star_cluster(data)
        _check_star_cluster(profile, label)
    else:
        profile = _piratenbillard(data)
        _check_piratenbillard(profile, label)
    _check_markers(profile.markers, profile.table, label)
    return profile


def load_schema(name: str) -> dict:
    return json.loads(resources.files("calibration.schemas").joinpath(name).read_text())


def _check_schema(data: Any, schema_name: str, label: str) -> None:
    """Raise with the first schema violation, naming the field by its JSON path."""
    validator = jsonschema.Draft202012Validator(load_schema(schema_name))
    errors = sorted(validator.iter_errors(data), key=lambda e: (len(e.absolute_path), e.message))
    if not errors:
        return
    error = errors[0]
    field = _field_name(error.absolute_path)
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        where = f"{field}." if field else ""
        raise ProfileError(
            f"{label}: field '{where}{missing[0]}' is missing; add it (see docs/formats.md)"
        )
    message = error.message.replace("\n", " ")
    if len(message) > 160:
        message = message[:157] + "..."
    raise ProfileError(f"{label}: field '{field or '(top level)'}': {message}; fix it (see docs/formats.md)")


def _field_name(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _rect(data: dict) -> Rect:
    return Rect(data["x"][0], data["y"][0], data["x"][1], data["y"][1])


def _point(data: list) -> Point:
    return (float(data[0]), float(data[1]))


def _markers(data: dict) -> Markers:
    return Markers(
        dictionary=data["dictionary"],
        markers=tuple(
            Marker(id=m["id"], center=_point(m["center"]), size_mm=float(m["size_mm"]))
            for m in data["markers"]
        ),
    )


def _zones(items: list, default_factor: float = 1.0) -> tuple[Zone, ...]:
    return tuple(
        Zone(name=z["name"], rect=_rect(z), factor=float(z.get("factor", default_factor)))
        for z in items
    )


def _star_cluster(data: dict) -> StarClusterProfile:
    table = data["table"]
    return StarClusterProfile(
        name=data["name"],
        table=Rect(0.0, 0.0, float(table["width_mm"]), float(table["length_mm"])),
        ball_diameter_mm=float(data["ball_diameter_mm"]),
        play_line=(_point(data["play_line"]["from"]), _point(data["play_line"]["to"])),
        play_area=_rect(data["play_area"]),
        board=_rect(data["board"]),
        gutters=_zones(data["gutters"]),
        positions=tuple(
            AstrolabePosition(
                number=p["number"],
                slots=tuple(_point(s) for s in p["slots"]),
                slot_width_mm=float(p["slot_width_mm"]),
                slot_depth_mm=float(p["slot_depth_mm"]),
                multiplier=float(p.get("multiplier", 1.0)),
            )
            for p in data["astrolabe"]["positions"]
        ),
        multiplier_zones=_zones(data.get("multiplier_zones", [])),
        dead_ball_zones=_zones(data.get("dead_ball_zones", []), default_factor=0.0),
        markers=_markers(data["markers"]),
    )


def _piratenbillard(data: dict) -> PiratenbillardProfile:
    grid = data["grid"]
    return PiratenbillardProfile(
        name=data["name"],
        table=Rect(0.0, 0.0, float(data["board"]["width_mm"]), float(data["board"]["length_mm"])),
        ball_diameter_mm=float(data["ball_diameter_mm"]),
        rows=grid["rows"],
        cols=grid["cols"],
        space_size_mm=float(grid["space_size_mm"]),
        pitch_mm=float(grid["pitch_mm"]),
        off_board_margin_mm=float(data["off_board_margin_mm"]),
        missing=frozenset((r, c) for r, c in grid["missing"]),
        seats=tuple(
            Seat(
                seat=s["seat"],
                side=s["side"],
                line="row" if "row" in s else "col",
                index=s["row"] if "row" in s else s["col"],
            )
            for s in data["seats"]
        ),
        markers=_markers(data["markers"]),
    )


def _inside(rect: Rect, outer: Rect) -> bool:
    return outer.contains((rect.x_min, rect.y_min)) and outer.contains((rect.x_max, rect.y_max))


def _check_rect_in_table(rect: Rect, table: Rect, field: str, label: str) -> None:
    if rect.x_min >= rect.x_max or rect.y_min >= rect.y_max:
        raise ProfileError(f"profile {label}: field '{field}' is empty (min >= max); give [min, max] in mm")
    if not _inside(rect, table):
        raise ProfileError(
            f"profile {label}: field '{field}' reaches outside the table "
            f"(table is {table.x_max:g} x {table.y_max:g} mm); move or shrink it"
        )


def _check_star_cluster(p: StarClusterProfile, label: str) -> None:
    for field, rect in (("play_area", p.play_area), ("board", p.board)):
        _check_rect_in_table(rect, p.table, field, label)
    for i, zone in enumerate(p.gutters):
        _check_rect_in_table(zone.rect, p.table, f"gutters[{i}]", label)
    for kind, zones in (("multiplier_zones", p.multiplier_zones), ("dead_ball_zones", p.dead_ball_zones)):
        for i, zone in enumerate(zones):
            _check_rect_in_table(zone.rect, p.table, f"{kind}[{i}]", label)
    for end in (0, 1):
        if not p.table.contains(p.play_line[end]):
            raise ProfileError(
                f"profile {label}: field 'play_line.{('from', 'to')[end]}' lies outside the table; "
                "put the Play Line on the table"
            )
    numbers = [pos.number for pos in p.positions]
    if sorted(numbers) != [1, 2, 3]:
        raise ProfileError(
            f"profile {label}: field 'astrolabe.positions' numbers are {numbers}; "
            "give exactly Positions 1, 2 and 3"
        )
    for i, pos in enumerate(p.positions):
        field = f"astrolabe.positions[{i}]"
        if pos.slot_width_mm < p.ball_diameter_mm or pos.slot_depth_mm < p.ball_diameter_mm:
            raise ProfileError(
                f"profile {label}: field '{field}.slot_width_mm' or 'slot_depth_mm' is smaller than "
                f"the ball ({p.ball_diameter_mm:g} mm); a ball would not fit"
            )
        for j in range(len(pos.slots)):
            rect = pos.slot_rect(j)
            if not _inside(rect, p.table):
                raise ProfileError(
                    f"profile {label}: field '{field}.slots[{j}]' lies outside the table "
                    f"(table is {p.table.x_max:g} x {p.table.y_max:g} mm); move the slot"
                )
            for k in range(j):
                if rect.overlaps(pos.slot_rect(k)):
                    gap = math.dist(pos.slots[j], pos.slots[k])
                    raise ProfileError(
                        f"profile {label}: field '{field}.slots[{j}]' overlaps slot {k} "
                        f"(centres {gap:.1f} mm apart, slot width {pos.slot_width_mm:g} mm); "
                        "move the slot or shrink slot_width_mm"
                    )
        for other in p.positions[:i]:
            for j in range(len(pos.slots)):
                for k in range(len(other.slots)):
                    if pos.slot_rect(j).overlaps(other.slot_rect(k)):
                        raise ProfileError(
                            f"profile {label}: field '{field}.slots[{j}]' overlaps Position "
                            f"{other.number} slot {k}; move one of them"
                        )
    ordered = sorted(p.positions, key=lambda pos: pos.number)
    mean_y = [sum(y for _, y in pos.slots) / len(pos.slots) for pos in ordered]
    if not mean_y[0] < mean_y[1] < mean_y[2]:
        raise ProfileError(
            f"profile {label}: field 'astrolabe.positions' are out of order; Position 1 must be "
            "closest to the player (smallest y), Position 3 furthest"
        )


def _check_piratenbillard(p: PiratenbillardProfile, label: str) -> None:
    if p.pitch_mm < p.space_size_mm:
        raise ProfileError(
            f"profile {label}: field 'grid.pitch_mm' ({p.pitch_mm:g}) is smaller than "
            f"space_size_mm ({p.space_size_mm:g}), so spaces overlap; raise the pitch"
        )
    if p.space_size_mm < p.ball_diameter_mm:
        raise ProfileError(
            f"profile {label}: field 'grid.space_size_mm' ({p.space_size_mm:g}) is smaller than the "
            f"ball ({p.ball_diameter_mm:g} mm); a ball would not fit"
        )
    if not _inside(p.grid, p.table):
        raise ProfileError(
            f"profile {label}: field 'grid' does not fit on the board with off_board_margin_mm "
            f"{p.off_board_margin_mm:g}; board must be at least "
            f"{2 * p.off_board_margin_mm + p.grid.x_max - p.grid.x_min:g} mm wide"
        )
    corners = {(0, 0), (0, p.cols - 1), (p.rows - 1, 0), (p.rows - 1, p.cols - 1)}
    if p.missing != corners:
        raise ProfileError(
            f"profile {label}: field 'grid.missing' must be the four corner spaces "
            f"{sorted(corners)}; Piratenbillard has no corner spaces"
        )
    seats = sorted(s.seat for s in p.seats)
    if seats != list(range(len(p.seats))):
        raise ProfileError(f"profile {label}: field 'seats' numbers are {seats}; number them 0, 1, 2, 3")
    edges: set[tuple[str, int]] = set()
    for i, s in enumerate(p.seats):
        last = (p.rows if s.line == "row" else p.cols) - 1
        if s.index not in (0, last) or (s.line, s.index) in edges:
            raise ProfileError(
                f"profile {label}: field 'seats[{i}].{s.line}' is {s.index}; each seat needs its own "
                f"edge line of the grid (0 or {last})"
            )
        edges.add((s.line, s.index))


def _check_markers(markers: Markers, table: Rect, label: str) -> None:
    try:
        size = dictionary_size(markers.dictionary, f"profile {label}: field 'markers.dictionary'")
    except InputError as error:
        raise ProfileError(str(error)) from None
    seen: set[int] = set()
    for i, m in enumerate(markers.markers):
        field = f"markers.markers[{i}]"
        if m.id in seen or m.id >= size:
            raise ProfileError(
                f"profile {label}: field '{field}.id' {m.id} is repeated or not in "
                f"{markers.dictionary} (ids 0..{size - 1}); give each marker its own id"
            )
        seen.add(m.id)
        if not all(table.contains(c) for c in m.corners):
            raise ProfileError(f"profile {label}: field '{field}' lies outside the table; move the marker")
        for j, other in enumerate(markers.markers[:i]):
            if Rect(*m.corners[3], *m.corners[1]).overlaps(Rect(*other.corners[3], *other.corners[1])):
                raise ProfileError(f"profile {label}: field '{field}' overlaps markers[{j}]; move it")
