"""The Piratenbillard board: 96 spaces, four starting rows, seats and neighbours.

Cells are (row, col) with row 0 = north .. 9 = south and col 0 = west .. 9 =
east; the four corners do not exist. Seat 0 sits south, 1 west, 2 north,
3 east, so clockwise seen from above is 0 -> 1 -> 2 -> 3. The calibration
profile uses the same convention, so a cell from the vision means the same
space here.
"""

from __future__ import annotations

Cell = tuple[int, int]

SIZE = 10
SEAT_NAMES = ("south", "west", "north", "east")
CORNERS: frozenset[Cell] = frozenset({(0, 0), (0, SIZE - 1), (SIZE - 1, 0), (SIZE - 1, SIZE - 1)})
CELLS: tuple[Cell, ...] = tuple(
    (r, c) for r in range(SIZE) for c in range(SIZE) if (r, c) not in CORNERS
)


def is_cell(cell: Cell) -> bool:
    r, c = cell
    return 0 <= r < SIZE and 0 <= c < SIZE and cell not in CORNERS


def starting_row(seat: int) -> tuple[Cell, ...]:
    """The 8 spaces of a seat's starting row, from its west/north end."""
    inner = range(1, SIZE - 1)
    if seat == 0:
        return tuple((SIZE - 1, c) for c in inner)
    if seat == 1:
        return tuple((r, 0) for r in inner)
    if seat == 2:
        return tuple((0, c) for c in inner)
    if seat == 3:
        return tuple((r, SIZE - 1) for r in inner)
    raise ValueError(f"seat must be 0..3, got {seat}")


def row_seat(cell: Cell) -> int | None:
    """Whose starting row a space belongs to (by seat), or None for an inner space."""
    r, c = cell
    if r == SIZE - 1:
        return 0
    if c == 0:
        return 1
    if r == 0:
        return 2
    if c == SIZE - 1:
        return 3
    return None


def opposite(seat: int) -> int:
    return (seat + 2) % 4


def neighbours(seat: int) -> tuple[int, int]:
    """The seats to the left and right of `seat` (the next and previous clockwise)."""
    return ((seat + 1) % 4, (seat + 3) % 4)


def cell_name(cell: Cell) -> str:
    return f"({cell[0]},{cell[1]})"
