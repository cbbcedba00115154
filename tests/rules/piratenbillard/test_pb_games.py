"""Whole games played through from event logs, each final score computed by hand in the comments.

The four-player game is also the example log, examples/piratenbillard_game.jsonl: the test checks that the
file is exactly this game and replays it through the lead's replay layer.
"""

from __future__ import annotations

import json
from pathlib import Path

from rules.decisions import DecisionKind as K
from rules.events import BallLifted, Location
from rules.replay import read_log, replay

from pb_helpers import OFF, Game, ball_count, kinds

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "piratenbillard_game.jsonl"


def test_two_player_game_to_seven_points():
    """red sits south (target row 0), blue north (target row 9); red begins."""
    game = Game([("red", 0), ("blue", 2)])
    game.strike("red", (9, 4), (5, 4))    # moves
    game.strike("blue", (0, 4), (5, 4))   # captures red: blue 1
    game.strike("red", (9, 5), (9, 5))    # does not leave its space: repeat strike
    game.strike("red", (9, 5), (4, 5))    # moves
    game.strike("blue", (5, 4), (9, 4))   # secured in red's row: blue 1 + 3 = 4
    game.strike("red", (4, 5), (0, 4))    # secured in blue's row: red 3
    game.strike("blue", (0, 6), (4, 6))   # moves
    game.strike("red", (9, 6), (4, 6))    # captures blue: red 4
    out = game.strike("blue", (0, 7), (9, 5))  # secured: blue 4 + 3 = 7 -> blue wins 7 to 4
    assert game.points() == {"red": 4, "blue": 7}
    assert dict(kinds(out, K.GAME_RESULT)[0].data)["winners"] == ["blue"]
    assert len(kinds(game.decisions, K.PHASE)) == 1 and not any(d.flagged for d in game.decisions)
    # 16 balls: on board 16 - 2 captured - 3 secured = 11, in treasures 5, out 0
    assert sum(game.engine.state().board.values()) == 11 and ball_count(game.engine) == 16


def test_three_player_game_to_seven_points():
    """red south, blue west, green north; the east row is empty. Order red, blue, green."""
    game = Game([("red", 0), ("blue", 1), ("green", 2)])
    game.strike("red", (9, 8), (5, 9))    # empty east row: an ordinary landing
    game.strike("blue", (4, 0), (4, 4))   # moves
    game.strike("green", (0, 4), (4, 4))  # captures blue: green 1
    game.strike("red", (9, 1), (6, 0))    # blue's row (red's neighbour), blue's ball there: blue 1
    game.strike("blue", (3, 0), (6, 3))   # moves
    game.strike("green", (0, 3), (6, 3))  # captures blue: green 2
    game.strike("red", (9, 2), (5, 5))    # moves
    game.strike("blue", (2, 0), (5, 5))   # captures red: blue 2
    game.strike("green", (4, 4), (5, 9))  # empty east row is no neighbour's: captures red there: green 3
    game.strike("red", (9, 3), (6, 6))    # moves
    game.strike("blue", (5, 5), (5, 9))   # east row is blue's opposite row: secured, green's ball stays: blue 5
    game.strike("green", (6, 3), (6, 6))  # captures red: green 4
    game.strike("red", (9, 4), (8, 4))    # moves
    game.strike("blue", (1, 0), OFF)      # off the board: out, no points
    out = game.strike("green", (6, 6), (9, 4))  # secured in row 9: green 4 + 3 = 7 -> green wins
    assert game.points() == {"red": 0, "blue": 5, "green": 7}
    assert game.engine.standings().winners == ("green",)
    assert kinds(out, K.GAME_RESULT)[0].rule == "PB-6.1"
    assert game.engine.state().board.get(((5, 9), "green")) == 1  # not captured by blue's secured ball
    assert ball_count(game.engine) == 24 and game.engine.state().out_of_game == {"red": 0, "blue": 1, "green": 0}


def four_player_game() -> Game:
    """red south, blue west, green north, yellow east; red begins, then blue, green, yellow."""
    game = Game([("red", 0), ("blue", 1), ("green", 2), ("yellow", 3)])
    game.strike("red", (9, 4), (5, 4))      # 1 moves
    game.strike("blue", (4, 0), (4, 5))     # 2 moves
    game.strike("green", (0, 5), (5, 4))    # 3 captures red: green 1
    game.strike("yellow", (5, 9), (4, 5))   # 4 captures blue: yellow 1
    game.feed(BallLifted(t=game.tick(), id=game.event_id(), owner="blue", at=Location.cell_at(4, 5)))
    game.strike("red", (9, 5), (9, 5))      # 5 stays: repeat strike
    game.strike("red", (9, 5), (4, 4))     # 5 moves
    game.strike("blue", (5, 0), (4, 4))     # 6 captures red: blue 1
    game.strike("green", (0, 6), (3, 6))    # 7 moves
    game.strike("yellow", (4, 9), (3, 6))   # 8 captures green: yellow 2
    game.strike("red", (9, 6), (6, 6))      # 9 moves
    game.strike("blue", (6, 0), (6, 7), ball_from=False)  # 10 moves (the vision missed the struck space)
    game.strike("green", (5, 4), (6, 6))    # 11 captures red: green 2
    game.strike("yellow", (4, 5), (9, 2))   # 12 lands in red's row (yellow's neighbour): red 1
    game.strike("red", (9, 7), (6, 7))      # 13 captures blue: red 2
    game.strike("blue", (4, 4), (3, 3))     # 14 moves
    game.strike("green", (6, 6), (3, 3))    # 15 captures blue: green 3
    game.strike("yellow", (6, 9), (3, 6))   # 16 lands on its own ball: a stacked pair
    game.strike("red", (6, 7), (3, 7))      # 17 moves
    game.strike("blue", (3, 0), (5, 5))     # 18 moves
    game.strike("green", (3, 3), (3, 6))    # 19 captures yellow's stacked pair: green 3 + 2 = 5
    game.strike("yellow", (7, 9), (7, 5))   # 20 moves
    game.strike("red", (3, 7), (0, 7))      # 21 secured on green's ball, nothing captured: red 2 + 3 = 5
    game.strike("blue", (2, 0), (2, 2))     # 22 moves
    game.strike("green", (3, 6), (9, 5))    # 23 secured: green 5 + 3 = 8 -> green wins
    return game                             # final: red 5, blue 1, green 8, yellow 2


def test_four_player_game_to_seven_points():
    game = four_player_game()
    assert game.points() == {"red": 5, "blue": 1, "green": 8, "yellow": 2}
    standings = game.engine.standings()
    assert standings.complete and standings.winners == ("green",) and standings.to_play is None
    assert [d.points for d in kinds(game.decisions, K.CAPTURE) if d.player == "green"] == [1, 1, 1, 2, 3]
    assert not any(d.flagged for d in game.decisions)
    # 32 balls: 10 captured or given (green 5, yellow 2, red 2, blue 1) + 2 secured = 12 in treasures,
    # none out, 20 on the board
    state = game.engine.state()
    assert state.treasure_balls == {"red": 3, "blue": 1, "green": 6, "yellow": 2}
    assert sum(state.board.values()) == 20 and ball_count(game.engine) == 32
    assert state.complete and state.to_play is None and state.winners == ("green",) and not state.must_play
    # red lost 3 captured + 1 secured, blue 3 captured, green 1 captured + 1 secured, yellow 1 given + a pair
    assert state.balls_to_play == {"red": 4, "blue": 5, "green": 6, "yellow": 5}
    assert state.seats == {"red": 0, "blue": 1, "green": 2, "yellow": 3} and state.round_number == 1
    # the single round: from the first strike to the game result
    assert state.round_started_at == game.events[1].t and state.round_ended_at == game.events[-1].t
    assert state.round_length_s is None and not state.clock_counts_down and state.pending_choice is None


def test_example_log_is_the_four_player_game():
    """The example log is the scripted game; replayed from the file it gives the same result."""
    game = four_player_game()
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [e.to_json() for e in game.events]
    result = replay(read_log(EXAMPLE), "piratenbillard")
    assert list(result.decisions) == game.decisions
    assert result.standings.winners == ("green",)
    assert dict(result.standings.games[0].totals) == {"red": 5, "blue": 1, "green": 8, "yellow": 2}
