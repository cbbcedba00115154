"""Decode-only speed on each bundled sample: the practical ceiling for the whole referee on this machine.

Three figures per sample: `vision.video_io.read_frames` exactly as the
pipeline uses it (PyAV decode on one thread + conversion to a BGR array);
the same with FFmpeg's frame threads (what `read_frames` did before issue 13,
and the "decode-only" the issue's ratios are taken to); and bare decoding
(frames left in YUV, frame threads), which shows what the colour conversion
costs. Each sample is timed in a fresh child process so its peak
memory is its own.

Run: .venv/bin/python benchmarks/decode.py [SAMPLE ...] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import av
from common import label, machine, parser, peak_rss_mb, samples, table, write_json


def measure(video: Path) -> dict:
    from vision.video_io import probe, read_frames

    info = probe(video)
    started = time.perf_counter()
    frames = sum(1 for _ in read_frames(video))
    bgr_s = time.perf_counter() - started
    started = time.perf_counter()
    with av.open(str(video)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        pyav = sum(1 for frame in container.decode(stream) if frame.to_ndarray(format="bgr24") is not None)
    pyav_s = time.perf_counter() - started
    started = time.perf_counter()
    with av.open(str(video)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        bare = sum(1 for _ in container.decode(stream))
    bare_s = time.perf_counter() - started
    duration = frames / info.fps if info.fps else 0.0
    return {"size": f"{info.width}x{info.height}", "video_fps": info.fps, "frames": frames, "duration_s": duration,
            "bgr_fps": frames / bgr_s, "bgr_rtf": duration / bgr_s, "pyav_bgr_fps": pyav / pyav_s,
            "bare_fps": bare / bare_s, "bare_rtf": duration / bare_s, "peak_rss_mb": peak_rss_mb()}


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # the child process: time this one video
    args = p.parse_args()
    if args.one:
        print(json.dumps(measure(args.one)))
        return
    results = {}
    for folder in samples(args.samples):
        out = subprocess.run([sys.executable, __file__, "--one", str(folder / "video.mp4")], capture_output=True,
                             text=True, check=True)
        results[label(folder)] = json.loads(out.stdout)
    rows = [[name, r["size"], r["frames"], r["duration_s"], r["bgr_fps"], r["bgr_rtf"], r["pyav_bgr_fps"],
             r["bare_fps"], r["bare_rtf"], r["peak_rss_mb"]] for name, r in results.items()]
    print(f"decode only, {machine()}")
    print(table(["sample", "size", "frames", "video s", "BGR fps", "BGR x RT", "BGR fps (frame threads)", "YUV fps", "YUV x RT",
                 "peak MB"], rows))
    write_json(args.json, {"machine": machine(), "samples": results})


if __name__ == "__main__":
    main()
