"""The console's fixtures: a real `referee serve` per test (tests/console/serving.py), and a real headless
Chromium (Debian's, installed by `make browser`) driven by Playwright."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pytest
from serving import SAMPLE, TOKEN, serve

CHROMIUM = "/usr/bin/chromium"


@dataclass(frozen=True)
class Served:
    url: str
    token: str
    run_dir: Path


@pytest.fixture
def console_server(tmp_path: Path) -> Iterator[Served]:
    """starcluster/play_line_foul with its session, served from the start of its video."""
    out = tmp_path / "run"
    with serve(out, str(SAMPLE / "video.mp4"), "--game", "starcluster", "--session", str(SAMPLE / "truth.json"),
               "--token", TOKEN) as console:
        yield Served(console.url, TOKEN, out)


@dataclass
class Browser:
    """One browser context: the pages opened in it sit side by side, as on one umpire's laptop."""

    context: Any
    errors: list[str] = field(default_factory=list)  # uncaught script errors of every page

    def open(self, url: str) -> Any:
        page = self.context.new_page()
        page.on("pageerror", lambda error: self.errors.append(f"{page.url}: {error}"))
        page.goto(url)
        return page

    def umpire(self, server: Any, token: str, by: str) -> Any:
        page = self.open(f"{server.url}/umpire#token={token}")
        page.get_by_test_id("by-input").fill(by)
        return page


@pytest.fixture
def browser() -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "the browser tests need Chromium: run `make browser`"
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM)
        yield Browser(chromium.new_context(viewport={"width": 1400, "height": 900}))
        chromium.close()
