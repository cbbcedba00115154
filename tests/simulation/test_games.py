"""The simulator's game registry: every game looked up by name, no game branches elsewhere, no import circle."""

from __future__ import annotations

import ast
import subprocess
import sys
import types
from pathlib import Path

import pytest

from calibration.profile import PROFILE_KINDS, load_profile
from rules.errors import InputError
from simulation import games
from simulation.camera import make_camera
from simulation.games import CAMERA_PRESETS, GAMES, PlayerView, SimulatedGame, simulated_game
from simulation.simulate import simulate_match
from simulation.trajectory import GameSimulator, Match

SIMULATION = Path(games.__file__).resolve().parent
PER_GAME = {"games.py", "piratenbillard.py"} | {p.name for p in SIMULATION.glob("starcluster*.py")}


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


def _imports(path: Path) -> list[str]:
    """The simulation modules `path` imports, anywhere in it except under `if TYPE_CHECKING:`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and ast.unparse(node.test).endswith("TYPE_CHECKING") for n in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ("simulation." * bool(node.level)) + (node.module or "")
            found += [base] + [f"{base}.{a.name}" for a in node.names]
    return [name.split(".")[1] for name in found if name.startswith("simulation.") and name.count(".") >= 1]


def test_the_simulation_modules_import_no_circle():
    graph = {p.stem: set(_imports(p)) - {p.stem} for p in SIMULATION.glob("*.py")}
    graph = {module: {m for m in needs if m in graph} for module, needs in graph.items()}
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, f"import circle: {' -> '.join(path + (module,))}"
        if module not in done:
            for needed in sorted(graph[module]):
                visit(needed, path + (module,))
            done.add(module)

    for module in sorted(graph):
        visit(module, ())
    assert "starcluster" not in graph["starcluster_scenarios"]


def test_no_game_branches_outside_the_per_game_modules_and_the_registry():
    for path in SIMULATION.glob("*.py"):
        if path.name in PER_GAME:
            continue
        text = path.read_text(encoding="utf-8")
        for banned in ("StarClusterProfile", "PiratenbillardProfile", 'game == "', "== \"starcluster\"",
                       "== \"piratenbillard\""):
            assert banned not in text, f"{path.name} branches on the game ({banned})"


def test_the_command_line_module_imports_nothing_heavy():
    """`referee --help` imports every command module: `simulate`'s must not load the simulator."""
    code = ("import sys, referee.commands.simulate; "
            "print(' '.join(sorted({'numpy', 'cv2', 'pymunk', 'av', 'simulation.simulate'} & set(sys.modules))))")
    heavy = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           cwd=SIMULATION.parent).stdout.split()
    assert heavy == []


def test_camera_presets_are_the_registry_s():
    from simulation.camera import PRESETS

    assert PRESETS == CAMERA_PRESETS == ("overhead", "behind_play_line")
