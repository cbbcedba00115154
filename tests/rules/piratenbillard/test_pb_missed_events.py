"""PB-7.5: a settled table that only a missed event explains is read the way the table supports, and flagged.

Each test plays a game on the simulated table of pb_helpers, where the vision saw no `ball_lifted`: the
players' lifts are known to the engine only from later snapshots.
"""

from __future__ import annotations

import json

from referee.cli import main
from rules.decisions import DecisionKind as K
from rules.piratenbillard import Lift
from rules.replay import read_log, replay

from pb_helpers import OFF, Game, ball_count, kinds, only

TWO = [("red", 0), ("blue", 2)]
THREE = [("red", 0), ("blue", 1), ("green", 2)]


def reading_warnings(decisions):
    return [d for d in decisions if d.kind is K.WARNING and d.rule == "PB-7.5"]


def revenge_after_an_unseen_lift() -> tuple[Game, list]:
    """blue captures red on (5,4); the players lift the red ball but no `ball_lifted` is logged; red strikes
    onto (5,4) and captures blue there. The table after red's strike shows one red ball on (5,4): the called
    ball left lying (and red's struck ball off the board), or red's struck ball after an unseen lift."""
    game = Game(TWO)
    game.strike("red", (9, 4), (5, 4))
    game.strike("blue", (0, 4), (5, 4))  # blue captures red; the simulated players lift it, unseen
    return game, game.strike("red", (9, 5), (5, 4))


def test_pb_7_5_unseen_lift_the_new_ball_on_the_captured_space_captures_and_is_flagged():
    """The engine used to read the red ball on (5,4) as the captured one not lifted and call red's strike off
    the board. The table supports the landing with no missed event but the unseen lift: red captures blue."""
    game, out = revenge_after_an_unseen_lift()
    shot = only(out, K.SHOT)
    assert dict(shot.data)["outcome"] == "captured" and dict(shot.data)["to"] == [5, 4]
    capture = only(out, K.CAPTURE)
    assert capture.player == "red" and capture.points == 1 and capture.flagged
    assert game.points() == {"red": 1, "blue": 1}
    (warning,) = reading_warnings(out)
    assert warning.flagged and dict(warning.data)["explanation"] == "unseen_lift"
    assert dict(warning.data)["arrived"] == [[5, 4]] and "(5,4)" in warning.summary
    assert not kinds(out, K.BALL_REMOVED) and not any("not lifted yet" in d.summary for d in out)
    assert all(d.flagged for d in out)  # every call of the settle rests on the reading
    state = game.engine.state()
    assert state.board.get(((5, 4), "red")) == 1 and state.out_of_game == {"red": 0, "blue": 0}
    assert state.pending_lifts == (Lift((5, 4), "blue", 1, "red"),) and ball_count(game.engine) == 16


def test_pb_7_5_replay_of_the_log_gives_the_same_decisions(tmp_path):
    """The engine is pure: the log written and replayed (`referee replay`) gives the same calls and scores."""
    game, _ = revenge_after_an_unseen_lift()
    log = tmp_path / "events.jsonl"
    game.write_log(log)
    result = replay(read_log(log), "piratenbillard")
    assert list(result.decisions[: len(game.decisions)]) == game.decisions
    for out in ("a", "b"):
        assert main(["replay", str(log), "--game", "piratenbillard", "--out", str(tmp_path / out), "--quiet"]) == 0
    first = json.loads((tmp_path / "a" / "result.json").read_text())
    assert (tmp_path / "a" / "result.json").read_bytes() == (tmp_path / "b" / "result.json").read_bytes()
    assert first["final_scores"] == {"red": 1, "blue": 1}
    assert [d["summary"] for d in first["decisions"] if d.get("rule") == "PB-7.5"] == [
        d.summary for d in reading_warnings(game.decisions)]


def test_pb_7_5_ball_knocked_onto_the_space_of_an_unseen_lift_moved_not_removed():
    """A ball of the captured colour knocked onto the space of the unseen lift: one missed event (it was knocked
    on) instead of two (the called ball left lying, and the knocked ball gone from the board)."""
    game = Game(THREE)
    game.strike("red", (9, 4), (5, 4))
    game.strike("blue", (4, 0), (5, 4))  # blue captures red on (5,4); lifted, unseen
    del game.table[((9, 5), "red")]
    game.table[((5, 4), "red")] = 1  # green's strike knocks red's (9,5) ball onto (5,4)
    out = game.strike("green", (0, 4), (3, 4))
    assert not kinds(out, K.BALL_REMOVED) and game.engine.state().out_of_game["red"] == 0
    assert any(d.kind is K.WARNING and "from (9,5) to (5,4)" in d.summary for d in out)
    assert game.engine.state().board.get(((5, 4), "red")) == 1 and len(reading_warnings(out)) == 1
    assert ball_count(game.engine) == 24


def test_pb_7_5_a_called_ball_the_table_still_needs_is_not_lifted_yet():
    """The arrival reading is taken only where the table allows it: red's struck ball seen elsewhere leaves the
    ball on (5,4) to be the called one, not lifted yet, with no missed event assumed."""
    game = Game(TWO)
    game.strike("red", (9, 4), (5, 4))
    game.strike("blue", (0, 4), (5, 4), lift=False)
    out = game.strike("red", (9, 5), (6, 5))
    assert not reading_warnings(out) and any("not lifted yet" in d.summary for d in out)
    assert game.points() == {"red": 0, "blue": 1} and not only(out, K.SHOT).flagged


def test_pb_7_5_two_equally_good_readings_are_flagged_not_guessed():
    """Two red balls called off the board are still shown, on (5,4) and (6,5), and red's strike left (9,6) with
    no other ball seen: the struck ball is on (5,4) or on (6,5), one missed event each. Nothing is guessed: both
    stay not lifted yet, the strike is called as before (off the board), and the warning names both readings."""
    game = Game(TWO)
    game.strike("red", (9, 4), (5, 4))
    game.strike("blue", (0, 4), (5, 4), lift=False)  # captures red on (5,4), left lying
    game.strike("red", (9, 5), (6, 5))
    game.strike("blue", (0, 5), (6, 5), lift=False)  # captures red on (6,5), left lying
    out = game.strike("red", (9, 6), OFF)
    (warning,) = reading_warnings(out)
    assert warning.flagged and dict(warning.data)["explanation"] == "ambiguous"
    assert dict(warning.data)["readings"] == [
        "1 red ball at (5,4) arrived there after an unseen lift, 1 red ball at (6,5) not lifted yet",
        "1 red ball at (5,4) not lifted yet, 1 red ball at (6,5) arrived there after an unseen lift"]
    assert dict(only(out, K.SHOT).data)["outcome"] == "out" and not kinds(out, K.CAPTURE)
    assert all(d.flagged for d in out) and game.points() == {"red": 0, "blue": 2}
    assert sorted(game.engine.state().pending_lifts) == [Lift((5, 4), "red", 1, "blue"),
                                                          Lift((6, 5), "red", 1, "blue")]


def test_pb_7_5_a_ball_read_gone_unstruck_and_seen_again_on_its_space_was_hidden_not_gone():
    """piratenbillard_v3: an arm reaching over north's row hid green's ball at (0,5) from the reading after
    another player's strike, and the engine took it off the board for good (out of the game). Every later reading
    showed it again and was told "unexpected, ignored"; on green's next strike the engine took that ball for the
    landing, and the real landing on the opposite starting row (a secure, +3) was ignored. Seen again on its own
    space with nothing to explain it, the ball was hidden, not gone: it is back on the board, flagged, and the next
    strike lands where the table shows."""
    game = Game(THREE)
    hidden = game.table.pop(((0, 5), "green"))
    out = game.strike("red", (9, 4), (5, 4))  # the reading after red's strike misses (0,5)
    assert only(out, K.BALL_REMOVED).flagged and game.engine.state().out_of_game["green"] == 1
    game.table[((0, 5), "green")] = hidden  # seen again from the next reading on
    out = game.strike("blue", (3, 0), (6, 6))
    (back,) = reading_warnings(out)
    assert back.flagged and dict(back.data)["explanation"] == "hidden_not_gone" and "(0,5)" in back.summary
    state = game.engine.state()
    assert state.board.get(((0, 5), "green")) == 1 and state.out_of_game["green"] == 0
    out = game.strike("green", (0, 4), (9, 4))  # green reaches the opposite row, red's emptied space: secured
    shot = only(out, K.SHOT)
    assert dict(shot.data)["to"] == [9, 4] and dict(shot.data)["outcome"] == "secured"
    assert not [d for d in out if "unexpected" in d.summary]


def test_pb_7_5_a_ball_hidden_from_a_reading_and_seen_again_as_the_shooter_strikes_is_not_its_landing():
    """The same, but the hidden ball shows again on the settle of its own player's next strike: two green balls
    arrive and one left. The one back on the space it was read gone from is that ball; the other is the landing
    (the engine took the first in board order, (0,5), for the landing and ignored the secure)."""
    game = Game(THREE)
    hidden = game.table.pop(((0, 5), "green"))
    game.strike("red", (9, 4), (5, 4))
    game.strike("blue", (3, 0), (6, 6))
    game.table[((0, 5), "green")] = hidden
    out = game.strike("green", (0, 4), (9, 4))
    shot = only(out, K.SHOT)
    assert dict(shot.data)["to"] == [9, 4] and dict(shot.data)["outcome"] == "secured"
    assert dict(only(reading_warnings(out), K.WARNING).data)["explanation"] == "hidden_not_gone"
    assert game.engine.state().board.get(((0, 5), "green")) == 1 and game.engine.state().out_of_game["green"] == 0
