"""rules.files: the one JSON-lines reader and the atomic JSON writer."""

import json

import pytest

from rules.errors import InputError
from rules.events import LogError
from rules.files import decode_json_lines, json_line, read_json, read_json_lines, write_json_atomically


def test_lines_are_numbered_from_one_and_blank_ones_skipped_but_counted(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"a":1}\r\n\n   \n{"b":"\xc3\xa9"}\n[3]')
    lines = read_json_lines(path, "log")
    assert lines.rows == ((1, {"a": 1}), (4, {"b": "\u00e9"}), (5, [3])) and lines.notes == ()
    assert lines.torn_line is None
    assert list(lines) == list(lines.rows) and len(lines) == 3


def test_a_torn_last_line_is_a_note_only_when_asked_for(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":"\xc3')  # killed inside a two-byte character
    with pytest.raises(InputError, match="line 2 is not UTF-8: byte 0xc3 at column 7"):
        read_json_lines(path, "log")
    lines = read_json_lines(path, "log", torn_tail_ok=True)
    assert lines.rows == ((1, {"a": 1}),)
    assert lines.notes == ("run.jsonl: ignored a torn last line 2 (the writer stopped mid-line)",)
    assert lines.torn_line == 2
    path.write_bytes(b'{"a":1}\n{"b":2\n')  # followed by its newline: not torn, broken
    with pytest.raises(InputError, match=r"run.jsonl line 2: not valid JSON \(.* at column 7\); fix it"):
        read_json_lines(path, "log", torn_tail_ok=True, fix="fix it")


@pytest.mark.parametrize("make, message", [
    (lambda p: None, "event log {p} does not exist; check the path"),
    (lambda p: p.mkdir(), "event log {p} is a folder, not a file"),
    (lambda p: p.write_bytes(b'{"a":1}\n\xff\n'), "event log {p} cannot be read (line 2 is not UTF-8: byte 0xff"),
    (lambda p: p.write_text('{"a":1}\n{"a":\n'), "{p} line 2: not valid JSON (Expecting value at column 6); "
                                                 "each line must be one JSON object"),
])
def test_each_problem_is_one_line_of_the_callers_error_class(tmp_path, make, message):
    path = tmp_path / "log.jsonl"
    make(path)
    with pytest.raises(LogError) as raised:
        read_json_lines(path, "event log", error=LogError)
    assert str(raised.value).startswith(message.format(p=path)) and "\n" not in str(raised.value)


def test_lines_in_memory_give_the_same_error():
    assert decode_json_lines(['{"a":1}', "", "[2]"], "mem") == [(1, {"a": 1}), (3, [2])]
    with pytest.raises(InputError, match=r"^mem line 2: not valid JSON \(Expecting value at column 1\); each line"):
        decode_json_lines(['{"a":1}', "x"], "mem")


def test_read_json_names_the_file_and_the_fix(tmp_path):
    path = tmp_path / "r.json"
    with pytest.raises(InputError, match=f"^result {path} does not exist; rewrite it$"):
        read_json(path, "result", fix="rewrite it")
    path.write_text('{"a": [1,\n}')
    with pytest.raises(InputError, match=r"cannot be read as JSON \(Expecting value at line 2 column 1\); rewrite it"):
        read_json(path, "result", fix="rewrite it")
    write_json_atomically(path, {"a": [1, 2]})
    assert read_json(path, "result", fix="") == {"a": [1, 2]}


def test_write_json_atomically_leaves_the_old_file_and_no_temporary_on_failure(tmp_path):
    path = tmp_path / "deep" / "result.json"
    write_json_atomically(path, {"ok": True})
    assert path.read_text() == '{\n  "ok": true\n}\n'
    with pytest.raises(TypeError):
        write_json_atomically(path, {"bad": object()})
    assert json.loads(path.read_text()) == {"ok": True}
    assert [p.name for p in path.parent.iterdir()] == ["result.json"]


def test_json_line_is_compact():
    assert json_line({"type": "x", "t": 1.5, "a": [1, None]}) == '{"type":"x","t":1.5,"a":[1,null]}\n'
