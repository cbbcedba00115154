"""Video decoding and encoding, wrapped in one place because the APIs churn.

Reading and writing go through PyAV (FFmpeg): OpenCV's writer cannot encode
H.264, the only codec every browser and phone plays, and PyAV gives each
decoded frame its presentation timestamp, which is what event times are made
of. Frames are BGR uint8 arrays, as OpenCV expects. They are decoded on one
thread: the referee decodes on a thread beside its frame loop
(`vision.sources`), which has the second core; with FFmpeg's frame threads as
well the whole referee measured the same within this machine's noise (issue 13,
two samples, alternating runs), while decoding alone is faster with them.

Files written alike (one VideoWriter's settings) can be joined without decoding them (`join_videos`): their
packets are copied, so the highlights' reel shows its clips exactly and costs next to nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Generator, Sequence

import av
import numpy as np

from rules.errors import InputError
from vision.numeric import Halvings


class VideoError(InputError):
    """A video that cannot be opened, decoded or written."""


@dataclass(frozen=True)
class VideoInfo:
    width: int
    height: int
    fps: float
    frame_count: int  # as the container reports it; 0 when unknown
    duration_s: float
    time_base: Fraction  # of the presentation timestamps: a re-encode in it keeps them exact


@dataclass(frozen=True)
class Frame:
    index: int  # position in decode order, from 0
    t: float  # presentation time in seconds
    image: np.ndarray  # BGR, uint8, height x width x 3
    halvings: Halvings | None = None  # the image's halvings, made ahead on the decode thread (`FileSource.prepare`)


def _open(path: Path) -> av.container.InputContainer:
    if not path.exists():
        raise VideoError(f"video {path} does not exist; check the path")
    try:
        container = av.open(str(path))
    except (av.error.FFmpegError, ValueError) as error:
        raise VideoError(f"video {path} cannot be opened ({error}); is it a video file that ffmpeg can read?") from None
    if not container.streams.video:
        container.close()
        raise VideoError(f"{path} holds no video stream; pass a video file")
    return container


def _time_base(stream: Any, path: Path) -> Fraction:
    """The video stream's time base: what its presentation timestamps count in."""
    if stream.time_base is None:
        raise VideoError(f"{path}: the video stream has no time base, so its frames have no times; re-encode it")
    return Fraction(stream.time_base)


def probe(path: str | Path) -> VideoInfo:
    path = Path(path)
    with _open(path) as container:
        stream = container.streams.video[0]
        fps = float(stream.average_rate or stream.base_rate or 0)
        duration = float(stream.duration * _time_base(stream, path)) if stream.duration else 0.0
        if not duration and container.duration:
            duration = container.duration / av.time_base
        return VideoInfo(stream.codec_context.width, stream.codec_context.height, fps, stream.frames or 0, duration,
                         _time_base(stream, path))


def bgr(frame: av.VideoFrame) -> np.ndarray:
    """A decoded frame as a BGR uint8 array, converted on the calling thread. PyAV 17+ converts with FFmpeg's
    `sws_scale_frame`, which by default starts a pool of slice threads for every frame (one per core): 686 thread
    starts in one run of piratenbillard/four_players (339 frames), on the core the frame loop needs. The pixels are the
    same either way (tested)."""
    return frame.reformat(format="bgr24", threads=1).to_ndarray()


def read_frames(path: str | Path, start_s: float = 0.0) -> Generator[Frame, None, None]:
    """Decode frames in order with their presentation times.

    With `start_s`, seek to the keyframe before it and decode forward, dropping
    frames before `start_s`: cutting is frame-accurate, not keyframe-aligned.
    A file that breaks off mid-way raises VideoError after the good frames.
    """
    path = Path(path)
    container = _open(path)
    try:
        stream = container.streams.video[0]
        time_base = _time_base(stream, path)
        if start_s > 0:
            container.seek(int(start_s / time_base), stream=stream, backward=True, any_frame=False)
        index = 0
        try:
            for packet_frame in container.decode(stream):
                if packet_frame.pts is None:
                    continue
                t = float(packet_frame.pts * time_base)
                if t + 1e-6 < start_s:
                    continue
                yield Frame(index, t, bgr(packet_frame))
                index += 1
        except av.error.FFmpegError as error:
            raise VideoError(f"video {path} is damaged after {index} frames ({error}); "
                             "re-export or re-record it") from None
    finally:
        container.close()


class VideoWriter:
    """Encode BGR frames as H.264 in MP4 (yuv420p, no audio), playable everywhere.

    Frames follow each other at `fps` unless `write` is given their time: a
    re-encoded source (the annotated video) passes each frame's presentation
    time and the source's `time_base`, so its timestamps survive exactly.
    """

    def __init__(self, path: str | Path, width: int, height: int, fps: float, crf: int = 23,
                 preset: str = "veryfast", time_base: Fraction | None = None) -> None:
        if width % 2 or height % 2:
            raise VideoError(f"H.264 in yuv420p needs an even frame size, got {width}x{height}")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._container = av.open(str(self.path), mode="w")
        self._rate = Fraction(fps).limit_denominator(1001)
        self._time_base = time_base or 1 / self._rate
        self._stream = self._container.add_stream("libx264", rate=self._rate)
        self._stream.width = width
        self._stream.height = height
        self._stream.pix_fmt = "yuv420p"
        self._stream.options = {"crf": str(crf), "preset": preset}
        self._stream.codec_context.time_base = self._time_base
        self._stream.time_base = self._time_base
        self._last_pts: int | None = None
        self.frames_written = 0

    def write(self, image: np.ndarray, t: float | None = None) -> None:
        """Encode one frame, at presentation time `t` seconds (default: the next one at the frame rate)."""
        pts = round((self.frames_written / self._rate if t is None else t) / self._time_base)
        if self._last_pts is not None and pts <= self._last_pts:
            raise VideoError(f"{self.path}: frame at {t}s does not come after the previous frame; "
                             "timestamps must increase")
        frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(image), format="bgr24")
        frame.pts = pts
        for packet in self._stream.encode(frame):
            self._container.mux(packet)
        self._last_pts = pts
        self.frames_written += 1

    def close(self) -> None:
        for packet in self._stream.encode(None):
            self._container.mux(packet)
        self._container.close()

    def __enter__(self) -> "VideoWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _encoding(stream: Any) -> tuple[Any, ...]:
    """What two streams must share for one's packets to follow the other's in one file: codec, frame size, pixel
    format, time base and the stream headers (H.264's SPS and PPS). One VideoWriter's settings make them alike."""
    context = stream.codec_context
    return context.name, context.width, context.height, context.format.name, stream.time_base, context.extradata


def encoded_alike(first: str | Path, second: str | Path) -> bool:
    """Whether `join_videos` can put the two files' frames in one stream as they are."""
    with _open(Path(first)) as one, _open(Path(second)) as other:
        return _encoding(one.streams.video[0]) == _encoding(other.streams.video[0])


def join_videos(parts: Sequence[str | Path], path: str | Path, step_s: float) -> tuple[float, ...]:
    """The parts' frames one after another in one MP4, their packets copied: nothing is decoded or encoded again, so
    a part's frames are in the file exactly as they are in the part, and joining costs next to nothing.

    Each part starts `step_s` after the last frame of the one before (the first at 0), or later where the decoder's
    order needs it (a part whose first frames the encoder reordered far back). Every part must be encoded alike
    (`encoded_alike`). Returns each part's start time in the file.
    """
    path = Path(path)
    container = av.open(str(path), mode="w")
    try:
        stream = None
        encoding: tuple[Any, ...] = ()
        starts = []
        end: int | None = None  # the last part's last presentation time and decode time, in the time base
        last_dts = 0
        for part in map(Path, parts):
            with _open(part) as source:
                given = source.streams.video[0]
                if stream is None:
                    stream, encoding = container.add_stream_from_template(given), _encoding(given)
                elif _encoding(given) != encoding:
                    raise VideoError(f"{part} is not encoded like {parts[0]} (codec, size, time base or stream "
                                     "headers differ), so its frames cannot be copied after them; re-encode it alike")
                packets = [(packet, packet.pts, packet.dts) for packet in source.demux(given)
                           if packet.pts is not None and packet.dts is not None]
                if not packets:
                    raise VideoError(f"{part} holds no frames to join; pass the parts that were written")
                first = min(pts for _, pts, _ in packets)
                offset = -first
                if end is not None:
                    step = round(Fraction(step_s) / _time_base(given, part))
                    offset = max(end + step, last_dts + 1 - packets[0][2]) - first
                for packet, pts, dts in packets:
                    packet.pts, packet.dts, packet.stream = pts + offset, dts + offset, stream
                    container.mux(packet)
                starts.append(float((first + offset) * _time_base(given, part)))
                end = max(pts for _, pts, _ in packets) + offset
                last_dts = packets[-1][2] + offset
    finally:
        container.close()
    return tuple(starts)
