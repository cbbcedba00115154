"""`referee batch` on real sample videos: each match exactly as the single-match commands make it, on a local
process pool and on a real Ray head; complete matches skipped by hash; a failing match recorded while the others
go on; Ctrl-C leaves nothing counted complete that is not."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import cv2
import numpy as np
import pytest

from record.batch import read_manifest, read_stamp
from referee import __version__
from referee.batch import join_reels, pose_model_for
from referee.cli import main
from runs import browse
from vision.video_io import VideoWriter, read_frames

SAMPLES = Path(__file__).resolve().parents[2] / "sample_videos"
SC = SAMPLES / "starcluster" / "play_line_foul"  # 395 frames
PB = SAMPLES / "piratenbillard" / "capture"  # 185 frames
RECORD = ("events.jsonl", "decisions.jsonl")

# The page's video played to its end, fast: where it ended (seconds).
PLAY_TO_END = """() => new Promise((resolve, reject) => {
  const video = document.querySelector('video');
  video.muted = true;
  video.playbackRate = 16;
  video.onended = () => resolve(video.currentTime);
  video.play().catch(reject);
})"""


def _manifest(folder: Path, broken: bool = True) -> Path:
    """Two real matches (Star Cluster without pose, to keep the suite short) and, if `broken`, one whose video is
    not a video."""
    (folder / "notes.mp4").write_text("these are the umpire's notes, not a video")
    rows = [{"id": "sc-1", "video": str(SC / "video.mp4"), "game": "starcluster", "session": str(SC / "truth.json"),
             "pose": False},
            {"id": "pb-1", "video": str(PB / "video.mp4"), "game": "piratenbillard",
             "session": str(PB / "truth.json")}]
    if broken:
        rows.append({"id": "broken", "video": "notes.mp4", "game": "piratenbillard"})
    path = folder / "matches.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each sample refereed, highlighted and reported by the single-match commands."""
    base = tmp_path_factory.mktemp("single")
    runs = {}
    for name, sample, game, extra in (("sc-1", SC, "starcluster", ["--no-pose"]), ("pb-1", PB, "piratenbillard", [])):
        out = base / name
        assert main(["run", str(sample / "video.mp4"), "--game", game, "--session", str(sample / "truth.json"),
                     "--out", str(out), "--quiet", *extra]) == 0
        assert main(["highlights", str(out), str(sample / "video.mp4"), "--quiet"]) == 0
        runs[name] = out
    return runs


def _counts(out: Path) -> dict[str, int]:
    return json.loads((out / "batch.json").read_text())["counts"]


def _same_record(batch_run: Path, single_run: Path) -> None:
    for name in RECORD:
        assert (batch_run / name).read_bytes() == (single_run / name).read_bytes(), name
    batch_result, single_result = (json.loads((run / "result.json").read_text()) for run in (batch_run, single_run))
    for key in ("final_scores", "winners", "status", "decisions"):
        assert batch_result[key] == single_result[key]
    clips = [json.loads((run / "highlights" / "index.json").read_text())["clips"] for run in (batch_run, single_run)]
    assert clips[0] == clips[1] and clips[0]


def test_a_pool_referees_every_match_as_the_single_commands_do_and_skips_complete_ones(
        tmp_path: Path, single: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    manifest, out = _manifest(tmp_path), tmp_path / "day"
    assert main(["batch", str(manifest), "--out", str(out), "--jobs", "2", "--quiet"]) == 1  # one match failed
    err = capsys.readouterr().err
    assert "match broken:" in err and "notes.mp4" in err
    assert _counts(out) == {"done": 2, "skipped": 0, "failed": 1}
    for match in read_manifest(manifest)[:2]:
        folder = out / "matches" / match.match_id
        _same_record(folder / "run", single[match.match_id])
        stamp = read_stamp(folder, match.fingerprint(__version__, pose_model_for(match)))
        assert stamp is not None and {"report.html", "run/result.json", "run/highlights/reel.mp4"} <= set(
            stamp["outputs"])
        assert (folder / "report.html").stat().st_size > 10_000
    error = json.loads((out / "matches" / "broken" / "error.json").read_text())
    assert "notes.mp4" in error["error"] and not (out / "matches" / "broken" / "complete.json").exists()
    # the day's reel: each match's reel exactly, copied after a one-second card, and a browser plays it to its end
    day, reels = list(read_frames(out / "reel.mp4")), [
        list(read_frames(out / "matches" / m / "run" / "highlights" / "reel.mp4")) for m in ("sc-1", "pb-1")]
    assert len(day) == 30 + len(reels[0]) + 30 + len(reels[1])
    assert all(np.array_equal(a.image, b.image) for a, b in zip(day[30:], reels[0]))
    assert all(np.array_equal(a.image, b.image) for a, b in zip(day[60 + len(reels[0]):], reels[1]))
    [played] = browse([out / "tournament.html"], PLAY_TO_END)
    assert played.dom == pytest.approx(day[-1].t + 1 / 30, abs=0.01)

    stamps = {m: (out / "matches" / m / "complete.json").stat().st_mtime_ns for m in ("sc-1", "pb-1")}
    assert main(["batch", str(manifest), "--out", str(out), "--jobs", "2", "--quiet"]) == 1
    assert _counts(out) == {"done": 0, "skipped": 2, "failed": 1}
    assert {m: (out / "matches" / m / "complete.json").stat().st_mtime_ns for m in stamps} == stamps

    with (out / "matches" / "sc-1" / "report.html").open("a") as report:  # an output no longer what was stamped
        report.write("<!-- edited -->")
    assert main(["batch", str(manifest), "--out", str(out), "--quiet"]) == 1
    assert _counts(out) == {"done": 1, "skipped": 1, "failed": 1}
    kept = list((out / "matches" / "sc-1").glob("run.replaced-*"))
    assert len(kept) == 1 and (kept[0] / "events.jsonl").read_bytes() == (single["sc-1"] / "events.jsonl"
                                                                             ).read_bytes()
    _same_record(out / "matches" / "sc-1" / "run", single["sc-1"])


def test_ray_runs_the_same_matches_on_a_real_head(tmp_path: Path, single: dict[str, Path],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    ray = Path(sys.executable).parent / "ray"
    port = _free_port()
    # the head and this process agree on Ray's token authentication (the head may turn it on by default)
    for name, value in (("RAY_USAGE_STATS_ENABLED", "0"), ("RAY_AUTH_MODE", "token"),
                        ("RAY_AUTH_TOKEN", secrets.token_hex(32))):
        monkeypatch.setenv(name, value)
    env = dict(os.environ)
    started = subprocess.run([str(ray), "start", "--head", "--port", str(port), "--num-cpus", "2",
                              "--include-dashboard", "false", "--disable-usage-stats"],
                             env=env, capture_output=True, text=True, timeout=120)
    assert started.returncode == 0, started.stderr[-2000:]
    try:
        manifest, out = _manifest(tmp_path), tmp_path / "day"
        assert main(["batch", str(manifest), "--out", str(out), "--ray", f"127.0.0.1:{port}", "--quiet"]) == 1
        assert _counts(out) == {"done": 2, "skipped": 0, "failed": 1}
        for name in ("sc-1", "pb-1"):
            _same_record(out / "matches" / name / "run", single[name])
        summary = json.loads((out / "batch.json").read_text())
        assert {m["id"]: m["status"] for m in summary["matches"]} == {"sc-1": "done", "pb-1": "done",
                                                                      "broken": "failed"}
        # `auto`: the cluster this machine belongs to; the failed match is the only task it gets
        assert main(["batch", str(manifest), "--out", str(out), "--ray", "auto", "--quiet"]) == 1
        assert _counts(out) == {"done": 0, "skipped": 2, "failed": 1}
    finally:
        subprocess.run([str(ray), "stop", "--force"], env=env, capture_output=True, timeout=120)


def test_ray_unreachable_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = _manifest(tmp_path, broken=False)
    code = main(["batch", str(manifest), "--out", str(tmp_path / "day"), "--ray", f"127.0.0.1:{_free_port()}",
                 "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("referee: error: --ray 127.0.0.1:") and "ray start --head" in err[-1]
    assert not (tmp_path / "day" / "matches").exists()


def test_ctrl_c_leaves_no_match_counted_complete_that_is_not(tmp_path: Path, single: dict[str, Path]) -> None:
    manifest, out = _manifest(tmp_path, broken=False), tmp_path / "day"
    referee = shutil.which("referee", path=str(Path(sys.executable).parent))
    assert referee is not None
    # Ctrl-C's disposition as a terminal gives it: a suite started in the background (`nohup make test &`) runs with
    # SIGINT ignored, which a child inherits, and Python then installs no KeyboardInterrupt for it
    batch = subprocess.Popen([referee, "batch", str(manifest), "--out", str(out), "--quiet"],
                             stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint)
    events = out / "matches" / "sc-1" / "run" / "events.jsonl"
    try:
        while batch.poll() is None and not (events.is_file() and events.stat().st_size > 0):
            batch_wait(batch)
        batch.send_signal(signal.SIGINT)  # while the first match is being refereed (the second has not begun)
        _, err = batch.communicate(timeout=300)
    finally:
        batch.kill()
    assert batch.returncode == 130, err
    assert "refereed by the next `referee batch" in err
    for match in read_manifest(manifest):
        folder = out / "matches" / match.match_id
        stamp = read_stamp(folder, match.fingerprint(__version__, pose_model_for(match)))
        assert (stamp is not None) == (folder / "complete.json").exists()  # a stamp there is a true one
    assert not (out / "matches" / "pb-1" / "complete.json").exists()

    assert main(["batch", str(manifest), "--out", str(out), "--quiet"]) == 0
    for name in ("sc-1", "pb-1"):
        _same_record(out / "matches" / name / "run", single[name])
    if not _counts(out)["skipped"]:  # the interrupted run was kept aside, not written over
        assert list((out / "matches" / "sc-1").glob("run.replaced-*"))


def test_the_days_reel_copies_reels_filmed_alike_and_scales_the_others_after_a_card_naming_each_match(
        tmp_path: Path) -> None:
    def reel(name: str, width: int, height: int, frames: int, shade: int) -> Path:
        path = tmp_path / f"{name}.mp4"
        with VideoWriter(path, width, height, 30, time_base=Fraction(1, 15360)) as writer:  # as highlights writes
            for k in range(frames):
                image = np.full((height, width, 3), shade, np.uint8)
                image[:, : (k + 1) * width // (frames + 1)] = (40, 180, 230)  # a bar that grows frame by frame
                writer.write(image)
        return path

    reels = [("sc-1", reel("a", 160, 96, 8, 90)), ("pb-1", reel("b", 160, 96, 6, 120)),
             ("pb-2", reel("wide", 320, 192, 5, 150))]
    out = join_reels(reels, tmp_path / "day" / "reel.mp4")
    day = list(read_frames(out))
    own = {match: list(read_frames(path)) for match, path in reels}
    assert len(day) == 3 * 30 + 8 + 6 + 5 and all(a.t < b.t for a, b in zip(day, day[1:]))
    copied = day[30:38] + day[68:74]
    assert all(np.array_equal(a.image, b.image) for a, b in zip(copied, own["sc-1"] + own["pb-1"]))
    scaled = [cv2.resize(f.image, (160, 96), interpolation=cv2.INTER_AREA) for f in own["pb-2"]]
    assert all(f.image.shape == (96, 160, 3) for f in day) and min(
        cv2.PSNR(a.image, b) for a, b in zip(day[104:], scaled)) > 30
    cards = [day[0].image, day[38].image, day[74].image]
    assert all(card[:20].max() < 10 and card.max() > 200 for card in cards)  # black, with the match's name in white
    assert not np.array_equal(cards[0], cards[1])


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def batch_wait(process: subprocess.Popen[str]) -> None:
    try:
        process.wait(timeout=0.05)
    except subprocess.TimeoutExpired:
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
