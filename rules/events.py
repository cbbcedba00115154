"""The event model: what the referee observes and what the umpire says.

Two layers travel as JSON lines, one object per line with a `type` field:

* observations, emitted by the vision pipeline (a shot started, the table
  settled with a snapshot of every visible ball, a Play Line crossing, a table
  movement, a ball lifted off or put on the table by hand);
* umpire and control inputs (game and round start and end, the out-of-balls
  choice, confirming or overturning a call, correcting a snapshot, adding a
  foul the camera missed).

Every event carries `t`, seconds from the start of the recording, taken from
the video's presentation timestamps so replay timing matches the footage. An
event may carry an `id`; when it does not, the log reader gives it `L<line>`,
which umpire inputs use to point at it. docs/events.md documents every field.
"""

from __future__ import annotations

import math
import reprlib
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

from .colours import BallColour, parse_colour
from .errors import InputError


class LogError(InputError):
    """A malformed event: the message names the line, the field and the fix."""


_SHOWN = reprlib.Repr()
_SHOWN.maxlevel, _SHOWN.maxstring, _SHOWN.maxother, _SHOWN.maxlong = 3, 60, 60, 40


def shown(value: Any) -> str:
    """A value from a file, for an error message: its repr, cut short (a long string, a deep list)."""
    return _SHOWN.repr(value)


class Place(str, Enum):
    """Where a ball rests, as the vision pipeline reports it."""

    SLOT = "slot"  # a slot of an Astrolabe Position (Star Cluster Ball)
    PLAY_AREA = "play_area"  # back in the play area below the board
    GUTTER = "gutter"  # in a gutter: out for the round
    GROUPED = "grouped"  # at rest on the board or in the Astrolabe, not in a slot
    CELL = "cell"  # a space of the Piratenbillard board
    OFF_TABLE = "off_table"  # left the table or the board


class Source(str, Enum):
    VISION = "vision"
    UMPIRE = "umpire"


@dataclass(frozen=True, order=True)
class Location:
    """A resting place. `position`/`slot` only for slots, `row`/`col` only for cells."""

    place: Place
    position: int | None = None  # Astrolabe Position 1 (closest) .. 3 (furthest)
    slot: int | None = None  # 0-based slot index within the position, in profile order
    row: int | None = None  # Piratenbillard row 0 (north) .. 9 (south)
    col: int | None = None  # Piratenbillard column 0 (west) .. 9 (east)

    def __post_init__(self) -> None:
        if self.place is Place.SLOT:
            if self.position is None or self.slot is None:
                raise ValueError("a slot location needs 'position' and 'slot'")
            if self.position < 1 or self.slot < 0:
                raise ValueError("'position' counts from 1 and 'slot' from 0")
        if self.place is Place.CELL and (self.row is None or self.col is None):
            raise ValueError("a cell location needs 'row' and 'col'")
        # only its own coordinates: locations of one place then always compare (snapshots are sorted)
        if ((self.place is not Place.SLOT and (self.position is not None or self.slot is not None))
                or (self.place is not Place.CELL and (self.row is not None or self.col is not None))):
            own = {Place.SLOT: ("position", "slot"), Place.CELL: ("row", "col")}.get(self.place, ())
            stray = [key for key in ("position", "slot", "row", "col")
                     if key not in own and getattr(self, key) is not None]
            raise ValueError(f"a {self.place.value} location has no {' or '.join(map(repr, stray))}; only a slot has "
                             "'position' and 'slot', only a cell 'row' and 'col': remove them or fix 'place'")

    @staticmethod
    def slot_at(position: int, slot: int) -> "Location":
        return Location(Place.SLOT, position=position, slot=slot)

    @staticmethod
    def cell_at(row: int, col: int) -> "Location":
        return Location(Place.CELL, row=row, col=col)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"place": self.place.value}
        for key in ("position", "slot", "row", "col"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data

    @staticmethod
    def from_json(data: Any, where: str) -> "Location":
        if not isinstance(data, dict):
            raise ValueError(f"{where} must be an object like {{\"place\": \"slot\", \"position\": 1, \"slot\": 0}}")
        try:
            place = Place(data.get("place"))
        except ValueError:
            known = ", ".join(p.value for p in Place)
            raise ValueError(f"{where}.place is {shown(data.get('place'))}; use one of {known}") from None
        ints = {}
        for key in ("position", "slot", "row", "col"):
            if key in data:
                ints[key] = _int(data[key], f"{where}.{key}")
        try:
            return Location(place, **ints)
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None

    def __str__(self) -> str:
        if self.place is Place.SLOT:
            return f"P{self.position}/slot {self.slot}"
        if self.place is Place.CELL:
            return f"cell ({self.row},{self.col})"
        return self.place.value


@dataclass(frozen=True)
class BallSighting:
    """One visible ball at rest: whose it is (its colour) and where it lies."""

    owner: str
    at: Location
    confidence: float = 1.0

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"owner": self.owner, "at": self.at.to_json()}
        if self.confidence != 1.0:
            data["confidence"] = self.confidence
        return data


@dataclass(frozen=True)
class Snapshot:
    """Every visible ball once the table has settled. Order carries no meaning."""

    balls: tuple[BallSighting, ...]

    def count(self, owner: str, place: Place | None = None) -> int:
        return sum(1 for b in self.balls if b.owner == owner and (place is None or b.at.place is place))

    def to_json(self) -> list[dict[str, Any]]:
        return [b.to_json() for b in sorted(self.balls, key=lambda b: (b.owner, b.at))]

    @staticmethod
    def from_json(data: Any, where: str) -> "Snapshot":
        if not isinstance(data, list):
            raise ValueError(f"{where} must be a list of balls")
        balls = []
        for i, item in enumerate(data):
            here = f"{where}[{i}]"
            if not isinstance(item, dict):
                raise ValueError(f"{here} must be an object with 'owner' and 'at'")
            owner = _str(item.get("owner"), f"{here}.owner")
            at = Location.from_json(item.get("at"), f"{here}.at")
            balls.append(BallSighting(owner, at, _confidence(item.get("confidence", 1.0), f"{here}.confidence")))
        return Snapshot(tuple(balls))


# --------------------------------------------------------------------------- events


@dataclass(frozen=True)
class Event:
    """Common fields of every event; subclasses add their own."""

    TYPE: ClassVar[str] = ""
    t: float
    id: str = ""
    source: Source | None = None  # None: observations come from vision, the rest from the umpire

    def __post_init__(self) -> None:
        if self.source is None:
            object.__setattr__(self, "source", _DEFAULT_SOURCE[self.TYPE])

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.TYPE, "t": self.t}
        if self.id:
            data["id"] = self.id
        if self.source is not None and self.source is not _DEFAULT_SOURCE[self.TYPE]:
            data["source"] = self.source.value
        data.update(self._fields_json())
        return data

    def _fields_json(self) -> dict[str, Any]:
        return {}


@dataclass(frozen=True)
class PlayerSpec:
    """A player (or team) of a game: `id` names them, and is their ball colour's name unless `colour` says it."""

    id: str
    name: str = ""
    side: str | None = None  # Star Cluster Ball: "right" or "left"
    seat: int | None = None  # Piratenbillard: 0 south, 1 west, 2 north, 3 east
    colour: BallColour | None = None  # their balls' colour, for vision and the pages; the engines never read it

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id}
        if self.name:
            data["name"] = self.name
        if self.side is not None:
            data["side"] = self.side
        if self.seat is not None:
            data["seat"] = self.seat
        if self.colour is not None:
            data["colour"] = self.colour.to_json()
        return data


# ---- observations -------------------------------------------------------------------


@dataclass(frozen=True)
class ShotStarted(Event):
    """A shot began: a ball crossed the Play Line, or a struck ball left its space."""

    TYPE: ClassVar[str] = "shot_started"
    player: str | None = None  # who shot; None lets the engine use whose turn it is
    ball_from: Location | None = None  # Piratenbillard: the space the struck ball left

    def _fields_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.player is not None:
            data["player"] = self.player
        if self.ball_from is not None:
            data["ball_from"] = self.ball_from.to_json()
        return data


@dataclass(frozen=True)
class TableSettled(Event):
    """All visible balls came to rest; the snapshot lists every one of them."""

    TYPE: ClassVar[str] = "table_settled"
    snapshot: Snapshot = field(default_factory=lambda: Snapshot(()))
    confidence: float = 1.0

    def _fields_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"balls": self.snapshot.to_json()}
        if self.confidence != 1.0:
            data["confidence"] = self.confidence
        return data


@dataclass(frozen=True)
class PlayLineCrossing(Event):
    """A body part of the shooting player crossed the Play Line during a shot."""

    TYPE: ClassVar[str] = "play_line_crossing"
    player: str | None = None
    body_part: str = "unknown"
    confidence: float = 1.0

    def _fields_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"body_part": self.body_part, "confidence": self.confidence}
        if self.player is not None:
            data["player"] = self.player
        return data


@dataclass(frozen=True)
class TableMovement(Event):
    """The table moved against the camera by `magnitude_mm` (a shove or a bump)."""

    TYPE: ClassVar[str] = "table_movement"
    magnitude_mm: float = 0.0
    player: str | None = None
    confidence: float = 1.0

    def _fields_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"magnitude_mm": self.magnitude_mm, "confidence": self.confidence}
        if self.player is not None:
            data["player"] = self.player
        return data


@dataclass(frozen=True)
class BallLifted(Event):
    """A hand took a ball off the table (a captured ball, a gutter ball, a returned ball)."""

    TYPE: ClassVar[str] = "ball_lifted"
    owner: str = ""
    at: Location = field(default_factory=lambda: Location(Place.PLAY_AREA))

    def _fields_json(self) -> dict[str, Any]:
        return {"owner": self.owner, "at": self.at.to_json()}


@dataclass(frozen=True)
class BallPlaced(Event):
    """A hand put a ball on the table (setting up, or putting a displaced ball back)."""

    TYPE: ClassVar[str] = "ball_placed"
    owner: str = ""
    at: Location = field(default_factory=lambda: Location(Place.PLAY_AREA))

    def _fields_json(self) -> dict[str, Any]:
        return {"owner": self.owner, "at": self.at.to_json()}


# ---- umpire and control inputs --------------------------------------------------------


@dataclass(frozen=True)
class GameStart(Event):
    """A game begins: who plays, on which side or seat."""

    TYPE: ClassVar[str] = "game_start"
    players: tuple[PlayerSpec, ...] = ()
    by: str = ""  # who set the match up (an umpire's name), for the record

    def _fields_json(self) -> dict[str, Any]:
        return {"players": [p.to_json() for p in self.players], **_umpire_fields(self)}


@dataclass(frozen=True)
class RoundStart(Event):
    TYPE: ClassVar[str] = "round_start"
    by: str = ""

    def _fields_json(self) -> dict[str, Any]:
        return _umpire_fields(self)


@dataclass(frozen=True)
class RoundEnd(Event):
    """The umpire ends the round (the engine also ends it from the clock if configured)."""

    TYPE: ClassVar[str] = "round_end"
    by: str = ""

    def _fields_json(self) -> dict[str, Any]:
        return _umpire_fields(self)


@dataclass(frozen=True)
class _ClockInput(Event):
    """An umpire input on the round clock: who gave it and why."""

    by: str = ""
    reason: str = ""

    def _fields_json(self) -> dict[str, Any]:
        return _umpire_fields(self)


@dataclass(frozen=True)
class RoundPause(_ClockInput):
    """The umpire stops the round clock (an injury, a dispute, a table to fix); play waits until round_resume."""

    TYPE: ClassVar[str] = "round_pause"


@dataclass(frozen=True)
class RoundResume(_ClockInput):
    """The umpire restarts the round clock stopped by round_pause."""

    TYPE: ClassVar[str] = "round_resume"


@dataclass(frozen=True)
class OutOfBallsChoice(Event):
    """The opponent of a player who ran out of balls chooses: bank or Final Sequence."""

    TYPE: ClassVar[str] = "out_of_balls_choice"
    player: str = ""
    choice: str = "bank"  # "bank" | "final_sequence"
    by: str = ""
    CHOICES: ClassVar[tuple[str, ...]] = ("bank", "final_sequence")

    def _fields_json(self) -> dict[str, Any]:
        return {"player": self.player, "choice": self.choice, **_umpire_fields(self)}


@dataclass(frozen=True)
class Confirm(Event):
    """The umpire confirms the call caused by event `target`."""

    TYPE: ClassVar[str] = "confirm"
    target: str = ""
    by: str = ""
    reason: str = ""

    def _fields_json(self) -> dict[str, Any]:
        return _umpire_fields(self)


@dataclass(frozen=True)
class Overturn(Event):
    """The umpire overturns event `target`: replay proceeds as if it never happened."""

    TYPE: ClassVar[str] = "overturn"
    target: str = ""
    by: str = ""
    reason: str = ""

    def _fields_json(self) -> dict[str, Any]:
        return _umpire_fields(self)


@dataclass(frozen=True)
class SnapshotCorrection(Event):
    """The umpire replaces the snapshot of `table_settled` event `target`."""

    TYPE: ClassVar[str] = "snapshot_correction"
    target: str = ""
    snapshot: Snapshot = field(default_factory=lambda: Snapshot(()))
    by: str = ""
    reason: str = ""

    def _fields_json(self) -> dict[str, Any]:
        data = _umpire_fields(self)
        data["balls"] = self.snapshot.to_json()
        return data


@dataclass(frozen=True)
class UmpireFoul(Event):
    """A foul the umpire calls: interference, touching a moving ball, a missed crossing.

    It applies to the shot in progress or, between shots, to the last shot.
    `free_shot` awards the opponent a free shot (competition rules).
    """

    TYPE: ClassVar[str] = "umpire_foul"
    player: str = ""
    foul: str = "interference"  # "interference" | "touching_moving_ball" | "play_line" | "table_movement"
    free_shot: bool = False
    by: str = ""
    reason: str = ""
    FOULS: ClassVar[tuple[str, ...]] = ("interference", "touching_moving_ball", "play_line", "table_movement")

    def _fields_json(self) -> dict[str, Any]:
        data = {"player": self.player, "foul": self.foul, "free_shot": self.free_shot}
        data.update(_umpire_fields(self))
        return data


def _umpire_fields(event: Any) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key in ("target", "by", "reason"):
        if getattr(event, key, ""):
            data[key] = getattr(event, key)
    return data


OBSERVATIONS: tuple[type[Event], ...] = (
    ShotStarted, TableSettled, PlayLineCrossing, TableMovement, BallLifted, BallPlaced,
)
UMPIRE_INPUTS: tuple[type[Event], ...] = (
    GameStart, RoundStart, RoundEnd, RoundPause, RoundResume, OutOfBallsChoice, Confirm, Overturn, SnapshotCorrection,
    UmpireFoul,
)
EVENT_TYPES: dict[str, type[Event]] = {cls.TYPE: cls for cls in OBSERVATIONS + UMPIRE_INPUTS}
_DEFAULT_SOURCE: dict[str, Source] = {
    **{cls.TYPE: Source.VISION for cls in OBSERVATIONS},
    **{cls.TYPE: Source.UMPIRE for cls in UMPIRE_INPUTS},
}


# --------------------------------------------------------------------------- parsing


def parse_event(data: Any, line: int | None = None) -> Event:
    """Build an event from one decoded JSON object; raise LogError naming the problem."""
    where = f"line {line}" if line is not None else "event"
    try:
        return _parse(data, line)
    except ValueError as error:
        raise LogError(f"{where}: {error}") from None


def _parse(data: Any, line: int | None) -> Event:
    if not isinstance(data, dict):
        raise ValueError("an event must be a JSON object with 'type' and 't'")
    kind = data.get("type")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown event type {shown(kind)}; use one of {', '.join(sorted(EVENT_TYPES))}")
    common: dict[str, Any] = {"t": _finite(data.get("t"), "t", "a number of seconds >= 0 (not NaN or Infinity)")}
    event_id = data.get("id", f"L{line}" if line is not None else "")
    common["id"] = _str(event_id, "id") if event_id not in (None, "") else ""
    if "source" in data:
        source = data["source"]
        if source not in ("vision", "umpire"):
            raise ValueError(f"'source' must be 'vision' or 'umpire', got {shown(source)}")
        common["source"] = Source(source)
    else:
        common["source"] = _DEFAULT_SOURCE[cls.TYPE]
    return cls(**common, **_PARSERS[cls.TYPE](data))


def _str(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"'{name}' must be a non-empty string, got {shown(value)}")
    return value


def _int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"'{name}' must be an integer, got {shown(value)}")
    return value


def _finite(value: Any, name: str, what: str) -> float:
    """A finite number >= 0 (`what` says which, for the message): never NaN, Infinity or past a float's range."""
    number = None
    if not isinstance(value, bool) and isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # an integer too large for a float
            pass
    if number is None or not math.isfinite(number) or number < 0:
        raise ValueError(f"'{name}' must be {what}, got {shown(value)}")
    return number


def _confidence(value: Any, name: str) -> float:
    number = _finite(value, name, "a number from 0 to 1")
    if number > 1.0:
        raise ValueError(f"'{name}' must be a number from 0 to 1, got {shown(value)}")
    return number


def _optional_str(data: dict[str, Any], key: str) -> str | None:
    return _str(data[key], key) if data.get(key) is not None else None


def _players(data: dict[str, Any]) -> dict[str, Any]:
    raw = data.get("players")
    if not isinstance(raw, list) or not raw:
        raise ValueError("'players' must be a non-empty list of {\"id\": colour, ...}")
    players = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise ValueError(f"players[{i}] must be an object with an 'id'")
        side = item.get("side")
        if side is not None and side not in ("right", "left"):
            raise ValueError(f"players[{i}].side must be 'right' or 'left', got {shown(side)}")
        seat = item.get("seat")
        if seat is not None and (_int(seat, f"players[{i}].seat") not in (0, 1, 2, 3)):
            raise ValueError(f"players[{i}].seat must be 0 (south), 1 (west), 2 (north) or 3 (east), got {shown(seat)}")
        name = item.get("name", "")
        if not isinstance(name, str):
            raise ValueError(f"players[{i}].name must be a string")
        colour = None
        if item.get("colour") is not None:
            try:
                colour = parse_colour(item["colour"], f"players[{i}].colour")
            except InputError as error:
                raise ValueError(str(error)) from None
        players.append(PlayerSpec(_str(item.get("id"), f"players[{i}].id"), name, side, seat, colour))
    ids = [p.id for p in players]
    if len(set(ids)) != len(ids):
        raise ValueError(f"player ids must differ, got {shown(ids)}")
    return {"players": tuple(players), **_by(data)}


def _umpire(data: dict[str, Any], need_target: bool) -> dict[str, Any]:
    fields: dict[str, Any] = {"target": _str(data.get("target"), "target")} if need_target else {}
    return {**fields, **_by(data, "by", "reason")}


def _by(data: dict[str, Any], *keys: str) -> dict[str, str]:
    """Who gave an umpire input, and why: optional strings."""
    fields = {}
    for key in keys or ("by",):
        value = data.get(key, "")
        if not isinstance(value, str):
            raise ValueError(f"'{key}' must be a string")
        fields[key] = value
    return fields


def _choice(data: dict[str, Any]) -> dict[str, Any]:
    choice = data.get("choice")
    if choice not in OutOfBallsChoice.CHOICES:
        raise ValueError(f"'choice' must be 'bank' or 'final_sequence', got {shown(choice)}")
    return {"player": _str(data.get("player"), "player"), "choice": choice, **_by(data)}


def _umpire_foul(data: dict[str, Any]) -> dict[str, Any]:
    foul = data.get("foul", "interference")
    if foul not in UmpireFoul.FOULS:
        raise ValueError(f"'foul' must be one of {', '.join(UmpireFoul.FOULS)}, got {shown(foul)}")
    free_shot = data.get("free_shot", False)
    if not isinstance(free_shot, bool):
        raise ValueError("'free_shot' must be true or false")
    fields = {"player": _str(data.get("player"), "player"), "foul": foul, "free_shot": free_shot}
    fields.update(_umpire(data, need_target=False))
    return fields


def _magnitude(data: dict[str, Any]) -> float:
    return _finite(data.get("magnitude_mm"), "magnitude_mm", "a number >= 0 (not NaN or Infinity)")


_PARSERS: dict[str, Any] = {
    "shot_started": lambda d: {
        "player": _optional_str(d, "player"),
        "ball_from": Location.from_json(d["ball_from"], "ball_from") if d.get("ball_from") is not None else None,
    },
    "table_settled": lambda d: {
        "snapshot": Snapshot.from_json(d.get("balls"), "balls"),
        "confidence": _confidence(d.get("confidence", 1.0), "confidence"),
    },
    "play_line_crossing": lambda d: {
        "player": _optional_str(d, "player"),
        "body_part": _str(d.get("body_part", "unknown"), "body_part"),
        "confidence": _confidence(d.get("confidence", 1.0), "confidence"),
    },
    "table_movement": lambda d: {
        "magnitude_mm": _magnitude(d),
        "player": _optional_str(d, "player"),
        "confidence": _confidence(d.get("confidence", 1.0), "confidence"),
    },
    "ball_lifted": lambda d: {"owner": _str(d.get("owner"), "owner"), "at": Location.from_json(d.get("at"), "at")},
    "ball_placed": lambda d: {"owner": _str(d.get("owner"), "owner"), "at": Location.from_json(d.get("at"), "at")},
    "game_start": _players,
    "round_start": _by,
    "round_end": _by,
    "round_pause": lambda d: _umpire(d, need_target=False),
    "round_resume": lambda d: _umpire(d, need_target=False),
    "out_of_balls_choice": _choice,
    "confirm": lambda d: _umpire(d, need_target=True),
    "overturn": lambda d: _umpire(d, need_target=True),
    "snapshot_correction": lambda d: {
        **_umpire(d, need_target=True),
        "snapshot": Snapshot.from_json(d.get("balls"), "balls"),
    },
    "umpire_foul": _umpire_foul,
}
