"""Shot segmentation: tracks and settles in, observation events out.

Star Cluster Ball: a ball crossing the Play Line upwards (y growing past it by
`play_line_hysteresis_mm`, from a point seen below it, or first seen within
`launch_zone_mm` past it because the shooter's hand hid it) starts a shot for
its colour. Piratenbillard: a ball that had come to rest in a space and moves more
than `leave_space_fraction` pitches away from its resting point starts a shot,
struck from that space. For both games the next settle is a `TableSettled` with
the snapshot read on the settled frame, and a ball that had been at rest and
vanished while a hand was over the table is a `BallLifted` (a capture, a
gutter ball, a returned ball taken away), never a move.

Who plays, rounds and choices are umpire inputs, not vision: `SessionFeed`
reads them from a `--session` file and releases each at its time, merged in
time order with the observations (docs/pipeline.md).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Callable

from calibration.profile import PiratenbillardProfile, StarClusterProfile, TableProfile
from rules.errors import InputError
from rules.events import (
    UMPIRE_INPUTS,
    BallLifted,
    BallSighting,
    Event,
    Location,
    LogError,
    Place,
    ShotStarted,
    Snapshot,
    TableSettled,
    parse_event,
)
from vision.config import PipelineConfig
from vision.settle import Settle
from vision.track import TrackerUpdate
from vision.types import Track, TrackState

SnapshotReader = Callable[[Settle], Snapshot]


def snapshot_from_tracks(settle: Settle, *_: object) -> Snapshot:
    """Every settled ball where its track says it lies; one sighting per ball, so two in a space count two.

    Takes (and ignores) the settled frame, mapper and detector, so it fits where
    `vision.cells.read_settled` does: for detectors that cannot read places.
    """
    return Snapshot(tuple(BallSighting(tr.colour, tr.location, round(tr.confidence, 3))
                          for tr in settle.tracks if tr.location is not None))


class ShotSegmenter:
    def __init__(self, profile: TableProfile, config: PipelineConfig, read_snapshot: SnapshotReader) -> None:
        self.profile = profile
        self.config = config
        self.read_snapshot = read_snapshot
        self.warnings: list[str] = []  # things a person should look at; the pipeline reports them
        self._below: dict[int, bool] = {}  # Star Cluster Ball: track seen below the Play Line
        self._origin: dict[int, bool] = {}  # Star Cluster Ball: track first seen near or below the Play Line
        self._unseen_launch: set[int] = set()  # ... or first held rolling up the board fast, no shot open
        self._rest: dict[int, Track] = {}  # Piratenbillard: the track as it last lay at rest in a space
        self._struck: set[int] = set()  # lost resting tracks whose ball was seen again elsewhere (struck)
        self._shot_open = False
        self._last_hand_t = -math.inf
        self._lost_in_shot: dict[int, bool] = {}  # lost tracks: was a shot in play when each was lost?
        # resting balls that vanished between shots with no hand seen: gone from their place (the pipeline
        # takes them out of the table reader's prior); one lost during a shot may be hidden by a ball that landed
        self.gone: list[tuple[str, Location]] = []

    def update(self, t: float, tracks: TrackerUpdate, settle: Settle | None, hand: bool) -> list[Event]:
        if hand:
            self._last_hand_t = t
        events: list[Event] = []
        if isinstance(self.profile, StarClusterProfile):
            events += self._play_line(t, tracks.tracks, self.profile)
            events += self._moved_out_of_sight(t, tracks.tracks, self.profile)
        else:
            events += self._left_space(t, tracks.tracks, self.profile)
        for tr in tracks.tracks:
            if tr.state is TrackState.LOST:
                self._lost_in_shot.setdefault(tr.id, self._shot_open)
            else:
                self._lost_in_shot.pop(tr.id, None)
        events += self._lifted(t, tracks.ended)
        if settle is not None:
            self._shot_open = False
            events.append(TableSettled(t=t, snapshot=self.read_snapshot(settle), confidence=round(settle.confidence, 3)))
        return events

    def _play_line(self, t: float, tracks: tuple[Track, ...], profile: StarClusterProfile) -> list[Event]:
        line_y = (profile.play_line[0][1] + profile.play_line[1][1]) / 2
        margin = self.config.play_line_hysteresis_mm
        events: list[Event] = []
        for tr in tracks:
            if tr.state is not TrackState.CONFIRMED:
                continue
            # a ball first seen near the line (the shooter's hand hid it until it was rolling) counts as
            # having come from below it; first seen means first detected, not first confirmed (a fast
            # ball is hundreds of mm further by then)
            first_y = tr.born_at[1] if tr.born_at is not None else tr.y
            if tr.id not in self._origin:
                near = first_y < line_y + self.config.launch_zone_mm
                # a ball already rolling up the board fast when its track is confirmed, with no shot open, was
                # launched too: a hard-thrown ball outruns a newborn track's gate and motion blur drops it from
                # frames, so the first track that holds it can start far beyond the launch zone. Its launch was
                # not seen (it may be a ball knocked on by one that was not seen either): the shot is the
                # player to play's, as for a ball moved out of sight
                if not near and not self._shot_open and tr.vy > self.config.motion_speed_mm_s:
                    self._unseen_launch.add(tr.id)
                self._origin[tr.id] = near or tr.id in self._unseen_launch
            origin = self._origin[tr.id]
            seen_below = self._below.get(tr.id)
            # a ball never seen below the line must be rolling for real (not a resting ball found again
            # after a hand hid it, whose young filter velocity is jitter)
            launch_speed = self.config.rest_speed_mm_s if seen_below else self.config.motion_speed_mm_s
            if tr.y < line_y - margin:
                self._below[tr.id] = True
            elif tr.y > line_y + margin and tr.vy > launch_speed and (origin if seen_below is None else seen_below):
                self._below[tr.id] = False
                if not self._shot_open:  # one ball per shot: a second crossing (a hand, a rebound) is no new shot
                    self._shot_open = True
                    events.append(ShotStarted(t=t, player=None if tr.id in self._unseen_launch else tr.colour))
        return events

    def _moved_out_of_sight(self, t: float, tracks: tuple[Track, ...], profile: StarClusterProfile) -> list[Event]:
        """Star Cluster Ball: a resting ball can be knocked away while the shooter's hand hides it (a ball
        lying just past the Play Line, struck by the next ball released right behind it: neither is seen
        crossing the line, and the struck one is first seen again far up the board). A lost resting track
        plus a track of its colour first seen since, more than `moved_mm` from where it lay, is that ball
        moved, not lifted: a shot by the player to play (the engine knows who) when none is open."""
        events: list[Event] = []
        for tr in tracks:
            if tr.state is not TrackState.LOST or not tr.at_rest or tr.id in self._struck:
                continue
            if any(o.colour == tr.colour and o.state is TrackState.CONFIRMED and o.born_t is not None
                   and o.born_at is not None and o.born_t > tr.last_seen_t
                   and math.hypot(o.born_at[0] - tr.x, o.born_at[1] - tr.y) > self.config.moved_mm
                   for o in tracks):
                self._struck.add(tr.id)
                if not self._shot_open:
                    self._shot_open = True
                    events.append(ShotStarted(t=t))
        return events

    def _left_space(self, t: float, tracks: tuple[Track, ...], profile: PiratenbillardProfile) -> list[Event]:
        limit = self.config.leave_space_fraction * profile.pitch_mm
        events: list[Event] = []
        events += self._struck_out_of_sight(t, tracks, limit)
        for tr in tracks:
            if tr.state is not TrackState.CONFIRMED:
                continue
            rest = self._rest.get(tr.id)
            if tr.at_rest and tr.location is not None and tr.location.place is Place.CELL:
                if rest is None or math.hypot(tr.x - rest.x, tr.y - rest.y) <= limit:
                    self._rest[tr.id] = tr
                continue
            if rest is not None and math.hypot(tr.x - rest.x, tr.y - rest.y) > limit:
                del self._rest[tr.id]
                if not self._shot_open:
                    self._shot_open = True
                    events.append(ShotStarted(t=t, player=tr.colour, ball_from=rest.location))
        return events

    def _struck_out_of_sight(self, t: float, tracks: tuple[Track, ...], limit: float) -> list[Event]:
        """A hard strike can outrun the tracker: the resting track is lost and the ball reappears
        rolling far away as a new track. A lost resting track plus a rolling one of its colour more
        than `limit` from it is that ball leaving its space."""
        if self._shot_open:
            return []
        rolling = [tr for tr in tracks if tr.state is TrackState.CONFIRMED and not tr.at_rest
                   and math.hypot(tr.vx, tr.vy) > self.config.motion_speed_mm_s]
        for tr in tracks:
            rest = self._rest.get(tr.id)
            if tr.state is not TrackState.LOST or rest is None:
                continue
            if any(o.colour == tr.colour and o.id not in self._rest
                   and math.hypot(o.x - rest.x, o.y - rest.y) > limit for o in rolling):
                del self._rest[tr.id]
                self._struck.add(tr.id)
                self._shot_open = True
                return [ShotStarted(t=t, player=tr.colour, ball_from=rest.location)]
        return []

    def _lifted(self, t: float, ended: tuple[Track, ...]) -> list[Event]:
        events: list[Event] = []
        for tr in ended:
            self._below.pop(tr.id, None)
            self._origin.pop(tr.id, None)
            self._unseen_launch.discard(tr.id)
            rest = self._rest.pop(tr.id, None)
            lost_in_shot = self._lost_in_shot.pop(tr.id, False)
            if tr.id in self._struck:  # its strike was called when it reappeared rolling
                self._struck.discard(tr.id)
                continue
            if not tr.at_rest or tr.location is None:
                continue  # lost while moving: off the board or out of view, the snapshot tells
            at = rest.location if rest is not None and rest.location is not None else tr.location
            if self._last_hand_t >= tr.last_seen_t - 0.5:
                events.append(BallLifted(t=t, owner=tr.colour, at=at))
            else:
                self.warnings.append(f"a resting {tr.colour} ball at {at} vanished at {tr.last_seen_t:.2f}s with no "
                                     "hand over the table; check the detector or the lighting")
                if not lost_in_shot:
                    self.gone.append((tr.colour, at))
        return events


class SessionFeed:
    """The umpire's inputs for a run (game start, rounds, choices), released in time order."""

    def __init__(self, events: list[Event]) -> None:
        self._pending = sorted(events, key=lambda e: e.t)

    @staticmethod
    def load(path: str | Path) -> "SessionFeed":
        """A JSON-lines file of umpire events, or a truth.json / object whose `events` list holds them."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError(f"session file {path} does not exist; check the path") from None
        try:
            whole = json.loads(text)
            rows = whole.get("events") if isinstance(whole, dict) and "events" in whole else [whole]
        except json.JSONDecodeError:
            try:
                rows = [json.loads(line) for line in text.splitlines() if line.strip()]
            except json.JSONDecodeError as error:
                raise InputError(f"session file {path}: not JSON lines ({error.msg}); one umpire event per line") \
                    from None
        umpire_types = {cls.TYPE for cls in UMPIRE_INPUTS}
        events = []
        for number, row in enumerate(rows or [], start=1):
            if isinstance(row, dict) and row.get("type") not in umpire_types:
                continue  # observations in a truth file: vision makes its own
            try:
                events.append(replace(parse_event(row), id=row.get("id", "") if isinstance(row, dict) else ""))
            except LogError as error:
                raise InputError(f"session file {path} entry {number}: {error}") from None
        return SessionFeed(events)

    def due(self, t: float) -> list[Event]:
        """Umpire events at or before `t`, once each."""
        count = 0
        while count < len(self._pending) and self._pending[count].t <= t:
            count += 1
        due, self._pending = self._pending[:count], self._pending[count:]
        return due

    def rest(self) -> list[Event]:
        rest, self._pending = self._pending, []
        return rest
