"""Every Star Cluster Ball scenario produces the rule it is named after, as the rules engine calls it."""

from __future__ import annotations

import pytest

from calibration.profile import load_profile
from rules.replay import replay
from simulation.starcluster import STARCLUSTER_SCENARIOS, StarClusterSimOptions, simulate_starcluster
from simulation.starcluster_driver import MatchDriver
from simulation.starcluster_scenarios import SCRIPTS, scenario_config


def _has(decisions, kind, rule=None, label=None, data=None):
    for d in decisions:
        if d.kind.value != kind or (rule and d.rule != rule):
            continue
        if label and not any(label in item.label for item in d.breakdown):
            continue
        if data and dict(d.data).get(data[0]) != data[1]:
            continue
        return True
    return False


EXPECTED = {
    "chain_grand_slam": lambda ds: _has(ds, "score", "SCB-4.1", "P1 Grand Slam") and _has(ds, "score", "SCB-4.1", "P1 chain bonus"),
    "play_line_foul": lambda ds: _has(ds, "foul", "SCB-3.5", data=("foul", "void_shot")) and _has(ds, "ball_removed", "SCB-5.2"),
    "knock_into_slot": lambda ds: _has(ds, "foul", "SCB-5.7", data=("foul", "knocked_in")) and _has(ds, "score", "SCB-5.7"),
    "gutter_ball": lambda ds: _has(ds, "ball_removed", "SCB-5.1") and _has(ds, "shot", "SCB-5.1"),
    "grouping": lambda ds: _has(ds, "shot", "SCB-5.4", data=("outcome", "grouped")),
    "out_of_balls_bank": lambda ds: _has(ds, "choice_required", "SCB-6.1") and _has(ds, "score", "SCB-6.2"),
    "out_of_balls_final_sequence": lambda ds: _has(ds, "choice_required", "SCB-6.1") and _has(ds, "phase", "SCB-7.1", data=("phase", "final_sequence")),
    "table_shove": lambda ds: _has(ds, "foul", "SCB-5.6", data=("foul", "table_movement")),
    "player_at_line": lambda ds: _has(ds, "score") and not _has(ds, "foul"),
}


@pytest.fixture(scope="module")
def profile():
    return load_profile("starcluster")


def test_every_scenario_has_a_check():
    assert set(EXPECTED) == set(STARCLUSTER_SCENARIOS) - {"full_game"}


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
@pytest.mark.parametrize("seed", [1, 2])
def test_scenario_produces_its_rule(profile, scenario, seed):
    match = simulate_starcluster(profile, seed, scenario, StarClusterSimOptions())
    result = replay(list(match.events), "starcluster", match.config)
    assert EXPECTED[scenario](result.decisions), [d.summary for d in result.decisions]
    assert result.standings.complete
    assert not [d for d in result.decisions if d.kind.value == "warning"], "the driver's events confused the engine"
    # what the live engine decided while the match was played is what a replay of the log decides
    live = simulate_live_decisions(profile, seed, scenario)
    assert [d.to_json() for d in result.decisions] == live


def simulate_live_decisions(profile, seed, scenario):
    options = StarClusterSimOptions()
    driver = MatchDriver(profile, seed, scenario, options, scenario_config(scenario, options))
    driver.start_game()
    SCRIPTS[scenario](driver)
    for _ in range(3):
        if driver.game_over:
            break
        driver.end_round()
    return [d.to_json() for d in driver.decisions + driver.engine.close(driver.events[-1].t)]


def test_scenario_events_are_in_time_order_and_frames_are_continuous(profile):
    match = simulate_starcluster(profile, 3, "table_shove", StarClusterSimOptions())
    times = [e.t for e in match.events]
    assert times == sorted(times)
    assert [f.index for f in match.frames] == list(range(len(match.frames)))
    assert match.events[0].TYPE == "game_start" and match.events[1].TYPE == "round_start"
    shifted = [f for f in match.frames if f.table_shift.dx != 0.0]
    assert shifted and abs(shifted[-1].table_shift.dx) >= 5.0
    crossings = [f for f in match.frames if f.person and f.person.reach_mm > 0]
    assert not crossings  # nobody crossed the line in this clip


def test_the_player_to_play_stands_at_the_line_on_every_frame_of_player_at_line(profile):
    """The live-speed clip: someone is at the Play Line, short of it, from the first frame to the last, and it is
    the shooter while a shot is played."""
    match = simulate_starcluster(profile, 1, "player_at_line", StarClusterSimOptions())
    assert all(f.person is not None and f.person.reach_mm < 0 and f.person.crossing_part is None
               for f in match.frames)
    shots = [e for e in match.events if e.TYPE == "shot_started"]
    assert len(shots) == 4
    for shot in shots:
        assert match.frames[round(shot.t * match.fps)].person.player == shot.player
