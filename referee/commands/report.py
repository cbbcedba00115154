"""`referee report`: the post-match review page of a run, one self-contained HTML file."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from record.run_folder import CALIBRATION_FILE, HIGHLIGHTS_DIR, HIGHLIGHTS_INDEX_FILE, RESULT_FILE


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report",
        help="write the review page of a run: result, score plot, every shot with a picture, calls to review",
        description=(
            "Write one HTML file that opens from disk with no server and no network: the result, the score "
            "over time, a row per shot with a thumbnail of the settled table (from the source video) and "
            "the event ids `referee correct` takes, the calls flagged for review first, and the run's "
            "metadata. With umpire corrections it shows the corrected result. Clips of `referee highlights` "
            f"(RUN_DIR/{HIGHLIGHTS_DIR}/{HIGHLIGHTS_INDEX_FILE}, or --clips DIR) are linked per shot. See docs/review.md."
        ),
    )
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the --out folder of `referee run`")
    p.add_argument("--out", type=Path, required=True, metavar="FILE", help="the HTML file to write")
    p.add_argument("--video", type=Path, metavar="FILE",
                   help=f"the source video (default: the one named in {RESULT_FILE})")
    p.add_argument("--clips", type=Path, metavar="DIR",
                   help=f"highlight clips folder with {HIGHLIGHTS_INDEX_FILE} (default: RUN_DIR/{HIGHLIGHTS_DIR})")
    p.add_argument("--calibration", type=Path, metavar="FILE",
                   help="the calibration the run used, to show its profile and error "
                        f"(default: RUN_DIR/{CALIBRATION_FILE})")
    p.add_argument("--no-thumbnails", action="store_true", help="no pictures (e.g. a camera or stream run)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from review.report import build_report

    start = time.perf_counter()
    summary = build_report(args.run_dir, args.out, video=args.video, clips_dir=args.clips,
                           calibration=args.calibration, thumbnails=not args.no_thumbnails)
    print(f"wrote {summary.path} ({summary.size_bytes / 1024:.0f} KB): {summary.shots} shots, "
          f"{summary.review_items} for review, {summary.thumbnails} thumbnails, {summary.clips_linked} clips linked "
          f"in {time.perf_counter() - start:.1f} s")
    return 0
