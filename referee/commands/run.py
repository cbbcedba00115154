"""`referee run`: referee a video, a camera or a stream live; write the event log and the result."""

from __future__ import annotations

import argparse
import signal
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from rules.colours import BallColour, parse_colour
from rules.errors import InputError
from rules.games import GAMES

if TYPE_CHECKING:
    from referee.session import RefereeSession, RunSpec, RunSummary


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "run",
        help="referee a video file, camera or stream and score it live",
        description=(
            "Watch a game: find and track every ball, call shots and settles, and feed them to the rules "
            "engine as they happen. Writes DIR/events.jsonl (the observations and umpire inputs: a valid "
            "event log), DIR/decisions.jsonl (the engine's calls and pipeline warnings) and DIR/result.json "
            "(the same as `referee replay DIR/events.jsonl`). See docs/pipeline.md. "
            "A run folder is a match record and is never written over: an --out that holds a run is refused "
            "unless --resume (continue it) or --fresh (move it aside, start anew). Ctrl-C or SIGTERM stops the "
            "run cleanly: result.json is written, marked \"stopped\", and the run can be resumed (exit 130 / 143)."
        ),
    )
    add_match_options(p)
    p.add_argument("--live", action="store_true", help="play a video file through the live path at its own rate")
    p.add_argument("--annotate", action="store_true",
                   help="after the run, write DIR/annotated.mp4: the video with the calls drawn on (docs/review.md)")
    p.set_defaults(handler=run)


def add_match_options(p: argparse.ArgumentParser) -> None:
    """The options `referee run` and `referee serve` share: what to referee, how, and the run folder."""
    p.add_argument("source", metavar="SOURCE", nargs="?",
                   help="a video file, a camera index (0), or an rtsp:// / http:// URL (with --resume: only when "
                        "the video moved or the camera's address changed)")
    p.add_argument("--game", choices=sorted(GAMES), help="the game (required, except with --resume)")
    p.add_argument("--profile", help="table profile JSON (default: the shipped profile of the game)")
    p.add_argument("--calibration", type=Path, help="calibration JSON; without it the table markers are used")
    p.add_argument("--config", type=Path, help="game config JSON; its 'pipeline' object sets the pipeline "
                                               "(docs/config.md; default: the 'config' of a truth.json --session, "
                                               "else the rules' defaults)")
    p.add_argument("--session", type=Path,
                   help="umpire inputs (game start, rounds, choices): JSON lines, or a truth.json")
    p.add_argument("--players", help="comma-separated player ids when there is no --session (default: red,blue); "
                                     "an id that names a ball colour (red, blue, yellow, green, orange, purple, "
                                     "pink) needs no --colour")
    p.add_argument("--colour", action="append", metavar="PLAYER=COLOUR",
                   help="a player's ball colour, over the session's, the calibration's and the profile's; repeat "
                        "for each player: sRGB '#rrggbb' or CIE Lab 'lab(L a b)', e.g. --colour alice=#7b3fa0 "
                        "--colour bob='lab(78 -3 75)' (docs/formats.md, 'Ball colours')")
    p.add_argument("--detector", help="ball detector backend (default: color)")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder for the run's files")
    p.add_argument("--quiet", action="store_true", help="no progress bar, score line or warnings")
    p.add_argument("--no-pose", action="store_true",
                   help="Star Cluster Ball: no pose model; Play Line fouls by the body are then not watched")
    p.add_argument("--pose-model", type=Path, metavar="ONNX",
                   help="pose model (default: models/build/yolo11n-pose-int8.onnx, built by `make models`)")
    start = p.add_mutually_exclusive_group()
    start.add_argument("--resume", action="store_true",
                       help="continue the run in DIR (killed or stopped) with the settings it was started with: a "
                            "video is refereed again from its start, checked against the record, and continued "
                            "from its last recorded frame; a live feed goes on from now")
    start.add_argument("--fresh", action="store_true",
                       help="DIR holds a run: move it aside (DIR.replaced-<time>) and start a new run in DIR")


SETTINGS = ("game", "profile", "calibration", "config", "session", "players", "colour", "detector", "pose_model")
EXIT_ON_STOP = {"interrupted": 130, "terminated": 143}  # 128 + the signal's number, as shells report it


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from referee.session import RefereeSession, RefereeState
    from vision.video_io import Frame

    spec = run_spec(args, args.live, args.annotate)

    def say(t: float, message: str) -> None:
        if not args.quiet:
            print(f"referee: warning: {message}", file=sys.stderr)

    with RefereeSession.open(spec, say=say, progress=not args.quiet) as session, stop_on_signals(session):
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
    return report_end(summary, session, args, "run")


def report_end(summary: RunSummary, session: RefereeSession, args: argparse.Namespace, command: str) -> int:
    """Say how the run ended (stopped: how to go on with `referee COMMAND --resume`) and what it wrote; the
    exit status (0: finished; stopped by a signal: 128 + its number)."""
    stopped = summary.stopped
    if stopped is not None:
        what = "nothing new was recorded (stopped before the run got past its record)" if not summary.caught_up \
            else f"wrote {session.writer.result_path}, marked stopped"
        print(f"referee: {stopped.message or stopped.reason.value} at {summary.last_t:.1f}s; {what}; continue with "
              f"`referee {command} --resume --out {args.out}`", file=sys.stderr)
    if not args.quiet:
        print(f"{score_line(summary.state)}  ({summary.frames} frames, {summary.last_t:.1f}s, "
              f"{summary.warnings} warnings)")
        if summary.caught_up:
            print(f"wrote {session.writer.events_path}, {session.writer.decisions_path} and "
                  f"{session.writer.result_path}")
        if session.annotated is not None:
            written = session.annotated
            print(f"wrote {written.path} ({written.frames} frames, {written.frames_per_s:.1f} frames/s)")
    return 0 if stopped is None else EXIT_ON_STOP.get(stopped.reason.value, 2)


def run_spec(args: argparse.Namespace, live: bool = False, annotate: bool = False, paced: bool = False) -> RunSpec:
    """The RunSpec the options of `add_match_options` say; `live` and `annotate`: those flags, when given
    (--resume takes every setting from the run's manifest, so it refuses them); `paced`: a video file is played
    at its own rate."""
    from referee.session import RunSpec

    if args.resume:
        flags = {"live": live, "annotate": annotate, "no_pose": args.no_pose}
        given = [name for name in SETTINGS if getattr(args, name) is not None] + \
                [name for name, on in flags.items() if on]
        if given:
            options = ", ".join("--" + name.replace("_", "-") for name in given)
            raise InputError(f"--resume continues the run with the settings it was started with "
                             f"({args.out}/manifest.json); leave out {options}")
        spec = RunSpec(args.source or "", "", args.out, start="resume")
    else:
        if args.source is None:
            raise InputError("SOURCE is missing: give a video file, a camera index or a stream URL "
                             "(or --resume to continue the run in --out)")
        if args.game is None:
            raise InputError("--game is required: starcluster or piratenbillard")
        players = tuple(p.strip() for p in args.players.split(",")) if args.players else None
        if players is not None and not all(players):
            raise InputError(f"--players {args.players!r} has an empty player; give ids separated by commas, "
                             "e.g. red,blue")
        spec = RunSpec(args.source, args.game, args.out, profile=args.profile, calibration=args.calibration,
                       config=args.config, session=args.session, players=players, colours=parse_colours(args.colour),
                       detector=args.detector or "color",
                       live=live, paced=paced and not live and RunSpec(args.source, "", args.out).source_kind == "file",
                       pose=not args.no_pose, pose_model=args.pose_model, annotate=annotate,
                       start="fresh" if args.fresh else "new")
    return spec


def parse_colours(given: list[str] | None) -> tuple[tuple[str, BallColour], ...]:
    """The --colour PLAYER=COLOUR options, by player, in the order given."""
    colours: dict[str, BallColour] = {}
    for item in given or ():
        player, sep, text = item.partition("=")
        player = player.strip()
        if not sep or not player:
            raise InputError(f"--colour {item!r} is not PLAYER=COLOUR; e.g. --colour alice=#7b3fa0")
        if player in colours:
            raise InputError(f"--colour gives {player!r} twice; give each player's colour once")
        colours[player] = parse_colour(text, f"--colour {player}")
    return tuple(colours.items())


@contextmanager
def stop_on_signals(session: Any) -> Iterator[None]:
    """Ctrl-C (SIGINT) and SIGTERM stop the run at the next frame and finish its record; a second signal of
    either kind stops at once (Python's default: KeyboardInterrupt, or termination)."""
    from referee.session import StopReason

    reasons = {signal.SIGINT: StopReason.INTERRUPTED, signal.SIGTERM: StopReason.TERMINATED}
    previous = {number: signal.getsignal(number) for number in reasons}

    def handle(number: int, frame: Any) -> None:
        for other in reasons:
            signal.signal(other, signal.SIG_DFL if other == signal.SIGTERM else signal.default_int_handler)
        session.stop(reasons[signal.Signals(number)], f"stopped by {signal.Signals(number).name}")

    for number in reasons:
        signal.signal(number, handle)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def score_line(state: Any) -> str:
    standings = state.standings
    totals = standings.games[-1].totals if standings.games else {}
    scores = "  ".join(f"{p} {totals.get(p, 0)}" for p in standings.players)
    return f"{scores}  | {standings.status}" if standings.status else scores
