"""A real photograph of a person composited at the Play Line, with COCO keypoint truth.

The photo (skimage's astronaut portrait) is cut out with a hand-drawn outline
and placed by one similarity transform: upright along the table's forward
direction, scaled to a real shoulder width, and shifted so the person's
furthest keypoint reaches `reach_mm` past the Play Line. The keypoints go
through the same transform, so the truth matches the pixels exactly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import cv2
import numpy as np

COCO_KEYPOINTS = (
    "nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder", "right_shoulder",
    "left_elbow", "right_elbow", "left_wrist", "right_wrist", "left_hip", "right_hip",
    "left_knee", "right_knee", "left_ankle", "right_ankle",
)
SHOULDER_WIDTH_MM = 330.0
STANDING_BACK_MM = 220.0  # shoulders behind the reaching point


@dataclass(frozen=True)
class Photo:
    image: np.ndarray  # BGR float32 0..1
    alpha: np.ndarray  # float32 0..1
    keypoints: np.ndarray  # (17, 3): x, y, v in photo pixels


@lru_cache(maxsize=1)
def astronaut() -> Photo:
    """The cut-out astronaut photo; read once per process (it never changes)."""
    from skimage.data import astronaut as load

    spec = json.loads(resources.files("simulation").joinpath("assets/astronaut_keypoints.json").read_text())
    image = load()[:, :, ::-1].astype(np.float32) / 255
    mask = np.zeros(image.shape[:2], np.uint8)
    cv2.fillPoly(mask, [np.array(spec["outline"], np.int32)], 255, cv2.LINE_AA)
    alpha = cv2.GaussianBlur(mask.astype(np.float32) / 255, (0, 0), 1.5)
    points = np.array([spec["keypoints"][name] for name in COCO_KEYPOINTS], float)
    return Photo(image, alpha, points)


def place_person(plane_h: np.ndarray, line_y: float, x_mm: float, reach_mm: float,
                 photo: Photo) -> np.ndarray:
    """2x3 affine photo px -> image px for a person at `x_mm` along the line reaching `reach_mm` past it."""
    def to_px(x: float, y: float) -> np.ndarray:
        v = plane_h @ np.array([x, y, 1.0])
        return v[:2] / v[2]

    tip = to_px(x_mm, line_y + reach_mm)
    back = to_px(x_mm, line_y + reach_mm - STANDING_BACK_MM)
    side = to_px(x_mm + SHOULDER_WIDTH_MM, line_y + reach_mm - STANDING_BACK_MM)
    forward = tip - back
    kp = photo.keypoints
    shoulder_px = np.linalg.norm(kp[5, :2] - kp[6, :2])
    scale = np.linalg.norm(side - back) / shoulder_px
    angle = np.arctan2(forward[1], forward[0]) - np.arctan2(-1.0, 0.0)  # photo up -> table forward
    c, s = np.cos(angle) * scale, np.sin(angle) * scale
    rot = np.array([[c, -s], [s, c]])
    visible = kp[:, 2] > 0
    lead = kp[visible][np.argmin(kp[visible, 1]), :2]  # the top-most keypoint leads over the line
    offset = tip - rot @ lead
    return np.column_stack([rot, offset])


def composite(img: np.ndarray, photo: Photo, affine: np.ndarray) -> np.ndarray:
    """Paste the photo through `affine` into `img` (float BGR, in place); return the person's mask."""
    h, w = img.shape[:2]
    warped = cv2.warpAffine(photo.image, affine, (w, h), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0))
    alpha = cv2.warpAffine(photo.alpha, affine, (w, h), flags=cv2.INTER_LINEAR, borderValue=0)[..., None]
    img[:] = img * (1 - alpha) + warped * alpha
    return alpha[..., 0] > 0.5


def keypoints_px(photo: Photo, affine: np.ndarray) -> np.ndarray:
    """(17, 3): image x, y and the photo's visibility flag."""
    kp = photo.keypoints
    xy = kp[:, :2] @ affine[:, :2].T + affine[:, 2]
    return np.column_stack([xy, kp[:, 2]])
