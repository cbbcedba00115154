"""PiratenbillardConfig: defaults from the rulebook, and one clear error per bad field."""

from __future__ import annotations

import pytest

from rules.errors import InputError
from rules.games import make_engine
from rules.piratenbillard import PiratenbillardConfig, PiratenbillardEngine


def test_defaults_follow_the_rulebook():
    """PB-6.1 "at least 7 points"; PB-1.3 "the 8 wooden balls of that color"."""
    config = PiratenbillardConfig.from_dict({})
    assert config == PiratenbillardConfig()
    assert (config.target_points, config.balls_per_player, config.first_seat) == (7, 8, None)
    assert (config.stack_violation, config.after_end) == ("foul", "warn")


def test_valid_settings_are_kept():
    config = PiratenbillardConfig.from_dict({"target_points": 10, "first_seat": 3, "stack_violation": "restrike",
                                             "after_end": "error", "min_confidence": 0.8, "balls_per_player": 4})
    assert (config.target_points, config.first_seat, config.stack_violation) == (10, 3, "restrike")
    assert (config.after_end, config.min_confidence, config.balls_per_player) == ("error", 0.8, 4)


@pytest.mark.parametrize("data, message", [
    ({"target_points": 0}, "config: 'target_points' must be an integer from 1"),
    ({"target_points": "7"}, "config: 'target_points' must be an integer"),
    ({"balls_per_player": 9}, "config: 'balls_per_player' must be an integer from 1 to 8, got 9"),
    ({"first_seat": 4}, "config: 'first_seat' must be an integer from 0 to 3, got 4"),
    ({"first_seat": True}, "config: 'first_seat'"),
    ({"stack_violation": "penalty"}, "config: 'stack_violation' must be one of 'foul', 'restrike'"),
    ({"after_end": "ignore"}, "config: 'after_end' must be one of"),
    ({"min_confidence": 2}, "config: 'min_confidence' must be a number from 0 to 1"),
    ({"target": 7}, "config: unknown setting 'target'"),
    ([], "config: must be a JSON object"),
])
def test_bad_settings_name_the_field(data, message):
    with pytest.raises(InputError, match=message):
        PiratenbillardConfig.from_dict(data)


def test_engine_is_picked_by_game_name():
    engine = make_engine("piratenbillard", {"target_points": 5})
    assert isinstance(engine, PiratenbillardEngine) and engine.game == "piratenbillard"
    assert engine.config.target_points == 5
