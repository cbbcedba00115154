"""Simulate a match of any registered game, render it and write video.mp4 and truth.json.

This is what `referee simulate` runs (and what simulation.make_samples and the
tests call): the game's simulator comes from the registry (simulation.games),
the camera, the renderer and the truth file are the same for every game.
"""

from __future__ import annotations

import json
import time
from importlib import resources
from pathlib import Path
from typing import Any

from calibration.profile import DEFAULT_PROFILES, TableProfile, load_profile
from rules.errors import InputError
from simulation.camera import make_camera
from simulation.games import simulated_game
from simulation.realism import Realism
from simulation.render import render_clip
from simulation.trajectory import Match
from simulation.truth import build_truth, write_truth


def simulate_match(game: str, profile: TableProfile, seed: int, scenario: str, fps: float,
                   duration: float | None, players: int | None) -> Match:
    """Play `scenario` with the game's simulator; bad names and options raise InputError."""
    simulator = simulated_game(game).simulator()
    return simulator.simulate(profile, seed, scenario, simulator.options(fps, duration, players))


def profile_json(game: str, path: str | None) -> dict[str, Any]:
    """The table profile's JSON as the truth file records it: the file given, or the game's default."""
    if path is None:
        return json.loads(resources.files("calibration.profiles").joinpath(DEFAULT_PROFILES[game]).read_text())
    return json.loads(Path(path).read_text(encoding="utf-8"))


def simulate_to(out: Path, game: str, seed: int, scenario: str = "full_game", camera: str = "behind_play_line",
                width: int = 1280, height: int = 720, fps: float = 30.0, duration: float | None = None,
                players: int | None = None, realism: Realism | None = None, profile_path: str | None = None,
                progress: bool = True) -> tuple[dict[str, Any], float]:
    """Simulate, render and write video.mp4 + truth.json; return the truth and the render speed (frames/s)."""
    if fps <= 0 or fps > 240:
        raise InputError(f"--fps must be in (0, 240], got {fps}")
    if duration is not None and duration <= 0:
        raise InputError(f"--duration must be > 0 seconds, got {duration}")
    profile = load_profile(profile_path or game)
    if profile.game != game:
        raise InputError(f"profile {profile_path} is for {profile.game}, not {game}; pass a {game} profile")
    cam = make_camera(profile, camera, width, height)
    realism = realism if realism is not None else Realism.moderate()
    match = simulate_match(game, profile, seed, scenario, fps, duration, players)
    started = time.perf_counter()
    frames = render_clip(match, profile, profile_json(game, profile_path), cam, realism, out, progress)
    speed = len(frames) / max(time.perf_counter() - started, 1e-9)
    truth = build_truth(match, profile_json(game, profile_path), cam, realism, frames)
    write_truth(out / "truth.json", truth)
    return truth, speed
