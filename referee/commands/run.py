"""`referee run`: referee a video, a camera or a stream live; write the event log and the result."""

from __future__ import annotations

import argparse
import json
import sys
from typing import IO
from pathlib import Path

from tqdm import tqdm

from calibration.calibrate import load_calibration, save_calibration
from calibration.profile import load_profile
from rules.errors import InputError
from rules.events import GameStart, PlayerSpec, RoundStart
from rules.games import GAMES, load_config
from rules.replay import read_log, replay
from review.annotate import annotate, open_review
from review.record import CALIBRATION_FILE
from rules.result import build_result, write_json_atomically
from vision.config import PipelineConfig, split_config
from vision.evaluate import TRACKS_FILE, FrameLog
from vision.event_log import EventLog
from vision.pipeline import Referee
from vision.pose import PoseEstimator
from vision.pose_watch import DEFAULT_POSE_MODEL, PoseWatch
from vision.shots import SessionFeed
from vision.sources import open_source

POSE_OFF = "pose is off (--no-pose): Play Line fouls by the body are not watched"
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
    p.add_argument("--config", type=Path, help="game config JSON; its 'pipeline' object sets the pipeline "
                                               "(default: the 'config' of a truth.json --session, else the rules' "
                                               "defaults)")
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
    referee.pose = pose_watch(args, referee, log)
    return referee


def pose_watch(args: argparse.Namespace, referee: Referee, log: EventLog) -> PoseWatch | None:
    """Star Cluster Ball's Play Line watch (`vision.pose_watch`); None for Piratenbillard or --no-pose (which
    the log and the result say). A missing model stops the run before any frame is read."""
    if args.game != "starcluster":
        return None
    if args.no_pose:
        log.warning(0.0, POSE_OFF)
        _say(args, POSE_OFF)
        return None
    model = args.pose_model or DEFAULT_POSE_MODEL
    if not model.exists():
        raise InputError(f"pose model {model} is missing; build it with `make models`, or pass --no-pose "
                         "(Play Line fouls by the body are then not watched)")
    return PoseWatch(PoseEstimator(model, referee.config.pose_threads), referee.profile, referee.config,
                     lambda t, message: log.warning(t, message, review=True), lambda: referee.engine.standings().to_play)


def run_configs(args: argparse.Namespace) -> tuple[dict, PipelineConfig]:
    """The rules engine's settings and the pipeline's: from --config; without it, a truth.json session's
    `config` (the game config its match was played under: ball count, rounds); else the defaults."""
    if args.config:
        return split_config(load_config(args.config))
    return (session_config(args.session) if args.session else {}), PipelineConfig()


def session_config(path: Path) -> dict:
    """The game config a session file carries: the `config` object of a truth.json; {} for JSON lines."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):  # JSON lines, or missing (SessionFeed.load names the problem)
        return {}
    config = data.get("config") if isinstance(data, dict) and "events" in data else None
    if config is not None and not isinstance(config, dict):
        raise InputError(f"session file {path}: 'config' must be an object of game settings")
    return dict(config or {})


def run(args: argparse.Namespace) -> int:
    if args.annotate and (args.source.isdigit() or "://" in args.source):
        raise InputError(f"--annotate decodes the video again after the run, so it needs a video file, not "
                         f"{args.source}; record the stream and run `referee annotate` on the recording")
    with EventLog(args.out) as log, open(args.out / TRACKS_FILE, "w", encoding="utf-8") as tracks:
        rules_config, config = run_configs(args)
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
    source_info = {"video": args.source, "events": str(log.events_path), "frames": summary.frames}
    if args.game == "starcluster":  # were Play Line fouls by the body watched?
        source_info.update({"pose": "on"} if referee.pose else {"pose": "off", "warnings": [POSE_OFF]})
    result = build_result(replayed, source_info)
    write_json_atomically(args.out / "result.json", result)
    save_calibration(referee.calibration, args.out / CALIBRATION_FILE)  # the review tools draw the table with it
    if not args.quiet:
        print(f"{score_line(summary.standings)}  ({summary.frames} frames, {summary.last_t:.1f}s, "
              f"{summary.warnings} warnings)")
        print(f"wrote {log.events_path}, {log.decisions_path} and {args.out / 'result.json'}")
    if args.annotate:
        written = annotate(open_review(args.out, args.source, profile=args.profile), args.out / "annotated.mp4",
                           progress=not args.quiet)
        if not args.quiet:
            print(f"wrote {written.path} ({written.frames} frames, {written.frames_per_s:.1f} frames/s)")
    return 0


def score_line(standings) -> str:
    totals = standings.games[-1].totals if standings.games else {}
    scores = "  ".join(f"{p} {totals.get(p, 0)}" for p in standings.players)
    return f"{scores}  | {standings.status}" if standings.status else scores


def _say(args: argparse.Namespace, message: str) -> None:
    if not args.quiet:
        print(f"referee: warning: {message}", file=sys.stderr)
