"""What every rules engine offers, and the live standings it reports.

An engine is fed events one at a time, in log order, and answers with the
decisions each one causes. It never looks at pixels and never reads a clock:
time comes only from the events, so replaying a log always gives the same
decisions. `check(event)` tells, without changing anything, whether `feed`
would refuse an event and why; `state()` is a read-only view of the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Protocol, runtime_checkable

from .decisions import Decision, DecisionKind
from .events import Event, RoundPause, RoundResume


@dataclass(frozen=True)
class RoundScore:
    number: int  # 1-based; tie-break rounds continue the count
    scores: Mapping[str, int]  # player id -> points scored in this round
    tiebreak: bool = False
    complete: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, "scores": dict(self.scores), "tiebreak": self.tiebreak,
                "complete": self.complete}


@dataclass(frozen=True)
class GameScore:
    number: int
    rounds: tuple[RoundScore, ...]
    totals: Mapping[str, int]
    winners: tuple[str, ...] = ()  # more than one: a shared victory
    complete: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, "rounds": [r.to_json() for r in self.rounds],
                "totals": dict(self.totals), "winners": list(self.winners), "complete": self.complete}


@dataclass(frozen=True)
class Standings:
    """The live score: every game so far, match wins, and what happens next."""

    players: tuple[str, ...]
    games: tuple[GameScore, ...]
    match_wins: Mapping[str, int]
    winners: tuple[str, ...] = ()  # of the whole match (or the single game)
    complete: bool = False
    to_play: str | None = None  # whose turn it is now
    status: str = ""  # one line: round, phase, what the engine waits for

    def to_json(self) -> dict[str, Any]:
        return {"players": list(self.players), "games": [g.to_json() for g in self.games],
                "match_wins": dict(self.match_wins), "winners": list(self.winners),
                "complete": self.complete, "to_play": self.to_play, "status": self.status}


@dataclass(frozen=True)
class PendingChoice:
    """A choice the engine waits for before play goes on (Star Cluster Ball: bank or Final Sequence)."""

    player: str  # who must choose
    options: tuple[str, ...]  # the `choice` values an out_of_balls_choice may give
    reason: str  # why the choice is asked, e.g. "red has no balls left"


@runtime_checkable
class EngineState(Protocol):
    """What every engine's `state()` tells, read-only. Each game adds its own fields (see the engines).

    The round clock (Star Cluster Ball; Piratenbillard has one round and no clock): `round_started_at` is
    when the current round's clock started (its round_start or first shot; None: not yet),
    `round_ended_at` when the current round got its result while no new round followed (the match ended;
    None while it runs), `round_length_s` its length (None: no round or no clock), `clock_counts_down`
    whether the engine ends rounds when the clock runs out, `round_paused_at` when the umpire stopped the
    clock (None: it runs) and `round_paused_s` how long it stood still in earlier pauses of the round.
    """

    @property
    def players(self) -> tuple[str, ...]: ...
    @property
    def to_play(self) -> str | None: ...  # as Standings.to_play: None before game_start and once complete
    @property
    def balls_to_play(self) -> Mapping[str, int]: ...  # per player: balls they can still play
    @property
    def pending_choice(self) -> PendingChoice | None: ...
    @property
    def round_number(self) -> int | None: ...
    @property
    def round_tiebreak(self) -> bool: ...
    @property
    def round_started_at(self) -> float | None: ...
    @property
    def round_ended_at(self) -> float | None: ...
    @property
    def round_length_s(self) -> float | None: ...
    @property
    def clock_counts_down(self) -> bool: ...
    @property
    def round_paused_at(self) -> float | None: ...
    @property
    def round_paused_s(self) -> float: ...
    @property
    def shot_in_progress(self) -> bool: ...
    @property
    def complete(self) -> bool: ...


@dataclass(frozen=True)
class RoundClock:
    """A round's clock as an engine's state tells it, to be read at any time (a scoreboard ticking between
    events): time left when it counts down, time played otherwise; the umpire's pauses do not count."""

    started_at: float | None
    ended_at: float | None
    length_s: float
    counts_down: bool
    paused_at: float | None = None
    paused_s: float = 0.0

    @classmethod
    def of(cls, state: EngineState) -> RoundClock | None:
        """The current round's clock; None when the game has no round clock."""
        if state.round_length_s is None:
            return None
        return cls(state.round_started_at, state.round_ended_at, state.round_length_s, state.clock_counts_down,
                   state.round_paused_at, state.round_paused_s)

    def at(self, t: float) -> float:
        played = 0.0
        if self.started_at is not None:
            now = t if self.ended_at is None else min(t, self.ended_at)
            stood = self.paused_s + (max(0.0, now - self.paused_at) if self.paused_at is not None else 0.0)
            played = max(0.0, now - self.started_at - stood)
        return max(0.0, self.length_s - played) if self.counts_down else played


@dataclass
class Pauses:
    """The umpire's pauses of one round (an engine's working memory): the round clock stands still from
    round_pause to round_resume. Play seen meanwhile is still refereed; only the clock waits."""

    paused_at: float | None = None  # when the running pause began; None: the clock runs
    paused_s: float = 0.0  # how long earlier pauses of the round lasted

    def refusal(self, event: Event, running: bool) -> str | None:
        """Why `event` (a round_pause or round_resume) cannot be applied now; `running`: a round is under way."""
        if isinstance(event, RoundPause):
            if not running:
                return f"event {event.id}: round_pause while no round is running; start the round first"
            if self.paused_at is not None:
                return f"event {event.id}: round_pause while the round is paused already (since {self.paused_at:g}s)"
        if isinstance(event, RoundResume) and self.paused_at is None:
            return f"event {event.id}: round_resume while the round is not paused; pause it first"
        return None

    def apply(self, event: RoundPause | RoundResume, round_name: str) -> Decision:
        """Stop or restart the clock; the call says so, with who and why."""
        who = f" by {event.by}" if event.by else ""
        why = f": {event.reason}" if event.reason else ""
        if isinstance(event, RoundPause):
            self.paused_at = event.t
            return Decision(event.t, DecisionKind.PHASE, f"{round_name} paused{who}{why}", cause=event.id,
                            data=(("phase", "paused"),))
        assert self.paused_at is not None  # refusal() said so
        stood = event.t - self.paused_at
        self.paused_s += stood
        self.paused_at = None
        return Decision(event.t, DecisionKind.PHASE, f"{round_name} resumed{who} after {stood:.0f}s{why}",
                        cause=event.id, data=(("phase", "resumed"), ("paused_s", round(stood, 3))))

    def stood_still(self, t: float) -> float:
        """Seconds the clock has stood still by time `t` (the running pause included)."""
        return self.paused_s + (max(0.0, t - self.paused_at) if self.paused_at is not None else 0.0)


class RulesEngine(Protocol):
    game: str  # "starcluster" | "piratenbillard"

    def check(self, event: Event) -> str | None:
        """Why `feed(event)` would refuse the event (the InputError message it would raise), or None when it
        would be accepted. Never changes the engine."""

    def feed(self, event: Event) -> list[Decision]:
        """Apply one event (log order) and return the decisions it causes.

        Raises InputError with `check(event)`'s reason, before touching any state, when the event is refused:
        a refused event changes nothing."""

    def state(self) -> EngineState:
        """The engine's state now, as an immutable value."""

    def close(self, t: float) -> list[Decision]:
        """The log has ended at time `t`: finish what the rules finish (clock, results)."""

    def standings(self) -> Standings:
        """The score as it stands now."""

    @property
    def balls_per_player(self) -> int:
        """How many balls each player plays with (the rules config's): vision never looks for more in one place."""
