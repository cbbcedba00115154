"""Frame sources: a video file, a camera, or a stream, all yielding `Frame(index, t, image)`.

Times are presentation times from the stream (or the capture clock for a
camera), never frame counts. A file is decoded in order, every frame. A live
source runs a reader thread that keeps only the newest frame, so a referee
slower than the feed skips frames instead of falling behind; a dropped
connection is retried with exponential back-off and reported through
`on_warning`, and a stream that never opens is an InputError once the retries
are spent. A file can be played as a live source (`--live`): the same thread
and the same newest-frame buffer, paced at the file's native rate, which is
how the live path is tested without a network.

Every wall-clock read and wait of the live path (pacing, reconnect back-off,
a camera's fallback timestamps) goes through a `Clock`, `SystemClock` unless
one is given: tests pass virtual clocks (tests/vision/clocks.py), so nothing
they check depends on how fast the machine is.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Callable, Iterator, Protocol

import av
import cv2

from rules.errors import InputError
from vision.config import SourceConfig
from vision.video_io import Frame, VideoError, probe, read_frames

Warn = Callable[[float, str], None]


class Clock(Protocol):
    """Where the live path reads the time and waits."""

    def now(self) -> float:
        """Seconds, monotonic (only differences mean anything)."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait `seconds` (>= 0)."""
        ...


class SystemClock:
    """The machine's monotonic clock: `time.monotonic` and `time.sleep`."""

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class FrameSource(Protocol):
    name: str
    live: bool
    frame_count: int  # 0 when unknown (live sources)

    def frames(self) -> Iterator[Frame]: ...


class FileSource:
    """Every frame of a video file, in order, with its presentation time."""

    live = False

    def __init__(self, path: str | Path) -> None:
        self.name = str(path)
        self.frame_count = probe(path).frame_count

    def frames(self) -> Iterator[Frame]:
        return read_frames(self.name)


def _pyav_frames(url: str, timeout_s: float) -> Iterator[tuple[float, object]]:
    """(presentation time, BGR image) from anything FFmpeg opens: a URL or a path."""
    try:
        container = av.open(url, timeout=timeout_s)
    except (av.error.FFmpegError, OSError, ValueError) as error:
        raise ConnectionError(str(error)) from None
    try:
        if not container.streams.video:
            raise ConnectionError("no video stream")
        stream = container.streams.video[0]
        time_base = stream.time_base
        if time_base is None:
            raise ConnectionError("the video stream has no time base")
        for frame in container.decode(stream):
            if frame.pts is not None:
                yield float(frame.pts * time_base), frame.to_ndarray(format="bgr24")
    except av.error.FFmpegError as error:
        raise ConnectionError(str(error)) from None
    finally:
        container.close()


def _camera_frames(index: int, clock: Clock) -> Iterator[tuple[float, object]]:
    """(capture time, BGR image); `clock` times the frames of a camera that gives no capture time."""
    capture = cv2.VideoCapture(index)
    if not capture.isOpened():
        raise ConnectionError(f"camera {index} cannot be opened")
    start = clock.now()
    try:
        while True:
            ok, image = capture.read()
            if not ok:
                raise ConnectionError(f"camera {index} stopped delivering frames")
            stamp = capture.get(cv2.CAP_PROP_POS_MSEC) / 1000.0
            yield (stamp if stamp > 0 else clock.now() - start), image
    finally:
        capture.release()


class LiveSource:
    """A reader thread over a reconnecting feed; the consumer always gets the newest frame.

    `received` counts the frames the reader put in the newest-frame slot, `dropped` those
    replaced there before the consumer took them. Pacing (`paced`) and reconnect back-off
    wait on `clock` (default `SystemClock()`).
    """

    live = True
    frame_count = 0

    def __init__(self, name: str, open_feed: Callable[[], Iterator[tuple[float, object]]], config: SourceConfig,
                 on_warning: Warn | None = None, paced: bool = False, ends: bool = False,
                 clock: Clock | None = None) -> None:
        self.name = name
        self.clock: Clock = clock if clock is not None else SystemClock()
        self._open = open_feed
        self._config = config
        self._warn = on_warning or (lambda t, message: None)
        self._paced = paced  # a file played live: release frames at their presentation times
        self._ends = ends  # the feed ending is the end of the source (a file), not a dropped connection
        self._cond = threading.Condition()
        self._newest: tuple[float, object] | None = None
        self._done = False
        self._error: InputError | None = None
        self._stop = False
        self.received = 0
        self.dropped = 0

    def frames(self) -> Iterator[Frame]:
        thread = threading.Thread(target=self._read, name=f"reader {self.name}", daemon=True)
        thread.start()
        index = 0
        try:
            while True:
                with self._cond:
                    while self._newest is None and not self._done:
                        self._cond.wait()
                    item, self._newest = self._newest, None
                    self._cond.notify_all()  # the slot is empty: wakes wait_until_taken
                    if item is None:
                        if self._error is not None:
                            raise self._error
                        return
                yield Frame(index, item[0], item[1])  # type: ignore[arg-type]
                index += 1
        finally:
            with self._cond:
                self._stop = True
                self._cond.notify_all()
            thread.join(timeout=2.0)

    def wait_until_taken(self, on_wait: Callable[[float], None] | None = None) -> None:
        """Block until the consumer has taken the frame in the newest-frame slot, or the source is stopping.

        A hook for test clocks that play a file in lockstep with its consumer (tests/vision/clocks.py,
        `LockstepClock`): called from the clock's `sleep` in the reader thread, it holds the paced reader
        back until the previous frame is taken, so no frame is ever dropped however slow the consumer.
        `on_wait(t)` is called (under the source's lock, once) when a frame at time `t` is still waiting
        to be taken, just before blocking. The live path itself never calls this; never call it from the
        thread that iterates `frames()`.
        """
        with self._cond:
            if self._newest is not None and not self._stop and on_wait is not None:
                on_wait(self._newest[0])
            while self._newest is not None and not self._stop:
                self._cond.wait()

    def _read(self) -> None:
        cfg = self._config
        clock = self.clock
        failures = 0
        offset = 0.0  # keeps times increasing across reconnections
        last_t = -1.0
        opened_once = False
        try:
            while not self._stop:
                try:
                    start_wall = clock.now()
                    first: float | None = None
                    for t, image in self._open():
                        opened_once = True
                        failures = 0
                        if first is None:
                            first = t
                            if t + offset <= last_t:
                                offset = last_t + 1e-3 - t
                        if self._paced:
                            clock.sleep(max(0.0, (t - first) - (clock.now() - start_wall)))
                        self._push(t + offset, image)
                        last_t = t + offset
                        if self._stop:
                            return
                    if self._ends:
                        return
                    raise ConnectionError("the stream ended")
                except ConnectionError as error:
                    if self._ends:  # a damaged file does not heal by reopening it
                        self._error = VideoError(f"{self.name}: {error}")
                        return
                    failures += 1
                    if failures > cfg.stream_retries:
                        what = "was lost" if opened_once else "never opened"
                        self._error = InputError(f"source {self.name} {what} after {cfg.stream_retries} retries "
                                                 f"({error}); check the address, the network and the camera")
                        return
                    wait = cfg.stream_backoff_s * 2 ** (failures - 1)
                    self._warn(max(last_t, 0.0), f"source {self.name}: {error}; retry {failures} of "
                                                 f"{cfg.stream_retries} in {wait:.2f}s")
                    clock.sleep(wait)
        finally:
            with self._cond:
                self._done = True
                self._cond.notify_all()

    def _push(self, t: float, image: object) -> None:
        with self._cond:
            if self._newest is not None:
                self.dropped += 1
            self._newest = (t, image)
            self.received += 1
            self._cond.notify_all()


def open_source(spec: str, config: SourceConfig, live: bool = False, on_warning: Warn | None = None,
                clock: Clock | None = None) -> FrameSource:
    """SOURCE by its shape: digits = camera index, scheme:// = stream URL, else a video file.

    `live` plays a file through the live path (reader thread, newest frame only) at its native rate.
    `clock` (default `SystemClock()`) is what a live source paces, backs off and stamps camera frames with;
    a plain file source reads no clock.
    """
    clock = clock if clock is not None else SystemClock()
    if spec.isdigit():
        index = int(spec)
        return LiveSource(f"camera {index}", lambda: _camera_frames(index, clock), config, on_warning, clock=clock)
    if "://" in spec:
        timeout = config.stream_open_timeout_s
        return LiveSource(spec, lambda: _pyav_frames(spec, timeout), config, on_warning, clock=clock)
    if live:
        probe(spec)  # a missing or unreadable file is a clear error now, not a retry loop
        return LiveSource(spec, lambda: _file_feed(spec), config, on_warning, paced=True, ends=True, clock=clock)
    return FileSource(spec)


def _file_feed(path: str) -> Iterator[tuple[float, object]]:
    try:
        for frame in read_frames(path):
            yield frame.t, frame.image
    except VideoError as error:
        raise ConnectionError(str(error)) from None
