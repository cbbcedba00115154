"""Scenario scripts: each steers a match until the rule it is named after happens on the table.

Scripts choose rolls the way a coach would set up a drill: they try candidate
rolls on a copy of the table (deterministically, from the match's seeded RNG)
and play the first whose physics produces the situation. The rules engine then
makes the call from the observed events, exactly as in a real match.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from rules.events import Location, Place

from .starcluster_driver import MatchDriver, StarClusterSimOptions
from .starcluster_physics import Launch
from .starcluster_players import aims_for, with_noise

# Every scenario, with what its clip shows (the first note of its Match); SCRIPTS below plays each.
STARCLUSTER_SCENARIOS: dict[str, str] = {
    "full_game": "a whole game of two shortened rounds played by two simulated players",
    "chain_grand_slam": "one player fills Position 1 slot by slot: chains, then a Grand Slam",
    "play_line_foul": "the shooter leans over the Play Line (head first): the shot is void and the ball removed",
    "knock_into_slot": "a shot knocks the opponent's returned ball into a slot: foul, the opponent scores",
    "gutter_ball": "a ball runs into a gutter: out for the round, lifted off by hand",
    "grouping": "a ball comes to rest on the board without scoring: Grouped, the turn ends",
    "out_of_balls_bank": "a player runs out of balls; the opponent banks the balls in hand",
    "out_of_balls_final_sequence": "a player runs out of balls; the opponent plays a Final Sequence",
    "table_shove": "the shooter shoves the table during a shot: deliberate table movement foul",
    "player_at_line": "the player to play stands at the Play Line from the first frame to the last, 30 mm short "
                      "of it, through four shots: no foul, and the referee must keep up with pose running all along",
}
# Scenarios whose player to play never leaves the Play Line (StarClusterSimOptions.shooter_stays).
AT_THE_LINE = frozenset({"player_at_line"})

Ends = dict[int, Location]

# Most clips are one short round; the out-of-balls drills use 3 balls each so the hand empties quickly.
# A tied clip ends in a short tie-break that, without a score, is a shared victory.
_CLIP = {"rounds_per_game": 1, "round_seconds": 180.0, "tiebreak_seconds": 5.0, "tiebreak_no_score": "shared"}


def scenario_config(scenario: str, options: StarClusterSimOptions) -> dict[str, Any]:
    """The rules-engine config of a scenario (recorded in the Match and the truth file)."""
    if scenario == "full_game":
        return {"balls_per_player": options.balls_per_player, "round_seconds": options.round_seconds,
                "tiebreak_seconds": options.tiebreak_seconds}
    if scenario.startswith("out_of_balls"):
        return {**_CLIP, "balls_per_player": 3}
    return {**_CLIP, "balls_per_player": options.balls_per_player}


def _slot_aims(d: MatchDriver, slot: tuple[int, int]) -> Callable[[], Launch]:
    """Candidate rolls at one slot: the player's clear aims with the hand's noise."""
    arrival = sum(d.options.skill.arrival_speed) / 2
    aims = aims_for(d.table, slot, arrival, d.view().loose)
    if not aims:
        raise RuntimeError(f"slot {slot} cannot be reached on this table")
    return lambda: with_noise(d.rng.choice(aims).launch, d.options.skill, d.rng)


def _random_roll(d: MatchDriver, speed: tuple[float, float], spread_deg: float) -> Callable[[], Launch]:
    r = d.table.radius

    def roll() -> Launch:
        x = d.rng.uniform(d.table.x_min + r + 2, d.table.x_max - r - 2)
        v = d.rng.uniform(*speed)
        angle = math.radians(90 + d.rng.uniform(-spread_deg, spread_deg))
        return Launch(x, v * math.cos(angle), v * math.sin(angle))
    return roll


def _lands(slot: tuple[int, int]) -> Callable[[Ends, Any, int], bool]:
    """The shot ball ends in `slot`."""
    def check(ends: Ends, _trace: Any, ball: int) -> bool:
        return ends[ball] == Location.slot_at(*slot)
    return check


def _score_slots(d: MatchDriver, slots: list[tuple[int, int]]) -> None:
    for slot in slots:
        launch, trace = d.search(_lands(slot), _slot_aims(d, slot))
        d.shoot(launch, trace=trace)


def full_game(d: MatchDriver) -> None:
    """Policy play until the rounds' clocks run out; the engine says who shoots."""
    min_shot = 7.0
    while not d.game_over and d.now < d.options.max_seconds:
        if d.pending_choice is not None:
            chooser = d.pending_choice
            standings = d.engine.standings()
            totals = standings.games[-1].totals
            d.choose("final_sequence" if totals[chooser] <= max(totals.values()) else "bank")
            continue
        if d.time_left() < min_shot:
            d.idle(max(0.0, d.time_left()))
            d.end_round()
            continue
        d.play_policy_shot()


def _middle_out(d: MatchDriver) -> list[tuple[int, int]]:
    """Position 1's slots from the middle outwards, so each new ball extends the chain."""
    n = len(d.profile.positions[0].slots)
    middle = n // 2
    order = [middle]
    for step in range(1, n):
        order += [s for s in (middle - step, middle + step) if 0 <= s < n]
    return [(1, s) for s in order]


def chain_grand_slam(d: MatchDriver) -> None:
    """Fill Position 1 from the middle out: every shot extends a chain, the last completes it."""
    _score_slots(d, _middle_out(d))


def play_line_foul(d: MatchDriver) -> None:
    launch, trace = d.search(_lands((1, 3)), _slot_aims(d, (1, 3)))
    d.shoot(launch, foul=True, trace=trace)
    d.play_policy_shot()


def knock_into_slot(d: MatchDriver) -> None:
    """A returned ball left in the play area is struck up the table into a slot by the opponent."""
    board = d.profile.board
    first = d.to_play()

    def returns(ends: Ends, trace: Any, ball: int) -> bool:
        final = next(s for s in trace.final if s.id == ball)
        return ends[ball].place is Place.PLAY_AREA and board.x_min + 60 <= final.x <= board.x_max - 60

    launch, trace = d.search(returns, _random_roll(d, (500.0, 900.0), 3.0))
    ball_id = d.next_ball(first).id
    d.keep_in_play_area.add(ball_id)
    d.shoot(launch, trace=trace)
    target = d.balls[ball_id]
    other = d.to_play()

    def knocked(ends: Ends, trace: Any, ball: int) -> bool:
        return ends[ball_id].place is Place.SLOT and trace.crossing_frame is not None

    def nudge() -> Launch:
        offset = d.rng.choice((-1, 1)) * d.rng.uniform(1.0, 4.0)
        return Launch(target.x + offset, d.rng.uniform(-150.0, 150.0), d.rng.uniform(1250.0, 2000.0))

    assert other != first
    launch, trace = d.search(knocked, nudge, tries=600)
    d.keep_in_play_area.discard(ball_id)
    d.shoot(launch, trace=trace)


def gutter_ball(d: MatchDriver) -> None:
    def in_gutter(ends: Ends, _trace: Any, ball: int) -> bool:
        return ends[ball].place is Place.GUTTER
    launch, trace = d.search(in_gutter, _random_roll(d, (1000.0, 1700.0), 14.0))
    d.shoot(launch, trace=trace)
    d.play_policy_shot()


def grouping(d: MatchDriver) -> None:
    def grouped(ends: Ends, _trace: Any, ball: int) -> bool:
        return ends[ball].place is Place.GROUPED
    launch, trace = d.search(grouped, _random_roll(d, (1300.0, 2000.0), 12.0), tries=800)
    d.shoot(launch, trace=trace)
    d.play_policy_shot()


def _run_out(d: MatchDriver, choice: str) -> None:
    """The starter scores every ball (so keeps the turn) until their hand is empty."""
    n = d.config["balls_per_player"]
    _score_slots(d, _middle_out(d)[:n])
    if d.pending_choice is None:
        raise RuntimeError("the starter still has balls: the out-of-balls drill did not empty the hand")
    d.choose(choice)
    while not d.game_over and d.round_start_t is not None:
        d.play_policy_shot()


def out_of_balls_bank(d: MatchDriver) -> None:
    _run_out(d, "bank")


def out_of_balls_final_sequence(d: MatchDriver) -> None:
    _run_out(d, "final_sequence")


def table_shove(d: MatchDriver) -> None:
    _score_slots(d, [(1, 3)])
    roll = _slot_aims(d, (1, 2))()
    d.shoot(Launch(roll.x, roll.vx, roll.vy, shove_at=1.0, shove_dv=260.0))
    d.play_policy_shot()


def player_at_line(d: MatchDriver) -> None:
    """Four policy shots, the players taking turns at the line as the rules say."""
    for _ in range(4):
        if d.game_over or d.round_start_t is None:
            break
        d.play_policy_shot()


SCRIPTS: dict[str, Callable[[MatchDriver], None]] = {
    "full_game": full_game,
    "chain_grand_slam": chain_grand_slam,
    "play_line_foul": play_line_foul,
    "knock_into_slot": knock_into_slot,
    "gutter_ball": gutter_ball,
    "grouping": grouping,
    "out_of_balls_bank": out_of_balls_bank,
    "out_of_balls_final_sequence": out_of_balls_final_sequence,
    "table_shove": table_shove,
    "player_at_line": player_at_line,
}
