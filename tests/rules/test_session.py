"""Session files: the umpire's inputs of a refereed match, from JSON lines or a truth.json."""

import json

import pytest

from rules.errors import InputError
from rules.events import GameStart, RoundStart
from rules.session import load_session


def test_a_truth_file_gives_its_umpire_inputs_and_its_game_config(tmp_path):
    truth = {"config": {"rounds_per_game": 1}, "events": [
        {"type": "game_start", "t": 0.0, "players": [{"id": "red", "side": "right"}, {"id": "blue", "side": "left"}]},
        {"type": "round_start", "t": 0.5},
        {"type": "shot_started", "t": 1.0, "player": "red"},
    ]}
    path = tmp_path / "truth.json"
    path.write_text(json.dumps(truth))
    session = load_session(path)
    assert [type(e) for e in session.events] == [GameStart, RoundStart]  # observations are vision's to make
    assert session.events[0].id == "" and session.config == {"rounds_per_game": 1}


def test_json_lines_carry_no_config(tmp_path):
    path = tmp_path / "session.jsonl"
    path.write_text('{"type": "round_start", "t": 0}\n{"type": "round_end", "t": 9, "id": "U1"}\n')
    session = load_session(path)
    assert [e.TYPE for e in session.events] == ["round_start", "round_end"] and session.events[1].id == "U1"
    assert session.config == {}


@pytest.mark.parametrize("text, message", [
    ('{"type": "round_start", "t": 0}\n{"type": "game_start", "t": 1, "players": []}\n', "entry 2"),
    ('{"type": "round_start", "t": 0}\nnot json\n', "line 2: not valid JSON"),
    ('{"events": [], "config": [1]}', "'config' must be an object"),
])
def test_a_bad_session_file_is_a_clear_error(tmp_path, text, message):
    path = tmp_path / "session.jsonl"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        load_session(path)


def test_a_missing_or_binary_session_file_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        load_session(tmp_path / "nope.jsonl")
    (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InputError, match="cannot be read"):
        load_session(tmp_path / "bin.jsonl")
