"""When pose runs, on which pixels, and which Play Line call belongs to which shot (Star Cluster Ball).

Pose costs about 80 ms a run on one core, the rest of the loop 16-25 ms a frame, so it cannot
run on every frame. It runs on a crop holding the player's side of the Play Line (and
`pose_crop_margin_mm` past it), every `pose_interval_s` while nobody is at the line, and every
`pose_release_interval_s` during a release window: while the shooter's body is within `pose_arm_mm`
of the line, and until `pose_release_after_s` after vision sees the ball cross it (`shot_started`).
Idle runs are skipped while the crop looks as it did when pose last saw nobody at the line.

"During a shot" (SCB-3.5) is read as the release: from the shooter at the line with the ball to a
moment after the ball crossed the line. A lean over the line comes with the release, before the
ball crosses, and vision sees the ball cross late (its track is confirmed a few frames on), so a
call made before a `shot_started` is held and goes to the shot whose ball is seen crossing within
`pose_release_before_s` of it. It is emitted right after that `shot_started`, at its time (the log
stays in time order and the engine has the shot open), and always before the shot's
`table_settled`, so the engine voids the shot. A call no shot claims is a review warning.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import cv2
import numpy as np

from calibration.calibrate import Calibration
from calibration.profile import TableProfile
from rules.events import Event, PlayLineCrossing, ShotStarted, TableSettled
from vision.config import PlayLineSettings, PoseConfig
from vision.play_line import PlayLineJudge
from vision.pose import Person

DEFAULT_POSE_MODEL = Path(__file__).resolve().parents[1] / "models" / "build" / "yolo11n-pose.onnx"
GRID = (65, 37)  # pixels sampled to find the crop (every 20 px at 1280x720)
TIME_TOLERANCE_S = 0.005  # timestamps jitter; an interval of two frames must not become three
# Idle looks are skipped while the crop, shrunk to THUMB_WIDTH px wide, has under CHANGED_FRACTION of its pixels
# more than CHANGED_GREY grey levels off the last view in which pose saw nobody at the line (measured on
# play_line_foul against its first frame: up to 3 % of them with nobody there, from lighting drift and rolling
# balls, 10 % with a hand lifting a ball; 6.5-60 % with the shooter in view)
THUMB_WIDTH = 64
CHANGED_GREY = 25
CHANGED_FRACTION = 0.02

Estimator = Callable[[np.ndarray], list[Person]]  # `vision.pose.PoseEstimator`


@dataclass(frozen=True)
class Watched:
    """One frame's observations with the Play Line call in place, and (time, message) of calls no shot claimed."""

    events: list[Event]
    warnings: list[tuple[float, str]]


@dataclass(frozen=True)
class Crop:
    """The image box pose runs on, in full-image pixels (x1, y1 exclusive)."""

    x0: int
    y0: int
    x1: int
    y1: int


def near_side_crop(calibration: Calibration, judge: PlayLineJudge, profile: TableProfile, margin_mm: float,
                   image_size: tuple[int, int]) -> Crop:
    """The box around every pixel whose table point lies on the player's side of the Play Line or at most
    `margin_mm` past it, within the table's width plus the margin: the shooter, whatever the camera.

    Found on a grid of pixels mapped onto the board; pixels above the horizon (their ray never meets the
    table) map behind the camera and are left out by the sign of the homography's scale.
    """
    width, height = image_size
    u, v = np.meshgrid(np.linspace(0, width - 1, GRID[0]), np.linspace(0, height - 1, GRID[1]))
    px = np.column_stack([u.ravel(), v.ravel()])
    flat = calibration.intrinsics.undistort_points(px) if calibration.intrinsics is not None else px
    to_board = calibration.homography.array
    t = profile.table
    centre_px = calibration.board_to_image(np.array([[(t.x_min + t.x_max) / 2, (t.y_min + t.y_max) / 2]]))
    ahead = np.sign(to_board[2] @ [*centre_px[0], 1.0])
    board = calibration.image_to_board(px)
    keep = ((np.sign(np.column_stack([flat, np.ones(len(flat))]) @ to_board[2]) == ahead)
            & (judge.beyond_mm(board) <= margin_mm)
            & (board[:, 0] >= t.x_min - margin_mm) & (board[:, 0] <= t.x_max + margin_mm))
    if not keep.any():  # the line is out of view: the whole frame
        return Crop(0, 0, width, height)
    step_u, step_v = (width - 1) / (GRID[0] - 1), (height - 1) / (GRID[1] - 1)
    kept = px[keep]
    return Crop(int(max(0, kept[:, 0].min() - step_u)), int(max(0, kept[:, 1].min() - step_v)),
                int(min(width, kept[:, 0].max() + step_u + 1)), int(min(height, kept[:, 1].max() + step_v + 1)))


def shifted(person: Person, dx: float, dy: float) -> Person:
    """A person found in a crop, in full-image pixels."""
    x1, y1, x2, y2 = person.box
    return replace(person, box=(x1 + dx, y1 + dy, x2 + dx, y2 + dy),
                   keypoints=tuple(replace(k, x=k.x + dx, y=k.y + dy) for k in person.keypoints))


@dataclass
class _Shot:
    t: float
    player: str | None
    called: bool = False


class PoseWatch:
    """Runs pose at the rate the moment needs and adds the Play Line call to the frame's observations."""

    def __init__(self, estimator: Estimator, profile: TableProfile, config: PoseConfig,
                 settings: PlayLineSettings = PlayLineSettings()) -> None:
        self.estimator, self.profile, self.config, self.settings = estimator, profile, config, settings
        self.calls = 0  # pose runs, for the benchmark
        self._calibration: Calibration | None = None
        self._judge: PlayLineJudge | None = None
        self._crop = Crop(0, 0, 0, 0)
        self._last_look: float | None = None
        self._empty: np.ndarray | None = None  # the crop, shrunk, when pose last saw nobody at the line
        self._armed_until = -np.inf  # the release window is open until then
        self._pending: PlayLineCrossing | None = None  # a call no shot has claimed yet
        self._shot: _Shot | None = None

    def update(self, t: float, image: np.ndarray, calibration: Calibration, events: list[Event],
               to_play: str | None) -> Watched:
        """This frame's observations with the Play Line call, if one belongs to a shot, in its place, and the
        calls no shot claimed (for a person). `to_play`: whose turn it is, the shooter of a `shot_started`
        that names nobody."""
        warnings: list[tuple[float, str]] = []
        if calibration is not self._calibration:  # first frame, or re-mapped after the camera moved
            self._calibration = calibration
            self._judge = PlayLineJudge(calibration, self.profile, self.settings)
            height, width = image.shape[:2]
            self._crop = near_side_crop(calibration, self._judge, self.profile, self.config.pose_crop_margin_mm,
                                        (width, height))
            self._empty = None
        if self._due(t, image):
            call = self._look(t, image)
            if call is not None:
                if self._pending is not None:
                    warnings.append(self._unclaimed(t, self._pending))
                self._pending = call
        out: list[Event] = []
        for event in events:
            if isinstance(event, TableSettled):
                out += self._claim()  # a call on the settling frame still belongs to the shot
                self._shot = None
                self._reset(t)  # the next shot gets its own call, even if the shooter never stepped back
            out.append(event)
            if isinstance(event, ShotStarted):
                self._shot = _Shot(event.t, event.player or to_play)
                self._armed_until = max(self._armed_until, event.t + self.config.pose_release_after_s)
                out += self._claim()
        out += self._claim()
        if self._pending is not None and t - self._pending.t > self.config.pose_release_before_s:
            warnings.append(self._unclaimed(t, self._pending))
            self._pending = None
            self._reset(t)  # a lean at the next release is called again
        return Watched(out, warnings)

    def _due(self, t: float, image: np.ndarray) -> bool:
        """Every look in a release window; an idle look only if the crop changed since nobody was at the line."""
        armed = t < self._armed_until
        interval = self.config.pose_release_interval_s if armed else self.config.pose_interval_s
        if self._last_look is not None and t - self._last_look < interval - TIME_TOLERANCE_S:
            return False
        self._last_look = t
        return armed or self._empty is None or \
            np.mean(np.abs(self._thumbnail(image) - self._empty) > CHANGED_GREY) >= CHANGED_FRACTION

    def _thumbnail(self, image: np.ndarray) -> np.ndarray:
        c = self._crop
        grey = cv2.cvtColor(image[c.y0:c.y1, c.x0:c.x1], cv2.COLOR_BGR2GRAY)
        size = (THUMB_WIDTH, max(1, round(THUMB_WIDTH * (c.y1 - c.y0) / (c.x1 - c.x0))))
        return cv2.resize(grey, size, interpolation=cv2.INTER_AREA).astype(np.int16)

    def _look(self, t: float, image: np.ndarray) -> PlayLineCrossing | None:
        """One pose run on the crop; opens the release window when the shooter is at the line."""
        assert self._judge is not None
        c = self._crop
        people = [shifted(p, c.x0, c.y0) for p in self.estimator(image[c.y0:c.y1, c.x0:c.x1])]
        self.calls += 1
        reach = self._judge.shooter(people)
        if reach and max(r.beyond_mm for r in reach) > -self.config.pose_arm_mm:
            self._armed_until = max(self._armed_until, t + self.config.pose_interval_s)
        else:
            self._empty = self._thumbnail(image)
        return self._judge.update(t, people, shooting=t < self._armed_until)  # outside a window it forgets

    def _claim(self) -> list[Event]:
        """The held call, if the open shot has none yet and the call falls in its release window."""
        shot, call = self._shot, self._pending
        if shot is None or call is None or shot.called:
            return []
        if not shot.t - self.config.pose_release_before_s <= call.t <= shot.t + self.config.pose_release_after_s:
            return []
        self._pending = None
        shot.called = True
        return [replace(call, t=max(call.t, shot.t), player=shot.player)]

    def _unclaimed(self, t: float, call: PlayLineCrossing) -> tuple[float, str]:
        """A call no shot claimed: the umpire decides (a shot vision missed, or a lean that was no shot)."""
        return (t, f"the {call.body_part.replace('_', ' ')} crossed the Play Line at {call.t:.2f}s "
                     f"(confidence {call.confidence:.2f}) with no shot seen; no call, please review")

    def _reset(self, t: float) -> None:
        """The judge forgets its window, so the next crossing is called again."""
        assert self._judge is not None
        self._judge.update(t, [], shooting=False)
