"""Human pose from the YOLO11n-pose ONNX model, run by onnxruntime alone.

The runtime never imports torch or ultralytics: preprocessing (letterbox),
decoding of the (1, 56, N) output (box, person score, 17 COCO keypoints of
x, y, confidence), non-maximum suppression and the mapping back to image
pixels are done here, and checked against ultralytics' own predictions on
the same photographs (tests/vision/test_pose.py).

The model built by models/build_pose.py has a dynamic input shape: an image is
letterboxed to the smallest rectangle whose long side is the model size (640)
and whose short side is a multiple of the stride (32), as ultralytics'
rectangular inference does, so the network does little work on padding (the
1280x321 crop of the Play Line goes in as 640x160, not 640x640). A model with
a fixed input shape is letterboxed onto its square.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from .onnx_session import open_session

COCO_KEYPOINTS = (
    "nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder", "right_shoulder",
    "left_elbow", "right_elbow", "left_wrist", "right_wrist", "left_hip", "right_hip",
    "left_knee", "right_knee", "left_ankle", "right_ankle",
)
PAD_VALUE = 114  # the grey ultralytics pads with; the model was trained on it
DEFAULT_SIZE = 640  # the long side of the input of a dynamic model without ultralytics' metadata
DEFAULT_STRIDE = 32


@dataclass(frozen=True)
class Keypoint:
    name: str
    x: float  # image pixels
    y: float
    confidence: float


@dataclass(frozen=True)
class Person:
    box: tuple[float, float, float, float]  # x1, y1, x2, y2 in image pixels
    score: float
    keypoints: tuple[Keypoint, ...]  # the 17 COCO keypoints, in COCO order

    def keypoint(self, name: str) -> Keypoint:
        return self.keypoints[COCO_KEYPOINTS.index(name)]


@dataclass(frozen=True)
class Letterbox:
    """How an image was scaled and padded into the model input."""

    gain: float
    pad_x: float
    pad_y: float

    def to_image(self, xy: np.ndarray) -> np.ndarray:
        return (xy - np.array([self.pad_x, self.pad_y])) / self.gain


def letterbox(image: np.ndarray, size: int, stride: int | None = None) -> tuple[np.ndarray, Letterbox]:
    """Resize keeping the aspect ratio so the long side is `size`, centre on grey padding (as ultralytics
    does): on a `size` square, or with a `stride` on the smallest rectangle whose sides are multiples of it
    (ultralytics' `LetterBox(auto=True)`, its rectangular inference)."""
    h, w = image.shape[:2]
    gain = min(size / h, size / w)
    new_w, new_h = max(round(w * gain), 1), max(round(h * gain), 1)
    if (new_w, new_h) != (w, h):
        image = cv2.resize(image, (new_w, new_h), interpolation=cv2.INTER_LINEAR)
    pad_w, pad_h = size - new_w, size - new_h
    if stride is not None:
        pad_w, pad_h = pad_w % stride, pad_h % stride
    dw, dh = pad_w / 2, pad_h / 2
    top, bottom = round(dh - 0.1), round(dh + 0.1)
    left, right = round(dw - 0.1), round(dw + 0.1)
    padded = cv2.copyMakeBorder(image, top, bottom, left, right, cv2.BORDER_CONSTANT, value=(PAD_VALUE,) * 3)
    return padded, Letterbox(gain, left, top)


def nms(boxes: np.ndarray, scores: np.ndarray, iou_threshold: float) -> list[int]:
    """Greedy non-maximum suppression on x1, y1, x2, y2 boxes; indices by falling score."""
    order = np.argsort(-scores, kind="stable")
    keep: list[int] = []
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    while order.size:
        i = order[0]
        keep.append(int(i))
        rest = order[1:]
        x1 = np.maximum(boxes[i, 0], boxes[rest, 0])
        y1 = np.maximum(boxes[i, 1], boxes[rest, 1])
        x2 = np.minimum(boxes[i, 2], boxes[rest, 2])
        y2 = np.minimum(boxes[i, 3], boxes[rest, 3])
        inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
        iou = inter / (areas[i] + areas[rest] - inter + 1e-9)
        order = rest[iou <= iou_threshold]
    return keep


class PoseEstimator:
    """People and their keypoints in a BGR image."""

    def __init__(self, model: str | Path, threads: int = 1, score_threshold: float = 0.25,
                 iou_threshold: float = 0.7, input_px: int = 0) -> None:
        """`input_px`: the long side an image is letterboxed to, where the model's input is dynamic (0: the size
        it was exported at)."""
        self.session = open_session(model, threads)
        model_input = self.session.get_inputs()[0]
        self.input_name = model_input.name
        height, width = model_input.shape[2:4]
        self.stride: int | None  # None: a fixed square input; else the input's sides are multiples of it
        if isinstance(height, int) and isinstance(width, int):
            self.size, self.stride = max(height, width), None
        else:  # a dynamic input: the export's image size is the long side (ultralytics' metadata)
            meta = self.session.get_modelmeta().custom_metadata_map
            self.size = max(ast.literal_eval(meta["imgsz"])) if "imgsz" in meta else DEFAULT_SIZE
            self.stride = int(meta.get("stride", DEFAULT_STRIDE))
            if input_px:
                self.size = input_px
        self.score_threshold = score_threshold
        self.iou_threshold = iou_threshold

    def __call__(self, image: np.ndarray) -> list[Person]:
        boxed, box = letterbox(image, self.size, self.stride)
        blob = cv2.dnn.blobFromImage(boxed, 1 / 255.0, swapRB=True)  # BGR -> RGB, HWC -> NCHW, float32
        output = self.session.run(None, {self.input_name: blob})[0][0].T  # (N, 56)
        return self.decode(output, box, image.shape[:2])

    def decode(self, rows: np.ndarray, box: Letterbox, image_hw: tuple[int, int]) -> list[Person]:
        rows = rows[rows[:, 4] >= self.score_threshold]
        if not len(rows):
            return []
        cx, cy, w, h = rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3]
        boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
        keep = nms(boxes, rows[:, 4], self.iou_threshold)
        height, width = image_hw
        people = []
        for i in keep:
            corners = _clip(box.to_image(boxes[i].reshape(2, 2)), width, height)
            points = rows[i, 5:].reshape(17, 3)
            xy = _clip(box.to_image(points[:, :2]), width, height)  # as ultralytics does: inside the image
            keypoints = tuple(Keypoint(name, float(x), float(y), float(c))
                              for name, (x, y), c in zip(COCO_KEYPOINTS, xy, points[:, 2]))
            x1, y1, x2, y2 = (float(v) for v in corners.ravel())
            people.append(Person((x1, y1, x2, y2), float(rows[i, 4]), keypoints))
        return people


def _clip(xy: np.ndarray, width: int, height: int) -> np.ndarray:
    return np.column_stack([np.clip(xy[:, 0], 0, width), np.clip(xy[:, 1], 0, height)])
