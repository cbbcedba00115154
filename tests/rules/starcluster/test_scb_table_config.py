"""SCB-1.2: the slots per Position are the table's, said once in its profile (rules.games.table_config)."""

from __future__ import annotations

import pytest
from scb_helpers import Log, points, run

from rules.errors import InputError
from rules.games import make_engine, table_config
from rules.starcluster import StarClusterConfig

TABLE_654 = {"slots_per_position": [6, 5, 4]}


def test_the_table_fills_in_the_slot_counts_the_config_leaves_out():
    config = table_config({"balls_per_player": 3}, TABLE_654, "club table")
    assert config == {"balls_per_player": 3, "slots_per_position": [6, 5, 4]}
    assert StarClusterConfig.from_dict(config).slots_per_position == (6, 5, 4)


def test_a_ball_in_the_fourth_slot_of_position_3_is_on_a_654_table():
    """The issue's abort: 'P3/slot 3 is not on the table' under the default 7/5/3 counts."""
    log = Log().round_start().shot("red@3.3")
    default = make_engine("starcluster", {})
    for event in log.events[:-1]:
        default.feed(event)
    assert "P3/slot 3 is not on the table" in (default.check(log.events[-1]) or "")
    _, decisions = run(log.events, StarClusterConfig.from_dict(table_config({}, TABLE_654, "club table")))
    assert points(decisions, "red") >= 5  # P3 base


def test_a_grand_slam_needs_every_slot_of_the_table():
    """Six balls fill Position 1 on a 6-slot comb: a Grand Slam there, none under the default seven."""
    log = Log().round_start()
    board: list[str] = []
    for slot in range(6):
        board.append(f"red@1.{slot}")
        log.shot(*board)  # red scores every shot, so keeps the turn
    on_654 = StarClusterConfig.from_dict(table_config({"balls_per_player": 8}, TABLE_654, "club table"))
    on_default = StarClusterConfig.from_dict({"balls_per_player": 8})
    assert grand_slams(run(log.events, on_654)[1]) == 1
    assert grand_slams(run(log.events, on_default)[1]) == 0


def grand_slams(decisions) -> int:
    return sum("Grand Slam" in item.label for d in decisions for item in d.breakdown)


def test_the_same_counts_in_the_config_are_accepted_and_other_counts_refused_naming_both():
    assert table_config({"slots_per_position": [6, 5, 4]}, TABLE_654, "club table")["slots_per_position"] == [6, 5, 4]
    with pytest.raises(InputError) as info:
        table_config({"slots_per_position": [7, 5, 3]}, TABLE_654, "club table")
    text = str(info.value)
    assert "'slots_per_position' is [7, 5, 3]" in text and "'club table' has [6, 5, 4]" in text and "\n" not in text


def test_a_dead_ball_slot_is_checked_against_the_tables_counts():
    rules = {"optional_rules": {"dead_ball": {"slots": [[3, 3]]}}}
    assert StarClusterConfig.from_dict(table_config(rules, TABLE_654, "club table")).optional_rules.dead_ball
    with pytest.raises(InputError, match="dead_ball.slots"):
        StarClusterConfig.from_dict(table_config(rules, {"slots_per_position": [7, 5, 3]}, "default"))
