"""Frame sources: a video file, a camera, or a stream, all yielding `Frame(index, t, image)`.

Times are presentation times from the stream (or the capture clock for a
camera), never frame counts. A file is decoded in order, every frame, from
`start_t` on when given (a run resumed: exactly the frames a full decode gives
from there, found by seeking). A live source runs a reader thread that keeps
the frames the referee has not taken yet while they are at most
`live_buffer_s` older than the newest, so a referee slower than the feed skips
frames instead of falling behind, and a stall of a frame or two (reading a
settled table) skips none. Until the referee first catches up with the feed,
frames wait up to `live_startup_s` instead: its first frames find the table
and build the colour model (about 0.6 s), which would otherwise drop the
frames of the match's first half second. A dropped connection (an error reading, a camera that stops
delivering) is an outage: it is retried with exponential back-off, each try
reported through `on_warning`, until no frame has come for
`stream_reconnect_s`; only then is it an InputError (as is a stream that never
opens in that time). A stream URL that ends normally is the end of the source
(unless `stream_reconnect_at_end`). Across an outage the times go on by the
wall-clock time it lasted, so round clocks see it, and each outage the feed
came back from is reported to `on_gap` (and kept in `LiveSource.gaps`).
`stop()` ends a source cleanly from another thread or a signal handler. A file
is decoded on a thread of its own, `PREFETCH_FRAMES` ahead of the referee
(decoding and refereeing share the two cores instead of taking turns). A file
can be played as a live source (`--live`): the same thread and the same
buffer, paced at the file's native rate, which is how the live
path is tested without a network.

Every wall-clock read and wait of the live path (pacing, reconnect back-off,
a camera's fallback timestamps) goes through a `Clock`, `SystemClock` unless
one is given: tests pass virtual clocks (tests/vision/clocks.py), so nothing
they check depends on how fast the machine is.
"""

from __future__ import annotations

import itertools
import math
import queue
import threading
from collections import deque
import time
from contextlib import closing
from pathlib import Path
from typing import Callable, Generator, Iterator, Protocol

import av
import cv2

from rules.errors import InputError
from vision.config import SourceConfig
from vision.video_io import Frame, VideoError, bgr, probe, read_frames

Warn = Callable[[float, str], None]
OnGap = Callable[[float, float], None]

_SIGNAL_CHECK_S = 0.2  # the longest the consumer blocks without running Python: see LiveSource.frames
PREFETCH_FRAMES = 4  # a file's frames decoded ahead of the referee (each 2.7 MB at 1280x720)


class Clock(Protocol):
    """Where the live path reads the time and waits."""

    def now(self) -> float:
        """Seconds, monotonic (only differences mean anything)."""
        ...

    def sleep(self, seconds: float, wake: threading.Event | None = None) -> None:
        """Wait `seconds` (>= 0), or less: return as soon as `wake`, when given, is set (the source is stopping).

        A clock that cannot be woken may wait the whole time; stopping a source then waits for the wait."""
        ...


class SystemClock:
    """The machine's monotonic clock: `time.monotonic`, and `time.sleep` or a wait on the wake event."""

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float, wake: threading.Event | None = None) -> None:
        if wake is None:
            time.sleep(seconds)
        else:
            wake.wait(seconds)


class FrameSource(Protocol):
    name: str
    live: bool
    frame_count: int  # 0 when unknown (live sources)

    def frames(self) -> Iterator[Frame]: ...


class FileSource:
    """Every frame of a video file, in order, with its presentation time.

    With `start_t`, only the frames at `start_t` or later: exactly those a full decode gives there (same times,
    same pixels), numbered from 0, found by seeking rather than decoding what comes before (`_file_frames`).
    `frame_count` is the whole file's, as the container reports it. `stop()` (any thread) ends `frames()`
    before its next frame.
    """

    live = False

    def __init__(self, path: str | Path, start_t: float | None = None) -> None:
        self.name = str(path)
        self.frame_count = probe(path).frame_count
        self.start_t = _checked_start(start_t)
        self._stopped = False
        # work done on each frame on the decode thread, ahead of the consumer (the frame loop's halvings:
        # `VisionPipeline.prepare`); it must give the frame the consumer would have made of it. A live source's
        # frames come at the camera's pace, and the frame loop has the time to do this itself.
        self.prepare: Callable[[Frame], Frame] | None = None

    def frames(self) -> Iterator[Frame]:
        def made() -> Generator[Frame, None, None]:
            with closing(_file_frames(self.name, self.start_t)) as decoded:
                for frame in decoded:
                    yield frame if self.prepare is None else self.prepare(frame)

        with closing(_prefetched(made, PREFETCH_FRAMES)) as frames:
            for frame in frames:
                if self._stopped:
                    return
                yield frame

    def stop(self) -> None:
        self._stopped = True


_END = object()  # the reader thread's last item when its frames ran out


def _prefetched(frames: Callable[[], Generator[Frame, None, None]], depth: int) -> Generator[Frame, None, None]:
    """The frames of `frames()`, made on a reader thread up to `depth` ahead of the consumer, in order; an
    error it raises is raised here after the frames before it. Closing this generator stops the thread."""
    slots: queue.Queue[object] = queue.Queue(depth)
    done = threading.Event()

    def offer(item: object) -> bool:
        while not done.is_set():
            try:
                slots.put(item, timeout=_SIGNAL_CHECK_S)
                return True
            except queue.Full:
                continue
        return False

    def read() -> None:
        try:
            with closing(frames()) as made:
                for frame in made:
                    if not offer(frame):
                        return
            offer(_END)
        except BaseException as error:  # handed to the consumer, which raises it
            offer(error)

    thread = threading.Thread(target=read, name="decode", daemon=True)
    thread.start()
    try:
        while True:
            try:
                item = slots.get(timeout=_SIGNAL_CHECK_S)  # a timeout lets a signal handler run meanwhile
            except queue.Empty:
                continue
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            assert isinstance(item, Frame)
            yield item
    finally:
        done.set()
        thread.join()


def _checked_start(start_t: float | None) -> float | None:
    if start_t is not None and not math.isfinite(start_t):
        raise ValueError(f"start_t must be a finite time in seconds, got {start_t!r}")
    return start_t


def _file_frames(path: str, start_t: float | None) -> Generator[Frame, None, None]:
    """The frames of a video file with t >= start_t, numbered from 0: the tail of a full decode, exactly.

    Seeks to the keyframe before `start_t` instead of decoding everything before it. The seek is trusted only
    when decoding from it reaches back to `start_t` (its first frame is not later): a seek that lands late (a
    start_t between frames, an index that points past it) is tried again 1 s earlier, then 2 s, 4 s, ..., down
    to decoding from the start. Decoding from a keyframe gives the frames a full decode gives from there (a
    closed GOP: what x264, VideoWriter and cameras write).
    """
    if start_t is None or start_t <= 0:
        yield from read_frames(path)
        return
    back = 0.0
    while True:
        seek = start_t - back
        with closing(read_frames(path, seek) if seek > 0 else read_frames(path)) as frames:
            first = next(frames, None)
            if seek <= 0 or (first is not None and first.t <= start_t):
                index = 0
                for frame in itertools.chain([] if first is None else [first], frames):
                    if frame.t >= start_t:
                        yield Frame(index, frame.t, frame.image)
                        index += 1
                return
        back = max(1.0, 2 * back)


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
                yield float(frame.pts * time_base), bgr(frame)
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
    """A reader thread over a reconnecting feed; the consumer gets the frames in order while they are at most
    `live_buffer_s` older than the newest, never an older one. At the start, until the consumer first takes
    a frame after its first with none left waiting, they wait up to `live_startup_s` instead (the first
    frames are slow: models are built); a start-up that outgrows even that ends it.

    `received` counts the frames the reader released, `dropped` those that grew too old (or, with
    `live_buffer_s` 0, were replaced by a newer one) before the consumer took them.

    An error reading the feed (`open_feed`'s iterator raising ConnectionError) is an outage: the
    reader opens the feed again, waiting `stream_backoff_s` first, doubling each try up to
    `stream_backoff_max_s`, each try a warning (`on_warning(t of the last frame, message)`), until no
    frame has come for `stream_reconnect_s` of `clock` time: then `frames()` raises a one-line
    InputError. With `reconnects=False` (a file played live: reopening does not heal a damaged file)
    the error ends the source at once, as a VideoError. A feed that ends without an error is the
    end of the source if `ends`, else an outage like any other.

    Times across an outage go on from the last frame's time by the `clock` time that passed between
    that frame's arrival and the arrival of the first frame after it, whatever times the feed itself
    gives then. Each outage the feed came back from is appended to `gaps` as (t of the last frame
    before it, t of the first frame after it), and `on_gap(start_t, end_t)` is called with it, from
    the reader thread, before that first frame is given out. An outage the source gave up on, or was
    stopped in, is no gap.

    `stop()` ends the source cleanly from any thread or a signal handler. Pacing (`paced`), back-off
    and the reader's other waits go through `clock` (default `SystemClock()`), woken early when the
    source stops.
    """

    live = True
    frame_count = 0

    def __init__(self, name: str, open_feed: Callable[[], Iterator[tuple[float, object]]], config: SourceConfig,
                 on_warning: Warn | None = None, paced: bool = False, ends: bool = False,
                 clock: Clock | None = None, on_gap: OnGap | None = None, reconnects: bool = True) -> None:
        self.name = name
        self.clock: Clock = clock if clock is not None else SystemClock()
        self._open = open_feed
        self._config = config
        self._warn = on_warning or (lambda t, message: None)
        self._on_gap = on_gap or (lambda start_t, end_t: None)
        self._paced = paced  # a file played live: release frames at their presentation times
        self._ends = ends  # the feed ending without an error is the end of the source, not a dropped connection
        self._reconnects = reconnects  # an error reading the feed is an outage to reconnect through, not the end
        self._cond = threading.Condition()
        self._waiting: deque[tuple[float, object]] = deque()  # frames released, not yet taken, oldest first
        self._done = False
        self._error: Exception | None = None
        self._stop = False  # the reader is to stop (the consumer closed frames(), or stop())
        self._stopped = False  # stop() was called: frames() ends, without an error
        self._wake = threading.Event()  # set when the source stops: cuts the reader's clock waits short
        self.gaps: list[tuple[float, float]] = []
        self.received = 0
        self.dropped = 0
        self._starting = True  # the consumer has not caught up with the feed yet: frames wait live_startup_s
        self.last_arrival: float | None = None  # `clock` time the reader last got a frame (a console's "lost")

    def frames(self) -> Iterator[Frame]:
        """The oldest frame waiting each time the consumer asks (frames wait while they are at most
        `live_buffer_s` older than the newest; 0: only the newest waits), numbered from 0, until the feed ends,
        the source is stopped (both: a normal return) or lost (the reader's error, raised here)."""
        if self._stopped:
            return
        thread = threading.Thread(target=self._read, name=f"reader {self.name}", daemon=True)
        thread.start()
        index = 0
        try:
            while True:
                with self._cond:
                    while not self._waiting and not self._done and not self._stopped:
                        # Woken by the reader or stop(); the timeout only lets Python run a signal handler (Ctrl-C
                        # calling stop()) whose signal came just before this thread blocked, which would wait for the
                        # next frame otherwise: minutes, in an outage. Nothing is decided by it.
                        self._cond.wait(_SIGNAL_CHECK_S)
                    if self._stopped:
                        return
                    item = self._waiting.popleft() if self._waiting else None
                    if index > 0 and not self._waiting:
                        self._starting = False  # caught up
                    self._cond.notify_all()  # a frame was taken: wakes wait_until_taken
                    if item is None:
                        if self._error is not None:
                            raise self._error
                        return
                yield Frame(index, item[0], item[1])  # type: ignore[arg-type]
                index += 1
        finally:
            self._halt()
            thread.join(timeout=2.0)  # a reader blocked in a network read ends when the read times out

    def stop(self) -> None:
        """End the source, from any thread or a signal handler (Ctrl-C, SIGTERM).

        `frames()` then returns, without an error, at its next step: at once if it is waiting for a frame
        (an outage included); a frame waiting in the slot is not given out. The reader stops too, woken from
        any clock wait (pacing, back-off); one blocked in a read of the feed stops when the read times out
        (`stream_open_timeout_s` for a stream), and `frames()` waits for it no longer than 2 s. Called before
        `frames()`, that gives nothing. Here stop() only sets a flag and starts a short-lived thread that
        does the waking: so it takes no lock that the thread it interrupts may hold. (A signal that comes just
        as the consumer blocks in `frames()` has its handler run within 0.2 s: CPython runs handlers only
        between bytecodes, and a blocking wait it had not yet entered is not interrupted.)
        """
        self._stopped = True
        threading.Thread(target=self._halt, name=f"stop {self.name}", daemon=True).start()

    def _halt(self) -> None:
        """Tell the reader to stop, and wake it and the consumer."""
        self._wake.set()
        with self._cond:
            self._stop = True
            self._cond.notify_all()

    @property
    def _stopping(self) -> bool:
        return self._stop or self._stopped

    def wait_until_taken(self, on_wait: Callable[[float], None] | None = None) -> None:
        """Block until the consumer has taken every frame waiting, or the source is stopping.

        A hook for test clocks that play a file in lockstep with its consumer (tests/vision/clocks.py,
        `LockstepClock`): called from the clock's `sleep` in the reader thread, it holds the paced reader
        back until the previous frame is taken, so no frame is ever dropped however slow the consumer.
        `on_wait(t)` is called (under the source's lock, once) when a frame at time `t` is still waiting
        to be taken, just before blocking. The live path itself never calls this; never call it from the
        thread that iterates `frames()`.
        """
        with self._cond:
            if self._waiting and not self._stop and on_wait is not None:
                on_wait(self._waiting[-1][0])
            while self._waiting and not self._stop:
                self._cond.wait()

    def _read(self) -> None:
        cfg = self._config
        clock = self.clock
        offset = 0.0  # added to the feed's times: they go on across outages, the outage included
        last_t: float | None = None  # the time of the last frame given out (source time)
        last_wall = clock.now()  # when it arrived, or when the reader started: outages are timed from there
        failures = 0  # tries in a row that gave no frame
        try:
            while not self._stopping:
                try:
                    start_wall = clock.now()
                    first: float | None = None
                    for t, image in self._open():
                        wall = clock.now()
                        if first is None:
                            first = t
                            failures = 0
                            if last_t is not None:  # back after an outage: the gap is as long as the outage
                                end = last_t + max(wall - last_wall, 1e-3)
                                offset = end - t
                                self._gap(last_t, end)
                        if self._paced:
                            clock.sleep(max(0.0, (t - first) - (clock.now() - start_wall)), self._wake)
                        if self._stopping:
                            return
                        self._push(t + offset, image)
                        last_t, last_wall = t + offset, wall
                    if self._ends:
                        return
                    error = "the stream ended"
                except ConnectionError as lost:
                    if not self._reconnects:  # a damaged file does not heal by reopening it
                        self._error = VideoError(f"{self.name}: {lost}")
                        return
                    error = str(lost)
                if self._stopping:
                    return
                down = clock.now() - last_wall
                left = cfg.stream_reconnect_s - down
                if left < 1e-6:
                    self._error = self._gone(error, down, last_t is not None)
                    return
                failures += 1
                wait = min(cfg.stream_backoff_s * 2.0 ** min(failures - 1, 60), cfg.stream_backoff_max_s, left)
                self._warn(0.0 if last_t is None else last_t,
                           f"source {self.name}: {error}; down {down:.2f}s, retry in {wait:.2f}s, "
                           f"trying for another {left:.2f}s")
                clock.sleep(wait, self._wake)
        except Exception as error:  # anything else (a callback's bug, an unexpected decoder error): not a clean end
            self._error = error
        finally:
            with self._cond:
                self._done = True
                self._cond.notify_all()

    def _gone(self, error: str, down: float, opened: bool) -> InputError:
        limit = f"pipeline.source.stream_reconnect_s = {self._config.stream_reconnect_s:g}"
        what = f"was lost: no frame for {down:.1f}s" if opened else f"never opened in {down:.1f}s of trying"
        return InputError(f"source {self.name} {what} ({limit}); last error: {error}; "
                          "check the address, the network and the camera")

    def _gap(self, start_t: float, end_t: float) -> None:
        with self._cond:
            self.gaps.append((start_t, end_t))
        self._on_gap(start_t, end_t)

    def _push(self, t: float, image: object) -> None:
        with self._cond:
            self._waiting.append((t, image))
            cfg = self._config
            wait_s = max(cfg.live_buffer_s, cfg.live_startup_s) if self._starting else cfg.live_buffer_s
            while len(self._waiting) > 1 and self._waiting[0][0] < t - wait_s - 1e-6:
                self._waiting.popleft()  # too old: the referee skips it rather than fall behind
                self.dropped += 1
                self._starting = False  # a start-up longer than live_startup_s: the referee is behind the feed
            self.received += 1
            self.last_arrival = self.clock.now()
            self._cond.notify_all()


def open_source(spec: str, config: SourceConfig, live: bool = False, on_warning: Warn | None = None,
                clock: Clock | None = None, on_gap: OnGap | None = None,
                start_t: float | None = None) -> FileSource | LiveSource:
    """SOURCE by its shape: digits = camera index, scheme:// = stream URL, else a video file.

    `live` plays a file through the live path (reader thread, `live_buffer_s` of frames) at its native rate.
    `clock` (default `SystemClock()`) is what a live source paces, backs off and stamps camera frames with;
    a plain file source reads no clock. `on_warning(t, message)` hears each reconnect try, `on_gap(start_t,
    end_t)` each outage a live feed came back from (`LiveSource`). `start_t` starts a file (played live or
    not) at that time: only its frames at `start_t` or later, exactly as a full decode gives them; a camera
    or a stream starts where it is, so a `start_t` for one is an InputError.
    """
    clock = clock if clock is not None else SystemClock()
    start_t = _checked_start(start_t)
    if (spec.isdigit() or "://" in spec) and start_t is not None:
        raise InputError(f"source {spec}: a camera or a stream cannot start at a time (start_t={start_t:g}); "
                         "only a video file can")
    if spec.isdigit():
        index = int(spec)
        return LiveSource(f"camera {index}", lambda: _camera_frames(index, clock), config, on_warning, clock=clock,
                          on_gap=on_gap)
    if "://" in spec:
        timeout = config.stream_open_timeout_s
        return LiveSource(spec, lambda: _pyav_frames(spec, timeout), config, on_warning,
                          ends=not config.stream_reconnect_at_end, clock=clock, on_gap=on_gap)
    if live:
        probe(spec)  # a missing or unreadable file is a clear error now, not a retry loop
        return LiveSource(spec, lambda: _file_feed(spec, start_t), config, on_warning, paced=True, ends=True,
                          reconnects=False, clock=clock, on_gap=on_gap)
    return FileSource(spec, start_t)


def _file_feed(path: str, start_t: float | None) -> Iterator[tuple[float, object]]:
    try:
        for frame in _file_frames(path, start_t):
            yield frame.t, frame.image
    except VideoError as error:
        raise ConnectionError(str(error)) from None
