"""A `Calibration`: one camera view of one profile's table, found, saved and loaded.

The calibration file (docs/formats.md, schemas/calibration.schema.json) is what
the referee reads before watching a video; it records how well the fit
explained its points so a person can judge it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

import jsonschema
import numpy as np

from calibration.aruco import detect_markers
from calibration.distortion import Intrinsics, intrinsics_from_json
from calibration.homography import (
    MIN_MARKERS,
    CalibrationError,
    Fit,
    Homography,
    marker_correspondences,
    solve,
)
from calibration.profile import TableProfile, load_schema
from rules.colours import BallColour, parse_colour
from rules.errors import InputError
from rules.files import loads, non_finite_at, write_json_atomically


@dataclass(frozen=True)
class Calibration:
    profile_name: str
    game: str
    image_size: tuple[int, int]
    homography: Homography
    rms_mm: float
    max_mm: float
    points_used: int
    method: str  # "aruco" | "manual"
    created: str
    markers_used: tuple[int, ...] = ()
    intrinsics: Intrinsics | None = None
    source_path: str | None = None
    source_frame: int | None = None
    source_time_s: float | None = None
    surface_lab: tuple[float, float, float] | None = None  # the table surface's colour on the calibration frame
    ball_colours: tuple[tuple[str, BallColour], ...] = ()  # learned by `referee calibrate --assign`, by player

    def image_to_board(self, points_px: np.ndarray) -> np.ndarray:
        """Raw image pixels -> board mm (undistorting first when intrinsics are known)."""
        pts = np.asarray(points_px, dtype=float).reshape(-1, 2)
        if self.intrinsics is not None:
            pts = self.intrinsics.undistort_points(pts)
        return self.homography.to_board(pts)

    def board_to_image(self, points_mm: np.ndarray) -> np.ndarray:
        """Board mm -> undistorted image pixels (draw on an undistorted frame)."""
        return self.homography.to_image(points_mm)

    def below_horizon(self, points_px: np.ndarray) -> np.ndarray:
        """Per raw image pixel, whether its ray meets the table's plane in front of the camera: a pixel above the
        horizon maps to a board point behind the camera (the homography's scale changes sign there). The board's
        origin, a corner of the board the camera sees, gives the sign in front."""
        pts = np.asarray(points_px, dtype=float).reshape(-1, 2)
        if self.intrinsics is not None:
            pts = self.intrinsics.undistort_points(pts)
        to_board = self.homography.array
        ahead = np.sign(to_board[2] @ [*self.board_to_image(np.zeros((1, 2)))[0], 1.0])
        return np.sign(np.column_stack([pts, np.ones(len(pts))]) @ to_board[2]) == ahead


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _from_fit(fit: Fit, profile: TableProfile, size: tuple[int, int], method: str, **extra) -> Calibration:
    return Calibration(
        profile_name=profile.name,
        game=profile.game,
        image_size=size,
        homography=fit.homography,
        rms_mm=fit.rms_mm,
        max_mm=fit.max_mm,
        points_used=fit.inliers,
        method=method,
        created=_now(),
        **extra,
    )


def fit_markers(
    image: np.ndarray, profile: TableProfile, intrinsics: Intrinsics | None = None,
    regions: Sequence[tuple[int, int, int, int]] | None = None,
) -> tuple[Fit, tuple[int, ...]]:
    """Detect the profile's markers (within `regions` only, when given: see `detect_markers`) and fit; needs
    at least two of them."""
    size = (image.shape[1], image.shape[0])
    detected = detect_markers(image, profile.markers.dictionary, regions)
    img, brd, ids = marker_correspondences(detected, profile.markers)
    if len(ids) < MIN_MARKERS:
        expected = sorted(profile.markers.by_id())
        raise CalibrationError(
            f"found {len(ids)} of the profile's markers {expected} (ids seen: "
            f"{[m.id for m in detected] or 'none'}), need at least {MIN_MARKERS}; uncover the "
            "markers, light the table evenly, or calibrate with --manual"
        )
    if intrinsics is not None:
        img = intrinsics.undistort_points(img)
    return solve(img, brd, profile.table, size), ids


def calibrate_markers(
    image: np.ndarray, profile: TableProfile, intrinsics: Intrinsics | None = None
) -> Calibration:
    fit, ids = fit_markers(image, profile, intrinsics)
    size = (image.shape[1], image.shape[0])
    return _from_fit(fit, profile, size, "aruco", markers_used=ids, intrinsics=intrinsics)


def calibrate_points(
    image_points: np.ndarray,
    board_points: np.ndarray,
    profile: TableProfile,
    image_size: tuple[int, int],
    intrinsics: Intrinsics | None = None,
) -> Calibration:
    """Manual calibration: a person's points are trusted, so plain least squares."""
    img = np.asarray(image_points, dtype=float).reshape(-1, 2)
    if intrinsics is not None and len(img):
        img = intrinsics.undistort_points(img)
    fit = solve(img, board_points, profile.table, image_size, ransac_px=None)
    return _from_fit(fit, profile, image_size, "manual", intrinsics=intrinsics)


def with_source(cal: Calibration, path: str, frame: int | None, time_s: float | None) -> Calibration:
    return replace(cal, source_path=path, source_frame=frame, source_time_s=time_s)


def to_json(cal: Calibration) -> dict:
    out: dict = {
        "format": "calibration/1",
        "profile": {"name": cal.profile_name, "game": cal.game},
        "image_size": list(cal.image_size),
        "image_to_board": [list(r) for r in cal.homography.matrix],
        "reprojection_error_mm": {"rms": round(cal.rms_mm, 4), "max": round(cal.max_mm, 4)},
        "points_used": cal.points_used,
        "markers_used": list(cal.markers_used),
        "method": cal.method,
        "created": cal.created,
    }
    source = {
        k: v
        for k, v in (("path", cal.source_path), ("frame", cal.source_frame), ("time_s", cal.source_time_s))
        if v is not None
    }
    if source:
        out["source"] = source
    if cal.intrinsics is not None:
        out["intrinsics"] = cal.intrinsics.to_json()
    if cal.surface_lab is not None:
        out["table_surface"] = {"lab": [round(v, 2) for v in cal.surface_lab]}
    if cal.ball_colours:
        out["ball_colours"] = {player: {"lab": [round(v, 2) for v in colour.lab]}
                               for player, colour in cal.ball_colours}
    return out


def save_calibration(cal: Calibration, path: str | Path) -> None:
    """Write the calibration JSON atomically: a reader sees the old file or the whole new one."""
    write_json_atomically(path, to_json(cal))


def load_calibration(path: str | Path) -> Calibration:
    try:
        data = loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"calibration {path}: cannot read JSON ({error}); run `referee calibrate`") from None
    bad = non_finite_at(data)  # JSON Schema's "number" takes NaN, Infinity and integers past a float's range
    if bad is not None:
        raise InputError(f"calibration {path}: field '{'/'.join(map(str, bad))}' is not a finite number; "
                         "re-run `referee calibrate`")
    validator = jsonschema.Draft202012Validator(load_schema("calibration.schema.json"))
    problem = next(iter(sorted(validator.iter_errors(data), key=lambda e: len(e.absolute_path))), None)
    if problem is not None:
        field = "/".join(str(p) for p in problem.absolute_path) or "(top level)"
        raise InputError(
            f"calibration {path}: field '{field}': {problem.message[:160]}; re-run `referee calibrate`"
        )
    source = data.get("source", {})
    return Calibration(
        profile_name=data["profile"]["name"],
        game=data["profile"]["game"],
        image_size=(data["image_size"][0], data["image_size"][1]),
        homography=Homography.from_array(np.array(data["image_to_board"])),
        rms_mm=data["reprojection_error_mm"]["rms"],
        max_mm=data["reprojection_error_mm"]["max"],
        points_used=data["points_used"],
        method=data["method"],
        created=data["created"],
        markers_used=tuple(data.get("markers_used", ())),
        intrinsics=intrinsics_from_json(data["intrinsics"], str(path)) if "intrinsics" in data else None,
        source_path=source.get("path"),
        source_frame=source.get("frame"),
        source_time_s=source.get("time_s"),
        surface_lab=tuple(data["table_surface"]["lab"]) if "table_surface" in data else None,
        ball_colours=tuple((player, parse_colour(value, f"calibration {path}: ball_colours.{player}"))
                           for player, value in data.get("ball_colours", {}).items()),
    )
