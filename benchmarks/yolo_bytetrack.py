"""Side by side on the same frames: the referee (colour detector + Kalman/Hungarian tracker) and YOLO11n + ByteTrack.

The alternative is what a user would assemble from Ultralytics: a YOLO11n detector (fine-tuned on the
simulator's frames by models/build_ball_yolo.py, one class per ball colour, since no COCO weights can be
fetched here) and its built-in ByteTrack, called frame by frame as its documentation shows:
`model.track(frame, persist=True, tracker="bytetrack.yaml", imgsz=1280, verbose=False)` (tracking's own
default conf of 0.1 feeds ByteTrack its low-score second stage). Both are scored by the same code,
`vision.evaluate.score_detection` / `score_tracking` (py-motmetrics), against the sample's truth.json.

Per sample, one after the other on the same machine:

1. the referee: `benchmarks/pipeline.py SAMPLE --no-pose` (the whole `referee run`, in a child process, without
   the person-pose model, which has no counterpart here): fps of the whole referee (decode to rules), the ms
   per frame of its detect + map + track stages (track includes settle and shots), its tracks.jsonl scored;
2. YOLO + ByteTrack: this file with `--track` in the model environment (`.venv-models`: torch, ultralytics;
   torch limited to one thread, OMP_NUM_THREADS=1): frames decoded with OpenCV, then `model.track` on each;
   the raw detections (confidence >= 0.25, the predict default, taken before the tracker) and the confirmed
   tracks are written in pixels with the time per frame;
3. here, in the referee environment: the YOLO pixels mapped onto the board exactly as the referee maps its
   own detections (the table's markers on the first frame -> `calibrate_markers`, `vision.stabilise.TableStabiliser`
   against camera shake, `vision.mapping.BoardMapper` with the ball-height correction), written as a
   tracks.jsonl (`vision.evaluate.FrameLog` format) and scored like the referee's.

A YOLO track's colour is its class. The referee only looks for balls beyond the Play Line on a Star Cluster
table (docs/pipeline.md); YOLO looks everywhere, as a user would run it. Both are scored on every visible
truth ball.

Run: .venv/bin/python benchmarks/yolo_bytetrack.py [SAMPLE ...] [--weights PT] [--out DIR] [--json OUT]
(default: three Star Cluster and three Piratenbillard samples, both cameras, 2 and 3 players: DEFAULT_SAMPLES). `make bench-yolo` builds the weights
when they are missing and runs this.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, label, machine, parser, samples, table, write_json  # noqa: E402

DEFAULT_SAMPLES = ["starcluster/chain_grand_slam", "starcluster/gutter_ball", "starcluster/play_line_foul",
                   "piratenbillard/capture", "piratenbillard/secure", "piratenbillard/neighbour_capture"]
WEIGHTS = ROOT / "models" / "build" / "ball_yolo11n.pt"
MODEL_PYTHON = ROOT / ".venv-models" / "bin" / "python"
RAW_FILE = "yolo_raw.jsonl"
IMGSZ = 1280
DETECTION_CONF = 0.25  # raw detections kept for the detection figures (ultralytics' predict default)


# --------------------------------------------------------------------------- YOLO + ByteTrack (model environment)


def track(video: Path, weights: Path, raw: Path) -> dict:
    """Run model.track over every frame; write per-frame pixels to `raw`; return the speed figures."""
    os.environ["YOLO_OFFLINE"] = "1"
    os.environ.setdefault("YOLO_CONFIG_DIR", str(ROOT / "models" / "build" / "ball_yolo" / "ultralytics-settings"))
    import cv2
    import torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    from ultralytics import YOLO
    from ultralytics.utils import downloads

    def refuse(*args, **kwargs):
        raise RuntimeError(f"download refused (offline benchmark): {args[:1]}")

    downloads.safe_download = refuse
    model = YOLO(str(weights))
    names = model.names
    raw_boxes: list = []

    def before_tracker(predictor) -> None:  # registered before track() adds ByteTrack's callback: sees raw boxes
        raw_boxes.clear()
        raw_boxes.extend(predictor.results[0].boxes.cpu().numpy().data.tolist())

    model.add_callback("on_predict_postprocess_end", before_tracker)
    capture = cv2.VideoCapture(str(video))
    fps = capture.get(cv2.CAP_PROP_FPS) or 30.0
    decode_s = track_s = 0.0
    model_ms = {"preprocess": 0.0, "inference": 0.0, "postprocess": 0.0}
    frames = 0
    raw.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with raw.open("w", encoding="utf-8") as out:
        while True:
            t0 = time.perf_counter()
            ok, image = capture.read()
            t1 = time.perf_counter()
            decode_s += t1 - t0
            if not ok:
                break
            result = model.track(image, persist=True, tracker="bytetrack.yaml", imgsz=IMGSZ, verbose=False)[0]
            track_s += time.perf_counter() - t1
            for key in model_ms:
                model_ms[key] += result.speed.get(key) or 0.0
            tracks = []
            if result.boxes is not None and result.boxes.is_track:
                for (x, y, w, h), tid, cls, conf in zip(result.boxes.xywh.tolist(), result.boxes.id.tolist(),
                                                         result.boxes.cls.tolist(), result.boxes.conf.tolist()):
                    tracks.append([int(tid), names[int(cls)], round(x, 1), round(y, 1), round((w + h) / 4, 1),
                                   round(conf, 3)])
            dets = [[names[int(cls)], round((x0 + x1) / 2, 1), round((y0 + y1) / 2, 1),
                     round((x1 - x0 + y1 - y0) / 4, 1), round(conf, 3)]
                    for x0, y0, x1, y1, conf, cls in raw_boxes if conf >= DETECTION_CONF]
            out.write(json.dumps({"i": frames, "tracks": tracks, "detections": dets}, separators=(",", ":")) + "\n")
            frames += 1
    wall = time.perf_counter() - started
    capture.release()
    n = max(frames, 1)
    return {"frames": frames, "duration_s": frames / fps, "wall_s": wall, "fps": frames / wall,
            "rtf": frames / fps / wall, "decode_ms": 1000 * decode_s / n, "detect_track_ms": 1000 * track_s / n,
            "model_ms": {k: v / n for k, v in model_ms.items()},
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "torch_threads": torch.get_num_threads(), "imgsz": IMGSZ}


# --------------------------------------------------------------------------- mapping and scoring (referee env)


def board_log(folder: Path, raw: Path, tracks_path: Path) -> int:
    """YOLO's pixel log -> tracks.jsonl in board mm, mapped as the referee maps its detections."""
    import numpy as np

    from calibration.calibrate import calibrate_markers
    from calibration.homography import CalibrationError
    from calibration.profile import load_profile
    from vision.evaluate import load_truth
    from vision.mapping import BoardMapper
    from vision.stabilise import TableStabiliser
    from vision.video_io import read_frames

    truth = load_truth(folder / "truth.json")
    profile = load_profile(truth.game)
    rows = [json.loads(line) for line in raw.read_text(encoding="utf-8").splitlines() if line.strip()]
    mapper = stabiliser = None
    written = 0
    with tracks_path.open("w", encoding="utf-8") as out:
        for frame, row in zip(read_frames(folder / "video.mp4"), rows):
            if mapper is None:  # as vision.pipeline: calibrate on the first frame that shows the markers
                try:
                    calibration = calibrate_markers(frame.image, profile)
                except CalibrationError:
                    continue
                mapper = BoardMapper(calibration, profile)
                stabiliser = TableStabiliser(frame.image, calibration, profile)
            stabiliser.update(frame.image)

            def to_mm(points):
                if not points:
                    return np.zeros((0, 2))
                steady = np.array([stabiliser.steady(u, v) for u, v in points], float)
                return mapper.to_board(steady)

            t_mm = to_mm([(r[2], r[3]) for r in row["tracks"]])
            d_mm = to_mm([(r[1], r[2]) for r in row["detections"]])
            line = {"t": round(frame.t, 4),
                    "tracks": [[r[0], r[1], round(float(x), 1), round(float(y), 1), r[2], r[3]]
                               for r, (x, y) in zip(row["tracks"], t_mm)],
                    "detections": [[r[0], r[1], r[2], r[3], round(float(x), 1), round(float(y), 1), r[4]]
                                   for r, (x, y) in zip(row["detections"], d_mm)]}
            out.write(json.dumps(line, separators=(",", ":")) + "\n")
            written += 1
    return written


def score(folder: Path, tracks_path: Path) -> dict:
    from dataclasses import asdict

    from vision.evaluate import EvalConfig, load_truth, score_detection, score_tracking

    truth = load_truth(folder / "truth.json")
    frames = [json.loads(line) for line in tracks_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    config = EvalConfig()
    return {"detection": asdict(score_detection(frames, truth, config)),
            "tracking": asdict(score_tracking(frames, truth, config))}


def run_colour(folder: Path, base: Path) -> dict:
    """benchmarks/pipeline.py on one sample (its own child process): the referee as `referee run` builds it.

    pipeline.py runs it in base/<game>/<scenario>/."""
    result_json = base / label(folder) / "pipeline.json"
    child = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "pipeline.py"), str(folder), "--out", str(base),
                            "--json", str(result_json), "--no-pose"], capture_output=True, text=True, cwd=ROOT)
    if not result_json.is_file():
        return {"error": (child.stderr or child.stdout).strip()[-800:]}
    r = next(iter(json.loads(result_json.read_text())["samples"].values()))
    if "error" in r:
        return r
    stage = r["stage_ms"]
    return {"frames": r["frames"], "fps": r["fps"], "rtf": r["rtf"], "wall_s": r["wall_s"],
            "detect_track_ms": sum(stage.get(s, 0.0) for s in ("detect", "map", "track")), "stage_ms": stage,
            "peak_rss_mb": r["peak_rss_mb"], "detection": r["eval"]["detection"], "tracking": r["eval"]["tracking"],
            "run_dir": r["run_dir"]}


def run_yolo(folder: Path, out: Path, weights: Path) -> dict:
    raw = out / RAW_FILE
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    child = subprocess.run([str(MODEL_PYTHON), __file__, "--track", str(folder), "--weights", str(weights),
                            "--raw", str(raw)], capture_output=True, text=True, cwd=ROOT, env=env)
    lines = child.stdout.strip().splitlines()
    if child.returncode != 0 or not lines:
        return {"error": (child.stderr or child.stdout).strip()[-800:]}
    speed = json.loads(lines[-1])
    tracks_path = out / "tracks.jsonl"
    board_log(folder, raw, tracks_path)
    return {**speed, **score(folder, tracks_path), "run_dir": str(out)}


def comparison_table(results: dict) -> str:
    rows = []
    for (system, name), r in results.items():
        if "error" in r:
            rows.append([system, name, "FAILED", *([None] * 10)])
            continue
        det, trk = r["detection"] or {}, r["tracking"] or {}
        rows.append([system, name, r["frames"], r["fps"], r["rtf"], r["detect_track_ms"], _pct(det.get("precision")),
                     _pct(det.get("recall")), (det.get("error_mm") or {}).get("mean"), _pct(trk.get("mota")),
                     _pct(trk.get("idf1")), trk.get("id_switches"), r["peak_rss_mb"]])
    return table(["system", "sample", "frames", "fps", "x RT", "det+track ms", "det P", "det R", "loc mm", "MOTA",
                  "IDF1", "ID sw", "peak MB"], rows)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--weights", type=Path, default=WEIGHTS, help=f"YOLO weights (default {WEIGHTS.relative_to(ROOT)})")
    p.add_argument("--out", type=Path, default=ROOT / "out" / "bench-yolo", help="folder for the runs")
    p.add_argument("--track", type=Path, help="(model environment) run YOLO + ByteTrack on this sample folder")
    p.add_argument("--raw", type=Path, help="with --track: where to write the pixel log")
    args = p.parse_args()
    if args.track:
        print(json.dumps(track(args.track / "video.mp4", args.weights, args.raw)))
        return
    if not args.weights.is_file():
        sys.exit(f"no YOLO weights at {args.weights}; build them with "
                 ".venv-models/bin/python models/build_ball_yolo.py (or make bench-yolo)")
    if not MODEL_PYTHON.is_file():
        sys.exit(f"{MODEL_PYTHON} not found; create the model environment first (make models)")
    results: dict = {}
    for folder in samples(args.samples or DEFAULT_SAMPLES):
        name = label(folder)
        print(f"{name}: referee (colour + Kalman/Hungarian) ...", flush=True)
        results[("colour + Kalman/Hungarian", name)] = run_colour(folder, args.out / "colour")
        print(f"{name}: YOLO11n + ByteTrack ...", flush=True)
        results[("YOLO11n + ByteTrack", name)] = run_yolo(folder, args.out / "yolo" / name, args.weights)
    print(f"\n{machine()}; torch 1 thread")
    print(comparison_table(results))
    for (system, name), r in results.items():
        if "error" in r:
            print(f"{system} / {name}: FAILED: {r['error']}")
    write_json(args.json, {"machine": machine(), "weights": str(args.weights),
                           "runs": [{"system": s, "sample": n, **r} for (s, n), r in results.items()]})


if __name__ == "__main__":
    main()
