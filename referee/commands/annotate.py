"""`referee annotate`: a run's source video with the referee's view drawn on every frame."""

from __future__ import annotations

import argparse
from pathlib import Path

from record.run_folder import ANNOTATED_FILE, CALIBRATION_FILE
from review.settings import Style
from rules.errors import InputError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "annotate",
        help="draw a run's calls, tracks and score over its video",
        description=(
            "Re-encode the video a `referee run` watched with its view drawn on: the table (slots or spaces, "
            "the Play Line), every tracked ball with its id and path, resting balls ringed in their owner's "
            "colour and labelled with their slot or space, a scoreboard (players, round and clock, score, whose "
            "turn) and each call as a caption when it is made. H.264 in MP4, the source's frame rate and "
            "timestamps kept. See docs/review.md."
        ),
    )
    add_review_arguments(parser)
    parser.add_argument("--out", type=Path, metavar="OUT.mp4",
                        help=f"the annotated video (default: RUN_DIR/{ANNOTATED_FILE})")
    parser.add_argument("--caption-s", type=float, default=Style.caption_s, metavar="S",
                        help=f"how long each call stays on screen (default: {Style.caption_s:g})")
    parser.set_defaults(handler=run)


def add_review_arguments(parser: argparse.ArgumentParser) -> None:
    """RUN_DIR, SOURCE and the calibration options that `annotate` and `highlights` share."""
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the --out folder of referee run")
    parser.add_argument("source", type=Path, metavar="SOURCE", help="the video file the run refereed")
    parser.add_argument("--calibration", type=Path,
                        help=f"calibration JSON (default: RUN_DIR/{CALIBRATION_FILE}, else the table's markers)")
    parser.add_argument("--profile", help="table profile JSON (default: the shipped profile of the run's game)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or summary line")


def run(args: argparse.Namespace) -> int:
    from review.annotate import annotate, open_review

    if args.caption_s <= 0:
        raise InputError(f"--caption-s is {args.caption_s:g}; give seconds, more than 0")
    review = open_review(args.run_dir, args.source, args.calibration, args.profile, Style(caption_s=args.caption_s))
    written = annotate(review, args.out or args.run_dir / ANNOTATED_FILE, progress=not args.quiet)
    if not args.quiet:
        print(f"wrote {written.path}: {written.frames} frames, {written.last_t - written.first_t:.2f} s "
              f"({written.frames_per_s:.1f} frames/s)")
    return 0
