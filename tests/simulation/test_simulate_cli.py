"""`referee simulate` writes the video and its truth, and refuses bad input with exit code 2."""

from __future__ import annotations

import json

import pytest

from referee import cli
from vision.video_io import probe


@pytest.fixture(autouse=True)
def with_simulate(monkeypatch):
    if "simulate" not in cli.COMMANDS:  # until the lead registers the command
        monkeypatch.setattr(cli, "COMMANDS", cli.COMMANDS + ("simulate",))


def test_simulate_writes_video_and_truth(tmp_path, capsys):
    code = cli.main(["simulate", "--game", "piratenbillard", "--seed", "2", "--scenario", "off_board",
                     "--out", str(tmp_path), "--width", "320", "--height", "180", "--fps", "15", "--quiet"])
    assert code == 0
    info = probe(tmp_path / "video.mp4")
    truth = json.loads((tmp_path / "truth.json").read_text())
    assert (info.width, info.height) == (320, 180) and info.fps == pytest.approx(15)
    assert truth["frame_count"] == len(truth["frames"]) > 30 and truth["fps"] == 15
    assert any(d["kind"] == "ball_removed" for d in truth["result"]["decisions"])
    assert "frames/s" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--game", "piratenbillard", "--scenario", "grand_slam"], "use one of full_game, capture"),
    (["--game", "piratenbillard", "--width", "321"], "even"),
    (["--game", "piratenbillard", "--players", "5"], "2 to 4 players"),
    (["--game", "piratenbillard", "--fps", "0"], "--fps"),
])
def test_bad_input_exits_2_with_one_clear_line(tmp_path, capsys, args, message):
    code = cli.main(["simulate", "--out", str(tmp_path), "--quiet", *args])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1
    assert not (tmp_path / "truth.json").exists()
