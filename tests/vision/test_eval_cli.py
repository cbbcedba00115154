"""`referee eval`: the table and JSON on a good run, one clear line and exit 2 on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.cli import main
from simulation.simulate import simulate_to
from simulation.realism import Realism


@pytest.fixture(scope="module")
def sim(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sim")
    simulate_to(out, "piratenbillard", 1, "capture", "behind_play_line", 320, 180, realism=Realism(), progress=False)
    return out


@pytest.fixture()
def run_dir(tmp_path, sim) -> Path:
    """A run folder holding the truth's own events and result (no tracks.jsonl)."""
    truth = json.loads((sim / "truth.json").read_text())
    run = tmp_path / "run"
    run.mkdir()
    (run / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in truth["events"]))
    (run / "result.json").write_text(json.dumps(truth["result"]))
    return run


def test_a_good_run_prints_the_table_and_writes_json(run_dir, sim, tmp_path, capsys):
    out = tmp_path / "report" / "eval.json"
    assert main(["eval", str(run_dir), str(sim / "truth.json"), "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert "final scores" in table and "exact" in table and "100.0%" in table
    assert "no tracks.jsonl" in table
    report = json.loads(out.read_text())
    assert report["scores"]["exact"] is True and report["tracking"] is None


def test_json_to_stdout(run_dir, sim, capsys):
    assert main(["eval", str(run_dir), str(sim / "truth.json"), "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["shots"]["accuracy"] == 1.0


@pytest.mark.parametrize("fault, message", [
    ("missing_run", "does not exist"),
    ("no_events", "has no events.jsonl"),
    ("truth_is_a_result", "is not a simulation truth"),
    ("truth_not_json", "cannot be read as JSON"),
    ("missing_truth", "truth file"),
    ("bad_event_line", "line 2"),
])
def test_bad_input_is_one_line_and_exit_2(fault, message, run_dir, sim, tmp_path, capsys):
    truth = sim / "truth.json"
    run = run_dir
    if fault == "missing_run":
        run = tmp_path / "nowhere"
    elif fault == "no_events":
        (run_dir / "events.jsonl").unlink()
    elif fault == "truth_is_a_result":
        truth = run_dir / "result.json"
    elif fault == "truth_not_json":
        truth = tmp_path / "truth.json"
        truth.write_text("{not json")
    elif fault == "missing_truth":
        truth = tmp_path / "absent.json"
    elif fault == "bad_event_line":
        lines = (run_dir / "events.jsonl").read_text().splitlines()
        lines[1] = '{"type": "table_settled", "t": -1}'
        (run_dir / "events.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["eval", str(run), str(truth)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("referee: error:") and message in err and "\n" not in err
