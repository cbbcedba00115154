"""The review overlay: one source frame in, the same frame with the referee's view drawn on.

It draws the table from the calibration (slots or spaces, the Play Line), each
confirmed track with its id and recent path, resting balls ringed in their
owner's colour and labelled with their place, the scoreboard, and the calls
made at that moment. Everything comes from the run record, nothing from
looking at the pixels again. The drawing is plain OpenCV.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.calibrate import Calibration
from calibration.preview import draw_table
from calibration.profile import TableProfile
from record.run_folder import TrackFrame
from review.record import SAME_S, Caption, RunRecord, place_name
from review.settings import Style
from rules.games import TITLES
from vision.detect.colour_model import NOMINAL_BGR
from vision.games import game_vision
from vision.mapping import BoardMapper
from vision.video_io import Frame

WHITE = (255, 255, 255)
GREY = (170, 170, 170)
FONT = cv2.FONT_HERSHEY_DUPLEX
TABLE_OPACITY = 0.75  # the table lines let the footage show through
PANEL_SHADE = 0.3  # panels darken the footage to this fraction of its brightness
ACCENTS = {"grand_slam": (0, 215, 255), "foul": (40, 40, 230), "knock_in": (40, 40, 230), "chain": (0, 215, 255)}
ASCII = str.maketrans({"→": "->", "−": "-", "–": "-", "—": "-", "×": "x", "·": "."})


@dataclass(frozen=True)
class Box:
    """A rectangle in image pixels, x1 and y1 exclusive."""

    x0: int
    y0: int
    x1: int
    y1: int


@dataclass(frozen=True)
class _Path:
    """One track over the whole run, as arrays: the trail, and the speed that says it rests."""

    t: np.ndarray  # (N,)
    uv: np.ndarray  # (N, 2) image px
    xy: np.ndarray  # (N, 2) board mm


class Overlay:
    """Draws the review overlay for one run on frames of its source video."""

    def __init__(self, record: RunRecord, calibration: Calibration, profile: TableProfile,
                 size: tuple[int, int], style: Style = Style()) -> None:
        self.record = record
        # each player's balls in their colour: the game_start's, else the one their id names
        self._bgr = {**NOMINAL_BGR, **{p.id: p.colour.bgr for p in record.players if p.colour is not None}}
        self.calibration = calibration
        self.profile = profile
        self.style = style
        self.width, self.height = size
        self.scale = self.height / 720
        self.mapper = BoardMapper(calibration, profile)
        self._track_times = [f.t for f in record.track_frames]
        self._paths = self._build_paths(record.track_frames)
        self._table_px, self._table_keep, self._table_colour = self._table_layer()
        intrinsics = calibration.intrinsics
        self._undistort = intrinsics.image_undistorter(self.width, self.height) if intrinsics is not None else None
        m = self._px(12)
        self._scoreboard_box = Box(m, m, m + self._px(320), m + self._px(16) + self._px(28) * (
            len(self._board_rows(0.0)) + len(self.record.players)))

    # ------------------------------------------------------------------ public

    def render(self, frame: Frame) -> np.ndarray:
        """The annotated copy of one frame (undistorted first when the calibration has intrinsics)."""
        img = self._undistort(frame.image) if self._undistort is not None else frame.image
        img = img.copy() if img is frame.image else img  # drawn on: never the caller's frame
        pixels = img.reshape(-1, 3)
        pixels[self._table_px] = (pixels[self._table_px] * self._table_keep + self._table_colour) >> 8
        self._draw_balls(img, frame.t)
        self._draw_scoreboard(img, frame.t)
        caption = self.caption_at(frame.t)
        if caption is not None:
            self._draw_caption(img, caption)
        return img

    def caption_at(self, t: float) -> Caption | None:
        """The calls on screen at time `t`: the latest moment, for `caption_s` after it."""
        captions = self.record.captions
        index = bisect_right(captions, t + SAME_S, key=lambda c: c.t)
        if index and t < captions[index - 1].t + self.style.caption_s:
            return captions[index - 1]
        return None

    def caption_box(self, caption: Caption) -> Box:
        """Where the calls are drawn: along the bottom, as wide as their longest line."""
        m, line = self._px(12), self._px(26)
        lines = self._caption_lines(caption)
        longest = max([text_width(caption.headline, 0.9 * self.scale, 2)]
                      + [text_width(text, 0.6 * self.scale) for text in lines])
        width = min(self.width - 2 * m, max(self.width * 2 // 5, longest + self._px(36)))
        height = self._px(44) + line * len(lines) + 2 * m
        return Box(m, self.height - m - height, m + width, self.height - m)

    @property
    def scoreboard_box(self) -> Box:
        """Where the scoreboard is drawn: the same on every frame (its rows depend only on the game)."""
        return self._scoreboard_box

    # ------------------------------------------------------------------ the table

    def _table_layer(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The table drawn once on black; per frame only its pixels are blended in, in 8-bit fixed point
        (lines keep their anti-aliasing: a pixel's brightest channel is how much of a line covers it).
        Returns the pixels' flat indices, how much of the footage each keeps, and the colour added."""
        layer = np.zeros((self.height, self.width, 3), np.uint8)
        draw_table(layer, self.profile, self.calibration, markers=False)
        self._label_places(layer)
        flat = layer.reshape(-1, 3)
        px = np.flatnonzero(flat.max(axis=1))
        drawn = flat[px].astype(np.uint16)
        keep = 256 - np.round(TABLE_OPACITY * drawn.max(axis=1, keepdims=True)).astype(np.uint16)
        return px, keep, np.round(TABLE_OPACITY * 256 * drawn).astype(np.uint16)

    def _label_places(self, layer: np.ndarray) -> None:
        """Name the places as the game does (Star Cluster Ball's Astrolabe Positions P1..P3, Piratenbillard's
        rows and columns), so a ball's label (its slot or its space) reads as the engines' calls name it."""
        size = 0.45 * self.scale
        for label in game_vision(self.record.game).place_labels(self.profile):
            u, v = self.calibration.board_to_image(np.array([label.at]))[0]
            put_text(layer, label.text, (int(u) + self._offset(label.dx), int(v) + self._offset(label.dy)),
                     size, WHITE)

    # ------------------------------------------------------------------ balls

    def _build_paths(self, frames: tuple[TrackFrame, ...]) -> dict[int, _Path]:
        rows: dict[int, list[tuple[float, float, float, float, float]]] = {}
        missing = [(f.t, tr) for f in frames for tr in f.tracks if tr.u is None or tr.v is None]
        filled = {}
        if missing:  # a run that logged no pixels: the board points through the calibration
            uv = self.mapper.ball_centre_px(np.array([[tr.x, tr.y] for _, tr in missing]))
            filled = {(t, tr.id): (float(u), float(v)) for (t, tr), (u, v) in zip(missing, uv)}
        for f in frames:
            for tr in f.tracks:
                u, v = (tr.u, tr.v) if tr.u is not None and tr.v is not None else filled[(f.t, tr.id)]
                rows.setdefault(tr.id, []).append((f.t, u, v, tr.x, tr.y))
        paths = {}
        for track_id, points in rows.items():
            a = np.array(points)
            paths[track_id] = _Path(a[:, 0], a[:, 1:3], a[:, 3:5])
        return paths

    def _tracks_at(self, t: float) -> TrackFrame | None:
        index = bisect_right(self._track_times, t + SAME_S)
        if not index or t - self._track_times[index - 1] > self.style.tracks_gap_s:
            return None
        return self.record.track_frames[index - 1]

    def _draw_balls(self, img: np.ndarray, t: float) -> None:
        shown = self._tracks_at(t)
        if shown is None or not shown.tracks:
            return
        radii = self.mapper.ball_radius_px(np.array([[tr.x, tr.y] for tr in shown.tracks]))
        small = 0.38 * self.scale
        for tr, radius in zip(shown.tracks, radii):
            path = self._paths[tr.id]
            now = bisect_right(path.t, shown.t + SAME_S) - 1
            colour = self._bgr.get(tr.colour, GREY)
            first = bisect_left(path.t, shown.t - self.style.trail_s)
            if now - first >= 1:
                trail = np.round(path.uv[first:now + 1]).astype(np.int32)
                cv2.polylines(img, [trail], False, colour, max(1, self._px(2)), cv2.LINE_AA)
            u, v = path.uv[now]
            centre, r = (int(round(u)), int(round(v))), int(round(radius)) + self._px(3)
            resting = self._resting(path, now)
            if resting:
                cv2.circle(img, centre, r + self._px(2), WHITE, 1, cv2.LINE_AA)
            cv2.circle(img, centre, r, colour, max(1, self._px(2)), cv2.LINE_AA)
            put_text(img, f"#{tr.id}", (centre[0] - self._px(8), centre[1] - r - self._px(4)), small, WHITE,
                     outline=True)
            if resting:
                where = self.mapper.locate((tr.x, tr.y))
                label = str(where.slot) if where.slot is not None else place_name(where).strip("()")
                width = text_width(label, small)
                put_text(img, label, (centre[0] - width // 2, centre[1] + r + self._px(13)), small, WHITE,
                         outline=True)

    def _resting(self, path: _Path, now: int) -> bool:
        back = bisect_left(path.t, path.t[now] - self.style.rest_window_s)
        span = path.t[now] - path.t[back]
        if span < 0.8 * self.style.rest_window_s:
            return False  # too young a track to tell
        return float(np.linalg.norm(path.xy[now] - path.xy[back])) < self.style.rest_mm_s * span

    # ------------------------------------------------------------------ panels

    def _board_rows(self, t: float) -> list[tuple[str, tuple[int, int, int]]]:
        """The scoreboard's lines above the players: the game, the round and its clock, the video time."""
        board = self.record.board_at(t)
        rows = [(TITLES[self.record.game], WHITE)]
        if self.record.has_rounds:
            clock = board.clock_s(t) if board is not None else None
            label = board.round_label if board is not None and board.round_label else "round -"
            rows.append((label + (f"   {clock_text(clock, 0)}" if clock is not None else ""), WHITE))
        rows.append((f"video {clock_text(t, 2)}", GREY))
        return rows

    def _draw_scoreboard(self, img: np.ndarray, t: float) -> None:
        box = self.scoreboard_box
        _shade(img, box)
        board = self.record.board_at(t)
        line, pad, size = self._px(28), self._px(12), 0.6 * self.scale
        y = box.y0 + pad + self._px(18)
        for text, colour in self._board_rows(t):
            put_text(img, _fit(text, box.x1 - box.x0 - 2 * pad, size), (box.x0 + pad, y), size, colour)
            y += line
        scores = dict(board.scores) if board is not None else {}
        for player in self.record.players:
            colour = self._bgr.get(player.id, GREY)
            cv2.circle(img, (box.x0 + pad + self._px(20), y - self._px(6)), self._px(8), colour, -1, cv2.LINE_AA)
            to_play = board is not None and board.to_play == player.id
            if to_play:
                tip = (box.x0 + pad, y - self._px(6))
                triangle = np.array([[tip[0], tip[1] - self._px(6)], [tip[0] + self._px(8), tip[1]],
                                     [tip[0], tip[1] + self._px(6)]], np.int32)
                cv2.fillPoly(img, [triangle], WHITE, cv2.LINE_AA)
            score = str(scores.get(player.id, 0))
            score_width = text_width(score, 0.8 * self.scale, 2)
            room = box.x1 - box.x0 - 2 * pad - self._px(44) - score_width
            name = _fit(player.label + ("  to play" if to_play else ""), room, size)
            put_text(img, name, (box.x0 + pad + self._px(36), y), size, WHITE)
            put_text(img, score, (box.x1 - pad - score_width, y + self._px(2)), 0.8 * self.scale, WHITE, 2)
            y += line

    def _caption_lines(self, caption: Caption) -> list[str]:
        limit = 5
        lines = list(caption.lines)
        return lines if len(lines) <= limit else lines[:limit - 1] + [f"... and {len(lines) - limit + 1} more"]

    def _draw_caption(self, img: np.ndarray, caption: Caption) -> None:
        box = self.caption_box(caption)
        _shade(img, box)
        accent = next((ACCENTS[k] for k in caption.kinds if k in ACCENTS), None)
        if accent is None and caption.players:
            accent = self._bgr.get(caption.players[0], WHITE)
        cv2.rectangle(img, (box.x0, box.y0), (box.x0 + self._px(6) - 1, box.y1 - 1), accent or WHITE, -1)
        pad, room = self._px(18), box.x1 - box.x0 - self._px(36)
        big, size = 0.9 * self.scale, 0.6 * self.scale
        y = box.y0 + self._px(12) + self._px(30)
        put_text(img, _fit(caption.headline, room, big, 2), (box.x0 + pad, y), big, WHITE, 2)
        for text in self._caption_lines(caption):
            y += self._px(26)
            put_text(img, _fit(text, room, size), (box.x0 + pad, y), size, WHITE)

    def _px(self, n: float) -> int:
        return max(1, int(round(n * self.scale)))

    def _offset(self, n: int) -> int:
        """`_px` keeping the sign: an offset of n px at 720p, scaled to the frame (0 stays 0)."""
        return int(np.sign(n)) * self._px(abs(n)) if n else 0


def _shade(img: np.ndarray, box: Box) -> None:
    region = img[box.y0:box.y1, box.x0:box.x1]
    region[:] = cv2.convertScaleAbs(region, alpha=PANEL_SHADE)


def put_text(img: np.ndarray, text: str, org: tuple[int, int], size: float, colour, thickness: int = 1,
             outline: bool = False) -> None:
    """ASCII text (Hershey fonts have no other glyphs); `outline`: ringed in black, legible on bare footage.

    The ring is the same text shifted a pixel each way: a thicker stroke would not do, OpenCV 5 widens
    the letters' spacing with the thickness.
    """
    text = _ascii(text)
    if outline:
        for dx, dy in ((-1, -1), (1, -1), (-1, 1), (1, 1)):
            cv2.putText(img, text, (org[0] + dx, org[1] + dy), FONT, size, (0, 0, 0), thickness, cv2.LINE_AA)
    cv2.putText(img, text, org, FONT, size, colour, thickness, cv2.LINE_AA)


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text.translate(ASCII)).encode("ascii", "ignore").decode()


def text_width(text: str, size: float, thickness: int = 1) -> int:
    return cv2.getTextSize(_ascii(text), FONT, size, thickness)[0][0]


def _fit(text: str, width: int, size: float, thickness: int = 1) -> str:
    """Cut `text` with '...' until it fits `width` pixels."""
    text = _ascii(text)
    if text_width(text, size, thickness) <= width:
        return text
    while text and text_width(text + "...", size, thickness) > width:
        text = text[:-1]
    return text + "..."


def clock_text(seconds: float, decimals: int) -> str:
    """`m:ss` (decimals 0) or `m:ss.ss` (decimals 2)."""
    minutes, rest = divmod(round(max(0.0, seconds), decimals), 60)
    width = 3 + decimals if decimals else 2
    return f"{int(minutes)}:{rest:0{width}.{decimals}f}"
