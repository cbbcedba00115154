"""A live stream that drops mid-match and comes back: the console says "lost" while no frame comes (and the
scoreboard shows "camera lost, reconnecting"), "live" once frames come again, and the match state is kept
throughout; the record has the feed gap.

The stream is the Play Line foul sample as MPEG-TS over a loopback HTTP server, paced at its own rate: the
first connection breaks off after the foul, once the test has seen red's shot settle, and the server answers
the referee's reconnects with 503 until the test has seen the console say so, then with the rest of the
match. Each step waits for what the test has seen, never for a time (and serving.PATIENCE keeps a loaded
machine from dropping frames): how slow the machine is changes nothing that is asserted."""

from __future__ import annotations

import http.server
import json
import threading
import time
from pathlib import Path

import pytest
from serving import SAMPLE, TOKEN, replayed_scores, scores, serve

from vision.video_io import VideoWriter, probe, read_frames

CUT_S = 3.5  # after red's shot has settled (2.4 s), before blue shoots (4.7 s)


@pytest.fixture(scope="module")
def feed(tmp_path_factory):
    """The sample cut in two MPEG-TS streams at CUT_S (each starts on a keyframe), and their durations."""
    folder = tmp_path_factory.mktemp("feed")
    info = probe(SAMPLE / "video.mp4")
    parts = [VideoWriter(folder / name, info.width, info.height, info.fps, crf=20) for name in ("head.ts", "tail.ts")]
    for frame in read_frames(SAMPLE / "video.mp4"):
        parts[frame.t > CUT_S].write(frame.image)
    for part in parts:
        part.close()
    return [((folder / name).read_bytes(), seconds) for name, seconds in
            (("head.ts", CUT_S), ("tail.ts", info.duration_s - CUT_S))]


class Dropping(http.server.ThreadingHTTPServer):
    """Serves the head of the stream and, once the test lets it `cut`, breaks off (fewer bytes than it
    announced: a dropped connection); answers 503 until the test lets it come `back`, then serves the tail to
    whoever asks next; each part at the pace of its duration."""

    daemon_threads = True

    def __init__(self, parts: list[tuple[bytes, float]]) -> None:
        super().__init__(("127.0.0.1", 0), Paced)
        self.parts = list(parts)
        self.cut = threading.Event()  # set by the test once it has seen red's shot settle
        self.dropped = threading.Event()  # the head has been served and broken off
        self.back = threading.Event()  # set by the test once it has seen the console say the feed is lost
        self.url = f"http://127.0.0.1:{self.server_address[1]}/table.ts"


class Paced(http.server.BaseHTTPRequestHandler):
    server: Dropping

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if not self.server.parts:
            self.send_error(404)
            return
        head = not self.server.dropped.is_set()
        if not head and not self.server.back.is_set():
            self.send_error(503)  # still down: the referee backs off and tries again
            return
        data, seconds = self.server.parts.pop(0)
        self.send_response(200)
        self.send_header("Content-Type", "video/mp2t")
        self.send_header("Content-Length", str(len(data) + (1 if head else 0)))
        self.end_headers()
        started = time.monotonic()
        try:
            for at in range(0, len(data), 1 << 14):
                time.sleep(max(0.0, at / len(data) * seconds - (time.monotonic() - started)))
                self.wfile.write(data[at:at + (1 << 14)])
        except OSError:
            return
        if head:
            self.server.cut.wait()  # silent meanwhile: the console may already call the feed lost
            self.server.dropped.set()


def test_a_dropped_stream_is_shown_lost_then_live_and_the_match_goes_on(feed, browser, tmp_path: Path):
    from playwright.sync_api import expect

    server = Dropping(feed)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), name="dropping stream", daemon=True)
    thread.start()
    out = tmp_path / "run"
    # the sample's umpire inputs but its round_end: the outage moves the feed's times on by its length, which
    # would bring the end of the round (timed in video time) into the frames after it
    session = tmp_path / "session.jsonl"
    session.write_text("".join(json.dumps(e) + "\n" for e in json.loads((SAMPLE / "truth.json").read_text())["events"]
                               if e["type"] in ("game_start", "round_start")))
    try:
        with serve(out, server.url, "--game", "starcluster", "--session", str(session), "--token", TOKEN) as console:
            scoreboard = browser.open(f"{console.url}/")
            before = console.wait_for(lambda s: s["table"]["balls"], "red's first shot settled")
            server.cut.set()  # only now does the stream break off: the shot was seen before the feed went
            lost = console.wait_for(lambda s: s["source"]["status"] == "lost", "the feed shown lost")
            settles = [n for n, line in enumerate((out / "events.jsonl").read_text().splitlines(), 1)
                       if '"type":"table_settled"' in line]
            expect(scoreboard.get_by_test_id("camera-lost")).to_be_visible(timeout=60_000)  # the page says so
            server.back.set()  # the feed comes back only now: however slow the machine, "lost" was there to see
            assert "no frame" in lost["source"]["message"] and lost["phase"] == "running"
            back = console.wait_for(lambda s: s["source"]["status"] == "live" and s["t"] > lost["t"],
                                    "the feed back")
            expect(scoreboard.get_by_test_id("camera-lost")).to_be_hidden(timeout=60_000)
            assert lost["table"]["event"] == f"L{settles[-1]}"  # the table as last read before the feed went
            assert lost["calls"][:len(before["calls"])] == before["calls"]
            # the match is kept meanwhile: nothing was played in the gap, so the feed comes back to the same match
            assert (scores(back), back["to_play"], back["table"]["balls"]) == \
                (scores(lost), lost["to_play"], lost["table"]["balls"])
            assert back["calls"][:len(lost["calls"])] == lost["calls"]
            done = console.wait_for(lambda s: s["phase"] == "finished", "the end of the match")
    finally:
        server.cut.set()
        server.back.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    assert scores(done) == replayed_scores(out, tmp_path / "replayed")
    warnings = [json.loads(line) for line in (out / "decisions.jsonl").read_text().splitlines()
                if '"gap":' in line]
    assert len(warnings) == 1 and warnings[0]["gap"][1] - warnings[0]["gap"][0] >= 1.0
