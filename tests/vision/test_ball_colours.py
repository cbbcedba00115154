"""Ball colours given, not named: balls of colours no id names (violet, a golden yellow), rendered by the
simulator, are found with their colours given in sRGB or in Lab; colours too alike are refused."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from colour_scenes import MAX_ERROR_PX, PAIRS, SRGB, assert_all_found, render_with, spread

from calibration.calibrate import calibrate_markers
from calibration.profile import load_profile
from rules.colours import BallColour, delta_e, parse_colour, srgb_to_lab
from rules.errors import InputError
from simulation import render
from simulation.camera import make_camera
from simulation.piratenbillard import simulate_piratenbillard
from simulation.realism import Realism
from simulation.render import Renderer
from vision.detect import make_detector
from vision.games import game_vision
from vision.mapping import BoardMapper


@pytest.mark.parametrize("form", ["srgb", "lab"])
def test_star_cluster_balls_of_unnamed_colours_are_found_with_their_colours_given(form):
    """Star Cluster starts on an empty table: the given colours are all the detector knows of the balls."""
    profile = load_profile("starcluster")
    players = PAIRS["starcluster"]
    _, first, image, truth = render_with("starcluster", spread(profile, players))
    mapper = BoardMapper(calibrate_markers(first, profile), profile)
    if form == "srgb":
        colours = {p: parse_colour("#{:02x}{:02x}{:02x}".format(*SRGB[p]), p) for p in players}
    else:
        colours = {p: parse_colour({"lab": list(srgb_to_lab(SRGB[p]))}, p) for p in players}
        assert all(c.srgb is None for c in colours.values())
    detector = make_detector("color", first, mapper, list(players), None, colours=colours)
    assert detector.model.learned == (False, False)
    assert_all_found(truth, detector.detect(image))


def test_piratenbillard_players_of_unnamed_colours_are_learned_from_their_starting_rows():
    """Piratenbillard starts with every starting space filled: players named by no colour, with their colours
    given, are learned from their balls there and found in play."""
    profile = load_profile("piratenbillard")
    match = simulate_piratenbillard(profile, 3, "stacked_pair")
    rename = {"red": "violet", "blue": "sun"}

    def renamed(frame):
        return replace(frame, balls=tuple(replace(b, owner=rename[b.owner]) for b in frame.balls))

    with pytest.MonkeyPatch.context() as patch:
        for owner in rename.values():
            patch.setitem(render.PLAYER_COLOURS, owner, tuple(c / 255 for c in SRGB[owner][::-1]))
        renderer = Renderer(profile, make_camera(profile, "behind_play_line", 1280, 720), Realism.moderate(),
                            match.fps, 3)
        first, first_truth = renderer.render(renamed(match.frames[0]))
        settled = [f for f in match.frames if f.hand is None and not any(b.moving for b in f.balls)]
        later, later_truth = renderer.render(renamed(settled[len(settled) // 2]))
    mapper = BoardMapper(calibrate_markers(first, profile), profile)
    seats = {"violet": 0, "sun": 2}
    colours = {p: BallColour.from_srgb(SRGB[p]) for p in seats}
    detector = make_detector("color", first, mapper, list(seats),
                             game_vision("piratenbillard").colour_samples(profile, seats), colours=colours)
    assert detector.model.learned == (True, True)
    assert_all_found(first_truth, detector.detect(first))
    found = detector.detect(later)
    for ball in (b for b in later_truth.balls if b.visible):
        assert any(np.hypot(d.u - ball.u, d.v - ball.v) < MAX_ERROR_PX and d.colour == ball.owner for d in found)


def test_a_player_whose_id_names_no_colour_needs_one():
    profile = load_profile("starcluster")
    _, first, _, _ = render_with("starcluster", [])
    mapper = BoardMapper(calibrate_markers(first, profile), profile)
    with pytest.raises(InputError, match=r"no colour for player 'violet'.*--colour violet="):
        make_detector("color", first, mapper, ["sun", "violet"], None,
                      colours={"sun": BallColour.from_srgb(SRGB["sun"])})


def test_colours_too_alike_or_like_the_table_are_refused_by_the_detector():
    profile = load_profile("starcluster")
    _, first, _, _ = render_with("starcluster", [])
    mapper = BoardMapper(calibrate_markers(first, profile), profile)
    near_violet = BallColour.from_srgb((128, 66, 150))
    assert delta_e(near_violet.lab, srgb_to_lab(SRGB["violet"])) < 20
    with pytest.raises(InputError, match=r"player 'violet' and player 'plum' are too alike.*ΔE \d+\.\d"):
        make_detector("color", first, mapper, ["violet", "plum"], None,
                      colours={"violet": BallColour.from_srgb(SRGB["violet"]), "plum": near_violet})
    beige = BallColour.from_srgb((236, 226, 206))  # the board's cream
    with pytest.raises(InputError, match=r"player 'sand' and the table surface are too alike to tell apart: "
                                         r"ΔE \d+\.\d"):
        make_detector("color", first, mapper, ["violet", "sand"], None,
                      colours={"violet": BallColour.from_srgb(SRGB["violet"]), "sand": beige})
