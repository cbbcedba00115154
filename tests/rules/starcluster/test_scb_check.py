"""SCB-11.1: every input the Star Cluster Ball engine refuses, asked with `check` before `feed`.

Each case: `check(event)` gives the reason (the exact message `feed` raises), `state()` and `standings()` are the
same before and after `check`, `feed` raises InputError with that message and leaves them as they were.
"""

from __future__ import annotations

import pytest
from scb_helpers import Log, cfg, kinds, run, snap

from rules.decisions import DecisionKind as K
from rules.engine import PendingChoice
from rules.errors import InputError
from rules.events import (
    BallLifted, BallPlaced, BallSighting, Confirm, Event, GameStart, Location, OutOfBallsChoice, Place, PlayerSpec,
    PlayLineCrossing, RoundEnd, ShotStarted, Snapshot, TableMovement, TableSettled, UmpireFoul,
)
from rules.starcluster import StarClusterConfig, StarClusterEngine

NOT_GREEN = "is not a player (players: red, blue); fix the colour in the log or add the player to game_start"
RED_BLUE = (PlayerSpec("red", side="right"), PlayerSpec("blue", side="left"))


def refused(engine: StarClusterEngine, event: Event) -> str:
    """Assert `event` is refused without any change; return the reason."""
    state, standings = engine.state(), engine.standings()
    reason = engine.check(event)
    assert reason is not None, f"{event.id} was not refused"
    assert engine.state() == state and engine.standings() == standings
    with pytest.raises(InputError) as error:
        engine.feed(event)
    assert str(error.value) == reason
    assert engine.state() == state and engine.standings() == standings
    return reason


def accepted(engine: StarClusterEngine, event: Event) -> list:
    state = engine.state()
    assert engine.check(event) is None
    assert engine.state() == state
    return engine.feed(event)


def started(log: Log | None = None, config: StarClusterConfig | None = None) -> StarClusterEngine:
    engine, _ = run((log or Log()).events, config, close=False)
    return engine


def out_of_balls() -> StarClusterEngine:
    """Red's two balls are in slots: blue must choose (SCB-6.1)."""
    return started(Log().round_start().shot("red@1.0").shot("red@1.0", "red@1.2"), cfg(balls_per_player=2,
                                                                                         round_seconds=60))


# ---------------------------------------------------------------- game_start


def test_event_before_game_start():
    assert refused(StarClusterEngine(), RoundEnd(1.0, "X1")) == (
        "event X1: round_end comes before game_start; start the log with a game_start line naming the two players")
    assert refused(StarClusterEngine(), Confirm(1.0, "X2", target="X1")).startswith(
        "event X2: confirm comes before game_start")


@pytest.mark.parametrize("players", [(PlayerSpec("red"),), (PlayerSpec("red"), PlayerSpec("blue"), PlayerSpec("x"))])
def test_game_start_needs_exactly_two_players(players):
    assert refused(StarClusterEngine(), GameStart(0.0, "G", players=players)) == (
        f"event G: Star Cluster Ball needs exactly 2 players, got {len(players)}; "
        "list two players (or teams) in game_start")


@pytest.mark.parametrize("sides, side", [(("left", "left"), "left"), (("right", "right"), "right")])
def test_game_start_players_on_the_same_side(sides, side):
    players = (PlayerSpec("red", side=sides[0]), PlayerSpec("blue", side=sides[1]))
    assert refused(StarClusterEngine(), GameStart(0.0, "G", players=players)) == (
        f"event G: both players are on the {side} side; give one player side 'right' and the other 'left'")


def test_game_start_with_one_side_given_gives_the_other_the_other_side():
    engine = StarClusterEngine()
    accepted(engine, GameStart(0.0, "G", players=(PlayerSpec("red", side="left"), PlayerSpec("blue"))))
    assert engine.state().to_play == "blue"  # blue is on the right, which starts


GAME_IN_PROGRESS = ("game_start while a game is in progress or after the match ended (players red, blue); "
                    "start a new log for a new match")


def test_game_start_while_a_game_is_in_progress():
    assert refused(started(), GameStart(5.0, "G2", players=RED_BLUE)) == f"event G2: {GAME_IN_PROGRESS}"


def test_game_start_between_games_of_a_match():
    """SCB-9.2: the next game was set up automatically; the same players are accepted, others refused."""
    engine = started(Log().round_start().round_end(), cfg(best_of=3, rounds_per_game=1))  # 10 : 10, a tie-break
    engine.feed(ShotStarted(3.0, "S"))
    engine.feed(TableSettled(4.0, "T", snapshot=snap("red@1.0")))  # red scores first: game 1 to red
    assert engine.state().game_number == 2 and engine.state().round_started_at is None
    other = (PlayerSpec("red", side="right"), PlayerSpec("green", side="left"))
    assert refused(engine, GameStart(5.0, "G2", players=other)) == f"event G2: {GAME_IN_PROGRESS}"
    assert accepted(engine, GameStart(5.0, "G3", players=RED_BLUE)) == []


def test_game_start_after_the_match_ended():
    engine = started(Log().shot("red@3.0").round_end().round_start().round_end())
    assert engine.state().complete
    assert refused(engine, GameStart(99.0, "G2", players=RED_BLUE)) == f"event G2: {GAME_IN_PROGRESS}"


# ---------------------------------------------------------------- players that are not players


@pytest.mark.parametrize("event, what", [
    (ShotStarted(5.0, "X", player="green"), "shooter"),
    (PlayLineCrossing(5.0, "X", player="green"), "player"),
    (TableMovement(5.0, "X", magnitude_mm=9.0, player="green"), "player"),
    (UmpireFoul(5.0, "X", player="green"), "player"),
    (BallLifted(5.0, "X", owner="green", at=Location(Place.GUTTER)), "ball owner"),
    (TableSettled(5.0, "X", snapshot=snap("red@1.0", "green@play")), "ball owner"),
    (OutOfBallsChoice(5.0, "X", player="green"), "player"),
])
def test_an_unknown_colour_is_refused(event, what):
    assert refused(started(), event) == f"event X: {what} 'green' {NOT_GREEN}"


def test_events_without_a_player_are_accepted():
    engine = started()
    for event in (PlayLineCrossing(1.0, "A"), TableMovement(1.5, "B", magnitude_mm=1.0), ShotStarted(2.0, "C"),
                  BallPlaced(2.5, "D", owner="green"), TableSettled(3.0, "E")):
        accepted(engine, event)


# ---------------------------------------------------------------- snapshots that cannot be a table


@pytest.mark.parametrize("where, text", [
    ("4.0", "P4/slot 0 is not on the table (positions have 7, 5, 3 slots)"),
    ("1.7", "P1/slot 7 is not on the table (positions have 7, 5, 3 slots)"),
    ("3.3", "P3/slot 3 is not on the table (positions have 7, 5, 3 slots)"),
])
def test_snapshot_slot_off_the_table(where, text):
    event = TableSettled(5.0, "X", snapshot=snap(f"red@{where}"))
    assert refused(started(), event) == f"event X: {text}; fix the snapshot or the slots_per_position setting"


def test_snapshot_two_balls_in_one_slot():
    for engine in (started(), started(Log().round_start().add(ShotStarted, 1.0))):  # between shots, in a shot
        event = TableSettled(20.0, "X", snapshot=snap("red@1.0", "blue@1.0"))
        assert refused(engine, event) == "event X: two balls in P1/slot 0; a slot holds one ball, fix the snapshot"
    assert engine.state().shot_in_progress and engine.state().shooter == "red"  # the shot still waits


def test_snapshot_with_a_board_cell():
    event = TableSettled(5.0, "X", snapshot=Snapshot((BallSighting("red", Location.cell_at(4, 4)),)))
    assert refused(started(), event) == ("event X: a Star Cluster Ball snapshot has no board cells (cell (4,4)); "
                                         "use slot, play_area, grouped, gutter or off_table")


def test_snapshot_with_more_balls_than_a_player_has():
    event = TableSettled(5.0, "X", snapshot=snap("red@1.0", "red@grouped", "red@gutter"))
    assert refused(started(config=cfg(balls_per_player=2)), event) == (
        "event X: snapshot shows 3 red balls but each player has 2; fix the snapshot or the balls_per_player setting")


def test_the_first_problem_in_a_snapshot_is_the_one_reported():
    """Balls are read sorted by (owner, place): green's ball comes before red's slot off the table; the count
    check comes after every ball."""
    engine = started(config=cfg(balls_per_player=1))
    event = TableSettled(5.0, "X", snapshot=snap("red@4.0", "green@1.0", "red@1.0"))
    assert refused(engine, event) == f"event X: ball owner 'green' {NOT_GREEN}"
    event = TableSettled(5.0, "X", snapshot=snap("red@1.0", "red@1.0", "red@4.0"))
    assert refused(engine, event).startswith("event X: two balls in P1/slot 0")
    event = TableSettled(5.0, "X", snapshot=snap("blue@2.0", "blue@2.1", "red@1.0", "red@1.1"))
    assert refused(engine, event).startswith("event X: snapshot shows 2 red balls")  # players in game_start order


def test_snapshot_before_the_round_began_is_validated_too():
    engine = started()
    assert engine.state().round_started_at is None
    assert refused(engine, TableSettled(1.0, "X", snapshot=snap("red@4.0"))).startswith(
        "event X: P4/slot 0 is not on the table")


# ---------------------------------------------------------------- the out-of-balls choice


def test_choice_when_nobody_is_out_of_balls():
    assert refused(started(), OutOfBallsChoice(5.0, "X", player="blue", choice="bank")) == (
        "event X: out_of_balls_choice by blue but no player is out of balls; "
        "remove the line or check the snapshots before it")


def test_choice_by_the_wrong_player():
    engine = out_of_balls()
    assert engine.state().pending_choice == PendingChoice("blue", ("bank", "final_sequence"),
                                                          "red has no balls left")
    assert refused(engine, OutOfBallsChoice(20.0, "X", player="red", choice="bank")) == (
        "event X: out_of_balls_choice by red, but it is blue's choice (red ran out of balls); fix the player")
    assert engine.check(OutOfBallsChoice(20.0, "Y", player="blue", choice="final_sequence")) is None


def test_choice_after_the_clock_ran_out_is_refused_and_the_clock_is_not_run():
    """SCB-2.2: at t=70 the 60-second round (from t=1) is over before the choice: round 2 awaits no choice. The
    refusal leaves the engine in round 1, still waiting for blue's choice."""
    engine = out_of_balls()
    before = engine.state()
    assert before.round_started_at == 1.0 and before.round_number == 1
    assert refused(engine, OutOfBallsChoice(70.0, "X", player="blue", choice="bank")) == (
        "event X: out_of_balls_choice by blue but no player is out of balls; "
        "remove the line or check the snapshots before it")
    assert engine.state() == before and engine.state().pending_choice is not None
    out = accepted(engine, OutOfBallsChoice(60.0, "Y", player="blue", choice="bank"))  # in time: accepted
    assert kinds(out, K.SCORE)[0].rule == "SCB-6.2" and engine.state().round_number == 2


def test_event_after_the_clock_ended_the_match_is_accepted_whatever_it_names():
    """The clock ends the last round (and the match) before the event is read: the event is then ignored."""
    engine = started(Log().round_start().shot("red@2.0"), cfg(rounds_per_game=1, round_seconds=60))
    late = ShotStarted(100.0, "X", player="green")
    assert engine.check(ShotStarted(50.0, "X", player="green")) is not None  # still in time: refused
    out = accepted(engine, late)
    assert [d.kind for d in out][-2:] == [K.ROUND_RESULT, K.GAME_RESULT] and engine.state().complete
    assert engine.state().round_ended_at == 61.0
    assert accepted(engine, OutOfBallsChoice(101.0, "Y", player="green")) == []


def test_check_does_not_run_the_clock():
    """Asking about an event after the buzzer ends nothing: only feed does."""
    engine = started(Log().round_start(), cfg(round_seconds=60))
    before = engine.state()
    assert engine.check(TableSettled(500.0, "X")) is None
    assert engine.state() == before and engine.state().round_number == 1
    assert kinds(engine.feed(TableSettled(500.0, "X")), K.ROUND_RESULT)
