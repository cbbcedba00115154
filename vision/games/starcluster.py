"""Star Cluster Ball above its rules: shots start at the Play Line, players' bodies are watched there,
the Astrolabe Positions are labelled P1..P3, and scores can come in chains."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, cast

from calibration.geometry import Point, Rect
from calibration.profile import TableProfile
from calibration.starcluster_profile import StarClusterProfile
from rules.events import Event, GameStart, Location, Place, PlayerSpec, RoundStart, ShotStarted, Snapshot
from rules.starcluster.scoring import runs
from vision.config import SettleConfig, ShotConfig
from vision.games import PlaceLabel
from vision.shots import Play
from vision.types import Track, TrackState

SIDES = ("right", "left")  # the players of a run without a session file, in order
P_LABEL_OFFSET = (-28, 5)  # px at 720p from the left edge of a position's first slot


class StarClusterShots:
    """A ball crossing the Play Line upwards (y growing past it by `play_line_hysteresis_mm`, from a point
    seen below it, or first seen within `launch_zone_mm` past it because the shooter's hand hid it) starts a
    shot for its colour; so does a resting ball knocked on out of sight (`_moved_out_of_sight`)."""

    def __init__(self, profile: StarClusterProfile, shots: ShotConfig, settle: SettleConfig) -> None:
        self.config, self.settle = shots, settle
        self.line_y = (profile.play_line[0][1] + profile.play_line[1][1]) / 2
        self._below: dict[int, bool] = {}  # track seen below the Play Line
        self._origin: dict[int, bool] = {}  # track first seen near or below the Play Line
        self._unseen_launch: set[int] = set()  # ... or first held rolling up the board fast, no shot open
        self.reach_y = self.line_y + profile.ball_diameter_mm  # beyond it, a ball was rolled, not carried by hand
        self._looked_at: set[int] = set()  # confirmed tracks `_found_beyond_reach` has looked at
        self._first_t: float | None = None  # the first frame's time

    def starts(self, t: float, tracks: tuple[Track, ...], play: Play) -> list[Event]:
        return self._play_line(t, tracks, play) + self._moved_out_of_sight(t, tracks, play) \
            + self._found_beyond_reach(t, tracks, play)

    def forget(self, track_id: int) -> Location | None:
        self._below.pop(track_id, None)
        self._origin.pop(track_id, None)
        self._unseen_launch.discard(track_id)
        self._looked_at.discard(track_id)
        return None

    def _found_beyond_reach(self, t: float, tracks: tuple[Track, ...], play: Play) -> list[Event]:
        """A ball first found in a gutter a ball's length or more past the Play Line, rolling slower than a ball in
        motion, with no shot open and no ball of its colour at rest where it was found, was rolled there unseen: a
        shot by the player to play (the engine knows who). A washed-out marble blurred past recognition as it
        rolled is first found at rest (starcluster_v25's shooter's ball in the right gutter, 262 mm past the line:
        the settle read it as the board changed without a shot, the turn stayed, and the next player's shots were
        credited to the wrong player; v17, v26, v27 and v35 alike). Nearer the line it may be a marble let go into a
        gutter beside the line, which is no shot (the umpire hands it back: 14 such in the 36 variants, all 20 to
        50 mm behind the line), or one in the shooter's hand. Only a gutter: a ball gets there beyond the line only
        by rolling, where a ball in a slot, the grouped area or the play area whose detection drops out for longer
        than the tracker bridges is found again anew (starcluster_v27's washed-out grouped ball, found again four
        times: four shots nobody played). One of its colour at rest within `moved_mm` (hidden by a hand, found
        again) is that ball; one found within a rest window of the first frame lay there when the camera
        started."""
        if self._first_t is None:
            self._first_t = t
        events: list[Event] = []
        for tr in tracks:
            if tr.state is not TrackState.CONFIRMED or tr.id in self._looked_at:
                continue
            self._looked_at.add(tr.id)
            if play.shot_open or tr.location is None or tr.location.place is not Place.GUTTER \
                    or tr.born_at is None or tr.born_at[1] < self.reach_y or tr.born_t is None \
                    or tr.born_t < self._first_t + self.settle.rest_debounce_s \
                    or math.hypot(tr.vx, tr.vy) > self.settle.motion_speed_mm_s:
                continue
            bx, by = tr.born_at
            if any(o.id != tr.id and o.colour == tr.colour and o.at_rest
                   and math.hypot(o.x - bx, o.y - by) <= self.config.moved_mm for o in tracks):
                continue
            play.shot_open = True
            events.append(ShotStarted(t=t))
        return events

    def _play_line(self, t: float, tracks: tuple[Track, ...], play: Play) -> list[Event]:
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
                near = first_y < self.line_y + self.config.launch_zone_mm
                # a ball already rolling up the board fast when its track is confirmed, with no shot open, was
                # launched too: a hard-thrown ball outruns a newborn track's gate and motion blur drops it from
                # frames, so the first track that holds it can start far beyond the launch zone. Its launch was
                # not seen (it may be a ball knocked on by one that was not seen either): the shot is the
                # player to play's, as for a ball moved out of sight
                if not near and not play.shot_open and tr.vy > self.settle.motion_speed_mm_s:
                    self._unseen_launch.add(tr.id)
                self._origin[tr.id] = near or tr.id in self._unseen_launch
            origin = self._origin[tr.id]
            seen_below = self._below.get(tr.id)
            # a ball never seen below the line must be rolling for real (not a resting ball found again
            # after a hand hid it, whose young filter velocity is jitter)
            launch_speed = self.settle.rest_speed_mm_s if seen_below else self.settle.motion_speed_mm_s
            if tr.y < self.line_y - margin:
                self._below[tr.id] = True
            elif tr.y > self.line_y + margin and tr.vy > launch_speed and (origin if seen_below is None else seen_below):
                self._below[tr.id] = False
                if not play.shot_open:  # one ball per shot: a second crossing (a hand, a rebound) is no new shot
                    play.shot_open = True
                    events.append(ShotStarted(t=t, player=None if tr.id in self._unseen_launch else tr.colour))
        return events

    def _moved_out_of_sight(self, t: float, tracks: tuple[Track, ...], play: Play) -> list[Event]:
        """A resting ball can be knocked away while the shooter's hand hides it (a ball lying just past the
        Play Line, struck by the next ball released right behind it: neither is seen crossing the line, and the
        struck one is first seen again far up the board). A lost resting track plus a track of its colour first
        seen since, beyond the line (where a struck ball goes) and more than `moved_mm` from where it lay, is that
        ball moved, not lifted: a shot by the player to play (the engine knows who) when none is open. (One first
        seen behind the line is a hand's: starcluster_v4's tan ball read on the umpire's fingers lifting a gutter
        ball, and the lift started a shot that settled on the next player's hand.)"""
        events: list[Event] = []
        for tr in tracks:
            if tr.state is not TrackState.LOST or not tr.at_rest or tr.id in play.struck:
                continue
            if any(o.colour == tr.colour and o.state is TrackState.CONFIRMED and o.born_t is not None
                   and o.born_at is not None and o.born_t > tr.last_seen_t and o.born_at[1] > self.line_y
                   and math.hypot(o.born_at[0] - tr.x, o.born_at[1] - tr.y) > self.config.moved_mm
                   for o in tracks):
                play.struck.add(tr.id)
                if not play.shot_open:
                    play.shot_open = True
                    events.append(ShotStarted(t=t))
        return events


@dataclass(frozen=True)
class StarCluster:
    name: str = "starcluster"
    default_players: tuple[str, ...] = ("red", "blue")
    watches_play_line: bool = True
    max_hop_mm: float = 0.0  # balls roll
    shot_brings_ball: bool = True  # from the shooter's hand

    def default_session(self, players: tuple[str, ...]) -> tuple[Event, ...]:
        """Two players by colour, the first on the right; the round starts with the video."""
        specs = tuple(PlayerSpec(pid, side=side) for pid, side in zip(players, SIDES))
        return (GameStart(t=0.0, players=specs), RoundStart(t=0.0))

    def shot_watch(self, profile: TableProfile, shots: ShotConfig, settle: SettleConfig) -> StarClusterShots:
        return StarClusterShots(cast(StarClusterProfile, profile), shots, settle)

    def colour_samples(self, profile: TableProfile, seats: dict[str, int]) -> dict[str, list[Point]]:
        """None: a game starts with every ball in hand, so the players keep their nominal colours."""
        return {}

    def start_places(self, profile: TableProfile) -> dict[str, list[Point]]:
        """None: a game starts with every ball in hand."""
        return {}

    def ball_areas(self, profile: TableProfile) -> tuple[Rect, ...]:
        """The board, the play area and the gutters: the frame round them holds no ball (a ball rolls inside its
        rails). A brown floor or a dark frame reads as a brown ball there: starcluster_v12's phantoms at its edges
        came and went, the table never settled for 8 s and two shots were lost."""
        table = cast(StarClusterProfile, profile)
        return (table.board, table.play_area, *table.gutter_areas)

    def place_labels(self, profile: TableProfile) -> tuple[PlaceLabel, ...]:
        labels = []
        for pos in cast(StarClusterProfile, profile).positions:
            left = pos.slot_rect(0)
            labels.append(PlaceLabel(f"P{pos.number}", (left.x_min, (left.y_min + left.y_max) / 2), *P_LABEL_OFFSET))
        return tuple(labels)

    def chain_length(self, decision: dict[str, Any], before: Snapshot | None, after: Snapshot) -> int:
        """The longest chain the score's landed balls are part of, from the settled tables before and after.

        A score whose breakdown has no chain bonus makes no chain; without the snapshot before it the longest
        run in a position with a chain bonus counts.
        """
        player = decision.get("player")
        chained = {int(i["label"][1:].split()[0]) for i in decision.get("breakdown") or []
                   if i["label"].endswith("chain bonus") and i["points"] > 0 and i["label"][1:2].isdigit()}
        if not chained or player is None:
            return 0
        now = _slots(after, player)
        landed = now - (_slots(before, player) if before is not None else set())
        best = 0
        for position in chained:
            filled = sorted(s for p, s in now if p == position)
            new = {s for p, s in landed if p == position} or set(filled)
            start = 0
            for length in runs(filled):
                if new & set(filled[start:start + length]):
                    best = max(best, length)
                start += length
        return best


def _slots(snapshot: Snapshot | None, player: str) -> set[tuple[int, int]]:
    if snapshot is None:
        return set()
    return {(b.at.position, b.at.slot) for b in snapshot.balls
            if b.owner == player and b.at.place is Place.SLOT and b.at.position is not None and b.at.slot is not None}


GAME = StarCluster()
