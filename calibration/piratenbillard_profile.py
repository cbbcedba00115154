"""The Piratenbillard board: a grid of spaces (96 on the standard board: 10 x 10 without the corners)
with a starting row per seat. Everything the calibration layer knows about this game's table lives
here: its JSON, its geometric checks, where a point lies, what to draw.
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
    markers_from_json,
)
from rules.colours import BallColour
from rules.events import Location, Place
from rules.piratenbillard.board import SEAT_NAMES

FRAME_SIDES = ("west", "east", "north", "south")
FRAME_TOLERANCE_MM = 1.0  # a frame measured on two opposite sides may be off by this from the board's size
EDGE_SIDES = {("row", 0): "north", ("row", 1): "south", ("col", 0): "west", ("col", 1): "east"}  # 1: the last line


@dataclass(frozen=True)
class Seat:
    """A player's seat and the edge line of the grid that is its starting row."""

    seat: int
    side: str
    line: str  # "row" or "col"
    index: int


@dataclass(frozen=True)
class PiratenbillardProfile:
    """A board in the referee's numbering (row 0 north, column 0 west, as the rules engine counts); the profile's
    own numbers (`seats`, `grid.missing`) may count rows from the south or columns from the east."""

    name: str
    table: Rect
    ball_diameter_mm: float
    rows: int
    cols: int
    space_size_mm: float
    pitch_mm: float
    frame_mm: tuple[tuple[str, float], ...]  # the frame's width between board edge and grid, on the sides measured
    missing: frozenset[tuple[int, int]]
    seats: tuple[Seat, ...]
    markers: Markers
    rows_from: str = "north"  # how the profile numbers rows: from the north edge or from the south
    cols_from: str = "west"  # ... and columns: from the west edge or from the east
    ball_colours: tuple[tuple[str, BallColour], ...] = ()  # default ball colours by player id (profile.py)
    game: str = field(default="piratenbillard", init=False)

    @staticmethod
    def from_json(data: dict[str, Any]) -> PiratenbillardProfile:
        grid = data["grid"]
        rows, cols = grid["rows"], grid["cols"]
        rows_from, cols_from = grid.get("rows_from", "north"), grid.get("cols_from", "west")

        def row(r: int) -> int:
            return rows - 1 - r if rows_from == "south" else r

        def col(c: int) -> int:
            return cols - 1 - c if cols_from == "east" else c

        frame = data["off_board_margin_mm"]
        sides = ((side, float(frame[side])) for side in FRAME_SIDES if side in frame) if isinstance(frame, dict) \
            else (("west", float(frame)), ("north", float(frame)))  # one width: the grid hangs from the north-west
        return PiratenbillardProfile(
            name=data["name"],
            table=Rect(0.0, 0.0, float(data["board"]["width_mm"]), float(data["board"]["length_mm"])),
            ball_diameter_mm=float(data["ball_diameter_mm"]),
            rows=rows,
            cols=cols,
            space_size_mm=float(grid["space_size_mm"]),
            pitch_mm=float(grid["pitch_mm"]),
            frame_mm=tuple(sides),
            missing=frozenset((row(r), col(c)) for r, c in grid["missing"]),
            seats=tuple(
                Seat(
                    seat=s["seat"],
                    side=s["side"],
                    line="row" if "row" in s else "col",
                    index=row(s["row"]) if "row" in s else col(s["col"]),
                )
                for s in data["seats"]
            ),
            markers=markers_from_json(data["markers"]),
            rows_from=rows_from,
            cols_from=cols_from,
        )

    def profile_number(self, line: str, index: int) -> int:
        """A row or column as the profile numbers it (the referee counts from the north and the west)."""
        flipped = self.rows_from == "south" if line == "row" else self.cols_from == "east"
        return (self.rows if line == "row" else self.cols) - 1 - index if flipped else index

    @cached_property
    def grid(self) -> Rect:
        """The playing field: the outer edge of the outermost spaces, placed by the frame's measured sides (made once:
        every detection of every frame is located on it)."""
        extent_x = (self.cols - 1) * self.pitch_mm + self.space_size_mm
        extent_y = (self.rows - 1) * self.pitch_mm + self.space_size_mm
        frame = dict(self.frame_mm)
        x_min = frame["west"] if "west" in frame else self.table.x_max - frame["east"] - extent_x
        y_max = self.table.y_max - frame["north"] if "north" in frame else frame["south"] + extent_y
        return Rect(x_min, y_max - extent_y, x_min + extent_x, y_max)

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

    def checked_space_center(self, row: int, col: int) -> Point:
        """`space_center` for a space someone named: a space that is not on the board is an error."""
        if not (0 <= row < self.rows and 0 <= col < self.cols) or (row, col) in self.missing:
            raise ProfileError(f"no space at row {row}, col {col} on profile {self.name!r}; rows and cols are "
                               "0..9 (row 0 north, col 0 west) and the four corners are missing")
        return self.space_center(row, col)

    def starting_cells(self, seat: int) -> list[tuple[int, int]]:
        s = next(s for s in self.seats if s.seat == seat)
        if s.line == "row":
            cells = [(s.index, c) for c in range(self.cols)]
        else:
            cells = [(r, s.index) for r in range(self.rows)]
        return [cell for cell in cells if cell not in self.missing]

    # ------------------------------------------------------------------ what every profile answers

    @property
    def play_line(self) -> None:
        """Piratenbillard has no Play Line: balls are looked for on the whole table."""
        return None

    @property
    def stacking(self) -> bool:
        """A space can hold more than one ball: a ball landing on another stays on it."""
        return True

    @property
    def playing_field(self) -> Rect:
        return self.grid

    @property
    def gutter_areas(self) -> tuple[Rect, ...]:
        """A Piratenbillard board has no gutters."""
        return ()

    @property
    def rules_settings(self) -> dict[str, Any]:
        """No Piratenbillard rules setting depends on the board."""
        return {}

    def locate(self, point: Point, tolerance_mm: float = 0.0) -> Spot:
        """The nearest space (with its distance) within the grid grown by `tolerance_mm`; else off the table."""
        if not self.grid.contains(point, tolerance_mm):
            return Spot(Location(Place.OFF_TABLE))
        x0, y0 = self.space_center(0, 0)
        col = min(max(round((point[0] - x0) / self.pitch_mm), 0), self.cols - 1)
        row = min(max(round((y0 - point[1]) / self.pitch_mm), 0), self.rows - 1)
        if (row, col) in self.missing:
            return Spot(Location(Place.OFF_TABLE))
        return Spot(Location.cell_at(row, col), math.dist(point, self.space_center(row, col)))

    @cached_property
    def places(self) -> tuple[tuple[Location, Rect], ...]:
        """Every space, row by row: the places a settled table is read from, pixel by pixel."""
        half = self.space_size_mm / 2
        return tuple((Location.cell_at(row, col), Rect(x - half, y - half, x + half, y + half))
                     for row, col in self.spaces() for x, y in [self.space_center(row, col)])

    @cached_property
    def features(self) -> tuple[Feature, ...]:
        """The grid, then every space (a starting space with its seat)."""
        seat_of = {cell: s.seat for s in self.seats for cell in self.starting_cells(s.seat)}
        return (Feature(FeatureKind.BOARD, self.grid),
                *(Feature(FeatureKind.SPACE, rect, seat=seat_of.get((at.row, at.col)))
                  for at, rect in self.places if at.row is not None and at.col is not None))

    # ------------------------------------------------------------------ checks the schema cannot make

    def check(self, label: str) -> None:
        if self.pitch_mm < self.space_size_mm:
            raise ProfileError(
                f"profile {label}: field 'grid.pitch_mm' ({self.pitch_mm:g}) is smaller than "
                f"space_size_mm ({self.space_size_mm:g}), so spaces overlap; raise the pitch"
            )
        if self.space_size_mm < self.ball_diameter_mm:
            raise ProfileError(
                f"profile {label}: field 'grid.space_size_mm' ({self.space_size_mm:g}) is smaller than the "
                f"ball ({self.ball_diameter_mm:g} mm); a ball would not fit"
            )
        self._check_frame(label)
        corners = {(0, 0), (0, self.cols - 1), (self.rows - 1, 0), (self.rows - 1, self.cols - 1)}
        if self.missing != corners:
            raise ProfileError(
                f"profile {label}: field 'grid.missing' must be the four corner spaces "
                f"{sorted(corners)}; Piratenbillard has no corner spaces"
            )
        seats = sorted(s.seat for s in self.seats)
        if seats != list(range(len(self.seats))):
            raise ProfileError(f"profile {label}: field 'seats' numbers are {seats}; number them 0, 1, 2, 3")
        edges: set[tuple[str, int]] = set()
        for i, s in enumerate(self.seats):
            last = (self.rows if s.line == "row" else self.cols) - 1
            if s.index not in (0, last) or (s.line, s.index) in edges:
                raise ProfileError(
                    f"profile {label}: field 'seats[{i}].{s.line}' is {self.profile_number(s.line, s.index)}; "
                    f"each seat needs its own edge line of the grid (0 or {last})"
                )
            edges.add((s.line, s.index))
            edge = EDGE_SIDES[(s.line, 0 if s.index == 0 else 1)]
            if edge != s.side:
                counted = f"rows counted from the {self.rows_from}" if s.line == "row" \
                    else f"columns counted from the {self.cols_from}"
                raise ProfileError(
                    f"profile {label}: field 'seats[{i}].{s.line}' is {self.profile_number(s.line, s.index)}, the "
                    f"{edge} edge of the grid ({counted}), but the seat sits {s.side}; give the {s.side} edge's "
                    "number, or set grid.rows_from / grid.cols_from"
                )
            if s.side != SEAT_NAMES[s.seat]:
                raise ProfileError(
                    f"profile {label}: field 'seats[{i}].side' is {s.side}, but seat {s.seat} sits "
                    f"{SEAT_NAMES[s.seat]} (seats go clockwise from 0 in the south, as the rules number them)"
                )

    def _check_frame(self, label: str) -> None:
        """The grid on the board, and a frame measured on opposite sides that adds up to the board's size."""
        frame = dict(self.frame_mm)
        extent = {"x": (self.cols - 1) * self.pitch_mm + self.space_size_mm,
                  "y": (self.rows - 1) * self.pitch_mm + self.space_size_mm}
        for axis, (a, b), size in (("x", ("west", "east"), self.table.x_max), ("y", ("north", "south"),
                                                                               self.table.y_max)):
            if a in frame and b in frame and abs(frame[a] + extent[axis] + frame[b] - size) > FRAME_TOLERANCE_MM:
                raise ProfileError(
                    f"profile {label}: field 'off_board_margin_mm.{b}' does not add up: {a} {frame[a]:g} + grid "
                    f"{extent[axis]:g} + {b} {frame[b]:g} mm is not the board's {size:g} mm; measure again or "
                    f"give only one of {a} and {b}"
                )
        if not self.grid.inside(self.table):
            raise ProfileError(
                f"profile {label}: field 'grid' does not fit on the board with off_board_margin_mm "
                f"{', '.join(f'{side} {mm:g}' for side, mm in self.frame_mm)}; the grid is "
                f"{extent['x']:g} x {extent['y']:g} mm"
            )
