"""Piratenbillard board variants (simulation.variants): 10 x 10 spaces of a drawn size and pitch, a drawn ball.

A 14-40 mm ball in spaces a little larger, a drawn pitch and frame, eight
markers of drawn ids and size on the frame, 2-4 players each with a full
starting row. The scenario is a game by simple players, cut short after 9-13 s.
"""

from __future__ import annotations

import random
from typing import Any

from calibration.profile import PiratenbillardProfile, TableProfile

from .piratenbillard import SEATS_FOR, PiratenbillardOptions, simulate_piratenbillard
from .trajectory import Match, SimFrame
from .variants import BALL_MM_RANGE, SCENARIO, Layout, TableVariant, VariantRecipe, markers

PLAYERS = (2, 4)


def _profile(rng: random.Random, seed: int) -> dict[str, Any]:
    ball = round(rng.uniform(*BALL_MM_RANGE), 1)
    size = round(max(30.0, ball + 6.0) + rng.uniform(0.0, 12.0), 1)
    pitch = round(size + rng.uniform(3.0, 10.0), 1)
    margin = round(rng.uniform(55.0, 80.0), 1)
    marker = round(min(margin - 14.0, rng.uniform(36.0, 48.0)), 1)
    side = round(2 * margin + 9 * pitch + size, 1)
    m, mid, far = margin / 2, side / 2, side - margin / 2
    centres = [(m, m), (far, m), (far, far), (m, far), (mid, m), (far, mid), (mid, far), (m, mid)]
    return {
        "format": "table-profile/1", "game": "piratenbillard", "name": f"Piratenbillard variant {seed}",
        "units": "mm", "board": {"width_mm": side, "length_mm": side}, "ball_diameter_mm": ball,
        "grid": {"rows": 10, "cols": 10, "space_size_mm": size, "pitch_mm": pitch,
                 "missing": [[0, 0], [0, 9], [9, 0], [9, 9]]},
        "off_board_margin_mm": margin,
        "seats": [{"seat": 0, "side": "south", "row": 9}, {"seat": 1, "side": "west", "col": 0},
                  {"seat": 2, "side": "north", "row": 0}, {"seat": 3, "side": "east", "col": 9}],
        "markers": markers(rng, centres, marker),
    }


def _rules(rng: random.Random, _profile_json: dict[str, Any]) -> tuple[dict[str, Any], float]:
    """The default target, and the seconds after which no shot starts."""
    return {"target_points": 7}, rng.uniform(9.0, 13.0)


def _layout(profile: TableProfile, players: tuple[str, ...]) -> Layout:
    assert isinstance(profile, PiratenbillardProfile)
    return Layout((), profile.space_size_mm, False, dict(zip(players, SEATS_FOR[len(players)])))


def _play(v: TableVariant, fps: float) -> Match:
    assert isinstance(v.profile, PiratenbillardProfile)
    options = PiratenbillardOptions(players=len(v.players), fps=fps, duration_s=v.length, seat_colours=v.players,
                                    target_points=v.config["target_points"])
    match = simulate_piratenbillard(v.profile, v.seed, "full_game", options)
    note = f"table variant {v.seed}: {len(v.players)} players in full rows, a game cut short after {v.length:.0f} s"
    return Match(match.game, match.seed, SCENARIO, match.fps, match.frames, match.events, match.config, (note,))


def _laid_out(v: TableVariant) -> SimFrame:
    """The game's first frame: every ball in its starting row."""
    return _play(v, 30.0).frames[0]


RECIPE = VariantRecipe(profile=_profile, player_count=lambda rng: rng.randint(*PLAYERS), rules=_rules,
                       layout=_layout, play=_play, laid_out=_laid_out)
