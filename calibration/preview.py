"""Draw the profile over a camera frame so a person sees at a glance that the fit is right."""

from __future__ import annotations

import cv2
import numpy as np

from calibration.calibrate import Calibration
from calibration.profile import PiratenbillardProfile, Rect, StarClusterProfile, TableProfile

OUTLINE = (255, 255, 0)
SLOT = (0, 255, 255)
PLAY_LINE = (0, 0, 255)
GUTTER = (255, 0, 255)
SPACE = (0, 255, 0)
MARKER = (255, 128, 0)


def _poly(img: np.ndarray, cal: Calibration, points, colour, thickness: int = 2) -> None:
    pts = cal.board_to_image(np.array(points, dtype=float))
    cv2.polylines(img, [np.round(pts).astype(np.int32)], True, colour, thickness, cv2.LINE_AA)


def _rect(img: np.ndarray, cal: Calibration, rect: Rect, colour, thickness: int = 2) -> None:
    _poly(img, cal, rect.corners, colour, thickness)


def draw_overlay(frame: np.ndarray, profile: TableProfile, cal: Calibration) -> np.ndarray:
    """A copy of the (undistorted) frame with the table, slots/spaces, Play Line and markers drawn on."""
    img = cal.intrinsics.undistort_image(frame) if cal.intrinsics is not None else frame.copy()
    draw_table(img, profile, cal)
    text = f"{profile.name}: rms {cal.rms_mm:.2f} mm, max {cal.max_mm:.2f} mm ({cal.method})"
    cv2.putText(img, text, (20, 40), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 0, 0), 4, cv2.LINE_AA)
    cv2.putText(img, text, (20, 40), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (255, 255, 255), 2, cv2.LINE_AA)
    return img


def draw_table(img: np.ndarray, profile: TableProfile, cal: Calibration, markers: bool = True) -> None:
    """Draw the table, slots/spaces and Play Line (and the markers) onto an undistorted image, in place.

    Shared by the calibration preview and the annotated review video (`review.overlay`).
    """
    _rect(img, cal, profile.table, OUTLINE, 3)
    if markers:
        for marker in profile.markers.markers:
            _poly(img, cal, marker.corners, MARKER, 2)
    if isinstance(profile, StarClusterProfile):
        _rect(img, cal, profile.play_area, OUTLINE)
        _rect(img, cal, profile.board, OUTLINE)
        for gutter in profile.gutters:
            _rect(img, cal, gutter.rect, GUTTER)
        for pos in profile.positions:
            for i in range(len(pos.slots)):
                _rect(img, cal, pos.slot_rect(i), SLOT)
        a, b = cal.board_to_image(np.array(profile.play_line))
        cv2.line(img, tuple(np.round(a).astype(int)), tuple(np.round(b).astype(int)), PLAY_LINE, 3, cv2.LINE_AA)
    else:
        _draw_spaces(img, profile, cal)


def _draw_spaces(img: np.ndarray, p: PiratenbillardProfile, cal: Calibration) -> None:
    _rect(img, cal, p.grid, OUTLINE)
    half = p.space_size_mm / 2
    for row, col in p.spaces():
        x, y = p.space_center(row, col)
        _rect(img, cal, Rect(x - half, y - half, x + half, y + half), SPACE, 1)
