"""Tournament review at scale: the bundled samples as one batch, one match after another, on a local process pool
and on a Ray head started here, with the same CPUs; and what Ray itself costs a task.

    .venv/bin/python benchmarks/batch.py [--cpus 2] [--json OUT] [sample ...]

Each mode gets its own empty folder, so every match is refereed (pose on, highlights, report). Figures: wall time
of the whole batch (pages and the day's reel included), the matches' own seconds, the most memory the machine had
in use above where it stood before the mode began (sampled every 0.1 s from /proc/meminfo: every worker and Ray's
own daemons), and each worker's peak resident memory. Then, on a fresh local head: how long the head takes to
start, and the round trip of an empty task (one at a time, and 200 at once), the overhead a match pays on Ray.
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import label, machine, parser, samples, table, write_json  # noqa: E402
from record.batch import MatchSpec  # noqa: E402
from referee.batch import BatchSummary, local_pool, on_ray, run_batch, serial  # noqa: E402


def in_use_mb() -> float:
    fields = {}
    for line in Path("/proc/meminfo").read_text().splitlines():
        name, value = line.split(":", 1)
        fields[name] = float(value.split()[0])
    return (fields["MemTotal"] - fields["MemAvailable"]) / 1024


class MemoryWatch:
    """The most memory in use on the machine above where it stood when the watch began."""

    def __init__(self) -> None:
        self.base = in_use_mb()
        self.peak = 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._done.wait(0.1):
            self.peak = max(self.peak, in_use_mb() - self.base)

    def stop(self) -> float:
        self._done.set()
        self._thread.join()
        return self.peak


def one_mode(name: str, executor: Callable[..., Any], matches: Sequence[MatchSpec]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"batch-{name}-") as out:
        watch = MemoryWatch()
        started = time.perf_counter()
        summary: BatchSummary = run_batch(matches, Path(out), executor)
        wall = time.perf_counter() - started
        peak = watch.stop()
    failed = [o.match_id for o in summary.outcomes if o.status != "done"]
    return {"mode": name, "wall_s": wall, "match_s": sum(o.seconds for o in summary.outcomes),
            "reel_s": summary.reel_seconds, "page_s": summary.page_seconds,
            "per_match_peak_rss_mb": {o.match_id: o.peak_rss_mb for o in summary.outcomes},
            "peak_in_use_mb": peak, "worker_peak_rss_mb": max(o.peak_rss_mb for o in summary.outcomes),
            "not_done": failed, "per_match_s": {o.match_id: o.seconds for o in summary.outcomes}}


def ray_overhead(cpus: int) -> dict[str, float]:
    import ray

    started = time.perf_counter()
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    start_s = time.perf_counter() - started

    @ray.remote(num_cpus=1)
    def empty() -> None:
        return None

    ray.get(empty.remote())  # a worker is up
    one = []
    for _ in range(50):
        t = time.perf_counter()
        ray.get(empty.remote())
        one.append(time.perf_counter() - t)
    t = time.perf_counter()
    ray.get([empty.remote() for _ in range(200)])
    many = (time.perf_counter() - t) / 200
    ray.shutdown()
    one.sort()
    return {"head_start_s": start_s, "task_round_trip_ms_median": 1000 * one[len(one) // 2],
            "task_ms_amortised_200": 1000 * many}


def main() -> None:
    p = parser(__doc__.split("\n\n")[0])
    p.add_argument("--cpus", type=int, default=2, help="workers of the pool and CPUs of the Ray head (default 2)")
    p.add_argument("--modes", default="serial,pool,ray", help="which modes, in order (default serial,pool,ray)")
    args = p.parse_args()
    matches = [MatchSpec(label(folder).replace("/", "-"), folder / "video.mp4", label(folder).split("/")[0],
                         session=folder / "truth.json") for folder in samples(args.samples)]
    executors = {"serial": serial, "pool": local_pool(args.cpus), "ray": on_ray("local", args.cpus)}
    print(f"{machine()}; {len(matches)} matches; {args.cpus} workers / Ray CPUs")
    rows = []
    results = []
    for name in args.modes.split(","):
        result = one_mode(name, executors[name], matches)
        results.append(result)
        rows.append([name, f"{result['wall_s']:.1f}", f"{result['match_s']:.1f}", f"{result['reel_s']:.1f}",
                     f"{result['page_s']:.1f}", f"{result['peak_in_use_mb']:.0f}",
                     f"{result['worker_peak_rss_mb']:.0f}", ",".join(result["not_done"]) or "-"])
        print(f"{name}: {result['wall_s']:.1f} s", flush=True)
    print(table(["mode", "wall s", "sum of match s", "day reel s", "page s", "peak in use MB", "worker peak RSS MB",
                 "not done"], rows))
    overhead = ray_overhead(args.cpus)
    print(f"Ray head start {overhead['head_start_s']:.1f} s; empty task round trip "
          f"{overhead['task_round_trip_ms_median']:.2f} ms (median of 50), "
          f"{overhead['task_ms_amortised_200']:.2f} ms a task with 200 in flight")
    for result in results:
        matches_s = result["wall_s"] - result["reel_s"] - result["page_s"]
        after = (result["reel_s"] + result["page_s"]) / len(matches)
        print(f"{result['mode']}: the matches took {matches_s:.1f} s of wall time, {matches_s / len(matches):.1f} s "
              f"a match on this machine; the day's reel and the page {after:.1f} s a match, in the calling process")
    write_json(args.json, {"machine": machine(), "matches": len(matches), "cpus": args.cpus, "modes": results,
                           "ray": overhead})


if __name__ == "__main__":
    main()
