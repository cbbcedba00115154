"""The line-reach clip generator: its truth checked against its own rendered pixels."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from simulation import line_reach as lr
from vision.play_line import PlayLineJudge

NEGATIVE_SHOOTER = ("hover", "shadow", "ball_back", "umpire", "clear")


@pytest.fixture(scope="module")
def clips() -> list[lr.ReachClip]:
    return lr.reach_clips(22, seed=3)  # two of every kind, four of arm_reach per cycle


def _peak(clip: lr.ReachClip) -> int:
    b = np.array(clip.beyond_mm)
    return int(np.argmax(b)) if np.isfinite(b).any() else len(b) // 2


def test_counts_by_kind_and_positives_about_half(clips):
    counts = Counter(c.truth.kind for c in clips)
    assert counts["arm_reach"] == 8 and all(counts[k] == 2 for k in lr.KINDS if k != "arm_reach")
    fouls = sum(c.truth.foul for c in clips)
    assert fouls == 10 and {c.truth.kind for c in clips if c.truth.foul} == set(lr.POSITIVE_KINDS)
    assert len({c.truth.name for c in clips}) == len(clips)
    assert {c.truth.preset for c in clips} == set(lr.PRESETS)


def test_truth_is_consistent_per_kind(clips):
    for c in clips:
        t = c.truth
        assert len(c.beyond_mm) == t.frames == 40 and t.fps == 30
        assert t.peak_beyond_mm == max(c.beyond_mm)
        if t.foul:
            assert t.peak_beyond_mm >= 30 and t.crossing_start_t is not None, t.name
            assert t.part == ("head" if t.kind == "head_lean" else t.part) and t.part is not None
            if t.kind == "arm_reach":
                assert t.part in ("left_hand", "right_hand") and t.hand is not None
            first = next(i for i, b in enumerate(c.beyond_mm) if b > 0)
            if t.kind == "head_lean":  # the head's keypoints cross after its hair
                assert t.crossing_start_t >= first / t.fps - 1e-9
            else:
                assert t.crossing_start_t == pytest.approx(first / t.fps)
        elif t.kind == "lift_between_shots":
            assert t.window is None and t.peak_beyond_mm >= 100 - 2 and t.crossing_start_t is not None
        else:
            assert t.kind in NEGATIVE_SHOOTER
            assert t.peak_beyond_mm < 0 and t.crossing_start_t is None and t.part is None, t.name
        if t.kind != "lift_between_shots":
            assert t.window == (0.0, 40 / 30)
        if t.kind == "ball_back":
            assert len(t.ball_colours) == 2
        if t.kind == "hover":
            assert -25 < t.peak_beyond_mm < 0


def test_beyond_truth_matches_the_shooter_mask_and_the_pixels(clips):
    """At the peak frame, the truth is the furthest shooter-mask pixel, and the frame differs from the bare table
    where the mask is (and hardly anywhere past the line that the mask, the balls or the umpire do not cover)."""
    line_y = clips[0].profile.play_line[0][1]
    for c in clips[::3]:
        i = _peak(c)
        alpha = c.frames.shooter_alpha(i)
        v = lr.view(c.truth.preset)
        inside = alpha > 0.5
        assert inside.any(), c.truth.name
        assert float(c.frames.shooter_y(i)[inside].max()) - line_y == pytest.approx(c.beyond_mm[i], abs=1e-3)
        frame = c.frames.frame(i).astype(np.int16)
        gain = 1 + (c.frames.plan.frames[i].gain - 1)
        bare = np.clip(c.frames.bare().astype(np.float32) * gain + 0.5, 0, 255).astype(np.int16)
        diff = np.abs(frame - bare).max(axis=2)
        core = inside & (alpha > 0.99)
        assert np.mean(diff[core] > 12) > 0.5, c.truth.name  # the person/arm is visible where the mask says
        if c.truth.kind in ("arm_reach", "hover", "clear", "head_lean", "lift_between_shots"):
            outside = (alpha < 0.01) & (v.board_y > line_y + 20) & (v.board_y < line_y + 400)
            assert np.mean(diff[outside] > 12) < 0.01, c.truth.name  # nothing else changed past the line


def test_shooters_that_must_not_cross_never_reach_the_line_in_any_frame(clips):
    for c in clips:
        if c.truth.kind in NEGATIVE_SHOOTER:
            assert max(c.beyond_mm) < 0
            i = _peak(c)
            alpha = c.frames.shooter_alpha(i)
            assert not np.any((alpha > 0.5) & (c.frames.shooter_y(i) > c.profile.play_line[0][1])), c.truth.name


def test_shadow_darkens_past_the_line_keeping_the_colour(clips):
    line_y = clips[0].profile.play_line[0][1]
    for c in [c for c in clips if c.truth.kind == "shadow"]:
        i = _peak(c)
        v = lr.view(c.truth.preset)
        gain = c.frames.plan.frames[i].gain
        frame = c.frames.frame(i).astype(np.float32)
        bare = c.frames.bare().astype(np.float32) * gain
        past = (c.frames.shooter_alpha(i) < 0.01) & (v.board_y > line_y + 2) & (v.board_y < line_y + 300)
        ratio = frame.sum(axis=2) / np.maximum(bare.sum(axis=2), 1)
        dark = past & (ratio < 0.85) & (bare.sum(axis=2) > 150)
        assert dark.sum() > 200, c.truth.name  # a real shadow falls over the line
        chroma = frame[dark] / frame[dark].sum(axis=1, keepdims=True)
        chroma_bare = bare[dark] / bare[dark].sum(axis=1, keepdims=True)
        assert np.median(np.abs(chroma - chroma_bare).max(axis=1)) < 0.02, c.truth.name


def test_head_lean_leads_with_the_head(clips):
    for c in [c for c in clips if c.truth.kind == "head_lean"]:
        i = _peak(c)
        cut = lr.cutout(c.truth.person)
        v = lr.view(c.truth.preset)
        beyond = lr._outline_beyond(v, cut, c.frames.plan.frames[i].photo)
        assert beyond[cut.contour_head].max() > beyond[~cut.contour_head].max()


def test_the_shooter_faces_the_table_as_a_player_at_the_line_does(clips):
    """The photographs face the camera; composited as they are, every player would have their back to the table.
    Mirrored, each person's own left shoulder lies on a table-facing player's left, and a reaching hand named
    left in the truth lies on the left of the body's middle."""
    reaching = [c for c in clips if c.truth.kind == "arm_reach"]
    assert {c.truth.part for c in reaching} == {"left_hand", "right_hand"}
    for c in clips:
        v, cut = lr.view(c.truth.preset), lr.cutout(c.truth.person)
        judge = PlayLineJudge(v.calibration, v.profile)
        plan = c.frames.plan.frames[_peak(c)]
        shoulders = lr._kp_board(v, cut, plan.photo)[[5, 6]]
        assert judge.side(shoulders[0], shoulders.mean(axis=0)) == "left", c.truth.name
        if c.truth.kind == "arm_reach":
            assert plan.arm is not None
            side = judge.side(plan.arm.tip, shoulders.mean(axis=0))
            assert c.truth.part == f"{side}_hand", c.truth.name


def test_cutouts_are_person_shaped():
    for name in lr.PEOPLE:
        cut = lr.cutout(name)
        fraction = float((cut.alpha > 0.5).mean())
        assert 0.1 < fraction < 0.9, name
        assert cut.keypoints.shape == (17, 3)


def test_reproducible_for_a_seed_and_different_across_seeds():
    a, b = lr.reach_clips(4, seed=11), lr.reach_clips(4, seed=11)
    assert [x.truth for x in a] == [y.truth for y in b] and [x.beyond_mm for x in a] == [y.beyond_mm for y in b]
    assert np.array_equal(a[2].frames.frame(7), b[2].frames.frame(7))
    c = lr.reach_clips(4, seed=12)
    assert [x.truth.peak_beyond_mm for x in a] != [y.truth.peak_beyond_mm for y in c]
    only = lr.reach_clips(3, seed=0, kinds=["umpire"])
    assert {x.truth.kind for x in only} == {"umpire"}
    with pytest.raises(ValueError):
        lr.reach_clips(1, kinds=["tail"])
    frames = list(a[0].frames())
    assert len(frames) == 40 and frames[1][0] == pytest.approx(1 / 30)
    assert frames[0][1].shape == (720, 1280, 3) and frames[0][1].dtype == np.uint8
