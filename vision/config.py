"""The referee pipeline's settings: thresholds in board millimetres and milliseconds.

One frozen dataclass, validated on construction and loadable from a JSON
object (`referee run --config` takes the rules engine's settings; the pipeline's
own settings live under its `"pipeline"` key), so a run is reproducible from
its files alone. docs/pipeline.md explains each knob.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from rules.errors import InputError
from rules.games import load_config


@dataclass(frozen=True)
class PipelineConfig:
    # rest and settle
    rest_speed_mm_s: float = 12.0  # a ball slower than this (median over the debounce window) may be at rest ...
    motion_speed_mm_s: float = 150.0  # faster than this = the table is in play again (a new settle will come)
    rest_debounce_ms: float = 400.0  # ... once it has stayed that slow this long; all at rest = settled
    creep_speed_mm_s: float = 4.0  # a ball that moved and still drifts this fast (0 = off) is not at rest ...
    creep_window_ms: float = 2000.0  # ... judged on up to this much of its track since it last moved fast
    stabilise: int = 1  # 1 = take camera shake out of ball positions by following the table's markers
    # tracking
    gate_mm: float = 45.0  # largest jump between prediction and detection for a rolling ball
    gate_speed_s: float = 0.08  # extra gate per mm/s of track speed (hops and fast rolls)
    max_gate_mm: float = 400.0
    confirm_hits: int = 3  # detections before a track is reported
    lost_ms: float = 1200.0  # a lost track is kept this long to bridge a hand or a missed detection
    coast_ms: float = 300.0  # ... but moves on its last velocity only this long
    accel_noise_mm_s2: float = 3000.0  # Kalman process noise: how hard a ball may be pushed
    measurement_noise_mm: float = 5.0
    # shots
    play_line_hysteresis_mm: float = 4.0  # Star Cluster Ball: past the line by this much counts as crossed
    launch_zone_mm: float = 400.0  # a rolling ball first seen this close past the line was launched from below it
    leave_space_fraction: float = 0.5  # Piratenbillard: moved this many pitches from its rest = left its space
    moved_mm: float = 40.0  # Star Cluster Ball: a hidden resting ball seen again this far away was knocked on
    # hands (settle is paused while one is over the table)
    hand_min_area_balls: float = 8.0  # a changed blob larger than this many ball areas is a hand
    hand_diff_grey: float = 32.0  # grey-level change against the learnt empty-table background
    background_rate: float = 0.03  # how fast the background follows slow lighting changes (per frame)
    analysis_width: int = 320  # hands are looked for on a frame shrunk to this width
    # calibration and review
    calibration_search_s: float = 3.0  # look for table markers this long before giving up
    monitor_interval_s: float = 1.0  # re-check the markers (table movement, markers lost) this often; 0 = off
    review_confidence: float = 0.6  # a call below this is flagged for review
    table_shift_mm: float = 5.0  # a lasting step of the markers (median over 1 s) this large = the table moved
    # pose (Star Cluster Ball: Play Line crossings by the body; vision/pose_watch.py, docs/pose.md)
    pose_interval_s: float = 0.25  # pose runs this often while nobody is at the Play Line ...
    pose_release_interval_s: float = 0.066  # ... and this often in a release window (every other frame at 30 fps)
    pose_arm_mm: float = 150.0  # a body part this close to the line (or past it) opens a release window
    pose_release_before_s: float = 1.0  # a crossing this long before vision sees the ball cross belongs to the shot
    pose_release_after_s: float = 0.5  # ... and one this long after it
    pose_crop_margin_mm: float = 300.0  # pose looks at the player's side of the line and this far past it
    pose_threads: int = 1  # onnxruntime threads for pose (more only fight the rest of the loop for 2 cores)
    # live sources
    stream_retries: int = 4  # reconnect attempts before a stream counts as gone
    stream_backoff_s: float = 0.25  # first wait before reconnecting; doubles each try
    stream_open_timeout_s: float = 5.0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InputError(f"pipeline config: {f.name!r} must be a number, got {value!r}")
            if value < 0:
                raise InputError(f"pipeline config: {f.name!r} must be >= 0, got {value}")
        if self.confirm_hits < 1 or self.analysis_width < 32 or self.pose_threads < 1:
            raise InputError("pipeline config: 'confirm_hits' and 'pose_threads' must be >= 1 and 'analysis_width' >= 32")
        if not 0 < self.background_rate <= 1 or not 0 <= self.review_confidence <= 1:
            raise InputError("pipeline config: 'background_rate' must be in (0, 1] and 'review_confidence' in [0, 1]")

    @property
    def rest_debounce_s(self) -> float:
        return self.rest_debounce_ms / 1000.0

    @property
    def creep_window_s(self) -> float:
        return self.creep_window_ms / 1000.0

    @property
    def lost_s(self) -> float:
        return self.lost_ms / 1000.0

    @property
    def coast_s(self) -> float:
        return self.coast_ms / 1000.0

    @staticmethod
    def from_dict(data: dict[str, Any]) -> "PipelineConfig":
        known = {f.name: f.type for f in fields(PipelineConfig)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise InputError(f"pipeline config: unknown setting(s) {', '.join(unknown)}; known: {', '.join(known)}")
        values = {}
        for name, value in data.items():
            if name in ("confirm_hits", "analysis_width", "stream_retries", "stabilise", "pose_threads"):
                if isinstance(value, bool) or not isinstance(value, int):
                    raise InputError(f"pipeline config: {name!r} must be an integer, got {value!r}")
            values[name] = value
        return PipelineConfig(**values)


def split_config(data: dict[str, Any]) -> tuple[dict[str, Any], PipelineConfig]:
    """A `--config` object -> (the rules engine's settings, the pipeline's settings)."""
    rules = dict(data)
    pipeline = rules.pop("pipeline", {})
    if not isinstance(pipeline, dict):
        raise InputError("config: 'pipeline' must be an object of pipeline settings")
    return rules, PipelineConfig.from_dict(pipeline)


def load_pipeline_config(path: str | Path) -> PipelineConfig:
    """A JSON file of pipeline settings alone; read (and its errors named) as `rules.games.load_config` reads
    a game config."""
    return PipelineConfig.from_dict(load_config(path))
