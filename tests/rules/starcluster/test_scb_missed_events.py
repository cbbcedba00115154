"""SCB-11.3: balls that arrive with no ball in play to come from are removed balls knocked on, flagged."""

from __future__ import annotations

import json

from referee.cli import main
from rules.decisions import DecisionKind as K
from rules.replay import read_log, replay

from scb_helpers import Log, kinds, points, run


def reading_warnings(decisions):
    return [d for d in decisions if d.kind is K.WARNING and d.rule == "SCB-11.3"]


def foul_ball_knocked_into_a_slot() -> Log:
    """red's void shot leaves its foul ball in P1/0 (removed, not lifted); blue lands in P2/2 and knocks it to
    P1/1. red has no ball in play for P1/1 to come from: it is the removed ball, knocked on."""
    return Log().shot("red@1.0", void=True).shot("red@1.1", "blue@2.2")


def test_scb_11_3_removed_ball_knocked_into_a_slot_stays_removed_and_is_flagged():
    """Read as a new red ball, P1/1 was a knock-in: red +1 and a foul on blue. It is the removed ball knocked
    on: it scores nothing, blue's shot is no foul, and blue plays on."""
    engine, out = run(foul_ball_knocked_into_a_slot().events, close=False)
    (warning,) = reading_warnings(out)
    assert warning.flagged and warning.player == "red" and "P1/slot 1" in warning.summary
    assert points(out, "red") == 0 and points(out, "blue") == 2
    assert not kinds(out, K.FOUL)[1:]  # the void shot's foul only
    shot = kinds(out, K.SHOT)[-1]
    assert dict(shot.data)["outcome"] == "scored" and shot.flagged
    state = engine.state()
    assert state.to_play == "blue" and state.board == {(2, 2): "blue"}
    assert state.unlifted_slots == {(1, 1): "red"} and state.hand == {"red": 9, "blue": 9}


def test_scb_11_3_removed_ball_knocked_into_a_gutter_is_not_out_twice():
    """The foul ball knocked into a gutter was out already: red keeps 9 balls, which score at the round end."""
    log = Log().shot("red@1.0", void=True).shot("red@gutter", "blue@2.2").round_end()
    engine, out = run(log.events, close=False)
    assert len(reading_warnings(out)) == 1 and "a gutter" in reading_warnings(out)[0].summary
    assert not [d for d in kinds(out, K.BALL_REMOVED) if d.rule == "SCB-5.1"]
    assert engine.standings().games[0].rounds[0].scores == {"red": 9, "blue": 2 + 9}


def test_scb_11_3_replay_of_the_log_gives_the_same_decisions(tmp_path):
    """The engine is pure: the log written and replayed (`referee replay`) gives the same calls and scores."""
    events = foul_ball_knocked_into_a_slot().round_end().events
    _, live = run(events)
    log = tmp_path / "events.jsonl"
    log.write_text("".join(json.dumps(e.to_json()) + "\n" for e in events), encoding="utf-8")
    assert list(replay(read_log(log), "starcluster").decisions) == live
    for out in ("a", "b"):
        assert main(["replay", str(log), "--game", "starcluster", "--out", str(tmp_path / out), "--quiet"]) == 0
    assert (tmp_path / "a" / "result.json").read_bytes() == (tmp_path / "b" / "result.json").read_bytes()
    result = json.loads((tmp_path / "a" / "result.json").read_text())
    assert result["final_scores"] == {"red": 9, "blue": 2 + 9}
    assert not [d for d in result["decisions"] if d["kind"] == "foul" and d.get("rule") == "SCB-5.7"]  # no knock-in
    (warning,) = reading_warnings(live)
    assert [d["summary"] for d in result["decisions"] if d.get("rule") == "SCB-11.3"] == [warning.summary]


def test_scb_11_3_two_equally_good_readings_are_flagged_not_guessed():
    """red scores in P2/0, then its void shot leaves a foul ball in P1/0. blue's shot shows red in P1/1 and P2/1
    with P1/0 and P2/0 empty: one arrival is red's P2/0 ball, the other the removed ball, and the table cannot
    tell which. Nothing is guessed: the table is read as shown (both knocked in), every call is flagged and
    the warning names both readings."""
    log = Log().shot("red@2.0").shot("red@2.0", "red@1.0", void=True).shot("red@1.1", "red@2.1", "blue@3.0")
    engine, out = run(log.events, close=False)
    (warning,) = reading_warnings(out)
    assert warning.flagged and "2 readings equally well" in warning.summary
    assert ("knocked to P1/slot 1; or removed red ball(s) knocked to P2/slot 1" in warning.summary)
    last_shot = out[out.index(warning):]
    assert all(d.flagged for d in last_shot)
    assert [d.points for d in kinds(last_shot, K.SCORE)] == [5, 1 + 2]  # blue's P3 ball, red's knocked-in pair
    assert kinds(last_shot, K.FOUL)[0].rule == "SCB-5.7" and engine.state().to_play == "red"
    assert engine.state().board == {(1, 1): "red", (2, 1): "red", (3, 0): "blue"}
    assert not engine.state().unlifted_slots


def test_scb_11_3_a_ball_read_gone_from_its_slot_and_back_with_nothing_to_come_from_was_hidden():
    """starcluster_v3: red's dark marble in P2/3 was lost in its dark slot for one reading (red's own failed
    shot), so the engine took it knocked out, back in hand; on blue's next shot it showed again, read as knocked
    in by blue: red +2 again and a foul on blue. red had no ball on the table for it to come from: it was hidden,
    not gone. It stays on the board, scores nothing new, blue's shot is no foul, and the call is flagged."""
    log = Log().shot("red@2.3").shot("red@play").shot("red@2.3", "blue@grouped")
    engine, out = run(log.round_end().events, close=False)
    (warning,) = reading_warnings(out)
    assert warning.flagged and warning.player == "red" and "P2/slot 3" in warning.summary
    assert "hidden, not gone" in warning.summary
    assert not [d for d in kinds(out, K.FOUL) if d.rule == "SCB-5.7"]
    first = kinds(out, K.SCORE)[0]
    assert first.player == "red" and points(out, "red") == first.points + 9  # one landing, then 9 in hand
    assert engine.standings().games[0].rounds[0].scores == {"red": 2 + 9, "blue": 9}


def test_scb_11_3_a_ball_back_in_its_slot_with_a_ball_in_play_to_come_from_is_knocked_in():
    """The same return, but red had a grouped ball on the board that blue's shot could knock into P2/3: the
    table needs no missed event, so it is a knock-in as read (red's points, blue's foul), no warning."""
    log = Log().shot("red@2.3").shot("red@grouped").shot("red@2.3", "blue@grouped")
    _, out = run(log.events, close=False)
    assert not reading_warnings(out)
    assert [d.rule for d in kinds(out, K.FOUL)] == ["SCB-5.7"]
