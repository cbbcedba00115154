"""Truth and video agree: balls, hands, the person and a shoved table, checked on decoded pixels."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from calibration.aruco import detect_markers
from calibration.profile import load_profile
from rules.piratenbillard.board import row_seat
from simulation import people
from simulation.camera import make_camera
from simulation.piratenbillard import simulate_piratenbillard
from simulation.realism import Realism
from simulation.render import Renderer, render_clip
from simulation.trajectory import BallPose, HandPose, PersonPose, SimFrame, TableShift
from vision.video_io import read_frames

TOLERANCE_PX = 2.0  # truth pixel vs. centroid of the ball's pixels in the decoded H.264 video (4:2:0 chroma)


def _ball_mask(image: np.ndarray, owner: str) -> np.ndarray:
    """Pixels clearly of the ball's hue (lit or shaded), not the greyish board, skin or shadow."""
    b, g, r = (image[..., i].astype(int) for i in range(3))
    main, others = {"red": (r, np.maximum(g, b)), "blue": (b, np.maximum(g, r))}[owner]
    return (main > 35) & (main > 1.6 * others + 5)


def _centroid(image: np.ndarray, owner: str, u: float, v: float, radius: float) -> tuple[float, float, int]:
    half = int(np.ceil(radius * 1.6))
    x0, y0 = int(round(u)) - half, int(round(v)) - half
    window = image[y0:y0 + 2 * half + 1, x0:x0 + 2 * half + 1]
    ys, xs = np.nonzero(_ball_mask(window, owner))
    return float(xs.mean() + x0) if len(xs) else np.nan, float(ys.mean() + y0) if len(ys) else np.nan, len(xs)


@pytest.mark.parametrize("preset", ["behind_play_line", "overhead"])
def test_ball_truth_pixels_are_where_the_video_shows_the_balls(tmp_path, preset):
    profile = load_profile("piratenbillard")
    match = simulate_piratenbillard(profile, 5, "capture")
    match = replace(match, frames=match.frames[:: 6])  # every 6th frame: resting, flying and lifted balls
    camera = make_camera(profile, preset, 640, 360)
    truths = render_clip(match, profile, {}, camera, Realism.moderate(), tmp_path, progress=False)
    decoded = list(read_frames(tmp_path / "video.mp4"))
    assert len(decoded) == len(truths)
    checked = 0
    for frame, truth in zip(decoded, truths):
        for ball in truth.balls:
            crowded = any(o.id != ball.id and np.hypot(o.u - ball.u, o.v - ball.v) < 3 * ball.r_px
                          for o in truth.balls)
            cell = profile_cell(profile, ball.x, ball.y)
            if not ball.visible or ball.moving or crowded or cell is None or row_seat(cell) is not None:
                continue  # starting rows are painted in the players' colours
            owner = match.frames[0].balls[ball.id].owner
            u, v, n = _centroid(frame.image, owner, ball.u, ball.v, ball.r_px)
            assert n > 0.5 * np.pi * ball.r_px**2, f"ball {ball.id} not found at its truth pixel"
            assert np.hypot(u - ball.u, v - ball.v) <= TOLERANCE_PX, (ball, u, v)
            checked += 1
    assert checked >= 5


def profile_cell(profile, x, y):
    where = profile.locate((x, y)).at
    return (where.row, where.col) if where.row is not None else None


def _one_frame(profile, frame, preset="behind_play_line", realism=Realism()):
    renderer = Renderer(profile, make_camera(profile, preset, 640, 360), realism, 30, 0)
    return renderer.render(frame)


def test_hand_occludes_the_ball_under_it_and_truth_says_so():
    profile = load_profile("piratenbillard")
    x, y = profile.space_center(4, 4)
    balls = (BallPose(0, "red", x, y, 12.5), BallPose(1, "blue", *profile.space_center(6, 6), 12.5))
    bare, bare_truth = _one_frame(profile, SimFrame(0, 0.0, balls))
    covered, truth = _one_frame(profile, SimFrame(0, 0.0, balls, hand=HandPose(x, y, "near", radius=50)))
    assert bare_truth.balls[0].visible and not truth.balls[0].visible and truth.balls[0].occluded
    assert truth.balls[1].visible
    u, v = int(round(truth.balls[0].u)), int(round(truth.balls[0].v))
    assert _ball_mask(bare, "red")[v, u] and not _ball_mask(covered, "red")[v, u]


def test_person_keypoints_land_on_the_photo_pixels_and_crossing_follows_reach():
    profile = load_profile("starcluster")
    photo = people.astronaut()
    for reach, crosses in ((60.0, True), (-80.0, False)):
        frame = SimFrame(0, 0.0, (), person=PersonPose("red", 320.0, reach, "nose" if crosses else None))
        image, truth = _one_frame(profile, frame)
        person = truth.person
        assert person is not None and bool(person["crossing_keypoints"]) is crosses
        nose = person["keypoints_px"][0]
        expected = photo.image[int(photo.keypoints[0, 1]), int(photo.keypoints[0, 0])] * 255
        got = image[int(round(nose[1])), int(round(nose[0]))].astype(float)
        assert np.abs(got - expected).max() < 40, (got, expected)
    lead_y = max(p[1] for p in person["keypoints_board_mm"])  # last loop: 80 mm behind the line
    assert lead_y == pytest.approx(profile.play_line[0][1] - 80.0, abs=1.0)


def test_a_shoved_table_moves_its_markers_in_the_image():
    profile = load_profile("piratenbillard")
    still, _ = _one_frame(profile, SimFrame(0, 0.0, ()), "overhead")
    shoved, _ = _one_frame(profile, SimFrame(0, 0.0, (), table_shift=TableShift(dx=15.0)), "overhead")
    before = {m.id: np.mean(m.corners, axis=0) for m in detect_markers(still, profile.markers.dictionary)}
    after = {m.id: np.mean(m.corners, axis=0) for m in detect_markers(shoved, profile.markers.dictionary)}
    common = sorted(set(before) & set(after))
    assert len(common) >= 4
    camera = make_camera(profile, "overhead", 640, 360)
    px_per_mm = camera.k[0, 0] / camera.centre[2]
    for marker in common:
        moved = after[marker] - before[marker]
        assert moved[0] == pytest.approx(15.0 * px_per_mm, abs=1.0) and abs(moved[1]) < 1.0


def test_things_behind_the_camera_are_skipped_not_drawn():
    profile = load_profile("starcluster")
    far_off = BallPose(0, "red", 300.0, -60000.0, 8.0, moving=True, vx=1e6)
    image, truth = _one_frame(profile, SimFrame(0, 0.0, (far_off,), hand=HandPose(300.0, -60000.0, "near")))
    assert not truth.balls[0].visible and truth.hand_px is None and image.shape == (360, 640, 3)


def test_play_line_crossing_event_names_a_body_part_the_rendered_person_crosses_with():
    """The event log's crossing (what the referee must call) agrees with the drawn person's keypoint truth."""
    from simulation.starcluster import StarClusterSimOptions, simulate_starcluster

    profile = load_profile("starcluster")
    match = simulate_starcluster(profile, 1, "play_line_foul", StarClusterSimOptions())
    crossing = next(e for e in match.events if e.TYPE == "play_line_crossing")
    frame = next(f for f in match.frames if abs(f.t - crossing.t) < 1e-6)
    renderer = Renderer(profile, make_camera(profile, "behind_play_line", 640, 360), Realism.moderate(), 30.0, 1)
    _, truth = renderer.render(frame)
    assert truth.person is not None
    assert crossing.body_part in truth.person["crossing_keypoints"]
    before = next(f for f in match.frames if f.person is not None and f.person.reach_mm < 0)
    assert renderer.render(before)[1].person["crossing_keypoints"] == []
