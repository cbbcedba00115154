"""Simulated Star Cluster Ball matches: physics, players and the real rules engine, live.

`simulate_starcluster` sets up a `MatchDriver` (starcluster_driver: the pymunk
table of starcluster_physics, the players of starcluster_players and the real
rules engine, fed every observation as it happens), plays the scenario's
script (starcluster_scenarios) and ends the round. `SIMULATOR` is what the
simulator registry (simulation.games) knows the game by.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from calibration.starcluster_profile import StarClusterProfile
from rules.errors import InputError
from rules.games import table_config

from .starcluster_driver import MatchDriver, StarClusterSimOptions
from .starcluster_scenarios import AT_THE_LINE, SCRIPTS, STARCLUSTER_SCENARIOS, scenario_config
from .trajectory import GameSimulator, Match

__all__ = ["SIMULATOR", "STARCLUSTER_SCENARIOS", "MatchDriver", "StarClusterSimOptions", "simulate_starcluster",
           "sim_options"]


def simulate_starcluster(profile: StarClusterProfile, seed: int, scenario: str = "full_game",
                         options: StarClusterSimOptions | None = None) -> Match:
    """Play a whole match or a scenario clip; same profile, seed and options give the same Match."""
    if scenario not in STARCLUSTER_SCENARIOS:
        raise InputError(f"unknown Star Cluster Ball scenario {scenario!r}; use one of "
                         f"{', '.join(STARCLUSTER_SCENARIOS)}")
    if not isinstance(profile, StarClusterProfile):
        raise InputError("simulate_starcluster needs a Star Cluster Ball table profile")
    options = options or StarClusterSimOptions()
    if scenario in AT_THE_LINE:
        options = replace(options, shooter_stays=True)
    config = table_config(scenario_config(scenario, options), profile.rules_settings, profile.name)
    driver = MatchDriver(profile, seed, scenario, options, config)
    driver.notes.append(STARCLUSTER_SCENARIOS[scenario])
    driver.start_game()
    SCRIPTS[scenario](driver)
    for _ in range(3):  # the script's round, and a tie-break if the clip ends level
        if driver.game_over:
            break
        driver.end_round()
    driver.idle(1.0)
    return driver.match()


def sim_options(fps: float, duration: float | None, players: int | None) -> StarClusterSimOptions:
    """The options `referee simulate` asks for; a Star Cluster Ball game runs on its round clock."""
    if players is not None:
        raise InputError("--players applies to Piratenbillard only; Star Cluster Ball has two players")
    wanted: dict[str, Any] = {"fps": fps}
    if duration is not None:  # shorten the rounds
        wanted["round_seconds"] = duration
    return StarClusterSimOptions(**wanted)


SIMULATOR: GameSimulator[StarClusterProfile, StarClusterSimOptions] = GameSimulator(
    scenarios=tuple(STARCLUSTER_SCENARIOS), options=sim_options, simulate=simulate_starcluster)
