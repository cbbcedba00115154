"""The Piratenbillard rules engine: from strikes and table snapshots to captures and a winner.

The engine keeps its own board (which balls lie on which space) and, for each
strike, diffs the settled table against it to find where the struck ball
went. The landing space alone decides the call (docs/rules.md,
PB-4): out, secured, given to a neighbour, a capture, a stack or a plain move.
Balls the call takes off the board are announced as LIFT decisions and leave
the engine's board at once, so the next snapshot is checked against the table
the players should have after lifting them. A ball shown on a called lift's space
is read as the table supports with the fewest missed events (PB-7.5): the
called ball not lifted yet, or a new arrival after a lift nobody saw.

`check(event)` says why `feed` would refuse an event (None: it would be accepted); `feed` asks it first and
raises InputError before touching anything, so a refused event changes nothing. `state()` is the engine's
state as an immutable PiratenbillardState.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import product
from types import MappingProxyType
from typing import Any, Mapping

from ..decisions import Decision, DecisionKind, ScoreItem
from ..engine import GameScore, Pauses, PendingChoice, RoundScore, Standings
from ..errors import InputError
from ..events import (
    BallLifted,
    BallPlaced,
    Confirm,
    Event,
    GameStart,
    Location,
    OutOfBallsChoice,
    Place,
    PlayLineCrossing,
    RoundEnd,
    RoundPause,
    RoundResume,
    RoundStart,
    ShotStarted,
    TableMovement,
    TableSettled,
    UmpireFoul,
)
from .board import SEAT_NAMES, Cell, cell_name, is_cell, neighbours, opposite, row_seat, starting_row
from .config import PiratenbillardConfig

Key = tuple[Cell, str]  # (space, owner)


@dataclass(frozen=True, order=True)
class Lift:
    """Balls the players must take off the board: `count` of `owner`'s at `cell`, to `to`'s treasure."""

    cell: Cell
    owner: str
    count: int
    to: str

    def text(self) -> str:
        return f"{self.count} {self.owner} at {cell_name(self.cell)} to {self.to}'s treasure"


@dataclass(frozen=True)
class PiratenbillardState:
    """The engine's state at one moment, read-only (`PiratenbillardEngine.state()`; rules.engine.EngineState).

    The game is one round (number 1) with no clock: it starts with the first strike (or a round_start) and
    ends with the game result.
    """

    players: tuple[str, ...]
    to_play: str | None  # None before game_start and once the game is over
    balls_to_play: Mapping[str, int]  # each player's balls still on the board
    pending_choice: PendingChoice | None  # always None: Piratenbillard asks no choice
    round_number: int | None  # 1 once the game started
    round_tiebreak: bool  # always False
    round_started_at: float | None  # the first shot_started or round_start after game_start
    round_ended_at: float | None  # the game result
    round_length_s: float | None  # always None: no round clock
    clock_counts_down: bool  # always False
    round_paused_at: float | None  # the umpire paused play then (round_pause); None: play goes on
    round_paused_s: float  # how long earlier pauses lasted
    shot_in_progress: bool  # a shot_started waits for its table_settled
    complete: bool
    seats: Mapping[str, int]  # 0 south, 1 west, 2 north, 3 east
    shooter: str | None  # whose strike is in progress
    board: Mapping[tuple[Cell, str], int]  # (cell, owner) -> balls the engine believes lie there
    points: Mapping[str, int]  # treasure points
    treasure_balls: Mapping[str, int]
    out_of_game: Mapping[str, int]  # balls that left the board (back in the box)
    pending_lifts: tuple[Lift, ...]  # called lifts not yet confirmed by a ball_lifted
    must_play: tuple[Cell, ...]  # PB-5.3: stacked pairs of the player to play
    winners: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "players": list(self.players), "to_play": self.to_play, "balls_to_play": dict(self.balls_to_play),
            "pending_choice": None, "round_number": self.round_number, "round_tiebreak": self.round_tiebreak,
            "round_started_at": self.round_started_at, "round_ended_at": self.round_ended_at,
            "round_length_s": self.round_length_s, "clock_counts_down": self.clock_counts_down,
            "round_paused_at": self.round_paused_at, "round_paused_s": self.round_paused_s,
            "shot_in_progress": self.shot_in_progress, "complete": self.complete, "seats": dict(self.seats),
            "shooter": self.shooter,
            "board": [{"cell": list(cell), "owner": owner, "count": n} for (cell, owner), n in self.board.items()],
            "points": dict(self.points), "treasure_balls": dict(self.treasure_balls),
            "out_of_game": dict(self.out_of_game),
            "pending_lifts": [PiratenbillardEngine._lift_json(lift) for lift in self.pending_lifts],
            "must_play": [list(c) for c in self.must_play], "winners": list(self.winners),
        }


@dataclass(frozen=True)
class _Shot:
    event: ShotStarted
    player: str


class PiratenbillardEngine:
    game = "piratenbillard"

    def __init__(self, config: PiratenbillardConfig | None = None) -> None:
        self.config = config or PiratenbillardConfig()
        self._players: tuple[str, ...] = ()
        self._seat: dict[str, int] = {}
        self._at_seat: dict[int, str] = {}
        self._board: dict[Key, int] = {}
        self._points: dict[str, int] = {}
        self._treasure_balls: dict[str, int] = {}
        self._out: dict[str, int] = {}
        self._vanished: dict[Key, int] = {}  # balls taken off the board unstruck, where they were last read
        self._pending_lifts: list[Lift] = []
        self._shot: _Shot | None = None
        self._to_play: str | None = None
        self._started = False
        self._complete = False
        self._winners: tuple[str, ...] = ()
        self._started_at: float | None = None  # the single round: first strike (or round_start) ...
        self._ended_at: float | None = None  # ... to the game result
        self._pauses = Pauses()  # no clock to stop, but the scoreboard says play is paused
        # The event being fed: every decision names it and inherits its confidence.
        self._event: Event | None = None
        self._confidence = 1.0
        self._flag_all = False

    # ------------------------------------------------------------------ protocol

    def check(self, event: Event) -> str | None:
        """Why `feed(event)` would refuse `event` (its InputError message), or None; changes nothing."""
        return self._refusal(event)

    def feed(self, event: Event) -> list[Decision]:
        reason = self._refusal(event)
        if reason is not None:
            raise InputError(reason)  # before any change: a refused event leaves the engine as it was
        self._event, self._confidence, self._flag_all = event, 1.0, False
        if isinstance(event, Confirm):
            return []
        if isinstance(event, GameStart):
            return self._start(event)
        if self._started_at is None and not self._complete and isinstance(event, (ShotStarted, RoundStart)):
            self._started_at = event.t
        if isinstance(event, (RoundPause, RoundResume)):
            return [self._pauses.apply(event, "the game")]
        if self._complete:
            return self._after_end(event)
        if isinstance(event, ShotStarted):
            return self._shot_started(event)
        if isinstance(event, TableSettled):
            return self._settled(event)
        if isinstance(event, BallLifted):
            return self._ball_lifted(event)
        if isinstance(event, BallPlaced):
            return [self._warn(f"a {event.owner} ball was put on the board at {event.at} by hand; no rule puts a "
                               "ball back, check the table", "PB-7.2")]
        if isinstance(event, TableMovement):
            return [self._warn(f"the table moved ({event.magnitude_mm:.0f} mm); check that no ball changed space",
                               "PB-7.2")]
        if isinstance(event, UmpireFoul):
            return self._umpire_foul(event)
        return []  # play_line_crossing, round_start, round_end: no Play Line and no rounds in Piratenbillard

    def close(self, t: float) -> list[Decision]:
        if not self._started or self._complete:
            return []
        return [Decision(t=t, kind=DecisionKind.WARNING, cause=None,
                         summary=f"the log ends before the game does: {self._status()}")]

    @property
    def balls_per_player(self) -> int:
        return self.config.balls_per_player

    def standings(self) -> Standings:
        totals = {p: self._points[p] for p in self._players}
        games: tuple[GameScore, ...] = ()
        if self._started:
            rounds = (RoundScore(number=1, scores=dict(totals), complete=self._complete),)
            games = (GameScore(number=1, rounds=rounds, totals=totals, winners=self._winners,
                               complete=self._complete),)
        return Standings(
            players=self._players,
            games=games,
            match_wins={p: int(p in self._winners) for p in self._players},
            winners=self._winners,
            complete=self._complete,
            to_play=None if self._complete else self._to_play,
            status=self._status(),
        )

    def state(self) -> PiratenbillardState:
        players = self._players if self._started else ()
        to_play = None if self._complete else self._to_play
        must_play = tuple(sorted(cell for (cell, o), n in self._board.items() if o == to_play and n >= 2))
        return PiratenbillardState(
            players=players,
            to_play=to_play,
            balls_to_play=MappingProxyType({p: self._balls_of(p) for p in players}),
            pending_choice=None,
            round_number=1 if self._started else None,
            round_tiebreak=False,
            round_started_at=self._started_at,
            round_ended_at=self._ended_at,
            round_length_s=None,
            clock_counts_down=False,
            round_paused_at=self._pauses.paused_at,
            round_paused_s=self._pauses.paused_s,
            shot_in_progress=self._shot is not None,
            complete=self._complete,
            seats=MappingProxyType({p: self._seat[p] for p in players}),
            shooter=None if self._shot is None else self._shot.player,
            board=MappingProxyType(dict(sorted(self._board.items()))),
            points=MappingProxyType({p: self._points[p] for p in players}),
            treasure_balls=MappingProxyType({p: self._treasure_balls[p] for p in players}),
            out_of_game=MappingProxyType({p: self._out[p] for p in players}),
            pending_lifts=tuple(self._pending_lifts),
            must_play=must_play,
            winners=self._winners,
        )

    # ------------------------------------------------------------------ legality (what feed refuses)

    def _refusal(self, event: Event) -> str | None:
        """The first reason `event` cannot be applied, in the order feed meets them; None: it is accepted.

        Reads the engine only (Piratenbillard has no clock: time passing changes nothing).
        """
        if isinstance(event, Confirm):
            return None
        if isinstance(event, GameStart):
            if self._started:
                return (f"event {event.id}: a second game_start; a Piratenbillard log holds one game, "
                        "start a new log for the next game")
            return self._start_refusal(event)
        if not self._started:
            return (f"event {event.id}: {event.TYPE} before game_start; the log must begin with "
                    "game_start naming the players and their seats")
        if isinstance(event, OutOfBallsChoice):
            return (f"event {event.id}: out_of_balls_choice is a Star Cluster Ball input; "
                    "Piratenbillard has no such choice, remove it from the log")
        if isinstance(event, (RoundPause, RoundResume)):
            return self._pauses.refusal(event, running=self._started_at is not None and not self._complete)
        if self._complete:  # PB-7.3
            if self.config.after_end == "error":
                return (f"event {event.id}: {event.TYPE} after the game ended ({self._status()}); "
                        "cut the log at the end of the game or set after_end to 'warn'")
            return None
        if isinstance(event, ShotStarted):
            if event.player is not None and (reason := self._not_a_player(event.player, event, "shooter")):
                return reason
            if event.ball_from is not None:
                return self._not_a_cell(event.ball_from, event, "ball_from")
            return None
        if isinstance(event, TableSettled):
            return self._snapshot_refusal(event)
        if isinstance(event, BallLifted):
            if reason := self._not_a_player(event.owner, event, "ball owner"):
                return reason
            return self._not_a_cell(event.at, event, "at") if event.at.place is Place.CELL else None
        if isinstance(event, BallPlaced):
            return self._not_a_player(event.owner, event, "ball owner")
        if isinstance(event, UmpireFoul):
            return self._not_a_player(event.player, event, "fouling player")
        if isinstance(event, (TableMovement, PlayLineCrossing, RoundStart, RoundEnd)):
            return None
        return f"event {event.id}: {event.TYPE} is not a Piratenbillard event"

    def _start_refusal(self, event: GameStart) -> str | None:
        specs = event.players
        if not 2 <= len(specs) <= 4:
            return f"event {event.id}: Piratenbillard is played by 2, 3 or 4 players, got {len(specs)}"
        given = [p.seat for p in specs]
        if any(s is None for s in given) and not all(s is None for s in given):
            return (f"event {event.id}: give every player a seat (0 south, 1 west, 2 north, 3 east) "
                    "or none of them")
        seats = _seats(event)
        if len(set(seats)) != len(seats):
            return f"event {event.id}: two players share a seat ({seats}); each side has one player"
        if len(specs) == 2 and opposite(seats[0]) != seats[1]:
            return (f"event {event.id}: with 2 players the seats must be opposite (0 and 2, or 1 and 3), "
                    f"got {seats[0]} and {seats[1]}")
        first_seat = self.config.first_seat if self.config.first_seat is not None else seats[0]
        if first_seat not in seats:
            return (f"event {event.id}: config 'first_seat' is {first_seat} ({SEAT_NAMES[first_seat]}), "
                    f"but nobody sits there (seats: {sorted(seats)})")
        return None

    def _snapshot_refusal(self, event: TableSettled) -> str | None:
        """A snapshot that cannot be this board (balls in snapshot order, as _read reads them)."""
        per_owner: dict[str, int] = {}
        for ball in event.snapshot.balls:
            if reason := self._not_a_player(ball.owner, event, "ball owner"):
                return reason
            if ball.at.place is Place.OFF_TABLE:
                continue
            if reason := self._not_a_cell(ball.at, event, "ball"):
                return reason
            per_owner[ball.owner] = per_owner.get(ball.owner, 0) + 1
        for owner in self._players:
            if per_owner.get(owner, 0) > self.config.balls_per_player:
                return (f"event {event.id}: the snapshot shows {per_owner[owner]} {owner} balls on "
                        f"the board, but a player has {self.config.balls_per_player}; fix the snapshot")
        return None

    def _not_a_player(self, name: str, event: Event, what: str) -> str | None:
        if name in self._seat:
            return None
        return (f"event {event.id}: {what} {name!r} is not a player (players: "
                f"{', '.join(self._players)}); fix the colour in the log or add the player to game_start")

    @staticmethod
    def _not_a_cell(at: Location | None, event: Event, what: str) -> str | None:
        if at is None or at.place is not Place.CELL:
            return (f"event {event.id}: {what} at {at} is not a board space; Piratenbillard "
                    "places are 'cell' (row, col) or 'off_table'")
        if not is_cell((at.row, at.col)):  # type: ignore[arg-type]
            return (f"event {event.id}: {what} at {at} is not one of the 96 spaces (rows and "
                    "columns 0..9, no corners); fix the calibration or the log")
        return None

    # ------------------------------------------------------------------ setup

    def _start(self, event: GameStart) -> list[Decision]:
        """An accepted game_start (see _start_refusal)."""
        specs = event.players
        seats = _seats(event)
        self._players = tuple(p.id for p in specs)
        self._seat = {p.id: s for p, s in zip(specs, seats)}
        self._at_seat = {s: p for p, s in self._seat.items()}
        first_seat = self.config.first_seat if self.config.first_seat is not None else seats[0]
        for player in self._players:
            for cell in starting_row(self._seat[player])[: self.config.balls_per_player]:
                self._board[(cell, player)] = 1
            self._points[player] = self._treasure_balls[player] = self._out[player] = 0
        self._started = True
        self._to_play = self._at_seat[first_seat]
        where = ", ".join(f"{p} {SEAT_NAMES[self._seat[p]]}" for p in self._players)
        return [self._decision(DecisionKind.TURN, f"{self._to_play} to play ({where})", player=self._to_play,
                               rule="PB-2.1")]

    # ------------------------------------------------------------------ observations

    def _shot_started(self, event: ShotStarted) -> list[Decision]:
        out: list[Decision] = []
        if self._shot is not None:
            out.append(self._warn(f"shot {self._shot.event.id} never settled (no table_settled before "
                                  f"{event.id}); only the new shot is scored", "PB-7.2"))
        player = self._to_play if event.player is None else event.player
        assert player is not None
        if player != self._to_play:
            out.append(self._warn(f"{player} strikes but {self._to_play} is to play; following the log", "PB-2.2"))
        if event.ball_from is not None:
            cell = self._cell(event.ball_from)
            if self._board.get((cell, player), 0) == 0:
                out.append(self._warn(f"{player} strikes from {cell_name(cell)}, but no {player} ball lies "
                                      "there on the engine's board; the table snapshot decides", "PB-3.1"))
        self._shot = _Shot(event, player)
        return out

    def _settled(self, event: TableSettled) -> list[Decision]:
        seen = self._read(event)
        self._confidence = min([event.confidence] + [b.confidence for b in event.snapshot.balls])
        self._flag_all = self._confidence < self.config.min_confidence
        out: list[Decision] = []
        if self._flag_all:
            out.append(self._warn(f"low-confidence snapshot ({self._confidence:.2f}); check the table", "PB-7.2"))
        shot, self._shot = self._shot, None
        delta = {k: seen.get(k, 0) - self._board.get(k, 0) for k in sorted(set(seen) | set(self._board))}
        out.extend(self._unlifted(delta))
        shooter = shot.player if shot is not None else self._to_play
        assert shooter is not None
        moved = any(d for (_, owner), d in delta.items() if owner == shooter)
        if shot is None and moved:
            out.append(self._warn(f"{shooter}'s balls moved without a shot_started; taken as {shooter}'s strike",
                                  "PB-7.2"))
        out.extend(self._others_moved(delta, shooter))
        if shot is not None and not moved and self._to_play is not None and shooter != self._to_play:
            # the log is followed for a strike out of turn that moved balls (PB-2.2); one that left the table as it
            # was gives the striker no repeat (PB-3.2 is the repeat of the player to play) and takes no turn
            out.append(self._warn(f"{shooter}'s strike out of turn left every ball where it lay; "
                                  f"{self._to_play} is still to play", "PB-2.2"))
            return out
        if shot is not None and not moved:
            self._to_play = shooter
            where = f" at {cell_name(self._cell(shot.event.ball_from))}" if shot.event.ball_from else ""
            out.append(self._decision(DecisionKind.SHOT, f"{shooter}'s ball{where} did not leave its space",
                                      player=shooter, rule="PB-3.2", data=(("outcome", "stayed"),)))
            out.append(self._decision(DecisionKind.PHASE, f"repeat strike: {shooter} strikes again", player=shooter,
                                      rule="PB-3.2", data=(("phase", "repeat_strike"),)))
            return out
        if moved:
            out.extend(self._strike(shooter, delta, shot))
        elif self._to_play is not None and not self._balls_of(self._to_play):
            out.extend(self._next_turn(self._to_play))  # the verification removed the last balls of the player
        return out

    def _ball_lifted(self, event: BallLifted) -> list[Decision]:
        if event.at.place is not Place.CELL:
            return []  # off the board already (out, or back in the box)
        cell = self._cell(event.at)
        for i, lift in enumerate(self._pending_lifts):
            if lift.cell == cell and lift.owner == event.owner:
                if lift.count == 1:
                    del self._pending_lifts[i]
                else:
                    self._pending_lifts[i] = replace(lift, count=lift.count - 1)
                return []
        return [self._warn(f"a {event.owner} ball was lifted from {cell_name(cell)} but no lift was called there; "
                           "put it back", "PB-7.1")]

    def _umpire_foul(self, event: UmpireFoul) -> list[Decision]:
        player = event.player
        extra = " (no free shot: Piratenbillard has none)" if event.free_shot else ""
        return [self._decision(DecisionKind.FOUL, f"umpire: {event.foul.replace('_', ' ')} by {player}; the "
                               f"Piratenbillard rulebook sets no penalty, recorded only{extra}", player=player,
                               rule="PB-7.4", data=(("foul", event.foul), ("penalty", "none")))]

    def _after_end(self, event: Event) -> list[Decision]:
        """after_end "warn" (with "error" the event is refused)."""
        return [self._warn(f"{event.TYPE} after the game ended: ignored", "PB-7.3")]

    # ------------------------------------------------------------------ the table diff

    def _read(self, event: TableSettled) -> dict[Key, int]:
        """Count the snapshot's balls per (cell, owner) (a valid snapshot: see _snapshot_refusal)."""
        seen: dict[Key, int] = {}
        for ball in event.snapshot.balls:
            if ball.at.place is Place.OFF_TABLE:
                continue
            cell = self._cell(ball.at)
            seen[(cell, ball.owner)] = seen.get((cell, ball.owner), 0) + 1
        return seen

    def _unlifted(self, delta: dict[Key, int]) -> list[Decision]:
        """Balls called off the board that the table may still show: warn, never score them again (PB-7.1).

        A ball seen on a called lift's space is either the called ball, not lifted yet, or a ball that arrived
        there after a lift nobody saw. Per colour, the table decides (PB-7.5, `_not_lifted`): the reading with
        the fewest departures from the board is applied and flagged; a tie keeps them all as not lifted.
        """
        shown: dict[Key, int] = {}  # balls on a called lift's space that may be the called ones
        for key in sorted({(lift.cell, lift.owner) for lift in self._pending_lifts}):
            called = sum(lift.count for lift in self._pending_lifts if (lift.cell, lift.owner) == key)
            if (visible := min(called, max(delta.get(key, 0), 0))) > 0:
                shown[key] = visible
        out: list[Decision] = []
        not_lifted: dict[Key, int] = {}
        for owner in self._players:
            mine = {key: n for key, n in shown.items() if key[1] == owner}
            if mine:
                chosen, notes = self._not_lifted(owner, mine, delta)
                not_lifted.update(chosen)
                out.extend(notes)
                self._flag_all = self._flag_all or bool(notes)  # the settle rests on a reading to check
        still: list[Lift] = []
        for lift in sorted(self._pending_lifts):
            key = (lift.cell, lift.owner)
            if (count := min(lift.count, not_lifted.get(key, 0))) > 0:
                not_lifted[key] -= count
                delta[key] -= count
                still.append(replace(lift, count=count))
        self._pending_lifts = still
        if not still:
            return out
        return [self._warn("not lifted yet: " + "; ".join(lift.text() for lift in still) + "; lift them",
                           "PB-7.1", data=(("lifts", [self._lift_json(lift) for lift in still]),))] + out

    def _not_lifted(self, owner: str, shown: dict[Key, int], delta: dict[Key, int]) -> tuple[dict[Key, int],
                                                                                           list[Decision]]:
        """How many of `owner`'s balls `shown` on called lift spaces are the called balls still lying there.

        PB-7.5: the engine's board is the table its calls leave (called balls lifted). Each ball read as not
        lifted is a departure from it, and so is each ball of the colour that left a space without the strike
        explaining it; a ball arriving on a space with no ball leaving one is not possible. The fewest
        departures: just enough balls not lifted that every arrival has a ball that left, i.e. arrivals minus
        balls gone (at least 0). When that count can be split between the spaces in more than one way, the
        table cannot tell which ball is which: nothing is guessed, all stay not lifted, and the umpire is told.
        """
        arrived = sum(d for (_, o), d in delta.items() if o == owner and d > 0)
        left = sum(-d for (_, o), d in delta.items() if o == owner and d < 0)
        total = sum(shown.values())
        needed = min(total, max(0, arrived - left))
        if needed == total:
            return dict(shown), []
        keys = sorted(shown)
        readings = [dict(zip(keys, split)) for split in product(*(range(shown[k] + 1) for k in keys))
                    if sum(split) == needed]
        if len(readings) == 1:
            (reading,) = readings
            arrivals = [key[0] for key in keys for _ in range(shown[key] - reading[key])]
            text = _reading_text(owner, shown, reading)
            return reading, [self._warn(
                f"{text}: the reading the table supports (taking the called ball{'s' if len(arrivals) > 1 else ''}"
                f" as still lying there needs {len(arrivals)} more missed event{'s' if len(arrivals) > 1 else ''}); "
                "check the table", "PB-7.5",
                data=(("explanation", "unseen_lift"), ("arrived", [list(c) for c in arrivals]),
                      ("readings", [text])))]
        texts = [_reading_text(owner, shown, reading) for reading in readings]
        return dict(shown), [self._warn(
            f"the {owner} balls on called lift spaces fit {len(readings)} readings equally well ("
            + "; or ".join(texts) + "): not guessed, all taken as not lifted yet; check the table", "PB-7.5",
            data=(("explanation", "ambiguous"), ("readings", texts)))]

    def _others_moved(self, delta: dict[Key, int], shooter: str) -> list[Decision]:
        """Changes to balls nobody struck: the board follows the table, and the umpire is told."""
        out: list[Decision] = []
        for owner in self._players:
            if owner == shooter:
                continue
            gone = _expand((cell, -d) for (cell, o), d in delta.items() if o == owner and d < 0)
            new = _expand((cell, d) for (cell, o), d in delta.items() if o == owner and d > 0)
            for src, dst in zip(gone, new):
                self._take(src, owner)
                self._put(dst, owner)
                out.append(self._warn(f"{owner} ball moved from {cell_name(src)} to {cell_name(dst)} without being "
                                      "struck; the board follows the table", "PB-7.2"))
            for src in gone[len(new):]:
                self._take(src, owner)
                self._out[owner] += 1
                self._vanished[(src, owner)] = self._vanished.get((src, owner), 0) + 1
                out.append(self._decision(DecisionKind.BALL_REMOVED, f"{owner} ball at {cell_name(src)} is gone "
                                          "from the board without being struck: out of the game, no points",
                                          player=owner, rule="PB-4.1", flagged=True,
                                          data=(("from", list(src)), ("outcome", "out"))))
            out.extend(self._unexpected(owner, new[len(gone):]))
        return out

    def _unexpected(self, owner: str, arrived: list[Cell]) -> list[Decision]:
        """Balls of `owner` the table shows that no strike or move explains. One on the space a ball of `owner` was
        taken off unstruck (a reading that missed it, under an arm reaching over the row) was never gone: it is put
        back, and flagged (PB-7.5: the reading needing the fewest missed events). Any other is ignored: the
        engine's board keeps its count."""
        out: list[Decision] = []
        for dst in arrived:
            if self._vanished.get((dst, owner), 0):
                self._vanished[(dst, owner)] -= 1
                self._put(dst, owner)
                self._out[owner] -= 1
                out.append(self._warn(f"{owner} ball at {cell_name(dst)} is on the table again: it was hidden, not "
                                      "gone; back on the board, in play", "PB-7.5",
                                      data=(("explanation", "hidden_not_gone"), ("at", list(dst)))))
            else:
                out.append(self._warn(f"unexpected {owner} ball at {cell_name(dst)}: ignored, "
                                      "the engine's board keeps its count", "PB-7.2"))
        return out

    # ------------------------------------------------------------------ a strike and its landings

    def _strike(self, shooter: str, delta: dict[Key, int], shot: _Shot | None) -> list[Decision]:
        out: list[Decision] = []
        sources = _expand((cell, -d) for (cell, o), d in delta.items() if o == shooter and d < 0)
        landings = _expand((cell, d) for (cell, o), d in delta.items() if o == shooter and d > 0)
        hint = self._cell(shot.event.ball_from) if shot and shot.event.ball_from else None
        if hint is not None and hint not in sources and sources:
            out.append(self._warn(f"shot_started says {shooter} struck {cell_name(hint)}, but the table shows the "
                                  f"ball left {cell_name(sources[0])}; following the table", "PB-3.1"))
        if hint in sources:
            sources.remove(hint)
            sources.insert(0, hint)
        stacks = sorted(cell for (cell, o), n in self._board.items() if o == shooter and n >= 2)
        struck = {hint} if hint in sources else set(sources)
        violation = bool(stacks) and bool(sources) and not struck & set(stacks)
        if violation:
            out.append(self._decision(DecisionKind.FOUL, f"{shooter} had to play the stacked pair at "
                                      f"{', '.join(cell_name(c) for c in stacks)} but struck "
                                      f"{cell_name(sources[0])}; the rulebook sets no penalty, the strike stands",
                                      player=shooter, rule="PB-5.3", flagged=True,
                                      data=(("must_play", [list(c) for c in stacks]),)))
        if len(landings) > len(sources):
            # the balls that were hidden, not gone, are the ones no strike explains
            landings.sort(key=lambda dst: self._vanished.get((dst, shooter), 0) > 0)
            out.extend(self._unexpected(shooter, landings[len(sources):]))
            landings = landings[: len(sources)]
        if len(sources) > 1:
            out.append(self._warn(f"{len(sources)} {shooter} balls left their spaces in one strike; "
                                  "each landing is called by the rules", "PB-3.1"))
        for src in sources:
            self._take(src, shooter)
        lifts: list[Lift] = []
        for i, src in enumerate(sources):
            if i < len(landings):
                out.extend(self._land(shooter, src, landings[i], lifts))
            else:
                self._out[shooter] += 1
                out.append(self._decision(DecisionKind.SHOT, f"{shooter}: {cell_name(src)} -> off the board",
                                          player=shooter, rule="PB-4.1",
                                          data=(("from", list(src)), ("to", None), ("outcome", "out"))))
                out.append(self._decision(DecisionKind.BALL_REMOVED, f"{shooter} ball left the board: out of the "
                                          "game, back in the box, no points", player=shooter, rule="PB-4.1",
                                          data=(("from", list(src)), ("outcome", "out"))))
        out.extend(self._announce_lifts(lifts))
        ended = self._check_end()
        if ended:
            return out + ended
        if violation and self.config.stack_violation == "restrike":
            self._to_play = shooter
            out.append(self._decision(DecisionKind.PHASE, f"{shooter} strikes again and must play the stacked pair",
                                      player=shooter, rule="PB-5.3", data=(("phase", "play_the_stack"),)))
            return out
        return out + self._next_turn(shooter)

    def _land(self, shooter: str, src: Cell, dst: Cell, lifts: list[Lift]) -> list[Decision]:
        """Call one landing (PB-4, PB-5): the space alone decides."""
        seat = self._seat[shooter]
        row_of = row_seat(dst)
        move = f"{shooter}: {cell_name(src)} -> {cell_name(dst)}"
        where = (("from", list(src)), ("to", list(dst)))
        others = [(o, n) for (cell, o), n in sorted(self._board.items()) if cell == dst and o != shooter]
        if row_of == opposite(seat):
            self._award(shooter, 3)
            lifts.append(Lift(dst, shooter, 1, shooter))
            note = " (nothing captured there)" if others else ""
            return [
                self._decision(DecisionKind.SHOT, f"{move}: secured in the opposite starting row{note}",
                               player=shooter, rule="PB-4.5" if others else "PB-4.4",
                               data=where + (("outcome", "secured"),)),
                self._decision(DecisionKind.CAPTURE, f"{shooter} secures a ball at {cell_name(dst)}", player=shooter,
                               points=3, breakdown=(ScoreItem(f"secured {shooter} ball", 3),), rule="PB-4.4"),
            ]
        if row_of in neighbours(seat) and row_of in self._at_seat:
            neighbour = self._at_seat[row_of]
            self._award(neighbour, 1)
            lifts.append(Lift(dst, shooter, 1, neighbour))
            return [
                self._decision(DecisionKind.SHOT, f"{move}: landed in {neighbour}'s starting row, "
                               f"{neighbour} captures it", player=shooter, rule="PB-4.3",
                               data=where + (("outcome", "given_to_neighbour"), ("to_player", neighbour))),
                self._decision(DecisionKind.CAPTURE, f"{neighbour} captures {shooter}'s ball landed in "
                               f"{neighbour}'s starting row at {cell_name(dst)}", player=neighbour, points=1,
                               breakdown=(ScoreItem(f"{shooter} ball in {neighbour}'s starting row", 1),),
                               rule="PB-4.3"),
            ]
        stacked = self._board.get((dst, shooter), 0) > 0
        out: list[Decision] = []
        items = []
        for owner, n in others:
            self._board.pop((dst, owner))
            lifts.append(Lift(dst, owner, n, shooter))
            pair = " (a stacked pair)" if n == 2 else (" (a stack)" if n > 2 else "")
            items.append(ScoreItem(f"captured {n} {owner} ball{'s' if n > 1 else ''}{pair}", n))
        self._put(dst, shooter)
        outcome = "captured" if items else ("stacked" if stacked else "moved")
        text = {"captured": "captures " + ", ".join(i.label.removeprefix("captured ") for i in items),
                "stacked": f"lands on its own ball: both stay (a stacked pair of {shooter})", "moved": "lands"}
        pair_captured = any(n >= 2 for _, n in others)
        rule = "PB-5.2" if pair_captured else ("PB-4.2" if items else ("PB-5.1" if stacked else "PB-4.6"))
        out.append(self._decision(DecisionKind.SHOT, f"{move}: {text[outcome]}", player=shooter, rule=rule,
                                  data=where + (("outcome", outcome), ("stacked", stacked))))
        if items:
            total = sum(i.points for i in items)
            self._award(shooter, total, balls=total)
            out.append(self._decision(DecisionKind.CAPTURE, f"{shooter} captures {total} ball{'s' if total > 1 else ''}"
                                      f" at {cell_name(dst)}", player=shooter, points=total,
                                      breakdown=tuple(items), rule=rule))
        return out

    def _announce_lifts(self, lifts: list[Lift]) -> list[Decision]:
        merged: dict[tuple[Cell, str, str], int] = {}
        for lift in lifts:
            key = (lift.cell, lift.owner, lift.to)
            merged[key] = merged.get(key, 0) + lift.count
        out = []
        for (cell, owner, to), count in sorted(merged.items()):
            lift = Lift(cell, owner, count, to)
            self._pending_lifts.append(lift)
            out.append(self._decision(DecisionKind.LIFT, f"lift {lift.text()}", player=to, rule="PB-7.1",
                                      data=tuple(self._lift_json(lift).items())))
        return out

    # ------------------------------------------------------------------ turn and end

    def _next_turn(self, after: str) -> list[Decision]:
        seat = self._seat[after]
        for step in range(1, 5):
            candidate = self._at_seat.get((seat + step) % 4)
            if candidate is not None and self._balls_of(candidate):
                self._to_play = candidate
                stacks = sorted(cell for (cell, o), n in self._board.items() if o == candidate and n >= 2)
                must = f"; must play the stacked pair at {', '.join(cell_name(c) for c in stacks)}" if stacks else ""
                skipped = step > 1 and any(self._at_seat.get((seat + s) % 4) for s in range(1, step))
                return [self._decision(DecisionKind.TURN, f"{candidate} to play{must}", player=candidate,
                                       rule="PB-2.3" if skipped else ("PB-5.3" if stacks else "PB-2.2"),
                                       data=(("must_play", [list(c) for c in stacks]),))]
        return self._check_end()

    def _check_end(self) -> list[Decision]:
        reached = [p for p in self._players if self._points[p] >= self.config.target_points]
        if reached:
            best = max(self._points[p] for p in reached)
            return self._finish(tuple(p for p in reached if self._points[p] == best), "PB-6.1",
                                f"reached {self.config.target_points} points")
        if not self._board:
            best = max(self._points.values())
            winners = tuple(p for p in self._players if self._points[p] == best)
            return self._finish(winners, "PB-6.3" if len(winners) > 1 else "PB-6.2",
                                "no balls left on the board, most points")
        return []

    def _finish(self, winners: tuple[str, ...], rule: str, why: str) -> list[Decision]:
        self._complete, self._winners, self._to_play = True, winners, None
        assert self._event is not None
        self._ended_at = self._event.t
        verb = "wins" if len(winners) == 1 else "share the victory"
        totals = {p: self._points[p] for p in self._players}
        return [self._decision(DecisionKind.GAME_RESULT, f"{' and '.join(winners)} {verb}: {why} "
                               f"({self._totals_text()})", player=winners[0] if len(winners) == 1 else None,
                               rule=rule, data=(("winners", list(winners)), ("totals", totals)))]

    # ------------------------------------------------------------------ small helpers

    def _award(self, player: str, points: int, balls: int = 1) -> None:
        self._points[player] += points
        self._treasure_balls[player] += balls

    def _take(self, cell: Cell, owner: str) -> None:
        key = (cell, owner)
        self._board[key] -= 1
        if not self._board[key]:
            del self._board[key]

    def _put(self, cell: Cell, owner: str) -> None:
        self._board[(cell, owner)] = self._board.get((cell, owner), 0) + 1

    def _balls_of(self, player: str) -> int:
        return sum(n for (_, o), n in self._board.items() if o == player)

    @staticmethod
    def _cell(at: Location | None) -> Cell:
        """A board space of an accepted event (see _not_a_cell)."""
        assert at is not None and at.row is not None and at.col is not None
        return (at.row, at.col)

    @staticmethod
    def _lift_json(lift: Lift) -> dict[str, Any]:
        return {"owner": lift.owner, "cell": list(lift.cell), "count": lift.count, "to": lift.to}

    def _totals_text(self) -> str:
        return ", ".join(f"{p} {self._points[p]}" for p in self._players)

    def _status(self) -> str:
        if not self._started:
            return "waiting for game_start"
        if self._complete:
            return f"game over: {' and '.join(self._winners)} won ({self._totals_text()})"
        stacks = sorted(cell for (cell, o), n in self._board.items() if o == self._to_play and n >= 2)
        must = f", must play the stacked pair at {cell_name(stacks[0])}" if stacks else ""
        pending = f"; waiting for {len(self._pending_lifts)} lift(s)" if self._pending_lifts else ""
        paused = f" (paused since {self._pauses.paused_at:.0f}s)" if self._pauses.paused_at is not None else ""
        return f"{self._to_play} to play{paused}{must}; treasures {self._totals_text()}{pending}"

    def _warn(self, summary: str, rule: str, data: tuple[tuple[str, Any], ...] = ()) -> Decision:
        return self._decision(DecisionKind.WARNING, summary, rule=rule, flagged=True, data=data)

    def _decision(self, kind: DecisionKind, summary: str, *, player: str | None = None, points: int = 0,
                  breakdown: tuple[ScoreItem, ...] = (), rule: str | None = None, flagged: bool = False,
                  data: tuple[tuple[str, Any], ...] = ()) -> Decision:
        assert self._event is not None
        return Decision(t=self._event.t, kind=kind, summary=summary, player=player, points=points,
                        breakdown=breakdown, rule=rule, cause=self._event.id or None, confidence=self._confidence,
                        flagged=flagged or self._flag_all, data=data)


def _seats(event: GameStart) -> list[int]:
    """PB-1.2: the seats given, or with none given 0 and 2 for two players, else 0, 1, 2(, 3) in listed order."""
    given = [p.seat for p in event.players]
    if all(s is None for s in given):
        return [0, 2] if len(given) == 2 else list(range(len(given)))
    return [s for s in given if s is not None]


def _expand(counts: Any) -> list[Cell]:
    """[(cell, n)] -> [cell] * n, in sorted order, so the same table always reads the same."""
    return [cell for cell, n in sorted(counts) for _ in range(n)]


def _reading_text(owner: str, shown: dict[Key, int], not_lifted: dict[Key, int]) -> str:
    """One reading of balls on called lift spaces, e.g. "1 blue ball at (5,4) arrived there after an unseen lift"."""
    parts = []
    for (cell, _), n in sorted(shown.items()):
        for count, what in ((n - not_lifted[(cell, owner)], "arrived there after an unseen lift"),
                            (not_lifted[(cell, owner)], "not lifted yet")):
            if count:
                parts.append(f"{count} {owner} ball{'s' if count > 1 else ''} at {cell_name(cell)} {what}")
    return ", ".join(parts)
