"""What the camera sees past the Play Line: whatever reaches over it from the player's side (a hand, a glove, a
sleeve), measured on the board in mm.

Keypoints say where joints are, not where a body ends: a gloved hand ends about 95 mm past its wrist, and the
pose model may put the wrist mid-forearm. So the line is also judged on pixels. A strip on both sides of the line
is resampled onto the board (`strip_mm_per_px` a pixel, rows = distance past the line) as seen at the height of a
hand placing or releasing a ball (`hand_height_mm`): a hand is judged where it is, not where the camera sees it on
the table, which from behind the player is further on by h / (camera height - h) of its distance from the
camera's foot. Each frame's strip is compared with two pictures of the empty strip: one learned where nothing
differs and, slowly, where a difference stands still (a ball at rest), and the table as last seen uncovered (so
that where a player who stood still moves away, the table showing again is not a change). A pixel unlike both,
by more than a change of light, has changed; changed pixels near each other are one body.

A body counts as an arm over the line when it reaches back to within `root_mm` of the line (or to where the
camera's view ends on the player's side: the arm behind the hand may be part of the learned picture) and is no
wider than an arm within `width_band_mm` of the line (`arm_width_mm`). A wider body is left to the keypoints: from
a camera behind or above the player, a head above the table behind the line hides the table past it (parallax),
so pixels cannot tell a lean from a stand there. What a body is not:

* a ball: what the image shows of the balls detected in the frame (within `BALL_CLEARANCE` of their radius of their
  centres) is no part of a body's reach, root or width (the strip is not a ball detector), though it joins what
  touches it (a hand holding a ball, or a ball-coloured glove fragment the detector took for a ball, is not cut in
  two);
* a shadow or a change of light: a pixel darker than the table by a factor (down to `shadow_min_ratio`), or
  brighter by at most `light_max_brighter` (white over a light table keeps its chromaticity too), with the table's
  own colour (chromaticity), is light, and is learned slowly; the whole strip's brightness is matched to the
  picture first, and a pixel counts only outside the range its picture takes within a pixel of it (a camera shaking
  by a pixel). Light is no body, but it joins one that differs past the line to one rooted behind it: a glove the
  colour of the table in shade reads as light over the table, and differs only over the line's paint or the field;
* an arm reaching in from the table's side (an umpire): it runs off the strip's side, or does not reach the line.

Which hand reaches over is a question for pose; where pose sees nobody (from behind the player, often only the top
of a head shows), the pixels answer it too. Behind the line, up to `body_behind_mm` back, a coarser view
(`body_mm_per_px`, learned every `body_every_looks` looks as the strip is) shows what differs from the table there:
the shooter's head and shoulders, and the arm, which is followed back from where it crosses the line and left out.
The middle of the rest is the body's (`LineStrip.body`, asked when a call names its part), and a player facing the
table reaches with the hand on the side of it the arm is on (`PlayLineJudge.side`). A body that stood there since
the first look is part of the learned table and is not seen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import cv2
import numpy as np

from calibration.ball_height import camera_pose
from calibration.calibrate import Calibration
from calibration.profile import TableProfile
from rules.errors import InputError
from vision.config import LineStripSettings
from vision.numeric import NEAR, largest, outside_near

BALL_CLEARANCE = 1.4  # what the image shows of a detected ball is left out this much wider than its radius
OPEN = np.ones((2, 2), np.uint8)  # specks of noise go; a finger (8 mm, under 3 strip pixels) stays
ACROSS = np.ones((3, 1), np.uint8)  # near the line, what runs across it 9 mm or more stays, however thin
BRIDGE = np.ones((5, 3), np.uint8)
GATHER = np.ones((11, 11), np.uint8)  # pieces of one body this close (a strip pixel is 3 mm: 30 mm) are one
ARM_FOLLOW = 0.375  # an arm followed back from the line moves at most this much of its width from one row to the next


@dataclass(frozen=True)
class StripReach:
    """The furthest a shape rooted on the player's side reaches: `beyond_mm` past the line (negative: short of
    it), at `tip` on the board (mm), where it crosses back over the line at `root` (board mm)."""

    beyond_mm: float
    tip: tuple[float, float]
    root: tuple[float, float]


class LineStrip:
    """Watches the table on both sides of the Play Line; `update` once a frame (it learns the empty strip)."""

    def __init__(self, calibration: Calibration, profile: TableProfile, settings: LineStripSettings,
                 image_size: tuple[int, int]) -> None:
        assert profile.play_line is not None, "a line strip needs a table with a Play Line"
        self.settings = s = settings
        self._calibration = calibration
        a, b = (np.asarray(p, float) for p in profile.play_line)
        along = (b - a) / np.linalg.norm(b - a)
        normal = np.array([-along[1], along[0]])
        board = profile.playing_field
        if (np.array([(board.x_min + board.x_max) / 2, (board.y_min + board.y_max) / 2]) - a) @ normal < 0:
            normal = -normal  # towards the table
        self._origin, self._along, self._normal = a, along, normal
        try:
            pose = camera_pose(calibration.homography, calibration.image_size, calibration.intrinsics)
            self._camera = (np.array(pose.centre_mm[:2]), float(pose.centre_mm[2]))
        except InputError:  # straight overhead, the homography hides the camera's height: above the image's centre
            width, height = calibration.image_size
            foot = calibration.homography.to_board(np.array([[width / 2, height / 2]], float))[0]
            self._camera = (foot, s.overhead_camera_mm)
        if s.hand_height_mm >= self._camera[1]:
            raise InputError(f"line_strip.hand_height_mm {s.hand_height_mm:g} reaches the camera "
                             f"({self._camera[1]:.0f} mm above the table); lower it")
        length = float(np.linalg.norm(b - a))
        self._strip = self._pictures(length, -s.strip_behind_mm, s.strip_beyond_mm, s.strip_mm_per_px, image_size)
        self._behind = self._pictures(length, -s.body_behind_mm, 0.0, s.body_mm_per_px, image_size)
        self._w = self._strip.w
        # where the view ends on the player's side: a shape touching it may be rooted beyond the camera's view
        valid = self._strip.valid
        edge = cv2.dilate((~valid).astype(np.uint8), NEAR).astype(bool) & valid
        self._view_edge = edge & (self._w < 0)[:, None]
        self._root_rows = self._w <= s.root_mm
        # where thin lines across the line join bodies (None: nowhere)
        self._edge_band = (np.abs(self._w) <= s.line_edges_mm)[:, None] & valid if s.line_edges_mm > 0 else None
        self._line_row = int(np.searchsorted(self._w, 0.0))
        self._band = (int(np.searchsorted(self._w, -s.width_band_mm)), int(np.searchsorted(self._w, s.width_band_mm)))
        self._tip_px = max(1, int(np.ceil(s.tip_mm2 / s.strip_mm_per_px ** 2)))
        self._looks = 0
        self._rooted_beyond: float | None = None

    def _pictures(self, length: float, w_from: float, w_to: float, res: float,
                  image_size: tuple[int, int]) -> _Pictures:
        """The pictures of the board beside the line from `w_from` to `w_to` mm past it, along the whole line and
        `strip_side_mm` beyond its ends, at `res` mm a pixel, seen at the strip's hand height."""
        s = self.settings
        u = np.arange(-s.strip_side_mm, length + s.strip_side_mm + res / 2, res)
        w = np.arange(w_from, w_to + res / 2, res)  # mm past the line, by row
        uu, ww = np.meshgrid(u, w)
        points = self._origin + uu.reshape(-1, 1) * self._along + ww.reshape(-1, 1) * self._normal
        px = _to_raw(self._calibration, self._calibration.board_to_image(self._seen_at(points, s.hand_height_mm)))
        return _Pictures(px.reshape(*uu.shape, 2), image_size, (self._origin, self._along, self._normal), float(u[0]),
                         w, res, s)

    @property
    def rooted_beyond_mm(self) -> float | None:
        """How far past the line any body rooted on the player's side reached on the last look, however wide (a head or
        a body too, which are no arm's reach), its balls left out; None: nothing rooted, or nothing learned yet."""
        return self._rooted_beyond

    @property
    def learned(self) -> bool:
        """Whether the strip has a picture of the table to compare a look with (from its first look on)."""
        return self._strip.learned

    def update(self, image: np.ndarray, balls: Sequence[tuple[float, float, float]] = ()) -> StripReach | None:
        """This frame's furthest reach of a shape rooted on the player's side (None: nothing rooted differs).
        `balls`: (u, v, radius px) of the balls detected in this frame (undistorted pixels, as detections are).
        """
        s = self.settings
        self._looks += 1
        strip = self._strip.sample(image)
        seen = self._strip.changed(strip)
        reach = None
        self._rooted_beyond = None
        if seen is not None:
            changed, light = seen
            raw = changed.astype(np.uint8)
            # specks of noise go; a row where a sleeve matches the table is bridged
            changed = cv2.morphologyEx(cv2.morphologyEx(raw, cv2.MORPH_OPEN, OPEN), cv2.MORPH_CLOSE, BRIDGE)
            solid = changed.astype(bool)
            shown = self._shown_balls(self._strip, balls)
            reach, rooted = self._bodies(changed, shown)
            # what may be all that shows of a hand between the sleeve behind the line and the fingertips past it
            # joins a body not rooted to one that is, though it is no part of a reach itself:
            # - what differs from the table by light alone: a glove the colour of the table in shade reads as a shadow
            #   over the table's colour, though past the line, over the line's paint or the field, it differs;
            # - near the line, lines a pixel wide running across it: the edges of the fingers of a hand the colour of
            #   the table (a skin-toned palm over a tan table).
            # The pictures learn as before: a line is held out of them only as part of a body (a table's edge
            # running across the line, moved by a shove, is learned)
            bodies = rooted
            if (s.light_joins or self._edge_band is not None) and (solid & ~rooted).any():
                joins = cv2.morphologyEx(light.astype(np.uint8), cv2.MORPH_OPEN, OPEN) if s.light_joins \
                    else np.zeros_like(raw)
                if self._edge_band is not None:
                    joins = joins | (cv2.morphologyEx(raw, cv2.MORPH_OPEN, ACROSS) & self._edge_band)
                further, joined = self._bodies(cv2.bitwise_or(changed, joins), shown, solid, anchored=rooted)
                if further is not None and (reach is None or further.beyond_mm > reach.beyond_mm):
                    reach = further
                bodies = rooted | joined
            if bodies.any():  # most looks nothing is rooted: no masks made
                self._rooted_beyond = self._tip_mm(bodies & solid & ~shown)
            self._strip.learn(strip, solid, rooted, light)
        if (self._looks - 1) % s.body_every_looks == 0:  # the view behind the line learns the table there
            behind = self._behind.sample(image)
            seen = self._behind.changed(behind)
            if seen is not None:
                changed, light = seen
                self._behind.learn(behind, changed, np.zeros_like(changed), light)
        return reach

    def _bodies(self, changed: np.ndarray, balls: np.ndarray, solid: np.ndarray | None = None,
                anchored: np.ndarray | None = None) -> tuple[StripReach | None, np.ndarray]:
        """`_furthest` over the bodies of `changed` (uint8): a hand, a face or a shirt partly like the table in colour
        shows in pieces, and pieces this near are one body. `balls`: the pixels showing the detected balls."""
        count, bodies, stats, _ = cv2.connectedComponentsWithStats(cv2.dilate(changed, GATHER), connectivity=8)
        return self._furthest(count, np.where(changed.astype(bool), bodies, 0), stats, balls, solid, anchored)

    def body(self, image: np.ndarray, reach: StripReach,
             balls: Sequence[tuple[float, float, float]] = ()) -> tuple[float, float] | None:
        """The middle, along the line, of what differs in `image` behind the line beside the arm of `reach` (the balls
        left out): the body it reaches from (its head, its shoulders), as a board point on the line; None if
        less than `body_mm2` differs there, or the view behind the line has not been learned yet. The arm is
        followed back from where it crosses the line, row by row (its middle among the changed pixels within
        `ARM_FOLLOW` of an arm's width of where it was), and half an arm's width either side of it is left out."""
        s = self.settings
        grid = self._behind
        if not grid.learned:
            return None
        seen = grid.changed(grid.sample(image))
        assert seen is not None
        changed = cv2.morphologyEx(seen[0].astype(np.uint8), cv2.MORPH_OPEN, OPEN).astype(bool)
        changed &= ~self._shown_balls(grid, balls)
        centre = float(grid.to_grid(np.array([reach.root], float))[0][0])
        half, near = s.arm_width_mm / 2 / grid.res, s.arm_width_mm * ARM_FOLLOW / grid.res
        beside = changed.copy()
        for row in range(changed.shape[0] - 1, -1, -1):  # from the line back
            cols = np.flatnonzero(changed[row])
            close = cols[np.abs(cols - centre) <= near]
            if len(close):
                centre = float(np.mean(close))
            beside[row, max(0, int(np.ceil(centre - half))):max(0, int(np.floor(centre + half)) + 1)] = False
        cols = np.nonzero(beside)[1]
        if len(cols) * grid.res ** 2 < s.body_mm2:
            return None
        return grid.to_board(float(np.mean(cols)), -grid.w0 / grid.res)  # on the line

    def _shown_balls(self, grid: _Pictures, balls: Sequence[tuple[float, float, float]]) -> np.ndarray:
        """The pixels of `grid` that show the detected balls: resampled from within `BALL_CLEARANCE` of their radius of
        their centres in the image. (A disc of the ball's size on the board fell short: a ball on the table, seen at
        the strip's height from a slanting camera, is up to 1 / sin(elevation) longer there, and the ends of a ball
        released past a hand that stayed short read as the hand's reach.)"""
        shown = np.zeros(grid.valid.shape, bool)
        if not balls:
            return shown
        found = np.array(balls, float)
        radii = BALL_CLEARANCE * found[:, 2]
        # each ball's square in the image, its corners at the strip's height: the window of the grid it can show in
        corners = np.concatenate([found[:, :2] + np.column_stack([sx * radii, sy * radii])
                                  for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))])
        cols, rows = grid.to_grid(self._at_hand_height(corners))
        cols, rows = cols.reshape(4, -1), rows.reshape(4, -1)
        height, width = shown.shape
        for i, centre in enumerate(_to_raw(self._calibration, found[:, :2])):
            c0, c1 = max(int(np.floor(cols[:, i].min())), 0), min(int(np.ceil(cols[:, i].max())) + 1, width)
            r0, r1 = max(int(np.floor(rows[:, i].min())), 0), min(int(np.ceil(rows[:, i].max())) + 1, height)
            if c0 < c1 and r0 < r1:
                shown[r0:r1, c0:c1] |= grid.near(centre, float(radii[i]), slice(r0, r1), slice(c0, c1))
        return shown

    def _furthest(self, count: int, labels: np.ndarray, stats: np.ndarray, balls: np.ndarray,
                  solid: np.ndarray | None = None,
                  anchored: np.ndarray | None = None) -> tuple[StripReach | None, np.ndarray]:
        """The rooted body reaching furthest past the line (its tip: where the `tip_mm2` furthest of it begins, so a
        speck at its end does not count), and the mask of every rooted body. `labels`: each changed pixel's body;
        `balls`: the pixels showing the detected balls (`_shown_balls`), which join a body (a hand holding a ball, or a
        ball the detector found in a glove or on the line beside a hand, does not cut it in two) but are no part of
        where it reaches, where it is rooted or how wide it is. `solid`: the changed pixels that are no thin line kept
        near the line only to join what they touch; only they reach, or are measured for width (None: all are).
        `anchored`: the bodies rooted without those lines; given, a body is rooted when it holds one (a line lengthens
        nothing to the line)."""
        s = self.settings
        rooted = np.zeros(labels.shape, bool)
        best: StripReach | None = None
        for label in range(1, count):
            if stats[label, cv2.CC_STAT_AREA] < self._tip_px:
                continue
            whole = labels == label
            shape = whole & ~balls
            rows, cols = np.nonzero(shape)
            if not len(rows) or (not self._root_rows[rows.min()] and not (shape & self._view_edge).any()
                                 if anchored is None else not (whole & anchored).any()):
                continue  # it does not reach the line: a ball, an arm from the table's side
            if solid is not None:
                shape &= solid
                rows, cols = np.nonzero(shape)
                if not len(rows):
                    continue  # thin lines alone: the edges of something that moved, not a body
            rooted |= whole
            if self._width_at_line(shape) > s.arm_width_mm:
                continue  # wider than an arm where it crosses: a body above the table hides the strip
            order = np.argsort(rows)
            tip_at = order[-min(self._tip_px, len(order))]
            beyond = float(self._w[rows[tip_at]])
            if best is not None and beyond <= best.beyond_mm:
                continue
            on_line = cols[rows == self._line_row]
            root_col = float(np.median(on_line)) if len(on_line) else float(np.median(cols))
            best = StripReach(beyond, self._strip.to_board(float(cols[tip_at]), float(rows[tip_at])),
                              self._strip.to_board(root_col, float(self._line_row)))
        return best, rooted

    def _tip_mm(self, shape: np.ndarray) -> float | None:
        """How far past the line the `tip_mm2` furthest of `shape` (a mask of the strip) begin (None: less shows)."""
        behind = np.cumsum(np.count_nonzero(shape, axis=1)[::-1])
        if not len(behind) or behind[-1] < self._tip_px:
            return None
        return float(self._w[len(behind) - 1 - int(np.searchsorted(behind, self._tip_px))])

    def _width_at_line(self, body: np.ndarray) -> float:
        """The widest a body spans (first to last pixel, holes and all) in the rows within `width_band_mm` of the
        line, in mm; infinite if it runs off the strip's side there."""
        near = body[self._band[0]:self._band[1] + 1]
        cols = np.flatnonzero(near.any(axis=0))
        if not len(cols):
            return 0.0
        if cols[0] == 0 or cols[-1] == near.shape[1] - 1:  # it goes on past the strip's end: not measured, not an arm
            return float("inf")
        return float(cols[-1] - cols[0] + 1) * self.settings.strip_mm_per_px

    def _at_hand_height(self, px: np.ndarray) -> np.ndarray:
        """Where the rays through (N, 2) undistorted pixels (as detections are) are at the strip's height (board
        mm)."""
        plane = self._calibration.homography.to_board(px)
        centre, height = self._camera
        return centre + (plane - centre) * (height - self.settings.hand_height_mm) / height

    def _seen_at(self, points: np.ndarray, height_mm: float) -> np.ndarray:
        """Board points raised `height_mm` above the table -> where the camera sees them on the table plane."""
        centre, height = self._camera
        return centre + (points - centre) * height / (height - height_mm)


def _to_raw(calibration: Calibration, undistorted_px: np.ndarray) -> np.ndarray:
    """Undistorted image pixels -> the raw frame's (the lens's distortion put back), for resampling raw frames."""
    intrinsics = calibration.intrinsics
    if intrinsics is None:
        return undistorted_px
    k = intrinsics.k
    rays = np.column_stack([undistorted_px, np.ones(len(undistorted_px))]) @ np.linalg.inv(k).T
    raw, _ = cv2.projectPoints(rays.reshape(-1, 1, 3), np.zeros(3), np.zeros(3), k, intrinsics.d)
    return raw.reshape(-1, 2)


class _Pictures:
    """One resampling of the board beside the line (`res` mm a pixel; columns from `u0` mm along the line, rows `w`
    mm past it) and what is learned of it: the empty view, learned where nothing differs and, slowly, where a
    difference stands still (a ball at rest); the table where it was last seen uncovered (it never learns what stands
    still: where a player who stood still moves away, the table shows again, not a change); the previous look."""

    def __init__(self, px: np.ndarray, image_size: tuple[int, int], frame: tuple[np.ndarray, np.ndarray, np.ndarray],
                 u0: float, w: np.ndarray, res: float, settings: LineStripSettings) -> None:
        width, height = image_size
        self.valid = (np.isfinite(px).all(axis=2) & (px[..., 0] >= 0) & (px[..., 0] <= width - 1)
                      & (px[..., 1] >= 0) & (px[..., 1] <= height - 1))
        mapped = np.where(self.valid[..., None], px, -1).astype(np.float32)
        self._map_x, self._map_y = np.ascontiguousarray(mapped[..., 0]), np.ascontiguousarray(mapped[..., 1])
        self._origin, self._along, self._normal = frame  # the line's start, along it, across it to the table
        self.u0, self.w, self.w0, self.res, self.settings = u0, w, float(w[0]), res, settings
        self._picture: list[np.ndarray] | None = None  # float B, G, R planes
        self._table: list[np.ndarray] | None = None
        self._last: list[np.ndarray] | None = None

    @property
    def learned(self) -> bool:
        """Whether a first look has been learned (what differs is asked of it)."""
        return self._picture is not None

    def sample(self, image: np.ndarray) -> list[np.ndarray]:
        """The view resampled from a frame: float B, G, R planes."""
        return [plane.astype(np.float32) for plane in
                cv2.split(cv2.remap(image, self._map_x, self._map_y, cv2.INTER_LINEAR))]

    def near(self, centre: np.ndarray, radius: float, rows: slice, cols: slice) -> np.ndarray:
        """Which pixels of the window (`rows`, `cols`) are resampled from within `radius` of `centre` (raw image
        pixels)."""
        dx, dy = self._map_x[rows, cols] - centre[0], self._map_y[rows, cols] - centre[1]
        return (dx * dx + dy * dy <= radius * radius) & self.valid[rows, cols]

    def to_grid(self, board: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Board points (N, 2) mm -> their columns and rows."""
        rel = board - self._origin
        return (rel @ self._along - self.u0) / self.res, (rel @ self._normal - self.w0) / self.res

    def to_board(self, col: float, row: float) -> tuple[float, float]:
        """A pixel (column, row) -> its board point (mm)."""
        point = self._origin + (self.u0 + col * self.res) * self._along + (row * self.res + self.w0) * self._normal
        return float(point[0]), float(point[1])

    def changed(self, strip: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray] | None:
        """Pixels unlike both the learned picture and the table as last seen uncovered (where something that stood
        still, learned into the picture, has left), by more than a change of light (shadow, lamp, cloud); and the
        pixels unlike the picture by a change of light alone. None on the first look, which is learned as it is."""
        if self._picture is None:
            self._picture, self._table, self._last = [p.copy() for p in strip], [p.copy() for p in strip], strip
            return None
        assert self._table is not None
        everywhere = (slice(None), slice(None))
        changed, light = self._unlike(strip, self._picture, everywhere)
        rows, cols = np.nonzero(changed.any(axis=1))[0], np.nonzero(changed.any(axis=0))[0]
        if len(rows):  # the table is asked only around what differs from the picture (most frames: nothing)
            box = (slice(max(rows[0] - 1, 0), rows[-1] + 2), slice(max(cols[0] - 1, 0), cols[-1] + 2))
            changed[box] &= self._unlike(strip, self._table, box)[0]
        return changed, light

    def _unlike(self, strip: list[np.ndarray], picture: list[np.ndarray],
                box: tuple[slice, slice]) -> tuple[np.ndarray, np.ndarray]:
        """Pixels of `box` unlike `picture` by more than a change of light (the brightness matched over the view),
        and those unlike it by a change of light alone."""
        s = self.settings
        thin = (slice(None, None, 3), slice(None, None, 3))
        now_thin, was_thin = [p[thin] for p in strip], [p[thin] for p in picture]
        ratios = (now_thin[0] + now_thin[1] + now_thin[2] + 3) / (was_thin[0] + was_thin[1] + was_thin[2] + 3)
        sample = ratios[self.valid[thin]]
        gain = float(np.median(sample)) if sample.size else 1.0
        strip, picture = [p[box] for p in strip], [p[box] for p in picture]
        bright, known = strip[0] + strip[1] + strip[2] + 3, picture[0] + picture[1] + picture[2] + 3
        ratio = bright / (known * gain)
        off = [outside_near(now, was * gain) for now, was in zip(strip, picture)]
        differs = (largest(off) > s.difference) | (off[0] + off[1] + off[2] > s.difference_sum)
        now_share, was_share = 1 / bright, 1 / known
        tint = sum((cv2.absdiff(now * now_share, was * was_share) for now, was in zip(strip, picture)),
                   np.zeros_like(bright))
        light = (tint < s.shadow_tint) & (ratio >= s.shadow_min_ratio) & (ratio <= 1 + s.light_max_brighter)
        return differs & ~light & self.valid[box], differs & light & self.valid[box]

    def learn(self, strip: list[np.ndarray], changed: np.ndarray, rooted: np.ndarray, light: np.ndarray) -> None:
        """The empty view follows the table where nothing differs, and slowly where a difference stands still or the
        light alone differs (a shadow learned fast leaves the table brighter than its picture when it moves on)."""
        s = self.settings
        assert self._picture is not None and self._table is not None and self._last is not None
        still = largest([cv2.absdiff(now, was) for now, was in zip(strip, self._last)]) <= s.still_grey
        busy = cv2.dilate((changed | rooted).astype(np.uint8), NEAR).astype(bool)
        rate = np.full(busy.shape, s.learn_rate, np.float32)
        rate[light] = s.still_learn_rate
        rate[busy] = 0.0
        for now, was in zip(strip, self._table):
            was += rate * (now - was)
        rate[busy & still] = s.still_learn_rate
        for now, was in zip(strip, self._picture):
            was += rate * (now - was)
        self._last = strip
