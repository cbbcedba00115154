"""The live video's pictures: the newest refereed frame with the review video's table lines (slots or spaces, the
Play Line) and the balls as tracked (a circle in the player's colour, the track's number), scaled down, with the
score line and the last call in the review overlay's lettering, as a JPEG. The hub draws them off the frame
loop, and only while someone watches."""

from __future__ import annotations

import cv2
import numpy as np

from calibration.calibrate import Calibration
from calibration.preview import draw_table
from calibration.profile import TableProfile
from referee.commands.run import score_line
from referee.session import RefereeState
from rules.events import PlayerSpec
from review.overlay import GREY, WHITE, put_text
from vision.detect.colour_model import NOMINAL_BGR
from vision.pipeline import TrackedFrame

from .state import last_call, player_bgr

WIDTH = 640  # px: the video's width at most
JPEG_QUALITY = 80


def annotated_jpeg(image: np.ndarray, state: RefereeState | None, tracked: TrackedFrame | None = None,
                   calibration: Calibration | None = None, profile: TableProfile | None = None,
                   width: int = WIDTH, players: tuple[PlayerSpec, ...] = ()) -> bytes:
    """`image` (BGR) at most `width` px wide: the table and the tracked balls drawn on it (once the table is
    found; the table lines only where the camera needs no undistortion, as the review video draws them on
    undistorted frames; the balls in `players`' ball colours), the score line along its top and the last call
    along its bottom."""
    picture = image.copy()
    if calibration is not None and profile is not None and calibration.intrinsics is None:
        draw_table(picture, profile, calibration, markers=False)
    if tracked is not None:
        _draw_balls(picture, tracked, player_bgr(players))
    height, full = picture.shape[:2]
    scale = min(1.0, width / full)
    if scale < 1.0:
        picture = cv2.resize(picture, (round(full * scale), round(height * scale)), interpolation=cv2.INTER_AREA)
    if state is not None and state.standings.players:
        size = 0.45 * picture.shape[1] / WIDTH
        put_text(picture, score_line(state), (8, round(22 * size / 0.45)), size, WHITE, outline=True)
        last = last_call(state.last_decisions)
        if last is not None:
            put_text(picture, last.summary, (8, picture.shape[0] - 10), size, WHITE, outline=True)
    ok, data = cv2.imencode(".jpg", picture, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:
        raise ValueError("the frame could not be encoded as JPEG")
    return data.tobytes()


def _draw_balls(picture: np.ndarray, tracked: TrackedFrame, colours: dict[str, tuple[int, int, int]]) -> None:
    """Each detection as a circle in its player's colour (`colours`, BGR); each confirmed track's number above
    its ball."""
    thickness = max(2, picture.shape[1] // 400)
    for colour, u, v, r, *_ in tracked.detections:
        bgr = colours.get(colour, NOMINAL_BGR.get(colour, GREY))
        cv2.circle(picture, (round(u), round(v)), round(r) + thickness + 1, bgr, thickness, cv2.LINE_AA)
    size = 0.8 * picture.shape[1] / 1280
    for track in tracked.tracks:
        number, at_u, at_v = track[0], track[4], track[5]
        if at_u is not None and at_v is not None:
            put_text(picture, f"#{number}", (round(at_u) - 10, round(at_v) - 14), size, WHITE, outline=True)
