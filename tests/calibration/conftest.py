"""Shared fixtures: an independent pinhole camera model and cached board renders."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import pytest

from calibration.profile import load_profile
from calibration.render import render_board

RENDER_PX_PER_MM = 2.0


@dataclass(frozen=True)
class PinholeCamera:
    """A camera at `centre` (board mm) looking at `target`, built without the library's code."""

    k: np.ndarray
    r: np.ndarray  # board -> camera rotation
    t: np.ndarray
    size: tuple[int, int]

    @property
    def board_to_image(self) -> np.ndarray:
        return self.k @ np.column_stack([self.r[:, 0], self.r[:, 1], self.t])

    def project(self, points_3d: np.ndarray) -> np.ndarray:
        cam = self.r @ np.asarray(points_3d, float).T + self.t[:, None]
        uvw = self.k @ cam
        return (uvw[:2] / uvw[2]).T

    def project_board(self, points_2d: np.ndarray) -> np.ndarray:
        pts = np.asarray(points_2d, float).reshape(-1, 2)
        return self.project(np.c_[pts, np.zeros(len(pts))])


def look_at(centre, target, focal_px, size=(1920, 1080), roll_deg=0.0) -> PinholeCamera:
    c, tgt = np.asarray(centre, float), np.asarray(target, float)
    z = (tgt - c) / np.linalg.norm(tgt - c)
    up = np.array([0.0, 0.0, 1.0]) if abs(z[2]) < 0.999 else np.array([0.0, 1.0, 0.0])
    x = np.cross(z, up)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    r = np.stack([x, y, z])
    roll = np.radians(roll_deg)
    r = np.array([[np.cos(roll), -np.sin(roll), 0], [np.sin(roll), np.cos(roll), 0], [0, 0, 1]]) @ r
    k = np.array([[focal_px, 0, (size[0] - 1) / 2], [0, focal_px, (size[1] - 1) / 2], [0, 0, 1.0]])
    return PinholeCamera(k=k, r=r, t=-r @ c, size=size)


@pytest.fixture(scope="session")
def starcluster():
    return load_profile("starcluster")


@pytest.fixture(scope="session")
def piratenbillard():
    return load_profile("piratenbillard")


@pytest.fixture(scope="session")
def board_images(starcluster, piratenbillard):
    return {
        "starcluster": render_board(starcluster, RENDER_PX_PER_MM),
        "piratenbillard": render_board(piratenbillard, RENDER_PX_PER_MM),
    }


def textured_background(size: tuple[int, int], seed: int = 0) -> np.ndarray:
    """A room-like background with plenty of trackable corners."""
    rng = np.random.default_rng(seed)
    w, h = size
    img = np.full((h, w, 3), 90, np.uint8)
    for _ in range(400):
        x, y = rng.integers(0, w), rng.integers(0, h)
        colour = tuple(int(v) for v in rng.integers(20, 235, 3))
        cv2.rectangle(img, (int(x), int(y)), (int(x + rng.integers(8, 60)), int(y + rng.integers(8, 60))), colour, -1)
    return img


@pytest.fixture(scope="session")
def make_camera():
    """The `look_at` camera builder, as a fixture so tests need not import conftest."""
    return look_at


@pytest.fixture(scope="session")
def make_background():
    return textured_background
