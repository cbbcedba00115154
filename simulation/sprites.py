"""Shaded balls, their soft shadows and a reaching hand, drawn into a float BGR frame (0..1).

Each sprite is rendered in a small patch around its projected position, so a
frame with thirty balls costs little more than the background.
"""

from __future__ import annotations

import cv2
import numpy as np

SKIN = np.array([0.47, 0.60, 0.80], np.float32)  # BGR


def _patch(img: np.ndarray, cx: float, cy: float, half: float):
    h, w = img.shape[:2]
    x0, y0 = int(np.floor(cx - half)), int(np.floor(cy - half))
    x1, y1 = int(np.ceil(cx + half)) + 1, int(np.ceil(cy + half)) + 1
    x0c, y0c, x1c, y1c = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x0c >= x1c or y0c >= y1c:
        return None
    ys, xs = np.mgrid[y0c:y1c, x0c:x1c].astype(np.float32)
    return (slice(y0c, y1c), slice(x0c, x1c)), xs - cx, ys - cy


def draw_shadow(img: np.ndarray, centre: tuple[float, float], radius_px: float, strength: float) -> None:
    """Darken a soft elliptical blob (the ball's contact shadow)."""
    sigma = max(radius_px * 0.8, 0.7)
    found = _patch(img, centre[0], centre[1], 3 * sigma + 1)
    if found is None:
        return
    region, dx, dy = found
    blob = np.exp(-(dx**2 + (dy * 1.3) ** 2) / (2 * sigma**2))
    img[region] *= (1 - strength * blob)[..., None]


def draw_ball(img: np.ndarray, centre: tuple[float, float], radius_px: float, colour_bgr: np.ndarray,
              material: str, light_cam: np.ndarray, blur_px: tuple[float, float] = (0.0, 0.0)) -> None:
    """A shaded sphere: Lambert + specular from `light_cam` (unit vector, camera axes), alpha-blended.

    `material` "glass" is translucent with a sharp bright highlight; "wood" is matte.
    `blur_px` is the image displacement during the exposure, smeared with a line kernel.
    """
    blur_len = float(np.hypot(*blur_px))
    found = _patch(img, centre[0], centre[1], radius_px + blur_len / 2 + 2)
    if found is None:
        return
    region, dx, dy = found
    r = np.sqrt(dx**2 + dy**2)
    alpha = np.clip(radius_px - r + 0.5, 0.0, 1.0)
    d = np.clip(r / max(radius_px, 1e-3), 0, 1)
    nx, ny = dx / max(radius_px, 1e-3), dy / max(radius_px, 1e-3)
    nz = -np.sqrt(np.clip(1 - d**2, 0, 1))
    lam = np.clip(nx * light_cam[0] + ny * light_cam[1] + nz * light_cam[2], 0, 1)
    half = light_cam + np.array([0.0, 0.0, -1.0])
    half = half / np.linalg.norm(half)
    ndh = np.clip(nx * half[0] + ny * half[1] + nz * half[2], 0, 1)
    colour = np.asarray(colour_bgr, np.float32)
    if material == "glass":
        shade = (0.38 + 0.55 * lam)[..., None] * colour + (0.9 * ndh**60)[..., None]
        shade += (0.25 * np.clip(1 - d, 0, 1) ** 0.5 * (1 - lam))[..., None] * colour  # light through the glass
        alpha = alpha * (0.88 - 0.1 * d)
    else:
        shade = (0.22 + 0.78 * lam)[..., None] * colour + (0.18 * ndh**12)[..., None]
    shade = np.clip(shade, 0, 1).astype(np.float32)
    premult = shade * alpha[..., None]
    if blur_len > 0.75:
        n = int(np.ceil(blur_len)) * 2 + 1
        kernel = np.zeros((n, n), np.float32)
        c = n // 2
        for s in np.linspace(-0.5, 0.5, 2 * n):
            kernel[int(round(c + s * blur_px[1])), int(round(c + s * blur_px[0]))] += 1
        kernel /= kernel.sum()
        premult = cv2.filter2D(premult, -1, kernel, borderType=cv2.BORDER_CONSTANT)
        alpha = cv2.filter2D(alpha.astype(np.float32), -1, kernel, borderType=cv2.BORDER_CONSTANT)
    img[region] = img[region] * (1 - alpha[..., None]) + premult


def draw_hand(img: np.ndarray, arm_from: tuple[float, float], tip: tuple[float, float], palm_px: float,
              arm_px: float) -> np.ndarray:
    """A skin-coloured forearm and hand reaching from `arm_from` to `tip`; returns its mask (bool)."""
    h, w = img.shape[:2]
    mask = np.zeros((h, w), np.uint8)
    a = np.array(arm_from, float)
    b = np.array(tip, float)
    direction = (b - a) / max(np.linalg.norm(b - a), 1e-6)
    wrist = b - direction * palm_px * 1.6
    shift = 4
    scale = 1 << shift

    def p(v):
        return (int(round(v[0] * scale)), int(round(v[1] * scale)))

    cv2.line(mask, p(a), p(wrist), 255, max(1, int(round(arm_px))), cv2.LINE_AA, shift)
    cv2.ellipse(mask, p(b - direction * palm_px * 0.9), (int(palm_px * scale), int(palm_px * 0.8 * scale)),
                float(np.degrees(np.arctan2(direction[1], direction[0]))), 0, 360, 255, -1, cv2.LINE_AA, shift)
    side = np.array([-direction[1], direction[0]])
    for k in (-1.5, -0.5, 0.5, 1.5):
        base = b - direction * palm_px * 0.6 + side * k * palm_px * 0.35
        cv2.line(mask, p(base), p(base + direction * palm_px * (0.9 - 0.12 * abs(k))), 255,
                 max(1, int(round(palm_px * 0.28))), cv2.LINE_AA, shift)
    x, y, bw, bh = cv2.boundingRect(mask)
    if bw == 0:
        return mask > 127
    box = (slice(y, y + bh), slice(x, x + bw))
    alpha = cv2.GaussianBlur(mask[box].astype(np.float32) / 255, (0, 0), 0.8)[..., None]
    # shade across the arm: brighter along its axis, so it reads as a rounded limb
    ys, xs = np.mgrid[y:y + bh, x:x + bw].astype(np.float32)
    dist = np.abs((xs - a[0]) * side[0] + (ys - a[1]) * side[1]) / max(arm_px, 1.0)
    shade = (1.05 - 0.5 * np.clip(dist, 0, 1))[..., None] * SKIN
    img[box] = img[box] * (1 - alpha) + shade * alpha
    return mask > 127
