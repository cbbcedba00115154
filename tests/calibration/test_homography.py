"""Solving and refusing degenerate homographies."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.calibrate import calibrate_points
from calibration.homography import CalibrationError, solve

HD = (1920, 1080)


def test_exact_points_and_outlier_rejection(starcluster, make_camera):
    camera = make_camera((320, -700, 1200), (320, 650, 0), 1300, HD)
    board = np.array([m for mk in starcluster.markers.markers for m in mk.corners])
    image = camera.project_board(board)
    image[5] += (40.0, -25.0)  # one wildly wrong corner
    fit = solve(image, board, starcluster.table, HD)
    assert (fit.points, fit.inliers) == (24, 23)
    assert fit.rms_mm < 1e-3
    probe = np.array([[320.0, 1050.0]])
    assert np.allclose(fit.homography.to_board(camera.project_board(probe)), probe, atol=1e-3)


def test_too_few_points(starcluster):
    with pytest.raises(CalibrationError, match="too few points: 3"):
        solve(np.zeros((3, 2)), np.zeros((3, 2)), starcluster.table, HD)


def test_collinear_points(starcluster):
    board = np.array([[0, 0], [100, 0], [200, 0], [300, 0.1]], float)
    with pytest.raises(CalibrationError, match="on \\(nearly\\) one line"):
        solve(board * 2, board, starcluster.table, HD)


def test_mirrored_view(starcluster, make_camera):
    camera = make_camera((320, -700, 1200), (320, 650, 0), 1300, HD)
    board = np.array(starcluster.table.corners)
    image = camera.project_board(board)
    image[:, 0] = HD[0] - image[:, 0]
    with pytest.raises(CalibrationError, match="mirrored"):
        solve(image, board, starcluster.table, HD)


def test_swapped_points_cross_the_horizon_or_fold(starcluster, make_camera):
    camera = make_camera((320, -700, 1200), (320, 650, 0), 1300, HD)
    board = np.array(starcluster.table.corners)
    image = camera.project_board(board)[[0, 2, 1, 3]]  # two corners swapped: a bow-tie
    with pytest.raises(CalibrationError, match="degenerate homography"):
        solve(image, board, starcluster.table, HD, ransac_px=None)


def test_collapsed_table(starcluster):
    board = np.array(starcluster.table.corners)
    image = np.array([[100, 100], [101, 100], [101, 100.5], [100, 100.5]])
    with pytest.raises(CalibrationError, match="degenerate homography"):
        solve(image, board, starcluster.table, HD, ransac_px=None)


def test_pixels_above_the_horizon_are_told_apart(starcluster, make_camera):
    """A low camera sees the table's plane up to its horizon: pixels below it map onto the board in front of the
    camera, pixels above it map (through the homography) behind the camera, and `below_horizon` says which."""
    camera = make_camera((320, -900, 250), (320, 600, 0), 1300, HD)
    corners = np.array([[0, 0], [640, 0], [640, 1300], [0, 1300], [320, 650]], float)
    cal = calibrate_points(camera.project_board(corners), corners, starcluster, HD)
    far = camera.project(np.array([[320.0, 1e6, 0.0]]))[0]  # the horizon, straight ahead
    assert 0 < far[1] < HD[1]
    below, above = (far[0], far[1] + 40), (far[0], far[1] - 40)
    assert cal.below_horizon(np.array([below, above])).tolist() == [True, False]
    assert cal.below_horizon(camera.project_board(corners)).all()
