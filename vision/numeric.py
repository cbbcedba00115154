"""Small numeric helpers for the per-frame loop, exact to numpy's bits without numpy's per-call cost, and the
fast way to shrink a frame by a whole factor."""

from __future__ import annotations

import math
from collections.abc import Sequence

import cv2
import numpy as np


def median(values: Sequence[float]) -> float:
    """`float(np.median(values))` to the bit, for a few numbers, without building an array.

    numpy takes the mean of the middle one or two: their sum, started from +0.0 (so a -0.0 comes out +0.0),
    over their count. Anything not finite is left to numpy (its NaN rules). Empty `values` are an error."""
    ordered = sorted(values)
    if not math.isfinite(sum(ordered)):
        return float(np.median(values))
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[middle] + 0.0)
    return float((ordered[middle - 1] + ordered[middle] + 0.0) / 2)


def median_byte(values: np.ndarray) -> float:
    """`np.median` of (non-empty) uint8 values, to the bit, from their histogram (a sort of a million pixels costs
    50 ms)."""
    below = np.cumsum(np.bincount(values, minlength=256))  # how many values are <= each value
    count = int(below[-1])
    upper = int(np.searchsorted(below, count // 2 + 1))  # the value at sorted position count // 2
    if count % 2:
        return float(upper)
    lower = int(np.searchsorted(below, count // 2))  # ... and at count // 2 - 1
    return (float(lower) + float(upper)) / 2


def percentile_sorted(ordered: np.ndarray, q: float) -> float:
    """`np.percentile(values, q)` of sorted values, to the last bit (its linear rule), at a tenth of its cost on
    the few hundred pixels of a disc."""
    index = q / 100 * (len(ordered) - 1)
    lo = int(np.floor(index))
    hi = min(lo + 1, len(ordered) - 1)
    t = index - lo
    a, b = float(ordered[lo]), float(ordered[hi])
    return b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t


def block_means(image: np.ndarray, k: int) -> np.ndarray:
    """The means of `image`'s k x k blocks (its sides multiples of k): halved while k is even, then the rest at once.
    OpenCV shrinks by 2 about five times faster than by 4 (1280x720 BGR: 0.17 ms for two halvings, 0.92 ms for one
    4x step; the hand watch's one step was 12 % of a Star Cluster run); each step rounds to whole levels, so a pixel
    lies within half a level a step of its block's mean (by 4: within one level)."""
    while k % 2 == 0 and k > 1:
        image = cv2.resize(image, (image.shape[1] // 2, image.shape[0] // 2), interpolation=cv2.INTER_AREA)
        k //= 2
    if k > 1:
        image = cv2.resize(image, (image.shape[1] // k, image.shape[0] // k), interpolation=cv2.INTER_AREA)
    return image


class Halvings:
    """One frame's successive halvings (`block_means`' exact 2x2 steps), made as first asked for and shared by the
    stages that shrink the same frame: the hand watch and the colour detector each halved the whole Piratenbillard
    frame (together 6 % of a four_players run). Only the box `within` (x0, y0, x1, y1, full-resolution pixels) is
    halved when given: the part of the frame the stages ask for (on Star Cluster the hand watch alone halves, a
    quarter of the frame, and halving the whole of it was 8 % of a run)."""

    def __init__(self, image: np.ndarray, within: tuple[int, int, int, int] | None = None) -> None:
        x0, y0, x1, y1 = within or (0, 0, image.shape[1], image.shape[0])
        self._within = (x0, y0, x1, y1)
        self._levels = [image if within is None else image[y0:y1, x0:x1]]

    @property
    def within(self) -> tuple[int, int, int, int]:
        """The box halved (x0, y0, x1, y1, full-resolution pixels)."""
        return self._within

    def ahead(self, k: int) -> Halvings:
        """Make the halvings down to 1/k now, on the calling thread, rather than when a stage first asks (a file's
        frames are halved on the thread that decodes them: `VisionPipeline.prepare`). The same blocks either way."""
        self._level(k.bit_length() - 1)
        return self

    def _level(self, n: int) -> np.ndarray:
        while len(self._levels) <= n:
            last = self._levels[-1]
            h, w = last.shape[0] // 2, last.shape[1] // 2
            self._levels.append(cv2.resize(last[:2 * h, :2 * w], (w, h), interpolation=cv2.INTER_AREA))
        return self._levels[n]

    def block_means(self, x0: int, y0: int, x1: int, y1: int, k: int) -> np.ndarray | None:
        """`block_means(image[y0:y1, x0:x1], k)` to the bit, cut from the shared halvings: where k is a power of two,
        the region lies in the halved box and its corners and the box's top left are multiples of k (each 2x2 block
        is then one of the whole frame's); None otherwise, and for k = 1."""
        bx0, by0, bx1, by1 = self._within
        if k < 2 or k & (k - 1) or x0 % k or y0 % k or x1 % k or y1 % k or bx0 % k or by0 % k \
                or x0 < bx0 or y0 < by0 or x1 > bx1 or y1 > by1:
            return None
        level = self._level(k.bit_length() - 1)
        x0, y0, x1, y1 = x0 - bx0, y0 - by0, x1 - bx0, y1 - by0
        if y1 // k > level.shape[0] or x1 // k > level.shape[1]:
            return None
        return level[y0 // k:y1 // k, x0 // k:x1 // k]


NEAR = np.ones((3, 3), np.uint8)  # a pixel and the eight round it


def outside_near(now: np.ndarray, was: np.ndarray) -> np.ndarray:
    """How far each pixel of `now` lies outside the range `was` takes within a pixel of it (0 within it), channel by
    channel, bytes or floats: a camera shaking by a pixel does not turn edges into changes."""
    return np.maximum(cv2.max(cv2.subtract(now, cv2.dilate(was, NEAR)), cv2.subtract(cv2.erode(was, NEAR), now)), 0)


def largest(planes: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
    """Per pixel, the largest of three planes, or of a colour image's B, G and R (read as views, not copied)."""
    if isinstance(planes, np.ndarray):
        planes = (planes[..., 0], planes[..., 1], planes[..., 2])
    return cv2.max(cv2.max(planes[0], planes[1]), planes[2])


def halved_box(regions: Sequence[tuple[int, int, int, int, int]], width: int, height: int) \
        -> tuple[int, int, int, int] | None:
    """The box holding every region (x0, y0, x1, y1, k) stages will ask `Halvings` for, its corners moved out to
    multiples of the largest k and kept in the frame; None when no stage halves."""
    if not regions:
        return None
    k = max(r[4] for r in regions)
    x0, y0 = min(r[0] for r in regions) // k * k, min(r[1] for r in regions) // k * k
    x1, y1 = -(-max(r[2] for r in regions) // k) * k, -(-max(r[3] for r in regions) // k) * k
    return max(x0, 0), max(y0, 0), min(x1, width), min(y1, height)
