"""Draw a profile's table top-down with its ArUco markers, and view it through a camera.

Used by the calibration tests and the synthetic-video renderer, so the pixel
geometry is exact: board point (x, y) mm lands at render pixel
u = x*ppm - 0.5, v = (length - y)*ppm - 0.5 (OpenCV's pixel-centre convention),
and markers are area-sampled so their corners sit where the profile says.
"""

from __future__ import annotations

from collections.abc import Mapping

import cv2
import numpy as np

from calibration.aruco import marker_bits
from calibration.geometry import Feature, FeatureKind, Rect
from calibration.profile import TableProfile

Bgr8 = tuple[int, int, int]

TABLE = (180, 200, 215)
BOARD = (205, 225, 235)
PLAY_AREA = (190, 225, 195)
GUTTER = (90, 100, 110)
SLOT = (60, 60, 70)
PLAY_LINE = (40, 40, 210)
SPACE = (120, 135, 150)
SEAT_COLOURS = ((60, 60, 200), (60, 160, 60), (200, 120, 40), (40, 180, 220))  # the default board's starting rows
FEATURE_FILL = {FeatureKind.PLAY_AREA: PLAY_AREA, FeatureKind.BOARD: BOARD, FeatureKind.GUTTER: GUTTER,
                FeatureKind.SLOT: SLOT, FeatureKind.SPACE: SPACE}


def board_to_render(profile: TableProfile, px_per_mm: float) -> np.ndarray:
    """3x3 matrix: board mm -> top-down render pixels (y flipped so the far end is up)."""
    length = profile.table.y_max
    return np.array(
        [[px_per_mm, 0.0, -0.5], [0.0, -px_per_mm, length * px_per_mm - 0.5], [0.0, 0.0, 1.0]]
    )


def _px(profile: TableProfile, ppm: float, point: tuple[float, float]) -> tuple[int, int]:
    u, v, _ = board_to_render(profile, ppm) @ np.array([point[0], point[1], 1.0])
    return int(round(u)), int(round(v))


def _fill(img: np.ndarray, profile: TableProfile, ppm: float, rect: Rect, colour) -> None:
    cv2.rectangle(
        img,
        _px(profile, ppm, (rect.x_min, rect.y_max)),
        _px(profile, ppm, (rect.x_max, rect.y_min)),
        colour,
        thickness=-1,
    )


def _coverage(start_px: float, module_px: float, count: int, length: int) -> np.ndarray:
    """(length, count) overlap of each pixel [i, i+1) with each module, in pixel units."""
    edges = start_px + module_px * np.arange(count + 1)
    pix = np.arange(length)[:, None]
    lo = np.maximum(pix, edges[None, :-1])
    hi = np.minimum(pix + 1, edges[None, 1:])
    return np.clip(hi - lo, 0.0, None)


def _draw_marker(img: np.ndarray, profile: TableProfile, ppm: float, marker) -> None:
    """Area-sample the marker (with a one-module white quiet zone) into the image."""
    # the image is the table seen from above, north up: numpy's quarter turns are counter-clockwise as seen
    bits = np.rot90(marker_bits(profile.markers.dictionary, marker.id), marker.rotation_deg // 90).astype(float)
    n = bits.shape[0]
    bits = np.pad(bits, 1, constant_values=255.0)
    module = marker.size_mm / n * ppm
    left = (marker.center[0] - marker.size_mm / 2) * ppm - module
    top = (profile.table.y_max - marker.center[1] - marker.size_mm / 2) * ppm - module
    x0, y0 = max(int(np.floor(left)), 0), max(int(np.floor(top)), 0)
    x1 = min(int(np.ceil(left + module * (n + 2))), img.shape[1])
    y1 = min(int(np.ceil(top + module * (n + 2))), img.shape[0])
    wx = _coverage(left - x0, module, n + 2, x1 - x0)
    wy = _coverage(top - y0, module, n + 2, y1 - y0)
    inside = (wy.sum(1)[:, None] * wx.sum(1)[None, :])[..., None]
    value = (wy @ bits @ wx.T)[..., None]
    patch = img[y0:y1, x0:x1].astype(float)
    img[y0:y1, x0:x1] = np.clip(value + patch * (1 - inside), 0, 255).astype(np.uint8)


def paint(feature: Feature, seat_paint: Mapping[int, Bgr8] | None = None) -> Bgr8:
    """The colour `render_board` draws `feature` in; a seat's starting space takes `seat_paint`'s colour for that
    seat, else the default board's (SEAT_COLOURS)."""
    if feature.kind is FeatureKind.PLAY_LINE:
        return PLAY_LINE
    if feature.seat is not None:
        return (seat_paint or {}).get(feature.seat, SEAT_COLOURS[feature.seat % 4])
    return FEATURE_FILL[feature.kind]


def render_board(profile: TableProfile, px_per_mm: float, seat_paint: Mapping[int, Bgr8] | None = None) -> np.ndarray:
    """The table seen from straight above, BGR, (length*ppm) x (width*ppm) pixels; `seat_paint` (seat -> BGR)
    repaints starting rows, for players whose balls are not the default board's colours."""
    width = int(round(profile.table.x_max * px_per_mm))
    height = int(round(profile.table.y_max * px_per_mm))
    img = np.full((height, width, 3), TABLE, dtype=np.uint8)
    ppm = px_per_mm
    for feature in profile.features:
        if feature.kind is FeatureKind.PLAY_LINE and feature.a is not None and feature.b is not None:
            cv2.line(img, _px(profile, ppm, feature.a), _px(profile, ppm, feature.b), paint(feature),
                     max(1, round(3 * ppm)))
        elif feature.rect is not None:
            _fill(img, profile, ppm, feature.rect, paint(feature, seat_paint))
    for marker in profile.markers.markers:
        _draw_marker(img, profile, ppm, marker)
    return img


def warp_to_camera(
    board_image: np.ndarray,
    profile: TableProfile,
    px_per_mm: float,
    board_to_image: np.ndarray,
    image_size: tuple[int, int],
    background: np.ndarray | None = None,
    supersample: int = 2,
) -> np.ndarray:
    """Project a top-down render into a camera image of `image_size` (w, h).

    `board_to_image` maps board mm to camera pixels. Rendering at `supersample`
    times the size and area-averaging down avoids aliasing the markers.
    """
    w, h = image_size
    s = supersample
    up = np.array([[s, 0, (s - 1) / 2], [0, s, (s - 1) / 2], [0, 0, 1.0]])
    matrix = up @ np.asarray(board_to_image, float) @ np.linalg.inv(board_to_render(profile, px_per_mm))
    big: np.ndarray
    if background is None:
        big = np.full((h * s, w * s, 3), 30, np.uint8)
    else:
        big = cv2.resize(background, (w * s, h * s), interpolation=cv2.INTER_LINEAR)
    warped = cv2.warpPerspective(board_image, matrix, (w * s, h * s), flags=cv2.INTER_LINEAR)
    alpha = cv2.warpPerspective(
        np.ones(board_image.shape[:2], np.float32), matrix, (w * s, h * s), flags=cv2.INTER_LINEAR
    )[..., None]
    big = (warped * alpha + big * (1 - alpha)).astype(np.uint8)
    return cv2.resize(big, (w, h), interpolation=cv2.INTER_AREA) if s > 1 else big
