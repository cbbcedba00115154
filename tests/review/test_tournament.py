"""The tournament page: a day's matches, standings per game and each player's figures, read in headless Chromium.

The day is made of real run folders: the session's `sc_run` and `pb_run` (the real pipeline) and `truth_run`
replays of committed samples, one of them corrected by the umpire, plus three matches that failed in different
ways. Every expected figure is worked out here from the run folders' own files, never written down.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from referee.cli import main
from review.tournament import MatchEntry, TournamentSummary, build_tournament_page
from rules.starcluster import StarClusterConfig
from runs import CHROMIUM, SAMPLES, Seen, browse, truth_run

SCRIPT_ERROR = '<script>window.pwned = 1</script> & "quoted"\n  worker died'
SHOWN_ERROR = '<script>window.pwned = 1</script> & "quoted" worker died'  # on one line
TITLE = "Club day <3>"
POINT_KINDS = ("score", "capture")
# What the page holds, read from its DOM once the day's reel has its metadata.
READ_PAGE = """() => {
  const num = el => el ? Number(el.textContent) : null;
  const stats = (row, attr) => Object.fromEntries([...row.querySelectorAll(`[${attr}]`)]
      .map(td => [td.getAttribute(attr), td.textContent]));
  const video = document.querySelector('video');
  return {
    title: document.title,
    scripts: document.scripts.length,
    pwned: window.pwned === undefined ? null : window.pwned,
    text: document.body.innerText,
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    video: video ? {src: video.currentSrc, duration: video.duration} : null,
    matches: [...document.querySelectorAll('table.matches tr.match')].map(r => ({
      id: r.dataset.match, failed: r.classList.contains('failed'), result: r.querySelector('.result').textContent,
      scores: Object.fromEntries([...r.querySelectorAll('b.score')].map(b => [b.dataset.player, num(b)])),
      report: r.querySelector('td.report').textContent, reel: r.querySelector('td.reel').textContent})),
    games: Object.fromEntries([...document.querySelectorAll('section.game')].map(s => [s.dataset.game, {
      standings: [...s.querySelectorAll('table.standings tbody tr')].map(r => ({player: r.dataset.player,
          ...stats(r, 'data-stat')})),
      figures: [...s.querySelectorAll('table.figures tbody tr')].map(r => ({player: r.dataset.player,
          stats: stats(r, 'data-stat'), outcomes: stats(r, 'data-outcome'), fouls: stats(r, 'data-foul')})),
      heat: [...s.querySelectorAll('figure.heat')].map(f => ({player: f.dataset.player,
          shots: Number(f.dataset.shots), placed: Number(f.dataset.placed), unplaced: Number(f.dataset.unplaced),
          cells: [...f.querySelectorAll('td.cell')].map(td => ({
            position: Number(td.dataset.position), slot: Number(td.dataset.slot), count: Number(td.dataset.count),
            background: getComputedStyle(td).backgroundColor}))})),
      legend: !!s.querySelector('.legend .bar')}]))};
}"""


@dataclass(frozen=True)
class Day:
    root: Path
    page: Path
    entries: tuple[MatchEntry, ...]
    summary: TournamentSummary


def copy_run(source: Path, to: Path) -> Path:
    shutil.copytree(source, to, ignore=shutil.ignore_patterns("tracks.jsonl", "annotated.mp4", "run.lock"))
    return to


@pytest.fixture(scope="module")
def day(tmp_path_factory, sc_run, pb_run) -> Day:
    root = tmp_path_factory.mktemp("tournament") / "day"
    matches = root / "matches"

    def entry(match_id: str, game: str, run_dir: Path, report: bool = True, reel: Path | None = None) -> MatchEntry:
        page = matches / match_id / "report.html"
        if report:
            page.write_text("<!DOCTYPE html><title>report</title>")
        if reel is not None:
            (run_dir / "highlights").mkdir()
            reel = Path(shutil.copy(reel, run_dir / "highlights" / "reel.mp4"))
        return MatchEntry(match_id, game, run_dir, page, reel, None)

    def run(match_id: str, sample: str) -> Path:
        return truth_run(sample, matches / match_id / "run")

    shove = run("sc-shove", "starcluster/table_shove")
    assert main(["correct", str(shove), "--overturn", "L6", "--by", "Ana", "--reason", "accidental bump"]) == 0
    fixed = run("sc-fixed", "starcluster/chain_grand_slam")  # shot 2 (settled in L6) now fills two red slots
    assert main(["correct", str(fixed), "--snapshot", "L6", "red@none=slot:2/0", "--by", "Ben",
                 "--reason", "a red ball the camera missed"]) == 0
    unfinished = run("sc-unfinished", "starcluster/grouping")
    (unfinished / "result.json").unlink()
    garbled = run("pb-garbled", "piratenbillard/stacked_pair")
    (garbled / "result.json").write_text("{not json")
    entries = (
        entry("sc-real", "starcluster", copy_run(sc_run, matches / "sc-real" / "run")),
        entry("sc-shove", "starcluster", shove),
        entry("sc-fixed", "starcluster", fixed),
        entry("sc-final", "starcluster", run("sc-final", "starcluster/out_of_balls_final_sequence")),
        entry("sc-line", "starcluster", run("sc-line", "starcluster/play_line_foul"),
              reel=SAMPLES / "starcluster" / "play_line_foul" / "video.mp4"),
        entry("sc-knock", "starcluster", run("sc-knock", "starcluster/knock_into_slot")),
        entry("sc-gutter", "starcluster", run("sc-gutter", "starcluster/gutter_ball"), report=False),
        entry("pb-real", "piratenbillard", copy_run(pb_run, matches / "pb-real" / "run"),
              reel=pb_run / "annotated.mp4"),
        entry("pb-full", "piratenbillard", run("pb-full", "piratenbillard/full_game")),
        entry("pb-secure", "piratenbillard", run("pb-secure", "piratenbillard/secure")),
        MatchEntry("sc-crashed", "starcluster", None, None, None, SCRIPT_ERROR),
        entry("sc-unfinished", "starcluster", unfinished, report=False),
        entry("pb-garbled", "piratenbillard", garbled, report=False),
    )
    reel = Path(shutil.copy(SAMPLES / "piratenbillard" / "capture" / "video.mp4", root / "reel.mp4"))
    summary = build_tournament_page(entries, root / "tournament.html", title=TITLE, day_reel=reel)
    return Day(root, root / "tournament.html", entries, summary)


@pytest.fixture(scope="module")
def seen(day) -> Seen:
    assert Path(CHROMIUM).exists(), "the browser test needs Chromium: run `make browser`"
    [page] = browse([day.page], READ_PAGE, wait_for="document.querySelector('video').readyState >= 1")
    return page


FAILED = ("sc-crashed", "sc-unfinished", "pb-garbled")


def results(day: Day) -> dict[str, dict[str, Any]]:
    """Each readable match's result as the umpire left it: result.corrected.json if there is one."""
    out = {}
    for entry in day.entries:
        if entry.match_id in FAILED:
            continue
        corrected = entry.run_dir / "result.corrected.json"
        out[entry.match_id] = json.loads((corrected if corrected.exists() else entry.run_dir / "result.json")
                                         .read_text())
    return out


def of_game(day: Day, game: str) -> dict[str, dict[str, Any]]:
    return {match_id: result for match_id, result in results(day).items() if result["game"] == game}


def test_page_lists_every_match_escapes_errors_and_fetches_nothing(day, seen):
    assert seen.errors == ()
    assert all(url.startswith("file://") for url in seen.requests), seen.requests  # no CDN, no server
    assert all(Path(unquote(urlparse(url).path)).is_file() for url in seen.requests)
    assert seen.dom["title"] == TITLE
    rows = seen.dom["matches"]
    assert [r["id"] for r in rows] == [e.match_id for e in day.entries]  # every match, failed ones too
    assert [r["id"] for r in rows if r["failed"]] == list(FAILED)
    failed = {r["id"]: r["result"] for r in rows}
    assert SHOWN_ERROR in failed["sc-crashed"]  # shown as text, on one line: never run
    assert seen.dom["scripts"] == 0 and seen.dom["pwned"] is None
    assert "result.json does not exist" in failed["sc-unfinished"]
    assert "cannot be read as JSON" in failed["pb-garbled"]
    for match_id, result in results(day).items():
        row = next(r for r in rows if r["id"] == match_id)
        assert row["scores"] == result["final_scores"]
        names = {p["id"]: p.get("name") or p["id"] for p in result["players"]}
        winners = [names[w] for w in result["winners"]]
        if not result["complete"]:
            assert "not complete" in row["result"] and result["status"] in row["result"]
        elif len(winners) == 1:
            assert f"{winners[0]} wins" in row["result"]
        else:
            assert "draw" in row["result"] and all(w in row["result"] for w in winners)
        corrections = next(e.run_dir for e in day.entries if e.match_id == match_id) / "corrections.jsonl"
        assert ("umpire correction" in row["result"]) == corrections.exists()
    assert sum("after 1 umpire correction(s)" in r["result"] for r in rows) == 2  # sc-shove, sc-fixed
    assert day.summary.matches == len(day.entries) and day.summary.failed == len(FAILED)
    assert day.summary.players == len({p["id"] for r in results(day).values() for p in r["players"]})
    assert day.summary.size_bytes == day.page.stat().st_size
    assert seen.dom["video"]["src"] == (day.root / "reel.mp4").as_uri() and seen.dom["video"]["duration"] > 0


def test_links_resolve_next_to_the_page_and_move_with_its_folder(day, seen, tmp_path):
    assert seen.dom["links"] and all(Path(unquote(urlparse(u).path)).is_file() for u in seen.dom["links"])
    rows = {r["id"]: r for r in seen.dom["matches"]}
    assert rows["sc-line"]["reel"] == "reel" and rows["sc-knock"]["reel"] == "-"
    assert rows["sc-gutter"]["report"] == "missing"  # named, not written: no dead link
    moved = tmp_path / "zipped and unpacked"
    shutil.copytree(day.root, moved)
    page = moved / day.page.name
    targets = [html.unescape(t) for t in re.findall(r'(?:href|src)="([^"]*)"', page.read_text())]
    expected = sum(1 for e in day.entries if e.report and e.report.is_file()) \
        + sum(1 for e in day.entries if e.reel) + 2  # the day's reel: the video and its link
    assert len(targets) == expected
    for target in targets:
        assert not re.match(r"^([a-z]+:|/)", target), target  # relative, no scheme
        resolved = (page.parent / unquote(target)).resolve()
        assert resolved.is_file() and resolved.is_relative_to(moved.resolve()), target


def test_standings_per_game_add_up_the_finished_results(day, seen):
    for game in ("starcluster", "piratenbillard"):
        expected: dict[str, Counter] = {}
        for result in of_game(day, game).values():
            if not result["complete"]:
                continue
            scores, winners = result["final_scores"], result["winners"]
            for player in (p["id"] for p in result["players"]):
                row = expected.setdefault(player, Counter())
                row["played"] += 1
                row["won" if winners == [player] else "drawn" if player in winners or not winners else "lost"] += 1
                row["for"] += scores[player]
                row["against"] += sum(points for other, points in scores.items() if other != player)
        shown = seen.dom["games"][game]["standings"]
        assert shown and {r["player"]: {k: int(v) for k, v in r.items() if k not in ("player", "difference")}
                          for r in shown} == {p: {k: row[k] for k in ("played", "won", "drawn", "lost", "for",
                                                                      "against")} for p, row in expected.items()}
        order = [(-int(r["won"]), -int(r["difference"])) for r in shown]
        assert order == sorted(order)
        if game == "starcluster":  # red leads: the ranking is not the order of the ids
            assert [r["player"] for r in shown] != sorted(r["player"] for r in shown)
        assert all(int(r["difference"]) == int(r["for"]) - int(r["against"]) for r in shown)
    # the two games are counted apart: each has its own finished matches
    played = {g: max(int(r["played"]) for r in seen.dom["games"][g]["standings"]) for g in seen.dom["games"]}
    assert played == {g: sum(r["complete"] for r in of_game(day, g).values()) for g in played}
    unfinished = sum(not r["complete"] for r in of_game(day, "piratenbillard").values())
    assert unfinished >= 2 and f"{unfinished} matches not complete are left out" in seen.dom["text"]


def test_points_per_shot_outcomes_and_fouls_come_from_each_shots_calls(day, seen):
    for game in ("starcluster", "piratenbillard"):
        expected: dict[str, Counter] = {}
        for result in of_game(day, game).values():
            shots = [d for d in result["decisions"] if d["kind"] == "shot"]
            made_with = {(d["t"], d.get("cause"), d["player"]) for d in shots}
            for d in result["decisions"]:
                row = expected.setdefault(d.get("player") or "?", Counter())
                row["shots"] += d["kind"] == "shot"
                row["fouls"] += d["kind"] == "foul"
                if d["kind"] in POINT_KINDS and (d["t"], d.get("cause"), d.get("player")) in made_with:
                    row["points"] += d["points"]
        shown = {f["player"]: f for f in seen.dom["games"][game]["figures"]}
        for player, f in shown.items():
            row = expected[player]
            assert int(f["stats"]["shots"]) == row["shots"] > 0
            assert int(f["stats"]["points"]) == row["points"]
            assert f["stats"]["per-shot"] == f"{row['points'] / row['shots']:.2f}"
            assert sum(int(n) for n in f["outcomes"].values()) == row["shots"]
            assert sum(int(n) for n in f["fouls"].values()) == row["fouls"]
    starcluster = {f["player"]: f for f in seen.dom["games"]["starcluster"]["figures"]}
    assert starcluster["red"]["fouls"]["void shot (play line crossing)"] == "1"  # sc-line's Play Line foul
    pirates = seen.dom["games"]["piratenbillard"]["figures"]
    assert all({"captured", "secured"} <= set(f["outcomes"]) for f in pirates)


def landings(run_dir: Path, result: dict[str, Any]) -> tuple[Counter, Counter, Counter]:
    """Per player: the slots their shots' balls came to rest in (shots newly filling exactly one of their slots,
    from events.jsonl and the umpire's snapshot corrections, read line by line here), their shots, and their shots
    that newly filled more than one of their slots."""
    corrections = run_dir / "corrections.jsonl"
    fixed = {c["target"]: c["balls"] for c in map(json.loads, corrections.read_text().splitlines())
             if c["type"] == "snapshot_correction"} if corrections.exists() else {}
    table: set[tuple[str, int, int]] = set()
    new: dict[str, set[tuple[str, int, int]]] = {}
    for number, line in enumerate((run_dir / "events.jsonl").read_text().split("\n"), start=1):
        if not line.strip():
            continue
        event = json.loads(line)
        if event["type"] == "table_settled":
            event_id = event.get("id", f"L{number}")
            now = {(b["owner"], b["at"]["position"], b["at"]["slot"]) for b in fixed.get(event_id, event["balls"])
                   if b["at"]["place"] == "slot"}
            new[event_id] = now - table
            table = now
        elif event["type"] in ("ball_lifted", "ball_placed") and event["at"]["place"] == "slot":
            ball = (event["owner"], event["at"]["position"], event["at"]["slot"])
            if event["type"] == "ball_lifted":
                table.discard(ball)
            else:
                table.add(ball)
    hits: Counter = Counter()
    shots: Counter = Counter()
    unplaced: Counter = Counter()
    for d in result["decisions"]:
        if d["kind"] == "shot":
            shots[d["player"]] += 1
            mine = [(p, s) for owner, p, s in new[d["cause"]] if owner == d["player"]]
            if len(mine) == 1:
                hits[(d["player"], *mine[0])] += 1
            unplaced[d["player"]] += len(mine) > 1
    return hits, shots, unplaced


def test_heat_map_has_a_cell_per_slot_and_counts_where_shots_came_to_rest(day, seen):
    hits: Counter = Counter()
    shots: Counter = Counter()
    unplaced: Counter = Counter()
    layouts = set()
    for match_id, result in of_game(day, "starcluster").items():
        run_dir = next(e.run_dir for e in day.entries if e.match_id == match_id)
        more_hits, more_shots, more_unplaced = landings(run_dir, result)
        hits += more_hits
        shots += more_shots
        unplaced += more_unplaced
        layouts.add(StarClusterConfig.from_dict(result["config"]).slots_per_position)
    [layout] = layouts
    slots = {(p, s) for p, n in enumerate(layout, start=1) for s in range(n)}
    maps = seen.dom["games"]["starcluster"]["heat"]
    assert {m["player"] for m in maps} == set(shots)
    for heat in maps:
        player = heat["player"]
        cells = {(c["position"], c["slot"]): c for c in heat["cells"]}
        assert len(heat["cells"]) == len(cells) == len(slots) and set(cells) == slots
        assert {slot: c["count"] for slot, c in cells.items() if c["count"]} == \
            {(p, s): n for (who, p, s), n in hits.items() if who == player}
        assert sum(c["count"] for c in cells.values()) == heat["placed"] == sum(
            n for (who, *_), n in hits.items() if who == player)
        assert heat["shots"] == shots[player] and heat["unplaced"] == unplaced[player]
        empty = {c["background"] for c in cells.values() if not c["count"]}
        assert len(empty) == 1 and all(c["background"] not in empty for c in cells.values() if c["count"])
    assert len(hits) > 3  # shots in several slots: not a trivial map
    assert unplaced == {"red": 1}  # sc-fixed's shot 2, once the umpire added the missed ball
    assert seen.dom["games"]["starcluster"]["legend"]
    assert seen.dom["games"]["piratenbillard"]["heat"] == []  # no slots on a Piratenbillard board


def test_an_empty_or_all_failed_batch_still_gives_a_page(tmp_path):
    empty = build_tournament_page([], tmp_path / "empty" / "tournament.html")
    failed = build_tournament_page([
        MatchEntry("t1-r1", "starcluster", None, None, None, "the video could not be opened"),
        MatchEntry("t1-r2", "piratenbillard", tmp_path / "nowhere", None, None, None),
    ], tmp_path / "failed.html", day_reel=tmp_path / "reel.mp4")
    assert (empty.matches, empty.failed, empty.players) == (0, 0, 0)
    assert (failed.matches, failed.failed, failed.players) == (2, 2, 0)
    shown_empty, shown_failed = browse([empty.path, failed.path], READ_PAGE)
    assert shown_empty.errors == shown_failed.errors == () and shown_empty.requests == shown_failed.requests == ()
    assert "No matches in this batch." in shown_empty.dom["text"] and shown_empty.dom["matches"] == []
    assert [r["failed"] for r in shown_failed.dom["matches"]] == [True, True]
    assert "run folder" in shown_failed.dom["matches"][1]["result"] and "does not exist" in \
        shown_failed.dom["matches"][1]["result"]
    assert "No match could be read" in shown_failed.dom["text"] and shown_failed.dom["games"] == {}
    assert "reel.mp4 is missing" in shown_failed.dom["text"] and shown_failed.dom["video"] is None
