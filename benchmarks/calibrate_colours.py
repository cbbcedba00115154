"""`referee calibrate`'s colour groups on randomised Piratenbillard variants' first frames (issue 15).

For each variant (simulation.variants; seeds 1-32 by default) the first frame
of its match, every player's balls in their full starting row, is rendered
(moderate realism, a still camera), calibrated from its markers, and its ball
colours grouped as `referee calibrate` groups them. A person picks, for each
player, the group nearest the colour their balls were drawn in; the variant
counts as found when those picks are distinct and each holds balls of that
player (a group's ball within a radius of the truth's). It prints per variant
the groups, the picks' distance from the drawn colours (ΔE, CIE76) and how many
groups hold no ball at all; `--without-start` leaves the starting rows out
(`GameVision.start_places`), as before they were read.

Run: .venv/bin/python benchmarks/calibrate_colours.py [--seeds 1 2 ...] [--without-start]
"""

from __future__ import annotations

import argparse
import math
from dataclasses import replace

import numpy as np

import common  # noqa: F401  (first: this checkout's packages, not the editable install's)
from calibration.calibrate import calibrate_markers
from rules.colours import delta_e
from simulation.realism import Realism
from simulation.variants import make_variant_renderer, simulate_variant, variant
from vision.detect.colour_model import find_ball_colours
from vision.games import game_vision
from vision.mapping import BoardMapper


def groups(seed: int, with_start: bool) -> tuple[bool, int, int, list[float]]:
    """Found or not, the groups listed, those holding no ball, and each player's pick's ΔE from their drawn colour."""
    v = variant("piratenbillard", seed)
    match = simulate_variant(v)
    renderer = make_variant_renderer(v, replace(Realism.moderate(), shake_deg=0.0), match.fps)
    first, truth = renderer.render(match.frames[0])
    mapper = BoardMapper(calibrate_markers(first, v.profile), v.profile)
    start = game_vision(v.game).start_places(v.profile) if with_start else None
    clusters = find_ball_colours(first, mapper, start=start)
    shown = [b for b in truth.balls if b.visible]
    owners = [[next((b.owner for b in shown if math.hypot(b.u - u, b.v - vv) < b.r_px), None) for u, vv, _ in c.balls]
              for c in clusters]
    picks, distances = {}, []
    for player in v.players:
        if clusters:
            near = [delta_e(c.lab, v.colours[player].lab) for c in clusters]
            picks[player] = int(np.argmin(near))
            distances.append(min(near))
    found = len(picks) == len(v.players) and len(set(picks.values())) == len(picks) \
        and all(player in owners[k] for player, k in picks.items())
    return found, len(clusters), sum(all(o is None for o in each) for each in owners), distances


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, nargs="+", default=list(range(1, 33)))
    p.add_argument("--without-start", action="store_true", help="leave the starting rows out, as before")
    args = p.parse_args()
    found_all, distances_all = 0, []
    for seed in args.seeds:
        found, count, empty, distances = groups(seed, not args.without_start)
        found_all += found
        distances_all += distances
        print(f"piratenbillard_v{seed}: {'found' if found else 'NOT found'}, {count} groups ({empty} with no ball), "
              f"picks' ΔE from the drawn colours {', '.join(f'{d:.1f}' for d in distances) or '-'}", flush=True)
    print(f"found on {found_all} of {len(args.seeds)} variants; picks' ΔE median "
          f"{np.median(distances_all) if distances_all else float('nan'):.1f}, max "
          f"{max(distances_all) if distances_all else float('nan'):.1f}")


if __name__ == "__main__":
    main()
