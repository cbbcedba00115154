"""BoardMapper against the renderer's exact truth: contact points, places, and the inverse helpers."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.calibrate import calibrate_markers
from calibration.profile import load_profile
from rules.events import Location, Place
from simulation.camera import make_camera
from simulation.realism import Realism
from simulation.render import Renderer
from simulation.trajectory import BallPose, SimFrame
from vision.detect.colour import ColourDetector
from vision.mapping import BoardMapper

TOLERANCE_MM = 3.0  # mapped truth pixel vs true contact point, 1280x720


def _scene(game: str):
    profile = load_profile(game)
    r = profile.ball_diameter_mm / 2
    if game == "piratenbillard":
        points = [profile.space_center(row, col) for row, col in ((0, 1), (2, 7), (5, 5), (9, 8), (4, 0))]
    else:
        points = [pos.slots[0] for pos in profile.positions] + [(300.0, 300.0), (70.0, 900.0), (400.0, 1000.0)]
    balls = tuple(BallPose(i, "red" if i % 2 else "blue", x, y, r) for i, (x, y) in enumerate(points))
    renderer = Renderer(profile, make_camera(profile, "behind_play_line", 1280, 720), Realism.moderate(), 30, 1)
    image, truth = renderer.render(SimFrame(0, 0.0, balls))
    return profile, BoardMapper(calibrate_markers(image, profile), profile), truth


@pytest.fixture(scope="module", params=["starcluster", "piratenbillard"])
def scene(request):
    return _scene(request.param)


def test_contact_points_match_truth_and_the_height_correction_is_what_makes_them(scene):
    profile, mapper, truth = scene
    uv = np.array([[b.u, b.v] for b in truth.balls])
    xy = np.array([[b.x, b.y] for b in truth.balls])
    corrected = np.hypot(*(mapper.to_board(uv) - xy).T)
    plane_only = np.hypot(*(mapper.calibration.image_to_board(uv) - xy).T)
    assert mapper.height_corrected
    assert corrected.max() < TOLERANCE_MM, corrected
    assert plane_only.mean() > 3 * corrected.mean() + 2.0, (plane_only, corrected)


def test_inverse_helpers_put_the_ball_where_the_renderer_drew_it(scene):
    _, mapper, truth = scene
    xy = np.array([[b.x, b.y] for b in truth.balls])
    uv = np.array([[b.u, b.v] for b in truth.balls])
    assert np.abs(mapper.ball_centre_px(xy) - uv).max() < 1.0
    assert np.abs(mapper.ball_radius_px(xy) - [b.r_px for b in truth.balls]).max() < 0.2
    assert np.abs(mapper.to_board(mapper.ball_centre_px(xy)) - xy).max() < 0.01


def test_map_names_the_place_under_each_ball(scene):
    profile, mapper, truth = scene
    dets = [type("D", (), {"u": b.u, "v": b.v})() for b in truth.balls]
    balls = mapper.map(dets)  # type: ignore[arg-type]
    places = [b.location for b in balls]
    if profile.game == "piratenbillard":
        assert places[:4] == [Location.cell_at(0, 1), Location.cell_at(2, 7), Location.cell_at(5, 5),
                              Location.cell_at(9, 8)]
    else:
        assert places[:3] == [Location.slot_at(1, 0), Location.slot_at(2, 0), Location.slot_at(3, 0)]
        assert [p.place for p in places[3:]] == [Place.PLAY_AREA, Place.GUTTER, Place.GROUPED]


def test_the_detector_box_covers_the_table(scene):
    _, mapper, _ = scene
    from vision.detect.colour_model import build_model

    det = ColourDetector(build_model({"red": None, "blue": None}, None), mapper)
    x0, y0, x1, y1 = det.box
    poly = mapper.table_polygon_px()
    assert (poly[:, 0] >= x0 - 1).all() and (poly[:, 0] <= x1 + 1).all() and (poly[:, 1] <= y1 + 1).all()
