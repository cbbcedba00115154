"""`referee annotate` / `highlights` / `run --annotate` on bad input: exit 2 and one line naming the problem."""

import shutil
from pathlib import Path

import numpy as np
import pytest

from referee.cli import main
from vision.video_io import VideoWriter

SOURCE = Path(__file__).resolve().parents[2] / "sample_videos" / "piratenbillard" / "capture" / "video.mp4"


@pytest.fixture()
def run_copy(pb_run, tmp_path):
    """The run folder without its videos, to damage freely."""
    copy = tmp_path / "run"
    shutil.copytree(pb_run, copy, ignore=shutil.ignore_patterns("*.mp4"))
    return copy


def _one_line_error(capsys, *fragments):
    err = capsys.readouterr().err
    assert err.startswith("referee: error: ") and err.count("\n") == 1, err
    for fragment in fragments:
        assert fragment in err, err


def test_annotate_a_missing_video_exits_2_with_one_line(run_copy, tmp_path, capsys):
    assert main(["annotate", str(run_copy), str(tmp_path / "nope.mp4"), "--out", str(tmp_path / "a.mp4")]) == 2
    _one_line_error(capsys, "nope.mp4 does not exist")
    assert not (tmp_path / "a.mp4").exists()


def test_annotate_a_corrupt_video_exits_2(run_copy, tmp_path, capsys):
    garbage = tmp_path / "garbage.mp4"
    garbage.write_bytes(b"not a video at all" * 200)
    assert main(["annotate", str(run_copy), str(garbage), "--quiet"]) == 2
    _one_line_error(capsys, "cannot be opened")
    assert not list(run_copy.glob("*.mp4"))  # nothing half-written


def test_a_missing_run_folder_and_malformed_events_exit_2(run_copy, tmp_path, capsys):
    assert main(["highlights", str(tmp_path / "nowhere"), str(SOURCE), "--quiet"]) == 2
    _one_line_error(capsys, "run folder", "does not exist")
    (run_copy / "events.jsonl").write_text('{"type": "game_start", "t": 0, "players": [{"id": "red", "seat": 0}, '
                                           '{"id": "blue", "seat": 2}]}\n{"type": "table_settled", "t": "soon"}\n')
    assert main(["annotate", str(run_copy), str(SOURCE), "--quiet"]) == 2
    _one_line_error(capsys, "events.jsonl line 2")


def test_a_video_of_another_size_or_a_non_mp4_output_is_refused(run_copy, tmp_path, capsys):
    small = tmp_path / "small.mp4"
    with VideoWriter(small, 320, 240, 30) as writer:
        for _ in range(5):
            writer.write(np.full((240, 320, 3), 90, np.uint8))
    assert main(["annotate", str(run_copy), str(small), "--quiet"]) == 2
    _one_line_error(capsys, "small.mp4 is 320x240 but the run's calibration is for 1280x720")
    assert main(["annotate", str(run_copy), str(SOURCE), "--out", str(tmp_path / "a.avi"), "--quiet"]) == 2
    _one_line_error(capsys, "give a name ending in .mp4")
    assert main(["highlights", str(run_copy), str(SOURCE), "--lead", "-1", "--quiet"]) == 2
    _one_line_error(capsys, "--lead is -1")


def test_run_annotate_needs_a_video_file(tmp_path, capsys):
    assert main(["run", "rtsp://127.0.0.1:9/table", "--game", "piratenbillard", "--out", str(tmp_path / "o"),
                 "--annotate", "--quiet"]) == 2
    _one_line_error(capsys, "--annotate decodes the video again after the run, so it needs a video file")
    assert not (tmp_path / "o").exists()  # refused before anything ran
