"""Table profiles: the measured geometry of one physical table, in millimetres.

A profile is a JSON file (see docs/formats.md). Loading checks it against the
game's JSON Schema and then against geometry the schema cannot express
(overlapping slots, a slot off the table), so every later stage can trust it.
Each game's table is one profile kind (`calibration.starcluster_profile`,
`calibration.piratenbillard_profile`), looked up by the file's `game`; the
rest of the referee sees only what every kind answers (`TableProfile`).
Board coordinates: origin at the near-left (Star Cluster Ball) or south-west
(Piratenbillard) corner, x to the right / east, y away from the player / north,
z up out of the table plane.
"""

from __future__ import annotations

import json
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import jsonschema

from calibration.aruco import dictionary_size
from calibration.geometry import Feature, Markers, Point, ProfileError, Rect, Spot
from calibration.piratenbillard_profile import PiratenbillardProfile
from calibration.starcluster_profile import StarClusterProfile
from rules.colours import BallColour, parse_colour
from rules.errors import InputError
from rules.events import Location, shown
from rules.files import loads, non_finite_at

# game name -> its profile kind; a kind builds itself from its JSON and checks its own geometry
PROFILE_KINDS: dict[str, type[StarClusterProfile] | type[PiratenbillardProfile]] = {
    "starcluster": StarClusterProfile,
    "piratenbillard": PiratenbillardProfile,
}
DEFAULT_PROFILES = {game: f"{game}_default.json" for game in PROFILE_KINDS}


class TableProfile(Protocol):
    """What every profile kind answers; game-specific code asks its own kind for more."""

    @property
    def name(self) -> str: ...
    @property
    def game(self) -> str: ...
    @property
    def table(self) -> Rect: ...
    @property
    def ball_diameter_mm(self) -> float: ...
    @property
    def markers(self) -> Markers: ...
    @property
    def ball_colours(self) -> tuple[tuple[str, BallColour], ...]:
        """Default ball colours by player id, for players whose colour the session or command line do not give."""
    @property
    def play_line(self) -> tuple[Point, Point] | None:
        """The line players shoot from, board mm; None when the game has none."""
    @property
    def stacking(self) -> bool:
        """A place can hold more than one ball."""
    @property
    def playing_field(self) -> Rect:
        """Where the game is played out: a hand over it is watched for."""
    @property
    def gutter_areas(self) -> tuple[Rect, ...]:
        """Where a resting ball is out of play, wherever that lies (Star Cluster Ball's gutters)."""
    @property
    def rules_settings(self) -> dict[str, Any]:
        """The rules config settings the table decides (rules.games.table_config fills them in)."""
    @property
    def places(self) -> tuple[tuple[Location, Rect], ...]:
        """The named places that hold a ball (slots, spaces), each with its board rectangle."""
    @property
    def features(self) -> tuple[Feature, ...]:
        """The table's parts, in drawing order."""

    def locate(self, point: Point, tolerance_mm: float = 0.0) -> Spot:
        """Where a board point lies; `tolerance_mm` widens the named places."""


def load_profile(source: str | Path) -> TableProfile:
    """Load a profile file, or a shipped default by game name ("starcluster", "piratenbillard")."""
    name = str(source)
    if name in DEFAULT_PROFILES:
        text = resources.files("calibration.profiles").joinpath(DEFAULT_PROFILES[name]).read_text()
        return parse_profile(json.loads(text), f"default {name}")
    path = Path(source)
    try:
        data = loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ProfileError(
            f"profile {path}: file not found; pass a profile JSON file or one of "
            f"{', '.join(DEFAULT_PROFILES)}"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ProfileError(f"profile {path}: not readable JSON ({error}); fix the file") from None
    return parse_profile(data, str(path))


def parse_profile(data: Any, label: str) -> TableProfile:
    """Validate parsed JSON and build the profile; `label` names it in errors."""
    if not isinstance(data, dict) or not isinstance(data.get("game"), str) or data["game"] not in PROFILE_KINDS:
        raise ProfileError(
            f"profile {label}: field 'game' must be one of {', '.join(DEFAULT_PROFILES)}; "
            "say which game the table is for"
        )
    bad = non_finite_at(data)  # JSON Schema's "number" takes NaN, Infinity and integers past a float's range
    if bad is not None:
        raise ProfileError(f"profile {label}: field '{_field_name(bad)}' is {shown(_get(data, bad))}, not a finite "
                           "number; give it in mm (see docs/formats.md)")
    _check_schema(data, f"{data['game']}_profile.schema.json", f"profile {label}")
    profile = PROFILE_KINDS[data["game"]].from_json(data)
    colours = tuple((player, parse_colour(value, f"profile {label}: ball_colours.{player}"))
                    for player, value in data.get("ball_colours", {}).items())
    profile = replace(profile, ball_colours=colours)
    profile.check(label)
    _check_markers(profile.markers, profile.table, label)
    return profile


def load_schema(name: str) -> dict:
    return json.loads(resources.files("calibration.schemas").joinpath(name).read_text())


def _check_schema(data: Any, schema_name: str, label: str) -> None:
    """Raise with the first schema violation, naming the field by its JSON path."""
    validator = jsonschema.Draft202012Validator(load_schema(schema_name))
    errors = sorted(validator.iter_errors(data), key=lambda e: (len(e.absolute_path), e.message))
    if not errors:
        return
    error = errors[0]
    field = _field_name(error.absolute_path)
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        where = f"{field}." if field else ""
        raise ProfileError(
            f"{label}: field '{where}{missing[0]}' is missing; add it (see docs/formats.md)"
        )
    message = error.message.replace("\n", " ")
    if len(message) > 160:
        message = message[:157] + "..."
    raise ProfileError(f"{label}: field '{field or '(top level)'}': {message}; fix it (see docs/formats.md)")


def _get(data: Any, path: tuple[str | int, ...]) -> Any:
    for key in path:
        data = data[key]
    return data


def _field_name(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _check_markers(markers: Markers, table: Rect, label: str) -> None:
    try:
        size = dictionary_size(markers.dictionary, f"profile {label}: field 'markers.dictionary'")
    except InputError as error:
        raise ProfileError(str(error)) from None
    seen: set[int] = set()
    for i, m in enumerate(markers.markers):
        field = f"markers.markers[{i}]"
        if m.id in seen or m.id >= size:
            raise ProfileError(
                f"profile {label}: field '{field}.id' {m.id} is repeated or not in "
                f"{markers.dictionary} (ids 0..{size - 1}); give each marker its own id"
            )
        seen.add(m.id)
        if not all(table.contains(c) for c in m.corners):
            raise ProfileError(f"profile {label}: field '{field}' lies outside the table; move the marker")
        for j, other in enumerate(markers.markers[:i]):
            if m.rect.overlaps(other.rect):
                raise ProfileError(f"profile {label}: field '{field}' overlaps markers[{j}]; move it")
