"""The umpire's round_pause / round_resume in Piratenbillard: no clock to stop, but the pause is checked and shown."""

from pb_helpers import Game

from rules.events import RoundPause, RoundResume
from rules.piratenbillard import PiratenbillardConfig


def test_piratenbillard_has_no_clock_but_a_pause_is_shown_and_checked():
    game = Game([("red", 0), ("blue", 2)], PiratenbillardConfig(balls_per_player=1))  # red (9,1), blue (0,1)
    assert "no round is running" in game.engine.check(RoundPause(1.0, "P"))  # before the first strike
    game.strike("red", (9, 1), (5, 5))
    game.feed(RoundPause(game.tick(), game.event_id(), by="Kim"))
    assert game.engine.state().round_paused_at is not None and "(paused since" in game.engine.standings().status
    assert "paused already" in game.engine.check(RoundPause(game.tick(), "again"))
    game.feed(RoundResume(game.tick(), game.event_id()))
    assert game.engine.state().round_paused_at is None and "paused" not in game.engine.standings().status
