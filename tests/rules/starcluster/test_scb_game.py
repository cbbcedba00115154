"""Whole Star Cluster Ball games: the demo log, config validation, and property-based invariants."""

import random
from dataclasses import replace

import pytest
from hypothesis import given, settings, strategies as st
from scb_example import EXAMPLE, Table, example_events
from scb_helpers import Log, cfg, kinds, points, run

from rules.decisions import DecisionKind as K
from rules.engine import PendingChoice
from rules.errors import InputError
from rules.events import (BallLifted, GameStart, Location, OutOfBallsChoice, PlayerSpec, RoundEnd, RoundStart, Snapshot,
                          TableSettled)
from rules.replay import read_log, replay
from rules.starcluster import StarClusterConfig, StarClusterEngine
from rules.starcluster.scoring import total


def test_scb_example_file_matches_its_script_and_parses():
    """examples/starcluster_full_game.jsonl is what scb_example.py writes, and every line parses."""
    events = read_log(EXAMPLE)
    assert [e.to_json() for e in events] == [e.to_json() for e in example_events()]
    assert 20 <= sum(1 for e in events if e.TYPE == "shot_started") <= 40


def test_scb_full_example_game_final_score():
    """The demo game, hand-computed (clause ids in brackets):

    Round 1 (red starts, SCB-3.1):
      red  P1/3 1, P1/4 chain 1+1=2, P2/2 2, grouped [SCB-5.4]                        -> 5
      blue P3/1 5, P3/2 5+5=10, returned [SCB-5.3]                                   -> 15
      red  P2/3 chain 2+2=4, gutter [SCB-5.1]                                        -> 9
      blue P3/0 Grand Slam: (15 base + 10 chain)·2 = 50, minus 15 already = 35 [SCB-4.3/4.4] -> 50
      blue P1/0 1, knocks red P2/3 -> P2/4: red +2 (alone), foul [SCB-5.7]            -> blue 51, red 11
      red  void shot (Play Line) [SCB-3.5], ball out                                  -> 11
      blue P2/1 2, grouped                                                            -> 53
      red  P1/5 2, P1/6 2, P1/2 2 (chain links) -> 17; red has 0 in hand:
           7 in slots + 1 grouped + gutter + foul ball = 10 [SCB-6.1]
      blue chooses the Final Sequence with 4 balls [SCB-7.1]: P2/3 2, returned (discarded) [SCB-7.2],
           P1/1 chain 1+1=2, gutter                                                   -> 57
      round 1: red 17, blue 57 (no ball left in either hand)
    Round 2 (blue starts):
      blue P2/0 2, P2/1 4, P2/2 4, grouped                                            -> 10
      red  P3/1 5, P3/0 10, returned                                                  -> 15
      blue P2/3 4, P2/4 Grand Slam (10+8)·2 = 36 − 14 = 22, gutter                    -> 36
      red  P3/2 Grand Slam 50 − 15 = 35, P1/0 1, P1/1 2, grouped                       -> 53
      blue P1/3 1, knocks red's grouped ball into P1/2: red +2 (chain), foul          -> blue 37, red 55
      time: remaining balls [SCB-6.3]: red 10 − 6 slots = 4, blue 10 − 6 slots − 1 grouped − 1 gutter = 2
      round 2: red 59, blue 39
    Game: red 17 + 59 = 76, blue 57 + 39 = 96: blue wins [SCB-3.6].
    """
    result = replay(read_log(EXAMPLE), "starcluster")
    game = result.standings.games[0]
    assert [dict(r.scores) for r in game.rounds] == [{"red": 17, "blue": 57}, {"red": 59, "blue": 39}]
    assert dict(game.totals) == {"red": 76, "blue": 96}
    assert result.standings.winners == ("blue",) and result.standings.complete
    decisions = list(result.decisions)
    assert points(decisions, "red") == 76 and points(decisions, "blue") == 96
    assert len(kinds(decisions, K.CHOICE_REQUIRED)) == 1 and len(kinds(decisions, K.UMPIRE)) == 1
    assert not kinds(decisions, K.WARNING)
    rules = {d.rule for d in decisions}
    assert {"SCB-4.1", "SCB-5.1", "SCB-5.2", "SCB-5.7", "SCB-6.1", "SCB-6.3", "SCB-7.1", "SCB-7.2"} <= rules


def test_scb_example_game_state_hands_choice_and_round_clock():
    """state() through the demo game: hands, the bank-or-Final-Sequence choice, and each round's clock."""
    engine = StarClusterEngine()
    seen = {}
    for event in read_log(EXAMPLE):
        engine.feed(event)
        seen[event.id] = engine.state()
    start = seen["G1"]
    assert (start.players, start.game_number, start.round_number, start.round_tiebreak) == (
        ("red", "blue"), 1, 1, False)
    assert start.round_started_at is None and start.round_length_s == 360.0 and start.clock_counts_down
    assert start.hand == {"red": 10, "blue": 10} and start.to_play == "red" and not start.complete
    assert seen["R1"].round_started_at == 2.0 and seen["S2"].shot_in_progress and seen["S2"].shooter == "red"
    out_of_balls = seen["T39"]  # red's last ball lands: blue must choose
    assert out_of_balls.pending_choice == PendingChoice("blue", ("bank", "final_sequence"), "red has no balls left")
    assert out_of_balls.hand == {"red": 0, "blue": 4} and out_of_balls.to_play == "blue"
    chosen = seen["C1"]
    assert chosen.pending_choice is None and chosen.final_sequence == "blue" and chosen.to_play == "blue"
    round_two = seen["T48"]  # the Final Sequence played every ball: round 2 set up, its clock not started
    assert (round_two.round_number, round_two.round_started_at, round_two.round_ended_at) == (2, None, None)
    assert round_two.hand == {"red": 10, "blue": 10} and not round_two.board and round_two.final_sequence is None
    assert seen["R2"].round_started_at == 400.0
    end = seen["R3"]  # the umpire ends round 2 at 760: the game and the match are over
    assert end.complete and end.to_play is None and end.round_number == 2
    assert (end.round_started_at, end.round_ended_at) == (400.0, 760.0)
    assert end.hand == {"red": 4, "blue": 2}


# ---------------------------------------------------------------- config


def test_scb_config_defaults():
    """SCB-1.2: defaults: 10 balls, 7/5/3 slots, 1/2/5 base, 360 s rounds, 180 s tie-break, 2 rounds."""
    c = StarClusterConfig.from_dict({})
    assert c == StarClusterConfig()
    assert (c.balls_per_player, c.slots_per_position, c.base_scores, c.chain_bonus) == (10, (7, 5, 3), (1, 2, 5),
                                                                                          (1, 2, 5))
    assert (c.round_seconds, c.tiebreak_seconds, c.rounds_per_game) == (360.0, 180.0, 2)


@pytest.mark.parametrize("data, message", [
    ({"optional_rules": {"multipliers": {"3": 5}}}, "config: 'optional_rules.multipliers.3' must be 1, 2 or 3, got 5"),
    ({"balls_per_player": 0}, "'balls_per_player' must be an integer >= 1"),
    ({"slots_per_position": [7, 5]}, "'base_scores' must be a list of 2 integers"),
    ({"round_starters": ["up"]}, "'round_starters' must be a non-empty list"),
    ({"clock": "wall"}, "'clock' must be 'events' or 'umpire'"),
    ({"best_of": 2}, "'best_of' must be an odd number"),
    ({"target_score": 0}, "'target_score' must be null or an integer >= 1"),
    ({"colour": "red"}, "unknown setting 'colour'"),
    ({"optional_rules": {"dead_ball": {"slots": [[3, 9]]}}}, "'optional_rules.dead_ball.slots' must be"),
    ({"void_shot_displaced": "ignore"}, "'void_shot_displaced' must be 'restore' or 'stand'"),
])
def test_scb_config_rejects_bad_fields_naming_them(data, message):
    """SCB-1.2: a bad config field raises InputError naming the field."""
    with pytest.raises(InputError, match="^config: ") as error:
        StarClusterConfig.from_dict(data)
    assert message in str(error.value)


def test_scb_1_2_balls_per_player_and_slots_per_position_are_configurable():
    """SCB-1.2: a smaller table (5/3/1 slots) with 3 balls each; a single P3 slot is a Grand Slam by itself."""
    c = cfg(balls_per_player=3, slots_per_position=[5, 3, 1])
    log = Log().shot("red@3.0")
    engine, out = run(log.events, c, close=False)
    assert points(out, "red") == 10 and engine.state().hand["red"] == 2


def test_scb_1_1_game_needs_two_players_on_different_sides():
    """SCB-1.1 "2 players or 2 teams per match"; each on a Side."""
    with pytest.raises(InputError, match="exactly 2 players"):
        run([GameStart(0.0, "G", players=(PlayerSpec("red"),))])
    with pytest.raises(InputError, match="both players are on the right side"):
        run([GameStart(0.0, "G", players=(PlayerSpec("red", side="right"), PlayerSpec("blue", side="right")))])


# ---------------------------------------------------------------- property-based invariants


def random_game(actions, config: StarClusterConfig) -> list:
    """Play random legal shots on a scripted table, asking the engine who is to play. After each shot the umpire
    lifts the balls the rules removed and the table still shows (blocking's sandwiched balls), as at a real table: a
    removed ball left lying could be knocked on by a later shot, which the engine reads by SCB-11.3 and flags."""
    table = Table()
    engine = StarClusterEngine(config)
    fed = 0

    def sync() -> None:
        nonlocal fed
        for event in table.events[fed:]:
            engine.feed(event)
        fed = len(table.events)

    table.emit(GameStart(0.0, "G", players=(PlayerSpec("red", side="right"), PlayerSpec("blue", side="left"))))
    table.emit(RoundStart(1.0, "R"))
    sync()
    t, number = 2.0, 1
    for i, (a, k, bank) in enumerate(actions):
        standing = engine.standings()
        if standing.complete:
            break
        state = engine.state()
        if state.round_number != number:  # a new round: the table is cleared
            number = state.round_number
            table.slots, table.grouped, table.gutter, table.play = {}, [], [], []
        if state.pending_choice is not None:
            table.emit(OutOfBallsChoice(t, f"C{i}", player=state.pending_choice.player,
                                        choice="bank" if bank else "final_sequence"))
        else:
            shooter = standing.to_play
            free = [(p, s) for p in (1, 2, 3) for s in range((7, 5, 3)[p - 1]) if (p, s) not in table.slots]
            options = free + ["grouped", "gutter", "play"]
            to = options[a % len(options)]
            knock = None
            if k % 3 == 0 and table.slots:
                occupied = sorted(table.slots)
                targets = [x for x in free if x != to] + ["play", "gutter"]
                knock = (occupied[k % len(occupied)], targets[k % len(targets)])
            crossing = knock is None and k % 7 == 1
            before = (dict(table.slots), list(table.grouped), list(table.gutter))
            table.shot(t, shooter, to, knock=knock, crossing=crossing)
            if crossing:  # the umpire lifts the foul ball (and, under restore, puts the table back)
                if config.void_shot_displaced == "restore":
                    table.slots, table.grouped, table.gutter = before
                elif isinstance(to, tuple):
                    del table.slots[to]
                elif to == "grouped":
                    table.grouped.remove(shooter)
                table.play = []
                table.emit(TableSettled(t + 4.0, f"V{i}", snapshot=table.snapshot()))
        t += 7.0
        sync()
        unlifted = [(slot, owner) for slot, owner in engine.state().unlifted_slots.items()
                    if table.slots.get(slot) == owner]
        for n, (slot, owner) in enumerate(unlifted):
            del table.slots[slot]
            table.emit(BallLifted(t - 2.0, f"U{i}.{n}", owner=owner, at=Location.slot_at(*slot)))
        if unlifted:
            table.emit(TableSettled(t - 1.5, f"W{i}", snapshot=table.snapshot()))
            sync()
    table.emit(RoundEnd(t, "END"))
    return table.events


ACTIONS = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40), st.booleans()), min_size=1, max_size=30)
CONFIGS = st.sampled_from([
    StarClusterConfig(),
    StarClusterConfig(knocked_out_ball_loses_points=True),
    StarClusterConfig.from_dict({"optional_rules": {"blocking": True, "multipliers": {"2": 3}}}),
    StarClusterConfig.from_dict({"balls_per_player": 4, "optional_rules": {"grand_slam_finish": True}}),
    StarClusterConfig(void_shot_displaced="stand", knocked_out_ball_loses_points=True),
])


def shuffled(events, seed):
    rnd = random.Random(seed)
    out = []
    for e in events:
        if isinstance(e, TableSettled):
            balls = list(e.snapshot.balls)
            rnd.shuffle(balls)
            e = replace(e, snapshot=Snapshot(tuple(balls)))
        out.append(e)
    return out


@settings(max_examples=40, deadline=None)
@given(ACTIONS, CONFIGS, st.integers(0, 1000))
def test_scb_property_ball_order_replay_and_totals(actions, config, seed):
    """Invariants: the score never depends on the order of balls in a snapshot; replaying the same events gives
    identical decisions; each player's total is the sum of their SCORE points; every breakdown adds up."""
    events = random_game(actions, config)
    engine, decisions = run(events, config)
    _, again = run(events, config)
    assert again == decisions
    _, reordered = run(shuffled(events, seed), config)
    assert reordered == decisions
    assert not kinds(decisions, K.WARNING)  # the scripted table and the engine's bookkeeping agree
    totals = engine.standings().games[0].totals if len(engine.standings().games) == 1 else None
    for player in ("red", "blue"):
        scored = sum(d.points for d in decisions if d.kind is K.SCORE and d.player == player)
        games = engine.standings().games
        assert scored == sum(g.totals[player] for g in games)
        if totals is not None:
            assert scored == totals[player]
    for d in decisions:
        assert sum(item.points for item in d.breakdown) == (d.points if d.breakdown else 0)
        if d.kind is not K.SCORE:
            assert d.points == 0


@settings(max_examples=25, deadline=None)
@given(actions=ACTIONS)
@pytest.mark.parametrize("displaced", ["restore", "stand"])
def test_scb_property_loses_points_mode_slot_points_follow_the_board(displaced, actions):
    """SCB-4.5 (knocked_out_ball_loses_points): a player's slot points always equal the value of the board."""
    config = StarClusterConfig(knocked_out_ball_loses_points=True, void_shot_displaced=displaced)
    events = [e for e in random_game(actions, config) if not isinstance(e, RoundEnd)]
    engine, decisions = run(events, config, close=False)
    if engine.state().round_number != 1 or engine.standings().complete:
        return  # only check a round still in play
    for player in ("red", "blue"):
        slot_points = sum(d.points for d in decisions if d.kind is K.SCORE and d.player == player)
        assert slot_points == total(config, engine.state().live[player])
