"""When pose runs, on which pixels, and which Play Line call belongs to which shot (Star Cluster Ball).

Pose never runs in the frame loop: it runs beside it, on a worker thread (one run at a time), on a crop holding
the player's side of the Play Line (and `pose_crop_margin_mm` past it). A run costs 6-20 ms on one core (the int8
model at `pose_input_px`; `benchmarks/pipeline.py`'s "ms/pose run"), so it runs every `pose_release_interval_s`
during a release window (while the shooter's body is within `pose_arm_mm` of the line, and until
`pose_release_after_s` after vision sees the ball cross it, `shot_started`), and on every frame while the last
run applied saw a part of the shooter within `pose_near_mm` of the line and neither judge has called: in a file a
run's result counts `pose_join_s` (three frames) after its run, so a part first seen past the margin is too late
to hurry the runs that call it (a head's lean from overhead was called up to 233 ms after its crossing, where
issue 16 asks for 200). Otherwise it runs every `pose_interval_s`, and not while the crop looks as it did when pose
last saw nobody at the line; but every `pose_release_interval_s` while its last run saw nobody and the pixels see a
body at the line, however wide (a head leaning in from overhead: the model may miss a person one run and find them
the next).

The pixels past the line (`vision.line_strip`) are looked at in the frame loop itself (about 2 ms), every frame in
a release window and every other frame outside one: a body there near the line opens the window too, and one past
the margin in K of N frames is a call. Either judge's call counts, one per window; the keypoints name the part when
they call too. A keypoint call of an arm (a hand, a wrist, an elbow) waits until the pixels, once they have learned
the table, see a body from the player's side past the line, and is a review warning if they do not before the window
closes: an arm past the line is seen there, and the model may put the elbows of an arm held short past it. A call
from the pixels alone belongs to a shot seen at most `line_strip.release_before_s` after it was last over the line,
and goes unwarned when no shot claims it (a hand lifting balls between shots).

A run's result is joined to the shot by its frame's time, in one of two modes:

* a file (`live=False`) gives the same record however fast the machine is (a resumed run is
  re-refereed and checked line by line): a run started at frame time t is applied at the first
  frame at or after t + `pose_join_s`, the loop waiting for it there only if it is not done yet; a
  frame due for a run while the worker is busy waits for it (a run is never skipped for being
  late); so which frames pose runs on, and when each result counts, depend on frame times and
  earlier results only. Every run started before a `table_settled` is applied before it goes out.
* a live feed (`live=True`) never waits: a frame due for a run while one is in flight is skipped
  (pose runs on the newest frames) and a result is applied at the first frame after it is done. A
  `table_settled` that comes while a run is in flight is held back, with what follows it, until the
  result is in, and then goes out at its own time, so a call from that run still comes before it.

"During a shot" (SCB-3.5) is read as the release: from the shooter at the line with the ball to a
moment after the ball crossed the line. A lean over the line comes with the release, before the
ball crosses, and vision sees the ball cross late (its track is confirmed a few frames on), so a
call made before a `shot_started` is held and goes to the shot whose ball is seen crossing within
`pose_release_before_s` of it. It is emitted right after that `shot_started`, at its time (the log
stays in time order and the engine has the shot open), or, when the run that made it is applied
later, with that frame's observations at that frame's time; always before the shot's
`table_settled`, so the engine voids the shot. A call no shot claims is a review warning.
"""

from __future__ import annotations

import math
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from typing import Callable, Sequence

import cv2
import numpy as np

from calibration.calibrate import Calibration
from calibration.profile import TableProfile
from rules.events import Event, PlayLineCrossing, ShotStarted, TableSettled
from vision.config import LineStripSettings, PlayLineSettings, PoseConfig
from vision.line_strip import LineStrip, StripReach
from vision.play_line import BODY_KEYPOINTS, HEAD_KEYPOINTS, PlayLineJudge, other_side
from vision.pose import Person

GRID = (65, 37)  # pixels sampled to find the crop (every 20 px at 1280x720)
TIME_TOLERANCE_S = 0.005  # timestamps jitter; an interval of two frames must not become three
# Idle looks are skipped while the crop, shrunk to THUMB_WIDTH px wide, has under CHANGED_FRACTION of its pixels
# more than CHANGED_GREY grey levels off the last view in which pose saw nobody at the line (measured on
# play_line_foul against its first frame: up to 3 % of them with nobody there, from lighting drift and rolling
# balls, 10 % with a hand lifting a ball; 6.5-60 % with the shooter in view)
THUMB_WIDTH = 64
# `np.rot90`'s counter-clockwise quarter turns, by OpenCV
TURNS = (None, cv2.ROTATE_90_COUNTERCLOCKWISE, cv2.ROTATE_180, cv2.ROTATE_90_CLOCKWISE)
CHANGED_GREY = 25
CHANGED_FRACTION = 0.02
ARM_PARTS = ("_hand", "_wrist", "_elbow")  # a keypoint call of these waits for the pixels to see a body past the line
HEAD_REACH_MM = 150.0  # a shape past the line whose tip is this close to the head is the head (unless a hand is nearer)

Estimator = Callable[[np.ndarray], list[Person]]  # `vision.pose.PoseEstimator`


@dataclass(frozen=True)
class Watched:
    """One frame's observations with the Play Line call in place, and (time, message) of calls no shot claimed."""

    events: list[Event]
    warnings: list[tuple[float, str]]


@dataclass(frozen=True)
class Crop:
    """The image box pose runs on, in full-image pixels (x1, y1 exclusive), and the quarter turns (counter-clockwise,
    as `np.rot90`) that stand it upright: the table's side of the line up, as a player at the line faces it."""

    x0: int
    y0: int
    x1: int
    y1: int
    turns: int = 0

    def cut(self, image: np.ndarray) -> np.ndarray:
        """The crop of a full frame, turned upright (a copy: the frame may be reused once the loop moves on): the
        pixels of `np.rot90`, turned by OpenCV, which took 0.05-0.2 ms where copying numpy's turned view took
        1.6-2.5 ms (a quarter of a Star Cluster frame's time with pose on)."""
        box = image[self.y0:self.y1, self.x0:self.x1]
        turn = TURNS[self.turns % 4]
        return box.copy() if turn is None else cv2.rotate(box, turn)  # a view of a whole-width crop is contiguous
        # already: np.ascontiguousarray would not copy it

    def uncut(self, upright: np.ndarray) -> np.ndarray:
        """The box's own pixels back from its upright crop (`cut`), unturned."""
        turn = TURNS[-self.turns % 4]
        return upright if turn is None else cv2.rotate(upright, turn)

    def to_image(self, person: Person) -> Person:
        """A person found in the upright crop, in full-image pixels."""
        corners = self._back(np.array([person.box[:2], person.box[2:]], float))
        (x1, y1), (x2, y2) = corners.min(axis=0), corners.max(axis=0)
        points = self._back(np.array([(k.x, k.y) for k in person.keypoints], float).reshape(-1, 2))
        return replace(person, box=(float(x1), float(y1), float(x2), float(y2)),
                       keypoints=tuple(replace(k, x=float(x), y=float(y))
                                       for k, (x, y) in zip(person.keypoints, points)))

    def _back(self, xy: np.ndarray) -> np.ndarray:
        """Points of the upright crop (pixel centres) -> full-image pixels: the turns undone, then the box's offset."""
        w, h = self.x1 - self.x0, self.y1 - self.y0
        x, y = xy[:, 0], xy[:, 1]
        turn = self.turns % 4
        back = {0: (x, y), 1: (w - 1 - y, x), 2: (w - 1 - x, h - 1 - y), 3: (y, h - 1 - x)}[turn]
        return np.column_stack(back) + [self.x0, self.y0]


def _thumbnail(box: np.ndarray, crop: Crop) -> np.ndarray:
    """The crop's box (BGR, unturned) shrunk to `THUMB_WIDTH` grey levels across: what the idle change test compares."""
    size = (THUMB_WIDTH, max(1, round(THUMB_WIDTH * (crop.y1 - crop.y0) / (crop.x1 - crop.x0))))
    return cv2.resize(cv2.cvtColor(box, cv2.COLOR_BGR2GRAY), size, interpolation=cv2.INTER_AREA).astype(np.int16)


def upright_turns(calibration: Calibration, judge: PlayLineJudge, profile: TableProfile) -> int:
    """Quarter turns (`np.rot90`) that bring the table's side of the Play Line up in the image: a player at the
    line then stands upright in the crop, as the pose model saw people (an overhead camera across the table shows
    them lying sideways, and the model missed most of them)."""
    assert profile.play_line is not None
    a, b = (np.asarray(p, float) for p in profile.play_line)
    middle = (a + b) / 2
    ends = calibration.board_to_image(np.array([middle, middle + 100.0 * np.asarray(judge.forward)]))
    dx, dy = ends[1] - ends[0]
    ups = []
    for _ in range(4):  # each turn counter-clockwise takes an image direction (dx, dy) to (dy, -dx)
        ups.append(-dy)
        dx, dy = dy, -dx
    return int(np.argmax(ups))


def near_side_crop(calibration: Calibration, judge: PlayLineJudge, profile: TableProfile, margin_mm: float,
                   image_size: tuple[int, int]) -> Crop:
    """The box around every pixel whose table point lies on the player's side of the Play Line or at most
    `margin_mm` past it, within the table's width plus the margin: the shooter, whatever the camera.

    Found on a grid of pixels mapped onto the board; pixels above the horizon (their ray never meets the
    table) are left out.
    """
    width, height = image_size
    u, v = np.meshgrid(np.linspace(0, width - 1, GRID[0]), np.linspace(0, height - 1, GRID[1]))
    px = np.column_stack([u.ravel(), v.ravel()])
    t = profile.table
    board = calibration.image_to_board(px)
    keep = (calibration.below_horizon(px) & (judge.beyond_mm(board) <= margin_mm)
            & (board[:, 0] >= t.x_min - margin_mm) & (board[:, 0] <= t.x_max + margin_mm))
    turns = upright_turns(calibration, judge, profile)
    if not keep.any():  # the line is out of view: the whole frame
        return Crop(0, 0, width, height, turns)
    step_u, step_v = (width - 1) / (GRID[0] - 1), (height - 1) / (GRID[1] - 1)
    kept = px[keep]
    return Crop(int(max(0, kept[:, 0].min() - step_u)), int(max(0, kept[:, 1].min() - step_v)),
                int(min(width, kept[:, 0].max() + step_u + 1)), int(min(height, kept[:, 1].max() + step_v + 1)), turns)


@dataclass
class _Shot:
    t: float
    player: str | None
    called: bool = False


@dataclass(frozen=True)
class _Run:
    """A pose run handed to the worker: the frame's time, where its crop was and for which calibration, the
    upright crop pose is given (read only; shrunk into the empty view if pose finds nobody at the line: only then,
    as shrinking it took 0.9 ms a run), and the people it will find."""

    t: float
    crop: Crop
    calibration: Calibration
    pixels: np.ndarray
    people: Future[list[Person]]


@dataclass(frozen=True)
class _Held:
    """A live frame's observations held back (from a `table_settled` on) until the run in flight is applied."""

    t: float
    events: list[Event]
    to_play: str | None


class PoseWatch:
    """Runs pose at the rate the moment needs, beside the frame loop, and adds the Play Line call to the frame's
    observations. `live`: the source is a live feed (never wait for pose), else a file (deterministic); see the
    module docstring. `close` stops the worker thread."""

    def __init__(self, estimator: Estimator, profile: TableProfile, config: PoseConfig,
                 settings: PlayLineSettings = PlayLineSettings(), live: bool = False,
                 strip: LineStripSettings | None = LineStripSettings()) -> None:
        self.estimator, self.profile, self.config, self.settings = estimator, profile, config, settings
        self.strip_settings = strip  # None: keypoints alone judge the line
        self.live = live
        self.decided: list[tuple[str, PlayLineCrossing]] = []  # ("pixels" | "keypoints", call at its decision time)
        self.calls = 0  # pose runs, for the benchmark
        self.run_seconds = 0.0  # wall time the worker spent in pose runs, for the benchmark
        self.waits = 0  # times the frame loop waited for the worker (file mode only)
        self._worker: ThreadPoolExecutor | None = None  # started on the first run
        self._runs: deque[_Run] = deque()  # handed to the worker, not yet applied, oldest first
        self._held: list[_Held] = []  # live: frames held back behind the run in flight
        self._t = 0.0  # the latest frame's time
        self._calibration: Calibration | None = None
        self._judge: PlayLineJudge | None = None
        self._crop = Crop(0, 0, 0, 0)
        self._last_look: float | None = None
        self._empty: np.ndarray | None = None  # the crop, shrunk, when pose last saw nobody at the line
        self._armed_until = -np.inf  # the release window is open until then
        self._pending: PlayLineCrossing | None = None  # a call no shot has claimed yet ...
        self._pending_by_keypoints = False  # ... and whether the keypoints saw it
        self._shot: _Shot | None = None
        self._strip: LineStrip | None = None
        self._strip_window: deque[StripReach | None] = deque(maxlen=settings.window_frames)
        self._window_called = False  # either judge called in the release window now open
        self._near = False  # the last run applied saw the shooter within `pose_near_mm` of the line
        self._saw_nobody = True  # the last run applied saw nobody who may be shooting
        self._strip_frames = 0  # frames the pixels were offered (outside a window they look at every other one)
        self._people: list[Person] = []  # the people of the latest pose run applied (they name a part for pixels)
        self._strip_past_t = -math.inf  # the latest look in which the pixels saw a body rooted behind the line past it
        self._at_line = False  # the latest look saw a body rooted behind the line within `arm_mm` of it, however wide
        self._unseen: PlayLineCrossing | None = None  # a keypoint call of an arm the pixels have not seen past the line

    def update(self, t: float, image: np.ndarray, calibration: Calibration, events: list[Event],
               to_play: str | None, balls: Sequence[tuple[float, float, float]] = ()) -> Watched:
        """This frame's observations with the Play Line call, if one belongs to a shot, in its place, and the
        calls no shot claimed (for a person). `to_play`: whose turn it is, the shooter of a `shot_started`
        that names nobody. `balls`: (u, v, radius px) of the balls detected in this frame (not a body)."""
        warnings: list[tuple[float, str]] = []
        self._t = t
        self._raise_failed()
        if calibration is not self._calibration:  # first frame, or re-mapped after the camera moved
            self._calibration = calibration
            self._judge = PlayLineJudge(calibration, self.profile, self.settings)
            height, width = image.shape[:2]
            self._crop = near_side_crop(calibration, self._judge, self.profile, self.config.pose_crop_margin_mm,
                                        (width, height))
            self._empty = None
            if self.strip_settings is not None:
                self._strip = LineStrip(calibration, self.profile, self.strip_settings, (width, height))
                self._strip_window.clear()
        self._apply_due(t, warnings)
        self._watch_strip(t, image, balls, warnings)
        out: list[Event] = []
        if self._held and not self._runs:  # live: the run the held settle waited for is applied
            held, self._held = self._held, []
            for frame in held:
                out += self._frame(frame.t, frame.events, frame.to_play, warnings)
        if not (self.live and self._runs) and self._due(t, image):  # live: skipped while a run is in flight
            self._start(t, image)
            self._apply_due(t, warnings)  # `pose_join_s` 0: at once, as if pose ran in the loop
        if self.live and (self._held or (self._runs and any(isinstance(e, TableSettled) for e in events))):
            settle = next((i for i, e in enumerate(events) if isinstance(e, TableSettled)), len(events)) \
                if not self._held else 0
            if settle:
                out += self._observe(events[:settle], to_play, t, warnings)
            self._held.append(_Held(t, events[settle:], to_play))  # it goes out once the run in flight is in
            return Watched(out, warnings)
        if any(isinstance(e, TableSettled) for e in events):
            while self._runs:  # a file: every run started before the settle counts for its shot
                self._apply(self._runs.popleft(), t, warnings)
        out += self._frame(t, events, to_play, warnings)
        return Watched(out, warnings)

    @property
    def holding(self) -> bool:
        """A live frame's observations are held back behind the run in flight (`table_settled` waits for it)."""
        return bool(self._held)

    def finish(self) -> Watched:
        """The source has ended: every run still out applied (waiting for it), and what was held, at the last frame's
        time. The worker keeps running; `close` stops it."""
        warnings: list[tuple[float, str]] = []
        while self._runs:
            self._apply(self._runs.popleft(), self._t, warnings)
        self._drop_unseen(self._t, warnings)
        held, self._held = self._held, []
        out: list[Event] = []
        for frame in held:
            out += self._frame(frame.t, frame.events, frame.to_play, warnings)
        out += self._claim(self._t)
        return Watched(out, warnings)

    def close(self) -> None:
        """Stop the worker thread (a run in progress is waited for, results not yet applied are dropped); safe to call
        twice. A failed run not yet raised in the frame loop is raised here, unless `update` or `finish` raised it."""
        worker, self._worker = self._worker, None
        runs, self._runs = list(self._runs), deque()
        if worker is not None:
            worker.shutdown(wait=True, cancel_futures=True)
        for run in runs:
            error = None if run.people.cancelled() else run.people.exception()
            if error is not None:
                raise error

    def wait_idle(self) -> None:
        """Block until no run is in progress on the worker (tests and tools; the frame loop never calls it)."""
        wait([run.people for run in self._runs])

    def __enter__(self) -> PoseWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _frame(self, t: float, events: list[Event], to_play: str | None,
               warnings: list[tuple[float, str]]) -> list[Event]:
        """One frame's observations with the call in place; a held call no shot claimed in time is a warning."""
        out = self._observe(events, to_play, t, warnings)
        out += self._claim(t)
        if self._pending is not None and t - self._pending.t > self._before_s():
            self._drop_pending(t, warnings)
            self._reset(t, warnings)  # a lean at the next release is called again
        return out

    def _observe(self, events: list[Event], to_play: str | None, t: float,
                 warnings: list[tuple[float, str]]) -> list[Event]:
        out: list[Event] = []
        for event in events:
            if isinstance(event, TableSettled):
                out += self._claim(t)  # a call on the settling frame still belongs to the shot
                self._shot = None
                self._reset(t, warnings)  # the next shot gets its own call, even if the shooter never stepped back
            out.append(event)
            if isinstance(event, ShotStarted):
                self._shot = _Shot(event.t, event.player or to_play)
                self._armed_until = max(self._armed_until, event.t + self.config.pose_release_after_s)
                out += self._claim(t)
        return out

    def _start(self, t: float, image: np.ndarray) -> None:
        """Hand a pose run on this frame's crop to the worker; a file first waits for the run before to finish."""
        assert self._calibration is not None
        if self._runs and not self._runs[-1].people.done():  # a file: one run at a time, none skipped
            self.waits += 1
            wait([self._runs[-1].people])
            self._raise_failed()
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pose-worker")
        c = self._crop
        upright = c.cut(image)
        self._runs.append(_Run(t, c, self._calibration, upright, self._worker.submit(self._run, upright)))
        self.calls += 1

    def _run(self, crop: np.ndarray) -> list[Person]:
        """On the worker thread."""
        start = time.perf_counter()
        try:
            return self.estimator(crop)
        finally:
            self.run_seconds += time.perf_counter() - start

    def _apply_due(self, t: float, warnings: list[tuple[float, str]]) -> None:
        """Live: the runs done by now. A file: the runs started `pose_join_s` or more before `t`, waited for."""
        while self._runs and (self._runs[0].people.done() if self.live else
                              t >= self._runs[0].t + self.config.pose_join_s - TIME_TOLERANCE_S):
            self._apply(self._runs.popleft(), t, warnings)

    def _raise_failed(self) -> None:
        """A run that failed is raised in the frame loop at the first frame after it did."""
        failed = [run for run in self._runs if run.people.done() and run.people.exception() is not None]
        if failed:
            self._runs.clear()
            failed[0].people.result()

    def _apply(self, run: _Run, t: float, warnings: list[tuple[float, str]]) -> None:
        """A run's result (waited for if not in yet), at its frame's time: opens the release window when the shooter
        is at the line, feeds the judge, and holds the call it makes."""
        assert self._judge is not None
        if not run.people.done():
            self.waits += 1
        people = [run.crop.to_image(p) for p in run.people.result()]  # raises the worker's error
        self._people = people
        furthest = max((r.beyond_mm for r in self._judge.shooter(people)), default=-math.inf)
        self._near = furthest > -self.config.pose_near_mm
        self._saw_nobody = furthest == -math.inf
        if furthest > -self.config.pose_arm_mm:
            self._armed_until = max(self._armed_until, run.t + self.config.pose_interval_s)
        elif run.calibration is self._calibration:
            self._empty = _thumbnail(run.crop.uncut(run.pixels), run.crop)
        shooting = run.t < self._armed_until
        call = self._judge.update(run.t, people, shooting=shooting)  # outside a window it forgets
        if not shooting and self._strip is None:  # else the pixels, seen every frame, say when the window closes
            self._window_called = False
        if call is None:
            return
        if self._unseen_past(call):
            self._unseen = call  # until the pixels see a body past the line, or the window closes
        else:
            self._call("keypoints", call, t, warnings)

    def _unseen_past(self, call: PlayLineCrossing) -> bool:
        """A keypoint call of an arm part (a hand, a wrist, an elbow) where the pixels, which have learned the table
        past the line, saw no body rooted on the player's side past it in the time the judge's last N runs take: the
        model may put the elbows of an arm held short, whose shadow falls over the line, past it (an overhead
        composite: 62-68 mm past, the arm 13 mm short). A head is the keypoints' alone: pixels cannot tell a lean
        from a stand."""
        if self._strip is None or not call.body_part.endswith(ARM_PARTS):
            return False
        window_s = self.settings.window_frames * self.config.pose_release_interval_s
        return self._strip.learned and self._strip_past_t < call.t - window_s - TIME_TOLERANCE_S

    def _watch_strip(self, t: float, image: np.ndarray, balls: Sequence[tuple[float, float, float]],
                     warnings: list[tuple[float, str]]) -> None:
        """The pixels past the line, every frame in a release window and every other frame outside one (half the cost
        while nobody is at the line): a body near the line opens the release window; past the margin in K of the last
        N frames of the window, it is a call."""
        if self._strip is None:
            return
        self._strip_frames += 1
        if t >= self._armed_until and self._strip_frames % 2:
            return
        reach = self._strip.update(image, balls)
        assert self.strip_settings is not None
        if reach is not None and reach.beyond_mm > -self.strip_settings.arm_mm:
            self._armed_until = max(self._armed_until, t + self.config.pose_interval_s)
        rooted = self._strip.rooted_beyond_mm
        self._at_line = rooted is not None and rooted > -self.strip_settings.arm_mm
        past = rooted is not None and rooted > 0
        if past:
            self._strip_past_t = t
        if t >= self._armed_until:
            self._strip_window.clear()
            self._window_called = False
            self._drop_unseen(t, warnings)
            return
        if self._unseen is not None and past:  # the arm the keypoints saw is seen past the line
            call, self._unseen = self._unseen, None
            self._call("keypoints", replace(call, t=t), t, warnings)
        over_now = reach is not None and reach.beyond_mm > self.strip_settings.margin_mm
        self._strip_window.append(reach if over_now else None)
        if over_now and self._pending is not None and not self._pending_by_keypoints:
            self._pending = replace(self._pending, t=t)  # still over the line: the call holds as of now
        over = [r for r in self._strip_window if r is not None]
        if len(over) >= self.settings.frames_to_call and not self._window_called:
            part = self._part_at(max(over, key=lambda r: r.beyond_mm), image, balls)
            if part != "head":  # a head seen past the line may be above the table behind it: the keypoints judge it
                self._call("pixels", PlayLineCrossing(t=t, body_part=part, confidence=1.0), t, warnings)

    def _call(self, judge: str, call: PlayLineCrossing, t: float, warnings: list[tuple[float, str]]) -> None:
        """One call per release window, whichever judge makes it first; the keypoints, when they call too while the
        call waits for its shot, name the body part."""
        self.decided.append((judge, call))
        if self._window_called:
            if judge == "keypoints" and self._pending is not None:
                self._pending = replace(self._pending, body_part=call.body_part, confidence=call.confidence)
                self._pending_by_keypoints = True
            return
        self._window_called = True
        if self._pending is not None:
            self._drop_pending(t, warnings)
        self._pending, self._pending_by_keypoints = call, judge == "keypoints"

    def _drop_unseen(self, t: float, warnings: list[tuple[float, str]]) -> None:
        """A keypoint call of an arm the pixels never saw past the line, its window closed: no call, a review
        warning."""
        if self._unseen is not None:
            call, self._unseen = self._unseen, None
            part = call.body_part.replace("_", " ")
            warnings.append((t, f"the keypoints put the {part} over the Play Line at {call.t:.2f}s (confidence "
                                f"{call.confidence:.2f}), but nothing was seen past the line there; no call, please "
                                "review"))

    def _drop_pending(self, t: float, warnings: list[tuple[float, str]]) -> None:
        """A call no shot claimed: a review warning when the keypoints saw a body part over the line (a shot vision
        may have missed); a shape seen by the pixels alone is most often a hand lifting balls between shots."""
        assert self._pending is not None
        if self._pending_by_keypoints:
            warnings.append(self._unclaimed(t, self._pending))
        self._pending = None

    def _part_at(self, reach: StripReach, image: np.ndarray, balls: Sequence[tuple[float, float, float]]) -> str:
        """The body part a shape past the line is, from the latest pose run: of the person whose body is nearest where
        the shape crosses the line, the head if its tip is by the head, else the hand of the arm nearest the tip, or,
        where pose saw no arm, the hand on the side of the body the shape crosses the line on; where pose saw nobody,
        on the side of the body the pixels see behind the line in `image` (`LineStrip.body`). Sides are a shooter's
        own, facing the table (`PlayLineJudge.faces_the_table`). "hand" (side unknown) if neither sees a body: the
        pixels call only shapes no wider than an arm."""
        assert self._judge is not None
        best: tuple[float, dict[str, np.ndarray]] | None = None
        for person in self._people:
            board = self._judge.board_keypoints(person)
            if not board:
                continue
            gap = min(float(np.hypot(*(p - reach.root))) for p in board.values())
            if best is None or gap < best[0]:
                best = (gap, board)
        if best is None:  # the side of the body the pixels see behind the line, if they do
            assert self._strip is not None
            body = self._strip.body(image, reach, balls)
            return "hand" if body is None else f"{self._judge.side(reach.root, body)}_hand"
        _, board = best
        tip = np.array(reach.tip)
        head = [board[name] for name in HEAD_KEYPOINTS if name in board]
        arms = {name: float(np.hypot(*(board[name] - tip))) for name in board
                if name.endswith(("_wrist", "_elbow", "_shoulder"))}
        nearest_arm = min(arms, key=arms.__getitem__, default=None)
        if head:
            to_head = float(np.hypot(*(np.mean(head, axis=0) - tip)))
            if to_head <= HEAD_REACH_MM and (nearest_arm is None or to_head <= arms[nearest_arm]):
                return "head"
        if nearest_arm is not None:
            hand = f"{nearest_arm.split('_')[0]}_hand"
            return other_side(hand) if self._judge.faces_the_table(board) is False else hand
        middle = [board[name] for name in BODY_KEYPOINTS if name in board]
        return f"{self._judge.side(reach.root, np.mean(middle, axis=0))}_hand" if middle else "hand"

    def _due(self, t: float, image: np.ndarray) -> bool:
        """Every look in a release window; an idle look only if the crop changed since nobody was at the line."""
        armed = t < self._armed_until
        interval = self.config.pose_release_interval_s if armed else self.config.pose_interval_s
        if armed and self._near and not self._window_called:
            interval = 0.0  # a part near the line: the judge's K-th run over it comes K - 1 frames after the first
        elif not armed and self._at_line and self._saw_nobody:
            interval = self.config.pose_release_interval_s  # the pixels see a body at the line where pose saw nobody
        if self._last_look is not None and t - self._last_look < interval - TIME_TOLERANCE_S:
            return False
        self._last_look = t
        c = self._crop
        return armed or self._empty is None or \
            np.mean(np.abs(_thumbnail(image[c.y0:c.y1, c.x0:c.x1], c) - self._empty) > CHANGED_GREY) \
            >= CHANGED_FRACTION

    def _claim(self, t: float) -> list[Event]:
        """The held call, if the open shot has none yet and the call falls in its release window; it goes out at the
        time of the frame whose observations it joins (`t`), after the shot's start (the log stays in time order)."""
        shot, call = self._shot, self._pending
        if shot is None or call is None or shot.called:
            return []
        if not shot.t - self._before_s() <= call.t <= shot.t + self.config.pose_release_after_s:
            return []
        self._pending = None
        shot.called = True
        return [replace(call, t=max(call.t, shot.t, t), player=shot.player)]

    def _before_s(self) -> float:
        """How long before the shot's start the held call may have been made: a shape the pixels alone saw must
        have been over the line at most `release_before_s` before the ball was seen crossing (a hand releasing the
        ball is over the line as it lets go; one that lifted a ball between shots left the line earlier)."""
        if self._pending_by_keypoints or self.strip_settings is None:
            return self.config.pose_release_before_s
        return self.strip_settings.release_before_s

    def _unclaimed(self, t: float, call: PlayLineCrossing) -> tuple[float, str]:
        """A call no shot claimed: the umpire decides (a shot vision missed, or a lean that was no shot)."""
        return (t, f"the {call.body_part.replace('_', ' ')} crossed the Play Line at {call.t:.2f}s "
                     f"(confidence {call.confidence:.2f}) with no shot seen; no call, please review")

    def _reset(self, t: float, warnings: list[tuple[float, str]]) -> None:
        """Both judges forget their windows, so the next crossing is called again."""
        assert self._judge is not None
        self._judge.update(t, [], shooting=False)
        self._strip_window.clear()
        self._window_called = False
        self._drop_unseen(t, warnings)
