"""`referee run`: referee a video, a camera or a stream live; write the event log and the result."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rules.games import GAMES


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "run",
        help="referee a video file, camera or stream and score it live",
        description=(
            "Watch a game: find and track every ball, call shots and settles, and feed them to the rules "
            "engine as they happen. Writes DIR/events.jsonl (the observations and umpire inputs: a valid "
            "event log), DIR/decisions.jsonl (the engine's calls and pipeline warnings) and DIR/result.json "
            "(the same as `referee replay DIR/events.jsonl`). See docs/pipeline.md."
        ),
    )
    p.add_argument("source", metavar="SOURCE", help="a video file, a camera index (0), or an rtsp:// / http:// URL")
    p.add_argument("--game", required=True, choices=sorted(GAMES))
    p.add_argument("--profile", help="table profile JSON (default: the shipped profile of the game)")
    p.add_argument("--calibration", type=Path, help="calibration JSON; without it the table markers are used")
    p.add_argument("--config", type=Path, help="game config JSON; its 'pipeline' object sets the pipeline "
                                               "(docs/config.md; default: the 'config' of a truth.json --session, "
                                               "else the rules' defaults)")
    p.add_argument("--session", type=Path,
                   help="umpire inputs (game start, rounds, choices): JSON lines, or a truth.json")
    p.add_argument("--players", help="comma-separated player colours when there is no --session "
                                     "(default: red,blue)")
    p.add_argument("--detector", default="color", help="ball detector backend (default: color)")
    p.add_argument("--live", action="store_true", help="play a video file through the live path at its own rate")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder for the run's files")
    p.add_argument("--quiet", action="store_true", help="no progress bar or score line")
    p.add_argument("--annotate", action="store_true",
                   help="after the run, write DIR/annotated.mp4: the video with the calls drawn on (docs/review.md)")
    p.add_argument("--no-pose", action="store_true",
                   help="Star Cluster Ball: no pose model; Play Line fouls by the body are then not watched")
    p.add_argument("--pose-model", type=Path, metavar="ONNX",
                   help="pose model (default: models/build/yolo11n-pose.onnx, built by `make models`)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from referee.session import RefereeSession, RefereeState, RunSpec
    from vision.video_io import Frame

    players = tuple(p.strip() for p in args.players.split(",")) if args.players else None
    spec = RunSpec(args.source, args.game, args.out, profile=args.profile, calibration=args.calibration,
                   config=args.config, session=args.session, players=players, detector=args.detector,
                   live=args.live, pose=not args.no_pose, pose_model=args.pose_model, annotate=args.annotate)

    def say(t: float, message: str) -> None:
        if not args.quiet:
            print(f"referee: warning: {message}", file=sys.stderr)

    with RefereeSession.open(spec, say=say, progress=not args.quiet) as session:
        bar = tqdm(total=session.source.frame_count or None, unit="frame", desc="referee", disable=args.quiet,
                   leave=False, dynamic_ncols=True)

        def show(frame: Frame, state: RefereeState) -> None:
            bar.update()
            if frame.index % 10 == 0:
                bar.set_postfix_str(score_line(state), refresh=False)

        try:
            summary = session.run(show)
        finally:
            bar.close()
    if not args.quiet:
        print(f"{score_line(summary.state)}  ({summary.frames} frames, {summary.last_t:.1f}s, "
              f"{summary.warnings} warnings)")
        print(f"wrote {session.writer.events_path}, {session.writer.decisions_path} and {session.writer.result_path}")
        if session.annotated is not None:
            written = session.annotated
            print(f"wrote {written.path} ({written.frames} frames, {written.frames_per_s:.1f} frames/s)")
    return 0


def score_line(state: Any) -> str:
    standings = state.standings
    totals = standings.games[-1].totals if standings.games else {}
    scores = "  ".join(f"{p} {totals.get(p, 0)}" for p in standings.players)
    return f"{scores}  | {standings.status}" if standings.status else scores
