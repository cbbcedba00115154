"""Both engines: `check(event)` says exactly what `feed(event)` refuses, and a refused event changes nothing.

Random event streams (engine_streams.py) mix plausible play with input that must be refused. For every event:
`check` leaves the engine as it was (its pickled bytes, `state()` and `standings()`), `check(e)` is None exactly
when `feed(e)` does not raise, a refused `feed` raises InputError with `check`'s reason and leaves `state()` and
`standings()` unchanged. The Star Cluster Ball round clock in `state()` is what the review scoreboard derives from
the decisions (a round's clock starts at its round_start or first shot and stops at its result).
"""

from __future__ import annotations

import dataclasses
import json
import pickle
from typing import Any

import pytest
from engine_streams import PB_CONFIGS, SCB_CONFIGS, pb_stream, scb_stream
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.decisions import Decision, DecisionKind
from rules.engine import EngineState, RulesEngine
from rules.errors import InputError
from rules.events import Event, GameStart, PlayerSpec, RoundStart, ShotStarted
from rules.piratenbillard import PiratenbillardConfig, PiratenbillardEngine
from rules.starcluster import StarClusterConfig, StarClusterEngine


def feed_checked(engine: RulesEngine, event: Event) -> list[Decision] | None:
    """Feed `event` after asking `check`; assert they agree. Returns the decisions, or None when refused."""
    before, state, standings = pickle.dumps(engine), engine.state(), engine.standings()
    reason = engine.check(event)
    assert pickle.dumps(engine) == before, f"check({event.id}) changed the engine"
    assert engine.state() == state and engine.standings() == standings
    try:
        decisions = engine.feed(event)
    except InputError as error:
        assert reason == str(error), f"check said {reason!r}, feed raised {str(error)!r}"
        assert engine.state() == state and engine.standings() == standings, f"refused {event.id} changed the state"
        assert pickle.dumps(engine) == before, f"refused {event.id} changed the engine"
        return None
    assert reason is None, f"check refused {event.id} ({reason!r}) but feed accepted it"
    return decisions


class ReviewClock:
    """The round clock as review/record.py `_boards` derives it from the decisions (the reference for state())."""

    def __init__(self, config: StarClusterConfig) -> None:
        self.config = config
        self.start: float | None = None
        self.end: float | None = None
        self.length: float | None = None

    def follow(self, event: Event, decisions: list[Decision]) -> None:
        for decision in decisions:
            data = dict(decision.data)
            if decision.kind is DecisionKind.PHASE and "round" in data:
                tiebreak = data.get("phase") == "tiebreak"
                self.length = self.config.tiebreak_seconds if tiebreak else self.config.round_seconds
                self.start = self.end = None
            elif decision.kind is DecisionKind.ROUND_RESULT:
                self.end = decision.t
        if self.start is None and self.end is None and isinstance(event, (RoundStart, ShotStarted)):
            self.start = event.t

    def matches(self, state: Any) -> bool:
        return ((state.round_started_at, state.round_ended_at, state.round_length_s) ==
                (self.start, self.end, self.length))


def draw_pick(data: st.DataObject):
    return lambda options: data.draw(st.sampled_from(list(options)))


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from(SCB_CONFIGS), st.integers(5, 60))
def test_scb_check_agrees_with_feed_and_refusals_change_nothing(data, config, length):
    engine = StarClusterEngine(StarClusterConfig.from_dict(config))
    clock = ReviewClock(engine.config)

    def feed(event: Event) -> None:
        decisions = feed_checked(engine, event)
        if decisions is not None:
            clock.follow(event, decisions)
        assert clock.matches(engine.state()), "state()'s round clock differs from the review scoreboard's"

    scb_stream(draw_pick(data), engine, feed, length)
    state = engine.state()
    assert isinstance(state, EngineState) and json.loads(json.dumps(state.to_json()))["players"] == list(state.players)
    assert dict(state.balls_to_play) == dict(state.hand)
    assert (state.pending_choice is None) or state.pending_choice.player in state.players


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from(PB_CONFIGS), st.integers(5, 60))
def test_pb_check_agrees_with_feed_and_refusals_change_nothing(data, config, length):
    engine = PiratenbillardEngine(PiratenbillardConfig.from_dict(config))

    def feed(event: Event) -> None:
        feed_checked(engine, event)
        state = engine.state()
        assert state.pending_choice is None and state.round_length_s is None
        assert dict(state.balls_to_play) == {p: sum(n for (_, o), n in state.board.items() if o == p)
                                             for p in state.players}
        assert state.to_play == engine.standings().to_play

    pb_stream(draw_pick(data), engine, feed, length)
    state = engine.state()
    assert isinstance(state, EngineState) and json.loads(json.dumps(state.to_json()))["players"] == list(state.players)


def test_state_is_immutable():
    """state() is a frozen value: its mappings cannot be written, and later events do not change it."""
    engine = StarClusterEngine()
    before = engine.state()
    engine.feed(GameStart(0.0, "G", players=(PlayerSpec("red"), PlayerSpec("blue"))))
    after = engine.state()
    assert before.players == () and before.round_number is None
    assert after.players == ("red", "blue") and after.hand == {"red": 10, "blue": 10} and after.round_number == 1
    for state in (after, PiratenbillardEngine().state()):
        with pytest.raises(TypeError):
            state.balls_to_play["red"] = 0  # type: ignore[index]
        with pytest.raises(dataclasses.FrozenInstanceError):
            state.complete = True  # type: ignore[misc]
