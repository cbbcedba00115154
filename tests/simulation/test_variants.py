"""Randomised table variants (simulation.variants): in range, reproducible, fully in view, and seen by the referee.

The generator's checks run over many seeds on the drawn profiles alone; the
vision checks render the settled frames of 12 variants (moderate realism, a
still camera) and look at them as the referee does: the table found by its
markers on the first frame, then each settled table read by vision.cells. The
full referee runs over variants are benchmarks/variants.py.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from calibration.calibrate import calibrate_markers
from calibration.profile import PiratenbillardProfile, StarClusterProfile, load_profile, parse_profile
from rules.errors import InputError
from rules.piratenbillard.board import starting_row
from simulation.piratenbillard import PiratenbillardOptions, simulate_piratenbillard
from simulation.realism import Realism
from simulation.render import Renderer
from simulation.variants import (
    BALL_MM_RANGE,
    MIN_COLOUR_LAB_DISTANCE,
    SLOTS_RANGE,
    TILT_DEG_RANGE,
    lab_of,
    make_variant_camera,
    run_arguments,
    settles_with_priors,
    simulate_variant,
    variant,
    write_variant,
)
from vision.mapping import BoardMapper

GAMES = ("starcluster", "piratenbillard")
MANY = range(60)  # seeds per game for the generator's checks
CHECKED = [(game, seed) for game in GAMES for seed in range(1, 7)]  # 12 variants rendered and looked at
SAMPLES = Path(__file__).resolve().parents[2] / "sample_videos" / "variants"
MAPPING_TOLERANCE = 0.25  # of a ball's diameter: a resting ball's truth pixel, mapped back by the marker calibration


def _drawn(game: str) -> list:
    return [variant(game, seed) for seed in MANY]


@pytest.mark.parametrize("game", GAMES)
def test_every_drawn_variant_is_a_valid_profile_within_the_issue_ranges(game):
    for v in _drawn(game):
        again = parse_profile(json.loads(json.dumps(v.profile_json)), f"seed {v.seed}")  # as a user's file is read
        assert again.ball_diameter_mm == v.ball_mm and BALL_MM_RANGE[0] <= v.ball_mm <= BALL_MM_RANGE[1]
        assert TILT_DEG_RANGE[0] <= v.camera.tilt_deg <= TILT_DEG_RANGE[1]
        labs = [lab_of(v.colours[p]) for p in v.players]
        gaps = [float(np.linalg.norm(a - b)) for i, a in enumerate(labs) for b in labs[:i]]
        assert len(set(v.players)) == len(v.players) and min(gaps) >= MIN_COLOUR_LAB_DISTANCE, (v.seed, gaps)
        if isinstance(again, StarClusterProfile):
            assert len(v.players) == 2
            assert all(SLOTS_RANGE[0] <= n <= SLOTS_RANGE[1] for n in v.layout.slots)
            assert v.config["slots_per_position"] == list(v.layout.slots)  # the engine counts the table's slots
        else:
            assert isinstance(again, PiratenbillardProfile)
            assert 2 <= len(v.players) <= 4 and again.space_size_mm > v.ball_mm


@pytest.mark.parametrize("game", GAMES)
def test_the_variants_span_the_ranges_not_one_corner_of_them(game):
    drawn = _drawn(game)
    balls = [v.ball_mm for v in drawn]
    tilts = [v.camera.tilt_deg for v in drawn]
    assert min(balls) < 18 and max(balls) > 36 and min(tilts) < 34 and max(tilts) > 51
    cells = [v.layout.cell_mm for v in drawn]
    assert max(cells) - min(cells) > 15
    assert len({c for v in drawn for c in v.players}) >= 6  # most of the nominal colours get drawn
    if game == "starcluster":
        counts = {n for v in drawn for n in v.layout.slots}
        assert counts == set(range(SLOTS_RANGE[0], SLOTS_RANGE[1] + 1))
        assert {v.layout.gutters_past_line for v in drawn} == {True, False}
    else:
        assert {len(v.players) for v in drawn} == {2, 3, 4}


@pytest.mark.parametrize("game", GAMES)
def test_a_variant_is_reproducible_from_its_seed(game):
    a, b, other = variant(game, 7), variant(game, 7), variant(game, 8)
    assert a.profile_json == b.profile_json and a.camera == b.camera and a.players == b.players
    assert a.config == b.config and a.colours == b.colours
    assert other.profile_json != a.profile_json
    first, second = simulate_variant(a), simulate_variant(b)
    assert first.events == second.events and first.frames == second.frames


@pytest.mark.parametrize("game", GAMES)
def test_the_camera_sees_the_whole_table(game):
    for v in _drawn(game):
        camera = make_variant_camera(v)
        forward = camera.r[2]  # the optical axis in board axes
        assert np.degrees(np.arcsin(-forward[2])) == pytest.approx(v.camera.tilt_deg, abs=1e-6)
        w, l = v.profile.table.x_max, v.profile.table.y_max
        corners = [[x, y, 0.0] for x in (0.0, w) for y in (0.0, l)]
        for m in v.profile.markers.markers:
            half = m.size_mm / 2
            corners += [[m.center[0] + dx, m.center[1] + dy, 0.0] for dx in (-half, half) for dy in (-half, half)]
        uv, depth = camera.project(np.array(corners))
        assert (depth > 0).all()
        assert (uv >= 0).all() and (uv[:, 0] <= camera.width - 1).all() and (uv[:, 1] <= camera.height - 1).all()


def test_piratenbillard_variants_start_with_full_rows_in_the_drawn_colours():
    for seed in range(1, 7):
        v = variant("piratenbillard", seed)
        match = simulate_variant(v)
        balls = match.frames[0].balls
        assert len(balls) == 8 * len(v.players)
        for player, seat in v.layout.seats.items():
            mine = [b for b in balls if b.owner == player]
            where = {(s.at.row, s.at.col) for s in (v.profile.locate((b.x, b.y)) for b in mine)}
            assert where == set(starting_row(seat)), (seed, player)


def test_seat_colours_must_be_one_different_colour_per_player():
    profile = load_profile("piratenbillard")
    for colours in (("red", "red"), ("red", "blue", "green")):
        with pytest.raises(InputError, match="must name 2 different colours, one per player in seat order"):
            simulate_piratenbillard(profile, 1, "full_game", PiratenbillardOptions(players=2, seat_colours=colours))
    match = simulate_piratenbillard(profile, 1, "full_game",
                                    PiratenbillardOptions(duration_s=1.0, seat_colours=("pink", "green")))
    assert {b.owner for b in match.frames[0].balls} == {"pink", "green"}


def test_a_written_variant_is_a_sample_folder_the_referee_can_be_given(tmp_path):
    v = variant("piratenbillard", 2)
    truth = write_variant(v, tmp_path, Realism(), width=320, height=180)
    assert load_profile(tmp_path / "profile.json").ball_diameter_mm == v.ball_mm
    assert truth["profile"] == v.profile_json and truth["config"] == v.config
    assert set(truth["ball_owners"].values()) == set(v.players)
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["args"] == run_arguments(v) and run["variant"]["seed"] == 2
    assert (tmp_path / "video.mp4").stat().st_size > 0


def test_the_committed_variant_samples_are_what_their_seeds_draw():
    folders = sorted(p.parent for p in SAMPLES.glob("*/*/truth.json"))
    assert {f.parent.name for f in folders} == set(GAMES) and len(folders) >= 4
    for folder in folders:
        truth = json.loads((folder / "truth.json").read_text())
        v = variant(truth["game"], truth["seed"])
        assert truth["profile"] == v.profile_json and truth["config"] == v.config
        assert json.loads((folder / "profile.json").read_text()) == v.profile_json
        assert json.loads((folder / "run.json").read_text())["args"] == run_arguments(v)


@pytest.fixture(scope="module", params=CHECKED, ids=[f"{g}_v{s}" for g, s in CHECKED])
def seen(request):
    """One variant's match, its first frame (markers, full rows) and its calibration, with a still camera."""
    game, seed = request.param
    v = variant(game, seed)
    match = simulate_variant(v)
    realism = replace(Realism.moderate(), shake_deg=0.0)  # a still camera: the first frame's calibration holds
    renderer = Renderer(v.profile, make_variant_camera(v), realism, match.fps, seed, colours=v.colours)
    first, _ = renderer.render(match.frames[0])
    mapper = BoardMapper(calibrate_markers(first, v.profile), v.profile)
    return v, match, renderer, first, mapper


def test_calibration_from_the_markers_finds_the_table(seen):
    """Every resting ball's pixel maps back into its own place, within a quarter of a ball of the truth."""
    v, match, renderer, _, mapper = seen
    fullest = max(settles_with_priors(v, match), key=lambda s: len(s.snapshot.balls))
    _, truth = renderer.render(match.frames[fullest.frame])
    balls = [b for b in truth.balls if b.visible]
    assert balls
    mapped = mapper.to_board(np.array([[b.u, b.v] for b in balls]), v.ball_mm / 2)
    errors = np.hypot(mapped[:, 0] - [b.x for b in balls], mapped[:, 1] - [b.y for b in balls])
    assert errors.max() < MAPPING_TOLERANCE * v.ball_mm, errors
    assert [v.profile.locate(tuple(p)).at for p in mapped] == [v.profile.locate((b.x, b.y)).at for b in balls]
