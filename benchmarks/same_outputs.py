"""Do the bundled samples still referee to the very same record? Byte-for-byte, file by file.

Each sample is refereed exactly as a user would (`referee run SAMPLE/video.mp4 --game GAME --session
SAMPLE/truth.json --out out/same/GAME/SCENARIO --quiet`, pose on unless --no-pose), from the repository
root so the paths written into result.json are the same on every checkout, and the SHA-256 of its
events.jsonl, decisions.jsonl and result.json is compared with the hashes recorded in
benchmarks/same_outputs.json. A structural change (issue 11) must keep them all identical; a change that
means to change what the referee sees re-records them on its own commit and says what changed.

Run:  .venv/bin/python benchmarks/same_outputs.py            # check against the recorded hashes
      .venv/bin/python benchmarks/same_outputs.py --record   # record them (on the commit to compare with)
Exit status 1 when a file differs or a run fails.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import ROOT, label, samples, table

RECORD = Path(__file__).with_name("same_outputs.json")
COMPARED = ("events.jsonl", "decisions.jsonl", "result.json")
SCRATCH = Path("out") / "same"  # relative to the repository root: result.json records the paths it was given


def referee(folder: Path, pose: bool) -> tuple[str, dict[str, str] | str]:
    name = label(folder)
    game = json.loads((folder / "truth.json").read_text(encoding="utf-8"))["game"]
    out = SCRATCH / ("pose" if pose else "no-pose") / name
    if (ROOT / out).exists():
        shutil.rmtree(ROOT / out)  # this script's own scratch folder, never a match record
    video = (folder / "video.mp4").relative_to(ROOT)
    command = [sys.executable, "-m", "referee.cli", "run", str(video), "--game", game,
               "--session", str(video.parent / "truth.json"), "--out", str(out), "--quiet",
               *([] if pose else ["--no-pose"])]
    child = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if child.returncode != 0:
        return name, f"exit {child.returncode}: {child.stderr.strip()[-300:]}"
    return name, {file: hashlib.sha256((ROOT / out / file).read_bytes()).hexdigest() for file in COMPARED}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--record", action="store_true", help="write the hashes instead of checking them")
    p.add_argument("--no-pose", action="store_true", help="referee without the pose model")
    p.add_argument("--jobs", type=int, default=2, help="samples refereed at once (default 2)")
    args = p.parse_args()
    pose = not args.no_pose
    key = "pose" if pose else "no-pose"
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        runs = dict(pool.map(lambda folder: referee(folder, pose), samples([])))
    recorded = json.loads(RECORD.read_text(encoding="utf-8")) if RECORD.is_file() else {}
    if args.record:
        failed = {name: r for name, r in runs.items() if isinstance(r, str)}
        if failed:
            print("\n".join(f"{name}: FAILED {why}" for name, why in failed.items()))
            return 1
        recorded[key] = runs
        RECORD.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"recorded {len(runs)} samples x {len(COMPARED)} files ({key}) in {RECORD.relative_to(ROOT)}")
        return 0
    expected = recorded.get(key)
    if not expected:
        print(f"no recorded hashes for {key} in {RECORD}; run with --record on the commit to compare with")
        return 1
    rows, bad = [], 0
    for name in sorted(set(expected) | set(runs)):
        got, want = runs.get(name), expected.get(name)
        if isinstance(got, str) or got is None or want is None:
            bad += 1
            rows.append([name, *(["missing" if want is None else "FAILED"] * len(COMPARED))])
            continue
        marks = ["same" if got[file] == want[file] else "DIFFERS" for file in COMPARED]
        bad += marks.count("DIFFERS")
        rows.append([name, *marks])
    print(table(["sample", *COMPARED], rows))
    print(f"{key}: {len(runs)} samples, {bad} file(s) differ or failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
