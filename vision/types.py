"""Values that cross the stages of the vision pipeline.

frame -> detector -> `Detection` (pixels) -> mapper -> `BoardBall` (table mm)
-> tracker -> `Track` -> settle watcher -> `Settled` -> snapshot reader ->
`rules.events.Snapshot` -> shot segmenter -> observation events.

Vision stops at observations: it never decides a score.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

import numpy as np

from rules.events import Location
from vision.numeric import Halvings


@dataclass(frozen=True)
class Detection:
    """A ball candidate in one frame, in image pixels (after undistortion, if any)."""

    u: float  # centre, px
    v: float
    radius_px: float
    colour: str  # a player id (= ball colour), or "unknown"
    score: float  # 0..1: how sure the detector is this is a ball of that colour


@dataclass(frozen=True)
class BoardBall:
    """A detection mapped onto the table: contact point in board mm, ball height corrected."""

    detection: Detection
    x: float
    y: float
    location: Location  # slot / cell / region under the contact point


class TrackState(str, Enum):
    TENTATIVE = "tentative"  # seen too few times to report
    CONFIRMED = "confirmed"
    LOST = "lost"  # not seen lately; kept a while to bridge occlusions


@dataclass(frozen=True)
class Track:
    id: int
    colour: str
    x: float  # filtered position, board mm
    y: float
    vx: float  # filtered velocity, mm/s
    vy: float
    state: TrackState
    at_rest: bool  # speed under the rest threshold for the debounce time
    last_seen_t: float
    hits: int
    location: Location | None = None  # where its latest detection lay (slot / cell / region)
    confidence: float = 1.0  # the detector's score of its latest detection
    born_at: tuple[float, float] | None = None  # board mm of its first detection (before it was confirmed)
    born_t: float | None = None  # time of its first detection
    slow: bool = False  # its latest window of detections moved slower than the rest speed (`at_rest` also
    #                     needs the debounce time since it was last fast, and no creep one way)
    fast_t: float | None = None  # when its filtered speed was last over the motion speed (None: never)


class Detector(Protocol):
    """A ball detector backend, picked by name (`--detector color|onnx`)."""

    name: str

    def detect(self, image: np.ndarray, mask: np.ndarray | None = None, steady: np.ndarray | None = None,
               colours: Collection[str] | None = None, settled: bool = False,
               halvings: Halvings | None = None) -> list[Detection]:
        """Balls in a BGR frame; `mask` (uint8, 255 = table) limits the search; `steady` (2x3) maps this frame's
        pixels onto the steadied image (camera shake taken out), for a backend that remembers where balls were;
        `colours`: only balls of these colours are wanted (None: every colour, the unknown ones included);
        `settled`: the frame is the next of a video whose balls the caller tracks (and tells the backend of those
        not yet at rest), and the table has settled since a ball last moved: what the backend found on an earlier
        frame may stand for one where nothing changed since. `halvings`: `image`'s successive halvings, made by another
        stage already (a backend that shrinks the frame takes its own from them)."""
