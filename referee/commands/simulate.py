"""`referee simulate`: play a synthetic match and render it as camera video with exact truth."""

from __future__ import annotations

import argparse
import json
import time
from importlib import resources
from pathlib import Path
from typing import Any

from calibration.profile import DEFAULT_PROFILES, load_profile
from rules.errors import InputError
from simulation.camera import PRESETS, make_camera
from simulation.realism import Realism
from simulation.render import render_clip
from simulation.trajectory import Match
from simulation.truth import build_truth, write_truth


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="render a synthetic match video with its ground truth",
        description=(
            "Simulate a match (physics, simple players, the real rules engine) and render it as "
            "camera video. Writes DIR/video.mp4 (H.264) and DIR/truth.json (per-frame ball positions "
            "in board mm and image px, person keypoints, the event log and the expected result). "
            "The same seed and options give the same truth.json byte for byte."
        ),
    )
    parser.add_argument("--game", required=True, choices=sorted(DEFAULT_PROFILES), help="which game to play")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR",
                        help="folder for video.mp4 and truth.json")
    parser.add_argument("--scenario", default="full_game", help="full_game (default) or a rules scenario")
    parser.add_argument("--duration", type=float, metavar="S", help="Piratenbillard: start no new shot after S seconds; Star Cluster Ball: round length")
    parser.add_argument("--camera", default="behind_play_line", choices=PRESETS, help="camera pose preset")
    parser.add_argument("--profile", metavar="FILE", help="table profile JSON (default: the game's default)")
    parser.add_argument("--width", type=int, default=1280, help="frame width in px (default 1280)")
    parser.add_argument("--height", type=int, default=720, help="frame height in px (default 720)")
    parser.add_argument("--fps", type=float, default=30.0, help="frames per second (default 30)")
    parser.add_argument("--players", type=int, help="Piratenbillard: 2, 3 or 4 players")
    parser.add_argument("--crf", type=int, default=28, help="H.264 quality, 0..51 (default 28)")
    parser.add_argument("--clean", action="store_true", help="turn the realism effects off (no noise, shake, ...)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(handler=run)


def simulate_match(game: str, profile: Any, seed: int, scenario: str, fps: float,
                   duration: float | None, players: int | None) -> Match:
    """Dispatch to the game's simulator; bad names and options raise InputError."""
    if game == "piratenbillard":
        from simulation.piratenbillard import PiratenbillardOptions, simulate_piratenbillard

        return simulate_piratenbillard(profile, seed, scenario,
                                       PiratenbillardOptions(players=players, fps=fps, duration_s=duration))
    if players is not None:
        raise InputError("--players applies to Piratenbillard only; Star Cluster Ball has two players")
    try:
        from simulation import starcluster
    except ImportError:
        raise InputError("the Star Cluster Ball simulation is not installed yet (simulation/starcluster.py); "
                         "use --game piratenbillard") from None
    known = tuple(starcluster.STARCLUSTER_SCENARIOS)
    if scenario not in known:
        raise InputError(f"unknown Star Cluster Ball scenario {scenario!r}; use one of {', '.join(known)}")
    wanted: dict[str, Any] = {"fps": fps}
    if duration is not None:  # a Star Cluster Ball game runs on its round clock: shorten the rounds
        wanted["round_seconds"] = duration
    options = starcluster.StarClusterSimOptions(**wanted)
    return starcluster.simulate_starcluster(profile, seed, scenario, options)


def profile_json(game: str, path: str | None) -> dict[str, Any]:
    if path is None:
        return json.loads(resources.files("calibration.profiles").joinpath(DEFAULT_PROFILES[game]).read_text())
    return json.loads(Path(path).read_text(encoding="utf-8"))


def simulate_to(out: Path, game: str, seed: int, scenario: str = "full_game", camera: str = "behind_play_line",
                width: int = 1280, height: int = 720, fps: float = 30.0, duration: float | None = None,
                players: int | None = None, realism: Realism | None = None, profile_path: str | None = None,
                progress: bool = True) -> tuple[dict[str, Any], float]:
    """Simulate, render and write video.mp4 + truth.json; return the truth and the render speed (frames/s)."""
    if fps <= 0 or fps > 240:
        raise InputError(f"--fps must be in (0, 240], got {fps}")
    if duration is not None and duration <= 0:
        raise InputError(f"--duration must be > 0 seconds, got {duration}")
    profile = load_profile(profile_path or game)
    if profile.game != game:
        raise InputError(f"profile {profile_path} is for {profile.game}, not {game}; pass a {game} profile")
    cam = make_camera(profile, camera, width, height)
    realism = realism if realism is not None else Realism.moderate()
    match = simulate_match(game, profile, seed, scenario, fps, duration, players)
    started = time.perf_counter()
    frames = render_clip(match, profile, profile_json(game, profile_path), cam, realism, out, progress)
    speed = len(frames) / max(time.perf_counter() - started, 1e-9)
    truth = build_truth(match, profile_json(game, profile_path), cam, realism, frames)
    write_truth(out / "truth.json", truth)
    return truth, speed


def run(args: argparse.Namespace) -> int:
    realism = Realism(crf=args.crf) if args.clean else Realism.moderate(crf=args.crf)
    truth, speed = simulate_to(args.out, args.game, args.seed, args.scenario, args.camera, args.width, args.height,
                               args.fps, args.duration, args.players, realism, args.profile, not args.quiet)
    print(f"wrote {args.out / 'video.mp4'} and {args.out / 'truth.json'}: {truth['frame_count']} frames, "
          f"{truth['duration_s']:.1f} s, rendered at {speed:.1f} frames/s")
    return 0
