"""The review report: one self-contained page, opened in headless Chromium like an umpire would."""

import base64
import json
import re
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.cli import main
from review.report import THUMB_WIDTH, grab_thumbnails, shot_rows
from rules.replay import parse_log_lines
from runs import CHROMIUM, SAMPLES, open_report, truth_run
from vision.video_io import read_frames

# table_shove: a deliberate table movement foul, always flagged for the umpire; 3 shots, 13.7 s of video
SAMPLE = "starcluster/table_shove"


@pytest.fixture(scope="module")
def shove(tmp_path_factory):
    return truth_run(SAMPLE, tmp_path_factory.mktemp("shove") / "run")


def report(capsys, run_dir: Path, out: Path, *args: str) -> tuple[int, str, str]:
    code = main(["report", str(run_dir), "--out", str(out), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_report_opens_in_headless_chromium_with_plot_and_every_shot(shove, tmp_path, capsys):
    assert Path(CHROMIUM).exists(), "the browser test needs Chromium: run `make browser`"
    code, out, _ = report(capsys, shove, tmp_path / "report.html")
    assert code == 0 and "3 shots" in out
    result = json.loads((shove / "result.json").read_text())
    shots = [d for d in result["decisions"] if d["kind"] == "shot"]
    changes = [d for d in result["decisions"] if d["kind"] in ("score", "capture") and d.get("points")]

    page = open_report(tmp_path / "report.html", tmp_path / "report.png")
    assert page.console_errors == ()
    assert page.requests == ()  # nothing fetched: no CDN, no server
    assert len(page.plot_paths) == len(result["players"])
    assert all(re.fullmatch(r"M[\d.]+,[\d.]+(H[\d.]+V[\d.]+)*H[\d.]+", d) for d in page.plot_paths)
    assert page.plot_points == len(changes)
    assert page.shot_rows == len(shots) == 3
    assert page.thumbnails_loaded == len(shots)
    assert 0 < (tmp_path / "report.png").stat().st_size < 300_000


def test_report_is_self_contained_and_lists_the_flagged_call_first(shove, tmp_path, capsys):
    assert report(capsys, shove, tmp_path / "report.html")[0] == 0
    html = (tmp_path / "report.html").read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<script src" not in html and "<link" not in html and "@import" not in html
    assert html.count('src="data:image/jpeg;base64,') == 3 + 1  # every shot, and the flagged call's table
    # the flagged table movement (event L6) is in the review table, above the plot and the shots
    review = html.index("For review (1)")
    assert review < html.index("Score over time") < html.index('<table class="shots"')
    assert "deliberate table movement" in html[review:html.index("Score over time")]
    assert "<code>L6</code>" in html[review:html.index("Score over time")]
    for name in ("referee version", "python version", "opencv version", "onnxruntime version", "numpy version",
                 "source video", "calibration error", "profile"):
        assert f"<dt>{name}</dt>" in html


def test_report_shows_the_corrected_result_and_the_umpires_decision(shove, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(shove, run)
    assert main(["correct", str(run), "--overturn", "L6", "--by", "Ana", "--reason", "accidental bump"]) == 0
    capsys.readouterr()
    assert report(capsys, run, tmp_path / "report.html")[0] == 0
    html = (tmp_path / "report.html").read_text()
    assert "After 1 umpire correction(s)." in html
    assert "overturned by Ana (C1: accidental bump)" in html
    corrected = json.loads((run / "result.corrected.json").read_text())
    for player, points in corrected["final_scores"].items():
        assert f"<b>{points}</b>" in html


def test_shots_link_to_the_highlight_clip_that_covers_them(shove, tmp_path, capsys):
    clips = tmp_path / "clips"
    clips.mkdir()
    (clips / "index.json").write_text(json.dumps({"clips": [
        {"file": "turn_1.mp4", "start_s": 0.5, "end_s": 8.0},  # covers shots 1 and 2
        {"file": "shot_2.mp4", "start_s": 5.5, "end_s": 7.5},  # the shorter one wins for shot 2 (settled 7.27 s)
    ]}))
    out = tmp_path / "pages" / "report.html"
    code, stdout, _ = report(capsys, shove, out, "--clips", str(clips), "--no-thumbnails")
    assert code == 0 and "2 clips linked" in stdout
    html = out.read_text()
    assert html.count('href="../clips/turn_1.mp4"') == 1 and html.count('href="../clips/shot_2.mp4"') == 1
    assert html.index("turn_1.mp4") < html.index("shot_2.mp4")


def test_thumbnail_is_the_frame_at_the_settle(tmp_path):
    video = SAMPLES / SAMPLE / "video.mp4"
    frame = next(f for f in read_frames(video) if f.t >= 7.27 - 1e-6)
    [uri] = grab_thumbnails(video, [7.27]).values()
    image = cv2.imdecode(np.frombuffer(base64.b64decode(uri.split(",", 1)[1]), np.uint8), cv2.IMREAD_COLOR)
    assert image.shape[1] == THUMB_WIDTH
    expected = cv2.resize(frame.image, image.shape[1::-1], interpolation=cv2.INTER_AREA)
    assert np.abs(image.astype(int) - expected.astype(int)).mean() < 4  # JPEG noise only


def test_piratenbillard_shots_find_their_settle_by_time():
    # Piratenbillard calls name no cause: the settle is the table_settled at the shot's time
    sample = SAMPLES / "piratenbillard" / "stacked_pair"
    truth = json.loads((sample / "truth.json").read_text())
    events = parse_log_lines([json.dumps(event) for event in truth["events"]])
    rows = shot_rows(truth["result"]["decisions"], events)
    assert [r.settle_id for r in rows] == [e.id for e in events if e.TYPE == "table_settled"][1:]
    assert rows[-1].points == (("blue", 2),) and dict(rows[-1].scores) == {"blue": 2}


def test_missing_video_or_clips_is_one_line_and_writes_nothing(shove, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(shove, run)
    result = json.loads((run / "result.json").read_text())
    result["source"]["video"] = str(tmp_path / "gone.mp4")
    (run / "result.json").write_text(json.dumps(result))
    code, _, err = report(capsys, run, tmp_path / "report.html")
    assert code == 2 and err.count("\n") == 1 and "pass --video FILE, or --no-thumbnails" in err
    assert not (tmp_path / "report.html").exists()
    code, _, err = report(capsys, run, tmp_path / "report.html", "--no-thumbnails", "--clips", str(tmp_path))
    assert code == 2 and err.count("\n") == 1 and "holds no index.json" in err
    assert not (tmp_path / "report.html").exists()
    assert report(capsys, run, tmp_path / "report.html", "--video", str(SAMPLES / SAMPLE / "video.mp4"))[0] == 0
