"""When has the table settled? Every ball at rest, and no hand over the table.

A ball is at rest once its filtered board-plane speed has stayed under
`rest_speed_mm_s` for `rest_debounce_ms` (the tracker keeps that clock). The
table settles when every visible confirmed ball is at rest, no ball was lost
while still moving (it may be rolling behind something), and no hand is over
the table. One settle is emitted per quiet period, on the first frame at which
the debounce has passed: never later, so the score is called the moment the
balls stop. A new period begins when any ball moves faster than
`motion_speed_mm_s` (well above the rest speed, so measurement jitter does not
start one).

Hands (the Autodarts lesson: never call while a hand is over the board) are
found without a model: the frame, shrunk to `analysis_width`, is compared with
a learnt picture of the table; a changed blob over the playing surface (the
Star Cluster board beyond the Play Line, where the shooter's own hand never
is; the Piratenbillard grid) bigger than
`hand_min_area_balls` ball areas is not a ball, so it is a hand (or an arm, or
a player leaning in). The picture follows slow lighting drift everywhere
nothing has changed, and absorbs resting balls while no hand is present.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.config import PipelineConfig
from vision.types import Track, TrackState


@dataclass(frozen=True)
class Settle:
    t: float  # the first frame at which every ball had been at rest for the debounce time
    tracks: tuple[Track, ...]  # the visible balls at that moment
    confidence: float  # the least sure detection among them


class HandWatch:
    """Is a hand (any large non-ball change) over the table in this frame?"""

    def __init__(self, config: PipelineConfig, table_polygon_px: np.ndarray, image_size: tuple[int, int],
                 ball_radius_px: float) -> None:
        self.config = config
        width, height = image_size
        self.scale = min(1.0, config.analysis_width / width)
        size = (max(1, round(width * self.scale)), max(1, round(height * self.scale)))
        self.size = size
        self.mask = np.zeros((size[1], size[0]), np.uint8)
        cv2.fillPoly(self.mask, [np.round(np.asarray(table_polygon_px) * self.scale).astype(np.int32)], 1)
        r = max(ball_radius_px * self.scale, 1.0)
        self.min_area = config.hand_min_area_balls * np.pi * r * r
        self._background: np.ndarray | None = None
        self.present = False
        self.area_px = 0

    def update(self, image: np.ndarray) -> bool:
        small = cv2.GaussianBlur(cv2.resize(image, self.size, interpolation=cv2.INTER_AREA), (5, 5), 0)
        small = small.astype(np.float32)
        if self._background is None:
            self._background = small
            return False
        diff = cv2.absdiff(small, self._background)
        diff = cv2.max(cv2.max(diff[..., 0], diff[..., 1]), diff[..., 2])
        changed = cv2.bitwise_and((diff > self.config.hand_diff_grey).astype(np.uint8), self.mask)
        changed = cv2.morphologyEx(changed, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        count, _, stats, _ = cv2.connectedComponentsWithStats(changed, connectivity=8)
        self.area_px = int(stats[1:, cv2.CC_STAT_AREA].max()) if count > 1 else 0
        self.present = self.area_px >= self.min_area
        still = (changed == 0).astype(np.uint8) if self.present else None
        cv2.accumulateWeighted(small, self._background, self.config.background_rate, mask=still)
        return self.present


class SettleWatch:
    """Turns per-frame tracks (and the hand flag) into one settle per quiet period."""

    def __init__(self, config: PipelineConfig) -> None:
        self.config = config
        self._armed = True  # the table has not been reported settled since the last motion
        self._start: float | None = None

    def update(self, t: float, tracks: tuple[Track, ...], hand: bool) -> Settle | None:
        if self._start is None:
            self._start = t
        visible = [tr for tr in tracks if tr.state is TrackState.CONFIRMED]
        lost_moving = any(tr.state is TrackState.LOST and not tr.at_rest
                          and math.hypot(tr.vx, tr.vy) > self.config.rest_speed_mm_s for tr in tracks)
        if any(tr.state is not TrackState.TENTATIVE and math.hypot(tr.vx, tr.vy) > self.config.motion_speed_mm_s
               for tr in tracks) or lost_moving:
            self._armed = True  # real motion (well above the rest speed, so jitter does not count)
        if any(not tr.at_rest for tr in visible) or lost_moving:
            return None
        if hand or not self._armed or t - self._start < self.config.rest_debounce_s:
            return None  # a hand is over the table, nothing moved, or the balls are still being found
        self._armed = False
        confidence = min((tr.confidence for tr in visible), default=1.0)
        return Settle(t, tuple(visible), confidence)

    @property
    def quiet(self) -> bool:
        """True between a settle and the next motion."""
        return not self._armed
