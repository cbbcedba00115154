"""One test per clause of docs/rules.md, each citing the rulebook sentence it checks."""

from __future__ import annotations

import pytest

from rules.decisions import DecisionKind as K
from rules.errors import InputError
from rules.events import (
    BallLifted, BallSighting, GameStart, Location, OutOfBallsChoice, Place, PlayerSpec, ShotStarted, Snapshot,
    TableSettled, UmpireFoul,
)
from rules.piratenbillard import Lift, PiratenbillardConfig, PiratenbillardEngine
from rules.piratenbillard.board import CELLS, CORNERS, neighbours, opposite, row_seat, starting_row

from pb_helpers import OFF, Game, ball_count, kinds, only

TWO = [("red", 0), ("blue", 2)]
FOUR = [("red", 0), ("blue", 1), ("green", 2), ("yellow", 3)]
THREE = [("red", 0), ("blue", 1), ("green", 2)]


def turn_player(decisions) -> str:
    return kinds(decisions, K.TURN)[-1].player


# ---------------------------------------------------------------- PB-1 setup


def test_board_has_96_spaces_and_four_starting_rows_of_eight():
    """PB-1.1: "The playing field of Piratenbillard is divided into 96 spaces. On each of the 4 sides of the
    playing field there is a starting row with 8 spaces." """
    assert len(CELLS) == 96 and not CORNERS & set(CELLS)
    rows = [starting_row(seat) for seat in range(4)]
    assert all(len(r) == 8 for r in rows) and len(set().union(*rows)) == 32
    assert all(row_seat(cell) == seat for seat in range(4) for cell in starting_row(seat))
    assert opposite(0) == 2 and opposite(1) == 3 and set(neighbours(0)) == {1, 3}


@pytest.mark.parametrize("count", [1, 5])
def test_two_to_four_players(count):
    """PB-1.2: the game is for 2 to 4 players ("If fewer than 4 players are playing ...")."""
    players = tuple(PlayerSpec(f"p{i}") for i in range(count))
    with pytest.raises(InputError, match="event L1: Piratenbillard is played by 2, 3 or 4 players"):
        PiratenbillardEngine().feed(GameStart(t=0, id="L1", players=players))


def test_two_players_sit_opposite():
    """PB-1.2: "In a 2-player game, 2 opposite sides of the playing field must be chosen." """
    with pytest.raises(InputError, match="event L1: with 2 players the seats must be opposite"):
        PiratenbillardEngine().feed(GameStart(t=0, id="L1", players=(PlayerSpec("red", seat=0),
                                                                     PlayerSpec("blue", seat=1))))
    engine = PiratenbillardEngine()
    engine.feed(GameStart(t=0, id="L1", players=(PlayerSpec("red"), PlayerSpec("blue"))))
    assert ((9, 1), "red") in engine.state().board and ((0, 1), "blue") in engine.state().board  # default seats 0 and 2


def test_each_player_places_eight_balls_on_their_starting_row():
    """PB-1.3: "takes the 8 wooden balls of that color ... places one of their balls in each of the 8 spaces of
    the corresponding starting row." """
    game = Game(FOUR)
    board = game.engine.state().board
    for player, seat in FOUR:
        assert {cell for (cell, o) in board if o == player} == set(starting_row(seat))
    assert ball_count(game.engine) == 32


# ---------------------------------------------------------------- PB-2 turn order


def test_youngest_player_begins_first_listed_by_default():
    """PB-2.1: "The youngest player begins." By default the first player of game_start is the youngest."""
    game = Game([("blue", 2), ("red", 0)])
    assert turn_player(game.decisions) == "blue"


def test_youngest_player_begins_configured_seat():
    """PB-2.1: "The youngest player begins." — the umpire sets the youngest player's seat in the config."""
    game = Game(FOUR, PiratenbillardConfig(first_seat=2))
    assert turn_player(game.decisions) == "green"
    with pytest.raises(InputError, match="first_seat"):
        Game(TWO, PiratenbillardConfig(first_seat=1))


def test_turns_follow_clockwise_order():
    """PB-2.2: "The other players follow in clockwise order." Clockwise is south, west, north, east."""
    game = Game([("green", 2), ("red", 0), ("yellow", 3), ("blue", 1)], PiratenbillardConfig(first_seat=0))
    order = []
    for player, src, dst in [("red", (9, 4), (6, 4)), ("blue", (4, 0), (4, 3)), ("green", (0, 4), (3, 5)),
                             ("yellow", (4, 9), (2, 6)), ("red", (9, 5), (6, 6))]:
        order.append(turn_player(game.strike(player, src, dst)))
    assert order == ["blue", "green", "yellow", "red", "blue"]


def test_player_without_balls_on_the_board_is_skipped():
    """PB-2.3 (reading): a player strikes "any wooden ball of their color still on the playing field"; with none
    left they cannot strike, so the turn passes on."""
    game = Game(THREE, PiratenbillardConfig(balls_per_player=1))  # red (9,1), blue (1,0), green (0,1)
    game.strike("red", (9, 1), (5, 5))
    game.strike("blue", (1, 0), OFF)  # blue has no ball left
    game.strike("green", (0, 1), (3, 3))
    out = game.strike("red", (5, 5), (4, 4))
    turn = only(out, K.TURN)
    assert turn.player == "green" and turn.rule == "PB-2.3"


# ---------------------------------------------------------------- PB-3 the strike


def test_strike_own_ball_inferred_from_table_without_ball_from():
    """PB-3.1: "a player strikes any wooden ball of their color still on the playing field" — the struck ball is
    the one that left its space on the table, even when the vision did not say which."""
    game = Game(TWO)
    out = game.strike(None, (9, 3), (5, 3), ball_from=False)
    shot = only(out, K.SHOT)
    assert shot.player == "red" and dict(shot.data)["from"] == [9, 3] and dict(shot.data)["to"] == [5, 3]
    assert not any(d.flagged for d in out)


def test_ball_from_disagreeing_with_table_is_flagged():
    """PB-3.1: the table decides which ball was struck; a different `ball_from` is flagged for the umpire."""
    game = Game(TWO)
    game.table[((9, 3), "red")] -= 1
    del game.table[((9, 3), "red")]
    game.table[((5, 3), "red")] = 1
    game.feed(ShotStarted(t=1, id="L2", player="red", ball_from=Location.cell_at(9, 6)))
    out = game.feed(TableSettled(t=2, id="L3", snapshot=game.snapshot()))
    assert any(d.kind is K.WARNING and d.flagged and "(9,3)" in d.summary for d in out)
    assert ((5, 3), "red") in game.engine.state().board


def test_strike_must_leave_its_space_else_repeat():
    """PB-3.2: "The ball must leave the space it is lying in and may not land back in the same space. If the
    player does not manage this on the first attempt, they repeat the strike until it succeeds." """
    game = Game(TWO)
    out = game.strike("red", (9, 4), (9, 4))
    assert dict(only(out, K.SHOT).data)["outcome"] == "stayed"
    phase = only(out, K.PHASE)
    assert phase.rule == "PB-3.2" and phase.player == "red" and not kinds(out, K.TURN)
    assert game.engine.standings().to_play == "red"
    out = game.strike("red", (9, 4), (7, 4))
    assert only(out, K.TURN).player == "blue"


# ---------------------------------------------------------------- PB-4 landings


def test_ball_off_the_board_is_out_without_points():
    """PB-4.1: "If a ball lands outside the playing field, it is out of the game, is put back in the box, and
    earns no points." """
    game = Game(TWO)
    out = game.strike("red", (9, 4), OFF)
    removed = only(out, K.BALL_REMOVED)
    assert removed.rule == "PB-4.1" and removed.points == 0 and not removed.flagged
    assert game.points() == {"red": 0, "blue": 0} and game.engine.state().out_of_game["red"] == 1
    assert not kinds(out, K.LIFT) and ball_count(game.engine) == 16


def test_landing_on_another_colour_captures_it():
    """PB-4.2: "If a player's ball lands in a space of the playing field where a ball of a different color is
    lying, they capture that ball ... Captured balls are worth 1 point." """
    game = Game(TWO)
    game.strike("red", (9, 4), (5, 4))
    out = game.strike("blue", (0, 4), (5, 4))
    capture = only(out, K.CAPTURE)
    assert (capture.player, capture.points, capture.rule) == ("blue", 1, "PB-4.2")
    lift = only(out, K.LIFT)
    assert dict(lift.data) == {"owner": "red", "cell": [5, 4], "count": 1, "to": "blue"}
    assert game.engine.state().board.get(((5, 4), "blue")) == 1 and ((5, 4), "red") not in game.engine.state().board
    assert game.points() == {"red": 0, "blue": 1}


def test_neighbour_starting_row_gives_ball_to_neighbour():
    """PB-4.3: "if a player's ball lands in a space of a neighboring player's starting row, to the left or
    right, then that neighboring player captures the ball ... it is worth 1 point." """
    game = Game(FOUR)
    game.strike("red", (9, 4), (5, 4))
    game.strike("blue", (3, 0), (3, 3))  # frees (3,0) in blue's row
    game.strike("green", (0, 4), (2, 4))
    game.strike("yellow", (4, 9), (4, 7))
    out = game.strike("red", (5, 4), (3, 0))  # into blue's (west) starting row
    capture = only(out, K.CAPTURE)
    assert (capture.player, capture.points, capture.rule) == ("blue", 1, "PB-4.3")
    assert dict(only(out, K.LIFT).data) == {"owner": "red", "cell": [3, 0], "count": 1, "to": "blue"}
    assert game.points() == {"red": 0, "blue": 1, "green": 0, "yellow": 0}


def test_neighbour_row_capture_regardless_of_neighbours_own_ball():
    """PB-4.3: "... that neighboring player captures the ball, regardless of whether one of their own balls is in
    that space or not." The neighbour's own ball stays and the striker captures nothing."""
    game = Game(FOUR)
    out = game.strike("red", (9, 8), (5, 9))  # yellow (east) is red's other neighbour; (5,9) holds yellow's ball
    capture = only(out, K.CAPTURE)
    assert (capture.player, capture.points) == ("yellow", 1)
    assert game.engine.state().board.get(((5, 9), "yellow")) == 1
    assert game.points()["red"] == 0


def test_reaching_the_opposite_starting_row_secures_three_points():
    """PB-4.4: "If a player's ball reaches a space in the starting row on the opposite side, it is secured. They
    take the ball off the playing field and add it to their treasure. Secured balls are worth 3 points." """
    game = Game(TWO)
    game.strike("red", (9, 4), (5, 4))
    game.strike("blue", (0, 4), (4, 4))
    out = game.strike("red", (5, 4), (0, 4))  # blue's starting row, now empty at (0,4)
    capture = only(out, K.CAPTURE)
    assert (capture.player, capture.points, capture.rule) == ("red", 3, "PB-4.4")
    assert dict(only(out, K.LIFT).data) == {"owner": "red", "cell": [0, 4], "count": 1, "to": "red"}
    assert game.points() == {"red": 3, "blue": 0}


def test_secured_ball_captures_nothing():
    """PB-4.5: "Important: In this case, no ball is captured, regardless of whether there is also a ball of a
    different color in that space." """
    game = Game(TWO)
    out = game.strike("red", (9, 4), (0, 5))  # lands on blue's ball at (0,5)
    assert only(out, K.SHOT).rule == "PB-4.5"
    assert [(d.player, d.points) for d in kinds(out, K.CAPTURE)] == [("red", 3)]
    assert game.engine.state().board.get(((0, 5), "blue")) == 1
    assert [dict(d.data)["owner"] for d in kinds(out, K.LIFT)] == ["red"]


def test_secure_in_an_empty_opposite_row():
    """PB-4.4 (reading): the opposite starting row is the target "on the opposite side" even when nobody sits
    there (3 players: "one starting row remains empty")."""
    game = Game(THREE, PiratenbillardConfig(first_seat=1))  # blue sits west; east (seat 3) is empty
    out = game.strike("blue", (4, 0), (4, 9))
    assert only(out, K.CAPTURE).points == 3 and game.points()["blue"] == 3


def test_landing_in_own_starting_row_is_an_ordinary_landing():
    """PB-4.6 (reading): only the neighbours' and the opposite rows have special effects; a ball landing back in
    its own starting row simply lies there."""
    game = Game(TWO)
    game.strike("red", (9, 4), (5, 4))
    game.strike("blue", (0, 4), (4, 4))
    out = game.strike("red", (5, 4), (9, 4))
    assert dict(only(out, K.SHOT).data)["outcome"] == "moved" and not kinds(out, K.CAPTURE)
    assert game.engine.state().board.get(((9, 4), "red")) == 1


def test_empty_seats_row_is_an_ordinary_landing_in_three_player_game():
    """PB-4.6 (reading): "In a 3-player game, one starting row remains empty." A ball landing there has no
    neighbouring player to capture it, so it lies there like on any space."""
    game = Game(THREE)  # east (seat 3) is empty; it is red's neighbour row
    out = game.strike("red", (9, 8), (5, 9))
    assert dict(only(out, K.SHOT).data)["outcome"] == "moved" and not kinds(out, K.CAPTURE)
    assert game.engine.state().board.get(((5, 9), "red")) == 1


def test_side_rows_are_ordinary_landings_in_two_player_game():
    """PB-4.6 (reading): with 2 players on opposite sides, the left and right starting rows belong to nobody."""
    game = Game(TWO)
    out = game.strike("red", (9, 1), (4, 0))
    assert dict(only(out, K.SHOT).data)["outcome"] == "moved" and not kinds(out, K.CAPTURE)


# ---------------------------------------------------------------- PB-5 stacks


def test_own_balls_stack():
    """PB-5.1: "If a player's ball lands in a space where one of their own balls already is, both balls remain
    there." """
    game = Game(TWO)
    game.strike("red", (9, 4), (5, 4))
    game.strike("blue", (0, 4), (2, 4))
    out = game.strike("red", (9, 5), (5, 4))
    shot = only(out, K.SHOT)
    assert shot.rule == "PB-5.1" and dict(shot.data)["outcome"] == "stacked"
    assert game.engine.state().board[((5, 4), "red")] == 2 and not kinds(out, K.CAPTURE)


def test_stacked_pair_captured_together():
    """PB-5.2: "If another player then plays one of their balls into that space, both same-colored balls are
    captured by that player." """
    game = Game(TWO)
    game.strike("red", (9, 4), (5, 4))
    game.strike("blue", (0, 4), (2, 4))
    game.strike("red", (9, 5), (5, 4))
    out = game.strike("blue", (2, 4), (5, 4))
    capture = only(out, K.CAPTURE)
    assert (capture.player, capture.points, capture.rule) == ("blue", 2, "PB-5.2")
    assert "stacked pair" in capture.breakdown[0].label
    assert dict(only(out, K.LIFT).data) == {"owner": "red", "cell": [5, 4], "count": 2, "to": "blue"}
    assert game.points() == {"red": 0, "blue": 2}


def _stacked_red_game(config: PiratenbillardConfig | None = None) -> Game:
    game = Game(TWO, config)
    game.strike("red", (9, 4), (5, 4))
    game.strike("blue", (0, 4), (2, 4))
    game.strike("red", (9, 5), (5, 4))
    out = game.strike("blue", (2, 4), (3, 4))
    turn = only(out, K.TURN)
    assert turn.player == "red" and dict(turn.data)["must_play"] == [[5, 4]]
    state = game.engine.state()
    assert state.to_play == "red" and state.must_play == ((5, 4),) and state.balls_to_play == {"red": 8, "blue": 8}
    return game


def test_stacked_pair_must_be_played():
    """PB-5.3: "If it is that player's turn again and their two balls are still in that space, they must play
    that space, and at least one of the balls must leave the space." Playing it is legal."""
    game = _stacked_red_game()
    out = game.strike("red", (5, 4), (6, 4))
    assert not kinds(out, K.FOUL) and only(out, K.TURN).player == "blue"
    assert game.engine.state().board[((5, 4), "red")] == 1


def test_stacked_pair_not_played_is_a_flagged_foul_and_stands():
    """PB-5.3 (reading, stack_violation="foul"): the rulebook gives no penalty for striking another ball; the
    engine calls a flagged FOUL for the umpire, the strike stands and the turn passes."""
    game = _stacked_red_game()
    out = game.strike("red", (9, 6), (6, 6))
    foul = only(out, K.FOUL)
    assert foul.flagged and foul.rule == "PB-5.3" and foul.points == 0
    assert only(out, K.TURN).player == "blue" and game.engine.state().board[((6, 6), "red")] == 1


def test_stacked_pair_not_played_restrike_setting():
    """PB-5.3 (reading, stack_violation="restrike"): "they must play that space" like the repeat of a failed
    strike, so the same player strikes again until they play the stacked pair."""
    game = _stacked_red_game(PiratenbillardConfig(stack_violation="restrike"))
    out = game.strike("red", (9, 6), (6, 6))
    assert only(out, K.FOUL).flagged and only(out, K.PHASE).rule == "PB-5.3"
    assert not kinds(out, K.TURN) and game.engine.standings().to_play == "red"
    out = game.strike("red", (5, 4), (6, 4))
    assert not kinds(out, K.FOUL) and only(out, K.TURN).player == "blue"


# ---------------------------------------------------------------- PB-6 end of game


def test_game_ends_when_a_player_reaches_the_target():
    """PB-6.1: "The game ends as soon as a player has balls worth at least 7 points in their treasure." With a
    target of 3 (players "may also agree to play to a point total other than 7") one secured ball wins."""
    game = Game(TWO, PiratenbillardConfig(target_points=3))
    out = game.strike("red", (9, 4), (0, 5))
    result = only(out, K.GAME_RESULT)
    assert result.rule == "PB-6.1" and dict(result.data)["winners"] == ["red"] and not kinds(out, K.TURN)
    standings = game.engine.standings()
    assert standings.complete and standings.winners == ("red",) and standings.to_play is None
    assert standings.match_wins == {"red": 1, "blue": 0}


def test_neighbour_capture_can_win_the_game():
    """PB-6.1: the game ends "as soon as a player has" the target, also when a neighbour's stray ball gives it."""
    game = Game(FOUR, PiratenbillardConfig(target_points=1))
    out = game.strike("red", (9, 8), (5, 9))
    assert dict(only(out, K.GAME_RESULT).data)["winners"] == ["yellow"]


def test_no_balls_left_most_points_wins():
    """PB-6.2: "If there are no more balls on the game board and no player has reached 7 points by then, the
    player with the most points wins." """
    game = Game(TWO, PiratenbillardConfig(balls_per_player=1))  # red (9,1), blue (0,1)
    game.strike("red", (9, 1), (0, 4))  # secured: red 3
    out = game.strike("blue", (0, 1), OFF)
    result = only(out, K.GAME_RESULT)
    assert result.rule == "PB-6.2" and dict(result.data)["winners"] == ["red"]
    assert game.engine.standings().winners == ("red",)


def test_tie_shares_the_victory():
    """PB-6.3: "In case of a tie, the players involved share the victory." """
    game = Game(TWO, PiratenbillardConfig(balls_per_player=1))
    game.strike("red", (9, 1), OFF)
    out = game.strike("blue", (0, 1), OFF)
    result = only(out, K.GAME_RESULT)
    assert result.rule == "PB-6.3" and dict(result.data)["winners"] == ["red", "blue"]
    assert game.engine.standings().match_wins == {"red": 1, "blue": 1}


# ---------------------------------------------------------------- PB-7 refereeing the table


def test_lift_names_every_ball_to_take_off_the_board():
    """PB-7.1: "They take the opponent's ball off the playing field and set it aside as their treasure." The
    engine lists each ball to lift (owner, space, count, whose treasure) and drops it from its board at once."""
    game = Game(TWO)
    game.strike("red", (9, 4), (5, 4))
    out = game.strike("blue", (0, 4), (5, 4), lift=False)
    assert dict(only(out, K.LIFT).data) == {"owner": "red", "cell": [5, 4], "count": 1, "to": "blue"}
    state = game.engine.state()
    assert ((5, 4), "red") not in state.board and state.pending_lifts == (Lift((5, 4), "red", 1, "blue"),)
    assert state.balls_to_play == {"red": 7, "blue": 8} and state.treasure_balls == {"red": 0, "blue": 1}
    assert state.points == {"red": 0, "blue": 1} and state.to_play == "red" and not state.shot_in_progress


def test_unlifted_ball_is_flagged_not_scored_again():
    """PB-7.1: a ball the table still shows after its lift was called is flagged, never captured twice."""
    game = Game(TWO)
    game.strike("red", (9, 4), (5, 4))
    game.strike("blue", (0, 4), (5, 4), lift=False)  # the red ball stays on the table
    out = game.strike("red", (9, 5), (6, 5))
    warning = [d for d in out if d.kind is K.WARNING and d.rule == "PB-7.1"]
    assert len(warning) == 1 and warning[0].flagged and "not lifted yet" in warning[0].summary
    assert game.points() == {"red": 0, "blue": 1} and not kinds(out, K.CAPTURE)
    game.lift([d for d in game.decisions if d.kind is K.LIFT])
    out = game.strike("blue", (0, 5), (2, 5))
    assert not any(d.kind is K.WARNING for d in out) and not game.engine.state().pending_lifts


def test_ball_lifted_event_confirms_a_lift_and_flags_a_wrong_one():
    """PB-7.1: a `ball_lifted` at a called lift confirms it; a lift nobody called is flagged."""
    game = Game(TWO)
    game.strike("red", (9, 4), (5, 4))
    game.strike("blue", (0, 4), (5, 4))
    assert game.feed(BallLifted(t=50, id="L10", owner="red", at=Location.cell_at(5, 4))) == []
    assert not game.engine.state().pending_lifts
    out = game.feed(BallLifted(t=51, id="L11", owner="blue", at=Location.cell_at(0, 6)))
    assert only(out, K.WARNING).flagged


def test_ball_gone_without_a_strike_is_flagged_and_out():
    """PB-7.2: the table is checked against the board; a ball of another colour gone from the board without
    being struck is out of the game (PB-4.1, no points), flagged for the umpire."""
    game = Game(TWO)
    del game.table[((0, 7), "blue")]
    out = game.strike("red", (9, 4), (5, 4))
    removed = only(out, K.BALL_REMOVED)
    assert removed.flagged and removed.player == "blue" and ball_count(game.engine) == 16


def test_table_settled_without_a_shot_only_checks_the_table():
    """PB-7.2: a snapshot with no strike in progress only checks the table; nothing is scored."""
    game = Game(TWO)
    out = game.feed(TableSettled(t=1, id="L2", snapshot=game.snapshot()))
    assert out == [] and game.engine.standings().to_play == "red"


def test_low_confidence_snapshot_is_flagged():
    """PB-7.2: doubtful input is followed but flagged: a snapshot below `min_confidence`."""
    game = Game(TWO)
    game.feed(ShotStarted(t=1, id="L2", player="red"))
    game.table[((5, 4), "red")] = 1
    del game.table[((9, 4), "red")]
    out = game.feed(TableSettled(t=2, id="L3", snapshot=game.snapshot(), confidence=0.3))
    assert out and all(d.flagged for d in out) and only(out, K.TURN).player == "blue"


def test_shot_by_player_not_to_play_is_flagged_and_followed():
    """PB-2.2: "The other players follow in clockwise order." A strike out of turn is flagged, and the log is
    followed: the turn passes on from the player who struck."""
    game = Game(FOUR)
    out = game.strike("green", (0, 4), (3, 4))
    assert any(d.kind is K.WARNING and d.rule == "PB-2.2" and d.flagged for d in out)
    assert only(out, K.TURN).player == "yellow"


def test_strike_out_of_turn_that_moved_nothing_takes_no_turn():
    """PB-2.2 and PB-3.2: the repeat is the player to play's. A strike by another player after which every ball
    lies where it lay (a strike the camera saw where nobody struck: a row half hidden by the umpire's arm) gives that
    player no repeat: it is flagged, and the player to play still is, with no strike out of turn to follow."""
    game = Game(FOUR)
    out = game.strike("green", (0, 4), (0, 4))
    assert not kinds(out, K.SHOT) and not kinds(out, K.PHASE) and not kinds(out, K.TURN)
    assert any(d.kind is K.WARNING and d.rule == "PB-2.2" and d.flagged and "red is still to play" in d.summary
               for d in out)
    assert game.engine.standings().to_play == "red"
    out = game.strike("red", (9, 4), (7, 4))
    assert not kinds(out, K.WARNING) and only(out, K.TURN).player == "blue"


@pytest.mark.parametrize("after_end", ["warn", "error"])
def test_events_after_the_game_ended(after_end):
    """PB-7.3 (reading): after "The game ends" nothing more is scored: a later event is flagged and ignored
    (after_end="warn") or rejected (after_end="error")."""
    game = Game(TWO, PiratenbillardConfig(target_points=3, after_end=after_end))
    game.strike("red", (9, 4), (0, 5))
    late = ShotStarted(t=99, id="L9", player="blue")
    if after_end == "error":
        with pytest.raises(InputError, match="event L9: shot_started after the game ended"):
            game.feed(late)
    else:
        assert only(game.feed(late), K.WARNING).flagged and game.points() == {"red": 3, "blue": 0}


def test_umpire_foul_is_recorded_without_penalty():
    """PB-7.4 (reading): the Piratenbillard rulebook names no fouls and no penalties; an umpire's foul is
    recorded as a FOUL with no points and no change of turn."""
    game = Game(TWO)
    out = game.feed(UmpireFoul(t=3, id="L2", player="red", foul="interference", free_shot=True))
    foul = only(out, K.FOUL)
    assert foul.points == 0 and "no penalty" in foul.summary and game.engine.standings().to_play == "red"


# ---------------------------------------------------------------- input that makes no sense


def _started() -> PiratenbillardEngine:
    engine = PiratenbillardEngine()
    engine.feed(GameStart(t=0, id="L1", players=(PlayerSpec("red", seat=0), PlayerSpec("blue", seat=2))))
    return engine


@pytest.mark.parametrize("ball, message", [
    (BallSighting("green", Location.cell_at(5, 5)), "event L7: ball owner 'green' is not a player"),
    (BallSighting("red", Location.cell_at(0, 0)), "event L7: ball at cell \\(0,0\\) is not one of the 96 spaces"),
    (BallSighting("red", Location(Place.GUTTER)), "event L7: ball at gutter is not a board space"),
])
def test_snapshot_that_cannot_be_on_this_board_is_an_input_error(ball, message):
    """Input errors name the event: a colour nobody plays, a corner (no such space), a Star Cluster place."""
    with pytest.raises(InputError, match=message):
        _started().feed(TableSettled(t=1, id="L7", snapshot=Snapshot((ball,))))


def test_more_balls_of_a_colour_than_dealt_is_an_input_error():
    """PB-1.3: each player has 8 balls; a snapshot showing 9 red balls cannot be right."""
    balls = tuple(BallSighting("red", Location.cell_at(5, c)) for c in range(9))
    with pytest.raises(InputError, match="event L7: the snapshot shows 9 red balls"):
        _started().feed(TableSettled(t=1, id="L7", snapshot=Snapshot(balls)))


def test_events_before_game_start_and_foreign_inputs_are_input_errors():
    with pytest.raises(InputError, match="event L1: shot_started before game_start"):
        PiratenbillardEngine().feed(ShotStarted(t=0, id="L1"))
    with pytest.raises(InputError, match="event L2: out_of_balls_choice is a Star Cluster Ball input"):
        _started().feed(OutOfBallsChoice(t=1, id="L2", player="red"))
    with pytest.raises(InputError, match="event L2: a second game_start"):
        _started().feed(GameStart(t=1, id="L2", players=(PlayerSpec("red"), PlayerSpec("blue"))))
    with pytest.raises(InputError, match="event L2: shooter 'pink' is not a player"):
        _started().feed(ShotStarted(t=1, id="L2", player="pink"))


def test_ball_knocked_to_another_space_is_flagged_and_followed():
    """PB-7.2: a ball of another colour that changed space without being struck is not scored by any rule; the
    board follows the table and the umpire is told."""
    game = Game(TWO)
    del game.table[((0, 7), "blue")]
    game.table[((1, 7), "blue")] = 1
    out = game.strike("red", (9, 4), (5, 4))
    assert any(d.kind is K.WARNING and d.flagged and "(0,7) to (1,7)" in d.summary for d in out)
    assert game.engine.state().board.get(((1, 7), "blue")) == 1 and not kinds(out, K.CAPTURE)


def test_both_balls_of_a_struck_pair_leaving_are_each_called():
    """PB-5.3 "at least one of the balls must leave the space": when both leave, each landing is called by the
    rules (PB-4) and the strike is flagged for the umpire."""
    game = _stacked_red_game()
    del game.table[((5, 4), "red")]
    game.table[((6, 2), "red")] = 1  # one lands on (6,2), the other leaves the board
    game.feed(ShotStarted(t=90, id="L20", player="red", ball_from=Location.cell_at(5, 4)))
    out = game.feed(TableSettled(t=91, id="L21", snapshot=game.snapshot()))
    assert any(d.kind is K.WARNING and "2 red balls left" in d.summary for d in out)
    assert [dict(d.data)["outcome"] for d in kinds(out, K.SHOT)] == ["moved", "out"]
    assert not kinds(out, K.FOUL) and ball_count(game.engine) == 16


def test_strike_without_shot_started_is_inferred_and_flagged():
    """PB-7.2: the player to play's ball moved but no shot_started was logged: it is called as their strike and
    flagged."""
    game = Game(TWO)
    del game.table[((9, 4), "red")]
    game.table[((0, 4), "red")] = 1  # on blue's ball: secured, nothing captured
    out = game.feed(TableSettled(t=3, id="L2", snapshot=game.snapshot()))
    assert any(d.kind is K.WARNING and "without a shot_started" in d.summary for d in out)
    assert game.points() == {"red": 3, "blue": 0} and only(out, K.TURN).player == "blue"


def test_strike_from_a_space_without_own_ball_is_flagged():
    """PB-3.1: "strikes any wooden ball of their color" — a `ball_from` holding none of the player's balls is
    flagged; the table decides."""
    game = Game(TWO)
    out = game.feed(ShotStarted(t=1, id="L2", player="red", ball_from=Location.cell_at(5, 5)))
    assert only(out, K.WARNING).flagged


def test_standings_report_one_game_of_one_round():
    """Standings: one game, one round holding each player's treasure, whose turn it is and a status line."""
    game = _stacked_red_game()
    standings = game.engine.standings()
    assert standings.to_play == "red" and "must play the stacked pair at (5,4)" in standings.status
    (only_game,) = standings.games
    assert only_game.rounds[0].number == 1 and dict(only_game.rounds[0].scores) == {"red": 0, "blue": 0}
    assert not standings.complete and standings.winners == ()
    closing = game.engine.close(200.0)
    assert len(closing) == 1 and "log ends before the game does" in closing[0].summary


def test_stacked_pair_rule_with_a_strike_the_table_does_not_show():
    """PB-5.3 with PB-7.2: a player who must play a stacked pair, whose strike shows no ball leaving a space
    but an extra ball of theirs appearing (found by the property tests), gets a flagged warning and no foul:
    there is no strike to call illegal."""
    game = Game(TWO)
    game.strike("red", (9, 3), (6, 3))
    game.strike("blue", (0, 4), (2, 4))
    game.strike("red", (9, 4), (5, 4))
    assert only(game.strike("blue", (2, 4), (6, 3)), K.CAPTURE).player == "blue"  # red's (6,3) ball is lifted
    game.strike("red", (9, 5), (5, 4))  # red's stacked pair
    assert dict(only(game.strike("blue", (0, 5), (1, 5)), K.TURN).data)["must_play"] == [[5, 4]]
    game.table[((4, 1), "red")] = 1  # the captured red ball turns up on the board again
    game.feed(ShotStarted(t=game.tick(), id=game.event_id(), player="red"))
    out = game.feed(TableSettled(t=game.tick(), id=game.event_id(), snapshot=game.snapshot()))
    assert not kinds(out, K.FOUL)
    assert any(d.kind is K.WARNING and d.flagged and "(4,1)" in d.summary for d in out)
