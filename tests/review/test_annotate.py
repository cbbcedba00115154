"""The annotated video of a real `referee run --annotate`, decoded back: format, frames, timestamps, overlay."""

from pathlib import Path

import av
import cv2
import numpy as np
import pytest

from review.annotate import open_review
from review.overlay import Box
from vision.video_io import probe, read_frames

SAMPLES = Path(__file__).resolve().parents[2] / "sample_videos"
SOURCE = SAMPLES / "piratenbillard" / "capture" / "video.mp4"
SC_SOURCE = SAMPLES / "starcluster" / "chain_grand_slam" / "video.mp4"


@pytest.fixture(scope="module")
def decoded(pb_run):
    """Source and annotated frames, decoded in full, paired by position."""
    return list(read_frames(SOURCE)), list(read_frames(pb_run / "annotated.mp4"))


def _mean_diff(a: np.ndarray, b: np.ndarray, box: Box) -> float:
    region = (slice(box.y0, box.y1), slice(box.x0, box.x1))
    return float(np.abs(a[region].astype(np.int16) - b[region]).mean())


def test_annotated_video_is_h264_with_every_source_frame_and_timestamp(pb_run, decoded):
    source, annotated = decoded
    with av.open(str(pb_run / "annotated.mp4")) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264" and stream.codec_context.pix_fmt == "yuv420p"
        assert stream.average_rate == 30 and not container.streams.audio
    assert len(annotated) == len(source) == 185
    assert [f.t for f in annotated] == [f.t for f in source]  # the source's presentation times, exactly
    assert probe(pb_run / "annotated.mp4").duration_s == pytest.approx(probe(SOURCE).duration_s, abs=1e-3)
    assert (annotated[0].image.shape[1], annotated[0].image.shape[0]) == (1280, 720)
    assert (pb_run / "calibration.json").is_file()  # written by the run, read by the review tools


def test_each_frame_is_the_overlay_drawn_on_its_own_source_frame(pb_run, decoded):
    """Each annotated frame is its own source frame with its own overlay, not its neighbour's: where the two candidate
    renderings differ clearly (over 40 levels: the overlay's marks and text, what moved), it lies several times closer
    to its own. (The whole-frame PSNR tells them apart by less than a decibel where the table lies still: the
    re-encoding's error, about 29 dB on this noisy footage, swamps a frame's difference from the one before.)"""
    source, annotated = decoded
    overlay = open_review(pb_run, SOURCE).overlay
    for index in (0, 60, 103, 184):
        own, before = overlay.render(source[index]), overlay.render(source[index - 1])
        assert cv2.PSNR(annotated[index].image, own) > 27, index  # re-encoded noisy footage with sharp text
        differ = np.abs(own.astype(np.int16) - before).max(axis=2) > 40
        assert differ.sum() >= 100, index
        frame = annotated[index].image.astype(np.int16)
        assert np.abs(frame - own)[differ].mean() * 3 < np.abs(frame - before)[differ].mean(), index


def test_scoreboard_on_every_frame_and_captions_when_calls_are_made(pb_run, decoded):
    source, annotated = decoded
    overlay = open_review(pb_run, SOURCE).overlay
    capture = next(c for c in overlay.record.captions if "capture" in c.kinds)
    box = overlay.caption_box(capture)
    shown = [i for i, f in enumerate(source) if overlay.caption_at(f.t) == capture]
    # the call is on screen from the frame it is made on, for caption_s
    assert source[shown[0]].t == pytest.approx(capture.t, abs=1 / 30) and shown == list(range(shown[0], shown[-1] + 1))
    quiet = [i for i, f in enumerate(source) if overlay.caption_at(f.t) is None]
    assert quiet and quiet[0] == 0  # before the first shot settles there is nothing to say
    for index in range(0, len(source), 10):
        assert _mean_diff(source[index].image, annotated[index].image, overlay.scoreboard_box) > 30, index
    for index in shown[::10]:
        assert _mean_diff(source[index].image, annotated[index].image, box) > 30, index
    for index in quiet[::10]:  # only the table lines and ball labels there
        assert _mean_diff(source[index].image, annotated[index].image, box) < 15, index
    assert capture.headline == "CAPTURE   blue +1"


def test_star_cluster_overlay_draws_the_play_line_and_slots(sc_run):
    review = open_review(sc_run, SC_SOURCE)  # no calibration.json: found from the markers
    frame = next(iter(read_frames(SC_SOURCE)))
    image = review.overlay.render(frame)
    profile, calibration = review.overlay.profile, review.overlay.calibration
    (u0, v0), (u1, v1) = calibration.board_to_image(np.array(profile.play_line))
    for s in np.linspace(0.1, 0.9, 5):  # the Play Line is drawn red (BGR) along its whole length
        b, g, r = image[int(round(v0 + s * (v1 - v0))), int(round(u0 + s * (u1 - u0)))].astype(int)
        assert r > 150 and r > g + 60 and r > b + 60
    slot = profile.positions[0].slot_rect(3)
    u, v = calibration.board_to_image(np.array([[slot.x_min, (slot.y_min + slot.y_max) / 2]]))[0]
    edge = image[int(round(v)) - 1:int(round(v)) + 2, int(round(u)) - 1:int(round(u)) + 2].reshape(-1, 3).astype(int)
    assert any(g > 150 and r > 150 and b < 120 for b, g, r in edge)  # slot outlines in yellow
