"""The colour detector: balls as blobs of a player's colour, sized by the table's geometry.

Per frame: crop to the table's bounding box, shrink so the smallest ball is
about `analysis_radius_px` across (the classification cost scales with the
pixels), cut to the bounding box of the table mask and the caller's mask, label
every pixel through a 24-bit BGR lookup table made from the colour model's
(`BgrLabels`: the same labels, one lookup a pixel), keep the table mask,
then per colour take connected components within the box of its pixels. The expected ball
radius at each pixel comes from the calibration (the apparent size of a ball
resting there), so a blob is accepted if its area is at least `min_area` of a
ball's and, when it is big enough to hold several touching balls, no part of it
is deeper than a ball (a hand, a sleeve, a painted area is); touching balls of
one colour are split, for any count, by placing discs of the expected radius
where they cover most of the blob (`_split`). Each single ball's centre is then
refined on the full-resolution pixels around it. Paint of a player's colour is
no ball: what of it the first frame shows away from the balls is the table's
(`learn_paint`), and a ball-sized disc shaded far less than the player's own
balls were on the first frame is flat paint (`_flat`).

Most balls lie still most of the time, and measuring a blob (its colour
posterior, a split, the full-resolution refinement) is most of the cost. So a
blob of the colour, box size (each side within a pixel), area (within
`SAME_AREA`) and centroid (within `SAME_CENTRE_PX`) of one measured on the
frame before is the same blob: its balls are the ones measured then, moved on
by how far its centroid moved since (so a creeping ball is followed frame by
frame), with the colour score measured then. The reference stays the frame it
was measured on, so a blob is measured afresh once its centroid has moved
`SAME_CENTRE_PX` from there. The frame is shrunk by halving (block
averages, exact and fast) and a bilinear last step of less than 2x.

A blob whose centroid moved further keeps its measurement all the same while its picture is the same: a
measured blob of one ball lies near (`STILL_CENTRE_PX`), its box grown by `STILL_MARGIN` still holds this one's once the
camera's shake since is undone, and the picture there changed by less than `still_level` (`_still`). A centroid
wanders with the pixels at the colour's edge, which flicker with the video's noise: on the 4-player board it sent
45 % of the blobs to be measured again, most of them lying still. Balls not yet at rest (`unsettled_near`, set by
the pipeline) are judged by their centroid alone: a ball creeping to rest is measured as often as before.

A blob gone for a frame or more and back as it was (the centroid test, against a blob measured before it went) keeps
that measurement for `LAPSED_CALLS` calls, away from balls not yet at rest, when the picture test keeps it not and it
is not a chain of `CHAIN` balls or more (`_same_blob`): touching balls flicker between one blob and two with the
video's noise, and on the 4-player board a pair's blob was split afresh each time it merged again. A cell keeps every
blob lapsed round it.

Once the table has settled, a quiet frame of the frame loop (`settled`) is not looked at blob by blob: with every
ball at rest (no `unsettled_near`, no `resplit_near`), when the analysis image (blurred over 3x3) lies nowhere under
the view's mask more than `quiet_level` outside the range of the last measured frame's image round each pixel (3x3,
per channel), the camera's shake since undone as a whole-pixel shift, the balls found then are the balls now, moved by
the shake (`_quiet`). The test is against the measured frame, not the one before, so a creep or a lighting drift adds
up until it is seen; a frame is measured at least every `quiet_max_frames` frames, and none is kept unless the last
`QUIET_AGREEING` measured found the same balls (`_same_balls`): what comes and goes with the video's noise is looked
for on every frame (after two, piratenbillard_v22 kept a ninth ball split off a row seen end on, and three readings
were dropped as impossible). Before the table settles nothing is kept: starcluster_v31's last marble, lost in its
roll and found again on one frame in three, crept a millimetre a second, too little to change the picture, and was
kept missed until the table settled without it. Most frames between a settle and the next shot are quiet, and on the
4-player board measuring them was most of the frame loop: blobs whose centroid or picture changed with the video's
noise were measured afresh.

Touching balls that overlap in the image (a full row seen end on from a low camera) cover their blob about as
well split one way as another, so a split found afresh on every frame changes its count and centres with the
video's noise. A blob of `CHAIN` balls or more measured afresh keeps the balls a split found before (on the last
frame each view measured, or before `forget`) where a split afresh finds fewer, while they hold the blob
(`_holds`: each keeps half the share of a ball's pixels a new one needs), each one's disc looks as on the frame
before (`_looks_now`: a struck ball leaves its space's paint, in its colour, where it lay) and each is still
found a ball (not the table before play, not paint). Round where the open shot's ball was struck from
(`resplit_near`, set by the pipeline) blobs are split afresh.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Collection, Mapping, Sequence

import cv2
import numpy as np

from calibration.geometry import Point, Rect
from rules.colours import BallColour
from rules.errors import InputError
from vision.config import ColourDetectorConfig, PipelineConfig
from vision.detect.colour_model import (
    BACKGROUND,
    SHADE_DISC,
    UNKNOWN,
    ColourModel,
    BgrLabels,
    build_tables,
    check_separation,
    colour_lab,
    disc_mask,
    learn_model,
    shading,
    surface_lab,
    table_pixels,
)
from vision.games import game_vision
from vision.mapping import BoardMapper
from vision.numeric import Halvings, block_means, percentile_sorted
from vision.types import Detection

TABLE_MARGIN_MM = 40.0  # look this far beyond the table edge (balls leaving it, gutters)
# A blob is one measured before while its centroid stays this close (analysis pixels) to the centroid it was
# measured at, and its area within this fraction of that area (centroids of still balls move 0.2 px, median; at
# 0.5 px a ball creeping along the Play Line looked still, and was settled early)
SAME_CENTRE_PX = 0.25
SAME_AREA = 0.1
STILL_CENTRE_PX = 1.5  # a blob's picture is compared with that of one measured this close (analysis pixels) ...
STILL_MARGIN = 3  # ... over its box grown by this many pixels, which must hold this blob's box (`_still`)
STILL_CALLS = 30  # ... and measured at most this many calls (frames) before: a ball's place is measured afresh now
#                   and then (never renewed, full_game's and secure's localisation was 0.02-0.06 mm worse still)
# a blob seen again as it was (`_unchanged`) on one of the last this many calls keeps that measurement: touching
# balls flicker between one blob and two with the video's noise, and were split afresh each time they merged again
LAPSED_CALLS = 30
UNSETTLED_RADII = 3.0  # a blob this many of its radii from a ball not yet at rest is judged by its centroid alone
STABLE_RADII = 0.5  # two measured frames found the same ball within this many of its radii (`_same_balls`)
QUIET_AGREEING = 3  # a frame is kept as quiet once this many measured frames in a row found the same balls
_KERNEL3 = np.ones((3, 3), np.uint8)  # a pixel's neighbours: a measured frame's range round each (`_Quiet`)
_FLOOR_SHIFT = 3  # the floor's colours (`learn_floor`) in steps of 8 per channel ...
_FLOOR_BINS = 256 >> _FLOOR_SHIFT
_CELL = 4  # analysis pixels: blobs measured before are looked up by the cell of their centroid
RADIUS_STEP = 1.1  # the discs a blob is split with: radii this ratio apart (`_split`)
SHARE_ROUNDS = 3  # the split's centres are re-placed together this many times (`_shared_out`)
LOOK_RADII = 1.0  # a split ball's look (`_Split`) is taken this many radii round its centre
CHAIN = 3  # a split of this many balls or more holds (`_Split`): a chain of touching balls splits many ways; two
#            found where a split afresh finds one are as often a ball and the paint of its space beside it
#            (piratenbillard_v14: held, a ninth ball)
BESIDE_RADII = 1.3  # a ball split from the same blob explains the pixels this many of its radii round its centre
#                    (its blurred rim and shadow with them): left out when the table-before-play test judges the others


@dataclass(frozen=True)
class _Measured:
    """A blob measured on an earlier frame: its box size (analysis pixels), centroid (analysis-box pixels) as seen
    and on the steadied image, and area when it was measured, the balls it gave, and its split into touching balls
    (None: not split)."""

    label: int
    size: tuple[int, int]
    centre: tuple[float, float]
    steady: tuple[float, float]
    area: int
    balls: tuple[Detection, ...]
    split: _Split | None = None
    picture: np.ndarray | None = None  # the analysis image round it then (`_picture`), from `picture_at` (box pixels)
    picture_at: tuple[int, int] = (0, 0)
    call: int = 0  # the detector's call that measured it


@dataclass(frozen=True)
class _Split:
    """The balls a blob of touching balls was split into (steadied analysis-box pixels) and how each one's disc
    looked on the latest frame the split held (8-bit Lab as float32, `LOOK_RADII` of `radius` round it): it holds
    while it holds the blob and the discs look the same (`_holds`, `_looks_now`)."""

    centres: tuple[tuple[float, float], ...]
    looks: tuple[np.ndarray, ...]
    radius: float


@dataclass
class _View:
    """What `detect` looks at under one caller's mask: the table mask narrowed by it (analysis scale, cut to
    its bounding box; None when nothing is left) and the blobs measured there on the frame before. The
    pipeline's frame mask and the settled-table reader's whole box each keep their own, so a settle read
    neither makes the next frame measure every blob afresh nor is made to by it."""

    given: np.ndarray | None  # the caller's mask over the detector's box, as given (None: no mask)
    keep: np.ndarray | None
    box: tuple[int, int, int, int]
    frozen: np.ndarray | None = None  # the caller's whole mask, when it can change no more (`_unchangeable`)
    measured: dict[tuple[int, int, int], _Measured] = field(default_factory=dict)
    splits: dict[tuple[int, int, int], _Measured] = field(default_factory=dict)  # `forget` keeps these (see there)
    seen_at: int = 0  # the detector's call that measured `measured` (or `splits`)
    # blobs measured on an earlier call and not seen since, with the call they were last seen on (`LAPSED_CALLS`)
    lapsed: dict[tuple[int, int, int], list[tuple[_Measured, int]]] = field(default_factory=dict)
    quiet: _Quiet | None = None  # the last frame this view measured, to tell a quiet frame by (`_quiet`)


@dataclass(frozen=True)
class _Quiet:
    """A frame a view measured: its analysis image under the view's box, its steadying transform (3x3, full-frame
    pixels -> the steadied image's), the detector's frame it was (`ColourDetector.frames`), the colours asked for, the
    balls found, and how many measured frames in a row found the same. `low` and `high`: its image's least and
    greatest value round each pixel (3x3, per channel), made when a frame is first tested against it."""

    image: np.ndarray
    steady: np.ndarray
    frame: int
    colours: frozenset[str] | None
    found: tuple[Detection, ...]
    agreeing: int  # measured frames in a row, this one's included, that found the same balls (`_same_balls`)
    low: np.ndarray | None = None
    high: np.ndarray | None = None


VIEWS = 2  # masks whose views are kept: the pipeline's and the settled-table reader's


class ColourDetector:
    """`Detector` backend "color": see the module docstring."""

    name = "color"

    def __init__(self, model: ColourModel, mapper: BoardMapper, image_size: tuple[int, int] | None = None,
                 config: ColourDetectorConfig = ColourDetectorConfig(), hop_mm: float = 0.0,
                 balls_per_player: int | None = None) -> None:
        """`hop_mm`: how high above its resting height a ball may fly (the game's `max_hop_mm`): the air above
        the table up to there is looked at too. `balls_per_player`: a blob of one colour that still holds a whole
        ball once that many are taken out (a sleeve, a painted band) is not balls; less left over is fragments
        (None: no limit)."""
        self.model = model
        self.mapper = mapper
        self.config = config
        self.hop_mm = hop_mm
        self.balls_per_player = balls_per_player
        width, height = image_size or mapper.calibration.image_size
        poly = mapper.air_polygon_px(_grown(mapper.profile.table, TABLE_MARGIN_MM), hop_mm)
        x0, y0 = np.floor(poly.min(axis=0)).astype(int)
        x1, y1 = np.ceil(poly.max(axis=0)).astype(int) + 1
        self.box = (max(x0, 0), max(y0, 0), min(x1, width), min(y1, height))
        bx0, by0, bx1, by1 = self.box
        if bx1 - bx0 < 8 or by1 - by0 < 8:
            raise InputError("colour detector: the table is not in view of this calibration's image")
        radius_full = self._radius_map(bx1 - bx0, by1 - by0)
        self.scale = float(min(1.0, config.analysis_radius_px / max(np.percentile(radius_full, 2), 1.0)))
        # halved while the shrink is 2x or more: the box is trimmed to a multiple of 2 ** halvings (a few
        # pixels of its margin), so every halving is an exact block average
        self._halvings = max(0, int(np.floor(np.log2(1 / self.scale)))) if self.scale < 1.0 else 0
        step = 2 ** self._halvings
        bx1, by1 = bx0 + (bx1 - bx0) // step * step, by0 + (by1 - by0) // step * step
        self.box = (bx0, by0, bx1, by1)
        radius_full = radius_full[:by1 - by0, :bx1 - bx0]
        self.size = (max(1, round((bx1 - bx0) * self.scale)), max(1, round((by1 - by0) * self.scale)))
        # full-frame pixels -> the analysis box's (3x3), as `_to_box` maps one point
        self._to_box_affine = np.array([[self.scale, 0, (0.5 - bx0) * self.scale - 0.5],
                                        [0, self.scale, (0.5 - by0) * self.scale - 0.5], [0, 0, 1]])
        self.radius = cv2.resize(radius_full, self.size, interpolation=cv2.INTER_LINEAR) * self.scale
        mask = np.zeros((self.size[1], self.size[0]), np.uint8)
        local = (poly - [bx0, by0]) * self.scale
        cv2.fillConvexPoly(mask, np.round(local * 16).astype(np.int32), 255, cv2.LINE_8, 4)
        self.table_mask = mask
        # every 24-bit BGR colour -> its label, the lightness gate included: one lookup a pixel per frame
        self._bgr_labels = BgrLabels(model)
        self._labels = [*range(1, len(model.players) + 1), UNKNOWN]
        self._views: list[_View] = []  # by the caller's mask, the latest last: see `_view`
        self._closings: dict[int, np.ndarray] = {}
        self.paint = np.zeros((self.size[1], self.size[0]), np.uint8)  # label painted there (`learn_paint`), or 0
        self._painted = False  # any paint learnt: else `detect` skips the paint mask
        # beyond the table's edge (looked at for balls leaving it): the floor, its colours that read as a player's
        # learnt from the first frame (`learn_floor`; None: none do)
        table = np.zeros_like(mask)
        t = mapper.profile.table  # its outline on the floor's plane: a floor pixel lies outside it
        ground = mapper.calibration.board_to_image(np.array([[t.x_min, t.y_min], [t.x_max, t.y_min],
                                                             [t.x_max, t.y_max], [t.x_min, t.y_max]], float))
        edge = (ground - [bx0, by0]) * self.scale
        cv2.fillConvexPoly(table, np.round(edge * 16).astype(np.int32), 255, cv2.LINE_8, 4)
        self._beyond = (mask > 0) & (table == 0)
        self._floor: np.ndarray | None = None
        # the table before play at the analysis scale (8-bit Lab as float32) and where it is known (not under a ball
        # then): `learn_bare`; None: not learnt
        self._bare: np.ndarray | None = None
        self._bare_known = np.zeros((self.size[1], self.size[0]), bool)
        self._calls = 0  # `detect` calls: which view measured its blobs last
        # image points (full-frame pixels) round which a split into touching balls is found afresh, not held: where
        # the open shot's ball was struck from (it left its space's paint there), set by the pipeline
        self.resplit_near: Sequence[tuple[float, float]] = ()
        # image points (full-frame pixels) of the balls not yet at rest, set by the pipeline: blobs round them keep an
        # earlier measurement only while their centroid stays put (`_same_blob`)
        self.unsettled_near: Sequence[tuple[float, float]] = ()
        self.reused = 0  # blobs that kept an earlier measurement, and blobs measured: for the benchmark
        self.measured = 0
        self.quiet = 0  # frames kept as quiet (`_quiet`)
        self.frames = 0  # `detect` calls, quiet frames too

    @staticmethod
    def warm_up() -> None:
        """The colour tables made once a process (`build_tables`), which the first frame's learning made otherwise."""
        build_tables()

    @classmethod
    def learn(cls, image: np.ndarray, mapper: BoardMapper, players: Sequence[str],
              samples_mm: Mapping[str, Sequence[Point]] | None = None,
              config: PipelineConfig = PipelineConfig(),
              colours: Mapping[str, BallColour] | None = None,
              balls_per_player: int | None = None) -> ColourDetector:
        """A detector whose colours are learned from `image`, the first frame of a game.

        `samples_mm` (player -> board points known to hold that player's balls on this frame, from the
        game's `colour_samples`) teach the players' colours; a player without any keeps their given colour
        (`colours`), else their nominal one. The rest of the table in `image` teaches the background. Colours
        too close to each other or to the table surface seen here are refused (`check_separation`).
        """
        known: dict[str, list[tuple[float, float, float]]] = {}
        for player, points in (samples_mm or {}).items():
            discs = mapper.ball_discs_px(np.array(points, float))
            if discs:
                known[player] = discs
        h, w = image.shape[:2]
        table = table_pixels((h, w), mapper.table_polygon_px(0.0))
        everything = [ball for balls in known.values() for ball in balls]
        balls = disc_mask((h, w), np.array([b[:2] for b in everything]), np.array([b[2] for b in everything]), 1.5) \
            if everything else None
        check_separation({p: colour_lab(p, colours) for p in players}, surface_lab(image, table, balls),
                         config.colour_model.min_delta_e, "give the players' colours as measured (`referee calibrate "
                         "--assign`), or play with balls of more distinct colours")
        model = learn_model(image, players, known, table, config.colour_model, colours)
        detector = cls(model, mapper, (w, h), config.detector, game_vision(mapper.profile.game).max_hop_mm,
                       balls_per_player)
        found = [(d.u, d.v, d.radius_px) for d in detector.detect(image)]
        detector.forget()
        detector.learn_paint(image, known, found)
        detector.learn_floor(image)
        return detector

    def learn_paint(self, image: np.ndarray, known: Mapping[str, Sequence[tuple[float, float, float]]],
                    found: Sequence[tuple[float, float, float]]) -> None:
        """What of each player's colour the first frame shows on the table away from their balls is paint (a
        starting row painted in a seat's colour, seen round the balls standing in it): `detect` reads it as the
        table's from then on, so it neither joins the balls on it into one blob nor stands as a ball of its own.
        Only for players whose every ball lies where `known` (player -> (u, v, r) px) says; away means further
        than `paint_clear_radii` from those and from every other ball `found` ((u, v, r) px) on the frame."""
        self._unquiet()
        self.paint = np.zeros((self.size[1], self.size[0]), np.uint8)
        self._painted = False
        if not known:
            return
        labels = self._classify(self._shrink(image))
        clear = np.zeros_like(self.paint)
        balls = [(u, v, r) for centres in known.values() for u, v, r in centres]
        # and the balls found elsewhere; one found within two radii of a known ball is that ball, or the paint of
        # its space split off it (clearing round it, the paint there was never learnt: piratenbillard_v2)
        balls += [(fu, fv, fr) for fu, fv, fr in found if all((fu - u) ** 2 + (fv - v) ** 2 > (2 * r) ** 2
                                                              for u, v, r in balls)]
        self._clear_round(clear, balls)
        for player in known:
            label = self.model.label_of(player)
            self.paint[(labels == label) & (clear == 0)] = label
        self._painted = bool(self.paint.any())

    def learn_uncovered(self, image: np.ndarray, player: str, outline_px: np.ndarray,
                        balls: Sequence[tuple[float, float, float]]) -> None:
        """The paint of a starting space its ball stood on, seen now that the ball has left (`learn_paint` could
        not see under it): what of `player`'s colour lies inside `outline_px` (the space on the table, full
        resolution pixels), clear of `balls` ((u, v, r) px: the balls round it) as `learn_paint` keeps clear of
        them. An emptied starting space took in the shadow of the ball behind it and the top of the one in front,
        was not flat, and stood as a ball: piratenbillard_v7 read a ninth ball there and lost a capture."""
        small = self._shrink(image)
        labels = self._classify(small)
        inside = np.zeros_like(self.paint)
        local = np.column_stack(self._to_box(*np.asarray(outline_px, float).T))
        cv2.fillConvexPoly(inside, np.round(local * 16).astype(np.int32), 255, cv2.LINE_8, 4)
        clear = np.zeros_like(self.paint)
        self._clear_round(clear, balls)
        label = self.model.label_of(player)
        self.paint[(labels == label) & (inside > 0) & (clear == 0)] = label
        self._painted = bool(self.paint.any())
        if self._bare is not None:  # and the empty space is the table's as it is now
            seen = (inside > 0) & (clear == 0)
            self._bare[seen] = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)[seen]
            self._bare_known |= seen
        self.forget()

    def learn_bare(self, image: np.ndarray, balls: Sequence[tuple[float, float, float]]) -> None:
        """The table before play, `image`, known where it shows no ball (`balls`: (u, v, r) px, the balls on it):
        a ball found later whose disc still looks like it is the table is a look-alike of the player's colour
        (`_on_bare`). A dark gutter read as a shaded peach ball and slot rims as rust ones (starcluster_v8, _v12: 24 %
        and 1 % of detections right); no colour threshold told them apart from the balls' shaded sides, but the
        empty table there did."""
        self._bare = cv2.cvtColor(self._shrink(image), cv2.COLOR_BGR2LAB).astype(np.float32)
        under = np.zeros((self.size[1], self.size[0]), np.uint8)
        self._clear_round(under, balls)
        self._bare_known = (under == 0) & (self.table_mask > 0)
        self.forget()

    def follow_camera(self, moved: np.ndarray, image: np.ndarray) -> None:
        """The camera moved and was re-calibrated: `moved` (3x3, full-frame pixels before -> now, on the table's
        plane, from the two calibrations) carries the table before play to where the table shows on `image`, the
        frame it was re-calibrated on; the two are then aligned to a fraction of a pixel on the table's own texture
        (the calibrations agree to a pixel or two: a slot's edge that far off differs like a ball)."""
        if self._bare is None:
            return
        to_box = self._to_box_affine
        # box pixels now -> before, as ECC finds it (the box's own pixels: the bare table is compared there)
        back = np.linalg.inv(to_box @ np.asarray(moved, float) @ np.linalg.inv(to_box)).astype(np.float32)
        now = cv2.cvtColor(self._shrink(image), cv2.COLOR_BGR2LAB)[..., 0].astype(np.float32)
        try:
            _, aligned = cv2.findTransformECC(now, self._bare[..., 0], back, cv2.MOTION_HOMOGRAPHY,
                                              (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 50, 1e-4),
                                              self._bare_known.view(np.uint8), 1)
            back = np.asarray(aligned, np.float32)
        except cv2.error:
            pass  # did not converge: the calibrations' estimate stands
        size = (self.size[0], self.size[1])
        inverse = cv2.WARP_INVERSE_MAP
        self._bare = cv2.warpPerspective(self._bare, back, size, flags=cv2.INTER_LINEAR | inverse)
        self._bare_known = cv2.warpPerspective(self._bare_known.view(np.uint8), back, size,
                                               flags=cv2.INTER_NEAREST | inverse, borderValue=0).view(bool)
        self.forget()

    def _on_bare(self, cut: np.ndarray, origin: tuple[int, int], centre: tuple[float, float], r: float,
                 shift: tuple[float, float], beside: Sequence[tuple[float, float]] = ()) -> bool:
        """Does the disc of a ball found at `centre` (analysis-box pixels, radius `r` there) look like the table
        before play there (`learn_bare`)? `cut` is the shrunk image looked at (it starts at `origin` of the box);
        `shift` takes the camera's shake out (this frame's box pixels -> the steadied ones); `beside`: the centres of
        the other balls split from the same blob, whose discs are theirs to explain, not this one's."""
        if self._bare is None or self.config.bare_delta <= 0:
            return False
        for judged in ((), beside) if beside else ((),):
            differs = self._bare_difference(cut, origin, centre, r, shift, judged)
            if differs is not None and differs < self.config.bare_delta:
                return True
        return False

    def _bare_difference(self, cut: np.ndarray, origin: tuple[int, int], centre: tuple[float, float], r: float,
                         shift: tuple[float, float], beside: Sequence[tuple[float, float]] = ()) -> float | None:
        """`_on_bare`'s measure: the disc's mean difference from the table before play (8-bit Lab, |dL| + |da| +
        |db|), less the lower quartile of the same over the ring 1.5-2.5 radii round it (lighting drift and shadows
        change the ring too; a hand or the ball beside it changes only part of it), both where the table before
        play is known. None where it is not known at the disc's centre or over half of it (a ball stood there), or
        the patch leaves the box. (Judged on the known part: piratenbillard_v14's starting row's paint between two
        of its balls, half a ball from the nearer, stood as a ninth ball of its player.) The discs of the balls
        `beside` it in its blob are left out of its disc: a marble in its slot and the dark slot floor beside it,
        read as the marble's shaded side, were one blob split into two balls, and the second one's disc, half of it
        the marble's, differed from the table (starcluster_v23: a phantom marble at a settle, read as p1's third on
        the board, and p1 "out of balls")."""
        assert self._bare is not None
        reach = int(np.ceil(2.5 * r))
        cx, cy = int(round(centre[0])), int(round(centre[1]))
        sx, sy = int(round(centre[0] + shift[0])), int(round(centre[1] + shift[1]))
        x0, y0 = cx - reach - origin[0], cy - reach - origin[1]
        side = 2 * reach + 1
        height, width = self._bare.shape[:2]
        if x0 < 0 or y0 < 0 or x0 + side > cut.shape[1] or y0 + side > cut.shape[0] \
                or sx - reach < 0 or sy - reach < 0 or sx + reach >= width or sy + reach >= height:
            return None
        known = self._bare_known[sy - reach:sy + reach + 1, sx - reach:sx + reach + 1]
        if not known[reach, reach]:  # most often so: a ball standing where one stood before play
            return None
        offsets = np.arange(-reach, reach + 1, dtype=np.float64)
        distance = np.hypot(offsets[None, :] + cx - centre[0], offsets[:, None] + cy - centre[1])
        whole = distance <= r
        for bx, by in beside:
            whole &= np.hypot(offsets[None, :] + cx - bx, offsets[:, None] + cy - by) > BESIDE_RADII * r
        if beside and 4 * np.count_nonzero(whole) < np.count_nonzero(distance <= r):
            return None  # too little of its own to judge
        disc = whole & known
        ring = (distance >= 1.5 * r) & (distance <= 2.5 * r) & known
        if 2 * np.count_nonzero(disc) < np.count_nonzero(whole) or np.count_nonzero(ring) < np.count_nonzero(disc):
            return None
        # the table then at this patch's place on the steadied image, to a fraction of a pixel (a slot's dark edge on
        # the white table, half a pixel off, differs by more than a ball: starcluster_v12)
        then = cv2.getRectSubPix(self._bare, (side, side), (cx + shift[0], cy + shift[1]))
        now = cv2.cvtColor(np.ascontiguousarray(cut[y0:y0 + side, x0:x0 + side]), cv2.COLOR_BGR2LAB)
        differs = cv2.absdiff(now.astype(np.float32), then).sum(axis=2)
        around = np.sort(differs[ring], axis=None).astype(np.float64)
        return float(differs[disc].mean()) - percentile_sorted(around, 25)

    def _clear_round(self, clear: np.ndarray, balls: Sequence[tuple[float, float, float]]) -> None:
        """Mark, on the analysis box's mask `clear`, `paint_clear_radii` round each ball ((u, v, r) full px)."""
        for u, v, r in balls:  # full-resolution pixels -> the analysis box's
            centre = self._to_box(u, v)
            cv2.circle(clear, (int(round(centre[0] * 4)), int(round(centre[1] * 4))),
                       max(1, int(round(self.config.paint_clear_radii * r * self.scale * 4))), 255, -1, cv2.LINE_8, 2)

    def table_labels(self, image: np.ndarray, part: tuple[int, int, int, int] | None = None) -> np.ndarray:
        """Labels of the detection box at full resolution (or of its `part`: x0, y0, x1, y1 in the box's pixels),
        the learnt paint read as the table's (as `detect` reads it): a place's pixel count is then its balls', not
        the starting row's paint round them (with it, one ball in a painted space read as 1.1-1.8 balls and the
        space's count flickered between one and two). By the label table: `ColourModel.classify`'s labels."""
        bx0, by0, bx1, by1 = self.box
        x0, y0, x1, y1 = part if part is not None else (0, 0, bx1 - bx0, by1 - by0)
        labels = self._classify(np.ascontiguousarray(image[by0 + y0:by0 + y1, bx0 + x0:bx0 + x1]))
        if self._painted:
            paint = cv2.resize(self.paint, (bx1 - bx0, by1 - by0), interpolation=cv2.INTER_NEAREST)[y0:y1, x0:x1]
            labels[labels == paint] = BACKGROUND
        return labels

    def learn_floor(self, image: np.ndarray) -> None:
        """The colours the first frame shows beyond the table's edge that read as a player's (a brown floor for a
        tan or a salmon ball: starcluster_v4 and _v6 read 20 to 90 such "balls" beyond the edge, and every
        settled reading was dropped as impossible) are the floor's there from then on, give or take a step of 8
        in each of B, G and R (`_FLOOR_SHIFT`: lighting drift). Only beyond the edge, where no ball rests in
        play: on the table the colour model decides as before."""
        self._unquiet()
        self._floor = None
        small = self._shrink(image)
        labels = self._classify(small)
        seen = small[self._beyond & (labels != BACKGROUND) & (labels != UNKNOWN)]
        if not len(seen):
            return
        floor = np.zeros((_FLOOR_BINS,) * 3, bool)
        q = seen >> _FLOOR_SHIFT
        floor[q[:, 0], q[:, 1], q[:, 2]] = True
        grown = floor.copy()  # a step either way in each channel
        for axis in range(3):
            grown[tuple(slice(1, None) if a == axis else slice(None) for a in range(3))] |= \
                floor[tuple(slice(None, -1) if a == axis else slice(None) for a in range(3))]
            grown[tuple(slice(None, -1) if a == axis else slice(None) for a in range(3))] |= \
                floor[tuple(slice(1, None) if a == axis else slice(None) for a in range(3))]
            floor = grown.copy()
        self._floor = floor

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

    def detect(self, image: np.ndarray, mask: np.ndarray | None = None, steady: np.ndarray | None = None,
               colours: Collection[str] | None = None, settled: bool = False,
               halvings: Halvings | None = None) -> list[Detection]:
        """Balls in a BGR frame; `mask` (uint8, 255 = look here, full frame size) narrows the table mask;
        `steady` (2x3, full-frame pixels of this frame -> the steadied image's) takes camera shake out of the
        test of which blobs are where they were; `colours`: the players' colours (or "unknown") wanted, None:
        all. Blobs of a colour not wanted are not measured at all (with a player at the Play Line, the blobs of
        the colour no player has, skin and clothes, were most of what a Star Cluster frame measured).
        `settled`: the frame loop's call (which keeps `unsettled_near` up to date) while the table has settled since
        a ball last moved: a quiet frame may keep the balls of the last one measured (`_quiet`). A settle's reading,
        read once, is always measured. `halvings`: `image`'s, made by another stage already."""
        bx0, by0, bx1, by1 = self.box
        view = self._view(mask)
        keep, (sx0, sy0, sx1, sy1) = view.keep, view.box
        if keep is None:
            return []
        if self.scale == 1.0:  # only the looked-at part of the box is classified
            small = image[by0 + sy0:by0 + sy1, bx0 + sx0:bx0 + sx1]
        else:  # shrink the whole box (so the pixels are those of the full box), then cut
            small = self._shrink(image, halvings)[sy0:sy1, sx0:sx1]
        now = np.eye(3) if steady is None else np.vstack([steady, [0.0, 0.0, 1.0]])
        asked = None if colours is None else frozenset(colours)
        self.frames += 1
        blurred = cv2.GaussianBlur(small, (3, 3), 0) if settled and self.config.quiet_level > 0 else None
        if blurred is not None:
            kept = self._quiet(view, blurred, now, asked)
            if kept is not None:
                return kept
        labels = cv2.bitwise_and(self._classify(small), keep)
        if self._painted:  # a player's colour painted on the table is the table's
            labels[labels == self.paint[sy0:sy1, sx0:sx1]] = BACKGROUND
        if self._floor is not None:  # the floor's colours beyond the table's edge are the floor's
            suspect = self._beyond[sy0:sy1, sx0:sx1] & (labels != BACKGROUND) & (labels != UNKNOWN)
            ys, xs = np.nonzero(suspect)
            q = small[ys, xs] >> _FLOOR_SHIFT
            floor = self._floor[q[:, 0], q[:, 1], q[:, 2]]
            labels[ys[floor], xs[floor]] = BACKGROUND
        out: list[Detection] = []
        measured: dict[tuple[int, int, int], _Measured] = {}
        # the splits into touching balls found before, the latest first, whichever view found them (the settled-table
        # reader, asked only at a settle, holds the frame loop's split of a row)
        splits = [seen for each in sorted(self._views, key=lambda v: -v.seen_at)
                  for seen in (each.measured, each.splits) if seen]
        wanted = self._labels if colours is None else [label for label in self._labels
                                                         if self.model.name_of(label) in colours]
        for label in wanted:  # in label order, as np.unique gave them
            binary = cv2.compare(labels, label, cv2.CMP_EQ)
            x, y, w, h = cv2.boundingRect(binary)  # of its pixels: the components are found within it
            if w and h:
                out += self._blobs(binary[y:y + h, x:x + w], label, small, (x, y), image, (sx0, sy0), view,
                                   measured, steady, splits)
        self._calls += 1
        view.lapsed = _lapsed(view.lapsed, view.measured, view.seen_at, measured, self._calls)
        view.measured, view.splits, view.seen_at = measured, {}, self._calls
        found = self._one_per_ball(_apart(out))
        before = view.quiet
        view.quiet = None if blurred is None else _Quiet(
            blurred, now, self.frames, asked, tuple(found),
            before.agreeing + 1 if before is not None and _same_balls(before.found, before.steady, found, now) else 1)
        return found

    def _quiet(self, view: _View, blurred: np.ndarray, now: np.ndarray,
               colours: frozenset[str] | None) -> list[Detection] | None:
        """The balls of a quiet frame (see the module docstring): those the view found on the last frame it measured,
        moved by the camera's shake since; None when this frame is to be measured. `blurred`: this frame's analysis
        image under the view's box, blurred over 3x3 (resampled by the shake, a thin line's values change, not only
        its place); `now`: its steadying transform (3x3)."""
        then = view.quiet
        if then is None or then.agreeing < QUIET_AGREEING or then.colours != colours \
                or self.frames - then.frame > self.config.quiet_max_frames or self.unsettled_near or self.resplit_near:
            return None
        assert view.keep is not None
        sx0, sy0 = view.box[:2]
        to_cut = np.array([[1.0, 0, -sx0], [0, 1.0, -sy0], [0, 0, 1]]) @ self._to_box_affine
        # a pixel of this frame -> where it showed on the measured one, both in the cut's pixels: the shake since,
        # taken as a whole-pixel shift when that is within a pixel everywhere (the range round each pixel holds it)
        back = to_cut @ np.linalg.inv(then.steady) @ now @ np.linalg.inv(to_cut)
        h, w = blurred.shape[:2]
        corners = np.array([[0, 0, 1], [w - 1, 0, 1], [0, h - 1, 1], [w - 1, h - 1, 1]], float).T
        moved = (back @ corners)[:2] - corners[:2]
        dx, dy = (int(round(float(np.mean(m)))) for m in moved)
        if np.abs(moved - [[dx], [dy]]).max() > 1.0 or abs(dx) >= w or abs(dy) >= h:
            return None
        if then.low is None:
            then = view.quiet = replace(then, low=cv2.erode(then.image, _KERNEL3),
                                        high=cv2.dilate(then.image, _KERNEL3))
        assert then.low is not None and then.high is not None
        x0, x1, y0, y1 = max(0, -dx), min(w, w - dx), max(0, -dy), min(h, h - dy)
        here = blurred[y0:y1, x0:x1]
        low, high = then.low[y0 + dy:y1 + dy, x0 + dx:x1 + dx], then.high[y0 + dy:y1 + dy, x0 + dx:x1 + dx]
        keep = view.keep[y0:y1, x0:x1]
        level = self.config.quiet_level
        if cv2.norm(cv2.subtract(low, here), cv2.NORM_INF, mask=keep) > level \
                or cv2.norm(cv2.subtract(here, high), cv2.NORM_INF, mask=keep) > level:
            return None
        self.quiet += 1
        ahead = np.linalg.inv(now) @ then.steady  # the measured frame's pixels -> this frame's
        return [replace(d, u=float(ahead[0, 0] * d.u + ahead[0, 1] * d.v + ahead[0, 2]),
                        v=float(ahead[1, 0] * d.u + ahead[1, 1] * d.v + ahead[1, 2])) for d in then.found]

    def _one_per_ball(self, found: list[Detection]) -> list[Detection]:
        """On a table where balls do not stack, two balls lie at least a diameter apart on the board: of two players'
        balls whose board points are closer than `apart_diameters` of one, the less sure is a fragment of the other
        (a dark blue marble in a gutter, its lit side read as the violet of the other player's marbles, 7-13 mm from its
        middle: starcluster_v24). Balls behind others are not lost to it: what shows of a ball lies further out than
        its middle. Unrecognised colours are left as they are: no player's ball."""
        limit = self.config.apart_diameters * self.mapper.profile.ball_diameter_mm
        mine = [i for i, d in enumerate(found) if d.colour in self.model.players]
        if limit <= 0 or self.mapper.profile.stacking or len(mine) < 2:
            return found
        board = self.mapper.to_board(np.array([[found[i].u, found[i].v] for i in mine], float))
        kept: list[int] = []
        for k in sorted(range(len(mine)), key=lambda k: -found[mine[k]].score):
            if all(np.hypot(*(board[k] - board[j])) >= limit for j in kept):
                kept.append(k)
        dropped = {mine[k] for k in range(len(mine))} - {mine[k] for k in kept}
        return [d for i, d in enumerate(found) if i not in dropped]

    def forget(self) -> None:
        """Measure every blob afresh on the next frame. Its splits into touching balls are kept, to hold while they
        hold the blobs (`_holds`): each ball is judged afresh all the same (the table before play, paint)."""
        for view in self._views:
            view.splits = {key: m for key, m in view.measured.items() if m.split is not None} or view.splits
            view.measured, view.lapsed = {}, {}
        self._unquiet()

    def _unquiet(self) -> None:
        """The next frame is measured, not kept as quiet: what a frame's colours read as changed."""
        for view in self._views:
            view.quiet = None

    def halved(self) -> tuple[int, int, int, int, int] | None:
        """The region (x0, y0, x1, y1, full-resolution pixels) `detect` asks `Halvings` for, and by how much it
        halves it; None when it does not halve."""
        if not self._halvings:
            return None
        bx0, by0, bx1, by1 = self.box
        return int(bx0), int(by0), int(bx1), int(by1), 2 ** self._halvings

    def _shrink(self, image: np.ndarray, halvings: Halvings | None = None) -> np.ndarray:
        """The frame's detection box at the analysis scale: halved (block averages) while 2x or more is left, then
        bilinear. `halvings`: the frame's, shared with the hand watch (the same pixels, where the box allows)."""
        bx0, by0, bx1, by1 = self.box
        k = 2 ** self._halvings
        shared = None if halvings is None else halvings.block_means(bx0, by0, bx1, by1, k)
        box = block_means(image[by0:by1, bx0:bx1], k) if shared is None else shared
        if (box.shape[1], box.shape[0]) != self.size:
            box = cv2.resize(box, self.size, interpolation=cv2.INTER_LINEAR)
        return box

    def _classify(self, bgr: np.ndarray) -> np.ndarray:
        """Labels of a BGR uint8 image through the 24-bit lookup table (the same as `ColourModel.classify`)."""
        packed = cv2.cvtColor(bgr, cv2.COLOR_BGR2BGRA).view(np.uint32)[..., 0]
        packed &= 0xFFFFFF
        return self._bgr_labels(packed)

    def _view(self, mask: np.ndarray | None) -> _View:
        """The view of `mask` (uint8, full frame; None: the whole box): the one kept for an equal mask (the
        pipeline passes the same one every frame, read-only: then it is not compared again), else a new one, its
        blobs to be measured afresh (those at the edge of another mask may have lost pixels to it)."""
        bx0, by0, bx1, by1 = self.box
        frozen = mask if mask is not None and _unchangeable(mask) else None
        if frozen is not None:  # the same unchangeable mask again: no need to compare it (0.1-0.3 ms a frame)
            for view in self._views:
                if view.frozen is frozen:
                    return view
        m = None if mask is None else mask[by0:by1, bx0:bx1]
        for view in self._views:
            if (m is None and view.given is None) or (
                    m is not None and view.given is not None and np.array_equal(m, view.given)):
                if frozen is not None:
                    view.frozen = frozen
                return view
        keep = self.table_mask > 0
        if m is not None:
            ms = m if self.scale == 1.0 else cv2.resize(m, self.size, interpolation=cv2.INTER_NEAREST)
            keep &= ms > 0
        rows, cols = np.flatnonzero(keep.any(axis=1)), np.flatnonzero(keep.any(axis=0))
        if not len(rows):
            view = _View(None if m is None else m.copy(), None, (0, 0, 0, 0), frozen)
        else:
            sub = (int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1)
            cut = np.ascontiguousarray(keep[sub[1]:sub[3], sub[0]:sub[2]]).astype(np.uint8) * 255
            view = _View(None if m is None else m.copy(), cut, sub, frozen)
        self._views = [*self._views[-(VIEWS - 1):], view]
        return view

    def _blobs(self, binary: np.ndarray, label: int, cut: np.ndarray, at: tuple[int, int], image: np.ndarray,
               origin: tuple[int, int], view: _View, measured: dict[tuple[int, int, int], _Measured],
               steady: np.ndarray | None, splits: Sequence[dict[tuple[int, int, int], _Measured]] = ()
               ) -> list[Detection]:
        """Balls among the pixels of one label. `cut` is the shrunk image looked at, which starts at `origin`
        of the analysis box; `binary` is cut from it at `at`. A blob that is one the `view` measured before (on
        its last call, or lapsed since) keeps its measurement; each blob goes into `measured`. A blob of touching
        balls keeps the split found before (in the first of `splits` that has one) while it holds."""
        cfg = self.config
        fill = self.model.fill[label - 1] if label != UNKNOWN else float(np.mean(self.model.fill))
        count, comp, stats, centroids = _components(binary)
        if count <= 1:
            return []
        small = cut[at[1]:at[1] + binary.shape[0], at[0]:at[0] + binary.shape[1]]
        sx0, sy0 = origin[0] + at[0], origin[1] + at[1]
        # the cheap tests first, on all components at once: area against the expected ball area, streaks
        cxs, cys = centroids[1:, 0] + sx0, centroids[1:, 1] + sy0
        r_all = self.radius[np.minimum(cys.astype(int), self.size[1] - 1),
                            np.minimum(cxs.astype(int), self.size[0] - 1)].astype(np.float64)
        n_all = stats[1:, cv2.CC_STAT_AREA] / (fill * np.pi * r_all * r_all)
        # a blob too small to split is one ball, maybe blurred into a streak by its speed, unless it is longer than
        # that (a painted edge); bigger blobs are split into balls, or found not to be balls, one by one below
        ok = (n_all >= cfg.min_area) & ((n_all > cfg.split_area) | (
            np.maximum(stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT]) <= cfg.max_streak_radii * r_all))
        found: list[Detection] = []
        kept = np.flatnonzero(ok) + 1
        steadied = self._steadied(centroids[kept] + (sx0, sy0), steady)
        for k, still in zip(kept, steadied):
            cx, cy = centroids[k]
            r = float(r_all[k - 1])
            n = n_all[k - 1]
            x, y, w, h = (int(v) for v in stats[k, :4])
            centre = (float(cx) + sx0, float(cy) + sy0)
            area = int(stats[k, cv2.CC_STAT_AREA])
            same = self._same_blob(view, label, (x + sx0, y + sy0, w, h), centre, still, area, r, cut, origin)
            if same is not None:
                then, (du, dv) = same
                measured[(label, *_cell(then.steady))] = then
                found += [replace(ball, u=ball.u + du / self.scale, v=ball.v + dv / self.scale) for ball in then.balls]
                self.reused += 1
                continue
            self.measured += 1
            balls_before = len(found)
            at = (x + sx0 - STILL_MARGIN, y + sy0 - STILL_MARGIN)
            picture = _picture(cut, origin, at, (w + 2 * STILL_MARGIN, h + 2 * STILL_MARGIN)) \
                if cfg.still_level > 0 else None
            sub = comp[y:y + h, x:x + w] == k
            index, _ = self.model.bin_index(small[y:y + h, x:x + w])
            posterior = float(self.model.posterior[index[sub]].mean())
            # a ball whose whole disc reads as its colour (on a dark gutter, say) covers 1/fill expected areas,
            # more than `split_area`: it is split only when the blob does not fit in one ball's circle
            several = n > cfg.split_area and not _one_disc(sub, r, cfg.one_ball_radius)
            no_balls = _Measured(label, (w, h), centre, still, area, (), None, picture, at, self._calls)
            if several and _depth(sub) > cfg.max_depth_radii * r:
                # thicker than a ball anywhere: a hand, a sleeve or a painted area, not balls (remembered as such,
                # so a still one is not measured again)
                measured[(label, *_cell(still))] = no_balls
                continue
            radii = self.radius[y + sy0:y + sy0 + h, x + sx0:x + sx0 + w]
            split = _split(sub, radii, r, fill, cfg.split_share, cfg.min_width_radii) if several \
                else [(cx - x, cy - y, 1.0)]
            most = self.balls_per_player
            if not split or most is not None and len(split) > most and max(c[2] for c in split[most:]) >= 1.0:
                # no part of it is a ball (a painted line, a stripe of shading), or a whole ball more than a player
                # has is left once their balls are taken out: a sleeve, a painted band
                measured[(label, *_cell(still))] = no_balls
                continue
            # beyond a player's balls, what is left is fragments: a full starting row seen end on is one blob, and
            # the paint of its spaces round the balls and the rims of its near balls add up to most of a ball more
            # (counted by area, such a row was refused as a painted band on most frames: piratenbillard_v4)
            shift = (still[0] - centre[0], still[1] - centre[1])
            seen = [(px + x + sx0, py + y + sy0) for px, py, _ in split[:most]]
            balls = self._balls(image, cut, origin, label, seen, r, shift, posterior, n, refine=len(seen) == 1)
            holding: _Split | None = None
            if several and cfg.keep_split_share > 0:
                # the balls the split before found, while they hold the blob, look as they did, and are more than
                # the split finds afresh (the steadied centres, this frame's shake put back): a row seen end on
                # splits many ways, and its count changed with the video's noise
                earlier = next((e for e in (_split_before(done, label, still) for done in splits) if e is not None),
                               None)
                if earlier is not None and earlier.split is not None and len(earlier.split.centres) > len(balls) \
                        and not self._near_struck(earlier.split):
                    placed = [(ex - shift[0], ey - shift[1]) for ex, ey in earlier.split.centres]
                    fits = _holds(sub, radii, [(px - x - sx0, py - y - sy0) for px, py in placed], fill,
                                  cfg.split_share * cfg.keep_split_share)
                    looks = self._looks_now(cut, origin, earlier.split, shift) if fits else None
                    again = self._balls(image, cut, origin, label, placed, r, shift, posterior, n) if looks else []
                    if looks is not None and len(again) == len(placed):
                        balls, holding = again, replace(earlier.split, looks=looks)
                if holding is None and len(balls) >= CHAIN:
                    where = [placed_at for _, placed_at in balls]
                    holding = _Split(tuple((bx + shift[0], by + shift[1]) for bx, by in where),
                                     tuple(_look(cut, origin, c, r) for c in where), r)
            found += [ball for ball, _ in balls]
            measured[(label, *_cell(still))] = _Measured(label, (w, h), centre, still, area,
                                                         tuple(found[balls_before:]), holding, picture, at,
                                                         self._calls)
        return found

    def _same_blob(self, view: _View, label: int, box: tuple[int, int, int, int], centre: tuple[float, float],
                   steady: tuple[float, float], area: int, r: float, cut: np.ndarray,
                   origin: tuple[int, int]) -> tuple[_Measured, tuple[float, float]] | None:
        """The blob measured before that this one (its box and centroid in analysis-box pixels, radius `r` there) is,
        and how far its balls moved since (analysis pixels): by its centroid (`_unchanged`: as far as the centroid
        moved, so a creeping ball is followed); else, away from the balls not yet at rest, by its picture (`_still`:
        as far as the camera's shake moved the picture; the centroid's wander is the noise at its edge), or by its
        centroid against a blob of fewer than `CHAIN` balls lapsed in the last `LAPSED_CALLS` calls (touching balls
        seen merged on one frame and apart on the next). The picture comes first: a lone ball whose blob flickers
        between two shapes keeps one measurement (kept by the lapsed blob of each shape, it jumped between the two
        measurements' places, a few pixels apart, and piratenbillard_v2's table did not settle before a lift).
        Chains keep their split by its own hold (kept when lapsed, piratenbillard_v22's rows seen end on held splits
        the noise had chosen: placed balls 84.8 -> 42.0 %)."""
        earlier = _unchanged(view.measured, label, box[2:], steady, area)
        if earlier is None:
            u, v = self._to_full(*centre)
            reach = UNSETTLED_RADII * r / self.scale
            if any(np.hypot(u - pu, v - pv) <= reach for pu, pv in self.unsettled_near):
                return None
            if self.config.still_level > 0:
                kept = _still(view.measured, label, box, centre, steady, cut, origin, self.config.still_level,
                              self._calls - STILL_CALLS)
                if kept is not None:
                    return kept
            earlier = _unchanged(view.lapsed, label, box[2:], steady, area, fewer_than=CHAIN)
            if earlier is None:
                return None
        return earlier, (centre[0] - earlier.centre[0], centre[1] - earlier.centre[1])

    def _balls(self, image: np.ndarray, cut: np.ndarray, origin: tuple[int, int], label: int,
               seen: Sequence[tuple[float, float]], r: float, shift: tuple[float, float], posterior: float, n: float,
               refine: bool = False) -> list[tuple[Detection, tuple[float, float]]]:
        """The balls of one blob at `seen` (analysis-box pixels, radius `r` there; `n`: the blob's area in expected
        ball areas, `posterior`: its colour score), each with where it was placed: those not found to be the table
        before play or paint. `refine`: a lone ball is re-centred on the full-resolution pixels first."""
        cfg = self.config
        share = min(1.0, n / len(seen))
        radius = r / self.scale
        full = [self._to_full(*c) for c in seen]
        if refine and cfg.refine:
            full = [self._refine(image, *full[0], radius, label)]
        boxed = [self._to_box(u, v) for u, v in full]
        balls = []
        for j, (u, v) in enumerate(full):
            if self._on_bare(cut, origin, boxed[j], r, shift, boxed[:j] + boxed[j + 1:]):
                continue  # the table as it was before play: a look-alike of the colour (a dark gutter, a rim)
            if self._flat(image, (u, v), radius, label):
                continue  # paint of the player's colour (an emptied starting space), not a ball
            score = float(np.clip(posterior * min(1.0, share / cfg.full_score_share), 0, 1))
            if label == UNKNOWN:
                score = min(score, cfg.unknown_score)
            balls.append((Detection(u, v, radius, self.model.name_of(label), round(score, 3)), seen[j]))
        return balls

    def _flat(self, image: np.ndarray, centre: tuple[float, float], r: float, label: int) -> bool:
        """Is the ball found at `centre` (full-resolution pixels, radius `r`) paint of its player's colour? The
        disc inside its rim is shaded less than `flat_shading` of what the player's own balls showed on the first
        frame (a painted area is flat, a ball is lit on one side and shaded on the other; a disc reaching past the
        paint's edge is not flat, so only paint at least a ball wide is judged paint; a player whose balls were
        not seen then is not judged)."""
        known = self.model.shading
        reference = known[label - 1] if label != UNKNOWN and label <= len(known) else 0.0
        if reference <= 0:
            return False
        h, w = image.shape[:2]
        reach = SHADE_DISC * r
        x0, y0 = max(int(np.floor(centre[0] - reach)), 0), max(int(np.floor(centre[1] - reach)), 0)
        x1, y1 = min(int(np.ceil(centre[0] + reach)) + 1, w), min(int(np.ceil(centre[1] + reach)) + 1, h)
        if x1 <= x0 or y1 <= y0:
            return False
        window = image[y0:y1, x0:x1]
        xs = np.arange(x0, x1, dtype=np.float64)
        ys = np.arange(y0, y1, dtype=np.float64)[:, None]
        disc = (xs - centre[0]) ** 2 + (ys - centre[1]) ** 2 <= reach * reach
        light = cv2.cvtColor(window, cv2.COLOR_BGR2LAB)[..., 0]
        return shading(light[disc]) < self.config.flat_shading * reference

    def _near_struck(self, split: _Split) -> bool:
        """Does a ball of `split` lie within two diameters of a point of `resplit_near` (the struck ball's
        neighbours in its row: a pitch is up to two diameters)?"""
        reach = 4 * split.radius / self.scale
        return any(np.hypot(u - pu, v - pv) <= reach for u, v in (self._to_full(x, y) for x, y in split.centres)
                   for pu, pv in self.resplit_near)

    def _looks_now(self, cut: np.ndarray, origin: tuple[int, int], split: _Split,
                   shift: tuple[float, float]) -> tuple[np.ndarray, ...] | None:
        """How the balls of an earlier `split` look now, if each looks as it did on the frame before (its disc's mean
        |dL| + |da| + |db|, 8-bit Lab, under `split_look_delta`); None if one does not. A ball struck from a painted
        starting row leaves its space's paint in its player's colour, which holds the split's disc as the ball did
        (piratenbillard_v4: a ninth ball). Frame to frame: the light drifts."""
        reach = int(np.ceil(LOOK_RADII * split.radius))
        offsets = np.arange(-reach, reach + 1, dtype=np.float64)
        disc = np.hypot(offsets[None, :], offsets[:, None]) <= split.radius
        looks = []
        for (sx, sy), then in zip(split.centres, split.looks):
            now = _look(cut, origin, (sx - shift[0], sy - shift[1]), split.radius)
            if float(cv2.absdiff(now, then).sum(axis=2)[disc].mean()) > self.config.split_look_delta:
                return None
            looks.append(now)
        return tuple(looks)

    def _steadied(self, centres: np.ndarray, steady: np.ndarray | None) -> list[tuple[float, float]]:
        """Analysis-box centroids -> where they lie on the steadied image, in analysis-box pixels."""
        if steady is None or not len(centres):
            return [(float(x), float(y)) for x, y in centres]
        origin = np.array(self.box[:2], float)
        full = origin + (centres + 0.5) / self.scale - 0.5
        moved = full @ np.asarray(steady, float)[:, :2].T + np.asarray(steady, float)[:, 2]
        return [(float(x), float(y)) for x, y in (moved - origin + 0.5) * self.scale - 0.5]

    def _to_full(self, x: float, y: float) -> tuple[float, float]:
        bx0, by0 = self.box[:2]
        return bx0 + (x + 0.5) / self.scale - 0.5, by0 + (y + 0.5) / self.scale - 0.5

    def _to_box(self, u: float, v: float) -> tuple[float, float]:
        bx0, by0 = self.box[:2]
        return (u - bx0 + 0.5) * self.scale - 0.5, (v - by0 + 0.5) * self.scale - 0.5

    def _refine(self, image: np.ndarray, u: float, v: float, r: float, label: int) -> tuple[float, float]:
        """Centre of the ball's own colour within 1.2 radii, on the full-resolution pixels, in two rounds.

        The colour mask is closed with a disc one radius wide first: a ball's shaded side classifies only
        in speckles (less so where paint of its colour lies near, which counts as background), and
        without closing the centroid is pulled to the lit side (measured: 6 px on 23 px balls). The closing's
        cost grows as the radius to the fourth (16 % of a four-player board's run at 16-23 px), so the mask is
        pooled into k x k blocks (a block holding a hit is set), k the largest power of two that leaves the radius
        `refine_radius_px` blocks or more, and closed there (a ball's rim moves out by less than a block, all round).
        """
        if self.scale >= 1.0:
            return u, v
        h, w = image.shape[:2]
        least = self.config.refine_radius_px
        k = 2 ** max(0, int(np.floor(np.log2(r / least)))) if least > 0 else 1
        size = max(3, int(round(r / k)) | 1)
        closing = self._closings.get(size)
        if closing is None:
            closing = self._closings[size] = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size))
        for _ in range(2):
            half = int(np.ceil(1.2 * r))
            x0, y0 = max(int(round(u)) - half, 0), max(int(round(v)) - half, 0)
            x1, y1 = min(int(round(u)) + half + 1, w), min(int(round(v)) + half + 1, h)
            if x1 <= x0 or y1 <= y0:
                return u, v
            labels = self._classify(image[y0:y1, x0:x1])
            xs = np.arange(x0, x1, dtype=np.int64)
            ys = np.arange(y0, y1, dtype=np.int64)[:, None]
            near = (xs - u) ** 2 + (ys - v) ** 2 <= (1.2 * r) ** 2
            hit = (labels == label) & near
            if np.count_nonzero(hit) < 0.2 * np.pi * r * r * 0.3:
                return u, v
            hit = _closed(hit, closing, k) & near
            # the mean pixel position of the hits: sums of whole numbers, exact, as `xs[hit].mean()` gave it
            m = cv2.moments(hit.view(np.uint8), binaryImage=True)
            u, v = (m["m10"] + x0 * m["m00"]) / m["m00"], (m["m01"] + y0 * m["m00"]) / m["m00"]
        return u, v


def _closed(hit: np.ndarray, disc: np.ndarray, k: int) -> np.ndarray:
    """`hit` closed with `disc` (bool); with `k` > 1, on `hit` pooled into k x k blocks (a block holding a hit is set,
    `disc` sized for those): every pixel of a block the closing sets is set."""
    if k == 1:
        return cv2.morphologyEx(hit.view(np.uint8), cv2.MORPH_CLOSE, disc).view(bool)
    h, w = hit.shape
    pooled = np.ascontiguousarray(cv2.dilate(hit.view(np.uint8), np.ones((k, k), np.uint8), anchor=(0, 0))[::k, ::k])
    closed = cv2.morphologyEx(pooled, cv2.MORPH_CLOSE, disc)
    return cv2.resize(closed, (closed.shape[1] * k, closed.shape[0] * k), interpolation=cv2.INTER_NEAREST)[:h, :w] \
        .view(bool)


def _unchangeable(mask: np.ndarray) -> bool:
    """Is `mask` read-only and its own memory (not a view of another array, which may change under it)? Then the same
    array passed again holds the same pixels, unless its owner makes it writeable again (the pipeline never does)."""
    return not mask.flags.writeable and mask.base is None


def _grown(rect: Rect, margin_mm: float) -> Rect:
    return Rect(rect.x_min - margin_mm, rect.y_min - margin_mm, rect.x_max + margin_mm, rect.y_max + margin_mm)


def _apart(found: list[Detection]) -> list[Detection]:
    """Balls of one colour cannot lie closer than a radius apart in the image (two balls in one space overlap into
    one blob, one detection), nor balls of any two colours closer than half a radius (what shows of a ball behind
    another lies beyond the front one's middle): of two such detections, a fragment of a ball (its shading, paint
    of its colour next to it; a magenta ball's shaded side read as lilac, piratenbillard_v10) on or beside the
    ball, the surer stays."""
    kept: list[Detection] = []
    for d in sorted(found, key=lambda d: -d.score):
        if all((o.u - d.u) ** 2 + (o.v - d.v) ** 2 >= (min(o.radius_px, d.radius_px) * (
                1.0 if o.colour == d.colour else 0.5)) ** 2 for o in kept):
            kept.append(d)
    chosen = {id(d) for d in kept}
    return [d for d in found if id(d) in chosen]  # in the order found


def _components(binary: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """`cv2.connectedComponentsWithStats(binary, connectivity=8)`, the statistics summed over the set pixels
    only: the same numbers (whole-number sums, one division), at a fraction of the cost on a sparse mask."""
    count, comp = cv2.connectedComponents(binary, connectivity=8, ltype=cv2.CV_32S)
    ys, xs = np.nonzero(binary)
    ids = np.asarray(comp, np.int32)[ys, xs]
    area = np.bincount(ids, minlength=count)
    x0, y0 = np.full(count, binary.shape[1], np.int64), np.full(count, binary.shape[0], np.int64)
    x1, y1 = np.full(count, -1, np.int64), np.full(count, -1, np.int64)
    np.minimum.at(x0, ids, xs)
    np.minimum.at(y0, ids, ys)
    np.maximum.at(x1, ids, xs)
    np.maximum.at(y1, ids, ys)
    stats = np.column_stack([x0, y0, x1 - x0 + 1, y1 - y0 + 1, area]).astype(np.int32)
    with np.errstate(invalid="ignore", divide="ignore"):
        centroids = np.column_stack([np.bincount(ids, xs, count), np.bincount(ids, ys, count)]) / area[:, None]
    return count, comp, stats, centroids


def _same_balls(before: Sequence[Detection], then: np.ndarray, now: Sequence[Detection], steady: np.ndarray) -> bool:
    """Did two frames (their steadying transforms `then` and `steady`, 3x3) show the same balls: as many of each
    colour, each within `STABLE_RADII` of its radius of one of the other's, the shake undone?"""
    if sorted(d.colour for d in before) != sorted(d.colour for d in now):
        return False
    if not now:
        return True
    a = cv2.transform(np.array([[(d.u, d.v) for d in before]], float), then[:2])[0]
    b = cv2.transform(np.array([[(d.u, d.v) for d in now]], float), steady[:2])[0]
    gap = np.hypot(*(a[:, None, :] - b[None, :, :]).transpose(2, 0, 1))
    same = np.array([d.colour for d in before])[:, None] == np.array([d.colour for d in now])[None, :]
    reach = np.array([d.radius_px for d in now]) * STABLE_RADII
    return bool(np.all(np.any(same & (gap <= reach[None, :]), axis=0)))


def _lapsed(lapsed: dict[tuple[int, int, int], list[tuple[_Measured, int]]],
            last: dict[tuple[int, int, int], _Measured], last_call: int, now: dict[tuple[int, int, int], _Measured],
            call: int) -> dict[tuple[int, int, int], list[tuple[_Measured, int]]]:
    """A view's blobs lapsed (by the cell of their steadied centroid, with the call each was last seen on) once its
    call `call` measured `now`: those its call before (`last_call`) measured, `last`, and those lapsed before, last
    seen within `LAPSED_CALLS` calls; not those seen in `now` again. A cell holds every one: touching balls flicker
    between several blobs round the same centroid."""
    kept = {id(m) for m in now.values()}
    out: dict[tuple[int, int, int], list[tuple[_Measured, int]]] = {}
    for key, each in lapsed.items():
        left = [(m, seen) for m, seen in each if seen >= call - LAPSED_CALLS and id(m) not in kept]
        if left:
            out[key] = left
    if last_call >= call - LAPSED_CALLS:
        for key, m in last.items():
            if id(m) not in kept:
                out.setdefault(key, []).append((m, last_call))
    return out


def _unchanged(before: Mapping[tuple[int, int, int], _Measured | list[tuple[_Measured, int]]], label: int,
               size: tuple[int, int], steady: tuple[float, float], area: int,
               fewer_than: int | None = None) -> _Measured | None:
    """The blob of this label measured before (on the frame `before`, or lapsed since: the latest first) that this
    one is (see the module docstring), of `fewer_than` balls if given; None when there is none."""
    cx, cy = _cell(steady)
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            found = before.get((label, cx + dx, cy + dy), ())
            for earlier in (found,) if isinstance(found, _Measured) else (m for m, _ in reversed(found)):
                if (fewer_than is None or len(earlier.balls) < fewer_than) \
                        and abs(earlier.size[0] - size[0]) <= 1 \
                        and abs(earlier.size[1] - size[1]) <= 1 \
                        and abs(earlier.area - area) <= SAME_AREA * earlier.area \
                        and np.hypot(earlier.steady[0] - steady[0], earlier.steady[1] - steady[1]) <= SAME_CENTRE_PX:
                    return earlier
    return None


def _still(before: dict[tuple[int, int, int], _Measured], label: int, box: tuple[int, int, int, int],
           centre: tuple[float, float], steady: tuple[float, float], cut: np.ndarray, origin: tuple[int, int],
           level: float, since: int) -> tuple[_Measured, tuple[float, float]] | None:
    """The blob of this label measured before whose picture this one's is (see the module docstring): one ball (a
    blob of touching balls keeps its split by `_holds`), measured at the detector's call `since` or later, whose
    steadied centroid lies within `STILL_CENTRE_PX` of this one's, whose picture (its box grown by `STILL_MARGIN`)
    holds this blob's box once the camera's shake since then is undone, and changed there by at most `level` (the
    mean |change| per channel over its box grown by a pixel); with how far the shake moved it since (analysis
    pixels). None when there is none."""
    x, y, w, h = box
    cx, cy = _cell(steady)
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            earlier = before.get((label, cx + dx, cy + dy))
            if earlier is None or earlier.picture is None or earlier.call < since or len(earlier.balls) > 1 \
                    or np.hypot(earlier.steady[0] - steady[0], earlier.steady[1] - steady[1]) > STILL_CENTRE_PX:
                continue
            # the shake since then: how far the steadying moves this centroid less how far it moved that one
            shake = (centre[0] - steady[0] - earlier.centre[0] + earlier.steady[0],
                     centre[1] - steady[1] - earlier.centre[1] + earlier.steady[1])
            px, py = earlier.picture_at[0] + shake[0], earlier.picture_at[1] + shake[1]
            ph, pw = earlier.picture.shape[:2]
            if x < px or y < py or x + w > px + pw or y + h > py + ph:
                continue  # it reaches beyond the picture
            now = _picture(cut, origin, (px, py), (pw, ph))
            core = 3 * (earlier.size[0] + 2) * (earlier.size[1] + 2)
            if float(cv2.norm(now, earlier.picture, cv2.NORM_L1)) <= level * core:
                return earlier, shake
    return None


def _picture(cut: np.ndarray, origin: tuple[int, int], at: tuple[float, float], size: tuple[int, int]) -> np.ndarray:
    """The analysis image (`cut`, which starts at `origin` of the box) of `size` from `at` (box pixels, to a fraction
    of one), float32, blurred over 3x3: undoing the shake resamples the picture, which blurs its sharp edges by about
    as much (unblurred, most still balls the test refused on piratenbillard/four_players had changed by 5-7 levels,
    in shakes of 0.2-0.8 analysis pixels)."""
    w, h = size
    grown = cv2.getRectSubPix(cut, (w + 2, h + 2), (at[0] - origin[0] + (w - 1) / 2, at[1] - origin[1] + (h - 1) / 2),
                              patchType=cv2.CV_32F)
    return cv2.GaussianBlur(grown, (3, 3), 0)[1:-1, 1:-1]


def _look(cut: np.ndarray, origin: tuple[int, int], centre: tuple[float, float], r: float) -> np.ndarray:
    """The patch `LOOK_RADII` radii round a ball at `centre` (analysis-box pixels; `cut` starts at `origin` of the
    box), to a fraction of a pixel, in 8-bit Lab as float32."""
    side = 2 * int(np.ceil(LOOK_RADII * r)) + 1
    patch = cv2.getRectSubPix(cut, (side, side), (centre[0] - origin[0], centre[1] - origin[1]))
    return cv2.cvtColor(patch, cv2.COLOR_BGR2LAB).astype(np.float32)


def _split_before(before: dict[tuple[int, int, int], _Measured], label: int,
                  steady: tuple[float, float]) -> _Measured | None:
    """The blob of this label split into touching balls on the frame `before` whose centroid lies nearest this
    one's (in the cells round it); None when there is none."""
    cx, cy = _cell(steady)
    near = [earlier for dx in (-1, 0, 1) for dy in (-1, 0, 1)
            if (earlier := before.get((label, cx + dx, cy + dy))) is not None and earlier.split is not None]
    return min(near, key=lambda e: np.hypot(e.steady[0] - steady[0], e.steady[1] - steady[1]), default=None)


def _holds(sub: np.ndarray, radii: np.ndarray, centres: Sequence[tuple[float, float]], fill: float,
           keep: float) -> bool:
    """Do the balls of an earlier split of a blob (`centres`, in `sub`'s pixels) still hold it? Each blob pixel goes
    to the nearest centre whose disc (of the expected radius there, `radii`) holds it, and every centre must keep
    `keep` of a whole ball's expected pixels (`fill` of its disc); not when a ball left or moved off its disc.
    Touching balls overlapping in the image (a full row seen end on from a low camera) cover their blob about as
    well split one way as another: split afresh on every frame, piratenbillard_v22's far balls were 8 on one frame
    and 7 on the next, centres jumping 20-45 mm, and a strike nobody played was called."""
    h, w = sub.shape
    placed = np.array(centres, np.float64).reshape(-1, 2)
    rk = radii[np.clip(np.round(placed[:, 1]).astype(int), 0, h - 1),
               np.clip(np.round(placed[:, 0]).astype(int), 0, w - 1)].astype(np.float64)
    ys, xs = np.nonzero(sub)
    scaled = ((xs[:, None] - placed[None, :, 0]) ** 2 + (ys[:, None] - placed[None, :, 1]) ** 2) / (rk * rk)[None]
    nearest = np.argmin(scaled, axis=1)
    own = scaled[np.arange(len(xs)), nearest] <= 1.0
    whole = np.bincount(nearest[own], minlength=len(placed)) / (fill * np.pi * rk * rk)
    return bool((whole >= keep).all())


def _cell(centre: tuple[float, float]) -> tuple[int, int]:
    return int(centre[0] // _CELL), int(centre[1] // _CELL)


def _one_disc(sub: np.ndarray, r: float, limit: float) -> bool:
    """Does the blob fit in a circle of `limit` ball radii? Two touching balls need about 2 r (the split
    takes peaks at least r apart, so a blob it can split never fits in 1.5 r)."""
    ys, xs = np.nonzero(sub)
    _, radius = cv2.minEnclosingCircle(np.column_stack([xs, ys]).astype(np.float32))
    return radius <= limit * r


def _depth(sub: np.ndarray) -> float:
    """How deep the blob is: its distance transform's largest value (a ball's disc: one radius)."""
    return float(cv2.distanceTransform(np.pad(sub.astype(np.uint8), 1), cv2.DIST_L2, 3).max())


def _split(sub: np.ndarray, radii: np.ndarray, r: float, fill: float, share: float,
           min_width: float) -> list[tuple[float, float, float]]:
    """Centres of touching balls in one blob, for any count: discs of the expected radius, placed one at a time
    where a disc covers the largest share of its area in pixels not yet explained (a ball's shaded side and
    highlight leave holes and speckles, which a disc's pixel count ignores, unlike the distance transform's
    peaks), each re-centred on its pixels and taken out, while a disc still covers `share` of one ball's expected
    pixels (`fill` of its area), and kept when its pixels span `min_width` radii across (a ball does; a painted
    line or a stripe of shading covers a disc in one direction only). Each ball comes as (x, y, the share of a
    whole ball's expected pixels its disc took out), in the order taken out, the centres then re-placed together
    (`_shared_out`). None: no part of the blob is a ball.

    A disc's radius is the expected one where it is placed (`radii`, per pixel of `sub`), in steps of
    `RADIUS_STEP` from the blob's own `r`: a full starting row seen end on spans near and far, and its near
    balls are up to a quarter larger than its far ones. With the one radius of the blob's middle, a disc placed between
    two far balls covered both and merged them, and a near ball's rim, left over, became a ball of its own."""
    steps = np.round(np.log(np.maximum(radii, 1e-3) / r) / np.log(RADIUS_STEP)).astype(int)
    sizes = {int(k): r * RADIUS_STEP ** int(k) for k in np.unique(steps[sub])}
    pad = int(np.ceil(max(sizes.values()))) + 1
    padded = np.pad(sub.astype(np.float32), pad)
    steps = np.pad(steps, pad, mode="edge")
    left = padded.copy()
    yy, xx = np.mgrid[-pad:pad + 1, -pad:pad + 1]
    discs = {k: ((xx * xx + yy * yy) <= rk * rk).astype(np.float32) for k, rk in sizes.items()}
    area = float(((xx * xx + yy * yy) <= r * r).sum())  # a disc of the blob's own radius
    # each disc's kernel cut to its own square (the zeros round it add nothing, for less work)
    kernels = {k: (disc[pad - int(rk):pad + int(rk) + 1, pad - int(rk):pad + int(rk) + 1], int(rk))
               for (k, disc), rk in zip(discs.items(), sizes.values())}
    ys, xs = np.mgrid[0:left.shape[0], 0:left.shape[1]]
    blocked = np.zeros(left.shape, bool)  # within a radius of a ball found: touching balls' centres lie further apart
    chosen: list[tuple[float, float]] = []
    balls: list[tuple[float, float, float, float]] = []  # x, y, radius, share of a whole ball
    while True:
        cover = np.zeros(left.shape, np.float32)  # pixels a disc placed there covers, scaled to a disc of radius r
        for k, (kernel, reach) in kernels.items():
            here = steps == k if len(discs) > 1 else slice(None)
            cover[here] = cv2.filter2D(left, -1, kernel, anchor=(reach, reach), borderType=cv2.BORDER_CONSTANT)[here] \
                * np.float32(area / float(discs[k].sum()))
        cover[blocked] = 0
        y, x = np.unravel_index(int(np.argmax(cover)), cover.shape)
        if cover[y, x] < share * fill * area:
            break
        k = int(steps[y, x])
        rk = sizes[k]
        want = share * fill * float(discs[k].sum())
        px, py = float(x), float(y)
        for _ in range(2):  # to the mean of its pixels within the disc
            near = ((xs - px) ** 2 + (ys - py) ** 2 <= rk * rk) & (left > 0)
            if near.any():  # whole numbers: their sums, and so the means, are exact
                n = int(np.count_nonzero(near))
                px, py = int(xs[near].sum()) / n, int(ys[near].sum()) / n
        d2 = (xs - px) ** 2 + (ys - py) ** 2
        inside = d2 <= rk * rk
        covered = float(left[inside].sum())
        left[inside] = 0
        apart = all(np.isnan(qx) or (px - qx) ** 2 + (py - qy) ** 2 >= rk * rk for qx, qy in chosen)
        # re-centred, it must still hold a ball's share, a radius from the others, and span the disc both ways (a
        # painted line or a stripe of shading covers it in one direction only)
        if covered >= want and apart and _width(xs[inside & (padded > 0)], ys[inside & (padded > 0)]) >= min_width * rk:
            chosen.append((px, py))
            balls.append((px, py, rk, covered / (want / share)))
            blocked |= d2 < rk * rk
        else:  # explained, but no ball
            chosen.append((np.nan, np.nan))
    centres = _shared_out(np.column_stack([xs[padded > 0], ys[padded > 0]]).astype(np.float64),
                          np.array([(px, py) for px, py, _, _ in balls], np.float64).reshape(-1, 2),
                          np.array([rk for _, _, rk, _ in balls], np.float64))
    return [(float(px) - pad, float(py) - pad, whole) for (px, py), (_, _, _, whole) in zip(centres, balls)]


def _shared_out(pixels: np.ndarray, centres: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """Ball centres re-placed together: each pixel (x, y) goes to the nearest centre, and each centre moves to the
    mean of its pixels within its radius, `SHARE_ROUNDS` times. Taken out one at a time, discs slide along a chain
    of balls that overlap in the image (a full row seen end on: its far balls overlap the next by a third), one
    way on one frame and the other way on the next (piratenbillard_v6: resting balls jumped 10-15 mm from frame
    to frame, the table did not settle for a second, and a jump past half a space was called a shot); shared
    out, they settle where the balls are. (The pixels are whole numbers, so their sums, and means, are exact.)"""
    if len(centres) < 2:
        return centres
    for _ in range(SHARE_ROUNDS):
        dx = pixels[:, 0, None] - centres[None, :, 0]
        dy = pixels[:, 1, None] - centres[None, :, 1]
        d2 = dx * dx + dy * dy
        nearest = d2.argmin(axis=1)
        own = d2[np.arange(len(pixels)), nearest] <= radii[nearest] ** 2
        counts = np.bincount(nearest[own], minlength=len(centres))
        sums = [np.bincount(nearest[own], pixels[own, axis], minlength=len(centres)) for axis in (0, 1)]
        taken = counts > 0
        centres[taken] = np.column_stack(sums)[taken] / counts[taken, None]
    return centres


def _width(xs: np.ndarray, ys: np.ndarray) -> float:
    """How wide a set of pixels is across its narrowest direction (5th to 95th percentile, plus a pixel)."""
    if len(xs) < 3:
        return 0.0
    pts = np.column_stack([xs, ys]).astype(np.float64)
    pts -= pts.mean(axis=0)
    _, vectors = np.linalg.eigh(pts.T @ pts)
    across = np.sort(pts @ vectors[:, 0])
    return percentile_sorted(across, 95) - percentile_sorted(across, 5) + 1.0
