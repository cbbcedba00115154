"""The live video's pictures, on a real frame of a sample: the tracked balls drawn in their players' colours and
numbered, scaled to the video's width, encoded as JPEG."""

import cv2
import numpy as np
from serving import SAMPLE

from referee.console.video import WIDTH, annotated_jpeg
from vision.detect.colour_model import NOMINAL_BGR
from vision.pipeline import TrackedFrame
from vision.video_io import read_frames


def test_the_tracked_balls_are_drawn_in_their_colours_and_the_picture_is_scaled_down():
    frame = next(iter(read_frames(SAMPLE / "video.mp4")))
    u, v, r = 400.0, 300.0, 9.0
    tracked = TrackedFrame(frame.t, ((7, "blue", 100.0, 200.0, u, v),), (("blue", u, v, r, 100.0, 200.0, 0.9),))
    plain = cv2.imdecode(np.frombuffer(annotated_jpeg(frame.image, None, width=1280), np.uint8), cv2.IMREAD_COLOR)
    drawn = cv2.imdecode(np.frombuffer(annotated_jpeg(frame.image, None, tracked, width=1280), np.uint8),
                         cv2.IMREAD_COLOR)
    assert drawn.shape == frame.image.shape
    ring = drawn[int(v), int(u + r + 3) - 1:int(u + r + 3) + 2].astype(int)  # on the circle, right of the ball
    blue = np.array(NOMINAL_BGR["blue"])
    assert np.abs(ring - blue).sum(axis=1).min() < np.abs(plain[int(v), int(u + r + 3)] - blue).sum()
    assert np.abs(drawn.astype(int) - plain).max() > 100  # and the track's number above it
    small = cv2.imdecode(np.frombuffer(annotated_jpeg(frame.image, None, tracked), np.uint8), cv2.IMREAD_COLOR)
    assert small.shape[1] == WIDTH and small.shape[0] == round(frame.image.shape[0] * WIDTH / frame.image.shape[1])


def test_a_player_with_a_given_colour_is_drawn_in_it():
    """A player whose id names no colour is drawn in the colour their game_start gives (and the pages say it)."""
    from referee.console.state import colour_of
    from rules.colours import BallColour
    from rules.events import PlayerSpec

    frame = next(iter(read_frames(SAMPLE / "video.mp4")))
    u, v, r = 400.0, 300.0, 9.0
    violet = BallColour.from_srgb((123, 63, 160))
    players = (PlayerSpec("alice", colour=violet), PlayerSpec("blue"))
    tracked = TrackedFrame(frame.t, ((7, "alice", 100.0, 200.0, u, v),), (("alice", u, v, r, 100.0, 200.0, 0.9),))
    grey = cv2.imdecode(np.frombuffer(annotated_jpeg(frame.image, None, tracked, width=1280), np.uint8),
                        cv2.IMREAD_COLOR)
    drawn = cv2.imdecode(np.frombuffer(annotated_jpeg(frame.image, None, tracked, width=1280, players=players),
                                       np.uint8), cv2.IMREAD_COLOR)
    ring = drawn[int(v), int(u + r + 3) - 1:int(u + r + 3) + 2].astype(int)
    ring_without = grey[int(v), int(u + r + 3) - 1:int(u + r + 3) + 2].astype(int)
    target = np.array(violet.bgr)
    assert np.abs(ring - target).sum(axis=1).min() < 40 < np.abs(ring_without - target).sum(axis=1).min()
    assert colour_of(players[0], 0, {}) == "#7b3fa0" and colour_of(players[1], 1, {}) == "#1461d9"
    assert colour_of(players[0], 0, {"alice": "#000000"}) == "#000000"  # the setup page's colour first
