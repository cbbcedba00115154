"""Table geometry and the camera-to-table homography."""
