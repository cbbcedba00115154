"""Lens distortion: intrinsics undistort points before the homography maps them."""

from __future__ import annotations

import cv2
import numpy as np

from calibration.calibrate import calibrate_markers
from calibration.distortion import Intrinsics
from calibration.render import warp_to_camera

SIZE = (1280, 720)


def test_barrel_distorted_frame_maps_accurately_with_intrinsics(starcluster, board_images, make_camera):
    camera = make_camera((320, -600, 1100), (320, 650, 0), 700, SIZE)
    ideal = warp_to_camera(board_images["starcluster"], starcluster, 2.0, camera.board_to_image, SIZE)
    k, d = camera.k, np.array([-0.25, 0.08, 0.0, 0.0, 0.0])
    # Distorted image: each distorted pixel samples the ideal image where its ray truly lands.
    grid = np.stack(np.meshgrid(np.arange(SIZE[0]), np.arange(SIZE[1])), -1).reshape(-1, 1, 2).astype(np.float64)
    src = cv2.undistortPoints(grid, k, d, P=k).reshape(SIZE[1], SIZE[0], 2).astype(np.float32)
    distorted = cv2.remap(ideal, src[..., 0], src[..., 1], cv2.INTER_LINEAR)
    intrinsics = Intrinsics(camera_matrix=tuple(map(tuple, k)), dist_coeffs=tuple(d))

    truth = np.array([s for pos in starcluster.positions for s in pos.slots])
    ideal_px = camera.project_board(truth)
    normalised = np.c_[ideal_px, np.ones(len(truth))] @ np.linalg.inv(k).T
    seen_px = cv2.projectPoints(normalised, np.zeros(3), np.zeros(3), k, d)[0].reshape(-1, 2)

    with_lens = calibrate_markers(distorted, starcluster, intrinsics)
    without = calibrate_markers(distorted, starcluster)
    err_with = np.linalg.norm(with_lens.image_to_board(seen_px) - truth, axis=1).max()
    err_without = np.linalg.norm(without.image_to_board(seen_px) - truth, axis=1).max()
    print(f"distortion k1=-0.25: slot error {err_with:.2f} mm with intrinsics, {err_without:.2f} mm without")
    assert err_with < 2.0
    assert err_without > 2 * err_with


def test_the_per_video_undistorter_gives_undistort_images_pixels():
    """Built once per video (the pixel map), it must give exactly what the one-frame undistortion gives."""
    lens = Intrinsics(((900.0, 0.0, 640.0), (0.0, 900.0, 360.0), (0.0, 0.0, 1.0)), (-0.25, 0.08, 0.001, -0.001, 0.0))
    frame = np.random.default_rng(3).integers(0, 256, (720, 1280, 3), dtype=np.uint8)
    undistort = lens.image_undistorter(1280, 720)
    assert np.array_equal(undistort(frame), lens.undistort_image(frame))
    assert not np.array_equal(undistort(frame), frame)
    straight = Intrinsics(lens.camera_matrix, (0.0, 0.0, 0.0, 0.0, 0.0))
    assert straight.image_undistorter(1280, 720)(frame) is frame
