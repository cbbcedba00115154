"""The run folder: RunWriter writes today's bytes, read_run reads them back, and bad files are one clear line."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from record.run_folder import (
    CORRECTIONS_FILE,
    DECISIONS_FILE,
    EVENTS_FILE,
    RESULT_FILE,
    TRACKS_FILE,
    Correction,
    DetectionPoint,
    RunFolderError,
    RunWriter,
    TrackFrame,
    TrackPoint,
    append_corrections,
    read_corrected_result,
    read_run,
)
from rules.errors import InputError
from rules.events import (
    BallSighting,
    Confirm,
    Location,
    Overturn,
    Snapshot,
    SnapshotCorrection,
    UmpireFoul,
    parse_event,
)
from rules.files import json_line, write_json_atomically
from rules.replay import read_log, replay
from rules.result import build_result
from vision.types import BoardBall, Detection, Track, TrackState

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "piratenbillard_game.jsonl"
# values where numpy's array rounding (scale, half to even, unscale) and Python's round() part ways
TRICKY = [0.15, 0.35, -0.05, 123.45, 1.45, 2.675, -0.04, 0.0, -0.0, 1e-7, 1279.95, 719.25]


def example_events():
    """The Piratenbillard example log without its ids: each line then gets L<n>, as a run's log does."""
    lines = EXAMPLE.read_text().splitlines()
    return [parse_event({k: v for k, v in json.loads(line).items() if k != "id"}) for line in lines if line.strip()]


def example_decisions():
    return replay(read_log(EXAMPLE), "piratenbillard").decisions


def random_frames(seed: int, count: int = 40):
    """(t, tracks, balls) of a frame: some tracks unconfirmed, tricky values mixed in."""
    rng = random.Random(seed)

    def value(scale: float) -> float:
        return rng.choice(TRICKY) if rng.random() < 0.2 else rng.uniform(-5, scale)

    frames = []
    for i in range(count):
        t = i / 29.97 + rng.uniform(0, 1e-5)
        tracks = [Track(rng.randrange(1, 60), rng.choice(["red", "blue", "green"]), value(1200), value(800),
                        0.0, 0.0, rng.choice(list(TrackState)), False, t, 5) for _ in range(rng.randrange(0, 6))]
        balls = [BoardBall(Detection(value(1280), value(720), abs(value(20)), rng.choice(["red", "unknown"]),
                                     round(rng.random(), 3) if rng.random() < 0.5 else rng.random()),
                           value(1200), value(800), Location.cell_at(1, 1)) for _ in range(rng.randrange(0, 6))]
        frames.append((t, tracks, balls))
    return frames


def to_image(points: np.ndarray) -> np.ndarray:
    """A board -> image mapping with fractions that land on rounding ties now and then."""
    return points * np.array([1.05, 0.95]) + np.array([0.15, -0.35])


def rows(tracks, balls, mapping):
    """The plain rows a caller gives RunWriter.frame: the values, unrounded."""
    shown = [tr for tr in tracks if tr.state is TrackState.CONFIRMED]
    uv = mapping(np.array([[tr.x, tr.y] for tr in shown], float)).tolist() if mapping and shown else \
        [[None, None] for _ in shown]
    track_rows = [(tr.id, tr.colour, tr.x, tr.y, u, v) for tr, (u, v) in zip(shown, uv)]
    detection_rows = [(b.detection.colour, b.detection.u, b.detection.v, b.detection.radius_px, b.x, b.y,
                       b.detection.score) for b in balls]
    return track_rows, detection_rows


# --------------------------------------------------------------------------- writer bytes


def compact(data):
    """One JSON line as every run-folder file writes it: compact separators, keys in the order given."""
    return json.dumps(data, separators=(",", ":")) + "\n"


def test_events_decisions_and_warnings_are_compact_json_lines(tmp_path):
    """The bytes of a run's record (the 15 samples' events and decisions are checked byte for byte against
    the hashes taken before this writer existed by benchmarks/same_outputs.py)."""
    events, decisions = example_events(), example_decisions()
    with RunWriter(tmp_path) as writer:
        for event in events:
            writer.event(event)
        for i, decision in enumerate(decisions):
            writer.decision(decision)
            if i % 7 == 0:
                writer.warning(decision.t + 0.000123456, f"look at {i}", review=True, frame=i)
        assert (writer.lines, writer.warnings) == (len(events), len(decisions[::7]))
    assert (tmp_path / EVENTS_FILE).read_text() == "".join(compact(e.to_json()) for e in events)
    expected = []
    for i, decision in enumerate(decisions):
        expected.append(compact({"type": "decision", **decision.to_json()}))
        if i % 7 == 0:
            expected.append(compact({"type": "warning", "t": round(decision.t + 0.000123456, 4),
                                     "message": f"look at {i}", "review": True, "frame": i}))
    assert (tmp_path / DECISIONS_FILE).read_text() == "".join(expected)
    assert (tmp_path / EVENTS_FILE).read_text().startswith('{"type":"game_start","t":0.0')


def test_event_returns_the_id_replay_gives_its_line(tmp_path):
    events = example_events()
    with RunWriter(tmp_path) as writer:
        written = [writer.event(event) for event in events]
    assert [e.id for e in written] == [f"L{n}" for n in range(1, len(events) + 1)]
    assert written == read_log(tmp_path / EVENTS_FILE)
    with RunWriter(tmp_path / "own") as writer:
        assert writer.event(Confirm(t=1.0, id="U1", target="L1")).id == "U1"  # an event with an id keeps it


def reference_line(t, tracks, balls, mapping):
    """A tracks.jsonl line as the referee has always written it (before the run folder had one owner): confirmed
    tracks with their image centres rounded by numpy's array rounding, everything else by round()."""
    shown = [tr for tr in tracks if tr.state is TrackState.CONFIRMED]
    uv = [[None, None] for _ in shown]
    if mapping is not None and shown:
        uv = np.asarray(mapping(np.array([[tr.x, tr.y] for tr in shown], float))).round(1).tolist()
    return compact({"t": round(t, 4),
                    "tracks": [[tr.id, tr.colour, round(tr.x, 1), round(tr.y, 1), *p] for tr, p in zip(shown, uv)],
                    "detections": [[b.detection.colour, round(b.detection.u, 1), round(b.detection.v, 1),
                                    round(b.detection.radius_px, 1), round(b.x, 1), round(b.y, 1),
                                    round(b.detection.score, 3)] for b in balls]})


@pytest.mark.parametrize("mapping", [to_image, None], ids=["with image px", "without"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_tracks_lines_keep_the_bytes_of_the_referees_format(tmp_path, seed, mapping):
    expected = []
    with RunWriter(tmp_path, tracks=True) as writer:
        for t, tracks, balls in random_frames(seed):
            expected.append(reference_line(t, tracks, balls, mapping))
            writer.frame(t, *rows(tracks, balls, mapping))
        assert writer.frames == 40
    assert (tmp_path / TRACKS_FILE).read_text(encoding="utf-8") == "".join(expected)


def test_track_pixels_are_rounded_as_numpy_rounds_an_array(tmp_path):
    # the test above would pass with Python's round() on most frames; pin the values where it differs
    values = [0.15, 0.35, -0.05, 123.45, -0.04, 1e300, float("inf")]
    assert [round(v, 1) for v in values[:4]] != np.round(np.array(values[:4]), 1).tolist()
    with RunWriter(tmp_path, tracks=True) as writer:
        writer.frame(0.0, [(1, "red", 0.0, 0.0, v, np.float64(v)) for v in values], [])
    line = json.loads((tmp_path / TRACKS_FILE).read_text())
    expected = np.round(np.array(values), 1).tolist()
    assert [row[4] for row in line["tracks"]] == expected == [row[5] for row in line["tracks"]]
    assert str([row[4] for row in line["tracks"]][4]) == "-0.0"  # numpy keeps the sign of a zero


def test_the_writer_makes_the_folder_writes_the_result_atomically_and_needs_tracks_asked_for(tmp_path):
    folder = tmp_path / "a" / "b"
    with RunWriter(folder) as writer:
        assert writer.tracks_path is None and not (folder / TRACKS_FILE).exists()
        with pytest.raises(ValueError, match="tracks=True"):
            writer.frame(0.0, [], [])
        assert writer.write_result({"x": 1}) == folder / RESULT_FILE
    assert json.loads((folder / RESULT_FILE).read_text()) == {"x": 1}
    assert sorted(p.name for p in folder.iterdir()) == [DECISIONS_FILE, EVENTS_FILE, RESULT_FILE]  # no temporaries


# --------------------------------------------------------------------------- reading back


def write_folder(folder: Path, *, tracks: bool = True, result: bool = True) -> dict:
    """A run folder written by RunWriter, and what went into it."""
    events, decisions = example_events(), example_decisions()
    frames = random_frames(7, 10)
    with RunWriter(folder, tracks=tracks) as writer:
        for event in events:
            writer.event(event)
        for decision in decisions:
            writer.decision(decision)
        writer.warning(3.25, "a colour matching no player", review=True)
        if tracks:
            for t, tr, balls in frames:
                writer.frame(t, *rows(tr, balls, to_image))
        data = build_result(replay(read_log(folder / EVENTS_FILE), "piratenbillard"), {"video": "x.mp4"})
        if result:
            writer.write_result(data)
    return {"decisions": decisions, "frames": frames, "result": data}


def test_a_folder_written_by_the_writer_reads_back(tmp_path):
    wrote = write_folder(tmp_path / "run")
    run = read_run(tmp_path / "run")
    assert run.dir == tmp_path / "run" and run.notes == () and run.corrections == ()
    assert list(run.events) == read_log(tmp_path / "run" / EVENTS_FILE)
    assert run.events[4].id == "L5"
    assert run.decisions == tuple({"type": "decision", **d.to_json()} for d in wrote["decisions"])
    assert run.warnings == ({"type": "warning", "t": 3.25, "message": "a colour matching no player", "review": True},)
    assert run.result == wrote["result"] and run.finished_result() == wrote["result"]
    assert len(run.tracks) == 10
    t, tracks, balls = wrote["frames"][3]
    confirmed = [tr for tr in tracks if tr.state is TrackState.CONFIRMED]
    frame = run.tracks[3]
    assert frame.t == round(t, 4)
    assert [(p.id, p.colour, p.x, p.y) for p in frame.tracks] == [(tr.id, tr.colour, round(tr.x, 1), round(tr.y, 1))
                                                                  for tr in confirmed]
    assert all(isinstance(p.u, float) and isinstance(p.v, float) for p in frame.tracks)
    assert frame.detections == tuple(DetectionPoint(b.detection.colour, round(b.detection.u, 1),
                                                    round(b.detection.v, 1), round(b.detection.radius_px, 1),
                                                    round(b.x, 1), round(b.y, 1), round(b.detection.score, 3))
                                     for b in balls)
    assert read_run(tmp_path / "run", tracks=False).tracks is None


def test_optional_files_may_be_missing(tmp_path):
    write_folder(tmp_path / "run", tracks=False, result=False)
    (tmp_path / "run" / DECISIONS_FILE).unlink()
    run = read_run(tmp_path / "run")
    assert (run.result, run.tracks, run.decision_lines, run.corrections, run.notes) == (None, None, (), (), ())
    with pytest.raises(RunFolderError, match=f"{RESULT_FILE} does not exist; use a run that finished"):
        run.finished_result()
    assert read_corrected_result(tmp_path / "run") is None


def test_track_rows_without_pixels_and_frames_without_detections_are_read(tmp_path):
    write_folder(tmp_path / "run", tracks=False)
    (tmp_path / "run" / TRACKS_FILE).write_text('{"t":0.5,"tracks":[[3,"red",1,2],[4,"blue",1.5,2.5,null,null]]}\n')
    [frame] = read_run(tmp_path / "run").tracks
    assert frame == TrackFrame(0.5, (TrackPoint(3, "red", 1.0, 2.0, None, None),
                                     TrackPoint(4, "blue", 1.5, 2.5, None, None)), ())


# --------------------------------------------------------------------------- torn last lines


@pytest.mark.parametrize("name, tail", [
    (EVENTS_FILE, b'{"type":"table_settled","t":99,"balls":[{"owner":"re'),
    (EVENTS_FILE, '{"type":"table_settled","t":99,"note":"\u00e9'.encode()[:-1]),  # cut inside a UTF-8 character
    (DECISIONS_FILE, b'{"type":"decision","t":9'),
    (TRACKS_FILE, b'{"t":1.2,"tracks":[[1,"re'),
])
def test_a_torn_last_line_is_left_out_with_a_note(tmp_path, name, tail):
    write_folder(tmp_path / "run")
    whole = read_run(tmp_path / "run")
    with open(tmp_path / "run" / name, "ab") as stream:
        stream.write(tail)
    run = read_run(tmp_path / "run")
    assert (run.events, run.decision_lines, run.tracks) == (whole.events, whole.decision_lines, whole.tracks)
    [note] = run.notes
    assert note.startswith(f"{name}: ignored a torn last line ")


def test_a_complete_last_line_without_its_newline_is_read(tmp_path):
    write_folder(tmp_path / "run", tracks=False)
    path = tmp_path / "run" / EVENTS_FILE
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    run = read_run(tmp_path / "run")
    assert run.notes == () and len(run.events) == len(example_events())


@pytest.mark.parametrize("name", [EVENTS_FILE, TRACKS_FILE, DECISIONS_FILE])
def test_a_bad_line_that_is_not_the_torn_tail_is_an_error(tmp_path, name):
    write_folder(tmp_path / "run")
    path = tmp_path / "run" / name
    lines = path.read_text().splitlines()
    for broken in ([*lines[:-1], lines[-1][:-5], ""], [lines[0], lines[1][:10], *lines[2:], ""]):
        path.write_text("\n".join(broken))  # a bad last line followed by a newline is not torn, nor is one inside
        with pytest.raises(RunFolderError, match=f"{name} line [0-9]+: not valid JSON"):
            read_run(tmp_path / "run")


def test_a_torn_correction_is_an_error(tmp_path):
    write_folder(tmp_path / "run", tracks=False)
    (tmp_path / "run" / CORRECTIONS_FILE).write_text(json_line(CORRECTION) + '{"type":"overturn","t":1,"id":"C2","targ')
    with pytest.raises(RunFolderError, match=f"{CORRECTIONS_FILE} line 2 is cut off .*delete that line, then run "
                                             "`referee correct` again"):
        read_run(tmp_path / "run")
    (tmp_path / "run" / CORRECTIONS_FILE).write_text('{"type":"overturn","t":1,"id":"C1","targ\n')  # not torn: broken
    with pytest.raises(RunFolderError, match=f"{CORRECTIONS_FILE} line 1: not valid JSON .*do not edit it by hand"):
        read_run(tmp_path / "run")


# --------------------------------------------------------------------------- one clear line per bad file


def _replace_line(name: str, number: int, text: str | bytes):
    def damage(run: Path) -> None:
        lines = (run / name).read_bytes().split(b"\n")
        lines[number - 1] = text if isinstance(text, bytes) else text.encode()
        (run / name).write_bytes(b"\n".join(lines))
    return damage


def _no_folder(run: Path) -> None:
    shutil.rmtree(run)


def _a_file(run: Path) -> None:
    shutil.rmtree(run)
    run.write_text("")


def _write(name: str, data: bytes | str):
    def damage(run: Path) -> None:
        (run / name).write_bytes(data if isinstance(data, bytes) else data.encode())
    return damage


def _result(**fields):
    def damage(run: Path) -> None:
        result = json.loads((run / RESULT_FILE).read_text())
        result.update(fields)
        for key in [k for k, v in fields.items() if v is None]:
            del result[key]
        (run / RESULT_FILE).write_text(json.dumps(result))
    return damage


CORRECTION = {"type": "overturn", "t": 1.0, "id": "C1", "target": "L3", "by": "Ana", "reason": "r", "recorded_at": "x"}
BAD = [
    ("no folder", _no_folder, "run folder .* does not exist; pass the --out folder"),
    ("a file", _a_file, "is a file, not a folder"),
    ("no events", lambda run: (run / EVENTS_FILE).unlink(), f"has no {EVENTS_FILE}; pass the --out folder"),
    ("events not utf-8", _replace_line(EVENTS_FILE, 3, b'{"type":"round_start","t":\xff}'),
     f"event log .*{EVENTS_FILE} cannot be read \\(line 3 is not UTF-8: byte 0xff at column 27\\)"),
    ("events not json", _replace_line(EVENTS_FILE, 3, "{"), f"{EVENTS_FILE} line 3: not valid JSON .*repair that line"),
    ("events unknown type", _replace_line(EVENTS_FILE, 2, '{"type":"nonsense","t":1}'),
     f"{EVENTS_FILE} line 2: unknown event type 'nonsense'"),
    ("events out of order", _replace_line(EVENTS_FILE, 3, '{"type":"round_start","t":0.5}'),
     "must be in time order"),
    ("events empty", _write(EVENTS_FILE, "\n"), "holds no events"),
    ("decision type", _replace_line(DECISIONS_FILE, 1, '{"type":"shot","t":1}'),
     f"{DECISIONS_FILE} line 1: 'type' is 'shot', not 'decision' or 'warning'"),
    ("decision summary", _replace_line(DECISIONS_FILE, 2, '{"type":"decision","t":1,"kind":"turn"}'),
     "line 2: a decision line needs a string 'summary'"),
    ("warning t", _replace_line(DECISIONS_FILE, 2, '{"type":"warning","t":"soon","message":"m"}'),
     "line 2: 't' is 'soon', not a number"),
    ("track row", _replace_line(TRACKS_FILE, 2, '{"t":1,"tracks":[[1,"red"]],"detections":[]}'),
     f"{TRACKS_FILE} line 2: tracks\\[0\\] is \\[1, 'red'\\], not \\[id, colour, x, y, u, v\\]"),
    ("track id", _replace_line(TRACKS_FILE, 2, '{"t":1,"tracks":[["7","red",1,2,3,4]]}'),
     "tracks\\[0\\] id is '7', not an integer"),
    ("detection row", _replace_line(TRACKS_FILE, 1, '{"t":1,"tracks":[],"detections":[["red",1,2,3,4,5,"x"]]}'),
     "detections\\[0\\]\\[6\\] is 'x', not a number"),
    ("tracks t", _replace_line(TRACKS_FILE, 1, '{"tracks":[]}'), "'t' is None, not a number"),
    ("result not json", _write(RESULT_FILE, "{not json"), f"result file .*{RESULT_FILE} cannot be read as JSON"),
    ("result game", _write(RESULT_FILE, '{"game": "chess"}'), "field 'game' is 'chess'"),
    ("result format", _result(format="other@1"), "field 'format' is 'other@1'"),
    ("result scores", _result(final_scores=None), "field 'final_scores' is not an object"),
    ("result decision", _result(decisions=[{"t": 1, "kind": "shot"}]), "decisions\\[0\\] lacks"),
    ("correction type", _write(CORRECTIONS_FILE, json.dumps({**CORRECTION, "type": "round_start"}) + "\n"),
     "line 1: a round_start is not a correction"),
    ("correction id", _write(CORRECTIONS_FILE, json.dumps({k: v for k, v in CORRECTION.items() if k != "id"}) + "\n"),
     "line 1: the correction has no 'id'"),
    ("correction id reused", _write(CORRECTIONS_FILE, json.dumps({**CORRECTION, "id": "L2"}) + "\n"),
     "line 1: id 'L2' is already used"),
    ("correction bad event", _write(CORRECTIONS_FILE, json.dumps({**CORRECTION, "t": -1}) + "\n"),
     f"{CORRECTIONS_FILE} line 1: 't' must be a number .*do not edit it by hand"),
]


@pytest.mark.parametrize("damage, message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_each_bad_file_is_one_clear_line(tmp_path, damage, message):
    run = tmp_path / "run"
    write_folder(run)
    damage(run)
    with pytest.raises(RunFolderError, match=message) as raised:
        read_run(run)
    text = str(raised.value)
    assert isinstance(raised.value, InputError) and "\n" not in text
    assert str(run) in text  # names the folder or the file


def test_a_damaged_corrected_result_is_named_when_it_is_read(tmp_path):
    write_folder(tmp_path / "run", tracks=False)
    (tmp_path / "run" / "result.corrected.json").write_text("[]")
    assert read_run(tmp_path / "run").corrections == ()  # read_run itself does not read it
    with pytest.raises(RunFolderError, match="result.corrected.json is not a referee result: it is not a JSON object"):
        read_corrected_result(tmp_path / "run")


# --------------------------------------------------------------------------- corrections


def test_corrections_round_trip_and_append(tmp_path):
    write_folder(tmp_path / "run", tracks=False)
    first = [
        Correction(Overturn(t=1.5, id="C1", target="L4", by="Ana", reason="a shadow"), "2026-12-01T10:00:00+00:00"),
        Correction(SnapshotCorrection(t=2.0, id="C2", target="L7", by="Ana", reason="one space short",
                                      snapshot=Snapshot((BallSighting("green", Location.cell_at(4, 4)),))),
                   "2026-12-01T10:00:00+00:00"),
    ]
    second = [Correction(UmpireFoul(t=3.0, id="C3", player="red", foul="interference", free_shot=True, by="Ben",
                                    reason="touched it"), "2026-12-01T10:05:00+00:00"),
              Correction(Confirm(t=4.0, id="C4", target="C3", by="Ben", reason="seen twice"), "")]
    assert append_corrections(tmp_path / "run", first) == tmp_path / "run" / CORRECTIONS_FILE
    before = (tmp_path / "run" / CORRECTIONS_FILE).read_bytes()
    append_corrections(tmp_path / "run", second)
    assert (tmp_path / "run" / CORRECTIONS_FILE).read_bytes().startswith(before)  # append-only
    run = read_run(tmp_path / "run")
    assert run.corrections == tuple(first + second)
    assert run.corrections[2].describe() == "C3 umpire_foul red:interference at 3s by Ben: touched it"
    assert run.corrections[0].describe() == "C1 overturn L4 at 1.5s by Ana: a shadow"


# --------------------------------------------------------------------------- layering


def test_record_and_rules_files_import_no_numpy_opencv_vision_or_review():
    code = ("import sys, record.run_folder, rules.files; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'cv2', 'vision', 'review'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_write_json_atomically_lives_in_rules_files():
    assert write_json_atomically.__module__ == "rules.files"
