"""Position valuation (SCB-4.x): base, chain bonus, Grand Slam, combined bonus, multiplier zones."""

from hypothesis import given, settings, strategies as st

from rules.starcluster import StarClusterConfig
from rules.starcluster.scoring import award, runs, total, value_position

CFG = StarClusterConfig()


def test_scb_4_1_base_score_by_position():
    """SCB-4.1 "Position 3, furthest | 5 points; Position 2 | 2 points; Position 1, closest | 1 point"."""
    assert total(CFG, [(1, 0)]) == 1
    assert total(CFG, [(2, 0)]) == 2
    assert total(CFG, [(3, 0)]) == 5
    assert total(CFG, [(1, 0), (2, 0), (3, 0)]) == 8


def test_scb_4_2_chain_bonus_per_additional_chained_ball():
    """SCB-4.2 "Balls must land in adjacent slots within the same Astrolabe Position to form a chain ...
    Position 1: +1, Position 2: +2, Position 3: +5 per additional chained ball"."""
    assert total(CFG, [(1, 0), (1, 1), (1, 2)]) == 3 * 1 + 2 * 1  # 5
    assert total(CFG, [(2, 0), (2, 1)]) == 2 * 2 + 2  # 6
    assert total(CFG, [(3, 0), (3, 1)]) == 2 * 5 + 5  # 15


def test_scb_4_2_only_chained_balls_count_for_consecutive_scoring():
    """SCB-4.2 "Only chained balls count for consecutive scoring": a gap breaks the chain."""
    assert total(CFG, [(1, 0), (1, 2)]) == 2
    assert runs([0, 2, 3, 5, 6, 7]) == [1, 2, 3]
    assert total(CFG, [(1, 0), (1, 2), (1, 3)]) == 1 + (2 + 1)


def test_scb_4_2_chains_do_not_cross_positions():
    """SCB-4.2 "adjacent slots within the same Astrolabe Position": P1 slot 4 and P2 slot 0 never chain."""
    assert total(CFG, [(1, 6), (2, 0)]) == 1 + 2


def test_scb_4_3_grand_slam_doubles_the_position_total():
    """SCB-4.3 "Filling an entire Astrolabe Position with your balls doubles the total points for that position"."""
    full_p3 = [(3, s) for s in range(3)]
    assert total(CFG, full_p3) == (3 * 5 + 2 * 5) * 2  # 50
    v = value_position(CFG, 3, [0, 1, 2])
    assert (v.base, v.chain, v.grand_slam) == (15, 10, 25)


def test_scb_4_4_final_ball_completing_chain_and_grand_slam_gets_both():
    """SCB-4.4 "If a final ball completes both a chain and a Grand Slam, both bonuses apply"."""
    before = [(2, s) for s in range(4)]  # 4·2 + 3·2 = 14
    points, items = award(CFG, before + [(2, 4)], [(2, 4)])
    # after: base 10 + chain 8 = 18, doubled = 36; the last ball is worth 36 − 14 = 22
    assert points == 22
    assert [(i.label, i.points) for i in items] == [("P2 base", 2), ("P2 chain bonus", 2), ("P2 Grand Slam", 18)]


def test_scb_4_2_ball_bridging_two_chains_earns_both_links():
    """SCB-4.2: a ball filling the gap between two runs joins them into one chain (two extra links)."""
    points, _ = award(CFG, [(1, 0), (1, 1), (1, 2), (1, 3), (1, 4)], [(1, 2)])
    assert points == 1 + 2  # base 1, chain goes from 2 links to 4


def test_scb_10_3_multiplier_zone_multiplies_the_position_total():
    """SCB-10.3 "Certain Astrolabe Positions may award 2× or 3× points" (after the Grand Slam doubling)."""
    cfg = StarClusterConfig.from_dict({"optional_rules": {"multipliers": {"3": 3, "1": 2}}})
    assert total(cfg, [(3, 0)]) == 15
    assert total(cfg, [(3, 0), (3, 1), (3, 2)]) == 150
    assert total(cfg, [(1, 0), (2, 0)]) == 2 + 2
    points, items = award(cfg, [(3, 0)], [(3, 0)])
    assert points == 15 and items[-1].label == "P3 multiplier zone" and items[-1].points == 10


SLOTS = st.sets(st.tuples(st.integers(1, 3), st.integers(0, 6)).filter(lambda s: s[1] < (7, 5, 3)[s[0] - 1]))


@settings(max_examples=60, deadline=None)
@given(SLOTS, st.randoms(use_true_random=False))
def test_scb_4_property_sum_of_landing_awards_equals_final_value(slots, rnd):
    """SCB-4.5 property: with no knock-outs, the awards of balls landing one at a time add up to V(final)."""
    order = sorted(slots)
    rnd.shuffle(order)
    board: list = []
    gained = 0
    for slot in order:
        board.append(slot)
        points, items = award(CFG, board, [slot])
        assert points == sum(i.points for i in items) and points > 0
        gained += points
    assert gained == total(CFG, slots)
