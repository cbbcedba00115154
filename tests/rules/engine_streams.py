"""Random event streams for the rules engines' legality tests: plausible play mixed with input that must be refused.

Each builder asks `pick(options)` for every choice (a Hypothesis draw in the tests, `random.choice` in a
quick fuzzing loop) and reads the engine's public `state()` so snapshots are mostly near the table the engine
believes in: shots land, balls run out, choices become due, rounds and games end. Now and then an event names
a colour nobody plays, a place off the table, a choice nobody awaits, and so on.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence, TypeVar

from rules.events import (
    BallLifted, BallPlaced, BallSighting, Confirm, Event, GameStart, Location, OutOfBallsChoice, Overturn, Place,
    PlayerSpec, PlayLineCrossing, RoundEnd, RoundStart, ShotStarted, Snapshot, SnapshotCorrection, TableMovement,
    TableSettled, UmpireFoul,
)
from rules.piratenbillard.board import CELLS, CORNERS

T = TypeVar("T")
Pick = Callable[[Sequence[Any]], Any]

SCB_CONFIGS: tuple[dict[str, Any], ...] = (
    {},
    {"balls_per_player": 2, "round_seconds": 90, "tiebreak_seconds": 30},
    {"balls_per_player": 3, "round_seconds": 60, "rounds_per_game": 1, "best_of": 3},
    {"balls_per_player": 2, "clock": "umpire", "target_score": 4},
    {"balls_per_player": 3, "round_seconds": 80, "void_shot_displaced": "stand", "knocked_out_ball_loses_points": True,
     "optional_rules": {"blocking": True, "grand_slam_finish": True}},
)
PB_CONFIGS: tuple[dict[str, Any], ...] = (
    {},
    {"balls_per_player": 2, "target_points": 3, "after_end": "error"},
    {"balls_per_player": 1, "target_points": 2, "stack_violation": "restrike"},
    {"balls_per_player": 2, "first_seat": 1, "target_points": 4},
)


def weighted(pick: Pick, table: Sequence[tuple[int, T]]) -> T:
    return pick([item for weight, item in table for _ in range(weight)])


# ---------------------------------------------------------------- Star Cluster Ball


def scb_location(pick: Pick) -> Location:
    kind = weighted(pick, [(6, "slot"), (2, "grouped"), (2, "gutter"), (2, "play"), (1, "off"), (1, "bad slot"),
                           (1, "cell")])
    if kind == "slot":
        position = pick([1, 2, 3])
        return Location.slot_at(position, pick(range((7, 5, 3)[position - 1])))
    if kind == "bad slot":
        return pick([Location.slot_at(4, 0), Location.slot_at(1, 7), Location.slot_at(3, 3)])
    if kind == "cell":
        return Location.cell_at(4, 4)
    return Location({"grouped": Place.GROUPED, "gutter": Place.GUTTER, "play": Place.PLAY_AREA,
                     "off": Place.OFF_TABLE}[kind])


def scb_snapshot(pick: Pick, state: Any) -> Snapshot:
    """The table the engine believes in (slots and grouped balls), changed in up to three ways."""
    balls = [BallSighting(o, Location.slot_at(*s)) for s, o in sorted(state.board.items())]
    for player, count in sorted(state.grouped.items()):
        balls += [BallSighting(player, Location(Place.GROUPED))] * count
    for _ in range(pick([0, 1, 1, 2, 3])):
        change = weighted(pick, [(5, "add"), (2, "move"), (1, "remove")])
        if change == "add" and state.to_play and pick([True, False]):  # the player to play lands a ball
            free = [(p, s) for p in (1, 2, 3) for s in range((7, 5, 3)[p - 1]) if (p, s) not in state.board]
            if free:
                balls.append(BallSighting(state.to_play, Location.slot_at(*pick(free))))
                continue
        if change != "add" and balls:
            i = pick(range(len(balls)))
            ball = balls.pop(i)
            if change == "move":
                balls.append(BallSighting(ball.owner, scb_location(pick)))
        else:
            owner = weighted(pick, [(3, state.to_play or "red"), (2, "red"), (2, "blue"), (1, "green")])
            balls.append(BallSighting(owner, scb_location(pick)))
    return Snapshot(tuple(balls))


def scb_event(pick: Pick, engine: Any, i: int, t: float) -> Event:
    state = engine.state()
    eid = f"E{i}"
    player = weighted(pick, [(3, None), (2, "red"), (2, "blue"), (1, "green")])
    if not state.players:
        kind = weighted(pick, [(6, "game_start"), (1, "other")])
    else:
        kind = weighted(pick, [
            (5, "shot"), (6, "settled"), (1, "crossing"), (1, "movement"), (1, "foul"), (1, "lifted"),
            (1, "placed"), (1, "round_start"), (1, "round_end"), (10 if state.pending_choice else 1, "choice"),
            (1, "confirm"), (1, "game_start"),
        ])
    if kind == "game_start":
        players = weighted(pick, [
            (6, (PlayerSpec("red", side="right"), PlayerSpec("blue", side="left"))),
            (2, (PlayerSpec("red"), PlayerSpec("blue"))),
            (1, (PlayerSpec("red", side="left"), PlayerSpec("blue"))),
            (1, (PlayerSpec("red", side="left"), PlayerSpec("blue", side="left"))),
            (1, (PlayerSpec("red"),)),
            (1, (PlayerSpec("red"), PlayerSpec("blue"), PlayerSpec("green"))),
            (1, (PlayerSpec("blue", side="left"), PlayerSpec("green", side="right"))),
        ])
        return GameStart(t, eid, players=players)
    if kind == "other":
        return pick([ShotStarted(t, eid), RoundEnd(t, eid), Confirm(t, eid, target="E0")])
    if kind == "shot":
        return ShotStarted(t, eid, player=player)
    if kind == "settled":
        return TableSettled(t, eid, snapshot=scb_snapshot(pick, state), confidence=pick([1.0, 1.0, 0.4]))
    if kind == "crossing":
        return PlayLineCrossing(t, eid, player=player, body_part="foot", confidence=pick([0.9, 0.5]))
    if kind == "movement":
        return TableMovement(t, eid, magnitude_mm=pick([2.0, 8.0]), player=player)
    if kind == "foul":
        return UmpireFoul(t, eid, player=player or pick(["red", "blue"]), foul=pick(UmpireFoul.FOULS),
                          free_shot=pick([False, True]))
    if kind == "lifted":
        return BallLifted(t, eid, owner=player or "red", at=scb_location(pick))
    if kind == "placed":
        return BallPlaced(t, eid, owner=player or "blue", at=scb_location(pick))
    if kind == "round_start":
        return RoundStart(t, eid)
    if kind == "round_end":
        return RoundEnd(t, eid)
    if kind == "choice":
        chooser = state.pending_choice.player if state.pending_choice and pick([True, True, False]) else (
            player or "red")
        return OutOfBallsChoice(t, eid, player=chooser, choice=pick(OutOfBallsChoice.CHOICES))
    return Confirm(t, eid, target="E0")


def scb_stream(pick: Pick, engine: Any, feed: Callable[[Event], None], length: int) -> None:
    """Build `length` events one at a time against `engine`, handing each to `feed` (which feeds the engine)."""
    t = 0.0
    for i in range(length):
        feed(scb_event(pick, engine, i, t))
        t += weighted(pick, [(3, 0.0), (6, 1.0), (6, 3.0), (2, 8.0), (1, 20.0), (1, 45.0)])


# ---------------------------------------------------------------- Piratenbillard


def pb_cell(pick: Pick) -> Location:
    kind = weighted(pick, [(8, "cell"), (1, "corner"), (1, "outside"), (1, "slot")])
    if kind == "cell":
        return Location.cell_at(*pick(CELLS))
    if kind == "corner":
        return Location.cell_at(*pick(sorted(CORNERS)))
    if kind == "outside":
        return Location.cell_at(10, 3)
    return Location.slot_at(1, 0)


def pb_snapshot(pick: Pick, state: Any) -> Snapshot:
    """The engine's board with a strike (or two) applied, sometimes with something that cannot be there."""
    balls = [BallSighting(owner, Location.cell_at(*cell)) for (cell, owner), n in sorted(state.board.items())
             for _ in range(n)]
    for _ in range(pick([0, 1, 1, 1, 2])):
        change = weighted(pick, [(6, "strike"), (1, "other moves"), (1, "bad ball"), (1, "extra"), (1, "stack")])
        mover = state.to_play if change in ("strike", "stack") else pick(state.players or ("red",))
        own = [i for i, b in enumerate(balls) if b.owner == mover]
        if change == "bad ball":
            balls.append(weighted(pick, [
                (1, BallSighting("pink", Location.cell_at(5, 5))), (1, BallSighting("red", Location(Place.GUTTER))),
                (1, BallSighting("red", Location.cell_at(0, 0))), (1, BallSighting("red", Location(Place.OFF_TABLE))),
            ]))
        elif change == "extra":
            balls += [BallSighting(mover, Location.cell_at(5, c)) for c in range(pick([1, 9]))]
        elif own:
            ball = balls.pop(pick(own))
            if change == "stack" and balls:
                target = balls[pick(range(len(balls)))].at
            else:
                target = weighted(pick, [(8, Location.cell_at(*pick(CELLS))), (1, None), (1, ball.at)])
            if target is not None:
                balls.append(BallSighting(mover, target))
    return Snapshot(tuple(balls))


def pb_game_start(pick: Pick, t: float, eid: str) -> GameStart:
    players = weighted(pick, [
        (4, (PlayerSpec("red", seat=0), PlayerSpec("blue", seat=2))),
        (2, (PlayerSpec("red"), PlayerSpec("blue"), PlayerSpec("green"), PlayerSpec("yellow"))),
        (2, (PlayerSpec("red", seat=1), PlayerSpec("blue", seat=3), PlayerSpec("green", seat=0))),
        (1, (PlayerSpec("red"), PlayerSpec("blue"))),
        (1, (PlayerSpec("red"),)),
        (1, tuple(PlayerSpec(c) for c in ("red", "blue", "green", "yellow", "pink"))),
        (1, (PlayerSpec("red", seat=0), PlayerSpec("blue"))),
        (1, (PlayerSpec("red", seat=0), PlayerSpec("blue", seat=0), PlayerSpec("green", seat=2))),
        (1, (PlayerSpec("red", seat=0), PlayerSpec("blue", seat=1))),
    ])
    return GameStart(t, eid, players=players)


def pb_event(pick: Pick, engine: Any, i: int, t: float) -> Event:
    state = engine.state()
    eid = f"E{i}"
    if not state.players:
        if weighted(pick, [(6, True), (1, False)]):
            return pb_game_start(pick, t, eid)
        return pick([ShotStarted(t, eid), TableSettled(t, eid), Confirm(t, eid, target="E0")])
    player = weighted(pick, [(3, None), (4, state.to_play or "red"), (2, pick(state.players)), (1, "pink")])
    kind = weighted(pick, [
        (6, "strike"), (2, "settled"), (1, "lifted"), (1, "placed"), (1, "movement"), (1, "foul"), (1, "crossing"),
        (1, "round"), (1, "confirm"), (1, "choice"), (1, "game_start"), (1, "correction"),
    ])
    if kind == "strike":
        own = sorted(cell for (cell, o) in state.board if o == (player or state.to_play))
        ball_from = weighted(pick, [(3, None), (4, Location.cell_at(*pick(own)) if own else None), (1, pb_cell(pick))])
        return ShotStarted(t, eid, player=player, ball_from=ball_from)
    if kind == "settled":
        return TableSettled(t, eid, snapshot=pb_snapshot(pick, state), confidence=pick([1.0, 1.0, 0.3]))
    if kind == "lifted":
        lifts = [Location.cell_at(*lift.cell) for lift in state.pending_lifts]
        at = pick(lifts) if lifts and pick([True, False]) else weighted(pick, [
            (3, pb_cell(pick)), (1, Location(Place.OFF_TABLE))])
        owner = state.pending_lifts[0].owner if state.pending_lifts else (player or "red")
        return BallLifted(t, eid, owner=pick([owner, player or "red"]), at=at)
    if kind == "placed":
        return BallPlaced(t, eid, owner=player or "red", at=pb_cell(pick))
    if kind == "movement":
        return TableMovement(t, eid, magnitude_mm=3.0)
    if kind == "foul":
        return UmpireFoul(t, eid, player=player or state.to_play or "red", free_shot=pick([False, True]))
    if kind == "crossing":
        return PlayLineCrossing(t, eid, player=player)
    if kind == "round":
        return pick([RoundStart(t, eid), RoundEnd(t, eid)])
    if kind == "confirm":
        return Confirm(t, eid, target="E0")
    if kind == "choice":
        return OutOfBallsChoice(t, eid, player=player or "red", choice="bank")
    if kind == "game_start":
        return pb_game_start(pick, t, eid)
    return pick([Overturn(t, eid, target="E0"), SnapshotCorrection(t, eid, target="E0")])


def pb_stream(pick: Pick, engine: Any, feed: Callable[[Event], None], length: int) -> None:
    t = 0.0
    for i in range(length):
        feed(pb_event(pick, engine, i, t))
        t += pick([0.5, 2.5])
