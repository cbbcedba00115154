"""Reading the settled table place by place, against the truth of simulated matches."""

from __future__ import annotations

import collections

import pytest

from calibration.calibrate import calibrate_markers
from calibration.lookup import locate
from calibration.profile import load_profile
from rules.events import Location
from simulation.camera import make_camera
from simulation.piratenbillard import simulate_piratenbillard
from simulation.realism import Realism
from simulation.render import Renderer
from simulation.starcluster import simulate_starcluster
from simulation.trajectory import BallPose, SimFrame
from vision.cells import read_snapshot
from vision.detect import make_detector
from vision.mapping import BoardMapper, to_event_location

GAMES = {
    "starcluster": (simulate_starcluster, "chain_grand_slam", None),
    "piratenbillard": (simulate_piratenbillard, "stacked_pair", {"red": 0, "blue": 2}),
}


def _setup(game: str):
    simulate, scenario, seats = GAMES[game]
    profile = load_profile(game)
    match = simulate(profile, 3, scenario)
    renderer = Renderer(profile, make_camera(profile, "behind_play_line", 1280, 720), Realism.moderate(),
                        match.fps, 3)
    first, _ = renderer.render(match.frames[0])
    mapper = BoardMapper(calibrate_markers(first, profile), profile)
    return profile, match, renderer, mapper, make_detector("color", first, mapper, ["red", "blue"], seats)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_settled_frames_are_read_ball_for_ball(game):
    profile, match, renderer, mapper, detector = _setup(game)
    settled = [f for f in match.frames if f.hand is None and not any(b.moving for b in f.balls)]
    correct = total = 0
    for frame in settled[:: max(1, len(settled) // 6)]:
        image, truth = renderer.render(frame)
        want = collections.Counter((b.owner, to_event_location(locate(profile, (b.x, b.y))))
                                   for b in truth.balls if b.visible)
        got = collections.Counter((b.owner, b.at) for b in read_snapshot(image, mapper, detector).balls)
        correct += sum((want & got).values())
        total += max(sum(want.values()), sum(got.values()))
    assert total >= 20 and correct / total >= 0.98, (correct, total)


def test_two_balls_of_one_colour_in_one_space_count_two():
    profile, match, renderer, mapper, detector = _setup("piratenbillard")
    x, y = profile.space_center(5, 3)
    r = profile.ball_diameter_mm / 2
    frame = SimFrame(0, 0.0, (BallPose(0, "red", x, y, r), BallPose(1, "red", x + 8, y, r),
                              BallPose(2, "blue", *profile.space_center(2, 6), r)))
    image, _ = renderer.render(frame)
    snapshot = read_snapshot(image, mapper, detector)
    assert snapshot.count("red") == 2 and snapshot.count("blue") == 1
    assert {b.at for b in snapshot.balls if b.owner == "red"} == {Location.cell_at(5, 3)}
    assert all(b.confidence >= 0.5 for b in snapshot.balls)
