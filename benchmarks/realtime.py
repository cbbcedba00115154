"""Real time on this machine, in one run: decode, the referee without and with pose, and the live feed, per sample.

Runs `decode.py`, `pipeline.py --no-pose`, `pipeline.py` and `live.py` one
after the other on the same samples (each sample in a fresh child process, as
those scripts do) and prints one table: decode-only frames/s (the referee's
own decode, and PyAV's BGR conversion with frame threads, which issue 13's
ratios are taken to), the referee's frames/s without and with pose and both
ratios, the first frame's colour learning (once a run: on a short clip a large
part of it) and the frames/s after it, ms per stage, peak memory, and in the
live mode the frames dropped and the settle latency on the wall clock. Nothing
here asserts a speed; run it on an idle machine.

Run: .venv/bin/python benchmarks/realtime.py [SAMPLE ...] [--skip-live] [--json OUT]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from common import machine, parser, table, write_json

HERE = Path(__file__).resolve().parent


def run(script: str, names: list[str], out: Path, *flags: str) -> dict:
    subprocess.run([sys.executable, str(HERE / script), *names, *flags, "--json", str(out)], check=True,
                   stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())["samples"]


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--skip-live", action="store_true", help="leave out the live runs (they take the videos' length)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        decode = run("decode.py", args.samples, scratch / "decode.json")
        bare = run("pipeline.py", args.samples, scratch / "no_pose.json", "--no-pose")
        posed = run("pipeline.py", args.samples, scratch / "pose.json")
        live = {} if args.skip_live else run("live.py", args.samples, scratch / "live.json")
    rows, stages = [], ("decode", "detect", "map", "track", "pose", "rules")
    for name, d in decode.items():
        n, w, lv = bare.get(name, {}), posed.get(name, {}), live.get(name, {})
        reference = d["pyav_bgr_fps"]
        settle = lv.get("settle_ms") or []
        bound = lv.get("debounce_ms", 0) + 150
        rows.append([name, d["frames"], d["bgr_fps"], reference,
                     n.get("fps"), _ratio(n.get("fps"), reference), w.get("fps"), _ratio(w.get("fps"), reference),
                     n.get("learn_s"), n.get("fps_after_learn"), _ratio(n.get("fps_after_learn"), reference),
                     w.get("fps_after_learn"), _ratio(w.get("fps_after_learn"), reference),
                     " / ".join(f"{w.get('stage_ms', {}).get(s, 0):.1f}" for s in stages),
                     max(n.get("peak_rss_mb", 0), w.get("peak_rss_mb", 0)),
                     _yes(n), _yes(w), lv.get("dropped_at_start"),
                     lv["dropped"] - lv["dropped_at_start"] if lv else None, lv.get("lag_ms", {}).get("max"),
                     max(settle) if settle else None, f"{sum(s <= bound for s in settle)}/{len(settle)}" if lv else None,
                     _yes(lv) if lv else None])
    print(f"real time, {machine()}")
    print(table(["sample", "frames", "decode fps", "decode fps (frame threads)", "no pose fps", "/ decode",
                 "pose fps", "/ decode", "learn s (no pose)", "no pose fps after learn", "/ decode",
                 "pose fps after learn", "/ decode", "ms " + "/".join(stages) + " (pose on)", "peak MB",
                 "exact no pose", "exact pose", "live dropped at start", "live dropped after", "live lag max ms",
                 "live rest->settle max ms", "within debounce+150", "live exact"], rows))
    write_json(args.json, {"machine": machine(), "decode": decode, "no_pose": bare, "pose": posed, "live": live})


def _ratio(fps: float | None, reference: float) -> float | None:
    return fps / reference if fps and reference else None


def _yes(r: dict) -> str | None:
    if "eval" in r:
        return "yes" if r["eval"]["scores"]["exact"] else "NO"
    if "exact" in r:
        return "yes" if r["exact"] else "NO"
    return None


if __name__ == "__main__":
    main()
