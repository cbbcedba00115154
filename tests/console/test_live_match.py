"""One live match through the console: `referee serve` plays the Play Line foul sample at its own rate with its
session, and a client reads the state and the event stream, the table, the pages and the video, is refused
what it may not do, and overturns the foul, after which the console's score is `referee replay`'s.

The tests share the match (it runs once, 13 s of video), in file order: those that need a moment of it wait
for that moment in the state."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from serving import SAMPLE, TOKEN, Console, digest, replayed_scores, scores, serve, truth_scores

MARKER = "written-nowhere-4xx"  # the reason of every input that must be refused before the referee sees it
FOUL = "Play Line crossed"


@pytest.fixture(scope="module")
def match(tmp_path_factory):
    out = tmp_path_factory.mktemp("live") / "run"
    with serve(out, str(SAMPLE / "video.mp4"), "--game", "starcluster", "--session", str(SAMPLE / "truth.json"),
               "--token", TOKEN) as console:
        yield console


def foul_call(state):
    return next((call for call in state["calls"] if call["kind"] == "foul" and FOUL in call["summary"]), None)


def test_the_state_and_its_stream_reach_a_client(match: Console):
    state = match.state()
    assert state["game"] == "starcluster" and state["phase"] == "running" and state["source"]["live"]
    assert [(p["id"], p["name"], p["side"]) for p in state["players"]] == [("red", "Ana", "right"),
                                                                           ("blue", "Ben", "left")]
    assert all(p["colour"].startswith("#") and len(p["colour"]) == 7 for p in state["players"])
    seen = []
    with match.client.stream("GET", "/api/stream") as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        message: dict[str, str] = {}
        for line in stream.iter_lines():
            if line:
                key, _, value = line.partition(": ")
                message[key] = value
                continue
            if message.get("event") == "state":
                data = json.loads(message["data"])
                assert int(message["id"]) == data["version"]
                seen.append(data)
                if foul_call(data):
                    break
            message = {}
    versions = [s["version"] for s in seen]
    assert versions == sorted(set(versions)), "each message a newer version"
    foul = foul_call(seen[-1])
    assert foul["rule"] == "SCB-3.5" and foul["player"] == "red" and foul["cause"].startswith("L")
    assert seen[-1]["source"]["status"] == "live" and seen[-1]["round"]["number"] == 1
    assert seen[-1]["round"]["counts_down"] and seen[-1]["round"]["length_s"] == 180.0


def test_the_table_pages_video_and_api_docs_are_served(match: Console):
    table = match.client.get("/api/table").json()
    assert table["game"] == "starcluster" and table["play_line_mm"] == [[50.0, 200.0], [590.0, 200.0]]
    assert {"key": "P1/3", "place": "slot", "position": 1, "slot": 3}.items() <= table["places"][3].items()
    for path in ("/", "/umpire"):
        page = match.client.get(path)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert match.client.get("/static/console.css").headers["content-type"].startswith("text/css")
    assert "/api/umpire/review" in match.client.get("/openapi.json").json()["paths"]
    assert match.client.get("/docs").status_code == 200
    match.wait_for(lambda s: s["frames"] > 0, "a refereed frame")
    picture = match.client.get("/api/video.jpg")
    assert picture.status_code == 200 and picture.headers["content-type"] == "image/jpeg"
    assert picture.content[:2] == b"\xff\xd8"
    with match.client.stream("GET", "/api/video.mjpg") as video:
        assert video.headers["content-type"] == "multipart/x-mixed-replace; boundary=frame"
        received = b""
        for chunk in video.iter_bytes():
            received += chunk
            if received.count(b"--frame\r\n") >= 2:
                break
    assert b"Content-Type: image/jpeg" in received and b"\xff\xd8" in received


def refusals(console: Console) -> list[tuple[httpx.Response, int, str]]:
    """Umpire posts refused before the referee sees them: (answer, status expected, what it must name)."""
    fine = {"action": "start", "reason": MARKER}
    client = console.client
    return [
        (console.post("round", fine, token=None), 401, "token"),
        (console.post("round", fine, token="not-the-token"), 401, "token"),
        (console.post("round", fine, Origin="http://elsewhere.example"), 403, "origin"),
        (client.post("/api/umpire/round", content=f"action=start&reason={MARKER}",  # a cross-site form post
                     headers={"Content-Type": "application/x-www-form-urlencoded",
                              "Origin": "http://elsewhere.example"}), 403, "origin"),
        (client.post("/api/umpire/round", content=json.dumps(fine),
                     headers={"Content-Type": "text/plain", "Authorization": f"Bearer {TOKEN}"}), 415, "JSON"),
        (console.post("round", {"action": "jump", "reason": MARKER}), 422, "action"),
        (console.post("round", {"action": "start", "reason": MARKER, "when": 3}), 422, "when"),
        (console.post("foul", {"player": "red", "foul": "kicking", "reason": MARKER}), 422, "foul"),
        (console.post("foul", {"player": "red", "foul": "interference", "free_shot": "yes", "reason": MARKER}),
         422, "free_shot"),
        (console.post("review", {"target": "L5", "verdict": "maybe", "reason": MARKER}), 422, "verdict"),
        (console.post("choice", {"player": "red", "choice": "double", "by": MARKER}), 422, "choice"),
        (console.post("correction", {"target": "L6", "reason": MARKER,
                                     "balls": [{"owner": "red", "place": "slot", "position": 1}]}), 422, "balls[0]"),
        (console.post("setup", {"players": [{"id": "red", "side": "up"}], "by": MARKER}), 422, "players[0].side"),
        (console.post("undo", {"by": 7}), 422, "by"),
        (client.post("/api/umpire/round", content=b"{not json", headers={"Content-Type": "application/json",
                                                                          "Authorization": f"Bearer {TOKEN}"}),
         422, "body"),
    ]


def test_umpire_posts_need_the_token_json_and_this_servers_pages(match: Console):
    for answer, status, named in refusals(match):
        assert answer.status_code == status, (answer.request.url, answer.text)
        said = answer.json().get("message") or answer.json()["detail"]
        assert named.lower() in str(said).lower(), said
    assert match.state()["umpire_inputs"] == []


def test_no_path_outside_the_pages_and_four_run_files_is_served(match: Console):
    parts = urlsplit(match.url)
    forbidden = ["/static/../pyproject.toml", "/static/%2e%2e/pyproject.toml", "/static/..%2fpyproject.toml",
                 "/static/%2e%2e%2fpyproject.toml", "/static/%2e%2e%2f%2e%2e%2fpyproject.toml", "/../pyproject.toml",
                 "/run/../../pyproject.toml", "/run/..%2f..%2fpyproject.toml", "/run/manifest.json",
                 "/run/inputs%2fsession.json", "/run/../run/manifest.json", "/static/", "/static/__init__.py"]
    for path in forbidden:
        with socket.create_connection((parts.hostname, parts.port), timeout=30) as raw:  # the path as written
            raw.sendall(f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\n\r\n".encode())
            answer = b""
            while chunk := raw.recv(65536):
                answer += chunk
        status = int(answer.split(b" ", 2)[1])
        assert status in (400, 404), (path, answer[:200])
        assert b"[build-system]" not in answer and b"source_sha256" not in answer, path
    events = match.client.get("/run/events.jsonl")
    assert events.status_code == 200 and events.content == (match.out / "events.jsonl").read_bytes()[
        :len(events.content)]


def test_overturning_the_play_line_foul_changes_the_score_and_replay_agrees(match: Console, tmp_path: Path):
    foul = foul_call(match.wait_for(foul_call, "the Play Line foul"))
    overturn = match.post("review", {"target": foul["cause"], "verdict": "overturn", "reason": "the head was over "
                                     "the table, not across the line", "by": "Ulla"})
    assert overturn.status_code == 200, overturn.text
    answer = overturn.json()
    assert answer["accepted"] and answer["event_id"].startswith("L") and answer["reason"] is None
    again = match.post("review", {"target": foul["cause"], "verdict": "overturn", "by": "Ulla"})
    assert again.status_code == 409 and not again.json()["accepted"] and "overturned already" in again.json()["reason"]
    for path, body in (("choice", {"player": "red", "choice": "bank"}),  # no choice is asked
                       ("review", {"target": "L999", "verdict": "confirm"})):  # no such event
        refused = match.post(path, body)
        assert refused.status_code == 409 and refused.json()["reason"], refused.text
    done = match.wait_for(lambda s: s["phase"] == "finished", "the end of the match")
    assert done["source"]["status"] == "ended" and done["complete"]
    assert scores(done) != truth_scores(), "the foul was the sample's only call against red"
    assert scores(done) == replayed_scores(match.out, tmp_path / "replayed")
    inputs = done["umpire_inputs"]
    assert [(i["id"], i["type"], i["by"], i["target"]) for i in inputs] == \
        [(answer["event_id"], "overturn", "Ulla", foul["cause"])]
    logged = [json.loads(line) for line in (match.out / "events.jsonl").read_text().splitlines()]
    assert {"type": "overturn", "target": foul["cause"], "by": "Ulla"}.items() <= logged[
        int(answer["event_id"][1:]) - 1].items()
    assert done["history"][-1]["scores"] == scores(done)


def test_once_the_match_is_over_inputs_are_refused_and_nothing_is_written(match: Console):
    match.wait_for(lambda s: s["phase"] == "finished", "the end of the match")
    before = digest(match.out)
    for answer, status, _ in refusals(match):
        assert answer.status_code == status
    late = match.post("round", {"action": "start"})
    assert late.status_code == 409 and "ended" in late.json()["reason"]
    assert digest(match.out) == before
    for name in before:
        assert MARKER.encode() not in (match.out / name).read_bytes(), name
