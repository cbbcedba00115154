"""Read the settled table: every detected ball in exactly one place (the chesscog lesson, count kept).

Once the table has settled, each ball the detector finds (touching balls
split, `vision.detect.colour`) is put in exactly one place: the slot
(Star Cluster Ball) or space (Piratenbillard) nearest its contact point, a
global assignment per player that conserves the ball count. A ball can never
count in two places (a ball resting on a cell border once read as 0.36 of a
ball in one space and 0.39 in the next, one ball too many). Where the game
lets balls share a place (Piratenbillard), a place takes any number; where it
does not (a Star Cluster slot holds one), the assignment is the Hungarian
algorithm on the distances, so two balls near one slot go to the two nearest
free ones. The last settled table is a tie-breaker only: a ball lying within
`tie_mm` of the middle between two places stays in the one it lay in.

The pixels of each place (its outline raised to ball-centre height, labelled by
the colour model) say what the detections cannot: a space whose pixels hold
`two_balls` of a player's ball areas around a detected ball holds two (two
balls of one colour in one space overlap into one blob), and a ball that lay in
a place at the last settle and still shows a sliver of its colour there is
still there, only hidden (a ball landing on it in a capture). Balls anywhere
else (grouped, play area, gutter, off the table) keep the region the detector's
blob maps to (Star Cluster Ball: none behind the Play Line).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.geometry import Point, Rect
from rules.events import BallSighting, Location, Place, Snapshot
from vision.assignment import linear_sum_assignment
from vision.config import CellReadConfig
from vision.detect.colour import ColourDetector
from vision.games import game_vision
from vision.mapping import BoardMapper
from vision.numeric import median
from vision.settle import Settle
from vision.types import BoardBall, Detector

PLACES = (Place.SLOT, Place.CELL)  # the named places a ball is assigned to; everything else comes from the blobs
_NO_PLACE = 1e9  # the assignment's cost of a place out of a ball's reach


@dataclass(frozen=True)
class PlaceReading:
    """One place's pixel counts: player -> ratio of one ball's expected pixels."""

    at: Location
    ratios: dict[str, float]


def read_places(image: np.ndarray, mapper: BoardMapper, detector: ColourDetector) -> list[PlaceReading]:
    """Per slot / space, each player's pixel count as a multiple of one ball's. Only the pixels within the places'
    outlines are labelled (a Star Cluster table's slots are a small part of it)."""
    model = detector.model
    bx0, by0, bx1, by1 = detector.box
    width, height = bx1 - bx0, by1 - by0
    outlines = []
    for at, rect in mapper.profile.places:
        poly = mapper.ball_centre_px(np.array(rect.corners, float)) - [bx0, by0]
        x0, y0 = np.floor(poly.min(axis=0)).astype(int)
        x1, y1 = np.ceil(poly.max(axis=0)).astype(int) + 1
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, width), min(y1, height)
        if x1 > x0 and y1 > y0:
            outlines.append((at, rect, poly, (int(x0), int(y0), int(x1), int(y1))))
    if not outlines:
        return []
    px0, py0 = min(o[3][0] for o in outlines), min(o[3][1] for o in outlines)
    px1, py1 = max(o[3][2] for o in outlines), max(o[3][3] for o in outlines)
    labels = detector.table_labels(image, (px0, py0, px1, py1))
    readings = []
    for at, rect, poly, (x0, y0, x1, y1) in outlines:
        mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillConvexPoly(mask, np.round((poly - [x0, y0]) * 16).astype(np.int32), 255, cv2.LINE_8, 4)
        counts = np.bincount(labels[y0 - py0:y1 - py0, x0 - px0:x1 - px0][mask > 0], minlength=len(model.players) + 1)
        centre = np.array([[(rect.x_min + rect.x_max) / 2, (rect.y_min + rect.y_max) / 2]])
        r = float(mapper.ball_radius_px(centre)[0])
        ratios = {}
        for i, player in enumerate(model.players):
            expected = model.fill[i] * np.pi * r * r
            ratios[player] = float(int(counts[i + 1]) / expected)
        readings.append(PlaceReading(at, ratios))
    return readings


def assign_places(balls: list[BoardBall], places: tuple[tuple[Location, Rect], ...], stacking: bool,
                  held: frozenset[Location], config: CellReadConfig) -> list[Location]:
    """Each of one player's balls to exactly one place, or the region its blob maps to when it lies in none.

    A ball goes to the place it lies in (its mapped location: the nearest space or slot), at the cost of its
    distance from the place's centre. A place whose centre is at most 2 `tie_mm` further, where the last settled
    table (`held`) had this player's ball, costs 2 `tie_mm` less: a ball within `tie_mm` of the middle between two
    places stays in the one it lay in, and nothing more. With `stacking` a place takes any number of balls (each
    ball its cheapest place); otherwise one, by the Hungarian algorithm (a ball that loses its place to a nearer
    one keeps its mapped location, so the count is kept and the engine sees the clash).
    """
    if not balls:
        return []
    tie = 2 * config.tie_mm
    centres = np.array([((r.x_min + r.x_max) / 2, (r.y_min + r.y_max) / 2) for _, r in places], float)
    index = {at: j for j, (at, _) in enumerate(places)}
    cost = np.full((len(balls), len(places)), _NO_PLACE)
    for i, ball in enumerate(balls):
        distance = np.hypot(centres[:, 0] - ball.x, centres[:, 1] - ball.y)
        own = index.get(ball.location)
        if own is not None:
            cost[i, own] = distance[own]
        near = distance[own] + tie if own is not None else -1.0
        for j, (at, rect) in enumerate(places):
            # a tie: as near as its own place, or (a ball lying between places) within `tie_mm` of where it lay
            if at in held and (distance[j] <= near or own is None and rect.contains((ball.x, ball.y), config.tie_mm)):
                cost[i, j] = distance[j] - tie
    if stacking:
        chosen = {i: int(np.argmin(cost[i])) for i in range(len(balls))}
    else:
        rows, cols = linear_sum_assignment(cost)
        chosen = {int(i): int(j) for i, j in zip(rows, cols)}
    out = []
    for i, ball in enumerate(balls):
        pick = chosen.get(i)
        out.append(places[pick][0] if pick is not None and cost[i, pick] < _NO_PLACE / 2 else ball.location)
    return out


def _confidence(ratio: float, bound: float, cfg: CellReadConfig) -> float:
    """How sure a count from a pixel ratio is: 0.5 at its boundary, 1 clear of it by `margin`."""
    return 0.5 + 0.5 * min(1.0, abs(ratio - bound) / cfg.margin)


@dataclass(frozen=True)
class BareTable:
    """The table as the first frame shows it, before play (BGR, full frame), and the places it shows no ball in:
    what a place's pixels are when it is empty (`read_snapshot`'s presence test)."""

    image: np.ndarray
    places: frozenset[Location]


@dataclass(frozen=True)
class TableReading:
    """A settled table read: the snapshot, and the places that look changed from the bare table with no ball read
    in them (`read_table`), so that such a place is not taken for a later shot's ball."""

    snapshot: Snapshot
    unexplained: frozenset[Location] = frozenset()


def read_snapshot(image: np.ndarray, mapper: BoardMapper, detector: ColourDetector,
                  config: CellReadConfig = CellReadConfig(), previous: Snapshot | None = None,
                  tracked: tuple[tuple[str, Location], ...] = (), bare: BareTable | None = None,
                  steady: np.ndarray | None = None) -> Snapshot:
    """`read_table`'s snapshot, for a reading with no shot to close."""
    return read_table(image, mapper, detector, config, previous, tracked, bare, steady).snapshot


def read_table(image: np.ndarray, mapper: BoardMapper, detector: ColourDetector,
               config: CellReadConfig = CellReadConfig(), previous: Snapshot | None = None,
               tracked: tuple[tuple[str, Location], ...] = (), bare: BareTable | None = None,
               steady: np.ndarray | None = None, shooter: str | None = None,
               unexplained: frozenset[Location] | None = None) -> TableReading:
    """Every ball on the settled table: each detected ball in exactly one place, plus what the pixels add.

    `previous` (the last settled snapshot) is the prior: the tie-breaker for a ball between two places, and a
    ball that lay in a place and still shows a sliver of its colour there is still there, only partly hidden (a
    ball landing on it in a capture), not gone. `tracked` (colour, place), one per settled or lost track lying
    in a place, is the same kind of prior: a ball seen rolling into a place and stopping there, partly hidden
    behind a ball in front of it, is there. `bare` (the table before play) adds a presence test: a ball that lay in
    a place the bare table shows empty, no longer found there nor any ball near it, is still there, unrecognised,
    while the ball's disc differs from the bare table by `kept_delta` beyond its ring (starcluster_v3's dark
    glass marble: between the video's keyframes its chroma fell to C* 12 in its dark slot and no colour model
    could find it; the disc still differed from the empty slot by 74-84, empty slots by -14 to +6). It is lower than
    the `present_delta` a place with no such prior needs: the ball was there, and only a lift nobody saw empties
    the place (over Star Cluster seeds 1-36 and Piratenbillard 1-22, places emptied so measured -5 to 17, balls
    still there 22 to 82: starcluster_v16's blue marble in its dark slot, unnamed as the light drifted, 22-30).
    `steady` (2x3: `image`'s pixels -> the steadied image's) is the detector's, for its camera shake.

    `shooter`: the player whose shot this settle ends (None: none since the last settle). Where balls stack, only
    theirs can make a new pair of one colour in a place, or, at a shot's settle, those of a player a ball of whose
    is detected nowhere: a strike nobody saw may have landed it on one of theirs. `unexplained` (None: not
    followed), in a game where a shot brings a new ball onto the table: when no new ball of the shooter's was read
    anywhere, and exactly one place the bare table shows empty now differs from it by `present_delta`, with no ball
    read in it or detected near it and not among the last reading's `unexplained`, the shooter's ball is there,
    unrecognised, read at `unrecognised_confidence` (flagged for the umpire). A small far marble whose colour the
    video washes out is still a ball by its shape and shading (starcluster_v8: a peach marble 10 px wide in its far
    slot, a* 4 b* 11 where a* 28 b* 28 was given, the table's own hue; its disc differed from the empty slot by far
    more than empty slots do). The reading's `unexplained` places are those left changed and unread.
    """
    profile = mapper.profile
    many = profile.stacking
    before = Counter((b.owner, b.at) for b in previous.balls) if previous is not None else Counter()
    held = set(before) | set(tracked)
    # Star Cluster Ball: nothing behind the Play Line is read but the gutters (the shooter's lips, skin and sleeve
    # there read as red balls; the tracker does not look there either, docs/pipeline.md)
    line = profile.play_line
    behind = max(line[0][1], line[1][1]) if line is not None else -np.inf
    areas = game_vision(profile.game).ball_areas(profile)
    seen = [b for b in mapper.map(detector.detect(image, steady=steady, colours=detector.model.players))
            if b.detection.colour in detector.model.players
            and (b.y >= behind or b.location.place is Place.GUTTER) and not on_play_line_stripe(mapper, b)
            and not on_frame(areas, b, profile.ball_diameter_mm, config)]
    balls: list[BallSighting] = []
    placed: Counter[tuple[str, Location]] = Counter()
    near: set[tuple[str, Location]] = set()  # a player's detected ball lies within reach of the place
    near_new: set[tuple[str, Location]] = set()  # ... one that is not where one of theirs lay at the last settle
    reach = max(mapper.tolerance_mm, config.tie_mm) + profile.ball_diameter_mm / 2  # its pixels reach in

    bounds = np.array([(r.x_min - reach, r.y_min - reach, r.x_max + reach, r.y_max + reach)
                       for _, r in profile.places], float).reshape(-1, 4)

    def reached(of: list[BoardBall]) -> list[Location]:
        """The places a ball of `of` lies within `reach` of (`Rect.contains`, for every place and ball at once)."""
        if not of:
            return []
        xs, ys = np.array([b.x for b in of], float), np.array([b.y for b in of], float)
        hit = ((bounds[:, :1] <= xs) & (xs <= bounds[:, 2:3]) & (bounds[:, 1:2] <= ys) & (ys <= bounds[:, 3:]))
        return [at for (at, _), h in zip(profile.places, np.any(hit, axis=1)) if h]

    def within_reach(player: str, of: list[BoardBall]) -> set[tuple[str, Location]]:
        return {(player, at) for at in reached(of)}

    for player in detector.model.players:
        mine = [b for b in seen if b.detection.colour == player]
        where = assign_places(mine, profile.places, many, frozenset(at for p, at in held if p == player), config)
        for ball, at in zip(mine, where):
            if at.place in PLACES:
                placed[(player, at)] += 1
            balls.append(BallSighting(player, at, round(ball.detection.score, 3)))
        near |= within_reach(player, mine)
        # a ball placed where one of the player's lay at the last settle, no more than lay there, is that one: it
        # is no ball of a neighbouring place that moved
        near_new |= within_reach(player, [b for b, at in zip(mine, where)
                                          if at.place not in PLACES or placed[(player, at)] > before[(player, at)]])
    readings = read_places(image, mapper, detector)
    # what one of a player's balls shows on this frame, as the median ratio of the other places holding one
    # detected ball: a place is judged against the rest
    ones = {player: [(r.at, r.ratios[player]) for r in readings if placed[(player, r.at)] == 1]
            for player in detector.model.players}

    def single(player: str, here: Location) -> float:
        return median([ratio for at, ratio in ones[player] if at != here] or [1.0])

    # At a settle that closes a shot, a player with fewer balls detected in places than lay there at the last settle:
    # the ball of a strike nobody saw (struck out of a full row and lost in it) may have landed on one of theirs.
    # Each ball so unaccounted for is looked for as a pair at the bare ratio, in the places of the player's single
    # balls whose pixels say most clearly two (piratenbillard_v32: p2's ball struck unseen from (1,0) onto its own
    # at (6,0), a pair seen from behind the line as 1.35 of one ball, was read gone, out of the game, and p2's later
    # capture was lost). Not where no shot closes: a ball gone then was lifted, and a resting ball's pixels can grow
    # as the light drifts (piratenbillard_v26 after an umpire's lift nobody saw: 1.40 of the player's other balls)
    pairs_sought: set[tuple[str, Location]] = set()
    if many and shooter is not None:
        for player in detector.model.players:
            short = sum(c for (p, _), c in before.items() if p == player) - sum(
                c for (p, _), c in placed.items() if p == player)
            clearest = sorted(((r.ratios[player], r.at) for r in readings
                               if placed[(player, r.at)] == 1 and r.ratios[player] >= config.two_balls),
                              key=lambda item: -item[0])
            pairs_sought |= {(player, at) for _, at in clearest[:max(short, 0)]}
    arrived = Counter(tracked)
    inferred: list[tuple[bool, float, int]] = []  # what the pixels and the priors add to the detected balls
    anything = set(reached(seen))
    rects = dict(profile.places)
    for reading in readings:
        at = reading.at
        counts = {player: placed[(player, at)] for player in reading.ratios}
        grown = [other for other, c in counts.items() if c > before[(other, at)]]  # players with more balls here
        for player, ratio in reading.ratios.items():
            n = counts[player]
            extra: list[BallSighting] = []
            unbacked = False
            backed = max(before[(player, at)], arrived[(player, at)]) >= 2
            if many and n == 1 and ratio >= config.two_balls and (backed or (player, at) in pairs_sought or (
                    player == shooter and ratio >= config.two_balls * single(player, at))):
                # two balls of one colour in one space overlap into one blob: at the bare ratio where the last settled
                # table or the tracks that came to rest there say two as well; else where the pixels say two, beyond
                # what one of the player's balls shows on this frame (paint of its colour under a ball adds pixels),
                # and the player is the shot's striker: only their ball, landing on one of theirs, makes a new pair
                # (piratenbillard_v26: a resting ball in a painted row read as two after a lift, as the light
                # drifted: one ball's ratio there went 0.91 -> 1.53 over 8 s, the others' 0.99-1.47)
                extra.append(BallSighting(player, at, round(_confidence(ratio, config.two_balls, config), 3)))
                unbacked = not backed
            elif n == 0 and (player, at) in held and (ratio >= config.kept and (player, at) not in near
                                                      or ratio >= config.kept_beside and (player, at) not in near_new):
                # a sliver of a ball that lay here, no detected ball of its colour near that it could belong to; or
                # most of one, beside a detected ball that the place it lay in explains (two touching balls of a row
                # seen end on, found as one blob between their spaces: piratenbillard_v16's resting ball was read
                # gone, and called off the board)
                extra.append(BallSighting(player, at, config.kept_confidence))
            elif n == 0 and arrived[(player, at)] and (player, at) not in near \
                    and any(c for other, c in counts.items() if other != player):
                # a ball followed into this place until it rested, now hidden behind another player's ball in the
                # same place (seen from the side, a few per cent of it shows): the tracks say it is there
                extra += [BallSighting(player, at, config.kept_confidence)] * arrived[(player, at)]
            elif n == 0 and before[(player, at)] and bare is not None and at in bare.places and at not in anything \
                    and _changed(image, bare.image, mapper, rects[at]) >= config.kept_delta:
                # a ball that lay here, not recognised now, in a place that still does not look empty
                extra += [BallSighting(player, at, config.kept_confidence)] * before[(player, at)]
            n += len(extra)
            # balls that lay here at the last settle and have not left (the pipeline takes a struck or lifted
            # ball out of `previous`) are still here when another player's ball has landed in the place since:
            # it hides them (a capture seen from the side: 0-5 % of a ball shows)
            landed = any(other != player for other in grown)
            if many and landed and n < before[(player, at)]:
                extra += [BallSighting(player, at, config.kept_confidence)] * (before[(player, at)] - n)
            # ranked for `_within_count`: one only a pixel count says is there first, then by confidence
            inferred += [(i == 0 and unbacked, b.confidence, len(balls) + i) for i, b in enumerate(extra)]
            balls += extra
    changed: frozenset[Location] = frozenset()
    if bare is not None and unexplained is not None:
        taken = {b.at for b in balls} | {at for _, at in held}
        changed = frozenset(at for at in bare.places if at not in anything and at not in taken
                            and _changed(image, bare.image, mapper, rects[at]) >= config.present_delta)
        fresh = changed - unexplained
        had = previous.count(shooter) if previous is not None and shooter is not None else 0
        if shooter is not None and len(fresh) == 1 and sum(b.owner == shooter for b in balls) <= had:
            (at,) = fresh
            inferred.append((False, config.unrecognised_confidence, len(balls)))
            balls.append(BallSighting(shooter, at, config.unrecognised_confidence))
            changed -= fresh
    return TableReading(Snapshot(tuple(_within_count(balls, inferred, detector.balls_per_player))), changed)


def _within_count(balls: list[BallSighting], inferred: list[tuple[bool, float, int]],
                  most: int | None) -> list[BallSighting]:
    """The balls, less those that would give a player more balls than a player has (`most`): a reading that cannot
    be the table is dropped whole by the engine, so a doubtful ball must not cost the rest. The weakest go first:
    those inferred (not detected: added by a pixel count or a prior), a second ball in a space that only its pixel
    count says is there first (its starting row's paint and the ball's shadow on it read one ball as 1.1-1.8 of
    one: piratenbillard_v10), then by confidence; then detected ones, by confidence (a row of touching balls, the
    paint of spaces showing beside them, split into a ball or two too many: piratenbillard_v13's ten of a player's
    eight, every such reading dropped)."""
    if most is None:
        return balls
    ranked = {i: (False, not unbacked, confidence) for unbacked, confidence, i in inferred}
    weakest = sorted(range(len(balls)), key=lambda i: ranked.get(i, (True, True, balls[i].confidence)))
    drop: set[int] = set()
    for player in {b.owner for b in balls}:
        over = sum(b.owner == player for b in balls) - most
        drop |= set([i for i in weakest if balls[i].owner == player][:max(0, over)])
    return [b for i, b in enumerate(balls) if i not in drop]


def _changed(image: np.ndarray, bare: np.ndarray, mapper: BoardMapper, rect: Rect) -> float:
    """`changed_from_bare` at the place's centre."""
    return changed_from_bare(image, bare, mapper, ((rect.x_min + rect.x_max) / 2, (rect.y_min + rect.y_max) / 2))


def changed_from_bare(image: np.ndarray, bare: np.ndarray, mapper: BoardMapper, point: Point) -> float:
    """How far the disc of a ball resting at `point` (board mm) is from the bare table: the mean over it of |ΔL| +
    |Δa| + |Δb| (8-bit Lab), less the same over the ring 1.5-2.5 radii round it (lighting drift, a pixel of shake;
    a hand round a ball it holds changes the ring more than the disc)."""
    centre = np.array([point], float)
    (u, v), = mapper.ball_centre_px(centre)
    r = float(mapper.ball_radius_px(centre)[0])
    h, w = image.shape[:2]
    x0, x1 = max(0, int(u - 2.5 * r)), min(w, int(u + 2.5 * r) + 1)
    y0, y1 = max(0, int(v - 2.5 * r)), min(h, int(v + 2.5 * r) + 1)
    if x1 <= x0 or y1 <= y0:
        return 0.0
    now = cv2.cvtColor(image[y0:y1, x0:x1], cv2.COLOR_BGR2LAB).astype(np.float32)
    then = cv2.cvtColor(bare[y0:y1, x0:x1], cv2.COLOR_BGR2LAB).astype(np.float32)
    differs = np.abs(now - then).sum(axis=2)
    ys, xs = np.mgrid[y0:y1, x0:x1]
    distance = np.hypot(xs - u, ys - v)
    disc, ring = distance <= r, (distance >= 1.5 * r) & (distance <= 2.5 * r)
    if not disc.any() or not ring.any():
        return 0.0
    return float(differs[disc].mean() - differs[ring].mean())


def on_frame(areas: tuple[Rect, ...] | None, ball: BoardBall, diameter_mm: float, config: CellReadConfig) -> bool:
    """Is `ball` on the table's frame, more than `frame_reach_diameters` from every area a ball can be (`areas`,
    the game's `ball_areas`; None: anywhere)?"""
    if areas is None:
        return False
    reach = config.frame_reach_diameters * diameter_mm
    return not any(area.contains((ball.x, ball.y), reach) for area in areas)


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
                 previous: Snapshot | None, config: CellReadConfig = CellReadConfig(),
                 bare: BareTable | None = None, steady: np.ndarray | None = None) -> Snapshot:
    """`settled_reading`'s snapshot, for a settle that closes no shot."""
    return settled_reading(settle, image, mapper, detector, previous, config, bare, steady).snapshot


def settled_reading(settle: Settle, image: np.ndarray, mapper: BoardMapper, detector: Detector,
                    previous: Snapshot | None, config: CellReadConfig = CellReadConfig(),
                    bare: BareTable | None = None, steady: np.ndarray | None = None, shooter: str | None = None,
                    unexplained: frozenset[Location] | None = None) -> TableReading:
    """The pipeline's table reader: places read from the settled frame when the detector has a colour model to
    read their pixels with (`read_table`; `shooter` and `unexplained` as there); otherwise (a detector without
    one) the settled tracks."""
    if isinstance(detector, ColourDetector):
        # the lost tracks too: a ball seen landing in a space (come to rest there, or come from elsewhere) and lost
        # there behind the ball in front of it (a track born and lost in one place, still moving, a fleck of a
        # player's colour on a hand lifting a ball, made a ninth ball of that player: piratenbillard_v6), or seen
        # vanish in flight over a place where another ball lies, however briefly it was followed (`Settle.landed`:
        # piratenbillard_v18's capturing ball, found 0.1 s before it landed beside the captured one and lost behind it)
        hidden_by = {gone.id for gone, _ in settle.hidden_by}  # placed by the ball hiding them, below
        flown = {tr.id for tr in settle.landed}
        landed = tuple(tr for tr in settle.hidden if tr.id not in hidden_by and (
            tr.at_rest or tr.id in flown or tr.born_at is None
            or math.dist(tr.born_at, (tr.x, tr.y)) > mapper.profile.ball_diameter_mm))
        tracked = tuple((tr.colour, tr.location) for tr in settle.tracks + landed
                        if tr.location is not None and tr.location.place in PLACES)
        # a ball that vanished in flight beside a resting ball landed where that ball lies, hidden by it
        tracked += tuple((gone.colour, hider.location) for gone, hider in settle.hidden_by
                         if hider.location is not None and hider.location.place in PLACES)
        return read_table(image, mapper, detector, config, previous, tracked, bare, steady, shooter, unexplained)
    return TableReading(snapshot_from_tracks(settle))
