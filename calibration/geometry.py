"""What every table profile is made of: board rectangles, markers, zones, and the answers a profile gives.

Board coordinates are millimetres: origin at the near-left (Star Cluster Ball)
or south-west (Piratenbillard) corner, x to the right / east, y away from the
player / north. A place on the table is named in the event model's one
vocabulary (`rules.events.Location`), so calibration, vision and the rules
engines never translate between two.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from rules.errors import InputError
from rules.events import Location

Point = tuple[float, float]


class ProfileError(InputError):
    """A profile file that cannot be used; the message names the field."""


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

    def inside(self, outer: Rect) -> bool:
        return outer.contains((self.x_min, self.y_min)) and outer.contains((self.x_max, self.y_max))

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
    """A printed ArUco marker, upright when read from the near (south) edge, unless turned by `rotation_deg`."""

    id: int
    center: Point
    size_mm: float
    rotation_deg: int = 0  # 0, 90, 180 or 270: how far it is turned counter-clockwise, seen from above

    @property
    def rect(self) -> Rect:
        cx, cy = self.center
        h = self.size_mm / 2
        return Rect(cx - h, cy - h, cx + h, cy + h)

    @property
    def corners(self) -> tuple[Point, Point, Point, Point]:
        """Board points in ArUco's corner order: the printed top-left, top-right, bottom-right, bottom-left (a
        marker turned a quarter counter-clockwise has its top-left corner where an upright one has its
        bottom-left), so a detected corner is matched to where it really lies."""
        cx, cy = self.center
        h = self.size_mm / 2
        upright = ((cx - h, cy + h), (cx + h, cy + h), (cx + h, cy - h), (cx - h, cy - h))
        turns = self.rotation_deg // 90
        c = [upright[(i - turns) % 4] for i in range(4)]
        return (c[0], c[1], c[2], c[3])


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
class Spot:
    """Where a board point lies: the place, how far from its centre (0 for areas), and the named zones over it."""

    at: Location
    distance_mm: float = 0.0
    zones: tuple[str, ...] = ()


class FeatureKind(enum.Enum):
    """What a drawn part of a table is; the drawing code picks its colour by kind."""

    PLAY_AREA = "play_area"
    BOARD = "board"
    GUTTER = "gutter"
    SLOT = "slot"
    SPACE = "space"
    PLAY_LINE = "play_line"


@dataclass(frozen=True)
class Feature:
    """One part of a table to draw: a rectangle, or (PLAY_LINE) a line from `a` to `b`."""

    kind: FeatureKind
    rect: Rect | None = None
    a: Point | None = None
    b: Point | None = None
    seat: int | None = None  # a Piratenbillard starting space: whose


Row3 = tuple[float, float, float]


def rows3(matrix: Any) -> tuple[Row3, ...]:
    """The rows of an N x 3 matrix (a camera matrix, a rotation, a homography) as plain float tuples."""
    return tuple((float(row[0]), float(row[1]), float(row[2])) for row in matrix)


# --------------------------------------------------------------------------- reading profile JSON


def rect_from_json(data: dict[str, Any]) -> Rect:
    return Rect(data["x"][0], data["y"][0], data["x"][1], data["y"][1])


def point_from_json(data: list[Any]) -> Point:
    return (float(data[0]), float(data[1]))


def markers_from_json(data: dict[str, Any]) -> Markers:
    return Markers(
        dictionary=data["dictionary"],
        markers=tuple(
            Marker(id=m["id"], center=point_from_json(m["center"]), size_mm=float(m["size_mm"]),
                   rotation_deg=int(m.get("rotation_deg", 0)))
            for m in data["markers"]
        ),
    )


def zones_from_json(items: list[Any], default_factor: float = 1.0) -> tuple[Zone, ...]:
    return tuple(
        Zone(name=z["name"], rect=rect_from_json(z), factor=float(z.get("factor", default_factor)))
        for z in items
    )


def check_rect_in_table(rect: Rect, table: Rect, field: str, label: str) -> None:
    if rect.x_min >= rect.x_max or rect.y_min >= rect.y_max:
        raise ProfileError(f"profile {label}: field '{field}' is empty (min >= max); give [min, max] in mm")
    if not rect.inside(table):
        raise ProfileError(
            f"profile {label}: field '{field}' reaches outside the table "
            f"(table is {table.x_max:g} x {table.y_max:g} mm); move or shrink it"
        )
