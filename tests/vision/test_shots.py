"""Shot segmentation: Play Line crossings, struck balls leaving spaces (each game's shot watch), lifts."""

from calibration.profile import load_profile
from rules.events import BallLifted, Location, Place, ShotStarted
from vision.cells import snapshot_from_tracks
from vision.config import PipelineConfig
from vision.games import game_vision
from vision.settle import Settle
from vision.shots import ShotSegmenter
from vision.track import TrackerUpdate
from vision.types import Track, TrackState

SC = load_profile("starcluster")
PB = load_profile("piratenbillard")


class Shots:
    """A game's segmenter; `update` gives the frame's events and keeps its warnings and gone balls."""

    def __init__(self, profile):
        config = PipelineConfig()
        game = game_vision(profile.game)
        self.segmenter = ShotSegmenter(game.shot_watch(profile, config.shots, config.settle), config.shots)
        self.warnings, self.gone = [], []

    def update(self, t, tracks, settle, hand):
        segmented = self.segmenter.update(t, tracks, settle, hand)
        self.warnings += segmented.warnings
        self.gone += segmented.gone
        return segmented.events


def tr(id, x, y, vy=0.0, at_rest=False, location=None, state=TrackState.CONFIRMED, seen=0.0, colour="red"):
    return Track(id, colour, x, y, 0.0, vy, state, at_rest, seen, 5, location=location)


def up(*tracks, ended=()):
    return TrackerUpdate(tuple(tracks), tuple(ended), frozenset(t.id for t in tracks))


def test_star_cluster_shot_starts_when_a_ball_crosses_the_play_line_upwards():
    line = SC.play_line[0][1]
    shots = Shots(SC)
    assert shots.update(1.0, up(tr(1, 300, line - 40, vy=800)), None, False) == []
    (event,) = shots.update(1.1, up(tr(1, 300, line + 20, vy=800)), None, False)
    assert isinstance(event, ShotStarted) and event.player == "red" and event.t == 1.1
    assert shots.update(1.2, up(tr(1, 300, line + 80, vy=800)), None, False) == []  # once per crossing
    # a ball already on the board that gets knocked upwards is not a shot
    assert shots.update(1.3, up(tr(2, 300, line + 500, vy=900)), None, False) == []


def test_a_fast_ball_first_confirmed_far_past_the_line_is_a_shot_if_it_was_first_seen_near_it():
    """A ball thrown hard is 200 mm further on by the time its track is confirmed: where it was first
    detected decides; a resting ball found again after a hand hid it (slow, jittery) is no shot. One first
    held beyond the launch zone, already rolling up fast, is a launch only when no shot is open."""
    from dataclasses import replace
    line = SC.play_line[0][1]
    shots = Shots(SC)
    found_again = replace(tr(3, 300, line + 150, vy=100), born_at=(300, line + 150))
    assert shots.update(0.9, up(found_again), None, False) == []  # under the motion speed: jitter, not a roll
    fast = replace(tr(1, 300, line + 450, vy=1200), born_at=(300, line + 190))
    (event,) = shots.update(1.0, up(fast), None, False)
    assert isinstance(event, ShotStarted) and event.player == "red"
    # first held far past the launch zone: while a shot is open it is a ball knocked on, no new shot
    assert shots.update(1.1, up(fast, replace(tr(2, 300, line + 650, vy=1200), born_at=(300, line + 600))),
                        None, False) == []
    # with none open, a ball already rolling up the board that fast was launched unseen (a hard throw under
    # motion blur outruns a newborn track): a shot, by the player to play (its colour may be a knocked ball's)
    shots = Shots(SC)
    far = replace(tr(2, 300, line + 650, vy=1200), born_at=(300, line + 600))
    (event,) = shots.update(1.0, up(far), None, False)
    assert isinstance(event, ShotStarted) and event.player is None
    shots = Shots(SC)
    slow = replace(tr(4, 300, line + 650, vy=100), born_at=(300, line + 600))
    assert shots.update(1.0, up(slow), None, False) == []  # not rolling for real: a resting ball found again


def test_a_ball_first_found_at_rest_in_a_gutter_past_the_line_with_no_shot_open_was_shot_there_unseen():
    """A washed-out marble blurred past recognition as it rolled is first found at rest in a gutter, past the
    line: a shot by the player to play. Not one a ball's length or less past the line (a marble let go into a
    gutter beside it), not one on the board (a flickering ball found again), not one where a ball of its colour
    rests (hidden, found again), not while a shot is open, not one there when the camera started."""
    from dataclasses import replace
    line = SC.play_line[0][1]
    gutter = Location(Place.GUTTER)
    x, y = 570.0, line + 300  # the right gutter

    def found(at=(x, y), location=gutter, born=5.0, vy=0.0, colour="red", id=7):
        return replace(tr(id, *at, vy=vy, location=location, colour=colour), born_at=at, born_t=born)

    def starts(*tracks, open_shot=False, first=0.0):
        shots = Shots(SC)
        shots.update(first, up(), None, False)  # the first frame
        shots.segmenter.play.shot_open = open_shot
        return shots.update(5.1, up(*tracks), None, False)

    (event,) = starts(found())
    assert isinstance(event, ShotStarted) and event.player is None and event.t == 5.1
    assert starts(found(at=(x, line + SC.ball_diameter_mm - 1))) == []  # let go beside the line
    assert starts(found(location=Location.slot_at(2, 1))) == []  # on the board: a ball found again
    assert [e.player for e in starts(found(vy=400))] == ["red"]  # rolling: a launch seen late, the line's call
    resting = tr(3, x, y + 20, at_rest=True, location=gutter, state=TrackState.LOST)
    assert starts(found(), resting) == []  # where a ball of its colour rests: that ball, found again
    assert len(starts(found(), replace(resting, colour="blue"))) == 1  # another colour's is another ball
    assert starts(found(), open_shot=True) == []
    assert starts(found(born=0.1)) == []  # there when the camera started


def test_a_settle_closes_the_shot_and_a_lifted_resting_ball_is_a_lift():
    shots = Shots(PB)
    cell = Location.cell_at(5, 4)
    resting = tr(1, *PB.space_center(5, 4), at_rest=True, location=cell, seen=2.0)
    shots.segmenter.play.shot_open = True
    assert shots.update(2.0, up(resting), Settle(2.0, (resting,), 0.8), False) == []  # the pipeline reads it
    assert not shots.segmenter.play.shot_open
    shots.update(2.5, up(), None, True)  # a hand reaches over it
    (lifted,) = shots.update(3.5, up(ended=(resting,)), None, False)
    assert isinstance(lifted, BallLifted) and lifted.at == cell and lifted.owner == "red"
    # a resting ball that vanishes with no hand in sight is a warning, not a lift
    other = tr(2, *PB.space_center(5, 5), at_rest=True, location=Location.cell_at(5, 5), seen=9.0)
    assert shots.update(10.5, up(ended=(other,)), None, False) == []
    assert "no hand" in shots.warnings[-1]


def test_piratenbillard_shot_starts_when_a_resting_ball_leaves_its_space():
    shots = Shots(PB)
    x, y = PB.space_center(9, 4)
    home = Location.cell_at(9, 4)
    shots.update(1.0, up(tr(1, x, y, at_rest=True, location=home)), None, False)
    assert shots.update(1.1, up(tr(1, x, y + 10, location=home)), None, False) == []  # a wobble
    (event,) = shots.update(1.2, up(tr(1, x, y + 40, location=Location.cell_at(8, 4))), None, False)
    assert event.player == "red" and event.ball_from == home


def test_a_small_ball_struck_out_of_sight_and_first_found_at_rest_far_away_started_a_shot():
    """piratenbillard_v9: a 14.2 mm pink ball struck from (9,8) was a blur for its whole hop; its resting track was
    lost with no hand over the table and the ball was first found 0.3 s later, 145 mm away, at 84 mm/s, under the
    motion speed a rolling ball is seen at: the shot and its settle were missed. A track of its colour found far
    from it since it was lost is that ball struck, when no hand has been over the table since; with a hand there,
    the lost ball may have been lifted and one found elsewhere another ball seen again."""
    from dataclasses import replace
    x, y = PB.space_center(9, 8)
    home = Location.cell_at(9, 8)
    for hand, struck in ((False, True), (True, False)):
        shots = Shots(PB)
        resting = tr(1, x, y, at_rest=True, location=home, seen=1.3)
        shots.update(1.3, up(resting), None, hand)
        lost = replace(resting, state=TrackState.LOST)
        assert shots.update(1.4, up(lost), None, False) == []  # not seen since: lost, nothing found yet
        found = replace(tr(7, x, y + 145, vy=-84, location=Location.cell_at(5, 8), seen=1.67), born_t=1.6)
        events = shots.update(1.67, up(lost, found), None, False)
        assert [(e.player, e.ball_from) for e in events if isinstance(e, ShotStarted)] == \
            ([("red", home)] if struck else []), hand
    # a ball found close by is the lost one seen again, whatever the hand
    shots = Shots(PB)
    shots.update(1.3, up(tr(1, x, y, at_rest=True, location=home, seen=1.3)), None, False)
    lost = replace(tr(1, x, y, at_rest=True, location=home, seen=1.3), state=TrackState.LOST)
    near = replace(tr(8, x, y + 5, location=home, seen=1.6), born_t=1.6)
    assert shots.update(1.6, up(lost, near), None, False) == []


def test_a_lost_resting_ball_found_again_where_it_lay_is_not_the_ball_struck_from_there():
    """piratenbillard_v22: the track of p3's resting ball on (0,4) was lost and the ball found again where it lay,
    under a new track; a second later p3 struck from (0,1) and the ball hopped away under another new track. The
    lost track plus that rolling one was taken for a strike from (0,4), the real strike from (0,1) (its resting track
    moving off) came while a shot was open and was not seen, and the emptied (0,1)'s paint stood as a ninth ball. A
    lost resting track whose place holds a track of its colour at rest, born since it last lay there, was not
    struck: the strike is the one that moves off its space."""
    from dataclasses import replace
    far, near = Location.cell_at(0, 4), Location.cell_at(0, 1)
    (fx, fy), (nx, ny) = PB.space_center(0, 4), PB.space_center(0, 1)
    for found_again in (True, False):
        shots = Shots(PB)
        resting = tr(1, fx, fy, at_rest=True, location=far, seen=3.6)
        struck = tr(2, nx, ny, at_rest=True, location=near, seen=3.6)
        shots.update(3.6, up(resting, struck), None, False)
        lost = replace(resting, state=TrackState.LOST)
        again = (replace(tr(3, fx + 1, fy, at_rest=True, location=far, seen=4.7), born_t=3.63),) if found_again else ()
        shots.update(3.7, up(lost, struck, *again), None, False)
        hop = replace(tr(4, nx - 40, ny + 50, vy=900, seen=4.73), born_t=4.73)
        leaving = replace(struck, y=ny - 0.8 * PB.pitch_mm, at_rest=False, last_seen_t=4.73)
        events = shots.update(4.73, up(lost, leaving, hop, *again), None, False)
        assert [e.ball_from for e in events if isinstance(e, ShotStarted)] == [near if found_again else far]


def test_a_struck_ball_whose_resting_track_is_found_again_on_its_paint_started_a_shot():
    """piratenbillard_v26: p3 struck from (0,1); the ball's resting track was lost for a frame and found again on the
    space's paint, 19 mm from where the ball lay (within the leave-space limit, so it never left its space), while a
    new track, born as the ball left, followed the hop. No shot was started; the paint was never learnt and stood as
    a p3 ball at a later capture. A rolling track of its colour born since the resting track last lay at rest, far
    from it, is its ball struck; one born before is another ball, a track back at rest keeps its ball, and so does
    one never lost (piratenbillard_v16: a resting ball of a row seen end on shifted 19 mm as its neighbour was
    struck and that one's track lost) or one born long after (piratenbillard_v30: 0.56 s, a neighbour's track found
    again after a hand). A track never lost that followed its ball off its rest fast, and slid back on to the paint
    (piratenbillard_v22: 206-218 mm/s, then 19-22 mm from its rest), left its rest as a lost one does; one fast only
    before it last lay at rest did not."""
    from dataclasses import replace
    x, y = PB.space_center(0, 1)
    home = Location.cell_at(0, 1)
    for rested, born, at_rest, lapsed, fast_t, struck in (
            (4.8, 4.83, False, True, None, True), (4.8, 4.7, False, True, None, False),
            (4.8, 4.83, True, True, None, False), (4.8, 4.83, False, False, None, False),
            (4.5, 4.83, False, True, None, False), (4.8, 4.83, False, False, 4.87, True),
            (4.8, 4.83, False, False, 4.2, False), (4.8, 4.7, False, False, 4.87, False)):
        shots = Shots(PB)
        resting = tr(1, x, y, at_rest=True, location=home, seen=rested, colour="p3")
        shots.update(rested, up(resting), None, False)
        shifted = replace(resting, y=y - 12, at_rest=False, last_seen_t=4.83)
        assert shots.update(4.83, up(shifted), None, False) == []  # within the limit: no strike yet
        lost = replace(shifted, state=TrackState.LOST) if lapsed else replace(shifted, fast_t=fast_t)
        assert shots.update(4.87, up(lost), None, False) == []  # nothing rolling away yet
        on_paint = replace(resting, x=x + 6, y=y - 18, at_rest=at_rest, last_seen_t=4.9, fast_t=fast_t)
        hop = replace(tr(28, x - 48, y + 67, vy=-471, seen=4.9, colour="p3"), born_t=born)
        events = shots.update(4.9, up(on_paint, hop), None, False)
        assert [(e.player, e.ball_from) for e in events if isinstance(e, ShotStarted)] == \
            ([("p3", home)] if struck else []), (rested, born, at_rest, lapsed, fast_t)


def test_two_balls_in_one_space_count_as_two():
    cell = Location.cell_at(6, 3)
    balls = (tr(1, 0, 0, location=cell), tr(2, 8, 0, location=cell))
    assert snapshot_from_tracks(Settle(1.0, balls, 1.0)).count("red", Place.CELL) == 2


def test_a_hidden_resting_ball_seen_again_far_away_was_knocked_on_not_lifted():
    """Star Cluster Ball: a ball resting just past the Play Line, hidden by the next shooter's hand and knocked
    up the board by the ball released behind it; neither is seen crossing the line. The lost resting track
    plus a new track of its colour far away is that ball moved: a shot by the player to play, and no lift."""
    from dataclasses import replace
    line = SC.play_line[0][1]
    shots = Shots(SC)
    resting = tr(1, 200, line + 8, at_rest=True, location=Location(Place.PLAY_AREA), seen=3.5)
    shots.update(3.5, up(resting), None, False)
    hidden = replace(resting, state=TrackState.LOST)
    assert shots.update(4.0, up(hidden), None, True) == []  # under the hand: not moved yet
    again = replace(tr(3, 176, 640, vy=50), born_at=(174.0, 636.0), born_t=4.43)
    (event,) = shots.update(4.5, up(hidden, again), None, True)
    assert isinstance(event, ShotStarted) and event.player is None  # the engine knows who is to play
    assert shots.update(4.7, up(again, ended=(hidden,)), None, True) == []  # not a ball_lifted
    # a resting ball lifted by a hand, with no ball of its colour appearing elsewhere, is still a lift
    shots = Shots(SC)
    shots.update(3.5, up(resting), None, False)
    shots.update(4.0, up(hidden), None, True)
    near = replace(tr(4, 205, line + 20), born_at=(205.0, line + 20), born_t=4.2)  # found again close by
    assert shots.update(4.2, up(hidden, near), None, True) == []
    (lifted,) = shots.update(4.7, up(ended=(hidden,)), None, True)
    assert isinstance(lifted, BallLifted)


def test_a_resting_ball_vanishing_between_shots_is_gone_but_one_lost_during_a_shot_may_be_hidden():
    """The table reader keeps a ball hidden by one that landed on it only while it has not left: a resting ball
    that vanished between shots (a lift the hand watch missed) is reported gone; one lost during a shot is not."""
    from dataclasses import replace
    shots = Shots(PB)
    a = tr(1, *PB.space_center(5, 2), at_rest=True, location=Location.cell_at(5, 2), seen=4.5)
    b = tr(2, *PB.space_center(3, 5), at_rest=True, location=Location.cell_at(3, 5), seen=8.0, colour="blue")
    shots.update(4.5, up(a, b), None, False)
    shots.update(4.6, up(replace(a, state=TrackState.LOST), b), None, False)  # vanishes with no shot in play
    shots.update(5.8, up(b, ended=(a,)), None, False)
    assert shots.gone == [("red", Location.cell_at(5, 2))]
    shots.gone = []
    striker = tr(3, *PB.space_center(9, 4), at_rest=True, location=Location.cell_at(9, 4), seen=8.0)
    shots.update(8.0, up(b, striker), None, False)
    (shot,) = shots.update(8.1, up(b, replace(striker, y=striker.y - 60, at_rest=False)), None, False)
    shots.update(8.6, up(replace(b, state=TrackState.LOST)), None, False)  # hidden by the landing ball
    shots.update(9.9, up(ended=(b,)), None, False)
    assert shot.ball_from == Location.cell_at(9, 4) and shots.gone == []
