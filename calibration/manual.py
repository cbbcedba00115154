"""The inputs of a calibration: one frame of a video or an image, and known points given by hand.

`referee calibrate` reads its frame with `read_frame`; a manual calibration's
image <-> board point pairs come from the command line (`parse_points`), a JSON
file (`read_points_file`), or a person clicking the table's corners on the
frame (`click_corners`, only where a display is available).
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from calibration.profile import TableProfile
from rules.errors import InputError
from rules.files import loads

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"}
CORNER_NAMES = ("near-left", "near-right", "far-right", "far-left")


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
        data = loads(Path(path).read_text(encoding="utf-8"))
        pairs = [(p["image"], p["board"]) for p in data["points"]]
        image = np.array([p[0] for p in pairs], float).reshape(-1, 2)
        board = np.array([p[1] for p in pairs], float).reshape(-1, 2)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"points file {path}: cannot read JSON ({error}); check the path") from None
    except (KeyError, TypeError, ValueError, IndexError, OverflowError):
        raise InputError(
            f'points file {path}: expected {{"points": [{{"image": [u, v], "board": [x, y]}}, ...]}}; fix the file'
        ) from None
    return image, board


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
