"""Shot segmentation: Play Line crossings, struck balls leaving spaces, lifts, and the umpire session."""

import json

import pytest

from calibration.profile import load_profile
from rules.errors import InputError
from rules.events import BallLifted, GameStart, Location, Place, RoundStart, ShotStarted, TableSettled
from vision.config import PipelineConfig
from vision.settle import Settle
from vision.shots import SessionFeed, ShotSegmenter, snapshot_from_tracks
from vision.track import TrackerUpdate
from vision.types import Track, TrackState

SC = load_profile("starcluster")
PB = load_profile("piratenbillard")


def tr(id, x, y, vy=0.0, at_rest=False, location=None, state=TrackState.CONFIRMED, seen=0.0, colour="red"):
    return Track(id, colour, x, y, 0.0, vy, state, at_rest, seen, 5, location=location)


def up(*tracks, ended=()):
    return TrackerUpdate(tuple(tracks), tuple(ended), frozenset(t.id for t in tracks))


def test_star_cluster_shot_starts_when_a_ball_crosses_the_play_line_upwards():
    line = SC.play_line[0][1]
    shots = ShotSegmenter(SC, PipelineConfig(), snapshot_from_tracks)
    assert shots.update(1.0, up(tr(1, 300, line - 40, vy=800)), None, False) == []
    (event,) = shots.update(1.1, up(tr(1, 300, line + 20, vy=800)), None, False)
    assert isinstance(event, ShotStarted) and event.player == "red" and event.t == 1.1
    assert shots.update(1.2, up(tr(1, 300, line + 80, vy=800)), None, False) == []  # once per crossing
    # a ball already on the board that gets knocked upwards is not a shot
    assert shots.update(1.3, up(tr(2, 300, line + 500, vy=900)), None, False) == []


def test_a_fast_ball_first_confirmed_far_past_the_line_is_a_shot_if_it_was_first_seen_near_it():
    """A ball thrown hard is 200 mm further on by the time its track is confirmed: where it was first
    detected decides; a resting ball found again after a hand hid it (slow, jittery) is no shot."""
    from dataclasses import replace
    line = SC.play_line[0][1]
    shots = ShotSegmenter(SC, PipelineConfig(), snapshot_from_tracks)
    found_again = replace(tr(3, 300, line + 150, vy=100), born_at=(300, line + 150))
    assert shots.update(0.9, up(found_again), None, False) == []  # under the motion speed: jitter, not a roll
    fast = replace(tr(1, 300, line + 450, vy=1200), born_at=(300, line + 190))
    (event,) = shots.update(1.0, up(fast), None, False)
    assert isinstance(event, ShotStarted) and event.player == "red"
    shots = ShotSegmenter(SC, PipelineConfig(), snapshot_from_tracks)
    far = replace(tr(2, 300, line + 650, vy=1200), born_at=(300, line + 600))
    assert shots.update(1.0, up(far), None, False) == []


def test_settle_gives_the_snapshot_and_a_lifted_resting_ball_is_a_lift():
    shots = ShotSegmenter(PB, PipelineConfig(), snapshot_from_tracks)
    cell = Location.cell_at(5, 4)
    resting = tr(1, *PB.space_center(5, 4), at_rest=True, location=cell, seen=2.0)
    (settled,) = shots.update(2.0, up(resting), Settle(2.0, (resting,), 0.8), False)
    assert isinstance(settled, TableSettled) and settled.confidence == 0.8
    assert [(b.owner, b.at) for b in settled.snapshot.balls] == [("red", cell)]
    shots.update(2.5, up(), None, True)  # a hand reaches over it
    (lifted,) = shots.update(3.5, up(ended=(resting,)), None, False)
    assert isinstance(lifted, BallLifted) and lifted.at == cell and lifted.owner == "red"
    # a resting ball that vanishes with no hand in sight is a warning, not a lift
    other = tr(2, *PB.space_center(5, 5), at_rest=True, location=Location.cell_at(5, 5), seen=9.0)
    assert shots.update(10.5, up(ended=(other,)), None, False) == []
    assert "no hand" in shots.warnings[-1]


def test_piratenbillard_shot_starts_when_a_resting_ball_leaves_its_space():
    shots = ShotSegmenter(PB, PipelineConfig(), snapshot_from_tracks)
    x, y = PB.space_center(9, 4)
    home = Location.cell_at(9, 4)
    shots.update(1.0, up(tr(1, x, y, at_rest=True, location=home)), None, False)
    assert shots.update(1.1, up(tr(1, x, y + 10, location=home)), None, False) == []  # a wobble
    (event,) = shots.update(1.2, up(tr(1, x, y + 40, location=Location.cell_at(8, 4))), None, False)
    assert event.player == "red" and event.ball_from == home


def test_two_balls_in_one_space_count_as_two():
    cell = Location.cell_at(6, 3)
    balls = (tr(1, 0, 0, location=cell), tr(2, 8, 0, location=cell))
    assert snapshot_from_tracks(Settle(1.0, balls, 1.0)).count("red", Place.CELL) == 2


def test_session_from_a_truth_file_keeps_umpire_inputs_in_time_order(tmp_path):
    truth = {"events": [
        {"type": "game_start", "t": 0.0, "players": [{"id": "red", "side": "right"}, {"id": "blue", "side": "left"}]},
        {"type": "round_start", "t": 0.5},
        {"type": "shot_started", "t": 1.0, "player": "red"},
    ]}
    path = tmp_path / "truth.json"
    path.write_text(json.dumps(truth))
    feed = SessionFeed.load(path)
    first = feed.due(0.2)
    assert [type(e) for e in first] == [GameStart] and first[0].id == ""
    assert [type(e) for e in feed.due(5.0)] == [RoundStart]  # observations are vision's to make
    assert feed.rest() == []


def test_a_bad_session_line_is_a_clear_error(tmp_path):
    path = tmp_path / "session.jsonl"
    path.write_text('{"type": "round_start", "t": 0}\n{"type": "game_start", "t": 1, "players": []}\n')
    with pytest.raises(InputError, match="entry 2"):
        SessionFeed.load(path)
