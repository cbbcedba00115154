"""The umpire runs a match from the console: sets it up (no --session, no --players; a table of --tables),
starts, pauses and resumes the round, corrects a settled table, calls a foul, undoes both, confirms a call,
answers the out-of-balls choice and stops the refereeing; each endpoint also refuses what the rules do not
allow, and says why. Each input is an event of events.jsonl with who gave it, the console's state is `referee
replay`'s, and `referee report` lists who decided what. Also: the token is made up on 127.0.0.1 when none is
given, another host without one is refused, and so is a --tables folder with another game's table."""

from __future__ import annotations

import json
import signal
import socket
from pathlib import Path

from serving import ROOT, SAMPLE, digest, referee, replayed_scores, scores, serve, without_token

BANK = ROOT / "sample_videos" / "starcluster" / "out_of_balls_bank"  # red runs out of balls; blue banks
BANK_RULES = json.loads((BANK / "truth.json").read_text())["config"]
BANK_SCORES = json.loads((BANK / "truth.json").read_text())["result"]["final_scores"]


def accepted(answer) -> str:
    assert answer.status_code == 200, answer.text
    assert answer.json()["accepted"] and answer.json()["reason"] is None
    return answer.json()["event_id"]


def refused(answer, because: str) -> None:
    assert answer.status_code == 409, answer.text
    assert not answer.json()["accepted"] and because in answer.json()["reason"], answer.json()["reason"]


def test_a_match_set_up_and_umpired_from_the_console(tmp_path: Path):
    out = tmp_path / "run"
    tables = tmp_path / "tables"  # the club's tables: table 3 is built to the shipped profile
    tables.mkdir()
    (tables / "club_table_3.json").write_bytes((ROOT / "calibration" / "profiles" / "starcluster_default.json")
                                               .read_bytes())
    with serve(out, str(BANK / "video.mp4"), "--game", "starcluster", "--tables", str(tables),
               env=without_token()) as console:
        umpire_line = next(line for line in console.stdout.read_text().splitlines() if "/umpire#token=" in line)
        token = umpire_line.split("#token=")[1]
        assert umpire_line == f"umpire console at {console.url}/umpire#token={token}" and len(token) >= 20

        def post(path, body):
            return console.post(path, body, token=token)

        waiting = console.state()
        assert waiting["phase"] == "waiting_for_setup" and waiting["players"] == [] and waiting["round"] is None
        assert waiting["source"]["status"] == "waiting"
        refused(post("round", {"action": "start"}), "no match is set up")
        assert console.post("round", {"action": "start"}).status_code == 401  # the tests' token is not this one
        players = [{"id": "red", "name": "Ana", "side": "right", "colour": "#aa0000"},
                   {"id": "blue", "name": "Ben", "side": "left"}]
        bad = post("setup", {"players": [{**players[0], "side": "up"}, players[1]]})
        assert bad.status_code == 422 and "players[0].side" in bad.json()["message"]
        bad = post("setup", {"players": players, "rules": {"balls_per_player": -3}})
        assert bad.status_code == 422 and "balls_per_player" in bad.json()["message"]
        assert console.client.get("/api/tables").json() == {"tables": ["starcluster", "club_table_3"]}
        bad = post("setup", {"players": players, "table": "table_9"})
        assert bad.status_code == 422 and bad.json()["message"].startswith("table: must be one of starcluster, club")
        assert not out.exists(), "nothing is written before the match is set up"

        assert accepted(post("setup", {"players": players, "rules": BANK_RULES, "table": "club_table_3",
                                       "by": "Ulla"})) is None
        refused(post("setup", {"players": players}), "set up already")
        state = console.wait_for(lambda s: s["phase"] == "running", "the match set up")
        assert [(p["id"], p["name"], p["colour"]) for p in state["players"]][0] == ("red", "Ana", "#aa0000")
        assert state["players"][1]["colour"] != "#aa0000"

        start = accepted(post("round", {"action": "start", "by": "Ulla"}))
        refused(post("round", {"action": "resume"}), "not paused")
        pause = accepted(post("round", {"action": "pause", "reason": "a ball fell off", "by": "Ulla"}))
        assert console.wait_for(lambda s: s["round"]["paused"], "the clock paused")["round"]["length_s"] == 180.0
        refused(post("round", {"action": "pause"}), "paused already")
        resume = accepted(post("round", {"action": "resume", "by": "Ulla"}))
        console.wait_for(lambda s: not s["round"]["paused"], "the clock running again")

        settled = console.wait_for(lambda s: s["table"]["balls"], "red's first shot settled")
        target, balls = settled["table"]["event"], settled["table"]["balls"]
        refused(post("correction", {"target": start, "balls": []}), "must target a table_settled")
        moved = [{**ball, "position": 2, "slot": 1} for ball in balls]
        correction = accepted(post("correction", {"target": target, "balls": moved, "reason": "misread",
                                                  "by": "Ulla"}))
        assert console.wait_for(lambda s: s["table"]["balls"] == moved, "the table corrected")["table"]["event"] \
            == target
        undo_correction = accepted(post("undo", {"by": "Ulla"}))
        console.wait_for(lambda s: s["table"]["balls"] == balls or s["table"]["event"] != target,
                         "the table as read, the correction undone (or a later settle)")
        refused(post("foul", {"player": "green", "foul": "interference"}), "not a player")
        foul = accepted(post("foul", {"player": "red", "foul": "interference", "reason": "touched", "by": "Ulla"}))
        undo_foul = accepted(post("undo", {"by": "Ulla"}))
        confirm = accepted(post("review", {"target": target, "verdict": "confirm", "by": "Ulla"}))
        refused(post("review", {"target": target, "verdict": "overturn"}), "table_settled")

        asked = console.wait_for(lambda s: s["pending_choice"], "red out of balls: blue's choice")["pending_choice"]
        assert asked["player"] == "blue" and asked["options"] == ["bank", "final_sequence"]
        refused(post("choice", {"player": "red", "choice": "bank"}), "blue's choice")
        choice = accepted(post("choice", {"player": "blue", "choice": "bank", "by": "Ulla"}))
        over = console.wait_for(lambda s: s["complete"], "the match over")
        assert scores(over) == BANK_SCORES, "the umpire's undone inputs left the sample's result"
        listed = over["umpire_inputs"]
        assert [(i["id"], i["type"]) for i in listed] == [
            (start, "round_start"), (pause, "round_pause"), (resume, "round_resume"),
            (correction, "snapshot_correction"), (undo_correction, "overturn"), (foul, "umpire_foul"),
            (undo_foul, "overturn"), (confirm, "confirm"), (choice, "out_of_balls_choice")]
        assert {i["by"] for i in listed} == {"Ulla"}
        assert (listed[4]["target"], listed[6]["target"]) == (correction, foul)

        stop = post("stop", {"reason": "the hall closes", "by": "Ulla"})
        assert stop.status_code == 200 and stop.json()["accepted"], stop.text
        stopped = console.wait_for(lambda s: s["phase"] == "stopped", "the refereeing stopped")
        assert stopped["source"]["status"] == "ended" and "by Ulla" in stopped["source"]["message"]
        before = digest(out)
        refused(post("stop", {}), "ended")
        refused(post("undo", {}), "ended")
        assert digest(out) == before
        final = scores(console.state())

    assert final == BANK_SCORES == replayed_scores(out, tmp_path / "replayed")
    logged = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert logged[0] == {"type": "game_start", "t": 0.0, "by": "Ulla", "players": [
        {"id": "red", "name": "Ana", "side": "right"}, {"id": "blue", "name": "Ben", "side": "left"}]}
    assert {"type": "round_pause", "by": "Ulla", "reason": "a ball fell off"}.items() <= \
        logged[int(pause[1:]) - 1].items()
    manifest = json.loads((out / "manifest.json").read_text())
    # the rules the match was played under, with the slot counts of the table it was played on
    assert manifest["rules_config"] == {**BANK_RULES, "slots_per_position": [7, 5, 3]}
    assert {"session", "config"} <= set(manifest["inputs"])
    assert manifest["inputs"]["profile"]["given"] == str(tables / "club_table_3.json")
    result = json.loads((out / "result.json").read_text())
    assert "the umpire console by Ulla: the hall closes" in result["stopped"]["message"]
    report = referee("report", str(out), "--out", str(tmp_path / "report.html"))
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "report.html").read_text()
    assert "Umpire's inputs (10)" in page  # the setup and the nine inputs listed above, who gave them and why
    assert f"<code>{pause}</code></td><td>round_pause</td><td></td><td>Ulla</td><td>a ball fell off</td>" in page
    assert f"<code>{foul}</code></td><td>umpire_foul</td>" in page and page.count('<span class="flag">undone</span>') == 2


def test_a_tables_folder_with_another_games_table_is_refused_in_one_line(tmp_path: Path):
    (tmp_path / "pb.json").write_bytes((ROOT / "calibration" / "profiles" / "piratenbillard_default.json").read_bytes())
    done = referee("serve", str(BANK / "video.mp4"), "--game", "starcluster", "--out", str(tmp_path / "run"),
                   "--tables", str(tmp_path), "--port", "0")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "pb.json is a piratenbillard table, not starcluster" in done.stderr and not (tmp_path / "run").exists()


def test_another_host_without_a_token_is_refused_in_one_line(tmp_path: Path):
    out = tmp_path / "run"
    done = referee("serve", str(SAMPLE / "video.mp4"), "--game", "starcluster", "--out", str(out),
                   "--host", "0.0.0.0", env=without_token())
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("referee: error: --host 0.0.0.0")
    assert "--token" in done.stderr and done.stdout == "" and not out.exists()


def test_a_feed_that_never_opens_stops_the_referee_and_the_console_exits_2_saying_why(tmp_path: Path):
    """The referee gives the stream up after `stream_reconnect_s`; the pages say so ("stopped", the reason)
    while the server goes on, and once it is stopped `referee serve` exits 2 with the reason in one line."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"pipeline": {"source": {"stream_reconnect_s": 1.0, "stream_open_timeout_s": 0.5}}}))
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    out = tmp_path / "run"
    with serve(out, f"http://127.0.0.1:{port}/table.ts", "--game", "starcluster", "--session",
               str(SAMPLE / "truth.json"), "--config", str(config), "--token", "t") as console:
        stopped = console.wait_for(lambda s: s["phase"] == "stopped", "the referee giving the feed up")
        assert stopped["source"]["status"] == "ended" and "never opened" in stopped["source"]["message"]
        console.process.send_signal(signal.SIGINT)
        assert console.process.wait(timeout=60) == 2
    errors = [line for line in console.errors().splitlines() if line.startswith("referee: error:")]
    assert len(errors) == 1 and "never opened" in errors[0] and "stream_reconnect_s" in errors[0]
