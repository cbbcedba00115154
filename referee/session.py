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

import os
import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, replace
from enum import Enum
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Generator

from calibration.calibrate import Calibration, load_calibration, save_calibration
from calibration.profile import DEFAULT_PROFILES, TableProfile, load_profile
from record.manifest import Manifest, copy_input, read_manifest, sha256_file, write_manifest
from record.run_folder import (
    ANNOTATED_FILE,
    CALIBRATION_FILE,
    DECISIONS_FILE,
    EVENTS_FILE,
    RESULT_FILE,
    TRACKS_FILE,
    RecordMismatch,
    RunFolder,
    RunWriter,
    WriteMode,
    append_history,
    read_result,
    read_run,
    recorded_until,
    utc_now,
)
from rules.colours import BallColour
from rules.decisions import Decision
from rules.engine import EngineState, RoundClock, RulesEngine, Standings
from rules.errors import InputError
from rules.events import (
    UMPIRE_INPUTS,
    Confirm,
    Event,
    GameStart,
    Overturn,
    PlayerSpec,
    Snapshot,
    SnapshotCorrection,
    TableSettled,
)
from rules.games import GAMES, load_config, make_engine, table_config
from rules.replay import AMENDMENTS, amend, read_log, replay, resolve_umpire_inputs
from rules.result import build_result
from rules.session import load_session
from vision.config import DEFAULT_POSE_MODEL, PipelineConfig, split_config
from vision.games import GameVision, game_vision
from vision.pipeline import (
    DetectorFactory,
    Observation,
    PipelineWarning,
    StageTimes,
    TableReader,
    TrackedFrame,
    VisionPipeline,
)
from vision.sources import Clock, FileSource, FrameSource, SystemClock, open_source
from vision.video_io import Frame

from . import __version__
from .claim import STARTS, Claim, claim_folder

if TYPE_CHECKING:
    from review.annotate import Written

POSE_OFF = "pose is off (--no-pose): Play Line fouls by the body are not watched"
RECENT_DECISIONS = 20  # calls kept in `state()` for a scoreboard's ticker

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
    players: tuple[str, ...] | None = None  # without a session: the players' ids, in seat / side order
    colours: tuple[tuple[str, BallColour], ...] = ()  # ball colours by player id, over the session's and others
    detector: str = "color"  # the ball detector backend (vision.detect.DETECTORS)
    live: bool = False  # play a video file through the live path at its own rate
    paced: bool = False  # play a video file at its own rate, refereed as a file is (every frame, pose joined by
    #                      time: the same calls as `referee run`); resumed from its record as a live run is
    pose: bool = True  # watch the players' bodies at a Play Line (games that have one)
    pose_model: Path | None = None  # None: models/build/yolo11n-pose-int8.onnx, built by `make models`
    tracks: bool = True  # write tracks.jsonl (for `referee eval` and the review video)
    annotate: bool = False  # after the run, write annotated.mp4 (needs a video file)
    start: str = "new"  # "new": --out must hold no run; "resume": continue the run in --out with the settings
    #                      it was started with (its manifest); "fresh": move a run in --out aside, start anew

    @property
    def is_stream(self) -> bool:
        return self.source.isdigit() or "://" in self.source

    @property
    def source_kind(self) -> str:
        return "camera" if self.source.isdigit() else "stream" if "://" in self.source else "file"

    @property
    def write_mode(self) -> WriteMode:
        """How the run folder's files are written: a resumed file run is refereed again from its first frame
        and checked line by line against the record (so it continues exactly as if never stopped); a resumed
        live run rebuilds the match from events.jsonl and goes on from the feed."""
        if self.start != "resume":
            return WriteMode.NEW
        return WriteMode.APPEND if self.is_stream or self.live or self.paced else WriteMode.VERIFY


@dataclass(frozen=True)
class Setup:
    """A run specification loaded and checked: everything a session needs, nothing written yet."""

    spec: RunSpec
    game: GameVision
    profile: TableProfile
    calibration: Calibration | None
    rules_config: dict[str, Any]
    pipeline: PipelineConfig
    umpire: tuple[Event, ...]  # the session's inputs (or the game's defaults for the players); the game_start
    #                            carries each player's ball colour where one is given
    pose_model: Path | None  # None: bodies at the Play Line are not watched
    manifest: Manifest | None = None  # the manifest of the run being resumed


def prepare(spec: RunSpec) -> Setup:
    """Load every input of `spec` and check it; any problem is an InputError naming it. A resumed run's
    settings come from its folder's manifest (`spec` then names only the folder, and the source when it
    moved). Nothing is written."""
    if spec.start not in STARTS:
        raise InputError(f"unknown start {spec.start!r}; use one of {', '.join(STARTS)}")
    manifest = None
    if spec.start == "resume":
        spec, manifest = _resumed_spec(spec)
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
    # the table's own settings (slots per Position) come from its profile; the manifest records them
    rules_config = table_config(rules_config, profile.rules_settings, profile.name)
    engine = make_engine(spec.game, rules_config)  # the rules config is checked now, not at the first frame
    if session:
        umpire = session.events
    else:
        players = spec.players or game.default_players
        twice = sorted({p for p in players if players.count(p) > 1})
        if twice:
            raise InputError(f"--players lists {', '.join(twice)} twice; give each player once")
        umpire = game.default_session(players)
    starts = [event for event in umpire if isinstance(event, GameStart)]
    named = f"session file {spec.session}" if session else f"--players {','.join(spec.players or ())}"
    if not starts:
        raise InputError(f"{named} has no game_start; add a game_start line naming the players")
    refusal = engine.check(starts[0])
    if refusal:
        raise InputError(f"{named}: {refusal}")
    umpire = _with_colours(umpire, spec, profile, calibration, pipeline)
    pose_model = None
    if game.watches_play_line and spec.pose:
        pose_model = spec.pose_model or DEFAULT_POSE_MODEL
        if not pose_model.exists():
            raise InputError(f"pose model {pose_model} is missing; build it with `make models`, or pass --no-pose "
                             "(Play Line fouls by the body are then not watched)")
        if manifest is not None and spec.write_mode is WriteMode.VERIFY \
                and sha256_file(pose_model) != manifest.pose_model_sha256:
            raise InputError(f"pose model {pose_model} is not the one the run in {spec.out} was started with, so "
                             "it cannot be continued exactly; start afresh with --fresh")
    return Setup(spec, game, profile, calibration, rules_config, pipeline, tuple(umpire), pose_model, manifest)


def _with_colours(umpire: tuple[Event, ...], spec: RunSpec, profile: TableProfile, calibration: Calibration | None,
                  pipeline: PipelineConfig) -> tuple[Event, ...]:
    """The umpire inputs with each game_start's players given their ball colours, each the first of: the command
    line's (`spec.colours`), the game_start's own, the calibration's learned one, the profile's default; a player
    named by a colour (red, blue, ...) may have none. Colours too alike (two players', or one and the table
    surface's on the calibration frame, else the video's first frame) are refused before anything is written."""
    from vision.detect.colour_model import check_separation, colour_lab

    playing = {p.id: p for event in umpire if isinstance(event, GameStart) for p in event.players}
    unknown = sorted(set(dict(spec.colours)) - set(playing))
    if unknown:
        raise InputError(f"--colour names {', '.join(unknown)}, who {'is' if len(unknown) == 1 else 'are'} not "
                         f"playing ({', '.join(playing)}); give colours for the players")
    defaults = (dict(calibration.ball_colours) if calibration else {}, dict(profile.ball_colours))

    def coloured(player: PlayerSpec) -> PlayerSpec:
        given = ({p: c for p, c in spec.colours}, {player.id: player.colour} if player.colour else {}, *defaults)
        return replace(player, colour=next((source[player.id] for source in given if player.id in source), None))

    umpire = tuple(replace(event, players=tuple(coloured(p) for p in event.players))
                   if isinstance(event, GameStart) else event for event in umpire)
    first = next(event for event in umpire if isinstance(event, GameStart))
    colours = {p.id: p.colour for p in first.players if p.colour is not None}
    labs = {p.id: colour_lab(p.id, colours) for p in first.players}  # a player with no colour known is refused here
    fix = ("measure them with `referee calibrate --assign` (the learned colours go into the calibration), or "
           "play with balls of more distinct colours")
    check_separation(labs, _surface_before_start(spec, profile, calibration, read_video=bool(colours)),
                     pipeline.colour_model.min_delta_e, fix)
    return umpire


def _surface_before_start(spec: RunSpec, profile: TableProfile, calibration: Calibration | None,
                          read_video: bool) -> tuple[float, float, float] | None:
    """The table surface's colour: the calibration's (measured on its frame), else, if `read_video` (a colour
    was given: the nominal ones suit the shipped tables), the median of the table on a video file's first frame;
    None when neither is had before the run (the detector checks the first frame it sees)."""
    if calibration is not None and calibration.surface_lab is not None:
        return calibration.surface_lab
    if not read_video or spec.source_kind != "file" or not Path(spec.source).is_file():
        return None
    from calibration.calibrate import calibrate_markers
    from calibration.homography import CalibrationError
    from calibration.manual import read_frame
    from vision.detect.colour_model import surface_lab, table_pixels
    from vision.mapping import BoardMapper

    frame = read_frame(spec.source, 0, None)[0]
    try:
        view = calibration or calibrate_markers(frame, profile)
    except (CalibrationError, InputError):
        return None  # the markers are found later (the pipeline searches the first seconds); checked then
    return surface_lab(frame, table_pixels(frame.shape[:2], BoardMapper(view, profile).table_polygon_px(0.0)))


def _resumed_spec(spec: RunSpec) -> tuple[RunSpec, Manifest]:
    """The spec of the run recorded in `spec.out`, from its manifest; `spec.source` (if given) replaces its
    source: a moved video (the same bytes) or a camera's new address."""
    folder = spec.out
    if not folder.is_dir():
        raise InputError(f"--out {folder} does not exist, so there is no run to resume; drop --resume to start one")
    manifest = read_manifest(folder)
    source = spec.source or manifest.source
    if manifest.source_kind == "file":
        path = Path(source)
        if not path.is_file():
            raise InputError(f"the run's video {source} is not there; pass the video (moved or copied) as SOURCE")
        if sha256_file(path) != manifest.source_sha256:
            raise InputError(f"{source} is not the video the run in {folder} was started with (its content "
                             "differs); pass that video as SOURCE, or start afresh with --fresh")
        result = folder / RESULT_FILE
        if result.exists() and "stopped" not in read_result(result):
            raise InputError(f"the run in {folder} finished: it refereed {source} to its end, so there is nothing "
                             "to resume; start afresh with --fresh to referee the video again")
    resumed = RunSpec(source, manifest.game, folder, profile=manifest.input_path(folder, "profile"),
                      calibration=manifest.input_path(folder, "calibration"),
                      config=manifest.input_path(folder, "config"), session=manifest.input_path(folder, "session"),
                      players=manifest.players, colours=manifest.colours, detector=manifest.detector,
                      live=manifest.live,
                      paced=manifest.paced, pose=manifest.pose,
                      pose_model=Path(manifest.pose_model) if manifest.pose_model else None, tracks=manifest.tracks,
                      annotate=manifest.annotate, start="resume")
    if RunSpec(source, "", folder).source_kind != manifest.source_kind:
        raise InputError(f"SOURCE {source} is a {resumed.source_kind}, but the run was started on a "
                         f"{manifest.source_kind}; pass the run's own kind of source")
    return resumed, manifest


def _manifest(setup: Setup, folder: Path) -> Manifest:
    """Copy the run's input files into the folder and describe the run (record.manifest)."""
    spec = setup.spec
    inputs = {}
    profile = spec.profile or spec.game
    if str(profile) in DEFAULT_PROFILES:
        shipped = resources.files("calibration.profiles").joinpath(DEFAULT_PROFILES[str(profile)])
        inputs["profile"] = copy_input(folder, "profile", str(profile), shipped.read_bytes(), ".json")
    else:
        inputs["profile"] = copy_input(folder, "profile", str(profile), Path(profile).read_bytes(), Path(profile).suffix)
    for role, path in (("calibration", spec.calibration), ("config", spec.config), ("session", spec.session)):
        if path is not None:
            inputs[role] = copy_input(folder, role, str(path), path.read_bytes(), path.suffix)
    model = setup.pose_model
    return Manifest(
        game=spec.game, source=spec.source, source_kind=spec.source_kind,
        source_sha256=sha256_file(spec.source) if spec.source_kind == "file" else None, live=spec.live,
        paced=spec.paced,
        detector=spec.detector, pose=spec.pose, pose_model=None if model is None else str(model),
        pose_model_sha256=None if model is None else sha256_file(model), tracks=spec.tracks, annotate=spec.annotate,
        players=spec.players, rules_config=setup.rules_config, inputs=inputs, referee_version=__version__,
        created_at=utc_now(), colours=spec.colours)



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
    table: Snapshot | None = None  # the balls at rest as last read (with the umpire's correction); None: not yet
    table_event: str | None = None  # the id of the table_settled that read it (what a snapshot_correction targets)

    @property
    def clock_s(self) -> float | None:
        """The round clock now: time left when it counts down, time played otherwise; None without rounds."""
        clock = None if self.engine is None else RoundClock.of(self.engine)
        return None if clock is None else clock.at(self.t)


class StopReason(Enum):
    """Why a run stopped before its source ended; result.json's "stopped" says it (docs/result.md)."""

    INTERRUPTED = "interrupted"  # Ctrl-C (SIGINT): the CLI exits 130
    TERMINATED = "terminated"  # SIGTERM: exit 143
    SOURCE_LOST = "source_lost"  # a live feed did not come back in time (exit 2)
    ERROR = "error"  # anything else that stopped the run (exit 1 or 2)


@dataclass(frozen=True)
class Stop:
    reason: StopReason
    message: str = ""


@dataclass(frozen=True)
class RunSummary:
    frames: int
    first_t: float
    last_t: float
    state: RefereeState
    times: StageTimes
    warnings: int
    stopped: Stop | None = None  # None: the source ended (the whole video, or a stream that finished)
    caught_up: bool = True  # False: a resumed run stopped before it was past what was recorded already

    @property
    def standings(self) -> Standings:
        return self.state.standings


class RefereeSession:
    """One match being refereed; see the module docstring."""

    def __init__(self, setup: Setup, source: FrameSource, writer: RunWriter, pipeline: VisionPipeline,
                 say: Say | None = None, progress: bool = False, claim: Claim | None = None,
                 record: RunFolder | None = None, pace: Clock | None = None) -> None:
        self.setup = setup
        self.claim = claim
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
        self._stop: Stop | None = None  # asked to stop (a signal, the console): the run ends at the next frame
        self._pace = pace  # a paced file: each frame waits for its presentation time on this clock
        self._woken = threading.Event()  # set by stop(): cuts a pacing wait short
        self._gaps: list[tuple[float, float]] = []  # feed gaps not yet tied to the settle after them
        self._gaps_seen = 0  # of the source's `gaps` (a live source's outages), those written so far
        self._restart_gaps: list[tuple[float, float]] = []  # a resumed live feed: the time the referee was down
        self._shift: float | None = None  # a resumed live feed: added to its times, so the match clock goes on
        self._resumed_at: float | None = None  # a resumed live run: the last time the record held
        self._record_mtime = 0.0  # a resumed live run: when its record was last written (wall clock)
        self._log: list[Event] = []  # the events written to events.jsonl (a resumed run's included), in order
        self._table: TableSettled | None = None  # the table as last read, with the umpire's corrections
        self.last_tracked: TrackedFrame | None = None  # the latest frame's tracks and detections (a live video)
        umpire = setup.umpire
        if record is not None and record.events:
            self._restore(record)
            umpire = tuple(event for event in umpire if event.t > self._last_t)  # the rest were answered
        for event in umpire:
            self._queue(event, None)
        self._state = self._snapshot()

    @classmethod
    def open(cls, spec: RunSpec, *, source: FrameSource | None = None, detector: DetectorFactory | None = None,
             table_reader: TableReader | None = None, clock: Clock | None = None,
             say: Say | None = None, progress: bool = False) -> RefereeSession:
        """Prepare `spec`, open its source, then (only then) its run folder. `source`, `detector` and
        `table_reader` replace the ones the spec names (tests, tools); `clock` paces a live source; `say`
        hears the warnings meant for whoever runs the referee; `progress` shows the annotating's progress."""
        warming = None
        if detector is None:
            from vision.detect import warm_up  # the backends load only when a run needs them

            warming = warm_up(spec.detector)  # while the session opens
        setup = prepare(spec)
        spec = setup.spec
        session: RefereeSession | None = None

        def source_warning(t: float, message: str) -> None:  # a live source warns once its frames are read
            assert session is not None
            session._source_warning(t, message)

        what = f"referee run {spec.source}"
        claim = None
        record = None
        start_t = None
        try:
            if spec.start == "resume":  # the folder is locked before its record is read
                claim = claim_folder(spec.out, spec.start, what)
                if spec.write_mode is WriteMode.APPEND and _holds_events(spec.out):
                    record = read_run(spec.out, tracks=False)
                    until = recorded_until(spec.out) if spec.live or spec.paced else None
                    start_t = None if until is None else until + 1e-6  # the frames after the last one recorded
            if source is None:
                source = open_source(spec.source, setup.pipeline.source, live=spec.live, on_warning=source_warning,
                                     clock=clock, start_t=start_t)
            pose = None
            if setup.pose_model is not None:
                from vision.pose import PoseEstimator
                from vision.pose_watch import PoseWatch

                # beside the frame loop; a live source never waits for it, a file is refereed the same however fast
                estimator = PoseEstimator(setup.pose_model, setup.pipeline.pose.pose_threads,
                                          input_px=setup.pipeline.pose.pose_input_px)
                pose = PoseWatch(estimator, setup.profile, setup.pipeline.pose, setup.pipeline.play_line,
                                 live=source.live, strip=setup.pipeline.line_strip)
            balls = make_engine(spec.game, setup.rules_config).balls_per_player
            pipeline = VisionPipeline(setup.game, setup.profile, setup.pipeline, detector or _named_detector(
                                      spec, setup.pipeline, setup.umpire, balls, warming), setup.calibration,
                                      table_reader, pose, record_tracks=spec.tracks)
            if isinstance(source, FileSource):  # a file's frames are halved on its decode thread, ahead of the loop
                source.prepare = pipeline.prepare
            if claim is None:  # a new run: its folder is taken only once every input has been read and loaded
                claim = claim_folder(spec.out, spec.start, what)
                write_manifest(spec.out, _manifest(setup, spec.out))
            writer = RunWriter(spec.out, tracks=spec.tracks, mode=spec.write_mode)
        except BaseException:
            if claim is not None:
                claim.release()
            raise
        try:
            pace = (clock or SystemClock()) if spec.paced and not source.live else None
            session = cls(setup, source, writer, pipeline, say, progress, claim, record, pace)
        except BaseException:
            writer.close()
            claim.release()
            raise
        entry: dict[str, Any] = {"event": "resumed" if spec.start == "resume" else "started", "pid": os.getpid(),
                                 "referee_version": __version__, "source": spec.source,
                                 "mode": spec.write_mode.value}
        if claim.moved_aside is not None:
            entry["moved_aside"] = str(claim.moved_aside)
        if session._resumed_at is not None:
            entry["from_t"] = session._resumed_at
        append_history(spec.out, entry)
        if setup.game.watches_play_line and setup.pose_model is None and record is None:
            writer.warning(0.0, POSE_OFF)
            session._say(0.0, POSE_OFF)
        return session

    def stop(self, reason: StopReason, message: str = "") -> None:
        """Ask the run to stop at the next frame and finish its record (result.json marked "stopped"). Safe
        from a signal handler or another thread: it only sets a flag and wakes a live source."""
        if self._stop is None:
            self._stop = Stop(reason, message)
        threading.Thread(target=self._woken.set, name="stop pacing", daemon=True).start()  # takes no lock here
        stop_source = getattr(self.source, "stop", None)
        if stop_source is not None:
            stop_source()

    # ------------------------------------------------------------------ the run

    def run(self, on_frame: Callable[[Frame, RefereeState], None] | None = None) -> RunSummary:
        """Referee the source to its end (or until `stop`), then `finish`. A run that fails on the way still
        finishes its record (result.json marked "stopped") before the error goes up."""
        stream = self._frames_from_source()
        try:
            while self._stop is None:
                start = time.perf_counter()
                frame = next(stream, None)
                self.times.add("decode", start)
                if frame is None or self._stop is not None:
                    break
                if self.process(frame) and on_frame is not None:
                    on_frame(frame, self._state)
        except RecordMismatch:
            raise  # the record and this run disagree: nothing more is written
        except InputError as error:
            self._finish_after_error(StopReason.SOURCE_LOST if self.source.live else StopReason.ERROR, str(error))
            raise
        except KeyboardInterrupt:  # a second Ctrl-C while the first was being handled
            self._finish_after_error(StopReason.INTERRUPTED, "stopped by a second SIGINT")
            raise
        except BaseException as error:
            self._finish_after_error(StopReason.ERROR, f"{type(error).__name__}: {error}")
            raise
        finally:
            stream.close()  # a live source's reader thread stops with it
        return self.finish(self._stop)

    def _frames_from_source(self) -> Generator[Frame, None, None]:
        """The source's frames; a resumed live feed's times are moved on past what the record holds, by the
        wall time the referee was down, and that downtime is a feed gap. A paced file's frames are given out no
        sooner than their presentation times (from the first frame's), never dropped: a slow referee falls
        behind the video instead (a resumed run's catching up with its record is not paced)."""
        start: tuple[float, float] | None = None  # (clock time, frame time) of the first paced frame
        for frame in self.source.frames():
            if self._pace is not None and not self.writer.catching_up:
                start = start or (self._pace.now(), frame.t)
                self._pace.sleep(max(0.0, (frame.t - start[1]) - (self._pace.now() - start[0])), self._woken)
            if self._resumed_at is not None and self.setup.spec.is_stream:
                if self._shift is None:
                    down = max(0.0, time.time() - self._record_mtime)
                    self._shift = self._resumed_at + max(down, 1e-3) - frame.t
                    self._restart_gaps.append((self._resumed_at, frame.t + self._shift))
                frame = Frame(frame.index, frame.t + self._shift, frame.image)
            yield frame

    def _finish_after_error(self, reason: StopReason, message: str) -> None:
        """Keep what was recorded readable after an error: result.json marked stopped, when there is a match."""
        if self._summary is not None or self.pipeline.calibration is None or self._first_t is None:
            return
        try:
            self.finish(Stop(reason, message))
        except Exception as second:  # the first error is the one to report; this one is said, not lost
            self._say(self._last_t, f"could not finish the record after the error: {second}")

    def process(self, frame: Frame) -> bool:
        """One frame: the umpire inputs due by its time, then what vision sees on it. False while the table's
        markers are still being looked for (nothing is refereed yet)."""
        self._first_t = frame.t if self._first_t is None else self._first_t
        self._write_source_warnings()
        if not self.pipeline.holding:  # a settle held back for pose (live) goes into the log first
            self._apply_all(self._due(frame.t))
        self._refresh()
        if not self.pipeline.find_table(frame, self._first_t, self.source.name):
            return False
        self._last_t = max(self._last_t, frame.t)
        seen = self.pipeline.observe(frame, self._state.standings.to_play)
        if seen.tracked is not None:
            self.writer.frame(seen.tracked.t, seen.tracked.tracks, seen.tracked.detections)
            self.last_tracked = seen.tracked
        start = time.perf_counter()
        self._observed(seen.observations)
        self.times.add("rules", start)
        self._frames += 1
        self._refresh()
        return True

    def _observed(self, observations: list[Observation]) -> None:
        for item in observations:
            if isinstance(item, PipelineWarning):
                self._warn(item.t, item.message, item.review)
            else:
                self._apply(item)

    def finish(self, stop: Stop | None = None) -> RunSummary:
        """The source has ended: apply the umpire inputs still waiting, let the rules finish (the round clock),
        write result.json and the calibration (and the annotated video when asked for).

        With `stop` the match is not over: inputs still waiting and the round clock are left to a resumed
        run (`--resume`), and result.json (the replay of what was recorded) says "stopped". A resumed run
        stopped before it got past the record writes nothing: the record is as it was."""
        if self._summary is not None:
            return self._summary
        self._write_source_warnings()
        # pose's runs of the last frames, and a settle held back for them; a stopped file run leaves them to its
        # resume (refereed again from the start, it applies them where this run would have gone on to)
        self._observed(self.pipeline.close(flush=stop is None or self.source.live))
        name = self.source.name
        spec = self.setup.spec
        if stop is None and self._first_t is None:
            raise InputError(f"source {name} gave no frames; check the video or the stream")
        if stop is None and self.pipeline.calibration is None:
            raise InputError(f"no table markers found in {name}; point the camera at the table or pass --calibration")
        caught_up = not self.writer.catching_up
        if stop is None:
            with self._lock:
                self._closed = True
                rest = [(event, future) for _, _, event, future in sorted(self._inbox, key=lambda item: item[:2])]
                self._inbox = []
            self._apply_all(rest)
            for decision in self.engine.close(self._last_t):
                self._decided(decision)
        self._state = self._snapshot()
        self._summary = RunSummary(self._frames, self._first_t or 0.0, self._last_t, self._state, self.times,
                                   self.writer.warnings, stop, caught_up)
        left = self._refuse_waiting() if stop is not None else []
        self.writer.close()
        history: dict[str, Any] = {"event": "finished" if stop is None else "stopped", "t": round(self._last_t, 4),
                                   "frames": self._frames}
        if stop is not None:
            history.update(reason=stop.reason.value, message=stop.message, caught_up=caught_up, waiting=left)
        if self.pipeline.calibration is not None and caught_up:
            save_calibration(self.pipeline.calibration, spec.out / CALIBRATION_FILE)  # the review tools draw with it
        if caught_up and self.writer.lines:
            replayed = replay(read_log(self.writer.events_path), spec.game, self.setup.rules_config)
            for warning in replayed.warnings:  # e.g. shots after the game ended: logged, never scored
                self._say(self._last_t, warning)
            source_info: dict[str, Any] = {"video": spec.source, "events": str(self.writer.events_path),
                                           "frames": self._frames}
            if self.setup.game.watches_play_line:  # were Play Line fouls by the body watched?
                source_info.update({"pose": "on"} if self.setup.pose_model else {"pose": "off",
                                                                                  "warnings": [POSE_OFF]})
            result = build_result(replayed, source_info)
            if stop is not None:
                result["stopped"] = {"reason": stop.reason.value, "t": round(self._last_t, 4),
                                     "message": stop.message}
            self.writer.write_result(result)  # last: a folder with a result (not stopped) is a finished run
        append_history(spec.out, history)
        if spec.annotate and stop is None:
            from review.annotate import annotate, open_review

            self.annotated = annotate(open_review(spec.out, spec.source, profile=spec.profile),
                                      spec.out / ANNOTATED_FILE, progress=self.progress)
        return self._summary

    def close(self) -> None:
        """Close the run folder's files (a finished run is closed already) and give up its lock; later inputs
        are refused. Inputs still waiting (the run stopped on an error) are answered refused and flagged in
        decisions.jsonl. Pose's worker thread is stopped."""
        try:
            self.pipeline.close()
        finally:
            self._close_record()

    def _close_record(self) -> None:
        left = self._refuse_waiting()
        self.writer.close()
        if self.claim is not None:
            if self._summary is None:  # stopped on an error before anything could be finished
                append_history(self.setup.spec.out, {"event": "stopped", "reason": StopReason.ERROR.value,
                                                     "t": round(self._last_t, 4), "frames": self._frames,
                                                     "waiting": left})
            self.claim.release()
            self.claim = None

    def _refuse_waiting(self) -> list[str]:
        """Answer the inputs still waiting as refused: a console's are flagged for review in decisions.jsonl;
        a session file's stay in that file for a resumed run to apply, and are returned (described)."""
        with self._lock:
            self._closed = True
            waiting, self._inbox = self._inbox, []
        left = []
        for t, _, event, future in sorted(waiting, key=lambda item: item[:2]):
            if future is None:
                left.append(f"{event.TYPE} at {t:g}s")
                continue
            reason = "the run ended before the input was applied"
            if not self.writer.closed and not self.writer.catching_up:
                self._warn(max(t, self._last_t), f"umpire input {event.TYPE} at {t:g}s not applied: {reason}; "
                                                 "please review", review=True)
            future.set_result(Verdict(False, reason=reason))
        return left

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
        if isinstance(logged, AMENDMENTS):
            return self._amend(logged)
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
        self._log.append(logged)
        self._changed = True
        if isinstance(logged, TableSettled):
            self._table = logged
        for decision in self.engine.feed(logged):
            self._decided(decision)
        if isinstance(event, TableSettled) and self._gaps:
            spans = ", ".join(f"{start:.2f}-{end:.2f}s" for start, end in self._gaps)
            self._gaps = []
            message = (f"feed gap {spans} before the table settled at {event.t:.2f}s: what was played during it was "
                       "not seen, the shot is scored from the tables before and after; please review")
            self.writer.warning(event.t, message, review=True, cause=logged.id)
            self._review.append(ReviewFlag(event.t, message, logged.id))
        return Verdict(True, event_id=logged.id) if umpire else None

    def _amend(self, event: Overturn | SnapshotCorrection | Confirm) -> Verdict:
        """An umpire input that changes how earlier events count (overturn, snapshot correction, confirm): the
        match is replayed with it, so the live state is what `referee replay` of the folder gives; refused, and
        flagged, when it cannot stand (its target, or a later event the replay would then refuse)."""
        try:
            engine, call = amend([*self._log, event], self.setup.spec.game, self.setup.rules_config)
        except InputError as error:
            self._warn(event.t, f"umpire input {event.TYPE} at {event.t:g}s refused ({error}); left out of the event "
                                "log, please review", review=True)
            return Verdict(False, reason=str(error))
        self.writer.event(event)
        self._log.append(event)
        self.engine = engine
        self._decided(call)
        self._review = [flag for flag in self._review if flag.cause != event.target]
        self._read_table_again()
        return Verdict(True, event_id=event.id)

    def _read_table_again(self) -> None:
        """The table as the log now says it is (the last settle, with the corrections that stand): shown in the
        state, and the prior of the next reading."""
        stream, _ = resolve_umpire_inputs(self._log)
        self._table = next((e for e in reversed(stream) if isinstance(e, TableSettled)), None)
        if self._table is not None:
            self.pipeline.note(self._table)

    def _decided(self, decision: Decision) -> None:
        self._changed = True
        self.writer.decision(decision)
        self._recent.append(decision)
        if decision.flagged:
            self._review.append(ReviewFlag(decision.t, decision.summary, decision.cause))

    def _warn(self, t: float, message: str, review: bool = False, **fields: Any) -> None:
        self._changed = True
        if review:
            self.writer.warning(t, message, review=True, **fields)
            self._review.append(ReviewFlag(t, message))
        else:
            self.writer.warning(t, message, **fields)

    def _source_warning(self, t: float, message: str) -> None:
        """A live source's reader thread warns (a dropped connection): written by the refereeing thread."""
        with self._lock:
            self._source_warnings.append((t, message))
        self._say(t, message)

    def _write_source_warnings(self) -> None:
        """The source's warnings and feed gaps (a live source's reader thread adds to both), written here by
        the refereeing thread; a gap also flags the next settle for review."""
        with self._lock:
            waiting, self._source_warnings = self._source_warnings, []
        gaps = getattr(self.source, "gaps", [])
        shift = self._shift or 0.0  # a resumed feed's times are moved on (`_frames_from_source`); so are its gaps
        new = self._restart_gaps + [(start + shift, end + shift) for start, end in gaps[self._gaps_seen:]]
        self._gaps_seen = len(gaps)
        self._restart_gaps = []
        for t, message in waiting:
            self._warn(t + shift, message)
        for start, end in new:
            self._say(start, f"feed gap {start:.2f}-{end:.2f}s")
            self._warn(start, f"feed gap {start:.2f}-{end:.2f}s ({end - start:.1f}s without frames): what "
                              "happened on the table meanwhile was not seen", gap=[round(start, 4), round(end, 4)])
            self._gaps.append((start, end))

    def _restore(self, record: RunFolder) -> None:
        """A resumed live run: the match as recorded, from events.jsonl through the engine (checked and fed as
        the run did), the vision's prior from the same events, the calls missing at the end of decisions.jsonl
        (the run was killed between an event and its calls) written now, and the open review flags."""
        decided: list[Decision] = []
        for event in record.events:
            self._log.append(event)
            try:
                if isinstance(event, AMENDMENTS):  # as the run applied it: the match replayed with it
                    self.engine, call = amend(self._log, self.setup.spec.game, self.setup.rules_config)
                    decided.append(call)
                    continue
                decided += self.engine.feed(event)
            except InputError as refusal:
                raise RecordMismatch(f"{self.writer.events_path} {event.id}: the rules engine refuses it now "
                                     f"({refusal}); the run cannot be continued, start afresh with --fresh") from None
            self.pipeline.note(event)
        recorded = sum(1 for line in record.decision_lines if line["type"] == "decision")
        for decision in decided[recorded:]:
            self.writer.decision(decision)
        resolved = {e.target for e in record.events if isinstance(e, (Confirm, Overturn))}
        self._read_table_again()
        for decision in decided:
            self._recent.append(decision)
            if decision.flagged and decision.cause not in resolved:
                self._review.append(ReviewFlag(decision.t, decision.summary, decision.cause))
        for line in record.warnings:
            if line.get("review") and line.get("cause") not in resolved:
                cause = line.get("cause")
                self._review.append(ReviewFlag(line["t"], line["message"], cause if isinstance(cause, str) else None))
        self._review.sort(key=lambda flag: flag.t)
        until = recorded_until(record.dir)
        self._last_t = max(record.events[-1].t, until if until is not None else 0.0)
        self._resumed_at = self._last_t
        self._record_mtime = max((record.dir / name).stat().st_mtime for name in (EVENTS_FILE, DECISIONS_FILE,
                                 TRACKS_FILE) if (record.dir / name).exists())
        self._changed = True

    def _refresh(self) -> None:
        """Publish the state: rebuilt from the engine when something was applied or flagged since, else only
        its time and frame count move on (the engine's standings change only when it is fed)."""
        if self._changed:
            self._state, self._changed = self._snapshot(), False
        elif (self._state.t, self._state.frames) != (self._last_t, self._frames):
            self._state = replace(self._state, t=self._last_t, frames=self._frames)

    def _snapshot(self) -> RefereeState:
        standings = self.engine.standings()
        table = self._table
        return RefereeState(self.setup.spec.game, self._last_t, self._frames, standings,
                            self.engine.state() if standings.players else None, tuple(self._recent),
                            tuple(self._review), None if table is None else table.snapshot,
                            None if table is None else table.id)


def _holds_events(folder: Path) -> bool:
    path = folder / EVENTS_FILE
    return path.exists() and any(line.strip() for line in path.read_bytes().split(b"\n"))


def _named_detector(spec: RunSpec, config: PipelineConfig, umpire: tuple[Event, ...],
                    balls_per_player: int, warming: Future[None] | None) -> DetectorFactory:
    """The detector `spec` names, learnt on the first frame once its `warming` (`vision.detect.warm_up`) is done."""
    from vision.detect import make_detector  # the backends load only when a run needs them

    start = next((event for event in umpire if isinstance(event, GameStart)), None)
    colours = {p.id: p.colour for p in start.players if p.colour is not None} if start is not None else {}

    def detector(first_image: Any, mapper: Any, players: list[str], samples: dict[str, Any]) -> Any:
        if warming is not None:
            warming.result()
        return make_detector(spec.detector, first_image, mapper, players, samples, config, colours, balls_per_player)

    return detector
