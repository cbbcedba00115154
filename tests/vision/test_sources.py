"""Frame sources: presentation times, the live newest-frame path, and streams that never open."""

import time

import numpy as np
import pytest

from rules.errors import InputError
from vision.config import PipelineConfig
from vision.sources import FileSource, LiveSource, open_source
from vision.video_io import VideoError, VideoWriter


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    path = tmp_path_factory.mktemp("src") / "clip.mp4"
    with VideoWriter(path, 160, 120, 30) as writer:
        for i in range(45):
            writer.write(np.full((120, 160, 3), (i * 5) % 255, np.uint8))
    return path


def test_file_source_gives_every_frame_with_presentation_times(clip):
    frames = list(open_source(str(clip), PipelineConfig()).frames())
    assert len(frames) == 45 and frames[0].t == 0.0
    assert np.allclose(np.diff([f.t for f in frames]), 1 / 30, atol=1e-3)


def test_a_file_played_live_keeps_times_and_drops_nothing_when_kept_up_with(clip):
    source = open_source(str(clip), PipelineConfig(), live=True)
    assert isinstance(source, LiveSource)
    started = time.monotonic()
    times = [f.t for f in source.frames()]
    assert time.monotonic() - started >= 1.3  # paced at the native rate, 1.5 s of video
    assert times == [f.t for f in FileSource(clip).frames()] and source.dropped == 0


def test_a_slow_consumer_gets_the_newest_frame(clip):
    source = open_source(str(clip), PipelineConfig(), live=True)
    times = []
    for frame in source.frames():
        times.append(frame.t)
        time.sleep(0.15)
    assert source.dropped > 0 and len(times) < 45 and times == sorted(times)


def test_a_stream_that_never_opens_is_an_error_after_the_retries():
    warnings = []
    config = PipelineConfig(stream_retries=2, stream_backoff_s=0.05, stream_open_timeout_s=1.0)
    source = open_source("http://127.0.0.1:9/live.mp4", config, on_warning=lambda t, m: warnings.append(m))
    with pytest.raises(InputError, match="never opened after 2 retries"):
        list(source.frames())
    assert len(warnings) == 2 and "retry 1 of 2" in warnings[0]


def test_a_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(VideoError, match="does not exist"):
        open_source(str(tmp_path / "nope.mp4"), PipelineConfig())
    with pytest.raises(VideoError, match="does not exist"):
        open_source(str(tmp_path / "nope.mp4"), PipelineConfig(), live=True)
