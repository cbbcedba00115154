"""Play Line fouls in the referee loop: when pose runs, which shot a call belongs to, pose beside the frame
loop (a file refereed the same however fast pose is, a live feed that never waits for it), and the real thing
end to end on rendered video (the shooter's head over the line in play_line_foul; a shooter who stays
behind it elsewhere)."""

import json
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from clocks import GUARD_S, LockstepClock

from calibration.calibrate import calibrate_markers
from calibration.profile import load_profile
from referee.cli import main
from referee.session import RefereeSession, RunSpec
from rules.events import BallSighting, Location, Place, PlayLineCrossing, ShotStarted, Snapshot, TableSettled
from simulation.line_reach import reach_clip, reach_clips, view
from simulation.line_reach_eval import referee_clip
from vision.config import DEFAULT_POSE_MODEL, LineStripSettings, PlayLineSettings, PoseConfig, SourceConfig
from vision.play_line import PlayLineJudge
from vision.pose import COCO_KEYPOINTS, Keypoint, Person, PoseEstimator
from vision.line_strip import LineStrip, StripReach
from vision.pose_watch import Crop, PoseWatch, near_side_crop
from vision.sources import FileSource, open_source
from vision.video_io import VideoWriter

SAMPLES = Path(__file__).parents[2] / "sample_videos/starcluster"
FPS = 30


@pytest.fixture(scope="module")
def first_frame():
    """The first frame of play_line_foul and its calibration (the behind_play_line camera)."""
    frame = next(iter(FileSource(SAMPLES / "play_line_foul/video.mp4").frames()))
    profile = load_profile("starcluster")
    return frame.image, calibrate_markers(frame.image, profile), profile


def head_at(calibration, profile, beyond_mm: float) -> Person:
    """A person seen only by their head, `beyond_mm` past the Play Line (negative: behind it)."""
    line_y = profile.play_line[0][1]
    u, v = calibration.board_to_image(np.array([[320.0, line_y + beyond_mm]]))[0]
    keypoints = tuple(Keypoint(name, float(u), float(v), 0.9 if name in ("nose", "left_eye", "right_eye") else 0.0)
                      for name in COCO_KEYPOINTS)
    return Person((u - 50, v - 50, u + 50, v + 50), 0.9, keypoints)


def in_crop(person: Person, crop) -> Person:
    """A person in full-image pixels as the model finds it in the crop (this camera's crop is upright: no turns)."""
    assert crop.turns == 0
    x1, y1, x2, y2 = person.box
    return replace(person, box=(x1 - crop.x0, y1 - crop.y0, x2 - crop.x0, y2 - crop.y0),
                   keypoints=tuple(replace(k, x=k.x - crop.x0, y=k.y - crop.y0) for k in person.keypoints))


class Scripted:
    """A pose model that sees the head where the script says at each time (in the crop it is given, as the
    real model does), and counts its runs. It runs on the watch's worker thread, so it reads the frame's time
    from the pixels it is given: `stamp` writes the frame's index into the crop's first pixel."""

    def __init__(self, image, calibration, profile, reach):
        self.calibration, self.profile, self.reach = calibration, profile, reach
        height, width = image.shape[:2]
        self.crop = near_side_crop(calibration, PlayLineJudge(calibration, profile), profile,
                                   PoseConfig().pose_crop_margin_mm, (width, height))
        self.runs: list[float] = []

    def stamp(self, frame, index):
        frame[self.crop.y0, self.crop.x0] = (index % 256, index // 256, 0)

    def __call__(self, image):
        assert image.shape[:2] == (self.crop.y1 - self.crop.y0, self.crop.x1 - self.crop.x0)
        t = (int(image[0, 0, 0]) + 256 * int(image[0, 0, 1])) / FPS
        self.runs.append(t)
        beyond = self.reach(t)
        return [] if beyond is None else [in_crop(head_at(self.calibration, self.profile, beyond), self.crop)]


def settled(t):
    return TableSettled(t=t, snapshot=Snapshot((BallSighting("red", Location(Place.GROUPED)),)))


def watch_through(first_frame, reach, observations, seconds, config=PoseConfig(), shade=None):
    """Feed a PoseWatch `seconds` of 30 fps frames; `observations` maps frame index -> what vision saw then.

    The pixels only matter to the watch's change test: a block in the crop is painted `shade(t)` (default:
    white while the script has someone in view), left alone where it is None.
    """
    image, calibration, profile = first_frame
    model = Scripted(image, calibration, profile, reach)
    shade = shade or (lambda t: None if reach(t) is None else 255)
    warnings = []
    out = []
    with PoseWatch(model, profile, config) as watch:
        for i in range(round(seconds * FPS)):
            t = i / FPS
            frame = image.copy()
            model.stamp(frame, i)
            if shade(t) is not None:
                frame[model.crop.y1 - 150:model.crop.y1, model.crop.x0 + 300:model.crop.x0 + 600] = shade(t)
            watched = watch.update(t, frame, calibration, [e(t) for e in observations.get(i, ())], to_play="blue")
            out += watched.events
            warnings += watched.warnings
    return out, warnings, model.runs


def test_a_lean_before_vision_sees_the_ball_cross_is_called_on_that_shot(first_frame):
    """The head is over the line at 1.5-1.8 s; vision sees the ball cross at 1.9 s (late, as it does):
    the call is held, then emitted right after the shot_started, for its player, before the settle."""
    lean = lambda t: 50.0 if 1.5 <= t < 1.8 else -100.0 if 1.0 <= t < 2.2 else None  # noqa: E731
    out, warnings, _ = watch_through(first_frame, lean, {57: [lambda t: ShotStarted(t=t, player="red")],
                                                         120: [settled]}, 5.0)
    assert [e.TYPE for e in out] == ["shot_started", "play_line_crossing", "table_settled"]
    crossing = out[1]
    assert isinstance(crossing, PlayLineCrossing) and crossing.player == "red" and crossing.body_part == "head"
    assert crossing.t == out[0].t and crossing.confidence == pytest.approx(0.9)
    assert warnings == []


def test_one_call_per_shot_and_a_lean_with_no_shot_goes_to_review(first_frame):
    """The shooter never steps back. A lean in an open shot is called at once, and only once; the next shot
    (naming no player: the engine's player to play, blue) is watched afresh; a lean with no shot (between
    shots, or after the settle) is a review warning."""
    def lean(t):
        return 60.0 if 0.5 <= t < 1.5 or 4.0 <= t < 4.5 or 6.5 <= t < 7.0 or 8.0 <= t < 8.4 else -50.0

    out, warnings, _ = watch_through(first_frame, lean, {
        12: [lambda t: ShotStarted(t=t, player="red")], 90: [settled],
        200: [lambda t: ShotStarted(t=t)], 230: [settled]}, 9.5)
    crossings = [e for e in out if isinstance(e, PlayLineCrossing)]
    assert [c.player for c in crossings] == ["red", "blue"]
    # the first run (frame 0) opens the window when its result counts, at frame 3: from then on pose runs on every
    # frame while no call is made, the head being within `pose_near_mm` of the line. The second lean is over the
    # line from frame 195: the third run over the line is at frame 197, and its result counts at frame 200
    # (`pose_join_s` on), the frame the shot starts: the call joins its observations
    assert 0.5 < crossings[0].t < 0.8 and crossings[1].t == pytest.approx(200 / FPS)
    # a lean from 4.0 s is over the line on frames 120, 121 and 122: the third run calls it
    assert [message.split(" at ")[1][:5] for _, message in warnings] == ["4.07s", "8.07s"]
    assert warnings[0][0] == pytest.approx(5.1, abs=0.05) and "head crossed the Play Line" in warnings[0][1]
    assert "no shot seen; no call, please review" in warnings[0][1]
    kinds = [e.TYPE for e in out]
    assert kinds == ["shot_started", "play_line_crossing", "table_settled"] * 2


def test_pose_runs_slowly_while_nobody_is_at_the_line_and_fast_in_a_release_window(first_frame):
    """0-2 s someone moves about well behind the line: pose every `pose_interval_s`; 2-3 s nobody, nothing
    changes: no pose at all; from 3 s the shooter is at the line, 100 mm back: every other frame."""
    config = PoseConfig()
    reach = lambda t: -400.0 if t < 2.0 else None if t < 3.0 else -100.0  # noqa: E731
    shade = lambda t: (255 * (int(t * 4) % 2)) if t < 2.0 else None if t < 3.0 else 255  # noqa: E731
    _, _, runs = watch_through(first_frame, reach, {}, 4.0, config, shade)
    idle = [t for t in runs if t < 2.0]
    assert len(idle) == 8 and np.allclose(np.diff(idle), config.pose_interval_s, atol=0.02)
    assert len([t for t in runs if 2.0 <= t < 3.0]) <= 1  # one look finds the line empty, then none
    armed = [t for t in runs if t >= 3.25]
    assert np.allclose(np.diff(armed), 2 / FPS)  # every other frame at 30 fps


def test_a_head_leaning_over_the_line_is_called_within_200_ms(first_frame):
    """In a release window pose runs every other frame, and on every frame from the first result that shows a part
    within `pose_near_mm` of the line until a call: a head leaning in at 300 mm/s from 100 mm back has the judge's
    three runs past the margin on three frames in a row, and is called 167 ms after it crossed the line (issue 16
    asks for 200 ms; on every frame only from a run past the margin, whose result counts three frames on in a file,
    the composites' head leans from overhead took up to 233 ms). After the call, every other frame again."""
    image, calibration, profile = first_frame
    config = PoseConfig()
    lean = lambda t: -100.0 if t < 1.5 else min(-100.0 + 300.0 * (t - 1.5), 60.0)  # noqa: E731
    crossed = next(i for i in range(3 * FPS) if lean(i / FPS) > 0) / FPS
    model = Scripted(image, calibration, profile, lean)
    with PoseWatch(model, profile, config) as watch:
        for i in range(round(3.0 * FPS)):
            frame = image.copy()
            model.stamp(frame, i)
            frame[model.crop.y1 - 150:model.crop.y1, model.crop.x0 + 300:model.crop.x0 + 600] = 255
            watch.update(i / FPS, frame, calibration, [], to_play="blue")
        decided = list(watch.decided)
    assert [(judge, call.body_part) for judge, call in decided] == [("keypoints", "head")]
    runs = np.array(model.runs)
    decided_at = decided[0][1].t
    assert decided_at - crossed <= 0.2 + 1e-9
    near = next(t for t in runs if lean(t) > -config.pose_near_mm)
    assert np.allclose(np.diff(runs[(runs >= 0.5) & (runs <= near)]), 2 / FPS)  # far from the line: every other frame
    hurried = runs[(runs >= near + config.pose_join_s - 1e-9) & (runs <= decided_at + 1e-9)]
    assert len(hurried) >= 3 and np.allclose(np.diff(hurried), 1 / FPS)  # near it, once that run counts: every frame
    first_over = runs[[lean(t) > PlayLineSettings().margin_mm for t in runs]][0]
    assert decided_at == pytest.approx(first_over + 2 / FPS)
    # once the call counts (`pose_join_s` after its run), every other frame again
    assert np.allclose(np.diff(runs[runs > decided_at + config.pose_join_s - 1e-9]), 2 / FPS)


def test_pose_looks_at_the_players_side_of_the_line(first_frame):
    image, calibration, profile = first_frame
    judge = PlayLineJudge(calibration, profile)
    crop = near_side_crop(calibration, judge, profile, 300.0, (image.shape[1], image.shape[0]))
    line_px = calibration.board_to_image(np.array(profile.play_line, float))
    far_px = calibration.board_to_image(np.array([[320.0, profile.board.y_max]]))
    assert crop.y1 == image.shape[0] and crop.y0 < line_px[:, 1].min() - 50  # the line, a margin, the player
    assert crop.x0 <= line_px[:, 0].min() and crop.x1 >= line_px[:, 0].max()
    assert far_px[0, 1] < crop.y0  # not the far end of the board
    assert (crop.y1 - crop.y0) * (crop.x1 - crop.x0) < 0.5 * image.shape[0] * image.shape[1]


def referee(sample, out, *options):
    code = main(["run", str(SAMPLES / sample / "video.mp4"), "--game", "starcluster",
                 "--session", str(SAMPLES / sample / "truth.json"), "--out", str(out), "--quiet", *options])
    lines = lambda name: [json.loads(line) for line in (out / name).read_text().splitlines()]  # noqa: E731
    return code, lines("events.jsonl"), lines("decisions.jsonl")


def test_the_head_over_the_line_in_play_line_foul_voids_the_shot(tmp_path):
    """The real pose model on the rendered sample: one crossing, by the shooter (red), the head, in shot 1."""
    code, events, decisions = referee("play_line_foul", tmp_path)
    assert code == 0
    crossings = [e for e in events if e["type"] == "play_line_crossing"]
    assert len(crossings) == 1 and crossings[0]["player"] == "red" and crossings[0]["body_part"] == "head"
    kinds = [e["type"] for e in events]
    at = kinds.index("play_line_crossing")
    assert kinds[at - 1] == "shot_started" and events[at - 1]["player"] == "red" and "table_settled" in kinds[at:]
    fouls = [d["summary"] for d in decisions if d.get("kind") == "foul"]
    assert fouls == ["Play Line crossed: shot 1 by red is void, turn ends"]
    assert json.loads((tmp_path / "result.json").read_text())["source"]["pose"] == "on"


def test_a_shooter_who_stays_behind_the_line_is_never_called(tmp_path):
    """out_of_balls_bank: three shots, the shooter's head comes to 30 mm short of the line each time."""
    code, events, decisions = referee("out_of_balls_bank", tmp_path)
    assert code == 0
    assert not [e for e in events if e["type"] == "play_line_crossing"]
    assert not [d for d in decisions if "Play Line" in d.get("message", d.get("summary", ""))]


@pytest.fixture(scope="module")
def short_clip(tmp_path_factory):
    """The first second of play_line_foul (markers found, no shot yet), with its session."""
    folder = tmp_path_factory.mktemp("short")
    with VideoWriter(folder / "video.mp4", 1280, 720, FPS) as writer:
        for frame in FileSource(SAMPLES / "play_line_foul/video.mp4").frames():
            if frame.index == FPS:
                break
            writer.write(frame.image)
    (folder / "truth.json").write_text((SAMPLES / "play_line_foul/truth.json").read_text())
    return folder


def test_without_the_pose_model_the_run_stops_with_one_clear_line(short_clip, tmp_path, capsys):
    code = main(["run", str(short_clip / "video.mp4"), "--game", "starcluster", "--out", str(tmp_path), "--quiet",
                 "--pose-model", str(tmp_path / "missing.onnx")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "missing.onnx is missing; build it with `make models`, or pass --no-pose" in err


def test_no_pose_is_said_in_the_result_and_the_log(short_clip, tmp_path, capsys):
    code = main(["run", str(short_clip / "video.mp4"), "--game", "starcluster", "--session",
                 str(short_clip / "truth.json"), "--out", str(tmp_path), "--no-pose"])
    assert code == 0
    assert "Play Line fouls by the body are not watched" in capsys.readouterr().err
    source = json.loads((tmp_path / "result.json").read_text())["source"]
    assert source["pose"] == "off" and "Play Line fouls by the body are not watched" in source["warnings"][0]
    first = json.loads((tmp_path / "decisions.jsonl").read_text().splitlines()[0])
    assert first["type"] == "warning" and "not watched" in first["message"]


# ---------------------------------------------------------------- pose beside the frame loop, on real pixels

@pytest.fixture(scope="module")
def lean_frames():
    """play_line_foul's frames 0-111 (the real model sees the shooter's head come to the line from 1.1 s and over
    it at 1.53-1.77 s, frames 46-53), their calibration and the real pose model."""
    frames = []
    for frame in FileSource(SAMPLES / "play_line_foul/video.mp4").frames():
        if frame.index == 112:
            break
        frames.append(frame.image)
    profile = load_profile("starcluster")
    return frames, calibrate_markers(frames[0], profile), profile, PoseEstimator(DEFAULT_POSE_MODEL)


class Gated:
    """An estimator whose n-th run (0-based, in the order the worker starts them) returns only once the test has
    released at least n + 1 runs: the test, not the machine, decides when each result is in. Condition waits,
    with a deadlock guard only."""

    def __init__(self, estimator, fail_on=None):
        self.estimator, self.fail_on = estimator, fail_on
        self._cond = threading.Condition()
        self.started = 0  # runs begun
        self.finished = 0  # runs returned (or raised)
        self.released = 0

    def __call__(self, image):
        with self._cond:
            n = self.started
            self.started += 1
            self._cond.notify_all()
            if not self._cond.wait_for(lambda: self.released > n, timeout=GUARD_S):
                raise AssertionError(f"deadlock guard: pose run {n} was never released")
        try:
            if n == self.fail_on:
                raise RuntimeError("the pose model broke")
            return self.estimator(image)
        finally:
            with self._cond:
                self.finished += 1
                self._cond.notify_all()

    def release(self, upto):
        with self._cond:
            self.released = max(self.released, upto)
            self._cond.notify_all()

    def wait_started(self, count):
        with self._cond:
            assert self._cond.wait_for(lambda: self.started >= count, timeout=GUARD_S), "deadlock guard"


def feed(watch, frames, calibration, first, last, observations, after=None):
    """Frames first..last-1 through `watch`; `observations`: frame index -> events; `after(i)` runs after each
    frame. Returns the events and warnings in order, and the frame at which each run was started."""
    out, warnings, started = [], [], []
    for i in range(first, last):
        t = i / FPS
        before = watch.calls
        watched = watch.update(t, frames[i], calibration, [e(t) for e in observations.get(i, ())], to_play="blue")
        started += [i] * (watch.calls - before)
        out += watched.events
        warnings += watched.warnings
        if after is not None:
            after(i)
    return out, warnings, started


def shot_at(player):
    return lambda t: ShotStarted(t=t, player=player)


def test_a_file_gives_the_same_observations_however_fast_pose_is(lean_frames):
    """File mode, default `pose_join_s`: results that are in long before they count (fast) and results that come
    only once the frame loop has stopped to wait for them (slow) give the very same observations, from pose runs
    on the very same frames; the lean over the line is called on the shot, before its settle."""
    frames, calibration, profile, model = lean_frames
    script = {56: [shot_at("red")], 100: [settled]}

    # pose alone: with the pixels past the line watched too, the release window is open at the settle's frame and
    # a run started there is waited for within that frame, which a result released between frames cannot meet
    fast = Gated(model)
    with PoseWatch(fast, profile, PoseConfig(), strip=None) as watch:
        def at_once(i):  # every result is in before the next frame
            fast.release(watch.calls)
            watch.wait_idle()

        fast_run = feed(watch, frames, calibration, 30, 112, script, at_once)
        end = watch.finish()  # the source ends: the last runs are applied
        fast_run = (fast_run[0] + end.events, fast_run[1] + end.warnings, fast_run[2])
        assert watch.waits == 0

    slow = Gated(model)
    stop = threading.Event()
    with PoseWatch(slow, profile, PoseConfig(), strip=None) as watch:
        def release_when_waited_for():  # a result is released only once the loop is waiting for it
            while not stop.is_set():
                if watch.waits > slow.released:
                    slow.release(watch.waits)
                stop.wait(0.001)

        releaser = threading.Thread(target=release_when_waited_for)
        releaser.start()
        try:
            slow_run = feed(watch, frames, calibration, 30, 112, script)
            end = watch.finish()
            slow_run = (slow_run[0] + end.events, slow_run[1] + end.warnings, slow_run[2])
        finally:
            stop.set()
            releaser.join()
            slow.release(10 ** 6)
        assert watch.waits == watch.calls == len(slow_run[2])  # the loop waited for every run

    assert slow_run == fast_run
    out, warnings, started = fast_run
    assert [e.TYPE for e in out] == ["shot_started", "play_line_crossing", "table_settled"]
    assert out[1].player == "red" and out[1].body_part == "head" and out[1].t == out[0].t == 56 / FPS
    assert warnings == [] and len(started) >= 10


def test_a_live_feed_goes_on_while_pose_runs_and_the_settle_waits_for_its_result(lean_frames):
    """Live mode: with a pose run blocked, the loop goes on frame after frame, starting no other run; a settle that
    comes meanwhile is held back, and goes out once the result is in, at its own time, after the call that result
    made (the shooter's head is over the line on frames 46-53; the third run over it, on frame 48, is held: from the
    first one's result pose runs on every frame)."""
    frames, calibration, profile, model = lean_frames
    gate = Gated(model)
    with PoseWatch(gate, profile, PoseConfig(), live=True) as watch:
        def prompt_until_48(i):  # results are in at once before frame 48; the run started then is held
            if i < 48:
                gate.release(watch.calls)
                watch.wait_idle()

        out, warnings, started = feed(watch, frames, calibration, 36, 50, {47: [shot_at("red")]}, prompt_until_48)
        assert started[-3:] == [46, 47, 48] and gate.finished == len(started) - 1
        assert [e.TYPE for e in out] == ["shot_started"]
        in_flight = len(started)
        gate.wait_started(in_flight)  # the worker is in the run, blocked
        held, _, more = feed(watch, frames, calibration, 50, 62, {52: [settled]})
        assert held == [] and more == [] and watch.holding
        assert gate.started == watch.calls == in_flight and gate.finished == in_flight - 1  # no other run
        gate.release(in_flight)
        watch.wait_idle()
        after, _, _ = feed(watch, frames, calibration, 62, 63, {})
        gate.release(10 ** 6)
    assert [e.TYPE for e in after] == ["play_line_crossing", "table_settled"]
    crossing, settle = after
    assert crossing.player == "red" and crossing.body_part == "head"
    assert crossing.t == settle.t == 52 / FPS  # at the settle's own time, before it
    times = [e.t for e in out + after]
    assert times == sorted(times) and warnings == [] and not watch.holding


@pytest.mark.parametrize("live", [False, True])
def test_a_failing_pose_run_is_raised_in_the_frame_loop(lean_frames, live):
    frames, calibration, profile, model = lean_frames
    gate = Gated(model, fail_on=1)
    with PoseWatch(gate, profile, PoseConfig(), live=live) as watch:
        gate.release(10 ** 6)
        with pytest.raises(RuntimeError, match="the pose model broke"):
            for i in range(36, 112):
                watch.update(i / FPS, frames[i], calibration, [], to_play="blue")
                watch.wait_idle()  # live: the failure is in before the next frame
        assert gate.finished == 2


def test_the_session_runs_pose_live_on_a_live_source_and_stops_its_worker(short_clip, tmp_path):
    """A file played live gets the live mode (never waits), a file the deterministic one; the session's end stops
    the worker thread, and the live record is in time order."""
    video = str(short_clip / "video.mp4")
    spec = RunSpec(video, "starcluster", tmp_path / "file", session=short_clip / "truth.json")
    with RefereeSession.open(spec) as session:
        assert session.pipeline.pose is not None and not session.pipeline.pose.live
    clock = LockstepClock()
    live = clock.follow(open_source(video, SourceConfig(), live=True, clock=clock))
    spec = RunSpec(video, "starcluster", tmp_path / "live", session=short_clip / "truth.json", live=True)
    with RefereeSession.open(spec, source=live) as session:
        assert session.pipeline.pose is not None and session.pipeline.pose.live
        summary = session.run()
        assert summary.frames == FPS and session.pipeline.pose.calls > 0
    assert not [t for t in threading.enumerate() if t.name.startswith("pose-worker")]
    times = [json.loads(line)["t"] for line in (tmp_path / "live" / "events.jsonl").read_text().splitlines()]
    assert times == sorted(times)


@pytest.mark.parametrize("preset, turns", [("behind_play_line", 0), ("overhead", 1)])
def test_the_crop_stands_the_player_upright(preset, turns):
    """The table's side of the line is up in the crop pose is given, whatever way the camera looks along the line
    (the overhead preset sees the line upright in the image, the table to its right), and what pose finds there
    comes back to the pixels it stands on."""
    v = view(preset)
    judge = PlayLineJudge(v.calibration, v.profile)
    crop = near_side_crop(v.calibration, judge, v.profile, 300.0, (v.table.shape[1], v.table.shape[0]))
    assert crop.turns == turns
    a, b = (np.array(p, float) for p in v.profile.play_line)
    middle = (a + b) / 2
    image = np.zeros_like(v.table)
    near, far = v.calibration.board_to_image(np.array([middle - (0, 100), middle + (0, 100)]))
    for (x, y), level in ((near, 100), (far, 200)):  # a dot short of the line, a brighter one past it
        image[int(round(y)), int(round(x))] = level
    cut = crop.cut(image)
    (ny, nx), (fy, fx) = (np.argwhere(cut[..., 0] == level)[0] for level in (100, 200))
    assert fy < ny - 20 and abs(fx - nx) < abs(fy - ny)  # past the line is up
    keypoints = tuple(Keypoint(name, float(x), float(y), 0.9) for name, (x, y) in zip(("nose", "left_wrist"),
                                                                                       ((nx, ny), (fx, fy))))
    found = crop.to_image(Person((float(nx), float(fy), float(fx) + 1, float(ny) + 1), 0.9, keypoints))
    assert [(k.x, k.y) for k in found.keypoints] == [(round(near[0]), round(near[1])), (round(far[0]), round(far[1]))]
    x1, y1, x2, y2 = found.box
    assert x1 <= min(near[0], far[0]) + 1 and x2 >= max(near[0], far[0]) - 1 and x1 < x2 and y1 < y2


def test_a_head_over_the_line_seen_from_overhead_is_called_by_the_real_model():
    """A photographed person leaning over the line, lying sideways in the overhead camera's image: the real pose
    model found nobody on the crop as the camera sees it, and finds the head on the upright crop."""
    clip = next(c for c in reach_clips(40, seed=3, kinds=["head_lean"])
                if c.truth.preset == "overhead" and c.truth.person.startswith("bus"))
    estimator = PoseEstimator(DEFAULT_POSE_MODEL, 1, input_px=PoseConfig().pose_input_px)
    outcome = referee_clip(clip, estimator, strip=None)  # the keypoints alone
    assert outcome.called == "head" and outcome.judges[0] == "keypoints"


def test_a_pixel_call_names_the_shooters_own_hand_however_the_model_named_the_sides(first_frame):
    """From behind the line (play_line_foul's camera) a shooter's right is the image's right. An arm crossing the
    line right of the head is the right hand, whether the model named the ears as seen from behind or as if it saw
    a face; with an arm found, its hand is named by the side the body's pair of shoulders says, not by its label."""
    image, calibration, profile = first_frame
    line_y = profile.play_line[0][1]

    def at(x_mm, beyond_mm):
        return tuple(float(c) for c in calibration.board_to_image(np.array([[x_mm, line_y + beyond_mm]]))[0])

    def person(points):
        keypoints = tuple(Keypoint(name, *points.get(name, (0.0, 0.0)), 0.9 if name in points else 0.0)
                          for name in COCO_KEYPOINTS)
        return Person((0.0, 0.0, 1.0, 1.0), 0.9, keypoints)

    assert at(400, -250)[0] > at(300, -250)[0]  # board +x is the image's right on this camera
    from_behind = {"left_ear": at(270, -250), "right_ear": at(330, -250)}
    as_a_face = {"left_ear": at(330, -250), "right_ear": at(270, -250)}
    reach = StripReach(60.0, (420.0, line_y + 60.0), (410.0, line_y))  # right of the head, past the line
    with PoseWatch(lambda crop: [], profile, PoseConfig()) as watch:
        watch._judge = PlayLineJudge(calibration, profile)
        for ears in (from_behind, as_a_face):
            watch._people = [person(ears)]
            assert watch._part_at(reach, image, ()) == "right_hand"
        shoulders_as_a_face = {"left_shoulder": at(470, -300), "right_shoulder": at(130, -300)}
        watch._people = [person({**shoulders_as_a_face, "left_elbow": at(440, -150), "left_wrist": at(425, 20)})]
        assert watch._part_at(reach, image, ()) == "right_hand"
        watch._people = []
        watch._strip = LineStrip(calibration, profile, LineStripSettings(), (image.shape[1], image.shape[0]))
        watch._strip.update(image)
        assert watch._part_at(reach, image, ()) == "hand"  # nobody seen, by pose or behind the line: no side


def test_the_crop_handed_to_pose_is_a_copy():
    """Pose runs on its worker while the loop goes on, and the frame may be reused: a whole-width crop, contiguous in
    the frame, must still be copied."""
    image = np.zeros((720, 1280, 3), np.uint8)
    for crop in (Crop(0, 400, 1280, 720), Crop(0, 0, 540, 720, turns=1)):
        cut = crop.cut(image)
        assert not np.shares_memory(cut, image) and cut.flags["C_CONTIGUOUS"]


@pytest.mark.parametrize("turns", range(4))
def test_the_crop_is_turned_as_numpy_turns_it(first_frame, turns):
    """OpenCV turns the crop (a tenth of the time of copying numpy's turned view): the very pixels of `np.rot90`,
    for every quarter turn, on a box of a real frame off its edges; and turns them back into the box's own (the empty
    view is shrunk from those only when pose finds nobody at the line)."""
    image = first_frame[0]
    crop = Crop(37, 211, 1003, 640, turns=turns)
    cut = crop.cut(image)
    assert np.array_equal(cut, np.rot90(image[211:640, 37:1003], turns))
    assert not np.shares_memory(cut, image) and cut.flags["C_CONTIGUOUS"]
    assert np.array_equal(crop.uncut(cut), image[211:640, 37:1003])


class ElbowsPast:
    """A pose model that always finds the shooter with both elbows `beyond_mm` past the Play Line and the shoulders
    behind it, in the crop it is given (the behind_play_line camera's, upright): on an overhead composite of an arm
    held 13 mm short, its shadow over the line, the real model found such a person on three runs of six."""

    def __init__(self, calibration, profile, beyond_mm=65.0):
        line_y = profile.play_line[0][1]
        crop = near_side_crop(calibration, PlayLineJudge(calibration, profile), profile,
                              PoseConfig().pose_crop_margin_mm, (1280, 720))
        points = {"left_shoulder": (250.0, -300.0), "right_shoulder": (390.0, -300.0),
                  "left_elbow": (240.0, beyond_mm), "right_elbow": (400.0, beyond_mm)}
        px = {name: calibration.board_to_image(np.array([[x, line_y + w]]))[0] for name, (x, w) in points.items()}
        keypoints = tuple(Keypoint(name, *map(float, px.get(name, (0.0, 0.0))), 0.9 if name in px else 0.0)
                          for name in COCO_KEYPOINTS)
        self.person = in_crop(Person((0.0, 0.0, 1280.0, 720.0), 0.9, keypoints), crop)

    def __call__(self, image):
        return [self.person]


def test_a_keypoint_call_of_an_arm_waits_for_the_pixels_to_see_it_past_the_line():
    """The keypoints put both elbows 65 mm past the line through a clip. Where the arm is held short and only its
    shadow falls over the line, the pixels see nothing past it: no call, a review warning (the keypoints alone would
    call). Where the arm reaches over, the keypoints' call is made once the pixels see it past the line."""
    shadow = reach_clip(0, seed=3, kinds=["shadow"])
    reach = reach_clip(2, seed=2, kinds=["arm_reach"])
    assert shadow.truth.preset == reach.truth.preset == "behind_play_line"
    assert -20 < shadow.truth.peak_beyond_mm < 0 and reach.truth.peak_beyond_mm > 50
    model = ElbowsPast(shadow.calibration, shadow.profile)

    held = referee_clip(shadow, model)
    assert held.called is None and "keypoints" not in held.judges
    assert len(held.warnings) == 1 and "elbow over the Play Line" in held.warnings[0]
    assert "nothing was seen past the line there; no call, please review" in held.warnings[0]
    assert referee_clip(shadow, model, strip=None).called.endswith("_elbow")  # the keypoints alone

    seen = referee_clip(reach, ElbowsPast(reach.calibration, reach.profile))
    assert seen.called.endswith("_elbow") and "keypoints" in seen.judges and not seen.warnings
    assert seen.decided_t >= reach.truth.crossing_start_t - 2 / FPS  # not before the arm came over the line


def test_a_body_the_pixels_see_at_the_line_hurries_pose_where_pose_saw_nobody_there():
    """A photographed player leans in over the line (from behind it): too wide at the line for an arm, the pixels leave
    it to the keypoints. Where pose found nobody on its last run, the pixels seeing a body at the line bring its next
    run on, every `pose_release_interval_s` as in a release window (a head lean from overhead was decided 300 ms after
    its crossing: the run at 0.13 s found nobody and the next came 0.25 s later); where pose saw the player standing
    well back, it runs every `pose_interval_s`, as it did before."""
    config = PoseConfig()
    clip = reach_clip(0, seed=2, kinds=["head_lean"])
    assert clip.truth.preset == "behind_play_line"
    crop = near_side_crop(clip.calibration, PlayLineJudge(clip.calibration, clip.profile), clip.profile,
                          config.pose_crop_margin_mm, (1280, 720))
    standing_back = in_crop(head_at(clip.calibration, clip.profile, -400.0), crop)

    def runs(estimator, strip):
        started = []
        real_start = PoseWatch._start

        def start(watch, t, image):
            started.append(t)
            real_start(watch, t, image)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(PoseWatch, "_start", start)
            referee_clip(clip, estimator, strip)
        before = np.array([t for t in started if 0 < t < clip.truth.crossing_start_t])
        return np.diff(before)

    assert np.allclose(runs(lambda crop: [], LineStripSettings()), config.pose_release_interval_s, atol=0.01)
    assert np.allclose(runs(lambda crop: [standing_back], LineStripSettings()), config.pose_interval_s, atol=0.02)
