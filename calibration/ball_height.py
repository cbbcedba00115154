"""Correct a ball's mapped position for its height above the board.

The homography maps the board plane (z = 0), but a ball's visible centre is
one radius above it. Seen from an oblique camera that point maps to where the
camera ray through it meets the board: beyond the ball, away from the camera.
With the camera centre C recovered from the homography, the contact point is
C_xy + (P - C_xy) * (C_z - r) / C_z, where P is the plane-mapped centre.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calibration.geometry import rows3
from calibration.homography import Homography
from calibration.distortion import Intrinsics
from rules.errors import InputError

# Beyond this focal length (in image widths) the view is too close to straight
# overhead for the homography to reveal the focal length.
MAX_FOCAL_WIDTHS = 20.0


@dataclass(frozen=True)
class CameraPose:
    """Camera intrinsics and where the camera sits in board millimetres."""

    camera_matrix: tuple[tuple[float, float, float], ...]
    rotation: tuple[tuple[float, float, float], ...]
    translation: tuple[float, float, float]
    centre_mm: tuple[float, float, float]

    @property
    def tilt_deg(self) -> float:
        """Angle between the optical axis and straight down."""
        axis = np.array(self.rotation)[2]  # camera z axis in board coordinates
        return float(np.degrees(np.arccos(np.clip(-axis[2], -1, 1))))


def estimate_focal(h: Homography, image_size: tuple[int, int]) -> float:
    """Focal length in pixels, assuming zero skew, square pixels, principal point at the centre."""
    w, hgt = image_size
    k0_inv = np.array([[1, 0, -(w - 1) / 2], [0, 1, -(hgt - 1) / 2], [0, 0, 1.0]])
    m = k0_inv @ np.linalg.inv(h.array)
    m = m / np.linalg.norm(m[:, :2])
    h1, h2 = m[:, 0], m[:, 1]
    a = np.array([h1[0] * h2[0] + h1[1] * h2[1], h1[0] ** 2 + h1[1] ** 2 - h2[0] ** 2 - h2[1] ** 2])
    b = -np.array([h1[2] * h2[2], h1[2] ** 2 - h2[2] ** 2])
    inv_f2 = float(a @ b / (a @ a)) if a @ a > 1e-12 else 0.0
    if inv_f2 <= 0 or 1 / np.sqrt(inv_f2) > MAX_FOCAL_WIDTHS * w:
        raise InputError(
            "cannot estimate the focal length: the camera looks (nearly) straight down, so the "
            "homography does not reveal it; pass --intrinsics from a chessboard calibration"
        )
    return float(1 / np.sqrt(inv_f2))


def camera_pose(h: Homography, image_size: tuple[int, int], intrinsics: Intrinsics | None = None) -> CameraPose:
    """Decompose board -> image = K [r1 r2 t] into rotation, translation and camera centre."""
    if intrinsics is not None:
        k = intrinsics.k
    else:
        f = estimate_focal(h, image_size)
        k = np.array([[f, 0, (image_size[0] - 1) / 2], [0, f, (image_size[1] - 1) / 2], [0, 0, 1.0]])
    m = np.linalg.inv(k) @ np.linalg.inv(h.array)
    scale = 2 / (np.linalg.norm(m[:, 0]) + np.linalg.norm(m[:, 1]))
    m = m * scale
    if m[2, 2] < 0:  # the board must be in front of the camera
        m = -m
    r = np.column_stack([m[:, 0], m[:, 1], np.cross(m[:, 0], m[:, 1])])
    u, _, vt = np.linalg.svd(r)
    r = u @ vt
    t = m[:, 2]
    centre = -r.T @ t
    if centre[2] <= 0:
        raise InputError(
            "camera pose: the camera would sit below the table (mirrored view); check the calibration"
        )
    return CameraPose(
        camera_matrix=rows3(k),
        rotation=rows3(r),
        translation=(float(t[0]), float(t[1]), float(t[2])),
        centre_mm=(float(centre[0]), float(centre[1]), float(centre[2])),
    )


def contact_point(plane_point_mm: np.ndarray, pose: CameraPose, radius_mm: float) -> np.ndarray:
    """Plane-mapped ball centres (N, 2) -> the board points the balls rest on (N, 2)."""
    p = np.asarray(plane_point_mm, dtype=float).reshape(-1, 2)
    cx, cy, cz = pose.centre_mm
    c = np.array([cx, cy])
    return c + (p - c) * (cz - radius_mm) / cz
