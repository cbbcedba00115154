"""truth.json: deterministic to the byte, and its result is what the rules engine says about its events."""

from __future__ import annotations

import json

from rules.events import parse_event
from rules.replay import replay
from rules.result import build_result
from simulation.realism import Realism
from simulation.simulate import simulate_to

SMALL = dict(width=320, height=180, duration=3.0, progress=False)


def test_same_seed_gives_byte_identical_truth(tmp_path):
    for name in ("a", "b"):
        simulate_to(tmp_path / name, "piratenbillard", 5, "capture", realism=Realism.moderate(), **SMALL)
    assert (tmp_path / "a/truth.json").read_bytes() == (tmp_path / "b/truth.json").read_bytes()
    simulate_to(tmp_path / "c", "piratenbillard", 6, "full_game", **SMALL)
    assert (tmp_path / "c/truth.json").read_bytes() != (tmp_path / "a/truth.json").read_bytes()


def test_truth_holds_frames_events_and_the_replayed_result(tmp_path):
    truth, _ = simulate_to(tmp_path, "piratenbillard", 1, "secure", camera="overhead", width=320, height=180,
                           progress=False)
    data = json.loads((tmp_path / "truth.json").read_text())
    assert data == json.loads(json.dumps(truth))
    assert data["camera"]["image_size"] == [320, 180] and len(data["camera"]["K"]) == 3
    assert data["profile"]["game"] == "piratenbillard"
    assert data["frame_count"] == len(data["frames"]) and data["ball_columns"][0] == "id"
    first = data["frames"][0]["balls"]
    assert len(first) == 16 and all(len(row) == len(data["ball_columns"]) for row in first)
    events = [parse_event(e) for e in data["events"]]
    expected = build_result(replay(events, "piratenbillard", data["config"]),
                            {"simulation": "piratenbillard", "scenario": "secure", "seed": 1})
    assert data["result"] == json.loads(json.dumps(expected))
    assert data["result"]["final_scores"]["red"] == 3
