"""Frame sources: presentation times, the live path and its buffer, outages, gaps, stopping, starting at a time.

No test here sleeps or asserts on timing: the live path waits on virtual clocks (tests/vision/clocks.py),
and whatever must happen in an order is made to by conditions, so the results do not depend on how fast or
how busy the machine is (the one test on the system clock checks that stopping cuts a 300 s back-off short,
with a deadlock guard only). The frames are decoded from real H.264 files, streams read by PyAV from a
loopback HTTP server.
"""

import http.server
import re
import signal
import threading
import zlib
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace

import av
import numpy as np
import pytest
from clocks import GUARD_S, GatedClock, LockstepClock, StuckClock, VirtualClock

import vision.sources as sources
from rules.errors import InputError
from vision.config import ConfigError, PipelineConfig, SourceConfig
from vision.sources import FileSource, LiveSource, SystemClock, open_source
from vision.video_io import VideoError, VideoWriter

FRAMES = 45
SAMPLE = Path(__file__).resolve().parents[2] / "sample_videos" / "starcluster" / "grouping" / "video.mp4"


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


@pytest.mark.parametrize("buffer_s, dropped, taken", [(0.0, 4, 5), (0.1, 1, 2), (0.2, 0, 1)])
def test_a_consumer_that_falls_behind_gets_the_frames_of_the_last_live_buffer_s(clip, decoded, buffer_s, dropped,
                                                                                taken):
    """Frames wait for the consumer while they are at most `live_buffer_s` older than the newest (1/30 s apart
    here): with 0 it gets the newest frame only, with 0.1 s the last 0.1 s of them, in order, never older.
    (No start-up allowance here: that is the next test.)"""
    clock = GatedClock()
    source = open_source(str(clip), SourceConfig(live_buffer_s=buffer_s, live_startup_s=0.0), live=True, clock=clock)
    frames = source.frames()
    clock.allow(1)  # the reader may release frame 0 only
    first = next(frames)
    assert (first.index, first.t, source.received, source.dropped) == (0, decoded[0].t, 1, 0)
    clock.allow(5)
    clock.wait_until_held()  # frames 1-5 released while the consumer took none; the oldest grew too old
    assert (source.received, source.dropped) == (6, dropped)
    waiting = [next(frames) for _ in range(6 - 1 - dropped)]
    assert [(f.index, f.t) for f in waiting] == [(1 + i, decoded[taken + i].t) for i in range(len(waiting))]
    assert np.array_equal(waiting[-1].image, decoded[5].image)
    clock.open()
    rest = list(frames)
    got = [f.t for f in [first, *waiting, *rest]]
    assert got == sorted(set(got)) and got[-1] == decoded[-1].t
    assert source.received == FRAMES and source.dropped + len(got) == FRAMES


@pytest.mark.parametrize("startup_s, dropped", [(1.0, 0), (0.5, 16), (0.0, 16)])
def test_until_the_consumer_first_catches_up_frames_wait_live_startup_s(clip, decoded, startup_s, dropped):
    """The referee's first frame is slow (it finds the table and builds the colour model): the 20 frames (0.67 s)
    released meanwhile wait for it when `live_startup_s` covers them; when it does not, start-up is over at the
    first frame too old and only the newest 0.1 s (4 frames) wait, as without it. Once it has caught up (taken a frame with none left waiting) the usual
    `live_buffer_s` applies: 5 frames released while it takes none drop the oldest."""
    clock = GatedClock()
    source = open_source(str(clip), SourceConfig(live_buffer_s=0.1, live_startup_s=startup_s), live=True, clock=clock)
    frames = source.frames()
    clock.allow(1)
    first = next(frames)
    clock.allow(20)
    clock.wait_until_held()  # the consumer is still busy with its first frame
    assert (source.received, source.dropped) == (21, dropped)
    backlog = [next(frames) for _ in range(20 - dropped)]
    assert [f.t for f in [first, *backlog]] == [decoded[0].t] + [f.t for f in decoded[1 + dropped:21]]
    clock.allow(5)
    clock.wait_until_held()  # caught up: now only the last 0.1 s waits
    assert source.dropped == dropped + 1
    clock.open()
    rest = list(frames)
    assert rest[0].t == decoded[22].t and source.dropped + 1 + len(backlog) + len(rest) == FRAMES


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
    frames.close()  # stopping must wake the held reader: it ends without releasing frame 4
    readers[0].join(timeout=GUARD_S)  # a deadlock guard only: the reader stops at once
    assert not readers[0].is_alive() and (source.received, source.dropped) == (4, 0)


def _scripted_feed(script):
    """open_feed for LiveSource: each call plays the next step, a list of (t, image) then an error or the end.

    The frames come at once (no clock time passes); a call past the end of the script fails the test."""
    steps = iter(script)

    def open_feed():
        frames, error = next(steps)
        yield from frames
        if error is not None:
            raise ConnectionError(error)

    return open_feed


PERIOD = 1 / 30
BACKOFF = [0.25, 0.5, 1.0, 2.0, 4.0]  # the default back-off: 0.25 s, doubling, ... (then 5 s: stream_backoff_max_s)


class Drops:
    """open_feed for LiveSource: a live stream on a virtual clock that drops and comes back.

    Each connection plays the next segment: its frames one frame period apart (the clock moves on as they
    arrive), with the segment's own times (a reconnected stream may restart its clock). After each segment but
    the last the connection breaks and the server refuses connections for `outage_s`; the last segment ends
    normally. `tries` holds the clock's time at each connection attempt.
    """

    def __init__(self, clock, segments, outage_s):
        self.clock, self.segments, self.outage_s = clock, list(segments), outage_s
        self.refused_until = float("-inf")
        self.played = 0
        self.tries = []

    def __call__(self):
        now = self.clock.now()
        self.tries.append(now)
        if now < self.refused_until:
            raise ConnectionError("connection refused")
        segment = self.segments[self.played]
        self.played += 1
        for t, image in segment:
            self.clock.sleep(PERIOD)
            yield t, image
        if self.played < len(self.segments):
            self.refused_until = self.clock.now() + self.outage_s
            raise ConnectionError("connection reset by peer")


def _two_segments(decoded):
    """Frames 0-19, then frames 20-44 with times from 0 again (a restarted stream clock)."""
    return ([(f.t, f.image) for f in decoded[:20]], [(f.t - decoded[20].t, f.image) for f in decoded[20:]])


def _warning(name, error, down, wait, limit=300.0):
    return f"source {name}: {error}; down {down:.2f}s, retry in {wait:.2f}s, trying for another {limit - down:.2f}s"


@pytest.mark.parametrize("outage_s, backoff", [(5.0, BACKOFF), (90.0, BACKOFF + [5.0] * 17)], ids=["5s", "90s"])
def test_a_feed_that_drops_and_comes_back_is_not_lost_and_the_gap_is_in_the_times(decoded, outage_s, backoff):
    clock = LockstepClock()
    feed = Drops(clock, _two_segments(decoded), outage_s)
    warnings, gaps = [], []
    source = clock.follow(LiveSource("cam", feed, SourceConfig(), lambda t, m: warnings.append((t, m)), ends=True,
                                     clock=clock, on_gap=lambda start, end: gaps.append((start, end))))
    frames = list(source.frames())  # no error: the feed came back, and ended normally
    # the reader tried again after 0.25 s, doubling, at most 5 s apart, until the server took the connection again
    assert clock.waits[20:20 + len(backoff)] == backoff
    assert feed.tries[1:] == pytest.approx([20 * PERIOD + w for w in np.cumsum(backoff)], abs=1e-9)
    back = sum(backoff)  # 7.75 s, 92.75 s: the first try at or after the outage's end got through
    assert sum(backoff[:-1]) < outage_s <= back
    # the gap: from the last frame before the outage to the first after it, as long as the clock saw it last
    # (between the arrivals of those two frames); the times after it go on from there
    last, first_after = decoded[19].t, decoded[19].t + back + PERIOD
    assert len(gaps) == 1 and gaps[0] == pytest.approx((last, first_after), abs=1e-9) and source.gaps == gaps
    expected = [f.t for f in decoded[:20]] + [first_after + f.t - decoded[20].t for f in decoded[20:]]
    assert [f.t for f in frames] == pytest.approx(expected, abs=1e-9)
    assert frames[20].t - frames[19].t >= outage_s  # the match clock runs through the outage
    assert all(np.array_equal(a.image, b.image) for a, b in zip(frames, decoded))
    assert (source.received, source.dropped) == (FRAMES, 0)
    # a warning a try, at the time of the last frame: the error, how long the feed has been down, how much longer
    downs = [0.0, *np.cumsum(backoff)[:-1]]
    errors = ["connection reset by peer"] + ["connection refused"] * (len(backoff) - 1)
    assert [t for t, _ in warnings] == [last] * len(backoff)
    assert [m for _, m in warnings] == [_warning("cam", e, d, w) for e, d, w in zip(errors, downs, backoff)]
    assert warnings[0][1] == ("source cam: connection reset by peer; down 0.00s, retry in 0.25s, "
                              "trying for another 300.00s")


def test_a_feed_that_stays_down_is_given_up_after_stream_reconnect_s_with_one_line(decoded):
    clock = LockstepClock()
    feed = Drops(clock, _two_segments(decoded), outage_s=1000.0)
    warnings, gaps = [], []
    source = clock.follow(LiveSource("cam", feed, SourceConfig(), lambda t, m: warnings.append((t, m)), clock=clock,
                                     on_gap=lambda start, end: gaps.append((start, end))))
    frames = []
    with pytest.raises(InputError) as error:
        for frame in source.frames():
            frames.append(frame)
    assert str(error.value) == ("source cam was lost: no frame for 300.0s (pipeline.source.stream_reconnect_s = 300); "
                                "last error: connection refused; check the address, the network and the camera")
    # tries 5 s apart once the back-off is at its cap, the last one when the 300 s are up, then no more
    backoff = clock.waits[20:]
    assert backoff == pytest.approx(BACKOFF + [5.0] * 58 + [2.25], abs=1e-9)
    assert len(feed.tries) == 1 + len(backoff) and len(warnings) == len(backoff)
    assert warnings[-1][1] == _warning("cam", "connection refused", 297.75, 2.25)
    assert [f.t for f in frames] == [f.t for f in decoded[:20]] and gaps == [] and source.gaps == []


def test_back_off_starts_over_once_frames_flow_and_a_feed_that_ends_is_an_outage_unless_it_ends_the_source(decoded):
    pairs = [(f.t, f.image) for f in decoded]
    refused = ([], "connection refused")
    feed = _scripted_feed([(pairs[:10], "connection reset"), refused, (pairs, None)] + [refused] * 8)
    warnings = []
    clock = VirtualClock()
    source = LiveSource("cam", feed, SourceConfig(stream_reconnect_s=20), lambda t, m: warnings.append((t, m)),
                        clock=clock)
    frames = []
    with pytest.raises(InputError) as error:
        for frame in source.frames():
            frames.append(frame)
    assert str(error.value) == ("source cam was lost: no frame for 20.0s (pipeline.source.stream_reconnect_s = 20); "
                                "last error: connection refused; check the address, the network and the camera")
    # 0.25 s, 0.5 s to come back; the feed's normal end (ends=False: like a camera) is an outage, whose back-off
    # starts over from 0.25 s, capped at 5 s, the last wait cut to end at 20 s without a frame
    assert clock.waits == [0.25, 0.5, 0.25, 0.5, 1.0, 2.0, 4.0, 5.0, 5.0, 2.25]
    t9 = pairs[9][0]
    assert source.gaps == [(t9, t9 + 0.75)]  # the frames took no clock time: the gap is the back-off
    end = t9 + 0.75 + pairs[-1][0]
    assert warnings[:2] == [(t9, _warning("cam", "connection reset", 0.0, 0.25, 20)),
                            (t9, _warning("cam", "connection refused", 0.25, 0.5, 20))]
    assert warnings[2] == (pytest.approx(end), _warning("cam", "the stream ended", 0.0, 0.25, 20))
    assert len(warnings) == 10
    got = [f.t for f in frames]
    assert got == sorted(set(got)) and got[-1] == pytest.approx(end)
    assert source.received == 10 + FRAMES and source.dropped + len(frames) == source.received

    # ends=True (a stream URL): the feed's normal end is the end of the source, an error still an outage
    feed = _scripted_feed([(pairs[:10], "connection reset"), (pairs, None)])
    source = LiveSource("cam", feed, SourceConfig(), ends=True, clock=VirtualClock())
    got = [f.t for f in source.frames()]  # no error
    assert source.gaps == [(t9, t9 + 0.25)] and got[-1] == pytest.approx(t9 + 0.25 + pairs[-1][0])
    assert source.received == 10 + FRAMES


def test_a_feed_that_never_opens_is_an_error_after_stream_reconnect_s():
    warnings = []
    clock = VirtualClock()
    feed = _scripted_feed([([], "connection refused")] * 9)
    source = LiveSource("rtsp://table", feed, SourceConfig(stream_reconnect_s=20),
                        lambda t, m: warnings.append((t, m)), clock=clock)
    with pytest.raises(InputError) as error:
        list(source.frames())
    assert str(error.value) == ("source rtsp://table never opened in 20.0s of trying "
                                "(pipeline.source.stream_reconnect_s = 20); last error: connection refused; "
                                "check the address, the network and the camera")
    assert clock.waits == [0.25, 0.5, 1.0, 2.0, 4.0, 5.0, 5.0, 2.25]
    downs = [0.0, *np.cumsum(clock.waits)[:-1]]
    assert warnings == [(0.0, _warning("rtsp://table", "connection refused", d, w, 20))
                        for d, w in zip(downs, clock.waits)]
    assert source.received == 0


def test_a_stream_url_that_never_opens_is_an_error_after_stream_reconnect_s():
    warnings = []
    clock = VirtualClock()
    config = SourceConfig(stream_reconnect_s=1.0, stream_backoff_s=0.05, stream_backoff_max_s=0.2,
                          stream_open_timeout_s=1.0)
    source = open_source("http://127.0.0.1:9/live.mp4", config, on_warning=lambda t, m: warnings.append(m),
                         clock=clock)
    with pytest.raises(InputError, match=r"^source http://127.0.0.1:9/live.mp4 never opened in 1.0s of trying"):
        list(source.frames())
    assert clock.waits == pytest.approx([0.05, 0.1, 0.2, 0.2, 0.2, 0.2, 0.05], abs=1e-9)
    assert len(warnings) == 7 and warnings[0].endswith("down 0.00s, retry in 0.05s, trying for another 1.00s")


def test_a_camera_that_stops_delivering_is_an_outage_and_its_frames_are_stamped_by_the_clock(decoded, monkeypatch):
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
    source = open_source("0", SourceConfig(stream_reconnect_s=1.0), on_warning=lambda t, m: warnings.append(m),
                         clock=clock)
    frames = []
    with pytest.raises(InputError) as error:
        for frame in source.frames():
            frames.append(frame)
    assert str(error.value) == ("source camera 0 was lost: no frame for 1.0s (pipeline.source.stream_reconnect_s = 1); "
                                "last error: camera 0 cannot be opened; check the address, the network and the camera")
    stamps = [(k + 1) / 30 for k in range(10)]
    got = [f.t for f in frames]
    assert got == sorted(got) and got[-1] == pytest.approx(stamps[-1])
    assert all(any(t == pytest.approx(s) for s in stamps) for t in got)
    assert source.received == 10 and opened == [0, 0, 0, 0]
    assert warnings == [_warning("camera 0", "camera 0 stopped delivering frames", 0.0, 0.25, 1.0),
                        _warning("camera 0", "camera 0 cannot be opened", 0.25, 0.5, 1.0),
                        _warning("camera 0", "camera 0 cannot be opened", 0.75, 0.25, 1.0)]
    assert clock.waits == pytest.approx([1 / 30] * 10 + [0.25, 0.5, 0.25])


# ---------------------------------------------------------------- streams over a loopback HTTP server


class _Files(http.server.ThreadingHTTPServer):
    """A loopback HTTP server of some files' bytes, with byte ranges (FFmpeg reads an MP4 over HTTP by them).

    A name in `cut` has its next response broken off half-way (the connection closes early): a network drop."""

    daemon_threads = True

    def __init__(self, files):
        super().__init__(("127.0.0.1", 0), _FileHandler)
        self.files = files
        self.cut = set()

    def url(self, name):
        return f"http://127.0.0.1:{self.server_address[1]}/{name}"


class _FileHandler(http.server.BaseHTTPRequestHandler):
    server: _Files

    def log_message(self, *args):
        pass

    def do_GET(self):
        name = self.path.lstrip("/")
        data = self.server.files.get(name)
        if data is None:
            self.send_error(404)
            return
        match = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        start = int(match[1]) if match else 0
        end = int(match[2]) if match and match[2] else len(data) - 1
        body = data[start:end + 1]
        self.send_response(206 if match else 200)
        self.send_header("Content-Type", "video/mp4")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(len(body)))
        if match:
            self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        self.end_headers()
        if name in self.server.cut:
            self.server.cut.discard(name)
            body = body[:len(body) // 2]
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass


def _write_gop_clip(path, frames, gop):
    """H.264 MP4 at 30 fps, a keyframe every `gop` frames, B-frames, the index first (streamable): a noisy
    still background with a red square moving across it, so most frames are predicted from others."""
    rng = np.random.default_rng(7)
    background = rng.integers(0, 256, (120, 160, 3), np.uint8)
    with av.open(str(path), "w", options={"movflags": "+faststart"}) as container:
        stream = container.add_stream("libx264", rate=30)
        stream.width, stream.height, stream.pix_fmt = 160, 120, "yuv420p"
        stream.options = {"crf": "23", "preset": "veryfast",
                          "x264-params": f"keyint={gop}:min-keyint={gop}:scenecut=0:bframes=2"}
        stream.codec_context.time_base = Fraction(1, 30)
        for i in range(frames):
            image = background.copy()
            x = (i * 3) % 140
            image[40:60, x:x + 20] = (0, 0, 255)
            frame = av.VideoFrame.from_ndarray(image, format="bgr24")
            frame.pts = i
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)


@pytest.fixture(scope="module")
def gop_clip(tmp_path_factory):
    path = tmp_path_factory.mktemp("gop") / "gop.mp4"
    _write_gop_clip(path, 90, 12)
    return path


@pytest.fixture(scope="module")
def gop_frames(gop_clip):
    frames = list(FileSource(gop_clip).frames())
    assert len(frames) == 90
    return frames


def _digest(image):
    return zlib.crc32(np.ascontiguousarray(image).data)


@pytest.fixture(scope="module")
def sample_decoded():
    """(t, digest of the pixels) of every frame of a committed sample (640x360, B-frames, index at the end)."""
    return [(f.t, _digest(f.image)) for f in FileSource(SAMPLE).frames()]


@pytest.fixture
def server(clip, gop_clip):
    files = _Files({"clip.mp4": clip.read_bytes(), "gop.mp4": gop_clip.read_bytes()})
    thread = threading.Thread(target=files.serve_forever, args=(0.05,), name="test http server", daemon=True)
    thread.start()
    yield files
    files.shutdown()
    files.server_close()
    thread.join(timeout=GUARD_S)


def test_a_stream_url_that_ends_normally_is_the_end_of_the_source(server, decoded):
    """The clip as VideoWriter writes it (index at the end): FFmpeg reads it over HTTP by byte ranges."""
    clock = VirtualClock()
    warnings, gaps = [], []
    source = open_source(server.url("clip.mp4"), SourceConfig(), on_warning=lambda t, m: warnings.append(m),
                         clock=clock, on_gap=lambda start, end: gaps.append((start, end)))
    got = [(f.t, _digest(f.image)) for f in source.frames()]  # returns, no error: the match ends cleanly
    # the newest frame each time (the consumer may skip some), the stream's own times and pixels, the last one too
    truth = [(f.t, _digest(f.image)) for f in decoded]
    assert got[-1] == truth[-1] and set(got) <= set(truth) and got == sorted(set(got))
    assert source.received == FRAMES and source.dropped + len(got) == source.received
    assert warnings == [] and gaps == [] and source.gaps == [] and clock.waits == []


def test_a_stream_url_set_to_reconnect_at_its_end_comes_back(server, gop_frames):
    url = server.url("gop.mp4")
    clock = VirtualClock()
    warnings = []
    source = open_source(url, SourceConfig(stream_reconnect_at_end=True),
                         on_warning=lambda t, m: warnings.append((t, m)), clock=clock,
                         on_gap=lambda start, end: source.stop())  # stopped once it is back
    got = [f.t for f in source.frames()]  # stop(): no error
    last = gop_frames[-1].t
    assert warnings == [(last, _warning(url, "the stream ended", 0.0, 0.25))]
    assert source.gaps == [(last, last + 0.25)] and clock.waits == [0.25]
    assert source.received == len(gop_frames)  # stopped in on_gap: the first frame after the gap was not given out
    assert set(got) <= {f.t for f in gop_frames}


def test_a_stream_url_broken_off_mid_way_is_an_outage_it_comes_back_from(server, gop_frames):
    url = server.url("gop.mp4")
    server.cut.add("gop.mp4")  # the first connection closes half-way through the file
    clock = VirtualClock()
    warnings = []
    source = open_source(url, SourceConfig(), on_warning=lambda t, m: warnings.append((t, m)), clock=clock)
    frames = list(source.frames())  # no error: reconnected, then the stream ended normally
    times = [f.t for f in gop_frames]
    assert len(source.gaps) == 1
    start, end = source.gaps[0]
    cut = times.index(start)  # the last frame before the drop is one of the file's
    assert 0 < cut < len(times) - 1 and end == pytest.approx(start + 0.25)  # the gap: the back-off, no other time
    assert len(warnings) == 1 and warnings[0][0] == start
    assert warnings[0][1].startswith(f"source {url}: ") and warnings[0][1].endswith(
        "; down 0.00s, retry in 0.25s, trying for another 300.00s")
    assert source.received == cut + 1 + len(times)
    by_time = {f.t: f.image for f in gop_frames[:cut + 1]}
    by_time.update({end + f.t: f.image for f in gop_frames})  # the second connection plays from the start again
    got = [f.t for f in frames]
    assert got == sorted(set(got)) and got[-1] == pytest.approx(end + times[-1])
    for frame in frames:
        t = min(by_time, key=lambda s: abs(s - frame.t))
        assert t == pytest.approx(frame.t, abs=1e-9) and np.array_equal(frame.image, by_time[t])


# ---------------------------------------------------------------- stopping


def _reader_of(name):
    return [t for t in threading.enumerate() if t.name == f"reader {name}"]


def test_stop_ends_the_frames_cleanly_during_back_off(decoded):
    clock = StuckClock()  # every wait lasts until the source is stopped
    feed = _scripted_feed([([(f.t, f.image) for f in decoded[:10]], "connection reset")])
    warnings = []
    source = LiveSource("cam stopped", feed, SourceConfig(), lambda t, m: warnings.append(m), clock=clock)

    def stop_when_backing_off():
        clock.wait_until_held(1)
        source.stop()

    stopper = threading.Thread(target=stop_when_backing_off)
    stopper.start()
    frames = list(source.frames())  # returns, no error
    stopper.join(timeout=GUARD_S)
    assert clock.held == 1 and clock.waits == [0.25] and len(warnings) == 1
    assert {f.t for f in frames} <= {f.t for f in decoded[:10]} and source.gaps == [] and source.received == 10
    for reader in _reader_of("cam stopped"):
        reader.join(timeout=GUARD_S)
        assert not reader.is_alive()


def test_stop_cuts_a_back_off_on_the_system_clock_short():
    """The one test on the real clock: without the wake the reader would sleep 300 s; the join is a guard only."""
    warned = threading.Event()
    feed = _scripted_feed([([], "connection refused")] * 2)
    config = SourceConfig(stream_backoff_s=1000.0, stream_backoff_max_s=1000.0)  # the wait: up to 300 s
    source = LiveSource("cam on the system clock", feed, config, lambda t, m: warned.set())
    assert isinstance(source.clock, SystemClock)

    def stop_when_warned():
        warned.wait(timeout=GUARD_S)
        source.stop()

    threading.Thread(target=stop_when_warned).start()
    assert list(source.frames()) == []
    for reader in _reader_of("cam on the system clock"):
        reader.join(timeout=GUARD_S)
        assert not reader.is_alive()


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs signal.pthread_kill (POSIX)")
def test_stop_from_a_signal_handler_ends_frames_waiting_through_an_outage(decoded):
    """Ctrl-C / SIGTERM: the handler runs in the main thread, which is blocked in frames() waiting for a frame."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers run in the main thread only")
    clock = StuckClock()
    feed = _scripted_feed([([(f.t, f.image) for f in decoded[:10]], "connection reset")])
    source = LiveSource("cam signalled", feed, SourceConfig(), clock=clock)
    main = threading.main_thread().ident

    def signal_when_backing_off():
        clock.wait_until_held(1)
        signal.pthread_kill(main, signal.SIGUSR1)

    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: source.stop())
    try:
        threading.Thread(target=signal_when_backing_off).start()
        frames = list(source.frames())  # returns, no error
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert {f.t for f in frames} <= {f.t for f in decoded[:10]} and clock.held == 1
    for reader in _reader_of("cam signalled"):
        reader.join(timeout=GUARD_S)
        assert not reader.is_alive()


def test_stop_from_the_consumer_and_before_the_frames(clip, decoded):
    clock = LockstepClock()
    live = clock.follow(open_source(str(clip), SourceConfig(), live=True, clock=clock))
    for source in (live, FileSource(clip)):
        got = []
        for frame in source.frames():
            got.append(frame)
            if len(got) == 5:
                source.stop()
        assert [f.t for f in got] == [f.t for f in decoded[:5]]
    early = open_source(str(clip), SourceConfig(), live=True, clock=VirtualClock())
    early.stop()
    assert list(early.frames()) == [] and early.received == 0


def test_a_file_is_decoded_ahead_on_a_thread_that_stops_with_its_consumer(clip, decoded):
    """FileSource decodes on a reader thread (`_prefetched`): the same frames as decoding in the loop, and the
    thread is gone once the consumer closes the frames early."""
    direct = list(sources.read_frames(clip))
    assert [(f.t, f.index) for f in decoded] == [(f.t, f.index) for f in direct]
    assert all(np.array_equal(a.image, b.image) for a, b in zip(decoded, direct))
    frames = FileSource(clip).frames()
    first = [next(frames) for _ in range(3)]
    assert [f.t for f in first] == [f.t for f in decoded[:3]]
    assert any(t.name == "decode" for t in threading.enumerate())  # reading ahead meanwhile
    frames.close()  # type: ignore[attr-defined]
    assert not any(t.name == "decode" for t in threading.enumerate())


def test_an_error_while_decoding_ahead_comes_after_the_good_frames(clip, decoded):
    def breaking():
        yield from decoded[:7]
        raise VideoError("video clip.mp4 is damaged after 7 frames (test); re-export or re-record it")

    got = []
    with pytest.raises(VideoError, match="damaged after 7 frames"):
        for frame in sources._prefetched(breaking, 2):
            got.append(frame)
    assert [f.t for f in got] == [f.t for f in decoded[:7]]
    assert not any(t.name == "decode" for t in threading.enumerate())


# ---------------------------------------------------------------- starting a file at a time


@pytest.fixture
def seeks(monkeypatch):
    """The start_s of every read_frames the sources open."""
    calls = []
    read_frames = sources.read_frames

    def recording(path, start_s=0.0):
        calls.append(start_s)
        return read_frames(path, start_s)

    monkeypatch.setattr(sources, "read_frames", recording)
    return calls


@pytest.mark.parametrize("k", [1, 11, 12, 13, 50, 89])  # in the first GOP, before a keyframe, on it, after it, the last
def test_a_file_started_at_a_frame_time_gives_exactly_the_tail_of_the_full_decode(gop_clip, gop_frames, seeks, k):
    start = gop_frames[k].t
    frames = list(open_source(str(gop_clip), SourceConfig(), start_t=start).frames())
    assert [f.t for f in frames] == [f.t for f in gop_frames[k:]] and [f.index for f in frames] == list(
        range(90 - k))
    assert all(np.array_equal(a.image, b.image) for a, b in zip(frames, gop_frames[k:]))
    assert seeks == [start]  # found by seeking to the keyframe before it, not by decoding from the start


def test_a_start_between_frames_or_outside_the_file(gop_clip, gop_frames, seeks):
    between = (gop_frames[30].t + gop_frames[31].t) / 2
    frames = list(FileSource(gop_clip, start_t=between).frames())
    assert [f.t for f in frames] == [f.t for f in gop_frames[31:]]
    assert all(np.array_equal(a.image, b.image) for a, b in zip(frames, gop_frames[31:]))
    # the seek to `between` decoded from frame 31 on: not trusted (a frame between might be missing); 1 s earlier was
    assert seeks == [between, between - 1.0]
    assert [f.t for f in FileSource(gop_clip, start_t=0.0).frames()] == [f.t for f in gop_frames]
    assert [f.t for f in FileSource(gop_clip, start_t=-5.0).frames()] == [f.t for f in gop_frames]
    assert list(FileSource(gop_clip, start_t=gop_frames[-1].t + 1.0).frames()) == []
    with pytest.raises(ValueError, match="start_t"):
        FileSource(gop_clip, start_t=float("nan"))


def test_a_sample_started_in_its_second_gop_gives_exactly_the_tail(sample_decoded, seeks):
    start = sample_decoded[300][0]  # 10 s; keyframes at 0 and 8.33 s
    frames = [(f.t, _digest(f.image)) for f in FileSource(SAMPLE, start_t=start).frames()]
    assert frames == sample_decoded[300:] and seeks == [start]


def test_a_file_played_live_from_a_time_is_the_tail_paced_from_there(gop_clip, gop_frames):
    clock = LockstepClock()
    source = clock.follow(open_source(str(gop_clip), SourceConfig(), live=True, clock=clock,
                                      start_t=gop_frames[50].t))
    frames = list(source.frames())
    tail = gop_frames[50:]
    assert [f.t for f in frames] == [f.t for f in tail] and source.dropped == 0
    assert all(np.array_equal(a.image, b.image) for a, b in zip(frames, tail))
    assert clock.waits[0] == 0.0 and clock.waits[1:] == pytest.approx(np.diff([f.t for f in tail]).tolist(), abs=1e-9)


def test_only_a_file_can_start_at_a_time():
    for spec in ("0", "rtsp://table/live"):
        with pytest.raises(InputError, match="only a video file can"):
            open_source(spec, SourceConfig(), start_t=10.0)


# ---------------------------------------------------------------- settings


def test_the_source_settings_and_their_defaults():
    config = SourceConfig()
    assert (config.stream_reconnect_s, config.stream_backoff_s, config.stream_backoff_max_s,
            config.stream_open_timeout_s, config.stream_reconnect_at_end) == (300.0, 0.25, 5.0, 5.0, False)


@pytest.mark.parametrize("data, message", [
    ({"stream_backoff_s": 0}, "'source.stream_backoff_s' must be > 0, got 0"),
    ({"stream_backoff_s": 10}, "'source.stream_backoff_max_s' must be >= 'source.stream_backoff_s' (10), got 5.0"),
    ({"stream_backoff_max_s": -1.0}, "'source.stream_backoff_max_s' must be a number >= 0"),
    ({"stream_reconnect_s": -1}, "'source.stream_reconnect_s' must be a number >= 0"),
    ({"stream_reconnect_s": "5 min"}, "'pipeline.source.stream_reconnect_s' must be a number"),
    ({"stream_reconnect_at_end": "yes"}, "'pipeline.source.stream_reconnect_at_end' must be true or false"),
    ({"stream_retries": 4}, "unknown setting 'pipeline.source.stream_retries'"),
])
def test_a_bad_source_setting_is_one_line_naming_it(data, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        PipelineConfig.from_dict({"source": data})


def test_a_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(VideoError, match="does not exist"):
        open_source(str(tmp_path / "nope.mp4"), SourceConfig())
    with pytest.raises(VideoError, match="does not exist"):
        open_source(str(tmp_path / "nope.mp4"), SourceConfig(), live=True)


def test_a_file_source_prepares_each_frame_on_its_decode_thread(clip, decoded):
    """`FileSource.prepare` (the frame loop's halvings, `VisionPipeline.prepare`) runs on the decode thread, ahead of
    the consumer, once a frame, and the consumer gets the frames it made, in order."""
    source = FileSource(clip)
    threads = []

    def prepare(frame):
        threads.append(threading.current_thread().name)
        return replace(frame, index=frame.index + 1000)

    source.prepare = prepare
    got = list(source.frames())
    assert [f.index for f in got] == [f.index + 1000 for f in decoded] and threads == ["decode"] * len(decoded)
    assert all(np.array_equal(a.image, b.image) for a, b in zip(got, decoded))
