"""Every reader of user input answers a malformed file with one clear InputError, never a traceback.

Property tests start from valid documents (the example logs, sample truths, the shipped table profiles, game
configs, a corrections file) and mutate them (json_mutations.py): a field of another JSON type, a huge,
negative or non-finite number, deep nesting, unknown keys, bytes that are not UTF-8, a cut-off line. Each
reader must accept the mutant or raise an InputError (one line); any other exception fails the test. An
accepted event log is also replayed through both games' engines, and its result and score sheet built.

The regression tests at the end pin the cases first found by fuzzing. Each property test is bounded
(max_examples) so the file runs in seconds; tests/conftest.py derandomizes Hypothesis under CI=true.
FUZZ_EXAMPLES=N raises the bound for a longer hunt by hand.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from json_mutations import as_bytes, dumps, json_lines, mutated

from calibration.calibrate import load_calibration
from calibration.distortion import load_intrinsics
from calibration.profile import load_profile
from record.run_folder import read_corrections
from review.corrections import _edit, _foul_fields, _from_file, parse_location
from rules.errors import InputError
from rules.events import (
    EVENT_TYPES,
    BallSighting,
    Location,
    Place,
    Snapshot,
    UmpireFoul,
    parse_event,
)
from rules.files import MAX_DEPTH, decode_json_lines, loads, read_json, read_json_lines
from rules.games import GAMES, load_config, make_engine
from rules.replay import parse_log_lines, read_log, replay
from rules.result import build_result
from rules.scoresheet import render_score_sheet
from rules.session import load_session
from vision.config import split_config

ROOT = Path(__file__).resolve().parents[2]
# FUZZ_EXAMPLES=5000 digs deeper by hand; the suite keeps the bound
FUZZ = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "200")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

VOCABULARY = (
    *EVENT_TYPES, *(p.value for p in Place), "red", "blue", "green", "yellow", "right", "left", "bank",
    "final_sequence", *UmpireFoul.FOULS, "vision", "umpire", "L1", "L2", "L3", "L5", "L9", "G1", "T3", "S2", "C1",
    "wrist", "events", "shared",
)


def _lines(path: Path, first: int | None = None) -> list[Any]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()][:first]


def _truth(name: str) -> dict[str, Any]:
    return json.loads((ROOT / "sample_videos" / name / "truth.json").read_text(encoding="utf-8"))


SCB_LOG = _lines(ROOT / "examples/starcluster_full_game.jsonl")
PB_LOG = _lines(ROOT / "examples/piratenbillard_game.jsonl")
TRUTHS = {name: _truth(name) for name in ("starcluster/play_line_foul", "piratenbillard/capture")}
LOGS = {"starcluster": SCB_LOG, "piratenbillard": PB_LOG,
        **{name: truth["events"] for name, truth in TRUTHS.items()}}


def accepted_or_input_error(read: Callable[..., Any], *args: Any) -> Any:
    """What `read(*args)` returns, or None when it raised an InputError; the message must be one line."""
    try:
        return read(*args)
    except InputError as error:
        assert "\n" not in str(error), str(error)
        assert str(error), "an InputError says what is wrong"
        return None


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


# ---------------------------------------------------------------- event logs, through both engines


def replay_everywhere(events: list[Any], configs: tuple[dict[str, Any], ...] = ({},)) -> None:
    """Replay accepted events through each engine; refusing an event is fine, crashing is not."""
    for game in GAMES:
        for config in configs:
            result = accepted_or_input_error(replay, events, game, config)
            if result is not None:
                json.dumps(build_result(result, {"log": "fuzz"}))
                render_score_sheet(result, "fuzz")


@st.composite
def damaged_logs(draw: Any) -> bytes:
    name = draw(st.sampled_from(sorted(LOGS)))
    rows = LOGS[name]
    start = draw(st.integers(0, max(0, len(rows) - 10)))
    rows = rows[:1] + rows[start + 1:start + draw(st.integers(5, 40))]  # the game_start, then a stretch of play
    return draw(as_bytes(json_lines(draw(mutated(rows, VOCABULARY)))))


@FUZZ
@given(data=damaged_logs())
def test_the_event_log_reader_and_replay_never_crash(scratch: Path, data: bytes) -> None:
    path = scratch / "events.jsonl"
    path.write_bytes(data)
    events = accepted_or_input_error(lambda: read_log(path))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        assert events is None  # the file reader refuses what is not UTF-8
        return
    in_memory = accepted_or_input_error(lambda: parse_log_lines(text.split("\n"), "fuzz"))
    assert (events is None) == (in_memory is None)
    if events is not None:
        replay_everywhere(events, ({}, {"balls_per_player": 2}))


@st.composite
def plausible_logs(draw: Any) -> list[Any]:
    """Logs that mostly still parse (words for words, small numbers for numbers), so the engines get them."""
    rows = LOGS[draw(st.sampled_from(sorted(LOGS)))]
    start = draw(st.integers(0, max(0, len(rows) - 10)))
    rows = rows[:2] + rows[start + 2:start + draw(st.integers(5, 40))]
    return draw(mutated(rows, VOCABULARY, most=6, plausible=True))


ENGINE_CONFIGS = ({}, {"balls_per_player": 2, "round_seconds": 40, "target_points": 3},
                  {"balls_per_player": 1, "clock": "umpire", "after_end": "error"})


@FUZZ
@given(rows=plausible_logs())
def test_the_engines_never_crash_on_a_log_that_parses(rows: list[Any]) -> None:
    events = accepted_or_input_error(lambda: parse_log_lines(json_lines(rows).split("\n"), "fuzz"))
    if events is not None:
        for game in GAMES:
            for config in ENGINE_CONFIGS:
                known = {k: v for k, v in config.items() if k in (("target_points", "after_end", "balls_per_player")
                                                                   if game == "piratenbillard" else
                                                                   ("balls_per_player", "round_seconds", "clock"))}
                result = accepted_or_input_error(replay, events, game, known)
                if result is not None:
                    json.dumps(build_result(result, {"log": "fuzz"}))
                    render_score_sheet(result, "fuzz")


@FUZZ
@given(event=mutated(SCB_LOG[8], VOCABULARY) | mutated(PB_LOG[3], VOCABULARY) | mutated(SCB_LOG[0], VOCABULARY))
def test_parse_event_takes_any_json_value(event: Any) -> None:
    """parse_event is also called on decoded JSON directly (a truth's events): any value, no traceback."""
    parsed = accepted_or_input_error(lambda: parse_event(event, 3))
    if parsed is not None:
        json.dumps(parsed.to_json())
        replay_everywhere([parse_event(SCB_LOG[0], 1), dataclasses.replace(parsed, id="X")])


SMALL = st.one_of(st.integers(-1, 9), st.sampled_from([None, "1", 1.5, True, 10**30]))
PLACES = st.fixed_dictionaries({"place": st.sampled_from([p.value for p in Place] + ["slots"])},
                               optional={key: SMALL for key in ("position", "slot", "row", "col")})


@FUZZ
@given(places=st.lists(PLACES, max_size=8), owners=st.lists(st.sampled_from(["red", "red", "blue"]), min_size=8))
def test_any_locations_that_parse_make_a_sortable_snapshot(places: list[Any], owners: list[str]) -> None:
    """Every engine sorts snapshots by (owner, location): locations that parse must always compare."""
    balls = [{"owner": owner, "at": at} for owner, at in zip(owners, places)]
    event = accepted_or_input_error(lambda: parse_event({"type": "table_settled", "t": 1, "balls": balls}, 2))
    if event is not None:
        sorted(event.snapshot.balls, key=lambda b: (b.owner, b.at))
        assert parse_event(event.to_json()).snapshot.to_json() == event.snapshot.to_json()
        replay_everywhere([parse_event(SCB_LOG[0], 1), parse_event(SCB_LOG[1], 2), dataclasses.replace(event, id="X")])


# ---------------------------------------------------------------- session files


def umpire_rows(rows: list[Any]) -> list[Any]:
    return [row for row in rows if row.get("source") == "umpire" or row["type"] in
            ("game_start", "round_start", "round_end", "out_of_balls_choice", "confirm", "overturn", "umpire_foul")]


@st.composite
def damaged_sessions(draw: Any) -> bytes:
    name = draw(st.sampled_from(sorted(TRUTHS)))
    truth = TRUTHS[name]
    if draw(st.booleans()):  # a truth.json: config and events, observations included (kept short)
        doc = {"format": truth.get("format"), "game": truth["game"], "config": truth["config"],
               "events": truth["events"][:draw(st.integers(1, 12))]}
        return draw(as_bytes(dumps(draw(mutated(doc, VOCABULARY)))))
    rows = umpire_rows(SCB_LOG if name.startswith("starcluster") else PB_LOG)[:8]
    return draw(as_bytes(json_lines(draw(mutated(rows, VOCABULARY)))))


@FUZZ
@given(data=damaged_sessions())
def test_the_session_reader_never_crashes(scratch: Path, data: bytes) -> None:
    path = scratch / "session.json"
    path.write_bytes(data)
    session = accepted_or_input_error(lambda: load_session(path))
    if session is not None:
        for game in GAMES:
            engine = accepted_or_input_error(make_engine, game, session.config)
            for event in session.events if engine is not None else ():
                accepted_or_input_error(engine.feed, event)


# ---------------------------------------------------------------- table profiles

PROFILES = {game: json.loads((ROOT / f"calibration/profiles/{game}_default.json").read_text()) for game in GAMES}
PROFILE_WORDS = ("starcluster", "piratenbillard", "table-profile/1", "mm", "DICT_4X4_50", "DICT_9X9", "left",
                 "south", "north")


@st.composite
def damaged_profiles(draw: Any) -> bytes:
    doc = PROFILES[draw(st.sampled_from(sorted(PROFILES)))]
    return draw(as_bytes(dumps(draw(mutated(doc, PROFILE_WORDS)))))


@FUZZ
@given(data=damaged_profiles())
def test_the_profile_reader_never_crashes(scratch: Path, data: bytes) -> None:
    path = scratch / "profile.json"
    path.write_bytes(data)
    profile = accepted_or_input_error(lambda: load_profile(path))
    if profile is not None:  # what a loaded profile answers must work too
        table = profile.table
        for point in (((table.x_min + table.x_max) / 2, (table.y_min + table.y_max) / 2), (-1e6, 1e6)):
            profile.locate(point, 2.0)
        assert profile.places and profile.features


# ---------------------------------------------------------------- game configs

CONFIGS = (
    {"balls_per_player": 3, "round_seconds": 60, "rounds_per_game": 1, "best_of": 3, "clock": "events",
     "optional_rules": {"blocking": True, "multipliers": {"3": 2}, "dead_ball": {"positions": [3], "slots": [[1, 2]],
                                                                                 "from_fraction": 0.5}},
     "pipeline": {"settle": {"rest_debounce_ms": 500}, "detector": {"min_area": 0.3},
                  "play_line": {"body_parts": ["left_wrist"]}, "source": {"stream_reconnect_s": 2}}},
    {"target_points": 5, "balls_per_player": 2, "first_seat": 1, "stack_violation": "restrike",
     "after_end": "error", "min_confidence": 0.4, "pipeline": {"cells": {}, "tracking": {}}},
    {"target_score": 30, "target_round_limit": 5, "table_movement_foul_mm": 4.5, "review_confidence": 0.7,
     "slots_per_position": [7, 5, 3], "base_scores": [1, 2, 3], "chain_bonus": [0, 1, 2], "round_starters": ["right"]},
)


@FUZZ
@given(data=st.sampled_from(CONFIGS).flatmap(lambda c: mutated(c, ("right", "left", "events", "umpire", "shared",
                                                                    "foul", "warn", "pipeline", "settle")))
       .map(dumps).flatmap(as_bytes))
def test_the_game_config_reader_never_crashes(scratch: Path, data: bytes) -> None:
    path = scratch / "config.json"
    path.write_bytes(data)
    config = accepted_or_input_error(lambda: load_config(path))
    if config is not None:
        split = accepted_or_input_error(lambda: split_config(config))
        for game in GAMES:
            accepted_or_input_error(make_engine, game, split[0] if split else config)


# ---------------------------------------------------------------- corrections

CORRECTIONS = [
    {"type": "confirm", "t": 40.0, "id": "C1", "target": "S2", "by": "Ana", "reason": "seen", "recorded_at": "x"},
    {"type": "umpire_foul", "t": 50.0, "id": "C2", "player": "red", "foul": "play_line", "free_shot": True,
     "by": "Ana", "reason": "elbow", "recorded_at": "2026-01-01T10:00:00+00:00"},
    {"type": "overturn", "t": 60.0, "id": "C3", "target": "C2", "by": "Ana", "reason": "no", "recorded_at": ""},
    {"type": "snapshot_correction", "t": 70.0, "id": "C4", "target": "T3", "by": "Ben", "reason": "slot 4",
     "balls": [{"owner": "red", "at": {"place": "slot", "position": 1, "slot": 4}}], "recorded_at": "y"},
]
SCB_EVENTS = parse_log_lines([json.dumps(row) for row in SCB_LOG])


@FUZZ
@given(data=mutated(CORRECTIONS, VOCABULARY).map(json_lines).flatmap(as_bytes))
def test_the_corrections_readers_never_crash(scratch: Path, data: bytes) -> None:
    path = scratch / "corrections.jsonl"
    path.write_bytes(data)
    accepted_or_input_error(lambda: read_corrections(path, SCB_EVENTS))
    accepted_or_input_error(lambda: _from_file(path, "Ana", "fuzz"))


LOCATION_TEXTS = st.one_of(
    st.sampled_from(["none", "slot:3/4", "cell:4/7", "grouped", "slot", "cell", "slot:0/0", "cell:-1/2",
                     "slot:" + "9" * 5000 + "/1", "slot:\u0661/\u0662", "play_area", "off_table", "gutter"]),
    st.text(max_size=20),
    st.from_regex(r"(slot|cell):\d{1,30}/\d{1,5}", fullmatch=True),
)


@FUZZ
@given(location=LOCATION_TEXTS, owner=st.sampled_from(["red", "blue", "", "@", "="]),
       destination=LOCATION_TEXTS, foul=st.text(max_size=30) | st.sampled_from(["red:play_line", "a:b:free",
                                                                                  "red:interference:free"]))
def test_the_correction_edits_never_crash(location: str, owner: str, destination: str, foul: str) -> None:
    """`referee correct --snapshot ID COLOUR@FROM=TO` and `--foul PLAYER:KIND[:free]`, as typed on the command line."""
    accepted_or_input_error(lambda: parse_location(location))
    snapshot = Snapshot((BallSighting("red", Location.slot_at(3, 4)),))
    accepted_or_input_error(lambda: _edit(snapshot, f"{owner}@{location}={destination}", "T3"))
    accepted_or_input_error(lambda: _foul_fields(foul))


# ---------------------------------------------------------------- the JSON readers themselves


@FUZZ
@given(text=st.one_of(st.text(max_size=200), st.sampled_from(["[" * 100_000, "{\"a\":" * 5000, "1" * 5000,
                                                               "[" * MAX_DEPTH + "]" * MAX_DEPTH])))
def test_every_json_reader_refuses_with_an_input_error(scratch: Path, text: str) -> None:
    path = scratch / "any.json"
    path.write_text(text, encoding="utf-8")
    accepted_or_input_error(lambda: read_json(path, "file", fix="fix it"))
    accepted_or_input_error(lambda: read_json_lines(path, "file"))
    accepted_or_input_error(lambda: decode_json_lines(text.split("\n"), "text"))


# ---------------------------------------------------------------- regressions: the cases fuzzing found


@pytest.mark.parametrize("kind", [["round_start"], {"a": 1}, 3, None])
def test_an_event_type_of_another_json_type_is_a_log_error(kind: Any) -> None:
    with pytest.raises(InputError, match="^line 4: unknown event type .*; use one of ball_lifted"):
        parse_event({"type": kind, "t": 1.0}, 4)


@pytest.mark.parametrize("at", [
    {"place": "grouped", "position": 1, "slot": 2},
    {"place": "play_area", "row": 3},
    {"place": "slot", "position": 1, "slot": 2, "col": 1},
    {"place": "cell", "row": 1, "col": 2, "slot": 0},
])
def test_a_location_with_another_places_coordinates_is_refused(at: dict[str, Any]) -> None:
    """They used to be accepted, and sorting a snapshot that also held a plain one raised TypeError."""
    balls = [{"owner": "red", "at": at}, {"owner": "red", "at": {"place": at["place"], "position": 1, "slot": 0}
                                          if at["place"] == "slot" else {"place": at["place"], "row": 1, "col": 1}
                                          if at["place"] == "cell" else {"place": at["place"]}}]
    with pytest.raises(InputError, match=r"^line 5: balls\[0\]\.at: a \w+ location has no '(position|row|col|slot)'"):
        parse_event({"type": "table_settled", "t": 9.5, "balls": balls}, 5)
    with pytest.raises(ValueError):
        Location(**{**at, "place": Place(at["place"])})


def test_the_star_cluster_engine_gets_no_unsortable_snapshot() -> None:
    lines = [json.dumps(row) for row in SCB_LOG[:4]] + [
        ('{"type": "table_settled", "t": 9.5, "balls": [{"owner": "red", "at": {"place": "grouped", "position": 1, '
         '"slot": 2}}, {"owner": "red", "at": {"place": "grouped"}}]}')]
    with pytest.raises(InputError, match=r"^log line 5: balls\[0\]\.at: a grouped location has no 'position'"):
        replay(parse_log_lines(lines), "starcluster")


@pytest.mark.parametrize("field, line", [
    ("t", '{"type": "round_end", "t": Infinity}'),
    ("t", '{"type": "round_end", "t": NaN}'),
    ("t", '{"type": "round_end", "t": 1e999}'),
    ("t", '{"type": "round_end", "t": ' + "1" * 400 + "}"),  # an integer past a float's range
    ("magnitude_mm", '{"type": "table_movement", "t": 10, "magnitude_mm": Infinity}'),
    ("confidence", '{"type": "table_settled", "t": 10, "balls": [], "confidence": NaN}'),
    ("balls[0].confidence", ('{"type": "table_settled", "t": 10, "balls": [{"owner": "red", "at": {"place": '
                             '"gutter"}, "confidence": -Infinity}]}')),
])
def test_non_finite_numbers_are_refused_where_events_are_parsed(field: str, line: str) -> None:
    lines = [json.dumps(row) for row in SCB_LOG[:4]] + [line]
    with pytest.raises(InputError, match=rf"^log line 5: '{re.escape(field)}' must be"):
        parse_log_lines(lines)


def test_infinity_no_longer_reaches_the_score_sheet() -> None:
    """`"t": Infinity` used to be replayed and the score sheet's clock raised ValueError on it."""
    lines = [json.dumps(row) for row in SCB_LOG[:4]] + ['{"type": "shot_started", "t": Infinity, "player": "blue"}']
    with pytest.raises(InputError, match="'t' must be a number of seconds >= 0 \\(not NaN or Infinity\\), got inf"):
        parse_log_lines(lines)
    assert render_score_sheet(replay(parse_log_lines(lines[:4]), "starcluster"), "t")  # finite times: fine


@pytest.mark.parametrize("text, message", [
    ("[" * 100_000 + "]" * 100_000, f"nested more than {MAX_DEPTH} lists or objects deep at column {MAX_DEPTH + 1}"),
    ('{"a": ' * 150 + "1" + "}" * 150, (f"nested more than {MAX_DEPTH} lists or objects deep at column "
                                         f"{6 * MAX_DEPTH + 1}")),
    ('{"t": ' + "1" * 5000 + "}", "an integer has more than 4300 digits at column 7"),
])
def test_deep_nesting_and_huge_integers_are_one_line_json_errors(scratch: Path, text: str, message: str) -> None:
    path = scratch / "deep.json"
    path.write_text(text + "\n")  # a whole last line: not a torn one, which the corrections reader names as such
    readers: list[Callable[[], Any]] = [
        lambda: loads(text), lambda: read_json(path, "result", fix="fix it"), lambda: read_json_lines(path, "log"),
        lambda: decode_json_lines([text], "log"), lambda: read_log(path), lambda: load_session(path),
        lambda: load_config(path), lambda: load_profile(path), lambda: read_corrections(path),
        lambda: load_calibration(path), lambda: load_intrinsics(path),
    ]
    for read in readers:
        with pytest.raises((InputError, json.JSONDecodeError)) as raised:
            read()
        text_of = raised.value.msg if isinstance(raised.value, json.JSONDecodeError) else str(raised.value)
        assert message.split(" at ")[0] in text_of and "\n" not in text_of


def test_json_nested_up_to_the_limit_is_read() -> None:
    assert loads("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    assert loads("null") is None and loads('"[[[["') == "[[[["


def test_a_misspelt_umpire_type_in_a_session_is_refused(scratch: Path) -> None:
    path = scratch / "session.jsonl"
    path.write_text('{"type": "game_start", "t": 0, "players": [{"id": "red"}, {"id": "blue"}]}\n'
                    '{"type": "round_strat", "t": 1}\n')
    with pytest.raises(InputError, match=f"^session file {path} entry 2: unknown type 'round_strat'; a session "
                                         "holds umpire inputs \\(confirm, game_start, .*round_start"):
        load_session(path)
    truth = {"config": {}, "events": [{"type": "round_start", "t": 0}, {"type": "table_settled", "t": 1, "balls": []},
                                      {"t": 2}]}
    path.write_text(json.dumps(truth))
    with pytest.raises(InputError, match="entry 3: unknown type None"):
        load_session(path)
    truth["events"] = truth["events"][:2]  # an observation is skipped: vision makes its own
    path.write_text(json.dumps(truth))
    assert [e.TYPE for e in load_session(path).events] == ["round_start"]


def test_events_after_the_end_are_a_replay_warning_on_the_score_sheet() -> None:
    lines = [json.dumps(row) for row in SCB_LOG]
    finished = replay(parse_log_lines(lines), "starcluster")
    assert finished.standings.complete and finished.warnings == ()
    more = lines + ['{"type": "shot_started", "t": 1000, "player": "red"}',
                    '{"type": "table_settled", "t": 1003.25, "balls": []}']
    late = replay(parse_log_lines(more), "starcluster")
    end = max(d.t for d in finished.decisions)
    assert late.warnings == ((f"2 event(s) after the game ended at t={end:.2f}s were not scored (first: L82 "
                              "shot_started at 1000.00s); if play went on, check the game config"),)
    assert late.decisions == finished.decisions  # nothing scored
    assert build_result(late, {}) == build_result(finished, {})  # result.json has no warnings field
    sheet = render_score_sheet(late, "late")
    assert sheet.endswith(f"Warning: {late.warnings[0]}\n")
    assert "Warning" not in render_score_sheet(finished, "finished")


def test_a_piratenbillard_log_past_its_end_warns_too() -> None:
    lines = [json.dumps(row) for row in PB_LOG]
    assert replay(parse_log_lines(lines), "piratenbillard").warnings == ()
    more = ['{"type": "round_end", "t": 4000}', '{"type": "umpire_foul", "t": 5000, "player": "red"}',
            '{"type": "ball_lifted", "t": 5001, "owner": "red", "at": {"place": "cell", "row": 1, "col": 1}}']
    late = replay(parse_log_lines(lines + more), "piratenbillard")
    assert len(late.warnings) == 1 and "2 event(s) after the game ended" in late.warnings[0]
    assert "(first: L52 umpire_foul at 5000.00s)" in late.warnings[0]


def test_clearing_the_table_after_the_end_is_no_warning() -> None:
    """Every sample ends with balls lifted off the table (and a round_end) after the result: that is no news."""
    truth = _truth("starcluster/chain_grand_slam")
    events = parse_log_lines([json.dumps(row) for row in truth["events"]])
    lifted = [event for event in events if event.TYPE == "ball_lifted"]
    finished = replay(events, "starcluster", truth["config"])
    assert finished.standings.complete and lifted and lifted[-1].t > max(d.t for d in finished.decisions)
    assert finished.warnings == ()


# ---------------------------------------------------------------- regressions: found while fuzzing the readers


def test_a_profile_number_must_be_finite(scratch: Path) -> None:
    """JSON Schema's "number" takes NaN, Infinity and 10**400; the profile then held NaN, or float() overflowed."""
    for value, shown_as in ((float("nan"), "nan"), (float("inf"), "inf"), (10**400, "100000")):
        profile = json.loads(json.dumps(PROFILES["piratenbillard"]))
        profile["markers"]["markers"][2]["center"][0] = value
        path = scratch / "profile.json"
        path.write_text(json.dumps(profile))
        with pytest.raises(InputError, match=rf"^profile {re.escape(str(path))}: field 'markers.markers\[2\]"
                                             rf"\.center\[0\]' is {shown_as}.*, not a finite number"):
            load_profile(path)
    profile = dict(PROFILES["starcluster"], game={"a": 1})  # an unhashable game: TypeError before
    path.write_text(json.dumps(profile))
    with pytest.raises(InputError, match="field 'game' must be one of starcluster, piratenbillard"):
        load_profile(path)


@pytest.mark.parametrize("game, config, message", [
    ("starcluster", {"round_seconds": float("inf")}, "'round_seconds' must be a finite number >= 1, got inf"),
    ("starcluster", {"round_seconds": 10**400}, "'round_seconds' must be a finite number >= 1, got 1000"),
    ("starcluster", {"optional_rules": {"dead_ball": {"positions": [3], "from_fraction": float("nan")}}},
     "'optional_rules.dead_ball.from_fraction' must be a finite number >= 0, got nan"),
    ("piratenbillard", {"min_confidence": [1] * 10_000}, "'min_confidence' must be a number from 0 to 1, got [1, 1"),
])
def test_engine_configs_refuse_non_finite_and_huge_numbers(game: str, config: dict[str, Any], message: str) -> None:
    """Infinity ended in a NaN clock on the score sheet; 10**400 in an OverflowError. Long values are cut short."""
    with pytest.raises(InputError) as raised:
        make_engine(game, config)
    assert message in str(raised.value) and len(str(raised.value)) < 300


def test_a_pipeline_number_must_fit_a_float() -> None:
    with pytest.raises(InputError, match=r"'pipeline.settle.rest_debounce_ms' must be a number, got 1000+\.\.\.0+$"):
        split_config({"pipeline": {"settle": {"rest_debounce_ms": 10**400}}})


@pytest.mark.parametrize("event_id", [0, False, [], {}, ["L1"], 3.5])
def test_an_event_id_must_be_a_string(event_id: Any) -> None:
    """A session entry's id used to be copied over raw: {} then broke the replay's lookup by id."""
    with pytest.raises(InputError, match="'id' must be a non-empty string"):
        parse_event({"type": "round_start", "t": 1, "id": event_id}, 2)
    assert parse_event({"type": "round_start", "t": 1, "id": None}, 2).id == ""  # null: no id, as before


def test_a_truth_whose_events_is_not_a_list_is_refused(scratch: Path) -> None:
    path = scratch / "truth.json"
    for events in (5, "round_start", {"type": "round_start"}):
        path.write_text(json.dumps({"config": {}, "events": events}))
        with pytest.raises(InputError, match=f"^session file {re.escape(str(path))}: 'events' must be a list"):
            load_session(path)


def test_a_config_file_that_is_a_folder_or_not_utf8_is_refused(scratch: Path) -> None:
    with pytest.raises(InputError, match="cannot be read"):
        load_config(scratch)
    path = scratch / "config.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(InputError, match=f"^config file {re.escape(str(path))} cannot be read .*pass a UTF-8 JSON"):
        load_config(path)
