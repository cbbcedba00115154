"""Umpire corrections: recorded beside the run, replayed with the whole log, diffed against the original."""

import hashlib
import json
from pathlib import Path

import jsonschema
import pytest

from referee.cli import main
from review.corrections import parse_location
from rules.errors import InputError
from rules.events import Location
from runs import ROOT, truth_run

RESULT_SCHEMA = json.loads((ROOT / "rules/schemas/result.schema.json").read_text())
UMPIRE = ["--by", "Ana Umpire", "--reason", "seen on the video"]


def folder_state(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def correct(capsys, run_dir: Path, *args: str) -> tuple[int, str, str]:
    code = main(["correct", str(run_dir), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_overturned_play_line_call_gives_the_game_to_the_other_player(tmp_path, capsys):
    # play_line_foul: red's first shot lands in P1 but red's head crossed the Play Line (L4), so the shot is void
    # and blue wins 10 to 9. The umpire overturns the crossing: the shot stands and red wins 11 to 10.
    run = truth_run("starcluster/play_line_foul", tmp_path / "run")
    original = folder_state(run)
    code, out, err = correct(capsys, run, "--overturn", "L4", *UMPIRE)
    assert (code, err) == (0, "")

    assert folder_state(run)["events.jsonl"] == original["events.jsonl"]  # the original log is never rewritten
    assert folder_state(run)["result.json"] == original["result.json"]
    diff = json.loads((run / "diff.json").read_text())
    assert diff["winners"] == {"before": ["blue"], "after": ["red"]}
    assert diff["games"] == [{"number": 1, "winners": {"before": ["blue"], "after": ["red"]}}]
    assert {"scope": "final", "player": "red", "before": 9, "after": 11} in diff["scores"]
    assert {"scope": "game 1 round 1", "player": "red", "before": 9, "after": 11} in diff["scores"]
    assert not [c for c in diff["scores"] if c["player"] == "blue"]
    removed = {(d["kind"], d.get("cause")) for d in diff["decisions"]["removed"]}
    assert ("foul", "L4") in removed and ("ball_removed", "L4") in removed
    added = diff["decisions"]["added"]
    assert any(d["kind"] == "score" and d["player"] == "red" and d["points"] == 1 for d in added)
    assert any(d["kind"] == "umpire" and d["target"] == "L4" and d["by"] == "Ana Umpire" for d in added)
    changed = [(b["summary"], a["summary"]) for b, a in
               ((c["before"], c["after"]) for c in diff["decisions"]["changed"]) if b["kind"] == "shot"]
    assert changed == [("shot 1 by red: void", "shot 1 by red: scored")]

    corrected = json.loads((run / "result.corrected.json").read_text())
    jsonschema.validate(corrected, RESULT_SCHEMA)
    assert corrected["winners"] == ["red"] and corrected["final_scores"] == {"red": 11, "blue": 10}
    assert corrected["source"]["corrections_applied"] == 1
    [record] = [json.loads(line) for line in (run / "corrections.jsonl").read_text().splitlines()]
    assert record["type"] == "overturn" and record["target"] == "L4" and record["id"] == "C1"
    assert record["by"] == "Ana Umpire" and record["reason"] == "seen on the video" and record["recorded_at"]
    assert diff["corrections"] == [record]
    assert "winner: blue -> red" in out and "final points, red: 9 -> 11" in out


def test_snapshot_fix_then_a_missed_foul_then_its_overturn(tmp_path, capsys):
    # gutter_ball: red's ball was read in the gutter (L4); blue wins 10 to 9.
    run = truth_run("starcluster/gutter_ball", tmp_path / "run")
    events_hash = folder_state(run)["events.jsonl"]
    assert correct(capsys, run, "--snapshot", "L4", "red@gutter=slot:3/1", *UMPIRE)[0] == 0
    first = json.loads((run / "result.corrected.json").read_text())
    assert first["winners"] == ["red"]
    assert [d["points"] for d in first["decisions"] if d["kind"] == "score" and d["t"] == 2.17] == [5]

    # a foul during the shot (before its settle at 2.17 s) voids it: blue wins again
    assert correct(capsys, run, "--foul", "red:touching_moving_ball", "--at", "2.0", *UMPIRE)[0] == 0
    second = json.loads((run / "result.corrected.json").read_text())
    assert second["winners"] == ["blue"]
    assert any(d["kind"] == "foul" and "touching_moving_ball" in d["summary"] for d in second["decisions"])

    # the umpire's own foul can be overturned like any call; every correction stays on record
    assert correct(capsys, run, "--overturn", "C2", *UMPIRE)[0] == 0
    third = json.loads((run / "result.corrected.json").read_text())
    assert third["final_scores"] == first["final_scores"] and third["winners"] == ["red"]
    records = [json.loads(line) for line in (run / "corrections.jsonl").read_text().splitlines()]
    assert [(r["id"], r["type"]) for r in records] == [("C1", "snapshot_correction"), ("C2", "umpire_foul"),
                                                       ("C3", "overturn")]
    assert records[0]["balls"] == [{"owner": "red", "at": {"place": "slot", "position": 3, "slot": 1}}]
    assert all(r["by"] and r["reason"] for r in records)
    assert folder_state(run)["events.jsonl"] == events_hash


def test_file_corrections_and_a_replay_of_the_recorded_ones(tmp_path, capsys):
    run = truth_run("starcluster/play_line_foul", tmp_path / "run")
    lines = [{"type": "confirm", "t": 3.4, "target": "L5", "by": "Ben", "reason": "red ball in P1, as read"},
             {"type": "overturn", "t": 1.53, "target": "L4"}]  # by and reason from the command line
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert correct(capsys, run, "--file", str(tmp_path / "c.jsonl"), *UMPIRE)[0] == 0
    records = [json.loads(line) for line in (run / "corrections.jsonl").read_text().splitlines()]
    assert [(r["id"], r["by"]) for r in records] == [("C1", "Ben"), ("C2", "Ana Umpire")]
    before = (run / "result.corrected.json").read_text()
    code, out, _ = correct(capsys, run)  # nothing new: the recorded corrections are replayed again
    assert code == 0 and (run / "result.corrected.json").read_text() == before and "winner: blue -> red" in out


BAD = [
    (["--overturn", "L99"], "no event 'L99'"),
    (["--overturn", "L5"], "cannot be overturned"),
    (["--confirm", "L4", "--at", "99"], "outside the log"),
    (["--foul", "red:interference", "--at", "12.5"], "outside the log"),
    (["--foul", "red:interference"], "--foul needs --at"),
    (["--foul", "green:interference", "--at", "2"], "'green' is not a player"),
    (["--foul", "red:elbow", "--at", "2"], "malformed foul"),
    (["--snapshot", "L5", "red@slot:1=slot:1/4"], "malformed location 'slot:1'"),
    (["--snapshot", "L5", "red@slot:1/3>slot:1/4"], "malformed snapshot edit"),
    (["--snapshot", "L5", "red@slot:2/0=slot:2/1"], "has no red ball at P2/slot 0"),
    (["--snapshot", "L5", "red@slot:1/3=cell:2/2"], "cannot be at cell"),
    (["--snapshot", "L5", "red@slot:1/3=slot:1/9"], "does not replay"),
    (["--snapshot", "L4", "red@none=grouped"], "not a table_settled"),
]


@pytest.mark.parametrize("args, message", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_a_correction_that_makes_no_sense_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys, args, message):
    run = truth_run("starcluster/play_line_foul", tmp_path / "run")
    state = folder_state(run)
    code, out, err = correct(capsys, run, *args, *UMPIRE)
    assert code == 2 and out == ""
    assert err.startswith("referee: error: ") and err.count("\n") == 1 and message in err
    assert folder_state(run) == state


@pytest.mark.parametrize("who", [["--reason", "why"], ["--by", "Ana"]], ids=["no --by", "no --reason"])
def test_who_and_why_are_required(tmp_path, capsys, who):
    run = truth_run("starcluster/play_line_foul", tmp_path / "run")
    state = folder_state(run)
    code, _, err = correct(capsys, run, "--overturn", "L4", *who)
    assert code == 2 and err.count("\n") == 1 and "is required" in err
    assert folder_state(run) == state


def test_location_syntax():
    assert parse_location("slot:3/4") == Location.slot_at(3, 4)
    assert parse_location("cell:0/7") == Location.cell_at(0, 7)
    assert parse_location("grouped") == Location.from_json({"place": "grouped"}, "x")
    assert parse_location("none") is None
    for bad in ("slot", "cell:1", "slot:0/1", "slots:1/2", "table"):
        with pytest.raises(InputError, match="malformed location"):
            parse_location(bad)
