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
from rules.events import Location, Place


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
    game: str = field(default="piratenbillard", init=False)

    @staticmethod
    def from_json(data: dict[str, Any]) -> PiratenbillardProfile:
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
            markers=markers_from_json(data["markers"]),
        )

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

    def checked_space_center(self, row: int, col: int) -> Point:
        """`space_center` for a space someone named: a space that is not on the board is an error."""
        if not (0 <= row < self.rows and 0 <= col < self.cols) or (row, col) in self.missing:
            raise ProfileError(f"no space at row {row}, col {col} on profile {self.name!r}; rows and cols are "
                               "0..9 and the four corners are missing")
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
        if not self.grid.inside(self.table):
            raise ProfileError(
                f"profile {label}: field 'grid' does not fit on the board with off_board_margin_mm "
                f"{self.off_board_margin_mm:g}; board must be at least "
                f"{2 * self.off_board_margin_mm + self.grid.x_max - self.grid.x_min:g} mm wide"
            )
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
                    f"profile {label}: field 'seats[{i}].{s.line}' is {s.index}; each seat needs its own "
                    f"edge line of the grid (0 or {last})"
                )
            edges.add((s.line, s.index))
