"""Real run folders for the annotation and highlight tests, made once per session.

`pb_run`: `referee run --annotate` on the committed Piratenbillard capture sample (185 frames,
1280x720), colour detector and all: the run folder exactly as a user gets it, calibration.json and
annotated.mp4 included. `sc_run`: the Star Cluster chain_grand_slam sample (839 frames) through the
real pipeline fed the renderer's own ball pixels (as tests/vision/test_pipeline.py does), which is
fast; its calibration.json is taken away, so the review tools calibrate from the video's markers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from record.run_folder import CALIBRATION_FILE
from referee.cli import main
from referee.session import RefereeSession, RunSpec
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

    def detect(self, image, mask=None, steady=None, colours=None, settled=False, halvings=None):
        balls = self.frames[min(self.index, len(self.frames) - 1)]["balls"]
        self.index += 1
        return [Detection(u, v, r, self.owners[str(i)], 0.95)
                for i, _x, _y, _z, u, v, r, visible, *_ in balls
                if visible and (colours is None or self.owners[str(i)] in colours)]


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
    detector = TruthDetector(truth)
    spec = RunSpec(str(SC_SAMPLE / "video.mp4"), truth["game"], out, session=SC_SAMPLE / "truth.json", pose=False)
    with RefereeSession.open(spec, detector=lambda *_: detector) as session:
        session.run()
    (out / CALIBRATION_FILE).unlink()
    return out
