"""The monitor on rendered video: a bump mid-sequence, camera vs table, markers lost."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from calibration.calibrate import calibrate_markers
from calibration.monitor import (
    CalibrationMonitor,
    Confidence,
    MarkersLostWarning,
    MonitorSettings,
    TableMovement,
)
from calibration.render import warp_to_camera

SIZE = (960, 540)
# At 960x540 the far markers are ~12 px wide: a looser bound than the 2 mm at 1080p.
HALF_HD_BOUND_MM = 3.0
SETTINGS = MonitorSettings(check_interval_s=1.0, movement_threshold_mm=3.0, markers_lost_after_s=3.0)


@pytest.fixture(scope="module")
def scene(starcluster, board_images, make_camera, make_background):
    camera = make_camera((320, -700, 1200), (320, 650, 0), 650, SIZE)
    background = make_background(SIZE)

    def frame(board_to_image: np.ndarray, shift_all_px: tuple[float, float] = (0, 0)) -> np.ndarray:
        image = warp_to_camera(
            board_images["starcluster"], starcluster, 2.0, board_to_image, SIZE, background=background
        )
        move = np.float32([[1, 0, shift_all_px[0]], [0, 1, shift_all_px[1]]])
        return cv2.warpAffine(image, move, SIZE, borderMode=cv2.BORDER_REPLICATE)

    return camera, frame


def slot_error_mm(cal, board_to_image, profile) -> float:
    truth = np.array([s for pos in profile.positions for s in pos.slots])
    pix = cv2.perspectiveTransform(truth.reshape(-1, 1, 2), board_to_image).reshape(-1, 2)
    return float(np.linalg.norm(cal.image_to_board(pix) - truth, axis=1).max())


def table_moved(board_to_image: np.ndarray, dx_mm: float, dy_mm: float, angle_deg: float) -> np.ndarray:
    """The table slid by (dx, dy) mm and turned by angle about its centre, camera still."""
    a = np.radians(angle_deg)
    c = np.array([320.0, 620.0])
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    m = np.eye(3)
    m[:2, :2] = rot
    m[:2, 2] = c + np.array([dx_mm, dy_mm]) - rot @ c
    return board_to_image @ m


def test_bumped_table_emits_movement_and_maps_correctly_after(starcluster, scene):
    camera, frame = scene
    before = camera.board_to_image
    after = table_moved(before, 25.0, 10.0, 1.5)
    first = frame(before)
    monitor = CalibrationMonitor(starcluster, calibrate_markers(first, starcluster), SETTINGS, first)
    observations = []
    for i in range(12):  # 6 s of video at 2 frames per second; the bump lands at t = 3 s
        t = i * 0.5
        observations += monitor.update(frame(before if t < 3.0 else after), t)
    movements = [o for o in observations if isinstance(o, TableMovement)]
    assert len(movements) == 1
    bump = movements[0]
    print(f"table bump: {bump}")
    assert bump.t == 3.0
    assert bump.kind == "table"
    # The largest displacement of a rigid move over the table is at a corner.
    corners = np.array(starcluster.table.corners)
    moved = cv2.perspectiveTransform(
        cv2.perspectiveTransform(corners.reshape(-1, 1, 2), after), np.linalg.inv(before)
    ).reshape(-1, 2)
    assert bump.magnitude_mm == pytest.approx(np.linalg.norm(moved - corners, axis=1).max(), abs=1.0)
    assert monitor.confidence is Confidence.NORMAL
    assert slot_error_mm(monitor.calibration, after, starcluster) < HALF_HD_BOUND_MM


def test_bumped_camera_is_told_from_moved_table(starcluster, scene):
    camera, frame = scene
    first = frame(camera.board_to_image)
    monitor = CalibrationMonitor(starcluster, calibrate_markers(first, starcluster), SETTINGS, first)
    assert monitor.update(first, 0.0) == []
    shift = np.array([[1, 0, 18.0], [0, 1, -12.0], [0, 0, 1]])
    observations = monitor.update(frame(camera.board_to_image, (18.0, -12.0)), 1.0)
    print(f"camera bump: {observations}")
    assert [o.kind for o in observations] == ["camera"]
    assert slot_error_mm(monitor.calibration, shift @ camera.board_to_image, starcluster) < HALF_HD_BOUND_MM


def test_small_jitter_is_not_movement(starcluster, scene):
    camera, frame = scene
    first = frame(camera.board_to_image)
    monitor = CalibrationMonitor(starcluster, calibrate_markers(first, starcluster), SETTINGS, first)
    nudged = table_moved(camera.board_to_image, 0.8, 0.0, 0.0)
    assert monitor.update(first, 0.0) + monitor.update(frame(nudged), 1.0) == []


def test_lost_markers_warn_once_keep_homography_and_lower_confidence(starcluster, scene, caplog):
    camera, frame = scene
    first = frame(camera.board_to_image)
    cal = calibrate_markers(first, starcluster)
    monitor = CalibrationMonitor(starcluster, cal, SETTINGS, first)
    blind = first.copy()
    blind[:] = 60  # a person leaning over the whole table
    observations = monitor.update(first, 0.0)
    with caplog.at_level("WARNING", logger="calibration.monitor"):
        for t in (1.0, 2.0, 3.0, 4.0, 5.0):
            observations += monitor.update(blind, t)
            assert monitor.confidence is Confidence.LOW
    warnings = [o for o in observations if isinstance(o, MarkersLostWarning)]
    assert len(warnings) == 1
    assert warnings[0].t == 3.0 and warnings[0].seconds_without_markers == 3.0
    assert "not seen for 3.0 s" in warnings[0].message
    assert "not seen" in caplog.text
    assert monitor.calibration.homography == cal.homography
    assert monitor.update(first, 6.0) == []
    assert monitor.confidence is Confidence.NORMAL


def test_markers_seen_by_other_means_hold_off_the_blind_spell(starcluster, scene):
    """The pipeline's stabiliser following the markers tells the monitor so (`seen`) instead of a re-fit: a
    blind spell starts from then, not from the monitor's own last check."""
    camera, frame = scene
    first = frame(camera.board_to_image)
    monitor = CalibrationMonitor(starcluster, calibrate_markers(first, starcluster), SETTINGS, first)
    blind = first.copy()
    blind[:] = 60
    assert monitor.update(first, 0.0) == []
    for t in (1.0, 2.0, 3.0, 4.0):
        monitor.seen(t)
    assert monitor.update(blind, 6.0) == []  # 2 s without markers: under the 3 s
    [warning] = monitor.update(blind, 7.0)
    assert isinstance(warning, MarkersLostWarning) and warning.seconds_without_markers == 3.0
    monitor.seen(8.0)
    assert monitor.confidence is Confidence.NORMAL


def test_checks_only_at_the_interval(starcluster, scene):
    camera, frame = scene
    first = frame(camera.board_to_image)
    monitor = CalibrationMonitor(starcluster, calibrate_markers(first, starcluster), SETTINGS, first)
    moved = frame(table_moved(camera.board_to_image, 30.0, 0.0, 0.0))
    assert monitor.update(first, 0.0) == []
    assert monitor.update(moved, 0.5) == []  # not due yet
    assert len(monitor.update(moved, 1.0)) == 1


def test_markers_are_looked_for_where_they_lie_and_in_the_whole_frame_once_they_moved_further(starcluster, scene):
    """A check searches only around the markers (the corners of a whole-frame search to a thousandth of a
    pixel, at a fraction of its cost); a camera moved further than a marker's width leaves them outside those
    regions, and the whole frame is searched, so the movement is still seen."""
    from calibration.aruco import detect_markers

    camera, frame = scene
    first = frame(camera.board_to_image)
    monitor = CalibrationMonitor(starcluster, calibrate_markers(first, starcluster), SETTINGS, first)
    assert monitor.update(first, 0.0) == []
    regions = monitor._regions(first)
    whole = detect_markers(first, starcluster.markers.dictionary)
    near = detect_markers(first, starcluster.markers.dictionary, regions)
    assert len(whole) >= 4 and [m.id for m in near] == [m.id for m in whole]
    assert np.abs(np.array([m.corners for m in near]) - [m.corners for m in whole]).max() < 1e-3  # pixels
    moved = frame(camera.board_to_image, (70.0, 45.0))
    assert len(detect_markers(moved, starcluster.markers.dictionary, regions)) < len(whole)
    assert [o.kind for o in monitor.update(moved, 1.0)] == ["camera"]
    shift = np.array([[1, 0, 70.0], [0, 1, 45.0], [0, 0, 1]])
    assert slot_error_mm(monitor.calibration, shift @ camera.board_to_image, starcluster) < HALF_HD_BOUND_MM
