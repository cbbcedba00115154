"""`referee batch`: a tournament's matches refereed, highlighted and reported, on a local process pool or on Ray.

Each match is exactly what the single-match commands make: `referee run` (its run folder), `referee highlights`
(clips and reel, in the run folder) and `referee report` (report.html). A match runs in one worker from start to
end (`referee_match`, a plain function: the pool and Ray call the same one), in its own folder
OUT/matches/ID/, and is complete only once its stamp (`record.batch`) is written, last. So:

* a match whose stamp still matches its inputs and outputs is skipped, and its worker never starts;
* a match that fails records its one-line error (OUT/matches/ID/error.json) and the others go on;
* a match stopped half-way (Ctrl-C, a killed worker, a lost Ray node) has no stamp and is refereed again by the
  next batch; its unfinished run folder is moved aside (run.replaced-TIME), never written over.

After the matches: the day's reel (every match's reel joined, OUT/reel.mp4), the tournament page
(OUT/tournament.html, `review.tournament`) and OUT/batch.json (what each match came to, this batch).
With Ray the inputs and OUT must be on a filesystem every node sees (the same paths).
"""

from __future__ import annotations

import resource
import socket
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from record.batch import ERROR_FILE, MatchSpec, read_stamp, write_error, write_stamp
from record.run_folder import HIGHLIGHTS_DIR, HIGHLIGHTS_INDEX_FILE, HIGHLIGHTS_REEL_FILE, RESULT_FILE
from rules.errors import InputError
from rules.files import read_json, write_json_atomically

from . import __version__

RUN_DIR = "run"
REPORT_FILE = "report.html"
DAY_REEL_FILE = "reel.mp4"
PAGE_FILE = "tournament.html"
SUMMARY_FILE = "batch.json"
SUMMARY_FORMAT = "table-referee/batch@1"
STATUSES = ("done", "skipped", "failed")
HEAD_TIMEOUT_S = 5.0  # a Ray head that has not answered a connection in this long is not there


class BatchError(InputError):
    """The batch cannot start as asked (an executor that cannot be reached, a bad option)."""


@dataclass(frozen=True)
class MatchOutcome:
    """What one match came to in this batch."""

    match_id: str
    game: str
    status: str  # one of STATUSES
    error: str | None  # "failed": the one-line reason
    seconds: float  # wall time in its worker (0 when skipped)
    peak_rss_mb: float  # the worker's peak resident memory during the match (Linux; 0 when skipped)
    match_dir: Path
    result: dict[str, Any] | None  # complete, final_scores, winners, status (from result.json)

    @property
    def run_dir(self) -> Path:
        return self.match_dir / RUN_DIR

    @property
    def report(self) -> Path:
        return self.match_dir / REPORT_FILE

    @property
    def reel(self) -> Path:
        return self.run_dir / HIGHLIGHTS_DIR / HIGHLIGHTS_REEL_FILE

    def to_json(self) -> dict[str, Any]:
        return {"id": self.match_id, "game": self.game, "status": self.status, "error": self.error,
                "seconds": round(self.seconds, 3), "peak_rss_mb": round(self.peak_rss_mb, 1),
                "folder": str(self.match_dir), "result": self.result}


def match_folder(out: Path, match_id: str) -> Path:
    return out / "matches" / match_id


def pose_model_for(match: MatchSpec) -> Path | None:
    from vision.config import DEFAULT_POSE_MODEL

    return DEFAULT_POSE_MODEL if match.pose else None


def fingerprint(match: MatchSpec) -> dict[str, Any]:
    """What the match's outputs depend on (hashes its video and input files: done once a match, by the batch)."""
    return match.fingerprint(__version__, pose_model_for(match))


def skipped(match: MatchSpec, out: Path, inputs: dict[str, Any]) -> MatchOutcome | None:
    """The match as already complete, if its stamp still matches its inputs and outputs."""
    folder = match_folder(out, match.match_id)
    stamp = read_stamp(folder, inputs)
    return None if stamp is None else MatchOutcome(match.match_id, match.game, "skipped", None, 0.0, 0.0, folder,
                                                   stamp.get("result"))


def referee_match(match: MatchSpec, out: Path, inputs: dict[str, Any]) -> MatchOutcome:
    """Referee, highlight and report one match in its folder, then stamp it with `inputs` (its `fingerprint`); a
    failure is recorded in the folder and returned (the batch goes on). Runs in a worker process (pool or Ray)."""
    folder = match_folder(out, match.match_id)
    started = time.perf_counter()
    _reset_peak_rss()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / ERROR_FILE).unlink(missing_ok=True)
        outputs = _referee(match, folder)
        result = _result(folder / RUN_DIR)
        write_stamp(folder, match.match_id, inputs, outputs, result, time.perf_counter() - started)
        status, error = "done", None
    except Exception as failure:  # recorded in the match's folder and the batch's summary, reported by the CLI
        status, error, result = "failed", _one_line(failure), None
        write_error(folder, match.match_id, error, type(failure).__name__)
    return MatchOutcome(match.match_id, match.game, status, error, time.perf_counter() - started, _peak_rss_mb(),
                        folder, result)


def _referee(match: MatchSpec, folder: Path) -> list[Path]:
    """`referee run`, `referee highlights`, `referee report` for one match; returns the files they wrote."""
    from referee.session import RefereeSession, RunSpec
    from review.annotate import open_review
    from review.highlights import write_highlights
    from review.report import build_report

    run_dir = folder / RUN_DIR
    start = "fresh" if run_dir.exists() else "new"  # an unfinished run is moved aside (run.replaced-TIME), kept
    spec = RunSpec(str(match.video), match.game, run_dir, profile=match.profile, calibration=match.calibration,
                   config=match.config, session=match.session, players=match.players, pose=match.pose,
                   start=start)
    with RefereeSession.open(spec) as session:
        summary = session.run()
    if summary.stopped is not None:
        raise InputError(f"the run stopped at {summary.last_t:.1f} s ({summary.stopped.reason.value})")
    review = open_review(run_dir, match.video, match.calibration, match.profile)
    highlights = write_highlights(review, run_dir / HIGHLIGHTS_DIR)
    build_report(run_dir, folder / REPORT_FILE, video=match.video, clips_dir=run_dir / HIGHLIGHTS_DIR,
                 calibration=match.calibration)
    files = [run_dir / name for name in ("events.jsonl", "decisions.jsonl", RESULT_FILE)]
    files += [run_dir / HIGHLIGHTS_DIR / HIGHLIGHTS_INDEX_FILE, folder / REPORT_FILE]
    files += [highlights.index.parent / clip.file for clip in highlights.clips]
    if highlights.reel is not None:
        files.append(highlights.reel.path)
    return files


def _result(run_dir: Path) -> dict[str, Any]:
    data = read_json(run_dir / RESULT_FILE, "result", fix="the run wrote it; referee the match again")
    return {key: data.get(key) for key in ("complete", "final_scores", "winners", "status")}


def _one_line(failure: BaseException) -> str:
    text = " ".join(str(failure).split()) or type(failure).__name__
    return text if isinstance(failure, InputError) else f"{type(failure).__name__}: {text}"


def _reset_peak_rss() -> None:
    """Linux: the process's peak resident memory starts again from now, so each match gets its own (a worker's
    ru_maxrss counts its earlier matches, and a spawned worker's even the parent's)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass  # elsewhere the figure is the process's peak so far


def _peak_rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return float(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kB, macOS: bytes


# ------------------------------------------------------------------------------------------------- executors
Outcomes = Iterator[MatchOutcome]
Todo = Sequence[tuple[MatchSpec, dict[str, Any]]]  # the matches to referee, each with its fingerprint


def serial(todo: Todo, out: Path) -> Outcomes:
    """One match after another, in this process."""
    for match, inputs in todo:
        yield referee_match(match, out, inputs)


def local_pool(jobs: int) -> Callable[[Todo, Path], Outcomes]:
    """A pool of `jobs` worker processes, a fresh one for each match (spawned: no thread state of this process is
    forked into them; one match's memory is not the next one's)."""
    def outcomes(todo: Todo, out: Path) -> Outcomes:
        waiting = list(todo)
        with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn"), max_tasks_per_child=1) as pool:
            pending: set[Future[MatchOutcome]] = set()
            while waiting or pending:
                # a match is handed over only when a worker is free: on Ctrl-C (which the workers get too) no
                # queued match starts while the pool shuts down
                while waiting and len(pending) < jobs:
                    match, inputs = waiting.pop(0)
                    pending.add(pool.submit(referee_match, match, out, inputs))
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    yield future.result()
    return outcomes


def on_ray(address: str, cpus: int) -> Callable[[Todo, Path], Outcomes]:
    """Ray: `address` is "local" (a head started in this process with `cpus` CPUs), "auto" (the cluster this
    machine belongs to, started by `ray start --head`) or a head's host:port. Each match is one task of 1 CPU, in a
    worker process of its own."""
    def outcomes(todo: Todo, out: Path) -> Outcomes:
        try:
            import ray
        except ImportError:
            raise BatchError("--ray needs Ray: pip install 'table-referee[batch]' (or ray)") from None
        _reachable(address)
        try:
            if address == "local":
                ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
            else:
                ray.init(address=address, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as error:
            raise BatchError(f"--ray {address}: no Ray cluster could be reached ({_one_line(error)}); start one "
                             "with `ray start --head` (one with token authentication needs RAY_AUTH_MODE=token and "
                             "its token here too), or give --ray local") from None
        try:
            task = ray.remote(num_cpus=1, max_retries=1, max_calls=1)(referee_match)  # a fresh worker a match
            pending = {task.remote(match, out, inputs): match for match, inputs in todo}
            try:
                while pending:
                    finished, _ = ray.wait(list(pending), num_returns=1)
                    for ref in finished:
                        match = pending.pop(ref)
                        try:
                            yield ray.get(ref)
                        except ray.exceptions.RayError as error:  # the worker or its node died: not stamped
                            yield MatchOutcome(match.match_id, match.game, "failed", _one_line(error), 0.0, 0.0,
                                               match_folder(out, match.match_id), None)
            finally:
                for ref in pending:
                    ray.cancel(ref, force=True)
        finally:
            ray.shutdown()
    return outcomes


def _reachable(address: str) -> None:
    """A head's host:port is tried first: Ray itself waits minutes for a head that is not there."""
    if address in ("local", "auto") or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise BatchError(f"--ray {address!r} is not host:port, 'auto' or 'local'; e.g. --ray 10.0.0.5:6379")
    try:
        socket.create_connection((host, int(port)), timeout=HEAD_TIMEOUT_S).close()
    except OSError as error:
        raise BatchError(f"--ray {address}: no Ray head answers there ({error.strerror or error}); start one with "
                         "`ray start --head`, or give --ray local") from None


# ------------------------------------------------------------------------------------------------- the batch
@dataclass(frozen=True)
class BatchSummary:
    outcomes: tuple[MatchOutcome, ...]  # in the manifest's order
    page: Path
    day_reel: Path | None
    seconds: float  # the whole batch
    reel_seconds: float  # of which joining the day's reel (in the calling process, after the matches)
    page_seconds: float  # ... and writing the tournament page

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.outcomes)


def run_batch(matches: Sequence[MatchSpec], out: Path,
              executor: Callable[[Todo, Path], Outcomes],
              on_outcome: Callable[[MatchOutcome], None] = lambda outcome: None, title: str = "Tournament"
              ) -> BatchSummary:
    """Every match (complete ones skipped before any worker starts), then the day's reel, the tournament page and
    the summary. `on_outcome` hears each match as it ends (a progress bar)."""
    from review.tournament import MatchEntry, build_tournament_page

    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    done: dict[str, MatchOutcome] = {}
    todo = []
    for match in matches:
        inputs = fingerprint(match)
        outcome = skipped(match, out, inputs)
        if outcome is not None:
            done[match.match_id] = outcome
            on_outcome(outcome)
        else:
            todo.append((match, inputs))
    for outcome in executor(todo, out):
        done[outcome.match_id] = outcome
        on_outcome(outcome)
    outcomes = tuple(done[m.match_id] for m in matches)
    reels = [(o.match_id, o.reel) for o in outcomes if o.status != "failed" and o.reel.is_file()]
    reel_started = time.perf_counter()
    day_reel = join_reels(reels, out / DAY_REEL_FILE) if reels else None
    page_started = time.perf_counter()
    entries = [MatchEntry(o.match_id, o.game, None, None, None, o.error) if o.status == "failed" else
               MatchEntry(o.match_id, o.game, o.run_dir if o.run_dir.is_dir() else None, o.report,
                          o.reel if o.reel.is_file() else None, None)
               for o in outcomes]
    page = build_tournament_page(entries, out / PAGE_FILE, title=title, day_reel=day_reel).path
    ended = time.perf_counter()
    summary = BatchSummary(outcomes, page, day_reel, ended - started, page_started - reel_started,
                           ended - page_started)
    write_json_atomically(out / SUMMARY_FILE, {
        "format": SUMMARY_FORMAT, "referee": __version__, "seconds": round(summary.seconds, 3),
        "reel_seconds": round(summary.reel_seconds, 3), "page_seconds": round(summary.page_seconds, 3),
        "counts": {s: sum(o.status == s for o in outcomes) for s in STATUSES},
        "matches": [o.to_json() for o in outcomes]})
    return summary


def join_reels(reels: Sequence[tuple[str, Path]], out: Path) -> Path:
    """The matches' reels one after another, each after a one-second card naming its match, in one H.264 file,
    written atomically. A reel encoded as the first one is (the same size, frame rate and time base: matches filmed
    alike) is copied into it as it is, packet for packet; any other is first encoded again at the first one's size."""
    import tempfile

    import cv2
    import numpy as np

    from review.annotate import written_atomically
    from review.overlay import put_text, text_width
    from vision.video_io import VideoWriter, encoded_alike, join_videos, probe, read_frames

    first = probe(reels[0][1])
    width, height, fps = first.width, first.height, first.fps

    def alike(path: Path) -> VideoWriter:
        return VideoWriter(path, width, height, fps, time_base=first.time_base)

    def encoded_again(reel: Path, path: Path) -> Path:
        with alike(path) as writer:
            for frame in read_frames(reel):
                image = frame.image
                if image.shape[:2] != (height, width):
                    image = cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA)
                writer.write(image, frame.t)
        return path

    with tempfile.TemporaryDirectory(prefix="day-reel-") as temp:
        parts: list[Path] = []
        for number, (match_id, reel) in enumerate(reels):
            card = np.zeros((height, width, 3), np.uint8)
            size = height / 720 * 1.4
            text = f"MATCH {match_id}"
            put_text(card, text, ((width - text_width(text, size, 2)) // 2, height // 2), size, (255, 255, 255), 2)
            card_path = Path(temp) / f"{number}_card.mp4"
            with alike(card_path) as writer:
                for k in range(max(1, round(fps))):
                    writer.write(card, k / fps)
            parts += [card_path, reel if encoded_alike(card_path, reel) else
                      encoded_again(reel, Path(temp) / f"{number}_reel.mp4")]
        with written_atomically(out) as partial:
            join_videos(parts, partial, 1 / fps)
    return out
