"""The live video's pictures: the newest refereed frame, scaled down, with a light overlay (the score line and
the last call) in the review overlay's lettering, as a JPEG. The hub draws them off the frame loop, and only
while someone watches."""

from __future__ import annotations

import cv2
import numpy as np

from referee.commands.run import score_line
from referee.session import RefereeState
from review.overlay import WHITE, put_text

from .state import last_call

WIDTH = 640  # px: the video's width at most
JPEG_QUALITY = 80


def annotated_jpeg(image: np.ndarray, state: RefereeState | None, width: int = WIDTH) -> bytes:
    """`image` (BGR) at most `width` px wide, the score line along its top and the last call along its bottom."""
    height, full = image.shape[:2]
    scale = min(1.0, width / full)
    picture = cv2.resize(image, (round(full * scale), round(height * scale)), interpolation=cv2.INTER_AREA) \
        if scale < 1.0 else image.copy()
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
