"""Run folders for the review tests, and the headless browser that opens a report.

`truth_run` writes the files of a `referee run` folder that review reads, for a committed sample, from its
truth.json: the sample's event log as events.jsonl, the calls as decisions.jsonl, and result.json with
the sample video as source (no tracks.jsonl). It costs a replay, not a referee run, and the video is
real, so thumbnails are real frames.

Run as a script, it makes docs/report.png: `referee run` on sample_videos/starcluster/table_shove
(its flagged table-movement foul and low-confidence snapshot are what a report is for), its report,
and a screenshot through the same browser code the test uses.
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rules.files import write_json_atomically
from rules.replay import read_log, replay
from rules.result import build_result

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_videos"
CHROMIUM = "/usr/bin/chromium"
# The root user in a container needs --no-sandbox; the rest keeps Chromium off the network.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def truth_run(sample: str, out: Path) -> Path:
    truth = json.loads((SAMPLES / sample / "truth.json").read_text())
    out.mkdir(parents=True, exist_ok=True)
    events_path = out / "events.jsonl"
    events_path.write_text("".join(json.dumps(e) + "\n" for e in truth["events"]))
    replayed = replay(read_log(events_path), truth["game"], truth["config"])
    (out / "decisions.jsonl").write_text("".join(json.dumps({"type": "decision", **d.to_json()}) + "\n"
                                                 for d in replayed.decisions))
    source = {"video": str(SAMPLES / sample / "video.mp4"), "events": str(events_path), "frames": truth["frame_count"]}
    write_json_atomically(out / "result.json", build_result(replayed, source))
    return out


@dataclass(frozen=True)
class PageCheck:
    """What the browser saw: console errors, failed requests, the plot and the shot table."""

    console_errors: tuple[str, ...]
    requests: tuple[str, ...]  # every URL the page asked for besides itself
    plot_paths: tuple[str, ...]  # `d` of each series path
    plot_points: int
    shot_rows: int
    thumbnails_loaded: int


def open_report(html: Path, screenshot: Path) -> PageCheck:
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    requests: list[str] = []
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1100, "height": 900})
        try:
            page = context.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url) if r.url != html.as_uri() else None)
            page.goto(html.as_uri(), wait_until="load")
            check = PageCheck(
                tuple(errors),
                tuple(u for u in requests if not u.startswith("data:")),
                tuple(page.eval_on_selector_all("svg.score-plot g.series path",
                                                "ps => ps.map(p => p.getAttribute('d'))")),
                page.locator("svg.score-plot circle").count(),
                page.locator("table.shots tbody tr").count(),
                page.eval_on_selector_all("table.shots img",
                                          "is => is.filter(i => i.complete && i.naturalWidth > 0).length"),
            )
            page.screenshot(path=str(screenshot), full_page=True, type="png")
        finally:
            context.close()
    return check


@dataclass(frozen=True)
class Seen:
    """What the browser saw: console errors, every URL asked for besides the page, and the script's answer."""

    errors: tuple[str, ...]
    requests: tuple[str, ...]
    dom: dict[str, Any]


def browse(pages: list[Path], script: str, wait_for: str | None = None) -> list[Seen]:
    """Open each page in Debian's Chromium as `open_report` does, and run `script` on it (a promise it returns is
    awaited)."""
    from playwright.sync_api import sync_playwright

    seen = []
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1200, "height": 900})
        try:
            for html_path in pages:
                errors: list[str] = []
                requests: list[str] = []
                page = context.new_page()
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.on("request", lambda r: requests.append(r.url) if r.url != html_path.as_uri() else None)
                page.goto(html_path.as_uri(), wait_until="load")
                if wait_for:
                    page.wait_for_function(wait_for, timeout=10_000)
                seen.append(Seen(tuple(errors), tuple(requests), page.evaluate(script)))
                page.close()
        finally:
            context.close()
    return seen


def make_docs_screenshot(out_png: Path) -> None:
    from referee.cli import main

    with tempfile.TemporaryDirectory() as work:
        work_dir = Path(work)
        sample = SAMPLES / "starcluster" / "table_shove"
        config = work_dir / "config.json"
        config.write_text(json.dumps(json.loads((sample / "truth.json").read_text())["config"]))
        run_dir = work_dir / "run"
        assert main(["run", str(sample / "video.mp4"), "--game", "starcluster", "--session", str(sample / "truth.json"),
                     "--config", str(config), "--out", str(run_dir), "--quiet"]) == 0
        assert main(["report", str(run_dir), "--out", str(work_dir / "report.html")]) == 0
        print(open_report(work_dir / "report.html", out_png))


if __name__ == "__main__":
    make_docs_screenshot(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "report.png")
