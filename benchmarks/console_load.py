"""The live console under load: `referee serve` plays a sample live while many read-only clients follow its
event stream; push latency per version received, and the frames the referee dropped meanwhile.

`referee serve SAMPLE/video.mp4 --session SAMPLE/truth.json --live` runs in a child process, as at a table
(the file through the live path, as a camera's feed: frames it is too slow for are dropped); this
process opens `--clients` (default 200) server-sent-event streams to it over loopback, in one asyncio loop,
with a minimal reader (HTTP/1.0, no client library: what is measured is the server, not the client's
parsing). For every version a client receives, the push latency is the wall time it was received minus the
version's `published_wall` (both clocks are this machine's). The run stops by itself once the state says the
match is over (or after the sample's length plus `--slack-s`), then stops the server. The referee's frames
received and dropped come from the state's `source` (the live source's counters, as benchmarks/live.py
reports them: dropped while the first frame was refereed, and after).

Run: .venv/bin/python benchmarks/console_load.py [SAMPLE] [--clients N] [--json OUT]
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from common import ROOT, label, machine, parser, samples, table, write_json

TOKEN = "console-load"
PUBLISHED = re.compile(rb'"published_wall":([0-9.eE+-]+)')
PHASE = re.compile(rb'"phase":"(\w+)"')
OVER = (b"finished", b"stopped")
MAX_CLIENTS = 1000  # bounded: this is a loopback load test, not a flood


async def follow(host: str, port: int, latencies: list[float], versions: list[int], done: asyncio.Event) -> None:
    """One read-only client of /api/stream until the match is over (or `done`): each version's push latency."""
    reader, writer = await asyncio.open_connection(host, port, limit=1 << 22)
    try:
        writer.write(f"GET /api/stream HTTP/1.0\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n\r\n".encode())
        await writer.drain()
        while (line := await reader.readline()) not in (b"\r\n", b""):  # the response's headers
            pass
        while not done.is_set():
            line = await reader.readline()
            if not line:
                return
            if line.startswith(b"data: "):
                received = time.time()
                published = PUBLISHED.search(line, 0, 200)
                if published is not None:
                    latencies.append(received - float(published.group(1)))
                    versions[0] += 1
                phase = PHASE.search(line, 0, 300)
                if phase is not None and phase.group(1) in OVER:
                    return
    finally:
        writer.close()


async def load(host: str, port: int, clients: int, limit_s: float) -> tuple[list[float], list[int], int]:
    """`clients` streams at once until each sees the match over (or `limit_s`): latencies (s), versions each
    received, and how many never connected or broke off."""
    latencies: list[float] = []
    counts = [[0] for _ in range(clients)]
    done = asyncio.Event()
    tasks = [asyncio.create_task(follow(host, port, latencies, counts[i], done)) for i in range(clients)]
    finished, pending = await asyncio.wait(tasks, timeout=limit_s)
    done.set()
    for task in pending:
        task.cancel()
    failed = sum(1 for task in finished if task.exception() is not None) + len(pending)
    return latencies, [c[0] for c in counts], failed


def measure(folder: Path, out: Path, clients: int, slack_s: float) -> dict:
    truth = json.loads((folder / "truth.json").read_text())
    out.parent.mkdir(parents=True, exist_ok=True)
    log = out.parent / f"{out.name}.serve.log"
    with log.open("w") as output:
        server = subprocess.Popen([sys.executable, "-m", "referee.cli", "serve", str(folder / "video.mp4"), "--game",
                                   truth["game"], "--session", str(folder / "truth.json"), "--out", str(out),
                                   "--port", "0", "--token", TOKEN, "--live", "--fresh"], cwd=ROOT, stdout=output,
                                  stderr=subprocess.STDOUT, text=True)
    try:
        address = _listening(server, log)
        host, port = address.split("//")[1].rstrip("/").rsplit(":", 1)
        latencies, versions, failed = asyncio.run(load(host, int(port), clients, truth["duration_s"] + slack_s))
        state = _final_state(host, int(port))
    finally:
        server.send_signal(signal.SIGINT)  # the referee finishes its record; killed if it has not within a minute
        try:
            server.wait(timeout=60)
        finally:
            server.kill()
    latencies.sort()
    source = state["source"]
    return {"clients": clients, "failed_clients": failed, "versions_published": state["version"],
            "versions_received": {"min": min(versions), "max": max(versions), "total": sum(versions)},
            "latency_ms": {"p50": _pct(latencies, 0.5), "p95": _pct(latencies, 0.95),
                           "max": 1000 * latencies[-1] if latencies else None},
            "frames_received": source["received"], "dropped_at_start": source["dropped_at_start"],
            "dropped_after": source["dropped"] - source["dropped_at_start"], "phase": state["phase"]}


def _listening(server: subprocess.Popen, log: Path) -> str:
    end = time.monotonic() + 120
    while time.monotonic() < end:
        for line in log.read_text().splitlines():
            if line.startswith("console at "):
                return line.removeprefix("console at ")
        if server.poll() is not None:
            sys.exit(f"referee serve exited: {log.read_text()[-1000:]}")
        time.sleep(0.05)
    sys.exit("referee serve never said where it listens")


def _final_state(host: str, port: int) -> dict:
    with urllib.request.urlopen(f"http://{host}:{port}/api/state", timeout=30) as answer:
        return json.loads(answer.read())


def _pct(values: list[float], q: float) -> float | None:
    return 1000 * values[min(len(values) - 1, int(q * len(values)))] if values else None


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--clients", type=int, default=200, help=f"read-only stream clients (1..{MAX_CLIENTS})")
    p.add_argument("--slack-s", type=float, default=60.0, help="stop this long after the sample's length at most")
    p.add_argument("--out", type=Path, default=ROOT / "out" / "bench-console", help="folder for the run")
    args = p.parse_args()
    if not 1 <= args.clients <= MAX_CLIENTS:
        sys.exit(f"--clients {args.clients}: give 1..{MAX_CLIENTS}")
    folder = samples(args.samples or ["starcluster/chain_grand_slam"])[0]
    r = measure(folder, args.out / label(folder), args.clients, args.slack_s)
    print(f"console load: {label(folder)} played live, {r['clients']} stream clients, {machine()}")
    print(table(["clients", "failed", "versions published", "received per client min", "max", "push p50 ms", "p95",
                 "max", "frames received", "dropped at start", "dropped after", "phase"],
                [[r["clients"], r["failed_clients"], r["versions_published"], r["versions_received"]["min"],
                  r["versions_received"]["max"], r["latency_ms"]["p50"], r["latency_ms"]["p95"],
                  r["latency_ms"]["max"], r["frames_received"], r["dropped_at_start"], r["dropped_after"],
                  r["phase"]]]))
    write_json(args.json, {"machine": machine(), "sample": label(folder), **r})


if __name__ == "__main__":
    main()
