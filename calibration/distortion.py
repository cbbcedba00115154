"""Optional lens model: undistort pixel coordinates before the homography maps them.

Intrinsics come from OpenCV's chessboard calibration (`cv2.calibrateCamera`),
saved as JSON: {"camera_matrix": 3x3, "dist_coeffs": [k1, k2, p1, p2, k3...]}.
Points are undistorted (not whole frames), which keeps per-frame cost tiny.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import cv2
import numpy as np

from calibration.geometry import rows3
from rules.errors import InputError
from rules.files import loads


@dataclass(frozen=True)
class Intrinsics:
    camera_matrix: tuple[tuple[float, float, float], ...]
    dist_coeffs: tuple[float, ...]
    image_size: tuple[int, int] | None = None

    @property
    def k(self) -> np.ndarray:
        return np.array(self.camera_matrix, dtype=float)

    @property
    def d(self) -> np.ndarray:
        return np.array(self.dist_coeffs, dtype=float)

    def undistort_points(self, points_px: np.ndarray) -> np.ndarray:
        """Distorted pixels -> ideal pinhole pixels with the same camera matrix."""
        pts = np.asarray(points_px, dtype=np.float64).reshape(-1, 1, 2)
        if not np.any(self.d):
            return pts.reshape(-1, 2)
        return cv2.undistortPoints(pts, self.k, self.d, P=self.k).reshape(-1, 2)

    def undistort_image(self, image: np.ndarray) -> np.ndarray:
        return cv2.undistort(image, self.k, self.d) if np.any(self.d) else image

    def image_undistorter(self, width: int, height: int) -> Callable[[np.ndarray], np.ndarray]:
        """`undistort_image` for many frames of one size: the pixel map is built once, each frame only
        remapped (what `cv2.undistort` does inside, so the output is the same, a third of the cost)."""
        if not np.any(self.d):
            return lambda image: image
        maps = cv2.initUndistortRectifyMap(self.k, self.d, None, self.k, (width, height), cv2.CV_16SC2)
        return lambda image: cv2.remap(image, *maps, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)

    def to_json(self) -> dict:
        out: dict = {
            "camera_matrix": [list(r) for r in self.camera_matrix],
            "dist_coeffs": list(self.dist_coeffs),
        }
        if self.image_size is not None:
            out["image_size"] = list(self.image_size)
        return out


def intrinsics_from_json(data: dict, label: str) -> Intrinsics:
    try:
        k = np.array(data["camera_matrix"], dtype=float)
        d = np.array(data.get("dist_coeffs", []), dtype=float).ravel()
        size = data.get("image_size")
        image_size = (int(size[0]), int(size[1])) if size else None
    except (KeyError, TypeError, ValueError, IndexError, OverflowError):  # OverflowError: past a float, Infinity
        raise InputError(
            f"intrinsics {label}: field 'camera_matrix' (3x3) and 'dist_coeffs' (list) are "
            "required, 'image_size' is [width, height] if given; write them from cv2.calibrateCamera"
        ) from None
    if (k.shape != (3, 3) or not (np.isfinite(k).all() and np.isfinite(d).all()) or k[0, 0] <= 0 or k[1, 1] <= 0
            or k[2, 2] != 1 or d.size > 14):
        raise InputError(
            f"intrinsics {label}: field 'camera_matrix' must be [[fx,0,cx],[0,fy,cy],[0,0,1]] with "
            "fx, fy > 0 and dist_coeffs at most 14 numbers, all finite; fix the file"
        )
    return Intrinsics(
        camera_matrix=rows3(k),
        dist_coeffs=tuple(float(v) for v in d),
        image_size=image_size,
    )


def load_intrinsics(path: str | Path) -> Intrinsics:
    try:
        data = loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"intrinsics {path}: cannot read JSON ({error}); check the path") from None
    if not isinstance(data, dict):
        raise InputError(f"intrinsics {path}: expected a JSON object with camera_matrix and dist_coeffs")
    return intrinsics_from_json(data, str(path))
