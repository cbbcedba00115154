"""vision.evaluate on a real simulated clip's truth, scoring runs built from that truth with known faults."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path

import pytest

from record.run_folder import TRACKS_FILE, RunWriter
from rules.events import Location, parse_event
from simulation.realism import Realism
from simulation.simulate import simulate_to
from vision.evaluate import (
    EvalConfig,
    Truth,
    evaluate,
    in_flight,
    load_run,
    load_truth,
    match_by_time,
    pair_settles,
    score_assignment,
    settle_pairs,
    settle_windows,
    settles_in_flight,
    shots_of,
    true_rest_times,
)
from vision.pipeline import tracked_frame
from vision.types import BoardBall, Detection, Track, TrackState


@pytest.fixture(scope="module")
def truth_path(tmp_path_factory) -> Path:
    """A short Piratenbillard capture clip (320x180): two shots, three settles, one capture."""
    out = tmp_path_factory.mktemp("sim")
    simulate_to(out, "piratenbillard", 1, "capture", "behind_play_line", 320, 180, realism=Realism(), progress=False)
    return out / "truth.json"


@pytest.fixture(scope="module")
def truth_json(truth_path) -> dict:
    return json.loads(truth_path.read_text())


def perfect_run(truth: dict) -> dict:
    """What an ideal referee would write: the truth's observations, result, tracks and detections."""
    owners = truth["ball_owners"]
    frames = []
    for frame in truth["frames"]:
        seen = [b for b in frame["balls"] if b[7]]
        frames.append({"t": frame["t"],
                       "tracks": [[100 + b[0], owners[str(b[0])], b[1], b[2], b[4], b[5]] for b in seen],
                       "detections": [[owners[str(b[0])], b[4], b[5], b[6], b[1], b[2], 0.9] for b in seen]})
    return {"events": copy.deepcopy(truth["events"]), "result": copy.deepcopy(truth["result"]), "frames": frames}


def write_run(path: Path, run: dict, result: bool = True) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in run["events"]))
    if result:
        (path / "result.json").write_text(json.dumps(run["result"]))
    (path / "tracks.jsonl").write_text("".join(json.dumps(f) + "\n" for f in run["frames"]))
    return path


def score(tmp_path: Path, truth_path: Path, run: dict, result: bool = True):
    truth = load_truth(truth_path)
    return evaluate(load_run(write_run(tmp_path / "run", run, result), truth), truth)


def settles(run: dict) -> list[dict]:
    return [e for e in run["events"] if e["type"] == "table_settled"]


def test_the_fixture_has_what_the_tests_need(truth_json):
    assert len(settles(truth_json)) == 3
    assert [d["outcome"] for d in truth_json["result"]["decisions"] if d["kind"] == "shot"] == ["moved", "captured"]
    assert all(len(e["balls"]) == 16 for e in settles(truth_json))


def test_a_perfect_run_scores_full_marks(tmp_path, truth_path, truth_json):
    report = score(tmp_path, truth_path, perfect_run(truth_json))
    assert report.scores.exact and report.scores.winners_match and report.scores.complete_match
    assert (report.shots.truth, report.shots.correct, report.shots.accuracy) == (2, 2, 1.0)
    assert (report.assignment.balls_right, report.assignment.balls_total, report.assignment.accuracy) == (48, 48, 1.0)
    assert report.timing.error_ms.max == 0.0
    # the simulation calls the table settled 0.5 s (its debounce) after the last ball stops
    assert report.timing.after_rest_ms.n == 2 and report.timing.after_rest_ms.mean == pytest.approx(500, abs=1)
    det = report.detection
    assert det.precision == det.recall == 1.0 and det.error_mm.max == 0.0
    assert det.frames == truth_json["frame_count"]
    trk = report.tracking
    assert (trk.mota, trk.idf1, trk.id_switches) == (1.0, 1.0, 0)
    assert json.loads(json.dumps(report.to_json()))["tracking"]["id_switches"] == 0


def test_one_ball_in_the_wrong_space_costs_exactly_one_of_48(tmp_path, truth_path, truth_json):
    run = perfect_run(truth_json)
    last = settles(run)[-1]
    last["balls"][0]["at"] = Location.cell_at(7, 7).to_json()
    report = score(tmp_path, truth_path, run)
    assert (report.assignment.balls_right, report.assignment.balls_total) == (47, 48)
    assert report.assignment.accuracy == pytest.approx(47 / 48)
    assert report.assignment.exact_snapshots == 2
    assert "cell (7,7)" in report.assignment.mistakes[0]


def test_a_late_settle_gives_its_exact_timing_error(tmp_path, truth_path, truth_json):
    run = perfect_run(truth_json)
    settles(run)[-1]["t"] += 0.25
    report = score(tmp_path, truth_path, run)
    assert report.timing.error_ms.max == pytest.approx(250)
    assert report.timing.error_ms.mean == pytest.approx(250 / 3)
    assert report.timing.after_rest_ms.max == pytest.approx(750, abs=1)
    assert report.assignment.accuracy == 1.0  # still paired with its truth settle


def test_settles_pair_from_when_the_balls_stopped_not_from_the_truths_own_settle(tmp_path, truth_path, truth_json):
    """A truth that calls its table settled long after the balls stop (a marble rocking in its slot keeps the
    simulator's flag up) and a run that settles 0.4 s after they stop and once more later: each run settle is
    scored against its own table, and the extra one is left unpaired."""
    truth, run = copy.deepcopy(truth_json), perfect_run(truth_json)
    rest = true_rest_times(load_truth(truth_path))
    assert sorted(rest) == [1, 2]
    for i in rest:
        settles(truth)[i]["t"] = rest[i] + 1.2  # before the next shot starts
        settles(run)[i]["t"] = rest[i] + 0.4
    extra = copy.deepcopy(settles(run)[-1])
    extra["t"] = rest[2] + 1.33
    run["events"].append(extra)
    slow_truth = tmp_path / "truth.json"
    slow_truth.write_text(json.dumps(truth))
    report = score(tmp_path, slow_truth, run)
    assert report.timing.after_rest_ms.n == 2
    assert report.timing.after_rest_ms.mean == report.timing.after_rest_ms.max == pytest.approx(400, abs=1)
    assert report.timing.error_ms.n == 3 and report.timing.error_ms.mean == pytest.approx(-1600 / 3, abs=1)
    # timed from the truth's own settles, the last one would have gone with the extra settle
    truth_t = [e["t"] for e in settles(truth)]
    assert match_by_time(truth_t, [e["t"] for e in settles(run)], EvalConfig().event_gate_s)[-1] == (2, 3)


def test_a_wrong_capture_is_one_wrong_shot_and_a_wrong_score(tmp_path, truth_path, truth_json):
    run = perfect_run(truth_json)
    capture = next(d for d in run["result"]["decisions"] if d["kind"] == "capture")
    capture["points"] = 2
    run["result"]["final_scores"]["blue"] = 2
    report = score(tmp_path, truth_path, run)
    assert not report.scores.exact and report.scores.run == {"blue": 2, "red": 0}
    assert (report.shots.correct, report.shots.accuracy) == (1, 0.5)
    assert (report.shots.outcome_accuracy, report.shots.points_accuracy) == (1.0, 0.5)
    assert "blue +1" in report.shots.mistakes[0] and "blue +2" in report.shots.mistakes[0]


def test_an_id_swap_is_counted_by_motmetrics(tmp_path, truth_path, truth_json):
    run = perfect_run(truth_json)
    for frame in run["frames"][len(run["frames"]) // 2:]:  # two red balls swap ids half-way
        for row in frame["tracks"]:
            row[0] = {100: 101, 101: 100}.get(row[0], row[0])
    report = score(tmp_path, truth_path, run)
    assert report.tracking.id_switches == 2
    assert report.tracking.mota < 1.0 and report.tracking.idf1 < 1.0
    assert report.detection.precision == 1.0  # detections untouched


def test_a_wrong_colour_and_a_missed_ball_lower_precision_and_recall_exactly(tmp_path, truth_path, truth_json):
    run = perfect_run(truth_json)
    frame = run["frames"][0]
    frame["detections"][0][0] = "blue" if frame["detections"][0][0] == "red" else "red"
    del frame["detections"][1]
    frame["detections"].append(["red", 0, 0, 5, 900.0, 900.0, 0.5])  # nowhere near a ball
    report = score(tmp_path, truth_path, run)
    det = report.detection
    assert det.wrong_colour == 1
    assert det.true_positives == det.truth_balls - 2
    assert det.recall == pytest.approx((det.truth_balls - 2) / det.truth_balls)
    assert det.precision == pytest.approx((det.truth_balls - 2) / det.truth_balls)  # one dropped, one added


def test_a_run_without_result_is_replayed_and_a_torn_last_line_is_tolerated(tmp_path, truth_path, truth_json):
    run = write_run(tmp_path / "run", perfect_run(truth_json), result=False)
    with open(run / "events.jsonl", "a") as stream:
        stream.write('{"type": "table_sett')
    truth = load_truth(truth_path)
    report = evaluate(load_run(run, truth), truth)
    assert report.scores.exact and report.shots.accuracy == 1.0
    assert any("torn last line" in n for n in report.notes) and any("replay" in n for n in report.notes)


def test_without_tracks_only_detection_and_tracking_are_left_out(tmp_path, truth_path, truth_json):
    run = write_run(tmp_path / "run", perfect_run(truth_json))
    (run / "tracks.jsonl").unlink()
    truth = load_truth(truth_path)
    report = evaluate(load_run(run, truth), truth)
    assert report.detection is None and report.tracking is None and report.shots.accuracy == 1.0


def test_match_by_time_pairs_nearest_within_the_gate():
    assert match_by_time([1.0, 5.0, 9.0], [5.2, 1.1, 20.0], 1.0) == [(0, 1), (1, 0)]
    assert match_by_time([], [1.0], 1.0) == []


def test_shots_group_the_decisions_of_their_moment():
    decisions = [
        {"t": 0.0, "kind": "turn", "player": "red"},
        {"t": 2.0, "kind": "shot", "player": "red", "outcome": "scored"},
        {"t": 2.0, "kind": "score", "player": "red", "points": 3},
        {"t": 2.0, "kind": "foul", "player": "red", "foul": "knocked_in"},
        {"t": 2.0, "kind": "score", "player": "blue", "points": 2},
        {"t": 4.0, "kind": "shot", "player": "blue", "outcome": "failed"},
        {"t": 6.0, "kind": "score", "player": "blue", "points": 9},  # a later decision: not this shot's
    ]
    first, second = shots_of(decisions)
    assert first.points == (("blue", 2), ("red", 3)) and first.fouls == (("red", "knocked_in"),)
    assert (second.outcome, second.points) == ("failed", ())


def test_the_tracks_line_holds_confirmed_tracks_and_board_detections(tmp_path):
    track = Track(7, "red", 100.0, 200.0, 0.0, 0.0, TrackState.CONFIRMED, True, 1.0, 5)
    tentative = Track(8, "red", 0.0, 0.0, 0.0, 0.0, TrackState.TENTATIVE, False, 1.0, 1)
    ball = BoardBall(Detection(10.0, 20.0, 6.0, "red", 0.8), 101.0, 199.0, Location.cell_at(1, 2))
    tracked = tracked_frame(1.0, (track, tentative), [ball], lambda p: p / 10)
    with RunWriter(tmp_path, tracks=True) as writer:
        writer.frame(tracked.t, tracked.tracks, tracked.detections)
    line = json.loads((tmp_path / TRACKS_FILE).read_text())
    assert line == {"t": 1.0, "tracks": [[7, "red", 100.0, 200.0, 10.0, 20.0]],
                    "detections": [["red", 10.0, 20.0, 6.0, 101.0, 199.0, 0.8]]}


def test_eval_config_gates_are_used(tmp_path, truth_path, truth_json):
    run = perfect_run(truth_json)
    shot = [d for d in run["result"]["decisions"] if d["kind"] == "shot"][-1]
    for decision in run["result"]["decisions"]:
        if decision["t"] == shot["t"]:
            decision["t"] += 0.25
    truth = load_truth(truth_path)
    report = evaluate(load_run(write_run(tmp_path / "run", run), truth), truth, EvalConfig(event_gate_s=0.1))
    assert (report.shots.matched, report.shots.correct) == (1, 1)
    assert report.assignment.accuracy == 1.0  # settles are paired by the table they show, not by a gate


def test_a_settle_called_while_a_ball_is_in_the_air_is_no_reading_of_the_settled_table(tmp_path, truth_path,
                                                                                        truth_json):
    """Moved back into the struck ball's hop (well within the old 2 s gate), the last settle, read right, is not
    the settled table's: that snapshot scores 0 of its 16 balls, and the frame is in flight."""
    truth = load_truth(truth_path)
    flying = in_flight(truth)
    last = settles(truth_json)[-1]["t"]
    hop = max(f["t"] for f, up in zip(truth_json["frames"], flying) if up and f["t"] < last)
    assert last - hop < 2.0
    run = perfect_run(truth_json)
    settles(run)[-1]["t"] = hop
    report = score(tmp_path, truth_path, run)
    assert (report.assignment.matched, report.assignment.balls_right, report.assignment.balls_total) == (2, 32, 48)
    assert report.assignment.mistakes == (f"settle at {last:.2f}s: no run snapshot",)


def test_run_frames_pair_with_truth_frames_by_time_not_by_count(tmp_path, truth_path, truth_json):
    run = perfect_run(truth_json)
    run["frames"] = run["frames"][::2]  # a live run that skipped every other frame, its clock 4 ms off
    for frame in run["frames"]:
        frame["t"] = round(frame["t"] + 0.004, 4)
    report = score(tmp_path, truth_path, run)
    assert report.detection.frames == (truth_json["frame_count"] + 1) // 2
    assert report.detection.precision == report.detection.recall == 1.0
    assert report.tracking.id_switches == 0 and report.tracking.mota == 1.0


# --------------------------------------------------------------------------- settles paired by the table they show

BALL_MM = 20.0  # the synthetic truths below: one ball of 20 mm, 10 frames a second


def rolling_truth(path: list[tuple[float, float, bool]], settle_t: float, lift_t: float | None = None) -> Truth:
    """Ball 1 (red) at each (y, z, moving) of `path`, a frame every 0.1 s; the truth settles at `settle_t` with it
    in slot 1 of Position 1; `lift_t`: then it is lifted off (gone from the frames after)."""
    frames = tuple({"t": round(0.1 * k, 1), "balls": [] if lift_t is not None and 0.1 * k > lift_t else
                    [[1, 100.0, y, z, 0, 0, 5, True, False, moving]]} for k, (y, z, moving) in enumerate(path))
    at = {"owner": "red", "at": Location.slot_at(1, 1).to_json()}
    events = [parse_event({"type": "table_settled", "t": settle_t, "balls": [at]})]
    if lift_t is not None:
        events.append(parse_event({"type": "ball_lifted", "t": lift_t, **at}))
    return Truth("starcluster", {}, 10.0, {1: "red"}, frames, tuple(events), {}, BALL_MM)


def run_settles(*settled: tuple[float, Location]) -> tuple:
    return tuple(parse_event({"type": "table_settled", "t": t, "balls": [{"owner": "red", "at": at.to_json()}]})
                 for t, at in settled)


# rolls 50 mm a frame for 1 s, then creeps 6 mm over 3 s (under its 10 mm radius), then lies still
CREEP = [(50.0 * k, 10.0, True) for k in range(10)] + [(500 + 0.2 * k, 10.0, True) for k in range(30)] \
    + [(506.0, 10.0, False)] * 15


def test_a_ball_creeping_less_than_its_radius_is_at_rest_and_one_rolling_or_in_the_air_is_in_flight():
    assert in_flight(rolling_truth(CREEP, 4.5)) == [True] * 10 + [False] * 45
    hop = [(0.0, 10.0, True), (10.0, 12.5, True), (11.0, 10.0, True), (11.0, 10.0, False)]
    assert in_flight(rolling_truth(hop, 0.3)) == [True, True, False, False]  # up 2.5 mm: off the surface
    gone = [(0.0, 10.0, False), (0.0, 10.0, True), (5.0, 10.0, True)]
    assert in_flight(rolling_truth(gone, 0.0, lift_t=0.15)) == [False, True, False]  # it never rests here


def test_a_settle_called_while_the_ball_creeps_in_its_slot_pairs_with_the_truths_later_one():
    """The referee settled 3.5 s before the simulation did (the ball still crept 5 mm): the same table; the
    reading is scored, and the timing says how early it was."""
    truth = rolling_truth(CREEP, 4.5)
    assert settle_windows(truth) == [(10, 55)]
    run = run_settles((0.5, Location.slot_at(1, 1)), (1.0, Location.slot_at(1, 1)), (4.0, Location.slot_at(1, 2)))
    assert pair_settles(run, truth) == [(0, 1)]  # the first settle once the ball was at rest; 0.5 s was in flight
    assert settles_in_flight(run, truth) == 1
    report = score_assignment(run, truth)
    assert (report.matched, report.balls_right, report.accuracy) == (1, 1, 1.0)


def test_a_settle_in_the_tables_window_that_reads_it_wrong_counts_wrong():
    truth = rolling_truth(CREEP, 4.5)
    report = score_assignment(run_settles((2.0, Location.slot_at(1, 2)), (4.5, Location.slot_at(1, 1))), truth)
    assert (report.matched, report.exact_snapshots, report.balls_right, report.balls_total) == (1, 0, 0, 1)
    assert "missing [red@" in report.mistakes[0]


def test_a_settle_in_flight_is_missing_and_one_after_the_table_changed_is_late():
    """Only a settle between the ball's rest and the next change (here a lift at 5.0 s) shows the table as it
    stands; a settle before it (in flight) reads nothing the truth can pair. One after the change reads the table
    as it lay if the referee saw it (a gutter ball lifted before the debounce ran out is read where it lay): it is
    paired late and its reading scored either way."""
    truth = rolling_truth(CREEP, 4.5, lift_t=5.0)
    assert settle_windows(truth) == [(10, 50)]
    report = score_assignment(run_settles((0.5, Location.slot_at(1, 1))), truth)
    assert (report.matched, report.late, report.balls_right, report.balls_total) == (0, 0, 0, 1)
    assert report.mistakes == ("settle at 4.50s: no run snapshot",)
    late = run_settles((0.5, Location.slot_at(1, 1)), (5.2, Location.slot_at(1, 1)))
    assert settle_pairs(late, truth) == [(0, 1, True)]
    report = score_assignment(late, truth)
    assert (report.matched, report.late, report.balls_right, report.accuracy) == (1, 1, 1, 1.0)
    report = score_assignment(run_settles((5.2, Location.slot_at(1, 2))), truth)  # read wrong: counted wrong
    assert (report.matched, report.late, report.balls_right, report.balls_total) == (1, 1, 0, 1)
    assert "missing [red@" in report.mistakes[0]


def test_a_late_settle_pairs_only_before_the_next_shot_and_with_no_ball_in_flight():
    """A settle after the next shot started reads that shot's table, not this one; one called while a ball rolls
    again reads no table at rest."""
    truth = rolling_truth(CREEP, 4.5, lift_t=5.0)
    shot = replace(truth, events=truth.events + (parse_event({"type": "shot_started", "t": 5.1, "player": "red"}),))
    assert settle_pairs(run_settles((5.3, Location.slot_at(1, 1))), shot) == []
    assert settle_pairs(run_settles((5.3, Location.slot_at(1, 1))), truth) == [(0, 0, True)]
    # knocked on 5.5 s in: it rolls 50 mm a frame for a second, then lies still again
    knocked = rolling_truth(CREEP + [(506.0 + 50.0 * k, 10.0, True) for k in range(10)]
                            + [(1006.0, 10.0, False)] * 10, 4.5)
    assert settle_windows(knocked) == [(10, 55)]
    assert settle_pairs(run_settles((6.0, Location.slot_at(1, 1))), knocked) == []
    assert settle_pairs(run_settles((6.0, Location.slot_at(1, 1)), (6.8, Location.slot_at(1, 1))),
                        knocked) == [(0, 1, True)]


def test_a_settle_called_while_a_hand_still_hides_the_ball_being_put_down_is_not_paired():
    """starcluster_v5: a ball put down by hand in a gutter, hidden by the hand for a second, then still for 19 s
    before the truth settled. The referee's settle from before it was put down read the table without it; the
    one called once it lay there read it right: that one is the pair."""
    truth = rolling_truth([(500.0, 10.0, False)] * 30, 2.5)
    hidden = tuple({**f, "balls": [[*b[:7], k >= 10, k < 10, b[9]] for b in f["balls"]]}
                   for k, f in enumerate(truth.frames))
    truth = replace(truth, frames=hidden)
    assert settle_windows(truth) == [(10, 30)]
    run = run_settles((0.5, Location.slot_at(1, 2)), (1.5, Location.slot_at(1, 1)))
    assert pair_settles(run, truth) == [(0, 1)]
    assert score_assignment(run, truth).accuracy == 1.0


def test_a_table_shows_its_settle_only_once_every_ball_of_it_is_on_the_table():
    """starcluster_v36: a marble dropped into a gutter at 0.9 s, in view at once (no truth frame had it before).
    The window of the truth's settle with it began at the video's first frame, and paired the referee's settle of
    the empty table at 0.4 s, before any ball was on it, instead of the one called with the marble there."""
    truth = rolling_truth([(500.0, 10.0, False)] * 30, 2.5)
    truth = replace(truth, frames=tuple({**f, "balls": f["balls"] if k >= 10 else []}
                                        for k, f in enumerate(truth.frames)))
    assert settle_windows(truth) == [(10, 30)]
    empty = parse_event({"type": "table_settled", "t": 0.4, "balls": []})
    run = (empty,) + run_settles((1.5, Location.slot_at(1, 1)))
    assert pair_settles(run, truth) == [(0, 1)]
    assert score_assignment(run, truth).accuracy == 1.0
