"""Score a referee run against a simulation's ground truth (`referee eval`).

The run folder is read by `record.run_folder.read_run` (what each of its files
must be is written there): `events.jsonl`, `result.json` (replayed from the
events when the run did not finish) and, for the per-frame metrics,
`tracks.jsonl` (one line per processed frame: the confirmed tracks and the
detections). The truth is `truth.json` from `referee simulate`
(simulation/truth.py).

What is measured, and how things are paired:

* final scores: the run's `final_scores`, winners and completeness against the truth's result;
* shots: each `shot` decision with the decisions made at the same moment
  (points per player, fouls); truth and run shots are paired by time (Hungarian,
  gated), a shot is right when player, outcome, points and fouls all agree;
* assignment: each truth `table_settled` is paired with the run's settle of
  the same table: the first run settle called while the table showed it, from
  the moment no ball was in flight any more (in the air, or rolling on further
  than its radius before it stops) until the table next changed (a ball moved
  or was lifted, the next settle); failing that, late, the first run settle
  after that, before the next shot or the next such window, with no ball in
  flight (a table shown for less than the referee's debounce, a gutter ball
  lifted half a second after it stopped, is read where it lay once the hand has
  gone; `AssignmentReport.late` counts these); the snapshots are compared as
  multisets of (owner, location): accuracy = balls right / max(truth balls, run
  balls), summed over truth snapshots (a snapshot the run never settled on
  scores 0 of its balls, and so does one read while a ball was still in flight:
  it is no reading of the settled table);
* timing: for the same pairs, run `table_settled` t minus the truth's (the
  truth's is the moment the simulation called the table settled), and minus
  the true rest (the first frame after the last moving ball before it);
* detection: per frame, detections paired with visible truth balls on the board
  plane (Hungarian, gated in mm); a pair of the wrong colour counts as both a
  false positive and a miss; localisation error is over all pairs;
* tracking: MOTA, IDF1 and ID switches from py-motmetrics, distances in board mm,
  a track may only match a ball of its own colour.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from record.run_folder import EVENTS_FILE, RESULT_FILE, TRACKS_FILE, TrackFrame, read_run, track_frame
from rules.errors import InputError
from rules.events import BallLifted, Event, LogError, ShotStarted, TableSettled, parse_event
from rules.files import loads
from rules.replay import replay
from rules.result import build_result
from vision.assignment import linear_sum_assignment

TRUTH_FORMAT = "table-referee/sim-truth@1"
POINT_KINDS = ("score", "capture")
AIRBORNE_MM = 2.0  # a ball's centre this far above its resting height is off the table surface


class EvalError(InputError):
    """A truth file that cannot be scored against: the message says which and why.

    A run folder that cannot be read is a `record.run_folder.RunFolderError`.
    """


@dataclass(frozen=True)
class EvalConfig:
    """How far apart two things may be and still count as the same one."""

    event_gate_s: float = 2.0  # a run shot this far from the truth's is another one
    detection_gate_mm: float = 30.0  # a detection further than this from every ball is a false positive
    track_gate_mm: float = 30.0  # the same for tracks, in motmetrics
    frame_tolerance_s: float = 0.02  # a run frame pairs with the truth frame this close in time


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Truth:
    game: str
    config: dict[str, Any]
    fps: float
    owners: dict[int, str]
    frames: tuple[dict[str, Any], ...]  # {"t", "balls": [[id, x, y, z, u, v, r, visible, occluded, moving]]}
    events: tuple[Event, ...]
    result: dict[str, Any]
    ball_mm: float  # the balls' diameter (the truth's table profile)


@dataclass(frozen=True)
class Run:
    events: tuple[Event, ...]
    result: dict[str, Any]
    frames: tuple[TrackFrame, ...] | None  # tracks.jsonl; None when the run wrote none
    notes: tuple[str, ...] = ()  # what was tolerated while reading (a torn last line, a replayed result)


def load_truth(path: str | Path) -> Truth:
    path = Path(path)
    try:
        data = loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EvalError(f"truth file {path} does not exist; pass the truth.json written by referee simulate") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise EvalError(f"truth file {path} cannot be read as JSON ({error}); pass a truth.json "
                        "written by referee simulate") from None
    if not isinstance(data, dict) or data.get("format") != TRUTH_FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise EvalError(f"truth file {path} is not a simulation truth (format {found!r}, expected "
                        f"{TRUTH_FORMAT!r}); pass the truth.json written by referee simulate")
    try:
        events = tuple(parse_event(e) for e in data["events"])
        return Truth(game=data["game"], config=dict(data.get("config") or {}), fps=float(data["fps"]),
                     owners={int(k): v for k, v in data["ball_owners"].items()},
                     frames=tuple(data["frames"]), events=events, result=data["result"],
                     ball_mm=float(data["profile"]["ball_diameter_mm"]))
    except (KeyError, TypeError, ValueError, OverflowError, LogError) as error:
        raise EvalError(f"truth file {path} is incomplete or malformed ({error!r}); regenerate it "
                        "with referee simulate") from None


def load_run(run_dir: str | Path, truth: Truth) -> Run:
    """Read a run folder; without result.json (a run that crashed) the events are replayed."""
    folder = read_run(run_dir)
    notes = list(folder.notes)
    result = folder.result
    if result is None:
        replayed = replay(list(folder.events), truth.game, truth.config)
        result = build_result(replayed, {"log": str(folder.path(EVENTS_FILE)), "events": len(folder.events)})
        notes.append(f"no {RESULT_FILE}: scored a replay of {EVENTS_FILE}")
    if folder.tracks is None:
        notes.append(f"no {TRACKS_FILE}: detection and tracking not scored")
    return Run(folder.events, result, folder.tracks, tuple(notes))


# --------------------------------------------------------------------------- report


@dataclass(frozen=True)
class Stats:
    """Summary of a list of values (ms or mm); all None when there were none."""

    n: int
    mean: float | None
    p95: float | None
    max: float | None

    @staticmethod
    def of(values: Iterable[float]) -> "Stats":
        a = np.asarray(list(values), float)
        if a.size == 0:
            return Stats(0, None, None, None)
        return Stats(int(a.size), float(a.mean()), float(np.percentile(a, 95)), float(a.max()))


@dataclass(frozen=True)
class ScoresReport:
    exact: bool
    truth: dict[str, int]
    run: dict[str, int]
    winners_match: bool
    complete_match: bool


@dataclass(frozen=True)
class ShotsReport:
    truth: int
    run: int
    matched: int
    correct: int
    accuracy: float | None  # correct / truth shots
    outcome_accuracy: float | None
    points_accuracy: float | None
    fouls_accuracy: float | None
    mistakes: tuple[str, ...]


@dataclass(frozen=True)
class AssignmentReport:
    truth_snapshots: int
    run_snapshots: int
    matched: int
    exact_snapshots: int
    balls_right: int
    balls_total: int
    accuracy: float | None
    mistakes: tuple[str, ...]
    late: int  # of `matched`: paired with a run settle called after the table changed (`settle_pairs`)


@dataclass(frozen=True)
class TimingReport:
    error_ms: Stats  # run table_settled t - truth table_settled t
    after_rest_ms: Stats  # run table_settled t - true rest


@dataclass(frozen=True)
class DetectionReport:
    frames: int
    truth_balls: int
    detections: int
    true_positives: int
    wrong_colour: int
    precision: float | None
    recall: float | None
    error_mm: Stats


@dataclass(frozen=True)
class TrackingReport:
    frames: int
    mota: float
    idf1: float
    id_switches: int
    false_positives: int
    misses: int
    objects: int
    mean_error_mm: float | None


@dataclass(frozen=True)
class Report:
    game: str
    scores: ScoresReport
    shots: ShotsReport
    assignment: AssignmentReport
    timing: TimingReport
    detection: DetectionReport | None
    tracking: TrackingReport | None
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def evaluate(run: Run, truth: Truth, config: EvalConfig = EvalConfig()) -> Report:
    frames = run.frames
    return Report(
        game=truth.game,
        scores=score_finals(run.result, truth.result),
        shots=score_shots(run.result["decisions"], truth.result["decisions"], config),
        assignment=score_assignment(run.events, truth),
        timing=score_timing(run.events, truth),
        detection=None if frames is None else score_detection(frames, truth, config),
        tracking=None if frames is None else score_tracking(frames, truth, config),
        notes=run.notes,
    )


# --------------------------------------------------------------------------- scores and shots


def score_finals(run: dict[str, Any], truth: dict[str, Any]) -> ScoresReport:
    players = set(truth["final_scores"]) | set(run["final_scores"])
    t_scores = {p: int(truth["final_scores"].get(p, 0)) for p in sorted(players)}
    r_scores = {p: int(run["final_scores"].get(p, 0)) for p in sorted(players)}
    return ScoresReport(exact=t_scores == r_scores, truth=t_scores, run=r_scores,
                        winners_match=sorted(run.get("winners", [])) == sorted(truth.get("winners", [])),
                        complete_match=run.get("complete") == truth.get("complete"))


@dataclass(frozen=True)
class Shot:
    """A shot decision with what was decided at the same moment."""

    t: float
    player: str | None
    outcome: str | None
    points: tuple[tuple[str, int], ...]  # player -> points, zeros left out
    fouls: tuple[tuple[str, str], ...]  # (player, foul kind)

    def __str__(self) -> str:
        pts = ", ".join(f"{p} +{n}" for p, n in self.points) or "no points"
        fouls = "; fouls " + ", ".join(f"{p}:{k}" for p, k in self.fouls) if self.fouls else ""
        return f"{self.player} {self.outcome} ({pts}{fouls})"


def shots_of(decisions: list[dict[str, Any]]) -> list[Shot]:
    """Group decisions into shots: a `shot` decision and the decisions that follow it at the same t."""
    shots: list[Shot] = []
    group: list[dict[str, Any]] = []

    def close() -> None:
        if not group:
            return
        head = group[0]
        points: Counter[str] = Counter()
        fouls = []
        for d in group:
            if d.get("kind") in POINT_KINDS and d.get("player") is not None:
                points[d["player"]] += int(d.get("points", 0))
            if d.get("kind") == "foul":
                fouls.append((str(d.get("player")), str(d.get("foul") or d.get("rule") or "foul")))
        shots.append(Shot(float(head["t"]), head.get("player"), head.get("outcome"),
                          tuple(sorted((p, n) for p, n in points.items() if n)), tuple(sorted(fouls))))
        group.clear()

    for d in decisions:
        if d.get("kind") == "shot":
            close()
            group.append(d)
        elif group and abs(float(d["t"]) - float(group[0]["t"])) < 1e-6:
            group.append(d)
        else:
            close()
    close()
    return shots


def match_by_time(truth_t: list[float], run_t: list[float], gate_s: float) -> list[tuple[int, int]]:
    """Pairs (truth index, run index) minimising total |dt|, none further apart than the gate."""
    if not truth_t or not run_t:
        return []
    cost = np.abs(np.subtract.outer(np.asarray(truth_t, float), np.asarray(run_t, float)))
    big = 1e6
    rows, cols = linear_sum_assignment(np.where(cost <= gate_s, cost, big))
    return sorted((int(i), int(j)) for i, j in zip(rows, cols) if cost[i, j] <= gate_s)


def score_shots(run: list[dict[str, Any]], truth: list[dict[str, Any]], config: EvalConfig) -> ShotsReport:
    t_shots, r_shots = shots_of(truth), shots_of(run)
    pairs = match_by_time([s.t for s in t_shots], [s.t for s in r_shots], config.event_gate_s)
    outcome = points = fouls = correct = 0
    mistakes = []
    for i, j in pairs:
        a, b = t_shots[i], r_shots[j]
        same_outcome = (a.player, a.outcome) == (b.player, b.outcome)
        outcome += same_outcome
        points += a.points == b.points
        fouls += a.fouls == b.fouls
        if same_outcome and a.points == b.points and a.fouls == b.fouls:
            correct += 1
        else:
            mistakes.append(f"shot at {a.t:.2f}s: truth {a}, run {b}")
    matched_truth = {i for i, _ in pairs}
    mistakes += [f"shot at {s.t:.2f}s missed: truth {s}" for i, s in enumerate(t_shots) if i not in matched_truth]
    matched_run = {j for _, j in pairs}
    mistakes += [f"extra shot at {s.t:.2f}s: run {s}" for j, s in enumerate(r_shots) if j not in matched_run]
    n = len(t_shots)
    return ShotsReport(n, len(r_shots), len(pairs), correct, _ratio(correct, n), _ratio(outcome, n),
                       _ratio(points, n), _ratio(fouls, n), tuple(mistakes))


# --------------------------------------------------------------------------- snapshots and timing


def _settles(events: Iterable[Event]) -> list[TableSettled]:
    return [e for e in events if isinstance(e, TableSettled)]


def in_flight(truth: Truth) -> list[bool]:
    """Per truth frame: is a ball in flight? In the air (its centre above resting height), or moving and going to
    end up more than its radius from here (rolling on, or leaving the table): a ball creeping a millimetre in its
    slot is at rest for the referee's purpose. One pass from the last frame back, carrying where each ball next
    rests."""
    radius = truth.ball_mm / 2
    last = len(truth.frames) - 1
    flying = [False] * len(truth.frames)
    rests_at: dict[int, tuple[float, float]] = {}  # ball -> where it rests next, from the frame after (none: gone)
    for k in range(last, -1, -1):
        here: dict[int, tuple[float, float] | None] = {}
        for ball in truth.frames[k]["balls"]:
            ball_id, at, z, moving = int(ball[0]), (float(ball[1]), float(ball[2])), float(ball[3]), bool(ball[9])
            if moving and k < last:
                rest = rests_at.get(ball_id)
                flying[k] |= z > radius + AIRBORNE_MM or rest is None or math.dist(at, rest) > radius
                here[ball_id] = rest
            else:
                flying[k] |= moving and z > radius + AIRBORNE_MM
                here[ball_id] = at
        rests_at = {ball_id: at for ball_id, at in here.items() if at is not None}
    return flying


def settles_in_flight(run: Iterable[Event], truth: Truth) -> int:
    """How many of the run's table_settled events were called while a ball was in flight (`in_flight`)."""
    flying = in_flight(truth)
    times = np.array([float(f["t"]) for f in truth.frames])
    return sum(flying[frame_at(times, e.t)] for e in _settles(run)) if times.size else 0


def frame_at(times: np.ndarray, t: float) -> int:
    """The index of the truth frame nearest to `t`."""
    k = int(np.clip(np.searchsorted(times, t), 0, times.size - 1))
    return k - 1 if k > 0 and abs(times[k - 1] - t) <= abs(times[k] - t) else k


def settle_windows(truth: Truth) -> list[tuple[int, int]]:
    """For each truth table_settled, the truth frames [first, end) over which the table shows its snapshot: from
    the frame after the last one with a ball in flight, not yet seen (put down under a hand: the table does not
    show it yet) or not yet on the table at all (starcluster_v36's marble dropped into a gutter in view: the
    window began at the first frame, and paired the referee's settle of the empty table before it); since the
    previous window; until the table next changes: a ball moves, a ball is lifted, a shot starts, or the next
    settle."""
    times = np.array([float(f["t"]) for f in truth.frames])
    flying = in_flight(truth)
    seen: set[int] = set()
    for k, frame in enumerate(truth.frames):
        seen |= {int(ball[0]) for ball in frame["balls"] if ball[7]}
        flying[k] |= any(int(ball[0]) not in seen for ball in frame["balls"])
    on_table = [{int(ball[0]) for ball in f["balls"]} for f in truth.frames]
    moving = [any(ball[9] for ball in f["balls"]) for f in truth.frames]
    changes = sorted(frame_at(times, e.t) for e in truth.events if isinstance(e, (BallLifted, ShotStarted)))
    settled = [frame_at(times, e.t) for e in _settles(truth.events)]
    windows = []
    first = 0
    for i, at in enumerate(settled):
        for k in range(first, at + 1):
            first = k + 1 if flying[k] or not on_table[at] <= on_table[k] else first
        end = next((k for k in range(at + 1, len(times)) if moving[k]), len(times))
        end = min([end, *(k for k in changes if k > at), *settled[i + 1:i + 2]])
        windows.append((min(first, at), max(end, at + 1)))
        first = max(end, at + 1)
    return windows


def pair_settles(run: Iterable[Event], truth: Truth) -> list[tuple[int, int]]:
    """(truth settle index, run settle index): see `settle_pairs`."""
    return [(i, j) for i, j, _ in settle_pairs(run, truth)]


def settle_pairs(run: Iterable[Event], truth: Truth) -> list[tuple[int, int, bool]]:
    """(truth settle index, run settle index, late): each truth settle with the first run settle called within its
    window (`settle_windows`); failing that, late, with the first run settle called after the window closed, before
    the next shot starts and before the next window opens (so no window holds it), with no ball in flight. A table
    can show for less than the referee's debounce (a gutter ball lifted half a second after it stopped), and the
    referee then reads it where it lay once the hand has gone (vision.pipeline): the reading is scored, and the
    timing says how late it was. A truth settle without either is left unpaired."""
    r_set = _settles(run)
    if not truth.frames:
        return []
    times = np.array([float(f["t"]) for f in truth.frames])
    flying = in_flight(truth)
    at = [frame_at(times, e.t) for e in r_set]
    windows = settle_windows(truth)
    shots = sorted(frame_at(times, e.t) for e in truth.events if isinstance(e, ShotStarted))
    pairs: list[tuple[int, int, bool]] = []
    for i, (first, end) in enumerate(windows):
        j = next((j for j, k in enumerate(at) if first <= k < end), None)
        if j is None:  # a later run settle, before anything else could claim it (windows come in order)
            until = min([len(times), *(k for k in shots if k >= end), *(w[0] for w in windows[i + 1:i + 2])])
            j = next((j for j, k in enumerate(at) if end <= k < until and not flying[k]), None)
            if j is not None:
                pairs.append((i, j, True))
        else:
            pairs.append((i, j, False))
    return pairs


def score_assignment(run: Iterable[Event], truth: Truth) -> AssignmentReport:
    run = tuple(run)
    t_set, r_set = _settles(truth.events), _settles(run)
    paired = settle_pairs(run, truth)
    pairs = {i: j for i, j, _ in paired}
    right = total = exact = 0
    mistakes = []
    for i, settled in enumerate(t_set):
        want = Counter((b.owner, b.at) for b in settled.snapshot.balls)
        got = Counter((b.owner, b.at) for b in r_set[pairs[i]].snapshot.balls) if i in pairs else Counter()
        hits = sum((want & got).values())
        right += hits
        total += max(sum(want.values()), sum(got.values()))
        exact += i in pairs and want == got
        if want != got:
            missing = ", ".join(f"{o}@{at}" for (o, at) in sorted((want - got).elements()))
            extra = ", ".join(f"{o}@{at}" for (o, at) in sorted((got - want).elements()))
            what = "no run snapshot" if i not in pairs else f"missing [{missing}] extra [{extra}]"
            mistakes.append(f"settle at {settled.t:.2f}s: {what}")
    return AssignmentReport(len(t_set), len(r_set), len(pairs), exact, right, total, _ratio(right, total),
                            tuple(mistakes), sum(late for _, _, late in paired))


def true_rest_times(truth: Truth) -> dict[int, float]:
    """For each truth table_settled (by index), when its balls stopped: the frame after the last moving one.

    Left out where no ball moved since the previous settle (nothing came to rest).
    """
    times = [float(f["t"]) for f in truth.frames]
    moving = [any(row[9] for row in f["balls"]) for f in truth.frames]
    rest: dict[int, float] = {}
    k = 0
    for index, settled in enumerate(_settles(truth.events)):
        last = None
        while k < len(times) and times[k] <= settled.t:
            last = k if moving[k] else last
            k += 1
        if last is not None and last + 1 < len(times):
            rest[index] = times[last + 1]
    return rest


def score_timing(run: Iterable[Event], truth: Truth) -> TimingReport:
    run = tuple(run)
    t_set, r_set = _settles(truth.events), _settles(run)
    pairs = pair_settles(run, truth)
    rest = true_rest_times(truth)
    error = [1000.0 * (r_set[j].t - t_set[i].t) for i, j in pairs]
    after = [1000.0 * (r_set[j].t - rest[i]) for i, j in pairs if i in rest]
    return TimingReport(Stats.of(error), Stats.of(after))


# --------------------------------------------------------------------------- detection and tracking


def _frames(frames: Iterable[TrackFrame | dict[str, Any]]) -> list[TrackFrame]:
    """Frames as read by record.run_folder; decoded tracks.jsonl lines (dicts) are converted."""
    out = []
    for frame in frames:
        if isinstance(frame, TrackFrame):
            out.append(frame)
            continue
        try:
            out.append(track_frame(frame))
        except ValueError as problem:
            raise EvalError(f"a tracks line to score is malformed: {problem}") from None
    return out


def _paired_frames(frames: Iterable[TrackFrame | dict[str, Any]], truth: Truth, config: EvalConfig):
    """(run frame, truth frame) for each run frame that has a truth frame close enough in time."""
    times = np.array([float(f["t"]) for f in truth.frames])
    if times.size == 0:
        return
    for frame in _frames(frames):
        t = frame.t
        k = int(np.clip(np.searchsorted(times, t), 1, times.size - 1)) if times.size > 1 else 0
        k = k - 1 if k > 0 and abs(times[k - 1] - t) <= abs(times[k] - t) else k
        if abs(times[k] - t) <= config.frame_tolerance_s:
            yield frame, truth.frames[k]


def _visible(truth: Truth, frame: dict[str, Any]) -> list[tuple[int, str, float, float]]:
    return [(int(r[0]), truth.owners[int(r[0])], float(r[1]), float(r[2])) for r in frame["balls"] if r[7]]


def score_detection(frames: Iterable[TrackFrame | dict[str, Any]], truth: Truth,
                    config: EvalConfig) -> DetectionReport:
    n_frames = n_truth = n_det = tp = wrong = 0
    errors: list[float] = []
    for run_frame, truth_frame in _paired_frames(frames, truth, config):
        balls = _visible(truth, truth_frame)
        dets = run_frame.detections
        n_frames += 1
        n_truth += len(balls)
        n_det += len(dets)
        if not balls or not dets:
            continue
        a = np.array([[b[2], b[3]] for b in balls])
        d = np.array([[det.x, det.y] for det in dets], float)
        dist = np.linalg.norm(a[:, None, :] - d[None, :, :], axis=2)
        rows, cols = linear_sum_assignment(np.where(dist <= config.detection_gate_mm, dist, 1e6))
        for i, j in zip(rows, cols):
            if dist[i, j] > config.detection_gate_mm:
                continue
            errors.append(float(dist[i, j]))
            if dets[j].colour == balls[i][1]:
                tp += 1
            else:
                wrong += 1
    return DetectionReport(n_frames, n_truth, n_det, tp, wrong, _ratio(tp, n_det), _ratio(tp, n_truth),
                           Stats.of(errors))


def score_tracking(frames: Iterable[TrackFrame | dict[str, Any]], truth: Truth,
                   config: EvalConfig) -> TrackingReport:
    import motmetrics  # py-motmetrics: the standard CLEAR-MOT / ID metrics (wrapped here only)

    acc = motmetrics.MOTAccumulator(auto_id=False)
    n_frames = 0
    for run_frame, truth_frame in _paired_frames(frames, truth, config):
        balls = _visible(truth, truth_frame)
        tracks = run_frame.tracks
        d2 = np.full((len(balls), len(tracks)), np.nan)
        for i, (_, owner, x, y) in enumerate(balls):
            for j, track in enumerate(tracks):
                dd = (x - track.x) ** 2 + (y - track.y) ** 2
                if track.colour == owner and dd <= config.track_gate_mm ** 2:
                    d2[i, j] = dd
        acc.update([b[0] for b in balls], [track.id for track in tracks], d2, frameid=n_frames)
        n_frames += 1
    if n_frames == 0:
        return TrackingReport(0, 0.0, 0.0, 0, 0, 0, 0, None)
    metrics = ["mota", "idf1", "num_switches", "num_false_positives", "num_misses", "num_objects"]
    summary = motmetrics.metrics.create().compute(acc, metrics=metrics, name="run")
    row = summary.loc["run"]
    matches = acc.mot_events[acc.mot_events["Type"].isin(["MATCH", "SWITCH"])]["D"]
    errors = list(np.sqrt(matches.astype(float).to_numpy()))
    return TrackingReport(n_frames, _num(row["mota"]), _num(row["idf1"]), int(row["num_switches"]),
                          int(row["num_false_positives"]), int(row["num_misses"]), int(row["num_objects"]),
                          float(np.mean(errors)) if errors else None)


def _num(value: Any) -> float:
    value = float(value)
    return value if np.isfinite(value) else 0.0


def _ratio(a: int, b: int) -> float | None:
    return a / b if b else None


# --------------------------------------------------------------------------- table


def format_table(report: Report, name: str = "run") -> str:
    """A readable, fixed-width summary (the JSON holds everything, mistakes included)."""
    s, sh, asg, tm = report.scores, report.shots, report.assignment, report.timing
    rows = [
        ("final scores", "exact" if s.exact else "WRONG",
         f"truth {_scores(s.truth)}; run {_scores(s.run)}"
         + ("" if s.winners_match else "; winners differ") + ("" if s.complete_match else "; completeness differs")),
        ("shot decisions", _pct(sh.accuracy),
         f"{sh.correct}/{sh.truth} right; {sh.run} run shots, {sh.matched} paired; "
         f"outcome {_pct(sh.outcome_accuracy)}, points {_pct(sh.points_accuracy)}, fouls {_pct(sh.fouls_accuracy)}"),
        ("slot/space assignment", _pct(asg.accuracy),
         f"{asg.balls_right}/{asg.balls_total} balls; {asg.exact_snapshots}/{asg.truth_snapshots} snapshots exact; "
         f"{asg.run_snapshots} run snapshots" + (f", {asg.late} read after the table changed" if asg.late else "")),
        ("settle time - truth", _ms(tm.error_ms.mean), f"mean; p95 {_ms(tm.error_ms.p95)}, max {_ms(tm.error_ms.max)} "
         f"over {tm.error_ms.n} settles"),
        ("settle time - true rest", _ms(tm.after_rest_ms.mean),
         f"mean; p95 {_ms(tm.after_rest_ms.p95)}, max {_ms(tm.after_rest_ms.max)} over {tm.after_rest_ms.n} settles"),
    ]
    det, trk = report.detection, report.tracking
    if det is not None:
        rows += [
            ("detection precision", _pct(det.precision), f"{det.true_positives}/{det.detections} detections; "
             f"{det.wrong_colour} of the wrong colour; {det.frames} frames"),
            ("detection recall", _pct(det.recall), f"{det.true_positives}/{det.truth_balls} visible balls"),
            ("localisation error", _mm(det.error_mm.mean), f"mean; p95 {_mm(det.error_mm.p95)}, "
             f"max {_mm(det.error_mm.max)}"),
        ]
    if trk is not None:
        rows += [
            ("tracking MOTA", _pct(trk.mota), f"{trk.misses} misses, {trk.false_positives} false positives of "
             f"{trk.objects} ball-frames (py-motmetrics)"),
            ("tracking IDF1", _pct(trk.idf1), f"mean track error {_mm(trk.mean_error_mm)}"),
            ("ID switches", str(trk.id_switches), f"over {trk.frames} frames"),
        ]
    width = max(len(r[0]) for r in rows)
    lines = [f"{name} ({report.game})"]
    lines += [f"  {label:<{width}}  {value:>8}  {detail}" for label, value, detail in rows]
    lines += [f"  note: {note}" for note in report.notes]
    return "\n".join(lines) + "\n"


def _scores(scores: dict[str, int]) -> str:
    return " ".join(f"{p} {n}" for p, n in scores.items()) or "-"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.0f} ms"


def _mm(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f} mm"
