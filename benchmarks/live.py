"""The referee on a live feed: each sample played at its own rate (`referee run --live`), frames dropped, lag, settle latency.

A file played live goes through the live path (`vision.sources.LiveSource`): a
reader thread decodes it and releases each frame at its presentation time on
the wall clock, keeping only the newest; a referee slower than the feed skips
frames. Per sample, in a fresh child process, through `referee.session` with
the spec `referee run SAMPLE/video.mp4 --live --session SAMPLE/truth.json`
builds:

- frames received from the feed and dropped (taken over by a newer frame
  before the referee could take them), those dropped while the first frame
  was refereed (it builds the colour model and the detector's lookup table:
  once a match, before play on a real table) apart from those dropped after;
- the lag of each refereed frame after the first: the wall time its observations were written
  minus the wall time the feed released it. The release time is the frame's
  presentation time on the feed's own wall clock, whose start is taken from
  the least-lagged frame, so a lag here leaves out that frame's few ms of work
  (an under-estimate by that much; the speed benchmarks give the ms a frame);
- settle latency on the wall clock: for each `table_settled` paired with the
  truth (as `referee eval` pairs them), the wall time it was written minus the
  wall time the feed released the frame of true rest (the first frame after the
  last moving ball), for the rests after the first frame was refereed. It is the causal delay in video time (debounce, and the
  tracker seeing the ball slow down; the same as in the file run) plus the lag;
- whether the live run still referees right (`referee eval`: final scores exact).

Run: .venv/bin/python benchmarks/live.py [SAMPLE ...] [--no-pose] [--out DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from common import ROOT, each_sample, machine, parser, peak_rss_mb, report_one, table, write_json


def measure(folder: Path, out: Path, pose: bool) -> dict:
    from referee.session import RefereeSession, RunSpec
    from rules.events import TableSettled
    from vision.evaluate import evaluate, load_run, load_truth, pair_settles, true_rest_times

    truth = load_truth(folder / "truth.json")
    if out.exists():
        shutil.rmtree(out)  # this benchmark's own scratch run of the sample, never a match record
    spec = RunSpec(str(folder / "video.mp4"), truth.game, out, session=folder / "truth.json", pose=pose, live=True)
    written: dict[float, float] = {}  # frame time -> wall time its observations were written
    dropped_by: list[int] = []  # frames the feed had dropped when each refereed frame was written

    with RefereeSession.open(spec) as session:
        def on_frame(frame, state) -> None:
            written[frame.t] = time.monotonic()  # the clock the live source paces by (SystemClock)
            dropped_by.append(session.source.dropped)

        started = time.monotonic()
        summary = session.run(on_frame)
        wall = time.monotonic() - started
        received, dropped = session.source.received, session.source.dropped
    feed_start = min(w - t for t, w in written.items())  # the least-lagged frame: released when written
    times = sorted(written)
    # the first frame refereed builds the colour model and the detector's lookup table (once a match, before
    # play on a real table): the frames the feed dropped meanwhile are counted apart, and its lag is left out
    first_ms = 1000 * (written[times[0]] - times[0] - feed_start) if times else None
    at_start = dropped_by[1] if len(dropped_by) > 1 else dropped
    lags = sorted(1000 * (written[t] - t - feed_start) for t in times[1:])
    run = load_run(out, truth)
    run_settles = [e for e in run.events if isinstance(e, TableSettled)]
    rest = true_rest_times(truth)
    latency = []
    for i, j in pair_settles(run.events, truth):
        if i in rest and run_settles[j].t in written and len(times) > 1 and rest[i] >= times[1]:  # after start-up
            latency.append(1000 * (written[run_settles[j].t] - (feed_start + rest[i])))
    report = evaluate(run, truth)
    return {"frames_refereed": summary.frames, "received": received, "dropped": dropped,
            "dropped_at_start": at_start, "first_frame_ms": first_ms, "wall_s": wall,
            "lag_ms": {"p50": _pct(lags, 0.5), "p95": _pct(lags, 0.95), "max": lags[-1] if lags else None},
            "settle_ms": sorted(latency), "exact": report.scores.exact, "peak_rss_mb": peak_rss_mb(),
            "debounce_ms": session.setup.pipeline.settle.rest_debounce_ms}


def _pct(values: list[float], q: float) -> float | None:
    return values[min(len(values) - 1, int(q * len(values)))] if values else None


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=ROOT / "out" / "bench-live", help="folder for the runs")
    p.add_argument("--no-pose", action="store_true", help="referee without the pose model")
    p.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # the child process: referee this one sample
    args = p.parse_args()
    if args.one:
        report_one(lambda: measure(args.one, args.out, not args.no_pose))
        return
    results = each_sample(__file__, args.samples, args.out, *(["--no-pose"] if args.no_pose else []))
    rows = []
    for name, r in results.items():
        if "error" in r:
            print(f"{name}: FAILED: {r['error']}")
            continue
        settle = r["settle_ms"]
        bound = r["debounce_ms"] + 150
        rows.append([name, r["received"], r["dropped_at_start"], r["dropped"] - r["dropped_at_start"],
                     r["first_frame_ms"], r["frames_refereed"], r["lag_ms"]["p50"], r["lag_ms"]["p95"],
                     r["lag_ms"]["max"], len(settle), settle[len(settle) // 2] if settle else None,
                     settle[-1] if settle else None, f"{sum(s <= bound for s in settle)}/{len(settle)}",
                     "yes" if r["exact"] else "NO", r["peak_rss_mb"]])
    print(f"live (files played at their own rate), {'no pose' if args.no_pose else 'pose on'}, {machine()}")
    print(table(["sample", "received", "dropped at start", "dropped after", "first frame ms", "refereed",
                 "lag p50 ms", "p95", "max", "settles",
                 "rest->written p50 ms", "max", "within debounce+150", "exact", "peak MB"], rows))
    write_json(args.json, {"machine": machine(), "pose": not args.no_pose, "samples": results})


if __name__ == "__main__":
    main()
