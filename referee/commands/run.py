"""`referee run`: referee a video, a camera or a stream live; write the event log and the result."""

from __future__ import annotations

import argparse
import sys
from typing import IO
from pathlib import Path

from tqdm import tqdm

from calibration.calibrate import load_calibration
from calibration.profile import load_profile
from rules.errors import InputError
from rules.events import GameStart, PlayerSpec, RoundStart
from rules.games import GAMES, load_config
from rules.replay import read_log, replay
from rules.result import build_result, write_json_atomically
from vision.config import PipelineConfig, split_config
from vision.evaluate import TRACKS_FILE, FrameLog
from vision.event_log import EventLog
from vision.pipeline import Referee
from vision.shots import SessionFeed
from vision.sources import open_source

DEFAULT_PLAYERS = {"starcluster": ("red", "blue"), "piratenbillard": ("red", "blue")}


def register(subparsers: argparse._SubParsersAction) -> None:
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
    p.add_argument("--config", type=Path, help="game config JSON; its 'pipeline' object sets the pipeline")
    p.add_argument("--session", type=Path,
                   help="umpire inputs (game start, rounds, choices): JSON lines, or a truth.json")
    p.add_argument("--players", help="comma-separated player colours when there is no --session "
                                     "(default: red,blue)")
    p.add_argument("--detector", default="color", help="ball detector backend (default: color)")
    p.add_argument("--live", action="store_true", help="play a video file through the live path at its own rate")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder for the run's files")
    p.add_argument("--quiet", action="store_true", help="no progress bar or score line")
    p.set_defaults(handler=run)


def default_session(game: str, players: str | None) -> SessionFeed:
    """Without a session file: the players by colour (seats/sides in order) and, for Star Cluster, a round."""
    ids = tuple(p.strip() for p in players.split(",")) if players else DEFAULT_PLAYERS[game]
    if game == "starcluster":
        specs = tuple(PlayerSpec(pid, side=side) for pid, side in zip(ids, ("right", "left")))
        return SessionFeed([GameStart(t=0.0, players=specs), RoundStart(t=0.0)])
    seats = {2: (0, 2), 3: (0, 1, 2), 4: (0, 1, 2, 3)}.get(len(ids))
    if seats is None:
        raise InputError(f"Piratenbillard needs 2 to 4 players, got {len(ids)} in --players")
    return SessionFeed([GameStart(t=0.0, players=tuple(PlayerSpec(pid, seat=s) for pid, s in zip(ids, seats)))])


def build_referee(args: argparse.Namespace, log: EventLog, config: PipelineConfig, rules_config: dict,
                  tracks: IO[str] | None = None) -> Referee:
    from vision.cells import read_settled  # imported here: the backends load only when a run needs them
    from vision.detect import make_detector
    from vision.mapping import BoardMapper

    profile = load_profile(args.profile or args.game)
    if profile.game != args.game:
        raise InputError(f"profile {profile.name!r} is for {profile.game}, not {args.game}")
    calibration = load_calibration(args.calibration) if args.calibration else None
    session = SessionFeed.load(args.session) if args.session else default_session(args.game, args.players)

    def detector(first_image, mapper, players, seats):
        return make_detector(args.detector, first_image, mapper, players, seats)

    referee = Referee(args.game, profile, detector, BoardMapper, read_settled, log, session, config,
                      rules_config, calibration)
    if tracks is not None:
        referee.frame_log = FrameLog(tracks, lambda points: referee.ball_centre_px(points))
    return referee


def run(args: argparse.Namespace) -> int:
    with EventLog(args.out) as log, open(args.out / TRACKS_FILE, "w", encoding="utf-8") as tracks:
        rules_config, config = split_config(load_config(args.config)) if args.config else ({}, PipelineConfig())
        source = open_source(args.source, config, live=args.live,
                             on_warning=lambda t, message: (log.warning(t, message), _say(args, message)))
        referee = build_referee(args, log, config, rules_config, tracks)
        bar = tqdm(total=source.frame_count or None, unit="frame", desc="referee", disable=args.quiet,
                   leave=False, dynamic_ncols=True)

        def show(frame, standings) -> None:
            bar.update()
            if frame.index % 10 == 0:
                bar.set_postfix_str(score_line(standings), refresh=False)

        try:
            summary = referee.run(source, show)
        finally:
            bar.close()
    replayed = replay(read_log(log.events_path), args.game, rules_config)
    result = build_result(replayed, {"video": args.source, "events": str(log.events_path),
                                     "frames": summary.frames})
    write_json_atomically(args.out / "result.json", result)
    if not args.quiet:
        print(f"{score_line(summary.standings)}  ({summary.frames} frames, {summary.last_t:.1f}s, "
              f"{summary.warnings} warnings)")
        print(f"wrote {log.events_path}, {log.decisions_path} and {args.out / 'result.json'}")
    return 0


def score_line(standings) -> str:
    totals = standings.games[-1].totals if standings.games else {}
    scores = "  ".join(f"{p} {totals.get(p, 0)}" for p in standings.players)
    return f"{scores}  | {standings.status}" if standings.status else scores


def _say(args: argparse.Namespace, message: str) -> None:
    if not args.quiet:
        print(f"referee: warning: {message}", file=sys.stderr)
