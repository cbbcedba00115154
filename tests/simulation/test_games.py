"""The simulator's game registry: every game looked up by name (tests/test_architecture.py checks that no game
branches elsewhere and that no module imports itself back)."""

from __future__ import annotations

import sys
import types

import pytest

from calibration.profile import PROFILE_KINDS, load_profile
from rules.errors import InputError
from simulation.camera import make_camera
from simulation.games import CAMERA_PRESETS, GAMES, PlayerView, SimulatedGame, simulated_game
from simulation.simulate import simulate_match
from simulation.trajectory import GameSimulator, Match



def test_every_profile_kind_has_a_simulated_game_with_full_game_first():
    assert set(GAMES) == set(PROFILE_KINDS)
    for name, game in GAMES.items():
        assert game.name == name and game is simulated_game(name)
        assert game.ball_material in ("glass", "wood")
        simulator = game.simulator()
        assert isinstance(simulator, GameSimulator) and simulator.scenarios[0] == "full_game"


def test_an_unknown_game_is_refused_with_the_known_ones():
    with pytest.raises(InputError, match="starcluster, piratenbillard"):
        simulated_game("snooker")


def test_star_cluster_ball_takes_no_player_count():
    profile = load_profile("starcluster")
    with pytest.raises(InputError, match="--players applies to Piratenbillard only"):
        simulate_match("starcluster", profile, 1, "grouping", 30.0, None, 3)


def test_a_third_game_is_one_module_and_one_entry(monkeypatch):
    """The simulator, the camera and the renderer's choices all come from the registry entry."""
    played = []

    def simulate(profile, seed, scenario, options):
        played.append((profile.game, seed, scenario, options))
        return Match("toy", seed, scenario, options, (), (), {})

    module = types.ModuleType("toy_sim")
    module.SIMULATOR = GameSimulator(("full_game",), lambda fps, duration, players: fps, simulate)
    monkeypatch.setitem(sys.modules, "toy_sim", module)
    monkeypatch.setitem(GAMES, "toy", SimulatedGame("toy", "toy_sim", PlayerView(100.0, 900.0, 0.6), ball_material="wood",
                                                    player_at_play_line=False))
    profile = types.SimpleNamespace(game="toy", table=load_profile("piratenbillard").table)
    match = simulate_match("toy", profile, 4, "full_game", 25.0, None, None)
    assert (match.game, played) == ("toy", [("toy", 4, "full_game", 25.0)])
    camera = make_camera(profile, "behind_play_line", 640, 360)
    assert camera.centre == pytest.approx([profile.table.x_max / 2, -100.0, 900.0])


def test_camera_presets_are_the_registry_s():
    from simulation.camera import PRESETS

    assert PRESETS == CAMERA_PRESETS == ("overhead", "behind_play_line")
