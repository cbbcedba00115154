"""Real run folders for the annotation and highlight tests, made once per session.

`pb_run`: `referee run --annotate` on the committed Piratenbillard capture sample (185 frames,
1280x720), colour detector and all: the run folder exactly as a user gets it, calibration.json and
annotated.mp4 included. `sc_run`: the Star Cluster chain_grand_slam sample (839 frames) through the
real pipeline fed the renderer's own ball pixels (as tests/vision/test_pipeline.py does), which is
fast; it writes no calibration.json, so the review tools calibrate from the video's markers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from calibration.profile import load_profile
from record.run_folder import TRACKS_FILE
from referee.cli import main
from rules.files import write_json_atomically
from rules.replay import read_log, replay
from rules.result import build_result
from vision.cells import read_settled
from vision.config import PipelineConfig
from vision.evaluate import FrameLog
from vision.event_log import EventLog
from vision.mapping import BoardMapper
from vision.pipeline import Referee
from vision.shots import SessionFeed
from vision.sources import FileSource
from vision.types import Detection

SAMPLES = Path(__file__).resolve().parents[2] / "sample_videos"
PB_SAMPLE = SAMPLES / "piratenbillard" / "capture"
SC_SAMPLE = SAMPLES / "starcluster" / "chain_grand_slam"


class TruthDetector:
    """The renderer's ball pixels for each frame, in order: everything after detection is real."""

    name = "truth"

    def __init__(self, truth: dict) -> None:
        self.frames, self.owners = truth["frames"], truth["ball_owners"]
        self.index = 0

    def detect(self, image, mask=None):
        balls = self.frames[min(self.index, len(self.frames) - 1)]["balls"]
        self.index += 1
        return [Detection(u, v, r, self.owners[str(i)], 0.95)
                for i, _x, _y, _z, u, v, r, visible, *_ in balls if visible]


@pytest.fixture(scope="session")
def pb_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("review") / "pb"
    code = main(["run", str(PB_SAMPLE / "video.mp4"), "--game", "piratenbillard", "--session",
                 str(PB_SAMPLE / "truth.json"), "--out", str(out), "--annotate", "--quiet"])
    assert code == 0
    return out


@pytest.fixture(scope="session")
def sc_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("review") / "sc"
    truth = json.loads((SC_SAMPLE / "truth.json").read_text())
    with EventLog(out) as log, open(out / TRACKS_FILE, "w", encoding="utf-8") as tracks:
        referee = Referee(truth["game"], load_profile(truth["game"]), lambda *_: TruthDetector(truth), BoardMapper,
                          read_settled, log, SessionFeed.load(SC_SAMPLE / "truth.json"), PipelineConfig(),
                          truth["config"])
        referee.frame_log = FrameLog(tracks, referee.ball_centre_px)
        referee.run(FileSource(SC_SAMPLE / "video.mp4"))
    replayed = replay(read_log(out / "events.jsonl"), truth["game"], truth["config"])
    write_json_atomically(out / "result.json", build_result(replayed, {"video": str(SC_SAMPLE / "video.mp4")}))
    return out
