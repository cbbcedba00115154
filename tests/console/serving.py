"""A real `referee serve` for the console's tests: a child process playing a bundled sample at its own rate,
reached over HTTP on a free port of 127.0.0.1. Nothing here waits a fixed time: each step polls for what it
needs, with a generous deadline, and every child is stopped (then killed) at the end.

The live path drops frames when the referee falls behind the feed; on a loaded machine those could hold a
shot the test is about. So each referee is given a live buffer (PATIENCE) long enough that no frame drops:
what is asserted is then the same however slow the machine. Dropping is tested on its own, with an injected
clock (tests/vision/test_sources.py)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_videos" / "starcluster" / "play_line_foul"  # 13 s; red's head crosses the Play Line
TOKEN = "umpire-test-token"
DEADLINE_S = 90.0  # for anything to happen: the sample lasts 13 s, a loaded machine may take several times that
PATIENCE = {"source": {"live_startup_s": 60.0, "live_buffer_s": 10.0}}  # the `pipeline` of every console test
RECORD = ("events.jsonl", "decisions.jsonl", "tracks.jsonl", "result.json", "history.jsonl", "manifest.json")


@dataclass
class Console:
    """A running `referee serve`: its address, its run folder, and an HTTP client for it."""

    process: subprocess.Popen
    url: str
    out: Path
    stdout: Path
    stderr: Path
    client: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self.client = httpx.Client(base_url=self.url, timeout=30.0)

    def state(self) -> dict[str, Any]:
        answer = self.client.get("/api/state")
        assert answer.status_code == 200
        return answer.json()

    def wait_for(self, condition: Callable[[dict[str, Any]], Any], what: str) -> dict[str, Any]:
        """The first state for which `condition` holds (polled), or fail saying `what` never came."""
        end = time.monotonic() + DEADLINE_S
        while time.monotonic() < end:
            state = self.state()
            if condition(state):
                return state
            assert self.process.poll() is None, f"referee serve exited ({self.process.returncode}): {self.errors()}"
            time.sleep(0.05)
        raise AssertionError(f"{what}: not within {DEADLINE_S:g} s; last state {json.dumps(self.state())[:800]}")

    def post(self, path: str, body: Any, token: str | None = TOKEN, **headers: str) -> httpx.Response:
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return self.client.post(f"/api/umpire/{path}", json=body, headers=headers)

    def errors(self) -> str:
        return self.stderr.read_text(encoding="utf-8", errors="replace")[-2000:]


def referee(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`referee ARGS...` run to its end."""
    return subprocess.run([sys.executable, "-m", "referee.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=env)


def patient(out: Path, args: tuple[str, ...]) -> tuple[str, ...]:
    """ARGS with a --config of PATIENCE over the match's own config (the --session truth's, else the rules'
    defaults); ARGS as they are when they give a --config or --resume (the run folder keeps its config)."""
    if "--config" in args or "--resume" in args:
        return args
    config: dict[str, Any] = {}
    if "--session" in args and (session := Path(args[args.index("--session") + 1])).suffix == ".json":
        config = json.loads(session.read_text()).get("config", {})
    path = out.parent / f"{out.name}.config.json"
    path.write_text(json.dumps({**config, "pipeline": PATIENCE}))
    return (*args, "--config", str(path))


@contextmanager
def serve(out: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Console]:
    """`referee serve ARGS... --out OUT --port 0`, PATIENCE given, until it says where it listens; stopped
    (SIGINT, then SIGKILL) at the end, whatever happened."""
    args = patient(out, args)
    stdout, stderr = out.parent / f"{out.name}.stdout", out.parent / f"{out.name}.stderr"
    with stdout.open("w") as o, stderr.open("w") as e:
        process = subprocess.Popen([sys.executable, "-m", "referee.cli", "serve", *args, "--out", str(out),
                                    "--port", "0"], cwd=ROOT, stdout=o, stderr=e, text=True, env=env)
    console = None
    try:
        end = time.monotonic() + DEADLINE_S
        while console is None:
            for line in stdout.read_text().splitlines():
                if line.startswith("console at "):
                    console = Console(process, line.removeprefix("console at ").rstrip("/"), out, stdout, stderr)
            assert process.poll() is None or console is not None, \
                f"referee serve exited ({process.returncode}): {stderr.read_text()[-2000:]}"
            assert time.monotonic() < end, "referee serve never said where it listens"
            time.sleep(0.05)
        yield console
    finally:
        if console is not None:
            console.client.close()
        stop(process)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def digest(folder: Path) -> dict[str, str]:
    """Every file of a run folder (but its lock) with its content hash."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "run.lock"}


def scores(state: dict[str, Any]) -> dict[str, int]:
    return {p["id"]: p["score"] for p in state["players"]}


def replayed_scores(folder: Path, scratch: Path) -> dict[str, int]:
    """`referee replay` of a run folder: its final scores."""
    done = referee("replay", str(folder), "--out", str(scratch), "--quiet")
    assert done.returncode == 0, done.stderr
    return json.loads((scratch / "result.json").read_text())["final_scores"]


def truth_scores() -> dict[str, int]:
    return json.loads((SAMPLE / "truth.json").read_text())["result"]["final_scores"]


def without_token() -> dict[str, str]:
    """The environment without REFEREE_TOKEN."""
    return {key: value for key, value in os.environ.items() if key != "REFEREE_TOKEN"}
