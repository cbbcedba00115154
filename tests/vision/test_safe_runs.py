"""The match record is never lost: a run folder is refused, resumed or moved aside, never written over; a
killed run resumes to the same record; Ctrl-C and SIGTERM finish the record; feed gaps are flagged.

Runs real video through the real pipeline (truth detections where only the record's handling is under test,
the colour detector in the command-line runs)."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest
from clocks import LockstepClock

from record.run_folder import RunLock, read_history, read_run, recorded_until
from referee.cli import main
from referee.session import RefereeSession, RunSpec, StopReason
from rules.errors import InputError
from simulation.realism import Realism
from simulation.simulate import simulate_to
from vision.config import SourceConfig
from vision.sources import FileSource, LiveSource, open_source

ROOT = Path(__file__).resolve().parents[2]
RECORD = ("events.jsonl", "decisions.jsonl", "tracks.jsonl", "result.json")


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    """A Piratenbillard capture at 640x360 (about 10 s), with its truth."""
    folder = tmp_path_factory.mktemp("pb")
    truth, _ = simulate_to(folder, "piratenbillard", 1, "capture", "overhead", 640, 360,
                           realism=Realism.moderate(), progress=False)
    return folder, truth


@pytest.fixture(scope="module")
def finished(clip, tmp_path_factory):
    """An uninterrupted `referee run` of the clip: the record a resumed run must equal."""
    folder, _ = clip
    out = tmp_path_factory.mktemp("finished") / "run"
    assert main(run_args(folder, out)) == 0
    return out


def run_args(folder, out, *more):
    return ["run", str(folder / "video.mp4"), "--game", "piratenbillard", "--session", str(folder / "truth.json"),
            "--out", str(out), "--quiet", *more]


def digest(folder):
    """Every file under a folder with its content hash: what must not change."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "run.lock"}


def same_record(a, b):
    """Two run folders hold the same match: the same lines, and result.json equal but for where it was written."""
    for name in RECORD[:3]:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    ra, rb = (json.loads((f / "result.json").read_text()) for f in (a, b))
    ra.pop("source"), rb.pop("source")
    assert ra == rb


def kill_after(spec, frames, torn=b""):
    """Referee the first `frames` frames of the spec's video, then stop as SIGKILL would: no finish, the files
    as they are (every line is flushed as written), plus `torn` bytes of a line the kill cut."""
    session = RefereeSession.open(spec)
    for frame in FileSource(spec.source).frames():
        if frame.index == frames:
            break
        session.process(frame)
    session.writer.close()
    session.claim.release()
    with (spec.out / "events.jsonl").open("ab") as stream:
        stream.write(torn)


# ----------------------------------------------------------------------------- resume


@pytest.mark.parametrize("frames", [5, 140, 260])
def test_a_killed_file_run_resumes_to_the_record_of_an_uninterrupted_run(clip, finished, tmp_path, frames):
    folder, _ = clip
    out = tmp_path / "run"
    spec = RunSpec(str(folder / "video.mp4"), "piratenbillard", out, session=folder / "truth.json")
    kill_after(spec, frames, torn=b'{"type":"table_settled","t":9.9,"snap')
    before = (out / "events.jsonl").read_bytes()
    assert main(["run", "--resume", "--out", str(out), "--quiet"]) == 0
    same_record(out, finished)
    assert (out / "events.jsonl").read_bytes().startswith(before[:before.rfind(b"\n") + 1])
    assert (out / "events.jsonl.torn").read_bytes() == b'{"type":"table_settled","t":9.9,"snap\n'
    assert [h["event"] for h in read_history(out)] == ["started", "resumed", "finished"]
    assert main(["run", "--resume", "--out", str(out), "--quiet"]) == 2  # finished: nothing left to resume


def test_resume_takes_the_runs_own_settings_and_refuses_others(clip, tmp_path, capsys):
    folder, _ = clip
    out = tmp_path / "run"
    kill_after(RunSpec(str(folder / "video.mp4"), "piratenbillard", out, session=folder / "truth.json"), 30)
    kept = digest(out)
    assert main(["run", "--resume", "--out", str(out), "--game", "piratenbillard", "--no-pose"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "leave out --game, --no-pose" in err
    other = tmp_path / "other.mp4"
    other.write_bytes((folder / "video.mp4").read_bytes()[:-10])
    assert main(["run", str(other), "--resume", "--out", str(out)]) == 2
    assert "is not the video the run" in capsys.readouterr().err
    assert digest(out) == kept


def test_a_resumed_file_run_refuses_a_record_it_does_not_reproduce(clip, tmp_path, capsys):
    """A record that is not what this video gives (edited, or another referee's) is refused at the first line
    that differs; nothing is appended."""
    folder, _ = clip
    out = tmp_path / "run"
    kill_after(RunSpec(str(folder / "video.mp4"), "piratenbillard", out, session=folder / "truth.json"), 200)
    tracks = (out / "tracks.jsonl").read_text().splitlines(keepends=True)
    tracks[3] = tracks[3].replace('"t":', '"t": ', 1)
    (out / "tracks.jsonl").write_text("".join(tracks))
    kept = digest(out)
    assert main(["run", "--resume", "--out", str(out), "--quiet"]) == 2
    assert "tracks.jsonl line 4 differs" in capsys.readouterr().err
    assert {k: v for k, v in digest(out).items() if k != "history.jsonl"} == \
        {k: v for k, v in kept.items() if k != "history.jsonl"}


# ----------------------------------------------------------------------------- never written over


def test_an_existing_run_is_refused_kept_whole_and_moved_aside_only_with_fresh(clip, finished, tmp_path, capsys):
    folder, _ = clip
    out = tmp_path / "run"
    out.mkdir()
    for path in finished.iterdir():
        if path.is_file():
            (out / path.name).write_bytes(path.read_bytes())
    (out / "corrections.jsonl").write_text('{"type":"confirm","id":"C1","t":1.0,"target":"L2"}\n')
    kept = digest(out)
    assert main(run_args(folder, out)) == 2
    err = capsys.readouterr().err
    assert "already holds a run" in err and "--resume" in err and "--fresh" in err
    assert digest(out) == kept
    assert main(run_args(folder, out, "--fresh")) == 0
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("run.replaced-")]
    assert len(aside) == 1 and digest(aside[0]) == kept  # the old run, whole, beside the new one
    assert not (out / "corrections.jsonl").exists()  # nothing of the old run leaks into the new
    same_record(out, finished)


BAD = {
    "config is malformed": lambda t: ["--config", str(write(t / "c.json", "{nope"))],
    "config is a folder": lambda t: ["--config", str(t)],
    "session is not UTF-8": lambda t: ["--session", str(write(t / "s.jsonl", b"\xff\xfe{}"))],
    "session has a misspelled type": lambda t: ["--session", str(write(t / "s.jsonl", '{"type":"round_strat","t":0}'))],
    "one player": lambda t: ["--players", "red"],
    "a player twice": lambda t: ["--players", "red,red"],
    "a missing profile": lambda t: ["--profile", str(t / "none.json")],
    "a missing calibration": lambda t: ["--calibration", str(t / "none.json")],
}


def write(path, data):
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


@pytest.mark.parametrize("bad", sorted(BAD))
def test_bad_input_is_one_line_and_writes_nothing(clip, finished, tmp_path, capsys, bad):
    """Each bad input, into a folder holding a finished run (even with --fresh) and into a new folder: exit 2,
    one line, and no file created, changed or moved."""
    folder, _ = clip
    args = BAD[bad](tmp_path)
    session = [] if "--session" in args or "--players" in args else ["--session", str(folder / "truth.json")]
    before = digest(finished)
    siblings = sorted(p.name for p in finished.parent.iterdir())
    for out, more in ((finished, ["--fresh"]), (finished, []), (tmp_path / "new", [])):
        code = main(["run", str(folder / "video.mp4"), "--game", "piratenbillard", *session, *args, "--out", str(out),
                     "--quiet", *more])
        err = capsys.readouterr().err.strip()
        assert code == 2 and err.startswith("referee: error: ") and "\n" not in err, (bad, err)
    assert digest(finished) == before and sorted(p.name for p in finished.parent.iterdir()) == siblings
    assert not (tmp_path / "new").exists()


def test_out_that_is_a_file_or_cannot_be_made_is_one_line(clip, tmp_path, capsys):
    folder, _ = clip
    blocker = write(tmp_path / "file", "x")
    for out in (blocker, blocker / "run"):
        assert main(run_args(folder, out)) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and str(blocker) in err
    assert blocker.read_text() == "x"


def test_a_second_writer_is_refused_while_the_first_holds_the_folder(clip, tmp_path, capsys):
    folder, _ = clip
    out = tmp_path / "run"
    out.mkdir()
    lock = RunLock(out).acquire("referee run (a test)")
    try:
        assert main(run_args(folder, out)) == 2
        assert "is being written by referee run (a test)" in capsys.readouterr().err
        assert main(run_args(folder, out, "--fresh")) == 2
        assert sorted(p.name for p in out.iterdir()) == ["run.lock"]
    finally:
        lock.release()


def test_result_json_follows_the_umask(finished):
    assert (finished / "result.json").stat().st_mode & 0o777 == 0o666 & ~current_umask()


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ----------------------------------------------------------------------------- the folder replays alone


def test_replay_of_a_run_folder_needs_no_flags(finished, tmp_path, capsys):
    assert main(["replay", str(finished), "--out", str(tmp_path), "--quiet"]) == 0
    replayed = json.loads((tmp_path / "result.json").read_text())
    ran = json.loads((finished / "result.json").read_text())
    assert replayed["decisions"] == ran["decisions"] and replayed["config"] == ran["config"]
    for log in (finished, finished / "events.jsonl"):  # never over the record
        assert main(["replay", str(log), "--game", "piratenbillard", "--out", str(finished), "--quiet"]) == 2
        assert "is a run folder" in capsys.readouterr().err
    manifest = json.loads((finished / "manifest.json").read_text())
    assert manifest["game"] == "piratenbillard" and manifest["inputs"]["session"]["copy"] == "inputs/session.json"
    assert (finished / "inputs" / "session.json").read_bytes() == \
        Path(manifest["inputs"]["session"]["given"]).read_bytes()


# ----------------------------------------------------------------------------- clean stops


def test_a_stopped_run_writes_a_result_marked_stopped_and_resumes(clip, finished, tmp_path):
    """`stop` (what Ctrl-C and SIGTERM call) mid-run: result.json is the replay of what was recorded, marked
    stopped; report and correct work on it; --resume then finishes the same record as an uninterrupted run."""
    folder, _ = clip
    out = tmp_path / "run"
    spec = RunSpec(str(folder / "video.mp4"), "piratenbillard", out, session=folder / "truth.json")
    with RefereeSession.open(spec) as session:
        def stop_at_frame_150(frame, state):
            if frame.index == 150:
                session.stop(StopReason.INTERRUPTED, "stopped by SIGINT")
        summary = session.run(stop_at_frame_150)
    assert summary.stopped.reason is StopReason.INTERRUPTED and summary.frames == 151
    result = json.loads((out / "result.json").read_text())
    assert result["stopped"]["reason"] == "interrupted" and result["stopped"]["t"] == pytest.approx(summary.last_t)
    jsonschema.validate(result, json.loads((ROOT / "rules/schemas/result.schema.json").read_text()))
    assert main(["run", "--resume", "--out", str(out), "--quiet"]) == 0
    same_record(out, finished)
    assert "stopped" not in json.loads((out / "result.json").read_text())
    assert [h["event"] for h in read_history(out)] == ["started", "stopped", "resumed", "finished"]


@pytest.mark.parametrize("signum, code, reason", [(signal.SIGINT, 130, "interrupted"),
                                                  (signal.SIGTERM, 143, "terminated")])
def test_ctrl_c_and_sigterm_finish_the_record_and_exit_130_or_143(clip, tmp_path, signum, code, reason):
    """The real command in its own process: stopped (SIGSTOP) once it has refereed some frames, signalled,
    continued: it stops at the next frame, writes result.json marked stopped, says how to resume; report
    and correct then work on the folder."""
    folder, _ = clip
    out = tmp_path / "run"
    process = subprocess.Popen([sys.executable, "-m", "referee.cli", *run_args(folder, out)[:-1]], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tracks = out / "tracks.jsonl"
    deadline = time.monotonic() + 120
    while not (tracks.exists() and tracks.read_bytes().count(b"\n") >= 3):
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.02)
    process.send_signal(signal.SIGSTOP)
    process.send_signal(signum)
    process.send_signal(signal.SIGCONT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == code, stderr
    assert "Traceback" not in stderr and f"referee run --resume --out {out}" in stderr
    result = json.loads((out / "result.json").read_text())
    assert result["stopped"]["reason"] == reason
    assert main(["report", str(out), "--out", str(tmp_path / "report.html")]) == 0
    assert main(["correct", str(out), "--confirm", "L1", "--by", "umpire", "--reason", "checked", "--quiet"]) == 0


def test_a_failure_mid_run_finishes_the_record_as_stopped(clip, tmp_path):
    folder, _ = clip

    class BreaksOff:
        name, live, frame_count = str(folder / "video.mp4"), False, 0

        def frames(self):
            for frame in FileSource(self.name).frames():
                if frame.index == 120:
                    raise InputError("video breaks off")
                yield frame

    out = tmp_path / "run"
    spec = RunSpec(str(folder / "video.mp4"), "piratenbillard", out, session=folder / "truth.json")
    with pytest.raises(InputError):
        with RefereeSession.open(spec, source=BreaksOff()) as session:
            session.run()
    result = json.loads((out / "result.json").read_text())
    assert result["stopped"] == {"reason": "error", "t": pytest.approx(119 / 30, abs=0.05),
                                 "message": "video breaks off"}
    assert read_run(out).result["stopped"]["reason"] == "error"


# ----------------------------------------------------------------------------- live feeds


def gapped_feed(video, cut_at, back_at):
    """A camera feed that drops at `cut_at` s and, reopened, goes on from `back_at` s (the camera kept filming)."""
    opened = []

    def open_feed():
        opened.append(1)
        for frame in FileSource(video).frames():
            if len(opened) == 1 and frame.t >= cut_at:
                raise ConnectionError("connection reset by peer")
            if len(opened) > 1 and frame.t < back_at:
                continue
            yield frame.t, frame.image

    return open_feed


def test_a_feed_gap_is_flagged_for_review_on_the_shot_it_overlaps(tmp_path):
    """The feed drops for a while mid-match: the match goes on (same folder, same state), the gap is written,
    and the first settle after it is a review flag naming it, open in the live state until confirmed."""
    folder = ROOT / "sample_videos" / "piratenbillard" / "capture"  # 1280x720: every ball read right
    video = str(folder / "video.mp4")
    clock = LockstepClock()
    source = clock.follow(LiveSource("rtsp://table-3", gapped_feed(video, 2.9, 3.4), SourceConfig(), paced=True,
                                     ends=True, clock=clock))
    out = tmp_path / "run"
    spec = RunSpec(video, "piratenbillard", out, session=folder / "truth.json")
    with RefereeSession.open(spec, source=source) as session:
        summary = session.run()
    assert len(source.gaps) == 1
    (start, end), = source.gaps
    lines = [json.loads(line) for line in (out / "decisions.jsonl").read_text().splitlines()]
    gap = [line for line in lines if "gap" in line]
    assert gap and gap[0]["gap"] == [round(start, 4), round(end, 4)] and start < 2.9 < end
    flagged = [line for line in lines if line.get("review") and line["message"].startswith("feed gap")]
    events = read_run(out).events
    settle = next(e for e in events if e.TYPE == "table_settled" and e.t > end)
    assert len(flagged) == 1 and flagged[0]["cause"] == settle.id
    assert any(flag.cause == settle.id for flag in summary.state.review)


def test_a_killed_live_run_resumes_from_its_record(clip, tmp_path):
    """A live run killed mid-match: --resume rebuilds the match from events.jsonl (scores, turn, prior table),
    keeps every recorded line, and goes on from the frames after the last one recorded."""
    folder, _ = clip
    video = str(folder / "video.mp4")
    out = tmp_path / "run"
    spec = RunSpec(video, "piratenbillard", out, session=folder / "truth.json", live=True)
    clock = LockstepClock()
    first = clock.follow(open_source(video, SourceConfig(), live=True, clock=clock))
    session = RefereeSession.open(spec, source=first)
    for frame in first.frames():
        session.process(frame)
        if frame.t > 6.0:
            break
    killed_state = session.state()
    session.writer.close()
    session.claim.release()
    before = {name: (out / name).read_bytes() for name in RECORD[:3]}
    until = recorded_until(out)

    clock = LockstepClock()
    rest = clock.follow(open_source(video, SourceConfig(), live=True, clock=clock, start_t=until + 1e-6))
    with RefereeSession.open(RunSpec("", "", out, start="resume"), source=rest) as resumed:
        restored = resumed.state()
        assert restored.standings == killed_state.standings and restored.t == pytest.approx(until)
        summary = resumed.run()
    assert summary.first_t > until
    for name, data in before.items():
        assert (out / name).read_bytes().startswith(data), name
    assert [h["event"] for h in read_history(out)] == ["started", "resumed", "finished"]
    assert read_history(out)[1]["from_t"] == pytest.approx(until)
    assert main(["replay", str(out), "--out", str(tmp_path / "replay"), "--quiet"]) == 0


def test_a_start_killed_before_its_manifest_recorded_nothing_and_is_started_again(clip, finished, tmp_path):
    """Killed while copying its inputs (no manifest yet): nothing of a match is there, so the same command
    starts the run, replacing the partial copies."""
    folder, _ = clip
    out = tmp_path / "run"
    (out / "inputs").mkdir(parents=True)
    (out / "inputs" / "profile.json").write_text('{"game": "piratenb')
    (out / "run.lock").write_text("")
    assert main(run_args(folder, out)) == 0
    same_record(out, finished)
    assert json.loads((out / "inputs" / "profile.json").read_text())["game"] == "piratenbillard"
