"""The Star Cluster Ball rules engine: events in, referee decisions out.

Bookkeeping (SCB-5): every ball of a player is exactly one of
  in hand (including balls resting in the play area), in a slot, grouped,
  or out for the round (gutter, off table, foul ball, removed by a foul or
  by Blocking).
The engine tracks the slot map, grouped counts and out counts; the hand is
derived: balls_per_player − out − slots − grouped. Balls of one colour are
indistinguishable, so a shot is read by diffing the settled snapshot against
the state before it. Clause ids (SCB-x.y) are those of docs/rules.md.

`check(event)` says why `feed` would refuse an event (None: it would be accepted); `feed` asks it first and
raises InputError before touching anything, so a refused event changes nothing. `state()` is the engine's
state as an immutable StarClusterState.
"""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass, field, replace
from itertools import combinations
from types import MappingProxyType
from typing import Any, Callable, Mapping

from ..decisions import Decision, DecisionKind, ScoreItem
from ..engine import GameScore, Pauses, PendingChoice, RoundScore, Standings
from ..errors import InputError
from ..events import (
    BallLifted,
    Confirm,
    Event,
    GameStart,
    OutOfBallsChoice,
    Place,
    PlayLineCrossing,
    RoundEnd,
    RoundPause,
    RoundResume,
    RoundStart,
    ShotStarted,
    Snapshot,
    TableMovement,
    TableSettled,
    UmpireFoul,
)
from . import scoring
from .config import StarClusterConfig
from .scoring import Slot

K = DecisionKind

CHOICES = ("bank", "final_sequence")


@dataclass(frozen=True)
class StarClusterState:
    """The engine's state at one moment, read-only (`StarClusterEngine.state()`; rules.engine.EngineState).

    Per-round fields describe the current round (the last one, once the match is over); before game_start
    the players are () and the round fields None or empty. Slots are (position, slot).
    """

    players: tuple[str, ...]
    to_play: str | None  # None before game_start and once the match is complete
    balls_to_play: Mapping[str, int]  # the balls in hand (= hand)
    pending_choice: PendingChoice | None  # SCB-6.1: bank or Final Sequence, while awaited
    round_number: int | None  # 1-based, tie-break rounds continue the count
    round_tiebreak: bool
    round_started_at: float | None  # the round's round_start or first shot; None: not yet begun
    round_ended_at: float | None  # the round's result, when no new round followed (the match ended)
    round_length_s: float | None  # round_seconds, or tiebreak_seconds in a tie-break round
    clock_counts_down: bool  # config clock == "events": the engine ends the round when time is up
    round_paused_at: float | None  # the umpire stopped the round clock then (round_pause); None: it runs
    round_paused_s: float  # how long the clock stood still in the round's earlier pauses
    shot_in_progress: bool  # a shot_started waits for its table_settled
    complete: bool  # the match is over
    game_number: int | None
    shooter: str | None  # whose shot is in progress
    board: Mapping[tuple[int, int], str]  # slot -> owner of the ball in it
    dead: frozenset[tuple[int, int]]  # slots whose ball never scores (dead ball area, void shot under stand)
    grouped: Mapping[str, int]
    out: Mapping[str, int]  # out for the round
    hand: Mapping[str, int]
    live: Mapping[str, frozenset[tuple[int, int]]]  # each player's scoring slots (board minus dead)
    unlifted_slots: Mapping[tuple[int, int], str]  # removed balls the snapshot may still show there
    unlifted_grouped: Mapping[str, int]  # removed grouped balls not yet lifted
    final_sequence: str | None  # who plays the Final Sequence of this round
    banked: str | None  # who banked this round
    free_shots: Mapping[str, int]  # SCB-8.1 free shots awarded and not used yet

    def to_json(self) -> dict[str, Any]:
        def slot(s: tuple[int, int]) -> str:
            return f"P{s[0]}/slot {s[1]}"

        choice = self.pending_choice
        return {
            "players": list(self.players), "to_play": self.to_play, "balls_to_play": dict(self.balls_to_play),
            "pending_choice": None if choice is None else {"player": choice.player, "options": list(choice.options),
                                                          "reason": choice.reason},
            "round_number": self.round_number, "round_tiebreak": self.round_tiebreak,
            "round_started_at": self.round_started_at, "round_ended_at": self.round_ended_at,
            "round_length_s": self.round_length_s, "clock_counts_down": self.clock_counts_down,
            "round_paused_at": self.round_paused_at, "round_paused_s": self.round_paused_s,
            "shot_in_progress": self.shot_in_progress, "complete": self.complete, "game_number": self.game_number,
            "shooter": self.shooter, "board": {slot(s): o for s, o in sorted(self.board.items())},
            "dead": [slot(s) for s in sorted(self.dead)], "grouped": dict(self.grouped), "out": dict(self.out),
            "hand": dict(self.hand), "live": {p: [slot(s) for s in sorted(v)] for p, v in self.live.items()},
            "unlifted_slots": {slot(s): o for s, o in sorted(self.unlifted_slots.items())},
            "unlifted_grouped": dict(self.unlifted_grouped), "final_sequence": self.final_sequence,
            "banked": self.banked, "free_shots": dict(self.free_shots),
        }


@dataclass
class _Round:
    """Live state of one round (mutable: the engine's working memory, never exposed)."""

    number: int
    tiebreak: bool
    length: float
    starter: str
    start: float | None = None
    scores: dict[str, int] = field(default_factory=dict)
    complete: bool = False
    ended: float | None = None  # the time of the round's ROUND_RESULT
    board: dict[Slot, str] = field(default_factory=dict)
    dead: set[Slot] = field(default_factory=set)  # balls that occupy a slot but never score
    grouped: Counter = field(default_factory=Counter)
    out: Counter = field(default_factory=Counter)
    gutter_seen: Counter = field(default_factory=Counter)  # out balls still visible in gutter/off table
    pending_slots: dict[Slot, str] = field(default_factory=dict)  # removed balls not yet lifted
    vanished: dict[Slot, str] = field(default_factory=dict)  # slots read empty of a live ball with no lift seen
    pending_grouped: Counter = field(default_factory=Counter)
    banked: str | None = None
    final_sequence: str | None = None
    final_foul: bool = False
    pauses: Pauses = field(default_factory=Pauses)


@dataclass
class _Game:
    number: int
    rounds: list[_Round] = field(default_factory=list)
    winners: tuple[str, ...] = ()
    complete: bool = False


@dataclass
class _Shot:
    shooter: str
    cause: str
    t: float
    number: int
    void: Event | None = None
    fouls: list[UmpireFoul] = field(default_factory=list)


@dataclass(frozen=True)
class _Observed:
    board: dict[Slot, str]
    grouped: Counter
    gutter: Counter


class StarClusterEngine:
    game = "starcluster"

    def __init__(self, config: StarClusterConfig | None = None) -> None:
        self.config = config or StarClusterConfig()
        self._players: tuple[str, ...] = ()
        self._sides: dict[str, str] = {}
        self._games: list[_Game] = []
        self._match_winners: tuple[str, ...] = ()
        self._complete = False
        self._to_play: str | None = None
        self._shot: _Shot | None = None
        self._shots = 0
        self._now = 0.0
        self._movement: tuple[str, Event] | None = None
        self._free_shots: Counter = Counter()
        self._awaiting: str | None = None

    # ------------------------------------------------------------------ protocol

    def check(self, event: Event) -> str | None:
        """Why `feed(event)` would refuse `event` (its InputError message), or None; changes nothing."""
        return self._refusal(event)

    def feed(self, event: Event) -> list[Decision]:
        reason = self._refusal(event)
        if reason is not None:
            raise InputError(reason)  # before any change: a refused event leaves the engine as it was
        self._now = max(self._now, event.t)
        if isinstance(event, GameStart):
            return self._game_start(event)
        if isinstance(event, Confirm) or self._complete:
            return []
        out: list[Decision] = []
        if self._shot is None:
            out += self._clock(event.t)
            if self._complete:
                return out
        handlers: dict[type[Event], Callable[[Any], list[Decision]]] = {
            ShotStarted: self._shot_started, TableSettled: self._settled, PlayLineCrossing: self._crossing,
            TableMovement: self._table_movement, UmpireFoul: self._umpire_foul, BallLifted: self._lifted,
            RoundStart: self._round_start, RoundEnd: self._round_end, OutOfBallsChoice: self._choice,
            RoundPause: self._pause, RoundResume: self._pause,
        }
        handler = handlers.get(type(event))
        if handler is not None:  # ball_placed: the next settle shows it; overturns/corrections: the replay layer's
            out += handler(event)
        if self._shot is None and not self._complete:
            out += self._clock(event.t)
        return out

    def close(self, t: float) -> list[Decision]:
        """At the end of the log, the clock may still end the round (SCB-2.2)."""
        if self._complete or not self._players:
            return []
        deadline = self._deadline()
        if deadline is not None and t >= deadline:
            return self._end_round(deadline, None, "time is up")
        return []

    def state(self) -> StarClusterState:
        players = self._players
        if not players:
            return StarClusterState(
                players=(), to_play=None, balls_to_play=MappingProxyType({}), pending_choice=None, round_number=None,
                round_tiebreak=False, round_started_at=None, round_ended_at=None, round_length_s=None,
                clock_counts_down=self.config.clock == "events", round_paused_at=None, round_paused_s=0.0,
                shot_in_progress=False, complete=False,
                game_number=None, shooter=None, board=MappingProxyType({}), dead=frozenset(),
                grouped=MappingProxyType({}), out=MappingProxyType({}), hand=MappingProxyType({}),
                live=MappingProxyType({}), unlifted_slots=MappingProxyType({}), unlifted_grouped=MappingProxyType({}),
                final_sequence=None, banked=None, free_shots=MappingProxyType({}))
        rnd = self._round
        hand = MappingProxyType({p: self._hand(p) for p in players})
        choice = None
        if self._awaiting is not None and not self._complete:
            choice = PendingChoice(self._awaiting, CHOICES, f"{self._other(self._awaiting)} has no balls left")
        return StarClusterState(
            players=players,
            to_play=None if self._complete else self._to_play,
            balls_to_play=hand,
            pending_choice=choice,
            round_number=rnd.number,
            round_tiebreak=rnd.tiebreak,
            round_started_at=rnd.start,
            round_ended_at=rnd.ended if rnd.complete else None,
            round_length_s=rnd.length,
            clock_counts_down=self.config.clock == "events",
            round_paused_at=rnd.pauses.paused_at,
            round_paused_s=rnd.pauses.paused_s,
            shot_in_progress=self._shot is not None,
            complete=self._complete,
            game_number=self._game.number,
            shooter=None if self._shot is None else self._shot.shooter,
            board=MappingProxyType(dict(sorted(rnd.board.items()))),
            dead=frozenset(rnd.dead),
            grouped=MappingProxyType({p: rnd.grouped[p] for p in players}),
            out=MappingProxyType({p: rnd.out[p] for p in players}),
            hand=hand,
            live=MappingProxyType({p: frozenset(self._live(p)) for p in players}),
            unlifted_slots=MappingProxyType(dict(sorted(rnd.pending_slots.items()))),
            unlifted_grouped=MappingProxyType({p: rnd.pending_grouped[p] for p in players}),
            final_sequence=rnd.final_sequence,
            banked=rnd.banked,
            free_shots=MappingProxyType({p: self._free_shots[p] for p in players}),
        )

    @property
    def balls_per_player(self) -> int:
        return self.config.balls_per_player

    def standings(self) -> Standings:
        games = []
        for game in self._games:
            rounds = tuple(RoundScore(r.number, {p: r.scores.get(p, 0) for p in self._players}, r.tiebreak,
                                      r.complete) for r in game.rounds)
            totals = {p: sum(r.scores.get(p, 0) for r in game.rounds) for p in self._players}
            games.append(GameScore(game.number, rounds, totals, game.winners, game.complete))
        wins = {p: sum(1 for g in self._games if g.winners == (p,)) for p in self._players}
        return Standings(self._players, tuple(games), wins, self._match_winners, self._complete,
                         None if self._complete else self._to_play, self._status())

    # ------------------------------------------------------------------ legality (what feed refuses)

    def _refusal(self, event: Event) -> str | None:
        """The first reason `event` cannot be applied, in the order feed meets them; None: it is accepted.

        Reads the engine only. Where the round clock would run out before the event is handled (the event
        meets a new round, or a finished match), the clock is advanced on a copy and the copy is asked.
        """
        if isinstance(event, GameStart):
            return self._game_start_refusal(event)
        if not self._players:
            return (f"event {event.id}: {event.TYPE} comes before game_start; "
                    "start the log with a game_start line naming the two players")
        if isinstance(event, Confirm) or self._complete:
            return None  # ignored
        if self._clock_due(event.t):
            ahead = copy.deepcopy(self)
            ahead._clock(event.t)
            return None if ahead._complete else ahead._event_refusal(event)
        return self._event_refusal(event)

    def _game_start_refusal(self, event: GameStart) -> str | None:
        ids = tuple(p.id for p in event.players)
        if self._players:
            between_games = len(self._games) > 1 and len(self._game.rounds) == 1 and self._round.start is None
            if ids != self._players or self._complete or not between_games:
                return (f"event {event.id}: game_start while a game is in progress or after the match "
                        f"ended (players {', '.join(self._players)}); start a new log for a new match")
            return None  # the next game of a best-of match, already set up (SCB-9.2)
        if len(ids) != 2:
            return (f"event {event.id}: Star Cluster Ball needs exactly 2 players, got {len(ids)}; "
                    "list two players (or teams) in game_start")
        sides = _sides(event)
        if sides[0] == sides[1]:
            return (f"event {event.id}: both players are on the {sides[0]} side; "
                    "give one player side 'right' and the other 'left'")
        return None

    def _event_refusal(self, event: Event) -> str | None:
        """Refusals of an event other than game_start, once the clock has been applied (SCB-11.1)."""
        if isinstance(event, (ShotStarted, PlayLineCrossing, TableMovement)):
            if event.player is None:
                return None
            return self._not_a_player(event.player, event, "shooter" if isinstance(event, ShotStarted) else "player")
        if isinstance(event, UmpireFoul):
            return self._not_a_player(event.player, event)
        if isinstance(event, BallLifted):
            return self._not_a_player(event.owner, event, "ball owner")
        if isinstance(event, TableSettled):
            return self._snapshot_refusal(event.snapshot, event)
        if isinstance(event, OutOfBallsChoice):
            return self._choice_refusal(event)
        if isinstance(event, (RoundPause, RoundResume)):
            return self._round.pauses.refusal(event, running=self._round.start is not None and not self._round.complete)
        return None  # round_start, round_end, ball_placed; overturns and corrections are the replay layer's

    def _not_a_player(self, name: str | None, event: Event, what: str = "player") -> str | None:
        if name in self._players:
            return None
        return (f"event {event.id}: {what} {name!r} is not a player (players: {', '.join(self._players)}); "
                "fix the colour in the log or add the player to game_start")

    def _snapshot_refusal(self, snapshot: Snapshot, event: Event) -> str | None:
        """A snapshot that cannot be a Star Cluster Ball table (balls in the order _observe reads them)."""
        cfg = self.config
        taken: set[Slot] = set()
        for ball in sorted(snapshot.balls, key=lambda b: (b.owner, b.at)):
            reason = self._not_a_player(ball.owner, event, "ball owner")
            if reason is not None:
                return reason
            at = ball.at
            if at.place is Place.SLOT:
                slot = (at.position or 0, at.slot or 0)  # a slot location always has both
                if slot[0] > cfg.positions or slot[1] >= cfg.slots_per_position[slot[0] - 1]:
                    return (f"event {event.id}: {at} is not on the table (positions have "
                            f"{', '.join(map(str, cfg.slots_per_position))} slots); fix the snapshot or the "
                            "slots_per_position setting")
                if slot in taken:
                    return f"event {event.id}: two balls in {at}; a slot holds one ball, fix the snapshot"
                taken.add(slot)
            elif at.place is Place.CELL:
                return (f"event {event.id}: a Star Cluster Ball snapshot has no board cells ({at}); "
                        "use slot, play_area, grouped, gutter or off_table")
        for p in self._players:
            if snapshot.count(p) > cfg.balls_per_player:
                return (f"event {event.id}: snapshot shows {snapshot.count(p)} {p} balls but each player has "
                        f"{cfg.balls_per_player}; fix the snapshot or the balls_per_player setting")
        return None

    def _choice_refusal(self, event: OutOfBallsChoice) -> str | None:
        reason = self._not_a_player(event.player, event)
        if reason is not None:
            return reason
        if self._awaiting is None:
            return (f"event {event.id}: out_of_balls_choice by {event.player} but no player is out of balls; "
                    "remove the line or check the snapshots before it")
        if event.player != self._awaiting:
            return (f"event {event.id}: out_of_balls_choice by {event.player}, but it is {self._awaiting}'s "
                    f"choice ({self._other(self._awaiting)} ran out of balls); fix the player")
        return None

    # ------------------------------------------------------------------ helpers

    @property
    def _game(self) -> _Game:
        return self._games[-1]

    @property
    def _round(self) -> _Round:
        return self._game.rounds[-1]

    def _other(self, player: str) -> str:
        return self._players[1] if player == self._players[0] else self._players[0]

    def _by_side(self, side: str) -> str:
        return next(p for p in self._players if self._sides[p] == side)

    def _hand(self, player: str, rnd: _Round | None = None) -> int:
        rnd = rnd or self._round
        on_board = sum(1 for owner in rnd.board.values() if owner == player)
        return self.config.balls_per_player - rnd.out[player] - on_board - rnd.grouped[player]

    def _live(self, player: str) -> set[Slot]:
        rnd = self._round
        return {s for s, owner in rnd.board.items() if owner == player and s not in rnd.dead}

    def _warn(self, t: float, summary: str, cause: str, rule: str = "SCB-11.2", confidence: float = 1.0,
              player: str | None = None) -> Decision:
        return Decision(t, K.WARNING, summary, player=player, rule=rule, cause=cause, confidence=confidence,
                        flagged=True)

    def _flag(self, confidence: float) -> bool:
        return confidence < self.config.review_confidence

    def _score(self, t: float, player: str, points: int, items: tuple[ScoreItem, ...], summary: str, rule: str,
               cause: str) -> Decision:
        self._round.scores[player] = self._round.scores.get(player, 0) + points
        return Decision(t, K.SCORE, f"{summary}: {points:+d}", player=player, points=points,
                        breakdown=items, rule=rule, cause=cause)

    def _totals(self) -> dict[str, int]:
        return {p: sum(r.scores.get(p, 0) for r in self._game.rounds) for p in self._players}

    # ------------------------------------------------------------------ game and rounds

    def _game_start(self, event: GameStart) -> list[Decision]:
        """An accepted game_start (see _game_start_refusal)."""
        if self._players:
            return []  # the next game of a best-of match was already set up automatically (SCB-9.2)
        ids = tuple(p.id for p in event.players)
        self._players = ids
        self._sides = dict(zip(ids, _sides(event)))
        return self._new_game(event.t, event.id)

    def _new_game(self, t: float, cause: str) -> list[Decision]:
        self._games.append(_Game(len(self._games) + 1))
        self._shots = 0
        return self._new_round(t, cause, tiebreak=False)

    def _new_round(self, t: float, cause: str, tiebreak: bool) -> list[Decision]:
        game = self._game
        cfg = self.config
        number = len(game.rounds) + 1
        if tiebreak:
            previous = sum(1 for r in game.rounds if r.tiebreak)
            other = "left" if cfg.tiebreak_starter == "right" else "right"
            side = cfg.tiebreak_starter if previous % 2 == 0 else other
        else:
            side = cfg.round_starters[(number - 1) % len(cfg.round_starters)]
        starter = self._by_side(side)
        game.rounds.append(_Round(number, tiebreak, cfg.tiebreak_seconds if tiebreak else cfg.round_seconds, starter))
        self._to_play = starter
        self._movement = None
        self._free_shots.clear()
        self._awaiting = None
        kind = "tie-break round" if tiebreak else "round"
        return [Decision(t, K.PHASE, f"game {game.number}, {kind} {number}: {starter} ({side} side) starts",
                         player=starter, rule="SCB-8.2" if tiebreak else "SCB-3.1", cause=cause,
                         data=(("phase", "tiebreak" if tiebreak else "round"), ("round", number)))]

    def _begin(self, t: float) -> None:
        if self._round.start is None:
            self._round.start = t

    def _round_start(self, event: RoundStart) -> list[Decision]:
        if self._round.start is not None:
            return [self._warn(event.t, f"round_start while round {self._round.number} is already running; ignored",
                               event.id)]
        self._begin(event.t)
        return []

    def _round_end(self, event: RoundEnd) -> list[Decision]:
        if self._round.start is None:
            return []  # already ended (by the clock) or not begun: nothing to end
        return self._end_round(event.t, event.id, "the umpire ends the round")

    def _pause(self, event: RoundPause | RoundResume) -> list[Decision]:
        rnd = self._round
        return [rnd.pauses.apply(event, f"game {self._game.number}, {'tie-break ' if rnd.tiebreak else ''}round "
                                        f"{rnd.number}")]

    def _deadline(self) -> float | None:
        """When the round clock runs out: its start, its length and its pauses; None while it does not count
        down (no clock, the round not begun, or paused by the umpire)."""
        rnd = self._round
        if self.config.clock != "events" or rnd.start is None or rnd.pauses.paused_at is not None:
            return None
        return rnd.start + rnd.length + rnd.pauses.paused_s

    def _clock_due(self, t: float) -> bool:
        """Whether feed runs out the round clock at `t` before handling an event there."""
        deadline = self._deadline()
        return self._shot is None and deadline is not None and t > deadline

    def _clock(self, t: float) -> list[Decision]:
        deadline = self._deadline()
        if deadline is not None and t > deadline:
            return self._end_round(deadline, None, "time is up")
        return []

    def _end_round(self, t: float, cause: str | None, reason: str) -> list[Decision]:
        rnd = self._round
        out: list[Decision] = []
        if self._shot is not None:
            out.append(self._warn(t, f"shot {self._shot.number} never settled before the round ended; it scores "
                                     "nothing", self._shot.cause))
            self._shot = None
        if not rnd.tiebreak:
            for p in self._players:
                hand = self._hand(p)
                if p == rnd.banked or hand <= 0:
                    continue
                if rnd.final_sequence == p and rnd.final_foul:
                    out.append(Decision(t, K.BALL_REMOVED, f"{p}: {hand} ball(s) still in hand score nothing after "
                                        "the Final Sequence foul", player=p, rule="SCB-7.5", cause=cause))
                    continue
                out.append(self._score(t, p, hand, (ScoreItem("remaining balls in hand", hand),),
                                       f"{hand} remaining ball(s) in hand", "SCB-6.3", cause or ""))
        return out + self._round_result(t, cause, reason) + self._after_round(t, cause)

    def _round_result(self, t: float, cause: str | None, reason: str) -> list[Decision]:
        rnd = self._round
        rnd.complete = True
        rnd.ended = t
        scores = {p: rnd.scores.get(p, 0) for p in self._players}
        text = ", ".join(f"{p} {scores[p]}" for p in self._players)
        return [Decision(t, K.ROUND_RESULT, f"round {rnd.number} over ({reason}): {text}", rule="SCB-2.1",
                         cause=cause, data=(("round", rnd.number), ("scores", scores)))]

    def _after_round(self, t: float, cause: str | None) -> list[Decision]:
        cfg = self.config
        rnd = self._round
        totals = self._totals()
        best = max(totals.values())
        leaders = tuple(p for p in self._players if totals[p] == best)
        if cfg.target_score is not None and best >= cfg.target_score:  # reached with the remaining balls
            return self._end_game(t, leaders, cause, f"reached the target of {cfg.target_score}")
        if rnd.tiebreak:
            if cfg.tiebreak_no_score == "shared":
                return self._end_game(t, leaders, cause, "nobody scored in the tie-break: shared victory")
            return self._new_round(t, cause or "", tiebreak=True)
        regular = sum(1 for r in self._game.rounds if not r.tiebreak)
        limit = cfg.rounds_per_game if cfg.target_score is None else cfg.target_round_limit
        if limit is None or regular < limit:
            return self._new_round(t, cause or "", tiebreak=False)
        if len(leaders) == 1:
            return self._end_game(t, leaders, cause, "highest total")
        out = [Decision(t, K.PHASE, f"totals tied at {best}: a {cfg.tiebreak_seconds:g}-second tie-break round, "
                        "first to score wins", rule="SCB-8.2", cause=cause, data=(("phase", "tiebreak"),))]
        return out + self._new_round(t, cause or "", tiebreak=True)

    def _end_game(self, t: float, winners: tuple[str, ...], cause: str | None, reason: str) -> list[Decision]:
        game = self._game
        out = [] if self._round.complete else self._round_result(t, cause, reason)
        game.winners, game.complete = winners, True
        totals = self._totals()
        text = ", ".join(f"{p} {totals[p]}" for p in self._players)
        out += [Decision(t, K.GAME_RESULT, f"game {game.number} to {' and '.join(winners)} ({reason}): {text}",
                        player=winners[0] if len(winners) == 1 else None, rule="SCB-3.6", cause=cause,
                        data=(("game", game.number), ("winners", list(winners)), ("totals", totals)))]
        self._shot = None
        if self.config.best_of == 1:
            self._complete, self._match_winners = True, winners
            return out
        wins = {p: sum(1 for g in self._games if g.winners == (p,)) for p in self._players}
        champion = [p for p in self._players if wins[p] > self.config.best_of // 2]
        if champion:
            self._complete, self._match_winners = True, (champion[0],)
            text = ", ".join(f"{p} {wins[p]}" for p in self._players)
            return out + [Decision(t, K.MATCH_RESULT, f"match to {champion[0]}: games won {text}", player=champion[0],
                                   rule="SCB-9.2", cause=cause, data=(("match_wins", wins),))]
        return out + self._new_game(t, cause or "")

    # ------------------------------------------------------------------ shots

    def _shot_started(self, event: ShotStarted) -> list[Decision]:
        out: list[Decision] = []
        shooter = event.player if event.player is not None else self._to_play
        assert shooter is not None
        if self._awaiting is not None:
            chooser = self._awaiting
            out.append(self._warn(event.t, f"a shot started while waiting for {chooser}'s choice: taken as "
                                           "Final Sequence", event.id, "SCB-6.1", player=chooser))
            out += self._start_final_sequence(event.t, chooser, event.id)
        if self._shot is not None:
            out.append(self._warn(event.t, f"shot {self._shot.number} never settled; it scores nothing",
                                  self._shot.cause))
        if shooter != self._to_play:
            out.append(self._warn(event.t, f"{shooter} shoots but {self._to_play} is to play; following the log",
                                  event.id, "SCB-3.2", player=shooter))
            self._to_play = shooter
        self._begin(event.t)
        if self._hand(shooter) <= 0:
            out.append(self._warn(event.t, f"{shooter} shoots with no ball in hand by the engine's count",
                                  event.id, "SCB-11.2", player=shooter))
        self._shots += 1
        self._shot = _Shot(shooter, event.id, event.t, self._shots)
        return out

    def _crossing(self, event: PlayLineCrossing) -> list[Decision]:
        shot = self._shot
        player = event.player if event.player is not None else (shot.shooter if shot else None)
        if shot is None or player != shot.shooter:
            return [self._warn(event.t, "Play Line crossing outside the shooter's shot; ignored", event.id,
                               "SCB-3.5", event.confidence, player)]
        shot.void = event
        return []

    def _table_movement(self, event: TableMovement) -> list[Decision]:
        player = event.player if event.player is not None else (
            self._shot.shooter if self._shot else self._to_play)
        if event.magnitude_mm < self.config.table_movement_foul_mm:
            return [self._warn(event.t, f"table moved {event.magnitude_mm:g} mm (below the "
                                        f"{self.config.table_movement_foul_mm:g} mm foul threshold)", event.id,
                               "SCB-5.6", event.confidence, player)]
        assert player is not None
        self._movement = (player, event)
        return []

    def _umpire_foul(self, event: UmpireFoul) -> list[Decision]:
        player = event.player
        shot = self._shot
        if event.foul == "table_movement":
            self._movement = (player, event)
            return []
        if shot is not None and player == shot.shooter:
            shot.fouls.append(event)  # the shot becomes void (SCB-8.1 / SCB-3.5), applied at the settle
            return []
        out = [Decision(event.t, K.FOUL, f"umpire: {event.foul.replace('_', ' ')} by {player}", player=player,
                        rule="SCB-8.1", cause=event.id, data=(("foul", event.foul), ("free_shot", event.free_shot)))]
        if event.free_shot:
            out += self._grant_free_shot(event.t, self._other(player), event.id)
        if shot is None and player == self._to_play and self._awaiting is None:
            out += self._pass_turn(event.t, player, event.id, "SCB-8.1") + self._check_out_of_balls(event.t, event.id)
        return out

    def _grant_free_shot(self, t: float, player: str, cause: str) -> list[Decision]:
        self._free_shots[player] += 1
        return [Decision(t, K.PHASE, f"{player} is awarded a free shot (a miss will not end the turn)",
                         player=player, rule="SCB-8.1", cause=cause, data=(("phase", "free_shot"),))]

    def _lifted(self, event: BallLifted) -> list[Decision]:
        owner = event.owner
        rnd = self._round
        at = event.at
        if at.place in (Place.GUTTER, Place.OFF_TABLE):
            rnd.gutter_seen[owner] = max(0, rnd.gutter_seen[owner] - 1)
        elif at.place is Place.SLOT and rnd.pending_slots.get((at.position or 0, at.slot or 0)) == owner:
            del rnd.pending_slots[(at.position or 0, at.slot or 0)]
        elif at.place is Place.GROUPED and rnd.pending_grouped[owner] > 0:
            rnd.pending_grouped[owner] -= 1
        return []

    def _observe(self, snapshot: Snapshot) -> _Observed:
        """Read a snapshot (valid: see _snapshot_refusal) as engine state; balls removed but not yet lifted are
        left out, and notes of removed balls the snapshot no longer shows are dropped."""
        rnd = self._round
        board: dict[Slot, str] = {}
        grouped: Counter = Counter()
        gutter: Counter = Counter()
        for ball in sorted(snapshot.balls, key=lambda b: (b.owner, b.at)):
            owner, at = ball.owner, ball.at
            if at.place is Place.SLOT:
                board[(at.position or 0, at.slot or 0)] = owner  # a slot location always has both
            elif at.place is Place.GROUPED:
                grouped[owner] += 1
            elif at.place in (Place.GUTTER, Place.OFF_TABLE):
                gutter[owner] += 1
        for slot, owner in sorted(rnd.pending_slots.items()):
            if board.get(slot) == owner:
                del board[slot]
            else:
                del rnd.pending_slots[slot]
        for p in self._players:  # grouped balls look alike: a drop in the count is a removed ball lifted first
            drop = max(0, rnd.grouped[p] + rnd.pending_grouped[p] - grouped[p])
            rnd.pending_grouped[p] = max(0, rnd.pending_grouped[p] - drop)
            grouped[p] -= rnd.pending_grouped[p]
        return _Observed(board, grouped, gutter)

    def _settled(self, event: TableSettled) -> list[Decision]:
        out: list[Decision] = []
        low = [b.confidence for b in event.snapshot.balls if self._flag(b.confidence)]
        if self._flag(event.confidence) or low:
            conf = min([event.confidence] + low)
            out.append(self._warn(event.t, f"low-confidence snapshot ({conf:.2f}); please check it", event.id,
                                  confidence=conf))
        if self._round.start is None and self._shot is None:
            self._observe(event.snapshot)  # the round has not begun, the board is empty
            return out
        if self._shot is None:
            return out + self._sync(event)
        return out + self._resolve(event)

    def _mark_dead(self, t: float, landed: set[Slot]) -> list[Slot]:
        rule = self.config.optional_rules.dead_ball
        rnd = self._round
        if rule is None or rnd.start is None or t < rnd.start + rule.from_fraction * rnd.length:
            return []
        dead = sorted(s for s in landed if rule.covers(*s))
        rnd.dead.update(dead)
        return dead

    def _diff(self, old: dict[Slot, str], new: dict[Slot, str]) -> tuple[dict[str, set[Slot]], dict[str, set[Slot]]]:
        landed = {p: {s for s, o in new.items() if o == p and old.get(s) != p} for p in self._players}
        left = {p: {s for s, o in old.items() if o == p and new.get(s) != p} for p in self._players}
        return landed, left

    def _apply(self, obs: _Observed) -> Counter:
        """Make the observed board the state; return balls newly out via gutter or off table."""
        rnd = self._round
        new_out = Counter({p: max(0, obs.gutter[p] - rnd.gutter_seen[p]) for p in self._players})
        for slot in [s for s in rnd.dead if obs.board.get(s) != rnd.board.get(s)]:
            rnd.dead.discard(slot)
        rnd.board = dict(obs.board)
        rnd.grouped = Counter({p: obs.grouped[p] for p in self._players})
        rnd.gutter_seen = Counter({p: obs.gutter[p] for p in self._players})
        rnd.out.update(new_out)
        return new_out

    def _remove_slot(self, slot: Slot) -> None:
        rnd = self._round
        owner = rnd.board.pop(slot)
        rnd.dead.discard(slot)
        rnd.pending_slots[slot] = owner
        rnd.out[owner] += 1

    def _sync(self, event: TableSettled) -> list[Decision]:
        """A settle outside a shot updates the state; changes on the board are flagged, never scored."""
        rnd = self._round
        old_board, old_grouped = dict(rnd.board), Counter(rnd.grouped)
        obs = self._observe(event.snapshot)
        landed, left = self._diff(old_board, obs.board)
        hands = {p: self._hand(p) for p in self._players}
        new_out = self._apply(obs)
        self._note_vanished(left)
        self._mark_dead(event.t, set().union(*landed.values()))
        out: list[Decision] = []
        if self._movement is not None:
            mover, move_event = self._movement
            self._movement = None
            out += self._movement_foul(event.t, mover, move_event, landed[mover], old_grouped, hands[mover])
            if mover == self._to_play and self._awaiting is None:
                out += self._pass_turn(event.t, mover, move_event.id, "SCB-5.6")
        else:
            changed = [p for p in self._players
                       if landed[p] or left[p] or new_out[p] or rnd.grouped[p] != old_grouped[p]]
            if changed:
                out.append(self._warn(event.t, "the board changed without a shot (" + ", ".join(changed)
                                      + "); state updated, no points", event.id))
        return out + self._fix_counts(event) + self._check_out_of_balls(event.t, event.id)

    def _fix_counts(self, event: Event) -> list[Decision]:
        """A snapshot showing more balls than the engine thinks are left wins, with a warning."""
        out = []
        for p in self._players:
            hand = self._hand(p)
            if hand < 0:
                self._round.out[p] += hand
                out.append(self._warn(event.t, f"{p} shows {-hand} more ball(s) than the engine counted in play; "
                                               "taken back into play", event.id, player=p))
        return out

    def _movement_foul(self, t: float, mover: str, event: Event, landed: set[Slot], old_grouped: Counter,
                       hand_before: int) -> list[Decision]:
        """SCB-5.6: every ball of the mover that moved is removed for the round."""
        rnd = self._round
        for slot in sorted(landed):
            if slot in rnd.board:
                self._remove_slot(slot)
        extra_grouped = max(0, rnd.grouped[mover] - old_grouped[mover])
        rnd.grouped[mover] -= extra_grouped
        rnd.pending_grouped[mover] += extra_grouped
        rnd.out[mover] += extra_grouped
        returned = max(0, self._hand(mover) - hand_before)
        rnd.out[mover] += returned
        removed = len(landed) + extra_grouped + returned
        magnitude = getattr(event, "magnitude_mm", None)
        size = f" ({magnitude:g} mm)" if magnitude is not None else ""
        confidence = getattr(event, "confidence", 1.0)
        return [Decision(t, K.FOUL, f"deliberate table movement{size} by {mover}: {removed} moved ball(s) of "
                         f"{mover} removed for the round; turn ends", player=mover, rule="SCB-5.6", cause=event.id,
                         confidence=confidence, flagged=isinstance(event, TableMovement),
                         data=(("foul", "table_movement"), ("removed", removed),
                               ("lift", [f"P{p}/slot {s}" for p, s in sorted(landed)])))]

    def _resolve(self, event: TableSettled) -> list[Decision]:
        shot = self._shot
        assert shot is not None
        self._shot = None
        cfg = self.config
        rnd = self._round
        shooter, opponent = shot.shooter, self._other(shot.shooter)
        t, cause = event.t, event.id
        old_board, old_grouped = dict(rnd.board), Counter(rnd.grouped)
        old_out, old_dead = Counter(rnd.out), set(rnd.dead)
        live_before = {p: self._live(p) for p in self._players}
        hand_before = {p: self._hand(p) - (1 if p == shooter else 0) for p in self._players}
        removed_in_slots = dict(rnd.pending_slots)
        obs = self._observe(event.snapshot)
        landed, left = self._diff(old_board, obs.board)
        new_out = self._apply(obs)
        missed = [w for p in self._players if (w := self._removed_knocked_on(
            t, cause, p, p == shooter, removed_in_slots, old_grouped, landed[p], left[p], new_out))]
        for p in self._players:
            hidden = self._hidden_not_gone(p, p == shooter, old_grouped, landed[p], left[p], new_out)
            if hidden:
                live_before[p] |= hidden  # it never left: no points for its return, none lost for it
                missed.append(self._warn(t, f"{p} ball(s) at {_slot_names(hidden)} on the table again: "
                                         f"more {p} balls arrived than there were in play to come from, so they "
                                         "were hidden, not gone; back on the board, no points, no knock-in foul; "
                                         "check the table", cause, "SCB-11.3", player=p))
        self._note_vanished(left)
        decisions: list[Decision] = []  # FOUL / BALL_* / PHASE lines, after the SHOT and SCORE lines
        scores: list[Decision] = []
        void = shot.void or (shot.fouls[0] if shot.fouls else None)
        foul = grouped = False
        if void is not None:
            outcome = "void"
            foul = True
            decisions += self._void(t, shot, void, old_board, old_grouped, old_out, old_dead, landed, new_out,
                                    hand_before[shooter])
            if cfg.knocked_out_ball_loses_points and cfg.void_shot_displaced == "stand":
                for p in (shooter, opponent):  # knocked-out balls lose their points; void landings add none
                    points, items = scoring.difference(cfg, live_before[p], self._live(p))
                    if points:
                        scores.append(self._score(t, p, points, items, "balls displaced by a void shot", "SCB-4.5",
                                                  cause))
            for f in shot.fouls:
                if f.free_shot:
                    decisions += self._grant_free_shot(t, opponent, f.id)
        else:
            dead = self._mark_dead(t, set().union(*landed.values()))
            if dead:
                decisions.append(Decision(t, K.BALL_REMOVED, "dead ball area: " + ", ".join(
                    f"{rnd.board[s]} at P{s[0]}/slot {s[1]}" for s in dead) + " score nothing", rule="SCB-10.4",
                    cause=cause, data=(("dead", [list(s) for s in dead]),)))
            movement = self._movement
            self._movement = None
            if movement is not None:
                mover = movement[0]
                decisions += self._movement_foul(t, mover, movement[1], landed[mover], old_grouped,
                                                 hand_before[mover])
                landed[mover] = set()
                foul = mover == shooter
            if rnd.final_sequence is not None:
                decisions += self._discard_returned(t, cause, hand_before)
            if cfg.optional_rules.blocking:
                decisions += self._blocking(t, cause, shooter, landed[shooter])
            gain, _ = scoring.award(cfg, self._live(shooter), landed[shooter] - rnd.dead)
            knocked_in = bool(landed[opponent]) and not (movement is not None and movement[0] == opponent)
            for p in (shooter, opponent):
                if cfg.knocked_out_ball_loses_points:
                    points, items = scoring.difference(cfg, live_before[p], self._live(p))
                else:
                    points, items = scoring.award(cfg, self._live(p), landed[p] - rnd.dead)
                if points:
                    what = f"knocked into the Astrolabe by {shooter}" if p != shooter else "lands in the Astrolabe"
                    scores.append(self._score(t, p, points, items, what, "SCB-5.7" if p != shooter else "SCB-4.1",
                                              cause))
            if knocked_in:
                foul = True
                decisions.append(Decision(t, K.FOUL, f"{shooter} knocked {opponent}'s ball into the Astrolabe: "
                                          f"foul, {opponent} takes the turn", player=shooter, rule="SCB-5.7",
                                          cause=cause, data=(("foul", "knocked_in"),)))
            grouped = rnd.grouped[shooter] > old_grouped[shooter]
            if movement is not None and movement[0] == shooter:
                outcome = "foul"
            elif gain > 0:
                outcome = "scored"
            elif grouped:
                outcome = "grouped"
            elif new_out[shooter] and not landed[shooter]:
                outcome = "gutter"
            else:
                outcome = "failed"
            decisions += self._ball_moves(t, cause, new_out, hand_before, left)
        shot_line = Decision(t, K.SHOT, f"shot {shot.number} by {shooter}: {outcome}", player=shooter,
                             rule={"void": "SCB-3.5", "grouped": "SCB-5.4", "gutter": "SCB-5.1",
                                   "scored": "SCB-3.2", "failed": "SCB-3.4", "foul": "SCB-5.6"}[outcome],
                             cause=cause, data=(("shot", shot.number), ("outcome", outcome)))
        out = [shot_line] + scores + decisions + self._fix_counts(event)
        out += self._after_shot(t, cause, shot, outcome, foul, grouped, scores, old_board)
        if missed:  # the shot is read with a missed event, or could not be: every call of it is for review
            return missed + [replace(d, flagged=True) for d in out]
        return out

    def _hidden_not_gone(self, player: str, shooter: bool, old_grouped: Counter, landed: set[Slot], left: set[Slot],
                         new_out: Counter) -> set[Slot]:
        """SCB-11.3: `player`'s balls arrived in slots they were read gone from, with no lift seen, more than there
        were balls in play to come from (the dark glass marble of starcluster_v3, lost in its dark slot for one
        reading, then back: read as knocked in by the opponent, a foul and +2). They were hidden, not gone, the
        reading needing the fewest missed events: taken out of `landed` (they stay on the board). Returns them."""
        rnd = self._round
        arrivals = len(landed) + max(0, rnd.grouped[player] - old_grouped[player]) + new_out[player]
        supply = len(left) + max(0, old_grouped[player] - rnd.grouped[player]) + int(shooter)
        back = sorted(slot for slot in landed if rnd.vanished.get(slot) == player)[:max(0, arrivals - supply)]
        for slot in back:
            landed.discard(slot)
            del rnd.vanished[slot]
        return set(back)

    def _note_vanished(self, left: dict[str, set[Slot]]) -> None:
        """Remember the slots a live ball was read leaving (a removed ball is off the engine's board already), and
        forget those a ball now fills."""
        rnd = self._round
        for slot in [s for s in rnd.vanished if s in rnd.board]:
            del rnd.vanished[slot]
        for player, slots in left.items():
            rnd.vanished.update(dict.fromkeys(slots, player))

    def _removed_knocked_on(self, t: float, cause: str, player: str, shooter: bool,
                            removed_in_slots: dict[Slot, str], old_grouped: Counter,
                            landed: set[Slot], left: set[Slot], new_out: Counter) -> Decision | None:
        """SCB-11.3: balls of `player` that arrived with no ball in play to come from are removed balls knocked on.

        A ball reaches a slot, the grouped area or a gutter only as the shot ball (the shooter's one) or from
        another place on the board. When more of `player`'s balls arrived than that allows, and removed balls
        not lifted yet left their slots (`removed_in_slots`, before the shot) in this shot, the table is explained
        by those removed balls knocked on (one missed event each), not by a ball from nowhere: they stay
        removed and never score. If which arrivals they are can be chosen in more than one way, nothing is
        guessed (the table is read as before) and the umpire is told the possible readings. Removed grouped
        balls are not counted: they look like the live grouped balls, which could as well have moved. Applies
        the reading to the round; the decision to announce, or None when the table needs no missed event.
        """
        rnd = self._round
        removed_left = sum(1 for slot, o in removed_in_slots.items() if o == player and slot not in rnd.pending_slots)
        slot_named = {f"P{pos}/slot {n}": (pos, n) for pos, n in landed}
        arrivals = (sorted(slot_named) + ["grouped"] * max(0, rnd.grouped[player] - old_grouped[player])
                    + ["a gutter"] * new_out[player])
        supply = len(left) + max(0, old_grouped[player] - rnd.grouped[player]) + int(shooter)
        knocked = min(len(arrivals) - supply, removed_left)
        if knocked <= 0:
            return None
        readings = sorted(set(combinations(arrivals, knocked)))
        if len(readings) > 1:
            texts = [f"removed {player} ball(s) knocked to {', '.join(r)}" for r in readings]
            return self._warn(t, f"{len(arrivals)} {player} ball(s) arrived with {supply} in play to come from: "
                              f"{knocked} must be removed balls knocked on, and the table fits "
                              f"{len(readings)} readings equally well (" + "; or ".join(texts)
                              + "): not guessed, the table is read as shown; check it", cause, "SCB-11.3",
                              player=player)
        for place in readings[0]:
            if place == "grouped":
                rnd.grouped[player] -= 1
                rnd.pending_grouped[player] += 1
            elif place == "a gutter":
                rnd.out[player] -= 1  # out already, as a removed ball
                new_out[player] -= 1
            else:
                slot = slot_named[place]
                landed.discard(slot)
                del rnd.board[slot]
                rnd.dead.discard(slot)
                rnd.pending_slots[slot] = player
        return self._warn(t, f"removed {player} ball(s) knocked on to {', '.join(readings[0])}: {len(arrivals)} "
                          f"{player} ball(s) arrived with {supply} in play to come from, so {knocked} must be "
                          "removed balls not lifted yet (the reading the table supports); they stay removed and "
                          "score nothing; check the table", cause, "SCB-11.3", player=player)

    def _void(self, t: float, shot: _Shot, void: Event, old_board: dict[Slot, str], old_grouped: Counter,
              old_out: Counter, old_dead: set[Slot], landed: dict[str, set[Slot]],
              new_out: Counter, hand_before: int) -> list[Decision]:
        """SCB-3.5/5.2: a void shot scores nothing and its ball is out for the round."""
        rnd = self._round
        shooter = shot.shooter
        new_board = dict(rnd.board)
        shot_slot = min(landed[shooter]) if landed[shooter] else None
        grouped_up = rnd.grouped[shooter] > old_grouped[shooter]
        restore: list[str] = []
        if self.config.void_shot_displaced == "restore":
            restore = [f"{o} to P{s[0]}/slot {s[1]}" for s, o in sorted(old_board.items()) if new_board.get(s) != o]
            rnd.board, rnd.dead = dict(old_board), set(old_dead)
            rnd.grouped, rnd.out = Counter(old_grouped), Counter(old_out)
            rnd.out[shooter] += 1
            if shot_slot is not None:
                rnd.pending_slots[shot_slot] = shooter
            elif grouped_up:
                rnd.pending_grouped[shooter] += 1
            lift = [f"{o} from P{s[0]}/slot {s[1]}" for s, o in sorted(new_board.items())
                    if old_board.get(s) != o and s != shot_slot]
            if lift:
                restore.append("lift " + ", ".join(lift))
        else:
            if shot_slot is not None:
                self._remove_slot(shot_slot)
            elif grouped_up:
                rnd.grouped[shooter] -= 1
                rnd.pending_grouped[shooter] += 1
                rnd.out[shooter] += 1
            elif not new_out[shooter] and self._hand(shooter) > hand_before:
                rnd.out[shooter] += 1
            for p in self._players:  # balls that landed in a void shot stay but never score
                rnd.dead.update(s for s in landed[p] if s in rnd.board)
        where = (f"P{shot_slot[0]}/slot {shot_slot[1]}" if shot_slot else "grouped" if grouped_up
                 else "gutter" if new_out[shooter] else "play area")
        what = "Play Line crossed" if isinstance(void, PlayLineCrossing) else f"umpire: {getattr(void, 'foul', '')}"
        confidence = getattr(void, "confidence", 1.0)
        out = [Decision(t, K.FOUL, f"{what}: shot {shot.number} by {shooter} is void, turn ends", player=shooter,
                        rule="SCB-3.5", cause=void.id, confidence=confidence, flagged=self._flag(confidence),
                        data=(("foul", "void_shot"), ("displaced", self.config.void_shot_displaced),
                              ("restore", restore))),
               Decision(t, K.BALL_REMOVED, f"{shooter}'s foul ball ({where}) is removed for the round",
                        player=shooter, rule="SCB-5.2", cause=void.id)]
        return out

    def _discard_returned(self, t: float, cause: str, hand_before: dict[str, int]) -> list[Decision]:
        """SCB-7.2: in a Final Sequence, balls returned to either player are out."""
        out = []
        for p in self._players:
            returned = self._hand(p) - hand_before[p]
            if returned > 0:
                self._round.out[p] += returned
                out.append(Decision(t, K.BALL_REMOVED, f"{p}: {returned} returned ball(s) discarded (Final Sequence)",
                                    player=p, rule="SCB-7.2", cause=cause, data=(("count", returned),)))
        return out

    def _blocking(self, t: float, cause: str, shooter: str, landed: set[Slot]) -> list[Decision]:
        """SCB-10.2: a ball flanked by two balls of the other colour in one position is removed.

        With blocking_needs_this_shot only the shooter's new flanks count; otherwise any sandwich on the
        board after the shot does, whoever completed it.
        """
        rnd = self._round
        needs_shot = self.config.optional_rules.blocking_needs_this_shot
        out = []
        for (pos, s), owner in sorted(rnd.board.items()):
            if (pos, s) not in rnd.board or (needs_shot and owner == shooter):
                continue
            sides = {(pos, s - 1), (pos, s + 1)}
            flank = {rnd.board.get(x) for x in sides}
            if len(flank) == 1 and None not in flank and owner not in flank and (not needs_shot or sides & landed):
                self._remove_slot((pos, s))
                out.append(Decision(t, K.BALL_REMOVED, f"blocking: {owner}'s ball at P{pos}/slot {s} is removed for "
                                    "the round", player=owner, rule="SCB-10.2", cause=cause,
                                    data=(("lift", f"P{pos}/slot {s}"),)))
        return out

    def _ball_moves(self, t: float, cause: str, new_out: Counter, hand_before: dict[str, int],
                    left: dict[str, set[Slot]]) -> list[Decision]:
        out = []
        for p in self._players:
            if new_out[p]:
                out.append(Decision(t, K.BALL_REMOVED, f"{p}: {new_out[p]} ball(s) in the gutter or off the table, "
                                    "out for the round", player=p, rule="SCB-5.1", cause=cause,
                                    data=(("count", new_out[p]),)))
            back = self._hand(p) - hand_before[p]
            if back > 0 and self._round.final_sequence is None:
                from_slots = f" ({len(left[p])} knocked out of a slot)" if left[p] else ""
                out.append(Decision(t, K.BALL_RETURNED, f"{p}: {back} ball(s) back in hand{from_slots}", player=p,
                                    rule="SCB-5.5" if from_slots or back > 1 else "SCB-5.3", cause=cause,
                                    data=(("count", back),)))
        return out

    # ------------------------------------------------------------------ turn flow

    def _pass_turn(self, t: float, player: str, cause: str, rule: str) -> list[Decision]:
        nxt = self._other(player)
        self._to_play = nxt
        return [Decision(t, K.TURN, f"{nxt} to play", player=nxt, rule=rule, cause=cause)]

    def _after_shot(self, t: float, cause: str, shot: _Shot, outcome: str, foul: bool, grouped: bool,
                    scores: list[Decision], old_board: dict[Slot, str]) -> list[Decision]:
        cfg = self.config
        rnd = self._round
        shooter = shot.shooter
        totals = self._totals()
        for score in scores:  # the first to reach the target / to score in a tie-break wins at once
            scorer = score.player or ""
            if cfg.target_score is not None and totals[scorer] >= cfg.target_score and score.points > 0:
                return self._end_game(t, (scorer,), cause, f"reached the target of {cfg.target_score}")
            if rnd.tiebreak and score.points > 0:
                return self._end_game(t, (scorer,), cause, "first to score in the tie-break")
        out: list[Decision] = []
        if cfg.optional_rules.grand_slam_finish:
            before = {p: set(scoring.grand_slams(cfg, {s for s, o in old_board.items() if o == p}))
                      for p in self._players}
            for p in self._players:
                new = sorted(set(scoring.grand_slams(cfg, self._live(p))) - before[p])
                if new:
                    return self._end_round(t, cause, f"Grand Slam Finish: {p} filled Position {new[0]}")
        if rnd.final_sequence is not None:
            if foul:
                rnd.final_foul = True
                return self._end_round(t, cause, "foul in the Final Sequence")
            if self._hand(rnd.final_sequence) <= 0:
                return self._end_round(t, cause, "the Final Sequence has played every ball")
            return out
        keep = outcome == "scored" and not foul and not (grouped and cfg.grouping_ends_turn == "always")
        if not keep and not foul and self._free_shots[shooter] > 0:
            self._free_shots[shooter] -= 1
            keep = True
            out.append(Decision(t, K.PHASE, f"{shooter} used the free shot and plays on", player=shooter,
                                rule="SCB-8.1", cause=cause, data=(("phase", "free_shot_used"),)))
        if not keep:
            out += self._pass_turn(t, shooter, cause, "SCB-5.7" if foul else "SCB-3.4")
        return out + self._check_out_of_balls(t, cause)

    def _check_out_of_balls(self, t: float, cause: str) -> list[Decision]:
        """SCB-6.1: a player to play with no ball in hand ends their turn; the opponent chooses."""
        rnd = self._round
        if self._complete or rnd.start is None or rnd.final_sequence is not None or self._awaiting is not None:
            return []
        player = self._to_play
        assert player is not None
        if self._hand(player) > 0:
            return []
        chooser = self._other(player)
        if self._hand(chooser) <= 0:
            return self._end_round(t, cause, "both players are out of balls")
        self._awaiting = chooser
        self._to_play = chooser
        return [Decision(t, K.CHOICE_REQUIRED, f"{player} has no balls left: {chooser} chooses to bank "
                         f"{self._hand(chooser)} point(s) or play a Final Sequence", player=chooser, rule="SCB-6.1",
                         cause=cause, data=(("choices", ["bank", "final_sequence"]), ("in_hand", self._hand(chooser))))]

    def _choice(self, event: OutOfBallsChoice) -> list[Decision]:
        player = event.player  # the awaited chooser (see _choice_refusal)
        if event.choice == "bank":
            self._awaiting = None
            hand = self._hand(player)
            self._round.banked = player
            out = [self._score(event.t, player, hand, (ScoreItem("banked balls in hand", hand),),
                               f"banks {hand} ball(s) in hand", "SCB-6.2", event.id)]
            if self._round.tiebreak and hand > 0:
                return out + self._end_game(event.t, (player,), event.id, "first to score in the tie-break")
            target = self.config.target_score
            if target is not None and self._totals()[player] >= target and hand > 0:
                return out + self._end_game(event.t, (player,), event.id, f"reached the target of {target}")
            return out + self._end_round(event.t, event.id, f"{player} banked")
        return self._start_final_sequence(event.t, player, event.id)

    def _start_final_sequence(self, t: float, player: str, cause: str) -> list[Decision]:
        self._awaiting = None
        self._round.final_sequence = player
        self._to_play = player
        return [Decision(t, K.PHASE, f"Final Sequence: {player} plays each of {self._hand(player)} ball(s) once",
                         player=player, rule="SCB-7.1", cause=cause, data=(("phase", "final_sequence"),)),
                Decision(t, K.TURN, f"{player} to play (Final Sequence)", player=player, rule="SCB-7.1", cause=cause)]

    def _status(self) -> str:
        if self._complete:
            return "match over: " + " and ".join(self._match_winners) + (" win" if len(self._match_winners) > 1
                                                                          else " wins")
        if not self._players:
            return "waiting for game_start"
        rnd = self._round
        name = f"game {self._game.number}, {'tie-break ' if rnd.tiebreak else ''}round {rnd.number}"
        if self._awaiting is not None:
            return f"{name}, waiting for {self._awaiting}'s choice: bank or Final Sequence"
        if rnd.start is None:
            return f"{name} not started, {self._to_play} to play"
        left = max(0.0, rnd.start + rnd.length + rnd.pauses.stood_still(self._now) - self._now)
        clock = f", {int(left // 60):02d}:{int(left % 60):02d} left" if self.config.clock == "events" else ""
        if rnd.pauses.paused_at is not None:
            clock += f", paused since {rnd.pauses.paused_at:.0f}s"
        if rnd.final_sequence is not None:
            return f"{name}{clock}, Final Sequence: {rnd.final_sequence}, {self._hand(rnd.final_sequence)} ball(s) left"
        return f"{name}{clock}, {self._to_play} to play"


def _sides(event: GameStart) -> list[str]:
    """SCB-1.1 reading: with no side given the first player is right; one side given, the other is the other."""
    given = [p.side for p in event.players]
    if given[0] is None and given[1] is None:
        return ["right", "left"]
    known = given[0] or given[1]
    return [s or ("left" if known == "right" else "right") for s in given]


def _slot_names(slots: set[Slot]) -> str:
    return ", ".join(f"P{position}/slot {number}" for position, number in sorted(slots))
