"""Draw the profile over a camera frame so a person sees at a glance that the fit is right."""

from __future__ import annotations

import cv2
import numpy as np

from calibration.calibrate import Calibration
from calibration.geometry import FeatureKind, Rect
from calibration.profile import TableProfile

OUTLINE = (255, 255, 0)
SLOT = (0, 255, 255)
PLAY_LINE = (0, 0, 255)
GUTTER = (255, 0, 255)
SPACE = (0, 255, 0)
MARKER = (255, 128, 0)
# colour and line width of each drawn part of a table
FEATURE_STYLE = {FeatureKind.PLAY_AREA: (OUTLINE, 2), FeatureKind.BOARD: (OUTLINE, 2), FeatureKind.GUTTER: (GUTTER, 2),
                 FeatureKind.SLOT: (SLOT, 2), FeatureKind.SPACE: (SPACE, 1)}


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
    for feature in profile.features:
        if feature.kind is FeatureKind.PLAY_LINE:
            a, b = cal.board_to_image(np.array([feature.a, feature.b]))
            cv2.line(img, tuple(np.round(a).astype(int)), tuple(np.round(b).astype(int)), PLAY_LINE, 3, cv2.LINE_AA)
        elif feature.rect is not None:
            colour, thickness = FEATURE_STYLE[feature.kind]
            _rect(img, cal, feature.rect, colour, thickness)


