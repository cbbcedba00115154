"""`kill -9` of `referee serve` mid-match, then `referee serve --resume` on its folder: the console comes back
with the scores, the turn, the round clock and the open review flags the record held at the kill, nothing
written is lost, and the match then plays to its end."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from serving import SAMPLE, TOKEN, replayed_scores, scores, serve

from record.manifest import read_manifest
from record.run_folder import read_run, recorded_until
from rules.engine import RoundClock
from rules.games import make_engine
from rules.replay import AMENDMENTS, replay, resolve_umpire_inputs


def complete_lines(path: Path) -> bytes:
    """A file as a kill left it, but a torn last line (the resumed run sets that aside)."""
    data = path.read_bytes()
    return data[:data.rfind(b"\n") + 1]


def test_a_killed_console_resumes_where_the_record_ends(tmp_path: Path):
    out = tmp_path / "run"
    with serve(out, str(SAMPLE / "video.mp4"), "--game", "starcluster", "--session", str(SAMPLE / "truth.json"),
               "--token", TOKEN) as console:
        flagged = console.post("choice", {"player": "red", "choice": "bank"})  # no choice is asked: refused, flagged
        assert flagged.status_code == 409
        console.wait_for(lambda s: s["t"] > 0.6, "the session's round_start (0.53 s) applied")
        for action in ("pause", "resume"):  # the round clock stands still meanwhile
            assert console.post("round", {"action": action, "by": "Ulla"}).status_code == 200
        # blue's shot has settled and the round goes on until 12.17 s: nothing changes the score meanwhile
        killed = console.wait_for(lambda s: s["t"] > 7.6 and s["review"], "blue's shot settled")
        console.process.send_signal(signal.SIGKILL)
        console.process.wait(timeout=30)
    record = {name: complete_lines(out / name) for name in ("events.jsonl", "decisions.jsonl", "tracks.jsonl")}
    held = read_run(out, tracks=False)
    config = read_manifest(out).rules_config
    replayed = replay(list(held.events), "starcluster", config)
    until = recorded_until(out)
    flags = sorted([line["summary"] for line in held.decisions if line.get("flagged")] +  # none was resolved
                   [line["message"] for line in held.warnings if line.get("review")])
    assert flags and not (out / "result.json").exists()

    with serve(out, "--resume", "--token", TOKEN) as console:
        back = console.state()
        assert back["phase"] == "running" and back["t"] >= round(until, 3) - 1e-3
        assert scores(back) == dict(replayed.standings.games[-1].totals)
        assert back["to_play"] == replayed.standings.to_play
        clock = RoundClock.of(replay_engine_state(held.events, config))
        assert abs(back["round"]["clock_s"] - clock.at(back["t"])) < 2e-3
        assert sorted(flag["message"] for flag in back["review"]) == flags
        assert [(i["id"], i["type"], i["by"]) for i in back["umpire_inputs"]] == \
            [(i["id"], i["type"], i["by"]) for i in killed["umpire_inputs"]] and len(killed["umpire_inputs"]) == 2
        done = console.wait_for(lambda s: s["phase"] == "finished", "the end of the resumed match")
    for name, data in record.items():
        assert (out / name).read_bytes().startswith(data), f"{name}: what was written before the kill is kept"
    assert scores(done) == replayed_scores(out, tmp_path / "replayed")
    assert "stopped" not in json.loads((out / "result.json").read_text())


def replay_engine_state(events, config):
    """The rules engine's state once fed the log (its round clock: when the round started, its pauses)."""
    engine = make_engine("starcluster", config)
    for event in resolve_umpire_inputs(list(events))[0]:
        if not isinstance(event, AMENDMENTS):
            engine.feed(event)
    return engine.state()
