"""The referee loop: frames in, observations and the rules engine's calls out, as they happen.

One causal code path for files and live feeds: each frame goes through
detect -> map -> track -> hand/settle -> shots, and every observation is
written to events.jsonl and fed to the rules engine at once, so a call is made
the moment the debounce window after the balls stop has passed. Umpire inputs
of the session are merged in at their times. Without a calibration file the
table is calibrated from its markers on the first frames; every
`monitor_interval_s` the markers are re-checked, a moved table becomes a
`TableMovement` (and a new homography), and lost markers a warning. Per-stage
wall times are counted for the benchmark.

Vision never decides a score: the engine does, from the observations alone.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Callable, Iterator, Protocol

import cv2
import numpy as np

from calibration.calibrate import Calibration, calibrate_markers
from calibration.homography import CalibrationError
from calibration.monitor import CalibrationMonitor, MarkersLostWarning, MonitorSettings
from calibration.monitor import TableMovement as MonitorMovement
from calibration.profile import Rect, StarClusterProfile, TableProfile
from rules.engine import RulesEngine, Standings
from rules.errors import InputError
from rules.events import (UMPIRE_INPUTS, BallLifted, Event, GameStart, Location, Place, ShotStarted, Snapshot,
                          TableMovement, TableSettled)
from rules.games import make_engine
from vision.config import PipelineConfig
from vision.evaluate import FrameLog
from vision.event_log import EventLog
from vision.pose_watch import PoseWatch
from vision.settle import HandWatch, SettleWatch
from vision.settle import Settle
from vision.shots import SessionFeed, ShotSegmenter
from vision.sources import FrameSource
from vision.stabilise import ShiftWatch, TableStabiliser
from vision.track import Tracker
from vision.types import BoardBall, Detection, Detector
from vision.video_io import Frame

STAGES = ("decode", "detect", "map", "track", "pose", "rules")
MIN_REFIT_MARKERS = 3  # a re-fit on fewer markers is too loose to call the table moved


class Mapper(Protocol):
    def map(self, detections: list[Detection]) -> list[BoardBall]:
        """Image detections -> balls on the board (contact point in mm and the place under it)."""


MapperFactory = Callable[[Calibration, TableProfile], Mapper]
# (first frame, mapper, player colours, Piratenbillard seats) -> a detector learnt for this view
DetectorFactory = Callable[[np.ndarray, Mapper, list[str], dict[str, int]], Detector]
# (settle, the settled frame, mapper, detector, the last settled snapshot) -> the snapshot:
# `vision.cells.read_settled`
TableReader = Callable[[Settle, np.ndarray, Mapper, Detector, Snapshot | None], Snapshot]


@dataclass
class StageTimes:
    """Wall seconds spent per stage, and frames processed: the benchmark reads these."""

    seconds: dict[str, float] = field(default_factory=lambda: {s: 0.0 for s in STAGES})
    frames: int = 0

    def add(self, stage: str, since: float) -> float:
        now = time.perf_counter()
        self.seconds[stage] += now - since
        return now


@dataclass(frozen=True)
class RunSummary:
    frames: int
    first_t: float
    last_t: float
    standings: Standings
    times: StageTimes
    warnings: int


class Referee:
    def __init__(self, game: str, profile: TableProfile, detector_factory: DetectorFactory,
                 mapper_factory: MapperFactory,
                 read_table: TableReader, log: EventLog, session: SessionFeed,
                 config: PipelineConfig = PipelineConfig(), rules_config: dict | None = None,
                 calibration: Calibration | None = None, frame_log: FrameLog | None = None) -> None:
        self.game = game
        self.frame_log = frame_log  # tracks.jsonl for `referee eval`: confirmed tracks and detections per frame
        self.pose: PoseWatch | None = None  # Star Cluster Ball: Play Line crossings by the body
        self.profile = profile
        self.detector_factory = detector_factory
        self.detector: Detector | None = None
        self.seats: dict[str, int] = {}
        self.mapper_factory = mapper_factory
        self.config = config
        self.log = log
        self.session = session
        self.engine: RulesEngine = make_engine(game, rules_config or {})
        self.tracker = Tracker(config)
        self.settle = SettleWatch(config)
        self.read_table = read_table
        self.shots = ShotSegmenter(profile, config, self._read_settled)
        self.times = StageTimes()
        self.calibration = calibration
        self.players: set[str] = set()
        self._unknown_colours: set[str] = set()
        self._mapper: Mapper | None = None
        self._mask: np.ndarray | None = None
        self._hands: HandWatch | None = None
        self._stabiliser: TableStabiliser | None = None
        self._shifts: ShiftWatch | None = None
        self._monitor: CalibrationMonitor | None = None
        self._last_t = 0.0
        self._image: np.ndarray | None = None  # the frame in the works, for the table reader
        self._snapshot: Snapshot | None = None  # the last settled table, the table reader's prior

    # ------------------------------------------------------------------ the loop

    def run(self, source: FrameSource, on_frame: Callable[[Frame, Standings], None] | None = None) -> RunSummary:
        frames = 0
        first_t: float | None = None
        stream: Iterator[Frame] = iter(source.frames())
        while True:
            start = time.perf_counter()
            frame = next(stream, None)
            self.times.add("decode", start)
            if frame is None:
                break
            first_t = frame.t if first_t is None else first_t
            self._emit_all(self.session.due(frame.t))
            if self.calibration is None and not self._calibrate(frame, first_t, source.name):
                continue
            self.step(frame)
            frames += 1
            if on_frame is not None:
                on_frame(frame, self.engine.standings())
        if first_t is None:
            raise InputError(f"source {source.name} gave no frames; check the video or the stream")
        if self.calibration is None:
            raise InputError(f"no table markers found in {source.name}; point the camera at the table "
                             "or pass --calibration")
        self._emit_all(self.session.rest())
        for decision in self.engine.close(self._last_t):
            self.log.decision(decision)
        return RunSummary(frames, first_t, self._last_t, self.engine.standings(), self.times, self.log.warnings)

    def step(self, frame: Frame) -> None:
        """One frame through every stage; emits what it observed."""
        self._last_t = max(self._last_t, frame.t)
        start = time.perf_counter()
        self._check_markers(frame)  # the stabiliser and the marker checks count as mapping
        self.times.add("map", start)
        assert self._mapper is not None and self._hands is not None
        if self.detector is None:
            self.detector = self.detector_factory(frame.image, self._mapper, sorted(self.players), self.seats)
        self._image = frame.image
        start = time.perf_counter()
        hand = self._hands.update(frame.image)
        detections = [d for d in self._known_colours(self.detector.detect(frame.image, self._mask), frame.t)
                      if not self._hands.covers(d.u, d.v)]  # ball-coloured skin or sleeve, not a ball
        start = self.times.add("detect", start)
        balls = self._map_steadied(detections)
        start = self.times.add("map", start)
        update = self.tracker.update(frame.t, balls)
        if self.frame_log is not None:
            self.frame_log.write(frame.t, update.tracks, balls)
        settle = self.settle.update(frame.t, update.tracks, hand, self._shifts is not None and self._shifts.moving)
        events = self.shots.update(frame.t, update, settle, hand)
        start = self.times.add("track", start)
        if self.pose is not None:  # the Play Line call goes in among this frame's observations, before a settle
            events = self.pose.update(frame.t, frame.image, self.calibration, events)
            start = self.times.add("pose", start)
        for message in self.shots.warnings:
            self.log.warning(frame.t, message)
        self.shots.warnings.clear()
        for owner, at in self.shots.gone:
            self._forget(owner, at)
        self.shots.gone.clear()
        self._emit_all(events)
        self.times.add("rules", start)
        self.times.frames += 1

    # ------------------------------------------------------------------ helpers

    def _emit_all(self, events: list[Event]) -> None:
        for event in events:
            self._last_t = max(self._last_t, event.t)
            if isinstance(event, GameStart):
                self.players = {p.id for p in event.players}
                self.seats = {p.id: p.seat for p in event.players if p.seat is not None}
            if isinstance(event, TableSettled):
                impossible = self._impossible(event.snapshot)
                if impossible:
                    self.log.warning(event.t, f"table reading dropped: {impossible}; please review", review=True)
                    continue
                self._snapshot = event.snapshot
            self._left_the_place(event)
            if isinstance(event, TableSettled) and event.confidence < self.config.review_confidence:
                self.log.warning(event.t, f"low-confidence table reading ({event.confidence:.2f}); please review",
                                 review=True)
            if isinstance(event, UMPIRE_INPUTS):
                self._umpire_input(event)
                continue
            for decision in self.engine.feed(self.log.event(event)):
                self.log.decision(decision)

    def _left_the_place(self, event: Event) -> None:
        """The table reader's prior (the last settled snapshot) loses a ball seen leaving its place: the struck
        ball of a Piratenbillard shot, a lifted ball. What is left of it is known to be there still."""
        if isinstance(event, ShotStarted) and event.ball_from is not None and event.player is not None:
            self._forget(event.player, event.ball_from)
        elif isinstance(event, BallLifted):
            self._forget(event.owner, event.at)

    def _forget(self, owner: str, at: Location) -> None:
        """One ball of `owner` at `at` out of the table reader's prior."""
        if self._snapshot is None:
            return
        balls = list(self._snapshot.balls)
        for i, ball in enumerate(balls):
            if (ball.owner, ball.at) == (owner, at):
                del balls[i]
                self._snapshot = Snapshot(tuple(balls))
                return

    def _umpire_input(self, event: Event) -> None:
        """An umpire input the engine refuses (it contradicts what vision saw: a misread, or a wrong session
        line) is flagged for review and left out of events.jsonl, which stays replayable; the run goes on.
        The engines check an input before acting on it, so a refused one changed nothing."""
        logged = event if event.id else replace(event, id=f"L{self.log.lines + 1}")
        try:
            decisions = self.engine.feed(logged)
        except InputError as error:
            self.log.warning(event.t, f"umpire input {event.TYPE} at {event.t:g}s refused by the rules engine "
                                      f"({error}); left out of the event log, please review", review=True)
            return
        self.log.event(event)
        for decision in decisions:
            self.log.decision(decision)

    def ball_centre_px(self, points_mm: np.ndarray) -> np.ndarray:
        """Board contact points -> the image centres of balls resting there, under the current calibration."""
        assert self._mapper is not None
        return self._mapper.ball_centre_px(points_mm)

    def _impossible(self, snapshot: Snapshot) -> str | None:
        """Why a reading cannot be the table (more balls of a colour than a player owns), or None.

        The engine rightly rejects such a snapshot as bad input; a misread settle is the pipeline's
        error, so it is flagged and dropped here, and the next settle reads the table again.
        """
        owned = getattr(getattr(self.engine, "config", None), "balls_per_player", None)
        if owned is None:
            return None
        # Piratenbillard counts only the balls on the board (one off the table is out of the game)
        counted = [b for b in snapshot.balls if self.game != "piratenbillard" or b.at.place is not Place.OFF_TABLE]
        for owner in sorted({b.owner for b in counted}):
            seen = sum(1 for b in counted if b.owner == owner)
            if seen > owned:
                return f"it shows {seen} {owner} balls, but a player has {owned}"
        return None

    def _read_settled(self, settle: Settle) -> Snapshot:
        assert self._image is not None and self._mapper is not None and self.detector is not None
        image = self._image
        if self._stabiliser is not None and \
                float(np.hypot(*self._stabiliser.shift_mm())) >= self.config.table_shift_mm:
            # the table has moved (a shove): the places are read where it lies now, in the frame of the
            # calibration (nearest pixels: the colours stay as seen); a shake of a pixel or two is left as is
            height, width = image.shape[:2]
            image = cv2.warpAffine(image, self._stabiliser.transform, (width, height), flags=cv2.INTER_NEAREST,
                                   borderMode=cv2.BORDER_REPLICATE)
        return self.read_table(settle, image, self._mapper, self.detector, self._snapshot)

    def _map_steadied(self, detections: list[Detection]) -> list[BoardBall]:
        """Detections mapped to the board with the camera shake taken out (`vision.stabilise`); the balls
        keep the detections as seen, for the frame log."""
        assert self._mapper is not None
        if self._stabiliser is None:
            return self._mapper.map(detections)
        steady = [replace(d, u=u, v=v) for d in detections for u, v in [self._stabiliser.steady(d.u, d.v)]]
        return [replace(ball, detection=d) for ball, d in zip(self._mapper.map(steady), detections)]

    def _known_colours(self, detections: list[Detection], t: float) -> list[Detection]:
        """Balls of a colour no player has are reported once, then left out of the game."""
        if not self.players:
            return detections
        kept = []
        for d in detections:
            if d.colour in self.players:
                kept.append(d)
            elif d.colour not in self._unknown_colours:
                self._unknown_colours.add(d.colour)
                self.log.warning(t, f"a ball of colour {d.colour!r} matches no player "
                                    f"({', '.join(sorted(self.players))}); ignored, check the table or the players")
        return kept

    def _calibrate(self, frame: Frame, first_t: float, name: str) -> bool:
        try:
            calibration = calibrate_markers(frame.image, self.profile)
        except CalibrationError:
            if frame.t - first_t > self.config.calibration_search_s:
                raise InputError(f"no table markers found in the first {self.config.calibration_search_s:g} s of "
                                 f"{name}; point the camera at the table or pass --calibration") from None
            return False
        self.calibration = calibration
        return True

    def _use(self, calibration: Calibration, image: np.ndarray) -> None:
        self.calibration = calibration
        self._mapper = self.mapper_factory(calibration, self.profile)
        self._stabiliser = TableStabiliser(image, calibration, self.profile) if self.config.stabilise else None
        self._shifts = ShiftWatch(self.config.monitor_interval_s, 1.0, self.config.table_shift_mm) \
            if self._stabiliser is not None else None
        t = self.profile.table
        looked_at = _playing_side(self.profile)
        corners = _rect_px(calibration, looked_at)
        height, width = image.shape[:2]
        self._mask = np.zeros((height, width), np.uint8)
        cv2.fillPoly(self._mask, [np.round(corners).astype(np.int32)], 255)
        watched = _rect_px(calibration, self.profile.board if isinstance(self.profile, StarClusterProfile)
                           else self.profile.grid)
        centre = np.array([[(t.x_min + t.x_max) / 2, (t.y_min + t.y_max) / 2]])
        edge = centre + [[self.profile.ball_diameter_mm / 2, 0]]
        radius_px = float(np.linalg.norm(calibration.board_to_image(edge) - calibration.board_to_image(centre)))
        if self._hands is None:
            self._hands = HandWatch(self.config, watched, (width, height), radius_px,
                                    corners if looked_at != t else None)

    def _check_markers(self, frame: Frame) -> None:
        assert self.calibration is not None
        if self._monitor is None:
            self._use(self.calibration, frame.image)
            settings = MonitorSettings(check_interval_s=self.config.monitor_interval_s)
            self._monitor = CalibrationMonitor(self.profile, self.calibration, settings, frame.image)
        following = False
        if self._stabiliser is not None:
            self._stabiliser.update(frame.image)
            following = self._stabiliser.found >= MIN_REFIT_MARKERS
        if not self.config.monitor_interval_s:
            return
        if following and self._stabiliser is not None and self._shifts is not None:
            moved = self._shifts.update(frame.t, self._stabiliser.shift_mm())
            if moved is not None:  # a lasting step of the markers; a bumped camera looks the same: for review
                self._emit_all([TableMovement(t=frame.t, magnitude_mm=round(moved, 1), confidence=0.5)])
        for seen in self._monitor.update(frame.image, frame.t):
            if isinstance(seen, MonitorMovement) and (following or
                                                      len(self._monitor.calibration.markers_used) < MIN_REFIT_MARKERS):
                # the stabiliser follows the markers to a fraction of a pixel, so the mapping stays right and
                # movements are its to report; a re-fit (3-25 mm apart from check to check on the samples,
                # far markers a few pixels wide) or one on two markers proves nothing
                self._monitor.calibration = self.calibration
            elif isinstance(seen, MonitorMovement):
                if seen.kind == "camera":  # the camera was bumped, not the table: no foul, just re-map
                    self.log.warning(frame.t, f"the camera moved ({seen.magnitude_mm:.1f} mm on the table); re-calibrated")
                else:  # a moved table is the engine's call; "unknown" goes in flagged for review
                    confidence = 0.9 if seen.kind == "table" else 0.5
                    self._emit_all([TableMovement(t=frame.t, magnitude_mm=round(seen.magnitude_mm, 1),
                                                  confidence=confidence)])
                self._use(self._monitor.calibration, frame.image)
            elif isinstance(seen, MarkersLostWarning):
                self.log.warning(frame.t, seen.message)


def _playing_side(profile: TableProfile) -> Rect:
    """Where balls are looked for: Star Cluster Ball, the table beyond the Play Line stripe (half a ball
    past it: the red stripe and the shooter's hands, skin and sleeves on the near side read as red balls;
    a launched ball is first seen just past the line, which the shot logic counts as a launch);
    Piratenbillard, the whole table."""
    t = profile.table
    if not isinstance(profile, StarClusterProfile):
        return t
    line_y = max(profile.play_line[0][1], profile.play_line[1][1])
    return Rect(t.x_min, line_y + profile.ball_diameter_mm / 2, t.x_max, t.y_max)


def _rect_px(calibration: Calibration, rect: Rect) -> np.ndarray:
    """The image polygon of a board rectangle."""
    return calibration.board_to_image(np.array([[rect.x_min, rect.y_min], [rect.x_max, rect.y_min],
                                                [rect.x_max, rect.y_max], [rect.x_min, rect.y_max]], float))
