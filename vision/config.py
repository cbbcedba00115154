"""The referee pipeline's settings, one frozen dataclass per stage, thresholds in board mm and ms.

`referee run --config FILE` reads a game config; its `"pipeline"` object holds
these sections, each optional, each field optional (docs/config.md lists every
one with its default and meaning):

    {"rounds_per_game": 2,
     "pipeline": {"settle": {"rest_debounce_ms": 500}, "detector": {"min_area": 0.3}}}

`PipelineConfig.from_dict` builds the nested settings from such an object:
unknown sections or fields, wrong types and out-of-range values are one-line
errors naming the field by its path (`pipeline.settle.rest_debounce_ms`), so a
run is reproducible from its files alone. Each stage is handed its own section.
"""

from __future__ import annotations

import types
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

from calibration.monitor import MonitorSettings
from rules.errors import InputError
from rules.events import shown


class ConfigError(InputError):
    """A pipeline setting that cannot be used; the message names it by its path."""


def _fits_a_float(value: float) -> bool:
    """A number the stages can compute with: a float, or an integer no larger than a float holds."""
    try:
        float(value)
    except OverflowError:
        return False
    return True


def _check_numbers(section: Any, name: str) -> None:
    """Every number of a section is finite and >= 0 (thresholds, counts, times)."""
    for f in fields(section):
        value = getattr(section, f.name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not (
                _fits_a_float(value) and 0 <= value < float("inf")):
            raise ConfigError(f"pipeline config: '{name}.{f.name}' must be a number >= 0, got {shown(value)}")


@dataclass(frozen=True)
class SettleConfig:
    """When a ball is at rest and the table settled (vision/track.py, vision/settle.py, vision/shots.py)."""

    rest_speed_mm_s: float = 12.0  # a ball slower than this (median over the debounce window) may be at rest ...
    motion_speed_mm_s: float = 150.0  # faster than this = the table is in play again (a new settle will come)
    rest_debounce_ms: float = 400.0  # ... once it has stayed that slow this long; all at rest = settled
    creep_speed_mm_s: float = 4.0  # a ball that moved and still drifts this fast (0 = off) is not at rest ...
    creep_window_ms: float = 2000.0  # ... judged on up to this much of its track since it last moved fast
    flight_wait_ms: float = 1000.0  # a hopping ball that vanished in flight holds the settle this long at most ...
    roll_wait_ms: float = 3000.0  # ... one lost rolling over the field of play this long (up a board and back) ...
    unseen_landing_confidence: float = 0.5  # ... then the table settles this sure (flagged for review)
    # a ball seen this long lying in a gutter the table did not settle with went in: out of play, however soon it was
    # lifted (a marble dropped into a gutter beside the Play Line, lifted by the umpire 0.2-0.7 s later)
    gutter_sighting_ms: float = 100.0
    gutter_sighting_confidence: float = 0.5  # ... and read there this sure (under the rules' review level: flagged)
    # ... when its disc, as last seen, differs from the table before play by this much (8-bit Lab |dL|+|da|+|db|, less
    # its ring's: `vision.cells.changed_from_bare`; empty gutters: 99th percentile 11, 99.9th 22)
    gutter_sighting_delta: float = 20.0
    # the field's picture (vision.settle.FieldPicture): a settle waits while the field differs from a debounce before
    # by a blob of at least this many ball areas (0 = off) ...
    field_change_balls: float = 1.0
    field_change_grey: float = 25.0  # ... of pixels this far outside the range the earlier frame takes within a pixel

    def __post_init__(self) -> None:
        _check_numbers(self, "settle")
        for name in ("unseen_landing_confidence", "gutter_sighting_confidence"):
            if getattr(self, name) > 1:
                raise ConfigError(f"pipeline config: 'settle.{name}' must be in [0, 1], got {getattr(self, name)}")

    @property
    def rest_debounce_s(self) -> float:
        return self.rest_debounce_ms / 1000.0

    @property
    def gutter_sighting_s(self) -> float:
        return self.gutter_sighting_ms / 1000.0

    @property
    def creep_window_s(self) -> float:
        return self.creep_window_ms / 1000.0

    @property
    def flight_wait_s(self) -> float:
        return self.flight_wait_ms / 1000.0

    @property
    def roll_wait_s(self) -> float:
        return self.roll_wait_ms / 1000.0


@dataclass(frozen=True)
class TrackingConfig:
    """The Kalman + Hungarian tracker (vision/track.py)."""

    gate_mm: float = 45.0  # largest jump between prediction and detection for a rolling ball
    gate_speed_s: float = 0.08  # extra gate per mm/s of track speed (hops and fast rolls)
    max_gate_mm: float = 400.0  # ... but never more than this
    confirm_hits: int = 3  # detections before a track is reported
    lost_ms: float = 1200.0  # a lost track is kept this long to bridge a hand or a missed detection
    coast_ms: float = 300.0  # ... but moves on its last velocity only this long
    accel_noise_mm_s2: float = 3000.0  # Kalman process noise: how hard a ball may be pushed
    measurement_noise_mm: float = 5.0  # Kalman measurement noise: how far a detection may be off its ball
    rest_claim_balls: float = 0.5  # a track at rest keeps a detection within this many ball diameters first
    covered_balls: float = 0.75  # a ball measured this many diameters from one not at rest is partly hidden by it

    def __post_init__(self) -> None:
        _check_numbers(self, "tracking")
        if self.confirm_hits < 1:
            raise ConfigError(f"pipeline config: 'tracking.confirm_hits' must be >= 1, got {self.confirm_hits}")

    @property
    def lost_s(self) -> float:
        return self.lost_ms / 1000.0

    @property
    def coast_s(self) -> float:
        return self.coast_ms / 1000.0


@dataclass(frozen=True)
class ShotConfig:
    """Turning tracks into shots, lifts and knocks (vision/shots.py and the games' shot watches)."""

    play_line_hysteresis_mm: float = 4.0  # Star Cluster Ball: past the line by this much counts as crossed
    launch_zone_mm: float = 400.0  # a rolling ball first seen this close past the line was launched from below it
    leave_space_fraction: float = 0.5  # Piratenbillard: moved this many pitches from its rest = left its space
    moved_mm: float = 40.0  # Star Cluster Ball: a hidden resting ball seen again this far away was knocked on
    hand_lift_s: float = 0.5  # a resting ball that vanished this soon after a hand was seen was lifted by it

    def __post_init__(self) -> None:
        _check_numbers(self, "shots")


@dataclass(frozen=True)
class HandConfig:
    """The hand watch: a settle waits while a hand is over the table, and a debounce time after (vision/settle.py)."""

    hand_min_area_balls: float = 8.0  # a changed blob larger than this many ball areas is a hand
    hand_diff_grey: float = 32.0  # grey-level change against the learnt empty-table background
    background_rate: float = 0.03  # how fast the background follows slow lighting changes (per frame)
    analysis_width: int = 320  # hands are looked for on a frame shrunk to this width
    hand_still_ms: float = 500.0  # a changed blob that has not moved this long is not a hand at work

    @property
    def hand_still_s(self) -> float:
        return self.hand_still_ms / 1000.0

    def __post_init__(self) -> None:
        _check_numbers(self, "hands")
        if not 0 < self.background_rate <= 1 or self.analysis_width < 32:
            raise ConfigError("pipeline config: 'hands.background_rate' must be in (0, 1] and "
                              "'hands.analysis_width' >= 32")


@dataclass(frozen=True)
class ColourDetectorConfig:
    """The colour detector's blobs (vision/detect/colour.py)."""

    analysis_radius_px: float = 5.0  # shrink the frame until the smallest ball has about this radius
    min_ball_radius_px: float = 3.5  # a ball this small (radius, px) anywhere on the playing field is warned of at the
    # start: it may be missed (Star Cluster variants whose far balls looked 2.4-3.2 px in radius all scored wrong)
    min_area: float = 0.25  # a blob smaller than this many expected ball areas is noise
    max_streak_radii: float = 9.0  # a blob too small to split, longer than this many radii, is a line, not a ball
    unknown_score: float = 0.25  # score cap of a ball whose colour matches no player
    refine: bool = True  # re-centre each ball on full-resolution pixels
    refine_radius_px: float = 8.0  # ... its mask closed on blocks of 2x2 px, 4x4, ..., while the radius stays this
    #                                many blocks or more (the closing costs as r^4; 0 = on every pixel)
    one_ball_radius: float = 1.4  # a blob inside a circle this many ball radii wide is one ball, however full
    split_area: float = 1.6  # ... a larger one, over this many expected ball areas, is split into touching balls
    split_share: float = 0.5  # ... one ball per disc of the ball's radius covering this share of a ball's pixels
    keep_split_share: float = 0.5  # ... a chain of 3+ keeps the balls found before where a split afresh finds fewer,
    #                                 while each keeps this share of that (a chain splits many ways; 0 = off)
    split_look_delta: float = 20.0  # ... and each one's disc differs from the frame before by less than this (8-bit
    #                                 Lab, mean |dL|+|da|+|db|): a struck ball leaves its space's paint in its colour
    min_width_radii: float = 1.0  # ... whose pixels span this many radii across (a painted line does not)
    max_depth_radii: float = 1.5  # a blob to split deeper than this many radii is a hand, sleeve or paint, not balls
    full_score_share: float = 0.6  # a ball showing this share of its expected area (or more) scores in full
    paint_clear_radii: float = 1.2  # the first frame's pixels of a player's colour this many radii clear of their
    #                                  balls (known, or found more than 2 radii from those) are paint (`learn_paint`)
    flat_shading: float = 0.25  # a ball whose lightness spread is under this share of its player's balls' (learnt
    #                             on the first frame) is flat: paint of its colour, not a ball (0 = off)
    bare_delta: float = 15.0  # a ball whose disc differs from the table before play (8-bit Lab, |dL|+|da|+|db|,
    #                           less the ring round it) by less than this is the table: a look-alike (0 = off)
    apart_diameters: float = 0.6  # on a table where balls do not stack, two players' balls whose board points lie
    #                                closer than this many diameters are one ball and a fragment of it (0 = off)
    still_level: float = 5.0  # a blob away from balls not yet at rest whose picture changed by less than this since
    #                           it was measured (8-bit, mean per channel over its box) keeps that measurement (0 = off)
    quiet_level: float = 24.0  # after a settle, with every ball at rest, a frame whose analysis image (blurred over
    #                            3x3, the shake undone) lies nowhere more than this (8-bit, any channel) outside the
    #                            last measured frame's 3x3 range keeps that frame's balls, unmeasured (0 = off)
    quiet_max_frames: int = 15  # ... at most this many frames after the one measured

    def __post_init__(self) -> None:
        if self.analysis_radius_px < 2 or not 0 < self.min_area < 1 or not 0 < self.split_share <= 1 \
                or not 0 <= self.keep_split_share <= 1 or self.split_look_delta <= 0 or self.max_depth_radii <= 0 \
                or not 0 <= self.apart_diameters < 1 or 0 < self.refine_radius_px < 2 or self.still_level < 0:
            raise ConfigError("pipeline config: 'detector' needs analysis_radius_px >= 2, 0 < min_area < 1, "
                              "0 < split_share <= 1, 0 <= keep_split_share <= 1, split_look_delta > 0, "
                              "max_depth_radii > 0, 0 <= apart_diameters < 1, refine_radius_px 0 or >= 2, "
                              "still_level >= 0")
        _check_numbers(self, "detector")


@dataclass(frozen=True)
class ColourModelConfig:
    """The colour classes learnt from the first frame (vision/detect/colour_model.py)."""

    min_lightness: int = 18  # 8-bit L (0..255); darker pixels carry no usable chroma
    max_lightness: int = 245  # brighter: a highlight or glare
    smoothing_bins: float = 1.5  # Gaussian blur of learned histograms, in hue / saturation bins
    nominal_smoothing_bins: float = 3.0  # nominal colours (named by a player's id) are guesses: blur them more
    support: float = 0.03  # a bin belongs to a player if its density is at least this fraction of the peak
    background_ratio: float = 10.0  # ... and beats the background's times this (the table far outweighs the balls)
    unknown_chroma: float = 20.0  # CIELAB chroma C* above which an unexplained pixel is "unknown"
    ring_weight: float = 0.15  # share of the background's samples taken from around the known balls
    min_delta_e: float = 20.0  # CIE76 Lab distance below which two players' colours, or one and the table surface,
    #                            are refused at start: too alike to tell apart under shading

    def __post_init__(self) -> None:
        if not 0 <= self.min_lightness < self.max_lightness <= 255:
            raise ConfigError("pipeline config: 'colour_model' needs 0 <= min_lightness < max_lightness <= 255")
        if self.support <= 0 or self.background_ratio <= 0 or self.smoothing_bins < 0 or not 0 <= self.ring_weight < 1 \
                or self.min_delta_e < 0:
            raise ConfigError("pipeline config: 'colour_model' needs support and background_ratio > 0, "
                              "smoothing_bins >= 0, 0 <= ring_weight < 1, min_delta_e >= 0")
        _check_numbers(self, "colour_model")


@dataclass(frozen=True)
class CellReadConfig:
    """Reading a settled table: detected balls to places, and what the places' pixels add (vision/cells.py)."""

    tie_mm: float = 3.0  # a ball this close to the middle between two places stays in the one it lay in before
    two_balls: float = 1.3  # count ratio (pixels / one ball's pixels) from which a Piratenbillard space holds two
    margin: float = 0.25  # ratio distance from a boundary that earns full confidence
    kept: float = 0.12  # a place that held a player's ball at the last settle keeps it down to this ratio
    kept_confidence: float = 0.7  # ... (partly hidden behind a ball that landed on it), this sure
    kept_beside: float = 0.5  # ... and down to this ratio beside a detected ball of theirs that lay where it is found
    #                           (a lone ball at a space's border shows up to 0.3 of a ball in the next space)
    kept_delta: float = 20.0  # a ball that lay in a place, no longer found, whose disc still differs from the bare
    #                           table by this much (mean absolute ΔLab, beyond its ring's) is still there
    present_delta: float = 40.0  # a place the bare table shows empty that differs from it by this much holds a ball
    unrecognised_confidence: float = 0.5  # the shooter's ball no colour was read for, put where the table changed
    frame_reach_diameters: float = 1.5  # a ball found more than this many ball diameters from every area a ball can
    #                                     be on the table (`GameVision.ball_areas`) is on its frame: no ball (a ball's
    #                                     contact point, placed from its blob, lands up to a diameter off)

    def __post_init__(self) -> None:
        _check_numbers(self, "cells")
        if not 0 < self.kept <= self.kept_beside < self.two_balls or self.margin <= 0 \
                or not 0 <= self.kept_confidence <= 1 or not 0 <= self.unrecognised_confidence <= 1 \
                or self.frame_reach_diameters < 0:
            raise ConfigError("pipeline config: 'cells' needs 0 < kept <= kept_beside < two_balls, margin > 0, "
                              "0 <= kept_confidence <= 1, 0 <= unrecognised_confidence <= 1 and "
                              "frame_reach_diameters >= 0")


@dataclass(frozen=True)
class StabiliserConfig:
    """Taking camera shake out of ball positions by following the table's markers (vision/stabilise.py)."""

    enabled: bool = True  # false: ball positions are mapped as detected, shake and all
    search_px: int = 10  # largest shake (full-resolution px) looked for around each marker
    min_score: float = 0.8  # normalised cross-correlation below this = the marker is hidden (a hand, a person)
    min_patch_px: int = 9  # markers smaller than this in the image are not used
    match_px: int = 40  # > 0: a marker is matched on its square of at most this many px with the most edge (0: whole)

    def __post_init__(self) -> None:
        _check_numbers(self, "stabiliser")
        if 0 < self.match_px < 8:
            raise ConfigError(f"pipeline config: 'stabiliser.match_px' must be 0 (the whole marker) or >= 8 (a "
                              f"smaller square holds too little of a marker to follow), got {self.match_px}")


@dataclass(frozen=True)
class TableWatchConfig:
    """Finding the table, and calling it moved (vision/pipeline.py, vision/stabilise.py)."""

    calibration_search_s: float = 3.0  # look for table markers this long before giving up
    table_shift_mm: float = 5.0  # a lasting step of the markers (median over shift_window_s) this large = moved
    shift_window_s: float = 1.0  # the window of that median: long enough to average the shake out
    min_refit_markers: int = 3  # a re-fit of the homography on fewer markers is too loose to call the table moved
    stabilised_movement_confidence: float = 0.5  # a movement the stabiliser saw: a bumped camera looks the same
    table_movement_confidence: float = 0.9  # the monitor told table from camera by the background's flow ...
    unknown_movement_confidence: float = 0.5  # ... or could not tell them apart

    def __post_init__(self) -> None:
        _check_numbers(self, "table")
        for name in ("stabilised_movement_confidence", "table_movement_confidence", "unknown_movement_confidence"):
            if getattr(self, name) > 1:
                raise ConfigError(f"pipeline config: 'table.{name}' must be in [0, 1], got {getattr(self, name)}")


@dataclass(frozen=True)
class ReviewConfig:
    """What is flagged for a person to look at."""

    review_confidence: float = 0.6  # a table reading below this is flagged for review

    def __post_init__(self) -> None:
        if not 0 <= self.review_confidence <= 1:
            raise ConfigError(f"pipeline config: 'review.review_confidence' must be in [0, 1], "
                              f"got {self.review_confidence}")


# built by `make models` (models/build_pose.py): YOLO11n-pose quantised to 8 bits, half the cost of a run of the
# float model with the same Play Line calls on the composites (models/MODEL_CARD.md)
DEFAULT_POSE_MODEL = Path(__file__).resolve().parents[1] / "models" / "build" / "yolo11n-pose-int8.onnx"


@dataclass(frozen=True)
class PoseConfig:
    """When pose runs and which shot a Play Line call belongs to (vision/pose_watch.py, docs/pose.md)."""

    pose_interval_s: float = 0.25  # pose runs this often while nobody is at the Play Line ...
    pose_release_interval_s: float = 0.066  # ... and this often in a release window (every other frame at 30 fps) ...
    pose_arm_mm: float = 150.0  # a body part this close to the line (or past it) opens a release window
    pose_near_mm: float = 60.0  # ... and on every frame while its last run saw one this close (till a call)
    pose_release_before_s: float = 1.0  # a crossing this long before vision sees the ball cross belongs to the shot
    pose_release_after_s: float = 0.5  # ... and one this long after it
    pose_crop_margin_mm: float = 300.0  # pose looks at the player's side of the line and this far past it
    pose_threads: int = 1  # onnxruntime threads for pose (more only fight the rest of the loop for 2 cores)
    pose_input_px: int = 416  # the long side the crop is shrunk to for the model (a multiple of 32; 0: the model's)
    pose_join_s: float = 0.1  # a file: a pose run's result counts this long after its frame (live: once it is in)

    def __post_init__(self) -> None:
        _check_numbers(self, "pose")
        if self.pose_threads < 1:
            raise ConfigError(f"pipeline config: 'pose.pose_threads' must be >= 1, got {self.pose_threads}")
        if self.pose_input_px and (self.pose_input_px < 64 or self.pose_input_px % 32):
            raise ConfigError("pipeline config: 'pose.pose_input_px' must be 0 (the model's own size) or a multiple "
                              f"of 32 from 64, got {self.pose_input_px}")


# Tiers of the body parts a Play Line call counts, most important first: a hand over the line is the call even
# when the head is further over, and within a tier the part that got furthest over it.
DEFAULT_PARTS = (("right_hand", "left_hand", "right_wrist", "left_wrist"), ("right_elbow", "left_elbow"), ("head",),
                 ("right_knee", "left_knee"))
KNOWN_PARTS = tuple(p for tier in DEFAULT_PARTS for p in tier) + (
    "right_shoulder", "left_shoulder", "right_hip", "left_hip", "right_ankle", "left_ankle")


@dataclass(frozen=True)
class PlayLineSettings:
    """Thresholds of the Play Line call from keypoints (vision/play_line.py); `parts`: see DEFAULT_PARTS."""

    min_keypoint_confidence: float = 0.5  # keypoints less sure than this are ignored
    margin_mm: float = 25.0  # beyond the line by more than this (board mm) counts as over it
    window_frames: int = 5  # hysteresis: the last N frames of the shot ...
    frames_to_call: int = 3  # ... of which K must have a part over the line
    forearm_extension: float = 0.35  # hand = wrist + this x (wrist - elbow)
    parts: tuple[tuple[str, ...], ...] = DEFAULT_PARTS  # tiers of body parts that count, most important first

    def __post_init__(self) -> None:
        if not 0 <= self.min_keypoint_confidence <= 1:
            raise ConfigError(f"play line: min_keypoint_confidence must be in 0..1, got {self.min_keypoint_confidence}")
        if self.margin_mm < 0:
            raise ConfigError(f"play line: margin_mm must be >= 0, got {self.margin_mm}")
        if not 1 <= self.frames_to_call <= self.window_frames:
            raise ConfigError(f"play line: need 1 <= frames_to_call <= window_frames, got "
                              f"{self.frames_to_call} of {self.window_frames}")
        if not 0 <= self.forearm_extension <= 1:
            raise ConfigError(f"play line: forearm_extension must be in 0..1, got {self.forearm_extension}")
        unknown = [p for tier in self.parts for p in tier if p not in KNOWN_PARTS]
        if unknown or not any(self.parts):
            raise ConfigError(f"play line: unknown body parts {unknown}; use some of {', '.join(KNOWN_PARTS)}")


@dataclass(frozen=True)
class LineStripSettings:
    """The Play Line judged on pixels: the table strip either side of the line, and what reaches into it from the
    player's side (vision/line_strip.py, docs/pose.md)."""

    strip_mm_per_px: float = 3.0  # the strip is resampled onto the board at this resolution
    strip_behind_mm: float = 150.0  # it covers this much of the player's side of the line ...
    strip_beyond_mm: float = 250.0  # ... this much of the table past it ...
    strip_side_mm: float = 150.0  # ... and this much beyond the line's ends ...
    hand_height_mm: float = 60.0  # ... at the height of a hand placing or releasing a ball above the table
    overhead_camera_mm: float = 2000.0  # a camera straight overhead, whose height the calibration cannot tell, is
    # taken to be this high above the image centre's point of the table
    line_edges_mm: float = 20.0  # within this of the line, thin lines across it join a body to one rooted (0: off)
    light_joins: bool = True  # a change of light (a glove the colour of the table in shade) joins them too
    root_mm: float = 6.0  # a body reaching back to within this of the line (or out of view there) is rooted ...
    arm_width_mm: float = 160.0  # ... and an arm if at most this wide near the line (wider: a head or a body)
    body_behind_mm: float = 400.0  # the body an arm over the line reaches from is looked for this far behind it ...
    body_mm_per_px: float = 6.0  # ... resampled at this resolution ...
    body_every_looks: int = 8  # ... learned every this many looks (and looked at when a call names its hand)
    body_mm2: float = 1000.0  # this much differing there beside the arm is the body, whose side names the hand
    width_band_mm: float = 30.0  # "near the line": within this of it, either side
    difference: float = 30.0  # grey levels (the largest of B, G, R) off the empty strip that count as a change ...
    difference_sum: float = 36.0  # ... or summed over B, G and R (a bare hand on a skin-coloured table) ...
    shadow_tint: float = 0.06  # ... unless it keeps the table's chromaticity (its b, g, r shares move this much) ...
    shadow_min_ratio: float = 0.35  # ... and is at most this much darker (a shadow) ...
    light_max_brighter: float = 0.25  # ... or at most this fraction brighter (a lamp): a white glove or sleeve over a
    # light table keeps its chromaticity too, and was taken for light up to 1 / shadow_min_ratio (2.9 times)
    margin_mm: float = 15.0  # past the line by more than this (board mm) counts: less than the keypoints' 25, as the
    # pixels see the hand itself; from behind the player its height is a guess (docs/pose.md), and 15 keeps a hand 10
    # mm short uncalled up to 80 mm high, where 25 left shallow reaches of low hands uncalled
    tip_mm2: float = 30.0  # a shape's tip is where this much of it lies further past the line: specks do not reach
    learn_rate: float = 0.05  # the empty strip follows the table this fast a look where nothing differs ...
    still_learn_rate: float = 0.005  # ... and this fast where a difference stands still (a ball at rest)
    still_grey: float = 6.0  # a pixel within this of the previous frame stands still
    arm_mm: float = 60.0  # a rooted shape this close to the line opens the release window
    release_before_s: float = 0.5  # a shape last over the line this long before the ball is seen crossing is the shot's

    def __post_init__(self) -> None:
        _check_numbers(self, "line_strip")
        for name in ("strip_mm_per_px", "body_mm_per_px", "body_behind_mm"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"pipeline config: 'line_strip.{name}' must be > 0, got {getattr(self, name)}")
        if self.body_every_looks < 1:
            raise ConfigError("pipeline config: 'line_strip.body_every_looks' must be >= 1, got "
                              f"{self.body_every_looks}")
        if not 0 < self.shadow_min_ratio < 1:
            raise ConfigError("pipeline config: 'line_strip.shadow_min_ratio' must be between 0 and 1, got "
                              f"{self.shadow_min_ratio}")
        if self.light_max_brighter < 0:
            raise ConfigError(f"pipeline config: 'line_strip.light_max_brighter' must be >= 0, got "
                              f"{self.light_max_brighter}")
        if not 0 <= self.learn_rate <= 1 or not 0 <= self.still_learn_rate <= 1:
            raise ConfigError("pipeline config: 'line_strip.learn_rate' and 'still_learn_rate' must be in 0..1")


@dataclass(frozen=True)
class SourceConfig:
    """Live sources: a camera or a stream (vision/sources.py)."""

    stream_reconnect_s: float = 300.0  # a lost feed is tried again until no frame has come for this long, then gone
    stream_backoff_s: float = 0.25  # first wait before reconnecting; doubles each try ...
    stream_backoff_max_s: float = 5.0  # ... up to this
    stream_open_timeout_s: float = 5.0  # a stream that has not answered in this long has failed to open
    stream_reconnect_at_end: bool = False  # a stream URL that ends normally is reconnected to, not the end of the match
    live_buffer_s: float = 0.1  # a live frame waits for the referee while it is at most this much older than the newest
    live_startup_s: float = 1.0  # ... and this much until the referee first catches up (its first frames build models)

    def __post_init__(self) -> None:
        _check_numbers(self, "source")
        if self.stream_backoff_s <= 0:
            raise ConfigError(f"pipeline config: 'source.stream_backoff_s' must be > 0, got {self.stream_backoff_s}")
        if self.stream_backoff_max_s < self.stream_backoff_s:
            raise ConfigError(f"pipeline config: 'source.stream_backoff_max_s' must be >= 'source.stream_backoff_s' "
                              f"({self.stream_backoff_s}), got {self.stream_backoff_max_s}")


@dataclass(frozen=True)
class OpenCvConfig:
    """OpenCV's own thread pool, which is process-wide: the pipeline sets it when it is made."""

    # 1: each OpenCV call runs on the thread that makes it. The frame loop, the decode thread and pose's keep 2 cores
    # busy already, and a pool thread woken on a busy core costs more than its share of the work (benchmarks/README.md,
    # issue 13's twenty-eighth stop: 2-20 % more frames a second on 2 cores, the records the same)
    threads: int = 1

    def __post_init__(self) -> None:
        if self.threads < 1:
            raise ConfigError(f"pipeline config: 'opencv.threads' must be >= 1, got {self.threads}")


@dataclass(frozen=True)
class PipelineConfig:
    """Every stage's settings; each section is handed to its stage."""

    settle: SettleConfig = field(default_factory=SettleConfig)
    tracking: TrackingConfig = field(default_factory=TrackingConfig)
    shots: ShotConfig = field(default_factory=ShotConfig)
    hands: HandConfig = field(default_factory=HandConfig)
    detector: ColourDetectorConfig = field(default_factory=ColourDetectorConfig)
    colour_model: ColourModelConfig = field(default_factory=ColourModelConfig)
    cells: CellReadConfig = field(default_factory=CellReadConfig)
    stabiliser: StabiliserConfig = field(default_factory=StabiliserConfig)
    table: TableWatchConfig = field(default_factory=TableWatchConfig)
    monitor: MonitorSettings = field(default_factory=MonitorSettings)  # marker re-checks (calibration/monitor.py)
    review: ReviewConfig = field(default_factory=ReviewConfig)
    pose: PoseConfig = field(default_factory=PoseConfig)
    play_line: PlayLineSettings = field(default_factory=PlayLineSettings)
    line_strip: LineStripSettings = field(default_factory=LineStripSettings)
    source: SourceConfig = field(default_factory=SourceConfig)
    opencv: OpenCvConfig = field(default_factory=OpenCvConfig)

    @staticmethod
    def from_dict(data: Any) -> PipelineConfig:
        return _build(PipelineConfig, data, "pipeline")


def _build(cls: Any, data: Any, path: str) -> Any:
    """A dataclass from a JSON object: every key known, every value of its field's type, nested sections too."""
    if not isinstance(data, dict):
        raise ConfigError(f"config: '{path}' must be an object of settings, got {shown(data)}")
    hints = get_type_hints(cls)
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        hint = _moved_to(cls, unknown[0]) if cls is PipelineConfig else None
        where = f"; it is now '{path}.{hint}'" if hint else f"; known: {', '.join(known)}"
        raise ConfigError(f"config: unknown setting '{path}.{unknown[0]}'{where}")
    return cls(**{name: _value(hints[name], value, f"{path}.{name}") for name, value in data.items()})


def _value(kind: Any, value: Any, path: str) -> Any:
    if is_dataclass(kind):
        return _build(kind, value, path)
    origin = get_origin(kind)
    if origin in (Union, types.UnionType):
        options = [k for k in get_args(kind) if k is not type(None)]
        if value is None and len(options) < len(get_args(kind)):
            return None
        return _value(options[0], value, path)
    if origin is tuple:
        if not isinstance(value, list):
            raise ConfigError(f"config: '{path}' must be a list, got {shown(value)}")
        args = get_args(kind)
        item = args[0]
        return tuple(_value(item, v, f"{path}[{i}]") for i, v in enumerate(value))
    if kind is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"config: '{path}' must be true or false, got {shown(value)}")
        return value
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"config: '{path}' must be an integer, got {shown(value)}")
        return value
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not _fits_a_float(value):
            raise ConfigError(f"config: '{path}' must be a number, got {shown(value)}")
        return value
    if kind is str:
        if not isinstance(value, str):
            raise ConfigError(f"config: '{path}' must be a string, got {shown(value)}")
        return value
    raise ConfigError(f"config: '{path}' has a type the config reader does not know ({kind!r})")


def _moved_to(cls: Any, name: str) -> str | None:
    """The section.field a flat name of the old one-level pipeline config now lives at, if any."""
    for f in fields(cls):
        default = f.default_factory() if f.default_factory is not MISSING else None
        if default is not None and is_dataclass(default) and name in {g.name for g in fields(default)}:
            return f"{f.name}.{name}"
    return None


def split_config(data: dict[str, Any]) -> tuple[dict[str, Any], PipelineConfig]:
    """A `--config` object -> (the rules engine's settings, the pipeline's settings)."""
    rules = dict(data)
    return rules, PipelineConfig.from_dict(rules.pop("pipeline", {}))
