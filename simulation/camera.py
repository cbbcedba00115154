"""A pinhole camera looking at the table: pose in board millimetres, K·[R|t] projection.

The renderer and the truth file both project through this one model, so a
ball's truth pixel is exactly where it is drawn. Camera shake is a small
rotation about the camera centre, which moves every pixel by the same
homography K·dR·K⁻¹: the renderer warps the finished frame with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calibration.profile import TableProfile
from rules.errors import InputError
from simulation.games import CAMERA_PRESETS, simulated_game

PRESETS = CAMERA_PRESETS


@dataclass(frozen=True)
class Camera:
    preset: str
    width: int
    height: int
    k: np.ndarray  # 3x3 intrinsics, principal point at the image centre
    r: np.ndarray  # 3x3 rotation board -> camera (rows: camera x right, y down, z forward)
    t: np.ndarray  # 3 translation, camera = R·board + t

    @property
    def centre(self) -> np.ndarray:
        return -self.r.T @ self.t

    def project(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(N, 3) board mm -> (N, 2) pixels and (N,) depths along the optical axis."""
        cam = np.asarray(points, float).reshape(-1, 3) @ self.r.T + self.t
        depth = cam[:, 2]
        uv = cam @ self.k.T
        return uv[:, :2] / uv[:, 2:3], depth

    def plane_homography(self, shift: np.ndarray | None = None) -> np.ndarray:
        """3x3 map from table-plane mm (z = 0, after a rigid `shift` of the table) to pixels."""
        h = self.k @ np.column_stack([self.r[:, 0], self.r[:, 1], self.t])
        return h if shift is None else h @ shift

    def shake_homography(self, angles_deg: tuple[float, float, float]) -> np.ndarray:
        """Pixel map of a small extra rotation (about camera x, y, z) of the camera."""
        return self.k @ _rotation(*np.radians(angles_deg)) @ np.linalg.inv(self.k)

    def to_json(self) -> dict:
        return {"preset": self.preset, "image_size": [self.width, self.height],
                "K": self.k.tolist(), "R": self.r.tolist(), "t": self.t.tolist(),
                "centre_mm": self.centre.tolist()}


def _rotation(ax: float, ay: float, az: float) -> np.ndarray:
    cx, sx, cy, sy, cz, sz = np.cos(ax), np.sin(ax), np.cos(ay), np.sin(ay), np.cos(az), np.sin(az)
    rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    return rz @ ry @ rx


def look_at(position, target, up) -> tuple[np.ndarray, np.ndarray]:
    """Rotation and translation of a camera at `position` looking at `target`; `up` is image-up."""
    c = np.asarray(position, float)
    forward = np.asarray(target, float) - c
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, np.asarray(up, float))
    if np.linalg.norm(right) < 1e-9:
        raise InputError("camera: 'up' is parallel to the viewing direction; give another up vector")
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    r = np.vstack([right, down, forward])
    return r, -r @ c


def make_camera(profile: TableProfile, preset: str, width: int, height: int,
                position=None, target=None, up=None, margin: float = 0.06) -> Camera:
    """A preset (or explicit) pose; the focal length is chosen so the whole table fits the frame."""
    if preset not in PRESETS:
        raise InputError(f"unknown camera {preset!r}; use one of {', '.join(PRESETS)}")
    if width < 16 or height < 16 or width % 2 or height % 2:
        raise InputError(f"image size must be even and at least 16 px, got {width}x{height}")
    w, l = profile.table.x_max, profile.table.y_max
    if preset == "overhead":
        default = ((w / 2, l / 2, 1800.0), (w / 2, l / 2, 0.0), (0.0, 1.0, 0.0) if l <= w * 1.2 else (-1.0, 0.0, 0.0))
    else:  # the game's own view from the player's end (simulation.games)
        default = simulated_game(profile.game).behind_play_line.pose(w, l)
    position = default[0] if position is None else position
    target = default[1] if target is None else target
    up = default[2] if up is None else up
    r, t = look_at(position, target, up)
    corners = np.array([[x, y, 0.0] for x in (0.0, w) for y in (0.0, l)])
    cam = corners @ r.T + t
    if np.any(cam[:, 2] <= 0):
        raise InputError("camera: part of the table is behind the camera; move the camera back")
    xn, yn = cam[:, 0] / cam[:, 2], cam[:, 1] / cam[:, 2]
    f = min((width / 2) * (1 - margin) / np.abs(xn).max(), (height / 2) * (1 - margin) / np.abs(yn).max())
    k = np.array([[f, 0.0, (width - 1) / 2], [0.0, f, (height - 1) / 2], [0.0, 0.0, 1.0]])
    return Camera(preset, width, height, k, r, t)


def shift_matrix(profile: TableProfile, dx: float, dy: float, rotation_deg: float) -> np.ndarray:
    """3x3 rigid motion of the table in its own plane, about the table centre."""
    cx, cy = profile.table.x_max / 2, profile.table.y_max / 2
    a = np.radians(rotation_deg)
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, cx - c * cx + s * cy + dx], [s, c, cy - s * cx - c * cy + dy], [0.0, 0.0, 1.0]])
