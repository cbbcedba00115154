"""Real H.264 encoding and decoding through PyAV, with presentation timestamps."""

from pathlib import Path

import numpy as np
import pytest

from vision.video_io import VideoError, VideoWriter, encoded_alike, join_videos, probe, read_frames


def _frame(i: int, width: int = 160, height: int = 96) -> np.ndarray:
    """A frame whose bright square moves one step per frame, so frames can be told apart."""
    image = np.full((height, width, 3), 40, np.uint8)
    x = 8 + 4 * i
    image[30:60, x:x + 20] = (0, 200, 255)
    return image


def _square_x(image: np.ndarray) -> int:
    column_brightness = image[30:60, :, 2].mean(axis=0)
    return int(np.argmax(column_brightness > 150))


@pytest.fixture
def clip(tmp_path):
    path = tmp_path / "clip.mp4"
    with VideoWriter(path, 160, 96, fps=30) as writer:
        for i in range(24):
            writer.write(_frame(i))
    return path


def test_written_video_is_h264_with_the_frame_rate_and_count(clip):
    import av

    with av.open(str(clip)) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264"
        assert stream.codec_context.pix_fmt == "yuv420p"
        assert not container.streams.audio
    info = probe(clip)
    assert (info.width, info.height) == (160, 96)
    assert info.fps == pytest.approx(30.0)


def test_decoded_frames_carry_presentation_times_and_content(clip):
    frames = list(read_frames(clip))
    assert len(frames) == 24
    assert [f.t for f in frames] == pytest.approx([i / 30 for i in range(24)], abs=1e-3)
    for i, frame in enumerate(frames):
        assert abs(_square_x(frame.image) - (8 + 4 * i)) <= 1


def test_frames_are_converted_on_one_thread_to_the_same_pixels_as_ffmpeg_s_threaded_default():
    """`bgr` asks swscale for one thread (it started two a frame otherwise); the pixels are FFmpeg's default
    conversion's, on a real 1280x720 sample."""
    import av

    from vision.video_io import bgr

    sample = Path(__file__).resolve().parents[2] / "sample_videos" / "piratenbillard" / "capture" / "video.mp4"
    with av.open(str(sample)) as container:
        for index, frame in enumerate(container.decode(container.streams.video[0])):
            assert np.array_equal(bgr(frame), frame.to_ndarray(format="bgr24")), index
            if index == 30:
                break


def test_seeking_is_frame_accurate(clip):
    frames = list(read_frames(clip, start_s=0.5))
    assert frames[0].t == pytest.approx(0.5, abs=1e-3)
    assert abs(_square_x(frames[0].image) - (8 + 4 * 15)) <= 1


def test_missing_video_is_a_clear_error(tmp_path):
    with pytest.raises(VideoError, match="does not exist"):
        list(read_frames(tmp_path / "nope.mp4"))


def test_garbage_file_is_a_clear_error(tmp_path):
    path = tmp_path / "garbage.mp4"
    path.write_bytes(b"this is not a video" * 100)
    with pytest.raises(VideoError, match="cannot be opened"):
        probe(path)


def test_truncated_mp4_is_a_clear_error(clip, tmp_path):
    """An MP4 cut short loses its index (written last), so it cannot be opened at all."""
    data = clip.read_bytes()
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(VideoError, match="cut.mp4 cannot be opened"):
        list(read_frames(cut))


def test_odd_frame_size_is_refused(tmp_path):
    with pytest.raises(VideoError, match="even frame size"):
        VideoWriter(tmp_path / "odd.mp4", 161, 96, fps=30)


def _written(path: Path, times: list[float], first: int = 0, width: int = 160) -> Path:
    with VideoWriter(path, width, 96, fps=30) as writer:
        for k, t in enumerate(times):
            writer.write(_frame(first + k, width), t)
    return path


def test_joined_videos_hold_each_parts_frames_exactly_one_frame_after_the_last(tmp_path):
    parts = [_written(tmp_path / "a.mp4", [k / 30 for k in range(7)]),
             _written(tmp_path / "b.mp4", [k / 30 for k in range(11)], first=7),
             _written(tmp_path / "c.mp4", [k / 30 for k in range(5)], first=18)]
    starts = join_videos(parts, tmp_path / "joined.mp4", 1 / 30)
    assert starts == pytest.approx((0.0, 7 / 30, 18 / 30), abs=1e-4)
    joined = list(read_frames(tmp_path / "joined.mp4"))
    own = [frame for part in parts for frame in read_frames(part)]
    assert [f.t for f in joined] == pytest.approx([k / 30 for k in range(23)], abs=1e-4)
    assert len(joined) == 23 and all(np.array_equal(a.image, b.image) for a, b in zip(joined, own))
    assert [_square_x(f.image) for f in joined] == [8 + 4 * k for k in range(23)]


def test_a_part_whose_frames_the_encoder_reordered_far_back_starts_later_not_out_of_order(tmp_path):
    """A part from a source with a gap in its first frames: its first decode time lies far before its first
    frame, so right after the last part it would decode before that part's end."""
    parts = [_written(tmp_path / "a.mp4", [k / 30 for k in range(6)]),
             _written(tmp_path / "b.mp4", [0.0, 0.5, 1.0, 1.0 + 1 / 30, 1.0 + 2 / 30, 1.0 + 3 / 30])]
    starts = join_videos(parts, tmp_path / "joined.mp4", 1 / 30)
    assert starts[1] > 6 / 30 + 1e-3
    joined = list(read_frames(tmp_path / "joined.mp4"))
    assert len(joined) == 12 and all(a.t < b.t for a, b in zip(joined, joined[1:]))
    assert [_square_x(f.image) for f in joined] == [8 + 4 * k for k in range(6)] * 2


def test_parts_encoded_differently_are_refused_with_the_part_named(tmp_path):
    parts = [_written(tmp_path / "a.mp4", [0.0, 1 / 30]), _written(tmp_path / "wide.mp4", [0.0, 1 / 30], width=192)]
    assert encoded_alike(parts[0], parts[0]) and not encoded_alike(*parts)
    with pytest.raises(VideoError, match="wide.mp4 is not encoded like .*a.mp4"):
        join_videos(parts, tmp_path / "joined.mp4", 1 / 30)
