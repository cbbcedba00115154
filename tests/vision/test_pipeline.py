"""The referee loop end to end on rendered video: scores, the live path, and bad input."""

import json

import numpy as np
import pytest

from calibration.profile import load_profile
from simulation.simulate import simulate_to
from rules.errors import InputError
from rules.events import Snapshot
from rules.replay import read_log, replay
from rules.result import build_result
from simulation.make_samples import SEED
from simulation.realism import Realism
from vision.config import PipelineConfig
from vision.event_log import EventLog
from vision.cells import read_settled
from vision.detect import make_detector
from vision.mapping import BoardMapper
from vision.pipeline import Referee
from vision.shots import SessionFeed
from vision.sources import FileSource, open_source
from vision.types import Detection
from vision.video_io import VideoError, VideoWriter

# Piratenbillard at the committed samples' size (a red ball on red paint is too few pixels at 640x360);
# Star Cluster Ball at 640x360 to keep the module fast (truth detections; its colour run is at 1280x720 below)
CLIPS = {"starcluster": ("chain_grand_slam", "behind_play_line", 640, 360),
         "piratenbillard": ("capture", "overhead", 1280, 720)}


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    out = {}
    for game, (scenario, camera, width, height) in CLIPS.items():
        folder = tmp_path_factory.mktemp(game)
        truth, _ = simulate_to(folder, game, 1, scenario, camera, width, height, realism=Realism.moderate(),
                               progress=False)
        out[game] = (folder, truth)
    return out


class TruthDetector:
    """The renderer's own ball pixels (isolates everything after detection); `rename` relabels colours."""

    name = "truth"

    def __init__(self, truth, rename=None):
        self.frames, self.owners, self.rename = truth["frames"], truth["ball_owners"], rename or {}
        self.index = 0

    def detect(self, image, mask=None):
        balls = self.frames[min(self.index, len(self.frames) - 1)]["balls"]
        self.index += 1
        return [Detection(u, v, r, self.rename.get(self.owners[str(i)], self.owners[str(i)]), 0.95)
                for i, _x, _y, _z, u, v, r, visible, *_ in balls if visible]


def referee_run(folder, truth, out, detector, source=None, config=PipelineConfig(), read_table=read_settled):
    profile = load_profile(truth["game"])
    with EventLog(out) as log:
        factory = detector if callable(detector) else (lambda *args: detector)
        referee = Referee(truth["game"], profile, factory, BoardMapper, read_table, log,
                          SessionFeed.load(folder / "truth.json"), config, truth["config"])
        summary = referee.run(source or FileSource(folder / "video.mp4"))
    replayed = replay(read_log(out / "events.jsonl"), truth["game"], truth["config"])
    return summary, build_result(replayed, {})


def points(result):
    return sorted((d["player"], d["points"]) for d in result["decisions"] if d["kind"] in ("score", "capture"))


@pytest.mark.parametrize("game", sorted(CLIPS))
def test_truth_detections_reach_the_true_score(clips, game, tmp_path):
    folder, truth = clips[game]
    summary, result = referee_run(folder, truth, tmp_path, TruthDetector(truth))
    assert result["final_scores"] == truth["result"]["final_scores"]
    assert points(result) == points(truth["result"])
    assert summary.standings.players == tuple(truth["result"]["final_scores"]) or summary.frames > 0
    # the live engine's calls are the replay's calls
    live = [json.loads(line) for line in (tmp_path / "decisions.jsonl").read_text().splitlines()]
    assert [d["summary"] for d in live if d["type"] == "decision"] == [d["summary"] for d in result["decisions"]]
    # every shot is settled no later than 0.6 s after the sim's settle (0.5 s after the balls stop); a
    # slow final roll under the rest speed can make ours early (see docs/pipeline.md)
    ours = [e.t for e in read_log(tmp_path / "events.jsonl") if e.TYPE == "table_settled"]
    shot_t = None
    for event in truth["events"]:
        if event["type"] == "shot_started":
            shot_t = event["t"]
        elif event["type"] == "table_settled" and shot_t is not None:
            assert any(shot_t < o <= event["t"] + 0.6 for o in ours), (shot_t, event["t"], ours)
            shot_t = None


def test_colour_detector_referees_piratenbillard_end_to_end(clips, tmp_path):
    """The real pipeline, real colour detector, real rendered video: the true decisions and final scores."""
    folder, truth = clips["piratenbillard"]
    _, result = referee_run(folder, truth, tmp_path, lambda image, mapper, players, seats:
                            make_detector("color", image, mapper, players, seats))
    assert points(result) == points(truth["result"])
    assert result["final_scores"] == truth["result"]["final_scores"]


@pytest.fixture(scope="module")
def small_clip(tmp_path_factory):
    """Piratenbillard at 640x360: paced live on 2 shared cores, the referee keeps up with it."""
    folder = tmp_path_factory.mktemp("small")
    truth, _ = simulate_to(folder, "piratenbillard", 1, "capture", "overhead", 640, 360, realism=Realism.moderate(),
                           progress=False)
    return folder, truth


def test_a_file_played_live_gives_the_same_events(small_clip, tmp_path):
    folder, truth = small_clip
    referee_run(folder, truth, tmp_path / "file", TruthDetector(truth))
    live = open_source(str(folder / "video.mp4"), PipelineConfig(), live=True)
    referee_run(folder, truth, tmp_path / "live", TruthDetector(truth), source=live)
    assert live.dropped == 0
    assert (tmp_path / "live" / "events.jsonl").read_text() == (tmp_path / "file" / "events.jsonl").read_text()


def test_a_colour_matching_no_player_is_flagged(clips, tmp_path):
    folder, truth = clips["piratenbillard"]
    referee_run(folder, truth, tmp_path, TruthDetector(truth, rename={"blue": "purple"}))
    warnings = [json.loads(line) for line in (tmp_path / "decisions.jsonl").read_text().splitlines()
                if '"warning"' in line]
    assert sum("'purple' matches no player" in w.get("message", "") for w in warnings) == 1


def test_an_impossible_table_reading_is_flagged_and_dropped(clips, tmp_path):
    """More balls of a colour than a player owns cannot be the table: a review warning, never fed to the engine."""
    folder, truth = clips["piratenbillard"]
    settles = []

    def misread(settle, image, mapper, detector, previous):
        snapshot = read_settled(settle, image, mapper, detector, previous)
        settles.append(snapshot)
        if len(settles) == 2:  # the first shot's settle reads nine red balls
            extra = next(b for b in snapshot.balls if b.owner == "red")
            snapshot = Snapshot(snapshot.balls + (extra,) * 9)
        return snapshot

    summary, _ = referee_run(folder, truth, tmp_path, TruthDetector(truth), read_table=misread)
    assert len(settles) >= 3 and summary.frames > 0
    warnings = [json.loads(line) for line in (tmp_path / "decisions.jsonl").read_text().splitlines()
                if '"warning"' in line]
    dropped = [w for w in warnings if w.get("message", "").startswith("table reading dropped")]
    assert len(dropped) == 1 and dropped[0]["review"] is True and "red balls, but a player has 8" in dropped[0]["message"]
    logged = [e for e in read_log(tmp_path / "events.jsonl") if e.TYPE == "table_settled"]
    assert len(logged) == len(settles) - 1
    assert all(e.snapshot.count("red") <= 8 for e in logged)


def test_no_board_in_view_is_a_clear_error(clips, tmp_path):
    folder, truth = clips["piratenbillard"]
    video = tmp_path / "floor.mp4"
    with VideoWriter(video, 320, 240, 30) as writer:
        for i in range(120):
            writer.write(np.full((240, 320, 3), 60 + i % 5, np.uint8))
    with pytest.raises(InputError, match="no table markers found in the first 3 s"):
        referee_run(folder, truth, tmp_path / "out", TruthDetector(truth), source=FileSource(video))
    assert (tmp_path / "out" / "events.jsonl").read_text().startswith('{"type":"game_start"')


def test_a_truncated_video_is_a_clear_error(clips, tmp_path):
    data = (clips["piratenbillard"][0] / "video.mp4").read_bytes()
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(data[: len(data) // 2])
    with pytest.raises(VideoError):
        FileSource(broken)


class BreaksOff:
    """A file that breaks off mid-way, as a damaged download or a pulled cable does."""

    name, live, frame_count = "breaks-off.mp4", False, 0

    def __init__(self, path, after):
        self.path, self.after = path, after

    def frames(self):
        for frame in FileSource(self.path).frames():
            if frame.index == self.after:
                raise VideoError("video breaks-off.mp4 is damaged after 100 frames")
            yield frame


def test_a_failure_mid_run_keeps_the_events_already_written(clips, tmp_path):
    folder, truth = clips["piratenbillard"]
    with pytest.raises(VideoError):
        referee_run(folder, truth, tmp_path, TruthDetector(truth), source=BreaksOff(folder / "video.mp4", 100))
    events = read_log(tmp_path / "events.jsonl")  # what was written is a valid log
    assert [e.TYPE for e in events][:4] == ["game_start", "table_settled", "shot_started", "table_settled"]


def shots(result):
    return [(d["player"], d["outcome"]) for d in result["decisions"] if d["kind"] == "shot"]


@pytest.fixture(scope="module")
def starcluster_720(tmp_path_factory):
    """Star Cluster Ball at the committed samples' size (glass balls are 5 px across at 640x360), with the
    shooter at the Play Line, the reaching arm and camera shake of `Realism.moderate`."""
    folder = tmp_path_factory.mktemp("starcluster720")
    truth, _ = simulate_to(folder, "starcluster", SEED, "grouping", "behind_play_line", 1280, 720,
                           realism=Realism.moderate(), progress=False)
    return folder, truth


def test_colour_detector_referees_star_cluster_end_to_end(starcluster_720, tmp_path):
    """The real colour detector on a rendered Star Cluster match: a grouped ball, a fast ball to the gutter,
    a tie-break. The Play Line stripe and the shooter (skin, lips, sleeve) must not read as red balls."""
    folder, truth = starcluster_720
    _, result = referee_run(folder, truth, tmp_path, lambda image, mapper, players, seats:
                            make_detector("color", image, mapper, players, seats))
    assert shots(result) == shots(truth["result"])
    assert points(result) == points(truth["result"])
    assert result["final_scores"] == truth["result"]["final_scores"]
    settles = [e for e in read_log(tmp_path / "events.jsonl") if e.TYPE == "table_settled"]
    assert all(b.owner in ("red", "blue") for s in settles for b in s.snapshot.balls)


def test_an_umpire_input_the_engine_refuses_is_flagged_and_the_run_goes_on(clips, tmp_path):
    """A session line that contradicts what vision saw (here a choice when nobody is out of balls) is a
    review warning, left out of events.jsonl (which stays replayable); every later call is still made."""
    folder, truth = clips["starcluster"]
    session = tmp_path / "session"
    session.mkdir()
    (session / "video.mp4").symlink_to(folder / "video.mp4")
    bad = {"type": "out_of_balls_choice", "t": 2.0, "player": "blue", "choice": "bank"}
    (session / "truth.json").write_text(json.dumps({**truth, "events": truth["events"] + [bad]}))
    _, result = referee_run(session, truth, tmp_path / "out", TruthDetector(truth))
    assert result["final_scores"] == truth["result"]["final_scores"]
    warnings = [json.loads(line) for line in (tmp_path / "out" / "decisions.jsonl").read_text().splitlines()
                if '"warning"' in line]
    refused = [w for w in warnings if w["message"].startswith("umpire input out_of_balls_choice at 2s refused")]
    assert len(refused) == 1 and refused[0]["review"] is True and "no player is out of balls" in refused[0]["message"]
    assert not any(e.TYPE == "out_of_balls_choice" for e in read_log(tmp_path / "out" / "events.jsonl"))


@pytest.fixture(scope="module")
def knock_720(tmp_path_factory):
    folder = tmp_path_factory.mktemp("knock720")
    truth, _ = simulate_to(folder, "starcluster", SEED, "knock_into_slot", "behind_play_line", 1280, 720,
                           realism=Realism.moderate(), progress=False)
    return folder, truth


def test_a_ball_knocked_from_under_the_shooters_hand_into_a_slot_is_the_shooters_foul(knock_720, tmp_path):
    """Red's failed ball rests just past the Play Line; blue's ball, released right behind it under blue's hand,
    knocks it into a slot. Neither ball is seen crossing the line and the knocked one is first seen again in
    the slot: it moved (a shot by blue, a knocked-in foul), it was not lifted."""
    folder, truth = knock_720
    _, result = referee_run(folder, truth, tmp_path, lambda image, mapper, players, seats:
                            make_detector("color", image, mapper, players, seats))
    assert shots(result) == shots(truth["result"])
    assert points(result) == points(truth["result"])
    assert result["final_scores"] == truth["result"]["final_scores"]
    fouls = [d for d in result["decisions"] if d["kind"] == "foul"]
    assert [(d["player"], d["rule"]) for d in fouls] == [(d["player"], d["rule"]) for d in truth["result"]["decisions"]
                                                         if d["kind"] == "foul"]
    round_end = min(e["t"] for e in truth["events"] if e["type"] == "round_end")
    assert not [e for e in read_log(tmp_path / "events.jsonl") if e.TYPE == "ball_lifted" and e.t < round_end]
