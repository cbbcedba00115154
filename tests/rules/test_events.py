"""The event model: parsing, round trips, the JSON Schema, and clear errors."""

import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.events import (
    EVENT_TYPES,
    BallSighting,
    GameStart,
    Location,
    LogError,
    Place,
    PlayerSpec,
    PlayLineCrossing,
    ShotStarted,
    Snapshot,
    SnapshotCorrection,
    Source,
    TableMovement,
    TableSettled,
    UmpireFoul,
    parse_event,
)

SCHEMA = json.loads((Path(__file__).parents[2] / "rules/schemas/event.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

owners = st.sampled_from(["red", "blue", "green", "yellow"])
locations = st.one_of(
    st.builds(Location.slot_at, st.integers(1, 3), st.integers(0, 6)),
    st.builds(Location.cell_at, st.integers(0, 9), st.integers(0, 9)),
    st.sampled_from([Place.PLAY_AREA, Place.GUTTER, Place.GROUPED, Place.OFF_TABLE]).map(Location),
)
snapshots = st.lists(st.builds(BallSighting, owners, locations, st.sampled_from([1.0, 0.5, 0.9])),
                     max_size=12).map(lambda balls: Snapshot(tuple(balls)))
times = st.floats(0, 3600, allow_nan=False)
events = st.one_of(
    st.builds(ShotStarted, t=times, id=st.just("s1"), player=st.one_of(st.none(), owners),
              ball_from=st.one_of(st.none(), locations)),
    st.builds(TableSettled, t=times, id=st.just("s2"), snapshot=snapshots),
    st.builds(PlayLineCrossing, t=times, id=st.just("x"), player=owners, body_part=st.sampled_from(["wrist", "head"]),
              confidence=st.floats(0, 1)),
    st.builds(TableMovement, t=times, id=st.just("m"), magnitude_mm=st.floats(0, 50), confidence=st.floats(0, 1)),
    st.builds(SnapshotCorrection, t=times, id=st.just("c"), target=st.just("L3"), snapshot=snapshots,
              by=st.just("umpire"), reason=st.just("ball in slot 4"), source=st.just(Source.UMPIRE)),
    st.builds(UmpireFoul, t=times, id=st.just("f"), player=owners,
              foul=st.sampled_from(UmpireFoul.FOULS), free_shot=st.booleans(), source=st.just(Source.UMPIRE)),
)


@settings(max_examples=150, deadline=None)
@given(events)
def test_every_event_round_trips_through_json_and_matches_the_schema(event):
    data = json.loads(json.dumps(event.to_json()))
    VALIDATOR.validate(data)
    back = parse_event(data)
    if isinstance(event, (TableSettled, SnapshotCorrection)):
        assert sorted(back.snapshot.balls, key=str) == sorted(event.snapshot.balls, key=str)
        assert back.t == event.t and back.id == event.id
    else:
        assert back == event


def test_every_event_type_is_in_the_schema():
    assert set(SCHEMA["properties"]["type"]["enum"]) == set(EVENT_TYPES)


def test_missing_id_takes_the_line_number():
    event = parse_event({"type": "round_start", "t": 1.5}, line=7)
    assert event.id == "L7"
    assert event.source is Source.UMPIRE


def test_game_start_parses_players_with_sides():
    event = parse_event({"type": "game_start", "t": 0, "players": [{"id": "red", "side": "right"},
                                                                     {"id": "blue", "side": "left"}]}, 1)
    assert isinstance(event, GameStart)
    assert event.players == (PlayerSpec("red", side="right"), PlayerSpec("blue", side="left"))


@pytest.mark.parametrize(
    "data, message",
    [
        ("not an object", "must be a JSON object"),
        ({"type": "teleport", "t": 1}, "unknown event type 'teleport'"),
        ({"type": "round_end"}, "'t' must be a number"),
        ({"type": "round_end", "t": -1}, "'t' must be a number of seconds >= 0"),
        ({"type": "table_settled", "t": 1}, "balls must be a list"),
        ({"type": "table_settled", "t": 1, "balls": [{"owner": "red", "at": {"place": "slot", "position": 2}}]},
         "a slot location needs 'position' and 'slot'"),
        ({"type": "table_settled", "t": 1, "balls": [{"owner": "red", "at": {"place": "roof"}}]},
         "balls[0].at.place is 'roof'"),
        ({"type": "table_settled", "t": 1, "balls": [{"owner": "", "at": {"place": "gutter"}}]},
         "'balls[0].owner' must be a non-empty string"),
        ({"type": "table_movement", "t": 1}, "'magnitude_mm' must be a number >= 0"),
        ({"type": "out_of_balls_choice", "t": 1, "player": "red", "choice": "pass"}, "'choice' must be 'bank'"),
        ({"type": "overturn", "t": 1}, "'target' must be a non-empty string"),
        ({"type": "game_start", "t": 0, "players": [{"id": "red"}, {"id": "red"}]}, "player ids must differ"),
        ({"type": "game_start", "t": 0, "players": [{"id": "red", "seat": 5}]}, "seat must be 0"),
        ({"type": "play_line_crossing", "t": 1, "confidence": 2}, "'confidence' must be a number from 0 to 1"),
    ],
)
def test_malformed_events_name_the_line_and_the_field(data, message):
    with pytest.raises(LogError) as caught:
        parse_event(data, line=12)
    text = str(caught.value)
    assert text.startswith("line 12: ")
    assert message in text
    assert "\n" not in text
