"""Ball colours as people give them: sRGB or CIE Lab, checked on the way in, carried by a game_start's players
(the engines never read them), and written back as given."""

from __future__ import annotations

import json

import pytest

from rules.colours import BallColour, delta_e, lab_to_srgb, parse_colour, srgb_to_lab
from rules.errors import InputError
from rules.events import GameStart, LogError, PlayerSpec, parse_event
from rules.session import load_session


def test_srgb_converts_to_the_cie_lab_reference_values_and_back():
    # CIE Lab (D65) of the sRGB primaries and white, as colour references publish them
    for rgb, lab in [((255, 0, 0), (53.24, 80.09, 67.20)), ((0, 0, 255), (32.30, 79.19, -107.86)),
                     ((255, 255, 255), (100.0, 0.0, 0.0)), ((0, 128, 0), (46.23, -51.70, 49.90))]:
        assert delta_e(srgb_to_lab(rgb), lab) < 0.1
        assert lab_to_srgb(srgb_to_lab(rgb)) == rgb


@pytest.mark.parametrize("given", ["#7b3fa0", "#7B3FA0", [123, 63, 160], {"srgb": [123, 63, 160]}])
def test_srgb_forms(given):
    colour = parse_colour(given, "x")
    assert colour.srgb == (123, 63, 160) and colour.hex == "#7b3fa0" and colour.to_json() == "#7b3fa0"


@pytest.mark.parametrize("given", [{"lab": [52, 40, -38]}, "lab(52 40 -38)", "LAB(52, 40, -38)", " lab(52,40,-38) "])
def test_lab_forms(given):
    colour = parse_colour(given, "x")
    assert colour.lab == (52.0, 40.0, -38.0) and colour.srgb is None
    assert colour.to_json() == {"lab": [52.0, 40.0, -38.0]}
    assert parse_colour(colour.to_json(), "x") == colour


@pytest.mark.parametrize("given", ["#7b3fa", "violet", [1, 2], [1, 2, 256], [1.5, 2, 3], [True, 0, 0],
                                   {"lab": [101, 0, 0]}, {"lab": [50, 0, float("nan")]}, {"lab": ["52", 40, -38]},
                                   "lab(50 0)", "lab(50 x 0)", {"hsv": [1, 2, 3]}, None, 7])
def test_what_is_not_a_colour_is_refused_naming_where_and_the_forms(given):
    with pytest.raises(InputError, match=r"^players\[0\]\.colour: .* is not .*give \"#rrggbb\""):
        parse_colour(given, "players[0].colour")


def test_a_game_start_carries_each_players_colour_and_writes_it_as_given():
    event = parse_event({"type": "game_start", "t": 0, "players": [
        {"id": "alice", "seat": 0, "colour": "#7b3fa0"}, {"id": "bob", "seat": 2, "colour": {"lab": [78, -3, 75]}},
        {"id": "red", "seat": 1}]})
    assert isinstance(event, GameStart)
    alice, bob, red = event.players
    assert alice.colour == BallColour.from_srgb((123, 63, 160)) and bob.colour == BallColour((78.0, -3.0, 75.0))
    assert red.colour is None and "colour" not in red.to_json()
    assert [p.get("colour") for p in event.to_json()["players"]] == ["#7b3fa0", {"lab": [78.0, -3.0, 75.0]}, None]
    assert parse_event(json.loads(json.dumps(event.to_json()))) == event
    with pytest.raises(LogError, match=r"players\[1\]\.colour: .mauve. is not a colour"):
        parse_event({"type": "game_start", "t": 0, "players": [{"id": "a"}, {"id": "b", "colour": "mauve"}]})


def test_a_session_file_gives_the_players_colours(tmp_path):
    path = tmp_path / "session.jsonl"
    path.write_text(json.dumps({"type": "game_start", "t": 0, "players": [
        {"id": "alice", "side": "right", "colour": [123, 63, 160]}, {"id": "bob", "side": "left"}]}) + "\n")
    start = load_session(path).events[0]
    assert isinstance(start, GameStart)
    assert start.players == (PlayerSpec("alice", side="right", colour=BallColour.from_srgb((123, 63, 160))),
                             PlayerSpec("bob", side="left"))
    path.write_text(json.dumps({"type": "game_start", "t": 0, "players": [{"id": "a", "colour": "#12345"}]}) + "\n")
    with pytest.raises(InputError, match=r"session file .* entry 1: event: players\[0\]\.colour: .#12345. is not"):
        load_session(path)
