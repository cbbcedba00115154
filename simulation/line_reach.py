"""Short clips of a real photographed person at the Star Cluster Ball Play Line, reaching (or not) over it.

Each clip (40 frames at 30 fps, 1280x720 BGR uint8) is a rendered table with a real photograph of a person
(skimage's astronaut, two people of ultralytics' bus.jpg, the man on the right of zidane.jpg; cut out by grabCut
seeded with their skeletons, mirrored so that they face the table as a player at the line does) pasted behind the
Play Line, upright with photo-up = table forward, plus drawn parts: a reaching arm (sleeve and bare or gloved, open
or closed hand) held 40-80 mm above the table, its shadow, rolling balls, an umpire's arm. The arm, hand and shadow
are shapes in board millimetres, evaluated at every pixel's ray (at the arm's height), so they are
perspective-correct. The truth of every frame (how far the shooter reaches past
the line: the photo's mask on the table plane, the drawn arm where it is held) is measured on the very masks that
are composited, pixel by pixel. A head lean is a foul when the head itself (its keypoints) passes the line, as a
standing player's hair seen from behind covers the table past the line without being over it. Kinds: positives
`arm_reach`, `head_lean`; hard negatives `hover`, `shadow`, `ball_back`, `lift_between_shots` (no shot window
open), `umpire`, `clear`.

    clips = reach_clips(200, seed=0)
    for t, frame in clips[0].frames(): ...
    clips[0].frames.frame(12)  # one frame on demand; clips[0].frames.shooter_alpha(12) its shooter's alpha
    clips[0].frames.before()  # the table before anyone came to the line
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from calibration.calibrate import Calibration, calibrate_markers
from calibration.profile import TableProfile, load_profile
from simulation import people, sprites
from simulation.camera import make_camera
from simulation.realism import Realism
from simulation.render import LIGHT, PLAYER_COLOURS, Renderer
from simulation.trajectory import SimFrame

BUILD = Path(__file__).parents[1] / "models/build"
WIDTH, HEIGHT, FPS, FRAMES = 1280, 720, 30, 40
PRESETS = ("behind_play_line", "overhead")
POSITIVE_KINDS = ("arm_reach", "head_lean")
KINDS = ("arm_reach", "head_lean", "hover", "shadow", "ball_back", "lift_between_shots", "umpire", "clear")
# one cycle of kinds: arm_reach 4, every other kind 1 (positives 5 of 11), interleaved
CYCLE = ("arm_reach", "hover", "arm_reach", "shadow", "head_lean", "ball_back", "arm_reach",
         "lift_between_shots", "arm_reach", "umpire", "clear")
PLAYERS = ("red", "blue")  # Star Cluster Ball's default players (StarClusterSimOptions.players)
SURE = 0.5  # a keypoint at least this confident draws the skeleton and anchors parts
# (photo, centre of the person's box): bus.jpg's two people whose boxes lie well inside the photo (the other two
# are cut by its left and right edges) and Zidane; found by where they stand, as tests/vision/test_play_line.py
PHOTO_PEOPLE = (("bus.jpg", (147.0, 651.0)), ("bus.jpg", (283.0, 632.0)), ("zidane.jpg", (943.0, 373.0)))
SKELETON = ((5, 6), (5, 7), (7, 9), (6, 8), (8, 10), (5, 11), (6, 12), (11, 12), (11, 13), (13, 15), (12, 14),
            (14, 16), (0, 1), (0, 2), (1, 3), (2, 4), (0, 5), (0, 6))
GLOVES = ((0.05, 0.05, 0.05), (0.93, 0.93, 0.93), (0.1, 0.1, 0.85), (0.85, 0.25, 0.05), (0.1, 0.75, 0.1),
          (0.05, 0.8, 0.95), (0.05, 0.5, 0.95), (0.7, 0.1, 0.6), (0.55, 0.55, 0.1))
SKIN_TONES = ((0.47, 0.60, 0.80), (0.35, 0.45, 0.62), (0.22, 0.30, 0.45), (0.60, 0.70, 0.88))
NOISE_SIGMA = 2.0  # grey levels
HAND_HEIGHT_MM = (40.0, 80.0)  # a drawn arm is held this high above the table (a hand placing or releasing a ball)


# ----------------------------------------------------------------------------------------------- public types
@dataclass(frozen=True)
class ReachTruth:
    kind: str
    name: str
    seed: int
    preset: str
    person: str
    hand: tuple[str, str] | None  # ("bare" | "gloved", "open" | "closed") of the shooter's drawn hand
    foul: bool  # the shooter's body passes the Play Line during an open shot window
    part: str | None  # the leading part of a foul: "left_hand" / "right_hand" (the person's own side) or "head"
    window: tuple[float, float] | None  # the shot's release window (s); None: no shot is being played
    crossing_start_t: float | None  # first frame whose shooter mask (a head_lean: the head's keypoints) passes the line
    peak_beyond_mm: float  # the shooter's mask's furthest point past the line over the clip
    ball_colours: tuple[tuple[float, float, float], ...]  # BGR 0..1 of the balls drawn
    frames: int
    fps: int


@dataclass(frozen=True)
class ReachClip:
    truth: ReachTruth
    profile: TableProfile
    calibration: Calibration  # calibrate_markers on the clip's bare first table render
    frames: ClipFrames  # (t, BGR uint8) rendered lazily; `before()` the table before anyone came
    beyond_mm: tuple[float, ...]  # per frame, shooter's furthest mask point past the line (-inf if not in view)


# ----------------------------------------------------------------------------------------------- cut-outs
@dataclass(frozen=True)
class Cutout:
    name: str
    image: np.ndarray  # BGR float32 0..1
    alpha: np.ndarray  # float32 0..1
    keypoints: np.ndarray  # (17, 3): x, y, confidence in photo px
    head: np.ndarray  # float32 0/1: the head region (a disc round the face keypoints), photo px
    skin: tuple[float, float, float]  # median BGR round the nose
    contour: np.ndarray  # (N, 2) photo px on the alpha = 0.5 outline (plus its inside border)
    contour_head: np.ndarray  # (N,) bool: that outline point lies in the head region
    bbox: tuple[int, int, int, int]  # x0, y0, x1, y1 of alpha > 0


def _finish_cutout(name: str, image: np.ndarray, alpha: np.ndarray, kp: np.ndarray) -> Cutout:
    shoulder = float(np.hypot(*(kp[5, :2] - kp[6, :2])))
    face = [i for i in range(5) if kp[i, 2] >= SURE] or [0]
    centre = kp[face, :2].mean(axis=0)
    ys, xs = np.mgrid[0:alpha.shape[0], 0:alpha.shape[1]]
    head = ((xs - centre[0]) ** 2 + (ys - centre[1]) ** 2 <= (0.62 * shoulder) ** 2).astype(np.float32)
    r = max(2, int(0.1 * shoulder))
    nx, ny = int(kp[0, 0]), int(kp[0, 1])
    window = (slice(max(0, ny - r), ny + r + 1), slice(max(0, nx - r), nx + r + 1))
    pixels = image[window][alpha[window] > 0.5]
    skin = tuple(float(v) for v in np.median(pixels, axis=0)) if len(pixels) else tuple(sprites.SKIN.tolist())
    inside = (alpha > 0.5).astype(np.uint8)
    contours, _ = cv2.findContours(inside, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    contour = np.vstack([c.reshape(-1, 2) for c in contours]).astype(np.float64)
    contour_head = head[contour[:, 1].astype(int), contour[:, 0].astype(int)] > 0
    yy, xx = np.nonzero(alpha > 0)
    bbox = (int(xx.min()), int(yy.min()), int(xx.max()) + 1, int(yy.max()) + 1)
    return Cutout(name, np.ascontiguousarray(image, np.float32), alpha.astype(np.float32), kp, head,
                  (skin[0], skin[1], skin[2]), contour, contour_head, bbox)


def _grabcut_person(photo: str, centre: tuple[float, float]) -> Cutout:
    """A person of a photo cut out by grabCut on their box, seeded with their skeleton as sure foreground."""
    reference = json.loads((BUILD / "pose_reference.json").read_text())["photos"][photo]
    image8 = cv2.imread(str(BUILD / photo))
    if image8 is None:
        raise FileNotFoundError(BUILD / photo)
    index = min(range(len(reference)), key=lambda i: float(np.hypot(*np.subtract(
        np.reshape(reference[i]["box"], (2, 2)).mean(axis=0), centre))))
    bx1, by1, bx2, by2 = reference[index]["box"]
    assert bx1 <= centre[0] <= bx2 and by1 <= centre[1] <= by2, f"nobody stands at {centre} in {photo}"
    bh = by2 - by1
    pad, outer = 0.06 * max(bx2 - bx1, bh), 0.15 * max(bx2 - bx1, bh)
    x1, y1 = max(0, int(bx1 - outer)), max(0, int(by1 - outer))
    x2, y2 = min(image8.shape[1], int(bx2 + outer)), min(image8.shape[0], int(by2 + outer))
    crop8 = np.ascontiguousarray(image8[y1:y2, x1:x2])
    kp = np.array(reference[index]["keypoints"], float) - [x1, y1, 0]
    mask = np.full(crop8.shape[:2], cv2.GC_BGD, np.uint8)
    px1, py1 = max(0, int(bx1 - pad - x1)), max(0, int(by1 - pad - y1))
    px2, py2 = int(bx2 + pad - x1), int(by2 + pad - y1)
    mask[py1:py2, px1:px2] = cv2.GC_PR_BGD
    mask[int(by1 - y1):int(by2 - y1), int(bx1 - x1):int(bx2 - x1)] = cv2.GC_PR_FGD
    stroke = max(2, int(round(0.04 * bh)))
    strokes = np.zeros_like(mask)
    for a, b in SKELETON:
        if kp[a, 2] >= SURE and kp[b, 2] >= SURE:
            cv2.line(strokes, (int(kp[a, 0]), int(kp[a, 1])), (int(kp[b, 0]), int(kp[b, 1])), 1, stroke)
    # a body lies within about a shoulder width of its skeleton: farther is background (a bus, a neighbour)
    far = cv2.distanceTransform((strokes == 0).astype(np.uint8), cv2.DIST_L2, 5)
    shoulder = float(np.hypot(*(kp[5, :2] - kp[6, :2])))
    reach = max(0.1 * bh, 0.55 * shoulder)
    mask[(far > reach) & (mask == cv2.GC_PR_FGD)] = cv2.GC_PR_BGD
    mask[far > 1.5 * reach] = cv2.GC_BGD
    mask[strokes > 0] = cv2.GC_FGD
    bgd, fgd = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    cv2.setRNGSeed(0)
    cv2.grabCut(crop8, mask, (0, 0, 1, 1), bgd, fgd, 5, cv2.GC_INIT_WITH_MASK)  # rect unused with a mask
    fg = ((mask == cv2.GC_FGD) | (mask == cv2.GC_PR_FGD)).astype(np.uint8)
    # keep the pieces the skeleton touches (not a neighbour's coat that happens to look like foreground)
    count, labels = cv2.connectedComponents(fg)
    keep = np.unique(labels[(strokes > 0) & (fg > 0)])
    fg = np.isin(labels, keep[keep > 0]).astype(np.uint8)
    fg = cv2.morphologyEx(fg, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    box_area = (bx2 - bx1) * bh
    fraction = float(fg.sum()) / box_area
    if not 0.25 <= fraction <= 0.85:
        raise ValueError(f"grabCut mask of {photo} at {centre} covers {fraction:.2f} of the box (not 0.25..0.85)")
    alpha = cv2.GaussianBlur(fg.astype(np.float32), (0, 0), 1.0)
    return _finish_cutout(f"{photo}@{int(centre[0])},{int(centre[1])}", crop8.astype(np.float32) / 255, alpha, kp)


def _astronaut() -> Cutout:
    a = people.astronaut()
    kp = a.keypoints.astype(float).copy()
    kp[:, 2] = np.where(kp[:, 2] > 0, 1.0, 0.0)
    return _finish_cutout("astronaut", a.image, a.alpha, kp)


PEOPLE = ("astronaut",) + tuple(f"{photo}@{int(c[0])},{int(c[1])}" for photo, c in PHOTO_PEOPLE)


@lru_cache(maxsize=None)
def cutout(name: str) -> Cutout:
    """A person as the camera sees a player at the line: from behind, facing the table. The photographs face the
    camera, so each is mirrored: a back view puts a person's own left and right where the mirror image of their
    front does (their keypoints keep their names and move with the pixels)."""
    if name == "astronaut":
        return _mirrored(_astronaut())
    for photo, centre in PHOTO_PEOPLE:
        if name == f"{photo}@{int(centre[0])},{int(centre[1])}":
            return _mirrored(_grabcut_person(photo, centre))
    raise KeyError(name)


def _mirrored(cut: Cutout) -> Cutout:
    width = cut.image.shape[1]
    kp = cut.keypoints.copy()
    kp[:, 0] = width - 1 - kp[:, 0]
    return _finish_cutout(cut.name, cut.image[:, ::-1], cut.alpha[:, ::-1], kp)


# ----------------------------------------------------------------------------------------------- the view
@dataclass(frozen=True)
class View:
    preset: str
    profile: TableProfile
    table: np.ndarray  # bare table render, BGR uint8
    calibration: Calibration
    plane_h: np.ndarray
    inv_h: np.ndarray
    board_x: np.ndarray  # (H, W) board mm of every pixel centre on the table plane
    board_y: np.ndarray
    line_y: float
    focal: float
    light_cam: np.ndarray
    camera: object = field(repr=False)
    centre: tuple[float, float, float] = (0.0, 0.0, 1.0)  # the camera's centre, board mm (z: height)

    def px(self, xy: np.ndarray) -> np.ndarray:
        """(N, 2) board mm -> (N, 2) image px."""
        pts = np.asarray(xy, float).reshape(-1, 2)
        return cv2.perspectiveTransform(pts[None], self.plane_h)[0]

    def mm(self, uv: np.ndarray) -> np.ndarray:
        pts = np.asarray(uv, float).reshape(-1, 2)
        return cv2.perspectiveTransform(pts[None], self.inv_h)[0]


def _raised(v: View, x: np.ndarray, y: np.ndarray, height_mm: float) -> tuple[np.ndarray, np.ndarray]:
    """Pixels' table-plane points -> where each pixel's ray is `height_mm` above the table (board mm)."""
    if not height_mm:
        return x, y
    cx, cy, cz = v.centre
    k = np.float32((cz - height_mm) / cz)
    return np.float32(cx) + (x - np.float32(cx)) * k, np.float32(cy) + (y - np.float32(cy)) * k


def _seen(v: View, points: np.ndarray, height_mm: float) -> np.ndarray:
    """Board points `height_mm` above the table -> the table-plane points the camera sees them on."""
    cx, cy, cz = v.centre
    centre = np.array([cx, cy])
    return centre + (np.asarray(points, float) - centre) * cz / (cz - height_mm)


@lru_cache(maxsize=None)
def view(preset: str) -> View:
    profile = load_profile("starcluster")
    camera = make_camera(profile, preset, WIDTH, HEIGHT)
    table, _ = Renderer(profile, camera, Realism(), FPS, 0).render(SimFrame(0, 0.0, ()))
    plane_h = camera.plane_homography()
    inv_h = np.linalg.inv(plane_h)
    vs, us = np.mgrid[0:HEIGHT, 0:WIDTH].astype(np.float64)
    den = inv_h[2, 0] * us + inv_h[2, 1] * vs + inv_h[2, 2]
    bx = ((inv_h[0, 0] * us + inv_h[0, 1] * vs + inv_h[0, 2]) / den).astype(np.float32)
    by = ((inv_h[1, 0] * us + inv_h[1, 1] * vs + inv_h[1, 2]) / den).astype(np.float32)
    line = profile.play_line
    assert line is not None
    table.setflags(write=False)
    return View(preset, profile, table, calibrate_markers(table, profile), plane_h, inv_h, bx, by,
                float(line[0][1]), float(camera.k[0, 0]), camera.r @ LIGHT, camera,
                (float(camera.centre[0]), float(camera.centre[1]), float(camera.centre[2])))


@lru_cache(maxsize=1)
def _noise_banks() -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    rng = np.random.default_rng(20261204)
    banks = []
    for _ in range(3):
        n = np.rint(rng.normal(0, NOISE_SIGMA, (HEIGHT, WIDTH, 3))).astype(np.int16)
        banks.append((np.clip(n, 0, 255).astype(np.uint8), np.clip(-n, 0, 255).astype(np.uint8)))
    return tuple(banks)


# ----------------------------------------------------------------------------------------------- shapes (mm)
def _capsule(x: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray, r: float) -> np.ndarray:
    a0, a1, b0, b1 = float(a[0]), float(a[1]), float(b[0]), float(b[1])  # python floats keep float32 arrays
    ax, ay = x - a0, y - a1
    dx, dy = b0 - a0, b1 - a1
    h = np.clip((ax * dx + ay * dy) / max(dx * dx + dy * dy, 1e-9), 0, 1)
    return np.hypot(ax - dx * h, ay - dy * h) - r


def _box(u: np.ndarray, v: np.ndarray, cu: float, hu: float, hv: float, r: float) -> np.ndarray:
    """Rounded box centred (cu, 0), half sizes hu, hv (including the rounding r)."""
    qu, qv = np.abs(u - cu) - (hu - r), np.abs(v) - (hv - r)
    return np.hypot(np.maximum(qu, 0), np.maximum(qv, 0)) + np.minimum(np.maximum(qu, qv), 0) - r


@dataclass(frozen=True)
class Arm:
    """A sleeve from `shoulder` to the wrist and a hand ending at `tip` (board mm), held flat `height_mm` above the
    table: the camera sees it on the table plane further from itself, by height / (camera height - height)."""
    shoulder: tuple[float, float]
    tip: tuple[float, float]
    sleeve_mm: float
    hand_mm: float  # hand width
    length_mm: float  # wrist to tip
    open: bool
    thumb_side: float  # +1 / -1: which side of the hand (looking along it) the thumb is on
    sleeve: tuple[float, float, float]
    glove: tuple[float, float, float]
    bare: bool
    height_mm: float = 0.0  # held this far above the table (a hand placing or releasing a ball)

    def box(self, margin: float = 0.0) -> tuple[float, float, float, float]:
        r = max(self.sleeve_mm, self.hand_mm) + margin
        xs = (self.shoulder[0], self.tip[0])
        ys = (self.shoulder[1], self.tip[1])
        return min(xs) - r, min(ys) - r, max(xs) + r, max(ys) + r

    def sdf(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Signed distances (mm, < 0 inside) of the sleeve and the hand, and the finger lines' shade term."""
        s, t = np.array(self.shoulder), np.array(self.tip)
        d = t - s
        d /= max(np.linalg.norm(d), 1e-6)
        wrist = t - d * self.length_mm
        if np.dot(wrist - s, d) < 0.25 * self.length_mm:  # arm folded under the body: keep a stub of sleeve
            s = wrist - d * 0.25 * self.length_mm
        w0, w1, d0, d1 = float(wrist[0]), float(wrist[1]), float(d[0]), float(d[1])
        u = (x - w0) * d0 + (y - w1) * d1
        v = -(x - w0) * d1 + (y - w1) * d0
        hw, length = self.hand_mm / 2, self.length_mm
        sleeve = _capsule(x, y, s, wrist - d * 0.05 * length, self.sleeve_mm / 2)
        lines = np.ones_like(u)
        if self.open:
            palm_len = 0.52 * length
            hand = _box(u, v, palm_len / 2, palm_len / 2, hw, 0.3 * hw)
            fr = self.hand_mm / 9
            for k, reach in ((-1.5, 0.80), (-0.5, 0.96), (0.5, 1.0), (1.5, 0.90)):
                vk = k * self.hand_mm / 4.3
                finger = _capsule(u, v, np.array([palm_len * 0.8, vk]), np.array([reach * length - fr, vk]), fr)
                hand = np.minimum(hand, finger)
                lines = np.where((finger < 0) & (u > palm_len * 0.92), 0.8 + 0.2 * np.clip(-1.5 * finger / fr, 0, 1),
                                 lines)
            sv = self.thumb_side
            thumb = _capsule(u, v, np.array([0.12 * length, sv * 0.6 * hw]),
                             np.array([0.42 * length, sv * (hw + 0.1 * length)]), fr * 1.2)
            hand = np.minimum(hand, thumb)
            lines = np.where((thumb < 0) & (sv * v > hw), 0.85 + 0.15 * np.clip(-thumb / fr, 0, 1), lines)
        else:
            hand = _box(u, v, length / 2, length / 2, hw, 0.45 * hw)
            sv = self.thumb_side
            thumb = _capsule(u, v, np.array([0.25 * length, sv * 0.75 * hw]),
                             np.array([0.7 * length, sv * 0.05 * hw]), self.hand_mm / 8)
            lines = np.where(u > 0.78 * length, 0.85 + 0.15 * np.cos(v / hw * 4 * np.pi) ** 2, 1.0)
            lines = np.minimum(lines, np.where(thumb < 0, 0.8 + 0.2 * np.clip(-thumb / 6, 0, 1), 1.0))
        return sleeve, hand, np.clip(lines, 0.6, 1.0) * (1.0 - 0.35 * np.clip(np.abs(v) / hw - 0.4, 0, 1) ** 2)

    def hand_box(self) -> tuple[float, float, float, float]:
        """Board mm box holding the hand (and thumb)."""
        s, t = np.array(self.shoulder), np.array(self.tip)
        d = (t - s) / max(float(np.linalg.norm(t - s)), 1e-6)
        wrist = t - d * self.length_mm
        r = self.hand_mm / 2 + 0.15 * self.length_mm + 10
        return (min(wrist[0], t[0]) - r, min(wrist[1], t[1]) - r, max(wrist[0], t[0]) + r, max(wrist[1], t[1]) + r)

    def alpha(self, x: np.ndarray, y: np.ndarray, mm_per_px: float) -> np.ndarray:
        sleeve, hand, _ = self.sdf(x, y)
        return np.clip(0.5 - np.minimum(sleeve, hand) / mm_per_px, 0, 1).astype(np.float32)

    def paint(self, img: np.ndarray, x: np.ndarray, y: np.ndarray, mm_per_px: float,
              fields: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
        """Draw into `img` (float BGR patch whose pixels' board points are x, y); return the arm's alpha."""
        sleeve, hand, lines = fields
        s, t = np.array(self.shoulder), np.array(self.tip)
        d = (t - s) / max(float(np.linalg.norm(t - s)), 1e-6)
        across = np.abs(-(x - float(s[0])) * float(d[1]) + (y - float(s[1])) * float(d[0])) / (self.sleeve_mm / 2)
        a_sleeve = np.clip(0.5 - sleeve / mm_per_px, 0, 1)[..., None]
        shade = (1.08 - 0.45 * np.clip(across, 0, 1) ** 2)[..., None]
        img[:] = img * (1 - a_sleeve) + np.clip(shade * np.array(self.sleeve, np.float32), 0, 1) * a_sleeve
        a_hand = np.clip(0.5 - hand / mm_per_px, 0, 1)[..., None]
        colour = np.array(self.glove, np.float32)
        gloss = 0.0 if self.bare else 0.08
        hand_rgb = np.clip(lines[..., None] * 1.05 * colour + gloss * lines[..., None] ** 8, 0, 1)
        img[:] = img * (1 - a_hand) + hand_rgb * a_hand
        return np.maximum(a_sleeve[..., 0], a_hand[..., 0]).astype(np.float32)


# ----------------------------------------------------------------------------------------------- a clip's plan
@dataclass(frozen=True)
class Ball:
    xy: tuple[float, float]
    colour: tuple[float, float, float]


@dataclass(frozen=True)
class FramePlan:
    photo: np.ndarray  # 2x3 affine photo px -> image px
    arm: Arm | None  # the shooter's drawn arm
    umpire: Arm | None
    shadow: tuple[Arm, float, float] | None  # the arm casting it, shift forward (mm), darkening factor
    balls: tuple[Ball, ...]
    gain: float


@dataclass(frozen=True)
class Plan:
    kind: str
    preset: str
    person: str
    frames: tuple[FramePlan, ...]
    noise_seed: int


def _rect(points: np.ndarray) -> tuple[int, int, int, int] | None:
    """Pixel rect (x0, y0, x1, y1) holding `points` (image px), clipped to the frame; None when off it."""
    x0, y0 = np.floor(points.min(axis=0)).astype(int) - 2
    x1, y1 = np.ceil(points.max(axis=0)).astype(int) + 3
    x0, y0, x1, y1 = max(int(x0), 0), max(int(y0), 0), min(int(x1), WIDTH), min(int(y1), HEIGHT)
    return (x0, y0, x1, y1) if x0 < x1 and y0 < y1 else None


def _arm_rect(v: View, arm: Arm, shift: float = 0.0, margin: float = 10.0) -> tuple[int, int, int, int] | None:
    x0, y0, x1, y1 = arm.box(margin)
    corners = np.array([[x0, y0 + shift], [x1, y0 + shift], [x1, y1 + shift], [x0, y1 + shift]])
    return _rect(v.px(_seen(v, corners, arm.height_mm)))


def _arm_fields(v: View, arm: Arm, rect: tuple[int, int, int, int], shift: float = 0.0
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sleeve and hand signed distances (mm) and the hand's shade over pixel `rect`; the hand's only near it."""
    x0, y0, x1, y1 = rect
    bx, by = _raised(v, v.board_x[y0:y1, x0:x1], v.board_y[y0:y1, x0:x1], arm.height_mm)
    by = by - np.float32(shift)
    hb = arm.hand_box()
    hand_rect = _rect(v.px(_seen(v, np.array([[hb[0], hb[1] + shift], [hb[2], hb[1] + shift],
                                              [hb[2], hb[3] + shift], [hb[0], hb[3] + shift]]), arm.height_mm)))
    hand = np.full(bx.shape, np.float32(1e6), np.float32)
    lines = np.ones(bx.shape, np.float32)
    s, t = np.array(arm.shoulder), np.array(arm.tip)
    d = (t - s) / max(float(np.linalg.norm(t - s)), 1e-6)
    wrist = t - d * arm.length_mm
    if np.dot(wrist - s, d) < 0.25 * arm.length_mm:
        s = wrist - d * 0.25 * arm.length_mm
    sleeve = _capsule(bx, by, s, wrist - d * 0.05 * arm.length_mm, arm.sleeve_mm / 2)
    if hand_rect is not None:
        hx0, hy0 = max(hand_rect[0], x0), max(hand_rect[1], y0)
        hx1, hy1 = min(hand_rect[2], x1), min(hand_rect[3], y1)
        if hx0 < hx1 and hy0 < hy1:
            sub = (slice(hy0 - y0, hy1 - y0), slice(hx0 - x0, hx1 - x0))
            _, hand[sub], lines[sub] = arm.sdf(bx[sub], by[sub])
    return sleeve, hand, lines


@lru_cache(maxsize=256)
def _arm_alpha(preset: str, arm: Arm) -> tuple[tuple[int, int, int, int], np.ndarray] | None:
    v = view(preset)
    rect = _arm_rect(v, arm)
    if rect is None:
        return None
    sleeve, hand, _ = _arm_fields(v, arm, rect)
    return rect, np.clip(0.5 - np.minimum(sleeve, hand) / _mm_per_px(v, rect, arm.height_mm), 0, 1).astype(np.float32)


def _mm_per_px(v: View, rect: tuple[int, int, int, int], height_mm: float = 0.0) -> float:
    x0, y0, x1, y1 = rect
    cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
    cx, cy = min(cx, WIDTH - 2), min(cy, HEIGHT - 2)
    gx = np.hypot(v.board_x[cy, cx + 1] - v.board_x[cy, cx], v.board_y[cy, cx + 1] - v.board_y[cy, cx])
    gy = np.hypot(v.board_x[cy + 1, cx] - v.board_x[cy, cx], v.board_y[cy + 1, cx] - v.board_y[cy, cx])
    return float(np.sqrt(gx * gy)) * (v.centre[2] - height_mm) / v.centre[2]


def _photo_rect(cut: Cutout, affine: np.ndarray) -> tuple[int, int, int, int] | None:
    x0, y0, x1, y1 = cut.bbox
    corners = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], float)
    return _rect(corners @ affine[:, :2].T + affine[:, 2])


def _shifted(affine: np.ndarray, rect: tuple[int, int, int, int]) -> np.ndarray:
    out = affine.copy()
    out[:, 2] -= (rect[0], rect[1])
    return out


def _shooter_alpha(v: View, cut: Cutout, fp: FramePlan) -> np.ndarray:
    """The shooter's composited alpha (photo and drawn arm), full frame float32."""
    alpha = np.zeros((HEIGHT, WIDTH), np.float32)
    rect = _photo_rect(cut, fp.photo)
    if rect is not None:
        x0, y0, x1, y1 = rect
        alpha[y0:y1, x0:x1] = cv2.warpAffine(cut.alpha, _shifted(fp.photo, rect), (x1 - x0, y1 - y0),
                                             flags=cv2.INTER_LINEAR, borderValue=0)
    found = _arm_alpha(v.preset, fp.arm) if fp.arm is not None else None
    if found is not None:
        (x0, y0, x1, y1), a = found
        if True:
            region = alpha[y0:y1, x0:x1]
            region[:] = 1 - (1 - region) * (1 - a)
    return alpha


def _shooter_y(v: View, cut: Cutout, fp: FramePlan) -> tuple[np.ndarray, np.ndarray]:
    """The shooter's composited alpha and, per pixel, the board y of what shows there: the photo's on the table
    plane, the drawn arm's at its height (where it covers the photo)."""
    alpha = _shooter_alpha(v, cut, fp)
    y = v.board_y.copy()
    found = _arm_alpha(v.preset, fp.arm) if fp.arm is not None else None
    if found is not None:
        (x0, y0, x1, y1), a = found
        assert fp.arm is not None
        _, raised = _raised(v, v.board_x[y0:y1, x0:x1], v.board_y[y0:y1, x0:x1], fp.arm.height_mm)
        y[y0:y1, x0:x1] = np.where(a > 0.5, raised, y[y0:y1, x0:x1])
    return alpha, y


def _beyond(v: View, cut: Cutout, fp: FramePlan) -> float:
    alpha, y = _shooter_y(v, cut, fp)
    inside = alpha > 0.5
    if not inside.any():
        return float("-inf")
    return float(y[inside].max()) - v.line_y


def _render(v: View, cut: Cutout, plan: Plan, index: int, people: bool = True) -> np.ndarray:
    """Frame `index` of the clip; `people` False: its table, balls, light and noise alone."""
    fp = plan.frames[index]
    if not people:
        fp = replace(fp, arm=None, umpire=None, shadow=None)
    img = v.table.copy()

    def patch(rect: tuple[int, int, int, int]) -> tuple[np.ndarray, tuple[slice, slice]]:
        region = (slice(rect[1], rect[3]), slice(rect[0], rect[2]))
        return img[region].astype(np.float32) * (1 / 255), region

    def put(f: np.ndarray, region: tuple[slice, slice]) -> None:
        img[region] = np.clip(f * 255 + 0.5, 0, 255).astype(np.uint8)

    if fp.shadow is not None:  # a soft shadow of the arm, cast forward on the table
        arm, shift, factor = fp.shadow
        arm = replace(arm, height_mm=0.0)  # the shadow lies on the table
        rect = _arm_rect(v, arm, shift, margin=40.0)
        if rect is not None:
            f, region = patch(rect)
            mmpp = _mm_per_px(v, rect)
            sleeve, hand, _ = _arm_fields(v, arm, rect, shift)
            s = np.clip(0.5 - np.minimum(sleeve, hand) / mmpp, 0, 1).astype(np.float32)
            s = cv2.GaussianBlur(s, (0, 0), max(1.0, 12.0 / mmpp))
            f *= (1 - (1 - factor) * s)[..., None]
            put(f, region)
    for ball in fp.balls:
        r_mm = v.profile.ball_diameter_mm / 2
        centre = np.array([[ball.xy[0], ball.xy[1], r_mm]])
        uv, depth = v.camera.project(centre)  # type: ignore[attr-defined]
        ground = centre.copy()
        ground[:, :2] -= LIGHT[:2] / LIGHT[2] * r_mm
        ground[:, 2] = 0
        g_uv, _ = v.camera.project(ground)  # type: ignore[attr-defined]
        r_px = v.focal * r_mm / float(depth[0])
        rect = _rect(np.array([uv[0] - 4 * r_px - 3, uv[0] + 4 * r_px + 3, g_uv[0] - 4 * r_px, g_uv[0] + 4 * r_px]))
        if rect is None:
            continue
        f, region = patch(rect)
        o = np.array([rect[0], rect[1]], float)
        sprites.draw_shadow(f, tuple(g_uv[0] - o), r_px, 0.55)
        sprites.draw_ball(f, tuple(uv[0] - o), r_px, np.array(ball.colour, np.float32), "glass", v.light_cam)
        put(f, region)
    rect = _photo_rect(cut, fp.photo) if people else None
    if rect is not None:
        f, region = patch(rect)
        size = (rect[2] - rect[0], rect[3] - rect[1])
        aff = _shifted(fp.photo, rect)
        warped = cv2.warpAffine(cut.image, aff, size, flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0))
        a = cv2.warpAffine(cut.alpha, aff, size, flags=cv2.INTER_LINEAR, borderValue=0)[..., None]
        put(f * (1 - a) + warped * a, region)
    for limb in (fp.umpire, fp.arm):
        if limb is None:
            continue
        rect = _arm_rect(v, limb)
        if rect is None:
            continue
        f, region = patch(rect)
        x, y = _raised(v, v.board_x[region], v.board_y[region], limb.height_mm)
        limb.paint(f, x, y, _mm_per_px(v, rect, limb.height_mm), _arm_fields(v, limb, rect))
        put(f, region)
    lut = np.clip(np.arange(256) * fp.gain + 0.5, 0, 255).astype(np.uint8)
    out = cv2.LUT(img, lut)
    pos, neg = _noise_banks()[(plan.noise_seed + 7 * index) % 3]
    cv2.add(out, pos, out)
    cv2.subtract(out, neg, out)
    return out


class ClipFrames:
    """The clip's frames, rendered on demand: call it for an iterator of (t, frame); `frame(i)` for one."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan

    def __call__(self) -> Iterator[tuple[float, np.ndarray]]:
        for i in range(len(self.plan.frames)):
            yield i / FPS, self.frame(i)

    def frame(self, index: int) -> np.ndarray:
        return _render(view(self.plan.preset), cutout(self.plan.person), self.plan, index)

    def before(self) -> np.ndarray:
        """The table as the camera saw it before anyone came to the line: the first frame without people."""
        return _render(view(self.plan.preset), cutout(self.plan.person), self.plan, 0, people=False)

    def shooter_alpha(self, index: int) -> np.ndarray:
        """The shooter's composited alpha at frame `index` (float32, HxW): what the truth is measured on."""
        return _shooter_alpha(view(self.plan.preset), cutout(self.plan.person), self.plan.frames[index])

    def shooter_y(self, index: int) -> np.ndarray:
        """Per pixel, the board y (mm) of the shooter's part showing there (the arm at its height)."""
        return _shooter_y(view(self.plan.preset), cutout(self.plan.person), self.plan.frames[index])[1]

    def bare(self) -> np.ndarray:
        return view(self.plan.preset).table


# ----------------------------------------------------------------------------------------------- placing
def _similarity(v: View, cut: Cutout, anchor: np.ndarray, board_xy: tuple[float, float], shoulder_mm: float,
                tilt_deg: float) -> np.ndarray:
    """2x3 photo px -> image px: upright along the table's forward direction, photo `anchor` on `board_xy`."""
    tip, ahead, side = v.px(np.array([board_xy, (board_xy[0], board_xy[1] + 50),
                                      (board_xy[0] + shoulder_mm, board_xy[1])]))
    forward = ahead - tip
    kp = cut.keypoints
    scale = np.linalg.norm(side - tip) / np.linalg.norm(kp[5, :2] - kp[6, :2])
    angle = np.arctan2(forward[1], forward[0]) + np.pi / 2 + np.radians(tilt_deg)
    rot = scale * np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    return np.column_stack([rot, tip - rot @ anchor])


def _outline_beyond(v: View, cut: Cutout, affine: np.ndarray) -> np.ndarray:
    xy = cut.contour @ affine[:, :2].T + affine[:, 2]
    return v.mm(xy)[:, 1] - v.line_y


def _place_front(v: View, cut: Cutout, x_mm: float, front_mm: float, shoulder_mm: float,
                 tilt_deg: float) -> np.ndarray:
    """Affine putting the photo's furthest outline point `front_mm` past the line (negative: behind)."""
    sure = cut.keypoints[:, 2] >= SURE
    anchor = cut.keypoints[sure][np.argmin(cut.keypoints[sure, 1]), :2]
    y = v.line_y + front_mm
    affine = _similarity(v, cut, anchor, (x_mm, y), shoulder_mm, tilt_deg)
    for _ in range(4):
        error = front_mm - float(_outline_beyond(v, cut, affine).max())
        if abs(error) < 0.3:
            break
        y += error
        affine = _similarity(v, cut, anchor, (x_mm, y), shoulder_mm, tilt_deg)
    return affine


def _head_beyond(v: View, cut: Cutout, affine: np.ndarray) -> float:
    """How far past the line the head is: the mean of its sure keypoints (nose, eyes, ears), board mm."""
    sure = cut.keypoints[:5, 2] >= SURE
    return float(_kp_board(v, cut, affine)[:5][sure, 1].mean()) - v.line_y


def _kp_board(v: View, cut: Cutout, affine: np.ndarray) -> np.ndarray:
    xy = cut.keypoints[:, :2] @ affine[:, :2].T + affine[:, 2]
    return v.mm(xy)


def _motion(rng: random.Random, start: float, peak: float, speed: float, hold: int,
            n: int = FRAMES) -> tuple[np.ndarray, float]:
    """Per-frame value going from `start` to `peak` at `speed` mm/s, holding `hold` frames, then back."""
    rest = rng.randint(0, 3)
    dist = abs(peak - start)
    room = n - 3 - rest - hold
    speed = max(speed, dist * FPS / room)
    move = dist * FPS / speed
    out = []
    for i in range(n):
        f = i - rest
        if f <= 0:
            k = 0.0
        elif f < move:
            k = f / move
        elif f < move + hold:
            k = 1.0
        else:
            k = max(0.0, 1.0 - (f - move - hold) / move)
        out.append(start + (peak - start) * k)
    return np.array(out), speed


def _colour(rng: random.Random, saturated: bool = True) -> tuple[float, float, float]:
    if saturated and rng.random() < 0.5:
        return GLOVES[rng.randrange(len(GLOVES))]
    return (rng.uniform(0.05, 0.9), rng.uniform(0.05, 0.9), rng.uniform(0.05, 0.9))


def _sample(cut: Cutout, at: np.ndarray, radius: float) -> tuple[float, float, float] | None:
    x, y, r = int(at[0]), int(at[1]), max(2, int(radius))
    region = (slice(max(0, y - r), y + r + 1), slice(max(0, x - r), x + r + 1))
    pixels = cut.image[region][cut.alpha[region] > 0.5]
    if len(pixels) < 10:
        return None
    c = np.median(pixels, axis=0)
    return (float(c[0]), float(c[1]), float(c[2]))


def _shooter_arm(rng: random.Random, v: View, cut: Cutout, affine: np.ndarray, side: str) -> Callable[[float], Arm]:
    """An arm from the `side` shoulder keypoint; returns tip-beyond (mm) -> Arm."""
    kp_mm = _kp_board(v, cut, affine)
    i = 5 if side == "left" else 6
    other = 6 if side == "left" else 5
    shoulder = kp_mm[i]
    outward = float(np.sign(shoulder[0] - kp_mm[other, 0])) or 1.0
    tip_x = float(shoulder[0] + outward * rng.uniform(10, 70))
    shoulder_px = float(np.hypot(*(cut.keypoints[5, :2] - cut.keypoints[6, :2])))
    sleeve = _sample(cut, cut.keypoints[i + 2, :2], 0.08 * shoulder_px) \
        if cut.keypoints[i + 2, 2] >= SURE and rng.random() < 0.6 else None
    sleeve = sleeve or _colour(rng)
    bare = rng.random() < 0.55
    if bare:
        base = np.array(cut.skin) * rng.uniform(0.92, 1.08)
        glove = (float(base[0]), float(base[1]), float(base[2]))
    else:
        glove = GLOVES[rng.randrange(len(GLOVES))] if rng.random() < 0.7 else _colour(rng, False)
    is_open = rng.random() < 0.5
    length = rng.uniform(180, 200) if is_open else rng.uniform(90, 100)
    sleeve_mm, hand_mm = rng.uniform(80, 100), rng.uniform(75, 100)
    thumb = -outward  # the thumb towards the body's middle, palm down
    height = rng.uniform(*HAND_HEIGHT_MM)

    def arm(tip_beyond: float) -> Arm:
        return Arm((float(shoulder[0]), float(shoulder[1])), (tip_x, v.line_y + tip_beyond), sleeve_mm, hand_mm,
                   length, is_open, thumb, sleeve, glove, bare, height)
    return arm


def _clear_side(rng: random.Random, cut: Cutout) -> str:
    sides = [s for s, i in (("left", 5), ("right", 6)) if cut.keypoints[i, 2] >= SURE]
    return rng.choice(sides or ["left", "right"])


def _plan(kind: str, rng: random.Random, noise_seed: int) -> tuple[Plan, dict]:
    preset = rng.choice(PRESETS)
    person = rng.choice(PEOPLE)
    v, cut = view(preset), cutout(person)
    shoulder_mm = rng.uniform(300, 420)
    x_mm = rng.uniform(150, 490)
    tilt = rng.uniform(-8, 8)
    g = rng.uniform(0.8, 1.2)
    gains = [1 + (g - 1) * i / (FRAMES - 1) for i in range(FRAMES)]
    meta: dict = {"hand": None, "part": None, "ball_colours": []}
    photos: list[np.ndarray]
    arms: list[Arm | None] = [None] * FRAMES
    umpires: list[Arm | None] = [None] * FRAMES
    shadows: list[tuple[Arm, float, float] | None] = [None] * FRAMES
    balls: list[tuple[Ball, ...]] = [()] * FRAMES
    if kind == "head_lean":  # the head itself (its keypoints) goes over the line; its hair and brow lead further
        target = rng.uniform(35, 150)
        start = -rng.uniform(60, 180)
        heads, _ = _motion(rng, start, target, rng.uniform(300, 600), rng.randint(3, 10))
        lead = -_head_beyond(v, cut, _place_front(v, cut, x_mm, 0.0, shoulder_mm, tilt))  # outline ahead of the head
        photos = [_place_front(v, cut, x_mm, float(h) + lead, shoulder_mm, tilt) for h in heads]
        meta["part"] = "head"
    elif kind == "clear":
        front = -rng.uniform(40, 300 if preset == "overhead" else 150)  # else out of view
        amp = min(20.0, (-front - 20) / 2)
        phase, sway = rng.uniform(0, 2 * np.pi), rng.uniform(-30, 30)
        photos = [_place_front(v, cut, x_mm + sway * np.sin(2 * np.pi * i / FRAMES + phase),
                               front + amp * np.sin(2 * np.pi * 0.7 * i / FRAMES + phase), shoulder_mm, tilt)
                  for i in range(FRAMES)]
    else:
        body = _place_front(v, cut, x_mm, -rng.uniform(40, 200), shoulder_mm, tilt)
        photos = [body] * FRAMES
        if kind in ("arm_reach", "hover", "shadow", "ball_back", "lift_between_shots"):
            side = _clear_side(rng, cut)
            make = _shooter_arm(rng, v, cut, body, side)
            probe = make(0.0)
            meta["hand"] = ("bare" if probe.bare else "gloved", "open" if probe.open else "closed")
            shoulder_beyond = probe.shoulder[1] - v.line_y
            peak = {"arm_reach": rng.uniform(32, 160), "hover": -rng.uniform(10, 20),
                    "shadow": -(rng.uniform(10, 20) if rng.random() < 0.6 else rng.uniform(40, 80)),
                    "ball_back": -rng.uniform(10, 60), "lift_between_shots": rng.uniform(100, 300)}[kind]
            start = min(max(-rng.uniform(150, 300), shoulder_beyond + probe.length_mm + 100), peak - 60)
            hold = FRAMES if kind == "ball_back" else rng.randint(3, 10)
            tips, _ = _motion(rng, start, peak, rng.uniform(300, 900), min(hold, FRAMES - 12))
            if kind == "ball_back":  # the hand stays at its hover once there
                top = int(np.argmax(tips))
                tips[top:] = tips[top]
            arms = [make(float(t)) for t in tips]
            if kind in ("arm_reach", "lift_between_shots"):
                meta["part"] = f"{side}_hand"
            if kind == "shadow":
                shift = rng.uniform(max(60.0, -peak + 40), 150)
                factor = rng.uniform(0.45, 0.75)
                shadows = [(a, shift, factor) if a is not None else None for a in arms]
            if kind == "ball_back":
                colours = [PLAYER_COLOURS[rng.choice(PLAYERS)] for _ in range(2)]
                meta["ball_colours"] = colours
                r = v.profile.ball_diameter_mm / 2
                bx = float(np.clip(x_mm + rng.uniform(-150, 150), 80, 560))
                y0, speed = v.line_y + rng.uniform(150, 300), rng.uniform(200, 600)
                speed = max(speed, (y0 - v.line_y + 60) * FPS / (FRAMES - 4))
                back = [max(y0 - speed * i / FPS, v.line_y - 60) for i in range(FRAMES)]
                top = int(np.argmax(tips))
                tip_arm = arms[top]
                assert tip_arm is not None
                out_speed = rng.uniform(300, 800)
                release: list[tuple[float, float] | None] = []
                for i in range(FRAMES):
                    if i < top:
                        release.append(None)
                    else:
                        ry = tip_arm.tip[1] + r + 3 + out_speed * (i - top) / FPS
                        release.append((tip_arm.tip[0], ry) if ry < v.profile.table.y_max - 30 else None)
                balls = [tuple([Ball((bx, back[i]), colours[0])]
                               + ([Ball(release[i], colours[1])]  # type: ignore[arg-type]
                                  if release[i] is not None else []))
                         for i in range(FRAMES)]
    if kind == "umpire":
        from_left = rng.random() < 0.5
        width = v.profile.table.x_max
        uy = v.line_y + rng.uniform(120, 600)
        ux = -rng.uniform(120, 250) if from_left else width + rng.uniform(120, 250)
        depth = rng.uniform(100, 400)
        bare = rng.random() < 0.5
        skin = SKIN_TONES[rng.randrange(len(SKIN_TONES))]
        glove = skin if bare else GLOVES[rng.randrange(len(GLOVES))]
        is_open = rng.random() < 0.5
        length = rng.uniform(180, 200) if is_open else rng.uniform(90, 100)
        sleeve, sw, hw = _colour(rng), rng.uniform(80, 100), rng.uniform(75, 100)
        dy = rng.uniform(-60, 60)
        height = rng.uniform(*HAND_HEIGHT_MM)
        reach, _ = _motion(rng, -40.0, depth, rng.uniform(300, 900), rng.randint(3, 10))
        sign = 1.0 if from_left else -1.0
        umpires = [Arm((ux, uy), ((0.0 if from_left else width) + sign * float(d), uy + dy), sw, hw, length,
                       is_open, sign, sleeve, glove, bare, height) for d in reach]
    frames = tuple(FramePlan(photos[i], arms[i], umpires[i], shadows[i], balls[i], gains[i]) for i in range(FRAMES))
    return Plan(kind, preset, person, frames, noise_seed), meta


def _valid(kind: str, plan: Plan, beyond: list[float], meta: dict) -> bool:
    peak = max(beyond)
    top = int(np.argmax(beyond))
    arm = plan.frames[top].arm
    if arm is not None:  # the drawn arm is in view where it reaches furthest, its hand over the Play Line's span
        found = _arm_alpha(plan.preset, arm)
        if found is None or not (found[1] > 0.5).any():
            return False
        line = view(plan.preset).profile.play_line
        assert line is not None
        if not min(line[0][0], line[1][0]) + 40 <= arm.tip[0] <= max(line[0][0], line[1][0]) - 40:
            return False
    if kind == "hover" and not -25 < peak:
        return False
    if kind in POSITIVE_KINDS or kind == "lift_between_shots":
        if peak < 30:
            return False
        v, cut = view(plan.preset), cutout(plan.person)
        top = int(np.argmax(beyond))
        photo_beyond = _outline_beyond(v, cut, plan.frames[top].photo)
        if kind == "head_lean":  # the head leads, and its keypoints are 30 mm or more past the line
            head, rest = photo_beyond[cut.contour_head], photo_beyond[~cut.contour_head]
            return len(head) > 0 and head.max() >= peak - 2.0 and (len(rest) == 0 or rest.max() < head.max() - 1.0) \
                and _head_beyond(v, cut, plan.frames[top].photo) >= 30
        # the hand leads: the photo itself stays behind the line in every frame
        return all(_outline_beyond(v, cut, fp.photo).max() < -5.0 for fp in plan.frames)
    return peak < -2.0  # hover, shadow, ball_back, umpire, clear: the shooter never reaches the line


def _make_clip(kind: str, index: int, seed: int) -> ReachClip:
    rng = random.Random(f"line_reach:{seed}:{index}")
    for attempt in range(20):
        plan, meta = _plan(kind, rng, rng.randrange(1 << 30))
        v, cut = view(plan.preset), cutout(plan.person)
        beyond = [_beyond(v, cut, fp) for fp in plan.frames]
        if _valid(kind, plan, beyond, meta):
            break
    else:
        raise RuntimeError(f"line_reach: no valid {kind} clip for seed {seed} index {index}")
    if kind == "head_lean":  # a head is over the line where it is, not where its hair is seen (docs/pose.md)
        beyond_head = [_head_beyond(v, cut, fp.photo) for fp in plan.frames]
        crossing = next((i / FPS for i, b in enumerate(beyond_head) if b > 0), None)
    else:
        crossing = next((i / FPS for i, b in enumerate(beyond) if b > 0), None)
    window = None if kind == "lift_between_shots" else (0.0, FRAMES / FPS)
    foul = kind in POSITIVE_KINDS
    truth = ReachTruth(kind, f"{index:03d}-{kind}-{plan.preset}-{plan.person}-s{seed}", seed, plan.preset, plan.person,
                       meta["hand"], foul, meta["part"] if foul else None, window,
                       crossing, float(max(beyond)), tuple(tuple(c) for c in meta["ball_colours"]), FRAMES, FPS)
    return ReachClip(truth, v.profile, v.calibration, ClipFrames(plan), tuple(beyond))


def _kind_sequence(count: int, kinds: Sequence[str] | None) -> list[str]:
    if kinds is None:
        cycle: Sequence[str] = CYCLE
    else:
        unknown = set(kinds) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown kinds {sorted(unknown)}; known: {KINDS}")
        cycle = [k for k in CYCLE if k in set(kinds)]
    return [cycle[i % len(cycle)] for i in range(count)]


def reach_clips(count: int, seed: int = 0, kinds: Sequence[str] | None = None) -> list[ReachClip]:
    """`count` clips, kinds cycled (arm_reach 4 : every other kind 1, so about half are fouls), reproducible."""
    return [_make_clip(kind, i, seed) for i, kind in enumerate(_kind_sequence(count, kinds))]


def reach_clip(index: int, seed: int = 0, kinds: Sequence[str] | None = None) -> ReachClip:
    """Clip `index` of `reach_clips(count, seed, kinds)` (any count above it), without making the others."""
    return _make_clip(_kind_sequence(index + 1, kinds)[index], index, seed)
