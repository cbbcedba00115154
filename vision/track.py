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

from collections import deque
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linear_sum_assignment

from rules.events import Location
from vision.config import SettleConfig, TrackingConfig
from vision.types import BoardBall, Track, TrackState

TIME_EPS_S = 1e-6  # timestamps that differ by less are the same moment (window edges, debounce ends)
BIRTH_POSITION_VAR_MM2 = 4.0  # a new track's position is its detection's, give or take 2 mm
BIRTH_SPEED_SD_MM_S = 200.0  # ... and its velocity unknown: anything a rolled ball does


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
    fast_t: float = float("-inf")  # when the filtered speed was last over motion_speed_mm_s
    settling: bool = False  # moved fast since the creep test last passed on a full window
    at_rest: bool = False
    location: Location | None = None
    confidence: float = 1.0
    born_at: tuple[float, float] = (0.0, 0.0)

    @property
    def speed(self) -> float:
        return float(np.hypot(self.x[2], self.x[3]))


@dataclass(frozen=True)
class TrackerUpdate:
    tracks: tuple[Track, ...]  # every confirmed or lost track, after this frame
    ended: tuple[Track, ...]  # tracks dropped this frame (lost for too long), in their last state
    seen: frozenset[int]  # ids matched to a detection this frame


class Tracker:
    def __init__(self, tracking: TrackingConfig, settle: SettleConfig) -> None:
        self.tracking = tracking
        self.settle = settle
        self._tracks: list[_Filter] = []
        self._next_id = 1

    def update(self, t: float, balls: list[BoardBall]) -> TrackerUpdate:
        for track in self._tracks:
            self._predict(track, t)
        matched: set[int] = set()
        used: set[int] = set()
        for colour in sorted({b.detection.colour for b in balls} | {tr.colour for tr in self._tracks}):
            tracks = [tr for tr in self._tracks if tr.colour == colour]
            dets = [i for i, b in enumerate(balls) if b.detection.colour == colour]
            if not tracks or not dets:
                continue
            cost = np.array([[np.hypot(tr.x[0] - balls[i].x, tr.x[1] - balls[i].y) for i in dets] for tr in tracks])
            gates = np.array([self._gate(tr, t) for tr in tracks])
            big = 1e6
            rows, cols = linear_sum_assignment(np.where(cost <= gates[:, None], cost, big))
            for r, c in zip(rows, cols):
                if cost[r, c] <= gates[r]:
                    self._correct(tracks[r], balls[dets[c]], t)
                    matched.add(tracks[r].id)
                    used.add(dets[c])
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
        for i, ball in enumerate(balls):
            if i not in used:
                self._birth(ball, t)
        reported = [tr for tr in self._tracks if tr.state is not TrackState.TENTATIVE]
        return TrackerUpdate(
            tracks=tuple(self._report(tr, t) for tr in reported),
            ended=tuple(ended),
            seen=frozenset(tr.id for tr in reported if tr.id in matched),
        )

    # ------------------------------------------------------------------ Kalman filter

    def _predict(self, track: _Filter, t: float) -> None:
        dt = max(t - track.t, 0.0)
        if dt == 0:
            return
        if t - track.last_seen_t > self.tracking.coast_s:
            track.x[2:] = 0.0  # unseen this long: it stopped or left; coasting on would drag the gate along
        f = np.eye(4)
        f[0, 2] = f[1, 3] = dt
        q = self.tracking.accel_noise_mm_s2 ** 2
        g = np.array([[dt * dt / 2, 0], [0, dt * dt / 2], [dt, 0], [0, dt]])
        track.x = f @ track.x
        track.p = f @ track.p @ f.T + g @ g.T * q
        track.t = t

    def _correct(self, track: _Filter, ball: BoardBall, t: float) -> None:
        h = np.zeros((2, 4))
        h[0, 0] = h[1, 1] = 1
        r = np.eye(2) * self.tracking.measurement_noise_mm ** 2
        s = h @ track.p @ h.T + r
        k = track.p @ h.T @ np.linalg.inv(s)
        track.x = track.x + k @ (np.array([ball.x, ball.y]) - h @ track.x)
        track.p = (np.eye(4) - k @ h) @ track.p
        track.last_seen_t = t
        track.hits += 1
        track.location = ball.location
        track.confidence = ball.detection.score
        if track.state is TrackState.LOST or (track.state is TrackState.TENTATIVE
                                              and track.hits >= self.tracking.confirm_hits):
            track.state = TrackState.CONFIRMED
        track.window.append((t, ball.x, ball.y))
        while len(track.window) > 2 and track.window[0][0] < t - self.settle.rest_debounce_s - TIME_EPS_S:
            track.window.popleft()
        if track.speed > self.settle.motion_speed_mm_s:
            track.fast_t, track.settling = t, True
            track.history.clear()
        track.history.append((t, ball.x, ball.y))
        while track.history and track.history[0][0] < t - self.settle.creep_window_s - TIME_EPS_S:
            track.history.popleft()
        # at rest: slow for the whole debounce time since it was last fast (the window's medians can straddle
        # a bounce), still over the window, and not drifting one way
        track.at_rest = (t - track.fast_t >= self.settle.rest_debounce_s - TIME_EPS_S and self._window_at_rest(track, t)
                         and not self._creeping(track))

    def _creeping(self, track: _Filter) -> bool:
        """A ball that moved and still drifts one way: the trend of its position since it was last fast.

        A failed Star Cluster ball rolls back to the Play Line and creeps along it at 3-14 mm/s for seconds,
        under the rest speed, which the debounce window cannot tell from a resting ball's jitter. Over a longer
        stretch it can: the median slope between the medians of half-debounce segments (Theil-Sen: a steady
        drift moves every pair, a ball that bounced once and stopped moves few). The bar is
        `creep_speed_mm_s` on a full `creep_window_ms`, raised as span^-1.5 (the noise of such a slope) on a
        shorter stretch, so a ball that stopped dead is not held. Only a ball that has moved fast since the
        test last passed on a full window is tested: one lying still all along is judged by the window alone.
        """
        if self.settle.creep_speed_mm_s <= 0 or not track.settling or len(track.history) < 4:
            return False
        samples = np.array(track.history)
        span = float(samples[-1, 0] - samples[0, 0])
        if span < self.settle.rest_debounce_s:
            return False  # too short to tell from jitter: the debounce window decides
        seg = self.settle.rest_debounce_s / 2
        index = np.floor((samples[-1, 0] - samples[:, 0]) / seg).astype(int)
        times, points = [], []
        for k in np.unique(index):
            part = samples[index == k]
            times.append(float(np.median(part[:, 0])))
            points.append(np.median(part[:, 1:], axis=0))
        if len(times) < 3:
            return False
        ts, pts = np.asarray(times), np.asarray(points)
        i, j = np.triu_indices(len(ts), 1)
        slope = np.median((pts[j] - pts[i]) / (ts[j] - ts[i])[:, None], axis=0)  # Theil-Sen: a bounce is no drift
        speed = float(np.hypot(*slope))
        full = span >= self.settle.creep_window_s - seg
        bar = self.settle.creep_speed_mm_s * max(1.0, self.settle.creep_window_s / span) ** 1.5
        if speed < bar and full:
            track.settling = False  # proven still on a full window: back to the debounce test alone
        return speed >= bar

    def _window_at_rest(self, track: _Filter, t: float) -> bool:
        """Median position of the window's newer half vs its older half: slower than the rest speed?"""
        if t - track.born_t < self.settle.rest_debounce_s - TIME_EPS_S or len(track.window) < 2:
            return False
        if track.speed > self.settle.motion_speed_mm_s:
            return False  # medians lag a ball that has just been struck; the filter does not
        samples = np.array(track.window)
        half = len(samples) // 2
        older, newer = samples[:half], samples[-half:]
        dt = float(np.median(newer[:, 0]) - np.median(older[:, 0]))
        if dt <= 0:
            return False
        moved = float(np.hypot(*(np.median(newer[:, 1:], axis=0) - np.median(older[:, 1:], axis=0))))
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
        return Track(track.id, track.colour, float(track.x[0]), float(track.x[1]), float(track.x[2]),
                     float(track.x[3]), track.state, track.at_rest, track.last_seen_t, track.hits,
                     location=track.location, confidence=track.confidence, born_at=track.born_at,
                     born_t=track.born_t)
