"""Each game's specifics above its rules engine and its table profile, behind one protocol.

A game is three parts: its rules package (`rules/<game>/`, the engine), its
table profile kind (`calibration/<game>_profile.py`) and its module here, which
tells the vision pipeline, the referee session and the review tools what only
that game knows: when a shot starts, who plays by default, whether the players'
bodies are watched at a Play Line, which balls teach the colours, how the places
are labelled on screen, what a chain is. Everything else is game-blind and asks
`game_vision(name)`. A third game is one rules package, one profile kind and one
module here (plus its entry in `GAME_MODULES`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Protocol

from calibration.geometry import Point, Rect
from calibration.profile import TableProfile
from rules.errors import InputError
from rules.events import Event, Snapshot
from vision.config import SettleConfig, ShotConfig
from vision.shots import ShotWatch

GAME_MODULES = {"starcluster": "vision.games.starcluster", "piratenbillard": "vision.games.piratenbillard"}


@dataclass(frozen=True)
class PlaceLabel:
    """A name drawn next to the table: `text` at board point `at`, nudged by (dx, dy) px at 720p."""

    text: str
    at: Point
    dx: int = 0
    dy: int = 0


class GameVision(Protocol):
    """What only one game knows above its rules: see the module docstring."""

    name: str
    default_players: tuple[str, ...]  # ball colours when a run names none
    watches_play_line: bool  # a player's body crossing a Play Line is a foul, so pose watches it
    max_hop_mm: float  # how high a ball's centre may fly above its resting height: balls are looked for up there
    shot_brings_ball: bool  # a shot rolls a new ball of the shooter's onto the table (else it moves one already there)

    def default_session(self, players: tuple[str, ...]) -> tuple[Event, ...]:
        """The umpire inputs of a run without a session file: the players in order, and whatever starts play."""

    def shot_watch(self, profile: TableProfile, shots: ShotConfig, settle: SettleConfig) -> ShotWatch:
        """What starts a shot, from the tracks."""

    def colour_samples(self, profile: TableProfile, seats: dict[str, int]) -> dict[str, list[Point]]:
        """Board points (contact points, mm) known to hold each player's ball on the first frame: the colour
        model learns the players' colours there. Empty: the players keep their nominal colours."""

    def start_places(self, profile: TableProfile) -> dict[str, list[Point]]:
        """Board points (contact points, mm) that hold balls when a game starts, by what they are (a seat's starting
        row): on a frame of the start, `referee calibrate` reads each one's balls' colour there. Empty: a game starts
        with every ball in hand."""

    def place_labels(self, profile: TableProfile) -> tuple[PlaceLabel, ...]:
        """Names drawn beside the places, so a ball's label reads as the engine's calls name it."""

    def ball_areas(self, profile: TableProfile) -> tuple[Rect, ...] | None:
        """Where on the table a ball can be (board mm): what is found elsewhere on it (its frame) is no ball.
        None: anywhere (a ball knocked off the board may come to rest anywhere round it)."""

    def chain_length(self, decision: dict[str, Any], before: Snapshot | None, after: Snapshot) -> int:
        """The longest chain a score decision's landed balls are part of (0: the game has no chains)."""


def game_vision(name: str) -> GameVision:
    """The game's module, by the name every profile, result and run carries."""
    try:
        module = GAME_MODULES[name]
    except KeyError:
        raise InputError(f"unknown game {name!r}; use one of {', '.join(GAME_MODULES)}") from None
    game: GameVision = importlib.import_module(module).GAME
    return game
