"""Turn a simulated `Match` into camera frames and the per-frame truth of what they show.

One `Renderer` owns the camera, the table texture and the seeded effects; for
each `SimFrame` it draws the table (moved by any `TableShift`), soft shadows,
shaded balls at their true 3-D centres, a reaching hand and the player's
photo, then lighting, camera shake and noise. Every truth pixel is computed
through the same projection and the same shake homography as the pixels, so
truth and video agree by construction (the tests check it on decoded video).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from calibration.profile import TableProfile
from calibration.render import Bgr8, render_board, warp_to_camera
from rules.errors import InputError
from simulation import people, sprites
from simulation.camera import Camera, shift_matrix
from simulation.games import simulated_game
from simulation.realism import Effects, Realism
from simulation.trajectory import Match, SimFrame
from vision.video_io import VideoWriter

Colour = tuple[float, float, float]  # BGR, 0..1
# Ball colours, distinct in hue: player id -> colour.
PLAYER_COLOURS: dict[str, Colour] = {
    "red": (0.12, 0.12, 0.85),
    "blue": (0.85, 0.38, 0.08),
    "yellow": (0.10, 0.82, 0.95),
    "green": (0.25, 0.70, 0.10),
}
LIGHT = np.array([-0.35, 0.45, 1.0]) / np.linalg.norm([-0.35, 0.45, 1.0])  # towards the lamp, board axes
HAND_HEIGHT_MM = 70.0
ARM_WIDTH_MM = 85.0
OCCLUDED_FRACTION = 0.4
MAX_BLUR_PX = 60.0
MIN_DEPTH_MM = 50.0  # a ball counts as occluded when this much of it is covered


@dataclass(frozen=True)
class BallTruth:
    id: int
    owner: str
    x: float
    y: float
    z: float
    u: float
    v: float
    r_px: float
    visible: bool
    occluded: bool
    moving: bool


@dataclass(frozen=True)
class FrameTruth:
    index: int
    t: float
    balls: tuple[BallTruth, ...]
    shake_deg: tuple[float, float, float]
    hand_px: tuple[float, float] | None = None
    person: dict | None = None  # keypoints (px and board mm) and which cross the Play Line
    table_shift: tuple[float, float, float] = (0.0, 0.0, 0.0)


class Renderer:
    def __init__(self, profile: TableProfile, camera: Camera, realism: Realism, fps: float, seed: int,
                 board_px_per_mm: float | None = None, colours: Mapping[str, Colour] | None = None,
                 seat_paint: Mapping[int, Bgr8] | None = None) -> None:
        self.profile, self.camera, self.realism = profile, camera, realism
        self.colours = {**PLAYER_COLOURS, **(colours or {})}  # a table variant brings its own ball colours
        self.radius = profile.ball_diameter_mm / 2
        game = simulated_game(profile.game)
        self.material = game.ball_material
        self.person_at_play_line = game.player_at_play_line
        self.light_cam = camera.r @ LIGHT
        # enough texture resolution for the image: about 1.5 texture pixels per image pixel
        corners = np.array([[0, 0, 0], [profile.table.x_max, profile.table.y_max, 0]])
        table_px = np.hypot(*np.ptp(camera.project(corners)[0], axis=0))
        diag_mm = np.hypot(profile.table.x_max, profile.table.y_max)
        self.ppm = board_px_per_mm or float(np.clip(1.5 * table_px / diag_mm, 0.5, 3.0))
        self.board = render_board(profile, self.ppm, seat_paint)  # a variant paints rows in its own ball colours
        self.floor = _floor(camera.width, camera.height, seed)
        self.effects = Effects(realism, camera.width, camera.height, fps, seed)
        self._background_key: tuple | None = None
        self._background: np.ndarray | None = None

    def colour_of(self, owner: str) -> np.ndarray:
        return np.array(self.colours.get(owner, (0.6, 0.6, 0.6)), np.float32)

    def _table(self, shift: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
        s = shift_matrix(self.profile, *shift)
        if self._background_key != shift:
            h = self.camera.plane_homography(s)
            img = warp_to_camera(self.board, self.profile, self.ppm, h, (self.camera.width, self.camera.height),
                                 background=self.floor)
            self._background, self._background_key = img.astype(np.float32) / 255, shift
        assert self._background is not None
        return self._background.copy(), s

    def render(self, frame: SimFrame) -> tuple[np.ndarray, FrameTruth]:
        cam = self.camera
        ts = frame.table_shift
        shift = (ts.dx, ts.dy, ts.rotation_deg) if self.realism.table_bump else (0.0, 0.0, 0.0)
        img, s = self._table(shift)
        balls = [b for b in frame.balls if b.on_table]
        world = np.array([[*(s @ [b.x, b.y, 1.0])[:2], b.z] for b in balls]).reshape(-1, 3)
        uv, depth = cam.project(world)
        r_px = cam.k[0, 0] * self.radius / np.maximum(depth, 1e-6)
        # shadows first: the contact point moved away from the lamp by the ball's height
        ground = world.copy()
        ground[:, :2] -= LIGHT[:2] / LIGHT[2] * world[:, 2:3]
        ground[:, 2] = 0
        g_uv, _ = cam.project(ground)
        for i, b in enumerate(balls):
            if depth[i] < MIN_DEPTH_MM:
                continue
            strength = 0.55 * float(np.exp(-(b.z - self.radius) / 120.0))
            draw_r = r_px[i] * (1 + (b.z - self.radius) / 150.0)
            sprites.draw_shadow(img, (g_uv[i, 0], g_uv[i, 1]), draw_r, strength)
        for i in np.argsort(-depth, kind="stable"):
            b = balls[i]
            if depth[i] < MIN_DEPTH_MM:
                continue  # at or behind the lens: nothing sensible to draw
            blur = (0.0, 0.0)
            if b.moving and self.realism.motion_blur > 0:
                dt = self.realism.motion_blur / self.effects.fps
                end = world[i] + np.array([*(s[:2, :2] @ [b.vx * dt, b.vy * dt]), 0.0])
                e_uv, _ = cam.project(end[None])
                blur = (float(e_uv[0, 0] - uv[i, 0]), float(e_uv[0, 1] - uv[i, 1]))
                length = np.hypot(*blur)
                if not np.isfinite(length) or length > MAX_BLUR_PX:  # a streak longer than that reads as a line
                    scale = MAX_BLUR_PX / length if np.isfinite(length) else 0.0
                    blur = (blur[0] * scale, blur[1] * scale)
            sprites.draw_ball(img, (uv[i, 0], uv[i, 1]), r_px[i], self.colour_of(b.owner), self.material,
                              self.light_cam, blur)
        cover = np.zeros((cam.height, cam.width), bool)
        hand_px = None
        if frame.hand is not None and self.realism.hand:
            hand_px, mask = self._hand(img, frame, s)
            cover |= mask
        person = None
        if frame.person is not None and self.realism.person and self.person_at_play_line:
            person, mask = self._person(img, frame, s)
            cover |= mask
        angles = self.effects.shake_angles(frame.t)
        shake_h = cam.shake_homography(angles) if any(angles) else None
        out = self.effects.finish(img, frame.t, shake_h)
        truth_uv = _apply(shake_h, uv)
        truths = []
        for i, b in enumerate(balls):
            occluded = _covered(cover, uv[i], r_px[i]) >= OCCLUDED_FRACTION
            inside = 0 <= truth_uv[i, 0] < cam.width and 0 <= truth_uv[i, 1] < cam.height
            truths.append(BallTruth(b.id, b.owner, b.x, b.y, b.z, float(truth_uv[i, 0]), float(truth_uv[i, 1]),
                                    float(r_px[i]), bool(inside and not occluded), bool(occluded), b.moving))
        if hand_px is not None:
            hand_px = tuple(float(v) for v in _apply(shake_h, np.array([hand_px]))[0])
        if person is not None:
            kp = np.array(person["keypoints_px"])
            kp[:, :2] = _apply(shake_h, kp[:, :2])
            person["keypoints_px"] = kp.tolist()
        return out, FrameTruth(frame.index, frame.t, tuple(truths), angles, hand_px, person, shift)

    def _hand(self, img: np.ndarray, frame: SimFrame, s: np.ndarray):
        hand = frame.hand
        assert hand is not None
        w, l = self.profile.table.x_max, self.profile.table.y_max
        start = {"near": (hand.x, -250.0), "far": (hand.x, l + 250.0), "left": (-250.0, hand.y),
                 "right": (w + 250.0, hand.y)}.get(hand.from_side, (hand.x, -250.0))
        pts = np.array([[*(s @ [*start, 1.0])[:2], 260.0], [*(s @ [hand.x, hand.y, 1.0])[:2], HAND_HEIGHT_MM]])
        uv, depth = self.camera.project(pts)
        if depth.min() < MIN_DEPTH_MM:  # a hand at or behind the lens cannot be drawn
            return None, np.zeros((self.camera.height, self.camera.width), bool)
        f = self.camera.k[0, 0]
        mask = sprites.draw_hand(img, tuple(uv[0]), tuple(uv[1]), f * hand.radius / depth[1],
                                 f * ARM_WIDTH_MM / depth.mean())
        return (float(uv[1, 0]), float(uv[1, 1])), mask

    def _person(self, img: np.ndarray, frame: SimFrame, s: np.ndarray):
        pose = frame.person
        line = self.profile.play_line
        assert pose is not None
        if line is None:
            raise InputError(f"profile {self.profile.name}: a player stands at the Play Line in "
                             f"{self.profile.game}, but the profile has no play_line")
        line_y = line[0][1]
        plane_h = self.camera.plane_homography(s)
        photo = people.astronaut()
        affine = people.place_person(plane_h, line_y, pose.x, pose.reach_mm, photo)
        mask = people.composite(img, photo, affine)
        kp = people.keypoints_px(photo, affine)
        board = cv2.perspectiveTransform(kp[None, :, :2], np.linalg.inv(plane_h))[0]
        crossing = [name for name, p, v in zip(people.COCO_KEYPOINTS, board, kp[:, 2]) if v > 0 and p[1] > line_y]
        return {"player": pose.player, "reach_mm": pose.reach_mm, "crossing_part": pose.crossing_part,
                "keypoints": list(people.COCO_KEYPOINTS), "keypoints_px": kp.tolist(),
                "keypoints_board_mm": board.tolist(), "crossing_keypoints": crossing}, mask


def _apply(h: np.ndarray | None, pts: np.ndarray) -> np.ndarray:
    pts = np.asarray(pts, float).reshape(-1, 2)
    if h is None or not len(pts):
        return pts
    return cv2.perspectiveTransform(pts[None], h)[0]


def _covered(mask: np.ndarray, centre: np.ndarray, r: float) -> float:
    """Fraction of a ball's disc (sampled at 13 points) under `mask`."""
    angles = np.linspace(0, 2 * np.pi, 6, endpoint=False)
    pts = [centre] + [centre + 0.45 * r * np.array([np.cos(a), np.sin(a)]) for a in angles] \
        + [centre + 0.85 * r * np.array([np.cos(a + 0.5), np.sin(a + 0.5)]) for a in angles]
    h, w = mask.shape
    hits = [mask[int(round(p[1])), int(round(p[0]))] for p in pts if 0 <= p[0] < w - 0.5 and 0 <= p[1] < h - 0.5]
    return sum(hits) / len(pts) if hits else 0.0


def _floor(width: int, height: int, seed: int) -> np.ndarray:
    """A dim, softly grained floor around the table."""
    rng = np.random.default_rng(seed + 7)
    grain = cv2.resize(rng.normal(0, 1, (height // 16 + 1, width // 4 + 1)).astype(np.float32), (width, height),
                       interpolation=cv2.INTER_CUBIC)
    base = np.array([45, 58, 72], np.float32)
    return np.clip(base + 6 * grain[..., None], 0, 255).astype(np.uint8)


def render_clip(match: Match, profile: TableProfile, profile_json: dict, camera: Camera, realism: Realism,
                out_dir: str | Path, progress: bool = True,
                colours: Mapping[str, Colour] | None = None,
                seat_paint: Mapping[int, Bgr8] | None = None) -> list[FrameTruth]:
    """Render every frame of `match` to out_dir/video.mp4 (H.264); return the per-frame truth.

    `colours` (player -> BGR 0..1) adds to or overrides PLAYER_COLOURS; `seat_paint` (seat -> BGR 0..255)
    repaints those seats' starting rows (calibration.render.render_board)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    renderer = Renderer(profile, camera, realism, match.fps, match.seed, colours=colours, seat_paint=seat_paint)
    truths: list[FrameTruth] = []
    bar = tqdm(total=len(match.frames), unit="frame", desc=f"render {match.game}/{match.scenario}",
               disable=not progress, leave=False)
    with VideoWriter(out / "video.mp4", camera.width, camera.height, match.fps, crf=realism.crf) as writer:
        for frame in match.frames:
            image, truth = renderer.render(frame)
            writer.write(image)
            truths.append(truth)
            bar.update()
    bar.close()
    return truths
