"""`referee highlights`: a short annotated clip per notable moment of a run, a reel and an index."""

from __future__ import annotations

import argparse
from pathlib import Path

from record.run_folder import HIGHLIGHTS_DIR, HIGHLIGHTS_INDEX_FILE
from referee.commands.annotate import add_review_arguments
from review.settings import ClipSettings
from rules.errors import InputError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "highlights",
        help="cut annotated clips of a run's notable moments, and a reel",
        description=(
            "Cut one annotated clip per notable moment of a `referee run` (every foul, Grand Slam, chain of 3 or "
            "more, ball knocked into a slot, capture and secured ball, and the last shot of each round), from "
            "--lead seconds before the shot to --tail seconds after the call; overlapping moments become one "
            "clip. Writes DIR/NN_KIND.mp4, DIR/reel.mp4 (the clips joined, each after a title card) and "
            f"DIR/{HIGHLIGHTS_INDEX_FILE}. Cuts are frame-accurate. See docs/review.md."
        ),
    )
    add_review_arguments(parser)
    defaults = ClipSettings()
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help=f"folder for the clips (default: RUN_DIR/{HIGHLIGHTS_DIR})")
    parser.add_argument("--lead", type=float, default=defaults.lead_s, metavar="S",
                        help=f"seconds shown before the shot begins (default: {defaults.lead_s:g})")
    parser.add_argument("--tail", type=float, default=defaults.tail_s, metavar="S",
                        help=f"seconds shown after the call (default: {defaults.tail_s:g})")
    parser.add_argument("--card", type=float, default=defaults.card_s, metavar="S",
                        help=f"seconds of title card before each clip in the reel, 0 for none "
                             f"(default: {defaults.card_s:g})")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from review.annotate import open_review
    from review.highlights import write_highlights

    for name in ("lead", "tail", "card"):
        if getattr(args, name) < 0:
            raise InputError(f"--{name} is {getattr(args, name):g}; give seconds, 0 or more")
    review = open_review(args.run_dir, args.source, args.calibration, args.profile)
    settings = ClipSettings(args.lead, args.tail, args.card)
    done = write_highlights(review, args.out or args.run_dir / HIGHLIGHTS_DIR, settings, progress=not args.quiet)
    if not args.quiet:
        for clip in done.clips:
            print(f"{clip.file}: {clip.first_t:.2f}-{clip.last_t:.2f} s, {', '.join(clip.plan.kinds)}: "
                  f"{' / '.join(m.headline for m in clip.plan.moments)}")
        reel = f", {done.reel.path.name} ({done.reel.frames} frames)" if done.reel is not None else ""
        print(f"wrote {len(done.clips)} clip(s){reel} and {done.index}"
              if done.clips else f"no notable moments in {args.run_dir}; wrote {done.index}")
    return 0
