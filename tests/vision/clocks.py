"""Virtual clocks for the live path (`vision.sources.Clock`): tests that never depend on machine speed.

- `VirtualClock`: `sleep` advances virtual time at once and records the wait (`waits`); `now` is virtual time.
- `LockstepClock`: a `VirtualClock` that, before each wait, holds the paced reader until the consumer has
  taken the previous frame (`LiveSource.wait_until_taken`, a condition, no timeout): a file played live
  through it delivers every frame, in order, however slow the consumer. "The referee keeps up", made exact:

      clock = LockstepClock()
      live = clock.follow(open_source(str(video), SourceConfig(), live=True, clock=clock))
      frames = list(live.frames())       # or: referee.run(live, ...)
      assert live.dropped == 0 and [f.t for f in frames] == [f.t for f in FileSource(video).frames()]

- `GatedClock`: a `VirtualClock` whose waits pass only as the test allows them (`allow`, `open`), so a test
  can let the reader push exactly n frames and know it has (`wait_until_held`).
- `StuckClock`: a `VirtualClock` whose every wait lasts until the source is stopped (`LiveSource.stop` sets the
  wake event the reader passes to `sleep`): a reader in back-off on it comes back only if stopping wakes it.

The live path passes its wake event to every `sleep` (`sleep(seconds, wake)`). `VirtualClock` never blocks, so
it needs none; `LockstepClock` is woken by the source itself when it stops; `GatedClock` ignores it (open the gate
before stopping a source held on it); `StuckClock` waits on nothing else.

Test modules in tests/vision import them as `from clocks import ...` (pytest puts the test folder on sys.path).

The test-side waits (`wait_until_held`, `wait_until_stalled`) are condition waits too; their `guard_s` is only
a deadlock guard so that a broken reader fails the test instead of hanging it, generous enough never to fire
on a busy machine. The clocks' `sleep`, which the reader calls, has no timeout at all.
"""

from __future__ import annotations

import threading
from typing import Callable

from vision.sources import FrameSource, LiveSource

GUARD_S = 120.0


def _wait_for(cond: threading.Condition, predicate: Callable[[], bool], guard_s: float, what: str) -> None:
    """`cond.wait_for(predicate)` (cond held), failing the test if it has not happened within the deadlock guard."""
    if not cond.wait_for(predicate, timeout=guard_s):
        raise AssertionError(f"deadlock guard: {what} did not happen within {guard_s:.0f} s")


class VirtualClock:
    """Virtual time: `sleep(s)` returns at once, advances `now()` by s and appends s to `waits`."""

    def __init__(self, start: float = 0.0) -> None:
        self._cond = threading.Condition()
        self._now = start
        self.waits: list[float] = []  # every wait asked of the clock, in order (zeros included)

    def now(self) -> float:
        with self._cond:
            return self._now

    def sleep(self, seconds: float, wake: threading.Event | None = None) -> None:
        with self._cond:
            self._advance(seconds)

    def _advance(self, seconds: float) -> None:  # self._cond held
        if seconds < 0:
            raise ValueError(f"sleep({seconds}): a wait cannot be negative")
        self.waits.append(seconds)
        self._now += seconds
        self._cond.notify_all()


class LockstepClock(VirtualClock):
    """Plays a paced live source in lockstep with its consumer: no frame is ever dropped.

    The paced reader calls `sleep` before it releases each frame. Here `sleep` first blocks, on the
    source's condition and with no timeout, until the consumer has taken the frame released before
    (`LiveSource.wait_until_taken`), then advances virtual time by the wait. So the newest-frame slot is
    always empty when a frame is put in it, whatever the consumer's speed, and the times the frames carry
    and the waits recorded are those of the file. Reconnect back-off waits go through the same `sleep`.

    Bind it to the source it paces with `follow` before iterating the source's frames.
    """

    def __init__(self, start: float = 0.0) -> None:
        super().__init__(start)
        self.source: LiveSource | None = None
        self._stalled_on: float | None = None  # time of the frame the reader is held back by, while it is
        self.stalls: list[float] = []  # times of the frames the reader was held back by, in order

    def follow(self, source: FrameSource) -> LiveSource:
        """Pace `source` (built with `clock=self`); returns it, for `live = clock.follow(open_source(...))`."""
        if not isinstance(source, LiveSource):
            raise TypeError(f"source {source.name} is not a live source; pass live=True to open_source")
        if source.clock is not self:
            raise ValueError(f"source {source.name} was not built with this clock; pass clock= to open_source")
        self.source = source
        return source

    def sleep(self, seconds: float, wake: threading.Event | None = None) -> None:
        source = self.source
        if source is None:
            raise RuntimeError("LockstepClock.sleep before follow(source): bind the clock to its source first")
        source.wait_until_taken(on_wait=self._stalled)
        with self._cond:
            self._stalled_on = None
            self._advance(seconds)

    def _stalled(self, t: float) -> None:  # reader thread, under the source's lock: the frame at t is not taken yet
        with self._cond:
            self._stalled_on = t
            self.stalls.append(t)
            self._cond.notify_all()

    def wait_until_stalled(self, after: float, guard_s: float = GUARD_S) -> None:
        """Block (a consumer) until the reader is held back by a frame later than `after` still in the slot.

        A consumer that calls this with the time of the frame it holds is as slow as a consumer can be:
        it asks for the next frame only once the reader has decoded the one after it and is waiting for
        the consumer. Only call it when such a frame exists (not for the file's last two frames).
        """
        with self._cond:
            _wait_for(self._cond, lambda: self._stalled_on is not None and self._stalled_on > after, guard_s,
                      f"the reader holding back a frame after t={after}")


class GatedClock(VirtualClock):
    """A virtual clock whose `sleep` passes only when the test has allowed it.

    Each `sleep` takes one permit (`allow(n)` grants n, `open()` lets every wait pass from then on), waiting
    on a condition, with no timeout, while there is none. A paced reader calls `sleep` once before releasing
    each frame, so after `allow(n)` and `wait_until_held()` it has released exactly n more frames.
    Before closing a source's frame iterator early, `open()` the gate so the reader can stop.
    """

    def __init__(self, start: float = 0.0) -> None:
        super().__init__(start)
        self._permits = 0
        self._open = False
        self._held = False  # the reader is blocked in sleep for want of a permit

    def allow(self, n: int = 1) -> None:
        with self._cond:
            self._permits += n
            self._cond.notify_all()

    def open(self) -> None:
        with self._cond:
            self._open = True
            self._cond.notify_all()

    def sleep(self, seconds: float, wake: threading.Event | None = None) -> None:
        with self._cond:
            while not self._open and self._permits == 0:
                self._held = True
                self._cond.notify_all()
                self._cond.wait()
            self._held = False
            if not self._open:
                self._permits -= 1
            self._advance(seconds)

    def wait_until_held(self, guard_s: float = GUARD_S) -> None:
        """Block until every permit is used and the reader is waiting for another one."""
        with self._cond:
            _wait_for(self._cond, lambda: self._held and self._permits == 0, guard_s,
                      "the reader using its permits and waiting for another")


class StuckClock(VirtualClock):
    """A virtual clock whose every wait lasts until the source stops: `sleep` blocks, with no timeout, until the
    wake event the reader passes it is set (`LiveSource.stop`), and virtual time does not move.

    `waits` records each wait asked for, `held` counts the waits begun; `wait_until_held(n)` blocks the test until
    the reader has begun its n-th. A reader that stopping did not wake would never come back: the test's deadlock
    guard fails it instead.
    """

    def __init__(self, start: float = 0.0) -> None:
        super().__init__(start)
        self.held = 0

    def sleep(self, seconds: float, wake: threading.Event | None = None) -> None:
        if wake is None:
            raise RuntimeError("StuckClock.sleep without a wake event: nothing could ever end the wait")
        with self._cond:
            self.waits.append(seconds)
            self.held += 1
            self._cond.notify_all()
        wake.wait()

    def wait_until_held(self, n: int = 1, guard_s: float = GUARD_S) -> None:
        with self._cond:
            _wait_for(self._cond, lambda: self.held >= n, guard_s, f"the reader beginning wait {n}")
