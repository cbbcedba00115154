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

Every JSON text a user hands in is decoded by `loads`, which refuses what would otherwise
escape as a RecursionError or a ValueError (nesting deeper than MAX_DEPTH, an integer of
more digits than Python converts) with a json.JSONDecodeError like any other bad JSON.

Nothing here imports numpy or OpenCV: this is the bottom layer.
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from .errors import InputError

JSON_LINES_FIX = "each line must be one JSON object"
MAX_DEPTH = 100  # of nested lists and objects; no file of the project comes near it


def loads(text: str) -> Any:
    """`json.loads` for text from a user: anything it cannot decode is a json.JSONDecodeError.

    json.loads itself raises RecursionError for deep nesting and a plain ValueError for an integer
    of more than sys.get_int_max_str_digits() digits; here both are JSONDecodeErrors pointing at
    the spot, and so is nesting deeper than MAX_DEPTH (which later code could not print or copy
    without recursing as deep). Infinity, NaN and huge float literals decode as json.loads does:
    the reader of each field decides whether it takes a non-finite number.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        too_deep = True  # deeper than the interpreter's stack: deeper than MAX_DEPTH too
    except ValueError:
        digits = sys.get_int_max_str_digits()
        raise json.JSONDecodeError(f"an integer has more than {digits} digits", text,
                                   _long_integer_at(text, digits)) from None
    else:  # only text with that many brackets can nest that deep: most lines skip the walk
        too_deep = text.count("[") + text.count("{") > MAX_DEPTH and _deeper_than(data, MAX_DEPTH)
    if too_deep:
        raise json.JSONDecodeError(f"nested more than {MAX_DEPTH} lists or objects deep", text,
                                   _too_deep_at(text, MAX_DEPTH))
    return data


def non_finite_at(data: Any) -> tuple[str | int, ...] | None:
    """The path (keys and indices) of the first number in decoded JSON that is not finite (NaN, Infinity, a
    float literal past the float range) or an integer too large for a float; None when there is none.

    For files whose every number is a measurement (a table profile, a calibration); a reader of mixed
    files checks each field instead."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return path
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > sys.float_info.max:
            return path
        if isinstance(value, dict):
            stack.extend((path + (key,), child) for key, child in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((path + (index,), child) for index, child in reversed(list(enumerate(value))))
    return None


def _deeper_than(data: Any, limit: int) -> bool:
    """Whether lists and objects nest more than `limit` deep, without recursing."""
    if not isinstance(data, (list, dict)):
        return False
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        children = value.values() if isinstance(value, dict) else value
        stack.extend((child, depth + 1) for child in children if isinstance(child, (list, dict)))
    return False


def _outside_strings(text: str) -> Iterator[tuple[int, str]]:
    """(index, character) of each character of JSON text that is not inside a string."""
    inside = escaped = False
    for index, char in enumerate(text):
        if inside:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                inside = False
        elif char == '"':
            inside = True
        else:
            yield index, char


def _too_deep_at(text: str, limit: int) -> int:
    """Where JSON text first opens its (limit + 1)th nested list or object."""
    depth = 0
    for index, char in _outside_strings(text):
        if char in "[{":
            depth += 1
            if depth > limit:
                return index
        elif char in "]}":
            depth -= 1
    return 0


def _long_integer_at(text: str, digits: int) -> int:
    """Where JSON text has its first number of more than `digits` digits."""
    start, run = 0, 0
    for index, char in _outside_strings(text):
        if char.isdigit():
            start, run = (start, run + 1) if run else (index, 1)
            if run > digits:
                return start
        else:
            run = 0
    return 0


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
            rows.append((number, loads(line)))
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
            rows.append((number, loads(line)))
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
        return loads(text)
    except json.JSONDecodeError as problem:
        raise error(f"{what} {path} cannot be read as JSON ({problem.msg} at line {problem.lineno} column "
                    f"{problem.colno}); {fix}") from None


def json_line(data: Any) -> str:
    """One compact JSON line, newline included: how every JSON-lines file of the project is written."""
    return json.dumps(data, separators=(",", ":")) + "\n"


def write_json_atomically(path: str | Path, data: dict[str, Any]) -> None:
    """Write via a temporary file and a rename, so a reader never sees half a result."""
    write_bytes_atomically(path, (json.dumps(data, indent=2, sort_keys=False) + "\n").encode("utf-8"))


def write_bytes_atomically(path: str | Path, data: bytes) -> None:
    """A whole file via a temporary file, fsync and a rename: a reader sees the old file or the new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(handle, 0o666 & ~_umask())  # as open() would create it: mkstemp's 0600 is for secrets
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _umask() -> int:
    """The process's umask (read without changing it where Linux allows)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
