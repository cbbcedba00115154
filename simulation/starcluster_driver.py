"""The Star Cluster Ball match driver: physics, players and the real rules engine, live.

The driver plays shots on the pymunk table (starcluster_physics), records a
SimFrame per video frame, and feeds every observation a perfect vision
pipeline would emit to the real rules engine as it happens. It follows the
engine's decisions like the players would: whose turn it is, balls out for the
round lifted off by a hand, returned balls picked up, the out-of-balls choice,
the round clock and clearing the table after a round. So the event log, the
frames and the score cannot disagree. The scenario scripts
(starcluster_scenarios) steer it; simulation.starcluster runs a match.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any, Callable

from calibration.profile import StarClusterProfile
from rules.decisions import Decision, DecisionKind
from rules.errors import InputError
from rules.events import (
    BallLifted,
    BallSighting,
    Event,
    GameStart,
    Location,
    OutOfBallsChoice,
    Place,
    PlayerSpec,
    PlayLineCrossing,
    RoundEnd,
    RoundStart,
    ShotStarted,
    Snapshot,
    TableMovement,
    TableSettled,
)
from rules.games import make_engine

from .starcluster_physics import Launch, PhysicsConfig, RestingBall, ShotTrace, Table
from .starcluster_players import Skill, Slot, TableView, choose_aim, with_noise
from .trajectory import BallPose, HandPose, Match, PersonPose, SimFrame, TableShift

K = DecisionKind
# The composited player is a head-and-shoulders photograph leaning over the line, so the head leads:
# the COCO keypoint that crosses first is the nose (simulation/render.py places the photo that way).
CROSSING_PART = "nose"
STANDING_REACH_MM = -30.0  # a player ready at the line: the furthest body part this far short of it


@dataclass(frozen=True)
class StarClusterSimOptions:
    """Everything a simulated match depends on besides the profile, seed and scenario."""

    fps: float = 30.0
    players: tuple[str, str] = ("red", "blue")  # right side first
    names: tuple[str, str] = ("Ana", "Ben")
    round_seconds: float = 75.0  # full_game rounds, shortened so a sample stays small
    tiebreak_seconds: float = 40.0
    balls_per_player: int = 10
    debounce_s: float = 0.5  # all balls at rest this long = table settled
    physics: PhysicsConfig = field(default_factory=PhysicsConfig)
    skill: Skill = field(default_factory=Skill)
    max_seconds: float = 900.0  # a match longer than this is stopped (a safety net, never reached)
    shooter_stays: bool = False  # the player to play stands at the Play Line on every frame, between shots too

    def __post_init__(self) -> None:
        if not 5.0 <= self.fps <= 120.0:
            raise InputError(f"fps must be 5..120, got {self.fps}")
        if len(self.players) != 2 or self.players[0] == self.players[1]:
            raise InputError(f"Star Cluster Ball needs two different player colours, got {self.players}")
        if self.round_seconds < 20 or self.tiebreak_seconds < 10:
            raise InputError("round_seconds must be >= 20 and tiebreak_seconds >= 10")
        if self.balls_per_player < 1:
            raise InputError(f"balls_per_player must be >= 1, got {self.balls_per_player}")


@dataclass
class _Ball:
    id: int
    owner: str
    status: str  # "hand" | "table" | "gutter" | "out"
    x: float
    y: float


class MatchDriver:
    """Plays one match frame by frame; scenario scripts steer it through its methods."""

    def __init__(self, profile: StarClusterProfile, seed: int, scenario: str, options: StarClusterSimOptions,
                 config: dict[str, Any]) -> None:
        self.profile = profile
        self.options = options
        self.seed = seed
        self.scenario = scenario
        self.config = config
        self.rng = random.Random(seed)
        self.table = Table(profile, options.physics)
        self.fps = options.fps
        self.engine = make_engine("starcluster", config)
        n = config.get("balls_per_player", 10)
        self.balls = {i: _Ball(i, options.players[i // n], "hand", *self._parking(i, n)) for i in range(2 * n)}
        self.frames: list[SimFrame] = []
        self.events: list[Event] = []
        self.decisions: list[Decision] = []
        self.shift = TableShift()
        self.round_start_t: float | None = None
        self.round_length = float(config.get("round_seconds", 360.0))
        self.game_over = False
        self.pending_choice: str | None = None
        self.keep_in_play_area: set[int] = set()
        self.notes: list[str] = []
        # who stands at the line when `shooter_stays` (the first to play, at the middle, until a shot says more)
        self._standing = PersonPose(options.players[0], profile.table.x_max / 2, STANDING_REACH_MM)

    # ------------------------------------------------------------------ recording

    def _parking(self, index: int, n: int) -> tuple[float, float]:
        """Where a ball in a player's hand is kept: beside the table, on its owner's side."""
        side = 1 if index < n else -1
        return (self.profile.table.x_max / 2 + side * (self.profile.table.x_max / 2 + 40), 60.0 + 12 * (index % n))

    @property
    def now(self) -> float:
        return len(self.frames) / self.fps

    def frame(self, hand: HandPose | None = None, person: PersonPose | None = None,
              moving: dict[int, tuple[float, float]] | None = None, lifting: int | None = None) -> None:
        r = self.table.radius
        if person is None and self.options.shooter_stays:
            person = self._standing
        poses = []
        for b in self.balls.values():
            on = b.status in ("table", "gutter")
            v = (moving or {}).get(b.id, (0.0, 0.0))
            z = r + (6.0 if b.id == lifting else 0.0)
            poses.append(BallPose(b.id, b.owner, b.x, b.y, z, on, math.hypot(*v) > self.options.physics.rest_speed,
                                  v[0], v[1]))
        index = len(self.frames)
        self.frames.append(SimFrame(index, index / self.fps, tuple(poses), hand, person, self.shift))

    def idle(self, seconds: float) -> None:
        for _ in range(max(0, round(seconds * self.fps))):
            self.frame()

    def feed(self, event: Event) -> list[Decision]:
        if self.events and event.t < self.events[-1].t:
            raise RuntimeError(f"simulation emitted {event.TYPE} at {event.t} before {self.events[-1].t}")
        self.events.append(event)
        decisions = self.engine.feed(event)
        self.decisions.extend(decisions)
        for d in decisions:
            if d.kind is K.CHOICE_REQUIRED:
                self.pending_choice = d.player
            if d.kind is K.ROUND_RESULT:
                self.round_start_t = None
            if d.kind in (K.GAME_RESULT, K.MATCH_RESULT) and self.engine.standings().complete:
                self.game_over = True
        return decisions

    # ------------------------------------------------------------------ game flow

    def start_game(self) -> None:
        players = tuple(PlayerSpec(pid, name, side) for pid, name, side in
                        zip(self.options.players, self.options.names, ("right", "left")))
        self.frame()
        self.feed(GameStart(0.0, players=players))
        self.idle(0.5)
        self.start_round()

    def start_round(self) -> None:
        self.round_start_t = self.now
        self.feed(RoundStart(self.now))
        self.idle(0.3)

    def time_left(self) -> float:
        return math.inf if self.round_start_t is None else self.round_start_t + self.round_length - self.now

    def end_round(self) -> None:
        """The umpire ends the round (or its clock runs out), then the table is cleared."""
        if self.round_start_t is not None:
            self.idle(1.0)
            self.feed(RoundEnd(self.now))
        self.after_round()

    def after_round(self) -> None:
        self.clear_table()
        for b in self.balls.values():
            if b.status == "out":
                b.status = "hand"
        if not self.game_over:
            self.idle(0.5)
            self.start_round()

    def clear_table(self) -> None:
        for b in sorted(self.balls.values(), key=lambda b: -b.y):
            if b.status in ("table", "gutter"):
                self.lift(b, "hand")

    def to_play(self) -> str:
        player = self.engine.standings().to_play
        assert player is not None
        return player

    def choose(self, choice: str) -> None:
        chooser = self.pending_choice
        assert chooser is not None
        self.pending_choice = None
        self.idle(1.0)
        self.feed(OutOfBallsChoice(self.now, player=chooser, choice=choice))
        self.notes.append(f"{chooser} chooses {choice.replace('_', ' ')}")
        self._check_round_over()

    def _check_round_over(self) -> None:
        if self.round_start_t is None:
            self.after_round()

    # ------------------------------------------------------------------ the table

    def resting(self) -> tuple[RestingBall, ...]:
        return tuple(RestingBall(b.id, b.x, b.y, b.status == "gutter") for b in self.balls.values()
                     if b.status in ("table", "gutter"))

    def where(self, x: float, y: float) -> Location:
        return self.profile.locate((x, y)).at

    def view(self) -> TableView:
        slots: dict[Slot, str] = {}
        loose: list[tuple[float, float]] = []
        for b in self.balls.values():
            if b.status != "table":
                continue
            at = self.where(b.x, b.y)
            if at.place is Place.SLOT and at.position is not None and at.slot is not None:  # a slot has both
                slots[(at.position, at.slot)] = b.owner
            elif at.place is Place.GROUPED:
                loose.append((b.x, b.y))
        return TableView(slots, loose)

    def next_ball(self, player: str) -> _Ball:
        for b in self.balls.values():
            if b.owner == player and b.status == "hand":
                return b
        raise RuntimeError(f"{player} has no ball in hand although the engine says they are to play")

    def preview(self, player: str, launch: Launch) -> tuple[ShotTrace, dict[int, Location]]:
        """What a shot would do, without playing it: the trace and where every ball ends."""
        ball = self.next_ball(player)
        trace = self.table.simulate(self.resting(), ball.id, launch, self.fps, self.options.debounce_s)
        ends = {s.id: (Location(Place.GUTTER) if s.in_gutter else self.where(s.x, s.y)) for s in trace.final}
        return trace, ends

    # ------------------------------------------------------------------ a shot

    def shoot(self, launch: Launch, foul: bool = False, trace: ShotTrace | None = None) -> list[Decision]:
        """One shot by the player to play: walk up, roll, watch it settle, then act on the calls."""
        player = self.to_play()
        ball = self.next_ball(player)
        if trace is None:
            trace = self.table.simulate(self.resting(), ball.id, launch, self.fps, self.options.debounce_s)
        sx, sy = self.table.launch_start(launch)
        ball.status, ball.x, ball.y = "table", sx, sy
        self._standing = PersonPose(player, launch.x, STANDING_REACH_MM)
        approach = round(0.6 * self.fps)
        for i in range(approach):
            reach = STANDING_REACH_MM if self.options.shooter_stays else -300.0 + 270.0 * (i + 1) / approach
            self.frame(hand=HandPose(sx, sy, "near", 40.0), person=PersonPose(player, launch.x, reach))
        before = {b.id: (b.x, b.y, b.status) for b in self.balls.values()}
        before_at = {b.id: self.where(b.x, b.y) for b in self.balls.values() if b.status == "table"}
        start = len(self.frames)
        crossing_at = (trace.crossing_frame + 2) if foul and trace.crossing_frame is not None else None
        out: list[Decision] = []
        for k, samples in enumerate(trace.frames):
            if k == trace.shove_frame:
                magnitude = 8.0
                self.shift = TableShift(dx=math.copysign(magnitude, launch.shove_dv), dy=0.0)
            moving = {}
            for s in samples:
                b = self.balls[s.id]
                b.x, b.y = s.x, s.y
                b.status = "gutter" if s.in_gutter else "table"
                moving[s.id] = (s.vx, s.vy)
            person = None
            if k < approach:
                reach = STANDING_REACH_MM - (0.0 if self.options.shooter_stays else 270.0 * k / approach)
                part = None
                if crossing_at is not None and crossing_at <= k < crossing_at + 8:
                    reach, part = 35.0, CROSSING_PART
                person = PersonPose(player, launch.x, reach, part)
            hand = HandPose(sx, sy, "near", 40.0) if k < 3 else None
            self.frame(hand=hand, person=person, moving=moving)
            t = (start + k) / self.fps
            if k == trace.crossing_frame:
                out += self.feed(ShotStarted(t, player=player))
            if k == crossing_at:
                out += self.feed(PlayLineCrossing(t, player=player, body_part=CROSSING_PART))
                self.notes.append(f"{player}'s head ({CROSSING_PART}) crosses the Play Line at {t:.2f}s")
            if k == trace.shove_frame:
                out += self.feed(TableMovement(t, magnitude_mm=8.0, player=player))
                self.notes.append(f"{player} shoves the table 8 mm at {t:.2f}s")
        snapshot = Snapshot(tuple(BallSighting(b.owner, Location(Place.GUTTER) if b.status == "gutter"
                                               else self.where(b.x, b.y))
                                  for b in self.balls.values() if b.status in ("table", "gutter")))
        out += self.feed(TableSettled(self.now - 1 / self.fps, snapshot=snapshot))
        self._act_on(out, ball, before, before_at)
        self._check_round_over()
        after = self.engine.standings().to_play
        self._standing = PersonPose(after or player, launch.x, STANDING_REACH_MM)
        return out

    def _act_on(self, decisions: list[Decision], shot_ball: _Ball, before: dict[int, tuple[float, float, str]],
                before_at: dict[int, Location]) -> None:
        """Do with the balls what the calls say: lift what is out, pick up returned balls."""
        void = any(d.rule == "SCB-5.2" for d in decisions)
        mover = next((d.player for d in decisions if d.kind is K.FOUL and d.rule == "SCB-5.6"), None)
        discard = {d.player for d in decisions if d.kind is K.BALL_REMOVED and d.rule == "SCB-7.2"}
        out_ids: set[int] = set()
        if void:
            out_ids.add(shot_ball.id)
        if mover is not None:
            out_ids |= self._moved_by_shove(mover, before, before_at)
        for b in list(self.balls.values()):
            if b.status == "gutter":
                out_ids.add(b.id)
        for b in sorted(self.balls.values(), key=lambda b: b.id):
            if b.status not in ("table", "gutter"):
                continue
            at = self.where(b.x, b.y) if b.status == "table" else Location(Place.GUTTER)
            if b.id in out_ids:
                self.lift(b, "out")
            elif at.place is Place.PLAY_AREA and b.id not in self.keep_in_play_area:
                self.lift(b, "out" if b.owner in discard else "hand")

    def _moved_by_shove(self, mover: str, before: dict[int, tuple[float, float, str]],
                        before_at: dict[int, Location]) -> set[int]:
        """SCB-5.6 as the engine counts it: the mover's new slot balls, extra grouped balls, returned balls."""
        ids: set[int] = set()
        mine = [b for b in self.balls.values() if b.owner == mover and b.status == "table"]
        old_slots = {at for i, at in before_at.items() if self.balls[i].owner == mover and at.place is Place.SLOT}
        old_grouped = sum(1 for i, at in before_at.items() if self.balls[i].owner == mover and at.place is Place.GROUPED)
        grouped = []
        for b in mine:
            at = self.where(b.x, b.y)
            if at.place is Place.SLOT and at not in old_slots:
                ids.add(b.id)
            elif at.place is Place.PLAY_AREA:
                ids.add(b.id)
            elif at.place is Place.GROUPED:
                grouped.append(b)
        extra = max(0, len(grouped) - old_grouped)
        grouped.sort(key=lambda b: -math.dist((b.x, b.y), before[b.id][:2]))
        ids |= {b.id for b in grouped[:extra]}
        return ids

    def lift(self, ball: _Ball, to: str) -> None:
        """A hand reaches in from the nearest edge, takes the ball, and leaves."""
        at = Location(Place.GUTTER) if ball.status == "gutter" else self.where(ball.x, ball.y)
        side = "near"
        if ball.x < self.profile.board.x_min and ball.y > self.profile.board.y_min:
            side = "left"
        elif ball.x > self.profile.board.x_max and ball.y > self.profile.board.y_min:
            side = "right"
        elif ball.y > self.profile.board.y_max:
            side = "far"
        steps = max(2, round(0.2 * self.fps))
        for i in range(steps):
            self.frame(hand=HandPose(ball.x, ball.y - 30.0 * (steps - 1 - i) / steps, side))
        self.frame(hand=HandPose(ball.x, ball.y, side), lifting=ball.id)
        n = self.config.get("balls_per_player", 10)
        ball.status = to
        self.feed(BallLifted(self.now - 1 / self.fps, owner=ball.owner, at=at))
        hx, hy = ball.x, ball.y
        ball.x, ball.y = self._parking(ball.id, n)
        for i in range(steps):
            self.frame(hand=HandPose(hx, hy - 30.0 * (i + 1) / steps, side))

    # ------------------------------------------------------------------ policy play

    def policy_launch(self, player: str) -> Launch:
        aim = choose_aim(self.table, self.view(), player, self.options.skill, self.rng)
        return with_noise(aim.launch, self.options.skill, self.rng)

    def play_policy_shot(self) -> list[Decision]:
        return self.shoot(self.policy_launch(self.to_play()))

    def search(self, predicate: Callable[[dict[int, Location], ShotTrace, int], bool],
               candidates: Callable[[], Launch], tries: int = 400) -> tuple[Launch, ShotTrace]:
        """The first candidate roll whose simulated outcome satisfies `predicate` (deterministic)."""
        player = self.to_play()
        ball = self.next_ball(player)
        for _ in range(tries):
            launch = candidates()
            trace, ends = self.preview(player, launch)
            if predicate(ends, trace, ball.id):
                return launch, trace
        raise RuntimeError(f"scenario {self.scenario!r}: no shot of {tries} tried produced the situation; "
                           "try another seed")

    def match(self) -> Match:
        return Match("starcluster", self.seed, self.scenario, self.fps, tuple(self.frames), tuple(self.events),
                     dict(self.config), tuple(self.notes))
