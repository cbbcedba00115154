"""truth.json: what a rendered clip shows, frame by frame, and what the referee should decide.

Written with sorted keys and rounded floats, so the same seed and options give
a byte-identical file. The expected result is the rules engine's replay of the
very event log the simulation fed it (sample_videos/README.md documents every field).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rules.replay import replay
from rules.result import build_result
from simulation.camera import Camera
from simulation.realism import Realism
from simulation.render import FrameTruth
from simulation.trajectory import Match

FORMAT = "table-referee/sim-truth@1"
BALL_COLUMNS = ("id", "x_mm", "y_mm", "z_mm", "u_px", "v_px", "r_px", "visible", "occluded", "moving")


def _round(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 2) + 0.0  # + 0.0 turns -0.0 into 0.0
    if isinstance(value, dict):
        return {str(k): _round(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_round(v) for v in value]
    return value


def frame_json(frame: FrameTruth) -> dict[str, Any]:
    data: dict[str, Any] = {
        "t": frame.t,
        "balls": [[b.id, b.x, b.y, b.z, b.u, b.v, b.r_px, int(b.visible), int(b.occluded), int(b.moving)]
                  for b in frame.balls],
    }
    if any(frame.shake_deg):
        data["shake_deg"] = list(frame.shake_deg)
    if any(frame.table_shift):
        data["table_shift"] = list(frame.table_shift)
    if frame.hand_px is not None:
        data["hand_px"] = list(frame.hand_px)
    if frame.person is not None:
        data["person"] = frame.person
    return data


def build_truth(match: Match, profile_json: dict[str, Any], camera: Camera, realism: Realism,
                frames: list[FrameTruth], video: str = "video.mp4") -> dict[str, Any]:
    replayed = replay(list(match.events), match.game, match.config)
    owners = {b.id: b.owner for b in match.frames[0].balls} if match.frames else {}
    return _round({
        "format": FORMAT,
        "game": match.game,
        "seed": match.seed,
        "scenario": match.scenario,
        "notes": list(match.notes),
        "video": video,
        "fps": match.fps,
        "frame_count": len(frames),
        "duration_s": len(frames) / match.fps,
        "profile": profile_json,
        "camera": camera.to_json(),
        "realism": asdict(realism),
        "config": match.config,
        "ball_owners": {str(k): v for k, v in sorted(owners.items())},
        "ball_columns": list(BALL_COLUMNS),
        "frames": [frame_json(f) for f in frames],
        "events": [e.to_json() for e in match.events],
        "result": build_result(replayed, {"simulation": match.game, "scenario": match.scenario,
                                          "seed": match.seed}),
    })


def write_truth(path: str | Path, truth: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps(truth, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
