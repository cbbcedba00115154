"""Ball-height correction against an independent projection of the 3-D ball centre."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.ball_height import camera_pose, contact_point, estimate_focal
from calibration.distortion import Intrinsics
from calibration.homography import Homography
from rules.errors import InputError

HD = (1920, 1080)


def homography_of(camera) -> Homography:
    return Homography.from_array(np.linalg.inv(camera.board_to_image))


def ball_points(profile) -> np.ndarray:
    """Balls spread over the whole table: every slot plus the play-area corners."""
    slots = [s for pos in profile.positions for s in pos.slots]
    pa = profile.play_area
    return np.array(slots + [(pa.x_min + 20, pa.y_min + 20), (pa.x_max - 20, pa.y_max - 20)])


def test_focal_and_camera_centre_recovered(make_camera):
    camera = make_camera((320, -700, 1200), (320, 650, 0), 1300, HD)
    h = homography_of(camera)
    assert estimate_focal(h, HD) == pytest.approx(1300, rel=1e-6)
    pose = camera_pose(h, HD)
    assert np.allclose(pose.centre_mm, (320, -700, 1200), atol=1e-3)
    assert pose.tilt_deg == pytest.approx(np.degrees(np.arctan2(1350, 1200)), abs=1e-3)


def test_correction_matches_projected_sphere_centre(starcluster, make_camera):
    """Typical angle: camera 1.2 m up, 0.7 m behind the near edge, tilted about 48 degrees."""
    camera = make_camera((320, -700, 1200), (320, 650, 0), 1300, HD)
    h = homography_of(camera)
    radius = starcluster.ball_diameter_mm / 2
    truth = ball_points(starcluster)
    seen = camera.project(np.c_[truth, np.full(len(truth), radius)])  # visible centres, z = r
    naive = h.to_board(seen)
    corrected = contact_point(naive, camera_pose(h, HD), radius)
    naive_err = np.linalg.norm(naive - truth, axis=1)
    fixed_err = np.linalg.norm(corrected - truth, axis=1)
    print(f"ball height at ~48 deg tilt: uncorrected {naive_err.min():.1f}..{naive_err.max():.1f} mm, "
          f"corrected max {fixed_err.max():.2e} mm")
    assert naive_err.max() > 8.0  # half a 26 mm slot width at the far end: it matters
    assert fixed_err.max() < 0.01


def test_correction_with_estimated_pose_from_pixels(starcluster, board_images, make_camera):
    """End to end: the pose comes from a homography solved on rendered pixels."""
    import cv2

    from calibration.calibrate import calibrate_markers
    from calibration.render import warp_to_camera

    camera = make_camera((320, -700, 1200), (320, 650, 0), 1300, HD)
    image = warp_to_camera(board_images["starcluster"], starcluster, 2.0, camera.board_to_image, HD)
    cal = calibrate_markers(cv2.GaussianBlur(image, (0, 0), 0.8), starcluster)
    radius = starcluster.ball_diameter_mm / 2
    truth = ball_points(starcluster)
    seen = camera.project(np.c_[truth, np.full(len(truth), radius)])
    corrected = contact_point(cal.image_to_board(seen), camera_pose(cal.homography, HD), radius)
    error = np.linalg.norm(corrected - truth, axis=1)
    print(f"ball height from solved homography: corrected max {error.max():.2f} mm")
    assert error.max() < 2.0


def test_overhead_camera_needs_intrinsics(make_camera):
    camera = make_camera((320, 620, 1500), (320, 620, 0), 1200, HD)
    h = homography_of(camera)
    with pytest.raises(InputError, match="--intrinsics"):
        camera_pose(h, HD)
    given = Intrinsics(camera_matrix=tuple(map(tuple, camera.k)), dist_coeffs=())
    pose = camera_pose(h, HD, given)
    assert np.allclose(pose.centre_mm, (320, 620, 1500), atol=1e-3)
    seen = camera.project(np.array([[600.0, 1100.0, 8.0]]))
    assert np.allclose(contact_point(h.to_board(seen), pose, 8.0), [[600, 1100]], atol=1e-3)
