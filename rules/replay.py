"""Replay an event log through a game's rules engine.

The log is read and validated whole before anything is decided, so a bad line
stops the replay with its line number and no result is produced. Umpire
inputs are applied here, ahead of the engine: an overturned call is dropped
from the stream, a corrected snapshot replaces the original, and each appears
as an UMPIRE decision where the umpire gave it. The original events are never
rewritten. Events the engine gets once the game is over score nothing: when a
shot or a call is among them (play went on: a config with too few rounds?), the
result's `warnings` say how many there were, from the first such one on (not in
result.json). Clearing the table and closing the round after the end (ball_lifted,
ball_placed, table_settled, round_end) is what follows every game: no warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable

from .decisions import Decision, DecisionKind
from .engine import RulesEngine, Standings
from .events import (
    BallLifted,
    BallPlaced,
    Confirm,
    Event,
    LogError,
    OutOfBallsChoice,
    Overturn,
    PlayLineCrossing,
    RoundEnd,
    RoundPause,
    RoundResume,
    RoundStart,
    SnapshotCorrection,
    TableMovement,
    TableSettled,
    UmpireFoul,
    parse_event,
)
from .files import decode_json_lines, read_json_lines
from .games import GAMES, make_engine

# Calls an umpire may overturn, and the umpire's own inputs but game_start (an overturn of one undoes it); a
# snapshot is fixed with snapshot_correction instead.
OVERTURNABLE = (PlayLineCrossing, TableMovement, UmpireFoul, RoundStart, RoundEnd, RoundPause, RoundResume,
                OutOfBallsChoice, Confirm, Overturn, SnapshotCorrection)
OVERTURNABLE_TYPES = ", ".join(cls.TYPE for cls in OVERTURNABLE)
# Umpire inputs that change how earlier events count: replay applies them ahead of the engine.
AMENDMENTS = (Overturn, SnapshotCorrection, Confirm)
# What follows the end of every game (the table cleared, the round closed): no sign that play went on.
AFTER_THE_END = (BallLifted, BallPlaced, TableSettled, RoundEnd)


@dataclass(frozen=True)
class ReplayResult:
    game: str
    decisions: tuple[Decision, ...]
    standings: Standings
    events: tuple[Event, ...]
    config: dict[str, Any]
    warnings: tuple[str, ...] = ()  # what the replay noticed about the log (events after the end); one line each


def read_log(path: str | Path) -> list[Event]:
    """Parse a JSON-lines event log; any malformed line raises LogError naming it."""
    lines = read_json_lines(path, "event log", error=LogError)
    return parse_log_rows(lines.rows, str(lines.path))


def parse_log_lines(lines: Iterable[str], name: str = "log") -> list[Event]:
    """An event log already in memory, one JSON object per line; `name` names it in errors."""
    return parse_log_rows(decode_json_lines(lines, name, error=LogError), name)


def parse_log_rows(rows: Iterable[tuple[int, Any]], name: str = "log") -> list[Event]:
    """Events from decoded (line number, object) pairs: each gets the id L<line> unless it has one.

    The log as a whole is checked too: it holds an event, ids are unique, times never go back.
    """
    events: list[Event] = []
    for number, data in rows:
        try:
            events.append(parse_event(data, number))
        except LogError as error:
            raise LogError(f"{name} {error}") from None
    if not events:
        raise LogError(f"{name} holds no events; a log starts with a game_start line")
    _check_order_and_ids(events, name)
    return events


def _check_order_and_ids(events: list[Event], name: str) -> None:
    seen: set[str] = set()
    last_t = 0.0
    for event in events:
        if event.id in seen:
            raise LogError(f"{name}: event id {event.id!r} is used twice; ids must be unique")
        seen.add(event.id)
        if event.t < last_t:
            raise LogError(f"{name}: event {event.id} at t={event.t} comes after t={last_t}; "
                           "a log must be in time order")
        last_t = event.t


def resolve_umpire_inputs(events: list[Event]) -> tuple[list[Event], dict[str, Event]]:
    """Return the stream the engine sees, and every event by id.

    Overturned events are dropped; corrected snapshots are substituted (the last
    correction of a snapshot wins). Targets are checked so a typo in an id is
    an error, not a silently ignored correction.
    """
    by_id = _checked_targets(events)
    cancelled = overturned(events)
    corrected: dict[str, SnapshotCorrection] = {}
    for event in events:
        if isinstance(event, SnapshotCorrection) and event.id not in cancelled:
            corrected[event.target] = event
    stream: list[Event] = []
    for event in events:
        if event.id in cancelled:
            continue
        if event.id in corrected:
            event = replace(event, snapshot=corrected[event.id].snapshot)  # type: ignore[call-arg]
        stream.append(event)
    return stream, by_id


def overturned(events: list[Event]) -> set[str]:
    """The ids of the events overturned by an overturn that stands (an overturn of an overturn undoes it).

    Read from the end: an overturn always targets an earlier event, so whether it stands is known by the
    time its target is met."""
    cancelled: set[str] = set()
    for event in reversed(events):
        if isinstance(event, Overturn) and event.id not in cancelled:
            cancelled.add(event.target)
    return cancelled


def _checked_targets(events: list[Event]) -> dict[str, Event]:
    """Every event by id, once each amendment's target is known to be an earlier event of a kind it may change."""
    by_id: dict[str, Event] = {}
    for event in events:
        if isinstance(event, AMENDMENTS):
            target = by_id.get(event.target)
            if target is None:
                where = "a later event" if any(e.id == event.target for e in events) else "not in the log"
                raise LogError(f"event {event.id} ({event.TYPE}) targets {event.target!r}, which is {where}; "
                               "use the id of an earlier event it refers to (e.g. L12 for line 12)")
            if isinstance(event, Overturn) and not isinstance(target, OVERTURNABLE):
                raise LogError(f"event {event.id} overturns {target.id}, a {target.TYPE}; only {OVERTURNABLE_TYPES} "
                               "can be overturned (fix a snapshot with snapshot_correction)")
            if isinstance(event, SnapshotCorrection) and not isinstance(target, TableSettled):
                raise LogError(f"event {event.id} corrects {target.id}, a {target.TYPE}; "
                               "snapshot_correction must target a table_settled event")
        by_id[event.id] = event
    return by_id


def amend(events: list[Event], game: str, config: dict[str, Any] | None = None) -> tuple[RulesEngine, Decision]:
    """A match whose last event is an amendment (overturn, snapshot_correction, confirm) given live: the engine
    as replaying the log with it leaves it, and the umpire's call. Raises InputError (naming the event) when the
    amendment cannot stand: a bad target, a call overturned already, or a later event the replay then refuses."""
    event = events[-1]
    assert isinstance(event, AMENDMENTS)
    if isinstance(event, Overturn) and event.target in overturned(events[:-1]):
        raise LogError(f"event {event.id}: {event.target} is overturned already; overturn the overturn to undo it")
    engine, _ = _referee(events, game, config)
    by_id = {e.id: e for e in events}
    return engine, _umpire_decision(event, by_id[event.target])


def replay(events: list[Event], game: str, config: dict[str, Any] | None = None) -> ReplayResult:
    """Feed a whole log to a fresh engine; the same log always gives the same result."""
    engine, refereed = _referee(events, game, config)
    decisions = refereed.decisions + engine.close(events[-1].t)
    return ReplayResult(game, tuple(decisions), engine.standings(), tuple(events), dict(config or {}),
                        _after_end_warnings(refereed.unscored, refereed.ended_at))


@dataclass
class _Refereed:
    decisions: list[Decision]
    ended_at: float | None = None  # when the game (the match) was over
    unscored: list[Event] = field(default_factory=list)  # events the engine got after that: they score nothing


def _referee(events: list[Event], game: str, config: dict[str, Any] | None) -> tuple[RulesEngine, _Refereed]:
    """A fresh engine fed the log with its umpire inputs applied, not yet closed."""
    engine: RulesEngine = make_engine(game, config or {})
    stream, by_id = resolve_umpire_inputs(events)
    done = _Refereed([])
    for event in stream:
        if isinstance(event, AMENDMENTS):
            done.decisions.append(_umpire_decision(event, by_id[event.target]))
            continue
        if done.ended_at is not None:
            done.unscored.append(event)
        fed = engine.feed(event)  # a refused event raises InputError naming it
        done.decisions.extend(fed)
        results = [d.t for d in fed if d.kind in (DecisionKind.GAME_RESULT, DecisionKind.MATCH_RESULT)]
        if done.ended_at is None and results and engine.state().complete:  # the engines end a game with its result
            done.ended_at = min(results)
            if event.t > done.ended_at:  # the clock ran out before this event: it came after the end
                done.unscored.append(event)
    return engine, done


def _after_end_warnings(unscored: list[Event], ended_at: float | None) -> tuple[str, ...]:
    """A warning when a shot or a call came after the end: the events from it on were not scored."""
    play = [i for i, event in enumerate(unscored) if not isinstance(event, AFTER_THE_END)]
    if not play or ended_at is None:
        return ()
    first = unscored[play[0]]
    return ((f"{len(unscored) - play[0]} event(s) after the game ended at t={ended_at:.2f}s were not scored "
             f"(first: {first.id or 'an event'} {first.TYPE} at {first.t:.2f}s); if play went on, check the game "
             "config"),)


def _umpire_decision(event: Overturn | SnapshotCorrection | Confirm, target: Event) -> Decision:
    verb = {"overturn": "overturned", "snapshot_correction": "corrected the snapshot of", "confirm": "confirmed"}
    who = f" by {event.by}" if event.by else ""
    why = f": {event.reason}" if event.reason else ""
    return Decision(
        t=event.t,
        kind=DecisionKind.UMPIRE,
        summary=f"umpire{who} {verb[event.TYPE]} {target.id} ({target.TYPE} at {target.t:.2f}s){why}",
        cause=event.id,
        data=(("action", event.TYPE), ("target", target.id), ("by", event.by), ("reason", event.reason)),
    )


def known_games() -> tuple[str, ...]:
    return tuple(GAMES)
