"""The hub: one referee session run in a thread, its state published in versions, its newest frame kept for the
video, and the umpire's inputs passed in.

The frame loop must never wait for the console, so the session's `on_frame` only keeps a reference to the
frame and wakes the publisher thread. That thread publishes a new version when the referee's state changed
(its standings, calls, review flags, table or engine are new objects only on a real change: compared by
identity), when the hub's own part changed (the phase, the feed, an umpire input), and at most once a second
when only the time moved; it serialises each version's JSON once, for every client. It is also the
watchdog: a live feed whose reader got no frame for over `LOST_AFTER_S` is "lost" until the next one comes (a
referee slow to take frames that did come is not a lost camera; a file is never lost). The video
thread draws and encodes the newest frame at most `VIDEO_FPS` times a second, and only while someone watches.
Asyncio clients follow both through `Latest`, which keeps only the newest item: a slow client skips to it,
so memory does not grow with the clients or their slowness.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
import threading
import time
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, AsyncIterator, Generic, Iterator, TypeVar

from calibration.profile import TableProfile, load_profile
from record.run_folder import RunFolderError, WriteMode, read_run
from referee.session import RefereeSession, RefereeState, RunSpec, RunSummary, Say, StopReason, Verdict
from rules.engine import Standings
from rules.errors import InputError
from rules.events import UMPIRE_INPUTS, Event, GameStart, Overturn, PlayerSpec
from rules.games import load_config, make_engine, table_config
from rules.replay import AMENDMENTS, resolve_umpire_inputs
from vision.config import split_config
from vision.sources import Clock, LiveSource
from vision.video_io import Frame

from .state import ConsoleView, ScorePoint, SourceView, UmpireInput, match_players, state_json, totals
from .video import annotated_jpeg

LOST_AFTER_S = 1.0  # no frame for this long while running: the feed is "lost"
WATCH_S = 0.25  # the publisher looks at least this often (the watchdog, the once-a-second time update)
TICK_S = 1.0  # a version for the time alone at most this often
VIDEO_FPS = 5.0
UNDO = "undo"  # the reason of the overturn that undoes an umpire input

T = TypeVar("T")


class Latest(Generic[T]):
    """The newest item of a stream (a state version, a video picture) for asyncio subscribers. Any thread
    puts; each subscriber is woken on the event loop and takes the newest item, skipping any it was too slow
    for."""

    def __init__(self) -> None:
        self.item: tuple[int, T] | None = None  # (sequence number, item)
        self._waiting: set[asyncio.Event] = set()
        self._loop: asyncio.AbstractEventLoop | None = None

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def put(self, number: int, item: T) -> None:
        self.item = (number, item)
        loop = self._loop
        if loop is not None:
            try:
                loop.call_soon_threadsafe(self._wake)
            except RuntimeError:  # the loop has closed: nobody is listening any more
                pass

    def _wake(self) -> None:
        for event in self._waiting:
            event.set()

    async def follow(self, keepalive_s: float) -> AsyncIterator[tuple[int, T] | None]:
        """The current item, then each newer one as it comes; None after `keepalive_s` without one."""
        wake = asyncio.Event()
        self._waiting.add(wake)
        sent: int | None = None
        try:
            while True:
                item = self.item
                if item is not None and item[0] != sent:
                    sent = item[0]
                    yield item
                    continue
                try:
                    await asyncio.wait_for(wake.wait(), keepalive_s)
                except TimeoutError:
                    yield None
                wake.clear()
        finally:
            self._waiting.discard(wake)


class ConsoleHub:
    """One match for the console: build it with `open` (the spec names the players) or `waiting_for_setup`
    (the umpire's setup names them), `attach` the event loop, `start`, and `close` at the end."""

    def __init__(self, spec: RunSpec, say: Say | None = None, clock: Clock | None = None) -> None:
        self.spec = spec  # waiting for setup: what the setup completes; then the session's own
        self._profile: TableProfile | None = None  # waiting for setup: the table the setup will use
        self.tables: dict[str, str | Path] = {}  # waiting for setup: the tables the umpire may choose, by name
        self.states: Latest[str] = Latest()  # the state JSON, by version
        self.pictures: Latest[bytes] = Latest()  # the video's JPEGs
        self.session: RefereeSession | None = None
        self._say = say or (lambda t, message: None)
        self._clock = clock
        self._lock = threading.Lock()  # guards the hub's part of the state (below), changed by several threads
        self._phase = "waiting_for_setup"
        self._source = SourceView(_source_name(spec), live=True)
        self._players: tuple[PlayerSpec, ...] = ()
        self._colours: dict[str, str] = {}
        self._inputs: list[UmpireInput] = []
        self._undone: set[str] = set()  # ids of inputs an undo took back
        self._undos: set[str] = set()  # ids of the overturns that undid them
        self._history: list[ScorePoint] = []
        self._table: tuple[str | None, float | None] = (None, None)  # (table_settled id, when first seen)
        self._changed = True  # the hub's part changed since the last version
        self._summary: RunSummary | None = None
        # the publisher thread's own
        self._version = 0
        self._published_at = 0.0
        self._marks: tuple[Any, ...] = ()
        self._moved: tuple[float, int] = (-1.0, -1)
        self._standings: Standings | None = None
        # the frame loop's, read by the others
        self._frame: Frame | None = None
        self._frame_wall: float | None = None
        self._dropped_at_start = 0
        # threads
        self._wake = threading.Event()
        self._closing = threading.Event()
        self._setting_up = threading.Lock()
        self._watch = threading.Condition()
        self._watchers = 0
        self._encoding = threading.Lock()
        self._encoded: tuple[Frame | None, float] = (None, 0.0)  # the frame last encoded, and when
        self._threads: list[threading.Thread] = []
        self._referee: threading.Thread | None = None
        self._ended = threading.Event()
        self.failure: Exception | None = None  # what stopped the referee, when something did (`serve` raises it)

    @classmethod
    def open(cls, spec: RunSpec, say: Say | None = None, clock: Clock | None = None) -> ConsoleHub:
        """Open the session of `spec` now (its problems are InputErrors before anything is served)."""
        hub = cls(spec, say, clock)
        hub._begin(RefereeSession.open(spec, say=hub._said, clock=clock), {})
        return hub

    @classmethod
    def waiting_for_setup(cls, spec: RunSpec, say: Say | None = None, clock: Clock | None = None,
                          tables: Path | None = None) -> ConsoleHub:
        """A hub whose match starts when the umpire sets it up (`set_up`). The table is the spec's, or one of
        the profiles in the folder `tables` (each loaded and checked now: a bad one is an InputError)."""
        hub = cls(spec, say, clock)
        default = spec.profile or spec.game
        hub.tables = {Path(default).stem: default}
        for path in sorted(tables.glob("*.json")) if tables is not None else ():
            profile = load_profile(path)
            if profile.game != spec.game:
                raise InputError(f"--tables {tables}: {path.name} is a {profile.game} table, not {spec.game}; "
                                 "keep one game's tables in the folder")
            hub.tables[path.stem] = path
        if tables is not None and len(hub.tables) == 1:
            raise InputError(f"--tables {tables} holds no table profile (*.json); give a folder of profiles")
        hub._profile = load_profile(default)
        return hub

    @property
    def profile(self) -> TableProfile:
        """The table the match is played on."""
        if self.session is not None:
            return self.session.setup.profile
        assert self._profile is not None, "a hub is built by open or waiting_for_setup"
        return self._profile

    # ------------------------------------------------------------------ lifetime

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """The event loop the clients are served on: they are woken there."""
        self.states.attach(loop)
        self.pictures.attach(loop)

    def start(self) -> None:
        """Publish the first version, then start the publisher, the video thread and (set up) the referee."""
        self._publish_if_due()
        for name, target in (("console publisher", self._publisher), ("console video", self._video)):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        if self.session is not None:
            self._start_referee()

    def stop(self, reason: StopReason, message: str = "") -> None:
        """Stop the referee at its next frame (its record is finished as a stopped run); safe from a signal
        handler. Without a match, nothing to stop."""
        if self.session is not None:
            self.session.stop(reason, message)

    def wait(self) -> RunSummary | None:
        """Wait for the referee to end (None: it never started, or failed)."""
        if self._referee is not None:
            self._referee.join()
        return self._summary

    def close(self) -> None:
        """Stop the referee if it still runs, finish its record, end the hub's threads."""
        if self._referee is not None and self._referee.is_alive():
            self.stop(StopReason.ERROR, "the console stopped")
            self._referee.join(timeout=60.0)  # finishing the record takes a second; a hung referee is left
        elif self.session is not None and self._referee is None:
            self.session.close()  # opened, never run: its folder's lock is given back
        self._closing.set()
        self._wake.set()
        with self._watch:
            self._watch.notify_all()
        for thread in self._threads:
            thread.join(timeout=5.0)

    def __enter__(self) -> ConsoleHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _begin(self, session: RefereeSession, colours: dict[str, str]) -> None:
        """The match of `session` is the console's: its players, and (resumed) what its record holds."""
        self.session = session
        setup = session.setup
        self.spec = setup.spec
        with self._lock:
            self._phase = "running"
            self._source = replace(self._source, name=_source_name(setup.spec))
            self._players = match_players(setup)
            self._colours = colours
            if setup.spec.write_mode is WriteMode.APPEND:  # a resumed live run goes on from its record
                self._resumed(setup.spec.out, setup.umpire, setup.rules_config)
            self._changed = True
        self._wake.set()

    def _resumed(self, folder: Path, session_inputs: tuple[Event, ...], config: dict[str, Any]) -> None:
        """The score history and the console's umpire inputs of a resumed run, from its events.jsonl (the
        session file's inputs are not the console's; game_start is not undone)."""
        try:
            events = list(read_run(folder, tracks=False).events)
        except RunFolderError:  # nothing recorded yet
            return
        given = {replace(event, id="", t=0.0) for event in session_inputs}  # logged at their time or later
        for event in events:
            if isinstance(event, UMPIRE_INPUTS) and not isinstance(event, GameStart) \
                    and replace(event, id="", t=0.0) not in given:
                self._inputs.append(_listed(event, event.id))
                if isinstance(event, Overturn) and event.reason == UNDO:
                    self._undos.add(event.id)
                    self._undone.add(event.target)
        engine = make_engine(self.spec.game, config)
        stream, _ = resolve_umpire_inputs(events)
        for event in stream:
            if isinstance(event, AMENDMENTS):
                continue  # resolved into the stream already
            engine.feed(event)
            self._add_point(event.t, engine.standings())

    def _add_point(self, t: float, standings: Standings) -> None:
        """The score history's next point, when the totals changed (under the lock)."""
        scores = tuple(totals(standings).items())
        if scores and (not self._history or self._history[-1].scores != scores):
            self._history.append(ScorePoint(t, scores))

    def _start_referee(self) -> None:
        self._referee = threading.Thread(target=self._run_referee, name="console referee", daemon=True)
        self._referee.start()

    def _run_referee(self) -> None:
        session = self.session
        assert session is not None
        summary, error = None, ""
        try:
            summary = session.run(self._on_frame)
        except Exception as failure:  # the session finished its record; the console says why it stopped, and
            self.failure = failure  # `serve` raises it once the server has stopped
            error = str(failure) if isinstance(failure, InputError) else f"{type(failure).__name__}: {failure}"
            self._said(session.state().t, f"the referee stopped: {error}")
        finally:
            session.close()
        with self._lock:
            self._summary = summary
            self._phase = "finished" if summary is not None and summary.stopped is None else "stopped"
            message = error or (summary.stopped.message if summary is not None and summary.stopped else "")
            self._source = replace(self._source, status="ended", message=message)
            self._changed = True
        self._ended.set()
        self._wake.set()

    # ------------------------------------------------------------------ the frame loop's hook

    def _on_frame(self, frame: Frame, state: RefereeState) -> None:
        """Called by the referee after every frame: keeps the frame, wakes the publisher; nothing more (but
        noting, once, the frames the feed dropped while the first frame was refereed)."""
        self._frame = frame
        self._frame_wall = time.monotonic()
        if state.frames == 2:  # the first frame built the colour model: the feed's drops until now are start-up's
            self._dropped_at_start = getattr(self.session.source if self.session else None, "dropped", 0)
        self._wake.set()

    def _said(self, t: float, message: str) -> None:
        """A warning of the session (a reconnect try, a feed gap): the feed's message, and the runner's."""
        with self._lock:
            self._source = replace(self._source, message=message)
            self._changed = True
        self._say(t, message)

    # ------------------------------------------------------------------ publishing

    def current(self) -> str:
        """The state JSON of the latest version."""
        item = self.states.item
        assert item is not None, "start() publishes the first version"
        return item[1]

    def _publisher(self) -> None:
        while not self._closing.is_set():
            self._wake.wait(WATCH_S)
            self._wake.clear()
            self._publish_if_due()

    def _publish_if_due(self) -> None:
        now = time.monotonic()
        session = self.session
        state = session.state() if session is not None else None
        with self._lock:
            given = session.source if session is not None else None
            live = given if isinstance(given, LiveSource) else None  # its reader knows when frames stopped coming
            status = self._source.status
            if self._phase == "running" and live is not None and live.last_arrival is not None:
                status = "lost" if live.clock.now() - live.last_arrival > LOST_AFTER_S else "live"
            elif self._phase == "running" and self._frame_wall is not None:
                status = "live"
            if status != self._source.status:  # a warning said since the feed was live says why it is lost
                said = self._source.message
                message = f"no frame for over {LOST_AFTER_S:g} s" + (f"; {said}" if said else "") \
                    if status == "lost" else ""
                self._source = replace(self._source, status=status, message=message)
                self._changed = True
            marks = () if state is None else (state.standings, state.last_decisions, state.review, state.table,
                                               state.engine)
            changed = self._changed or len(marks) != len(self._marks) or \
                any(a is not b for a, b in zip(marks, self._marks))
            moved = state is not None and (state.t, state.frames) != self._moved and \
                now - self._published_at >= TICK_S
            if not (changed or moved or self._version == 0):
                return
            if state is not None:
                self._note(state)
            self._changed = False
            feed = session.source if session is not None else None
            source = replace(self._source, received=getattr(feed, "received", 0), dropped=getattr(feed, "dropped", 0),
                             dropped_at_start=self._dropped_at_start)
            view = ConsoleView(self.spec.game, self._phase, source, self._players, dict(self._colours),
                               tuple(self._history), tuple(self._inputs), self._table[1])
        self._marks = marks
        self._moved = (state.t, state.frames) if state is not None else (-1.0, -1)
        self._version += 1
        self._published_at = now
        text = json.dumps(state_json(self._version, time.time(), view, state), separators=(",", ":"))
        self.states.put(self._version, text)

    def _note(self, state: RefereeState) -> None:
        """The score history, and when the table shown was read (under the lock)."""
        if state.standings is not self._standings:
            self._standings = state.standings
            self._add_point(state.t, state.standings)
        if state.table_event != self._table[0]:
            self._table = (state.table_event, state.t if state.table_event is not None else None)

    # ------------------------------------------------------------------ video

    @contextmanager
    def watching(self) -> Iterator[None]:
        """While a video client is connected: the video thread encodes."""
        with self._watch:
            self._watchers += 1
            self._watch.notify_all()
        try:
            yield
        finally:
            with self._watch:
                self._watchers -= 1

    def picture(self) -> tuple[int, bytes] | None:
        """The newest frame drawn and encoded, at most one new encoding per 1/VIDEO_FPS s (from any thread but
        the frame loop's); None before the first frame."""
        with self._encoding:
            frame, (last, at) = self._frame, self._encoded
            now = time.monotonic()
            if frame is None or frame is last or now - at < 1.0 / VIDEO_FPS:
                return self.pictures.item
            session = self.session
            jpeg = annotated_jpeg(frame.image, None if session is None else session.state(),
                                  None if session is None else session.last_tracked,
                                  None if session is None else session.pipeline.calibration, self.profile,
                                  players=self._players)
            self._encoded = (frame, now)
            number = self.pictures.item[0] + 1 if self.pictures.item is not None else 1
            self.pictures.put(number, jpeg)
            return self.pictures.item

    def _video(self) -> None:
        while not self._closing.is_set():
            with self._watch:
                while self._watchers == 0 and not self._closing.is_set():
                    self._watch.wait()
            started = time.monotonic()
            self.picture()
            self._closing.wait(max(0.0, 1.0 / VIDEO_FPS - (time.monotonic() - started)))

    # ------------------------------------------------------------------ the umpire

    def submit(self, event: Event) -> Future[Verdict]:
        """An umpire input, timed now (the referee's latest time); InputError when no match runs."""
        session = self._session_running()
        stamped = replace(event, t=session.state().t)
        future = session.submit(stamped)
        future.add_done_callback(lambda done: self._answered(stamped, done.result()))
        return future

    def undo(self, by: str) -> Future[Verdict]:
        """Overturn the last umpire input accepted and not undone (an undo is not undone by another)."""
        with self._lock:
            last = next((i for i in reversed(self._inputs) if i.id not in self._undone and i.id not in self._undos),
                        None)
        if last is None:
            raise InputError("there is no umpire input to undo")
        return self.submit(Overturn(0.0, target=last.id, by=by, reason=UNDO))

    def stop_match(self, by: str, reason: str) -> bool:
        """Stop the refereeing from the console; True once the record is finished (within 5 s)."""
        self._session_running()
        message = f"stopped from the umpire console by {by}" + (f": {reason}" if reason else "")
        self.stop(StopReason.INTERRUPTED, message)
        return self._ended.wait(5.0)

    def set_up(self, players: tuple[PlayerSpec, ...], colours: dict[str, str], rules: dict[str, Any] | None,
               by: str, table: str | None = None) -> None:
        """Start the match the umpire set up, on the table named (one of `tables`; None: the first): its
        game_start and rules options go to the run as its session and config files (the run folder keeps
        copies, and of the table's profile). InputError says why it cannot start."""
        with self._setting_up:
            if self.session is not None:
                raise InputError("the match is set up already")
            scratch = Path(tempfile.mkdtemp(prefix="referee-setup-"))
            try:
                session_file = scratch / "session.jsonl"
                session_file.write_text(json.dumps(GameStart(0.0, players=players, by=by).to_json()) + "\n", "utf-8")
                profile = self.tables[table] if table is not None else self.spec.profile
                spec = replace(self.spec, session=session_file, profile=profile)
                if rules:
                    config_file = scratch / "config.json"
                    config_file.write_text(json.dumps(self._config_with(rules), indent=2) + "\n", "utf-8")
                    spec = replace(spec, config=config_file)
                session = RefereeSession.open(spec, say=self._said, clock=self._clock)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
            self._begin(session, colours)
            self._start_referee()

    def rules_problem(self, rules: dict[str, Any], table: str | None = None) -> str | None:
        """Why the setup's rules options cannot be played on the table named (the rules engine's words, naming
        the option); the table's own settings (slots per Position) are its profile's."""
        try:
            profile = load_profile(self.tables.get(table or "", self.spec.profile or self.spec.game))
            config = table_config(split_config(self._config_with(rules))[0], profile.rules_settings, profile.name)
            make_engine(self.spec.game, config)
        except InputError as error:
            return str(error)
        return None

    def _config_with(self, rules: dict[str, Any]) -> dict[str, Any]:
        """The --config given (if any) with the setup's rules options over it."""
        return {**(load_config(self.spec.config) if self.spec.config else {}), **rules}

    def _session_running(self) -> RefereeSession:
        session = self.session
        if session is None:
            raise InputError("no match is set up yet")
        if self._ended.is_set():
            raise InputError("the run has ended")
        return session

    def _answered(self, event: Event, verdict: Verdict) -> None:
        """An input's verdict (in the referee's thread): an accepted one joins the list undo takes from."""
        if not verdict.accepted or verdict.event_id is None:
            return
        with self._lock:
            self._inputs.append(_listed(event, verdict.event_id))
            if isinstance(event, Overturn) and event.reason == UNDO:
                self._undos.add(verdict.event_id)
                self._undone.add(event.target)
            self._changed = True
        self._wake.set()


def _listed(event: Event, event_id: str) -> UmpireInput:
    """An accepted umpire input as the console lists it."""
    return UmpireInput(event_id, event.TYPE, event.t, getattr(event, "by", "") or None,
                       getattr(event, "target", "") or None)


def _source_name(spec: RunSpec) -> str:
    """The feed as the pages name it: a video by its file name, a camera or a stream by its address."""
    return Path(spec.source).name if spec.source_kind == "file" else spec.source
