"""One test per Star Cluster Ball rule clause (docs/rules.md), played through the engine."""

import pytest
from scb_helpers import Log, cfg, kinds, points, run, snap

from rules.decisions import DecisionKind as K
from rules.engine import PendingChoice
from rules.errors import InputError
from rules.events import BallLifted, Location, Place, RoundEnd, ShotStarted, TableMovement, TableSettled, UmpireFoul


def turns(decisions):
    return [d.player for d in kinds(decisions, K.TURN)]


def shots(decisions):
    return [dict(d.data)["outcome"] for d in kinds(decisions, K.SHOT)]


# ---------------------------------------------------------------- SCB-3 core gameplay


def test_scb_3_1_game_starts_with_the_right_hand_side():
    """SCB-3.1 "The Game starts with the player on the right-hand Side." (blue is listed first but plays left)."""
    log = Log(players=(("blue", "left"), ("red", "right")))
    engine, out = run(log.events, close=False)
    assert engine.standings().to_play == "red"
    assert kinds(out, K.PHASE)[0].player == "red"


def test_scb_3_1_round_two_starts_with_the_other_side_by_default_and_is_configurable():
    """SCB-3.1 reading: round 2 is started by the left side (config round_starters, default right, left)."""
    log = Log().round_start().round_end()
    engine, _ = run(log.events, close=False)
    assert engine.standings().to_play == "blue"
    engine, _ = run(log.events, cfg(round_starters=["right"]), close=False)
    assert engine.standings().to_play == "red"


def test_scb_3_2_player_continues_while_scoring():
    """SCB-3.2 "A player continues taking shots until they fail to score"."""
    log = Log().shot("red@1.0").shot("red@1.0", "red@1.1")
    engine, out = run(log.events, close=False)
    assert shots(out) == ["scored", "scored"] and turns(out) == []
    assert engine.standings().to_play == "red"
    assert points(out, "red") == 1 + (1 + 1)  # P1/0 alone, then P1/1 chained: base 1 + chain 1


def test_scb_3_4_failing_to_score_ends_the_turn():
    """SCB-3.4 "Once a player fails to score, their turn ends and the opponent begins their turn"."""
    log = Log().shot("red@play")
    engine, out = run(log.events, close=False)
    assert shots(out) == ["failed"] and turns(out) == ["blue"]


def test_scb_3_3_grouping_ends_the_turn():
    """SCB-3.3/SCB-5.4 "A ball that results in Grouping (does not score) immediately ends the player's turn"."""
    log = Log().shot("red@grouped")
    engine, out = run(log.events, close=False)
    assert shots(out) == ["grouped"] and turns(out) == ["blue"]
    assert points(out, "red") == 0


@pytest.mark.parametrize("setting, ends", [("unless_scored", False), ("always", True)])
def test_scb_3_3_grouping_in_a_shot_that_also_scored(setting, ends):
    """SCB-3.3 reading: a shot that groups one ball but lands another scores; switch grouping_ends_turn."""
    log = Log().shot("red@grouped").shot("red@grouped", "blue@1.0", "blue@grouped")  # blue: grouped + slot
    engine, out = run(log.events, cfg(grouping_ends_turn=setting), close=False)
    assert shots(out)[-1] == "scored"
    assert points(out, "blue") == 1
    assert (engine.standings().to_play == "red") is ends


def test_scb_3_5_play_line_crossing_voids_the_shot():
    """SCB-3.5/SCB-5.2 "If any part of the body crosses the Play Line during a shot, the shot is void. The ball is
    removed for the remainder of the Round." Default void_shot_displaced=restore."""
    log = Log().shot("red@3.0").shot("red@3.0", "red@3.1", void=True)
    engine, out = run(log.events, close=False)
    assert shots(out) == ["scored", "void"]
    assert points(out, "red") == 5  # the void shot's chain is not scored
    assert turns(out) == ["blue"]
    assert engine.state().hand["red"] == 10 - 1 - 1  # one ball in P3/0, the foul ball out
    foul = kinds(out, K.FOUL)[0]
    assert foul.rule == "SCB-3.5"
    assert kinds(out, K.BALL_REMOVED)[0].rule == "SCB-5.2"


def test_scb_5_2_void_shot_restore_lists_balls_to_put_back():
    """SCB-5.2 restore: the FOUL lists the displaced balls to put back; the umpire's restored table matches."""
    log = (Log().shot("red@2.0").shot("red@2.0", "red@play")  # red scores 2, then misses: blue to play
           .shot("red@2.1", "blue@2.0", void=True)  # blue's void shot knocks red 2.0 -> 2.1
           .settle("red@2.0"))  # the umpire put red back and lifted blue's foul ball
    engine, out = run(log.events, close=False)
    foul = kinds(out, K.FOUL)[0]
    assert dict(foul.data)["restore"] == ["red to P2/slot 0", "lift red from P2/slot 1"]
    assert engine.state().board == {(2, 0): "red"} and engine.state().hand["blue"] == 9
    assert not kinds(out, K.WARNING) and points(out, "blue") == 0


def test_scb_5_2_unlifted_foul_ball_never_scores_or_counts_as_knocked_in():
    """SCB-5.2: a foul ball left lying in a slot is out: it neither scores nor makes a later shot a foul."""
    log = (Log().shot("red@2.0").shot("red@2.0", "red@play")
           .shot("red@2.0", "blue@2.2", void=True)  # blue's foul ball lands in P2/2 and stays there
           .shot("red@2.0", "red@2.1", "blue@2.2"))  # red: 2.1 chains with 2.0
    engine, out = run(log.events, close=False)
    assert points(out, "blue") == 0
    assert points(out, "red") == 2 + (2 + 2)
    assert not [d for d in kinds(out, K.FOUL) if d.rule == "SCB-5.7"]
    assert engine.standings().to_play == "red"


def test_scb_5_2_void_shot_stand_leaves_balls_where_they_went_without_points():
    """SCB-5.2 reading void_shot_displaced=stand: balls stay; nothing from the void shot ever scores."""
    log = (Log().shot("red@3.0").shot("red@3.0", "red@play")  # red scores 5, then misses
           .shot("red@3.1", "blue@2.0", void=True)  # blue's void shot: red 3.0 -> 3.1, foul ball in P2/0
           .shot("red@3.1", "blue@2.0", "red@play")  # red misses (P2/0 still holds the unlifted foul ball)
           .shot("red@3.1", "blue@2.0", "blue@2.1"))
    engine, out = run(log.events, cfg(void_shot_displaced="stand"), close=False)
    # the void shot moved red 3.0 -> 3.1: red keeps 5 (kept reading), blue's foul ball at 2.0 is removed
    assert points(out, "red") == 5
    assert (2, 0) not in engine.state().board or engine.state().board[(2, 0)] != "blue"
    assert (3, 1) in engine.state().dead  # landed during the void shot: stays, never scores
    assert points(out, "blue") == 2  # 2.1 alone: the removed foul ball at 2.0 does not chain
    assert not kinds(out, K.WARNING)


def test_scb_3_6_highest_total_wins_the_game():
    """SCB-3.6 "The player or team with the highest total score at the end of the Game wins"."""
    # round 1: red 1 (P1) + 9 remaining, blue 10 remaining; round 2: 10 remaining each -> 20 : 20, a tie
    log = Log().shot("red@1.0").round_end().round_start().round_end()
    engine, out = run(log.events, close=False)
    s = engine.standings()
    assert s.games[0].totals == {"red": 20, "blue": 20} and not s.complete
    # with P3 instead: red 5 + 9 + 10 = 24 against blue 20
    log = Log().shot("red@3.0").round_end().round_start().round_end()
    engine, out = run(log.events, close=False)
    s = engine.standings()
    assert s.games[0].totals == {"red": 5 + 9 + 10, "blue": 20} and s.winners == ("red",) and s.complete
    assert kinds(out, K.GAME_RESULT)[0].player == "red"


# ---------------------------------------------------------------- SCB-4.5 points kept or lost


def test_scb_4_5_points_are_kept_when_a_ball_is_knocked_out_by_default():
    """SCB-4.5 reading (knocked_out_ball_loses_points=false): points are won when a ball lands and kept."""
    log = Log().shot("red@3.0").shot("red@play", player="red")
    engine, out = run(log.events, close=False)
    assert points(out, "red") == 5


def test_scb_4_5_knocked_out_ball_loses_points_switch():
    """SCB-4.5 switch knocked_out_ball_loses_points=true: slot points follow the board; a knock-out is negative."""
    log = Log().shot("red@3.0", "red@3.1").shot("red@3.0", "red@play")
    engine, out = run(log.events, cfg(knocked_out_ball_loses_points=True), close=False)
    negative = [d for d in kinds(out, K.SCORE) if d.points < 0]
    assert len(negative) == 1 and negative[0].points == -10
    assert points(out, "red") == 5


# ---------------------------------------------------------------- SCB-5 ball states


def test_scb_5_1_gutter_ball_is_out_for_the_round_and_back_next_round():
    """SCB-5.1 "If a ball enters a Gutter, it is ... removed for the remainder of the Round. The ball returns to the
    player at the start of the next Round."""
    log = Log().shot("red@gutter")
    engine, out = run(log.events, close=False)
    assert engine.state().hand["red"] == 9 and shots(out) == ["gutter"]
    assert kinds(out, K.BALL_REMOVED)[0].rule == "SCB-5.1"
    log.add(BallLifted, 1.0, owner="red", at=Location(Place.GUTTER)).round_end()
    engine, out = run(log.events, close=False)
    assert engine.state().hand["red"] == 10  # round 2: all balls back
    assert engine.standings().games[0].rounds[0].scores == {"red": 9, "blue": 10}


def test_scb_5_1_ball_staying_in_the_gutter_is_counted_once():
    """SCB-5.1: a gutter ball seen again in later snapshots is not removed twice."""
    log = Log().shot("red@gutter").shot("red@gutter", "blue@1.0").shot("red@gutter", "blue@1.0", "blue@1.1")
    engine, _ = run(log.events, close=False)
    assert engine.state().hand["red"] == 9


def test_scb_5_3_returned_ball_remains_in_play():
    """SCB-5.3 "If a ball rolls back down the table without entering a Gutter or leaving the Play Area, it remains
    in play": it is back in the hand."""
    log = Log().shot("red@play")
    engine, out = run(log.events, close=False)
    assert engine.state().hand["red"] == 10
    assert kinds(out, K.BALL_RETURNED)[0].rule == "SCB-5.3"


def test_scb_5_4_grouped_ball_stays_in_play_but_does_not_score():
    """SCB-5.4 "Grouped balls remain in play but do not score" (not in hand either)."""
    log = Log().shot("red@grouped")
    engine, out = run(log.events, close=False)
    assert engine.state().hand["red"] == 9 and points(out, "red") == 0


def test_scb_5_5_returned_grouped_ball_goes_back_to_hand():
    """SCB-5.5 "If a Grouped ball returns to the Play Area ... the player may return that ball to their hand"."""
    log = Log().shot("red@grouped").shot("red@play", "blue@play")
    engine, out = run(log.events, close=False)
    assert engine.state().hand["red"] == 10
    assert any(d.player == "red" and d.kind is K.BALL_RETURNED for d in out)
    assert shots(out)[-1] == "failed"
    assert not kinds(out, K.FOUL)


def test_scb_5_6_deliberate_table_movement_removes_the_movers_moved_balls():
    """SCB-5.6 "All affected balls belonging to that player are removed from play for the remainder of the Round.
    Any balls returned to the opponent may be retained by the opponent."""
    log = (Log().shot("red@1.0").shot("red@1.0", "red@play")  # red scores 1, then misses
           .shot("red@1.0", "blue@1.1")  # blue scores 1
           .shot("red@2.0", "blue@play", "blue@play", movement=12.0))  # blue shoves the table
    engine, out = run(log.events, close=False)
    foul = [d for d in kinds(out, K.FOUL) if d.rule == "SCB-5.6"]
    assert len(foul) == 1 and foul[0].flagged and foul[0].player == "blue"
    # blue's shot ball and blue's ball shaken out of P1/1 both moved (to the play area): both removed;
    # red's ball shaken from P1/0 into P2/0 scores for red (SCB-5.7) and stays; red keeps the 1 from P1/0
    assert engine.state().out["blue"] == 2 and engine.state().hand["blue"] == 8
    assert points(out, "red") == 1 + 2 and engine.state().board == {(2, 0): "red"}
    assert engine.standings().to_play == "red" and not kinds(out, K.WARNING)


def test_scb_5_6_small_table_movement_is_only_a_warning():
    """SCB-5.6: a movement below table_movement_foul_mm is a flagged WARNING, not a foul."""
    log = Log().add(TableMovement, 1.0, magnitude_mm=2.0).shot("red@1.0")
    engine, out = run(log.events, close=False)
    assert not kinds(out, K.FOUL) and kinds(out, K.WARNING)[0].rule == "SCB-5.6"
    assert points(out, "red") == 1


def test_scb_5_7_knocking_opponent_ball_into_a_position_is_a_foul_and_scores_for_the_opponent():
    """SCB-5.7 "The shooting player scores any points they earned with their own balls, then their turn ends (foul
    committed). The opponent scores points from the displaced ball ... and then takes control of the turn."""
    log = Log().shot("red@grouped").shot("red@2.1", "blue@2.0")  # blue's shot
    engine, out = run(log.events, close=False)
    # blue lands 2.0 (2 points) and knocks red's grouped ball into 2.1 (2 points for red)
    assert points(out, "blue") == 2 and points(out, "red") == 2
    foul = kinds(out, K.FOUL)[-1]
    assert foul.rule == "SCB-5.7" and foul.player == "blue"
    assert engine.standings().to_play == "red" and not kinds(out, K.WARNING)


def test_scb_5_8_displaced_opponent_ball_returned_to_hand_is_no_foul():
    """SCB-5.8 "If the opponent's ball does not land in a scoring position and is simply returned to their hand
    or side, no foul is committed. The original player may continue their turn as normal."""
    log = Log().shot("red@grouped").shot("red@play", "blue@1.0")
    engine, out = run(log.events, close=False)
    assert not kinds(out, K.FOUL)
    assert engine.standings().to_play == "blue"
    assert engine.state().hand["red"] == 10


# ---------------------------------------------------------------- SCB-6 out of balls, remaining balls


def test_scb_6_1_running_out_of_balls_ends_the_turn_and_the_opponent_chooses():
    """SCB-6.1 "If a player has no balls remaining during their turn, their turn ends immediately. The opponent
    must then choose": bank or Final Sequence."""
    log = Log().shot("red@1.0").shot("red@1.0", "red@1.2")
    engine, out = run(log.events, cfg(balls_per_player=2), close=False)
    choice = kinds(out, K.CHOICE_REQUIRED)
    assert len(choice) == 1 and choice[0].player == "blue"
    assert "waiting for blue's choice" in engine.standings().status
    state = engine.state()
    assert state.pending_choice == PendingChoice("blue", ("bank", "final_sequence"), "red has no balls left")
    assert state.hand == {"red": 0, "blue": 2} and state.balls_to_play == state.hand and state.to_play == "blue"
    assert state.board == {(1, 0): "red", (1, 2): "red"} and state.live == {"red": {(1, 0), (1, 2)}, "blue": set()}


def test_scb_6_2_bank_scores_one_point_per_ball_in_hand_and_ends_the_round():
    """SCB-6.2 "Bank Points: End their turn and bank the points in their hand (1 point per ball)"."""
    log = Log().shot("red@1.0").shot("red@1.0", "red@1.2").choice("blue", "bank")
    engine, out = run(log.events, cfg(balls_per_player=2), close=False)
    assert points(out, "blue") == 2 and points(out, "red") == 2
    assert engine.standings().games[0].rounds[0].complete
    state = engine.state()  # round 2: full hands, empty board, nothing awaited, its clock not started
    assert state.pending_choice is None and state.round_number == 2 and state.round_started_at is None
    assert state.hand == {"red": 2, "blue": 2} and not state.board and state.banked is None
    assert [d.rule for d in kinds(out, K.SCORE) if d.player == "blue"] == ["SCB-6.2"]


def test_scb_6_2_choice_by_the_wrong_player_is_an_input_error():
    """SCB-6.1: only the opponent of the player who ran out chooses; a choice by the other is an InputError."""
    log = Log().shot("red@1.0").shot("red@1.0", "red@1.2").choice("red", "bank")
    with pytest.raises(InputError, match=r"event E\d+: .*blue's choice"):
        run(log.events, cfg(balls_per_player=2))


def test_scb_6_3_remaining_balls_score_one_each_but_grouped_balls_do_not():
    """SCB-6.3 "If a player has any remaining balls at the end of the Round, they score 1 point per ball. Balls
    that are Grouped do not count toward this bonus."""
    log = Log().shot("red@grouped").shot("red@grouped", "blue@gutter").round_end()
    engine, out = run(log.events, close=False)
    # red: 10 − 1 grouped = 9; blue: 10 − 1 gutter = 9
    assert engine.standings().games[0].rounds[0].scores == {"red": 9, "blue": 9}


def test_scb_6_4_round_ends_when_both_players_are_out_of_balls():
    """SCB-6.4 reading: when both players are out of balls, nobody can choose: the round ends."""
    log = Log().shot("red@grouped").shot("red@grouped", "blue@grouped")  # one ball each, both grouped
    engine, out = run(log.events, cfg(balls_per_player=1), close=False)
    assert kinds(out, K.ROUND_RESULT) and "both players are out" in kinds(out, K.ROUND_RESULT)[0].summary


# ---------------------------------------------------------------- SCB-7 Final Sequence


def final_sequence_log() -> Log:
    """2 balls each: red lands both (turn ends for lack of balls), blue chooses the Final Sequence."""
    return Log().shot("red@1.0").shot("red@1.0", "red@1.2").choice("blue", "final_sequence")


def test_scb_7_1_final_sequence_plays_each_remaining_ball_once():
    """SCB-7.1 "The player may play all remaining balls, one at a time ... until all balls have been played once"."""
    log = final_sequence_log().shot("red@1.0", "red@1.2", "blue@play").shot("red@1.0", "red@1.2", "blue@3.0")
    engine, out = run(log.events, cfg(balls_per_player=2), close=False)
    # blue's first ball returned: discarded (SCB-7.2), the second lands in P3: 5; then the sequence is over
    assert points(out, "blue") == 5
    assert engine.standings().games[0].rounds[0].complete
    assert any(d.rule == "SCB-7.2" for d in kinds(out, K.BALL_REMOVED))


def test_scb_7_3_both_players_score_from_knocked_balls_and_7_4_foul_ends_the_sequence():
    """SCB-7.3 "Both players may score from any balls knocked into scoring Astrolabe Positions"; SCB-7.4 "If a foul
    is committed (including causing an opponent's ball to score), the sequence ends immediately"; SCB-7.5 "Any balls
    remaining in the player's hand at the time of the foul do not score"."""
    log = final_sequence_log().shot("red@1.1", "red@1.2", "blue@1.0")
    engine, out = run(log.events, cfg(balls_per_player=2), close=False)
    # blue lands 1.0 (1) and knocks red 1.0 -> 1.1: red chain 1.1-1.2 is new for 1.1: 1 base + 1 chain = 2
    assert points(out, "blue") == 1
    assert points(out, "red") == 2 + 2
    assert engine.standings().games[0].rounds[0].complete
    assert any(d.rule == "SCB-7.5" for d in out)  # blue's last ball scores nothing


# ---------------------------------------------------------------- SCB-2 clock


def test_scb_2_2_clock_from_events_ends_the_round_after_six_minutes():
    """SCB-2.2 "Each Game consists of two 6-minute Rounds": with clock=events the round ends at start + 360 s,
    and a shot started before the buzzer still counts."""
    log = Log().shot("red@1.0", dt=10.0)  # starts the round at t=10
    log.shot("red@1.0", "red@1.1", dt=345.0)  # starts at 360.5 < 370, settles after the buzzer: counts
    log.shot("red@1.0", "red@1.1", dt=20.0)  # next round already: blue is to play
    engine, out = run(log.events, close=False)
    rounds = engine.standings().games[0].rounds
    assert rounds[0].scores == {"red": 1 + 2 + 8, "blue": 10}
    assert kinds(out, K.ROUND_RESULT)[0].t == pytest.approx(370.0)
    # round 2 began with the shot after the buzzer (t=379): its clock starts there; that shot put 2 red balls in
    state = engine.state()
    assert (state.round_number, state.round_started_at, state.round_ended_at) == (2, 379.0, None)
    assert state.round_length_s == 360.0 and state.clock_counts_down and state.hand == {"red": 8, "blue": 10}
    assert state.shot_in_progress is False


def test_scb_2_2_round_clock_in_state_from_start_to_the_final_result():
    """SCB-2.2: state() tells when the round's clock started (round_start or first shot), and, once the last
    round got its result, when it ended; a new round has not started until its round_start or first shot."""
    c = cfg(rounds_per_game=1, round_seconds=60)
    engine, _ = run(Log().events, c, close=False)
    assert engine.state().round_started_at is None and engine.state().round_length_s == 60.0
    log = Log().round_start()  # t=1
    engine, _ = run(log.events, c, close=False)
    assert (engine.state().round_started_at, engine.state().round_ended_at) == (1.0, None)
    log.shot("red@2.0", dt=5.0)  # red 2 points at t=6..8
    engine, out = run(log.events, c)  # close at t=8: the round is still running
    assert not kinds(out, K.ROUND_RESULT) and engine.state().round_ended_at is None
    engine, out = run(log.events + [RoundEnd(200.0, "LATE")], c)  # time ran out at 61 before the round_end
    state = engine.state()
    assert kinds(out, K.ROUND_RESULT)[0].t == 61.0 and state.complete
    assert (state.round_started_at, state.round_ended_at, state.round_number) == (1.0, 61.0, 1)
    assert state.to_play is None and state.pending_choice is None


def test_scb_2_2_umpire_clock_only_round_end_ends_a_round():
    """SCB-2.2 switch clock=umpire: the engine never ends a round from timestamps."""
    log = Log().shot("red@1.0", dt=10.0).shot("red@1.0", "red@1.1", dt=1000.0)
    engine, out = run(log.events, cfg(clock="umpire"))
    assert not kinds(out, K.ROUND_RESULT)
    assert points(out, "red") == 3


# ---------------------------------------------------------------- SCB-8 competition rules


def test_scb_8_1_umpire_foul_by_the_shooter_voids_the_shot_and_free_shot_for_the_opponent():
    """SCB-8.1 "Fouls: Interference, playing beyond the Play Line, or touching a moving ball results in a penalty.
    The opponent may be awarded a free shot."""
    log = Log().shot("red@1.0", foul="touching_moving_ball", player="red", free_shot=True)
    log.shot("red@play", "blue@play", player="blue")  # blue misses but the free shot keeps the turn
    engine, out = run(log.events, close=False)
    assert points(out, "red") == 0 and shots(out) == ["void", "failed"]
    assert engine.standings().to_play == "blue"
    assert any(d.rule == "SCB-8.1" and "free shot" in d.summary for d in kinds(out, K.PHASE))


def test_scb_8_1_umpire_foul_between_shots_ends_the_foulers_turn():
    """SCB-8.1: an interference foul by the player to play, between shots, ends their turn."""
    log = Log().shot("red@1.0").add(UmpireFoul, 1.0, player="red", foul="interference")
    engine, out = run(log.events, close=False)
    assert engine.standings().to_play == "blue" and points(out, "red") == 1


def test_scb_8_2_tie_goes_to_a_three_minute_round_first_to_score_wins():
    """SCB-8.2 "Tie Resolution: An additional 3-minute Round is played; first to score wins"."""
    log = Log().round_start().round_end().round_start().round_end()
    log.shot("red@play", dt=2.0).shot("red@play", "blue@2.0", player="blue")
    engine, out = run(log.events, close=False)
    s = engine.standings()
    assert s.games[0].rounds[-1].tiebreak and s.winners == ("blue",) and s.complete
    assert s.games[0].totals == {"red": 20, "blue": 22}


@pytest.mark.parametrize("setting, complete", [("another_round", False), ("shared", True)])
def test_scb_8_2_tie_break_with_no_score(setting, complete):
    """SCB-8.2 reading tiebreak_no_score: nobody scored in the tie-break -> another tie-break, or a shared win."""
    log = Log().round_start().round_end().round_start().round_end().round_start().round_end()
    engine, out = run(log.events, cfg(tiebreak_no_score=setting), close=False)
    s = engine.standings()
    assert s.complete is complete
    if complete:
        assert s.winners == ("red", "blue")
    else:
        assert [r.tiebreak for r in s.games[0].rounds] == [False, False, True, True]
        assert s.to_play == "blue"  # the second tie-break is started by the other side


# ---------------------------------------------------------------- SCB-9 match play


def test_scb_9_1_target_score_ends_the_game_the_moment_it_is_reached():
    """SCB-9.1 "Each Game ends when a player or team reaches the target score"."""
    log = Log().shot("red@3.0").shot("red@3.0", "red@3.1").shot("red@3.0", "red@3.1", "red@2.0")
    engine, out = run(log.events, cfg(target_score=15), close=False)
    s = engine.standings()
    assert s.complete and s.winners == ("red",) and s.games[0].totals["red"] == 15
    assert len(kinds(out, K.SHOT)) == 2  # the third shot comes after the end: ignored


def test_scb_9_1_target_reached_with_remaining_balls_ends_the_game_at_round_end():
    """SCB-9.1: with a target, rounds continue until someone reaches it; remaining balls count towards it."""
    log = Log().shot("red@3.0").round_end()  # round 1: red 5 + 9 = 14, blue 10
    engine, _ = run(log.events, cfg(target_score=20), close=False)
    assert not engine.standings().complete and len(engine.standings().games[0].rounds) == 2
    log.round_start().round_end()  # round 2: 10 each -> red 24, blue 20: both reached, red is higher
    engine, out = run(log.events, cfg(target_score=20), close=False)
    assert engine.standings().winners == ("red",) and engine.standings().complete


def test_scb_9_1_target_round_limit_falls_back_to_highest_total():
    """SCB-9.1 reading: with target_round_limit, a game where nobody reaches the target ends on the highest total."""
    log = Log().shot("red@3.0").round_end()
    engine, _ = run(log.events, cfg(target_score=100, target_round_limit=1), close=False)
    assert engine.standings().winners == ("red",)


def test_scb_9_2_best_of_three_continues_until_a_majority():
    """SCB-9.2 "Matches may follow a best-of format ... The player or team winning the most Games wins"."""
    log = Log()
    for _ in range(2):  # red wins two games by 5 points in round 1
        log.shot("red@3.0").round_end().round_start().round_end()
    engine, out = run(log.events, cfg(best_of=3), close=False)
    s = engine.standings()
    assert s.match_wins == {"red": 2, "blue": 0} and s.complete and s.winners == ("red",)
    assert len(kinds(out, K.MATCH_RESULT)) == 1 and len(s.games) == 2


# ---------------------------------------------------------------- SCB-10 optional rules


def test_scb_10_1_grand_slam_finish_ends_the_round():
    """SCB-10.1 "Grand Slam Finish: Scoring a Grand Slam immediately ends the current Round"."""
    log = Log().shot("red@3.0").shot("red@3.0", "red@3.1").shot("red@3.0", "red@3.1", "red@3.2")
    engine, out = run(log.events, cfg(optional_rules={"grand_slam_finish": True}), close=False)
    first = engine.standings().games[0].rounds[0]
    assert first.complete and first.scores == {"red": 50 + 7, "blue": 10}
    engine, out = run(log.events, close=False)
    assert not engine.standings().games[0].rounds[0].complete


@pytest.mark.parametrize("needs_this_shot, removed", [(True, False), (False, True)])
def test_scb_10_2_blocking_removes_a_flanked_opponent_ball(needs_this_shot, removed):
    """SCB-10.2 "If a player places balls on both sides of an opponent's ball within the same Astrolabe Position,
    that ball is removed for the Round"; switch blocking_needs_this_shot."""
    rules = {"blocking": True, "blocking_needs_this_shot": needs_this_shot}
    log = Log().shot("red@1.0").shot("red@1.0", "red@1.2").shot("red@1.0", "red@1.2", "red@play")
    log.shot("red@1.0", "red@1.2", "blue@1.1", player="blue")  # blue's own ball lands between: blocked?
    engine, out = run(log.events, cfg(optional_rules=rules), close=False)
    assert ((1, 1) in engine.state().board) is not removed
    log2 = (Log().shot("red@1.0").shot("red@1.0", "red@play")  # red scores, then misses
            .shot("red@1.0", "blue@1.1").shot("red@1.0", "blue@1.1", "blue@play")  # blue scores, then misses
            .shot("red@1.0", "blue@1.1", "red@1.2"))  # red closes the sandwich
    engine, out = run(log2.events, cfg(optional_rules=rules), close=False)
    assert not kinds(out, K.WARNING)
    assert (1, 1) not in engine.state().board  # created by this shot: removed under both settings
    assert any(d.rule == "SCB-10.2" for d in kinds(out, K.BALL_REMOVED))


def test_scb_10_4_dead_ball_rule_in_the_second_half_of_the_round():
    """SCB-10.4 "Balls entering designated areas in the second half of a Round may score no points"."""
    rules = {"dead_ball": {"positions": [3], "from_fraction": 0.5}}
    log = Log().shot("red@3.0", dt=1.0).shot("red@3.0", "red@3.1", dt=200.0)
    engine, out = run(log.events, cfg(optional_rules=rules), close=False)
    assert points(out, "red") == 5  # the second ball landed at t > 1 + 180 in a dead area: nothing
    assert shots(out) == ["scored", "failed"] and (3, 1) in engine.state().dead


# ---------------------------------------------------------------- SCB-11 input


def test_scb_11_1_ball_owner_that_is_not_a_player_is_an_input_error():
    """SCB-11.1: a snapshot ball of a colour that is not a player raises InputError naming the event."""
    log = Log().shot("green@1.0")
    with pytest.raises(InputError, match=r"^event E2: ball owner 'green' is not a player"):
        run(log.events)


def test_scb_11_1_event_before_game_start_is_an_input_error():
    """SCB-11.1: an event before game_start raises InputError."""
    with pytest.raises(InputError, match="^event X1: round_end comes before game_start"):
        run([RoundEnd(1.0, "X1")])


def test_scb_11_1_too_many_balls_of_a_colour_is_an_input_error():
    """SCB-11.1: a snapshot with more balls of a colour than that player owns raises InputError."""
    log = Log().shot("red@1.0", "red@1.1", "red@1.2")
    with pytest.raises(InputError, match="3 red balls but each player has 2"):
        run(log.events, cfg(balls_per_player=2))


def test_scb_11_1_two_balls_in_one_slot_is_an_input_error():
    """SCB-11.1: a slot holds one ball."""
    with pytest.raises(InputError, match="two balls in P1/slot 0"):
        run(Log().shot("red@1.0", "blue@1.0").events)


def test_scb_11_2_shot_by_the_player_not_to_play_is_followed_and_flagged():
    """SCB-11.2: "a shot by the player who is not to play" is followed, with a flagged WARNING."""
    log = Log().shot("blue@1.0", player="blue")
    engine, out = run(log.events, close=False)
    assert points(out, "blue") == 1
    warning = kinds(out, K.WARNING)[0]
    assert warning.flagged and "red is to play" in warning.summary


def test_scb_11_2_board_change_without_a_shot_is_flagged_not_scored():
    """SCB-11.2: a settle outside a shot that changes the board updates the state, flagged, no points."""
    log = Log().shot("red@1.0").settle("red@1.0", "red@1.1")
    engine, out = run(log.events, close=False)
    assert points(out, "red") == 1 and kinds(out, K.WARNING)[0].flagged


def test_scb_5_6_table_movement_between_shots_is_charged_to_the_player_to_play():
    """SCB-5.6: a movement between shots is attributed to the player to play; the next settle applies it."""
    log = Log().shot("red@1.0").shot("red@1.0", "red@1.1").add(TableMovement, 2.0, magnitude_mm=9.0)
    log.settle("red@1.0", "red@play")  # red's P1/1 ball shaken back to the play area
    engine, out = run(log.events, close=False)
    assert kinds(out, K.FOUL)[0].rule == "SCB-5.6" and engine.state().out["red"] == 1
    assert engine.standings().to_play == "blue" and points(out, "red") == 3  # points kept (SCB-4.5)


def test_scb_3_5_umpire_play_line_foul_voids_the_shot():
    """SCB-3.5: an umpire_foul of kind play_line during the shot voids it like a detected crossing."""
    log = Log().shot("red@3.0", foul="play_line", player="red")
    engine, out = run(log.events, close=False)
    assert shots(out) == ["void"] and points(out, "red") == 0 and engine.state().hand["red"] == 9


def test_scb_6_1_shot_while_a_choice_is_awaited_is_taken_as_final_sequence():
    """SCB-6.1 reading: a shot before the choice is logged means the chooser plays on: Final Sequence, flagged."""
    log = Log().shot("red@1.0").shot("red@1.0", "red@1.2").shot("red@1.0", "red@1.2", "blue@3.0")
    engine, out = run(log.events, cfg(balls_per_player=2), close=False)
    assert any(d.rule == "SCB-6.1" and d.flagged for d in kinds(out, K.WARNING))
    assert any(dict(d.data).get("phase") == "final_sequence" for d in kinds(out, K.PHASE))
    assert points(out, "blue") == 5


def test_scb_11_2_low_confidence_snapshot_is_flagged():
    """SCB-11.2: a low-confidence snapshot is followed but flagged for the umpire."""
    log = Log().add(ShotStarted, 1.0)
    log.add(TableSettled, 2.0, snapshot=snap("red@1.0"), confidence=0.3)
    engine, out = run(log.events, close=False)
    assert points(out, "red") == 1 and kinds(out, K.WARNING)[0].confidence == 0.3


def test_scb_10_3_multiplier_zone_in_play():
    """SCB-10.3: a ×2 Position 3 doubles a P3 ball's points in the engine's SCORE breakdown."""
    log = Log().shot("red@3.0")
    engine, out = run(log.events, cfg(optional_rules={"multipliers": {"3": 2}}), close=False)
    score = kinds(out, K.SCORE)[0]
    assert score.points == 10 and [i.label for i in score.breakdown] == ["P3 base", "P3 multiplier zone"]


def test_scb_standings_status_line():
    """Standings: the status names the round, the time left and who is to play, or the choice awaited."""
    engine, _ = run(Log().shot("red@1.0", dt=10.0).events, close=False)
    # the round began with the shot at t=10; the settle came at t=12: 358 s left
    assert engine.standings().status == "game 1, round 1, 05:58 left, red to play"


def test_scb_1_1_sides_default_to_right_then_left():
    """SCB-1.1 reading: without sides in game_start, the first listed player is on the right-hand side."""
    log = Log(players=(("blue", None), ("red", None)))
    engine, _ = run(log.events, close=False)
    assert engine.standings().to_play == "blue"
