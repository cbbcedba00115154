"""Screenshots of the live console for the README: the scoreboard (1920x1080, a venue screen) and the umpire
console, taken in the headless Chromium while `referee serve` referees a bundled sample live.

Not a benchmark: it measures nothing. It starts the server on a free loopback port with a fresh token and a
throwaway run folder, opens both pages from the start of the video (so they show what the pushes made of
them), waits until the video reaches `--at` seconds (or the run ends), and writes
docs/images/console-scoreboard.png and docs/images/console-umpire.png.

Run: .venv/bin/python benchmarks/console_screenshots.py [--sample starcluster/full_game] [--at 60] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from common import ROOT, label, samples

CHROMIUM = "/usr/bin/chromium"
START_S = 120.0  # the longest the server may take to answer /api/state


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def state(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/api/state", timeout=10) as answer:
        return json.loads(answer.read())


def wait_for_server(url: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_S
    while True:
        try:
            state(url)
            return
        except OSError:
            if server.poll() is not None:
                sys.exit(f"referee serve exited with {server.returncode} before serving; run it by hand to see why")
            if time.monotonic() > deadline:
                sys.exit(f"referee serve did not answer {url}/api/state within {START_S:.0f} s")
            time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", default="starcluster/full_game", help="game/scenario of sample_videos")
    parser.add_argument("--at", type=float, default=60.0, help="video seconds to take the pictures at")
    parser.add_argument("--out", type=Path, default=ROOT / "docs/images", help="folder for the two PNGs")
    args = parser.parse_args()
    [folder] = samples([args.sample])
    game = folder.parent.name
    if not Path(CHROMIUM).exists():
        sys.exit("needs Chromium: run `make browser`")
    from playwright.sync_api import sync_playwright

    port, token = free_port(), secrets.token_urlsafe(16)
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as run_dir, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        server = subprocess.Popen(
            [sys.executable, "-m", "referee.cli", "serve", str(folder / "video.mp4"), "--game", game,
             "--session", str(folder / "truth.json"), "--out", f"{run_dir}/run", "--port", str(port), "--token", token],
            cwd=ROOT, stdout=subprocess.DEVNULL)
        try:
            wait_for_server(url, server)
            scoreboard = browser.new_page(viewport={"width": 1920, "height": 1080})
            scoreboard.goto(f"{url}/")
            umpire = browser.new_page(viewport={"width": 1440, "height": 1000})
            umpire.goto(f"{url}/umpire#token={token}")
            while (now := state(url))["phase"] == "running" and now["t"] < args.at:
                time.sleep(0.5)
            scoreboard.wait_for_timeout(1000)  # a second for the last push and a video frame to be painted
            args.out.mkdir(parents=True, exist_ok=True)
            scoreboard.screenshot(path=args.out / "console-scoreboard.png")
            umpire.screenshot(path=args.out / "console-umpire.png", full_page=True)
        finally:
            browser.close()  # first: the server then stops with no stream open
            server.terminate()
            server.wait(60)
    scores = ", ".join(f"{p['id']} {p['score']}" for p in now["players"])
    print(f"{args.out / 'console-scoreboard.png'} and {args.out / 'console-umpire.png'}: "
          f"{label(folder)} at {now['t']:.1f} s ({now['phase']}; {scores})")


if __name__ == "__main__":
    main()
