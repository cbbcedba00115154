"""Watch the calibration during a video: re-check markers, notice bumps and blind spells.

Every `check_interval_s` the markers are re-detected and a fresh homography is
fitted. They are looked for around where the calibration puts them (each within
its own size), a fraction of a whole-frame search, which would stall a live
frame loop for 50-100 ms once a second; the whole frame is searched when that
finds fewer markers than the last check did. If the table, mapped through the old and the new homography, differs
by more than `movement_threshold_mm` somewhere, the monitor emits a
`TableMovement` and switches to the new homography, so a bumped camera does
not corrupt every later call. Small differences are ignored (no jitter).

Camera or table? A moved camera shifts everything in the image, background
included; a moved table shifts the markers while the background stays put.
The background (outside the table, in both the old and new view) is tracked
with sparse optical flow from the frame of the last good calibration: if it
moved by at least `camera_ratio` of the markers' image motion the kind is
"camera", if it stayed (under `table_ratio`) it is "table", otherwise, or when
the background has too little texture to track, "unknown".

If the markers cannot be found, the last good homography stays in use, calls
are marked `Confidence.LOW`, and after `markers_lost_after_s` a
`MarkersLostWarning` is emitted and logged once per blind spell.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass, replace

import cv2
import numpy as np

from calibration.calibrate import Calibration, fit_markers
from calibration.homography import CalibrationError, Fit, Homography
from calibration.profile import TableProfile
from rules.errors import InputError

log = logging.getLogger(__name__)

MIN_BACKGROUND_FEATURES = 8
ANALYSIS_WIDTH = 960
REGION_MARGIN_PX = 8  # a marker is looked for within its own size and this much of where it was


class Confidence(enum.Enum):
    NORMAL = "normal"
    LOW = "low"


@dataclass(frozen=True)
class TableMovement:
    """The board moved in the image; `magnitude_mm` is the largest error the old homography would make."""

    t: float
    magnitude_mm: float
    kind: str  # "camera" | "table" | "unknown"


@dataclass(frozen=True)
class MarkersLostWarning:
    t: float
    message: str
    seconds_without_markers: float


@dataclass(frozen=True)
class MonitorSettings:
    """How the markers are re-checked while the table is watched (the `monitor` section of the pipeline config)."""

    check_interval_s: float = 1.0  # re-fit the homography on the markers this often; 0 = never
    movement_threshold_mm: float = 3.0  # a re-fit this far from the last one is a movement
    markers_lost_after_s: float = 5.0  # too few markers seen this long is a warning
    max_fit_rms_mm: float = 5.0  # a re-fit worse than this is not trusted
    camera_ratio: float = 0.5  # background flow this large against the table's = the camera moved
    table_ratio: float = 0.2  # ... and this small = the table moved; in between: unknown

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
                raise InputError(f"pipeline config: 'monitor.{name}' must be a number >= 0, got {value!r}")


Observation = TableMovement | MarkersLostWarning


def drift_mm(old: Homography, new: Homography, profile: TableProfile) -> float:
    """How far (mm) the old homography misplaces table points that the new one places right."""
    t = profile.table
    xs, ys = np.meshgrid(np.linspace(t.x_min, t.x_max, 5), np.linspace(t.y_min, t.y_max, 5))
    board = np.c_[xs.ravel(), ys.ravel()]
    pixels = new.to_image(board)
    return float(np.linalg.norm(old.to_board(pixels) - board, axis=1).max())


class CalibrationMonitor:
    """Stateful watcher over one video; feed it frames in time order."""

    def __init__(
        self,
        profile: TableProfile,
        calibration: Calibration,
        settings: MonitorSettings = MonitorSettings(),
        reference_frame: np.ndarray | None = None,
    ) -> None:
        self.profile = profile
        self.calibration = calibration
        self.settings = settings
        self.confidence = Confidence.NORMAL
        self._reference = _analysis_grey(reference_frame) if reference_frame is not None else None
        self._last_check: float | None = None
        self._last_seen: float | None = None
        self._warned = False
        self._ids = calibration.markers_used  # the markers the last good check (or the calibration) found

    def update(self, frame: np.ndarray, t: float) -> list[Observation]:
        """Check the markers if a check is due; returns the observations this frame caused."""
        if self._last_check is not None and t - self._last_check < self.settings.check_interval_s:
            return []
        self._last_check = t
        if self._last_seen is None:
            self._last_seen = t
        try:
            fit, ids = self._fit(frame)
        except CalibrationError:
            fit = None
        if fit is None or fit.rms_mm > self.settings.max_fit_rms_mm:
            return self._blind(t)
        self._ids = ids
        self._last_seen = t
        self._warned = False
        self.confidence = Confidence.NORMAL
        old = self.calibration.homography
        magnitude = drift_mm(old, fit.homography, self.profile)
        if self._reference is None:
            self._reference = _analysis_grey(frame)
        if magnitude <= self.settings.movement_threshold_mm:
            return []
        grey = _analysis_grey(frame)
        kind = self._movement_kind(grey, old, fit.homography)
        self.calibration = replace(
            self.calibration,
            homography=fit.homography,
            rms_mm=fit.rms_mm,
            max_mm=fit.max_mm,
            points_used=fit.inliers,
            markers_used=ids,
        )
        self._reference = grey
        log.info("table movement at %.2f s: %.1f mm (%s); re-solved", t, magnitude, kind)
        return [TableMovement(t=t, magnitude_mm=magnitude, kind=kind)]

    def seen(self, t: float) -> None:
        """The markers were seen at `t` by other means (the stabiliser following them on this frame): no blind
        spell runs meanwhile."""
        self._last_seen = t
        self._warned = False
        self.confidence = Confidence.NORMAL

    def _fit(self, frame: np.ndarray) -> tuple[Fit, tuple[int, ...]]:
        """The markers looked for around where the calibration puts them (a check a fraction of a full-frame
        search costs), or in the whole frame when that finds fewer than the last good check did (the camera or
        the table moved further, a marker is covered) or there was none."""
        if self._ids:
            try:
                fit, ids = fit_markers(frame, self.profile, self.calibration.intrinsics, self._regions(frame))
                if set(self._ids) <= set(ids):
                    return fit, ids
            except CalibrationError:
                pass
        return fit_markers(frame, self.profile, self.calibration.intrinsics)

    def _regions(self, frame: np.ndarray) -> list[tuple[int, int, int, int]]:
        """Each marker's box in the image, grown by its own size on every side (and a few pixels more)."""
        boxes = []
        for marker in self.profile.markers.markers:
            corners = self.calibration.board_to_image(np.array(marker.corners, float))
            (x0, y0), (x1, y1) = corners.min(axis=0), corners.max(axis=0)
            grow = max(x1 - x0, y1 - y0) + REGION_MARGIN_PX
            boxes.append((int(x0 - grow), int(y0 - grow), int(np.ceil(x1 + grow)), int(np.ceil(y1 + grow))))
        return boxes

    def _blind(self, t: float) -> list[Observation]:
        self.confidence = Confidence.LOW
        assert self._last_seen is not None
        without = t - self._last_seen
        if self._warned or without < self.settings.markers_lost_after_s:
            return []
        self._warned = True
        message = (
            f"calibration markers not seen for {without:.1f} s; keeping the last good "
            "homography, calls are low confidence until the markers are visible again"
        )
        log.warning("%.2f s: %s", t, message)
        return [MarkersLostWarning(t=t, message=message, seconds_without_markers=without)]

    def _movement_kind(self, grey: np.ndarray, old: Homography, new: Homography) -> str:
        if self._reference is None or self._reference.shape != grey.shape:
            return "unknown"
        scale = grey.shape[1] / self.calibration.image_size[0]
        corners = np.array(self.profile.table.corners, dtype=float)
        old_quad = old.to_image(corners) * scale
        new_quad = new.to_image(corners) * scale
        table_shift = float(np.median(np.linalg.norm(new_quad - old_quad, axis=1)))
        mask = np.full(grey.shape, 255, np.uint8)
        for quad in (old_quad, new_quad):
            cv2.fillConvexPoly(mask, np.round(quad).astype(np.int32), 0)
        background = cv2.erode(mask, np.ones((15, 15), np.uint8))
        found = cv2.goodFeaturesToTrack(self._reference, 300, 0.01, 8, mask=background)
        if found is None or len(found) < MIN_BACKGROUND_FEATURES:
            return "unknown"
        points = np.asarray(found, np.float32)
        moved, status, _err = cv2.calcOpticalFlowPyrLK(  # the output array is only written (no initial flow)
            self._reference, grey, points, np.empty_like(points), winSize=(21, 21), maxLevel=4
        )
        ok = status.ravel() == 1
        if ok.sum() < MIN_BACKGROUND_FEATURES:
            return "unknown"
        background_shift = float(np.median(np.linalg.norm((moved - points).reshape(-1, 2)[ok], axis=1)))
        if background_shift >= self.settings.camera_ratio * table_shift:
            return "camera"
        if background_shift <= self.settings.table_ratio * table_shift:
            return "table"
        return "unknown"


def _analysis_grey(frame: np.ndarray) -> np.ndarray:
    grey = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    if grey.shape[1] > ANALYSIS_WIDTH:
        f = ANALYSIS_WIDTH / grey.shape[1]
        grey = cv2.resize(grey, (ANALYSIS_WIDTH, round(grey.shape[0] * f)), interpolation=cv2.INTER_AREA)
    return grey
