"""When has the table settled? Every ball at rest, and no hand over the table.

A ball is at rest once its filtered board-plane speed has stayed under
`rest_speed_mm_s` for `rest_debounce_ms` (the tracker keeps that clock). The
table settles when every visible confirmed ball is at rest, no ball was lost
while still moving (it may be rolling behind something), no ball that vanished
in flight is unaccounted for (where balls hop; waited for `flight_wait_ms` at
most, then the settle goes ahead flagged), and no hand is over the table. One
settle is emitted per quiet period, on the first frame at which the debounce
has passed: never later, so the score is called the moment the balls stop. A
new period begins when any ball moves faster than `motion_speed_mm_s` (well
above the rest speed, so measurement jitter does not start one), or when a shot
starts (`expect`), however slowly its balls were seen to move.

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
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.geometry import Rect
from rules.events import Place
from vision.config import HandConfig, SettleConfig
from vision.numeric import Halvings, block_means, largest, outside_near
from vision.track import TIME_EPS_S
from vision.types import BoardBall, Track, TrackState

FOREGROUND_SLOWDOWN = 10  # a big foreground blob (a player leaning in) is learnt into the background this much slower
ROLL_MIN_BALLS = 0.5  # a changed blob of this many ball areas or more, changed as much since the last frame: a roll
HALVED_RADIUS_PX = 6.0  # the field's picture is kept halved where no ball on it looks smaller
COMPACT_RADII, COMPACT_FILL = 4.0, 0.4  # a ball's change spans at most this many radii and fills this much of its box


@dataclass(frozen=True)
class Settle:
    t: float  # the first frame at which every ball had been at rest for the debounce time
    tracks: tuple[Track, ...]  # the visible balls at that moment
    confidence: float  # the least sure detection among them
    hidden: tuple[Track, ...] = ()  # lost tracks (not seen lately, e.g. behind a ball that landed in front)
    unseen_landing: tuple[Track, ...] = ()  # balls last seen in flight and never seen land: waited for, in vain
    # balls that vanished in flight beside a resting ball, each with that ball: landed where it lies, hidden by it
    hidden_by: tuple[tuple[Track, Track], ...] = ()
    # balls that vanished in flight over a place where another ball lies: landed there, hidden by it
    landed: tuple[Track, ...] = ()
    # where (image pixels) the field's picture still changed as the table settled, waited for in vain (`FieldPicture`)
    stirring: tuple[float, float] | None = None


class HandWatch:
    """Is a hand (any large non-ball change) over the table in this frame?"""

    def __init__(self, config: HandConfig, table_polygon_px: np.ndarray, image_size: tuple[int, int],
                 ball_radius_px: float, foreground_polygon_px: np.ndarray | None = None) -> None:
        self.config = config
        width, height = image_size
        self.scale = min(1.0, config.analysis_width / width)
        size = (max(1, round(width * self.scale)), max(1, round(height * self.scale)))
        self.size = size
        self.mask = self._fill(table_polygon_px)
        # where large foreground blobs (a hand, a player leaning in) are also tracked, so the detector can
        # ignore ball-coloured pixels on them (lips, a red sleeve); the hand flag itself stays on `mask`
        self.watch = self.mask if foreground_polygon_px is None else self._fill(foreground_polygon_px) | self.mask
        self._watch_is_mask = foreground_polygon_px is None  # then one labelling gives both blobs and hand area
        r = max(ball_radius_px * self.scale, 1.0)
        self.min_area = config.hand_min_area_balls * np.pi * r * r
        self.roll_area = ROLL_MIN_BALLS * np.pi * r * r
        k = round(1 / self.scale)
        # the whole factor the frame shrinks by (1280 -> 320: 4), None when it shrinks by none
        self.factor = k if abs(k * self.scale - 1) <= 1e-9 and width == k * size[0] and height == k * size[1] \
            else None
        self.cut = self._cut()
        x0, y0, x1, y1 = self.cut
        self.mask, self.watch = self.mask[y0:y1, x0:x1].copy(), self.watch[y0:y1, x0:x1].copy()
        self._background: np.ndarray | None = None
        self._last: np.ndarray | None = None  # the previous frame, shrunk: what moved since
        self._moved_t = -math.inf  # when a large foreground blob last moved
        self.present = False
        self.rolling = False  # something ball-sized moved over the watched surface on this frame and the one before
        self._rolled = False  # ... on the frame before
        self.area_px = 0
        self.foreground = np.zeros((y1 - y0, x1 - x0), np.uint8)  # 1 = inside a large changed blob (within `cut`)
        self._moved_foreground = self.foreground  # `foreground` when it last moved

    def _cut(self) -> tuple[int, int, int, int]:
        """The part of the shrunk frame worth shrinking (x0, y0, x1, y1): the watched area and a margin of 4 px
        (the blur reaches 2, the opening 1), so every watched pixel is the same as in the whole shrunk frame.
        Only when the frame shrinks by a whole factor (1280 -> 320): then a shrunk pixel is the mean of its own
        block, wherever the cut starts. Otherwise the whole frame."""
        whole = (0, 0, self.size[0], self.size[1])
        if self.factor is None:
            return whole
        rows, cols = np.flatnonzero(self.watch.any(axis=1)), np.flatnonzero(self.watch.any(axis=0))
        if not len(rows):
            return whole
        m = 4
        return (max(int(cols[0]) - m, 0), max(int(rows[0]) - m, 0), min(int(cols[-1]) + 1 + m, self.size[0]),
                min(int(rows[-1]) + 1 + m, self.size[1]))

    def _fill(self, polygon_px: np.ndarray) -> np.ndarray:
        mask = np.zeros((self.size[1], self.size[0]), np.uint8)
        cv2.fillPoly(mask, [np.round(np.asarray(polygon_px) * self.scale).astype(np.int32)], 1)
        return mask

    def covers(self, u: float, v: float) -> bool:
        """Is full-frame pixel (u, v) on a large foreground blob (a hand or a person, not a ball)?"""
        x, y = int(u * self.scale) - self.cut[0], int(v * self.scale) - self.cut[1]
        return 0 <= y < self.foreground.shape[0] and 0 <= x < self.foreground.shape[1] and bool(self.foreground[y, x])

    def halved(self) -> tuple[int, int, int, int, int] | None:
        """The region (x0, y0, x1, y1, full-resolution pixels) this watch asks `Halvings` for, and by how much it
        shrinks it; None when it shrinks by no whole factor."""
        if self.factor is None:
            return None
        k = self.factor
        x0, y0, x1, y1 = self.cut
        return x0 * k, y0 * k, x1 * k, y1 * k, k

    def update(self, image: np.ndarray, t: float, halvings: Halvings | None = None) -> bool:
        """Is a hand over the table at time `t` (seconds)? A large changed blob that has moved within
        `hand_still_ms`: one that has stood still that long (a player waiting at the Play Line, whose head the
        camera sees over the table) touches nothing, and is learnt into the background like the table.
        `halvings`: the frame's, shared with the detector."""
        x0, y0, x1, y1 = self.cut
        k = self.factor
        if k is None:
            shrunk = cv2.resize(image, self.size, interpolation=cv2.INTER_AREA)
        else:
            shared = None if halvings is None else halvings.block_means(x0 * k, y0 * k, x1 * k, y1 * k, k)
            shrunk = block_means(image[y0 * k:y1 * k, x0 * k:x1 * k], k) if shared is None else shared
        small = cv2.GaussianBlur(shrunk, (5, 5), 0)
        small = small.astype(np.float32)
        if self._background is None or self._last is None:
            self._background, self._last = small, small
            return False
        changed = cv2.bitwise_and(self._changed(small, self._background), self.watch)
        changed = cv2.morphologyEx(changed, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        count, comp = cv2.connectedComponents(changed, connectivity=8, ltype=cv2.CV_32S)
        areas = _areas(comp, changed, count)
        big = np.flatnonzero(areas[1:] >= self.min_area) + 1
        self.foreground = np.isin(comp, big).astype(np.uint8) if len(big) else np.zeros_like(changed)
        # moved: more changed since the last frame than a rolling ball changes (its old and new place), or the
        # blobs grown that much since they last moved (a hand reaching in slowly changes little from one frame to
        # the next, and had been taken for one standing still from the frame it came in; a still blob only shrinks,
        # as it is learnt into the background)
        since_last = self._changed(small, self._last)  # what changed since the last frame: hands and rolls
        if len(big) and (cv2.countNonZero(since_last & self.foreground) >= self.min_area / 2
                         or np.count_nonzero(self.foreground > self._moved_foreground) >= self.min_area / 2):
            self._moved_t = t
            self._moved_foreground = self.foreground
        self._roll(since_last, changed, comp, areas)
        self._last = small
        if self._watch_is_mask:  # `changed` is already within the hand mask
            self.area_px = int(areas[1:].max()) if count > 1 else 0
        else:
            self.area_px = self._largest(changed & self.mask)
        still = t - self._moved_t >= self.config.hand_still_s
        self.present = self.area_px >= self.min_area and not still
        # moving big blobs stay out of the background (a hand reaching in must not become the table); outside
        # the hand mask they follow it ten times slower, so a lasting change (a lighting step) is learnt
        # eventually; a blob that has stood still `hand_still_ms` is learnt like the rest
        rest = (self.foreground == 0).astype(np.uint8)
        cv2.accumulateWeighted(small, self._background, self.config.background_rate,
                               mask=None if still else rest)
        if len(big) and not self.present and not still:
            cv2.accumulateWeighted(small, self._background, self.config.background_rate / FOREGROUND_SLOWDOWN,
                                   mask=self.foreground)
        return self.present

    def _roll(self, since_last: np.ndarray, changed: np.ndarray, comp: np.ndarray, areas: np.ndarray) -> None:
        """`rolling`: a blob over the watched surface (`mask`), changed against the background, ball-sized (at least
        `ROLL_MIN_BALLS` ball areas, under a hand's), of which as much changed since the last frame too, on this
        frame and the one before. It sees a rolling ball whatever its colour: a ball the colour detector misses
        while it rolls (light, blurred, small) still holds the settle (starcluster_v8's peach marble, grey while it
        rolled at 1.5 m/s). A ball at rest is learnt into the background and changes nothing from frame to frame;
        the two frames keep out a flicker of the light on an edge."""
        moved = cv2.bitwise_and(since_last, changed)
        if not self._watch_is_mask:
            moved = cv2.bitwise_and(moved, self.mask)
        counts = np.bincount(comp[moved > 0], minlength=len(areas))
        now = bool(np.any((areas >= self.roll_area) & (areas < self.min_area) & (counts >= self.roll_area)))
        self.rolling, self._rolled = now and self._rolled, now

    def _changed(self, small: np.ndarray, reference: np.ndarray) -> np.ndarray:
        """1 where a channel differs from `reference` by more than `hand_diff_grey`."""
        diff = largest(cv2.absdiff(small, reference))
        return (diff > self.config.hand_diff_grey).astype(np.uint8)

    @staticmethod
    def _largest(binary: np.ndarray) -> int:
        count, comp = cv2.connectedComponents(binary, connectivity=8, ltype=cv2.CV_32S)
        return int(_areas(comp, binary, count)[1:].max()) if count > 1 else 0


class FieldPicture:
    """Has the field of play looked the same over the last debounce? Where a ball the detector misses rolls on (a
    marble a few pixels wide, its colour washed into the table's), the tracks all rest and the table would settle
    under it: over the 36 Star Cluster variants, every settle called with a ball in flight was such a marble. The
    picture sees it whatever its colour: the frames of the field (past a Play Line, the table a ball's length past it,
    out of the shooter's reach) while the table is in play are kept, and a settle
    waits while the newest frame differs from the one a debounce earlier by a blob of at least
    `field_change_balls` ball areas (at the ball size where it lies) and under a hand's. A pixel differs when it
    lies more than `field_change_grey` outside the range the earlier frame takes within a pixel of it, after the
    camera's shake is taken out (the stabiliser's transforms): the edges of slots, the compression's blocks and a
    shake of a pixel differ by nothing. Where the smallest ball on the field is `HALVED_RADIUS_PX` wide or more,
    the field is kept halved (`factor` 2: a Piratenbillard board's balls; from the frame's shared halvings)."""

    def __init__(self, config: SettleConfig, hand_min_area_balls: float, field_polygon_px: np.ndarray,
                 image_size: tuple[int, int], ball_radius_px: Callable[[np.ndarray], np.ndarray],
                 smallest_radius_px: float) -> None:
        self.config = config
        self.hand_min_area_balls = hand_min_area_balls
        self.factor = k = 2 if smallest_radius_px >= HALVED_RADIUS_PX else 1
        width, height = image_size
        corners = np.asarray(field_polygon_px, float)
        x0, y0 = np.clip(np.floor(corners.min(axis=0) / k) * k, 0, [width // k * k, height // k * k]).astype(int)
        x1, y1 = np.clip(np.ceil((corners.max(axis=0) + 1) / k) * k, 0, [width // k * k, height // k * k]).astype(int)
        self.box = (int(x0), int(y0), int(x1), int(y1))  # full-frame pixels, multiples of `factor`
        self.mask = np.zeros(((y1 - y0) // k, (x1 - x0) // k), np.uint8)
        cv2.fillPoly(self.mask, [np.round((corners - [x0, y0]) / k).astype(np.int32)], 1)
        self.ball_radius_px = ball_radius_px  # full-frame pixels -> the apparent radius of a ball lying there
        self._frames: deque[tuple[float, np.ndarray, np.ndarray]] = deque()  # (t, field pixels, 3x3 steadying)

    def halved(self) -> tuple[int, int, int, int, int] | None:
        """The region (x0, y0, x1, y1, full-resolution pixels) this picture asks `Halvings` for, and by how much it
        shrinks it; None when it keeps the field whole."""
        return (*self.box, self.factor) if self.factor > 1 else None

    def remember(self, t: float, image: np.ndarray, steady: np.ndarray | None,
                 halvings: Halvings | None = None) -> None:
        """Keep this frame's field (a copy: the decoder may reuse the frame), and of the older ones only the
        newest a debounce before it. `halvings`: the frame's, shared with the other stages."""
        x0, y0, x1, y1 = self.box
        k = self.factor
        if k == 1:
            field = image[y0:y1, x0:x1].copy()
        else:
            shared = None if halvings is None else halvings.block_means(x0, y0, x1, y1, k)
            field = block_means(image[y0:y1, x0:x1], k) if shared is None else shared.copy()
        self._frames.append((t, field, _homogeneous(steady)))
        while len(self._frames) > 1 and self._frames[1][0] <= t - self.config.rest_debounce_s + TIME_EPS_S:
            self._frames.popleft()

    def forget(self) -> None:
        """The table settled: nothing to compare with until it is in play again."""
        self._frames.clear()

    def changed(self) -> tuple[float, float] | None:
        """Where (full-frame pixels) the newest frame kept differs from the one a debounce before it by a blob of
        ball size, if anywhere; None where it does not, or no frame is that old."""
        if len(self._frames) < 2 or self._frames[0][0] > self._frames[-1][0] - self.config.rest_debounce_s \
                + TIME_EPS_S:
            return None
        (_, before, then), (_, now, steady) = self._frames[0], self._frames[-1]
        x0, y0, _, _ = self.box
        k = self.factor
        to_box = np.array([[1.0 / k, 0, -x0 / k], [0, 1.0 / k, -y0 / k], [0, 0, 1.0]])  # full frame -> kept pixels
        # the earlier frame's field, moved to where the camera now sees it: its pixels -> steadied -> this frame's
        move = to_box @ np.linalg.inv(steady) @ then @ np.linalg.inv(to_box)
        if not np.allclose(move, np.eye(3), atol=1e-3):
            before = cv2.warpAffine(before, move[:2], (before.shape[1], before.shape[0]), flags=cv2.INTER_LINEAR,
                                    borderMode=cv2.BORDER_REPLICATE)
        differs = largest(outside_near(now, before))
        binary = cv2.bitwise_and((differs > int(self.config.field_change_grey)).astype(np.uint8), self.mask)
        count, _, stats, centres = cv2.connectedComponentsWithStats(binary, connectivity=8, ltype=cv2.CV_32S)
        if count < 2:
            return None
        centres = (centres[1:] + 0.5) * k - 0.5 + [x0, y0]  # kept pixels' centres -> full-frame pixels
        radii = np.maximum(self.ball_radius_px(centres), 1.0) / k  # in kept pixels
        pixels = stats[1:, cv2.CC_STAT_AREA]
        areas = pixels / (np.pi * radii ** 2)
        sides = np.maximum(stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT])
        # a ball's change is compact: where it was and where it is, or both in one blob of a few radii; an edge the
        # steadying left a pixel off is a thin line along it (the far end of a table seen at a slant)
        compact = (sides <= COMPACT_RADII * radii) & (pixels >= COMPACT_FILL * stats[1:, cv2.CC_STAT_WIDTH]
                                                      * stats[1:, cv2.CC_STAT_HEIGHT])
        ball_sized = np.flatnonzero(compact & (areas >= self.config.field_change_balls)
                                    & (areas < self.hand_min_area_balls))
        if not len(ball_sized):
            return None
        u, v = centres[ball_sized[np.argmax(areas[ball_sized])]]
        return float(u), float(v)


def _homogeneous(steady: np.ndarray | None) -> np.ndarray:
    return np.eye(3) if steady is None else np.vstack([steady, [0.0, 0.0, 1.0]])


def _areas(comp: np.ndarray, binary: np.ndarray, count: int) -> np.ndarray:
    """Pixels per component (OpenCV's CC_STAT_AREA, 0 for the background), counted over the set pixels only:
    OpenCV's full statistics cost several times the labelling."""
    return np.bincount(comp[binary > 0], minlength=count)


class SettleWatch:
    """Turns per-frame tracks (and the hand flag) into one settle per quiet period.

    Where balls fly (`flying`: Piratenbillard's hops), a ball whose track vanished while it moved is in the air
    somewhere; where they roll, one that vanished over the `field` of play (the Star Cluster board, beyond any
    shooter's reach) while no hand was over it is still rolling there, lost by the detector (a small marble far
    up the board: starcluster_v1, _v6). Either is unaccounted for until its track is seen again, a new track of
    its colour turns up, it vanished beside a ball that hides it (within two ball diameters), or it was last seen
    beyond the `table`'s edge heading away (off the board). Nothing settles while one is unaccounted for, for up
    to `flight_wait_ms` (a hop) or `roll_wait_ms` (a roll); then the settle goes ahead with it in
    `unseen_landing`, for a person to review.
    """

    def __init__(self, config: SettleConfig, table: Rect | None = None, flying: bool = False,
                 ball_mm: float = 0.0, field: Rect | None = None, rolled_in: Rect | None = None,
                 past_line: Rect | None = None) -> None:
        self.config = config
        self.table = table
        self.flying = flying
        self.field = field
        self.rolled_in = rolled_in
        self.past_line = past_line  # the table past its Play Line (None: no line)
        self.ball_mm = ball_mm
        self._armed = True  # the table has not been reported settled since the last motion
        self._start: float | None = None
        self._moving: dict[int, Track] = {}  # confirmed tracks moving on the last frame
        self._vanished: dict[int, tuple[float, Track]] = {}  # id -> (when it vanished, its last moving state)
        self._hidden_by: dict[int, tuple[Track, Track]] = {}  # id -> (its last moving state, the ball hiding it)
        self._moved_t = -math.inf  # when a ball was last seen moving for real
        # where balls roll in past a Play Line: when a ball was last seen moving, or found anew (`_rolled_in`)
        self._stirred_t = -math.inf
        self._settled_with: set[int] = set()  # the balls seen at rest when the table last settled
        self._settled_t = -math.inf  # when the table last settled
        self._hand = False  # a hand was over the table on the last frame
        self._hand_left_t = -math.inf  # when a hand last left the table
        self._stirred_since: float | None = None  # when the field's picture first held a settle in this quiet period

    def update(self, t: float, tracks: tuple[Track, ...], hand: bool, table_moving: bool = False,
               born: tuple[BoardBall, ...] = (), rolling: bool = False,
               picture: Callable[[], tuple[float, float] | None] | None = None) -> Settle | None:
        """`table_moving`: the table's markers have left where they lay and the movement is not yet called
        (`vision.stabilise.ShiftWatch.moving`); the settle waits for that call, so a shove during a shot is
        reported before the shot's settle and charged to its shooter. `born`: the detections that started a new
        track on this frame (`TrackerUpdate.born`). `rolling`: something ball-sized moved over the board on this
        frame, whatever its colour (`HandWatch.rolling`); where balls roll in past a Play Line, it restarts the
        quiet period as a ball seen moving does. `picture`: where the field's picture changed over the last
        debounce (`FieldPicture.changed`), asked only when the table would settle: the settle waits while it did,
        for `roll_wait_ms` at most, then goes ahead with `stirring` set, for a person to review."""
        if self._start is None:
            self._start = t
        if self._hand and not hand:
            self._hand_left_t = t
        self._hand = hand
        visible = [tr for tr in tracks if tr.state is TrackState.CONFIRMED]
        in_air = self._in_air(t, tracks, hand) if self.flying or self.field is not None else False
        lost_moving = [tr for tr in tracks if tr.state is TrackState.LOST and not tr.at_rest and (
            math.hypot(tr.vx, tr.vy) > self.config.rest_speed_mm_s and not self._lying_in_gutter(tr)
            and not self._flicker(tr) or self._rolled_out(tr, hand) or self._lost_rolling(t, tr))]
        if any(tr.state is not TrackState.TENTATIVE and tr.fast_t is not None and tr.fast_t > self._settled_t
               for tr in tracks) or any(not self._in_hand(tr) for tr in lost_moving) or self._new_in_gutter(visible):
            self._armed = True  # real motion, borne out by the tracker (not jitter, nor a lone fast measurement)
        moved = any(math.hypot(tr.vx, tr.vy) > self.config.motion_speed_mm_s for tr in visible)
        if self.rolled_in is not None and (moved or rolling or self._rolled_in(t, born)):
            self._stirred_t = t
        if moved:
            self._moved_t = t
            self._stirred_since = None
        if any(not tr.at_rest for tr in visible) or lost_moving or in_air \
                or t - self._stirred_t < self.config.rest_debounce_s - TIME_EPS_S:
            return None
        if hand or table_moving or not self._armed or t - self._start < self.config.rest_debounce_s \
                or t - self._hand_left_t < self.config.rest_debounce_s - TIME_EPS_S:
            return None  # a hand is over the table or just left it, it is moved, nothing moved, or balls are found
        stirring = picture() if picture is not None else None
        if stirring is not None:
            self._stirred_since = t if self._stirred_since is None else self._stirred_since
            if t - self._stirred_since < self.config.roll_wait_s - TIME_EPS_S:
                return None
        self._stirred_since = None
        self._armed, self._settled_t = False, t
        self._settled_with = {tr.id for tr in visible}
        confidence = min((tr.confidence for tr in visible), default=1.0)
        unseen = tuple(last for _, last in self._vanished.values())
        self._vanished.clear()
        lost = {tr.id: tr for tr in tracks if tr.state is TrackState.LOST}
        # a ball last seen over a place where another ball lies is there (piratenbillard/stacked_pair: stacked on a
        # ball of its own colour; _v2: landed on the ball on (0,3), beside a nearer one on (0,2)); one last seen over
        # an empty place flew on, behind the ball hiding it, asked again now (the tracks have settled)
        hidden_by = tuple((lost[i], self._hider_of(last, lost[i], tracks) or hider)
                          for i, (last, hider) in self._hidden_by.items()
                          if i in lost and not self.beside(lost[i], tracks))
        landed = tuple(lost[i] for i in self._hidden_by if i in lost and self.beside(lost[i], tracks))
        self._hidden_by.clear()
        return Settle(t, tuple(visible), confidence, tuple(lost.values()), unseen, hidden_by, landed, stirring)

    def expect(self, t: float) -> None:
        """A shot started at `t`: the table is to be read once it is quiet again, however slowly its balls were seen
        to move. A ball struck out of sight may be first found slowing to rest (`vision.games.piratenbillard`); on
        starcluster/knock_into_slot the marble knocked into a slot was seen at 120 mm/s at most, under the motion
        speed, and the shooter's ball rolled back behind the Play Line, where nothing is looked for: the table was
        read 9.8 s later, after the umpire's lift, where the shot's outcome had shown since 4.8 s. When nothing had
        been seen moving since the last settle, not sooner than the debounce after the start: a shot whose ball is
        not seen at all (starcluster_v25's, 2.4 px in radius) would be read at once, while the ball rolls."""
        if not self._armed:
            self._stirred_t = max(self._stirred_t, t)
        self._armed = True

    def _new_in_gutter(self, visible: list[Track]) -> bool:
        """Is a ball at rest in a gutter that was not seen at rest when the table last settled? It got there in a
        shot, however little it was seen to move: a marble let go over a gutter beside the Play Line drops into it a
        few millimetres from the hand, never over the motion speed, and the table never settled with it
        (starcluster_v22: two gutter balls missed, p1 7 where the truth has 5). A ball leaves a gutter only in a
        hand, so this is a change the table is to be read for."""
        return any(tr.at_rest and tr.id not in self._settled_with and tr.location is not None
                   and tr.location.place is Place.GUTTER for tr in visible)

    def _rolled_in(self, t: float, born: tuple[BoardBall, ...]) -> bool:
        """Was a ball found anew where it can only have rolled in (`rolled_in`: a Star Cluster table a ball's length
        beyond the Play Line, out of the shooter's reach), outside the gutters, within `roll_wait_ms` of the last
        time a ball was seen moving for real? Such a ball, like one seen moving, restarts the table's quiet
        period: a ball is at rest once its own track has been slow for the debounce time, but a ball just released
        may not have a track yet (starcluster_v4's was found once, on the very frame the table settled, 0.1 s
        after the release, and read lying in the play area)."""
        assert self.rolled_in is not None
        return t - self._moved_t < self.config.roll_wait_s and any(
            self.rolled_in.contains((ball.x, ball.y))
            and (ball.location is None or ball.location.place is not Place.GUTTER) for ball in born)

    def _in_air(self, t: float, tracks: tuple[Track, ...], hand: bool) -> bool:
        """Is a ball that vanished in flight (or rolling over the field) still unaccounted for, and not yet waited
        for? (`hand`: one is over the table, and may have lifted a rolling ball away.)"""
        now = {tr.id: tr for tr in tracks}
        for track_id, last in self._moving.items():
            seen = now.get(track_id)
            if (seen is None or seen.state is TrackState.LOST) and track_id not in self._vanished:
                self._vanished[track_id] = (t, last)
        for track_id, (_, last) in list(self._vanished.items()):
            seen = now.get(track_id)
            again = seen is not None and seen.state is TrackState.CONFIRMED or self._found(last, tracks)
            hider = None if again else self._hider_of(last, seen, tracks)
            if again or hider is not None or self._left_table(last):
                del self._vanished[track_id]
                if hider is not None:
                    self._hidden_by[track_id] = (last, hider)
        for track_id, (last, _) in list(self._hidden_by.items()):  # seen again after all: not hidden
            if track_id in now and now[track_id].state is TrackState.CONFIRMED or self._found(last, tracks):
                del self._hidden_by[track_id]
        # hops: any ball moving; rolls: one rolling for real (over the motion speed, not a resting ball's jitter)
        # over the field with no hand over the table
        self._moving = {tr.id: tr for tr in tracks if tr.state is TrackState.CONFIRMED and not tr.at_rest and (
            math.hypot(tr.vx, tr.vy) > self.config.rest_speed_mm_s if self.flying else
            math.hypot(tr.vx, tr.vy) > self.config.motion_speed_mm_s and not hand and self.field is not None
            and self.field.contains((tr.x, tr.y)))}
        wait = self.config.flight_wait_s if self.flying else self.config.roll_wait_s
        return any(t - since < wait for since, _ in self._vanished.values())

    def _rolled_out(self, tr: Track, hand: bool) -> bool:
        """Was the lost track `tr` still rolling by its window (not `slow`) over the open field (not in a slot or
        a gutter, where a rolling ball comes to rest), with no hand over the table? A marble rolled up the board
        slows to a stop at the top of its roll and rolls back: lost there, its filtered speed had fallen to a
        resting ball's, and the table settled while it rolled back down (starcluster_v10)."""
        return self.field is not None and not self.flying and not tr.slow and not hand \
            and self.field.contains((tr.x, tr.y)) and tr.location is not None and tr.location.place is Place.GROUPED

    def _lying_in_gutter(self, tr: Track) -> bool:
        """Was the lost track `tr` lying in a gutter when last seen, slow by its window however its filter jittered?
        It is no ball lost while moving: a ball leaves a gutter only in a hand, and one lost there is read where it
        was last seen (`vision.pipeline._in_gutter_at_last`). starcluster_v2's gutter ball, its filter at 14 mm/s
        over a resting ball's 12 as the umpire's hand came, held the settle until its coasting had run out, past
        the lift: the truth's settle had no reading to pair with. Not where balls fly."""
        return not self.flying and tr.slow and tr.location is not None and tr.location.place is Place.GUTTER

    def _in_hand(self, tr: Track) -> bool:
        """Was the lost track `tr` never fast, and last seen on the shooter's side of a Play Line, outside the
        gutters? Such a track is most likely a hand of a ball's colour, or a ball in one: its filtered speed is its
        jitter, and a ball that side of the line cannot change the reading (the table tilts down towards the
        player). It does not stir a settled table: on starcluster_v36 a hand's track lost there did, and the table
        was read empty at 1.23 s while the hand hid the marble it had just put down in the gutter beside it (and
        starcluster/knock_into_slot's was read again after the umpire lifted a ball from behind the line). While a
        shot is in play it still holds the settle for as long as it coasts, as any ball lost while moving: it may be
        the shooter's ball, lost as it is let go."""
        return tr.fast_t is None and self._short_of_line(tr) \
            and (tr.location is None or tr.location.place is not Place.GUTTER)

    def _short_of_line(self, tr: Track) -> bool:
        """Does the track lie on the shooter's side of a Play Line (False on a table without one)?"""
        return self.past_line is not None and not self.past_line.contains((tr.x, tr.y))

    def _lost_rolling(self, t: float, tr: Track) -> bool:
        """Was the lost track `tr` lost before it could be seen at rest (it moved since it was found, and its window
        was not slow when it was last seen: still rolling, or creeping)? A ball is at rest only once it has been seen
        slow for the debounce time; one lost sooner may still be rolling, unseen for a few frames.
        - Once fast, it holds the settle until it has been unseen for the debounce time. A marble rolled into a
          slot's mouth slowed to a stop there, was lost for two frames and rolled back out: the table settled with
          it in the slot (starcluster_v16). A failed marble creeping back along the Play Line two seconds after it
          was last fast was lost for three frames, and the table settled while it crept (starcluster_v7).
        - Never fast, but followed for the debounce time or more and a ball's radius from where it was first seen
          (`_crept_since_found`), it holds the settle while the tracker keeps it (`tracking.lost_ms`). A marble first
          found creeping along the Play Line is found on few frames: lost after 0.43 s, and then for over the
          debounce time again and again, the table settled under it five times while it crept on (starcluster_v30).
          One once fast and held so long cost three variants their exact scores.
        Not in a gutter: a ball leaves one only in a hand, and one lost there is read where it was last seen
        (`vision.pipeline._in_gutter_at_last`: starcluster_v14's, lifted by the umpire 0.74 s after it stopped
        dead). Where balls fly, the hop's own watch (`_in_air`) stands for this."""
        if self.flying or tr.slow or tr.location is not None and tr.location.place is Place.GUTTER:
            return False
        if tr.fast_t is not None:
            return t - tr.last_seen_t < self.config.rest_debounce_s
        return self._crept_since_found(tr)

    def _flicker(self, tr: Track) -> bool:
        """Was the track, never fast, lost within a debounce time of being found, where it was found (within a
        quarter of a ball)? Its speed is then the filter's reading of a few detections' jitter, not a ball's: a
        red glint past the Play Line followed for three frames, 1 mm from where it was found, was lost at 12.2 mm/s
        (over the rest speed) and held starcluster/full_game's settle 0.3 s, until the filter let the speed go."""
        return tr.fast_t is None and tr.born_at is not None and tr.born_t is not None \
            and tr.last_seen_t - tr.born_t < self.config.rest_debounce_s - TIME_EPS_S \
            and math.dist(tr.born_at, (tr.x, tr.y)) < self.ball_mm / 4

    def _crept_since_found(self, tr: Track) -> bool:
        """Was the track, never fast, followed for a debounce time or more, and does it lie a ball's radius from
        where it was first seen, past any Play Line? A flicker of a slot's shadow stays where it is; a hand of a
        ball's colour reaching in beside the line is followed for a few frames (starcluster_v8: 0.13-0.17 s); on the
        shooter's side of the line a ball is in a hand (starcluster/knock_into_slot: red's, followed 1.3 s over
        28 mm, 9 mm short of the line, held the table's settle past the umpire's lift)."""
        if self._short_of_line(tr):
            return False
        return tr.born_at is not None and tr.born_t is not None \
            and tr.last_seen_t - tr.born_t >= self.config.rest_debounce_s - TIME_EPS_S \
            and math.dist(tr.born_at, (tr.x, tr.y)) >= self.ball_mm / 2

    def _found(self, last: Track, tracks: tuple[Track, ...]) -> bool:
        """Seen again as a new track of its colour: one born since it was last seen, or one born beside where it
        was last seen while it was still followed (the tracker split one ball in two: starcluster/full_game's
        first shot held its settle for the roll wait)."""
        return any(tr.state is TrackState.CONFIRMED and tr.colour == last.colour and tr.id != last.id
                   and tr.born_t is not None and (tr.born_t >= last.last_seen_t or (
                       last.born_t is not None and tr.born_t >= last.born_t and tr.born_at is not None
                       and math.dist(tr.born_at, (last.x, last.y)) <= 2 * self.ball_mm)) for tr in tracks)

    @staticmethod
    def beside(lost: Track, tracks: tuple[Track, ...]) -> bool:
        """Does another ball lie in the place the lost track was last seen over?"""
        return lost.location is not None and any(tr.id != lost.id and tr.location == lost.location for tr in tracks)

    def _hider(self, last: Track, tracks: tuple[Track, ...]) -> Track | None:
        """The resting ball, within two ball diameters, that a ball vanished beside (`last`: its lost track): it
        lies hidden by it (the nearest, of several)."""
        near = [tr for tr in tracks if tr.state is TrackState.CONFIRMED and tr.at_rest
                and math.hypot(tr.x - last.x, tr.y - last.y) <= 2 * self.ball_mm]
        return min(near, key=lambda tr: math.hypot(tr.x - last.x, tr.y - last.y), default=None)

    def _hider_of(self, last: Track, lost: Track | None, tracks: tuple[Track, ...]) -> Track | None:
        """The resting ball hiding a ball that vanished in flight: the one beside where it was last seen (`last`),
        else beside where its lost track has coasted to since (`lost`: it flew on behind a ball). Where it was seen
        comes first: a track lost at hop speed coasts on its filter's velocity, piratenbillard_v16's capturing ball
        374 mm, past the captured ball it landed beside (73 mm on) to a far ball of another player's starting row,
        which it was read hidden by: a capture read as a secured ball."""
        return self._hider(last, tracks) or (self._hider(lost, tracks) if lost is not None else None)

    def _left_table(self, last: Track) -> bool:
        """Last seen beyond the table's edge, heading away from it: off the board."""
        t = self.table
        if t is None or t.contains((last.x, last.y)):
            return False
        cx, cy = (t.x_min + t.x_max) / 2, (t.y_min + t.y_max) / 2
        return (last.x - cx) * last.vx + (last.y - cy) * last.vy > 0

    @property
    def quiet(self) -> bool:
        """True between a settle and the next motion."""
        return not self._armed
