"""`referee calibrate`'s colour groups on randomised table variants, every player's balls on the table (issue 15).

For each variant (simulation.variants; seeds 1-32 by default, both games) a
frame with every player's balls at rest (`simulation.variants.laid_out`:
Piratenbillard's first frame, every ball in its starting row; three balls a
player laid in Star Cluster's slots, gutters and play area) is rendered
(moderate realism, a still camera), calibrated from its markers, and its ball
colours grouped as `referee calibrate` groups them. A person picks, for each
player, the group nearest the colour their balls were drawn in; the variant
counts as found when those picks are distinct and each holds balls of that
player (a group's ball within a radius of the truth's). It prints per variant
the groups, the picks' distance from the drawn colours (ΔE, CIE76) and how many
groups hold no ball at all; `--without-start` leaves the starting rows out
(`GameVision.start_places`), as before they were read.

Run: .venv/bin/python benchmarks/calibrate_colours.py [--games ...] [--seeds 1 2 ...] [--without-start]
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
from simulation.render import FrameTruth
from simulation.variants import TableVariant, laid_out, make_variant_renderer, variant
from vision.detect.colour_model import ColourCluster, find_ball_colours
from vision.games import game_vision
from vision.mapping import BoardMapper


def calibrated(v: TableVariant, realism: Realism | None = None, with_start: bool = True
               ) -> tuple[list[ColourCluster], dict[str, int], FrameTruth, np.ndarray, BoardMapper]:
    """The groups `referee calibrate` lists on the variant's laid-out frame (a still camera unless `realism` says
    otherwise), each player's pick among them (the group nearest the colour their balls were drawn in, as a person
    picks by eye), the frame's truth, the frame and its mapper."""
    renderer = make_variant_renderer(v, realism or replace(Realism.moderate(), shake_deg=0.0), 30.0)
    image, truth = renderer.render(laid_out(v))
    mapper = BoardMapper(calibrate_markers(image, v.profile), v.profile)
    start = game_vision(v.game).start_places(v.profile) if with_start else None
    clusters = find_ball_colours(image, mapper, start=start)
    picks = {player: min(range(len(clusters)), key=lambda k: delta_e(clusters[k].lab, v.colours[player].lab))
             for player in v.players} if clusters else {}
    return clusters, picks, truth, image, mapper


def groups(game: str, seed: int, with_start: bool) -> tuple[bool, int, int, list[float]]:
    """Found or not, the groups listed, those holding no ball, and each player's pick's ΔE from their drawn colour."""
    v = variant(game, seed)
    clusters, picks, truth, _, _ = calibrated(v, with_start=with_start)
    shown = [b for b in truth.balls if b.visible]
    owners = [[next((b.owner for b in shown if math.hypot(b.u - u, b.v - vv) < b.r_px), None) for u, vv, _ in c.balls]
              for c in clusters]
    distances = [delta_e(clusters[k].lab, v.colours[player].lab) for player, k in picks.items()]
    found = len(picks) == len(v.players) and len(set(picks.values())) == len(picks) \
        and all(player in owners[k] for player, k in picks.items())
    return found, len(clusters), sum(all(o is None for o in each) for each in owners), distances


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", nargs="+", default=["piratenbillard", "starcluster"])
    p.add_argument("--seeds", type=int, nargs="+", default=list(range(1, 33)))
    p.add_argument("--without-start", action="store_true", help="leave the starting rows out, as before")
    args = p.parse_args()
    for game in args.games:
        found_all, distances_all = 0, []
        for seed in args.seeds:
            found, count, empty, distances = groups(game, seed, not args.without_start)
            found_all += found
            distances_all += distances
            print(f"{game}_v{seed}: {'found' if found else 'NOT found'}, {count} groups ({empty} with no ball), "
                  f"picks' ΔE from the drawn colours {', '.join(f'{d:.1f}' for d in distances) or '-'}", flush=True)
        print(f"{game}: found on {found_all} of {len(args.seeds)} variants; picks' ΔE median "
              f"{np.median(distances_all) if distances_all else float('nan'):.1f}, max "
              f"{max(distances_all) if distances_all else float('nan'):.1f}")


if __name__ == "__main__":
    main()
