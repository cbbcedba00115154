"""The Play Line call: did the shooting player's body cross the line during a shot?

Keypoints from the pose model (`vision.pose.Person`) are mapped through the
table calibration onto the board plane and measured against the Play Line in
millimetres. Approximation: a body part is treated as if it lay on the table
plane. A hand held above the table therefore maps further from the camera than
it is; from a camera behind the line that errs towards calling, which is why
the margin is in mm and why the call needs several frames (docs/pose.md).

COCO has no hand keypoint, so a hand is the wrist pushed on along the
elbow -> wrist direction by `forearm_extension` of the forearm length.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from calibration.calibrate import Calibration
from calibration.profile import TableProfile
from rules.events import PlayLineCrossing
from vision.config import PlayLineSettings

from .pose import COCO_KEYPOINTS, Person

HEAD_KEYPOINTS = ("nose", "left_eye", "right_eye", "left_ear", "right_ear")
BODY_KEYPOINTS = (*HEAD_KEYPOINTS, "left_shoulder", "right_shoulder", "left_hip", "right_hip")  # a person, not an arm
# pairs of keypoints whose left -> right runs across a body, the widest first: they say which way it faces
SIDE_PAIRS = (("left_shoulder", "right_shoulder"), ("left_hip", "right_hip"), ("left_ear", "right_ear"),
              ("left_eye", "right_eye"))
SIDE_APART_MM = 20.0


@dataclass(frozen=True)
class PartReach:
    """How far one body part is past the Play Line (board mm, positive = table side) and how sure."""

    part: str
    beyond_mm: float
    confidence: float


def body_parts(person: Person, settings: PlayLineSettings) -> dict[str, tuple[np.ndarray, float]]:
    """Image position and confidence of each counted part the model is sure enough of."""
    floor = settings.min_keypoint_confidence
    kp = {k.name: (np.array([k.x, k.y]), k.confidence) for k in person.keypoints}
    out: dict[str, tuple[np.ndarray, float]] = {}
    for part in (p for tier in settings.parts for p in tier):
        if part.endswith("_hand"):
            side = part.removesuffix("_hand")
            (wrist, cw), (elbow, ce) = kp[f"{side}_wrist"], kp[f"{side}_elbow"]
            if min(cw, ce) >= floor:
                out[part] = (wrist + settings.forearm_extension * (wrist - elbow), min(cw, ce))
        elif part == "head":
            sure = [kp[name] for name in HEAD_KEYPOINTS if kp[name][1] >= floor]
            if sure:
                out[part] = (np.mean([p for p, _ in sure], axis=0), max(c for _, c in sure))
        elif part in COCO_KEYPOINTS and kp[part][1] >= floor:
            out[part] = kp[part]
    return out


class PlayLineJudge:
    """Watches the shooting player during the release window and calls a Play Line crossing once per shot.

    Fed every frame (causal); `shooting` is True from the shot's start until its release window closes.
    The shooter is the person reaching furthest towards the table: a bystander stands back.
    """

    def __init__(self, calibration: Calibration, profile: TableProfile,
                 settings: PlayLineSettings = PlayLineSettings()) -> None:
        self.calibration, self.settings = calibration, settings
        assert profile.play_line is not None, "a Play Line judge needs a table with a Play Line"
        a, b = (np.asarray(p, float) for p in profile.play_line)
        normal = np.array([-(b - a)[1], (b - a)[0]]) / np.linalg.norm(b - a)
        board = profile.playing_field
        centre = np.array([(board.x_min + board.x_max) / 2, (board.y_min + board.y_max) / 2])
        self._origin = a
        self._normal = normal if (centre - a) @ normal > 0 else -normal  # points to the table side
        self._right = _right_of(calibration, a, self._normal)
        self._window: deque[tuple[PartReach, ...]] = deque(maxlen=settings.window_frames)
        self._called = False

    @property
    def forward(self) -> tuple[float, float]:
        """The board direction (unit) across the line towards the table side."""
        return float(self._normal[0]), float(self._normal[1])

    def side(self, point: Sequence[float], middle: Sequence[float]) -> str:
        """"left" or "right": the side of a body's `middle` a board point lies on, for a player at the line facing
        the table (as a shooter does)."""
        return "right" if (np.asarray(point, float) - np.asarray(middle, float)) @ self._right > 0 else "left"

    def faces_the_table(self, board: Mapping[str, np.ndarray]) -> bool | None:
        """Whether a person's keypoints (board mm, by name) name their left and right as a player facing the table
        has them (None: no pair to tell). From behind or above, a player's back looks much like a front, and the
        model may name the two sides as if it saw the front: a shooter at the line faces the table. A pair less
        than `SIDE_APART_MM` apart along the line (a body turned side on) does not tell."""
        for left, right in SIDE_PAIRS:
            if left in board and right in board:
                apart = float((np.asarray(board[right], float) - np.asarray(board[left], float)) @ self._right)
                if abs(apart) >= SIDE_APART_MM:
                    return apart > 0
        return None

    def beyond_mm(self, board_mm: np.ndarray) -> np.ndarray:
        """Signed distance of board points past the Play Line (positive: on the table side)."""
        return (np.asarray(board_mm, float).reshape(-1, 2) - self._origin) @ self._normal

    def reaches(self, person: Person) -> tuple[PartReach, ...]:
        """Every counted, confident part of `person`, with its signed distance past the line; left and right as the
        shooter's own, facing the table (`faces_the_table`)."""
        parts = body_parts(person, self.settings)
        if not parts:
            return ()
        beyond = self.beyond_mm(self.calibration.image_to_board(np.array([p for p, _ in parts.values()])))
        swap = self.faces_the_table(self.board_keypoints(person)) is False
        return tuple(PartReach(other_side(name) if swap else name, float(d), conf)
                     for (name, (_, conf)), d in zip(parts.items(), beyond) if np.isfinite(d))

    def board_keypoints(self, person: Person) -> dict[str, np.ndarray]:
        """A person's confident keypoints on the board (mm), by name; those the board cannot place are left out."""
        sure = [k for k in person.keypoints if k.confidence >= self.settings.min_keypoint_confidence]
        if not sure:
            return {}
        board = self.calibration.image_to_board(np.array([(k.x, k.y) for k in sure], float))
        return {k.name: xy for k, xy in zip(sure, board) if np.isfinite(xy).all()}

    def shooter(self, people: list[Person]) -> tuple[PartReach, ...]:
        """The reaches of the person whose body gets furthest over the line (none if nobody is seen), of those who
        may be shooting (`may_shoot`)."""
        candidates = [r for r in (self.reaches(p) for p in people if self.may_shoot(p)) if r]
        return max(candidates, key=lambda r: max(p.beyond_mm for p in r), default=())

    def may_shoot(self, person: Person) -> bool:
        """Whether a person may be the shooter: a body (a head, shoulders or hips seen), or limbs with a confident
        keypoint on the player's side of the line (or above the horizon, where the board cannot say). Limbs seen
        only past the line are an arm reaching in from the table's side (an umpire's), which the model found as a
        person of two wrists once it saw the table upright."""
        floor = self.settings.min_keypoint_confidence
        confident = [k for k in person.keypoints if k.confidence >= floor]
        if any(k.name in BODY_KEYPOINTS for k in confident):
            return True
        if not confident:
            return False
        points = np.array([(k.x, k.y) for k in confident], float)
        seen = self.calibration.below_horizon(points)
        return bool(not seen.all() or (self.beyond_mm(self.calibration.image_to_board(points[seen])) <= 0).any())

    def update(self, t: float, people: list[Person], shooting: bool,
               player: str | None = None) -> PlayLineCrossing | None:
        """One frame; returns the crossing the moment K of the last N frames had a part over the line."""
        if not shooting:
            self._window.clear()
            self._called = False
            return None
        over = tuple(r for r in self.shooter(people) if r.beyond_mm > self.settings.margin_mm)
        self._window.append(over)
        if self._called or sum(1 for frame in self._window if frame) < self.settings.frames_to_call:
            return None
        self._called = True
        part, confidence = self._verdict()
        return PlayLineCrossing(t=t, player=player, body_part=part, confidence=confidence)

    def _verdict(self) -> tuple[str, float]:
        """The first tier over the line in K frames (else in the most), its furthest part, and that part's
        mean keypoint confidence."""
        seen: dict[str, list[PartReach]] = {}
        for frame in self._window:
            for reach in frame:
                seen.setdefault(reach.part, []).append(reach)
        tiers = [[p for p in tier if p in seen] for tier in self.settings.parts]
        frames = [sum(1 for frame in self._window if any(r.part in tier for r in frame)) for tier in tiers]
        enough = [i for i, n in enumerate(frames) if n >= self.settings.frames_to_call]
        tier = tiers[enough[0] if enough else int(np.argmax(frames))]
        part = max(tier, key=lambda p: np.mean([r.beyond_mm for r in seen[p]]))
        return part, float(np.mean([r.confidence for r in seen[part]]))


def other_side(name: str) -> str:
    """"left_hand" <-> "right_hand" (any left_ / right_ name); other names as they are."""
    for a, b in (("left_", "right_"), ("right_", "left_")):
        if name.startswith(a):
            return b + name.removeprefix(a)
    return name


def _right_of(calibration: Calibration, origin: np.ndarray, forward: np.ndarray) -> np.ndarray:
    """The board direction (unit) on the right of a player facing `forward`. Which way that turns from `forward`
    depends on how the board's axes lie as seen from above, which the image tells: the camera looks down on the
    table, and the image's x -> y turn is clockwise as seen from above."""
    p0, px, py = calibration.board_to_image(np.array([origin, origin + (10.0, 0.0), origin + (0.0, 10.0)], float))
    (ax, ay), (bx, by) = px - p0, py - p0
    seen_from_above_counter_clockwise = ax * by - ay * bx < 0  # x -> y turns against the image's x -> y
    right = np.array([forward[1], -forward[0]])
    return right if seen_from_above_counter_clockwise else -right
