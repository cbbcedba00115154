"""Shot segmentation: tracks and settles in, observation events out.

What starts a shot is the game's (`ShotWatch`, one per game in `vision.games`):
Star Cluster Ball, a ball crossing the Play Line upwards; Piratenbillard, a ball
leaving the space it rested in. What every game shares lives here: a settle
closes the shot (the pipeline then reads the settled table and emits the
`TableSettled`), and a ball that had been at rest and vanished while a hand was
over the table is a `BallLifted` (a capture, a gutter ball, a returned ball
taken away), never a move. A resting ball that vanished with no hand in sight is
a warning for a person, and is reported as gone from its place.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

from rules.events import BallLifted, Event, Location
from vision.config import ShotConfig
from vision.settle import Settle
from vision.track import TrackerUpdate
from vision.types import Track, TrackState


@dataclass
class Play:
    """The segmenter's state that a game's shot watch reads and changes while it looks at one frame."""

    shot_open: bool = False  # a shot has started and the table has not settled since
    struck: set[int] = field(default_factory=set)  # lost resting tracks whose ball was seen again elsewhere
    hand_t: float = -math.inf  # when a hand was last over the table


class ShotWatch(Protocol):
    """A game's rule for when a shot starts, from the tracks of one frame."""

    def starts(self, t: float, tracks: tuple[Track, ...], play: Play) -> list[Event]:
        """The shots that started this frame (at most one while `play.shot_open`); opens `play.shot_open`."""

    def forget(self, track_id: int) -> Location | None:
        """A track has ended: drop what is kept about it; the place it last rested in, if the watch knows one."""


@dataclass(frozen=True)
class Segmented:
    """What one frame gave: the observations (a settled table is the pipeline's to read and add), the
    warnings for a person, and the resting balls gone from their place with no hand seen."""

    events: list[Event]
    warnings: list[str]
    gone: list[tuple[str, Location]]


class ShotSegmenter:
    def __init__(self, watch: ShotWatch, config: ShotConfig) -> None:
        self.watch = watch
        self.config = config
        self.play = Play()
        self._lost_in_shot: dict[int, bool] = {}  # lost tracks: was a shot in play when each was lost?

    def update(self, t: float, tracks: TrackerUpdate, settle: Settle | None, hand: bool) -> Segmented:
        if hand:
            self.play.hand_t = t
        events = self.watch.starts(t, tracks.tracks, self.play)
        for tr in tracks.tracks:
            if tr.state is TrackState.LOST:
                self._lost_in_shot.setdefault(tr.id, self.play.shot_open)
            else:
                self._lost_in_shot.pop(tr.id, None)
        warnings: list[str] = []
        gone: list[tuple[str, Location]] = []
        events += self._lifted(t, tracks.ended, warnings, gone)
        if settle is not None:
            self.play.shot_open = False
        return Segmented(events, warnings, gone)

    def _lifted(self, t: float, ended: tuple[Track, ...], warnings: list[str],
                gone: list[tuple[str, Location]]) -> list[Event]:
        events: list[Event] = []
        for tr in ended:
            rested_at = self.watch.forget(tr.id)
            lost_in_shot = self._lost_in_shot.pop(tr.id, False)
            if tr.id in self.play.struck:  # its strike was called when it reappeared rolling
                self.play.struck.discard(tr.id)
                continue
            if not tr.at_rest or tr.location is None:
                continue  # lost while moving: off the board or out of view, the snapshot tells
            at = rested_at if rested_at is not None else tr.location
            if self.play.hand_t >= tr.last_seen_t - self.config.hand_lift_s:
                events.append(BallLifted(t=t, owner=tr.colour, at=at))
            else:
                warnings.append(f"a resting {tr.colour} ball at {at} vanished at {tr.last_seen_t:.2f}s with no "
                                "hand over the table; check the detector or the lighting")
                if not lost_in_shot:  # one lost during a shot may be hidden by a ball that landed on it
                    gone.append((tr.colour, at))
        return events
