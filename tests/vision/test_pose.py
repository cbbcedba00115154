"""The pose runtime (onnxruntime only) against ultralytics' own predictions on real photographs.

models/build_pose.py exports the ONNX and, in the same run, has ultralytics predict with it on the two
photographs of people that ship with ultralytics; those predictions are the reference here. The runtime
must feed the network the same input shape (the model's input is dynamic: both letterbox each photograph to
the smallest stride-aligned rectangle) and find the same people with the same boxes and keypoints.
"""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from rules.errors import InputError
from vision.config import PoseConfig
from vision.pose import COCO_KEYPOINTS, Letterbox, PoseEstimator, letterbox, nms

BUILD = Path(__file__).parents[2] / "models/build"
MODEL = BUILD / "yolo11n-pose.onnx"
INT8 = BUILD / "yolo11n-pose-int8.onnx"  # the referee's (vision.config.DEFAULT_POSE_MODEL)
TOLERANCE_PX = 1.0


@pytest.fixture(scope="module")
def estimator():
    return PoseEstimator(MODEL, threads=2)


@pytest.fixture(scope="module")
def reference():
    return json.loads((BUILD / "pose_reference.json").read_text())


def test_model_card_checksum_matches_the_weights_it_was_built_from(reference):
    card = (Path(__file__).parents[2] / "models/MODEL_CARD.md").read_text()
    assert reference["weights_sha256"] in card


@pytest.mark.parametrize("photo", ["bus.jpg", "zidane.jpg"])
def test_decoder_matches_ultralytics_on_real_photographs(estimator, reference, photo):
    expected = reference["photos"][photo]
    image = cv2.imread(str(BUILD / photo))
    # like with like: the network saw the photograph letterboxed to the rectangle ultralytics fed it
    boxed, _ = letterbox(image, estimator.size, estimator.stride)
    assert list(boxed.shape[:2]) == reference["input_hw"][photo]
    assert max(boxed.shape[:2]) == 640 and min(boxed.shape[:2]) < 640
    found = estimator(image)
    assert len(found) == len(expected) >= 2
    for person in expected:
        match = min(found, key=lambda p: np.abs(np.subtract(p.box, person["box"])).max())
        assert np.abs(np.subtract(match.box, person["box"])).max() <= TOLERANCE_PX
        assert match.score == pytest.approx(person["score"], abs=2e-3)
        ours = np.array([[k.x, k.y, k.confidence] for k in match.keypoints])
        theirs = np.array(person["keypoints"])
        assert np.abs(ours[:, :2] - theirs[:, :2]).max() <= TOLERANCE_PX
        assert np.abs(ours[:, 2] - theirs[:, 2]).max() <= 2e-3
        assert [k.name for k in match.keypoints] == list(COCO_KEYPOINTS)


def test_a_picture_without_people_gives_nobody(estimator):
    board = np.full((480, 640, 3), (90, 160, 200), np.uint8)
    cv2.rectangle(board, (100, 100), (540, 380), (40, 40, 40), 5)
    assert estimator(board) == []


def test_the_model_input_is_dynamic_and_the_play_line_crop_goes_in_as_640x160(estimator):
    assert estimator.size == 640 and estimator.stride == 32
    crop = np.zeros((321, 1280, 3), np.uint8)  # the Play Line crop of the behind_play_line camera
    boxed, box = letterbox(crop, estimator.size, estimator.stride)
    assert boxed.shape == (160, 640, 3) and box == Letterbox(0.5, 0, 0)
    assert estimator(crop) == []


def test_rectangular_letterbox_pads_the_short_side_to_the_stride():
    image = np.zeros((720, 1280, 3), np.uint8)
    boxed, box = letterbox(image, 640, stride=32)
    # 1280 -> 640 wide: gain 0.5, 360 rows of picture; 384 is the next multiple of 32: 12 rows of grey above
    assert boxed.shape == (384, 640, 3) and box == Letterbox(0.5, 0, 12)
    assert (boxed[:12] == 114).all() and (boxed[12:372] == 0).all() and (boxed[372:] == 114).all()
    np.testing.assert_allclose(box.to_image(np.array([[320.0, 192.0]])), [[640.0, 360.0]])
    tall = np.zeros((1080, 810, 3), np.uint8)  # bus.jpg's shape: 480 wide, a multiple of 32 already
    assert letterbox(tall, 640, stride=32)[0].shape == (640, 480, 3)


def test_letterbox_scales_and_centres_like_the_independent_formula():
    image = np.zeros((720, 1280, 3), np.uint8)
    square, box = letterbox(image, 640)
    assert square.shape == (640, 640, 3)
    # 1280 -> 640 wide: gain 0.5, 360 rows of picture centred in 640: 140 rows of grey above
    assert box == Letterbox(0.5, 0, 140)
    assert (square[:140] == 114).all() and (square[140:500] == 0).all() and (square[500:] == 114).all()
    np.testing.assert_allclose(box.to_image(np.array([[320.0, 320.0]])), [[640.0, 360.0]])


def test_nms_keeps_the_best_of_overlapping_boxes():
    boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30]], float)
    assert nms(boxes, np.array([0.6, 0.9, 0.5]), iou_threshold=0.5) == [1, 2]
    assert nms(boxes, np.array([0.6, 0.9, 0.5]), iou_threshold=0.9) == [1, 0, 2]


def test_missing_or_corrupt_model_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match="is missing; build it with `make models`"):
        PoseEstimator(tmp_path / "none.onnx")
    corrupt = tmp_path / "corrupt.onnx"
    corrupt.write_bytes(b"not a model" * 10)
    with pytest.raises(InputError, match="cannot be loaded"):
        PoseEstimator(corrupt)


def test_the_runtime_never_imports_torch_or_ultralytics():
    import subprocess
    import sys

    code = ("import sys, cv2; from vision.pose import PoseEstimator; "
            f"PoseEstimator({str(MODEL)!r})(cv2.imread({str(BUILD / 'bus.jpg')!r})); "
            "print(sorted(m for m in ('torch', 'ultralytics', 'torchvision') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("model", [MODEL, INT8], ids=["float", "int8"])
def test_at_the_referees_smaller_input_the_same_people_are_found_with_the_same_skeletons(reference, model):
    """The referee letterboxes its crop to `pose.pose_input_px` (416), not to the 640 of the export. Against
    ultralytics' 640 predictions: every sure person found again, the box within 8 % of the person's height, the
    sure keypoints within 4 % at the median (measured at 416: 6.2 % and 2.8 % at worst; the model quantised to 8
    bits, the referee's, 5.3 % and 3.3 %). Single keypoints move more (up to 16 % of the height, an occluded ankle,
    at any size from 416 to 544), so what the calls need is judged on the Play Line composites at this size
    (test_play_line; benchmarks/play_line_pixels.py --model)."""
    small = PoseEstimator(model, threads=2, input_px=PoseConfig().pose_input_px)
    assert small.size == 416 and small.stride == 32
    for photo in ("bus.jpg", "zidane.jpg"):
        image = cv2.imread(str(BUILD / photo))
        assert max(letterbox(image, small.size, small.stride)[0].shape[:2]) == 416
        found = small(image)
        for person in reference["photos"][photo]:
            if person["score"] < 0.5:
                continue
            height = person["box"][3] - person["box"][1]
            match = min(found, key=lambda p: np.abs(np.subtract(p.box, person["box"])).max())
            assert np.abs(np.subtract(match.box, person["box"])).max() <= 0.08 * height
            theirs = np.array(person["keypoints"])
            ours = np.array([[k.x, k.y] for k in match.keypoints])
            sure = theirs[:, 2] >= 0.5
            assert np.median(np.linalg.norm(ours[sure] - theirs[sure, :2], axis=1)) <= 0.04 * height


def test_the_quantised_model_is_calibrated_at_the_referees_input_size():
    """models/build_pose.py calibrates the 8-bit model on images letterboxed as the runtime letterboxes them, at
    the runtime's input size; it cannot import the referee's configuration (its environment is the model
    build's), so it says the size itself, and it must be `pose.pose_input_px`'s default."""
    build = (Path(__file__).parents[2] / "models/build_pose.py").read_text()
    sizes = [int(line.split("=")[1].split("#")[0]) for line in build.splitlines()
             if line.startswith("RUNTIME_INPUT_PX")]
    assert sizes == [PoseConfig().pose_input_px]
