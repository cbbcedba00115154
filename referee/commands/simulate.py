"""`referee simulate`: play a synthetic match and render it as camera video with exact truth."""

from __future__ import annotations

import argparse
from pathlib import Path

# Only the registry's names here: `referee --help` imports this module, and the simulator (numpy, OpenCV,
# pymunk, PyAV) loads only when the command runs.
from simulation.games import CAMERA_PRESETS, GAMES


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
    parser.add_argument("--game", required=True, choices=sorted(GAMES), help="which game to play")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR",
                        help="folder for video.mp4 and truth.json")
    parser.add_argument("--scenario", default="full_game", help="full_game (default) or a rules scenario")
    parser.add_argument("--duration", type=float, metavar="S", help="Piratenbillard: start no new shot after S seconds; Star Cluster Ball: round length")
    parser.add_argument("--camera", default="behind_play_line", choices=CAMERA_PRESETS, help="camera pose preset")
    parser.add_argument("--profile", metavar="FILE", help="table profile JSON (default: the game's default)")
    parser.add_argument("--width", type=int, default=1280, help="frame width in px (default 1280)")
    parser.add_argument("--height", type=int, default=720, help="frame height in px (default 720)")
    parser.add_argument("--fps", type=float, default=30.0, help="frames per second (default 30)")
    parser.add_argument("--players", type=int, help="Piratenbillard: 2, 3 or 4 players")
    parser.add_argument("--crf", type=int, default=28, help="H.264 quality, 0..51 (default 28)")
    parser.add_argument("--clean", action="store_true", help="turn the realism effects off (no noise, shake, ...)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from simulation.realism import Realism
    from simulation.simulate import simulate_to

    realism = Realism(crf=args.crf) if args.clean else Realism.moderate(crf=args.crf)
    truth, speed = simulate_to(args.out, args.game, args.seed, args.scenario, args.camera, args.width, args.height,
                               args.fps, args.duration, args.players, realism, args.profile, not args.quiet)
    print(f"wrote {args.out / 'video.mp4'} and {args.out / 'truth.json'}: {truth['frame_count']} frames, "
          f"{truth['duration_s']:.1f} s, rendered at {speed:.1f} frames/s")
    return 0
