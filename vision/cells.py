"""Read the settled table place by place, not from the tracks (the chesscog lesson).

Once the table has settled, every slot (Star Cluster Ball) or space
(Piratenbillard) is read on its own: the pixels where a ball resting in it
would appear (the place's outline raised to ball-centre height, so the patch
follows the ball-height shift) are labelled by the colour model, and each
player's pixel count, divided by what one ball of that colour covers there,
says how many of that player's balls lie in the place: 0, 1, or for a
Piratenbillard space 2 or more (two balls of one colour in one space count as
two). Balls anywhere else (grouped, play area, gutter, off the table) come
from the detector's blobs mapped to their region (Star Cluster Ball: none behind
the Play Line). Each sighting carries a confidence: how far its count ratio lies
from the nearest decision boundary.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import cv2
import numpy as np

from rules.events import BallSighting, Location, Place, Snapshot
from vision.config import CellReadConfig
from vision.detect.colour import ColourDetector
from vision.mapping import BoardMapper
from vision.settle import Settle
from vision.types import BoardBall, Detector

PLACES = (Place.SLOT, Place.CELL)  # read from pixels; everything else comes from the blobs


@dataclass(frozen=True)
class PlaceReading:
    """One place's pixel counts: player -> ratio of one ball's expected pixels."""

    at: Location
    ratios: dict[str, float]


def read_places(image: np.ndarray, mapper: BoardMapper, detector: ColourDetector) -> list[PlaceReading]:
    """Per slot / space, each player's pixel count as a multiple of one ball's."""
    model = detector.model
    bx0, by0, bx1, by1 = detector.box
    labels = model.classify(image[by0:by1, bx0:bx1])
    readings = []
    for at, rect in mapper.profile.places:
        corners = np.array(rect.corners, float)
        poly = mapper.ball_centre_px(corners) - [bx0, by0]
        x0, y0 = np.floor(poly.min(axis=0)).astype(int)
        x1, y1 = np.ceil(poly.max(axis=0)).astype(int) + 1
        x0, y0 = max(x0, 0), max(y0, 0)
        x1, y1 = min(x1, labels.shape[1]), min(y1, labels.shape[0])
        if x1 <= x0 or y1 <= y0:
            continue
        mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillConvexPoly(mask, np.round((poly - [x0, y0]) * 16).astype(np.int32), 255, cv2.LINE_8, 4)
        patch = labels[y0:y1, x0:x1][mask > 0]
        centre = np.array([[(rect.x_min + rect.x_max) / 2, (rect.y_min + rect.y_max) / 2]])
        r = float(mapper.ball_radius_px(centre)[0])
        ratios = {}
        for i, player in enumerate(model.players):
            expected = model.fill[i] * np.pi * r * r
            ratios[player] = float(np.count_nonzero(patch == i + 1) / expected)
        readings.append(PlaceReading(at, ratios))
    return readings


def _count(ratio: float, allow_many: bool, cfg: CellReadConfig) -> tuple[int, float]:
    """Balls in a place from its count ratio, and how sure that is (0.5 at a boundary, 1 clear of it)."""
    bounds = [cfg.one_ball] + ([cfg.two_balls] if allow_many else [])
    n = sum(ratio >= b for b in bounds)
    nearest = min(abs(ratio - b) for b in bounds)
    return n, 0.5 + 0.5 * min(1.0, nearest / cfg.margin)


def read_snapshot(image: np.ndarray, mapper: BoardMapper, detector: ColourDetector,
                  config: CellReadConfig = CellReadConfig(), previous: Snapshot | None = None,
                  tracked: frozenset[tuple[str, Location]] = frozenset()) -> Snapshot:
    """Every ball on the settled table: slots / spaces from their pixels, the rest from the blobs.

    `previous` (the last settled snapshot) is the prior: a ball that lay in a place and still shows a sliver
    of its colour there is still there, only partly hidden (a ball landing on it in a capture), not gone.
    `tracked` (colour, place) pairs where a settled track lies are the same kind of prior: a ball seen
    rolling into a place and stopping there, partly hidden behind a ball in front of it, is there.
    """
    many = mapper.profile.stacking
    before = Counter((b.owner, b.at) for b in previous.balls) if previous is not None else Counter()
    held = set(before) | set(tracked)
    balls: list[BallSighting] = []
    for reading in read_places(image, mapper, detector):
        counts = {player: _count(ratio, many, config) for player, ratio in reading.ratios.items()}
        for player, ratio in reading.ratios.items():
            n, confidence = counts[player]
            if n == 0 and ratio >= config.kept and (player, reading.at) in held:
                n, confidence = 1, config.kept_confidence
            # balls that lay here at the last settle and have not left (the pipeline takes a struck or lifted
            # ball out of `previous`) are still here when another player's ball has landed in the place since:
            # it hides them (a capture seen from the side: 0-5 % of a ball shows)
            landed = any(other != player and c[0] > before[(other, reading.at)] for other, c in counts.items())
            if many and landed and n < before[(player, reading.at)]:
                n, confidence = before[(player, reading.at)], config.kept_confidence
            balls += [BallSighting(player, reading.at, round(confidence, 3))] * n
    profile = mapper.profile
    # Star Cluster Ball: nothing behind the Play Line is read but the gutters (the shooter's lips, skin and sleeve
    # there read as red balls; the tracker does not look there either, docs/pipeline.md)
    line = profile.play_line
    behind = max(line[0][1], line[1][1]) if line is not None else -np.inf
    for ball in mapper.map(detector.detect(image)):
        if ball.location.place in PLACES or ball.detection.colour not in detector.model.players \
                or (ball.y < behind and ball.location.place is not Place.GUTTER) or on_play_line_stripe(mapper, ball):
            continue
        balls.append(BallSighting(ball.detection.colour, ball.location, round(ball.detection.score, 3)))
    return Snapshot(tuple(balls))


def on_play_line_stripe(mapper: BoardMapper, ball: BoardBall) -> bool:
    """A gutter "ball" whose blob is centred on the Play Line is the line's painted stripe crossing the gutter
    (a ball's blob centre lies on the line only when the ball touches it from the near side)."""
    line = mapper.profile.play_line
    if line is None or ball.location.place is not Place.GUTTER:
        return False
    line_y = (line[0][1] + line[1][1]) / 2
    radius = mapper.profile.ball_diameter_mm / 2
    if abs(ball.y - line_y) > 4 * radius:  # far from the line (a blob centre lies within a ball of its contact)
        return False
    centre_y = float(mapper.plane_point(np.array([[ball.x, ball.y]], float))[0, 1])
    return abs(centre_y - line_y) < radius / 2


def snapshot_from_tracks(settle: Settle) -> Snapshot:
    """Every settled ball where its track says it lies; one sighting per ball, so two in a space count two."""
    return Snapshot(tuple(BallSighting(tr.colour, tr.location, round(tr.confidence, 3))
                          for tr in settle.tracks if tr.location is not None))


def read_settled(settle: Settle, image: np.ndarray, mapper: BoardMapper, detector: Detector,
                 previous: Snapshot | None, config: CellReadConfig = CellReadConfig()) -> Snapshot:
    """The pipeline's table reader: places read from the settled frame's pixels when the detector has a
    colour model to read them with; otherwise (a detector without one) the settled tracks."""
    if isinstance(detector, ColourDetector):
        # the lost tracks too: a ball seen landing in a space and lost there behind the ball in front of it
        tracked = frozenset((tr.colour, tr.location) for tr in settle.tracks + settle.hidden
                            if tr.location is not None and tr.location.place in PLACES)
        return read_snapshot(image, mapper, detector, config, previous=previous, tracked=tracked)
    return snapshot_from_tracks(settle)
