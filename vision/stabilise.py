"""Steady the image against the table: per-frame motion of the table's markers, undone on detections.

Camera shake (a smooth small rotation) moves the whole picture by a pixel or
two. At the far end of a Star Cluster board a pixel is several millimetres, so
a resting ball seems to wander at 10-40 mm/s, as fast as a ball creeping into
its slot: the rest test cannot tell them apart, and the table is called
settled seconds early. The markers are fixed to the table, so their image
motion is exactly what has to be taken out. Each frame, every marker of the
reference frame is found again by normalised cross-correlation in a small
search window (sub-pixel by a parabola through the peak); a similarity
transform from the current image back to the reference image is fitted to the
markers found (a translation with one or two; none when all are hidden: the
frame is used as is). Detections are mapped through it before they go to the
board, so the calibration of the reference frame stays exact.

Shake moves a marker a pixel or two from one frame to the next, so each marker
is first looked for within `LOCAL_PX` of where it was on the frame before; only
when the best match there lies on that small window's edge (it moved further)
or is too weak is the whole `search_px` window searched. The two give the same
peak whenever it lies within the small window, at a few per cent of the cost.

With `match_px` set, a marker is matched on its square of at most that many px
with the most edge in it, not on the whole marker: the cost of a match grows with
the template's area, and a Piratenbillard marker is up to 102 px across (8
markers took 1.4 ms a frame). The edges fix the position: a square of 40 px gave
offsets 0.02-0.05 px (median) from the whole marker's on the samples, 0.15 px at
the 95th percentile, for a quarter to a third of the cost. It is off by default:
moving the steadying by that much moves a few readings that lie on a threshold
(benchmarks/README.md, issue 13's twenty-second stop).
"""

from __future__ import annotations

import cv2
import numpy as np

from calibration.calibrate import Calibration
from calibration.profile import TableProfile
from vision.config import StabiliserConfig
from vision.numeric import median

LOCAL_PX = 2  # a marker is looked for this far (px) around its last position before the whole search window


class TableStabiliser:
    def __init__(self, reference: np.ndarray, calibration: Calibration, profile: TableProfile,
                 config: StabiliserConfig = StabiliserConfig()) -> None:
        self.config = config
        grey = _grey(reference)
        h, w = grey.shape
        self._patches: list[tuple[np.ndarray, float, float]] = []  # (template, reference top-left x, y)
        for marker in profile.markers.markers:
            corners = calibration.board_to_image(np.array(marker.corners, float))
            centre = corners.mean(axis=0)
            half = int(np.ceil(np.abs(corners - centre).max())) + 2
            x0, y0 = int(round(centre[0])) - half, int(round(centre[1])) - half
            s = config.search_px
            if 2 * half < config.min_patch_px or x0 - s < 0 or y0 - s < 0 or x0 + 2 * half + s >= w \
                    or y0 + 2 * half + s >= h:
                continue
            # float32: OpenCV correlates a float template with a float window in 60-70 % of the time it takes
            # with bytes (a 102 px marker: 106 us against 174); the scores differ in the sixth decimal
            patch = grey[y0:y0 + 2 * half, x0:x0 + 2 * half].astype(np.float32)
            side = min(config.match_px or 2 * half, 2 * half)
            sx, sy = _most_edge(patch, side)
            self._patches.append((patch[sy:sy + side, sx:sx + side].copy(), float(x0 + sx), float(y0 + sy)))
        self.transform = np.array([[1.0, 0, 0], [0, 1.0, 0]])  # current image -> reference image
        self.found = 0
        self.calibration = calibration
        self._centres = np.array([[x0 + p.shape[1] / 2, y0 + p.shape[0] / 2] for p, x0, y0 in self._patches], float)
        self._centres_mm = calibration.image_to_board(self._centres) if len(self._centres) else np.zeros((0, 2))
        self._last = [(0, 0)] * len(self._patches)  # each marker's whole-pixel offset on the frame before

    def update(self, image: np.ndarray) -> np.ndarray:
        """Find the markers in this frame; returns (and keeps) the current -> reference transform."""
        ref, cur = [], []
        for i, (patch, x0, y0) in enumerate(self._patches):
            ph, pw = patch.shape
            found = self._match(image, patch, int(x0), int(y0), self._last[i])
            if found is None:
                continue
            dx, dy = found
            self._last[i] = (int(round(dx)), int(round(dy)))
            centre = (x0 + pw / 2, y0 + ph / 2)
            ref.append(centre)
            cur.append((centre[0] + dx, centre[1] + dy))
        self.found = len(ref)
        if len(ref) >= 3:
            fitted, _ = cv2.estimateAffinePartial2D(np.array(cur, np.float32), np.array(ref, np.float32),
                                                    method=cv2.LMEDS)
            if fitted is not None:
                self.transform = fitted
                return self.transform
        if ref:
            shift = np.median(np.array(ref) - np.array(cur), axis=0)
            self.transform = np.array([[1.0, 0, shift[0]], [0, 1.0, shift[1]]])
        else:
            self.transform = np.array([[1.0, 0, 0], [0, 1.0, 0]])
        return self.transform

    def _match(self, image: np.ndarray, patch: np.ndarray, xi: int, yi: int,
               last: tuple[int, int]) -> tuple[float, float] | None:
        """The marker's offset (sub-pixel) from its reference position, None when it is hidden: near its
        last offset if the peak is there, else in the whole search window."""
        s = self.config.search_px
        local = min(LOCAL_PX, s)
        cx, cy = (min(max(v, local - s), s - local) for v in last)  # the small window stays within the large one
        for (ox, oy), reach in (((cx, cy), local), ((0, 0), s)):
            ph, pw = patch.shape
            # only the search window is turned grey (the same pixels as a grey frame, a fraction of the work)
            window = _grey(image[yi + oy - reach:yi + oy + ph + reach, xi + ox - reach:xi + ox + pw + reach]) \
                .astype(np.float32)
            score = cv2.matchTemplate(window, patch, cv2.TM_CCOEFF_NORMED)
            _, best, _, (bx, by) = cv2.minMaxLoc(score)
            inside = 0 < bx < score.shape[1] - 1 and 0 < by < score.shape[0] - 1
            if reach < s and (best < self.config.min_score or not inside):
                continue  # further than the small window reaches, or hidden: the whole window decides
            if best < self.config.min_score:
                return None
            dx = bx - reach + ox + _vertex(score[by, bx - 1:bx + 2]) if 0 < bx < score.shape[1] - 1 else bx - reach + ox
            dy = by - reach + oy + _vertex(score[by - 1:by + 2, bx]) if 0 < by < score.shape[0] - 1 else by - reach + oy
            return dx, dy
        return None

    def shift_mm(self) -> np.ndarray:
        """How far (board mm, x and y) the markers now lie from where they lay in the reference frame."""
        if not len(self._centres):
            return np.zeros(2)
        a = np.vstack([self.transform, [0.0, 0.0, 1.0]])
        now = cv2.transform(self._centres[None], np.linalg.inv(a)[:2])[0]
        dx, dy = (self.calibration.image_to_board(now) - self._centres_mm).T.tolist()
        return np.array([median(dx), median(dy)])

    def steady(self, u: float, v: float) -> tuple[float, float]:
        """A pixel of the current frame -> where it lies in the reference frame."""
        a = self.transform
        return float(a[0, 0] * u + a[0, 1] * v + a[0, 2]), float(a[1, 0] * u + a[1, 1] * v + a[1, 2])


def _vertex(values: np.ndarray) -> float:
    """Sub-pixel offset of a peak from three samples around it (a parabola's vertex)."""
    left, mid, right = (float(x) for x in values)
    denom = left - 2 * mid + right
    return 0.0 if denom >= 0 else 0.5 * (left - right) / denom


def _most_edge(patch: np.ndarray, side: int) -> tuple[int, int]:
    """Top-left (x, y) of the `side` px square of `patch` with the most gradient energy; (0, 0), the whole patch, when
    the square is no smaller than it."""
    h, w = patch.shape
    if side >= min(h, w):
        return 0, 0
    gx = cv2.Sobel(patch, cv2.CV_32F, 1, 0)
    gy = cv2.Sobel(patch, cv2.CV_32F, 0, 1)
    energy = cv2.boxFilter(gx * gx + gy * gy, -1, (side, side), normalize=False, anchor=(0, 0),
                           borderType=cv2.BORDER_CONSTANT)[:h - side + 1, :w - side + 1]
    y, x = np.unravel_index(int(np.argmax(energy)), energy.shape)
    return int(x), int(y)


def _grey(image: np.ndarray) -> np.ndarray:
    return image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)


class ShiftWatch:
    """A lasting step in where the markers lie (a shoved table, a bumped camera), not the shake around it.

    Every `interval_s` the median marker shift of the last `window_s` is compared with the position the
    table last settled at; a difference over `threshold_mm` is a movement, and the new position becomes
    the baseline. The median over a second averages the shake out (measured on the samples: the
    one-second median wanders by about 3 mm with no movement; a shove of 8 mm shows as 8-9 mm).
    """

    def __init__(self, interval_s: float = 1.0, window_s: float = 1.0, threshold_mm: float = 5.0) -> None:
        self.interval_s, self.window_s, self.threshold_mm = interval_s, window_s, threshold_mm
        self._samples: list[tuple[float, np.ndarray]] = []
        self._baseline: np.ndarray | None = None
        self._last_check: float | None = None
        self.moving = False  # the markers' last few frames lie off the baseline: a movement may be coming (off again
        #                      as soon as they lie back: a shake; kept by a step until the next check calls it)

    RECENT_S = 0.25  # how much of the shift `moving` looks at (a shake of a pixel or two averages out)

    def update(self, t: float, shift_mm: np.ndarray) -> float | None:
        """Feed one frame's shift; returns the size (mm) of a movement found at this frame, else None."""
        self._samples.append((t, np.asarray(shift_mm, float)))
        while self._samples[0][0] < t - self.window_s:
            self._samples.pop(0)
        if self._last_check is None:
            self._last_check = t
        if self._baseline is not None:  # every frame: a shake that came back is no movement coming
            recent = [s for ts, s in self._samples if ts >= t - self.RECENT_S]
            off_x = median([s[0] for s in recent]) - self._baseline[0]
            off_y = median([s[1] for s in recent]) - self._baseline[1]
            self.moving = float(np.hypot(off_x, off_y)) > self.threshold_mm
        if t - self._last_check < self.interval_s:
            return None
        self._last_check = t
        self.moving = False  # this check calls it, either way
        now = np.median(np.array([s for _, s in self._samples]), axis=0)
        if self._baseline is None:
            self._baseline = now
            return None
        moved = float(np.hypot(*(now - self._baseline)))
        if moved <= self.threshold_mm:
            return None
        self._baseline = now
        return moved
