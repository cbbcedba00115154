"""Frame sources: presentation times, the live newest-frame path, reconnects and streams that never open.

No test here reads the wall clock or sleeps: the live path waits on virtual clocks (tests/vision/clocks.py),
and whatever must happen in an order is made to by conditions, so the results do not depend on how fast or
how busy the machine is. The frames are decoded from a real H.264 file.
"""

import threading
from types import SimpleNamespace

import numpy as np
import pytest
from clocks import GatedClock, LockstepClock, VirtualClock

import vision.sources as sources
from rules.errors import InputError
from vision.config import SourceConfig
from vision.sources import FileSource, LiveSource, SystemClock, open_source
from vision.video_io import VideoError, VideoWriter

FRAMES = 45


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    path = tmp_path_factory.mktemp("src") / "clip.mp4"
    with VideoWriter(path, 160, 120, 30) as writer:
        for i in range(FRAMES):
            writer.write(np.full((120, 160, 3), (i * 5) % 255, np.uint8))
    return path


@pytest.fixture(scope="module")
def decoded(clip):
    """The clip's frames as the file path gives them: what every live run is compared with."""
    return list(FileSource(clip).frames())


def test_file_source_gives_every_frame_with_presentation_times(clip, decoded):
    frames = list(open_source(str(clip), SourceConfig()).frames())
    assert len(frames) == FRAMES and frames[0].t == 0.0
    assert np.allclose(np.diff([f.t for f in frames]), 1 / 30, atol=1e-3)
    assert [f.t for f in frames] == [f.t for f in decoded]


def test_a_live_source_waits_on_the_system_clock_unless_given_one(clip):
    assert isinstance(open_source(str(clip), SourceConfig(), live=True).clock, SystemClock)
    clock = VirtualClock()
    assert open_source(str(clip), SourceConfig(), live=True, clock=clock).clock is clock
    assert open_source("http://127.0.0.1:9/live.mp4", SourceConfig(), clock=clock).clock is clock


def test_a_file_played_live_is_paced_at_its_presentation_times(clip, decoded):
    clock = LockstepClock(start=100.0)
    source = clock.follow(open_source(str(clip), SourceConfig(), live=True, clock=clock))
    assert isinstance(source, LiveSource)
    frames = list(source.frames())
    times = [f.t for f in decoded]
    assert [f.t for f in frames] == times and [f.index for f in frames] == list(range(FRAMES))
    assert all(np.array_equal(a.image, b.image) for a, b in zip(frames, decoded))
    assert source.dropped == 0 and source.received == FRAMES
    # one wait before each frame: up to the frame's presentation time, from where the clock stands
    assert len(clock.waits) == FRAMES and clock.waits[0] == 0.0
    assert clock.waits[1:] == pytest.approx(np.diff(times).tolist(), abs=1e-9)
    assert sum(clock.waits) == pytest.approx(times[-1] - times[0], abs=1e-9)
    assert clock.now() == pytest.approx(100.0 + times[-1], abs=1e-9)


def test_the_pacing_waits_do_not_depend_on_the_consumer(clip, decoded):
    """A plain virtual clock: the reader runs free, the consumer gets some frames, the waits are the file's."""
    clock = VirtualClock()
    source = open_source(str(clip), SourceConfig(), live=True, clock=clock)
    frames = list(source.frames())
    times = [f.t for f in decoded]
    assert clock.waits[0] == 0.0 and clock.waits[1:] == pytest.approx(np.diff(times).tolist(), abs=1e-9)
    got = [f.t for f in frames]
    assert got == sorted(set(got)) and set(got) <= set(times) and got[-1] == times[-1]  # the last is never dropped
    assert source.received == FRAMES and source.dropped + len(frames) == FRAMES


def test_in_lockstep_a_slow_consumer_still_gets_every_frame(clip, decoded):
    """The consumer asks for frame k+1 only once the reader has decoded frame k+2 and is held back by it."""
    clock = LockstepClock()
    source = clock.follow(open_source(str(clip), SourceConfig(), live=True, clock=clock))
    frames = []
    for frame in source.frames():
        frames.append(frame)
        if len(frames) < FRAMES - 1:  # a frame two ahead exists: wait until the reader is stuck on it
            clock.wait_until_stalled(after=frame.t)
    times = [f.t for f in decoded]
    assert [f.t for f in frames] == times and source.dropped == 0 and source.received == FRAMES
    assert all(np.array_equal(a.image, b.image) for a, b in zip(frames, decoded))
    assert set(times[1:-1]) <= set(clock.stalls)  # the reader really was held back at every frame
    assert clock.waits[1:] == pytest.approx(np.diff(times).tolist(), abs=1e-9)


def test_a_consumer_that_falls_behind_gets_the_newest_frame(clip, decoded):
    clock = GatedClock()
    source = open_source(str(clip), SourceConfig(), live=True, clock=clock)
    frames = source.frames()
    clock.allow(1)  # the reader may release frame 0 only
    first = next(frames)
    assert (first.index, first.t, source.received, source.dropped) == (0, decoded[0].t, 1, 0)
    clock.allow(5)
    clock.wait_until_held()  # frames 1-5 released while the consumer took none; each replaced the one before
    assert (source.received, source.dropped) == (6, 4)
    newest = next(frames)
    assert (newest.index, newest.t) == (1, decoded[5].t) and np.array_equal(newest.image, decoded[5].image)
    clock.open()
    rest = list(frames)
    got = [f.t for f in [first, newest, *rest]]
    assert got == sorted(set(got)) and got[-1] == decoded[-1].t
    assert source.received == FRAMES and source.dropped + len(got) == FRAMES


def test_closing_the_frames_early_lets_a_held_reader_stop(clip):
    clock = LockstepClock()
    source = clock.follow(open_source(str(clip), SourceConfig(), live=True, clock=clock))
    frames = source.frames()
    for _ in range(3):
        clock.wait_until_stalled(after=next(frames).t)
    # the consumer holds frame 2, frame 3 waits in the slot, the reader is held back with frame 4
    assert (source.received, source.dropped) == (4, 0)
    readers = [t for t in threading.enumerate() if t.name == f"reader {source.name}"]
    assert len(readers) == 1
    frames.close()  # stopping must wake the held reader: it releases frame 4 and ends
    readers[0].join(timeout=120.0)  # a deadlock guard only: the reader stops at once
    assert not readers[0].is_alive() and (source.received, source.dropped) == (5, 1)


def _scripted_feed(script):
    """open_feed for LiveSource: each call plays the next step, a list of (t, image) then an error or the end."""
    steps = iter(script)

    def open_feed():
        frames, error = next(steps)
        yield from frames
        if error is not None:
            raise ConnectionError(error)

    return open_feed


def test_a_lost_stream_is_retried_with_back_off_and_keeps_times_increasing(decoded):
    pairs = [(f.t, f.image) for f in decoded]
    refused = ([], "connection refused")
    feed = _scripted_feed([(pairs[:10], "connection reset"), refused, (pairs, None), refused, refused, refused,
                           refused])
    warnings = []
    clock = VirtualClock()
    source = LiveSource("cam", feed, SourceConfig(), lambda t, m: warnings.append((t, m)), clock=clock)
    frames = []
    with pytest.raises(InputError) as error:
        for frame in source.frames():
            frames.append(frame)
    assert str(error.value) == ("source cam was lost after 4 retries (connection refused); "
                                "check the address, the network and the camera")
    # back-off 0.25 s doubling, from the first wait again once frames flowed; no real waiting
    assert clock.waits == [0.25, 0.5, 0.25, 0.5, 1.0, 2.0] and clock.now() == 4.5
    first_loss, reset = pairs[9][0], pairs[9][0] + 1e-3  # the second connection's times follow on
    assert warnings[:2] == [(first_loss, "source cam: connection reset; retry 1 of 4 in 0.25s"),
                            (first_loss, "source cam: connection refused; retry 2 of 4 in 0.50s")]
    end = reset + pairs[-1][0]
    assert [m for _, m in warnings[2:]] == ["source cam: the stream ended; retry 1 of 4 in 0.25s",
                                           "source cam: connection refused; retry 2 of 4 in 0.50s",
                                           "source cam: connection refused; retry 3 of 4 in 1.00s",
                                           "source cam: connection refused; retry 4 of 4 in 2.00s"]
    assert [t for t, _ in warnings[2:]] == pytest.approx([end] * 4)
    got = [f.t for f in frames]
    assert got == sorted(set(got)) and got[-1] == pytest.approx(end)
    assert source.received == 10 + FRAMES and source.dropped + len(frames) == source.received


def test_a_feed_that_never_opens_is_an_error_after_the_retries():
    warnings = []
    clock = VirtualClock()
    feed = _scripted_feed([([], "connection refused")] * 5)
    source = LiveSource("rtsp://table", feed, SourceConfig(), lambda t, m: warnings.append((t, m)), clock=clock)
    with pytest.raises(InputError) as error:
        list(source.frames())
    assert str(error.value) == ("source rtsp://table never opened after 4 retries (connection refused); "
                                "check the address, the network and the camera")
    assert clock.waits == [0.25, 0.5, 1.0, 2.0]
    assert warnings == [(0.0, f"source rtsp://table: connection refused; retry {n} of 4 in {w:.2f}s")
                        for n, w in [(1, 0.25), (2, 0.5), (3, 1.0), (4, 2.0)]]
    assert source.received == 0


def test_a_stream_url_that_never_opens_is_an_error_after_the_retries():
    warnings = []
    clock = VirtualClock()
    config = SourceConfig(stream_retries=2, stream_backoff_s=0.05, stream_open_timeout_s=1.0)
    source = open_source("http://127.0.0.1:9/live.mp4", config, on_warning=lambda t, m: warnings.append(m),
                         clock=clock)
    with pytest.raises(InputError, match="never opened after 2 retries"):
        list(source.frames())
    assert len(warnings) == 2 and "retry 1 of 2 in 0.05s" in warnings[0] and "retry 2 of 2 in 0.10s" in warnings[1]
    assert clock.waits == [0.05, 0.1]


def test_a_camera_without_capture_times_is_stamped_by_the_clock(decoded, monkeypatch):
    clock = VirtualClock(start=50.0)
    opened = []

    class Capture:  # a camera that gives no capture time: 10 frames, a frame period apart, then it stops
        def __init__(self, index):
            opened.append(index)
            self.frames = iter(decoded[:10]) if len(opened) == 1 else None

        def isOpened(self):
            return self.frames is not None

        def read(self):
            frame = next(self.frames, None)
            if frame is None:
                return False, None
            clock.sleep(1 / 30)  # the capture blocks until the camera delivers
            return True, frame.image

        def get(self, prop):
            assert prop == sources.cv2.CAP_PROP_POS_MSEC
            return 0.0

        def release(self):
            pass

    monkeypatch.setattr(sources, "cv2", SimpleNamespace(VideoCapture=Capture,
                                                        CAP_PROP_POS_MSEC=sources.cv2.CAP_PROP_POS_MSEC))
    warnings = []
    source = open_source("0", SourceConfig(stream_retries=1), on_warning=lambda t, m: warnings.append(m),
                         clock=clock)
    frames = []
    with pytest.raises(InputError, match=r"^source camera 0 was lost after 1 retries \(camera 0 cannot be opened\)"):
        for frame in source.frames():
            frames.append(frame)
    stamps = [(k + 1) / 30 for k in range(10)]
    got = [f.t for f in frames]
    assert got == sorted(got) and got[-1] == pytest.approx(stamps[-1])
    assert all(any(t == pytest.approx(s) for s in stamps) for t in got)
    assert source.received == 10 and opened == [0, 0]
    assert warnings == ["source camera 0: camera 0 stopped delivering frames; retry 1 of 1 in 0.25s"]
    assert clock.waits == pytest.approx([1 / 30] * 10 + [0.25])


def test_a_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(VideoError, match="does not exist"):
        open_source(str(tmp_path / "nope.mp4"), SourceConfig())
    with pytest.raises(VideoError, match="does not exist"):
        open_source(str(tmp_path / "nope.mp4"), SourceConfig(), live=True)
