"""The simulated games, looked up by name: the `game` every table profile carries.

Each entry says where the game's simulator lives (a module whose `SIMULATOR`
is a `simulation.trajectory.GameSimulator`: match function, scenario names,
options), where its randomised tables are drawn (a module whose `RECIPE` is a
`simulation.variants.VariantRecipe`), and what the renderer and the camera
need to know about the game: where the `behind_play_line` camera stands,
what the balls are made of, and whether a player stands at a Play Line to be
composited into the frames.
Adding a game to the simulator is one new module plus one entry in `GAMES`.

This module imports nothing heavy (the standard library and rules.errors), so
`referee --help` can list the games and camera presets without loading numpy,
OpenCV, pymunk or a rules engine; a game's simulator module is imported on
first use (`SimulatedGame.simulator`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rules.errors import InputError

if TYPE_CHECKING:
    from simulation.trajectory import GameSimulator

# Camera pose presets every game has: straight down over the table's centre, or the game's own
# `behind_play_line` pose (`SimulatedGame.behind_play_line`).
CAMERA_PRESETS = ("overhead", "behind_play_line")

Vector = tuple[float, float, float]


@dataclass(frozen=True)
class PlayerView:
    """The `behind_play_line` camera: above and behind the table's near edge, centred across it.

    It stands `back_mm` in front of the near edge (y = 0) at `height_mm`, and looks at the
    table's centre line `aim` of the way up the table (0: near edge, 1: far edge); image-up is z.
    """

    back_mm: float
    height_mm: float
    aim: float

    def pose(self, width_mm: float, length_mm: float) -> tuple[Vector, Vector, Vector]:
        """Position, target and up vector (board mm) for a table `width_mm` x `length_mm`."""
        return ((width_mm / 2, -self.back_mm, self.height_mm), (width_mm / 2, self.aim * length_mm, 0.0),
                (0.0, 0.0, 1.0))


@dataclass(frozen=True)
class SimulatedGame:
    name: str  # the profiles' `game`
    module: str  # the simulator module, which defines SIMULATOR (a GameSimulator)
    behind_play_line: PlayerView  # the `behind_play_line` camera preset
    ball_material: str  # how simulation.sprites shades a ball: "glass" or "wood"
    player_at_play_line: bool  # the renderer composites the player's photograph at the Play Line
    variants: str | None = None  # the module whose RECIPE draws the game's randomised tables (simulation.variants)

    def simulator(self) -> GameSimulator[Any, Any]:
        """The game's match function, scenario names and options (its module is imported here, once)."""
        return importlib.import_module(self.module).SIMULATOR


GAMES: dict[str, SimulatedGame] = {game.name: game for game in (
    # high angle from behind the Play Line, looking up the slope; the shooter stands at the line
    SimulatedGame("starcluster", "simulation.starcluster",
                  PlayerView(back_mm=700.0, height_mm=800.0, aim=0.5), ball_material="glass",
                  player_at_play_line=True, variants="simulation.starcluster_variants"),
    # from the south seat's side, above the player's head; the balls are struck from below the board
    SimulatedGame("piratenbillard", "simulation.piratenbillard",
                  PlayerView(back_mm=420.0, height_mm=620.0, aim=0.45), ball_material="wood",
                  player_at_play_line=False, variants="simulation.piratenbillard_variants"),
)}


def simulated_game(name: str) -> SimulatedGame:
    """The registry entry of game `name`; InputError when the simulator does not know it."""
    game = GAMES.get(name)
    if game is None:
        raise InputError(f"the simulator has no game {name!r}; use one of {', '.join(GAMES)}")
    return game
