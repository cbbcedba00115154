"""Highlight clips: one short annotated clip per notable moment, a reel that joins them, and an index.

A moment is a set of calls made at one time that a viewer would want to see
again: a foul, a Grand Slam, a chain of three or more, a ball knocked into a
slot, a capture or a secured ball, the last shot of a round
(`review.record.MOMENT_KINDS`). Its clip runs from `lead_s` before the shot
began (or before the call when no shot led to it) to `tail_s` after the call.
Moments whose clips overlap become one clip.

Cutting is frame-accurate: `vision.video_io.read_frames` seeks to the keyframe
before the clip's start and decodes forward, dropping frames until the exact
start. A clip never starts at a keyframe just because one is near.
"""

from __future__ import annotations

import tempfile
import time
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from tqdm import tqdm

from record.run_folder import HIGHLIGHTS_INDEX_FILE, HIGHLIGHTS_REEL_FILE
from review.annotate import Review, Written, written_atomically
from review.overlay import clock_text, put_text, text_width
from review.record import MOMENT_KINDS, SAME_S, Caption, ReviewError
from review.settings import ClipSettings
from rules.files import write_json_atomically
from rules.games import TITLES
from vision.video_io import VideoWriter, join_videos, read_frames

INDEX_FORMAT = "table-referee/highlights@1"


@dataclass(frozen=True)
class ClipPlan:
    """One clip to cut: a stretch of the source and the moments it shows (several when they overlap)."""

    start_s: float
    end_s: float
    moments: tuple[Caption, ...]

    @property
    def kinds(self) -> tuple[str, ...]:
        found = {k for m in self.moments for k in m.kinds}
        return tuple(k for k in MOMENT_KINDS if k in found)

    @property
    def players(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for m in self.moments for p in m.players))


@dataclass(frozen=True)
class Clip:
    """A clip as written: its file, the source time range of its first and last frame, its place in the reel."""

    file: str
    plan: ClipPlan
    first_t: float
    last_t: float
    frames: int
    reel_start_s: float  # where the clip itself (after its title card) begins in the reel

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "start_s": round(self.first_t, 4),
            "end_s": round(self.last_t, 4),
            "frames": self.frames,
            "reel_start_s": round(self.reel_start_s, 4),
            "kind": self.plan.kinds[0],
            "kinds": list(self.plan.kinds),
            "players": list(self.plan.players),
            "text": " / ".join(m.headline for m in self.plan.moments),
            "moments": [{"t": m.t, "shot_t": None if m.shot_t is None else round(m.shot_t, 4),
                         "kinds": list(m.kinds), "players": list(m.players), "text": m.headline,
                         "lines": list(m.lines)} for m in self.plan.moments],
        }


@dataclass(frozen=True)
class HighlightSet:
    """What `write_highlights` wrote."""

    clips: tuple[Clip, ...]
    reel: Written | None  # None when the run had no notable moment
    index: Path


def plan_clips(captions: tuple[Caption, ...], settings: ClipSettings,
               end_t: float | None = None) -> tuple[ClipPlan, ...]:
    """Each notable moment's stretch of video (up to `end_t`), overlapping ones merged, in time order."""
    plans: list[ClipPlan] = []
    spans = []
    for moment in captions:
        if moment.kinds:
            start = max(0.0, (moment.t if moment.shot_t is None else moment.shot_t) - settings.lead_s)
            end = moment.t + settings.tail_s
            spans.append((start, end if end_t is None else min(end, end_t), moment))
    spans.sort(key=lambda span: (span[0], span[1]))
    for start, end, moment in spans:
        if plans and start <= plans[-1].end_s:
            last = plans[-1]
            plans[-1] = ClipPlan(last.start_s, max(last.end_s, end), last.moments + (moment,))
        else:
            plans.append(ClipPlan(start, end, (moment,)))
    return tuple(plans)


def write_highlights(review: Review, out_dir: str | Path, settings: ClipSettings = ClipSettings(),
                     progress: bool = False) -> HighlightSet:
    """Cut every planned clip from the source with the overlay, join them with title cards in the reel,
    and write the index.

    Each clip is encoded once: the reel copies the clips' packets (`vision.video_io.join_videos`) after title cards
    encoded alike, so the reel shows each clip exactly as its file does, for about half the encoding."""
    out_dir = Path(out_dir)
    info = review.info
    plans = plan_clips(review.record.captions, settings, info.duration_s or None)
    card_frames = max(1, round(settings.card_s * info.fps)) if settings.card_s > 0 else 0
    expected = sum(round((p.end_s - p.start_s) * info.fps) + 1 + card_frames for p in plans)
    clips: list[Clip] = []
    reel: Written | None = None
    started = time.perf_counter()
    with tqdm(total=expected or None, unit="frame", desc="highlights", disable=not progress, leave=False,
              dynamic_ncols=True) as bar, tempfile.TemporaryDirectory(prefix="highlights-cards-") as cards:
        cut = []
        for number, plan in enumerate(plans, start=1):
            cut.append(_cut(review, plan, number, len(plans), out_dir, Path(cards), card_frames, bar))
        if cut:
            reel_path = out_dir / HIGHLIGHTS_REEL_FILE
            parts = [part for clip, card in cut for part in ((card,) if card else ()) + (out_dir / clip.file,)]
            with written_atomically(reel_path) as partial:
                starts = dict(zip(parts, join_videos(parts, partial, 1 / info.fps)))
            clips = [replace(clip, reel_start_s=starts[out_dir / clip.file]) for clip, _ in cut]
            last = clips[-1]
            reel = Written(reel_path, sum(c.frames for c in clips) + card_frames * len(clips), 0.0,
                           last.reel_start_s + last.last_t - last.first_t, time.perf_counter() - started)
    index = out_dir / HIGHLIGHTS_INDEX_FILE
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomically(index, _index(review, settings, clips, reel))
    return HighlightSet(tuple(clips), reel, index)


def _cut(review: Review, plan: ClipPlan, number: int, count: int, out_dir: Path, cards: Path, card_frames: int,
         bar: tqdm) -> tuple[Clip, Path | None]:
    """Write one clip, and its title card to a file in `cards` (none when it has no frames); the clip's place in
    the reel is set once the reel is joined."""
    info = review.info
    name = f"{number:02d}_{plan.kinds[0]}.mp4"
    first_t = last_t = None
    card_path = None
    with written_atomically(out_dir / name) as partial, \
            VideoWriter(partial, info.width, info.height, info.fps, time_base=info.time_base) as writer, \
            closing(read_frames(review.source, start_s=plan.start_s)) as frames:
        for frame in frames:
            if frame.t > plan.end_s + SAME_S:
                break
            image = review.overlay.render(frame)
            if first_t is None:
                first_t = frame.t
                if card_frames:
                    card_path = cards / name
                    _write_card(card_path, _title_card(image, review, plan, number, count), card_frames, review)
                    bar.update(card_frames)
            last_t = frame.t
            writer.write(image, frame.t - first_t)
            bar.update()
        if first_t is None or last_t is None:
            raise ReviewError(f"{review.source} has no frames between {plan.start_s:.2f} s and {plan.end_s:.2f} s, "
                              "where the run made calls; pass the video the run refereed")
        frames_written = writer.frames_written
    return Clip(name, plan, first_t, last_t, frames_written, 0.0), card_path


def _write_card(path: Path, card: np.ndarray, frames: int, review: Review) -> None:
    """A title card held for `frames` frames, encoded as the clips are so the reel can copy it beside them."""
    info = review.info
    with VideoWriter(path, info.width, info.height, info.fps, time_base=info.time_base) as writer:
        for k in range(frames):
            writer.write(card, k / info.fps)


def _title_card(image: np.ndarray, review: Review, plan: ClipPlan, number: int, count: int) -> np.ndarray:
    """The clip's first annotated frame, blurred and darkened, with what the clip shows written on it."""
    height, width = image.shape[:2]
    small = cv2.resize(image, (max(1, width // 16), max(1, height // 16)), interpolation=cv2.INTER_AREA)
    card = cv2.convertScaleAbs(cv2.resize(small, (width, height), interpolation=cv2.INTER_LINEAR), alpha=0.35)
    scale = height / 720
    record = review.record
    board = record.board_at(plan.moments[0].t)
    names = {p.id: p.label for p in record.players}
    lines = [(f"HIGHLIGHT {number} OF {count}", 0.7, (170, 170, 170), 1),
             *((m.headline, 1.2, (255, 255, 255), 2) for m in plan.moments[:3]),
             (f"{TITLES[record.game]}" + (f", {board.round_label}" if board and board.round_label else "")
              + f"   at {clock_text(plan.moments[0].t, 1)}", 0.7, (220, 220, 220), 1),
             (", ".join(names.get(p, p) for p in plan.players), 0.7, (220, 220, 220), 1)]
    y = int(height * 0.32)
    for text, size, colour, thickness in lines:
        size *= scale
        wide = text_width(text, size, thickness)
        if wide > width * 0.9:
            size *= width * 0.9 / wide
            wide = text_width(text, size, thickness)
        y += int(60 * size)
        put_text(card, text, ((width - wide) // 2, y), size, colour, thickness)
    return card


def _index(review: Review, settings: ClipSettings, clips: list[Clip], reel: Written | None) -> dict[str, Any]:
    record = review.record
    return {
        "format": INDEX_FORMAT,
        "run": str(record.dir),
        "source": str(review.source),
        "game": record.game,
        "players": [{"id": p.id, **({"name": p.name} if p.name else {})} for p in record.players],
        "lead_s": settings.lead_s,
        "tail_s": settings.tail_s,
        "card_s": settings.card_s,
        "reel": reel.path.name if reel is not None else None,
        "clips": [clip.to_json() for clip in clips],
    }
