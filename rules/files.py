"""Reading and writing the project's JSON files: JSON lines in, whole JSON files out atomically.

Every JSON-lines file of the project (event logs, a run folder's decisions, tracks
and corrections, umpire corrections given with --file) is read by
`read_json_lines`, so a bad file always stops with the same kind of one-line error:
the file, the line when there is one, what is wrong and what to do. Lines are
split on "\\n" only (a JSON string never holds a raw newline) and numbered from 1;
blank lines are skipped but counted.

A file written line by line as things happen (a referee run) can end in a torn
line when the writer was killed: the last line, with no newline after it, that is
not valid JSON or not UTF-8. With `torn_tail_ok` such a line is left out and a
note says so; anywhere else, or without `torn_tail_ok`, a bad line is an error.
A last line that is complete JSON but lacks its newline is an ordinary line.

Nothing here imports numpy or OpenCV: this is the bottom layer.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from .errors import InputError

JSON_LINES_FIX = "each line must be one JSON object"


@dataclass(frozen=True)
class JsonLines:
    """The decoded lines of a JSON-lines file: (line number, object) for each non-blank line, in order."""

    path: Path
    rows: tuple[tuple[int, Any], ...]
    notes: tuple[str, ...] = ()  # what was tolerated (a torn last line)
    torn_line: int | None = None  # the number of the torn last line left out, if one was

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)


def read_json_lines(path: str | Path, what: str, *, torn_tail_ok: bool = False, fix: str = JSON_LINES_FIX,
                    error: type[InputError] = InputError) -> JsonLines:
    """Read a JSON-lines file whole; any problem raises `error` (an InputError) as one line.

    `what` names the file in messages about the whole file ("event log" gives "event log
    PATH does not exist; check the path"); a bad line is named "PATH line N: ...; FIX".
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise error(f"{what} {path} does not exist; check the path") from None
    except IsADirectoryError:
        raise error(f"{what} {path} is a folder, not a file; pass a JSON-lines file") from None
    except OSError as problem:
        raise error(f"{what} {path} cannot be read ({problem.strerror or problem}); "
                    "pass a UTF-8 JSON-lines file") from None
    chunks = data.split(b"\n")
    last = len(chunks)  # the final chunk is "" when the file ends in a newline, else an unterminated line
    rows: list[tuple[int, Any]] = []
    torn: int | None = None
    for number, chunk in enumerate(chunks, start=1):
        torn_ok = torn_tail_ok and number == last  # only an unterminated last line can be torn
        try:
            line = chunk.decode("utf-8")
        except UnicodeDecodeError as problem:
            if torn_ok:
                torn = number
                continue
            raise error(f"{what} {path} cannot be read (line {number} is not UTF-8: byte "
                        f"0x{chunk[problem.start]:02x} at column {problem.start + 1}); "
                        "pass a UTF-8 JSON-lines file") from None
        if not line.strip():
            continue
        try:
            rows.append((number, json.loads(line)))
        except json.JSONDecodeError as problem:
            if torn_ok:
                torn = number
                continue
            raise error(f"{path} line {number}: not valid JSON ({problem.msg} at column {problem.colno}); "
                        f"{fix}") from None
    notes = () if torn is None else (f"{path.name}: ignored a torn last line {torn} (the writer stopped mid-line)",)
    return JsonLines(path, tuple(rows), notes, torn)


def decode_json_lines(lines: Iterable[str], name: str, *, fix: str = JSON_LINES_FIX,
                      error: type[InputError] = InputError) -> list[tuple[int, Any]]:
    """(line number, object) for each non-blank line of text already in memory; a bad line raises `error`."""
    rows: list[tuple[int, Any]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rows.append((number, json.loads(line)))
        except json.JSONDecodeError as problem:
            raise error(f"{name} line {number}: not valid JSON ({problem.msg} at column {problem.colno}); "
                        f"{fix}") from None
    return rows


def read_text(path: str | Path, what: str, *, fix: str, error: type[InputError] = InputError) -> str:
    """A whole UTF-8 text file; a missing or unreadable one raises `error` naming it and `fix`."""
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{what} {path} does not exist; {fix}") from None
    except (OSError, UnicodeDecodeError) as problem:
        raise error(f"{what} {path} cannot be read as JSON ({problem}); {fix}") from None


def read_json(path: str | Path, what: str, *, fix: str, error: type[InputError] = InputError) -> Any:
    """One whole JSON file, decoded; a missing, unreadable or invalid file raises `error` naming it and `fix`."""
    text = read_text(path, what, fix=fix, error=error)
    try:
        return json.loads(text)
    except json.JSONDecodeError as problem:
        raise error(f"{what} {path} cannot be read as JSON ({problem.msg} at line {problem.lineno} column "
                    f"{problem.colno}); {fix}") from None


def json_line(data: Any) -> str:
    """One compact JSON line, newline included: how every JSON-lines file of the project is written."""
    return json.dumps(data, separators=(",", ":")) + "\n"


def write_json_atomically(path: str | Path, data: dict[str, Any]) -> None:
    """Write via a temporary file and a rename, so a reader never sees half a result."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(data, stream, indent=2, sort_keys=False)
            stream.write("\n")
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
