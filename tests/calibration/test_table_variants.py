"""Tables built to the rulebooks but not to the shipped profiles: turned markers, rows counted from the south,
a frame measured on any side, and contradictions inside a profile refused by field name."""

from __future__ import annotations

import copy
import json
from importlib import resources

import numpy as np
import pytest

from calibration.calibrate import calibrate_markers
from calibration.homography import CalibrationError
from calibration.profile import ProfileError, parse_profile
from calibration.render import render_board, warp_to_camera
from rules.events import Location, Place

PX_PER_MM = 2.0
BOUND_MM = 2.0  # as tests/calibration/test_accuracy.py
HD = (1920, 1080)


def default_json(game: str) -> dict:
    return json.loads(resources.files("calibration.profiles").joinpath(f"{game}_default.json").read_text())


def edited(game: str, edit) -> dict:
    data = copy.deepcopy(default_json(game))
    edit(data)
    return data


def view(profile, make_camera, centre, target, focal=1300):
    """The profile's board rendered from its own JSON, seen through an independent pinhole camera."""
    camera = make_camera(centre, target, focal, HD)
    image = warp_to_camera(render_board(profile, PX_PER_MM), profile, PX_PER_MM, camera.board_to_image, HD)
    return image, camera


def centre_errors(cal, camera, truth: np.ndarray) -> np.ndarray:
    return np.linalg.norm(cal.image_to_board(camera.project_board(truth)) - truth, axis=1)


# --------------------------------------------------------------------------- turned markers

def turn_markers(data: dict) -> None:
    for marker, turn in zip(data["markers"]["markers"], (90, 180, 270, 0, 90, 270)):
        marker["rotation_deg"] = turn


def test_turned_markers_calibrate_exactly_on_a_rendered_table(make_camera):
    profile = parse_profile(edited("starcluster", turn_markers), "turned")
    assert [m.rotation_deg for m in profile.markers.markers] == [90, 180, 270, 0, 90, 270]
    image, camera = view(profile, make_camera, (320, -700, 1200), (320, 650, 0))
    cal = calibrate_markers(image, profile)
    truth = np.array([s for pos in profile.positions for s in pos.slots])
    assert len(cal.markers_used) == 6
    assert centre_errors(cal, camera, truth).max() < BOUND_MM


def test_a_turned_marker_read_as_upright_does_not_calibrate(make_camera):
    """The control: the same pixels with the profile unaware of the turns pair the wrong corners."""
    turned = parse_profile(edited("starcluster", turn_markers), "turned")
    upright = parse_profile(default_json("starcluster"), "upright")
    image, camera = view(turned, make_camera, (320, -700, 1200), (320, 650, 0))
    truth = np.array([s for pos in upright.positions for s in pos.slots])
    try:
        cal = calibrate_markers(image, upright)
    except CalibrationError:
        return
    assert centre_errors(cal, camera, truth).max() > 10 * BOUND_MM


def test_a_quarter_turn_puts_the_printed_top_left_corner_south_west():
    profile = parse_profile(edited("starcluster", turn_markers), "turned")
    marker = profile.markers.markers[0]  # centre (25, 25), 40 mm, turned 90 degrees counter-clockwise
    assert marker.corners == ((5.0, 5.0), (5.0, 45.0), (45.0, 45.0), (45.0, 5.0))


def test_a_play_area_behind_the_play_line_is_a_table_like_any_other():
    """Not every table has its play area beyond the line: one behind it loads and reads as the play area."""
    profile = parse_profile(edited("starcluster", set_in(("play_area",), {"x": [50, 590], "y": [60, 200]})), "near")
    assert profile.locate((320, 120)).at == Location(Place.PLAY_AREA)
    assert profile.locate((320, 300)).at == Location(Place.PLAY_AREA)


# --------------------------------------------------------------------------- Piratenbillard numbering and frame

def counted_from_south_and_east(data: dict) -> None:
    """The shipped board described the other way round: row 0 in the south, column 0 in the east."""
    data["grid"]["rows_from"] = "south"
    data["grid"]["cols_from"] = "east"
    for seat in data["seats"]:
        if "row" in seat:
            seat["row"] = 9 - seat["row"]
        else:
            seat["col"] = 9 - seat["col"]


def test_a_south_counted_board_is_the_same_board_in_the_referees_numbering():
    shipped = parse_profile(default_json("piratenbillard"), "shipped")
    south = parse_profile(edited("piratenbillard", counted_from_south_and_east), "south")
    assert {s.side: s.index for s in south.seats} == {s.side: s.index for s in shipped.seats}
    assert all(south.starting_cells(seat) == shipped.starting_cells(seat) for seat in range(4))
    assert south.places == shipped.places
    assert south.locate(shipped.space_center(8, 3)).at == Location.cell_at(8, 3)


def test_a_south_counted_board_calibrates_exactly_on_rendered_frames(make_camera):
    south = parse_profile(edited("piratenbillard", counted_from_south_and_east), "south")
    image, camera = view(south, make_camera, (282, -450, 800), (282, 282, 0), 1500)
    cal = calibrate_markers(image, south)
    truth = np.array([south.space_center(r, c) for r, c in south.spaces()])
    assert centre_errors(cal, camera, truth).max() < BOUND_MM


def test_a_frame_measured_on_the_east_and_south_places_the_grid_there(make_camera):
    """A 600 x 620 mm board whose grid (445 mm square) sits 35 mm from the east edge and 110 mm from the south."""
    def wide_south_frame(data: dict) -> None:
        data["board"] = {"width_mm": 600, "length_mm": 620}
        data["off_board_margin_mm"] = {"east": 35, "south": 110}
        data["markers"]["markers"] = [{"id": i, "center": c, "size_mm": 40} for i, c in
                                      enumerate([[30, 30], [570, 30], [30, 590], [570, 590]])]

    profile = parse_profile(edited("piratenbillard", wide_south_frame), "frame")
    grid = profile.grid
    assert (grid.x_min, grid.y_min, grid.x_max, grid.y_max) == (120.0, 110.0, 565.0, 555.0)
    image, camera = view(profile, make_camera, (300, -450, 850), (300, 310, 0), 1500)
    cal = calibrate_markers(image, profile)
    truth = np.array([profile.space_center(r, c) for r, c in profile.spaces()])
    assert centre_errors(cal, camera, truth).max() < BOUND_MM


# --------------------------------------------------------------------------- contradictions refused at load

def set_in(path, value):
    def edit(data):
        target = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return edit


CASES = [
    ("marker turned 45 degrees", "starcluster", set_in(("markers", "markers", 2, "rotation_deg"), 45),
     "field 'markers.markers[2].rotation_deg'"),
    ("gutter over a slot", "starcluster", set_in(("gutters", 0, "x"), [50, 110]),
     "field 'gutters[0]' overlaps Position 1 slot 0"),
    ("dead-ball zone cutting a slot", "starcluster",
     set_in(("dead_ball_zones",), [{"name": "half", "x": [300, 330], "y": [1000, 1100]}]),
     "field 'dead_ball_zones[0]' covers part of Position 3 slot 0"),
    ("frame on both sides not adding up", "piratenbillard",
     set_in(("off_board_margin_mm",), {"west": 60, "east": 70, "north": 60}),
     "field 'off_board_margin_mm.east' does not add up"),
    ("frame with no side across", "piratenbillard", set_in(("off_board_margin_mm",), {"north": 60}),
     "field 'off_board_margin_mm'"),
    ("seat row on the wrong edge for the counting", "piratenbillard", set_in(("grid", "rows_from"), "south"),
     "field 'seats[0].row' is 9, the north edge of the grid (rows counted from the south), but the seat sits south"),
    ("seat numbered against the rules", "piratenbillard",
     lambda d: d["seats"].__setitem__(slice(0, 4), [{"seat": 0, "side": "north", "row": 0},
                                                    {"seat": 1, "side": "west", "col": 0},
                                                    {"seat": 2, "side": "south", "row": 9},
                                                    {"seat": 3, "side": "east", "col": 9}]),
     "field 'seats[0].side' is north, but seat 0 sits south"),
    ("unknown row counting", "piratenbillard", set_in(("grid", "rows_from"), "top"), "field 'grid.rows_from'"),
]


@pytest.mark.parametrize("name,game,edit,message", CASES, ids=[c[0] for c in CASES])
def test_a_contradiction_inside_a_profile_is_refused_naming_the_field(name, game, edit, message):
    with pytest.raises(ProfileError) as info:
        parse_profile(edited(game, edit), "tables/club.json")
    text = str(info.value)
    assert text.startswith("profile tables/club.json: ") and message in text, text
    assert "\n" not in text


def test_the_default_profiles_are_unchanged_by_the_new_fields():
    """One frame width (the shipped form) still hangs the grid from the north-west corner."""
    shipped = parse_profile(default_json("piratenbillard"), "shipped")
    grid = shipped.grid
    assert (grid.x_min, grid.y_max) == (60.0, 505.0)
    assert all(m.rotation_deg == 0 for m in shipped.markers.markers)
