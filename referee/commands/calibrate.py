"""`referee calibrate`: find the table in a video frame or image, write the calibration and a preview."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import cv2
import numpy as np

from calibration.calibrate import (
    Calibration,
    calibrate_markers,
    calibrate_points,
    save_calibration,
    with_source,
)
from calibration.distortion import load_intrinsics
from calibration.preview import draw_overlay
from calibration.profile import TableProfile, load_profile
from rules.errors import InputError

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"}
CORNER_NAMES = ("near-left", "near-right", "far-right", "far-left")


def register(subparsers: argparse._SubParsersAction) -> None:
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


def read_frame(source: str, frame: int | None, at: float | None) -> tuple[np.ndarray, int | None, float | None]:
    """One BGR frame from an image or a video; InputError names the file if it cannot be read."""
    path = Path(source)
    if not path.is_file():
        raise InputError(f"cannot read {source}: no such file; give the path of a video or image")
    if path.suffix.lower() in IMAGE_SUFFIXES:
        if frame or at:
            raise InputError(f"{source} is a still image; drop --frame/--at")
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is None:
            raise InputError(f"cannot read image {source}: not a readable image; re-export it as PNG or JPEG")
        return image, None, None
    capture = cv2.VideoCapture(str(path))
    try:
        if not capture.isOpened():
            raise InputError(
                f"cannot open video {source}: missing codec or corrupt file; re-encode it as H.264 MP4"
            )
        if at is not None:
            capture.set(cv2.CAP_PROP_POS_MSEC, at * 1000.0)
        elif frame:
            capture.set(cv2.CAP_PROP_POS_FRAMES, frame)
        index = int(capture.get(cv2.CAP_PROP_POS_FRAMES))
        ok, image = capture.read()
        if not ok or image is None:
            count = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
            raise InputError(
                f"cannot read a frame from video {source} at "
                f"{f'{at} s' if at is not None else f'frame {frame or 0}'} (it reports {count} frames); "
                "pick an earlier --frame/--at or re-encode the file"
            )
        fps = capture.get(cv2.CAP_PROP_FPS)
        return image, index, (at if at is not None else (index / fps if fps > 0 else None))
    finally:
        capture.release()


def parse_points(text: str) -> tuple[np.ndarray, np.ndarray]:
    image, board = [], []
    for item in filter(None, (s.strip() for s in text.split(";"))):
        try:
            left, right = item.split("=")
            u, v = (float(a) for a in left.split(","))
            x, y = (float(a) for a in right.split(","))
        except ValueError:
            raise InputError(f"--points: cannot read {item!r}; write each pair as u,v=x,y (pixels=mm)") from None
        image.append((u, v))
        board.append((x, y))
    return np.array(image, float).reshape(-1, 2), np.array(board, float).reshape(-1, 2)


def read_points_file(path: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        pairs = [(p["image"], p["board"]) for p in data["points"]]
        image = np.array([p[0] for p in pairs], float).reshape(-1, 2)
        board = np.array([p[1] for p in pairs], float).reshape(-1, 2)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"points file {path}: cannot read JSON ({error}); check the path") from None
    except (KeyError, TypeError, ValueError):
        raise InputError(
            f'points file {path}: expected {{"points": [{{"image": [u, v], "board": [x, y]}}, ...]}}; fix the file'
        ) from None
    return image, board


def manual_points(args: argparse.Namespace, frame: np.ndarray, profile: TableProfile) -> tuple[np.ndarray, np.ndarray]:
    if args.points:
        return parse_points(args.points)
    if args.points_file:
        return read_points_file(args.points_file)
    if not os.environ.get("DISPLAY"):
        raise InputError(
            "--manual without a display: give the points with --points \"u,v=x,y;...\" or --points-file FILE"
        )
    return click_corners(frame, profile)


def click_corners(frame: np.ndarray, profile: TableProfile) -> tuple[np.ndarray, np.ndarray]:
    """Ask a person to click the table's four corners on the frame; Esc cancels."""
    clicks: list[tuple[float, float]] = []
    window = "referee calibrate: click the table corners (Esc cancels)"

    def on_mouse(event: int, x: int, y: int, _flags: int, _param: object) -> None:
        if event == cv2.EVENT_LBUTTONDOWN and len(clicks) < 4:
            clicks.append((float(x), float(y)))

    cv2.namedWindow(window, cv2.WINDOW_NORMAL)
    cv2.setMouseCallback(window, on_mouse)
    try:
        while len(clicks) < 4:
            shown = frame.copy()
            for u, v in clicks:
                cv2.circle(shown, (int(u), int(v)), 6, (0, 0, 255), 2)
            prompt = f"click the {CORNER_NAMES[len(clicks)]} corner of the table"
            cv2.putText(shown, prompt, (20, 40), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 255, 255), 2)
            cv2.imshow(window, shown)
            if cv2.waitKey(30) == 27:
                raise InputError("manual calibration cancelled; run again and click all four corners")
    finally:
        cv2.destroyWindow(window)
    return np.array(clicks, float), np.array(profile.table.corners, float)
