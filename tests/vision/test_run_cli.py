"""`referee run`: files written, result equal to the replay, and bad input as clear errors (exit 2)."""

import json

import numpy as np
import pytest

from referee.cli import main
from simulation.simulate import simulate_to
from simulation.realism import Realism
from vision.video_io import VideoWriter


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pb")
    simulate_to(folder, "piratenbillard", 1, "capture", "overhead", 640, 360, realism=Realism.moderate(),
                progress=False)
    return folder


def test_run_writes_a_log_whose_replay_is_the_result(clip, tmp_path, capsys):
    code = main(["run", str(clip / "video.mp4"), "--game", "piratenbillard", "--session", str(clip / "truth.json"),
                 "--out", str(tmp_path / "run"), "--quiet"])
    assert code == 0
    assert main(["replay", str(tmp_path / "run" / "events.jsonl"), "--game", "piratenbillard", "--quiet",
                 "--out", str(tmp_path / "replay")]) == 0
    ran = json.loads((tmp_path / "run" / "result.json").read_text())
    replayed = json.loads((tmp_path / "replay" / "result.json").read_text())
    assert ran["decisions"] == replayed["decisions"] and ran["final_scores"] == replayed["final_scores"]
    lines = (tmp_path / "run" / "decisions.jsonl").read_text().splitlines()
    assert all(json.loads(line)["type"] in ("decision", "warning") for line in lines)


def test_missing_video_exits_2_with_one_line(tmp_path, capsys):
    assert main(["run", str(tmp_path / "nope.mp4"), "--game", "starcluster", "--out", str(tmp_path)]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_stream_that_never_opens_exits_2(tmp_path, capsys):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"pipeline": {"source": {"stream_reconnect_s": 0}}}))  # given up at the first failure
    code = main(["run", "http://127.0.0.1:9/table.mp4", "--game", "starcluster", "--config", str(config),
                 "--out", str(tmp_path / "out"), "--quiet"])
    assert code == 2 and "never opened in 0.0s of trying" in capsys.readouterr().err


def test_no_board_in_view_exits_2_and_keeps_the_log(tmp_path, capsys):
    video = tmp_path / "floor.mp4"
    with VideoWriter(video, 320, 240, 30) as writer:
        for _ in range(120):
            writer.write(np.full((240, 320, 3), 70, np.uint8))
    code = main(["run", str(video), "--game", "starcluster", "--out", str(tmp_path / "out"), "--quiet"])
    assert code == 2 and "no table markers found" in capsys.readouterr().err
    assert (tmp_path / "out" / "events.jsonl").read_text().startswith('{"type":"game_start"')


def test_a_truth_session_brings_its_game_config_and_config_overrides_it(clip, tmp_path):
    """A truth.json session was played under its `config` (ball count, rounds, target): without --config the
    engine must use it, or the samples' Star Cluster rounds (1 a game, 3 balls a player) are refereed under
    the default rules. --config still wins."""
    truth = json.loads((clip / "truth.json").read_text())
    session = tmp_path / "session"
    session.mkdir()
    (session / "truth.json").write_text(json.dumps({**truth, "config": {"target_points": 3}}))
    code = main(["run", str(clip / "video.mp4"), "--game", "piratenbillard", "--session", str(session / "truth.json"),
                 "--out", str(tmp_path / "run"), "--quiet"])
    assert code == 0
    assert json.loads((tmp_path / "run" / "result.json").read_text())["config"]["target_points"] == 3
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"target_points": 5}))
    code = main(["run", str(clip / "video.mp4"), "--game", "piratenbillard", "--session", str(session / "truth.json"),
                 "--config", str(config), "--out", str(tmp_path / "run2"), "--quiet"])
    assert code == 0
    assert json.loads((tmp_path / "run2" / "result.json").read_text())["config"]["target_points"] == 5


def test_opencv_runs_on_the_threads_the_config_gives_and_they_change_no_call(clip, tmp_path):
    """`pipeline.opencv.threads` sets OpenCV's process-wide pool when the pipeline is made; how many threads share
    its work changes nothing recorded: the clip refereed with a pool of two and on one thread gives the same log."""
    import cv2

    rules = json.loads((clip / "truth.json").read_text())["config"]
    before = cv2.getNumThreads()
    logs = {}
    try:
        for threads in (2, 1):
            config = tmp_path / f"config_{threads}.json"
            config.write_text(json.dumps({**rules, "pipeline": {"opencv": {"threads": threads}}}))
            out = tmp_path / f"run_{threads}"
            assert main(["run", str(clip / "video.mp4"), "--game", "piratenbillard", "--session",
                         str(clip / "truth.json"), "--config", str(config), "--out", str(out), "--quiet"]) == 0
            assert cv2.getNumThreads() == threads
            logs[threads] = [(out / name).read_bytes() for name in ("events.jsonl", "decisions.jsonl")]
    finally:
        cv2.setNumThreads(before)
    assert logs[1] == logs[2] and b"table_settled" in logs[1][0]
