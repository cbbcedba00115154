"""Settle watch (once per quiet period, causal) and the hand watch on rendered frames."""

from dataclasses import replace

import cv2
import numpy as np
import pytest

from calibration.calibrate import calibrate_markers
from calibration.profile import load_profile
from simulation.camera import make_camera
from simulation.piratenbillard import simulate_piratenbillard
from simulation.realism import Realism
from simulation.starcluster import StarClusterSimOptions, simulate_starcluster
from simulation.render import Renderer
from vision.config import HandConfig, SettleConfig
from vision.numeric import Halvings, block_means
from vision.settle import FieldPicture, HandWatch, SettleWatch
from vision.mapping import BoardMapper
from vision.stabilise import TableStabiliser
from rules.events import Location, Place
from vision.types import BoardBall, Detection, Track, TrackState
from calibration.geometry import Rect


def track(vx=0.0, at_rest=True, state=TrackState.CONFIRMED, conf=0.9, fast_t=None):
    return Track(1, "red", 0, 0, vx, 0, state, at_rest, 0.0, 5, confidence=conf, fast_t=fast_t)


def test_settles_once_per_quiet_period_and_at_the_first_quiet_frame():
    watch = SettleWatch(SettleConfig(rest_debounce_ms=400))
    assert watch.update(0.0, (track(),), False) is None  # warming up: balls still being found
    settle = watch.update(0.5, (track(),), False)
    assert settle is not None and settle.t == 0.5 and settle.confidence == 0.9
    assert watch.update(0.6, (track(),), False) is None  # nothing moved since: no second settle
    assert watch.update(0.7, (track(vx=500, at_rest=False, fast_t=0.7),), False) is None
    assert watch.update(0.8, (track(vx=20, at_rest=False, fast_t=0.7),), False) is None
    assert watch.update(1.2, (track(),), True) is None  # a hand over the table pauses the call ...
    assert watch.update(1.3, (track(),), False) is None  # ... until it has been gone for the debounce time
    assert watch.update(1.7, (track(),), False).t == 1.7


def test_a_lone_fast_measurement_the_tracker_took_back_does_not_arm_the_settle():
    """piratenbillard_v30: a resting ball measured once far off (two touching balls found as one blob) read over the
    motion speed for one frame; the tracker took it back (its `fast_t` stayed before the last settle), but the watch
    armed on the filtered speed, and the table, unchanged, settled again on the next frame while the struck ball was
    73 mm up. Only motion the tracker bore out arms the watch."""
    watch = SettleWatch(SettleConfig(rest_debounce_ms=400))
    watch.update(0.0, (track(),), False)
    assert watch.update(0.5, (track(fast_t=0.1),), False) is not None
    assert watch.update(0.6, (track(vx=255, at_rest=False, fast_t=0.1),), False) is None  # the lone jump
    assert [watch.update(t, (track(fast_t=0.1),), False) for t in (0.63, 1.0, 2.0)] == [None] * 3
    assert watch.update(2.1, (track(vx=255, at_rest=False, fast_t=2.07),), False) is None  # borne out: armed
    assert watch.update(2.6, (track(fast_t=2.07),), False) is not None


def test_a_hand_that_left_the_table_holds_the_settle_for_the_debounce_time():
    """piratenbillard/full_game: the umpire's arm over blue's home row shifted the measured centres of the balls
    it half hid; 0.1 s after the hand watch saw it leave, every ball was at rest by its track, and the table was
    read with a home-row ball not yet seen again (blue 4 where the truth has 9). What a hand covered is read once
    the table has been quiet, without it, for the debounce time; a hand seen on one frame only holds no longer."""
    watch = SettleWatch(SettleConfig(rest_debounce_ms=400))
    watch.update(0.0, (track(),), False)
    assert watch.update(1.0, (track(vx=500, at_rest=False),), False) is None
    assert watch.update(1.5, (track(),), True) is None
    for t in (1.6, 1.8, 1.99):
        assert watch.update(t, (track(),), False) is None
    assert watch.update(2.0, (track(),), False).t == 2.0


def test_jitter_below_motion_speed_does_not_start_a_new_period():
    watch = SettleWatch(SettleConfig())
    watch.update(0.0, (track(),), False)
    assert watch.update(1.0, (track(),), False) is not None
    assert watch.update(1.1, (track(vx=80, at_rest=False),), False) is None
    assert watch.update(1.6, (track(),), False) is None


def test_a_ball_lost_while_moving_blocks_the_settle():
    watch = SettleWatch(SettleConfig())
    watch.update(0.0, (), False)
    assert watch.update(1.0, (track(), track(vx=900, at_rest=False, state=TrackState.LOST)), False) is None
    assert watch.update(1.1, (track(),), False) is not None



def test_hand_watch_sees_a_ball_rolling_over_the_board_without_its_colour():
    """`HandWatch.rolling`: a ball-sized blob over the board, changed against the learnt table and since the last
    frame, on two frames running (starcluster_v8: a peach marble the colour detector saw as grey while it rolled at
    1.5 m/s, and the table settled under it). Rendered Star Cluster Ball, seen from behind the line: flagged on
    most frames with a ball rolling over 300 mm/s on the board, on none with every ball still and no hand."""
    profile = load_profile("starcluster")
    match = simulate_starcluster(profile, 3, "chain_grand_slam")
    camera = make_camera(profile, "behind_play_line", 640, 360)
    renderer = Renderer(profile, camera, Realism.moderate(), match.fps, match.seed)
    field = profile.playing_field
    polygon = camera.project(np.array([[field.x_min, field.y_min, 0], [field.x_max, field.y_min, 0],
                                       [field.x_max, field.y_max, 0], [field.x_min, field.y_max, 0]]))[0]
    cx, cy = (field.x_min + field.x_max) / 2, (field.y_min + field.y_max) / 2
    ends = camera.project(np.array([[cx, cy, 0], [cx + profile.ball_diameter_mm / 2, cy, 0]]))[0]
    watch = HandWatch(HandConfig(), polygon, (camera.width, camera.height), float(np.linalg.norm(ends[1] - ends[0])))
    rolling, quiet, before = [], [], {}
    for f in match.frames[:600]:
        image, _ = renderer.render(f)
        watch.update(image, f.t)
        fast = any(b.moving and b.id in before and field.contains((b.x, b.y))
                   and np.hypot(b.x - before[b.id][0], b.y - before[b.id][1]) * match.fps > 300 for b in f.balls)
        before = {b.id: (b.x, b.y) for b in f.balls}
        if fast:
            rolling.append(watch.rolling)
        elif f.hand is None and not any(b.moving for b in f.balls):
            quiet.append(watch.rolling)
    assert len(rolling) >= 40 and len(quiet) >= 100
    assert sum(rolling) >= 0.6 * len(rolling)
    assert not any(quiet)

@pytest.fixture(scope="module")
def hand_frames():
    profile = load_profile("piratenbillard")
    match = simulate_piratenbillard(profile, 1, "capture")
    camera = make_camera(profile, "overhead", 640, 360)
    renderer = Renderer(profile, camera, Realism.moderate(), match.fps, match.seed)
    frames = [(*renderer.render(f), f.t) for f in match.frames[:70]] + \
        [(*renderer.render(f), f.t) for f in match.frames if f.hand is not None][::4]
    grid = profile.grid
    corners = np.array([[grid.x_min, grid.y_min, 0], [grid.x_max, grid.y_min, 0], [grid.x_max, grid.y_max, 0],
                        [grid.x_min, grid.y_max, 0]])
    polygon = camera.project(corners)[0]  # the board the hand watch guards, in pixels
    radius = float(np.median([b.r_px for b in frames[0][1].balls]))
    return camera, frames, polygon, radius


def test_hand_watch_sees_the_rendered_hand_and_not_the_balls(hand_frames):
    camera, frames, polygon, radius = hand_frames
    watch = HandWatch(HandConfig(), polygon, (camera.width, camera.height), radius)
    said = [(watch.update(image, t), truth.hand_px is not None and
             any(0 <= truth.hand_px[0] < 640 and 0 <= truth.hand_px[1] < 360 for _ in [0]))
            for image, truth, t in frames]
    no_hand = [seen for seen, truth in said if not truth]
    with_hand = [seen for seen, truth in said if truth]
    assert no_hand and with_hand
    assert sum(no_hand) == 0  # struck balls hopping about are not hands
    assert sum(with_hand) >= 0.7 * len(with_hand)


def test_hand_watch_marks_the_hand_as_foreground_for_the_detector(hand_frames):
    """Ball-coloured pixels on a hand or a sleeve are dropped by the pipeline where `covers` says so:
    the rendered hand is covered, the resting balls are not."""
    camera, frames, polygon, radius = hand_frames
    watch = HandWatch(HandConfig(), polygon, (camera.width, camera.height), radius)
    hand_hits, ball_hits = [], []
    for image, truth, t in frames:
        watch.update(image, t)
        if truth.hand_px is not None and watch.present:
            hand_hits.append(watch.covers(*truth.hand_px))
        if truth.hand_px is None:
            ball_hits += [watch.covers(b.u, b.v) for b in truth.balls if b.visible and not b.moving]
    assert hand_hits and ball_hits
    assert sum(hand_hits) >= 0.7 * len(hand_hits)
    assert not any(ball_hits)


def test_hand_watch_shrinks_only_the_watched_part_and_sees_the_same(hand_frames, monkeypatch):
    """The frame shrinks by a whole factor here (640 -> 320), so only the watched area and a margin are shrunk
    (`HandWatch.cut`); every watched pixel, the hand flag, its area and `covers` are those of the whole frame."""
    camera, frames, polygon, radius = hand_frames
    size = (camera.width, camera.height)
    watch = HandWatch(HandConfig(), polygon, size, radius)
    x0, y0, x1, y1 = watch.cut
    assert (x1 - x0) * (y1 - y0) < 0.9 * watch.size[0] * watch.size[1]
    monkeypatch.setattr(HandWatch, "_cut", lambda self: (0, 0, self.size[0], self.size[1]))
    whole = HandWatch(HandConfig(), polygon, size, radius)
    hands = 0
    for image, truth, t in frames:
        assert watch.update(image, t) == whole.update(image, t)
        assert watch.area_px == whole.area_px
        assert np.array_equal(watch.foreground, whole.foreground[y0:y1, x0:x1])
        assert whole.foreground.sum() == watch.foreground.sum()
        hands += watch.present
        points = [(b.u, b.v) for b in truth.balls] + ([truth.hand_px] if truth.hand_px is not None else [])
        assert [watch.covers(u, v) for u, v in points] == [whole.covers(u, v) for u, v in points]
    assert hands


def test_a_player_standing_still_at_the_line_is_not_a_hand():
    """Star Cluster Ball from behind the line, the player to play standing at it all along (player_at_line): the
    camera sees their head over the table. When the players change places, the new one and the spot the last one
    left differ from the learnt table; once nothing there has moved for `hand_still_ms` it is not a hand (before,
    it stayed one, and no settle came for the rest of the clip). Hands at work are the tests above."""
    profile = load_profile("starcluster")
    match = simulate_starcluster(profile, 1, "player_at_line", StarClusterSimOptions())
    camera = make_camera(profile, "behind_play_line", 640, 360)
    renderer = Renderer(profile, camera, Realism.moderate(), match.fps, match.seed)
    field = profile.playing_field
    polygon = camera.project(np.array([[field.x_min, field.y_min, 0], [field.x_max, field.y_min, 0],
                                       [field.x_max, field.y_max, 0], [field.x_min, field.y_max, 0]]))[0]
    config = HandConfig()
    shots = [e.t for e in match.events if e.TYPE == "shot_started"]
    first = next(f.index for f in match.frames if f.t >= shots[1] + 1.0)  # red stands still; blue's turn comes
    watch = None
    moved_t, changed, still, changing = -1.0, 0, [], []
    standing, hand = match.frames[first].person, None
    for f in match.frames[first:round((shots[3] - 0.1) * match.fps)]:
        image, truth = renderer.render(f)
        if watch is None:
            radius = float(np.median([b.r_px for b in truth.balls])) if truth.balls else 3.0
            watch = HandWatch(config, polygon, (camera.width, camera.height), radius)
        if f.person != standing:
            moved_t, changed, standing = f.t, changed + 1, f.person
        if (f.hand is None) != (hand is None):  # a hand came or went
            moved_t, hand = f.t, f.hand
        present = watch.update(image, f.t)
        if f.person is standing and f.t == moved_t and changed:
            changing.append(present)
        elif f.hand is None and f.t - moved_t > config.hand_still_s + 0.2 and changed:
            still.append(present)
    assert changed >= 2 and len(still) >= 30  # blue steps up, then red again
    assert len(changing) == changed and all(changing)  # the change of players is seen ...
    assert not any(still)  # ... and is not a hand once it stands still


def flying(track_id=2, x=300.0, y=400.0, vx=0.0, vy=-900.0, state=TrackState.CONFIRMED, seen=0.0, born=0.0):
    return Track(track_id, "blue", x, y, vx, vy, state, False, seen, 5, born_t=born)


def watch_hops(wait_ms=1000.0):
    return SettleWatch(SettleConfig(rest_debounce_ms=400, flight_wait_ms=wait_ms), Rect(0, 0, 565, 565), True, 25.0)


def test_a_ball_that_vanished_in_flight_holds_the_settle_for_a_while_then_it_is_flagged():
    watch = watch_hops()
    assert watch.update(0.0, (track(), flying()), False) is None
    # the hop leaves view: its track is lost (its velocity since zeroed by the tracker) or gone altogether
    assert watch.update(0.5, (track(), flying(vy=0.0, state=TrackState.LOST)), False) is None
    assert watch.update(1.0, (track(),), False) is None
    assert watch.update(1.45, (track(),), False) is None
    settle = watch.update(1.55, (track(),), False)  # waited `flight_wait_ms` in vain: it goes ahead, for review
    assert settle is not None and [tr.id for tr in settle.unseen_landing] == [2]
    assert watch.update(1.6, (track(),), False) is None  # once
    # where balls do not fly (Star Cluster Ball rolls) the settle does not wait for it
    rolling = SettleWatch(SettleConfig(rest_debounce_ms=400))
    rolling.update(0.0, (track(), flying()), False)
    assert rolling.update(0.5, (track(), flying(vy=0.0, state=TrackState.LOST)), False).unseen_landing == ()


def test_a_ball_seen_again_found_anew_hidden_or_off_the_board_is_accounted_for():
    new_track = flying(track_id=7, x=300, y=200, vy=0.0, born=0.6, seen=0.9)
    resting = Track(7, "red", 305, 190, 0, 0, TrackState.CONFIRMED, True, 0.9, 5, born_t=0.0)
    for now, last in (((track(), replace_at_rest(flying(seen=0.9))), flying(seen=0.0)),  # seen again, at rest
                      ((track(), replace_at_rest(new_track)), flying(seen=0.0)),  # a new track of its colour
                      ((track(), resting), flying(x=310, y=200, seen=0.0)),  # it vanished behind a resting ball
                      ((track(),), flying(x=600, y=300, vx=900, vy=0, seen=0.0))):  # off the east edge
        watch = watch_hops()
        watch.update(0.0, (track(), last), False)
        watch.update(0.3, (track(),), False)  # gone from view
        settle = watch.update(1.0, now, False)  # well before `flight_wait_ms` has passed
        assert settle is not None and settle.unseen_landing == (), (now, last)


def replace_at_rest(tr):
    return Track(tr.id, tr.colour, tr.x, tr.y, 0.0, 0.0, TrackState.CONFIRMED, True, tr.last_seen_t, tr.hits,
                 born_t=tr.born_t)


def test_a_ball_lost_in_flight_beside_a_resting_ball_is_reported_hidden_by_it():
    """piratenbillard_v4: p2's ball hopped onto p1's ball at (6,3) and vanished behind it while still in the air;
    its track was last seen in flight over (5,3). The settle goes ahead (it is accounted for) and says which
    resting ball hides it, so the reader counts it where that ball lies (a capture), not where it was last seen.
    Seen again before the settle, it is not reported hidden."""
    resting = Track(7, "red", 305, 190, 0, 0, TrackState.CONFIRMED, True, 0.9, 5, born_t=0.0)
    far = Track(8, "red", 100, 500, 0, 0, TrackState.CONFIRMED, True, 0.9, 5, born_t=0.0)
    watch = watch_hops()
    watch.update(0.0, (resting, far, flying(x=320, y=230)), False)
    lost = flying(x=318, y=205, vy=0.0, state=TrackState.LOST, seen=0.0)
    assert watch.update(0.3, (resting, far, lost), False) is None  # within the rest window of the hop
    settle = watch.update(0.5, (resting, far, lost), False)
    assert settle is not None and settle.unseen_landing == ()
    assert [(gone.id, hider.id) for gone, hider in settle.hidden_by] == [(2, 7)]
    watch = watch_hops()
    watch.update(0.0, (resting, far, flying(x=320, y=230)), False)
    watch.update(0.3, (resting, far, lost), False)
    settle = watch.update(0.5, (resting, far, replace_at_rest(flying(x=318, y=205, seen=0.5))), False)
    assert settle is not None and settle.hidden_by == ()


def test_a_ball_lost_at_hop_speed_is_hidden_by_the_ball_beside_where_it_was_last_seen_not_where_it_coasted():
    """piratenbillard_v16: the capturing ball was lost at hop speed 73 mm short of the ball it landed beside; its track
    coasted on its filter's velocity 374 mm on, beside a ball of another player's starting row, and was read hidden
    by that one: a capture read as a secured ball. The ball beside where it was last seen hides it; where it coasted
    to counts only when none lies there (it flew on)."""
    captured = Track(7, "red", 305, 190, 0, 0, TrackState.CONFIRMED, True, 0.9, 5, born_t=0.0)
    far = Track(8, "red", 300, 20, 0, 0, TrackState.CONFIRMED, True, 0.9, 5, born_t=0.0)
    for balls, hider in (((captured, far), 7), ((far,), 8)):
        watch = watch_hops()
        watch.update(0.0, (*balls, flying(x=318, y=230, vy=-1250)), False)
        coasted = flying(x=302, y=30, vy=0.0, state=TrackState.LOST, seen=0.0)
        watch.update(0.3, (*balls, coasted), False)
        settle = watch.update(0.5, (*balls, coasted), False)
        assert settle is not None and [(gone.id, by.id) for gone, by in settle.hidden_by] == [(2, hider)], balls


def test_a_ball_lost_over_a_place_where_another_ball_lies_is_not_reported_hidden_by_a_neighbour():
    """piratenbillard_v2: a hop onto the ball on (0,3) was lost there, beside it and beside the nearer ball on
    (0,2); stacked_pair: a hop onto a ball of its own colour. Last seen over a place where a ball lies, it is
    there: reported `landed`, and the reader counts it in its place however briefly it was followed
    (piratenbillard_v18's capturing ball, found 0.1 s before it landed and lost behind the captured one, was taken
    for a fleck on a hand and the capture was lost); only a ball last seen over an empty place flew on and is
    hidden by the ball beside it."""
    here, there = Location.cell_at(0, 3), Location.cell_at(0, 2)
    own = Track(11, "red", 273, 639, 0, 0, TrackState.CONFIRMED, True, 0.9, 5, location=here, born_t=0.0)
    nearer = Track(10, "red", 250, 650, 0, 0, TrackState.CONFIRMED, True, 0.9, 5, location=there, born_t=0.0)
    for where, hidden, landed in ((here, [], [2]), (Location.cell_at(1, 2), [(2, 10)], [])):
        watch = watch_hops()
        watch.update(0.0, (own, nearer, flying(x=258, y=655)), False)  # last seen in flight where it was lost
        lost = replace(flying(x=262, y=655, vy=0.0, state=TrackState.LOST, seen=0.0), location=where)
        watch.update(0.1, (replace(own, state=TrackState.LOST), nearer, lost), False)  # both hidden as it lands
        settle = watch.update(0.6, (own, nearer, lost), False)
        assert settle is not None and [(gone.id, hider.id) for gone, hider in settle.hidden_by] == hidden, where
        assert [tr.id for tr in settle.landed] == landed, where


def watch_rolls(wait_ms=3000.0):
    """Star Cluster Ball's watch: balls roll; the field of play is the board beyond the play area (y >= 400)."""
    return SettleWatch(SettleConfig(rest_debounce_ms=400, roll_wait_ms=wait_ms), Rect(0, 0, 700, 1400), False,
                       30.0, field=Rect(0, 400, 700, 1400))


def test_a_ball_lost_rolling_up_the_board_holds_the_settle_until_it_is_found_or_waited_for():
    """starcluster_v1 and _v6: a small dark marble rolling far up the board was lost by the detector for 1.5 s,
    its track coasted out, and the table "settled" empty while it rolled."""
    watch = watch_rolls()
    assert watch.update(0.0, (track(), flying(x=300, y=800, vy=900)), False) is None
    assert watch.update(0.5, (track(),), False) is None  # lost rolling up the board: somewhere up there still
    assert watch.update(3.45, (track(),), False) is None
    settle = watch.update(3.55, (track(),), False)  # waited `roll_wait_ms` in vain: it goes ahead, for review
    assert settle is not None and [tr.id for tr in settle.unseen_landing] == [2]
    found = watch_rolls()  # found again as a new track of its colour, at rest: accounted for
    found.update(0.0, (track(), flying(x=300, y=800, vy=900)), False)
    found.update(0.5, (track(),), False)
    settle = found.update(2.0, (track(), replace_at_rest(flying(track_id=7, x=320, y=1100, born=1.5, seen=2.0))),
                          False)
    assert settle is not None and settle.unseen_landing == ()


def test_a_ball_lost_under_a_hand_or_in_the_play_area_is_not_waited_for():
    """Where a hand is over the table it may have lifted the ball (the umpire clearing the board); in the play
    area the shooter's hand takes balls up: neither is a ball rolling out of sight."""
    for hand, y in ((True, 800), (False, 200)):
        watch = watch_rolls()
        watch.update(0.0, (track(), flying(x=300, y=y, vy=900)), hand)
        settle = watch.update(0.5, (track(),), False)
        if hand:  # what the hand covered is read once it has been gone for the debounce time
            assert settle is None
            settle = watch.update(0.9, (track(),), False)
        assert settle is not None and settle.unseen_landing == (), (hand, y)



def test_a_ball_lost_barely_moving_is_no_roll_and_a_split_track_finds_its_ball():
    """A ball lost while moving no faster than jitter (13 mm/s, out_of_balls_final_sequence) is no ball rolling
    out of sight: the settle does not wait for it. And a ball the tracker split in two (starcluster/full_game's
    first shot: a second track born beside it a frame before the first was lost) is found again by that track:
    the settle does not wait out `roll_wait_ms` for it."""
    watch = watch_rolls()
    watch.update(0.0, (track(), flying(x=300, y=800, vx=13, vy=0)), False)
    settle = watch.update(0.5, (track(),), False)
    assert settle is not None and settle.unseen_landing == ()
    watch = watch_rolls()
    twin = Track(3, "blue", 305, 812, 0, 900, TrackState.CONFIRMED, False, 0.07, 3, born_t=0.03, born_at=(305, 810))
    watch.update(0.0, (track(), flying(x=300, y=800, vy=900, born=0.0)), False)
    watch.update(0.07, (track(), flying(x=300, y=806, vy=900, seen=0.07, born=0.0), twin), False)
    watch.update(0.1, (track(), flying(x=300, y=809, vy=900, state=TrackState.LOST, seen=0.07, born=0.0), twin),
                 False)
    settle = watch.update(0.6, (track(), replace_at_rest(twin)), False)
    assert settle is not None and settle.unseen_landing == ()


def test_a_ball_lost_at_the_top_of_its_roll_up_the_open_board_holds_the_settle():
    """starcluster_v10: a marble rolled up the board slowed to a stop at the top of its roll and rolled back; its
    track, seen there once more at 7 mm/s, was then lost, and the table settled while the ball rolled back down. A
    track lost over the open board (not in a slot or a gutter, where a rolling ball does come to rest) while its
    window still says it was rolling (not `slow`) holds the settle; lost in a gutter (starcluster/player_at_line's
    gutter ball), or slow by its window, it does not."""
    def lost_at_the_top(place, slow=False):
        watch = watch_rolls()
        top = Track(2, "blue", 300, 1200, 7.0, 3.0, TrackState.CONFIRMED, False, 0.1, 9, location=Location(place),
                    slow=slow)
        watch.update(0.0, (track(), replace(top, vy=600.0, last_seen_t=0.0)), False)  # rolling up, for real
        watch.update(0.1, (track(), top), False)  # seen at the top of its roll, its speed down to a resting ball's
        return watch.update(0.6, (track(), replace(top, state=TrackState.LOST)), False)
    assert lost_at_the_top(Place.GROUPED) is None
    assert lost_at_the_top(Place.GUTTER) is not None
    assert lost_at_the_top(Place.GROUPED, slow=True) is not None


def test_a_ball_lost_before_it_could_be_seen_at_rest_holds_the_settle_for_the_debounce_time():
    """starcluster_v16: a marble rolled into a slot's mouth, slowed to a stop there, was lost for two frames 0.3 s
    after it was last fast (over the motion speed) and rolled back out; the table settled with it in the slot,
    scored. starcluster_v7: a failed marble creeping back along the Play Line, two seconds after it was last fast,
    was lost for three frames and the table settled while it crept. A ball is at rest only once seen slow for
    the debounce time since it was last fast: a track lost before that (not at rest, not slow by its window)
    holds the settle until it has been unseen that long (in a slot or anywhere but a gutter), however long ago it
    was last fast. Never struck (fast_t None), slow by its window (a resting ball the detector misses), or in a
    gutter (starcluster_v14's, lifted soon after it stopped: read where it was last seen), it does not."""
    def lost_in_the_mouth(fast_t, slow=False, lost_for=0.03, at=Location(Place.SLOT, position=2, slot=2)):
        watch = watch_rolls()
        mouth = Track(2, "blue", 300, 1000, 5.0, 2.0, TrackState.CONFIRMED, False, 1.0, 9, location=at, slow=slow,
                      fast_t=fast_t)
        watch.update(0.0, (track(),), False)
        watch.update(1.0, (track(), mouth), False)
        return watch.update(1.0 + lost_for, (track(), replace(mouth, state=TrackState.LOST)), False)
    assert lost_in_the_mouth(fast_t=0.7) is None
    assert lost_in_the_mouth(fast_t=0.7, lost_for=0.35) is None
    assert lost_in_the_mouth(fast_t=0.7, lost_for=0.45) is not None  # unseen for the debounce: no roll in sight
    assert lost_in_the_mouth(fast_t=-1.0) is None  # creeping two seconds after it was last fast
    assert lost_in_the_mouth(fast_t=-1.0, lost_for=0.45) is not None
    assert lost_in_the_mouth(fast_t=None) is not None
    assert lost_in_the_mouth(fast_t=0.7, slow=True) is not None
    assert lost_in_the_mouth(fast_t=0.7, at=Location(Place.GUTTER)) is not None  # read where it was last seen


def test_a_ball_found_creeping_and_lost_holds_the_settle_while_the_tracker_keeps_it():
    """starcluster_v30: p2's failed marble, first found creeping along the Play Line and never fast, was followed
    for 0.43 s and lost, then found on few frames; the table settled under it five times while it crept on. A track
    never fast, followed for a debounce time or more, that lies a ball's radius (15 mm here) from where it was first
    seen, past any Play Line, has crept, and holds the settle for as long as the tracker keeps it lost (not only
    the debounce time, as one once fast does). One followed for less (a hand of a ball's colour reaching in beside
    the line for a few frames, starcluster_v8), nearer where it was found (a flicker) or on the shooter's side of
    the Play Line (a hand holding marbles there, starcluster/knock_into_slot) does not."""
    def lost_creeping(born_at, born_t, lost_for=0.03, fast_t=None, line_y=None):
        watch = watch_rolls()
        if line_y is not None:
            watch = SettleWatch(watch.config, watch.table, False, 30.0, field=watch.field,
                                past_line=Rect(0, line_y, 700, 1400))
        creeper = Track(2, "blue", 131, 226, 5.0, 2.0, TrackState.CONFIRMED, False, 1.0, 9,
                        location=Location(Place.PLAY_AREA), born_at=born_at, born_t=born_t, fast_t=fast_t)
        watch.update(0.0, (track(),), False)
        watch.update(1.0, (track(), creeper), False)
        lost = replace(creeper, state=TrackState.LOST)
        settle = watch.update(1.0 + lost_for, (track(), lost), False)
        gone = watch.update(1.0 + lost_for + 0.1, (track(),), False)  # given up by the tracker
        return settle, gone
    assert lost_creeping((110.0, 226.0), born_t=0.55)[0] is None
    held, gone = lost_creeping((110.0, 226.0), born_t=0.55, lost_for=1.1)
    assert held is None and gone is not None  # until the tracker gives it up
    assert lost_creeping((110.0, 226.0), born_t=0.55, lost_for=0.45, fast_t=0.6)[0] is not None  # once fast
    assert lost_creeping((110.0, 226.0), born_t=0.85)[0] is not None  # followed 0.15 s: a hand's flicker
    assert lost_creeping((120.0, 226.0), born_t=0.55)[0] is not None  # 11 mm from where it was found: jitter
    assert lost_creeping(None, born_t=None)[0] is not None
    assert lost_creeping((110.0, 226.0), born_t=0.55, line_y=212.0)[0] is None  # past the line
    assert lost_creeping((110.0, 226.0), born_t=0.55, line_y=235.0)[0] is not None  # in the shooter's hand


def test_a_track_never_fast_lost_on_the_shooters_side_of_the_line_does_not_stir_a_settled_table():
    """starcluster_v36: after the first settle, a hand of a ball's colour at the Play Line was followed for a few
    frames and lost there with its young filter over a resting ball's speed: taken for a ball lost while moving, it
    stirred the settled table, and the table was read empty at 1.23 s while the hand hid the marble it had just
    put down. A track never fast, lost on the shooter's side of the line outside the gutters, is most likely a hand
    (a ball that side cannot change the reading): it does not stir a settled table. While the table is in play it
    holds the settle as any ball lost while moving (it may be the shooter's ball, lost as it is let go), unless it
    is a flicker (the next test; here the watch knows no ball size, so it is none). Past the
    line, in a gutter, once fast, or on a table with no Play Line, it stirs a settled table as before."""
    def lost_at(y, fast_t=None, at=Location(Place.PLAY_AREA), line_y=200.0):
        """(whether it stirred the settled table, whether it held the settle after the next motion)"""
        watch = SettleWatch(SettleConfig(rest_debounce_ms=400),
                            past_line=None if line_y is None else Rect(0, line_y, 700, 1400))
        hand = Track(2, "red", 529, y, 0.0, 12.2, TrackState.LOST, False, 0.9, 3, location=at,
                     born_at=(531.0, y), born_t=0.85, fast_t=fast_t)
        watch.update(0.0, (track(),), False)
        assert watch.update(0.5, (track(),), False) is not None
        watch.update(1.0, (track(), hand), False)
        stirred = not watch.quiet
        watch.update(1.1, (track(vx=500, at_rest=False), hand), False)
        return stirred, watch.update(1.6, (track(), hand), False) is None
    assert lost_at(192.0) == (False, True)
    assert lost_at(230.0) == (True, True)  # past the line: a ball lost while moving
    assert lost_at(192.0, fast_t=0.9) == (True, True)
    assert lost_at(192.0, at=Location(Place.GUTTER)) == (True, True)
    assert lost_at(192.0, line_y=None) == (True, True)


def test_a_flicker_lost_where_it_was_found_does_not_hold_the_settle():
    """starcluster/full_game: as red's gutter ball stopped, a red glint past the Play Line was followed for three
    frames (0.07 s) within 1 mm of where it was first found, and lost with its young filter at 12.2 mm/s, over a
    resting ball's 12: taken for a ball lost while moving, it held the table's settle 0.3 s, until the filter let
    the speed go, 730 ms after the ball stopped (issue 13's bound: the debounce + 150 ms). A track never fast, lost
    within a debounce time of being found, within a quarter of a ball of where it was found, is a flicker: its speed
    is its detections' jitter. One that moved that far, was followed longer, or was once fast still holds it."""
    def held(born_at=(529.5, 192.0), born_t=1.33, fast_t=None):
        watch = SettleWatch(SettleConfig(rest_debounce_ms=400), ball_mm=16.0)
        glint = Track(2, "red", 529.0, 192.0, 12.2, -1.2, TrackState.LOST, False, 1.4, 3,
                      location=Location(Place.PLAY_AREA), born_at=born_at, born_t=born_t, fast_t=fast_t)
        watch.update(0.0, (track(),), False)
        assert watch.update(0.5, (track(),), False) is not None
        watch.update(1.0, (track(vx=500, at_rest=False, fast_t=1.0),), False)  # the shot's ball, stopping
        return watch.update(1.45, (track(fast_t=1.0), glint), False) is None
    assert not held()
    assert held(born_at=(535.0, 192.0))  # 6 mm from where it was found: it moved
    assert held(born_t=0.95)  # followed 0.45 s
    assert held(fast_t=1.36)


def test_a_ball_found_anew_out_of_the_shooters_reach_restarts_the_quiet_period():
    """starcluster_v4: p2's marble, released as the balls in the shooter's hand last moved, was found once, 150 mm
    past the Play Line, on the very frame the table settled, and read lying in the play area. Where a ball found
    anew can only have rolled in (`rolled_in`: a ball's length past the line), it restarts the debounce, as a ball
    seen moving does: the table is quiet only once neither has happened for the debounce time. A ball found anew
    within reach of the line (in the shooter's hand), in a gutter, or long after anything last moved (a resting
    ball found again) does not."""
    def found(x, y, at=Location(Place.PLAY_AREA)):
        return BoardBall(Detection(0, 0, 5, "blue", 0.8), x, y, at)

    def settles(born, at=0.45):
        watch = SettleWatch(SettleConfig(rest_debounce_ms=400, roll_wait_ms=3000), Rect(0, 0, 700, 1400), False,
                            30.0, field=Rect(0, 450, 700, 1400), rolled_in=Rect(0, 260, 700, 1400))
        watch.update(-1.0, (track(),), False)
        watch.update(0.0, (track(vx=600, at_rest=False),), False)  # a ball in the hand, moving for real
        watch.update(0.1, (track(),), False)
        return watch.update(at, (track(),), False, born=born)
    assert settles(()) is not None  # nothing found: quiet since the motion
    assert settles((found(300, 380),)) is None  # a released ball: wait the debounce from it
    assert settles((found(300, 240),)) is not None  # at the line: the shooter's hand
    assert settles((found(30, 500, Location(Place.GUTTER)),)) is not None
    assert settles((found(300, 380),), at=3.05) is not None  # long after the last motion
    watch = SettleWatch(SettleConfig(rest_debounce_ms=400), Rect(0, 0, 700, 1400), True, 30.0)  # no Play Line
    watch.update(0.0, (track(),), False)
    assert watch.update(0.45, (track(),), False, born=(found(300, 380),)) is not None


def test_a_ball_rolling_unseen_by_colour_restarts_the_quiet_period_past_a_play_line():
    """Something ball-sized rolling over the board (`rolling`, the hand watch's colourless sighting) restarts the
    debounce where balls roll in past a Play Line, as a ball the tracker sees moving does; without a Play Line (where
    balls hop, and the hop watch stands for it) it changes nothing."""
    def settles(rolling_at):
        watch = SettleWatch(SettleConfig(rest_debounce_ms=400, roll_wait_ms=3000), Rect(0, 0, 700, 1400), False,
                            30.0, field=Rect(0, 450, 700, 1400), rolled_in=Rect(0, 260, 700, 1400))
        watch.update(-1.0, (track(),), False)
        watch.update(0.0, (track(vx=600, at_rest=False),), False)  # a ball moving for real
        watch.update(0.2, (track(),), False, rolling=rolling_at == 0.2)
        return watch.update(0.45, (track(),), False)
    assert settles(None) is not None
    assert settles(0.2) is None  # the quiet period runs from the roll seen at 0.2 s
    watch = SettleWatch(SettleConfig(rest_debounce_ms=400), Rect(0, 0, 700, 1400), True, 30.0)  # no Play Line
    watch.update(-1.0, (track(),), False)
    watch.update(0.0, (track(vx=600, at_rest=False),), False)
    assert watch.update(0.2, (track(),), False, rolling=True) is not None


def test_a_ball_come_to_rest_in_a_gutter_without_being_seen_to_move_is_a_change_to_read():
    """starcluster_v22: a marble let go over the gutter beside the Play Line dropped into it a few millimetres
    from the hand, never over the motion speed, and the table never settled with it (p1 7 where the truth has 5). A
    ball at rest in a gutter that was not at rest there when the table last settled arms the next settle, once;
    a ball found at rest elsewhere without moving (a resting ball found again) does not."""
    def resting(track_id, place):
        return replace(track(), id=track_id, location=Location(place))
    for place, settles in ((Place.GUTTER, True), (Place.PLAY_AREA, False)):
        watch = SettleWatch(SettleConfig(rest_debounce_ms=400), Rect(0, 0, 700, 1400), False, 30.0)
        assert watch.update(0.0, (), False) is None
        assert watch.update(0.5, (), False) is not None  # the empty table, read once
        assert (watch.update(1.0, (resting(7, place),), False) is not None) == settles
        assert watch.update(1.5, (resting(7, place),), False) is None  # read already


def test_a_ball_lost_lying_in_a_gutter_is_no_ball_lost_while_moving():
    """starcluster_v2: the gutter ball's filter still jittered at 14 mm/s (over a resting ball's 12) when the
    umpire's hand came over it; lost, it held the settle until its coasting ran out, past the lift, and the table
    was read too late. A ball lost in a gutter while slow by its window was lying there (it leaves a gutter only in
    a hand, and is read where it was last seen); in the play area, or not slow, it still holds the settle."""
    def settles(place, slow):
        watch = SettleWatch(SettleConfig(rest_debounce_ms=400), Rect(0, 0, 700, 1400), False, 30.0)
        lying = Track(2, "blue", 40, 300, 14.0, 0.0, TrackState.CONFIRMED, False, 1.0, 9, location=Location(place),
                      slow=slow, fast_t=0.2)
        watch.update(0.0, (track(),), False)
        watch.update(1.0, (track(), lying), False)
        return watch.update(1.05, (track(), replace(lying, state=TrackState.LOST)), False)
    assert settles(Place.GUTTER, slow=True) is not None
    assert settles(Place.GUTTER, slow=False) is None
    assert settles(Place.PLAY_AREA, slow=True) is None


def test_a_shot_that_started_unseen_is_read_once_the_table_is_quiet():
    """A shot started (`expect`) with nothing seen moving over the motion speed (piratenbillard_v9: a small ball
    struck out of sight, first found slowing to rest; starcluster/knock_into_slot: a marble knocked into a slot at
    120 mm/s) still gets its settle once every ball is at rest; without it the watch waits for motion that never
    came. Not before the table has been quiet for the debounce time since the shot started: its ball may not be
    seen at all."""
    for expected in (False, True):
        watch = SettleWatch(SettleConfig(rest_debounce_ms=400))
        watch.update(0.0, (track(),), False)
        assert watch.update(0.5, (track(),), False) is not None
        if expected:
            watch.expect(0.55)
        assert watch.update(0.6, (track(vx=80, at_rest=False),), False) is None
        settle = watch.update(1.1, (track(),), False)
        assert (settle is not None) == expected
    watch = SettleWatch(SettleConfig(rest_debounce_ms=400))
    watch.update(0.0, (track(),), False)
    assert watch.update(0.5, (track(),), False) is not None
    watch.expect(0.6)  # nothing seen moving at all
    assert [watch.update(t, (track(),), False) is not None for t in (0.7, 0.9, 0.95, 1.0)] == [False] * 3 + [True]
    assert watch.update(1.1, (track(vx=300, at_rest=False, fast_t=1.1),), False) is None  # rolling: armed
    watch.expect(1.3)  # the shot called late (its ball lost rolling, found again): its balls' own rest decides
    assert watch.update(1.5, (track(),), False) is not None


@pytest.mark.parametrize("k", [2, 3, 4, 8])
def test_the_hand_watch_shrinks_a_frame_to_its_block_means(k):
    """`block_means` halves while it can (OpenCV halves about five times faster than it shrinks by 4): each shrunk
    pixel is its k x k block's mean within half a level for each rounding (each halving rounds, and the last step),
    and most are the rounded mean itself."""
    profile = load_profile("starcluster")
    match = simulate_starcluster(profile, 1, "chain_grand_slam", StarClusterSimOptions())
    camera = make_camera(profile, "behind_play_line", 1280, 720)
    image, _ = Renderer(profile, camera, Realism.moderate(), match.fps, match.seed).render(match.frames[0])
    h, w = image.shape[0] // k * k, image.shape[1] // k * k
    shrunk = block_means(image[:h, :w], k)
    means = image[:h, :w].reshape(h // k, k, w // k, k, 3).mean(axis=(1, 3))
    assert shrunk.shape == means.shape and shrunk.dtype == np.uint8
    off = np.abs(shrunk - means)
    roundings = 1 + {2: 0, 3: 0, 4: 1, 8: 2}[k]  # the halvings before the last step, and the last
    assert off.max() <= 0.5 * roundings
    assert np.mean(np.abs(shrunk - np.round(means)) == 0) > 0.6


def test_the_field_picture_sees_a_ball_that_moved_over_the_debounce_and_nothing_on_a_still_table():
    """`FieldPicture.changed`: a settle waits while the field differs from a debounce before by a ball-sized blob,
    whatever the ball's colour (starcluster_v8, _v25: small marbles the colour detector missed rolled on after the
    table settled). Rendered Star Cluster Ball at 1280x720 with the samples' light drift, noise, blur and camera
    shake, steadied by the real stabiliser: found beside a ball that moved two radii or more over the last debounce
    on most frames of a match's first 16 s, and never on a still table (four of its quiet moments, with 0 to 4 balls
    on the field, each held for 1.5 s while the light, the noise and the shake go on). Kept whole, and halved (from
    the frame's shared halvings) as it is where the smallest ball on the field looks 6 px wide or more: two pictures
    watch the same rendered frames."""
    profile = load_profile("starcluster")
    match = simulate_starcluster(profile, 3, "chain_grand_slam")
    camera = make_camera(profile, "behind_play_line", 1280, 720)
    renderer = Renderer(profile, camera, Realism.moderate(), match.fps, match.seed)
    first, _ = renderer.render(match.frames[0])
    calibration = calibrate_markers(first, profile)
    mapper = BoardMapper(calibration, profile)
    field = profile.playing_field
    polygon = calibration.board_to_image(np.array([[field.x_min, field.y_min], [field.x_max, field.y_min],
                                                   [field.x_max, field.y_max], [field.x_min, field.y_max]], float))
    config = SettleConfig()
    back = round(config.rest_debounce_s * match.fps)
    smallest_radii_px = (4.0, 8.0)  # kept whole, and halved

    def watch(frames):
        """(the frame's truth and whether a hand is in it, what each picture found) for each frame a debounce on."""
        stabiliser = TableStabiliser(first, calibration, profile)
        pictures = [FieldPicture(config, HandConfig().hand_min_area_balls, polygon, (camera.width, camera.height),
                                 lambda px: mapper.ball_radius_px(mapper.to_board(px)), smallest)
                    for smallest in smallest_radii_px]
        assert [picture.factor for picture in pictures] == [1, 2]
        for i, f in enumerate(frames):
            image, truth = renderer.render(f)
            stabiliser.update(image)
            halvings = Halvings(image)
            for picture in pictures:
                picture.remember(f.t, image, stabiliser.transform, halvings)
            yield (truth, f.hand is not None), [picture.changed() if i >= back else None for picture in pictures]

    def on_field(truth):
        return {b.id: b for b in truth.balls if b.visible and field.contains((b.x, b.y))}

    found_moved: list[list[bool]] = [[] for _ in smallest_radii_px]
    seen = []
    for now, founds in watch(match.frames[:480]):
        seen.append(now)
        if len(seen) <= back or now[1]:
            continue
        before, after = on_field(seen[-1 - back][0]), on_field(now[0])
        moved = [(b, before[i]) for i, b in after.items() if i in before
                 and np.hypot(b.u - before[i].u, b.v - before[i].v) >= 2 * b.r_px]
        for found, kept in zip(founds, found_moved):
            if moved:
                kept.append(found is not None and any(
                    min(np.hypot(found[0] - a.u, found[1] - a.v), np.hypot(found[0] - b.u, found[1] - b.v))
                    <= 3 * a.r_px for a, b in moved))
    quiet = [f for f in match.frames[:480] if f.hand is None and not any(
        b.moving for b in f.balls if field.contains((b.x, b.y)))]
    moments = quiet[::len(quiet) // 4][:4]
    still = [founds for f in moments for _, founds in watch(
        [replace(f, index=f.index + k, t=f.t + k / match.fps) for k in range(round(1.5 * match.fps))])]
    counts = sorted(len(on_field(renderer.render(f)[1])) for f in moments)
    assert counts[0] == 0 and counts[-1] >= 3 and len(still) == 4 * 45
    for k, smallest in enumerate(smallest_radii_px):
        assert len(found_moved[k]) >= 30, smallest
        assert sum(found_moved[k]) >= 0.8 * len(found_moved[k]), smallest
        assert not any(founds[k] for founds in still), smallest


def test_a_settle_waits_while_the_field_picture_changes_then_goes_ahead_flagged():
    """The picture is asked only when every track would let the table settle; while it changed, the settle waits,
    for `roll_wait_ms` at most, then goes ahead with where it changed (`stirring`) for review."""
    asked = []

    def picture(where):
        return lambda: asked.append(where) or where

    watch = SettleWatch(SettleConfig(rest_debounce_ms=400, roll_wait_ms=1000))
    watch.update(0.0, (track(),), False, picture=picture((5.0, 6.0)))
    assert asked == []  # warming up: not asked
    assert watch.update(0.5, (track(),), False, picture=picture((5.0, 6.0))) is None
    assert watch.update(0.6, (track(vx=80, at_rest=False),), False, picture=picture((5.0, 6.0))) is None
    assert asked == [(5.0, 6.0)]  # a track not at rest: not asked
    settle = watch.update(0.7, (track(),), False, picture=picture(None))
    assert settle is not None and settle.t == 0.7 and settle.stirring is None  # still again: it settles
    watch.update(1.0, (track(vx=500, at_rest=False, fast_t=1.0),), False)
    for t in (1.5, 2.0, 2.49):
        assert watch.update(t, (track(),), False, picture=picture((5.0, 6.0))) is None
    settle = watch.update(2.5, (track(),), False, picture=picture((5.0, 6.0)))
    assert settle is not None and settle.stirring == (5.0, 6.0)  # waited 1 s from 1.5: goes ahead, flagged


@pytest.mark.parametrize("smallest_radius_px", [4.0, 8.0])
def test_the_field_picture_takes_out_a_camera_that_moved_by_its_steadying_transforms(smallest_radius_px):
    """A rendered Star Cluster frame, the camera then moved 6.5 px right and 3.25 px down (the stabiliser's transform
    takes it back): nothing changed on the field, kept whole or halved; told no transform, the slots' edges did."""
    profile = load_profile("starcluster")
    match = simulate_starcluster(profile, 3, "chain_grand_slam")
    camera = make_camera(profile, "behind_play_line", 1280, 720)
    image, _ = Renderer(profile, camera, Realism(), match.fps, match.seed).render(match.frames[0])
    calibration = calibrate_markers(image, profile)
    mapper = BoardMapper(calibration, profile)
    field = profile.playing_field
    polygon = calibration.board_to_image(np.array([[field.x_min, field.y_min], [field.x_max, field.y_min],
                                                   [field.x_max, field.y_max], [field.x_min, field.y_max]], float))
    moved = cv2.warpAffine(image, np.float32([[1, 0, 6.5], [0, 1, 3.25]]), (camera.width, camera.height),
                           flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    back = np.array([[1.0, 0, -6.5], [0, 1.0, -3.25]])  # this frame's pixels -> the reference frame's
    for steady, expect_change in ((back, False), (None, True)):
        picture = FieldPicture(SettleConfig(), HandConfig().hand_min_area_balls, polygon, (camera.width, camera.height),
                               lambda px: mapper.ball_radius_px(mapper.to_board(px)), smallest_radius_px)
        picture.remember(0.0, image, None, Halvings(image))
        picture.remember(0.5, moved, steady, Halvings(moved))
        assert (picture.changed() is not None) == expect_change
