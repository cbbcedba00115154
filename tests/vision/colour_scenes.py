"""Rendered tables with balls in colours no player id names (violet, a golden yellow, rose), for the colour
tests: the simulator draws them in the sRGB colours here."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from calibration.profile import load_profile
from simulation import render
from simulation.camera import make_camera
from simulation.piratenbillard import simulate_piratenbillard
from simulation.realism import Realism
from simulation.render import Renderer
from simulation.starcluster import simulate_starcluster
from simulation.trajectory import BallPose

# the balls' sRGB colours, by player id; no id names a colour the detector knows. (A Piratenbillard board's
# starting rows are painted in its seats' colours, yellow among them: a ball of the paint's colour is learned
# from the balls in their starting spaces, as the detector tests do, not from a colour given.)
SRGB = {"violet": (123, 63, 160), "sun": (224, 192, 32), "rose": (224, 80, 140)}
PAIRS = {"starcluster": ("violet", "sun"), "piratenbillard": ("violet", "rose")}
MAX_ERROR_PX = 5.0


def render_with(game: str, balls_at: list[tuple[str, float, float]], seed: int = 3):
    """The game's first frame with no balls (for the set-up) and one with `balls_at` (owner, x, y), the balls
    drawn in SRGB, and that frame's truth."""
    profile = load_profile(game)
    match = simulate_starcluster(profile, seed, "chain_grand_slam") if game == "starcluster" \
        else simulate_piratenbillard(profile, seed, "stacked_pair")
    with pytest.MonkeyPatch.context() as patch:
        for owner, rgb in SRGB.items():  # the renderer's ball colours are BGR 0..1
            patch.setitem(render.PLAYER_COLOURS, owner, tuple(c / 255 for c in rgb[::-1]))
        renderer = Renderer(profile, make_camera(profile, "behind_play_line", 1280, 720), Realism.moderate(),
                            match.fps, seed)
        empty = replace(match.frames[0], balls=(), hand=None)
        first, _ = renderer.render(empty)
        r = profile.ball_diameter_mm / 2
        balls = tuple(BallPose(i, owner, x, y, r) for i, (owner, x, y) in enumerate(balls_at))
        image, truth = renderer.render(replace(empty, balls=balls))
    return profile, first, image, truth


def spread(profile, owners: tuple[str, str], rows: int = 2, cols: int = 3,
           dy: float = 0.0) -> list[tuple[str, float, float]]:
    """Balls of both players spread over the middle of the table (moved `dy` mm along it), alternating owners."""
    t = profile.table
    xs = np.linspace(t.x_min + 0.25 * (t.x_max - t.x_min), t.x_max - 0.25 * (t.x_max - t.x_min), cols)
    ys = np.linspace(t.y_min + 0.35 * (t.y_max - t.y_min), t.y_max - 0.35 * (t.y_max - t.y_min), rows) + dy
    return [(owners[(i + j) % 2], float(x), float(y)) for j, y in enumerate(ys) for i, x in enumerate(xs)]


def assert_all_found(truth, detections) -> None:
    """Every visible ball found once, in its owner's colour and within MAX_ERROR_PX; nothing else found."""
    visible = [b for b in truth.balls if b.visible]
    assert len(visible) >= 6
    left = list(detections)
    for ball in visible:
        near = [d for d in left if np.hypot(d.u - ball.u, d.v - ball.v) < MAX_ERROR_PX]
        assert len(near) == 1 and near[0].colour == ball.owner, (ball, near)
        left.remove(near[0])
    assert not [d for d in left if d.score >= 0.5], left
