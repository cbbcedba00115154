"""The Play Line judges scored on the reach composites of `simulation.line_reach`.

Each clip is refereed as `referee run` would: the real colour detector finds the balls, `vision.pose_watch.PoseWatch`
runs the real pose model beside the frame loop (file mode) and watches the pixels past the line every frame, and the
shot is seen starting (`shot_started`) `SHOT_SEEN_AFTER_S` after the shooter's furthest reach, as vision sees a
released ball cross the line a little after it leaves the hand. A clip with no shot window (a hand lifting balls
between shots) gets no `shot_started`. The call is what the watch emits as the shot's `play_line_crossing`. Each clip
starts with `BEFORE_FRAMES` frames of the table before anyone came to the line (`ClipFrames.before`), as a match's
camera sees the table before a player steps up.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Callable, Sequence

import numpy as np

from rules.events import Event, PlayLineCrossing, ShotStarted
from simulation.line_reach import PLAYERS, ReachClip, ReachTruth
from vision.config import LineStripSettings, PlayLineSettings, PoseConfig
from vision.detect import make_detector
from vision.mapping import BoardMapper
from vision.pose import Person
from vision.pose_watch import PoseWatch

SHOT_SEEN_AFTER_S = 0.2  # vision sees the released ball cross the line this long after the furthest reach
BEFORE_FRAMES = 4  # frames of the table before anyone came to the line (the strip looks at every other one)


@dataclass(frozen=True)
class ReachOutcome:
    """What the watch called on one clip, against its truth."""

    truth: ReachTruth
    called: str | None  # the body part of the shot's call; None: no call
    decided_t: float | None  # when a judge first decided there was a crossing (s), whether or not a shot claimed it
    judges: tuple[str, ...]  # which judges called ("pixels", "keypoints"), in order
    warnings: tuple[str, ...] = ()  # the watch's review warnings (a call no shot claimed, one held back)

    @property
    def right(self) -> bool:
        return (self.called is not None) == self.truth.foul

    @property
    def part_right(self) -> bool:
        """A foul called with its leading part named (a hand's wrist names the hand too)."""
        part = self.truth.part
        if self.called is None or part is None:
            return False
        return self.called == part or (part.endswith("_hand") and self.called == part.replace("_hand", "_wrist"))

    @property
    def kind_right(self) -> bool:
        """A foul called with the right kind of part (a hand, either side, or the head)."""
        part = self.truth.part
        if self.called is None or part is None:
            return False
        return self.part_right or (part.endswith("_hand") and self.called.endswith(("hand", "wrist")))

    @property
    def latency_s(self) -> float | None:
        """From the first frame past the line to the decision."""
        if self.decided_t is None or self.truth.crossing_start_t is None:
            return None
        return self.decided_t - self.truth.crossing_start_t


def referee_clip(clip: ReachClip, estimator: Callable[[np.ndarray], list[Person]],
                 strip: LineStripSettings | None = LineStripSettings()) -> ReachOutcome:
    """One clip through the detector and the Play Line watch (`strip` None: keypoints alone)."""
    truth = clip.truth
    peak_t = int(np.argmax(clip.beyond_mm)) / truth.fps
    last_t = (truth.frames - 1) / truth.fps  # a reach that peaks late: its ball is seen crossing before the clip ends
    shot_t = min(peak_t + SHOT_SEEN_AFTER_S, last_t) if truth.window is not None else None
    mapper = BoardMapper(clip.calibration, clip.profile)
    calls: list[PlayLineCrossing] = []
    warnings: list[str] = []
    detector = None
    with PoseWatch(estimator, clip.profile, PoseConfig(), PlayLineSettings(), live=False, strip=strip) as watch:
        before = clip.frames.before()
        for t, image in chain(((-i / truth.fps, before) for i in range(BEFORE_FRAMES, 0, -1)), clip.frames()):
            if detector is None:
                detector = make_detector("color", image, mapper, list(PLAYERS))
            balls = [(d.u, d.v, d.radius_px) for d in detector.detect(image) if d.colour in PLAYERS]
            events: list[Event] = []
            if shot_t is not None and t >= shot_t - 1e-6:
                events.append(ShotStarted(t=t, player=PLAYERS[0]))
                shot_t = None
            watched = watch.update(t, image, clip.calibration, events, PLAYERS[0], balls)
            calls += [e for e in watched.events if isinstance(e, PlayLineCrossing)]
            warnings += [message for _, message in watched.warnings]
        finished = watch.finish()
        calls += [e for e in finished.events if isinstance(e, PlayLineCrossing)]
        warnings += [message for _, message in finished.warnings]
        decided = watch.decided
    return ReachOutcome(truth, calls[0].body_part if calls else None, decided[0][1].t if decided else None,
                        tuple(judge for judge, _ in decided), tuple(warnings))


@dataclass(frozen=True)
class Figures:
    """Recall, false calls, part and latency over a set of outcomes."""

    fouls: int
    recall: float
    clean: int
    false_calls: float
    part_right: float  # of the fouls: called with the leading part named
    kind_right: float  # of the fouls: called with the right kind of part (a hand of either side, the head)
    latency_ms_median: float | None
    latency_ms_max: float | None
    within_200_ms: float  # of the fouls called: decided within 200 ms of the crossing's start


def figures(outcomes: Sequence[ReachOutcome]) -> Figures:
    fouls = [o for o in outcomes if o.truth.foul]
    clean = [o for o in outcomes if not o.truth.foul]
    called = [o for o in fouls if o.called is not None]
    latencies = [o.latency_s for o in called if o.latency_s is not None]
    return Figures(len(fouls), len(called) / len(fouls) if fouls else float("nan"), len(clean),
                   sum(o.called is not None for o in clean) / len(clean) if clean else float("nan"),
                   sum(o.part_right for o in fouls) / len(fouls) if fouls else float("nan"),
                   sum(o.kind_right for o in fouls) / len(fouls) if fouls else float("nan"),
                   1000 * float(np.median(latencies)) if latencies else None,
                   1000 * max(latencies) if latencies else None,
                   sum(lat <= 0.2 + 1e-6 for lat in latencies) / len(called) if called else float("nan"))
