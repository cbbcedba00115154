"""Play Line calls on reach composites: pixels and keypoints together, each alone (issue 16).

Renders `--clips` composites (`simulation/line_reach.py`: real photographs of people on rendered tables, drawn arms
with bare or gloved, open or closed hands held 40-80 mm above the table, and the hard negatives: a hand hovering
10-20 mm short, an arm's shadow over the line, a ball rolling back over it, a hand lifting balls between shots, an
umpire's arm, a player standing clear), referees each as `referee run` would (`simulation/line_reach_eval.py`) and
prints recall, false calls, the body part named, and how soon after the crossing began the call was decided.

Run:  .venv/bin/python benchmarks/play_line_pixels.py [--clips 220] [--seed 1000] [--modes fused keypoints pixels]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simulation.line_reach import reach_clips  # noqa: E402
from simulation.line_reach_eval import ReachOutcome, figures, referee_clip  # noqa: E402
from vision.config import DEFAULT_POSE_MODEL, LineStripSettings, PoseConfig  # noqa: E402
from vision.pose import PoseEstimator  # noqa: E402


def _row(label: str, outcomes: list[ReachOutcome]) -> str:
    f = figures(outcomes)
    latency = f"{f.latency_ms_median:.0f} / {f.latency_ms_max:.0f}" if f.latency_ms_median is not None else "-"
    return (f"| {label} | {f.fouls} | {f.recall:.3f} | {f.clean} | {f.false_calls:.3f} | {f.part_right:.3f} "
            f"| {f.kind_right:.3f} | {latency} | {f.within_200_ms:.3f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clips", type=int, default=220)
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--modes", nargs="+", default=["fused", "keypoints", "pixels"],
                        choices=["fused", "keypoints", "pixels"])
    parser.add_argument("--json", type=Path, help="write every clip's outcome here")
    parser.add_argument("--model", type=Path, default=DEFAULT_POSE_MODEL,
                        help=f"the pose model (default the referee's, {DEFAULT_POSE_MODEL.name})")
    args = parser.parse_args()
    estimator = PoseEstimator(args.model, PoseConfig().pose_threads, input_px=PoseConfig().pose_input_px)
    clips = reach_clips(args.clips, args.seed)
    dump: dict[str, list[dict]] = {}
    for mode in args.modes:
        start = time.perf_counter()
        outcomes = []
        for clip in clips:
            outcomes.append(referee_clip(clip, (lambda image: []) if mode == "pixels" else estimator,
                                         None if mode == "keypoints" else LineStripSettings()))
        seconds = time.perf_counter() - start
        print(f"\n## {mode}: {len(clips)} clips (seed {args.seed}) in {seconds:.0f} s\n")
        print("| set | fouls | recall | clean | false calls | part right | part kind right | latency ms median / max "
              "| within 200 ms |")
        print("|---|---|---|---|---|---|---|---|---|")
        print(_row("all", outcomes))
        groups: dict[str, list[ReachOutcome]] = defaultdict(list)
        for o in outcomes:
            groups[f"kind {o.truth.kind}"].append(o)
            groups[f"camera {o.truth.preset}"].append(o)
            if o.truth.hand is not None and o.truth.foul:
                groups[f"hand {' '.join(o.truth.hand)}"].append(o)
        for label in sorted(groups):
            print(_row(label, groups[label]))
        wrong = [o for o in outcomes if not o.right]
        print(f"\nwrong ({len(wrong)}):", ", ".join(f"{o.truth.name} ({o.called or 'no call'})" for o in wrong))
        dump[mode] = [{"name": o.truth.name, "kind": o.truth.kind, "foul": o.truth.foul, "part": o.truth.part,
                       "peak_beyond_mm": round(o.truth.peak_beyond_mm, 1), "called": o.called,
                       "latency_s": o.latency_s, "judges": list(o.judges)} for o in outcomes]
    if args.json:
        args.json.write_text(json.dumps(dump, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
