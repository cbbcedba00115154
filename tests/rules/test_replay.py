"""`referee replay`: result file, score sheet, umpire inputs and malformed logs."""

import json
from pathlib import Path

import jsonschema
import pytest

from referee.cli import main
from rules.replay import read_log, replay
from rules.events import BallSighting, Location, Snapshot, SnapshotCorrection
from rules.result import build_result

ROOT = Path(__file__).parents[2]
RESULT_SCHEMA = json.loads((ROOT / "rules/schemas/result.schema.json").read_text())
EXAMPLES = {
    "starcluster": ROOT / "examples/starcluster_full_game.jsonl",
    "piratenbillard": ROOT / "examples/piratenbillard_game.jsonl",
}


@pytest.mark.parametrize("game", sorted(EXAMPLES))
def test_replay_writes_a_valid_complete_result_and_sheet(game, tmp_path, capsys):
    assert main(["replay", str(EXAMPLES[game]), "--game", game, "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "result.json").read_text())
    jsonschema.validate(result, RESULT_SCHEMA)
    assert result["complete"] is True
    assert len(result["winners"]) >= 1
    # The final scores are the sum of every point-carrying decision, player by player.
    summed = {p["id"]: 0 for p in result["players"]}
    for decision in result["decisions"]:
        if decision["kind"] in ("score", "capture"):
            summed[decision["player"]] += decision["points"]
            assert sum(item["points"] for item in decision.get("breakdown", [])) == decision["points"]
    assert summed == result["final_scores"]
    sheet = (tmp_path / "score_sheet.txt").read_text()
    assert sheet == capsys.readouterr().out.split("wrote ")[0]
    for player, points in result["final_scores"].items():
        assert player in sheet.splitlines()[1]
    assert "Winner: " in sheet or "Shared victory: " in sheet


@pytest.mark.parametrize("game", sorted(EXAMPLES))
def test_replay_is_deterministic_byte_for_byte(game, tmp_path):
    for run in ("a", "b"):
        assert main(["replay", str(EXAMPLES[game]), "--game", game, "--out", str(tmp_path / run), "--quiet"]) == 0
    assert (tmp_path / "a/result.json").read_bytes() == (tmp_path / "b/result.json").read_bytes()
    assert (tmp_path / "a/score_sheet.txt").read_bytes() == (tmp_path / "b/score_sheet.txt").read_bytes()


def _broken_copy(tmp_path: Path, game: str, line_number: int, replacement: str) -> Path:
    lines = EXAMPLES[game].read_text().splitlines()
    lines[line_number - 1] = replacement
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    "replacement, message",
    [
        ('{"type": "table_settled", "t": 9.0, "balls": [', "line 4: not valid JSON"),
        ('{"type": "shot_started"}', "line 4: 't' must be a number"),
        ('{"type": "table_settled", "t": 9.0, "balls": [{"owner": "red", "at": {"place": "moon"}}]}',
         "line 4: balls[0].at.place is 'moon'"),
    ],
)
def test_malformed_line_is_named_and_no_result_is_written(tmp_path, capsys, replacement, message):
    broken = _broken_copy(tmp_path, "piratenbillard", 4, replacement)
    out = tmp_path / "out"
    assert main(["replay", str(broken), "--game", "piratenbillard", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("referee: error: ")
    assert message in err
    assert len(err.splitlines()) == 1
    assert not (out / "result.json").exists()


def test_unknown_colour_is_an_error_naming_the_event(tmp_path, capsys):
    lines = EXAMPLES["piratenbillard"].read_text().splitlines()
    settled = next(i for i, line in enumerate(lines) if '"table_settled"' in line)
    lines[settled] = lines[settled].replace('"owner": "red"', '"owner": "purple"', 1)
    path = tmp_path / "purple.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert main(["replay", str(path), "--game", "piratenbillard", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "purple" in err and f"L{settled + 1}" in err
    assert not (tmp_path / "out/result.json").exists()


def test_missing_log_and_bad_config_are_clear_errors(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "none.jsonl"), "--game", "starcluster"]) == 2
    assert "does not exist" in capsys.readouterr().err
    config = tmp_path / "config.json"
    config.write_text("{not json")
    assert main(["replay", str(EXAMPLES["piratenbillard"]), "--game", "piratenbillard",
                 "--config", str(config)]) == 2
    assert "is not valid JSON" in capsys.readouterr().err


def test_out_of_order_log_is_refused(tmp_path, capsys):
    path = tmp_path / "order.jsonl"
    path.write_text('{"type": "game_start", "t": 5, "players": [{"id": "red", "seat": 0}, {"id": "blue", "seat": 2}]}\n'
                    '{"type": "round_start", "t": 1}\n')
    assert main(["replay", str(path), "--game", "piratenbillard", "--out", str(tmp_path)]) == 2
    assert "time order" in capsys.readouterr().err


def test_umpire_input_with_unknown_target_is_refused(tmp_path, capsys):
    lines = EXAMPLES["piratenbillard"].read_text().splitlines()
    lines.append(json.dumps({"type": "confirm", "t": 10_000, "target": "L9999"}))
    path = tmp_path / "confirm.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert main(["replay", str(path), "--game", "piratenbillard", "--out", str(tmp_path)]) == 2
    assert "targets 'L9999', which is not in the log" in capsys.readouterr().err


def test_snapshot_correction_replaces_the_snapshot_and_is_recorded():
    """Line 7 of the example: green's ball lands on red's at (5,4) and captures it. The umpire
    rules that it stopped one space short, at (4,4): no capture, so green loses that point."""
    events = read_log(EXAMPLES["piratenbillard"])
    target = next(e for e in events if e.id == "L7")
    green_at_capture = Location.cell_at(5, 4)
    assert BallSighting("green", green_at_capture) in target.snapshot.balls
    assert BallSighting("red", green_at_capture) in target.snapshot.balls  # not yet lifted off
    corrected = tuple(
        BallSighting("green", Location.cell_at(4, 4)) if ball == BallSighting("green", green_at_capture) else ball
        for ball in target.snapshot.balls
    )
    correction = SnapshotCorrection(t=events[-1].t + 1, id="fix1", target="L7",
                                    snapshot=Snapshot(corrected), by="Umpire Kim", reason="stopped short")
    before = replay(events, "piratenbillard")
    after = replay(events + [correction], "piratenbillard")

    captures_at_l7 = [d for d in before.decisions if d.kind.value == "capture" and d.cause == "L7"]
    assert [d.player for d in captures_at_l7] == ["green"]
    assert not [d for d in after.decisions if d.kind.value == "capture" and d.cause == "L7"]
    umpire = [d for d in after.decisions if d.kind.value == "umpire"]
    assert len(umpire) == 1 and umpire[0].cause == "fix1" and "Umpire Kim" in umpire[0].summary
    # The log itself is untouched: the replay layer substitutes, it does not rewrite.
    assert target.snapshot.balls == read_log(EXAMPLES["piratenbillard"])[6].snapshot.balls
    assert (build_result(after, {})["final_scores"]["green"]
            < build_result(before, {})["final_scores"]["green"])
