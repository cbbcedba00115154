"""The Play Line judge on real photographs of people composited onto rendered Star Cluster Ball tables.

People cut from the photographs that ship with ultralytics (bus.jpg, zidane.jpg; their keypoints are
ultralytics' own predictions, models/build/pose_reference.json) and the hand-annotated astronaut are pasted
by one similarity transform at known board positions and scales, so a wrist lands a known distance past
the Play Line or the whole body stays well behind it. The keypoint truth goes through the same transform
and labels each case; the real pose model, at the input size the referee uses, then looks at the pixels and the
judge must agree with the truth.
"""

import json
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.calibrate import calibrate_markers
from calibration.homography import Homography
from calibration.profile import load_profile
from rules.errors import InputError
from simulation import people
from simulation.camera import make_camera
from simulation.line_reach import view
from simulation.realism import Realism
from simulation.render import Renderer
from simulation.trajectory import SimFrame
from vision.config import DEFAULT_POSE_MODEL, PlayLineSettings, PoseConfig
from vision.play_line import PlayLineJudge, body_parts
from vision.pose import COCO_KEYPOINTS, Keypoint, Person, PoseEstimator

BUILD = Path(__file__).parents[2] / "models/build"
SURE = 0.5  # a reference keypoint at least this confident is part of the truth
CALLED_BEYOND_MM = 60.0  # truth: a wrist this far past the line must be called ...
CLEAR_BEHIND_MM = 120.0  # ... and a body whose every keypoint is this far behind it must not
# (anchor keypoint or "lead" = top-most, reach past the line in mm, shoulder width in mm, extra tilt in degrees)
PLACEMENTS = (
    ("right_wrist", 100.0, 260.0, 0.0),
    ("left_wrist", 80.0, 180.0, 15.0),
    ("lead", -160.0, 260.0, 0.0),
    ("right_wrist", 150.0, 220.0, -15.0),
    ("lead", -220.0, 180.0, -10.0),
    ("lead", -300.0, 320.0, 10.0),
)
# (photo, label, the centre of the person's box in the photo): the reference lists people by score, and the
# letterbox ultralytics predicted with can swap two close scores, so each person is found by where they stand.
# zidane.jpg's other person is left out: his crop holds most of Zidane too, who would reach further
PHOTOS = (("bus.jpg", 1, (283.0, 632.0)), ("bus.jpg", 2, (147.0, 651.0)), ("zidane.jpg", 1, (943.0, 373.0)),
          ("astronaut", 0, None))
CAMERAS = ("behind_play_line", "overhead")


@dataclass(frozen=True)
class Cutout:
    name: str
    image: np.ndarray  # BGR float 0..1
    alpha: np.ndarray
    person: np.ndarray  # (17, 3): x, y, sure? of the person placed
    everyone: np.ndarray  # (M, 3): every sure keypoint of every person inside the crop


def _cutout(photo: str, label: int, centre: tuple[float, float] | None) -> Cutout:
    if photo == "astronaut" or centre is None:
        a = people.astronaut()
        kp = np.column_stack([a.keypoints[:, :2], a.keypoints[:, 2] > 0])
        return Cutout(photo, a.image, a.alpha, kp, kp[kp[:, 2] > 0])
    reference = json.loads((BUILD / "pose_reference.json").read_text())["photos"][photo]
    image = cv2.imread(str(BUILD / photo)).astype(np.float32) / 255
    index = min(range(len(reference)), key=lambda i: np.hypot(*np.subtract(
        np.reshape(reference[i]["box"], (2, 2)).mean(axis=0), centre)))
    x1, y1, x2, y2 = reference[index]["box"]
    assert x1 <= centre[0] <= x2 and y1 <= centre[1] <= y2, f"nobody stands at {centre} in {photo}"
    pad = 0.08 * max(x2 - x1, y2 - y1)
    x1, y1 = max(0, int(x1 - pad)), max(0, int(y1 - pad))
    x2, y2 = min(image.shape[1], int(x2 + pad)), min(image.shape[0], int(y2 + pad))
    crop = image[y1:y2, x1:x2].copy()
    edge = max(2, int(0.04 * min(crop.shape[:2])))
    alpha = np.zeros(crop.shape[:2], np.float32)
    alpha[edge:-edge, edge:-edge] = 1
    alpha = cv2.GaussianBlur(alpha, (0, 0), edge / 2)

    def local(points):
        kp = np.array(points, float) - [x1, y1, 0]
        kp[:, 2] = kp[:, 2] >= SURE
        return kp

    inside = np.vstack([local(p["keypoints"]) for p in reference])
    inside = inside[(inside[:, 2] > 0) & (inside[:, 0] >= 0) & (inside[:, 1] >= 0)
                    & (inside[:, 0] < x2 - x1) & (inside[:, 1] < y2 - y1)]
    return Cutout(f"{photo}#{label}", crop, alpha, local(reference[index]["keypoints"]), inside)


def _paste(plane_h: np.ndarray, cut: Cutout, anchor: np.ndarray, board_xy: tuple[float, float], shoulder_mm: float,
           tilt_deg: float) -> np.ndarray:
    """2x3 photo px -> image px: upright along the table's forward direction, photo point `anchor` on `board_xy`."""
    def px(x, y):
        v = plane_h @ np.array([x, y, 1.0])
        return v[:2] / v[2]

    tip = px(*board_xy)
    forward = px(board_xy[0], board_xy[1] + 50) - tip
    side = px(board_xy[0] + shoulder_mm, board_xy[1]) - tip
    kp = cut.person
    scale = np.linalg.norm(side) / np.linalg.norm(kp[5, :2] - kp[6, :2])
    angle = np.arctan2(forward[1], forward[0]) + np.pi / 2 + np.radians(tilt_deg)  # photo up -> table forward
    rot = scale * np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    return np.column_stack([rot, tip - rot @ anchor])


def _wrists_and_hands(kp: np.ndarray, extension: float) -> tuple[np.ndarray, np.ndarray]:
    """(2, 3) left and right wrists, and the hands beyond them along the forearm (x, y, sure?)."""
    wrists, hands = [], []
    for side in ("left", "right"):
        wrist, elbow = kp[COCO_KEYPOINTS.index(f"{side}_wrist")], kp[COCO_KEYPOINTS.index(f"{side}_elbow")]
        wrists.append(wrist)
        hands.append([*(wrist[:2] + extension * (wrist[:2] - elbow[:2])), wrist[2] * elbow[2]])
    return np.array(wrists), np.array(hands)


@dataclass(frozen=True)
class Case:
    name: str
    crossing: bool  # the truth: a wrist is past the line (else the whole body is well behind it)
    sides: frozenset[str]  # which sides' wrist or hand is past the margin (the parts that may be named)
    called: str | None  # what the judge called on the model's keypoints (body part), None = no call
    confidence: float


def _run_cases() -> list[Case]:
    profile = load_profile("starcluster")
    line_y = profile.play_line[0][1]
    estimator = PoseEstimator(DEFAULT_POSE_MODEL, threads=2, input_px=PoseConfig().pose_input_px)
    settings = PlayLineSettings()
    cuts = [_cutout(photo, label, centre) for photo, label, centre in PHOTOS]
    cases = []
    for preset in CAMERAS:
        camera = make_camera(profile, preset, 1280, 720)
        table, _ = Renderer(profile, camera, Realism(), 30, 0).render(SimFrame(0, 0.0, ()))
        judge = PlayLineJudge(calibrate_markers(table, profile), profile, settings)
        plane_h = camera.plane_homography()
        for c, cut in enumerate(cuts):
            for p, (anchor_name, reach, shoulder, tilt) in enumerate(PLACEMENTS):
                kp = cut.person
                if anchor_name == "lead":  # the top-most keypoint of anyone in the crop leads
                    anchor = cut.everyone[np.argmin(cut.everyone[:, 1]), :2]
                else:
                    wrist = COCO_KEYPOINTS.index(anchor_name)
                    if not kp[wrist, 2]:  # that wrist is not in the photo: reach with the other one
                        wrist = COCO_KEYPOINTS.index(anchor_name.replace("right", "x").replace("left", "right")
                                                     .replace("x", "left"))
                    anchor = kp[wrist, :2]
                x_mm = 150.0 + 85.0 * c + 20.0 * p
                affine = _paste(plane_h, cut, anchor, (x_mm, line_y + reach), shoulder, tilt)
                image = table.astype(np.float32) / 255
                warped = cv2.warpAffine(cut.image, affine, (1280, 720), flags=cv2.INTER_LINEAR)
                alpha = cv2.warpAffine(cut.alpha, affine, (1280, 720), flags=cv2.INTER_LINEAR)[..., None]
                image = np.clip((image * (1 - alpha) + warped * alpha) * 255 + 0.5, 0, 255).astype(np.uint8)

                def beyond(points):
                    xy = points[:, :2] @ affine[:, :2].T + affine[:, 2]
                    return cv2.perspectiveTransform(xy[None], np.linalg.inv(plane_h))[0][:, 1] - line_y

                wrists, hands = _wrists_and_hands(kp, settings.forearm_extension)
                wrist_mm, hand_mm = beyond(wrists), beyond(hands)
                crossing = bool(np.any(wrists[:, 2] * wrist_mm > CALLED_BEYOND_MM))
                # either side's wrist or hand past the margin is a right answer for the part
                sides = frozenset(side for i, side in enumerate(("left", "right"))
                                  if wrists[i, 2] and max(wrist_mm[i], hand_mm[i] if hands[i, 2] else -1e9)
                                  > settings.margin_mm)
                everyone = beyond(cut.everyone)
                assert crossing or everyone.max() < -CLEAR_BEHIND_MM, "a placement the truth cannot label"
                found = estimator(image)
                call = None
                for frame in range(settings.frames_to_call):  # a still scene: the same pose every frame
                    call = judge.update(frame / 30, found, shooting=True, player="red") or call
                judge.update(1.0, [], shooting=False)
                cases.append(Case(f"{preset}/{cut.name}/{anchor_name}{reach:+.0f}mm/{shoulder:.0f}mm",
                                  crossing, sides, call and call.body_part, call.confidence if call else 0.0))
    return cases


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return _run_cases()


def test_composites_are_called_as_their_truth_says(cases):
    """Every clear body must go uncalled; crossings are called with the crossing side's hand or wrist named.

    Per-case for the clear bodies; for crossings the pose model sometimes finds no person or misplaces a
    wrist on these odd composites, so recall and part accuracy are asserted over the set and printed.
    """
    positives = [c for c in cases if c.crossing]
    negatives = [c for c in cases if not c.crossing]
    assert len(positives) >= 12 and len(negatives) >= 12
    false_calls = [(c.name, c.called) for c in negatives if c.called is not None]
    missed = [c.name for c in positives if c.called is None]
    misnamed = [(c.name, sorted(c.sides), c.called) for c in positives if c.called is not None
                and c.called not in {f"{side}_{part}" for side in c.sides for part in ("hand", "wrist")}]
    recall = 1 - len(missed) / len(positives)
    part_accuracy = 1 - (len(missed) + len(misnamed)) / len(positives)
    print(f"\nPlay Line composites: {len(positives)} crossing, {len(negatives)} clear; recall {recall:.2f}, "
          f"false-call rate {len(false_calls) / len(negatives):.2f}, right part named {part_accuracy:.2f}"
          f"\n  missed: {missed}\n  misnamed: {misnamed}")
    assert not false_calls
    assert recall >= 0.9, missed
    assert part_accuracy >= 0.7, misnamed  # measured 0.75 (docs/pose.md)


WRISTS_AND_HEAD = (("right_wrist", "left_wrist"), ("head",))  # no hands: the wrists themselves are judged


def _person(points: dict[str, tuple[float, float]], confidence: float = 0.9) -> Person:
    keypoints = tuple(Keypoint(name, *points.get(name, (0.0, 0.0)), confidence if name in points else 0.0)
                      for name in COCO_KEYPOINTS)
    return Person((0.0, 0.0, 1.0, 1.0), confidence, keypoints)


class _Identity:
    """A calibration whose image is the board itself (1 px = 1 mm): the unit tests think in mm."""

    @staticmethod
    def image_to_board(points_px):
        return np.asarray(points_px, float).reshape(-1, 2)

    @staticmethod
    def board_to_image(points_mm):
        return np.asarray(points_mm, float).reshape(-1, 2)

    @staticmethod
    def below_horizon(points_px):
        return np.ones(len(np.asarray(points_px).reshape(-1, 2)), bool)


def _judge(**settings) -> PlayLineJudge:
    return PlayLineJudge(_Identity(), load_profile("starcluster"), PlayLineSettings(**settings))  # line at y=200


def _reaching(wrist_y: float) -> Person:
    return _person({"right_shoulder": (300, 0), "right_elbow": (300, wrist_y - 250), "right_wrist": (300, wrist_y)})


def test_one_noisy_frame_does_not_call_but_k_of_n_does():
    judge = _judge(window_frames=5, frames_to_call=3, parts=WRISTS_AND_HEAD)
    over, behind = [_reaching(300)], [_reaching(100)]
    assert [judge.update(i / 30, p, True) for i, p in enumerate([behind, over, behind, behind, behind])] == [None] * 5
    results = [judge.update(1 + i / 30, p, True, player="red") for i, p in enumerate([over, behind, over, over])]
    assert results[:3] == [None] * 3
    call = results[3]
    assert call is not None and call.body_part == "right_wrist" and call.player == "red" and call.t == 1 + 3 / 30
    assert call.confidence == pytest.approx(0.9)
    assert judge.update(2.0, over, True) is None  # one call per shot
    judge.update(3.0, over, False)  # the shot's release window closed
    assert [judge.update(4 + i, over, True) for i in range(3)][-1] is not None


def test_margin_and_shooting_window_gate_the_call():
    judge = _judge(margin_mm=25.0, frames_to_call=1, window_frames=1, parts=WRISTS_AND_HEAD)
    assert judge.update(0.0, [_reaching(220)], True) is None  # 20 mm past: inside the margin
    assert judge.update(0.1, [_reaching(300)], False) is None  # not during a shot
    assert judge.update(0.2, [_reaching(230)], True).body_part == "right_wrist"


def test_the_hand_is_the_wrist_pushed_on_along_the_forearm():
    person = _reaching(180)  # elbow at y = -70, wrist at 180: forearm 250 mm
    parts = body_parts(person, PlayLineSettings(forearm_extension=0.35))
    np.testing.assert_allclose(parts["right_hand"][0], [300, 180 + 0.35 * 250])
    assert "left_hand" not in parts  # no left arm seen
    # wrist 20 mm short of the line, hand 67.5 mm past it: the hand is called
    call = _judge(frames_to_call=1, window_frames=1).update(0.0, [person], True)
    assert call is not None and call.body_part == "right_hand"
    assert _judge(frames_to_call=1, window_frames=1, forearm_extension=0.0).update(0.0, [person], True) is None


def test_the_shooter_is_the_person_reaching_furthest_and_parts_follow_priority():
    bystander = _person({"nose": (100, 150), "left_wrist": (80, 120)})
    shooter = _person({"nose": (300, 320), "right_elbow": (320, 150), "right_wrist": (320, 260)})
    judge = _judge(frames_to_call=1, window_frames=1, parts=WRISTS_AND_HEAD)
    assert max(r.beyond_mm for r in judge.shooter([bystander, shooter])) == pytest.approx(120)
    call = judge.update(0.0, [bystander, shooter], True)
    assert call.body_part == "right_wrist"  # the head is further over, but hands and wrists come first
    unsure = _person({"nose": (300, 320)}, confidence=0.3)
    assert _judge(frames_to_call=1, window_frames=1).update(0.0, [unsure], True) is None


def test_limbs_seen_only_past_the_line_are_no_shooter():
    """An umpire's arm from the table's side, found by the model as a person of two wrists, is not the shooter; the
    same wrists with an elbow on the player's side are, and so is a body (a head) wherever it is."""
    judge = _judge(frames_to_call=1, window_frames=1, parts=WRISTS_AND_HEAD)
    arm = _person({"left_wrist": (300, 460), "right_wrist": (320, 470)})
    assert not judge.may_shoot(arm) and judge.shooter([arm]) == ()
    assert judge.update(0.0, [arm], True) is None
    reaching = _person({"left_wrist": (300, 460), "right_wrist": (320, 470), "left_elbow": (300, 150)})
    assert judge.may_shoot(reaching)
    assert judge.update(0.1, [reaching], True).body_part in ("left_wrist", "right_wrist")
    leaning = _person({"nose": (300, 300), "left_wrist": (300, 460)})
    assert judge.may_shoot(leaning)


def test_left_and_right_are_the_shooters_own_facing_the_table():
    """Seen from above with the image's y down (as this 1 px = 1 mm calibration has it), a player facing the table
    (+y, down the image) has their right hand on the image's left. A model that took their back for a front names
    the two sides the other way round: the call names the shooter's own hand either way."""
    judge = _judge(frames_to_call=1, window_frames=1, parts=WRISTS_AND_HEAD)
    assert judge.side((250.0, 100.0), (300.0, 100.0)) == "right"
    assert judge.side((350.0, 100.0), (300.0, 100.0)) == "left"
    facing = {"right_shoulder": (200, 100), "left_shoulder": (400, 100), "right_elbow": (200, 150),
              "right_wrist": (200, 300)}
    seen_as_a_front = {"left_shoulder": (200, 100), "right_shoulder": (400, 100), "left_elbow": (200, 150),
                       "left_wrist": (200, 300)}
    for points, faces in ((facing, True), (seen_as_a_front, False)):
        person = _person(points)
        assert judge.faces_the_table(judge.board_keypoints(person)) is faces
        assert _judge(frames_to_call=1, window_frames=1, parts=WRISTS_AND_HEAD).update(
            0.0, [person], True).body_part == "right_wrist"
        assert _judge(frames_to_call=1, window_frames=1).update(0.0, [person], True).body_part == "right_hand"
    assert judge.faces_the_table(judge.board_keypoints(_reaching(300))) is None  # one side seen: as named
    side_on = {"left_shoulder": np.array([300.0, 100.0]), "right_shoulder": np.array([310.0, -200.0]),
               "left_ear": np.array([320.0, 0.0]), "right_ear": np.array([280.0, 0.0])}
    assert judge.faces_the_table(side_on) is True  # shoulders 10 mm apart across the line: the ears tell


@pytest.mark.parametrize("mirrored_board", [False, True])
def test_a_camera_behind_the_player_sees_their_right_on_its_right(mirrored_board):
    """From behind the line the camera looks the way the shooter faces, so their right is the image's right, however
    the board's axes run (a board whose x runs the other way: the same call)."""
    v = view("behind_play_line")
    calibration = v.calibration
    if mirrored_board:
        flip = np.diag([-1.0, 1.0, 1.0])
        calibration = replace(calibration, homography=Homography.from_array(flip @ calibration.homography.array))
    judge = PlayLineJudge(calibration, v.profile)
    width, height = calibration.image_size
    middle, right, left = calibration.image_to_board(np.array([[width / 2, height * 0.8], [width * 0.7, height * 0.8],
                                                               [width * 0.3, height * 0.8]], float))
    assert judge.side(right, middle) == "right" and judge.side(left, middle) == "left"


def test_bad_settings_are_clear_errors():
    with pytest.raises(InputError, match="frames_to_call"):
        PlayLineSettings(window_frames=2, frames_to_call=3)
    with pytest.raises(InputError, match="unknown body parts"):
        PlayLineSettings(parts=(("tail",),))
