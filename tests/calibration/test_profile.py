"""Profile loading: shipped defaults, club tables, and nonsense rejected by field name."""

from __future__ import annotations

import copy
import json
from importlib import resources

import pytest

from calibration.profile import ProfileError, StarClusterProfile, load_profile, parse_profile


def default_json(game: str) -> dict:
    name = f"{game}_default.json"
    return json.loads(resources.files("calibration.profiles").joinpath(name).read_text())


def test_defaults_load(starcluster, piratenbillard):
    assert isinstance(starcluster, StarClusterProfile)
    assert [len(p.slots) for p in starcluster.positions] == [7, 5, 3]
    assert len(piratenbillard.spaces()) == 96
    sides = {s.seat: (s.side, s.line, s.index) for s in piratenbillard.seats}
    assert sides == {0: ("south", "row", 9), 1: ("west", "col", 0), 2: ("north", "row", 0), 3: ("east", "col", 9)}
    assert piratenbillard.starting_cells(0) == [(9, c) for c in range(1, 9)]
    # Row 0 is north (largest y), column 0 west (smallest x).
    assert piratenbillard.space_center(0, 1)[1] > piratenbillard.space_center(9, 1)[1]
    assert piratenbillard.space_center(1, 0)[0] < piratenbillard.space_center(1, 9)[0]


def test_club_table_with_other_slot_counts(tmp_path):
    data = default_json("starcluster")
    data["name"] = "club table"
    data["astrolabe"]["positions"][0]["slots"] = [[200 + 30 * i, 650] for i in range(9)]
    data["astrolabe"]["positions"][0]["slot_width_mm"] = 20
    data["dead_ball_zones"] = [{"name": "back corner", "x": [90, 150], "y": [1100, 1150]}]
    path = tmp_path / "club.json"
    path.write_text(json.dumps(data))
    profile = load_profile(path)
    assert len(profile.positions[0].slots) == 9
    assert profile.dead_ball_zones[0].name == "back corner"


def broken(game: str, edit) -> dict:
    data = copy.deepcopy(default_json(game))
    edit(data)
    return data


CASES = [
    ("overlapping slot", "starcluster",
     lambda d: d["astrolabe"]["positions"][1]["slots"].__setitem__(3, [475.0, 850]),
     "field 'astrolabe.positions[1].slots[3]' overlaps slot 2"),
    ("slot off table", "starcluster",
     lambda d: d["astrolabe"]["positions"][2]["slots"].__setitem__(0, [630.0, 1050]),
     "field 'astrolabe.positions[2].slots[0]' lies outside the table"),
    ("missing Play Line", "starcluster", lambda d: d.pop("play_line"), "field 'play_line' is missing"),
    ("Play Line off table", "starcluster",
     lambda d: d["play_line"].__setitem__("to", [900, 200]), "field 'play_line.to' lies outside"),
    ("negative ball", "starcluster", lambda d: d.__setitem__("ball_diameter_mm", -3),
     "field 'ball_diameter_mm'"),
    ("positions out of order", "starcluster",
     lambda d: (d["astrolabe"]["positions"][0].__setitem__("number", 3),
                d["astrolabe"]["positions"][2].__setitem__("number", 1)),
     "Position 1 must be closest"),
    ("unknown dictionary", "starcluster", lambda d: d["markers"].__setitem__("dictionary", "DICT_NOPE"),
     "field 'markers.dictionary'"),
    ("duplicate marker", "piratenbillard",
     lambda d: d["markers"]["markers"][1].__setitem__("id", 10), "field 'markers.markers[1].id'"),
    ("spaces overlap", "piratenbillard", lambda d: d["grid"].__setitem__("pitch_mm", 35),
     "field 'grid.pitch_mm'"),
    ("grid too big", "piratenbillard", lambda d: d["board"].__setitem__("width_mm", 500),
     "field 'grid' does not fit"),
    ("two seats one edge", "piratenbillard", lambda d: d["seats"][2].__setitem__("row", 9),
     "field 'seats[2].row'"),
    ("corner spaces present", "piratenbillard", lambda d: d["grid"].__setitem__("missing", []),
     "field 'grid.missing'"),
    ("unknown game", "piratenbillard", lambda d: d.__setitem__("game", "chess"), "field 'game'"),
]


@pytest.mark.parametrize("name,game,edit,message", CASES, ids=[c[0] for c in CASES])
def test_nonsense_is_rejected_naming_the_field(name, game, edit, message):
    with pytest.raises(ProfileError) as info:
        parse_profile(broken(game, edit), "tables/club.json")
    text = str(info.value)
    assert message in text
    assert text.startswith("profile tables/club.json: ")
    assert "\n" not in text


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(ProfileError, match="file not found"):
        load_profile(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ProfileError, match="not readable JSON"):
        load_profile(bad)
