"""Whole-referee speed and accuracy on each bundled sample: fps, real-time factor, per-stage ms, memory, latency.

Each sample is refereed in a fresh child process (so its peak memory is its
own) through the library `referee run` itself uses (`referee.session`), with
the spec `referee run SAMPLE/video.mp4 --session SAMPLE/truth.json` gives (the
umpire inputs come from the truth; vision makes every observation). The
pipeline's own stage timers (vision.pipeline.StageTimes) give the split; the
run is then scored with `referee eval`'s library, which gives the latency from
true rest to the emitted table_settled (in video time: the frame at which the
pipeline emitted it, so it is the causal delay, not counting the few ms of
processing per frame shown in the speed table). The wall time is the whole
session run: every frame, then the result written. Peak memory is the referee's: read before the run is
scored (scoring, with py-motmetrics, took 55-75 MB more on two samples: `scored_peak_rss_mb`).

The run writes tracks.jsonl as `referee run` does, so detection and tracking
can be scored; building its lines lands in the "track" stage and costs well
under a millisecond a frame.

Pose runs on a worker thread beside the frame loop (vision/pose_watch.py): its
"pose ms" stage is what the loop itself spends on it per frame (cropping,
the change test, waiting for a result not in yet), and "ms/pose run" is the
worker's wall time per run.

Run: .venv/bin/python benchmarks/pipeline.py [SAMPLE ...] [--out DIR] [--no-pose] [--json OUT]
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from common import ROOT, each_sample, machine, parser, peak_rss_mb, report_one, table, write_json


def measure(folder: Path, out: Path, detector: str, pose: bool) -> dict:
    from referee.session import RefereeSession, RunSpec
    from vision.evaluate import evaluate, load_run, load_truth
    from vision.video_io import probe

    truth = load_truth(folder / "truth.json")
    video = folder / "video.mp4"
    info = probe(video)
    if out.exists():
        shutil.rmtree(out)  # this benchmark's own scratch run of the sample, never a match record
    spec = RunSpec(str(video), truth.game, out, session=folder / "truth.json", detector=detector, pose=pose)
    with RefereeSession.open(spec) as session:
        started = time.perf_counter()
        summary = session.run()
        wall = time.perf_counter() - started
    peak = peak_rss_mb()  # the referee's own: scoring the run below (py-motmetrics) takes more
    pose_watch = session.pipeline.pose
    report = evaluate(load_run(out, truth), truth)
    frames = summary.times.frames or 1
    duration = summary.frames / info.fps if info.fps else 0.0
    return {
        "size": f"{info.width}x{info.height}", "frames": summary.frames, "duration_s": duration,
        "wall_s": wall, "fps": summary.frames / wall, "rtf": duration / wall,
        # the first frame's colour learning, once a run, and the speed of the frames after it
        "learn_s": summary.times.learn_s, "fps_after_learn": summary.frames / max(wall - summary.times.learn_s, 1e-9),
        "stage_ms": {stage: 1000 * s / frames for stage, s in summary.times.seconds.items()},
        "peak_rss_mb": peak, "scored_peak_rss_mb": peak_rss_mb(), "eval": report.to_json(), "run_dir": str(out),
        "pose_runs": pose_watch.calls if pose_watch is not None else 0,
        "pose_run_s": pose_watch.run_seconds if pose_watch is not None else 0.0,
        # blobs that kept an earlier measurement (balls lying still), blobs measured, and frames kept whole as quiet,
        # no blob looked at (vision/detect/colour.py)
        "blobs": {"reused": getattr(session.pipeline.detector, "reused", None),
                  "measured": getattr(session.pipeline.detector, "measured", None),
                  "quiet_frames": getattr(session.pipeline.detector, "quiet", None)},
    }


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=ROOT / "out" / "bench", help="folder for the runs (default out/bench)")
    p.add_argument("--detector", default="color", help="detector backend (default color)")
    p.add_argument("--no-pose", action="store_true", help="pass --no-pose to the referee (no pose model built)")
    p.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # the child process: referee this one sample
    args = p.parse_args()
    if args.one:
        report_one(lambda: measure(args.one, args.out, args.detector, not args.no_pose))
        return
    results = each_sample(__file__, args.samples, args.out, "--detector", args.detector,
                          *(["--no-pose"] if args.no_pose else []))
    print(f"whole pipeline, detector {args.detector}{', no pose' if args.no_pose else ''}, {machine()}")
    print(speed_table(results))
    print()
    print(accuracy_table(results))
    for name, r in results.items():
        if "error" in r:
            print(f"{name}: FAILED: {r['error']}")
    write_json(args.json, {"machine": machine(), "detector": args.detector, "samples": results})


def speed_table(results: dict) -> str:
    stages: list[str] = []  # the pipeline's own stages (vision.pipeline.STAGES), in its order
    for r in results.values():
        stages += [s for s in r.get("stage_ms", {}) if s not in stages]
    rows = []
    for name, r in results.items():
        if "error" in r:
            continue
        latency = r["eval"]["timing"]["after_rest_ms"]
        runs = r.get("pose_runs", 0)  # pose runs only now and then: its cost per run and runs per video second
        quiet = (r.get("blobs") or {}).get("quiet_frames")  # frames the detector kept whole (a colour detector's)
        rows.append([name, r["size"], r["frames"], r["fps"], r["rtf"], r.get("learn_s"), r.get("fps_after_learn"),
                     *(r["stage_ms"].get(s) for s in stages),
                     runs / r["duration_s"] if r["duration_s"] else None,
                     1000 * r.get("pose_run_s", 0.0) / runs if runs else None,
                     None if quiet is None or not r["frames"] else f"{100 * quiet / r['frames']:.0f}%",
                     r["peak_rss_mb"], latency["mean"], latency["max"]])
    return table(["sample", "size", "frames", "fps", "x RT", "learn s", "fps after learn", *(f"{s} ms" for s in stages),
                  "pose runs/s",
                  "ms/pose run", "quiet frames", "peak MB", "rest->settle ms", "max ms"], rows)


def accuracy_table(results: dict) -> str:
    rows = []
    for name, r in results.items():
        if "error" in r:
            continue
        e = r["eval"]
        det, trk = e["detection"] or {}, e["tracking"] or {}
        rows.append([name, "yes" if e["scores"]["exact"] else "NO", _pct(e["shots"]["accuracy"]),
                     _pct(e["assignment"]["accuracy"]), e["timing"]["error_ms"]["mean"], _pct(det.get("precision")),
                     _pct(det.get("recall")), (det.get("error_mm") or {}).get("mean"), _pct(trk.get("mota")),
                     _pct(trk.get("idf1")), trk.get("id_switches")])
    return table(["sample", "scores exact", "shots", "slots", "settle err ms", "det P", "det R", "loc mm", "MOTA",
                  "IDF1", "ID sw"], rows)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


if __name__ == "__main__":
    main()
