"""Multi-ball tracking on the board plane: one Kalman filter per ball, Hungarian matching per colour.

Tracking runs in board millimetres, not pixels, so the gates and the rest
speed mean the same thing under any camera. The motion model is constant
velocity with white-acceleration noise, which suits rolling balls; a hop
(Piratenbillard) or a hard strike shows up as a large innovation, so the gate
grows with the track's speed and with the time since it was last seen. Balls
are only ever matched to detections of their own colour: two players' balls
never swap identities. A track is reported after `confirm_hits` detections and
kept LOST for `lost_ms` so a hand reaching over it does not end it.

Rest is not judged from the filter's velocity: at low resolution a resting
ball's measured centre jitters by a few mm from frame to frame, which the
filter turns into tens of mm/s. Instead each track keeps its measurements of
the last `rest_debounce_ms`; its rest speed is the distance between the
medians of the window's older and newer halves over the time between them.
Medians ignore jitter and the odd bad centre, and a ball still creeping into
a slot at 10 mm/s still moves its median, so the rest speed can be low.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice

import numpy as np

from rules.events import Location
from vision.assignment import linear_sum_assignment
from vision.config import SettleConfig, TrackingConfig
from vision.numeric import median
from vision.types import BoardBall, Track, TrackState

TIME_EPS_S = 1e-6  # timestamps that differ by less are the same moment (window edges, debounce ends)
BIRTH_POSITION_VAR_MM2 = 4.0  # a new track's position is its detection's, give or take 2 mm
BIRTH_SPEED_SD_MM_S = 200.0  # ... and its velocity unknown: anything a rolled ball does
STOPPED_SEGMENTS = 3  # a ball whose newest this many half-debounce segments lie together has stopped creeping
SPIKE_BORNE_OUT = 0.5  # a lone detection over the motion speed is motion if the next is over this share of it
CREEP_STRETCH_SEGMENTS = 5  # the fewest half-debounce segments the stretch since a turn is judged on (_creeping)

# the measurement picks the position out of the state [x, y, vx, vy]
_H = np.zeros((2, 4))
_H[0, 0] = _H[1, 1] = 1
_H.flags.writeable = False
_I4 = np.eye(4)
_I4.flags.writeable = False


@dataclass
class _Filter:
    id: int
    colour: str
    x: np.ndarray  # state [x, y, vx, vy]
    p: np.ndarray  # covariance
    t: float  # time of the state
    last_seen_t: float
    hits: int = 1
    state: TrackState = TrackState.TENTATIVE
    born_t: float = 0.0
    window: deque = field(default_factory=deque)  # (t, x, y) measurements of the last debounce time (>= 2)
    history: deque = field(default_factory=deque)  # (t, x, y) measurements since fast_t, of the last creep window
    fast_t: float = float("-inf")  # when the filtered speed was last over motion_speed_mm_s, borne out
    spike_t: float | None = None  # a lone detection over motion_speed_mm_s: motion or not, the next tells (`_fast`)
    over: bool = False  # the filtered speed was over motion_speed_mm_s at the latest detection
    settling: bool = False  # moved fast since the creep test last passed on a full window
    at_rest: bool = False
    slow: bool = False  # the window's medians were under the rest speed at the latest detection (or, at rest, near)
    rest_at: tuple[float, float] | None = None  # the window's median position when it last came to rest
    location: Location | None = None
    confidence: float = 1.0
    born_at: tuple[float, float] = (0.0, 0.0)
    speed: float = 0.0  # |(vx, vy)| of `x`, set wherever the tracker sets `x`


@dataclass(frozen=True)
class TrackerUpdate:
    tracks: tuple[Track, ...]  # every confirmed or lost track, after this frame
    ended: tuple[Track, ...]  # tracks dropped this frame (lost for too long), in their last state
    seen: frozenset[int]  # ids matched to a detection this frame
    born: tuple[BoardBall, ...] = ()  # the balls that started a new track this frame


class Tracker:
    def __init__(self, tracking: TrackingConfig, settle: SettleConfig, ball_diameter_mm: float) -> None:
        self.tracking = tracking
        self.settle = settle
        # a track at rest keeps a detection this near it before the other tracks are matched (`_keep_resting`)
        self._claim_mm = tracking.rest_claim_balls * ball_diameter_mm
        self._covered_mm = tracking.covered_balls * ball_diameter_mm  # `_correct`
        self._tracks: list[_Filter] = []
        self._next_id = 1

    def update(self, t: float, balls: list[BoardBall]) -> TrackerUpdate:
        self._predict(self._tracks, t)
        matched: set[int] = set()
        used: set[int] = set()
        pairs: list[tuple[_Filter, BoardBall]] = []
        for colour in sorted({b.detection.colour for b in balls} | {tr.colour for tr in self._tracks}):
            tracks = [tr for tr in self._tracks if tr.colour == colour]
            dets = [i for i, b in enumerate(balls) if b.detection.colour == colour]
            if not tracks or not dets:
                continue
            at = np.array([tr.x[:2] for tr in tracks])
            seen = np.array([[balls[i].x, balls[i].y] for i in dets])
            cost = np.hypot(at[:, :1] - seen[:, 0], at[:, 1:] - seen[:, 1])
            kept = self._keep_resting(tracks, cost)
            gates = np.array([self._gate(tr, t) for tr in tracks])
            if kept:  # the other tracks and detections are matched among themselves
                taken_r, taken_c = {r for r, _ in kept}, {c for _, c in kept}
                free_r = [r for r in range(len(tracks)) if r not in taken_r]
                free_c = [c for c in range(len(dets)) if c not in taken_c]
                gated = [(free_r[r], free_c[c]) for r, c in _within(cost[np.ix_(free_r, free_c)], gates[free_r])]
            else:
                gated = _within(cost, gates)
            for r, c in [*kept, *gated]:
                pairs.append((tracks[r], balls[dets[c]]))
                matched.add(tracks[r].id)
                used.add(dets[c])
        self._correct(pairs, t)  # a correction changes only its own track, which no other colour looks at
        ended = []
        for track in list(self._tracks):
            if track.id in matched:
                continue
            if track.state is TrackState.TENTATIVE or t - track.last_seen_t > self.tracking.lost_s:
                self._tracks.remove(track)
                if track.state is not TrackState.TENTATIVE:
                    ended.append(self._report(track, t))
            else:
                track.state = TrackState.LOST
        born = tuple(ball for i, ball in enumerate(balls) if i not in used)
        for ball in born:
            self._birth(ball, t)
        reported = [tr for tr in self._tracks if tr.state is not TrackState.TENTATIVE]
        return TrackerUpdate(
            tracks=tuple(self._report(tr, t) for tr in reported),
            ended=tuple(ended),
            seen=frozenset(tr.id for tr in reported if tr.id in matched),
            born=born,
        )

    def _keep_resting(self, tracks: list[_Filter], cost: np.ndarray) -> list[tuple[int, int]]:
        """Pairs (row, column of `cost`, track to detection distances) of the tracks at rest, not lost, with a
        detection within the claim distance (`rest_claim_balls` of a ball's diameter), made before any other track
        is matched. A ball lying still is where it lay. The matching of the rest makes as many pairs within their
        gates as it can, and may move a row of resting tracks each a ball along to keep a lost track matched to a
        ball found at the row's end: piratenbillard_v22's resting p3 row shifted 26-33 mm while its balls lay still,
        and the first of its tracks to leave its space made a strike nobody played."""
        rows = [r for r, tr in enumerate(tracks) if tr.at_rest and tr.state is TrackState.CONFIRMED]
        if not rows:
            return []
        return [(rows[r], c) for r, c in _within(cost[rows], np.full(len(rows), self._claim_mm))]

    # ------------------------------------------------------------------ Kalman filter
    #
    # Every track is filtered at once: the states and covariances are stacked and each product is one
    # stacked matmul, which multiplies slice by slice with the very routine (BLAS) a single track's would
    # use, so every bit is as a track filtered alone.

    def _predict(self, tracks: list[_Filter], t: float) -> None:
        since: dict[float, list[_Filter]] = {}  # the time step: all tracks share it unless time went back
        for track in tracks:
            dt = max(t - track.t, 0.0)
            if dt == 0:
                continue
            if t - track.last_seen_t > self.tracking.coast_s:
                track.x[2:] = 0.0  # unseen this long: it stopped or left; coasting on would drag the gate along
            since.setdefault(dt, []).append(track)
        for dt, group in since.items():
            f = np.eye(4)
            f[0, 2] = f[1, 3] = dt
            q = self.tracking.accel_noise_mm_s2 ** 2
            g = np.array([[dt * dt / 2, 0], [0, dt * dt / 2], [dt, 0], [0, dt]])
            xs = (f @ np.array([tr.x for tr in group])[:, :, None])[:, :, 0]
            ps = f @ np.array([tr.p for tr in group]) @ f.T + g @ g.T * q
            for track, x, p, speed in zip(group, xs, ps, np.hypot(xs[:, 2], xs[:, 3]).tolist()):
                track.x, track.p, track.speed, track.t = x, p, speed, t

    def _correct(self, pairs: list[tuple[_Filter, BoardBall]], t: float) -> None:
        if not pairs:
            return
        unsettled = [tr for tr in self._tracks if tr.state is TrackState.CONFIRMED and not tr.at_rest]
        xs = np.array([track.x for track, _ in pairs])
        ps = np.array([track.p for track, _ in pairs])
        r = np.eye(2) * self.tracking.measurement_noise_mm ** 2
        s = _H @ ps @ _H.T + r
        k = ps @ _H.T @ np.linalg.inv(s)
        innovation = np.array([[ball.x, ball.y] for _, ball in pairs]) - (_H @ xs[:, :, None])[:, :, 0]
        xs = xs + (k @ innovation[:, :, None])[:, :, 0]
        ps = (_I4 - k @ _H) @ ps
        for (track, ball), x, p, speed in zip(pairs, xs, ps, np.hypot(xs[:, 2], xs[:, 3]).tolist()):
            track.x, track.p, track.speed = x, p, speed
            covered = any(other is not track and math.hypot(ball.x - other.x[0], ball.y - other.x[1]) < self._covered_mm
                          for other in unsettled)
            self._seen(track, ball, t, covered)

    def _seen(self, track: _Filter, ball: BoardBall, t: float, covered: bool) -> None:
        """A track's bookkeeping for a detection matched to it (its filter already corrected). `covered`: the
        detection lies within `covered_balls` of a ball not at rest (`_fast`)."""
        track.last_seen_t = t
        track.hits += 1
        track.location = ball.location
        track.confidence = ball.detection.score
        if track.state is TrackState.LOST or (track.state is TrackState.TENTATIVE
                                              and track.hits >= self.tracking.confirm_hits):
            track.state = TrackState.CONFIRMED
        track.window.append((t, ball.x, ball.y))
        window_from = t - self.settle.rest_debounce_s - TIME_EPS_S
        while len(track.window) > 2 and track.window[0][0] < window_from:
            track.window.popleft()
        track.history.append((t, ball.x, ball.y))
        self._fast(track, t, covered)
        history_from = t - self.settle.creep_window_s - TIME_EPS_S
        while track.history and track.history[0][0] < history_from:
            track.history.popleft()
        # at rest: slow for the whole debounce time since it was last fast (the window's medians can straddle
        # a bounce), still over the window (or, already at rest, still where it came to rest), and not drifting;
        # never on a lone fast measurement, which the next one is yet to bear out or take back
        quiet = t - track.fast_t >= self.settle.rest_debounce_s - TIME_EPS_S
        # near where it came to rest, or slow by the window's halves: the first is the cheaper test, and holds for
        # most balls on most frames
        track.slow = quiet and track.rest_at is not None and self._near_rest(track) \
            or self._window_at_rest(track, t)
        spike = track.spike_t is not None
        track.at_rest = quiet and track.slow and not spike and not self._creeping(track)
        if not track.at_rest and not spike:
            track.rest_at = None
        elif track.at_rest and track.rest_at is None:
            track.rest_at = _median_xy(track.window)

    def _fast(self, track: _Filter, t: float, covered: bool) -> None:
        """Mark the track fast (`fast_t`: the debounce starts again) where its filtered speed is over the motion
        speed, unless that is one measurement alone that the next takes back. A ball half hidden, or lying on paint
        of its own colour, can be found in one of two shapes whose centres lie a ball's radius apart, and one frame
        of the other shape reads as a jump: piratenbillard/full_game's red ball, with the capturing blue ball on it,
        was measured 23 mm off for one frame 0.5 s after it stopped (255 mm/s, then 33 on the next frame); the
        debounce started again, the umpire's hand came before it ran out, and the table was read 1.2 s after the
        truth's settle. A ball moving for real is still moving on the next frame: over `SPIKE_BORNE_OUT` of the
        motion speed (starcluster_v4's gutter ball, dropping to rest: 174, then 146 mm/s). A lone fast measurement
        holds the track off rest (`spike_t`) until a measurement tells which it was: lost meanwhile, it is a ball
        lost while moving, as the settle watch has it. A measurement `covered` by a ball not at rest is over the motion
        speed never: what shows of a ball that another lands on or rolls over slides as that one settles
        (piratenbillard/full_game's red ball in its home row, blue's secured ball landing on it: its centre slid 23 mm
        over six frames at 177-253 mm/s, and the table settled 563 ms after its balls stopped)."""
        motion = self.settle.motion_speed_mm_s
        over = track.speed > motion and not covered
        if over and track.over:
            self._moved_fast(track, t)
        elif track.spike_t is not None and not covered and track.speed > SPIKE_BORNE_OUT * motion:
            self._moved_fast(track, track.spike_t)
        track.spike_t = t if over and not track.over else None
        track.over = over

    @staticmethod
    def _moved_fast(track: _Filter, t: float) -> None:
        track.fast_t, track.settling = t, True
        while track.history and track.history[0][0] < t - TIME_EPS_S:
            track.history.popleft()  # the creep test looks at what comes after

    def _creeping(self, track: _Filter) -> bool:
        """A ball that moved and still drifts one way: the trend of its position since it was last fast.

        A failed Star Cluster ball rolls back to the Play Line and creeps along it at 3-14 mm/s for seconds,
        under the rest speed, which the debounce window cannot tell from a resting ball's jitter. Over a longer
        stretch it can: the median slope between the medians of half-debounce segments (Theil-Sen: a steady
        drift moves every pair, a ball that bounced once and stopped moves few). The bar is
        `creep_speed_mm_s` on a full `creep_window_ms`, raised as span^-1.5 (the noise of such a slope) on a
        shorter stretch, so a ball that stopped dead is not held. The stretch since the ball last turned back
        is judged too, once it has `CREEP_STRETCH_SEGMENTS` segments (enough that a bounce at its start is
        outvoted): a ball that rolled along the line, stopped against something and creeps back has no trend
        over the whole (starcluster_v19: the slopes across the turn cancel), but one over the stretch since the
        turn. A ball whose newest `STOPPED_SEGMENTS` segment medians lie within what a
        creep moves in one segment has stopped, whatever the slopes before (starcluster_v19's marble, read as
        creeping for a second after it stopped, was lifted by the umpire before the table was read). Only a ball
        that has moved fast since the test last passed on a full window is tested: one lying still all along is
        judged by the window alone.
        """
        history = track.history
        if self.settle.creep_speed_mm_s <= 0 or not track.settling or len(history) < 4:
            return False
        last = history[-1][0]
        span = float(last - history[0][0])
        if span < self.settle.rest_debounce_s:
            return False  # too short to tell from jitter: the debounce window decides
        seg = self.settle.rest_debounce_s / 2
        if seg <= 0:
            return False  # no debounce: one segment, no slope
        segments: dict[int, list[tuple[float, float, float]]] = {}  # segment (0 = the newest) -> its samples
        for sample in history:
            segments.setdefault(math.floor((last - sample[0]) / seg), []).append(sample)
        times, points, starts = [], [], []
        for k in sorted(segments, reverse=True):  # oldest first
            ts_k, xs_k, ys_k = zip(*segments[k])
            starts.append(ts_k[0])
            times.append(median(ts_k))
            points.append((median(xs_k), median(ys_k)))
        if len(times) < 3:
            return False
        ts, pts = np.asarray(times), np.asarray(points)
        newest = pts[-STOPPED_SEGMENTS:]
        if float(np.ptp(newest, axis=0).max()) <= self.settle.creep_speed_mm_s * seg:
            return False  # stopped: its newest segments lie within what a creep moves in one
        i, j = _pairs(len(ts))
        slopes = (pts[j] - pts[i]) / (ts[j] - ts[i])[:, None]  # Theil-Sen: a bounce is no drift
        creeping, still = False, True
        turn = _last_turn(pts, self.settle.creep_speed_mm_s * seg)
        for first in (0,) if turn is None or len(ts) - turn < CREEP_STRETCH_SEGMENTS else (0, turn):
            stretch = float(last - starts[first])
            mine = slopes[i >= first]
            speed = float(np.hypot(np.median(mine[:, 0]), np.median(mine[:, 1])))
            bar = self.settle.creep_speed_mm_s * max(1.0, self.settle.creep_window_s / stretch) ** 1.5
            creeping |= speed >= bar
            if first == 0:
                still = speed < bar and span >= self.settle.creep_window_s - seg
        if still and not creeping:
            track.settling = False  # proven still on a full window: back to the debounce test alone
        return creeping

    def _near_rest(self, track: _Filter) -> bool:
        """Does a ball at rest still lie where it came to rest: its window's newer half within what a ball at the
        rest speed moves in a debounce time of that place? A resting ball's measured centre can wander by more than
        the halves test allows without its moving (piratenbillard/four_players: a yellow ball on its own yellow
        home cell, 5 mm up and down over a few tenths of a second as the camera shook), which held the table's
        settle long after every ball had stopped. A ball pushed away leaves that place, or moves fast."""
        assert track.rest_at is not None
        window = track.window
        x, y = _median_xy(islice(window, len(window) - len(window) // 2, None))
        reach = self.settle.rest_speed_mm_s * self.settle.rest_debounce_s
        return math.hypot(x - track.rest_at[0], y - track.rest_at[1]) <= reach

    def _window_at_rest(self, track: _Filter, t: float) -> bool:
        """Median position of the window's newer half vs its older half: slower than the rest speed?"""
        if t - track.born_t < self.settle.rest_debounce_s - TIME_EPS_S or len(track.window) < 2:
            return False
        if track.speed > self.settle.motion_speed_mm_s:
            return False  # medians lag a ball that has just been struck; the filter does not
        window = track.window
        half = len(window) // 2
        older_t, older_x, older_y = zip(*islice(window, half))
        newer_t, newer_x, newer_y = zip(*islice(window, len(window) - half, None))
        dt = median(newer_t) - median(older_t)
        if dt <= 0:
            return False
        moved = float(np.hypot(median(newer_x) - median(older_x), median(newer_y) - median(older_y)))
        return moved / dt < self.settle.rest_speed_mm_s

    def _gate(self, track: _Filter, t: float) -> float:
        unseen = max(t - track.last_seen_t, 0.0)
        gate = self.tracking.gate_mm + self.tracking.gate_speed_s * track.speed + track.speed * unseen
        return min(gate, self.tracking.max_gate_mm)

    def _birth(self, ball: BoardBall, t: float) -> None:
        p = np.diag([BIRTH_POSITION_VAR_MM2] * 2 + [BIRTH_SPEED_SD_MM_S ** 2] * 2)
        track = _Filter(self._next_id, ball.detection.colour, np.array([ball.x, ball.y, 0.0, 0.0]), p, t, t,
                        location=ball.location, confidence=ball.detection.score, born_t=t,
                        born_at=(float(ball.x), float(ball.y)))
        track.window.append((t, ball.x, ball.y))
        if self.tracking.confirm_hits <= 1:
            track.state = TrackState.CONFIRMED
        self._next_id += 1
        self._tracks.append(track)

    def _report(self, track: _Filter, t: float) -> Track:
        x, y, vx, vy = track.x.tolist()
        return Track(track.id, track.colour, x, y, vx, vy, track.state, track.at_rest, track.last_seen_t, track.hits,
                     location=track.location, confidence=track.confidence, born_at=track.born_at,
                     born_t=track.born_t, slow=track.slow,
                     fast_t=None if track.fast_t == float("-inf") else track.fast_t)


def _within(cost: np.ndarray, gates: np.ndarray) -> list[tuple[int, int]]:
    """The pairs (row, column) of the assignment that makes as many pairs within each row's gate as it can, and of
    those the least total cost."""
    if not cost.size:
        return []
    rows, cols = linear_sum_assignment(np.where(cost <= gates[:, None], cost, 1e6))
    return [(int(r), int(c)) for r, c in zip(rows, cols) if cost[r, c] <= gates[r]]


def _median_xy(samples) -> tuple[float, float]:
    """The median position of (t, x, y) samples."""
    _, xs, ys = zip(*samples)
    return median(xs), median(ys)


def _last_turn(points: np.ndarray, step_mm: float) -> int | None:
    """The index of the last segment median (oldest first) where the track turned back: the moves into it and out
    of it (each over up to two segments, so a turn that falls between two medians is still seen) both at least
    `step_mm` and more than 90 degrees apart. None: no turn."""
    n = len(points)
    for m in range(n - 2, 0, -1):
        into, out = points[m] - points[max(m - 2, 0)], points[min(m + 2, n - 1)] - points[m]
        if float(np.hypot(*into)) >= step_mm and float(np.hypot(*out)) >= step_mm and float(into @ out) < 0:
            return m
    return None


@lru_cache(maxsize=64)
def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """`np.triu_indices(n, 1)`: every pair i < j of n segments (a few sizes recur, frame after frame)."""
    i, j = np.triu_indices(n, 1)
    i.flags.writeable = j.flags.writeable = False
    return i, j
