"""The colour detector on rendered frames: found, right colour, well placed; lighting, hands, strangers."""

from __future__ import annotations

import threading
from dataclasses import replace

import cv2
import numpy as np
import pytest

from calibration.calibrate import calibrate_markers
from calibration.profile import load_profile
from rules.errors import InputError
from simulation.camera import make_camera
from simulation.piratenbillard import simulate_piratenbillard
from simulation.realism import Realism
from simulation.render import Renderer
from simulation.starcluster import simulate_starcluster
from simulation.trajectory import BallPose, HandPose, SimFrame
from vision.config import ColourDetectorConfig, ConfigError, PipelineConfig
from vision.detect import DETECTORS, make_detector, warm_up
from vision.games import game_vision
from vision.detect.colour import (CHAIN, LAPSED_CALLS, QUIET_AGREEING, SAME_CENTRE_PX, STILL_CALLS, STILL_MARGIN,
                                  ColourDetector, _cell, _closed, _components, _lapsed, _Measured, _same_balls, _still,
                                  _unchanged)
from vision.detect.colour_model import BgrLabels, disc_in, disc_mask
from vision.mapping import BoardMapper

SEATS = {"red": 0, "blue": 2}
MAX_ERROR_PX = 5.0  # balls are 16-23 px in radius here; an overlapping pair is one blob centred between them


def _match(truth, detections):
    """Greedy one-to-one matching within a ball radius: (true positives, wrong colours, errors px, false positives)."""
    used: set[int] = set()
    tp = wrong = 0
    errors = []
    for ball in (b for b in truth.balls if b.visible):
        best = None
        for j, d in enumerate(detections):
            e = float(np.hypot(d.u - ball.u, d.v - ball.v))
            if j not in used and e < max(ball.r_px, 4.0) and (best is None or e < best[0]):
                best = (e, j)
        if best is not None:
            used.add(best[1])
            tp += 1
            wrong += detections[best[1]].colour != ball.owner
            errors.append(best[0])
    return tp, wrong, errors, [d for j, d in enumerate(detections) if j not in used]


@pytest.fixture(scope="module")
def pirate():
    profile = load_profile("piratenbillard")
    match = simulate_piratenbillard(profile, 3, "stacked_pair")
    renderer = Renderer(profile, make_camera(profile, "behind_play_line", 1280, 720),
                        Realism(lighting=0.3, noise=3.0, shake_deg=0.12), match.fps, 3)
    first, _ = renderer.render(match.frames[0])
    mapper = BoardMapper(calibrate_markers(first, profile), profile)
    detector = make_detector("color", first, mapper, ["red", "blue"], game_vision(profile.game).colour_samples(profile, SEATS))
    return profile, match, renderer, mapper, detector


def test_piratenbillard_balls_are_found_in_their_colours_under_changing_light(pirate):
    _, match, renderer, _, detector = pirate
    settled = [f for f in match.frames if f.hand is None and not any(b.moving for b in f.balls)]
    found = total = fps = 0
    errors: list[float] = []
    for frame in settled[:: max(1, len(settled) // 5)]:  # light drifts by +-30 % between them
        image, truth = renderer.render(frame)
        tp, wrong, errs, false = _match(truth, detector.detect(image))
        crowded = sum(1 for b in truth.balls if b.visible) - len({(round(b.x / 45), round(b.y / 45))
                                                                  for b in truth.balls if b.visible})
        assert wrong == 0
        found += tp
        total += sum(1 for b in truth.balls if b.visible) - crowded  # two in one space overlap: one blob
        fps += sum(1 for d in false if d.score >= 0.5)
        errors += errs
    assert found >= total and fps <= 0.05 * found, (found, total, fps)
    assert np.median(errors) < 2.5 and np.percentile(errors, 95) < MAX_ERROR_PX


def test_a_hand_over_the_table_is_not_a_ball(pirate):
    profile, match, renderer, _, detector = pirate
    frame = match.frames[0]
    x, y = profile.space_center(5, 5)
    image, truth = renderer.render(replace(frame, hand=HandPose(x, y, "left", radius=60)))
    tp, wrong, _, false = _match(truth, detector.detect(image))
    assert wrong == 0 and tp == sum(1 for b in truth.balls if b.visible)
    partly_hidden = [b for b in truth.balls if b.occluded]
    strays = [d for d in false if d.score >= 0.5
              and all(np.hypot(d.u - b.u, d.v - b.v) > b.r_px for b in partly_hidden)]
    assert not strays


def test_a_ball_of_no_players_colour_is_unknown_with_a_low_score(pirate):
    profile, match, renderer, _, detector = pirate
    frame = match.frames[0]
    stranger = BallPose(99, "green", *profile.space_center(5, 5), profile.ball_diameter_mm / 2)
    image, truth = renderer.render(replace(frame, balls=frame.balls + (stranger,)))
    u, v = next((b.u, b.v) for b in truth.balls if b.id == 99)
    near = [d for d in detector.detect(image) if np.hypot(d.u - u, d.v - v) < 10]
    assert len(near) == 1 and near[0].colour == "unknown" and near[0].score <= 0.25


def test_asked_for_the_players_colours_only_it_measures_no_other_blob(pirate):
    """The pipeline, once it has reported a colour no player has, asks for the players' colours only: the
    stranger's blob is not measured at all, and the players' balls come out exactly as when every colour is
    asked for."""
    profile, match, renderer, _, detector = pirate
    frame = match.frames[0]
    stranger = BallPose(99, "green", *profile.space_center(5, 5), profile.ball_diameter_mm / 2)
    image, _ = renderer.render(replace(frame, balls=frame.balls + (stranger,)))

    def measuring(**kwargs):
        detector.forget()  # every blob measured afresh
        before = detector.measured
        found = detector.detect(image, **kwargs)
        return found, detector.measured - before

    everything, all_measured = measuring()
    players, players_measured = measuring(colours=["red", "blue"])
    detector.forget()
    assert "unknown" in {d.colour for d in everything}
    assert players == [d for d in everything if d.colour in ("red", "blue")]
    assert players_measured < all_measured


def test_star_cluster_glass_balls_from_nominal_colours():
    profile = load_profile("starcluster")
    match = simulate_starcluster(profile, 3, "chain_grand_slam")
    renderer = Renderer(profile, make_camera(profile, "behind_play_line", 1280, 720), Realism.moderate(),
                        match.fps, 3)
    first, _ = renderer.render(match.frames[0])
    mapper = BoardMapper(calibrate_markers(first, profile), profile)
    detector = make_detector("color", first, mapper, ["red", "blue"])
    assert detector.model.learned == (False, False)
    settled = [f for f in match.frames if f.hand is None and not any(b.moving for b in f.balls)
               and any(b.on_table for b in f.balls)]
    for frame in settled[:: max(1, len(settled) // 3)]:
        image, truth = renderer.render(frame)
        tp, wrong, errs, false = _match(truth, detector.detect(image))
        assert tp == sum(1 for b in truth.balls if b.visible) and wrong == 0 and not false
        assert max(errs) < MAX_ERROR_PX


def test_detectors_are_picked_by_name():
    assert set(DETECTORS) == {"color"}
    with pytest.raises(InputError, match="unknown detector"):
        make_detector("yolo", np.zeros((8, 8, 3), np.uint8), None, ["red"])  # type: ignore[arg-type]


def test_a_backends_warm_up_runs_beside_its_caller_and_hands_on_its_error(monkeypatch):
    """`warm_up` runs a backend's frame-free set-up on a thread of its own: the caller goes on while it runs, and
    what it raised comes back from the future, not lost on its thread. A backend without one, or a name no backend
    has (refused by `make_detector`), has nothing to wait for."""
    started, release = threading.Event(), threading.Event()

    class Slow:
        @staticmethod
        def warm_up():
            started.set()
            release.wait(30)
            raise RuntimeError("the tables could not be built")

    monkeypatch.setitem(DETECTORS, "slow", Slow)
    monkeypatch.setitem(DETECTORS, "bare", object)
    warming = warm_up("slow")
    assert started.wait(30) and not warming.done()
    release.set()
    with pytest.raises(RuntimeError, match="could not be built"):
        warming.result(timeout=30)
    assert warm_up("bare").done() and warm_up("yolo").done()
    ColourDetector.warm_up()  # the real one: a conversion to Lab, as learning makes
    assert warm_up("color").result(timeout=30) is None


def test_a_glass_ball_on_a_dark_gutter_is_one_ball():
    """On the dark gutter floor a glass ball's shaded side reads as its colour too, so its blob covers 1/fill
    (1.7) expected areas; it was split into two balls 8 mm apart (gutter_ball sample: two tracks, never at
    rest, no settle before the hand came). A blob that fits in one ball's circle is one ball."""
    profile = load_profile("starcluster")
    match = simulate_starcluster(profile, 3, "gutter_ball")
    renderer = Renderer(profile, make_camera(profile, "overhead", 1280, 720), Realism.moderate(), match.fps, 3)
    first, _ = renderer.render(match.frames[0])
    mapper = BoardMapper(calibrate_markers(first, profile), profile)
    detector = make_detector("color", first, mapper, ["red", "blue"])
    r = profile.ball_diameter_mm / 2
    gutters = [(70.0, 460.0), (70.0, 900.0), (570.0, 700.0), (300.0, 1170.0), (480.0, 1170.0)]
    balls = tuple(BallPose(90 + i, ("red", "blue")[i % 2], x, y, r) for i, (x, y) in enumerate(gutters))
    image, truth = renderer.render(replace(match.frames[0], balls=balls, hand=None))
    tp, wrong, errs, false = _match(truth, detector.detect(image))
    assert tp == len(gutters) and wrong == 0 and max(errs) < MAX_ERROR_PX
    assert not [d for d in false if d.score >= 0.5]


def test_the_24_bit_lookup_classifies_every_pixel_as_the_colour_model(pirate):
    """The detector labels a frame through one lookup a pixel (`BgrLabels`): the same labels as the
    colour model's Lab conversion, quantisation and lightness gate, on a whole rendered frame."""
    _, match, renderer, _, detector = pirate
    image, _ = renderer.render(match.frames[len(match.frames) // 2])
    assert np.array_equal(detector._classify(image), detector.model.classify(image))
    assert np.array_equal(detector._classify(image[100:300, 200:700]), detector.model.classify(image[100:300, 200:700]))


def test_the_lookup_is_filled_by_the_blocks_of_colours_frames_show(pirate):
    """`BgrLabels` fills its table a block of 16 x 16 x 16 colours at a time, as frames show them: a rendered
    table shows a few of the 4096 blocks; colours never seen before are labelled as the model labels them when
    they come; and filled whole, the table is the model's label for each of the 2**24 colours."""
    _, match, renderer, _, detector = pirate
    table = BgrLabels(detector.model)
    packed = (lambda bgr: cv2.cvtColor(bgr, cv2.COLOR_BGR2BGRA).view(np.uint32)[..., 0] & 0xFFFFFF)
    image, _ = renderer.render(match.frames[0])
    assert np.array_equal(table(packed(image)), detector.model.classify(image))
    shown = int(table.filled.sum())
    assert 0 < shown < 4096 / 4
    assert np.count_nonzero(table.table != BgrLabels.PENDING) == shown * 4096  # whole blocks, and only those
    noise = np.random.default_rng(7).integers(0, 256, (120, 160, 3), dtype=np.uint8)
    assert np.array_equal(table(packed(noise)), detector.model.classify(noise))
    assert table.filled.sum() > shown
    table(np.arange(1 << 24, dtype=np.uint32).reshape(4096, 4096))
    every = np.arange(1 << 24, dtype=np.uint32)
    bgr = np.stack([every & 255, (every >> 8) & 255, every >> 16], axis=-1).astype(np.uint8)[None]
    assert table.filled.all() and np.array_equal(table.table, detector.model.classify(bgr)[0])


def test_the_blob_statistics_are_opencvs(pirate):
    """`_components` sums the statistics over the set pixels only; they are OpenCV's, component by component."""
    _, match, renderer, _, detector = pirate
    image, _ = renderer.render(match.frames[len(match.frames) // 2])
    labels = detector.model.classify(image)
    for label in range(1, len(detector.model.players) + 1):
        binary = ((labels == label) * 255).astype(np.uint8)
        count, comp, stats, centroids = _components(binary)
        ref_count, ref_comp, ref_stats, ref_centroids = cv2.connectedComponentsWithStats(binary, connectivity=8)
        assert count == ref_count > 2
        # the same components (numbered alike or not): match them by their pixels
        pairs = {(int(a), int(b)) for a, b in zip(comp[binary > 0], ref_comp[binary > 0])}
        assert len(pairs) == count - 1 == len({a for a, _ in pairs}) == len({b for _, b in pairs})
        for a, b in pairs:
            assert np.array_equal(stats[a], ref_stats[b])
            assert np.allclose(centroids[a], ref_centroids[b], rtol=0, atol=1e-9)


@pytest.mark.parametrize("game", ["piratenbillard", "starcluster"])
def test_a_mask_cuts_the_search_to_its_box_and_a_changed_mask_is_taken(game, pirate):
    """Only the bounding box of table mask x `mask` is classified (Star Cluster: the board beyond the Play
    Line, at full resolution; Piratenbillard: shrunk first). The cut is kept while an equal mask comes, and
    remade when it changes, in place or not."""
    if game == "piratenbillard":
        _, match, renderer, _, detector = pirate
        frame = match.frames[0]
    else:
        profile = load_profile("starcluster")
        match = simulate_starcluster(profile, 3, "chain_grand_slam")
        renderer = Renderer(profile, make_camera(profile, "behind_play_line", 1280, 720), Realism.moderate(),
                            match.fps, 3)
        first, _ = renderer.render(match.frames[0])
        mapper = BoardMapper(calibrate_markers(first, profile), profile)
        detector = make_detector("color", first, mapper, ["red", "blue"])
        frame = next(f for f in match.frames if f.hand is None and sum(b.on_table for b in f.balls) >= 4
                     and not any(b.moving for b in f.balls))
    image, truth = renderer.render(frame)
    h, w = image.shape[:2]
    detector.forget()  # measured afresh, as the cut ones will be (a changed mask forgets the blobs measured)
    whole = sorted(detector.detect(image), key=lambda d: (d.u, d.v))
    assert len(whole) >= 4
    cut = int(np.median([d.u for d in whole]))
    left = np.zeros((h, w), np.uint8)
    left[:, :cut] = 255
    found = sorted(detector.detect(image, left), key=lambda d: (d.u, d.v))
    assert detector._views[-1].box[2] < detector.size[0]  # the cut ends where the mask does, not at the table's edge
    margin = max(d.radius_px for d in whole)
    inside = [d for d in whole if d.u < cut - margin]
    assert inside and all(d.u < cut + 1 for d in found)
    assert [d for d in found if d.u < cut - margin] == [d for d in inside]
    assert sorted(detector.detect(image, left.copy()), key=lambda d: (d.u, d.v)) == found  # an equal mask: the same cut
    left[:] = 0
    left[:, cut:] = 255  # changed in place
    right = detector.detect(image, left)
    assert right and all(d.u > cut - 1 for d in right)
    assert sorted(detector.detect(image), key=lambda d: (d.u, d.v)) == whole
    # a read-only mask with memory of its own cannot change: passed again, its view is taken without comparing it
    frozen = left.copy()
    frozen.flags.writeable = False
    assert detector.detect(image, frozen) == right
    views = list(detector._views)
    assert [v.frozen is frozen for v in views].count(True) == 1  # the equal mask's view knows it now
    assert detector.detect(image, frozen) == right and detector._views == views
    # a read-only view of another array can: it is compared every time
    base = left.copy()
    shown = base.view()
    shown.flags.writeable = False
    assert detector.detect(image, shown) == right
    base[:] = 0
    base[:, :cut] = 255
    again = detector.detect(image, shown)
    assert again and all(d.u < cut + 1 for d in again)


def test_a_settle_read_between_two_frames_leaves_the_frames_measurements_alone(pirate):
    """The settled-table reader looks at the whole box, the pipeline through its frame mask: each keeps its
    own blobs, so the frame after a settle read measures none afresh (it used to measure them all)."""
    profile, match, _, _, detector = pirate
    # a renderer of its own: a render draws from the shared one's noise, which the other tests' frames would feel
    renderer = Renderer(profile, make_camera(profile, "behind_play_line", 1280, 720),
                        Realism(lighting=0.3, noise=3.0, shake_deg=0.12), match.fps, 3)
    image, _ = renderer.render(match.frames[0])
    mask = np.full(image.shape[:2], 255, np.uint8)  # the pipeline's frame mask
    detector.detect(image, mask)
    balls = detector.detect(image, mask)
    assert balls and len(detector.detect(image)) == len(balls)  # the reader's look, in between
    measured = detector.measured
    assert detector.detect(image, mask) == balls and detector.measured == measured


def test_a_blob_whose_pixels_did_not_change_keeps_its_measurement(pirate):
    """A blob that is where it was (same box, area and centroid within `SAME_CENTRE_PX`) keeps the balls
    measured on an earlier frame, moved on by its centroid; a ball that moved further is measured afresh, as a
    detector without a memory measures it."""
    profile, match, renderer, _, detector = pirate
    still = next(f for f in match.frames if f.hand is None and not any(b.moving for b in f.balls)
                 and sum(b.on_table for b in f.balls) >= 4)
    image, _ = renderer.render(still)
    detector.forget()
    first = detector.detect(image)
    measured, reused = detector.measured, detector.reused
    assert len(first) >= 4
    assert detector.detect(image) == first  # the same frame again: every blob keeps its measurement
    assert detector.measured == measured and detector.reused > reused

    # one ball moved two cells on: it is measured afresh, the still balls mostly keep their measurement
    ball = next(b for b in still.balls if b.on_table)
    moved = replace(still, balls=[replace(b, x=b.x + 2 * profile.pitch_mm) if b is ball else b
                                  for b in still.balls])
    image2, _ = renderer.render(moved)
    again = detector.detect(image2)
    detector.forget()  # no memory: every blob measured afresh (the same paint learnt from the first frame)
    afresh = detector.detect(image2)
    near = np.array(detector.mapper.ball_centre_px(np.array([[ball.x + 2 * profile.pitch_mm, ball.y]])))[0]
    moved_now = [d for d in again if np.hypot(d.u - near[0], d.v - near[1]) < 2 * d.radius_px]
    assert moved_now and all(d in afresh for d in moved_now)  # measured afresh
    kept = [d for d in again if d not in moved_now]

    def followed(d):  # a first-frame measurement moved on by its blob's centroid (the render's noise moves it)
        return any(f.colour == d.colour and f.score == d.score and f.radius_px == d.radius_px
                   and np.hypot(f.u - d.u, f.v - d.v) <= SAME_CENTRE_PX / detector.scale + 1e-9 for f in first)

    assert all(followed(d) or d in afresh for d in kept)  # each either followed or measured as a fresh detector does
    assert sum(followed(d) and d not in afresh for d in kept) > len(kept) / 2  # most are followed

    # the whole picture moved by more than SAME_CENTRE_PX (analysis pixels): every blob is measured afresh
    step = int(np.ceil(2 * SAME_CENTRE_PX / detector.scale))
    shifted = np.roll(image2, step, axis=1)
    detector.detect(image2)
    reused, measured = detector.reused, detector.measured
    assert detector.detect(shifted)
    assert detector.reused == reused and detector.measured > measured


def _still_frame(pirate, renderer=None):
    """A rendered Piratenbillard frame with four balls or more at rest and no hand, and the same frame with fresh
    video noise (sigma 4 levels): the colour's edge flickers and moves centroids; the picture stays the same.
    `renderer`: another than the module's (whose noise and light follow from the frames it rendered before)."""
    _, match, shared, _, _ = pirate
    renderer = renderer or shared
    still = next(f for f in match.frames if f.hand is None and not any(b.moving for b in f.balls)
                 and sum(b.on_table for b in f.balls) >= 4)
    image, _ = renderer.render(still)
    noise = np.random.default_rng(7).normal(0.0, 4.0, image.shape)
    return image, np.clip(image + noise, 0, 255).astype(np.uint8)


def _copy(detector, still_level):
    h, w = detector.mapper.calibration.image_size[::-1]
    return ColourDetector(detector.model, detector.mapper, (w, h), replace(detector.config, still_level=still_level),
                          detector.hop_mm)


def _own_renderer(pirate):
    """A renderer like the module's, for tests that would otherwise change what the module's renders next."""
    profile, match, renderer, _, _ = pirate
    return Renderer(profile, renderer.camera, renderer.realism, match.fps, 3)


def test_a_quiet_frame_keeps_the_balls_of_the_frame_measured_last(pirate):
    """With every ball at rest, a frame that differs from the last one measured by no more than the video's noise
    (sigma 4 levels, which sends blobs to be measured again by their centroid) keeps that frame's balls, no blob
    looked at, once `QUIET_AGREEING` measured frames in a row found the same balls; not round a ball not yet at
    rest, not more than `quiet_max_frames` frames in a row, and only in the frame loop once the table has settled
    (`settled`): a caller that tracks no ball, the settled-table reader, or the frame loop while the table is yet to
    settle has every frame measured."""
    image, noisy = _still_frame(pirate, _own_renderer(pirate))
    detector = _copy(pirate[4], 5.0)
    first = detector.detect(image, settled=True)
    for _ in range(QUIET_AGREEING - 1):  # measured: too few frames before to agree with
        second = detector.detect(noisy, settled=True)
    measured, reused = detector.measured, detector.reused
    assert len(first) >= 4 and len(second) == len(first) and detector.quiet == 0
    assert detector.detect(noisy, settled=True) == second
    assert detector.quiet == 1 and (detector.measured, detector.reused) == (measured, reused)

    for _ in range(detector.config.quiet_max_frames - 1):
        assert detector.detect(noisy, settled=True) == second
    assert detector.quiet == detector.config.quiet_max_frames
    detector.detect(noisy, settled=True)  # one frame too many: measured
    assert detector.quiet == detector.config.quiet_max_frames
    assert detector.measured + detector.reused > measured + reused

    for settled in (False, True):
        other = _copy(pirate[4], 5.0)
        for _ in range(QUIET_AGREEING):  # measured frames enough that agree
            other.detect(image, settled=settled)
        if settled:  # and a ball not yet at rest
            other.unsettled_near = [(first[0].u, first[0].v)]
        assert other.detect(noisy, settled=settled) and other.quiet == 0


def test_a_frame_is_kept_as_quiet_only_after_measured_frames_in_a_row_found_the_same_balls(pirate):
    """A ball gone between two measured frames (lifted, or missed on one of them) leaves the next frames measured
    however still they are, until `QUIET_AGREEING` measured frames in a row agree. `_same_balls` undoes the shake."""
    profile, match, _, _, detector = pirate
    renderer = _own_renderer(pirate)
    still = next(f for f in match.frames if f.hand is None and not any(b.moving for b in f.balls)
                 and sum(b.on_table for b in f.balls) >= 4)
    gone = replace(still, balls=[b for b in still.balls if b is not next(x for x in still.balls if x.on_table)])
    with_it, without = renderer.render(still)[0], renderer.render(gone)[0]
    quiet = _copy(detector, 5.0)
    found = quiet.detect(with_it, settled=True)
    for _ in range(QUIET_AGREEING):
        fewer = quiet.detect(without, settled=True)
        assert len(fewer) == len(found) - 1 and quiet.quiet == 0  # the first of them disagreed with the frame before
    quiet.detect(without, settled=True)
    assert quiet.quiet == 1

    shake = np.array([[1.0, 0, 15.0], [0, 1.0, -8.0], [0, 0, 1]])  # this frame's pixels -> the steadied image's
    moved = [replace(d, u=d.u - 15.0, v=d.v + 8.0) for d in found]
    assert _same_balls(found, np.eye(3), moved, shake)
    assert not _same_balls(found, np.eye(3), moved[1:], shake)
    assert not _same_balls(found, np.eye(3), moved, np.eye(3))  # the shake not undone: 17 px off, over half a radius
    assert not _same_balls(found, np.eye(3), [replace(moved[0], colour="blue" if moved[0].colour == "red" else "red"),
                                              *moved[1:]], shake)


def test_a_ball_that_moved_makes_the_frame_measured_even_by_steps_too_small_to_see_one_at_a_time(pirate):
    """A frame is quiet against the last frame measured, not the one before: a ball moved by half its diameter is
    measured at once, and one creeping by steps that each look quiet is measured once the steps add up."""
    profile, match, _, _, detector = pirate
    renderer = _own_renderer(pirate)
    still = next(f for f in match.frames if f.hand is None and not any(b.moving for b in f.balls)
                 and sum(b.on_table for b in f.balls) >= 4)
    ball = next(b for b in still.balls if b.on_table)

    def nudged(mm: float) -> np.ndarray:
        return renderer.render(replace(still, balls=[replace(b, x=b.x + mm) if b is ball else b
                                                     for b in still.balls]))[0]

    def near(found, mm: float) -> bool:
        u, v = detector.mapper.ball_centre_px(np.array([[ball.x + mm, ball.y]]))[0]
        return any(np.hypot(d.u - u, d.v - v) < 3.0 for d in found)

    image = nudged(0.0)

    def settled_on_image() -> ColourDetector:
        fresh = _copy(detector, 5.0)
        for _ in range(QUIET_AGREEING):
            fresh.detect(image, settled=True)
        return fresh

    jumped = settled_on_image()
    half = profile.ball_diameter_mm / 2
    found = jumped.detect(nudged(half), settled=True)
    assert jumped.quiet == 0 and near(found, half)

    step = 1.0  # mm: a quarter of a pixel of the analysis image here
    once = settled_on_image()
    once.detect(nudged(step), settled=True)
    assert once.quiet == 1  # one step alone looks quiet
    creeping = settled_on_image()
    measured_at = []
    for k in range(1, 13):
        before = creeping.quiet
        found = creeping.detect(nudged(k * step), settled=True)
        if creeping.quiet == before:
            measured_at.append(k)
            assert near(found, k * step)
    assert measured_at and measured_at[0] <= 8  # measured within 8 mm of creep, and found where it crept to


def test_a_quiet_frame_keeps_its_balls_through_the_shake_the_steadying_undoes(pirate):
    """The camera shook by a few pixels: given the steadying transform, the frame is quiet and its balls are those
    measured before, moved by the shake; without it, the frame is measured."""
    image, _ = _still_frame(pirate, _own_renderer(pirate))
    dx, dy = 7.0, -4.0  # px: over two pixels of the analysis image
    shaken = cv2.warpAffine(image, np.array([[1, 0, dx], [0, 1, dy]], float), image.shape[1::-1],
                            borderMode=cv2.BORDER_REPLICATE)
    steadied = _copy(pirate[4], 5.0)
    for _ in range(QUIET_AGREEING):
        first = steadied.detect(image, steady=np.array([[1.0, 0, 0], [0, 1.0, 0]]), settled=True)
    kept = steadied.detect(shaken, steady=np.array([[1.0, 0, -dx], [0, 1.0, -dy]]), settled=True)
    assert steadied.quiet == 1 and len(kept) == len(first)
    assert all(np.hypot(k.u - f.u - dx, k.v - f.v - dy) < 1e-6 for k, f in zip(kept, first))
    blind = _copy(pirate[4], 5.0)
    for _ in range(QUIET_AGREEING):
        blind.detect(image, settled=True)
    blind.detect(shaken, settled=True)
    assert blind.quiet == 0


def test_a_still_blob_whose_centroid_wandered_keeps_its_measurement_while_its_picture_is_the_same(pirate):
    """Video noise moves a still ball's centroid by more than `SAME_CENTRE_PX` (the centroid test alone measures
    it again); its picture is the same, so it keeps its measurement, at the same place. Round a ball not yet at
    rest (`unsettled_near`) the centroid alone judges. A ball moved by a pixel of the analysis image is measured
    afresh, its centroid within the picture test's reach."""
    image, noisy = _still_frame(pirate, _own_renderer(pirate))
    by_centroid, by_picture = _copy(pirate[4], 0.0), _copy(pirate[4], 5.0)
    for detector in (by_centroid, by_picture):
        first = detector.detect(image)
        assert len(first) >= 4 and detector.reused == 0
    blobs = by_picture.measured
    wandered = by_centroid.detect(noisy)
    assert by_centroid.measured > blobs  # the noise sent blobs to be measured again
    kept = by_picture.detect(noisy)
    assert by_picture.measured == blobs and by_picture.reused == blobs
    # the same balls: those kept by their centroid followed it, those kept by their picture lie where they were
    reach = SAME_CENTRE_PX / by_picture.scale + 1e-9
    assert len(kept) == len(first) == len(wandered)
    assert all(any(f.colour == d.colour and f.score == d.score and np.hypot(f.u - d.u, f.v - d.v) <= reach
                   for f in first) for d in kept)
    assert any(d in first for d in kept)

    unsettled = _copy(pirate[4], 5.0)
    unsettled.detect(image)
    unsettled.unsettled_near = [(d.u, d.v) for d in first]
    unsettled.detect(noisy)
    assert unsettled.measured == by_centroid.measured  # judged by the centroid alone, as without the picture test

    moved = np.roll(image, int(round(1 / by_picture.scale)), axis=1)  # a pixel of the analysis image
    measured = by_picture.measured
    by_picture.detect(moved)
    assert by_picture.measured - measured == blobs


def test_a_blob_of_touching_balls_is_not_kept_by_its_picture(pirate):
    """Touching balls keep their split by its own hold (`_holds`): a blob measured as two balls is not kept by its
    picture, where the same blob measured as one ball is."""
    image, _ = _still_frame(pirate)
    detector = _copy(pirate[4], 5.0)
    detector.detect(image)
    view = detector._views[-1]
    one = next(m for m in view.measured.values() if len(m.balls) == 1)
    box = (one.picture_at[0] + STILL_MARGIN, one.picture_at[1] + STILL_MARGIN, *one.size)
    cut = detector._shrink(image)[view.box[1]:view.box[3], view.box[0]:view.box[2]]
    key = (one.label, *_cell(one.steady))
    found = _still({key: one}, one.label, box, one.centre, one.steady, cut, view.box[:2], 5.0, 0)
    assert found is not None and found[0] is one
    two = replace(one, balls=one.balls * 2)
    assert _still({key: two}, two.label, box, two.centre, two.steady, cut, view.box[:2], 5.0, 0) is None


def test_a_measurement_kept_by_its_picture_is_renewed_after_still_calls(pirate):
    """A blob kept by its picture alone is measured afresh once its measurement is `STILL_CALLS` calls old: the
    place of a ball at rest is measured now and then."""
    image, noisy = _still_frame(pirate, _own_renderer(pirate))
    detector = _copy(pirate[4], 5.0)
    detector.detect(image)
    blobs = detector.measured
    counts = []
    for _ in range(STILL_CALLS + 1):
        detector.detect(noisy)
        counts.append(detector.measured)
    assert counts[STILL_CALLS - 2] == blobs  # kept while the measurement is younger than STILL_CALLS calls
    assert counts[-1] > blobs  # then renewed where the centroid test does not keep it


def test_a_blob_seen_again_as_it_was_a_few_frames_before_keeps_that_measurement(pirate):
    """A blob gone for a frame (touching balls seen as one blob, then apart, then as one again) and back as it was
    (box, area and centroid within `SAME_CENTRE_PX` of its measurement) keeps the measurement made before it went,
    for `LAPSED_CALLS` calls; not later, and not round a ball not yet at rest (`unsettled_near`)."""
    profile, match, _, _, detector = pirate
    renderer = _own_renderer(pirate)
    still = next(f for f in match.frames if f.hand is None and not any(b.moving for b in f.balls)
                 and sum(b.on_table for b in f.balls) >= 4)
    ball = next(b for b in still.balls if b.on_table)
    away = replace(still, balls=[replace(b, x=b.x + 2 * profile.pitch_mm) if b is ball else b for b in still.balls])
    image, _ = renderer.render(still)
    gone, _ = renderer.render(away)
    where = np.array(detector.mapper.ball_centre_px(np.array([[ball.x, ball.y]])))[0]

    def measured_on_return(calls_away: int, unsettled: bool = False) -> tuple[int, list]:
        """Blobs measured when the ball is back after `calls_away` frames elsewhere, and what was found then."""
        fresh = _copy(detector, 5.0)
        first = fresh.detect(image)
        assert any(np.hypot(d.u - where[0], d.v - where[1]) < d.radius_px for d in first)
        for _ in range(calls_away):
            fresh.detect(gone)
        fresh.unsettled_near = [tuple(where)] if unsettled else []
        measured = fresh.measured
        back = fresh.detect(image)
        return fresh.measured - measured, [first, back]

    blobs, (first, back) = measured_on_return(1)
    assert blobs == 0 and back == first  # every blob kept: the ball's as it was measured before it went
    blobs, _ = measured_on_return(LAPSED_CALLS - 1)
    assert blobs == 0
    blobs, (first, back) = measured_on_return(LAPSED_CALLS + 1)
    assert blobs >= 1 and len(back) == len(first)  # lapsed too long: measured afresh
    blobs, _ = measured_on_return(1, unsettled=True)
    assert blobs >= 1  # round a ball not at rest, only the frame before counts


def test_a_lone_ball_kept_by_its_picture_is_not_taken_from_a_lapsed_blob(pirate):
    """A lone ball whose blob flickers between two shapes was measured once in each: the picture test (against the
    frame before's measurement) decides before the lapsed blobs, so it keeps one measurement and does not jump
    between the two. A lapsed chain of `CHAIN` balls or more is left to its split's hold."""
    image, _ = _still_frame(pirate)
    detector = _copy(pirate[4], 5.0)
    detector.detect(image)
    view = detector._views[-1]
    key, one = next((k, m) for k, m in view.measured.items() if len(m.balls) == 1)
    cut = detector._shrink(image)[view.box[1]:view.box[3], view.box[0]:view.box[2]]
    box = (one.picture_at[0] + STILL_MARGIN, one.picture_at[1] + STILL_MARGIN, *one.size)
    ball = one.balls[0]
    # the frame before's measurement: its centroid 1 px off (the centroid test refuses it, the picture test keeps it)
    before = replace(one, centre=(one.centre[0] + 1, one.centre[1]), steady=(one.steady[0] + 1, one.steady[1]))
    # the other shape's measurement, lapsed: the centroid test keeps it; its ball placed 3 px away
    other = replace(one, balls=(replace(ball, u=ball.u + 3),))
    view.measured, view.lapsed = {key: before}, {key: [(other, detector._calls - 1)]}
    found = detector._same_blob(view, one.label, box, one.centre, one.steady, one.area, ball.radius_px, cut,
                                view.box[:2])
    assert found is not None and found[0] is before
    view.measured = {}  # nothing on the frame before: the lapsed blob is the one
    found = detector._same_blob(view, one.label, box, one.centre, one.steady, one.area, ball.radius_px, cut,
                                view.box[:2])
    assert found is not None and found[0] is other
    chain = replace(other, balls=(ball,) * CHAIN)
    view.lapsed = {key: [(chain, detector._calls - 1)]}
    assert detector._same_blob(view, one.label, box, one.centre, one.steady, one.area, ball.radius_px, cut,
                               view.box[:2]) is None


def test_blobs_lapsed_round_one_centroid_are_all_kept():
    """Touching balls flicker between several blobs round the same centroid (one merged, one of the pair, the other
    split off at an edge): each lapsed one is kept, with the call it was last seen on, until it is seen again or is
    `LAPSED_CALLS` calls old."""
    def blob(w: int, area: int, at: tuple[float, float]) -> _Measured:
        return _Measured(1, (w, 10), at, at, area, ())

    merged, part = blob(20, 300, (41.0, 41.0)), blob(12, 150, (41.5, 40.5))
    key = (1, *_cell((41.0, 41.0)))
    assert key == (1, *_cell((41.5, 40.5)))
    lapsed = _lapsed({}, {key: merged}, 5, {}, 6)  # the merged blob, last seen on call 5
    lapsed = _lapsed(lapsed, {key: part}, 6, {}, 7)  # then the part, last seen on call 6
    assert lapsed == {key: [(merged, 5), (part, 6)]}
    assert _unchanged(lapsed, 1, (20, 10), (41.1, 41.0), 300) is merged
    assert _unchanged(lapsed, 1, (12, 10), (41.5, 40.6), 150) is part
    assert _unchanged(lapsed, 1, (12, 10), (42.5, 40.5), 150) is None  # the centroid a pixel off: another blob
    assert _lapsed(lapsed, {}, 7, {key: merged}, 8) == {key: [(part, 6)]}  # the merged blob seen again
    assert _lapsed(lapsed, {}, 7, {}, 5 + LAPSED_CALLS + 1) == {key: [(part, 6)]}  # too old
    assert _lapsed(lapsed, {}, 7, {}, 6 + LAPSED_CALLS + 1) == {}


def test_camera_shake_taken_out_by_the_steadying_transform_keeps_still_blobs(pirate):
    """The whole picture moved (camera shake), with `steady` saying by how much: most still blobs keep their
    measurement, moved on by the shake (a blob resampled by the shrink may come out a pixel different and is
    measured again), where without `steady` every one is measured again."""
    _, match, renderer, _, detector = pirate
    still = next(f for f in match.frames if f.hand is None and not any(b.moving for b in f.balls)
                 and sum(b.on_table for b in f.balls) >= 4)
    image, _ = renderer.render(still)
    step = int(np.ceil(2 * SAME_CENTRE_PX / detector.scale))  # well beyond the still test without the transform
    shifted = np.roll(image, step, axis=1)
    back = np.array([[1.0, 0.0, -step], [0.0, 1.0, 0.0]])  # this frame's pixels -> the first frame's
    h, w = image.shape[:2]
    afresh = ColourDetector(detector.model, detector.mapper, (w, h), detector.config, detector.hop_mm).detect(shifted)

    for transform in (None, back):
        detector.forget()
        first = detector.detect(image)
        reused, measured = detector.reused, detector.measured
        detector.detect(image)  # the same frame again: every blob kept
        blobs = detector.reused - reused
        assert blobs >= 4 and detector.measured == measured
        reused = detector.reused
        moved = detector.detect(shifted, steady=transform)
        again = detector.measured - measured
        if transform is None:
            assert detector.reused == reused and again > 0  # every blob measured again
        else:
            assert again < blobs / 2 and detector.reused - reused >= blobs - again  # most kept
        assert len(moved) == len(afresh)
        for d in moved:  # measured as a fresh detector measures it, or a first-frame ball moved on by the shake
            assert d in afresh or any(f.colour == d.colour and np.hypot(f.u + step - d.u, f.v - d.v)
                                      <= SAME_CENTRE_PX / detector.scale + 1e-9 for f in first)


@pytest.mark.parametrize("along", ["x", "y"])
def test_a_row_of_eight_touching_balls_is_eight_balls_where_they_lie(pirate, along):
    """Eight balls touching across the view, and eight 7 mm apart running away from the camera (in the image
    each overlaps the next, as a full starting row on a side seat does), are one blob of more than four balls'
    area; every ball is one detection, where it lies."""
    profile, match, _, mapper, detector = pirate
    renderer = _own_renderer(pirate)
    r = profile.ball_diameter_mm / 2
    x0, y0 = profile.space_center(7, 1) if along == "x" else profile.space_center(8, 4)
    step = (2 * r, 0.0) if along == "x" else (0.0, 32.0)
    row = tuple(BallPose(50 + i, "blue", x0 + i * step[0], y0 + i * step[1], r) for i in range(8))
    others = tuple(b for b in match.frames[0].balls if b.owner == "red")
    image, truth = renderer.render(SimFrame(0, 0.0, row + others))
    detector.forget()
    blues = [d for d in detector.detect(image) if d.colour == "blue"]
    # on the detector's own (shrunk) labels the row is one blob of more than four balls' area: the size that
    # used to be refused as a hand or a sleeve
    bx0, by0, bx1, by1 = detector.box
    blue = detector._classify(detector._shrink(image[by0:by1, bx0:bx1])) == 1 + detector.model.players.index("blue")
    _, comp, stats, centroids = _components(blue.astype(np.uint8))
    k = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    cx, cy = centroids[k]
    radius = detector.radius[int(cy), int(cx)]
    fill = detector.model.fill[detector.model.players.index("blue")]
    assert stats[k, cv2.CC_STAT_AREA] / (fill * np.pi * radius ** 2) > 4.5
    tp, wrong, errors, false = _match(replace(truth, balls=tuple(b for b in truth.balls if b.id >= 50)), blues)
    assert tp == 8 and wrong == 0 and not false, (tp, [(round(d.u), round(d.v)) for d in false])
    # where they lie: each within half a radius of its ball on the board
    seen = mapper.to_board(np.array([[d.u, d.v] for d in blues]))
    for ball in row:
        assert np.sort(np.hypot(seen[:, 0] - ball.x, seen[:, 1] - ball.y))[0] < r / 2


def _still_with_red(pirate):
    """A frame with every ball still and no hand, its truth, a red ball's radius (px) and a lit part's colour."""
    _, match, renderer, _, detector = pirate
    still = next(f for f in match.frames if f.hand is None and not any(b.moving for b in f.balls))
    image, truth = renderer.render(still)
    red = next(d for d in detector.detect(image) if d.colour == "red")
    r = int(round(red.radius_px))
    return image, truth, r, [int(c) for c in image[int(red.v), int(red.u) - r // 3]]


def test_a_blob_of_more_whole_balls_than_a_player_has_is_not_split_into_balls(pirate):
    """A long thick stroke of red paint (a sleeve, a painted band: thinner than a ball, so the depth test passes
    it) holds more whole ball discs than a player has balls (8): with `balls_per_player` it is no balls, and it
    is not split; without the limit it is split into a row of phantom balls."""
    profile, _, _, mapper, detector = pirate
    image, _, r, colour = _still_with_red(pirate)
    (x0, y0), (x1, y1) = (np.round(mapper.ball_centre_px(np.array([profile.space_center(4, 1),
                                                                   profile.space_center(4, 8)])))).astype(int)
    painted = image.copy()
    cv2.line(painted, (x0, y0), (x1, y1), colour, 2 * r)
    h, w = image.shape[:2]
    on_stroke = lambda found: [d for d in found if d.colour == "red" and abs(d.v - (y0 + y1) / 2) < 2 * r
                               and min(x0, x1) - r < d.u < max(x0, x1) + r]
    # the stroke is flat paint (`test_flat_paint_of_a_players_colour_is_not_a_ball`): that test is off here, to
    # show what the limit does on its own
    config = replace(detector.config, flat_shading=0.0)
    limited = ColourDetector(detector.model, mapper, (w, h), config, detector.hop_mm, balls_per_player=8)
    unlimited = ColourDetector(detector.model, mapper, (w, h), config, detector.hop_mm)
    assert len(on_stroke(unlimited.detect(painted))) > 8  # split into more balls than red has
    assert on_stroke(limited.detect(painted)) == []


@pytest.mark.parametrize("shape", ["disc", "square"])
def test_flat_paint_of_a_players_colour_is_not_a_ball(pirate, shape):
    """A patch about a ball wide painted in the lit colour of a player's ball (a sticker, an empty starting space
    whose paint is no thicker than a ball), with the camera's noise, passes every size and depth test; it is flat,
    shaded far less than the player's balls on the first frame, so it is no ball. Every real ball is still found."""
    profile, _, _, mapper, detector = pirate
    image, truth, r, colour = _still_with_red(pirate)
    u, v = np.round(mapper.ball_centre_px(np.array([profile.space_center(5, 5)]))[0]).astype(int)
    painted = image.copy()
    if shape == "disc":
        cv2.circle(painted, (u, v), r, colour, -1)
    else:
        half = int(0.9 * r)
        cv2.rectangle(painted, (u - half, v - half), (u + half, v + half), colour, -1)
    noise = np.random.default_rng(1).normal(0.0, 3.0, painted.shape)  # the renderer's sensor noise
    patch = slice(v - r, v + r + 1), slice(u - r, u + r + 1)
    painted[patch] = np.clip(painted[patch] + noise[patch], 0, 255).astype(np.uint8)
    h, w = image.shape[:2]
    on_patch = lambda found: [d for d in found if d.colour == "red" and np.hypot(d.u - u, d.v - v) < r]
    blind = ColourDetector(detector.model, mapper, (w, h), replace(detector.config, flat_shading=0.0),
                           detector.hop_mm)
    assert on_patch(blind.detect(painted))  # without the test: red balls
    detector.forget()
    found = detector.detect(painted)
    assert on_patch(found) == []
    tp, wrong, _, _ = _match(truth, found)
    assert wrong == 0 and tp == sum(1 for b in truth.balls if b.visible)


def test_big_lone_balls_are_recentred_as_well_with_the_closing_on_pooled_blocks(pirate):
    """Balls 16-23 px in radius are re-centred with their colour mask closed on 2 x 2 blocks (`refine_radius_px` 8):
    they lie as close to their true centres as with the closing on every full-resolution pixel, and the pooling is
    taken (the centres differ)."""
    profile, match, renderer, mapper, _ = pirate
    first, _ = renderer.render(match.frames[0])
    samples = game_vision(profile.game).colour_samples(profile, SEATS)
    pooled, full = (make_detector("color", first, mapper, ["red", "blue"], samples,
                                  PipelineConfig(detector=ColourDetectorConfig(refine_radius_px=least)))
                    for least in (8.0, 0.0))
    settled = [f for f in match.frames if f.hand is None and not any(b.moving for b in f.balls)]
    errors: dict[str, list[float]] = {"pooled": [], "full": []}
    differ = 0
    for frame in settled[:: max(1, len(settled) // 4)]:
        image, truth = renderer.render(frame)
        pooled.forget()  # each frame measured afresh by both
        full.forget()
        a, b = pooled.detect(image), full.detect(image)
        differ += sum(1 for d in a if d not in b)
        for name, found in (("pooled", a), ("full", b)):
            tp, wrong, errs, _ = _match(truth, found)
            assert wrong == 0
            errors[name] += errs
    assert differ > 0
    assert len(errors["pooled"]) == len(errors["full"])
    assert np.median(errors["pooled"]) <= np.median(errors["full"]) + 0.25, errors
    assert np.percentile(errors["pooled"], 95) <= np.percentile(errors["full"], 95) + 0.5, errors


def test_a_refine_radius_under_two_pixels_is_refused():
    with pytest.raises(ConfigError, match="refine_radius_px"):
        ColourDetectorConfig(refine_radius_px=1.0)


def test_a_negative_still_level_is_refused():
    with pytest.raises(ConfigError, match="still_level"):
        ColourDetectorConfig(still_level=-1.0)


def test_a_negative_quiet_level_is_refused():
    with pytest.raises(ConfigError, match="quiet_level"):
        ColourDetectorConfig(quiet_level=-1.0)


@pytest.mark.parametrize("k", [1, 2, 4])
def test_the_closing_on_pooled_blocks_fills_a_shaded_side_as_the_closing_on_pixels_does(k):
    """A disc lit on one side (every pixel its colour) and shaded on the other (one pixel in five, at random):
    closed on k x k blocks, its centroid is back within half a pixel of the disc's centre, as closed pixel by pixel;
    the speckles alone pull it 5 px and more to the lit side. What the closing adds never drops a pixel."""
    r, size = 40.0, 97
    yy, xx = np.mgrid[:size, :size]
    centre = (48.3, 47.6)
    disc = (xx - centre[0]) ** 2 + (yy - centre[1]) ** 2 <= r * r
    lit = xx < centre[0]
    speckles = np.random.default_rng(3).random((size, size)) < 0.2
    hit = disc & (lit | speckles)
    kernel = int(round(r / k)) | 1
    closed = _closed(hit, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (kernel, kernel)), k) & disc
    assert (closed >= hit).all()
    assert abs(xx[hit].mean() - centre[0]) > 5
    assert np.hypot(xx[closed].mean() - centre[0], yy[closed].mean() - centre[1]) < 0.5


def test_a_disc_read_in_its_box_is_the_whole_frame_masks_pixels_in_order(pirate):
    """The colour model learns from each ball's disc read in the disc's own box (`disc_in`): the same pixels in the
    same order as a whole-frame mask gives, for discs of any size and fraction of a pixel, inside the frame, on its
    edges and partly or wholly outside it."""
    profile, match, _, _, _ = pirate
    image, _ = _own_renderer(pirate).render(match.frames[0])
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB)
    h, w = image.shape[:2]
    rng = np.random.default_rng(7)
    drawn = 0
    for _ in range(400):
        u, v = rng.uniform(-30, w + 30), rng.uniform(-30, h + 30)
        r, scale = rng.uniform(0.2, 40), float(rng.choice([0.6, 0.7, 1.0, 1.5, 2.5]))
        whole = lab[disc_mask((h, w), np.array([[u, v]]), np.array([r]), scale) > 0]
        boxed = disc_in(lab, u, v, r, scale)
        assert boxed.shape == whole.shape and np.array_equal(boxed, whole)
        drawn += len(whole) > 0
    assert drawn > 300  # most discs lie at least partly in the frame
