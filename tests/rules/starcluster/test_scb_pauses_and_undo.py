"""The umpire's round_pause / round_resume and undo (an overturn of an umpire input), as the
engines and the replay apply them."""

import pytest
from scb_helpers import Log, cfg, run, snap

from rules.decisions import DecisionKind as K
from rules.engine import RoundClock
from rules.errors import InputError
from rules.events import (
    Confirm, Overturn, RoundEnd, RoundPause, RoundResume, RoundStart, ShotStarted, TableSettled, UmpireFoul,
)
from rules.replay import amend, replay


def test_a_pause_stops_the_star_cluster_round_clock_until_the_resume():
    """60-second rounds: paused 100 s after 10 s of play, the round ends 50 s after the resume, not at 61."""
    c = cfg(rounds_per_game=1, round_seconds=60)
    log = Log().round_start()  # t=1
    log.events += [RoundPause(11.0, "P", by="Umpire", reason="injury"), RoundResume(111.0, "R", by="Umpire")]
    engine, out = run(log.events, c, close=False)
    state = engine.state()
    assert (state.round_paused_at, state.round_paused_s, state.complete) == (None, 100.0, False)
    phases = [d.summary for d in out if d.kind is K.PHASE and d.cause in ("P", "R")]
    assert phases == ["game 1, round 1 paused by Umpire: injury", "game 1, round 1 resumed by Umpire after 100s"]
    engine, out = run(log.events + [RoundEnd(500.0, "LATE")], c, close=False)
    assert [d.t for d in out if d.kind is K.ROUND_RESULT] == [161.0]  # 1 + 60 + 100 paused


def test_while_paused_the_clock_never_runs_out_and_the_status_says_so():
    c = cfg(rounds_per_game=1, round_seconds=60)
    log = Log().round_start()
    log.events.append(RoundPause(30.0, "P"))
    engine, out = run(log.events, c, close=False)
    assert not [d for d in out if d.kind is K.ROUND_RESULT]
    assert engine.state().round_paused_at == 30.0 and "paused since 30s" in engine.standings().status
    clock = RoundClock.of(engine.state())  # what a scoreboard shows between events
    assert clock.at(30.0) == clock.at(500.0) == 60.0 - 29.0
    assert engine.close(10_000.0) == []  # the log ends while paused: the round is not over


@pytest.mark.parametrize("events, message", [
    ([RoundPause(1.0, "P")], "round_pause while no round is running; start the round first"),
    ([RoundStart(1.0, "S"), RoundPause(2.0, "P"), RoundPause(3.0, "P2")], "paused already (since 2s)"),
    ([RoundStart(1.0, "S"), RoundResume(2.0, "R")], "round_resume while the round is not paused"),
])
def test_pauses_that_make_no_sense_are_refused(events, message):
    log = Log()
    engine, _ = run(log.events + events[:-1], close=False)
    assert message in engine.check(events[-1])
    with pytest.raises(InputError, match="round_"):
        engine.feed(events[-1])


def test_undo_is_an_overturn_of_the_umpire_input_and_an_overturn_of_that_restores_it():
    """An umpire foul takes red's shot away; overturning the foul gives the points back; overturning that
    overturn (undo) takes them away again. `amend` gives the same engine as replaying the whole log."""
    log = Log().add(ShotStarted, player="red")
    foul = UmpireFoul(log.t + 0.5, "F", player="red", foul="play_line")
    settled = TableSettled(log.t + 2.0, "S", snapshot=snap("red@2.0"))
    log.t += 2.0
    clean = replay(log.events + [settled], "starcluster").standings.games[0].totals["red"]
    log.events += [foul, settled]
    fouled = replay(log.events, "starcluster").standings.games[0].totals["red"]
    assert fouled < clean
    overturn = Overturn(log.t + 1, "O", target="F", by="Umpire")
    undo = Overturn(log.t + 2, "U", target="O", by="Umpire", reason="undo")
    assert replay(log.events + [overturn], "starcluster").standings.games[0].totals["red"] == clean
    assert replay(log.events + [overturn, undo], "starcluster").standings.games[0].totals["red"] == fouled
    engine, call = amend(log.events + [overturn, undo], "starcluster")
    assert engine.standings() == replay(log.events + [overturn, undo], "starcluster").standings
    assert call.kind is K.UMPIRE and call.summary.startswith("umpire by Umpire overturned O (overturn at")


@pytest.mark.parametrize("extra, message", [
    ([Overturn(50.0, "X", target="E0")], "E0, a game_start; only play_line_crossing"),
    ([Overturn(50.0, "X", target="E2")], "E2, a table_settled; only"),
    ([Overturn(50.0, "X", target="F"), Overturn(51.0, "Y", target="F")], "F is overturned already"),
    ([Confirm(50.0, "X", target="nope")], "targets 'nope', which is not in the log"),
])
def test_amendments_that_cannot_stand_are_refused_with_the_reason(extra, message):
    log = Log()
    log.shot("red@2.0")
    log.events.append(UmpireFoul(log.t, "F", player="red", foul="interference"))
    with pytest.raises(InputError, match=message):
        amend(log.events + extra, "starcluster")
