"""The run folder: what `referee run` writes as it referees, and what every later tool reads.

Files (each name is a constant of this module; no other module spells them):

| constant | file | written by |
|---|---|---|
| EVENTS_FILE | events.jsonl | the run (`RunWriter.event`): observations and umpire inputs, a plain event log |
| DECISIONS_FILE | decisions.jsonl | the run (`RunWriter.decision` / `.warning`): the live calls and pipeline warnings |
| TRACKS_FILE | tracks.jsonl | the run (`RunWriter.frame`): per frame, the confirmed tracks and the detections |
| RESULT_FILE | result.json | the run (`RunWriter.write_result`), at the end, atomically |
| CALIBRATION_FILE | calibration.json | the run: the calibration it ended with (`calibration.calibrate`'s format) |
| CORRECTIONS_FILE | corrections.jsonl | `referee correct` (`append_corrections`), append-only |
| CORRECTED_RESULT_FILE | result.corrected.json | `referee correct`, atomically |
| DIFF_FILE | diff.json | `referee correct`, atomically |
| ANNOTATED_FILE | annotated.mp4 | `referee annotate` / `referee run --annotate` |
| HIGHLIGHTS_DIR | highlights/ | `referee highlights` |

Writing. `RunWriter` creates the folder and opens events.jsonl, decisions.jsonl and (when
asked) tracks.jsonl for writing; every line is flushed as it is written, so a killed run
loses nothing already called and leaves at most one torn last line per file. Lines are
compact JSON (separators "," and ":"). An event line is `Event.to_json()`: no id, so replay
gives line n the id `L<n>`, and `event()` returns the event carrying that id. A decision line
is `{"type": "decision", **Decision.to_json()}`, a warning line `{"type": "warning", "t":
round(t, 4), "message": ..., **fields}`. A tracks line is

    {"t": round(t, 4), "tracks": [[id, colour, x, y, u, v], ...],
                       "detections": [[colour, u, v, r, x, y, score], ...]}

with x, y (board mm), u, v, r (image px) to 1 decimal and score to 3, rounded here from the
values the caller gives: Python's `round` for all but a track's u, v, which are rounded the
way numpy rounds an array (scaled by 10, half to even, scaled back), as `vision.evaluate.FrameLog`
always wrote them. A track's u, v may be None (written as null).

Reading. `read_run(folder)` reads the whole folder into a frozen `RunFolder`, or raises
`RunFolderError` (an InputError: one line naming the file, the line where there is one, and
what to do). What each file must be:

* events.jsonl: required. Strict: every non-blank line is an event of docs/events.md (ids
  `L<line>` unless the line has its own), at least one event, ids unique, times never going
  back; the same checks as `referee replay`. Tolerated: a torn last line (the file's last line,
  with no newline after it, that is not valid JSON or not UTF-8: a run killed mid-write) is
  left out, with a note.
* decisions.jsonl: optional (absent: no decisions and no warnings). Strict: every line is a
  `decision` (number `t`, string `kind` and `summary`) or a `warning` (number `t`, string
  `message`); other fields are kept as they are. Tolerated: a torn last line, with a note.
* tracks.jsonl: optional (absent: `tracks` is None). Strict: every line has a number `t`, a
  list `tracks` of [id (integer), colour, x, y, u, v] (u, v numbers or null, or both left out)
  and, optionally, a list `detections` of [colour, u, v, r, x, y, score]. Tolerated: a torn
  last line, with a note.
* result.json: optional (absent: `result` is None: the run did not finish; `finished_result()`
  refuses). Strict when present: a whole JSON object (it is written atomically, so it is never
  torn) with the format `table-referee/result@1`, a known game, `players`, `winners`,
  `complete`, `final_scores`, `games`, `decisions` (each with `t`, `kind`, `summary` and a
  well-formed `breakdown`) and `config` of the right types (docs/result.md).
* corrections.jsonl: optional (absent: no corrections). Strict, torn last line included:
  `referee correct` appends to it, and a line appended after a torn one would be lost with it
  (the error says to delete the cut-off line).
  Every line is a confirm, overturn, snapshot_correction or umpire_foul event with its own id,
  used by no event and no earlier correction.
* calibration.json, result.corrected.json, diff.json, annotated.mp4, highlights/ are not read
  by `read_run`: the calibration has its reader in `calibration.calibrate` (numpy), the
  corrected result is read by `read_corrected_result` when it is wanted (a damaged one must not
  stop `referee correct` from rewriting it), the rest are outputs.

This module imports `rules` only: no numpy, no OpenCV, no vision or review code.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import IO, Any, Iterable, Sequence

from rules.decisions import Decision
from rules.errors import InputError
from rules.events import Confirm, Event, LogError, Overturn, SnapshotCorrection, UmpireFoul, parse_event
from rules.files import JSON_LINES_FIX, json_line, read_json, read_json_lines, write_json_atomically
from rules.games import GAMES
from rules.replay import parse_log_rows
from rules.result import FORMAT as RESULT_FORMAT

EVENTS_FILE = "events.jsonl"
DECISIONS_FILE = "decisions.jsonl"
TRACKS_FILE = "tracks.jsonl"
RESULT_FILE = "result.json"
CALIBRATION_FILE = "calibration.json"
CORRECTIONS_FILE = "corrections.jsonl"
CORRECTED_RESULT_FILE = "result.corrected.json"
DIFF_FILE = "diff.json"
ANNOTATED_FILE = "annotated.mp4"
HIGHLIGHTS_DIR = "highlights"
HIGHLIGHTS_INDEX_FILE = "index.json"  # in HIGHLIGHTS_DIR: the clips and what each shows
HIGHLIGHTS_REEL_FILE = "reel.mp4"  # in HIGHLIGHTS_DIR: the clips joined
MANIFEST_FILE = "manifest.json"  # what the run was started with (record.manifest)
INPUTS_DIR = "inputs"  # copies of the run's input files, named in the manifest
HISTORY_FILE = "history.jsonl"  # one line per start, resume and stop of a referee on the folder
LOCK_FILE = "run.lock"  # held (flock) by the one process writing the folder
TORN_SUFFIX = ".torn"  # FILE.torn: a torn last line set aside before a resumed run appends to FILE

CORRECTION_TYPES = (Confirm, Overturn, SnapshotCorrection, UmpireFoul)
TRACKS_LINE = ('{"t": T, "tracks": [[id, colour, x, y, u, v], ...], '
               '"detections": [[colour, u, v, r, x, y, score], ...]}')
RUN_AGAIN = "run `referee run` again"
CORRECTIONS_FIX = "the file is written by `referee correct`, do not edit it by hand"


class RunFolderError(InputError):
    """A run folder, or one of its files, that cannot be read: the message names it and what to do."""


# --------------------------------------------------------------------------- what a run folder holds


@dataclass(frozen=True)
class TrackPoint:
    """A confirmed track in one frame: board mm, and image px when the run could map them."""

    id: int
    colour: str
    x: float
    y: float
    u: float | None
    v: float | None


@dataclass(frozen=True)
class DetectionPoint:
    """A detection in one frame: image px, its board point (mm) and the detector's score."""

    colour: str
    u: float
    v: float
    radius: float  # px
    x: float
    y: float
    score: float


@dataclass(frozen=True)
class TrackFrame:
    """One line of tracks.jsonl."""

    t: float
    tracks: tuple[TrackPoint, ...]
    detections: tuple[DetectionPoint, ...] = ()


@dataclass(frozen=True)
class Correction:
    """One line of corrections.jsonl: the umpire event (with `by` and `reason`) and when it was recorded."""

    event: Event
    recorded_at: str  # ISO 8601, UTC; "" when the line does not say

    def to_json(self) -> dict[str, Any]:
        return {**self.event.to_json(), "recorded_at": self.recorded_at}

    def describe(self) -> str:
        """One line, e.g. `C1 overturn L4 at 1.53s by Ana: nose over the line is a shadow`."""
        event: Any = self.event
        what = event.player + ":" + event.foul if isinstance(event, UmpireFoul) else event.target
        return f"{event.id} {event.TYPE} {what} at {event.t:g}s by {event.by}: {event.reason}"


@dataclass(frozen=True)
class RunFolder:
    """A run folder as read by `read_run`; see the module docstring for what each file may be."""

    dir: Path
    events: tuple[Event, ...]  # events.jsonl, ids L<line>
    decision_lines: tuple[dict[str, Any], ...]  # decisions.jsonl in file order, each line as written
    result: dict[str, Any] | None  # result.json; None when the run did not finish
    tracks: tuple[TrackFrame, ...] | None  # tracks.jsonl in file order; None when absent (or not read)
    corrections: tuple[Correction, ...]  # corrections.jsonl; empty when there is none
    notes: tuple[str, ...] = ()  # what was tolerated while reading (torn last lines)

    @property
    def decisions(self) -> tuple[dict[str, Any], ...]:
        """The live engine's calls (`"type": "decision"` lines)."""
        return tuple(line for line in self.decision_lines if line["type"] == "decision")

    @property
    def warnings(self) -> tuple[dict[str, Any], ...]:
        """The pipeline warnings (`"type": "warning"` lines)."""
        return tuple(line for line in self.decision_lines if line["type"] == "warning")

    def path(self, name: str) -> Path:
        """A file of the folder by its constant, e.g. `run.path(CALIBRATION_FILE)`."""
        return self.dir / name

    def finished_result(self) -> dict[str, Any]:
        """result.json, or RunFolderError when the run did not finish (it is written last)."""
        if self.result is None:
            raise RunFolderError(f"{self.dir / RESULT_FILE} does not exist; use a run that finished "
                                 f"(`referee run` writes {RESULT_FILE} last)")
        return self.result


# --------------------------------------------------------------------------- writing


TrackRow = Sequence[Any]  # (id, colour, x, y, u, v): u, v None when unknown
DetectionRow = Sequence[Any]  # (colour, u, v, radius, x, y, score)


class WriteMode(Enum):
    """How a RunWriter treats the files already in its folder."""

    NEW = "new"  # the files must not exist yet: they are created, never truncated
    VERIFY = "verify"  # a run resumed from its start: each line it makes again must equal the line recorded,
    #                    then it appends (a file source replayed frame for frame)
    APPEND = "append"  # a run resumed from where it stopped: lines go after the recorded ones (a live source)


class RecordMismatch(RunFolderError):
    """A resumed run made a line that differs from the one recorded: the inputs or the software changed."""


class _LineFile:
    """One JSON-lines file of the run folder, written one flushed line at a time in a WriteMode."""

    def __init__(self, path: Path, mode: WriteMode) -> None:
        self.path = path
        self.recorded = 0  # lines already in the file when it was opened (VERIFY and APPEND)
        self.checked = 0  # VERIFY: recorded lines made again and found equal
        self._old: IO[bytes] | None = None
        self._out: IO[str] | None = None
        if mode is WriteMode.NEW:
            try:
                self._out = path.open("x", encoding="utf-8")
            except FileExistsError:
                raise RunFolderError(f"{path} exists already; a run never writes over a recorded file: resume the "
                                     "run (--resume) or start afresh (--fresh)") from None
            return
        if path.exists():
            set_aside_torn_tail(path)
            with path.open("rb") as stream:
                self.recorded = sum(1 for _ in stream)
        if mode is WriteMode.VERIFY and self.recorded:
            self._old = path.open("rb")

    @property
    def catching_up(self) -> bool:
        return self._old is not None and self.checked < self.recorded

    def write(self, line: str) -> None:
        if self._old is not None:
            old = self._old.readline()
            if old:
                self.checked += 1
                if old != line.encode("utf-8"):
                    self._old.close()
                    self._old = None
                    raise RecordMismatch(
                        f"{self.path} line {self.checked} differs from what the referee makes of the same frames "
                        "now (the video, an input or the referee changed since the run was recorded); nothing "
                        "was written: start afresh with --fresh (the recorded run is kept beside it)")
                return
            self._old.close()
            self._old = None
        if self._out is None:
            self._out = self.path.open("a", encoding="utf-8")
        self._out.write(line)
        self._out.flush()

    @property
    def closed(self) -> bool:
        return self._old is None and (self._out is None or self._out.closed)

    def close(self) -> None:
        for stream in (self._old, self._out):
            if stream is not None:
                stream.close()
        self._old = None


class RunWriter:
    """Writes a run folder as the run goes: one flushed line per event, call, warning and frame.

    `mode` NEW creates the files (a file already there is an error: nothing is ever truncated); VERIFY and
    APPEND continue a recorded run (see WriteMode; a torn last line is first set aside by
    `set_aside_torn_tail`). `lines` counts the events of the whole log, recorded ones included.
    """

    def __init__(self, folder: str | Path, *, tracks: bool = False, mode: WriteMode = WriteMode.NEW) -> None:
        self.dir = Path(folder)
        self.mode = mode
        if mode is WriteMode.NEW:
            self.dir.mkdir(parents=True, exist_ok=True)
        elif not self.dir.is_dir():
            raise RunFolderError(f"run folder {self.dir} does not exist; there is no run to resume")
        self.events_path = self.dir / EVENTS_FILE
        self.decisions_path = self.dir / DECISIONS_FILE
        self.tracks_path: Path | None = self.dir / TRACKS_FILE if tracks else None
        self.result_path = self.dir / RESULT_FILE
        self.warnings = 0
        self.frames = 0
        self._files: list[_LineFile] = []
        try:
            self._events = self._open(self.events_path)
            self._decisions = self._open(self.decisions_path)
            self._tracks = self._open(self.tracks_path) if self.tracks_path is not None else None
        except BaseException:
            self.close()
            raise
        self.lines = self._events.recorded if mode is WriteMode.APPEND else 0  # the last event is line `lines`

    def _open(self, path: Path) -> _LineFile:
        stream = _LineFile(path, self.mode)
        self._files.append(stream)
        return stream

    @property
    def catching_up(self) -> bool:
        """VERIFY: some recorded lines have not been made again yet."""
        return any(stream.catching_up for stream in self._files)

    @property
    def recorded_decision_lines(self) -> int:
        return self._decisions.recorded

    def event(self, event: Event) -> Event:
        """Write one event; return it carrying the id replay will give its line."""
        self.lines += 1
        self._events.write(json_line(event.to_json()))
        return event if event.id else replace(event, id=f"L{self.lines}")

    def decision(self, decision: Decision) -> None:
        self._decisions.write(json_line({"type": "decision", **decision.to_json()}))

    def warning(self, t: float, message: str, **fields: Any) -> None:
        self.warnings += 1
        self._decisions.write(json_line({"type": "warning", "t": round(t, 4), "message": message, **fields}))

    def frame(self, t: float, tracks: Iterable[TrackRow], detections: Iterable[DetectionRow]) -> None:
        """One tracks.jsonl line: the confirmed tracks and the detections of a frame, unrounded."""
        if self._tracks is None:
            raise ValueError("this RunWriter writes no tracks.jsonl; open it with tracks=True")
        self.frames += 1
        self._tracks.write(json_line({
            "t": round(t, 4),
            "tracks": [[id_, colour, round(x, 1), round(y, 1), _round_like_numpy(u), _round_like_numpy(v)]
                       for id_, colour, x, y, u, v in tracks],
            "detections": [[colour, round(u, 1), round(v, 1), round(r, 1), round(x, 1), round(y, 1), round(score, 3)]
                           for colour, u, v, r, x, y, score in detections],
        }))

    def write_result(self, data: dict[str, Any]) -> Path:
        """result.json, atomically: a reader sees the old file or the whole new one."""
        write_json_atomically(self.result_path, data)
        return self.result_path

    @property
    def closed(self) -> bool:
        return all(stream.closed for stream in self._files)

    def close(self) -> None:
        for stream in self._files:
            stream.close()

    def __enter__(self) -> "RunWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def set_aside_torn_tail(path: Path) -> str | None:
    """Before appending to a line file a killed writer left: a last line with no newline after it that is
    not complete JSON (a record never finished) is moved, byte for byte, to FILE.torn and cut from FILE;
    a complete last line only gets its newline. The only bytes a run ever removes from a file, and they
    are kept. Returns a note saying what was done, or None."""
    with path.open("rb") as stream:
        data = stream.read()
    if not data or data.endswith(b"\n"):
        return None
    start = data.rfind(b"\n") + 1
    tail = data[start:]
    try:
        json.loads(tail.decode("utf-8"))
        complete = True
    except (UnicodeDecodeError, ValueError, RecursionError):
        complete = False
    if complete:
        with path.open("ab") as stream:
            stream.write(b"\n")
        return f"{path.name}: its last line lacked a newline; added one"
    aside = path.with_name(path.name + TORN_SUFFIX)
    with aside.open("ab") as stream:
        stream.write(tail + b"\n")
        stream.flush()
        os.fsync(stream.fileno())
    os.truncate(path, start)
    return f"{path.name}: set its torn last line ({len(tail)} bytes) aside in {aside.name}"


class RunLock:
    """The run folder's writer lock: an exclusive flock on LOCK_FILE, released when the process ends however
    it ends (a killed run leaves no stale lock). The file says who holds it, for the refusal message."""

    def __init__(self, folder: str | Path) -> None:
        self.path = Path(folder) / LOCK_FILE
        self._stream: IO[str] | None = None

    def acquire(self, what: str) -> "RunLock":
        try:
            stream = self.path.open("a+", encoding="utf-8")
        except OSError as error:
            raise RunFolderError(f"cannot write in run folder {self.path.parent} ({error.strerror or error}); "
                                 "pick a writable --out folder") from None
        try:
            fcntl.flock(stream.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            stream.seek(0)
            holder = stream.read().strip() or "another process"
            stream.close()
            raise RunFolderError(f"run folder {self.path.parent} is being written by {holder}; wait for it to "
                                 "finish (or stop it), or use another --out folder") from None
        stream.seek(0)
        stream.truncate()  # the lock file's own text only: who holds it now
        stream.write(f"{what} (pid {os.getpid()}, since {utc_now()})\n")
        stream.flush()
        self._stream = stream
        return self

    def release(self) -> None:
        if self._stream is not None:
            self._stream.close()  # closing the file releases the flock
            self._stream = None


def append_history(folder: str | Path, entry: dict[str, Any]) -> None:
    """One line of HISTORY_FILE (what happened to the folder, and when), flushed to disk."""
    with (Path(folder) / HISTORY_FILE).open("a", encoding="utf-8") as stream:
        stream.write(json_line({"at": utc_now(), **entry}))
        stream.flush()
        os.fsync(stream.fileno())


def read_history(folder: str | Path) -> tuple[dict[str, Any], ...]:
    """HISTORY_FILE's lines (a torn last one left out); empty when there is none."""
    path = Path(folder) / HISTORY_FILE
    if not path.exists():
        return ()
    lines = read_json_lines(path, "history file", torn_tail_ok=True, error=RunFolderError,
                            fix=f"{JSON_LINES_FIX}; the file is written by `referee run`")
    return tuple(data for _, data in lines if isinstance(data, dict))


def recorded_until(folder: str | Path) -> float | None:
    """The latest time any line of the folder's events, decisions and tracks files records (their last
    complete lines are read, not the whole files); None when they record nothing."""
    latest = None
    for name in (EVENTS_FILE, DECISIONS_FILE, TRACKS_FILE):
        path = Path(folder) / name
        if not path.exists():
            continue
        with path.open("rb") as stream:
            stream.seek(0, os.SEEK_END)
            size = stream.tell()
            stream.seek(max(0, size - (1 << 16)))
            tail = stream.read()
        for chunk in reversed(tail.split(b"\n")[1 if size > (1 << 16) else 0:]):
            try:
                data = json.loads(chunk.decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError):
                continue
            if isinstance(data, dict) and _is_number(data.get("t")) and math.isfinite(data["t"]):
                latest = data["t"] if latest is None else max(latest, data["t"])
                break
    return latest


def utc_now() -> str:
    """Now, as every time stamp of a run folder is written: ISO 8601, UTC, to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _round_like_numpy(value: float | None) -> float | None:
    """`numpy.round(value, 1)` without numpy: scale by 10, round half to even, scale back (zero keeps its sign)."""
    if value is None:
        return None
    scaled = float(value) * 10.0
    if not math.isfinite(scaled):
        return scaled / 10.0
    whole = float(round(scaled))
    return (whole if whole else math.copysign(0.0, scaled)) / 10.0


def append_corrections(folder: str | Path, corrections: Iterable[Correction]) -> Path:
    """Append corrections to corrections.jsonl, one line each; the lines already there stay as they are."""
    path = Path(folder) / CORRECTIONS_FILE
    with path.open("a", encoding="utf-8") as stream:
        for correction in corrections:
            stream.write(json_line(correction.to_json()))
    return path


# --------------------------------------------------------------------------- reading


def read_run(folder: str | Path, *, tracks: bool = True) -> RunFolder:
    """Read a run folder whole; `tracks=False` skips tracks.jsonl (then `tracks` is None)."""
    folder = Path(folder)
    if not folder.exists():
        raise RunFolderError(f"run folder {folder} does not exist; pass the --out folder of `referee run`")
    if not folder.is_dir():
        raise RunFolderError(f"run folder {folder} is a file, not a folder; pass the --out folder of `referee run`")
    events_path = folder / EVENTS_FILE
    if not events_path.is_file():
        raise RunFolderError(f"run folder {folder} has no {EVENTS_FILE}; pass the --out folder of `referee run`")
    notes: list[str] = []
    events = _read_events(events_path, notes)
    lines = _read_decision_lines(folder / DECISIONS_FILE, notes)
    result = read_result(folder / RESULT_FILE) if (folder / RESULT_FILE).exists() else None
    frames = read_tracks(folder / TRACKS_FILE, notes) if tracks and (folder / TRACKS_FILE).exists() else None
    corrections = read_corrections(folder / CORRECTIONS_FILE, events) \
        if (folder / CORRECTIONS_FILE).exists() else ()
    return RunFolder(folder, events, lines, result, frames, corrections, tuple(notes))


def _read_events(path: Path, notes: list[str]) -> tuple[Event, ...]:
    lines = read_json_lines(path, "event log", torn_tail_ok=True, error=RunFolderError,
                            fix=f"{JSON_LINES_FIX}; repair that line or {RUN_AGAIN}")
    notes.extend(lines.notes)
    try:
        return tuple(parse_log_rows(lines.rows, str(path)))
    except LogError as error:
        raise RunFolderError(str(error)) from None


def _read_decision_lines(path: Path, notes: list[str]) -> tuple[dict[str, Any], ...]:
    if not path.exists():
        return ()
    lines = read_json_lines(path, "decisions file", torn_tail_ok=True, error=RunFolderError,
                            fix=f"{JSON_LINES_FIX}; {RUN_AGAIN}")
    notes.extend(lines.notes)
    out = []
    for number, data in lines:
        problem = _decision_line_problem(data)
        if problem:
            raise RunFolderError(f"{path} line {number}: {problem}; the file holds the run's decision and warning "
                                 f"lines, {RUN_AGAIN}")
        out.append(data)
    return tuple(out)


def _decision_line_problem(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "not a JSON object"
    kind = data.get("type")
    if kind not in ("decision", "warning"):
        return f"'type' is {kind!r}, not 'decision' or 'warning'"
    if not _is_number(data.get("t")):
        return f"'t' is {data.get('t')!r}, not a number"
    needed = ("kind", "summary") if kind == "decision" else ("message",)
    for name in needed:
        if not isinstance(data.get(name), str):
            return f"a {kind} line needs a string {name!r}"
    return None


def read_tracks(path: str | Path, notes: list[str] | None = None) -> tuple[TrackFrame, ...]:
    """tracks.jsonl, in file order; a torn last line is left out (and noted in `notes` when given)."""
    path = Path(path)
    lines = read_json_lines(path, "tracks file", torn_tail_ok=True, error=RunFolderError,
                            fix=f"{JSON_LINES_FIX}; {RUN_AGAIN}")
    if notes is not None:
        notes.extend(lines.notes)
    frames = []
    for number, data in lines:
        try:
            frames.append(track_frame(data))
        except ValueError as problem:
            raise RunFolderError(f"{path} line {number}: {problem}; a tracks line is {TRACKS_LINE} "
                                 f"({RUN_AGAIN})") from None
    return tuple(frames)


def track_frame(data: Any) -> TrackFrame:
    """One decoded tracks.jsonl line as a TrackFrame; ValueError says what is wrong with it."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    t = _number(data.get("t"), "'t'")
    rows = data.get("tracks")
    if not isinstance(rows, list):
        raise ValueError(f"'tracks' is {rows!r}, not a list")
    detections = data.get("detections", [])
    if not isinstance(detections, list):
        raise ValueError(f"'detections' is {detections!r}, not a list")
    return TrackFrame(t, tuple(_track_point(row, i) for i, row in enumerate(rows)),
                      tuple(_detection_point(row, i) for i, row in enumerate(detections)))


def _track_point(row: Any, index: int) -> TrackPoint:
    where = f"tracks[{index}]"
    if not isinstance(row, list) or len(row) not in (4, 6):
        raise ValueError(f"{where} is {row!r}, not [id, colour, x, y, u, v]")
    if isinstance(row[0], bool) or not isinstance(row[0], int):
        raise ValueError(f"{where} id is {row[0]!r}, not an integer")
    u = None if len(row) < 6 or row[4] is None else _number(row[4], f"{where} u")
    v = None if len(row) < 6 or row[5] is None else _number(row[5], f"{where} v")
    return TrackPoint(row[0], _string(row[1], f"{where} colour"), _number(row[2], f"{where} x"),
                      _number(row[3], f"{where} y"), u, v)


def _detection_point(row: Any, index: int) -> DetectionPoint:
    where = f"detections[{index}]"
    if not isinstance(row, list) or len(row) != 7:
        raise ValueError(f"{where} is {row!r}, not [colour, u, v, r, x, y, score]")
    colour = _string(row[0], f"{where} colour")
    u, v, r, x, y, score = (_number(value, f"{where}[{i}]") for i, value in enumerate(row[1:], start=1))
    return DetectionPoint(colour, u, v, r, x, y, score)


def read_result(path: str | Path) -> dict[str, Any]:
    """A result file (result.json or result.corrected.json), checked as far as the tools rely on it."""
    path = Path(path)
    data = read_json(path, "result file", fix="re-run `referee replay` to rewrite it", error=RunFolderError)
    problem = result_problem(data)
    if problem:
        raise RunFolderError(f"{path} is not a referee result: {problem}; re-run `referee replay` to rewrite it")
    return data


def read_corrected_result(folder: str | Path) -> dict[str, Any] | None:
    """result.corrected.json of `referee correct`; None when there is none."""
    path = Path(folder) / CORRECTED_RESULT_FILE
    return read_result(path) if path.exists() else None


def result_problem(data: Any) -> str | None:
    """What makes `data` no referee result (docs/result.md), or None."""
    if not isinstance(data, dict):
        return "it is not a JSON object"
    if data.get("game") not in GAMES:
        return f"field 'game' is {data.get('game')!r}, not one of {', '.join(GAMES)}"
    if data.get("format") != RESULT_FORMAT:
        return f"field 'format' is {data.get('format')!r}, not {RESULT_FORMAT!r}"
    players = data.get("players")
    if not isinstance(players, list) or not all(isinstance(p, dict) and isinstance(p.get("id"), str)
                                                for p in players):
        return "field 'players' is not a list of {\"id\": ...} objects"
    winners = data.get("winners")
    if not isinstance(winners, list) or not all(isinstance(w, str) for w in winners):
        return "field 'winners' is not a list of player ids"
    if not isinstance(data.get("complete"), bool):
        return "field 'complete' is not true or false"
    scores = data.get("final_scores")
    if not isinstance(scores, dict) or not all(isinstance(n, int) and not isinstance(n, bool)
                                               for n in scores.values()):
        return "field 'final_scores' is not an object of points per player"
    games = data.get("games")
    if not isinstance(games, list) or not all(isinstance(g, dict) for g in games):
        return "field 'games' is not a list of objects"
    decisions = data.get("decisions")
    if not isinstance(decisions, list):
        return "field 'decisions' is not a list"
    for i, d in enumerate(decisions):
        if not (isinstance(d, dict) and _is_number(d.get("t")) and isinstance(d.get("kind"), str)
                and isinstance(d.get("summary"), str)):
            return f"decisions[{i}] lacks a number 't', a string 'kind' or a string 'summary'"
        items = d.get("breakdown", [])
        if not isinstance(items, list) or not all(isinstance(item, dict) and isinstance(item.get("label"), str)
                                                  and isinstance(item.get("points"), int) for item in items):
            return f"decisions[{i}].breakdown is not a list of {{\"label\", \"points\"}} lines"
    if not isinstance(data.get("config", {}), dict):
        return "field 'config' is not an object"
    stopped = data.get("stopped", {"reason": "", "t": 0})
    if not (isinstance(stopped, dict) and isinstance(stopped.get("reason"), str) and _is_number(stopped.get("t"))):
        return "field 'stopped' is not an object with a string 'reason' and a number 't'"
    return None


def read_corrections(path: str | Path, events: Iterable[Event] = ()) -> tuple[Correction, ...]:
    """corrections.jsonl, strictly (see the module docstring); `events` are the log's, whose ids it may not reuse."""
    path = Path(path)
    lines = read_json_lines(path, "corrections file", torn_tail_ok=True, error=RunFolderError, fix=CORRECTIONS_FIX)
    if lines.torn_line is not None:  # refused all the same: the next correction would be appended to it
        raise RunFolderError(f"{path} line {lines.torn_line} is cut off (`referee correct` stopped while writing "
                             "it); delete that line, then run `referee correct` again")
    used = {event.id for event in events}
    corrections = []
    for number, data in lines:
        try:
            event = parse_event(data, number)
        except LogError as error:
            raise RunFolderError(f"{path} {error}; {CORRECTIONS_FIX}") from None
        if not isinstance(event, CORRECTION_TYPES):
            raise RunFolderError(f"{path} line {number}: a {event.TYPE} is not a correction (confirm, overturn, "
                                 f"snapshot_correction or umpire_foul); {CORRECTIONS_FIX}")
        if not data.get("id"):
            raise RunFolderError(f"{path} line {number}: the correction has no 'id' (C<n>); {CORRECTIONS_FIX}")
        if event.id in used:
            raise RunFolderError(f"{path} line {number}: id {event.id!r} is already used; {CORRECTIONS_FIX}")
        used.add(event.id)
        recorded_at = data.get("recorded_at", "")
        corrections.append(Correction(event, recorded_at if isinstance(recorded_at, str) else str(recorded_at)))
    return tuple(corrections)


# --------------------------------------------------------------------------- small checks


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number(value: Any, name: str) -> float:
    if not _is_number(value):
        raise ValueError(f"{name} is {value!r}, not a number")
    return float(value)


def _string(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name} is {value!r}, not a string")
    return value
