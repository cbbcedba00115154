"""What a simulated match hands to the renderer and to the truth file.

The physics (one module per game, each offering a `GameSimulator`) plays a
match and records, for every video frame, where each ball is in the table's
own millimetres, where a hand or a player's body is, and how the table and
camera are displaced. The renderer turns these frames into pixels; the truth
file stores them beside the event log that the rules engine scored. Both read
the same frames, so the video and its truth cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Generic, TypeVar

from rules.events import Event


@dataclass(frozen=True)
class BallPose:
    """One ball in one frame, in board millimetres (profile axes, z up)."""

    id: int  # stable for the whole match: ball k of a player keeps its id
    owner: str  # the player id, which is the ball colour
    x: float
    y: float
    z: float  # height of the ball's centre above the board plane (radius when resting)
    on_table: bool = True  # False: in a hand, in the box, in a treasure: not drawn
    moving: bool = False  # for motion blur and truth of "at rest"
    vx: float = 0.0  # mm/s in the board plane, for motion blur
    vy: float = 0.0


@dataclass(frozen=True)
class HandPose:
    """A hand reaching over the table (lifting or placing a ball, or just in the way)."""

    x: float  # fingertip centre, board mm
    y: float
    from_side: str  # "near" | "far" | "left" | "right": the edge the arm comes from
    radius: float = 45.0  # rough size of the hand's blob, mm


@dataclass(frozen=True)
class PersonPose:
    """A player standing at the Play Line, drawn from a real photograph.

    `reach_mm` is how far beyond the Play Line (positive: over the table side)
    the furthest body part is; `crossing_part` names it when it crosses.
    """

    player: str
    x: float  # where along the line the player stands, board mm
    reach_mm: float
    crossing_part: str | None = None


@dataclass(frozen=True)
class TableShift:
    """Rigid displacement of the table in its own plane (a shove), mm and degrees."""

    dx: float = 0.0
    dy: float = 0.0
    rotation_deg: float = 0.0


@dataclass(frozen=True)
class SimFrame:
    index: int
    t: float  # seconds, = index / fps
    balls: tuple[BallPose, ...]
    hand: HandPose | None = None
    person: PersonPose | None = None
    table_shift: TableShift = field(default_factory=TableShift)


@dataclass(frozen=True)
class Match:
    """A simulated match: its frames, the event log the referee should produce, and the scored truth."""

    game: str  # the simulated game's name (simulation.games), which is its profiles' `game`
    seed: int
    scenario: str  # "full_game" or a scenario name
    fps: float
    frames: tuple[SimFrame, ...]
    events: tuple[Event, ...]  # the true observations and umpire inputs, in the event-model format
    config: dict[str, Any]  # the game config the engine used
    notes: tuple[str, ...] = ()  # what the scenario shows, for the README and contact sheets


ProfileT = TypeVar("ProfileT")  # the game's table profile kind
OptionsT = TypeVar("OptionsT")  # the game's simulation options


@dataclass(frozen=True)
class GameSimulator(Generic[ProfileT, OptionsT]):
    """What one game's simulator module offers as its `SIMULATOR` (simulation.games finds it by name).

    `options(fps, duration_s, players)` turns what `referee simulate` takes into the game's
    options; `simulate(profile, seed, scenario, options)` plays the match. Both raise InputError
    on a value the game does not take.
    """

    scenarios: tuple[str, ...]  # "full_game" and the rules scenarios, in sample order
    options: Callable[[float, float | None, int | None], OptionsT]
    simulate: Callable[[ProfileT, int, str, OptionsT], Match]
