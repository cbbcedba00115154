"""The one place that talks to OpenCV's ArUco API, which changes between releases."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import cv2
import numpy as np

from rules.errors import InputError

# Modules across a marker including its black border (4x4 dictionaries: 6).
MODULES = 6
EDGE_ITERATIONS = 2


@dataclass(frozen=True)
class DetectedMarker:
    """A marker found in an image: corners in pixels, ArUco order (TL, TR, BR, BL)."""

    id: int
    corners: tuple[tuple[float, float], ...]


def _dictionary(name: str, context: str) -> cv2.aruco.Dictionary:
    code = getattr(cv2.aruco, name, None) if name.startswith("DICT_") else None
    if not isinstance(code, int):
        raise InputError(f"{context}: unknown ArUco dictionary {name!r}; use one like DICT_4X4_50")
    return cv2.aruco.getPredefinedDictionary(code)


def dictionary_size(name: str, context: str) -> int:
    """How many marker ids the named dictionary holds (raises InputError if unknown)."""
    return int(_dictionary(name, context).bytesList.shape[0])


def marker_bits(name: str, marker_id: int) -> np.ndarray:
    """The marker as a square 0/255 array, one element per module, black border included."""
    dictionary = _dictionary(name, "marker")
    modules = dictionary.markerSize + 2
    return cv2.aruco.generateImageMarker(dictionary, marker_id, modules, borderBits=1)


def detect_markers(image: np.ndarray, dictionary: str,
                   regions: Sequence[tuple[int, int, int, int]] | None = None) -> list[DetectedMarker]:
    """All markers of `dictionary` in a BGR or grey image, corners refined to sub-pixel; with `regions`
    (pixel boxes x0, y0, x1, y1) only those within them: where the markers lie is known, so the rest of the
    frame need not be searched. A marker seen in two regions is kept once, as the larger."""
    h, w = image.shape[:2]
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    detector = cv2.aruco.ArucoDetector(_dictionary(dictionary, "profile markers"), params)
    found: dict[int, DetectedMarker] = {}
    for x0, y0, x1, y1 in regions if regions is not None else [(0, 0, w, h)]:
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
        if x1 <= x0 or y1 <= y0:
            continue
        crop = image[y0:y1, x0:x1]
        grey = crop if crop.ndim == 2 else cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
        corners, ids, _rejected = detector.detectMarkers(grey)
        if ids is None:
            continue
        smooth = grey.astype(np.float32)
        for c, i in zip(corners, ids.ravel()):
            refined = c.reshape(4, 2).astype(float)
            for _ in range(EDGE_ITERATIONS):
                refined = _refine_by_edges(smooth, refined)
            marker = DetectedMarker(id=int(i), corners=tuple((float(u) + x0, float(v) + y0) for u, v in refined))
            if int(i) not in found or _perimeter(marker) > _perimeter(found[int(i)]):
                found[int(i)] = marker
    return sorted(found.values(), key=lambda m: m.id)


def _perimeter(marker: DetectedMarker) -> float:
    corners = np.array(marker.corners)
    return float(np.linalg.norm(np.roll(corners, -1, axis=0) - corners, axis=1).sum())


def _refine_by_edges(grey: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """Re-place corners as intersections of the four outer edges, each fitted to many edge points.

    A corner detector looks at a few pixels around the corner and, under blur,
    is pulled inwards; an edge line fitted along the whole side uses every
    pixel of it and a blurred step's gradient peak stays on the true edge.
    """
    centre = corners.mean(axis=0)
    module = np.linalg.norm(np.roll(corners, -1, axis=0) - corners, axis=1).mean() / MODULES
    reach = max(1.5, module)
    offsets = np.arange(-reach, reach + 1e-9, 0.25)
    edges = []  # per side: its points along the edge and the outward normal
    for a, b in zip(corners, np.roll(corners, -1, axis=0)):
        along = (b - a) / np.linalg.norm(b - a)
        normal = np.array([-along[1], along[0]])
        if normal @ ((a + b) / 2 - centre) < 0:
            normal = -normal
        ts = np.linspace(0.15, 0.85, max(6, int(np.linalg.norm(b - a))))
        edges.append((a + ts[:, None] * (b - a), normal))
    # the four sides' profiles across the edge in one remap (each pixel's value is its own: the same numbers)
    maps = np.concatenate([base[:, None, :] + offsets[None, :, None] * normal for base, normal in edges]
                          ).astype(np.float32)
    profiles = cv2.remap(grey, maps[..., 0], maps[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    gradients = np.clip(np.diff(profiles, axis=1), 0, None)  # dark inside -> light outside
    mids = (offsets[:-1] + offsets[1:]) / 2
    lines = []
    start = 0
    for base, normal in edges:
        gradient = gradients[start:start + len(base)]
        start += len(base)
        weight = gradient.sum(axis=1)
        ok = weight > 1e-6
        if ok.sum() < 3:
            return corners
        shift = (gradient[ok] @ mids) / weight[ok]
        points = base[ok] + shift[:, None] * normal
        mean = points.mean(axis=0)
        _, _, vt = np.linalg.svd(points - mean)
        lines.append((mean, vt[0]))
    out = []
    for (p1, d1), (p2, d2) in zip(lines[-1:] + lines[:-1], lines):
        m = np.column_stack([d1, -d2])
        if abs(np.linalg.det(m)) < 1e-6:
            return corners
        s = np.linalg.solve(m, p2 - p1)
        out.append(p1 + s[0] * d1)
    return np.array(out, dtype=float)
