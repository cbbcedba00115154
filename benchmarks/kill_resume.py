"""Kill `referee run` with SIGKILL at random points, resume it, and check the record is the one an
uninterrupted run writes.

For each sample: one uninterrupted run (the reference), then `--trials` runs, each killed with SIGKILL
1 to `--kills` times at random moments (uniform over the reference's wall time, so before the table is
found, mid-shot and at rest all happen), each kill followed by `referee run --resume --out DIR`, the
last resume left to finish. A file run must end with events.jsonl, decisions.jsonl and tracks.jsonl
byte-identical to the reference and result.json equal but for its "source" paths. Torn last lines the
kills left are counted (they are set aside in FILE.torn by the resume).

With `--stream`, a loopback HTTP stream (127.0.0.1 only, served by this script) killed once; the resume
watches the video from the last recorded frame on, served again, as a camera that kept filming. A
resumed feed goes on from where the feed is, so the record cannot equal the reference; checked
instead: every line recorded before the kill is still there, byte for byte, at the same place; the
folder replays with `referee replay RUN_DIR`; the restart left a feed-gap review warning.

Bounded: `--trials` (default 6) per sample, and a kill never waits longer than the reference took.

Run:  .venv/bin/python benchmarks/kill_resume.py starcluster/play_line_foul piratenbillard/capture --no-pose
      .venv/bin/python benchmarks/kill_resume.py piratenbillard/capture --stream
Exit status 1 when any trial's record differs.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from common import ROOT, label, samples, table

SCRATCH = ROOT / "out" / "kill_resume"  # this script's own scratch folders, never a match record
LINES = ("events.jsonl", "decisions.jsonl", "tracks.jsonl")


def referee(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "referee.cli", "run", *args, "--quiet"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def finish(process: subprocess.Popen[bytes], what: str) -> None:
    _, err = process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"{what} exited {process.returncode}: {err.decode(errors='replace').strip()[-300:]}")


def kill_at(process: subprocess.Popen[bytes], delay: float) -> bool:
    """SIGKILL the process after `delay` s; False when it had already finished by itself."""
    try:
        process.wait(timeout=delay)
        return False
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGKILL)
        process.wait()
        return True


def finished(folder: Path) -> bool:
    """The run wrote its result and was not stopped: the record is complete."""
    path = folder / "result.json"
    return path.exists() and "stopped" not in json.loads(path.read_text())


def result_without_source(folder: Path) -> dict:
    result = json.loads((folder / "result.json").read_text())
    result.pop("source", None)
    return result


def torn_files(folder: Path) -> int:
    return sum(1 for _ in folder.glob("*.torn"))


class Loopback:
    """A folder's video.ts served over HTTP on 127.0.0.1 (an ephemeral port), in a thread, at the pace of
    its own duration (`seconds`), as a camera's stream arrives."""

    def __init__(self, folder: Path, seconds: float) -> None:
        handler = functools.partial(Paced, seconds, directory=str(folder))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/video.ts"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Paced(http.server.SimpleHTTPRequestHandler):
    def __init__(self, seconds: float, *args: object, **kwargs: object) -> None:
        self.seconds = seconds
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def copyfile(self, source, outputfile) -> None:  # type: ignore[no-untyped-def]
        data = source.read()
        started = time.monotonic()
        for at in range(0, len(data), 1 << 14):
            time.sleep(max(0.0, at / len(data) * self.seconds - (time.monotonic() - started)))
            try:
                outputfile.write(data[at:at + (1 << 14)])
            except OSError:  # the referee went away (killed)
                return

    def log_message(self, *args: object) -> None:
        pass


def trial_file(sample: Path, game: str, options: list[str], reference: Path, reference_s: float, out: Path,
               kills: int, rng: random.Random) -> dict:
    video, session = sample / "video.mp4", sample / "truth.json"
    start = [str(video), "--game", game, "--session", str(session), "--out", str(out), *options]
    killed, started = 0, time.monotonic()
    process: subprocess.Popen[bytes] | None = referee(*start)
    for _ in range(rng.randint(1, kills)):
        if not kill_at(process, rng.uniform(0.05, reference_s)):
            break
        killed += 1
        if finished(out):  # killed while exiting, its record complete: nothing to resume
            process = None
            break
        # killed before the run had started its record (no manifest yet): the same command again, as a user would
        process = referee("--resume", "--out", str(out)) if (out / "manifest.json").exists() else referee(*start)
    if process is not None:
        finish(process, "the last resume")
    wall = time.monotonic() - started
    same = all((out / name).read_bytes() == (reference / name).read_bytes() for name in LINES) and \
        result_without_source(out) == result_without_source(reference)
    return {"kills": killed, "same": same, "torn": torn_files(out), "wall_s": wall}


def stream_file(video: Path, after_t: float, out: Path) -> None:
    """The frames of `video` after `after_t`, re-encoded as an MPEG-TS stream file (it plays from its first
    byte on: an MP4 needs range requests, which a plain HTTP server does not answer)."""
    sys.path.insert(0, str(ROOT))
    from vision.video_io import VideoWriter, probe, read_frames

    info = probe(video)
    with VideoWriter(out, info.width, info.height, info.fps, crf=18) as writer:
        for frame in read_frames(video):
            if frame.t > after_t:
                writer.write(frame.image)


def probe_s(video: Path) -> float:
    sys.path.insert(0, str(ROOT))
    from vision.video_io import probe

    return probe(video).duration_s


def trial_stream(sample: Path, game: str, options: list[str], reference_s: float, out: Path,
                 rng: random.Random) -> dict:
    """A loopback stream killed once: the resume watches a second stream, the video from the last frame the
    record holds, as a camera that kept filming would show it."""
    sys.path.insert(0, str(ROOT))
    from record.run_folder import recorded_until

    feed = out.with_name(out.name + "-feed")
    stream_file(sample / "video.mp4", -1.0, feed / "video.ts")
    truth = json.loads((sample / "truth.json").read_text(encoding="utf-8"))
    config = feed / "config.json"  # the sample's game config, and a feed given up after 20 s, not minutes
    config.write_text(json.dumps({**truth.get("config", {}), "pipeline": {"source": {"stream_reconnect_s": 20}}}))
    duration = probe_s(sample / "video.mp4")
    served = Loopback(feed, duration)
    start = [served.url, "--game", game, "--session", str(sample / "truth.json"), "--config", str(config),
             "--out", str(out), *options]
    try:
        killed = kill_at(referee(*start), rng.uniform(1.0, duration))
    finally:
        served.close()
    if not killed:
        return {"kills": 0, "same": True, "torn": 0, "gaps": 0}
    before = {name: (out / name).read_bytes() if (out / name).exists() else b"" for name in LINES}
    (feed / "video.ts").unlink()
    stream_file(sample / "video.mp4", recorded_until(out) or 0.0, feed / "video.ts")  # (the feed then restarts)
    served = Loopback(feed, max(0.1, duration - (recorded_until(out) or 0.0)))
    try:
        finish(referee(served.url, "--resume", "--out", str(out)), "the resume")
    finally:
        served.close()
    kept = all((out / name).read_bytes().startswith(cut[:cut.rfind(b"\n") + 1]) for name, cut in before.items())
    replayed = subprocess.run([sys.executable, "-m", "referee.cli", "replay", str(out), "--out", str(feed),
                               "--quiet"], cwd=ROOT, capture_output=True).returncode == 0
    gaps = sum(1 for line in (out / "decisions.jsonl").read_text().splitlines() if '"gap":' in line)
    recorded = bool(before["events.jsonl"].strip())  # killed before any event: a resume starts the match afresh
    return {"kills": 1, "same": kept and replayed and (gaps >= 1 or not recorded), "torn": torn_files(out),
            "gaps": gaps}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("samples", nargs="*", help="sample folders (default: every sample_videos/<game>/<scenario>)")
    p.add_argument("--trials", type=int, default=6, help="killed runs per sample (default 6)")
    p.add_argument("--kills", type=int, default=3, help="at most this many kills in one trial (default 3)")
    p.add_argument("--seed", type=int, default=12, help="random seed of the kill times (default 12)")
    p.add_argument("--no-pose", action="store_true", help="referee without the pose model")
    p.add_argument("--stream", action="store_true", help="a loopback HTTP stream instead of the file")
    args = p.parse_args()
    options = ["--no-pose"] if args.no_pose else []
    rng = random.Random(args.seed)
    rows, failed = [], 0
    for sample in samples(args.samples):
        name = label(sample)
        game = json.loads((sample / "truth.json").read_text(encoding="utf-8"))["game"]
        base = SCRATCH / ("stream" if args.stream else "file") / name
        shutil.rmtree(base, ignore_errors=True)
        reference = base / "reference"
        started = time.monotonic()
        finish(referee(str(sample / "video.mp4"), "--game", game, "--session", str(sample / "truth.json"),
                       "--out", str(reference), *options), "the reference run")
        reference_s = time.monotonic() - started
        results = []
        for n in range(args.trials):
            out = base / f"trial{n}"
            if args.stream:
                results.append(trial_stream(sample, game, options, reference_s, out, rng))
            else:
                results.append(trial_file(sample, game, options, reference, reference_s, out, args.kills, rng))
        same = sum(r["same"] for r in results)
        failed += len(results) - same
        rows.append([name, f"{reference_s:.1f}", str(len(results)), str(sum(r["kills"] for r in results)),
                     str(sum(r["torn"] for r in results)), f"{same}/{len(results)}",
                     f"{max((r.get('wall_s', 0) for r in results), default=0) / reference_s:.2f}"
                     if not args.stream else "-"])
        print(f"{name}: {same} of {len(results)} trials {'kept the record' if args.stream else 'identical'}",
              flush=True)
    print(table(["sample", "reference s", "trials", "kills", "torn lines", "same record", "worst wall / ref"],
                rows))
    print(f"seed {args.seed}, {'loopback stream' if args.stream else 'file'}, "
          f"{'pose off' if args.no_pose else 'pose on'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
