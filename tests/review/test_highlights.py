"""Highlight clips of a real run, decoded back: what is cut, frame-accurate starts, the reel and the index."""

import json
from pathlib import Path

import av
import cv2
import numpy as np
import pytest

from referee.cli import main
from review.annotate import open_review
from review.highlights import plan_clips
from review.settings import ClipSettings
from review.record import Caption, load_run
from vision.video_io import probe, read_frames

SOURCE = Path(__file__).resolve().parents[2] / "sample_videos" / "piratenbillard" / "capture" / "video.mp4"
CARD_FRAMES = 45  # the default 1.5 s title card at 30 frames/s


@pytest.fixture(scope="module")
def highlights(pb_run, tmp_path_factory):
    out = tmp_path_factory.mktemp("highlights")
    assert main(["highlights", str(pb_run), str(SOURCE), "--out", str(out), "--quiet"]) == 0
    return out


@pytest.fixture(scope="module")
def source_frames():
    return list(read_frames(SOURCE))


def _keyframe_times(path: Path) -> list[float]:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        return sorted(float(p.pts * stream.time_base) for p in container.demux(stream)
                      if p.is_keyframe and p.pts is not None)


def test_one_clip_per_moment_with_its_index(highlights, source_frames):
    index = json.loads((highlights / "index.json").read_text())
    assert index["format"] == "table-referee/highlights@1" and index["game"] == "piratenbillard"
    assert index["reel"] == "reel.mp4" and (index["lead_s"], index["tail_s"]) == (2.0, 3.0)
    [clip] = index["clips"]  # the capture, which is also the last shot
    assert clip["file"] == "01_capture.mp4" and clip["kinds"] == ["capture", "last_shot"]
    assert clip["players"] == ["blue"] and clip["text"] == "CAPTURE   blue +1"
    [moment] = clip["moments"]
    times = [f.t for f in source_frames]
    start = next(t for t in times if t >= moment["shot_t"] - 2.0 - 1e-6)  # the first frame of the lead-in
    assert clip["start_s"] == pytest.approx(start, abs=1e-4)
    assert clip["end_s"] == pytest.approx(times[-1], abs=1e-4)  # the tail runs past the video's end
    with av.open(str(highlights / clip["file"])) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264" and stream.codec_context.pix_fmt == "yuv420p"
        assert stream.average_rate == 30 and not container.streams.audio
    frames = list(read_frames(highlights / clip["file"]))
    expected = [t - start for t in times if start - 1e-6 <= t]
    assert len(frames) == clip["frames"] == len(expected) == 160
    assert [f.t for f in frames] == pytest.approx(expected, abs=1e-4)  # the source's spacing, from 0
    assert probe(highlights / clip["file"]).duration_s == pytest.approx(len(expected) / 30, abs=1e-3)


def test_a_clip_starts_on_the_exact_lead_in_frame_not_on_a_keyframe(pb_run, highlights, source_frames):
    clip = json.loads((highlights / "index.json").read_text())["clips"][0]
    start = next(i for i, f in enumerate(source_frames) if f.t >= clip["start_s"] - 1e-6)
    keyframe = max(t for t in _keyframe_times(SOURCE) if t <= clip["start_s"])
    assert keyframe < clip["start_s"] - 0.5  # the source has no keyframe near the start: a seek must decode on
    first = next(iter(read_frames(highlights / clip["file"]))).image
    overlay = open_review(pb_run, SOURCE).overlay
    psnr = {i: cv2.PSNR(first, overlay.render(source_frames[i])) for i in (0, start - 2, start - 1, start, start + 1,
                                                                         start + 2)}
    assert psnr[start] > 27  # about 29 dB measured: a re-encode of noisy footage
    assert all(psnr[start] > value + 2 for i, value in psnr.items() if i != start), psnr


def test_the_reel_joins_title_cards_and_clips(highlights):
    clip = json.loads((highlights / "index.json").read_text())["clips"][0]
    reel = list(read_frames(highlights / "reel.mp4"))
    clip_frames = list(read_frames(highlights / clip["file"]))
    assert len(reel) == CARD_FRAMES + len(clip_frames)
    assert clip["reel_start_s"] == pytest.approx(1.5) and reel[CARD_FRAMES].t == pytest.approx(1.5, abs=1e-4)
    assert [f.t for f in reel] == pytest.approx([i / 30 for i in range(len(reel))], abs=1e-4)
    card, opening = reel[0].image, clip_frames[0].image
    # the clip itself follows its card, its frames exactly as the clip's file has them (copied, not encoded again)
    assert all(np.array_equal(joined.image, own.image) for joined, own in zip(reel[CARD_FRAMES:], clip_frames))
    assert cv2.PSNR(card, opening) < 20 and card.mean() < 0.6 * opening.mean()  # a dark card, not footage
    with av.open(str(highlights / "reel.mp4")) as container:
        assert container.streams.video[0].codec_context.name == "h264" and not container.streams.audio


def _moment(t: float, shot_t: float | None, kinds=("foul",)) -> Caption:
    return Caption(t, "x", (), kinds, ("red",), shot_t)


def test_overlapping_moments_merge_and_plain_calls_make_no_clip():
    moments = (_moment(5.0, 3.0), _moment(9.0, 7.5, ("chain",)), _moment(30.0, 28.0), _moment(40.0, 38.0, ()),
               _moment(50.0, None, ("last_shot",)))
    plans = plan_clips(moments, ClipSettings(lead_s=2.0, tail_s=3.0), end_t=52.0)
    assert [(p.start_s, p.end_s, p.kinds) for p in plans] == [
        (1.0, 12.0, ("foul", "chain")), (26.0, 33.0, ("foul",)), (48.0, 52.0, ("last_shot",))]
    assert [(p.start_s, p.end_s) for p in plan_clips(moments, ClipSettings(0.5, 0.5))][:2] == [(2.5, 5.5), (7.0, 9.5)]


def test_star_cluster_moments_become_clips(sc_run):
    """Each chain of 3 or more and the Grand Slam: their own clips with a short lead and tail, merged with long ones."""
    captions = load_run(sc_run).captions
    short = plan_clips(captions, ClipSettings(lead_s=0.5, tail_s=0.5))
    assert [p.kinds for p in short] == [("chain",)] * 4 + [("grand_slam", "chain", "last_shot")]
    assert all(p.moments[0].shot_t - 0.5 == pytest.approx(p.start_s) for p in short)
    merged = plan_clips(captions, ClipSettings(lead_s=3.0, tail_s=3.0))
    assert len(merged) < len(short) and sum(len(p.moments) for p in merged) == 5
    assert all(a.end_s < b.start_s for a, b in zip(merged, merged[1:]))


def test_a_reel_without_cards_is_its_clips_back_to_back_frame_for_frame(sc_run, tmp_path):
    """`--card 0`, short clips (five on chain_grand_slam): the reel is every clip's frames, exactly, each clip one
    frame after the last one's end, as the index says."""
    source = Path(json.loads((sc_run / "result.json").read_text())["source"]["video"])
    out = tmp_path / "highlights"
    assert main(["highlights", str(sc_run), str(source), "--out", str(out), "--lead", "0.5", "--tail", "1",
                 "--card", "0", "--quiet"]) == 0
    clips = json.loads((out / "index.json").read_text())["clips"]
    reel = list(read_frames(out / "reel.mp4"))
    own = [list(read_frames(out / clip["file"])) for clip in clips]
    assert len(clips) >= 3 and len(reel) == sum(len(frames) for frames in own)
    assert all(np.array_equal(a.image, b.image) for a, b in zip(reel, [f for frames in own for f in frames]))
    ends = [0.0] + [clip["reel_start_s"] + frames[-1].t + 1 / 30 for clip, frames in zip(clips, own)]
    assert [clip["reel_start_s"] for clip in clips] == pytest.approx(ends[:-1], abs=1e-3)
    starts = [reel[sum(len(f) for f in own[:k])].t for k in range(len(own))]
    assert starts == pytest.approx([clip["reel_start_s"] for clip in clips], abs=1e-3)
