"""The review tools' settings: how the overlay draws a run, and what the highlight clips show.

Plain values with no drawing code, so the command line can show the defaults
without loading OpenCV.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Style:
    """How the review overlay draws a run (review/overlay.py)."""

    caption_s: float = 3.0  # how long the calls of a moment stay on screen
    trail_s: float = 1.5  # how much of each ball's path is drawn
    rest_window_s: float = 0.5  # a ball that moved slower than rest_mm_s over this long is at rest
    rest_mm_s: float = 20.0  # mm/s, measured between the window's ends (the track's Kalman jitter averages out)
    tracks_gap_s: float = 0.25  # a frame the run did not track shows the tracks of one this close before


@dataclass(frozen=True)
class ClipSettings:
    """What to cut: how much to show around each moment, and how long a reel's title card stays."""

    lead_s: float = 2.0
    tail_s: float = 3.0
    card_s: float = 1.5
