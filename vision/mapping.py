"""Image pixels <-> board millimetres for balls, and the board place under a ball.

A ball's visible centre sits one radius above the board, so mapping it through
the board-plane homography lands beyond the ball, away from the camera (a few
mm at the far end of a table filmed from behind the Play Line). `BoardMapper`
recovers the camera pose once from the homography and corrects each mapped
centre to the ball's contact point (`calibration.ball_height`), then names the
slot / space / region under it with the event model's `Location` (the profile's `locate`).

The inverse helpers (`ball_centre_px`, `ball_radius_px`, `contact_polygon_px`)
say where a ball resting at a board point appears in the image: the overlay
drawer and the settled-table reader (`vision.cells`) use them.
"""

from __future__ import annotations

import cv2
import numpy as np

from calibration.ball_height import CameraPose, camera_pose, contact_point
from calibration.calibrate import Calibration
from calibration.distortion import Intrinsics
from calibration.geometry import Rect
from calibration.profile import TableProfile
from rules.errors import InputError
from rules.events import Location
from vision.types import BoardBall, Detection

DEFAULT_TOLERANCE_MM = 2.0  # a ball measured this far outside a slot or space still counts in it


class BoardMapper:
    """One camera view of one table: ball pixels -> contact points (mm) -> places, and back.

    Without `intrinsics` the focal length comes from the homography; a camera
    looking straight down does not reveal it, and then (only then) the height
    correction is skipped (`height_corrected` is False): straight overhead the
    error it fixes is small near the image centre.
    """

    def __init__(self, calibration: Calibration, profile: TableProfile, intrinsics: Intrinsics | None = None,
                 tolerance_mm: float = DEFAULT_TOLERANCE_MM) -> None:
        self.calibration = calibration
        self.profile = profile
        self.radius_mm = profile.ball_diameter_mm / 2
        self.tolerance_mm = tolerance_mm
        self.pose: CameraPose | None
        try:
            self.pose = camera_pose(calibration.homography, calibration.image_size,
                                    intrinsics or calibration.intrinsics)
        except InputError:
            self.pose = None
        self._h_img = np.linalg.inv(calibration.homography.array)  # board mm -> undistorted image px

    @property
    def height_corrected(self) -> bool:
        return self.pose is not None

    # ------------------------------------------------------------------ image -> board

    def to_board(self, points_px: np.ndarray, radius_mm: float | None = None) -> np.ndarray:
        """Visible ball centres (N, 2) px -> contact points (N, 2) board mm."""
        plane = self.calibration.image_to_board(points_px)
        if self.pose is None:
            return plane
        return contact_point(plane, self.pose, self.radius_mm if radius_mm is None else radius_mm)

    def locate(self, point_mm: tuple[float, float]) -> Location:
        return self.profile.locate((float(point_mm[0]), float(point_mm[1])), self.tolerance_mm).at

    def map(self, detections: list[Detection], points_px: np.ndarray | None = None) -> list[BoardBall]:
        """Image detections -> balls on the board: contact point in mm and the place under it. `points_px`
        (N, 2): the visible centres to map instead of the detections' own (steadied against camera shake);
        the balls keep the detections as given."""
        if not detections:
            return []
        if points_px is None:
            points_px = np.array([[d.u, d.v] for d in detections], float)
        points = self.to_board(points_px).tolist()
        return [BoardBall(d, x, y, self.locate((x, y))) for d, (x, y) in zip(detections, points)]

    # ------------------------------------------------------------------ board -> image

    def plane_point(self, contact_mm: np.ndarray) -> np.ndarray:
        """Contact points (N, 2) -> where the ray through the ball's centre meets the board plane."""
        p = np.asarray(contact_mm, float).reshape(-1, 2)
        if self.pose is None:
            return p
        cx, cy, cz = self.pose.centre_mm
        c = np.array([cx, cy])
        return c + (p - c) * cz / (cz - self.radius_mm)

    def ball_centre_px(self, contact_mm: np.ndarray) -> np.ndarray:
        """Contact points (N, 2) mm -> the ball's visible centre (N, 2) in undistorted image px."""
        return self.calibration.board_to_image(self.plane_point(contact_mm))

    def ball_discs_px(self, contact_mm: np.ndarray) -> list[tuple[float, float, float]]:
        """Contact points (N, 2) mm -> each resting ball's disc in the image: (u, v, r) px."""
        points = np.asarray(contact_mm, float).reshape(-1, 2)
        if not len(points):
            return []
        return [(float(u), float(v), float(r)) for (u, v), r in
                zip(self.ball_centre_px(points), self.ball_radius_px(points))]

    def ball_radius_px(self, contact_mm: np.ndarray) -> np.ndarray:
        """Apparent radius (N,) in px of a ball resting at each contact point."""
        p = np.asarray(contact_mm, float).reshape(-1, 2)
        if self.pose is not None:
            r = np.array(self.pose.rotation)
            t = np.array(self.pose.translation)
            f = np.array(self.pose.camera_matrix)[0, 0]
            centres = np.column_stack([p, np.full(len(p), self.radius_mm)])
            depth = centres @ r[2] + t[2]
            return f * self.radius_mm / np.maximum(depth, 1e-6)
        # no pose: the local scale of the homography (px per mm) at the point
        d = 0.5
        a = self.calibration.board_to_image(p - [d, 0])
        b = self.calibration.board_to_image(p + [d, 0])
        c = self.calibration.board_to_image(p - [0, d])
        e = self.calibration.board_to_image(p + [0, d])
        u, v = b - a, e - c
        scale = np.sqrt(np.abs(u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0])) / (2 * d)  # area of the mapped square
        return scale * self.radius_mm

    def smallest_ball_radius_px(self) -> float:
        """The apparent radius (px) of a ball resting where the playing field looks smallest: at one of its corners
        (a ball's image shrinks with its depth, which is linear across the plane)."""
        f = self.profile.playing_field
        corners = np.array([[f.x_min, f.y_min], [f.x_max, f.y_min], [f.x_max, f.y_max], [f.x_min, f.y_max]], float)
        return float(self.ball_radius_px(corners).min())

    def air_polygon_px(self, rect: Rect, hop_mm: float) -> np.ndarray:
        """Where a ball over board rectangle `rect` can appear in the image, resting or flying up to `hop_mm` above
        its resting height: the convex hull (N, 2) of the rectangle raised to ball-centre height and to `hop_mm`
        above that. A camera whose pose the homography does not reveal (straight overhead) shows no parallax: the
        raised rectangle alone."""
        corners = np.array(rect.corners, float)
        low = self.ball_centre_px(corners)
        if hop_mm <= 0 or self.pose is None:
            return low
        cx, cy, cz = self.pose.centre_mm
        height = self.radius_mm + hop_mm
        if height >= cz:
            raise InputError(f"a hop of {hop_mm:g} mm reaches the camera ({cz:.0f} mm above the table); lower the "
                             "game's hop height or raise the camera")
        centre = np.array([cx, cy])
        high = self.calibration.board_to_image(centre + (corners - centre) * cz / (cz - height))
        return cv2.convexHull(np.vstack([low, high]).astype(np.float32)).reshape(-1, 2).astype(np.float64)

    def contact_polygon_px(self, corners_mm: np.ndarray) -> np.ndarray:
        """A board polygon of contact points -> the image polygon its balls' centres can cover."""
        return self.ball_centre_px(corners_mm)

    def table_polygon_px(self, margin_mm: float = 0.0) -> np.ndarray:
        """The table outline (4, 2) in image px, grown by `margin_mm` and raised to ball-centre height."""
        t = self.profile.table
        m = margin_mm
        corners = np.array([[t.x_min - m, t.y_min - m], [t.x_max + m, t.y_min - m],
                            [t.x_max + m, t.y_max + m], [t.x_min - m, t.y_max + m]], float)
        return self.ball_centre_px(corners)
