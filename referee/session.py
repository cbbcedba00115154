"""The referee as a library: one match, from a run specification to its run folder.

`RunSpec` says what to referee and where to keep the record (what `referee run`
parses its arguments into); `prepare` loads and checks all of it before
anything is written; `RefereeSession` then referees: it owns the vision
pipeline, the rules engine, the umpire's inputs and the run folder
(`record.run_folder`). The command line, the benchmarks, the tests and the live
console all build a session this way:

    with RefereeSession.open(RunSpec("match.mp4", "starcluster", Path("out/run"))) as session:
        summary = session.run()          # or session.process(frame) per frame, then session.finish()

While it runs, another thread may `submit` umpire inputs (applied in time order
at the next frame, each answered accepted or refused, never dropped) and read
`state()` (scores, turn, round, clock, balls to play, pending choice, the last
calls, open review flags). Vision never decides a score: every observation goes
through the engine's `check` and `feed`, and what it refuses is flagged for a
person, never written into the replayable event log.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from calibration.calibrate import Calibration, load_calibration, save_calibration
from calibration.profile import TableProfile, load_profile
from record.run_folder import ANNOTATED_FILE, CALIBRATION_FILE, RunWriter
from rules.decisions import Decision
from rules.engine import EngineState, RulesEngine, Standings
from rules.errors import InputError
from rules.events import UMPIRE_INPUTS, Confirm, Event, GameStart, Overturn, TableSettled
from rules.games import GAMES, load_config, make_engine
from rules.replay import read_log, replay
from rules.result import build_result
from rules.session import load_session
from vision.config import PipelineConfig, split_config
from vision.games import GameVision, game_vision
from vision.pipeline import DetectorFactory, PipelineWarning, StageTimes, TableReader, VisionPipeline
from vision.sources import Clock, FrameSource, open_source
from vision.video_io import Frame

if TYPE_CHECKING:
    from review.annotate import Written

POSE_OFF = "pose is off (--no-pose): Play Line fouls by the body are not watched"
RECENT_DECISIONS = 20  # calls kept in `state()` for a scoreboard's ticker
DEFAULT_POSE_MODEL = Path(__file__).resolve().parents[1] / "models" / "build" / "yolo11n-pose.onnx"

Say = Callable[[float, str], None]  # a warning for the person running the referee (the CLI prints it)


@dataclass(frozen=True)
class RunSpec:
    """What to referee and where to keep the record."""

    source: str  # a video file, a camera index ("0"), or an rtsp:// / http:// URL
    game: str  # "starcluster" | "piratenbillard"
    out: Path  # the run folder
    profile: str | Path | None = None  # a table profile file; None: the game's shipped table
    calibration: Path | None = None  # a calibration file; None: the table is found by its markers
    config: Path | None = None  # the game config; its "pipeline" object sets the pipeline (docs/config.md)
    session: Path | None = None  # umpire inputs: JSON lines, or a truth.json (whose config then applies)
    players: tuple[str, ...] | None = None  # without a session: the players' colours, in seat / side order
    detector: str = "color"  # the ball detector backend (vision.detect.DETECTORS)
    live: bool = False  # play a video file through the live path at its own rate
    pose: bool = True  # watch the players' bodies at a Play Line (games that have one)
    pose_model: Path | None = None  # None: models/build/yolo11n-pose.onnx, built by `make models`
    tracks: bool = True  # write tracks.jsonl (for `referee eval` and the review video)
    annotate: bool = False  # after the run, write annotated.mp4 (needs a video file)

    @property
    def is_stream(self) -> bool:
        return self.source.isdigit() or "://" in self.source


@dataclass(frozen=True)
class Setup:
    """A run specification loaded and checked: everything a session needs, nothing written yet."""

    spec: RunSpec
    game: GameVision
    profile: TableProfile
    calibration: Calibration | None
    rules_config: dict[str, Any]
    pipeline: PipelineConfig
    umpire: tuple[Event, ...]  # the session's inputs (or the game's defaults for the players)
    pose_model: Path | None  # None: bodies at the Play Line are not watched


def prepare(spec: RunSpec) -> Setup:
    """Load every input of `spec` and check it; any problem is an InputError naming it."""
    if spec.game not in GAMES:
        raise InputError(f"unknown game {spec.game!r}; use one of {', '.join(GAMES)}")
    if spec.annotate and spec.is_stream:
        raise InputError(f"--annotate decodes the video again after the run, so it needs a video file, not "
                         f"{spec.source}; record the stream and run `referee annotate` on the recording")
    game = game_vision(spec.game)
    profile = load_profile(spec.profile or spec.game)
    if profile.game != spec.game:
        raise InputError(f"profile {profile.name!r} is for {profile.game}, not {spec.game}")
    calibration = load_calibration(spec.calibration) if spec.calibration else None
    session = load_session(spec.session) if spec.session else None
    if spec.config:  # the rules engine's settings and the pipeline's, from one file
        rules_config, pipeline = split_config(load_config(spec.config))
    else:  # a truth.json session carries the game config its match was played under (ball count, rounds)
        rules_config, pipeline = (dict(session.config) if session else {}), PipelineConfig()
    make_engine(spec.game, rules_config)  # the rules config is checked now, not at the first frame
    umpire = session.events if session else game.default_session(spec.players or game.default_players)
    pose_model = None
    if game.watches_play_line and spec.pose:
        pose_model = spec.pose_model or DEFAULT_POSE_MODEL
        if not pose_model.exists():
            raise InputError(f"pose model {pose_model} is missing; build it with `make models`, or pass --no-pose "
                             "(Play Line fouls by the body are then not watched)")
    return Setup(spec, game, profile, calibration, rules_config, pipeline, tuple(umpire), pose_model)


@dataclass(frozen=True)
class Verdict:
    """The engine's answer to an umpire input: accepted (with the id its log line got) or refused, and why."""

    accepted: bool
    event_id: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class ReviewFlag:
    """Something a person should look at: a flagged call (until the umpire confirms or overturns what caused
    it) or a pipeline warning marked for review."""

    t: float
    message: str
    cause: str | None = None  # the event id behind a flagged call


@dataclass(frozen=True)
class RefereeState:
    """The match as it stands, for a scoreboard or an umpire's console; immutable, safe to read anywhere."""

    game: str
    t: float  # the latest time the referee has applied, seconds of video
    frames: int  # frames refereed so far
    standings: Standings  # scores, match wins, winners, whose turn, a one-line status
    engine: EngineState | None  # round, clock, balls to play, pending choice; None before the first event
    last_decisions: tuple[Decision, ...]  # the latest calls, oldest first
    review: tuple[ReviewFlag, ...]  # open review flags, oldest first

    @property
    def clock_s(self) -> float | None:
        """The round clock now: time left when it counts down, time played otherwise; None without rounds."""
        e = self.engine
        if e is None or e.round_length_s is None:
            return None
        played = 0.0 if e.round_started_at is None else \
            max(0.0, min(self.t, e.round_ended_at if e.round_ended_at is not None else self.t) - e.round_started_at)
        return max(0.0, e.round_length_s - played) if e.clock_counts_down else played


@dataclass(frozen=True)
class RunSummary:
    frames: int
    first_t: float
    last_t: float
    state: RefereeState
    times: StageTimes
    warnings: int

    @property
    def standings(self) -> Standings:
        return self.state.standings


class RefereeSession:
    """One match being refereed; see the module docstring."""

    def __init__(self, setup: Setup, source: FrameSource, writer: RunWriter, pipeline: VisionPipeline,
                 say: Say | None = None, progress: bool = False) -> None:
        self.setup = setup
        self.source = source
        self.writer = writer
        self.pipeline = pipeline
        self.engine: RulesEngine = make_engine(setup.spec.game, setup.rules_config)
        self.times = pipeline.times
        self._say = say or (lambda t, message: None)
        self._inbox: list[tuple[float, int, Event, Future[Verdict] | None]] = []  # umpire inputs not yet due
        self._arrivals = 0
        self._lock = threading.Lock()  # guards the inbox and the source's warnings (other threads add to them)
        self._source_warnings: list[tuple[float, str]] = []
        self._recent: deque[Decision] = deque(maxlen=RECENT_DECISIONS)
        self._review: list[ReviewFlag] = []
        self._frames = 0
        self._first_t: float | None = None
        self._last_t = 0.0
        self._closed = False
        self._summary: RunSummary | None = None
        self._changed = False  # the engine was fed or a flag raised since the state was last published
        self.progress = progress  # show the annotating's progress bar
        self.annotated: Written | None = None  # the annotated video, when the spec asked for one
        for event in setup.umpire:
            self._queue(event, None)
        self._state = self._snapshot()

    @classmethod
    def open(cls, spec: RunSpec, *, source: FrameSource | None = None, detector: DetectorFactory | None = None,
             table_reader: TableReader | None = None, clock: Clock | None = None,
             say: Say | None = None, progress: bool = False) -> RefereeSession:
        """Prepare `spec`, open its source, then (only then) its run folder. `source`, `detector` and
        `table_reader` replace the ones the spec names (tests, tools); `clock` paces a live source; `say`
        hears the warnings meant for whoever runs the referee; `progress` shows the annotating's progress."""
        setup = prepare(spec)
        session: RefereeSession | None = None

        def source_warning(t: float, message: str) -> None:  # a live source warns once its frames are read
            assert session is not None
            session._source_warning(t, message)

        if source is None:
            source = open_source(spec.source, setup.pipeline.source, live=spec.live, on_warning=source_warning,
                                 clock=clock)
        pose = None
        if setup.pose_model is not None:
            from vision.pose import PoseEstimator
            from vision.pose_watch import PoseWatch

            pose = PoseWatch(PoseEstimator(setup.pose_model, setup.pipeline.pose.pose_threads), setup.profile,
                             setup.pipeline.pose, setup.pipeline.play_line)
        pipeline = VisionPipeline(setup.game, setup.profile, setup.pipeline, detector or _named_detector(spec,
                                  setup.pipeline), setup.calibration, table_reader, pose, record_tracks=spec.tracks)
        writer = RunWriter(spec.out, tracks=spec.tracks)
        session = cls(setup, source, writer, pipeline, say, progress)
        if setup.game.watches_play_line and setup.pose_model is None:
            writer.warning(0.0, POSE_OFF)
            session._say(0.0, POSE_OFF)
        return session

    # ------------------------------------------------------------------ the run

    def run(self, on_frame: Callable[[Frame, RefereeState], None] | None = None) -> RunSummary:
        """Referee the source to its end, then `finish`."""
        stream: Iterator[Frame] = iter(self.source.frames())
        while True:
            start = time.perf_counter()
            frame = next(stream, None)
            self.times.add("decode", start)
            if frame is None:
                break
            if self.process(frame) and on_frame is not None:
                on_frame(frame, self._state)
        return self.finish()

    def process(self, frame: Frame) -> bool:
        """One frame: the umpire inputs due by its time, then what vision sees on it. False while the table's
        markers are still being looked for (nothing is refereed yet)."""
        self._first_t = frame.t if self._first_t is None else self._first_t
        self._write_source_warnings()
        self._apply_all(self._due(frame.t))
        self._refresh()
        if not self.pipeline.find_table(frame, self._first_t, self.source.name):
            return False
        self._last_t = max(self._last_t, frame.t)
        seen = self.pipeline.observe(frame, self._state.standings.to_play)
        if seen.tracked is not None:
            self.writer.frame(seen.tracked.t, seen.tracked.tracks, seen.tracked.detections)
        start = time.perf_counter()
        for item in seen.observations:
            if isinstance(item, PipelineWarning):
                self._warn(item.t, item.message, item.review)
            else:
                self._apply(item)
        self.times.add("rules", start)
        self._frames += 1
        self._refresh()
        return True

    def finish(self) -> RunSummary:
        """The source has ended: apply the umpire inputs still waiting, let the rules finish (the round clock),
        write result.json and the calibration (and the annotated video when asked for)."""
        if self._summary is not None:
            return self._summary
        self._write_source_warnings()
        name = self.source.name
        if self._first_t is None:
            raise InputError(f"source {name} gave no frames; check the video or the stream")
        if self.pipeline.calibration is None:
            raise InputError(f"no table markers found in {name}; point the camera at the table or pass --calibration")
        with self._lock:
            self._closed = True
            rest = [(event, future) for _, _, event, future in sorted(self._inbox, key=lambda item: item[:2])]
            self._inbox = []
        self._apply_all(rest)
        for decision in self.engine.close(self._last_t):
            self._decided(decision)
        self._state = self._snapshot()
        self._summary = RunSummary(self._frames, self._first_t, self._last_t, self._state, self.times,
                                   self.writer.warnings)
        self.writer.close()
        spec = self.setup.spec
        replayed = replay(read_log(self.writer.events_path), spec.game, self.setup.rules_config)
        source_info: dict[str, Any] = {"video": spec.source, "events": str(self.writer.events_path),
                                       "frames": self._frames}
        if self.setup.game.watches_play_line:  # were Play Line fouls by the body watched?
            source_info.update({"pose": "on"} if self.setup.pose_model else {"pose": "off", "warnings": [POSE_OFF]})
        self.writer.write_result(build_result(replayed, source_info))
        save_calibration(self.pipeline.calibration, spec.out / CALIBRATION_FILE)  # the review tools draw with it
        if spec.annotate:
            from review.annotate import annotate, open_review

            self.annotated = annotate(open_review(spec.out, spec.source, profile=spec.profile),
                                      spec.out / ANNOTATED_FILE, progress=self.progress)
        return self._summary

    def close(self) -> None:
        """Close the run folder's files (a finished run is closed already); later inputs are refused. Inputs
        still waiting (the run stopped on an error) are answered refused and flagged in decisions.jsonl."""
        with self._lock:
            self._closed = True
            waiting, self._inbox = self._inbox, []
        for t, _, event, future in sorted(waiting, key=lambda item: item[:2]):
            reason = "the run ended before the input was applied"
            if not self.writer.closed:
                self._warn(max(t, self._last_t), f"umpire input {event.TYPE} at {t:g}s not applied: {reason}; "
                                                 "please review", review=True)
            if future is not None:
                future.set_result(Verdict(False, reason=reason))
        self.writer.close()

    def __enter__(self) -> RefereeSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ umpire inputs and state

    def submit(self, event: Event) -> Future[Verdict]:
        """An umpire input from any thread, applied in time order before the next frame (an input timed
        before what the referee has already applied is logged at that time, so the log stays in time order).
        The future says whether the engine accepted it; a refused one is also flagged for review."""
        if not isinstance(event, UMPIRE_INPUTS):
            raise InputError(f"{event.TYPE} is an observation, not an umpire input; the umpire can send "
                             f"{', '.join(cls.TYPE for cls in UMPIRE_INPUTS)}")
        future: Future[Verdict] = Future()
        with self._lock:
            if self._closed:
                raise InputError("the run has ended; start a new run or correct it with `referee correct`")
            self._queue(event, future)
        return future

    def state(self) -> RefereeState:
        """The match as it stands after the last frame or input applied."""
        return self._state

    def _queue(self, event: Event, future: Future[Verdict] | None) -> None:
        self._inbox.append((event.t, self._arrivals, event, future))
        self._arrivals += 1

    def _due(self, t: float) -> list[tuple[Event, Future[Verdict] | None]]:
        with self._lock:
            due = sorted((item for item in self._inbox if item[0] <= t), key=lambda item: item[:2])
            self._inbox = [item for item in self._inbox if item[0] > t]
        return [(event, future) for _, _, event, future in due]

    def _apply_all(self, inputs: list[tuple[Event, Future[Verdict] | None]]) -> None:
        for event, future in inputs:
            verdict = self._apply(replace(event, t=max(event.t, self._last_t)) if event.t < self._last_t else event)
            if future is not None:
                assert verdict is not None  # an umpire input always gets one
                future.set_result(verdict)

    # ------------------------------------------------------------------ one event

    def _apply(self, event: Event) -> Verdict | None:
        """Check an event with the engine, then log and feed it, or flag why not. Umpire inputs get a verdict."""
        self._last_t = max(self._last_t, event.t)
        if isinstance(event, GameStart):
            self.pipeline.note(event)  # the detector learns these players' colours
        logged = event if event.id else replace(event, id=f"L{self.writer.lines + 1}")
        umpire = isinstance(event, UMPIRE_INPUTS)
        refusal = self.engine.check(logged)
        if isinstance(event, TableSettled) and refusal:
            # a misread settle (more balls of a colour than a player owns) is the pipeline's error: flagged and
            # dropped; the next settle reads the table again
            self._warn(event.t, f"table reading dropped: {refusal}; please review", review=True)
            return None
        if refusal and not umpire:
            self._warn(event.t, f"{event.TYPE} at {event.t:g}s refused by the rules engine ({refusal}); left out "
                                "of the event log, please review", review=True)
            return None
        self.pipeline.note(event)
        if isinstance(event, TableSettled) and event.confidence < self.setup.pipeline.review.review_confidence:
            self._warn(event.t, f"low-confidence table reading ({event.confidence:.2f}); please review", review=True)
        if refusal:  # an input that contradicts what vision saw (a misread, or a wrong session line)
            self._warn(event.t, f"umpire input {event.TYPE} at {event.t:g}s refused by the rules engine "
                                f"({refusal}); left out of the event log, please review", review=True)
            return Verdict(False, reason=refusal)
        self.writer.event(event)
        self._changed = True
        for decision in self.engine.feed(logged):
            self._decided(decision)
        if isinstance(event, (Confirm, Overturn)):
            self._review = [flag for flag in self._review if flag.cause != event.target]
        return Verdict(True, event_id=logged.id) if umpire else None

    def _decided(self, decision: Decision) -> None:
        self._changed = True
        self.writer.decision(decision)
        self._recent.append(decision)
        if decision.flagged:
            self._review.append(ReviewFlag(decision.t, decision.summary, decision.cause))

    def _warn(self, t: float, message: str, review: bool = False) -> None:
        self._changed = True
        if review:
            self.writer.warning(t, message, review=True)
            self._review.append(ReviewFlag(t, message))
        else:
            self.writer.warning(t, message)

    def _source_warning(self, t: float, message: str) -> None:
        """A live source's reader thread warns (a dropped connection): written by the refereeing thread."""
        with self._lock:
            self._source_warnings.append((t, message))
        self._say(t, message)

    def _write_source_warnings(self) -> None:
        with self._lock:
            waiting, self._source_warnings = self._source_warnings, []
        for t, message in waiting:
            self._warn(t, message)

    def _refresh(self) -> None:
        """Publish the state: rebuilt from the engine when something was applied or flagged since, else only
        its time and frame count move on (the engine's standings change only when it is fed)."""
        if self._changed:
            self._state, self._changed = self._snapshot(), False
        elif (self._state.t, self._state.frames) != (self._last_t, self._frames):
            self._state = replace(self._state, t=self._last_t, frames=self._frames)

    def _snapshot(self) -> RefereeState:
        standings = self.engine.standings()
        return RefereeState(self.setup.spec.game, self._last_t, self._frames, standings,
                            self.engine.state() if standings.players else None, tuple(self._recent),
                            tuple(self._review))


def _named_detector(spec: RunSpec, config: PipelineConfig) -> DetectorFactory:
    from vision.detect import make_detector  # the backends load only when a run needs them

    def detector(first_image: Any, mapper: Any, players: list[str], samples: dict[str, Any]) -> Any:
        return make_detector(spec.detector, first_image, mapper, players, samples, config)

    return detector
