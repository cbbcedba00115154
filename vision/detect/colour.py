"""The colour detector: balls as blobs of a player's colour, sized by the table's geometry.

Per frame: crop to the table's bounding box, shrink so the smallest ball is
about `analysis_radius_px` across (the classification cost scales with the
pixels), label every pixel through the colour model's lookup table, keep the
table mask, then per colour take connected components. The expected ball
radius at each pixel comes from the calibration (the apparent size of a ball
resting there), so a blob is accepted only if its area fits one ball or a few
touching ones; touching balls of one colour are split at the peaks of the
distance transform. Each ball's centre is then refined on the full-resolution
pixels around it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import cv2
import numpy as np

from calibration.profile import PiratenbillardProfile
from rules.errors import InputError
from vision.detect.colour_model import UNKNOWN, ColourModel, ColourModelConfig, learn_model
from vision.mapping import BoardMapper
from vision.types import Detection

TABLE_MARGIN_MM = 40.0  # look this far beyond the table edge (balls leaving it, gutters)


@dataclass(frozen=True)
class ColourDetectorConfig:
    analysis_radius_px: float = 5.0  # shrink the frame until the smallest ball has about this radius
    min_area: float = 0.25  # a blob smaller than this many expected ball areas is noise
    max_balls_per_blob: int = 4  # a larger blob is a hand, a painted area or a sleeve, not balls
    unknown_score: float = 0.25  # score cap of a ball whose colour matches no player
    refine: bool = True  # re-centre each ball on full-resolution pixels
    one_ball_radius: float = 1.4  # a blob inside a circle this many ball radii wide is one ball, however full

    def __post_init__(self) -> None:
        if self.analysis_radius_px < 2 or not 0 < self.min_area < 1 or self.max_balls_per_blob < 1:
            raise InputError("colour detector: analysis_radius_px >= 2, 0 < min_area < 1, max_balls_per_blob >= 1")


class ColourDetector:
    """`Detector` backend "color": see the module docstring."""

    name = "color"

    def __init__(self, model: ColourModel, mapper: BoardMapper, image_size: tuple[int, int] | None = None,
                 config: ColourDetectorConfig = ColourDetectorConfig()) -> None:
        self.model = model
        self.mapper = mapper
        self.config = config
        width, height = image_size or mapper.calibration.image_size
        poly = mapper.table_polygon_px(TABLE_MARGIN_MM)
        x0, y0 = np.floor(poly.min(axis=0)).astype(int)
        x1, y1 = np.ceil(poly.max(axis=0)).astype(int) + 1
        self.box = (max(x0, 0), max(y0, 0), min(x1, width), min(y1, height))
        bx0, by0, bx1, by1 = self.box
        if bx1 - bx0 < 8 or by1 - by0 < 8:
            raise InputError("colour detector: the table is not in view of this calibration's image")
        radius_full = self._radius_map(bx1 - bx0, by1 - by0)
        self.scale = float(min(1.0, config.analysis_radius_px / max(np.percentile(radius_full, 2), 1.0)))
        self.size = (max(1, round((bx1 - bx0) * self.scale)), max(1, round((by1 - by0) * self.scale)))
        self.radius = cv2.resize(radius_full, self.size, interpolation=cv2.INTER_LINEAR) * self.scale
        mask = np.zeros((self.size[1], self.size[0]), np.uint8)
        local = (poly - [bx0, by0]) * self.scale
        cv2.fillConvexPoly(mask, np.round(local * 16).astype(np.int32), 255, cv2.LINE_8, 4)
        self.table_mask = mask

    @classmethod
    def learn(cls, image: np.ndarray, mapper: BoardMapper, players: Sequence[str],
              seats: Mapping[str, int] | None = None, model_config: ColourModelConfig = ColourModelConfig(),
              config: ColourDetectorConfig = ColourDetectorConfig()) -> "ColourDetector":
        """A detector whose colours are learned from `image`, the first frame of a game.

        Piratenbillard (`seats`: player -> seat): every starting space of a
        player's seat is taken to hold that player's ball. Star Cluster Ball
        starts with the balls in hand, so the players keep their nominal
        colours; the table in `image` still teaches the background.
        """
        known: dict[str, list[tuple[float, float, float]]] = {}
        profile = mapper.profile
        if seats and isinstance(profile, PiratenbillardProfile):
            for player, seat in seats.items():
                cells = np.array([profile.space_center(r, c) for r, c in profile.starting_cells(seat)], float)
                if len(cells):
                    uv = mapper.ball_centre_px(cells)
                    radii = mapper.ball_radius_px(cells)
                    known[player] = [(float(u), float(v), float(r)) for (u, v), r in zip(uv, radii)]
        h, w = image.shape[:2]
        table = np.zeros((h, w), np.uint8)
        poly = mapper.table_polygon_px(0.0)
        cv2.fillConvexPoly(table, np.round(poly * 16).astype(np.int32), 255, cv2.LINE_8, 4)
        model = learn_model(image, players, known, table, model_config)
        return cls(model, mapper, (w, h), config)

    def _radius_map(self, w: int, h: int, step: int = 16) -> np.ndarray:
        """Expected ball radius (px) at every pixel of the box, interpolated from a coarse grid."""
        bx0, by0 = self.box[:2]
        xs = np.arange(0, w + step, step, dtype=float)
        ys = np.arange(0, h + step, step, dtype=float)
        grid = np.stack(np.meshgrid(xs + bx0, ys + by0), axis=-1).reshape(-1, 2)
        board = self.mapper.to_board(grid)
        r = self.mapper.ball_radius_px(board).reshape(len(ys), len(xs)).astype(np.float32)
        r = np.where(np.isfinite(r) & (r > 0), r, np.nan)
        r = np.nan_to_num(r, nan=float(np.nanmax(r)) if np.isfinite(r).any() else 1.0)
        coarse = cv2.resize(r, (len(xs) * step, len(ys) * step), interpolation=cv2.INTER_LINEAR)
        return coarse[:h, :w]

    # ------------------------------------------------------------------ per frame

    def detect(self, image: np.ndarray, mask: np.ndarray | None = None) -> list[Detection]:
        """Balls in a BGR frame; `mask` (uint8, 255 = look here, full frame size) narrows the table mask."""
        bx0, by0, bx1, by1 = self.box
        crop = image[by0:by1, bx0:bx1]
        small = crop if self.scale == 1.0 else cv2.resize(crop, self.size, interpolation=cv2.INTER_AREA)
        index, valid = self.model.bin_index(small)
        labels = self.model.labels[index]
        keep = valid & (self.table_mask > 0)
        if mask is not None:
            m = mask[by0:by1, bx0:bx1]
            m = m if self.scale == 1.0 else cv2.resize(m, self.size, interpolation=cv2.INTER_NEAREST)
            keep &= m > 0
        labels[~keep] = 0
        out: list[Detection] = []
        for label in np.unique(labels):
            if label == 0:
                continue
            out += self._blobs(labels == label, int(label), index, image)
        return out

    def _blobs(self, binary: np.ndarray, label: int, index: np.ndarray, image: np.ndarray) -> list[Detection]:
        cfg = self.config
        fill = self.model.fill[label - 1] if label != UNKNOWN else float(np.mean(self.model.fill))
        binary = binary.astype(np.uint8)
        count, comp, stats, centroids = cv2.connectedComponentsWithStats(binary, connectivity=8)
        found: list[Detection] = []
        for k in range(1, count):
            area = stats[k, cv2.CC_STAT_AREA]
            cx, cy = centroids[k]
            r = float(self.radius[min(int(cy), self.size[1] - 1), min(int(cx), self.size[0] - 1)])
            expected = fill * np.pi * r * r
            n = area / expected
            if n < cfg.min_area or n > cfg.max_balls_per_blob + 0.5:
                continue
            x, y, w, h = stats[k, :4]
            if max(w, h) > (2 * cfg.max_balls_per_blob + 1) * r:
                continue  # a long thin streak: a painted line or an edge, not balls
            sub = comp[y:y + h, x:x + w] == k
            posterior = float(self.model.posterior[index[y:y + h, x:x + w][sub]].mean())
            # a ball whose whole disc reads as its colour (on a dark gutter, say) covers 1/fill expected areas,
            # more than 1.6: it is split only when the blob does not fit in one ball's circle
            several = n > 1.6 and not _one_disc(sub, r, cfg.one_ball_radius)
            centres = self._split(sub, r, n) if several else [(cx - x, cy - y)]
            share = min(1.0, n / len(centres))
            for px, py in centres:
                u, v = self._to_full(px + x, py + y)
                radius = r / self.scale
                if cfg.refine and len(centres) == 1:
                    u, v = self._refine(image, u, v, radius, label)
                score = float(np.clip(posterior * min(1.0, share / 0.6), 0, 1))
                colour = self.model.name_of(label)
                if label == UNKNOWN:
                    score = min(score, cfg.unknown_score)
                found.append(Detection(u, v, radius, colour, round(score, 3)))
        return found

    def _split(self, sub: np.ndarray, r: float, n: float) -> list[tuple[float, float]]:
        """Centres of touching balls in one blob: the distance transform's well-separated peaks."""
        padded = np.pad(sub.astype(np.uint8), 1)
        dist = cv2.distanceTransform(padded, cv2.DIST_L2, 3)[1:-1, 1:-1]
        peaks = (dist >= cv2.dilate(dist, np.ones((3, 3), np.uint8))) & (dist >= 0.35 * r)
        ys, xs = np.nonzero(peaks)
        order = np.argsort(-dist[ys, xs])
        chosen: list[tuple[float, float]] = []
        for i in order:
            p = (float(xs[i]), float(ys[i]))
            if all(np.hypot(p[0] - q[0], p[1] - q[1]) >= r for q in chosen):
                chosen.append(p)
            if len(chosen) >= min(self.config.max_balls_per_blob, int(round(n))):
                break
        if len(chosen) < 2:
            m = cv2.moments(sub.astype(np.uint8), binaryImage=True)
            return [(m["m10"] / m["m00"], m["m01"] / m["m00"])]
        return chosen

    def _to_full(self, x: float, y: float) -> tuple[float, float]:
        bx0, by0 = self.box[:2]
        return bx0 + (x + 0.5) / self.scale - 0.5, by0 + (y + 0.5) / self.scale - 0.5

    def _refine(self, image: np.ndarray, u: float, v: float, r: float, label: int) -> tuple[float, float]:
        """Centre of the ball's own colour within 1.2 radii, on the full-resolution pixels, in two rounds.

        The colour mask is closed with a disc one radius wide first: a ball's shaded side classifies only
        in speckles (less so where paint of its colour lies near, which counts as background), and
        without closing the centroid is pulled to the lit side (measured: 6 px on 23 px balls).
        """
        if self.scale >= 1.0:
            return u, v
        h, w = image.shape[:2]
        size = max(3, int(round(r)) | 1)
        closing = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size))
        for _ in range(2):
            half = int(np.ceil(1.2 * r))
            x0, y0 = max(int(round(u)) - half, 0), max(int(round(v)) - half, 0)
            x1, y1 = min(int(round(u)) + half + 1, w), min(int(round(v)) + half + 1, h)
            if x1 <= x0 or y1 <= y0:
                return u, v
            labels = self.model.classify(image[y0:y1, x0:x1])
            ys, xs = np.mgrid[y0:y1, x0:x1]
            near = (xs - u) ** 2 + (ys - v) ** 2 <= (1.2 * r) ** 2
            hit = (labels == label) & near
            if np.count_nonzero(hit) < 0.2 * np.pi * r * r * 0.3:
                return u, v
            hit = cv2.morphologyEx(hit.astype(np.uint8), cv2.MORPH_CLOSE, closing).astype(bool) & near
            u, v = float(xs[hit].mean()), float(ys[hit].mean())
        return u, v


def _one_disc(sub: np.ndarray, r: float, limit: float) -> bool:
    """Does the blob fit in a circle of `limit` ball radii? Two touching balls need about 2 r (the split
    takes peaks at least r apart, so a blob it can split never fits in 1.5 r)."""
    ys, xs = np.nonzero(sub)
    _, radius = cv2.minEnclosingCircle(np.column_stack([xs, ys]).astype(np.float32))
    return radius <= limit * r
