"""The referee end to end on rendered video, through the library API (`referee.session`): scores, the live
path, umpire inputs from another thread, the live state, and bad input."""

import json
import math
import threading
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest
from clocks import LockstepClock

from calibration import monitor
from referee.session import RefereeSession, RunSpec, Verdict
from rules.errors import InputError
from rules.events import (Confirm, Location, OutOfBallsChoice, Overturn, Place, RoundEnd, RoundPause, RoundResume,
                          Snapshot, UmpireFoul)
from rules.replay import read_log, replay
from simulation.make_samples import SEED
from simulation.realism import Realism
from simulation.simulate import simulate_to
from vision.cells import read_settled
from vision.config import SettleConfig, SourceConfig
from vision.detect.colour import ColourDetector
from vision.evaluate import (EvalConfig, load_run, load_truth, score_assignment, score_finals, score_shots,
                             score_timing)
from vision.pipeline import VisionPipeline
from vision.sources import FileSource, open_source
from vision.types import Detection
from vision.video_io import VideoError, VideoWriter

SAMPLES = Path(__file__).resolve().parents[2] / "sample_videos"
# Piratenbillard: the committed sample at 1280x720 (a red ball on red paint is too few pixels at 640x360), its
# player's arm and person included; Star Cluster Ball rendered at 640x360 to keep the module fast (truth
# detections; its colour runs are at 1280x720 below)
CLIPS = {"starcluster": ("chain_grand_slam", "behind_play_line", 640, 360)}
COMMITTED = {"piratenbillard": SAMPLES / "piratenbillard" / "capture"}


def committed(folder):
    return folder, json.loads((folder / "truth.json").read_text())


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    out = {game: committed(folder) for game, folder in COMMITTED.items()}
    for game, (scenario, camera, width, height) in CLIPS.items():
        folder = tmp_path_factory.mktemp(game)
        truth, _ = simulate_to(folder, game, 1, scenario, camera, width, height, realism=Realism.moderate(),
                               progress=False)
        out[game] = (folder, truth)
    return out


class TruthDetector:
    """The renderer's own ball pixels (isolates everything after detection); `rename` relabels colours."""

    name = "truth"

    def __init__(self, truth, rename=None):
        self.frames, self.owners, self.rename = truth["frames"], truth["ball_owners"], rename or {}
        self.index = 0

    def __call__(self, first_image, mapper, players, samples):  # the session's detector factory
        return self

    def detect(self, image, mask=None, steady=None, colours=None, settled=False, halvings=None):
        balls = self.frames[min(self.index, len(self.frames) - 1)]["balls"]
        self.index += 1
        named = [(self.rename.get(self.owners[str(i)], self.owners[str(i)]), u, v, r)
                 for i, _x, _y, _z, u, v, r, visible, *_ in balls if visible]
        return [Detection(u, v, r, colour, 0.95) for colour, u, v, r in named if colours is None or colour in colours]


def spec(folder, truth, out, **options):
    """`referee run VIDEO --game G --session truth.json --out OUT --no-pose`."""
    return RunSpec(str(folder / "video.mp4"), truth["game"], out, **{"session": folder / "truth.json", "pose": False,
                                                                      **options})


def referee_run(folder, truth, out, detector=None, source=None, read_table=None, session_file=None):
    with RefereeSession.open(spec(folder, truth, out, **({"session": session_file} if session_file else {})),
                             source=source, detector=detector, table_reader=read_table) as session:
        summary = session.run()
    return summary, json.loads((out / "result.json").read_text())


def points(result):
    return sorted((d["player"], d["points"]) for d in result["decisions"] if d["kind"] in ("score", "capture"))


def lines(path, kind):
    return [json.loads(line) for line in path.read_text().splitlines() if f'"type":"{kind}"' in line]


@pytest.mark.parametrize("game", sorted([*CLIPS, *COMMITTED]))
def test_truth_detections_reach_the_true_score(clips, game, tmp_path):
    folder, truth = clips[game]
    summary, result = referee_run(folder, truth, tmp_path, TruthDetector(truth))
    assert result["final_scores"] == truth["result"]["final_scores"]
    assert points(result) == points(truth["result"])
    [start] = [e for e in truth["events"] if e["type"] == "game_start"]
    assert summary.standings.players == tuple(p["id"] for p in start["players"]) and summary.frames > 0
    # the live engine's calls are the replay's calls
    live = lines(tmp_path / "decisions.jsonl", "decision")
    assert [d["summary"] for d in live] == [d["summary"] for d in result["decisions"]]
    # every shot is settled no later than 0.6 s after the sim's settle (0.5 s after the balls stop); a
    # slow final roll under the rest speed can make ours early (see docs/pipeline.md)
    ours = [e.t for e in read_log(tmp_path / "events.jsonl") if e.TYPE == "table_settled"]
    shot_t = None
    for event in truth["events"]:
        if event["type"] == "shot_started":
            shot_t = event["t"]
        elif event["type"] == "table_settled" and shot_t is not None:
            assert any(shot_t < o <= event["t"] + 0.6 for o in ours), (shot_t, event["t"], ours)
            shot_t = None


def test_colour_detector_referees_piratenbillard_end_to_end(clips, tmp_path):
    """The real pipeline, real colour detector, real rendered video: the true decisions and final scores."""
    folder, truth = clips["piratenbillard"]
    _, result = referee_run(folder, truth, tmp_path)
    assert points(result) == points(truth["result"])
    assert result["final_scores"] == truth["result"]["final_scores"]


def test_the_detector_is_learnt_only_once_its_warm_up_is_done_and_its_error_stops_the_run(clips, tmp_path,
                                                                                             monkeypatch):
    """The session starts the detector's warm-up as it opens and waits for it before learning the first frame:
    what the warm-up raised stops the run there, not lost on its thread."""
    def fail():
        raise RuntimeError("no Lab tables")

    monkeypatch.setattr(ColourDetector, "warm_up", staticmethod(fail))
    folder, truth = clips["piratenbillard"]
    with pytest.raises(RuntimeError, match="no Lab tables"):
        referee_run(folder, truth, tmp_path)


def refereed_sample(folder, tmp_path):
    """A committed sample refereed as `referee run --no-pose` does: its truth and run, for `vision.evaluate`."""
    truth = load_truth(folder / "truth.json")
    with RefereeSession.open(spec(folder, {"game": truth.game}, tmp_path)) as session:
        session.run()
    return truth, load_run(tmp_path, truth)


def test_a_full_four_player_board_settles_within_the_debounce_of_its_balls_stopping(tmp_path):
    """piratenbillard/four_players (32 balls in full starting rows): each player's home row lies on paint of its
    own colour, and the measured centres of yellow balls never touched wandered 5 mm up and down as the camera
    shook; the table's settle after green's strike came 570 ms after its ball stopped, in video time (so live too,
    whatever the machine). Issue 13's bound is the debounce + 150 ms: every settle within it, the score exact."""
    truth, run = refereed_sample(SAMPLES / "piratenbillard" / "four_players", tmp_path)
    after_rest = score_timing(run.events, truth).after_rest_ms
    assert after_rest.n == 5 and after_rest.max <= SettleConfig().rest_debounce_ms + 150, after_rest
    assert score_finals(run.result, truth.result).exact


def test_each_settle_is_read_hearing_whose_shot_it_closes(tmp_path, monkeypatch):
    """The table reader hears whose shot a settle closes, in either game (where balls stack, only that player's
    ball can make a new pair of one colour in a place, `vision.cells.read_table`), and no one for a settle that
    closes none (the first frame's, a lift's)."""
    import vision.pipeline as pipeline

    heard = []
    reader = pipeline.settled_reading

    def listening(settle, image, mapper, detector, previous, config, bare, steady, shooter, unexplained):
        heard.append(shooter)
        return reader(settle, image, mapper, detector, previous, config, bare, steady, shooter, unexplained)

    monkeypatch.setattr(pipeline, "settled_reading", listening)
    refereed_sample(SAMPLES / "piratenbillard" / "stacked_pair", tmp_path)
    closing, expected = None, []
    for event in read_log(tmp_path / "events.jsonl"):
        if event.TYPE == "shot_started":
            closing = event.player
        elif event.TYPE == "table_settled":
            expected.append(closing)
            closing = None
    assert heard == expected and None in heard and len(set(heard)) >= 2, (heard, expected)


@pytest.fixture(scope="module")
def full_game(tmp_path_factory):
    """piratenbillard/full_game refereed once for the tests that look at it."""
    return refereed_sample(SAMPLES / "piratenbillard" / "full_game", tmp_path_factory.mktemp("full_game"))


def test_balls_an_arm_half_hid_are_read_once_the_hand_has_been_gone_for_the_debounce_time(full_game):
    """piratenbillard/full_game: after blue's capture at 17.3 s the umpire's arm reached over blue's home row and
    shifted the measured centres of the balls it half hid. With resting balls held at rest while they wander
    (above), every ball was at rest by its track 0.1 s after the hand watch saw the hand leave, the table was read
    with a home-row ball not yet seen again, and blue ended on 4 where the truth has 9. What a hand covered is read
    once the hand has been gone for the debounce time: every shot decided as the truth has it, the scores exact."""
    truth, run = full_game
    shots = score_shots(run.result["decisions"], truth.result["decisions"], EvalConfig())
    assert shots.correct == shots.truth == 16, shots.mistakes
    assert score_finals(run.result, truth.result).exact


def test_a_captured_ball_measured_off_for_one_frame_does_not_hold_the_table_past_the_umpires_lift(full_game):
    """piratenbillard/full_game: blue's capture at 17.4 s lands on red's ball on red's home row. Half hidden, on
    paint of its own colour, the red ball is found in one of two shapes whose centres lie 23 mm apart; one frame of
    the other shape 0.5 s after it stopped read 255 mm/s, its rest was put off by the debounce again, the
    umpire's hand came first, and the table was read 1.2 s after the truth's settle, after the lift. A lone
    measurement that the next one takes back is no motion (`vision.track`): every table is read before it next
    changes, none later than 100 ms after the truth reads it."""
    truth, run = full_game
    assert score_assignment(run.events, truth).late == 0
    error = score_timing(run.events, truth).error_ms
    assert error.n == 17 and error.max <= 100, error


def test_a_strike_settles_within_the_debounce_of_its_balls_stopping_though_its_ball_landed_on_another(full_game):
    """piratenbillard/full_game: blue's strike at 17.4 s, secured in red's home row, landed on red's resting ball; red's
    measured centre slid 23 mm as blue settled over it, was taken for motion, and the table settled 563 ms after its
    balls stopped, in video time (so live too, whatever the machine). A ball covered by one not at rest is not taken as
    moving fast (`vision.track`): every settle within issue 13's bound, the debounce + 150 ms."""
    truth, run = full_game
    after_rest = score_timing(run.events, truth).after_rest_ms
    assert after_rest.n == 16 and after_rest.max <= SettleConfig().rest_debounce_ms + 150, after_rest


def test_frames_are_kept_as_quiet_only_between_a_settle_and_the_next_shot(tmp_path, monkeypatch):
    """piratenbillard/four_players through the pipeline: the frame loop lets the detector keep quiet frames
    (`settled`) only once the table has settled, and most frames between a settle and the next strike are kept;
    from a shot's start to its settle every frame is measured. The score is exact."""
    calls = []
    detect = ColourDetector.detect

    def recorded(self, image, mask=None, steady=None, colours=None, settled=False, halvings=None):
        before = self.quiet
        found = detect(self, image, mask, steady, colours, settled, halvings)
        if mask is not None:  # the frame loop's call (the settled-table reader looks at the whole box)
            calls.append((settled, self.quiet > before))
        return found

    monkeypatch.setattr(ColourDetector, "detect", recorded)
    truth, run = refereed_sample(SAMPLES / "piratenbillard" / "four_players", tmp_path)
    times = [float(json.loads(line)["t"]) for line in (tmp_path / "tracks.jsonl").read_text().splitlines()]
    assert len(times) == len(calls)
    events = [(e.t, e.TYPE) for e in run.events if e.TYPE in ("table_settled", "shot_started")]
    open_shots = [(t, next((u for u, kind in events if kind == "table_settled" and u > t), np.inf))
                  for t, kind in events if kind == "shot_started"]
    first_settle = min(t for t, kind in events if kind == "table_settled")
    for t, (settled, kept) in zip(times, calls):
        assert settled or not kept
        assert not settled or t > first_settle
        assert not kept or not any(start < t <= end for start, end in open_shots), t
    between = [kept for t, (settled, kept) in zip(times, calls)
               if t > first_settle and not any(start <= t <= end for start, end in open_shots)]
    assert sum(between) > len(between) / 2
    assert score_finals(run.result, truth.result).exact


@pytest.fixture(scope="module")
def small_clip(tmp_path_factory):
    """Piratenbillard at 640x360, for the live path."""
    folder = tmp_path_factory.mktemp("small")
    truth, _ = simulate_to(folder, "piratenbillard", 1, "capture", "overhead", 640, 360, realism=Realism.moderate(),
                           progress=False)
    return folder, truth


def test_a_file_played_live_gives_the_same_events(small_clip, tmp_path):
    """The live path (a reader thread, the newest frame only, paced at the file's rate) in lockstep with the
    referee (`LockstepClock`: the referee keeps up, exactly, whatever the machine's load): every frame reaches
    the referee, at the file's times, and the record is the file run's."""
    folder, truth = small_clip
    referee_run(folder, truth, tmp_path / "file", TruthDetector(truth))
    clock = LockstepClock()
    live = clock.follow(open_source(str(folder / "video.mp4"), SourceConfig(), live=True, clock=clock))
    summary, _ = referee_run(folder, truth, tmp_path / "live", TruthDetector(truth), source=live)
    assert live.dropped == 0 and summary.frames == truth["frame_count"]
    assert sum(clock.waits) == pytest.approx(summary.last_t - summary.first_t, abs=1e-6)  # paced at its own rate
    for name in ("events.jsonl", "decisions.jsonl", "tracks.jsonl"):
        assert (tmp_path / "live" / name).read_text() == (tmp_path / "file" / name).read_text(), name


def test_a_colour_matching_no_player_is_flagged(clips, tmp_path):
    folder, truth = clips["piratenbillard"]
    referee_run(folder, truth, tmp_path, TruthDetector(truth, rename={"blue": "purple"}))
    warnings = lines(tmp_path / "decisions.jsonl", "warning")
    assert sum("'purple' matches no player" in w.get("message", "") for w in warnings) == 1


def test_an_impossible_table_reading_is_flagged_and_dropped(clips, tmp_path):
    """More balls of a colour than a player owns cannot be the table: the engine's check refuses it, so it is
    a review warning, never written to the event log nor fed to the engine, and the run goes on."""
    folder, truth = clips["piratenbillard"]
    settles = []

    def misread(settle, image, mapper, detector, previous):
        snapshot = read_settled(settle, image, mapper, detector, previous)
        settles.append(snapshot)
        if len(settles) == 2:  # the first shot's settle reads nine red balls
            extra = next(b for b in snapshot.balls if b.owner == "red")
            snapshot = Snapshot(snapshot.balls + (extra,) * 9)
        return snapshot

    summary, _ = referee_run(folder, truth, tmp_path, TruthDetector(truth), read_table=misread)
    assert len(settles) >= 3 and summary.frames > 0
    warnings = lines(tmp_path / "decisions.jsonl", "warning")
    dropped = [w for w in warnings if w.get("message", "").startswith("table reading dropped")]
    assert len(dropped) == 1 and dropped[0]["review"] is True and "but a player has 8" in dropped[0]["message"]
    logged = [e for e in read_log(tmp_path / "events.jsonl") if e.TYPE == "table_settled"]
    assert len(logged) == len(settles) - 1
    assert all(e.snapshot.count("red") <= 8 for e in logged)
    assert any(flag.message.startswith("table reading dropped") for flag in summary.state.review)


def test_no_board_in_view_is_a_clear_error(clips, tmp_path):
    folder, truth = clips["piratenbillard"]
    video = tmp_path / "floor.mp4"
    with VideoWriter(video, 320, 240, 30) as writer:
        for i in range(120):
            writer.write(np.full((240, 320, 3), 60 + i % 5, np.uint8))
    with pytest.raises(InputError, match="no table markers found in the first 3 s"):
        referee_run(folder, truth, tmp_path / "out", TruthDetector(truth), source=FileSource(video))
    assert (tmp_path / "out" / "events.jsonl").read_text().startswith('{"type":"game_start"')


def test_a_truncated_video_is_a_clear_error(clips, tmp_path):
    data = (clips["piratenbillard"][0] / "video.mp4").read_bytes()
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(data[: len(data) // 2])
    with pytest.raises(VideoError):
        FileSource(broken)


class BreaksOff:
    """A file that breaks off mid-way, as a damaged download or a pulled cable does."""

    name, live, frame_count = "breaks-off.mp4", False, 0

    def __init__(self, path, after):
        self.path, self.after = path, after

    def frames(self):
        for frame in FileSource(self.path).frames():
            if frame.index == self.after:
                raise VideoError("video breaks-off.mp4 is damaged after 100 frames")
            yield frame


def test_a_failure_mid_run_keeps_the_events_already_written(clips, tmp_path):
    """A source that breaks off: what was written stays a valid log, and an umpire input still waiting is
    answered refused and flagged, not dropped."""
    folder, truth = clips["piratenbillard"]
    source = BreaksOff(folder / "video.mp4", 100)
    with pytest.raises(VideoError):
        with RefereeSession.open(spec(folder, truth, tmp_path), source=source,
                                 detector=TruthDetector(truth)) as session:
            waiting = session.submit(UmpireFoul(t=60.0, player="red"))
            session.run()
    assert waiting.result() == Verdict(False, reason="the run ended before the input was applied")
    events = read_log(tmp_path / "events.jsonl")  # what was written is a valid log
    assert [e.TYPE for e in events][:4] == ["game_start", "table_settled", "shot_started", "table_settled"]
    flagged = lines(tmp_path / "decisions.jsonl", "warning")[-1]
    assert flagged["review"] and flagged["message"].startswith("umpire input umpire_foul at 60s not applied")


class Bumped:
    """The camera knocked `shift` px from frame `at` on: further than the stabiliser follows a shake."""

    name, live, frame_count = "bumped.mp4", False, 0

    MARK = (1, 2, 3)  # the top-left pixel of every bumped frame, so a stage handed one can tell

    def __init__(self, path, at, shift):
        self.path, self.at, self.shift = path, at, shift

    def frames(self):
        move = np.float32([[1, 0, self.shift[0]], [0, 1, self.shift[1]]])
        for frame in FileSource(self.path).frames():
            image = frame.image.copy()
            if frame.index >= self.at:
                height, width = image.shape[:2]
                image = cv2.warpAffine(image, move, (width, height), borderMode=cv2.BORDER_REPLICATE)
                image[0, 0] = self.MARK
            elif tuple(image[0, 0]) == self.MARK:
                image[0, 0] = 0
            yield replace(frame, image=image)


def test_a_camera_bumped_past_the_stabilisers_reach_is_re_fitted_and_the_score_holds(clips, tmp_path,
                                                                                      monkeypatch):
    """While the stabiliser follows the markers, no marker re-fit is made (its result would be set aside); once
    a bump takes them out of its reach, the monitor re-fits the homography, says the camera moved, and the
    balls are read where they now lie."""
    folder, truth = clips["piratenbillard"]
    refits = []
    fit_markers = monitor.fit_markers

    def counted(frame, *args, **kwargs):
        refits.append(tuple(frame[0, 0]) == Bumped.MARK)
        return fit_markers(frame, *args, **kwargs)

    monkeypatch.setattr(monitor, "fit_markers", counted)
    source = Bumped(folder / "video.mp4", 40, (26, -18))
    with RefereeSession.open(spec(folder, truth, tmp_path), source=source) as session:
        session.run()
    result = json.loads((tmp_path / "result.json").read_text())
    assert refits and all(refits)  # none before the bump, while the stabiliser followed the markers
    warnings = [w["message"] for w in lines(tmp_path / "decisions.jsonl", "warning")]
    assert sum(m.startswith("the camera moved") for m in warnings) == 1, warnings
    assert points(result) == points(truth["result"])
    assert result["final_scores"] == truth["result"]["final_scores"]


class Covered:
    """A fingertip over the ball at pixel `centre` from frame `first` until the video itself shows the ball lifted
    (`last`, excluded): the umpire reaching in to lift a gutter ball just as its rest window closes. Skin-coloured,
    too small to be a hand over the table (and over a gutter, which the hand watch does not watch)."""

    name, live, frame_count = "covered.mp4", False, 0

    def __init__(self, path, first, last, centre, radius):
        self.path, self.first, self.last, self.centre, self.radius = path, first, last, centre, radius

    def frames(self):
        u, v = self.centre
        for frame in FileSource(self.path).frames():
            image = frame.image
            if self.first <= frame.index < self.last:
                image = image.copy()
                axes = (round(2.2 * self.radius), round(1.5 * self.radius))
                cv2.ellipse(image, (round(u + self.radius), round(v)), axes, 0, 0, 360, (120, 150, 205), -1)
            yield replace(frame, image=image)


def test_a_resting_ball_covered_as_its_rest_window_closes_is_read_where_it_lay(tmp_path):
    """gutter_ball: red's ball comes to rest in the gutter and the umpire's fingers come over it on the very frame
    the table settles, before it is lifted. The table is read on the last frame the ball was seen on (every ball
    was at rest all through the window), so it is a gutter ball, out for the round, not a failed ball back in
    hand (read on the covered frame, red's ball counted +1 at the round's end)."""
    folder, truth = committed(SAMPLES / "starcluster" / "gutter_ball")
    plain = tmp_path / "plain"
    referee_run(folder, truth, plain)
    settled = [e for e in lines(plain / "events.jsonl", "table_settled") if e["balls"]]
    first = round(settled[0]["t"] * truth["fps"])  # the frame red's gutter ball settled on, uncovered
    lifted = next(i for i, f in enumerate(truth["frames"]) if i > first and not f["balls"])
    _, _, _, _, u, v, r, *_ = truth["frames"][first]["balls"][0]
    source = Covered(folder / "video.mp4", first, lifted, (u, v), r)
    with RefereeSession.open(spec(folder, truth, tmp_path / "covered"), source=source) as session:
        session.run()
    gutter = [e for e in lines(tmp_path / "covered" / "events.jsonl", "table_settled") if e["t"] < lifted / truth["fps"]]
    assert [b["at"]["place"] for b in gutter[-1]["balls"]] == ["gutter"], gutter[-1]
    result = json.loads((tmp_path / "covered" / "result.json").read_text())
    assert shots(result) == shots(truth["result"])
    assert result["final_scores"] == truth["result"]["final_scores"]


def test_bad_input_is_refused_before_anything_is_written(clips, tmp_path):
    folder, truth = clips["piratenbillard"]
    (tmp_path / "rules.json").write_text('{"pipeline": {"settle": {"rest_speed_mm_s": -1}}}')
    (tmp_path / "flat.json").write_text('{"pipeline": {"stream_backoff_s": 1}}')
    bad = [({"config": tmp_path / "rules.json"}, "'settle.rest_speed_mm_s' must be a number >= 0"),
           ({"config": tmp_path / "flat.json"}, "it is now 'pipeline.source.stream_backoff_s'"),
           ({"session": tmp_path / "nope.jsonl"}, "session file .* does not exist"),
           ({"profile": "starcluster"}, "is for starcluster, not piratenbillard"),
           ({"pose_model": tmp_path / "x.onnx", "pose": True, "game": "starcluster",
             "session": clips["starcluster"][0] / "truth.json"}, "pose model .* is missing"),
           ({"annotate": True, "source": "rtsp://127.0.0.1:9/live"}, "--annotate decodes the video again")]
    for options, message in bad:
        out = tmp_path / "never"
        base = {"source": str(folder / "video.mp4"), "game": "piratenbillard", "out": out,
                "session": folder / "truth.json", "pose": False}
        with pytest.raises(InputError, match=message):
            RefereeSession.open(RunSpec(**{**base, **options}))
        assert not out.exists(), options


def shots(result):
    return [(d["player"], d["outcome"]) for d in result["decisions"] if d["kind"] == "shot"]


@pytest.fixture(scope="module")
def starcluster_720(tmp_path_factory):
    """Star Cluster Ball at the committed samples' size (glass balls are 5 px across at 640x360), with the
    shooter at the Play Line, the reaching arm and camera shake of `Realism.moderate`."""
    folder = tmp_path_factory.mktemp("starcluster720")
    truth, _ = simulate_to(folder, "starcluster", SEED, "grouping", "behind_play_line", 1280, 720,
                           realism=Realism.moderate(), progress=False)
    return folder, truth


def test_colour_detector_referees_star_cluster_end_to_end(starcluster_720, tmp_path):
    """The real colour detector on a rendered Star Cluster match: a grouped ball, a fast ball to the gutter,
    a tie-break. The Play Line stripe and the shooter (skin, lips, sleeve) must not read as red balls."""
    folder, truth = starcluster_720
    _, result = referee_run(folder, truth, tmp_path)
    assert shots(result) == shots(truth["result"])
    assert points(result) == points(truth["result"])
    assert result["final_scores"] == truth["result"]["final_scores"]
    settles = [e for e in read_log(tmp_path / "events.jsonl") if e.TYPE == "table_settled"]
    assert all(b.owner in ("red", "blue") for s in settles for b in s.snapshot.balls)


def test_an_umpire_input_the_engine_refuses_is_flagged_and_the_run_goes_on(clips, tmp_path):
    """A session line that contradicts what vision saw (here a choice when nobody is out of balls) is a
    review warning, left out of events.jsonl (which stays replayable); every later call is still made."""
    folder, truth = clips["starcluster"]
    bad = {"type": "out_of_balls_choice", "t": 2.0, "player": "blue", "choice": "bank"}
    session_file = tmp_path / "truth.json"
    session_file.write_text(json.dumps({**truth, "events": truth["events"] + [bad]}))
    _, result = referee_run(folder, truth, tmp_path / "out", TruthDetector(truth), session_file=session_file)
    assert result["final_scores"] == truth["result"]["final_scores"]
    warnings = lines(tmp_path / "out" / "decisions.jsonl", "warning")
    refused = [w for w in warnings if w["message"].startswith("umpire input out_of_balls_choice at 2s refused")]
    assert len(refused) == 1 and refused[0]["review"] is True and "no player is out of balls" in refused[0]["message"]
    assert not any(e.TYPE == "out_of_balls_choice" for e in read_log(tmp_path / "out" / "events.jsonl"))


def test_umpire_inputs_from_another_thread_are_applied_at_the_next_frame_and_answered(clips, tmp_path):
    """The console's path: while the referee runs frame by frame, another thread submits inputs. Each is
    applied in time order before the next frame, answered accepted (with its log id) or refused (with the
    engine's reason, and flagged for review), and none is dropped: one timed after the last frame is applied
    when the run finishes. `state()` shows the calls as they are made."""
    folder, truth = clips["piratenbillard"]
    with RefereeSession.open(spec(folder, truth, tmp_path, tracks=False), detector=TruthDetector(truth)) as session:
        frames = list(FileSource(folder / "video.mp4").frames())
        answers = {}
        submitted = threading.Event()

        def umpire(at_t):
            answers["foul"] = session.submit(UmpireFoul(t=at_t, player="blue", foul="interference"))
            answers["early"] = session.submit(UmpireFoul(t=0.0, player="red", foul="interference"))  # in the past
            answers["choice"] = session.submit(OutOfBallsChoice(t=at_t, player="red", choice="bank"))
            answers["late"] = session.submit(RoundEnd(t=frames[-1].t + 60.0))
            submitted.set()

        for frame in frames:
            session.process(frame)
            if frame.index == 60:
                thread = threading.Thread(target=umpire, args=(frame.t + 0.01,))
                thread.start()
                assert submitted.wait(timeout=60.0)  # a deadlock guard only: the thread submits at once
                thread.join()
                assert not answers["foul"].done()  # applied at the next frame, not before
            if frame.index == 61:
                assert answers["foul"].result().accepted and answers["foul"].result().event_id is not None
                assert answers["early"].result().accepted
                choice = answers["choice"].result()
                assert not choice.accepted and "out_of_balls_choice is a Star Cluster Ball input" in choice.reason
                state = session.state()
                assert any("umpire: interference by blue" in d.summary for d in state.last_decisions)
                assert any("refused by the rules engine" in flag.message for flag in state.review)
                assert not answers["late"].done()
        summary = session.finish()
        assert answers["late"].result().accepted  # not dropped: applied when the run finished
        with pytest.raises(InputError, match="the run has ended"):
            session.submit(RoundEnd(t=99.0))
    events = read_log(tmp_path / "events.jsonl")
    fouls = [e for e in events if e.TYPE == "umpire_foul"]
    assert [(e.player, e.id) for e in fouls] == [("red", answers["early"].result().event_id),
                                                 ("blue", answers["foul"].result().event_id)]
    assert fouls[0].t == frames[60].t  # an input timed in the past is logged when it was applied
    assert [e.t for e in events] == sorted(e.t for e in events)  # the log stays in time order
    assert events[-1].TYPE == "round_end" and summary.frames == len(frames)
    assert summary.state.standings.complete == json.loads((tmp_path / "result.json").read_text())["complete"]


def test_a_flagged_call_stays_open_for_review_until_the_umpire_confirms_it(clips, tmp_path):
    """A call the engine flags (here a settle read with low confidence) is an open review flag in `state()`,
    naming the event behind it; the umpire's confirm, submitted while the run goes on, closes it."""
    folder, truth = clips["piratenbillard"]
    settles = []

    def unsure(settle, image, mapper, detector, previous):
        snapshot = read_settled(settle, image, mapper, detector, previous)
        settles.append(snapshot)
        if len(settles) == 2:
            snapshot = Snapshot(tuple(replace(b, confidence=0.3) for b in snapshot.balls))
        return snapshot

    with RefereeSession.open(spec(folder, truth, tmp_path, tracks=False), detector=TruthDetector(truth),
                             table_reader=unsure) as session:
        frames = iter(FileSource(folder / "video.mp4").frames())
        for frame in frames:
            session.process(frame)
            if session.state().review:
                break
        flags = session.state().review  # the warning and every call made on that reading
        (cause,) = {flag.cause for flag in flags}
        assert cause is not None and any("low-confidence snapshot (0.30)" in flag.message for flag in flags)
        confirmed = session.submit(Confirm(t=frame.t, target=cause, by="A. Umpire", reason="seen on video"))
        session.process(next(frames))
        assert confirmed.result().accepted and session.state().review == ()
        for frame in frames:
            session.process(frame)
        session.finish()
    assert any(e.TYPE == "confirm" and e.target == cause for e in read_log(tmp_path / "events.jsonl"))


def test_the_state_shows_scores_turn_round_clock_and_balls_to_play(clips, tmp_path):
    """Star Cluster Ball: the live state after the match matches its result; mid-match it has a running round
    clock, the player to play, and balls in hand."""
    folder, truth = clips["starcluster"]
    seen = []
    with RefereeSession.open(spec(folder, truth, tmp_path, tracks=False), detector=TruthDetector(truth)) as session:
        summary = session.run(lambda frame, state: seen.append(state) if frame.index == 90 else None)
    (middle,) = seen
    assert middle.engine.round_number == 1 and middle.standings.to_play in ("red", "blue")
    assert middle.clock_s is not None and 0 < middle.clock_s <= middle.engine.round_length_s
    assert sum(middle.engine.balls_to_play.values()) > 0 and middle.t == pytest.approx(90 / truth["fps"], abs=0.02)
    result = json.loads((tmp_path / "result.json").read_text())
    final = summary.state
    assert {p: final.standings.games[-1].totals[p] for p in final.standings.players} == result["final_scores"]
    assert final.standings.winners == tuple(result["winners"]) and final.frames == summary.frames
    assert [d.summary for d in final.last_decisions] == [d["summary"] for d in result["decisions"]][-20:]


@pytest.fixture(scope="module")
def knock_720():
    """The committed sample (seed 1, 1280x720, the shooter and their arm in view)."""
    return committed(SAMPLES / "starcluster" / "knock_into_slot")


def test_a_ball_knocked_from_under_the_shooters_hand_into_a_slot_is_the_shooters_foul(knock_720, tmp_path):
    """Red's failed ball rests just past the Play Line; blue's ball, released right behind it under blue's hand,
    knocks it into a slot. Neither ball is seen crossing the line and the knocked one is first seen again in
    the slot: it moved (a shot by blue, a knocked-in foul), it was not lifted."""
    folder, truth = knock_720
    _, result = referee_run(folder, truth, tmp_path)
    assert shots(result) == shots(truth["result"])
    assert points(result) == points(truth["result"])
    assert result["final_scores"] == truth["result"]["final_scores"]
    fouls = [d for d in result["decisions"] if d["kind"] == "foul"]
    assert [(d["player"], d["rule"]) for d in fouls] == [(d["player"], d["rule"]) for d in truth["result"]["decisions"]
                                                         if d["kind"] == "foul"]
    round_end = min(e["t"] for e in truth["events"] if e["type"] == "round_end")
    assert not [e for e in read_log(tmp_path / "events.jsonl") if e.TYPE == "ball_lifted" and e.t < round_end]
    # called once the knocked ball lies in its slot, though it was never seen faster than the motion speed and the
    # shooter's ball rolls on behind the Play Line, where nothing is looked for (once called only after the
    # umpire's lift, 9.8 s later)
    struck_t = [e["t"] for e in truth["events"] if e["type"] == "shot_started"][-1]
    settled_t = min(e["t"] for e in truth["events"] if e["type"] == "table_settled" and e["t"] > struck_t)
    at_settle = min(truth["frames"], key=lambda f: abs(f["t"] - settled_t))
    (lies,) = [(b[1], b[2]) for b in at_settle["balls"] if truth["ball_owners"][str(b[0])] == "red"]
    radius = truth["profile"]["ball_diameter_mm"] / 2
    arrived = next(f["t"] for f in truth["frames"] if f["t"] > struck_t and any(
        truth["ball_owners"][str(b[0])] == "red" and math.dist((b[1], b[2]), lies) <= radius for b in f["balls"]))
    assert fouls[0]["t"] <= arrived + SettleConfig().rest_debounce_s + 0.5


def test_the_umpire_overturns_undoes_and_pauses_live_and_the_state_is_what_replay_of_the_log_gives(clips, tmp_path):
    """The console's amendments while the match runs: an umpire foul, its overturn and the undo of that overturn
    (an overturn of the overturn) each change the live scores at once, and after each the live standings are
    exactly what `referee replay` of events.jsonl gives. An overturn the log cannot hold (of a table reading)
    is refused with the reason, flagged, and never logged. A pause stops the round clock until the resume.
    The state shows the table as last read, naming its table_settled."""
    folder, truth = clips["starcluster"]
    with RefereeSession.open(spec(folder, truth, tmp_path, tracks=False), detector=TruthDetector(truth)) as session:
        frames = iter(FileSource(folder / "video.mp4").frames())

        def until(condition):
            for frame in frames:
                session.process(frame)
                if condition(session.state()):
                    return frame
            raise AssertionError("the condition never held")

        def answer(event):
            future = session.submit(event)
            frame = next(frames)
            session.process(frame)
            return future.result(timeout=0), frame

        def totals(state):
            return dict(state.standings.games[-1].totals)

        def replayed():
            log = read_log(tmp_path / "events.jsonl")
            return dict(replay(log, "starcluster", session.setup.rules_config).standings.games[-1].totals)

        frame = until(lambda state: state.table is not None and sum(totals(state).values()) > 0)
        state = session.state()
        assert state.table_event in {e.id for e in read_log(tmp_path / "events.jsonl") if e.TYPE == "table_settled"}
        assert state.table.balls  # the balls at rest, as read

        foul, frame = answer(UmpireFoul(t=frame.t, player=state.standings.to_play, foul="interference", by="U"))
        assert foul.accepted and totals(session.state()) == replayed()

        refused, frame = answer(Overturn(t=frame.t, target=state.table_event, by="U"))
        assert not refused.accepted and "only play_line_crossing" in refused.reason
        assert any("refused" in flag.message for flag in session.state().review)
        assert all(e.TYPE != "overturn" for e in read_log(tmp_path / "events.jsonl"))

        overturn, frame = answer(Overturn(t=frame.t, target=foul.event_id, by="U", reason="no interference"))
        assert overturn.accepted and totals(session.state()) == replayed()
        again, frame = answer(Overturn(t=frame.t, target=foul.event_id, by="U"))
        assert not again.accepted and "overturned already" in again.reason
        undo, frame = answer(Overturn(t=frame.t, target=overturn.event_id, by="U", reason="undo"))
        assert undo.accepted and totals(session.state()) == replayed()
        assert any(d.summary.startswith("umpire by U overturned " + overturn.event_id)
                   for d in session.state().last_decisions)

        at = frame.t
        paused, frame = answer(RoundPause(t=at, by="U", reason="a dropped ball"))
        assert paused.accepted and session.state().engine.round_paused_at == at
        clock = session.state().clock_s
        for _ in range(15):
            session.process(next(frames))
        assert session.state().clock_s == clock  # counts nothing while paused
        resumed, frame = answer(RoundResume(t=frame.t + 0.5, by="U"))
        assert resumed.accepted and session.state().engine.round_paused_at is None
        for frame in frames:
            session.process(frame)
        summary = session.finish()
    result = json.loads((tmp_path / "result.json").read_text())
    assert totals(summary.state) == result["final_scores"] == replayed()
    umpire = [(e.TYPE, e.id, getattr(e, "target", None)) for e in read_log(tmp_path / "events.jsonl") if getattr(e, "by", "") == "U"]
    assert umpire == [("umpire_foul", foul.event_id, None), ("overturn", overturn.event_id, foul.event_id),
                      ("overturn", undo.event_id, overturn.event_id), ("round_pause", paused.event_id, None),
                      ("round_resume", resumed.event_id, None)]


def test_a_high_hop_at_the_far_edge_is_followed_through_the_air_and_nothing_settles_before_it_lands():
    """Blue strikes along the far edge of the board, the ball rising 110 mm: at the top of the hop it is seen
    beyond the table outline drawn at the board's height (the old detection area), so the air above the board
    up to the game's highest hop is looked at too; the ball is found in every frame of its flight, and the table
    settles only after it has landed."""
    import cv2

    from calibration.calibrate import calibrate_markers
    from calibration.profile import load_profile
    from rules.events import GameStart, PlayerSpec, TableSettled
    from simulation.camera import make_camera
    from simulation.piratenbillard import simulate_piratenbillard
    from simulation.render import Renderer
    from simulation.trajectory import BallPose, SimFrame
    from vision.config import PipelineConfig
    from vision.detect import make_detector
    from vision.detect.colour import TABLE_MARGIN_MM
    from vision.games import game_vision
    from vision.mapping import BoardMapper
    from vision.video_io import Frame

    profile = load_profile("piratenbillard")
    game = game_vision("piratenbillard")
    start = simulate_piratenbillard(profile, 3, "stacked_pair").frames[0]
    renderer = Renderer(profile, make_camera(profile, "behind_play_line", 1280, 720), Realism.moderate(), 30.0, 3)
    r = profile.ball_diameter_mm / 2
    (x0, y0), (x1, y1) = profile.space_center(0, 2), profile.space_center(1, 6)
    hopper = next(b for b in start.balls if b.owner == "blue" and abs(b.x - x0) < 1 and abs(b.y - y0) < 1)
    still = [b for b in start.balls if b is not hopper]
    fps, flight = 30.0, 12
    poses = [BallPose(hopper.id, "blue", x0, y0, r)] * 30
    for k in range(1, flight + 1):
        s = k / flight
        poses.append(BallPose(hopper.id, "blue", x0 + (x1 - x0) * s, y0 + (y1 - y0) * s,
                              r + 4 * 110.0 * s * (1 - s), moving=k < flight, vx=(x1 - x0) * fps / flight,
                              vy=(y1 - y0) * fps / flight))
    poses += [BallPose(hopper.id, "blue", x1, y1, r)] * 45
    frames = [SimFrame(i, i / fps, tuple(still) + (pose,)) for i, pose in enumerate(poses)]
    first, _ = renderer.render(frames[0])
    calibration = calibrate_markers(first, profile)
    pipeline = VisionPipeline(game, profile, PipelineConfig(),
                              lambda image, mapper, players, samples: make_detector("color", image, mapper, players,
                                                                                    samples),
                              calibration=calibration, record_tracks=True)
    pipeline.note(GameStart(t=0.0, players=(PlayerSpec("red", seat=0), PlayerSpec("blue", seat=2))))
    old_area = BoardMapper(calibration, profile).table_polygon_px(TABLE_MARGIN_MM).astype(np.float32)
    settles, outside = [], 0
    for sim in frames:
        image, truth = renderer.render(sim)
        seen = pipeline.observe(Frame(sim.index, sim.t, image), "blue")
        settles += [o.t for o in seen.observations if isinstance(o, TableSettled)]
        ball = next(b for b in truth.balls if b.id == hopper.id)
        if 30 <= sim.index < 30 + flight:  # in the air
            outside += cv2.pointPolygonTest(old_area, (float(ball.u), float(ball.v)), False) < 0
            assert seen.tracked is not None and any(
                colour == "blue" and np.hypot(u - ball.u, v - ball.v) < ball.r_px
                for colour, u, v, *_ in seen.tracked.detections), sim.index
        if 30 + flight <= sim.index < 30 + flight + 5:  # just landed, not yet at rest: the detector is told
            assert any(np.hypot(u - ball.u, v - ball.v) < ball.r_px for u, v in pipeline.detector.unsettled_near)
    assert pipeline.detector.unsettled_near == ()  # every ball at rest at the end
    assert outside >= 3  # the top of the hop lies beyond the old detection area
    takeoff, landing = 30 / fps, (30 + flight) / fps
    assert settles and not [t for t in settles if takeoff <= t < landing], settles
    assert [t for t in settles if t >= landing], settles  # it settles once the ball is down


def test_a_ball_of_a_players_colour_on_the_star_cluster_tables_frame_is_no_ball():
    """Star Cluster's balls roll inside the rails, on the board, the play area and the gutters: what reads as a
    ball on the frame round them is the frame or the floor (starcluster_v12's brown floor beside the table's edge
    read as brown balls that came and went, the table did not settle for 8 s and two shots were lost). A red ball
    drawn on the frame is detected, but neither tracked nor read at the settle; the one on the board is both."""
    from calibration.calibrate import calibrate_markers
    from calibration.profile import load_profile
    from rules.events import GameStart, PlayerSpec, RoundStart, TableSettled
    from simulation.camera import make_camera
    from simulation.render import Renderer
    from simulation.trajectory import BallPose, SimFrame
    from vision.config import PipelineConfig
    from vision.detect import make_detector
    from vision.games import game_vision
    from vision.video_io import Frame

    profile = load_profile("starcluster")
    r = profile.ball_diameter_mm / 2
    renderer = Renderer(profile, make_camera(profile, "behind_play_line", 1280, 720), Realism.moderate(), 30.0, 3)
    board = profile.board
    on_board = BallPose(0, "red", (board.x_min + board.x_max) / 2, (board.y_min + board.y_max) / 2, r)
    on_frame = BallPose(1, "red", profile.gutter_areas[0].x_min / 2, on_board.y, r)  # between the edge and a gutter
    frames = [SimFrame(0, 0.0, ())] + [SimFrame(i, i / 30.0, (on_board, on_frame)) for i in range(1, 40)]
    first, _ = renderer.render(frames[0])
    calibration = calibrate_markers(first, profile)
    pipeline = VisionPipeline(game_vision("starcluster"), profile, PipelineConfig(),
                              lambda image, mapper, players, samples: make_detector("color", image, mapper, players,
                                                                                    samples),
                              calibration=calibration, record_tracks=True)
    pipeline.note(GameStart(t=0.0, players=(PlayerSpec("red", side="right"), PlayerSpec("blue", side="left"))))
    pipeline.note(RoundStart(t=0.0))
    settles, tracked = [], []
    for sim in frames:
        image, truth = renderer.render(sim)
        seen = pipeline.observe(Frame(sim.index, sim.t, image), "red")
        settles += [o for o in seen.observations if isinstance(o, TableSettled)]
        if sim.index:
            ball = {b.id: b for b in truth.balls}
            assert pipeline.detector is not None and any(  # the detector finds the ball on the frame ...
                d.colour == "red" and np.hypot(d.u - ball[1].u, d.v - ball[1].v) < ball[1].r_px
                for d in pipeline.detector.detect(image))
            assert seen.tracked is not None  # ... which is not taken for a ball
            tracked.append({i for i, b in ball.items() if any(
                np.hypot(u - b.u, v - b.v) < b.r_px for _, u, v, *_ in seen.tracked.detections)})
    assert all(ids == {0} for ids in tracked[5:]), tracked
    board_ball = profile.locate((on_board.x, on_board.y)).at
    read = [[(b.owner, b.at) for b in e.snapshot.balls] for e in settles if e.snapshot.balls]
    assert read == [[("red", board_ball)]], settles


def test_a_track_lost_slow_on_its_window_keeps_the_frame_it_was_last_seen_on():
    """starcluster_v2: a gutter ball crept to a stop as the umpire's fingers came over it, and was lost with its
    filter still jittering at 14 mm/s, over the rest speed. Its window of sightings was slow (`Track.slow`), so
    the frame it was last seen on is kept for the settle's reading (`_settled_image`); one lost as fast whose
    sightings still moved is not (a ball lifted away)."""
    from calibration.profile import load_profile
    from vision.config import PipelineConfig
    from vision.games import game_vision
    from vision.types import Track, TrackState
    from vision.video_io import Frame

    def unused(*_):
        raise AssertionError("no detector is needed to note sightings")

    for slow, kept in ((True, True), (False, False)):
        pipeline = VisionPipeline(game_vision("starcluster"), load_profile("starcluster"), PipelineConfig(), unused)
        frames = [Frame(i, i / 30, np.full((4, 4, 3), i, np.uint8)) for i in range(32)]
        for frame in frames[:31]:
            seen = Track(1, "red", 98, 220, -2.0, 14.0, TrackState.CONFIRMED, False, frame.t, frame.index + 1,
                         born_t=0.0, slow=slow)
            pipeline._note_sightings(frame, (seen,), None)
        lost = replace(seen, state=TrackState.LOST)
        pipeline._note_sightings(frames[31], (lost,), None)
        assert (pipeline._last_sight.get(1) is frames[30]) is kept, slow


@pytest.mark.parametrize("place, speed, settled_with, kept", [
    (Place.GUTTER, 13.0, False, True),  # starcluster_v14: lying in its gutter, its picture still healing
    (Place.GUTTER, 13.0, True, False),  # the table settled with it there: then lifted away, not lost at rest
    (Place.GUTTER, 400.0, False, False),  # rolling along the gutter for real
    (Place.GROUPED, 13.0, False, False),  # on the open board: the rest test decides, as before
])
def test_a_ball_lost_lying_in_a_gutter_is_read_where_it_was_last_seen(place, speed, settled_with, kept):
    """starcluster_v14: p2's ball stopped dead in a dark gutter; the video's compression healed its picture over
    the next few tenths of a second, its detected centre drifted 6 px and its filter kept 13 mm/s (the rest speed
    is 12), and the umpire lifted it 0.74 s after it stopped. The settle after the lift read no ball: a failed ball,
    back in hand (+1 at round end). A ball in a gutter leaves it only in a hand, so the frame it was last seen on
    shows it where it came to rest, unless the table has settled with it there since (then it was lifted away)."""
    from calibration.profile import load_profile
    from vision.config import PipelineConfig
    from vision.games import game_vision
    from vision.types import Track, TrackState
    from vision.video_io import Frame

    def unused(*_):
        raise AssertionError("no detector is needed to note sightings")

    pipeline = VisionPipeline(game_vision("starcluster"), load_profile("starcluster"), PipelineConfig(), unused)
    if settled_with:
        pipeline._settled_with = {1}
    frames = [Frame(i, i / 30, np.full((4, 4, 3), i, np.uint8)) for i in range(32)]
    for frame in frames[:31]:
        seen = Track(1, "red", 20, 300, 0.0, speed, TrackState.CONFIRMED, False, frame.t, frame.index + 1,
                     born_t=0.0, slow=False, location=Location(place))
        pipeline._note_sightings(frame, (seen,), None)
    pipeline._note_sightings(frames[31], (replace(seen, state=TrackState.LOST),), None)
    assert (pipeline._last_sight.get(1) is frames[30]) is kept


@pytest.mark.parametrize("after, read_out", [
    ("given up", True),  # the tracker gave its track up: lifted away by the umpire, out in its gutter
    ("followed again", False),  # a marble held over the gutter, hidden in the hand, then seen again
    ("found beside", False),  # the same, found again as a new track of its colour beside where it was lost
    ("shot", True),  # the next shot started first: it lay there
    ("read by the settle", False),  # given up, and the settle reads a new ball of its colour in a gutter: found again
    ("one lay there before", True),  # given up; the settle's gutter ball of its colour was on the last settled table
])
def test_a_settle_waits_while_a_ball_glimpsed_in_a_gutter_may_be_found_again(after, read_out):
    """A ball of the shooter's seen lying in a gutter for less than a rest window and lost (a marble dropped into a
    gutter beside the Play Line, lifted by the umpire 0.2-0.7 s later: starcluster_v5) went out, unless it is found
    again (it lies there still, lost for a few frames, or was a marble held over the gutter). A settle meanwhile is
    held back with everything after it, in order, and given out once that is known; the ball is read in its gutter,
    flagged, only when it was not found again, nor read by the settle itself. (End to end, on pixels:
    test_any_table's v5 and v20 tests.)"""
    from calibration.profile import load_profile
    from rules.events import BallSighting, ShotStarted, Snapshot, TableSettled
    from vision.config import PipelineConfig
    from vision.games import game_vision
    from vision.pipeline import PipelineWarning, VisionPipeline
    from vision.types import Track, TrackState
    from vision.video_io import Frame

    def unused(*_):
        raise AssertionError("no detector is needed to hold a settle")

    config = PipelineConfig()
    pipeline = VisionPipeline(game_vision("starcluster"), load_profile("starcluster"), config, unused)
    pipeline.players = ("red", "blue")
    frames = [Frame(i, i / 30, np.zeros((4, 4, 3), np.uint8)) for i in range(80)]
    glimpse = Track(7, "red", 20, 300, 0.0, 0.0, TrackState.LOST, False, frames[10].t, 4, born_t=frames[7].t,
                    location=Location(Place.GUTTER))
    pipeline._glimpsed = {7: glimpse}
    pipeline._gap_t = {7: frames[12].t}
    grouped = BallSighting("blue", Location(Place.GROUPED))
    in_gutter = BallSighting("red", Location(Place.GUTTER))
    if after == "one lay there before":
        pipeline._snapshot = Snapshot((in_gutter,))
    read = (grouped, in_gutter) if after in ("read by the settle", "one lay there before") else (grouped,)
    settled = TableSettled(t=frames[20].t, snapshot=Snapshot(read))
    assert pipeline._held_for_glimpses([settled]) == [] and pipeline.holding  # in doubt: held
    pipeline._note_sightings(frames[21], (replace(glimpse, last_seen_t=frames[10].t),), "red")
    assert pipeline._held_for_glimpses([]) == []  # still lost, not given up: still held
    if after in ("given up", "read by the settle", "one lay there before"):
        pipeline._note_sightings(frames[60], (), "red")
        out = pipeline._held_for_glimpses([])
    elif after == "followed again":
        for frame in frames[61:66]:  # seen on every frame for the sighting time
            pipeline._note_sightings(frame, (replace(glimpse, state=TrackState.CONFIRMED, last_seen_t=frame.t),), "red")
        out = pipeline._held_for_glimpses([])
    elif after == "found beside":
        beside = Track(9, "red", 35, 310, 0.0, 0.0, TrackState.CONFIRMED, False, frames[61].t, 3,
                       born_t=frames[59].t, born_at=(35.0, 310.0), location=Location(Place.GUTTER))
        pipeline._note_sightings(frames[61], (replace(glimpse, last_seen_t=frames[10].t), beside), "red")
        out = pipeline._held_for_glimpses([])
    else:
        shot = ShotStarted(t=frames[40].t, player="blue")  # the next shot started first: it lay there
        out = pipeline._held_for_glimpses([shot])
    assert not pipeline.holding and pipeline._glimpsed == {}
    settles = [o for o in out if isinstance(o, TableSettled)]
    warned = [o for o in out if isinstance(o, PipelineWarning)]
    out_in_gutter = BallSighting("red", Location(Place.GUTTER), config.settle.gutter_sighting_confidence)
    assert settles[0].t == settled.t and settles[0].id == settled.id
    assert list(settles[0].snapshot.balls) == ([*read, out_in_gutter] if read_out else list(read))
    assert len(warned) == read_out and all(w.review and w.t == settled.t for w in warned)
    assert [o.t for o in out] == sorted(o.t for o in out)  # the log stays in time order
    if after == "shot":
        assert out[-1] == shot


def test_frames_halved_on_the_decode_thread_give_the_record_of_frames_halved_in_the_loop(small_clip, tmp_path,
                                                                                          monkeypatch):
    """A file's frames are halved on its decode thread (`VisionPipeline.prepare`, `FileSource.prepare`), for the box
    the frame loop halves; the loop takes those halvings. The colour detector and the hand watch see the same blocks
    either way: the record is byte for byte that of a run whose loop halves every frame itself."""
    folder, truth = small_clip
    used = []
    observe = VisionPipeline.observe

    def observed(self, frame, to_play):
        ready = frame.halvings
        used.append(ready is not None and self._halved is not None and ready.within == self._halved[0])
        return observe(self, frame, to_play)

    monkeypatch.setattr(VisionPipeline, "observe", observed)
    referee_run(folder, truth, tmp_path / "ahead")
    assert sum(used) >= len(used) - 10 and len(used) == truth["frame_count"]  # all but the first few (read ahead)
    monkeypatch.setattr(VisionPipeline, "prepare", lambda self, frame: frame)
    used.clear()
    referee_run(folder, truth, tmp_path / "loop")
    assert not any(used)
    for name in ("events.jsonl", "decisions.jsonl", "tracks.jsonl"):
        assert (tmp_path / "ahead" / name).read_text() == (tmp_path / "loop" / name).read_text(), name
