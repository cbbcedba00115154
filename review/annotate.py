"""The annotated video: a run's source footage with the overlay on every frame.

The source is decoded again and every frame is re-encoded with the overlay
(H.264 in MP4, yuv420p, no audio). Each frame keeps its presentation time, in
the source's own time base, so a time in the event log is the same moment in
the annotated video. The file is written under a temporary name and renamed
when complete, so a failed run leaves no half-written video.
"""

from __future__ import annotations

import os
import time
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from tqdm import tqdm

from calibration.calibrate import Calibration, calibrate_markers, load_calibration
from calibration.homography import CalibrationError
from calibration.profile import TableProfile, load_profile
from record.run_folder import CALIBRATION_FILE
from review.overlay import Overlay
from review.settings import Style
from review.record import ReviewError, RunRecord, load_run
from vision.config import TableWatchConfig
from vision.video_io import VideoInfo, VideoWriter, probe, read_frames


@dataclass(frozen=True)
class Review:
    """A run ready to be drawn over its source video."""

    record: RunRecord
    source: Path
    info: VideoInfo
    overlay: Overlay


@dataclass(frozen=True)
class Written:
    """A video written by the review tools, as its encoder counted it."""

    path: Path
    frames: int
    first_t: float  # presentation time of the first frame, seconds
    last_t: float
    seconds: float  # wall time it took

    @property
    def frames_per_s(self) -> float:
        return self.frames / self.seconds if self.seconds > 0 else 0.0


def open_review(run_dir: str | Path, source: str | Path, calibration: str | Path | None = None,
                profile: str | Path | None = None, style: Style = Style()) -> Review:
    """Read the run and check its source video; the calibration is --calibration, else the run's
    calibration.json, else the table's markers found on the source's first seconds (as `referee run` does)."""
    record = load_run(run_dir)
    source = Path(source)
    info = probe(source)
    table = load_profile(profile or record.game)
    if table.game != record.game:
        raise ReviewError(f"profile {table.name!r} is for {table.game}, but the run in {run_dir} is {record.game}")
    saved = Path(calibration) if calibration is not None else Path(run_dir) / CALIBRATION_FILE
    if calibration is not None or saved.is_file():
        cal = load_calibration(saved)
    else:
        cal = _calibrate_from_markers(source, table)
    if cal.game != record.game:
        raise ReviewError(f"calibration {saved} is for {cal.game}, but the run in {run_dir} is {record.game}")
    if tuple(cal.image_size) != (info.width, info.height):
        raise ReviewError(f"{source} is {info.width}x{info.height} but the run's calibration is for "
                          f"{cal.image_size[0]}x{cal.image_size[1]}; pass the video the run refereed")
    return Review(record, source, info, Overlay(record, cal, table, (info.width, info.height), style))


def _calibrate_from_markers(source: Path, profile: TableProfile) -> Calibration:
    search_s = TableWatchConfig().calibration_search_s
    with closing(read_frames(source)) as frames:
        for frame in frames:
            try:
                return calibrate_markers(frame.image, profile)
            except CalibrationError:
                if frame.t > search_s:
                    break
    raise ReviewError(f"the run has no {CALIBRATION_FILE} and no table markers were found in the first "
                      f"{search_s:g} s of {source}; pass --calibration")


def annotate(review: Review, out: str | Path, progress: bool = False) -> Written:
    """Write the whole source with the overlay to `out` (an .mp4), keeping every frame's timestamp."""
    out = _mp4(out)
    info = review.info
    started = time.perf_counter()
    first_t = last_t = None
    with written_atomically(out) as partial, VideoWriter(partial, info.width, info.height, info.fps,
                                                         time_base=info.time_base) as writer, \
            closing(read_frames(review.source)) as frames, \
            tqdm(total=info.frame_count or None, unit="frame", desc="annotate", disable=not progress,
                 leave=False, dynamic_ncols=True) as bar:
        for frame in frames:
            writer.write(review.overlay.render(frame), frame.t)
            first_t = frame.t if first_t is None else first_t
            last_t = frame.t
            bar.update()
        if first_t is None or last_t is None:
            raise ReviewError(f"{review.source} gave no frames; check the video")
    return Written(out, writer.frames_written, first_t, last_t, time.perf_counter() - started)


def _mp4(out: str | Path) -> Path:
    out = Path(out)
    if out.suffix.lower() != ".mp4":
        raise ReviewError(f"{out}: the review videos are MP4 files; give a name ending in .mp4")
    return out


@contextmanager
def written_atomically(path: Path) -> Iterator[Path]:
    """A temporary name next to `path`: renamed to it when the block succeeds, removed when it fails."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.stem}.partial{path.suffix}")
    try:
        yield temp
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    os.replace(temp, path)
