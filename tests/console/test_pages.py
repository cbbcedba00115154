"""The console's pages in a real headless Chromium against a real server.

`console_server` (conftest.py) serves `referee serve` on starcluster/play_line_foul played at its own rate with its
session (truth: blue 10, red 9; red's first shot is void because red's head crossed the Play Line, seen by
pose). Each test gets its own server, started at the beginning of the video: the overturn must reach the
referee before the video ends. Tests ask for `browser` before `console_server`, so Chromium is running before
the video starts. Every wait is for a condition, with a generous limit; nothing is timed.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest

WAIT_S = 90.0  # the longest any condition is waited for: the whole sample is 13 s of video
WAIT_MS = WAIT_S * 1000
REASON = "the head stayed behind the line"


def api_state(server: Any) -> dict:
    with urllib.request.urlopen(f"{server.url}/api/state", timeout=10) as answer:
        return json.loads(answer.read())


def api_scores(state: dict) -> dict[str, int]:
    return {p["id"]: p["score"] for p in state["players"]}


def events(server: Any) -> list[dict]:
    """The run's log; an event without an "id" is known by its line, "L<n>" (rules/events.py)."""
    path = server.run_dir / "events.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [{"id": f"L{n}"} | json.loads(line) for n, line in enumerate(lines, 1)]


def shown_scores(page: Any, players: list[str]) -> dict[str, int | None]:
    cells = {player: page.get_by_test_id(f"score-{player}") for player in players}
    return {player: int(cell.inner_text()) if cell.count() else None for player, cell in cells.items()}


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"still waiting after {WAIT_S:.0f} s for {what}")
        time.sleep(0.2)


def test_the_umpire_overturns_the_play_line_foul_and_the_scoreboard_follows(browser, console_server):
    from playwright.sync_api import expect

    # The pages open once the crossing (1.9 s into the video) is in the log. The file is refereed frame by
    # frame (pose's verdicts joined by time), so the crossing is seen however loaded the machine; through the
    # live path (--live), a browser opening two pages at that moment starved pose on 2 cores, and it missed it.
    crossings = lambda: [e["id"] for e in events(console_server) if e["type"] == "play_line_crossing"]  # noqa: E731
    wait_until(lambda: crossings() or api_state(console_server)["phase"] != "running", "the Play Line crossing")
    assert crossings(), "the run ended without the crossing: pose never saw red's head over the Play Line live"
    [crossing] = crossings()
    scoreboard = browser.open(f"{console_server.url}/")
    umpire = browser.umpire(console_server, console_server.token, "Pat Umpire")

    foul = umpire.locator(f'[data-testid="calls"] [data-testid="call"][data-kind="foul"][data-cause="{crossing}"]')
    foul.wait_for(timeout=WAIT_MS)
    before = api_scores(api_state(console_server))
    wait_until(lambda: shown_scores(scoreboard, list(before)) == before, f"the scoreboard to show {before}")
    flagged = umpire.locator(f'[data-testid="review-item"][data-cause="{crossing}"]')
    if flagged.count():  # a doubtful crossing is also on the review list: overturn it there
        flagged.get_by_test_id("review-reason").fill(REASON)
        flagged.get_by_test_id("overturn").click()
    else:
        umpire.get_by_test_id("calls-reason").fill(REASON)
        foul.get_by_test_id("overturn").click()
    expect(umpire.get_by_test_id("umpire-message")).to_contain_text("accepted", timeout=WAIT_MS)

    def scoreboard_shows_red_scored() -> bool:
        scores = api_scores(api_state(console_server))
        return scores["red"] > before["red"] and shown_scores(scoreboard, list(scores)) == scores

    wait_until(scoreboard_shows_red_scored, "the scoreboard to show red's shot standing, as /api/state does")
    [overturn] = [e for e in events(console_server) if e["type"] == "overturn"]
    assert (overturn["target"], overturn["by"], overturn["reason"]) == (crossing, "Pat Umpire", REASON)
    # and red wins 11 to 10, as `referee correct --overturn` makes it (tests/review/test_corrections.py)
    wait_until(lambda: api_state(console_server)["complete"], "the end of the match")
    final = api_scores(api_state(console_server))
    assert final == {"red": 11, "blue": 10}
    wait_until(lambda: shown_scores(scoreboard, list(final)) == final, f"the scoreboard to show {final}")
    assert shown_scores(umpire, list(final)) == final
    expect(scoreboard.get_by_test_id("final-result")).to_contain_text("Ana")  # red's player
    assert browser.errors == []


def test_a_wrong_token_is_refused_and_nothing_is_written(browser, console_server):
    from playwright.sync_api import expect

    umpire = browser.umpire(console_server, "not-the-token", "Wrong Token")
    wait_until(lambda: api_state(console_server)["round"]["number"] == 1, "round 1 to begin")
    before = (console_server.run_dir / "events.jsonl").read_text()

    umpire.get_by_test_id("round-pause").click()
    message = umpire.get_by_test_id("umpire-message")
    expect(message).to_contain_text("401 wrong token", timeout=WAIT_MS)
    expect(message).to_have_attribute("data-outcome", "error")

    # the referee goes on writing its own observations; the refused input never reaches the log
    wait_until(lambda: api_state(console_server)["phase"] != "running", "the end of the run")
    assert (console_server.run_dir / "events.jsonl").read_text().startswith(before)
    assert not [e for e in events(console_server) if e["type"] == "round_pause" or e.get("by") == "Wrong Token"]
    assert not api_state(console_server)["round"]["paused"]
    assert browser.errors == []


def test_scoreboard_and_umpire_console_side_by_side_show_the_scores_of_the_api(browser, console_server):
    requested: list[str] = []
    browser.context.on("request", lambda request: requested.append(request.url))
    scoreboard = browser.open(f"{console_server.url}/")
    umpire = browser.umpire(console_server, console_server.token, "Pat Umpire")

    def both_show_the_api() -> bool:
        state = api_state(console_server)
        scores = api_scores(state)
        return sum(scores.values()) > 0 and all(
            shown_scores(page, list(scores)) == scores
            and page.get_by_test_id("status-line").inner_text() == state["status_line"]
            and page.get_by_test_id("review-count").inner_text() == str(len(state["review"]))
            for page in (scoreboard, umpire))

    wait_until(both_show_the_api, "both pages to show the first points, status and review count of /api/state")
    last_call = api_state(console_server)["last_call"]
    assert scoreboard.get_by_test_id("last-call").get_by_test_id("call-rule").inner_text() == last_call["rule"]
    assert umpire.url == f"{console_server.url}/umpire"  # the token is taken out of the address bar...
    assert not [url for url in requested if console_server.token in url]  # ...and never sent in a URL
    assert browser.errors == []


def test_the_camera_lost_overlay_is_hidden_while_the_feed_is_live(browser, console_server):
    from playwright.sync_api import expect

    scoreboard = browser.open(f"{console_server.url}/")
    wait_until(lambda: api_state(console_server)["source"]["status"] == "live", "the live feed")
    expect(scoreboard.get_by_test_id("connection")).to_have_attribute("data-state", "live", timeout=WAIT_MS)
    expect(scoreboard.get_by_test_id("camera-lost")).to_be_hidden()
    scoreboard.wait_for_function("document.querySelector('[data-testid=video]').naturalWidth > 0", timeout=WAIT_MS)
    assert browser.errors == []


def test_the_umpire_sets_the_match_up_in_the_console_on_a_table_of_the_club(browser, tmp_path):
    """Started without --session or --players: the umpire console's set-up form, with a table chosen from
    --tables, names and a rules option, starts the match; the scoreboard then shows the players."""
    from playwright.sync_api import expect
    from serving import ROOT, serve

    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "club_table_3.json").write_bytes((ROOT / "calibration/profiles/starcluster_default.json").read_bytes())
    bank = ROOT / "sample_videos" / "starcluster" / "out_of_balls_bank"
    with serve(tmp_path / "run", str(bank / "video.mp4"), "--game", "starcluster", "--tables", str(tables),
               "--token", "set-up-token") as console:
        umpire = browser.umpire(console, "set-up-token", "Ulla")
        expect(umpire.get_by_test_id("setup-table").locator("option")).to_have_count(2, timeout=WAIT_MS)
        umpire.get_by_test_id("setup-table").select_option("club_table_3")
        rows = umpire.get_by_test_id("setup-player")
        for row, name in zip((rows.nth(0), rows.nth(1)), ("Ana", "Ben")):
            row.locator('[name="name"]').fill(name)
        umpire.locator('#setup-rules input[name="balls_per_player"]').fill("10")
        umpire.get_by_test_id("setup-submit").click()
        expect(umpire.get_by_test_id("umpire-message")).to_contain_text("accepted", timeout=WAIT_MS)
        scoreboard = browser.open(f"{console.url}/")
        expect(scoreboard.get_by_test_id("player-red")).to_contain_text("Ana", timeout=WAIT_MS)
        expect(scoreboard.get_by_test_id("player-blue")).to_contain_text("Ben", timeout=WAIT_MS)
        state = console.state()
        assert state["phase"] == "running" and [p["name"] for p in state["players"]] == ["Ana", "Ben"]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["inputs"]["profile"]["given"] == str(tables / "club_table_3.json")
    assert manifest["rules_config"]["balls_per_player"] == 10
    assert browser.errors == []


def test_the_umpire_corrects_the_settled_table_by_clicking_a_slot(browser, console_server):
    """The umpire console's diagram: a click on an empty slot puts the first player's ball there, the
    correction is sent for the settle shown, logged as a snapshot_correction by the umpire, and called."""
    from playwright.sync_api import expect

    umpire = browser.umpire(console_server, console_server.token, "Pat Umpire")
    wait_until(lambda: api_state(console_server)["table"]["balls"], "the first settled table")
    diagram = umpire.get_by_test_id("table-diagram")
    expect(diagram.get_by_test_id("ball").first).to_be_visible(timeout=WAIT_MS)
    # found and clicked in one step of the page's script, so no state pushed meanwhile can fill the slot first
    key = umpire.evaluate("""() => {
        const empty = [...document.querySelectorAll('[data-testid=table-diagram] [data-testid=place]')]
            .find((place) => place.dataset.key.startsWith('P') && !place.querySelector('[data-testid=ball]'));
        empty.dispatchEvent(new MouseEvent('click', {bubbles: true}));
        return empty.dataset.key;
    }""")
    expect(diagram.locator(f'[data-testid="place"][data-key="{key}"] [data-testid="ball"]')).to_have_attribute(
        "data-owner", "red")  # empty -> the first player (red) -> blue -> empty
    umpire.get_by_test_id("correction-reason").fill("the ball stopped there")
    umpire.get_by_test_id("correction-submit").click()
    expect(umpire.get_by_test_id("umpire-message")).to_contain_text("accepted", timeout=WAIT_MS)

    [logged] = [e for e in events(console_server) if e["type"] == "snapshot_correction"]
    target = logged["target"]  # the settle shown when the click began the correction
    assert target in [e["id"] for e in events(console_server) if e["type"] == "table_settled"]
    position, slot = (int(n) for n in key.removeprefix("P").split("/"))
    assert (logged["by"], logged["reason"]) == ("Pat Umpire", "the ball stopped there")
    assert {"owner": "red", "at": {"place": "slot", "position": position, "slot": slot}} in logged["balls"]
    # the state is published beside the referee's loop, so the call may come a moment after the log line
    wait_until(lambda: any(c["summary"].startswith(f"umpire by Pat Umpire corrected the snapshot of {target}")
                           for c in api_state(console_server)["calls"]), "the correction called")
    assert browser.errors == []
