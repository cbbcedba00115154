"""Star Cluster Ball table variants (simulation.variants): the rulebook's table, every dimension drawn afresh.

Slot counts 3-8 per Position, a 14-40 mm marble with slots a little wider and
deeper, Positions spread along the slope to suit the marble, combs placed
anywhere across the board, side gutters that stop at the board or run on past
the Play Line, a rim of drawn width carrying six markers of drawn ids and size.
The scenario is one round of 3-4 policy shots by two simulated players; the
rules config counts the table's own slots.
"""

from __future__ import annotations

import math
import random
from typing import Any

from calibration.geometry import Rect
from calibration.profile import StarClusterProfile, TableProfile

from .starcluster_driver import MatchDriver, StarClusterSimOptions
from .trajectory import BallPose, Match, SimFrame
from .variants import BALL_MM_RANGE, SCENARIO, SLOTS_RANGE, Layout, TableVariant, VariantRecipe, markers


def _profile(rng: random.Random, seed: int) -> dict[str, Any]:
    ball = round(rng.uniform(*BALL_MM_RANGE), 1)
    slot_w = round(ball + rng.uniform(5.0, 10.0), 1)
    slot_d = round(ball + rng.uniform(10.0, 16.0), 1)
    pitch = slot_w + rng.uniform(5.0, 10.0)  # room for the comb's teeth between slots
    counts = [rng.randint(*SLOTS_RANGE) for _ in range(3)]
    rim = rng.uniform(50.0, 70.0)  # the frame that carries the markers
    marker = round(min(rim - 12.0, rng.uniform(36.0, 48.0)), 1)
    gutter = ball + rng.uniform(14.0, 30.0)
    board_w = max(420.0, max(counts) * pitch + 6 * ball) + rng.uniform(0.0, 120.0)
    width = 2 * rim + 2 * gutter + board_w
    line_y = rim + rng.uniform(120.0, 180.0)
    board_y0 = line_y + rng.uniform(160.0, 240.0)
    spacing = 170.0 + 3 * ball + rng.uniform(0.0, 60.0)  # between Positions along the slope
    first = board_y0 + rng.uniform(200.0, 280.0)
    board_y1 = first + 2 * spacing + rng.uniform(90.0, 140.0)
    length = board_y1 + gutter + rim
    x0, x1 = rim + gutter, width - rim - gutter
    positions = []
    for number, n in enumerate(counts, start=1):
        half = (n - 1) * pitch / 2
        lo, hi = x0 + 2 * ball + half + slot_w / 2, x1 - 2 * ball - half - slot_w / 2
        centre = rng.uniform(lo, hi) if hi > lo else (x0 + x1) / 2
        y = first + (number - 1) * spacing
        positions.append({"number": number, "slots": [[round(centre - half + i * pitch, 1), round(y, 1)]
                                                     for i in range(n)],
                          "slot_width_mm": slot_w, "slot_depth_mm": slot_d, "multiplier": 1})
    past_line = rng.random() < 0.5
    side_y0 = rim + rng.uniform(20.0, 60.0) if past_line else board_y0

    def r(value: float) -> float:  # a profile is written to 0.1 mm
        return round(value, 1)

    centres = [(rim / 2, rim / 2), (width - rim / 2, rim / 2), (rim / 2, length / 2), (width - rim / 2, length / 2),
               (rim / 2, length - rim / 2), (width - rim / 2, length - rim / 2)]
    return {
        "format": "table-profile/1", "game": "starcluster", "name": f"Star Cluster Ball variant {seed}", "units": "mm",
        "table": {"width_mm": r(width), "length_mm": r(length)},
        "ball_diameter_mm": ball,
        "play_line": {"from": [r(rim), r(line_y)], "to": [r(width - rim), r(line_y)]},
        "play_area": {"x": [r(rim), r(width - rim)], "y": [r(line_y), r(board_y0)]},
        "board": {"x": [r(x0), r(x1)], "y": [r(board_y0), r(board_y1)]},
        "gutters": [{"name": "left", "x": [r(rim), r(x0)], "y": [r(side_y0), r(board_y1 + gutter)]},
                    {"name": "right", "x": [r(x1), r(width - rim)], "y": [r(side_y0), r(board_y1 + gutter)]},
                    {"name": "back", "x": [r(x0), r(x1)], "y": [r(board_y1), r(board_y1 + gutter)]}],
        "astrolabe": {"positions": positions},
        "multiplier_zones": [], "dead_ball_zones": [],
        "markers": markers(rng, centres, marker),
    }


def _rules(rng: random.Random, profile: dict[str, Any]) -> tuple[dict[str, Any], float]:
    """One short round (a level one ends in a shared tie-break), a few balls each, the table's slot counts;
    and how many shots are played."""
    config = {"rounds_per_game": 1, "round_seconds": 180.0, "tiebreak_seconds": 10.0, "tiebreak_no_score": "shared",
              "balls_per_player": rng.randint(3, 5),
              "slots_per_position": [len(p["slots"]) for p in profile["astrolabe"]["positions"]]}
    return config, float(rng.randint(3, 4))


def _layout(profile: TableProfile, _players: tuple[str, ...]) -> Layout:
    assert isinstance(profile, StarClusterProfile)
    positions = sorted(profile.positions, key=lambda p: p.number)
    line_y = min(profile.play_line[0][1], profile.play_line[1][1])
    return Layout(tuple(len(p.slots) for p in positions), positions[0].slot_width_mm,
                  any(g.rect.y_min < line_y for g in profile.gutters), {})


def _play(v: TableVariant, fps: float) -> Match:
    """Up to the drawn number of policy shots (the engine says who shoots; an empty hand banks), then the round
    ends."""
    assert isinstance(v.profile, StarClusterProfile)
    options = StarClusterSimOptions(fps=fps, players=(v.players[0], v.players[1]),
                                    balls_per_player=v.config["balls_per_player"])
    driver = MatchDriver(v.profile, v.seed, SCENARIO, options, dict(v.config))
    driver.start_game()
    shots = 0
    for _ in range(int(v.length)):
        if driver.game_over or driver.round_start_t is None:
            break
        if driver.pending_choice is not None:
            driver.choose("bank")
            continue
        driver.play_policy_shot()
        shots += 1
    driver.notes.insert(0, f"table variant {v.seed}: {shots} shots by two simulated players, then the round ends")
    for _ in range(3):  # the round, and a tie-break if it ends level
        if driver.game_over:
            break
        driver.end_round()
    driver.idle(1.0)
    return driver.match()


LAID_OUT_PER_PLAYER = 3  # balls a player laid on the table for `referee calibrate` (`_laid_out`)


def _laid_out(v: TableVariant) -> SimFrame:
    """A game starts with every ball in hand, so `LAID_OUT_PER_PLAYER` balls each are laid, one by one, in a slot, a
    gutter or the play area (drawn from the seed), a diameter and more from every ball laid before."""
    profile = v.profile
    assert isinstance(profile, StarClusterProfile)
    rng = random.Random(f"{v.game}/{v.seed}/laid out")
    r = v.ball_mm / 2

    def inside(rect: Rect) -> tuple[float, float]:
        return rng.uniform(rect.x_min + r, max(rect.x_min + r, rect.x_max - r)), \
            rng.uniform(rect.y_min + r, max(rect.y_min + r, rect.y_max - r))

    slots = [((rect.x_min + rect.x_max) / 2, (rect.y_min + rect.y_max) / 2) for _, rect in profile.places]
    balls: list[BallPose] = []
    for k in range(LAID_OUT_PER_PLAYER * len(v.players)):
        while True:
            kind = rng.random()
            x, y = rng.choice(slots) if kind < 0.5 else inside(rng.choice(profile.gutter_areas)) if kind < 0.75 \
                else inside(profile.play_area)
            if all(math.dist((x, y), (b.x, b.y)) >= 1.05 * v.ball_mm for b in balls):
                break
        balls.append(BallPose(k, v.players[k % len(v.players)], x, y, r))
    return SimFrame(0, 0.0, tuple(balls))


RECIPE = VariantRecipe(profile=_profile, player_count=lambda rng: 2, rules=_rules, layout=_layout, play=_play,
                       laid_out=_laid_out)
