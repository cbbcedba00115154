"""The vision pipeline: frames in, observations out, as they happen.

One causal code path for files and live feeds: each frame goes through
markers (stabiliser; the monitor where it lost them) -> hand watch -> detect -> map -> track -> settle
-> shots (the game's `ShotWatch`) -> the settled table read place by place ->
pose (where the game watches a Play Line), and `observe` returns what it saw in
log order: observation events and warnings for a person. It never feeds a
rules engine and never writes a file: the referee session (`referee.session`)
decides what to do with each observation, and tells the pipeline what it
accepted (`note`), which keeps the table reader's prior (the last settled
table) in step with the engine. Without a calibration the table is found from
its markers on the first frames. Per-stage wall times are counted for the
benchmark. Pose runs on a worker thread beside the frame loop
(`vision.pose_watch`); `close` stops it, and on a live feed a `table_settled`
may be held back a frame or two for it (`holding`).

Vision never decides a score: the engine does, from the observations alone.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence, Union

import cv2
import numpy as np

from calibration.calibrate import Calibration, calibrate_markers
from calibration.geometry import Point, Rect
from calibration.homography import CalibrationError
from calibration.monitor import CalibrationMonitor, MarkersLostWarning
from calibration.monitor import TableMovement as MonitorMovement
from calibration.profile import TableProfile
from rules.errors import InputError
from rules.events import (BallLifted, BallSighting, Event, GameStart, Location, Place, ShotStarted, Snapshot,
                          TableMovement, TableSettled)
from vision.cells import BareTable, changed_from_bare, on_frame, on_play_line_stripe, settled_reading
from vision.config import PipelineConfig
from vision.detect.colour import ColourDetector
from vision.games import GameVision
from vision.mapping import BoardMapper
from vision.numeric import Halvings, halved_box
from vision.pose_watch import PoseWatch
from vision.settle import FieldPicture, HandWatch, Settle, SettleWatch
from vision.shots import ShotSegmenter
from vision.stabilise import ShiftWatch, TableStabiliser
from vision.track import TIME_EPS_S, Tracker
from vision.types import BoardBall, Detection, Detector, Track, TrackState
from vision.video_io import Frame

STAGES = ("decode", "detect", "map", "track", "pose", "rules")
# touching balls round where a shot's ball was struck from are split afresh this long after the strike (the ball
# leaves, its space's paint shows: piratenbillard_v4); longer, a row seen end on split afresh on every frame jitters,
# and the table never settles (piratenbillard_v22's p4 strike from the far end of its row)
RESPLIT_S = 1.0
# a track in a gutter this slow is lying there (`VisionPipeline._note_lying`): dropped marbles lying 0.1-0.3 s
# showed 14-39 mm/s; something of p1's orange, no marble, moved over the gutter beside the next shooter at 142
# (starcluster_v21)
LYING_SPEED_MM_S = 50.0

# (first frame, mapper, player colours, board points known to hold each player's balls) -> a detector for this view
DetectorFactory = Callable[[np.ndarray, BoardMapper, list[str], dict[str, list[Point]]], Detector]
# (settle, the settled frame, mapper, detector, the last settled snapshot) -> the snapshot: `vision.cells.read_settled`
TableReader = Callable[[Settle, np.ndarray, BoardMapper, Detector, Union[Snapshot, None]], Snapshot]


@dataclass
class StageTimes:
    """Wall seconds spent per stage, and frames processed: the benchmark reads these. `learn_s`: learning the table's
    colours on the first frame, once a run (not a stage of every frame: on a short clip it is a third of the run)."""

    seconds: dict[str, float] = field(default_factory=lambda: {s: 0.0 for s in STAGES})
    frames: int = 0
    learn_s: float = 0.0

    def add(self, stage: str, since: float) -> float:
        now = time.perf_counter()
        self.seconds[stage] += now - since
        return now


@dataclass(frozen=True)
class PipelineWarning:
    """Something a person should look at; `review` puts it on the review list."""

    t: float
    message: str
    review: bool = False


Observation = Union[Event, PipelineWarning]

TrackRow = tuple[int, str, float, float, float | None, float | None]  # id, colour, x, y (mm), u, v (px)
DetectionRow = tuple[str, float, float, float, float, float, float]  # colour, u, v, r (px), x, y (mm), score


@dataclass(frozen=True)
class TrackedFrame:
    """One frame's confirmed tracks and mapped detections, for tracks.jsonl (`referee eval`, the review video)."""

    t: float
    tracks: tuple[TrackRow, ...]
    detections: tuple[DetectionRow, ...]


@dataclass(frozen=True)
class Seen:
    """What one frame gave, in log order; `tracked` when the pipeline records tracks."""

    observations: list[Observation]
    tracked: TrackedFrame | None = None


class VisionPipeline:
    def __init__(self, game: GameVision, profile: TableProfile, config: PipelineConfig,
                 detector_factory: DetectorFactory, calibration: Calibration | None = None,
                 table_reader: TableReader | None = None, pose: PoseWatch | None = None,
                 record_tracks: bool = False) -> None:
        cv2.setNumThreads(config.opencv.threads)  # process-wide (`OpenCvConfig`)
        self.game = game
        self.profile = profile
        self._ball_areas = game.ball_areas(profile)  # a ball found elsewhere on the table is its frame's, no ball
        self.config = config
        self.detector_factory = detector_factory
        self.calibration = calibration
        self.table_reader = table_reader or self._read_cells
        self.pose = pose  # a game with a Play Line: the players' bodies crossing it
        self.record_tracks = record_tracks
        self.detector: Detector | None = None
        self.tracker = Tracker(config.tracking, config.settle, profile.ball_diameter_mm)
        self.settle = SettleWatch(config.settle, profile.table, game.max_hop_mm > 0, profile.ball_diameter_mm,
                                  profile.playing_field, beyond_reach(profile), _past_line(profile, 0.0))
        self.shots = ShotSegmenter(game.shot_watch(profile, config.shots, config.settle), config.shots)
        self.times = StageTimes()
        self.players: tuple[str, ...] = ()
        self.seats: dict[str, int] = {}
        self._unknown_colours: set[str] = set()
        self._mapper: BoardMapper | None = None
        self._mask: np.ndarray | None = None
        self._hands: HandWatch | None = None
        self._picture: FieldPicture | None = None  # the field's picture while the table is in play
        self._stabiliser: TableStabiliser | None = None
        self._shifts: ShiftWatch | None = None
        self._monitor: CalibrationMonitor | None = None
        self._snapshot: Snapshot | None = None  # the last settled table the referee accepted: the reader's prior
        self._previous: Frame | None = None  # the frame before this one
        self._last_sight: dict[int, Frame] = {}  # tracks lost while slow: the frame each was last seen on
        self._glimpsed: dict[int, Track] = {}  # tracks lost in a gutter, seen there for less than a rest window
        self._lying: dict[int, Track] = {}  # each shooter's track as last seen lying in a gutter, standing out there
        self._lifted: list[Track] = []  # of those, the ones the tracker gave up since the last settle
        self._held: list[Observation] = []  # held back for a glimpse in doubt (`_held_for_glimpses`)
        self._gap_t: dict[int, float] = {}  # tracks: the last frame each was not seen on
        self._bare: BareTable | None = None  # the table before play, and the places it shows empty
        self._starts: dict[Location, str] = {}  # the places the game knows a ball stands in on the first frame
        # of those, struck from since the last settle: by whom, when
        self._vacated: dict[Location, tuple[str, float]] = {}
        self._struck_from: Location | None = None  # the place the open shot's ball was struck from, and when
        self._struck_t = 0.0
        self._settled_with: set[int] = set()  # the tracks the table last settled with
        self._read_steady: np.ndarray | None = None  # the settled image read now -> the steadied one (`_read_settled`)
        self._shooter: str | None = None  # a shot is open: whose (the table reader's hint)
        self._unexplained: frozenset[Location] = frozenset()  # places changed, nothing read there, at the last settle
        self._halved: tuple[tuple[int, int, int, int], int] | None = None  # the box the loop halves, and how far

    # ------------------------------------------------------------------ the referee's side

    def find_table(self, frame: Frame, first_t: float, source: str) -> bool:
        """Look for the table's markers on a frame of the first `calibration_search_s`; False: not yet."""
        if self.calibration is not None:
            return True
        try:
            self.calibration = calibrate_markers(frame.image, self.profile)
        except CalibrationError:
            search_s = self.config.table.calibration_search_s
            if frame.t - first_t > search_s:
                raise InputError(f"no table markers found in the first {search_s:g} s of {source}; point the "
                                 "camera at the table or pass --calibration") from None
            return False
        return True

    def prepare(self, frame: Frame) -> Frame:
        """`frame` with its halvings made (`Halvings.ahead`), for the box and factor the frame loop last asked for;
        as it was until the loop has asked. Called on a file's decode thread ahead of `observe` (`FileSource.prepare`),
        so the frame loop's largest single shrink (0.3-0.5 ms a Piratenbillard frame) runs beside it; `observe`
        takes the halvings made only for the box it asks for, and makes its own otherwise. Reads one attribute the
        loop writes whole, so it is safe on another thread."""
        halved = self._halved
        if halved is None:
            return frame
        box, k = halved
        return replace(frame, halvings=Halvings(frame.image, box).ahead(k))

    def note(self, event: Event) -> None:
        """The referee applied `event`: the players of a game start, the table a settle showed (the table
        reader's prior), a ball seen leaving its place (the struck ball of a Piratenbillard shot, a lifted
        ball: what is left of the prior is known to be there still)."""
        if isinstance(event, ShotStarted):
            self._struck_from, self._struck_t = event.ball_from, event.t
        if isinstance(event, GameStart):
            self.players = tuple(p.id for p in event.players)
            self.seats = {p.id: p.seat for p in event.players if p.seat is not None}
        elif isinstance(event, TableSettled):
            self._snapshot = event.snapshot
        elif isinstance(event, ShotStarted) and event.ball_from is not None and event.player is not None:
            self._forget(event.player, event.ball_from)
            if self._starts.pop(event.ball_from, None) == event.player:
                self._vacated[event.ball_from] = (event.player, event.t)
        elif isinstance(event, BallLifted):
            self._forget(event.owner, event.at)

    def observe(self, frame: Frame, to_play: str | None) -> Seen:
        """One frame through every stage. `to_play`: whose turn it is now (the shooter of a shot whose ball
        was not seen leave a hand). The table must have been found (`find_table`)."""
        out: list[Observation] = []
        start = time.perf_counter()
        out += self._check_markers(frame)  # the stabiliser and the marker checks count as mapping
        self.times.add("map", start)
        assert self._mapper is not None and self._hands is not None and self.calibration is not None
        if self.detector is None:
            start = time.perf_counter()
            samples = self.game.colour_samples(self.profile, self.seats)
            self.detector = self.detector_factory(frame.image, self._mapper, sorted(self.players), samples)
            known = [point for points in samples.values() for point in points]
            self.times.learn_s += time.perf_counter() - start
        else:
            known = None
        start = time.perf_counter()
        # the hand watch and the detector shrink the same frame: the part of it either asks for is halved once
        picture = self._picture if self.config.settle.field_change_balls > 0 else None
        regions = [r for r in (self._hands.halved(), self.detector.halved()
                               if isinstance(self.detector, ColourDetector) else None,
                               picture.halved() if picture is not None else None) if r is not None]
        box = halved_box(regions, frame.image.shape[1], frame.image.shape[0])
        self._halved = None if box is None else (box, max(r[4] for r in regions))  # for `prepare`, from now on
        ready = frame.halvings
        halvings = ready if ready is not None and ready.within == box else Halvings(frame.image, box)
        hand = self._hands.update(frame.image, frame.t, halvings)
        steady = self._stabiliser.transform if self._stabiliser is not None else None
        # once a colour no player has was reported, only the players' colours are asked for (`_known_colours`)
        wanted = self.players if self.players and self._unknown_colours else None
        if isinstance(self.detector, ColourDetector):  # touching balls round a struck ball's place are split afresh
            self.detector.resplit_near = self._struck_px() if self.shots.play.shot_open \
                and frame.t - self._struck_t <= RESPLIT_S else ()
        # between a settle and the next motion a frame where nothing changed keeps the balls found before: while the
        # table is yet to settle, a ball lost in a roll, faint and seen now and then, is looked for on every frame
        found = self.detector.detect(frame.image, self._mask, steady, wanted, settled=self.settle.quiet,
                                     halvings=halvings)
        if known is not None:  # the first frame: the table before play
            self._bare = self._bare_table(frame.image, found, known)
            taken = self._learn_bare(frame.image, found, known)
            if taken:
                out.append(PipelineWarning(frame.t, f"the first frame shows {taken} ball(s) of a player's colour where "
                                                    "the game starts with none: taken for the table (look-alikes of "
                                                    "a ball's colour); if balls lay there, start the run before play "
                                                    "or resume its record"))
            self._starts = {self.profile.locate(point).at: player for player, points in samples.items()
                            for point in points}
            smallest, least = self._mapper.smallest_ball_radius_px(), self.config.detector.min_ball_radius_px
            if smallest < least:
                out.append(PipelineWarning(frame.t, f"a ball at the far end of the playing field looks "
                                                    f"{2 * smallest:.1f} px across, under {2 * least:g}: balls that "
                                                    "small may be missed; move the camera closer or film at a higher "
                                                    "resolution, and review the calls", review=True))
        detections = [d for d in self._known_colours(found, frame.t, out)
                      if not self._hands.covers(d.u, d.v)]  # ball-coloured skin or sleeve, not a ball
        start = self.times.add("detect", start)
        diameter = self.profile.ball_diameter_mm
        balls = [b for b in self._map_steadied(detections) if not on_play_line_stripe(self._mapper, b)
                 and not on_frame(self._ball_areas, b, diameter, self.config.cells)]
        start = self.times.add("map", start)
        update = self.tracker.update(frame.t, balls)
        if isinstance(self.detector, ColourDetector):  # blobs round balls not yet at rest: by their centroid alone
            self.detector.unsettled_near = self._unsettled_px(update.tracks)
        self._note_sightings(frame, update.tracks, self._shooter or to_play)
        tracked = tracked_frame(frame.t, update.tracks, balls, self._mapper.ball_centre_px) if self.record_tracks \
            else None
        if picture is not None and not self.settle.quiet:
            picture.remember(frame.t, frame.image, steady, halvings)
        settle = self.settle.update(frame.t, update.tracks, hand, self._shifts is not None and self._shifts.moving,
                                    update.born, self._hands.rolling, picture.changed if picture is not None else None)
        segmented = self.shots.update(frame.t, update, settle, hand)
        events = segmented.events
        started = next((e for e in events if isinstance(e, ShotStarted)), None)
        if started is not None:  # a shot changes the table, however slowly its balls were seen to move
            self._shooter = started.player or to_play
            self.settle.expect(frame.t)
        if settle is not None:
            # a lost track whose ball was seen rolling away (struck out of sight) is not a ball hidden where it was
            # lost: the space it left is empty, or shows only the paint of its starting row. Unless it vanished in
            # flight over a place where another ball lies (`Settle.landed`: it had found its ball again): it landed
            # there (piratenbillard_v24's secured ball, lost behind the ball of the space it landed in, was read off
            # the board)
            settle = replace(settle, landed=settle.landed + self._found_landed(settle))
            landed = {tr.id for tr in settle.landed}
            settle = replace(settle, hidden=tuple(tr for tr in settle.hidden
                                                  if tr.id not in self.shots.play.struck or tr.id in landed))
            confidence = settle.confidence
            for ball in settle.unseen_landing:  # waited for in vain: the reading may lack it, or have it wrong
                confidence = min(confidence, self.config.settle.unseen_landing_confidence)
                out.append(PipelineWarning(frame.t, f"a {ball.colour} ball last seen in flight at ({ball.x:.0f}, "
                                                    f"{ball.y:.0f}) mm was not seen land; the table settled "
                                                    "without it", review=True))
            if settle.stirring is not None:
                confidence = min(confidence, self.config.settle.unseen_landing_confidence)
                out.append(PipelineWarning(frame.t, "something ball-sized kept moving over the field at "
                                                    f"({settle.stirring[0]:.0f}, {settle.stirring[1]:.0f}) px for "
                                                    f"{self.config.settle.roll_wait_ms / 1000:g} s; the table settled "
                                                    "anyway: review the reading", review=True))
            if picture is not None:
                picture.forget()
            self._settled_with = {tr.id for tr in settle.tracks}
            image = self._settled_image(settle, frame)
            self._learn_vacated(settle, image)
            snapshot = self._read_settled(settle, image)
            self._shooter = None  # the settle closes the shot
            events.append(TableSettled(t=frame.t, snapshot=snapshot, confidence=round(confidence, 3)))
        start = self.times.add("track", start)
        if self.pose is not None:  # the Play Line call goes in among this frame's observations, before a settle
            if self.pose.holding:  # live: a settle waits for pose; this frame's events (a table movement) follow it
                events = [o for o in out if isinstance(o, Event)] + events
                out = [o for o in out if not isinstance(o, Event)]
            watched = self.pose.update(frame.t, frame.image, self.calibration, events, to_play,
                                       [(d.u, d.v, d.radius_px) for d in detections])
            events = watched.events
            out += [PipelineWarning(t, message, review=True) for t, message in watched.warnings]
            self.times.add("pose", start)
        out += [PipelineWarning(frame.t, message) for message in segmented.warnings]
        for owner, at in segmented.gone:  # a resting ball vanished with no hand seen: lifted unseen, or unrecognised
            if self._bare is None or at not in self._bare.places:  # where the bare table is known, its pixels decide
                self._forget(owner, at)
        self.times.frames += 1
        return Seen(self._held_for_glimpses([*out, *events]), tracked)

    @property
    def holding(self) -> bool:
        """Observations are held back for pose (a live feed's `table_settled` waits for the pose run in flight):
        the referee applies nothing else meanwhile, so the log stays in time order."""
        return self.pose is not None and self.pose.holding or bool(self._held)

    def close(self, flush: bool = False) -> list[Observation]:
        """Stop pose's worker thread. With `flush` (the source has ended) what pose still had out (runs not yet
        applied, observations held back) is given first, in log order; a stopped file run leaves them to its resume,
        which referees the file again from its start. Safe to call twice."""
        held = self._release(forced=True) if flush else []
        self._held = []
        if self.pose is None:
            return held
        try:
            if not flush:
                return []
            watched = self.pose.finish()
            return [*held, *(PipelineWarning(t, message, review=True) for t, message in watched.warnings),
                    *watched.events]
        finally:
            self.pose.close()

    # ------------------------------------------------------------------ helpers

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

    def _note_sightings(self, frame: Frame, tracks: tuple[Track, ...], shooter: str | None) -> None:
        """Keep, for each track lost while as slow as a ball at rest after being seen on every frame of a rest
        window, the frame it was last seen on (`_settled_image`). One lost while moving (a ball lifted away, rolling
        out of sight) was not at rest there; one seen on and off (a flickering detection of a slot's shadow) is no sure
        ball. A ball of the `shooter`'s seen lying in a gutter for less than a rest window is glimpsed (a marble let
        go over a gutter beside the Play Line and lifted by the umpire at once); other players' are not: the one
        waiting holds marbles over the gutter on their side (starcluster_v1)."""
        present = {tr.id: tr for tr in tracks}
        window = self.config.settle.rest_debounce_s
        previous = self._previous
        self._note_lying(frame, present, shooter)
        for i, tr in present.items():
            if tr.state is not TrackState.LOST or i in self._last_sight or previous is None \
                    or tr.last_seen_t != previous.t:
                continue  # not lost on this frame
            since = max(self._gap_t.get(i, -math.inf), tr.born_t if tr.born_t is not None else -math.inf)
            # on the frame it is lost, a track still has its last velocity, and its window's medians their speed;
            # a ball in a gutter keeps its place whatever it does there but roll for real (`_in_gutter_at_last`),
            # unless the table settled with it there since: then it was lifted away, not lost where it rests
            speed = math.hypot(tr.vx, tr.vy)
            gutter = i not in self._settled_with and _in_gutter_at_last(tr, self.config.settle.motion_speed_mm_s)
            seen_for = tr.last_seen_t - since
            if (tr.slow or speed <= self.config.settle.rest_speed_mm_s or gutter) and seen_for >= window:
                self._last_sight[i] = previous
            elif gutter and tr.colour == shooter and seen_for >= self.config.settle.gutter_sighting_s - TIME_EPS_S \
                    and self._stands_out(previous, tr):
                self._glimpsed[i] = tr  # a ball went into a gutter: out, however soon the umpire lifts it
            elif self._lay_there(tr, since):
                self._glimpsed[i] = self._lying[i]  # the hand that lifted it hid part of it as it was last seen
        self._last_sight = {i: seen for i, seen in self._last_sight.items()
                            if i in present and present[i].state is TrackState.LOST}
        self._gap_t = {i: frame.t if tr.state is TrackState.LOST else self._gap_t[i]
                       for i, tr in present.items() if tr.state is TrackState.LOST or i in self._gap_t}
        # a glimpsed ball followed again for the sighting time (not a frame or two: the next shooter's hand with a
        # marble, starcluster_v17), or found anew beside where it was lost (starcluster_v12), was not lifted away: it
        # lies there still, or was held over the gutter; one the tracker gave up was lifted (the umpire's hand in a
        # gutter behind the line is not watched)
        sighting = self.config.settle.gutter_sighting_s - TIME_EPS_S
        self._glimpsed = {i: lost for i, lost in self._glimpsed.items()
                          if not (i in present and present[i].state is TrackState.CONFIRMED
                                  and present[i].last_seen_t - self._gap_t.get(i, -math.inf) >= sighting)
                          and not self._seen_again(lost, tracks)}
        self._lying = {i: lying for i, lying in self._lying.items() if i in present and i not in self._settled_with}
        self._lifted += [lost for i, lost in self._glimpsed.items() if i not in present]
        self._glimpsed = {i: lost for i, lost in self._glimpsed.items() if i in present}
        self._previous = frame

    def _note_lying(self, frame: Frame, present: dict[int, Track], shooter: str | None) -> None:
        """Keep the shooter's tracks seen on this frame lying in a gutter the table did not settle with (under
        `LYING_SPEED_MM_S`), standing out from the table there (`_stands_out`). The frame a ball is last seen on may
        be the one the umpire's hand reaches it on: the part of it left in view moves its measured centre and its
        filter's speed (starcluster_v22: 174 mm/s, 14 mm off as the hand came; _v36: 15 mm off, on the gutter's
        edge), and such a glimpse was read as no ball lying there."""
        for i, tr in present.items():
            if tr.state is TrackState.CONFIRMED and tr.last_seen_t == frame.t and tr.colour == shooter \
                    and i not in self._settled_with and _in_gutter_at_last(tr, LYING_SPEED_MM_S) \
                    and self._stands_out(frame, tr):
                self._lying[i] = tr

    def _lay_there(self, lost: Track, since: float) -> bool:
        """Was the track, lost on this frame, seen lying in a gutter (`_note_lying`) after being followed for the
        gutter sighting time since it was found or last lost (`since`)?"""
        lying = self._lying.get(lost.id)
        return lying is not None and lying.last_seen_t - since >= self.config.settle.gutter_sighting_s - TIME_EPS_S

    def _held_for_glimpses(self, seen: list[Observation]) -> list[Observation]:
        """What this frame gives the referee. A settle while a ball glimpsed in a gutter is in doubt (its track not
        yet given up by the tracker, nor followed again: `_note_sightings`) is held back, with everything after it,
        until the glimpse is resolved: followed again, it still lies there and the settle reads it as any ball
        (starcluster_v17, _v24, _v25: lost for a few frames), or it was a marble held over the gutter and hidden in
        the hand; given up, it was lifted away, and the settle reads it out in its gutter. A shot or another settle
        after the held one resolves it as lying there. Held at most the tracker's `lost_ms` after the glimpse was
        last seen."""
        self._held += seen
        first = next((i for i, o in enumerate(self._held) if isinstance(o, TableSettled)), None)
        later = first is not None and any(isinstance(o, (TableSettled, ShotStarted)) for o in self._held[first + 1:])
        if first is not None and self._glimpsed and not later:
            return []
        return self._release(forced=later)

    def _release(self, forced: bool) -> list[Observation]:
        """The held observations, their first settle with the balls glimpsed in a gutter and lifted away since the
        last settle (with `forced`, those still in doubt too): each is out of play (a ball that enters a gutter is),
        read below the review confidence, with a warning for the umpire."""
        held, self._held = self._held, []
        first = next((i for i, o in enumerate(held) if isinstance(o, TableSettled)), None)
        if first is None:
            return held
        glimpsed = self._lifted + (list(self._glimpsed.values()) if forced else [])
        self._lifted = []
        if forced:
            self._glimpsed = {}
        settled = held[first]
        assert isinstance(settled, TableSettled)
        glimpsed = self._unread(glimpsed, settled.snapshot) if glimpsed else []
        if not glimpsed:
            return held
        sure = self.config.settle.gutter_sighting_confidence
        added = tuple(BallSighting(tr.colour, Location(Place.GUTTER), sure) for tr in glimpsed)
        warnings = [PipelineWarning(settled.t, f"a {tr.colour} ball seen in a gutter at ({tr.x:.0f}, {tr.y:.0f}) mm "
                                               "for less than a rest window was gone before the table settled: read "
                                               "as out in the gutter", review=True) for tr in glimpsed]
        return [*held[:first], *warnings, replace(settled, snapshot=Snapshot(settled.snapshot.balls + added)),
                *held[first + 1:]]

    def _unread(self, glimpsed: list[Track], snapshot: Snapshot) -> list[Track]:
        """The glimpsed gutter balls the settle's own reading (`snapshot`) does not hold: each ball of a colour it
        reads in a gutter beyond those of the last settled table is one glimpsed and followed again as another track
        (starcluster_v1: p2's marble, glimpsed in the gutter at 9.3 s, was followed again as a track found 2.3
        diameters away at 9.37 s, which lay there until the umpire lifted it; the settle read it, and the glimpse
        counted it twice)."""
        def in_gutters(balls: Sequence[BallSighting]) -> Counter[str]:
            return Counter(ball.owner for ball in balls if ball.at.place is Place.GUTTER)

        fresh = in_gutters(snapshot.balls) - in_gutters(self._snapshot.balls if self._snapshot is not None else ())
        unread = []
        for tr in glimpsed:
            if fresh[tr.colour] > 0:
                fresh[tr.colour] -= 1
            else:
                unread.append(tr)
        return unread

    def _stands_out(self, frame: Frame, track: Track) -> bool:
        """Does a ball resting where `track` was last seen differ from the table before play, on the frame it was last
        seen on, by `gutter_sighting_delta` (`vision.cells.changed_from_bare`)? A short sighting needs a ball's
        whole disc: the Play Line's stripe across a gutter in a player's pink (starcluster_v20: its fragments read as
        p1's balls, 6-17 over the bare table), fingers of a player's colour (starcluster_v21: 14-20) or a marble held
        in a hand over the gutter (the ring round it changes more than its disc: -17 to 4) is not one. Marbles lying
        in a gutter showed 13-52, so a faint one is missed, as before."""
        if self._bare is None or self._mapper is None:
            return False
        return changed_from_bare(frame.image, self._bare.image, self._mapper, (track.x, track.y)) \
            >= self.config.settle.gutter_sighting_delta

    def _seen_again(self, lost: Track, tracks: tuple[Track, ...]) -> bool:
        """Was a ball of the glimpsed gutter track's colour found anew beside it (within two ball diameters) since
        it was lost? It was a ball held over the gutter and let go, not one lying there and lifted away."""
        reach = 2 * self.profile.ball_diameter_mm
        return any(tr.id != lost.id and tr.colour == lost.colour and tr.state is TrackState.CONFIRMED
                   and tr.born_t is not None and tr.born_t > lost.last_seen_t and tr.born_at is not None
                   and math.dist(tr.born_at, (lost.x, lost.y)) <= reach
                   for tr in tracks)

    def _found_landed(self, settle: Settle) -> tuple[Track, ...]:
        """Where balls share places: the lost tracks of the open shot's striker that the table did not last settle
        with, lost in a place where another ball lies: the struck ball, found where it landed beside that ball and
        hidden behind it before it was followed long enough to be at rest (piratenbillard_v14: p1's ball, unseen in
        flight, was followed 0.3 s as a crescent beside p3's ball, and read nowhere: off the board, where the truth
        has a capture). Not seen in flight, it is no `Settle.landed` of the settle watch's; not at rest, the table
        reader would take it for a fleck of colour on a hand (`vision.cells.settled_reading`)."""
        if not self.profile.stacking or self._shooter is None:
            return ()
        known = {tr.id for tr in settle.landed} | self._settled_with
        return tuple(tr for tr in settle.hidden if tr.id not in known and tr.colour == self._shooter
                     and SettleWatch.beside(tr, settle.tracks))

    def _settled_image(self, settle: Settle, frame: Frame) -> np.ndarray:
        """The frame a settle is read on: this one, or, when a ball vanished within the rest window (a
        hand reaching in to lift it came over it just as the window closed), the last frame it was seen on. Every
        ball was at rest all through the window, so that frame shows the settled table with the ball in it (read
        on this one, a gutter ball under the umpire's fingers was read as no ball: a failed ball, back in hand)."""
        window = settle.t - self.config.settle.rest_debounce_s
        seen = [self._last_sight[tr.id] for tr in settle.hidden
                if tr.id in self._last_sight and tr.last_seen_t >= window]
        return min(seen, key=lambda f: f.t).image if seen else frame.image

    def _read_cells(self, settle: Settle, image: np.ndarray, mapper: BoardMapper, detector: Detector,
                    previous: Snapshot | None) -> Snapshot:
        reading = settled_reading(settle, image, mapper, detector, previous, self.config.cells, self._bare,
                                  self._read_steady, self._shooter,
                                  self._unexplained if self.game.shot_brings_ball else None)
        self._unexplained = reading.unexplained
        return reading.snapshot

    def _unsettled_px(self, tracks: Sequence[Track]) -> tuple[tuple[float, float], ...]:
        """Where the balls not yet at rest show in the image (`ColourDetector.unsettled_near`)."""
        moving = np.array([(t.x, t.y) for t in tracks if not t.at_rest], float).reshape(-1, 2)
        if not len(moving) or self._mapper is None:
            return ()
        return tuple((float(u), float(v)) for u, v in self._mapper.ball_centre_px(moving))

    def _struck_px(self) -> tuple[tuple[float, float], ...]:
        """Where the open shot's ball lay before it was struck, as a ball there shows in the image: a split of touching
        balls that held it may hold the paint of its space now, or its neighbours where they were
        (`ColourDetector.resplit_near`)."""
        place = dict(self.profile.places).get(self._struck_from) if self._struck_from is not None else None
        if place is None or self._mapper is None:
            return ()
        (u, v), = self._mapper.ball_centre_px(np.array([[(place.x_min + place.x_max) / 2,
                                                          (place.y_min + place.y_max) / 2]], float))
        return ((float(u), float(v)),)

    def _learn_vacated(self, settle: Settle, image: np.ndarray) -> None:
        """At the first settle after a ball was struck from its starting place, that place is empty (a shot moves
        one ball, and the struck ball left it): the paint under where the ball stood is the table's
        (`ColourDetector.learn_uncovered`). Not when a track there is a rest window older than the strike: the
        ball is still there. A ball found since the strike, seen inside the place's outline in the image but read
        on another place, is the paint itself: what shows of a space seen at a grazing angle is half a ball tall,
        and its middle, mapped as a ball's, lands on the next place (piratenbillard_v18: a purple ball's emptied
        space read as a ninth purple ball on the space before it at every settle after, its paint never learnt
        because it was kept clear as a ball's). So is one whose track was born on the place and is read on another
        now: the tracker may keep the struck ball's track on the paint and follow the ball with a new one
        (piratenbillard_v22: a ninth purple ball at every settle after its strike). A ball lying there all along is
        a ball whatever the angle (piratenbillard_v6: the middle of the ball on the next space shows inside the
        emptied one's outline)."""
        vacated, self._vacated = self._vacated, {}
        if not isinstance(self.detector, ColourDetector) or self._mapper is None:
            return
        tracks = settle.tracks + settle.hidden
        rects = dict(self.profile.places)
        for at, (owner, since) in vacated.items():
            old = since - self.config.settle.rest_debounce_s
            if any(tr.location == at and (tr.born_t is None or tr.born_t <= old) for tr in tracks):
                continue
            outline = self._mapper.calibration.board_to_image(np.array(rects[at].corners, float))
            others = [tr for tr in tracks if tr.location != at]
            discs = self._mapper.ball_discs_px(np.array([(tr.x, tr.y) for tr in others], float))
            edge = np.asarray(outline, np.float32).reshape(-1, 1, 2)
            # the struck ball's own track may stay on the paint while a new one follows the ball: born there
            around = [disc for tr, disc in zip(others, discs)
                      if (tr.born_t is None or tr.born_t <= old) and not (tr.born_at and rects[at].contains(tr.born_at))
                      or cv2.pointPolygonTest(edge, disc[:2], False) < 0]
            self.detector.learn_uncovered(image, owner, outline, around)

    def _learn_bare(self, image: np.ndarray, found: list[Detection], known: list[Point]) -> int:
        """The detector's table before play (`ColourDetector.learn_bare`), clear of the balls the game starts with
        (`known`, board mm) and of those found within two radii of them. What else it finds is the table's: a game
        starts with no other ball on it. Not so a run resumed mid-match (a settled table was noted before its
        first frame): every ball found is cleared round. Returns how many of the players' colours it took for the
        table."""
        if not isinstance(self.detector, ColourDetector) or self._mapper is None:
            return 0
        balls = self._mapper.ball_discs_px(np.array(known, float))
        mine = [d for d in found if d.colour in self.players]
        cleared = [d for d in found if self._snapshot is not None or any(
            (d.u - u) ** 2 + (d.v - v) ** 2 <= (2 * r) ** 2 for u, v, r in balls)]
        self.detector.learn_bare(image, balls + [(d.u, d.v, d.radius_px) for d in cleared])
        return sum(d not in cleared for d in mine)

    def _bare_table(self, image: np.ndarray, found: list[Detection], known: list[Point]) -> BareTable:
        """The first frame, and the places in which it shows no ball: none `found` there (any colour, skin
        too) nor one the game knows stands there (`known`, board mm: Piratenbillard's starting rows)."""
        assert self._mapper is not None
        reach = self.profile.ball_diameter_mm
        points = [(b.x, b.y) for b in self._mapper.map(found)] + list(known)
        return BareTable(image, frozenset(at for at, rect in self.profile.places
                                          if not any(rect.contains(point, reach) for point in points)))

    def _read_settled(self, settle: Settle, image: np.ndarray) -> Snapshot:
        assert self._mapper is not None and self.detector is not None
        self._read_steady = self._stabiliser.transform if self._stabiliser is not None else None
        if self._stabiliser is not None and \
                float(np.hypot(*self._stabiliser.shift_mm())) >= self.config.table.table_shift_mm:
            # the table has moved (a shove): the places are read where it lies now, in the frame of the
            # calibration (nearest pixels: the colours stay as seen); a shake of a pixel or two is left as is
            height, width = image.shape[:2]
            image = cv2.warpAffine(image, self._stabiliser.transform, (width, height), flags=cv2.INTER_NEAREST,
                                   borderMode=cv2.BORDER_REPLICATE)
            self._read_steady = None  # the image is the steadied one now
        return self.table_reader(settle, image, self._mapper, self.detector, self._snapshot)

    def _map_steadied(self, detections: list[Detection]) -> list[BoardBall]:
        """Detections mapped to the board with the camera shake taken out (`vision.stabilise`); the balls
        keep the detections as seen, for the frame log."""
        assert self._mapper is not None
        if self._stabiliser is None or not detections:
            return self._mapper.map(detections)
        steady = np.array([self._stabiliser.steady(d.u, d.v) for d in detections], float)
        return self._mapper.map(detections, steady)

    def _known_colours(self, detections: list[Detection], t: float, out: list[Observation]) -> list[Detection]:
        """Balls of a colour no player has are reported once, then left out of the game (and from then on the
        detector is asked for the players' colours only: measuring the others was most of the detector's work with
        a player's skin and clothes in view)."""
        if not self.players:
            return detections
        kept = []
        for d in detections:
            if d.colour in self.players:
                kept.append(d)
            elif d.colour not in self._unknown_colours:
                self._unknown_colours.add(d.colour)
                out.append(PipelineWarning(t, f"a ball of colour {d.colour!r} matches no player "
                                              f"({', '.join(sorted(self.players))}); ignored, check the table or "
                                              "the players"))
        return kept

    def _use(self, calibration: Calibration, image: np.ndarray) -> None:
        if isinstance(self.detector, ColourDetector) and self.calibration is not None \
                and calibration is not self.calibration:  # re-fitted: the table before play is where it shows now
            corners = np.array(self.profile.table.corners, np.float32)
            self.detector.follow_camera(cv2.getPerspectiveTransform(
                self.calibration.board_to_image(corners).astype(np.float32),
                calibration.board_to_image(corners).astype(np.float32)), image)
        self.calibration = calibration
        self._mapper = BoardMapper(calibration, self.profile)
        config = self.config
        self._stabiliser = TableStabiliser(image, calibration, self.profile, config.stabiliser) \
            if config.stabiliser.enabled else None
        self._shifts = ShiftWatch(config.monitor.check_interval_s, config.table.shift_window_s,
                                  config.table.table_shift_mm) if self._stabiliser is not None else None
        t = self.profile.table
        looked_at = search_area(self.profile)
        corners = _rect_px(calibration, looked_at)
        if self.game.max_hop_mm > 0:  # and the air above it, up to the highest hop
            above = self._mapper.air_polygon_px(looked_at, self.game.max_hop_mm)
            corners = cv2.convexHull(np.vstack([corners, above]).astype(np.float32)).reshape(-1, 2).astype(float)
        height, width = image.shape[:2]
        self._mask = np.zeros((height, width), np.uint8)
        for polygon in (corners, *(_rect_px(calibration, rect) for rect in gutters_behind(self.profile, looked_at))):
            cv2.fillPoly(self._mask, [np.round(polygon).astype(np.int32)], 255)
        self._mask.flags.writeable = False  # the detector need not compare it from frame to frame
        watched = _rect_px(calibration, self.profile.playing_field)
        centre = np.array([[(t.x_min + t.x_max) / 2, (t.y_min + t.y_max) / 2]])
        edge = centre + [[self.profile.ball_diameter_mm / 2, 0]]
        radius_px = float(np.linalg.norm(calibration.board_to_image(edge) - calibration.board_to_image(centre)))
        mapper = self._mapper
        # past a Play Line, the table out of the shooter's reach: a ball just released rolls there before the field
        reach = beyond_reach(self.profile)
        pictured = watched if reach is None else _rect_px(calibration, reach)
        self._picture = FieldPicture(config.settle, config.hands.hand_min_area_balls, pictured, (width, height),
                                     lambda px: mapper.ball_radius_px(mapper.to_board(px)),
                                     mapper.smallest_ball_radius_px())
        if self._hands is None:
            self._hands = HandWatch(config.hands, watched, (width, height), radius_px,
                                    corners if looked_at != t else None)

    def _check_markers(self, frame: Frame) -> list[Observation]:
        assert self.calibration is not None
        if self._monitor is None:
            self._use(self.calibration, frame.image)
            self._monitor = CalibrationMonitor(self.profile, self.calibration, self.config.monitor, frame.image)
        table = self.config.table
        following = False
        if self._stabiliser is not None:
            self._stabiliser.update(frame.image)
            following = self._stabiliser.found >= table.min_refit_markers
        if not self.config.monitor.check_interval_s:
            return []
        out: list[Observation] = []
        if following and self._stabiliser is not None and self._shifts is not None:
            moved = self._shifts.update(frame.t, self._stabiliser.shift_mm())
            if moved is not None:  # a lasting step of the markers; a bumped camera looks the same: for review
                out.append(TableMovement(t=frame.t, magnitude_mm=round(moved, 1),
                                         confidence=table.stabilised_movement_confidence))
        if following:
            # the stabiliser follows the markers to a fraction of a pixel, so the mapping stays right and movements
            # are its to report: the monitor's re-fit (3-25 mm apart from check to check on the samples, far
            # markers a few pixels wide) would be set aside, and it cost 20-70 ms a second (a stall on a live feed)
            self._monitor.seen(frame.t)
            return out
        for seen in self._monitor.update(frame.image, frame.t):
            if isinstance(seen, MonitorMovement) and len(self._monitor.calibration.markers_used) \
                    < table.min_refit_markers:
                self._monitor.calibration = self.calibration  # a re-fit on two markers proves nothing
            elif isinstance(seen, MonitorMovement):
                if seen.kind == "camera":  # the camera was bumped, not the table: no foul, just re-map
                    out.append(PipelineWarning(frame.t, f"the camera moved ({seen.magnitude_mm:.1f} mm on the "
                                                        "table); re-calibrated"))
                else:  # a moved table is the engine's call; "unknown" goes in flagged for review
                    confidence = table.table_movement_confidence if seen.kind == "table" \
                        else table.unknown_movement_confidence
                    out.append(TableMovement(t=frame.t, magnitude_mm=round(seen.magnitude_mm, 1),
                                             confidence=confidence))
                self._use(self._monitor.calibration, frame.image)
            elif isinstance(seen, MarkersLostWarning):
                out.append(PipelineWarning(frame.t, seen.message))
        return out


def _in_gutter_at_last(track: Track, speed_mm_s: float) -> bool:
    """Was a track last seen lying in a gutter, no faster than `speed_mm_s` (for a lost one, the motion speed: slower
    than a ball rolling for real; `LYING_SPEED_MM_S` for a sighting kept to stand for one)? A gutter is one place, and a
    ball leaves it only in a hand, so the frame it was last seen on shows it where it came to rest. After an abrupt
    stop in a dark gutter, the video's compression heals the ball's picture over a few tenths of a second: its
    detected centre drifts 6 px as it does, and the umpire lifted starcluster_v14's gutter ball 0.74 s after it
    stopped, with its filter still at 13 mm/s, over the 12 of a ball at rest. The settle after the lift read no ball
    there: a failed ball, back in hand."""
    return track.location is not None and track.location.place is Place.GUTTER \
        and math.hypot(track.vx, track.vy) <= speed_mm_s


def tracked_frame(t: float, tracks: tuple[Track, ...], balls: list[BoardBall],
                  to_image: Callable[[np.ndarray], np.ndarray]) -> TrackedFrame:
    """The confirmed tracks, with where a ball resting at each appears in the image (`to_image`: board mm ->
    image px), and the mapped detections of a frame."""
    shown = [track for track in tracks if track.state is TrackState.CONFIRMED]
    uv: list[list[float | None]] = [[None, None] for _ in shown]
    if shown:
        uv = np.asarray(to_image(np.array([[tr.x, tr.y] for tr in shown], float))).tolist()
    return TrackedFrame(t, tuple((tr.id, tr.colour, tr.x, tr.y, u, v) for tr, (u, v) in zip(shown, uv)),
                        tuple((b.detection.colour, b.detection.u, b.detection.v, b.detection.radius_px, b.x, b.y,
                               b.detection.score) for b in balls))


def search_area(profile: TableProfile) -> Rect:
    """Where balls are looked for: the whole table, or on a table with a Play Line the table beyond its stripe
    (half a ball past it: the stripe and the shooter's hands, skin and sleeves on the near side read as
    balls; a launched ball is first seen just past the line, which the shot logic counts as a launch)."""
    past = _past_line(profile, profile.ball_diameter_mm / 2)
    return profile.table if past is None else past


def beyond_reach(profile: TableProfile) -> Rect | None:
    """On a table with a Play Line, the table a ball's length beyond it: a ball found there anew was rolled there,
    not carried in the shooter's hand (None on a table without one)."""
    return _past_line(profile, profile.ball_diameter_mm)


def _past_line(profile: TableProfile, margin_mm: float) -> Rect | None:
    """The table from `margin_mm` beyond its Play Line on (None on a table without one)."""
    if profile.play_line is None:
        return None
    t = profile.table
    line_y = max(profile.play_line[0][1], profile.play_line[1][1])
    return Rect(t.x_min, line_y + margin_mm, t.x_max, t.y_max)


def gutters_behind(profile: TableProfile, looked_at: Rect) -> tuple[Rect, ...]:
    """The parts of the gutters nearer the player than the search area: looked at too, since a ball resting in
    a gutter is out of play wherever the gutter runs (only the rest of the near side is left out). The Play
    Line's stripe across a gutter is in them: `on_play_line_stripe` tells it from a ball."""
    return tuple(Rect(g.x_min, g.y_min, g.x_max, min(g.y_max, looked_at.y_min))
                 for g in profile.gutter_areas if g.y_min < looked_at.y_min)


def _rect_px(calibration: Calibration, rect: Rect) -> np.ndarray:
    """The image polygon of a board rectangle."""
    return calibration.board_to_image(np.array([[rect.x_min, rect.y_min], [rect.x_max, rect.y_min],
                                                [rect.x_max, rect.y_max], [rect.x_min, rect.y_max]], float))
