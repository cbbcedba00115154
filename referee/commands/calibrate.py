"""`referee calibrate`: find the table in a video frame or image, write the calibration and a preview."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from rules.errors import InputError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "calibrate",
        help="find the table in a video or image and write a calibration file",
        description=(
            "Map camera pixels to the table: automatically from the profile's ArUco markers, "
            "or from 4+ known points (--manual). Writes the calibration JSON and a preview PNG "
            "with the profile drawn over the frame."
        ),
    )
    p.add_argument("source", metavar="VIDEO|IMAGE", help="a video file or a still image of the table")
    p.add_argument(
        "--profile", required=True,
        help="table profile JSON, or 'starcluster' / 'piratenbillard' for the shipped defaults",
    )
    when = p.add_mutually_exclusive_group()
    when.add_argument("--frame", type=int, help="video frame index to calibrate on (default 0)")
    when.add_argument("--at", type=float, metavar="SECONDS", help="video time to calibrate on")
    p.add_argument("--out", help="calibration JSON to write (default: SOURCE.calibration.json)")
    p.add_argument("--preview", help="preview PNG to write (default: SOURCE.calibration.png)")
    p.add_argument("--intrinsics", help="camera matrix and distortion JSON (from cv2.calibrateCamera)")
    p.add_argument(
        "--manual", action="store_true",
        help="use known points instead of markers: --points, --points-file, or clicks on a window",
    )
    p.add_argument("--points", help='manual pairs "u,v=x,y;..." (image pixels = board mm)')
    p.add_argument("--points-file", help='manual pairs as JSON {"points": [{"image": [u, v], "board": [x, y]}]}')
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import cv2

    from calibration.calibrate import Calibration, calibrate_markers, calibrate_points, save_calibration, with_source
    from calibration.distortion import load_intrinsics
    from calibration.manual import read_frame
    from calibration.preview import draw_overlay
    from calibration.profile import load_profile

    profile = load_profile(args.profile)
    intrinsics = load_intrinsics(args.intrinsics) if args.intrinsics else None
    if (args.points or args.points_file) and not args.manual:
        raise InputError("--points and --points-file need --manual; add --manual or drop the points")
    frame, frame_index, time_s = read_frame(args.source, args.frame, args.at)
    size = (frame.shape[1], frame.shape[0])
    if args.manual:
        image_pts, board_pts = manual_points(args, frame, profile)
        cal: Calibration = calibrate_points(image_pts, board_pts, profile, size, intrinsics)
    else:
        cal = calibrate_markers(frame, profile, intrinsics)
    cal = with_source(cal, args.source, frame_index, time_s)
    out = Path(args.out or f"{args.source}.calibration.json")
    preview = Path(args.preview or f"{args.source}.calibration.png")
    save_calibration(cal, out)
    if not cv2.imwrite(str(preview), draw_overlay(frame, profile, cal)):
        raise InputError(f"cannot write preview {preview}; check the folder exists and the name ends in .png")
    how = f"markers {list(cal.markers_used)}" if cal.method == "aruco" else f"{cal.points_used} manual points"
    print(
        f"calibrated {args.source} on {profile.name} from {how}: reprojection error "
        f"rms {cal.rms_mm:.2f} mm, max {cal.max_mm:.2f} mm -> {out}, preview {preview}"
    )
    return 0


def manual_points(args: argparse.Namespace, frame: Any, profile: Any) -> tuple[Any, Any]:
    """The point pairs of --manual: from --points, --points-file, or clicks on a window where there is a display."""
    from calibration.manual import click_corners, parse_points, read_points_file

    if args.points:
        return parse_points(args.points)
    if args.points_file:
        return read_points_file(args.points_file)
    if not os.environ.get("DISPLAY"):
        raise InputError(
            "--manual without a display: give the points with --points \"u,v=x,y;...\" or --points-file FILE"
        )
    return click_corners(frame, profile)
