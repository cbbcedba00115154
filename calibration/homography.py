"""Solve and sanity-check the image -> board homography.

A bad homography silently corrupts every later call, so solving refuses
degenerate input (too few or collinear points, a mirrored or collapsed table,
a horizon across the table) with an error that says what to fix.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.aruco import DetectedMarker
from calibration.geometry import Markers, Rect, rows3
from rules.errors import InputError

MIN_MARKERS = 2


class CalibrationError(InputError):
    """The image or points do not determine a usable homography."""


@dataclass(frozen=True)
class Homography:
    """Image pixels (OpenCV convention, pixel centres at integers) -> board millimetres."""

    matrix: tuple[tuple[float, float, float], ...]

    @classmethod
    def from_array(cls, array: np.ndarray) -> Homography:
        a = np.asarray(array, dtype=float).reshape(3, 3)
        a = a / (a[2, 2] if abs(a[2, 2]) > 1e-12 else np.linalg.norm(a))
        return cls(rows3(a))

    @property
    def array(self) -> np.ndarray:
        return np.array(self.matrix, dtype=float)

    def to_board(self, points_px: np.ndarray) -> np.ndarray:
        return _apply(self.array, points_px)

    def to_image(self, points_mm: np.ndarray) -> np.ndarray:
        return _apply(np.linalg.inv(self.array), points_mm)


def _apply(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    pts = np.asarray(points, dtype=float).reshape(-1, 2)
    return cv2.perspectiveTransform(pts.reshape(-1, 1, 2), matrix).reshape(-1, 2)


@dataclass(frozen=True)
class Fit:
    """A solved homography and how well it explains its points (errors in board mm)."""

    homography: Homography
    rms_mm: float
    max_mm: float
    inliers: int
    points: int


def solve(
    image_points: np.ndarray,
    board_points: np.ndarray,
    table: Rect,
    image_size: tuple[int, int],
    ransac_px: float | None = 2.0,
) -> Fit:
    """Fit with RANSAC (or plain least squares when `ransac_px` is None).

    The fit minimises residuals in image pixels, where detection noise lives
    (a far marker's pixel spans more millimetres than a near one's, so fitting
    in board space would trust it too much); errors are reported in board mm.
    """
    img = np.asarray(image_points, dtype=np.float64).reshape(-1, 2)
    brd = np.asarray(board_points, dtype=np.float64).reshape(-1, 2)
    if len(img) < 4:
        raise CalibrationError(
            f"too few points: {len(img)} image/board pairs, need at least 4 not on one line; "
            "give more points or show more markers"
        )
    spread = float(np.ptp(brd, axis=0).max())
    hull_area = cv2.contourArea(cv2.convexHull(brd.astype(np.float32)))
    if spread == 0 or hull_area < 1e-3 * spread**2:
        raise CalibrationError(
            "degenerate points: the board points lie on (nearly) one line; "
            "use points spread over the table, e.g. its four corners"
        )
    if ransac_px is None:
        matrix, mask = cv2.findHomography(brd, img, 0)
    else:
        matrix, mask = cv2.findHomography(brd, img, cv2.RANSAC, ransac_px)
    if matrix is None or mask is None or int(mask.sum()) < 4 or abs(np.linalg.det(matrix)) < 1e-12:
        raise CalibrationError(
            "degenerate homography: the points do not agree on one table plane; "
            "check the point pairs or the marker positions in the profile"
        )
    h = Homography.from_array(np.linalg.inv(matrix))
    check(h, table, image_size)
    keep = mask.ravel().astype(bool)
    errors = np.linalg.norm(h.to_board(img[keep]) - brd[keep], axis=1)
    return Fit(h, float(np.sqrt(np.mean(errors**2))), float(errors.max()), int(keep.sum()), len(img))


def check(h: Homography, table: Rect, image_size: tuple[int, int]) -> None:
    """Reject homographies that cannot be a camera looking down at the table."""
    corners = np.array(table.corners, dtype=float)
    inverse = np.linalg.inv(h.array)
    w = (inverse @ np.c_[corners, np.ones(4)].T)[2]
    if not (np.all(w > 0) or np.all(w < 0)):
        raise CalibrationError(
            "degenerate homography: the table would cross the camera's horizon; "
            "check the point pairs (a point may be matched to the wrong board position)"
        )
    quad = h.to_image(corners)
    x, y = quad[:, 0], quad[:, 1]
    signed_area = 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))
    if signed_area > 0:
        raise CalibrationError(
            "degenerate homography: the table appears mirrored (seen from below); "
            "check that image points are not swapped left/right and the video is not flipped"
        )
    if abs(signed_area) < 1e-4 * image_size[0] * image_size[1]:
        raise CalibrationError(
            "degenerate homography: the table collapses to a sliver in the image; "
            "check the point pairs or move the camera so the table fills more of the frame"
        )
    # Condition number in normalised units (image and table scaled to about 1).
    s_img = np.diag([1 / image_size[0], 1 / image_size[1], 1.0])
    s_brd = np.diag([table.x_max, table.y_max, 1.0])
    normalised = s_img @ inverse @ s_brd
    if np.linalg.cond(normalised) > 1e7:
        raise CalibrationError(
            "degenerate homography: ill-conditioned (points nearly collinear or the view "
            "nearly edge-on); use points spread over the table"
        )


def marker_correspondences(
    detected: list[DetectedMarker], markers: Markers
) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """Pair each detected corner of a known marker with its board position."""
    known = markers.by_id()
    used = [m for m in detected if m.id in known]
    img = np.array([c for m in used for c in m.corners], dtype=float).reshape(-1, 2)
    brd = np.array([c for m in used for c in known[m.id].corners], dtype=float).reshape(-1, 2)
    return img, brd, tuple(m.id for m in used)
