"""Every input the Piratenbillard engine refuses, asked with `check` before `feed`.

Each case: `check(event)` gives the reason (the exact message `feed` raises), `state()` and `standings()` are the
same before and after `check`, `feed` raises InputError with that message and leaves them as they were.
"""

from __future__ import annotations

import pytest

from rules.errors import InputError
from rules.events import (
    BallLifted, BallPlaced, BallSighting, Confirm, Event, GameStart, Location, OutOfBallsChoice, Overturn, Place,
    PlayerSpec, PlayLineCrossing, RoundEnd, RoundStart, ShotStarted, Snapshot, SnapshotCorrection, TableMovement,
    TableSettled, UmpireFoul,
)
from rules.piratenbillard import PiratenbillardConfig, PiratenbillardEngine

from pb_helpers import Game

TWO = [("red", 0), ("blue", 2)]
NOT_PINK = "is not a player (players: red, blue); fix the colour in the log or add the player to game_start"


def refused(engine: PiratenbillardEngine, event: Event) -> str:
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


def started(config: PiratenbillardConfig | None = None) -> PiratenbillardEngine:
    return Game(TWO, config).engine


def seats(*pairs: tuple[str, int | None]) -> GameStart:
    return GameStart(t=0, id="L1", players=tuple(PlayerSpec(p, seat=s) for p, s in pairs))


# ---------------------------------------------------------------- game_start (PB-1.2, PB-2.1)


@pytest.mark.parametrize("count", [1, 5])
def test_two_to_four_players(count):
    event = GameStart(t=0, id="L1", players=tuple(PlayerSpec(f"p{i}") for i in range(count)))
    assert refused(PiratenbillardEngine(), event) == (
        f"event L1: Piratenbillard is played by 2, 3 or 4 players, got {count}")


def test_every_player_a_seat_or_none():
    assert refused(PiratenbillardEngine(), seats(("red", 0), ("blue", None))) == (
        "event L1: give every player a seat (0 south, 1 west, 2 north, 3 east) or none of them")


def test_two_players_share_a_seat():
    assert refused(PiratenbillardEngine(), seats(("red", 0), ("blue", 0), ("green", 2))) == (
        "event L1: two players share a seat ([0, 0, 2]); each side has one player")


def test_two_players_sit_opposite():
    assert refused(PiratenbillardEngine(), seats(("red", 0), ("blue", 1))) == (
        "event L1: with 2 players the seats must be opposite (0 and 2, or 1 and 3), got 0 and 1")


def test_first_seat_where_nobody_sits():
    """A refused game_start leaves no half-set-up game behind: standings() still works and says so."""
    engine = PiratenbillardEngine(PiratenbillardConfig(first_seat=1))
    assert refused(engine, seats(("red", 0), ("blue", 2))) == (
        "event L1: config 'first_seat' is 1 (west), but nobody sits there (seats: [0, 2])")
    assert engine.state().players == () and engine.standings().status == "waiting for game_start"
    assert engine.check(seats(("red", 1), ("blue", 3))) is None


def test_a_second_game_start():
    assert refused(started(), GameStart(t=1, id="L2", players=(PlayerSpec("red"), PlayerSpec("blue")))) == (
        "event L2: a second game_start; a Piratenbillard log holds one game, start a new log for the next game")


@pytest.mark.parametrize("event", [ShotStarted(t=0, id="L1"), RoundStart(t=0, id="L1"), TableSettled(t=0, id="L1")])
def test_event_before_game_start(event):
    assert refused(PiratenbillardEngine(), event) == (
        f"event L1: {event.TYPE} before game_start; the log must begin with game_start naming the players and "
        "their seats")


def test_confirm_is_always_accepted():
    assert PiratenbillardEngine().check(Confirm(t=0, id="L1", target="L0")) is None


# ---------------------------------------------------------------- inputs that are not Piratenbillard's


def test_out_of_balls_choice_is_a_star_cluster_input():
    assert refused(started(), OutOfBallsChoice(t=1, id="L2", player="red")) == (
        "event L2: out_of_balls_choice is a Star Cluster Ball input; Piratenbillard has no such choice, remove it "
        "from the log")


@pytest.mark.parametrize("event", [Overturn(t=1, id="L2", target="L1"), SnapshotCorrection(t=1, id="L2", target="L1")])
def test_umpire_corrections_fed_to_the_engine(event):
    """Overturns and snapshot corrections are the replay layer's; the engine refuses them."""
    assert refused(started(), event) == f"event L2: {event.TYPE} is not a Piratenbillard event"


@pytest.mark.parametrize("event", [PlayLineCrossing(t=1, id="L2"), RoundStart(t=1, id="L2"), RoundEnd(t=1, id="L2"),
                                   TableMovement(t=1, id="L2", magnitude_mm=4.0)])
def test_star_cluster_observations_are_accepted(event):
    assert started().check(event) is None


# ---------------------------------------------------------------- players and places


@pytest.mark.parametrize("event, what", [
    (ShotStarted(t=1, id="L2", player="pink"), "shooter"),
    (BallLifted(t=1, id="L2", owner="pink", at=Location.cell_at(5, 5)), "ball owner"),
    (BallPlaced(t=1, id="L2", owner="pink", at=Location.cell_at(5, 5)), "ball owner"),
    (UmpireFoul(t=1, id="L2", player="pink"), "fouling player"),
    (TableSettled(t=1, id="L2", snapshot=Snapshot((BallSighting("pink", Location.cell_at(5, 5)),))), "ball owner"),
])
def test_an_unknown_colour_is_refused(event, what):
    assert refused(started(), event) == f"event L2: {what} 'pink' {NOT_PINK}"


@pytest.mark.parametrize("at, text", [
    (Location.slot_at(1, 0), "ball_from at P1/slot 0 is not a board space; Piratenbillard places are 'cell' "
                             "(row, col) or 'off_table'"),
    (Location(Place.OFF_TABLE), "ball_from at off_table is not a board space; Piratenbillard places are 'cell' "
                                "(row, col) or 'off_table'"),
    (Location.cell_at(9, 9), "ball_from at cell (9,9) is not one of the 96 spaces (rows and columns 0..9, no "
                             "corners); fix the calibration or the log"),
    (Location.cell_at(10, 3), "ball_from at cell (10,3) is not one of the 96 spaces (rows and columns 0..9, no "
                              "corners); fix the calibration or the log"),
])
def test_struck_space_that_is_not_a_board_space(at, text):
    assert refused(started(), ShotStarted(t=1, id="L2", player="red", ball_from=at)) == f"event L2: {text}"


def test_the_shooter_is_checked_before_the_struck_space():
    event = ShotStarted(t=1, id="L2", player="pink", ball_from=Location.cell_at(0, 0))
    assert refused(started(), event) == f"event L2: shooter 'pink' {NOT_PINK}"


def test_ball_lifted_from_a_corner_but_not_from_off_the_table():
    engine = started()
    assert refused(engine, BallLifted(t=1, id="L2", owner="red", at=Location.cell_at(0, 9))) == (
        "event L2: at at cell (0,9) is not one of the 96 spaces (rows and columns 0..9, no corners); fix the "
        "calibration or the log")
    assert engine.check(BallLifted(t=1, id="L3", owner="red", at=Location(Place.GUTTER))) is None


@pytest.mark.parametrize("ball, text", [
    (BallSighting("red", Location.cell_at(0, 0)), "ball at cell (0,0) is not one of the 96 spaces (rows and "
                                                  "columns 0..9, no corners); fix the calibration or the log"),
    (BallSighting("red", Location(Place.GUTTER)), "ball at gutter is not a board space; Piratenbillard places are "
                                                  "'cell' (row, col) or 'off_table'"),
])
def test_snapshot_ball_that_cannot_be_on_this_board(ball, text):
    assert refused(started(), TableSettled(t=1, id="L7", snapshot=Snapshot((ball,)))) == f"event L7: {text}"


def test_snapshot_with_more_balls_than_dealt():
    balls = tuple(BallSighting("red", Location.cell_at(5, c)) for c in range(9))
    off = (BallSighting("blue", Location(Place.OFF_TABLE)),) * 12  # balls off the table are not counted
    assert refused(started(), TableSettled(t=1, id="L7", snapshot=Snapshot(balls + off))) == (
        "event L7: the snapshot shows 9 red balls on the board, but a player has 8; fix the snapshot")


def test_the_first_problem_in_snapshot_order_is_the_one_reported():
    """Balls are read in the snapshot's order; the count check comes after every ball."""
    corner, pink = BallSighting("red", Location.cell_at(0, 0)), BallSighting("pink", Location.cell_at(5, 5))
    engine = started()
    assert refused(engine, TableSettled(t=1, id="L7", snapshot=Snapshot((corner, pink)))).startswith(
        "event L7: ball at cell (0,0)")
    assert refused(engine, TableSettled(t=1, id="L7", snapshot=Snapshot((pink, corner)))).startswith(
        "event L7: ball owner 'pink'")


# ---------------------------------------------------------------- after the end (PB-7.3)


@pytest.mark.parametrize("after_end", ["warn", "error"])
def test_events_after_the_game_ended(after_end):
    game = Game(TWO, PiratenbillardConfig(target_points=3, after_end=after_end))
    game.strike("red", (9, 4), (0, 5))
    assert game.engine.state().complete
    late = ShotStarted(t=99, id="L9", player="pink")  # after the end the event is not read further
    if after_end == "error":
        assert refused(game.engine, late) == (
            "event L9: shot_started after the game ended (game over: red won (red 3, blue 0)); cut the log at the "
            "end of the game or set after_end to 'warn'")
    else:
        assert game.engine.check(late) is None
    # these are refused before the end check, whatever after_end says
    assert refused(game.engine, OutOfBallsChoice(t=99, id="L10", player="red")).startswith(
        "event L10: out_of_balls_choice is a Star Cluster Ball input")
    assert refused(game.engine, GameStart(t=99, id="L11", players=(PlayerSpec("a"), PlayerSpec("b")))).startswith(
        "event L11: a second game_start")
