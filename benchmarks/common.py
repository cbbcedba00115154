"""Shared by the benchmark scripts: finding the bundled samples and printing a fixed-width table."""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_videos"

# The checkout these scripts live in is the one measured, in this process and in every one it starts (a benchmark's
# child, `referee` itself): the virtual environment's editable install points at the checkout it was made in, so a
# `git worktree` of an earlier commit, run with the main checkout's .venv, measured the main checkout's code.
sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])


def samples(names: list[str]) -> list[Path]:
    """Sample folders: those named ('game/scenario' or a folder), else every finished bundled one.

    A sample is finished once its truth.json is written (it is written after the video).
    """
    if names:
        folders = [Path(n) if Path(n).is_dir() else SAMPLES / n for n in names]
    else:
        folders = sorted(p.parent for p in SAMPLES.glob("*/*/truth.json") if (p.parent / "video.mp4").is_file())
    missing = [str(f) for f in folders if not (f / "video.mp4").is_file()]
    if missing:
        sys.exit(f"no video.mp4 in {', '.join(missing)}; pass sample folders like starcluster/chain_grand_slam")
    if not folders:
        sys.exit(f"no samples under {SAMPLES}; render them with: .venv/bin/python -m simulation.make_samples")
    return folders


def label(folder: Path) -> str:
    try:
        return str(folder.resolve().relative_to(SAMPLES.resolve()))
    except ValueError:
        return str(folder)


def report_one(measure: Callable[[], dict]) -> None:
    """A child process's answer: the sample's figures as one JSON line, or its error as a row of its own (one
    broken sample does not hide the others)."""
    try:
        print(json.dumps(measure()))
    except Exception as error:
        print(json.dumps({"error": f"{type(error).__name__}: {error}", "trace": traceback.format_exc()}))


def each_sample(script: str, names: list[str], out: Path, *flags: str) -> dict[str, dict]:
    """`script --one FOLDER --out OUT/NAME FLAGS...` for each sample, each in a fresh child process (so its
    peak memory is its own): sample name -> the figures it printed (`report_one`)."""
    results = {}
    for folder in samples(names):
        name = label(folder)
        child = subprocess.run([sys.executable, script, "--one", str(folder), "--out", str(out / name), *flags],
                               capture_output=True, text=True)
        lines = child.stdout.strip().splitlines()
        results[name] = json.loads(lines[-1]) if lines else {"error": child.stderr.strip()[-500:]}
    return results


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("samples", nargs="*", help="sample folders (default: every sample_videos/<game>/<scenario>)")
    p.add_argument("--json", type=Path, metavar="OUT", help="also write the figures as JSON")
    return p


def peak_rss_mb() -> float:
    """Peak resident memory of this process (Linux reports kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def machine() -> str:
    """CPU model and count, for the record next to every figure."""
    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        names = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                 if line.startswith("model name")]
        model = names[0] if names else model
    return f"{model}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


def table(headers: list[str], rows: list[list[Any]]) -> str:
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(headers, widths)))]
    lines += ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
              for r in cells]
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"
    return str(value)


def write_json(path: Path | None, data: Any) -> None:
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {path}")
