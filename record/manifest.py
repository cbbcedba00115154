"""A run folder's manifest (manifest.json): what the run was started with, so the folder alone can be
replayed, reported on and resumed.

Written once, atomically, before the first line of the run; never rewritten. Input files (table
profile, calibration, game config, session) are copied byte for byte into `inputs/` and named here
with their SHA-256, so `referee replay RUN_DIR` and `referee run --resume --out RUN_DIR` need no other
flags, and a resumed run can tell when its video or model is not the one the run began with.
Documented in docs/formats.md ("Run folder manifest").
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rules.colours import BallColour, parse_colour
from rules.errors import InputError
from rules.files import read_json, write_bytes_atomically, write_json_atomically
from rules.games import GAMES

from .run_folder import INPUTS_DIR, MANIFEST_FILE, RunFolderError

FORMAT = "table-referee/run@1"
SOURCE_KINDS = ("file", "stream", "camera")
INPUT_ROLES = ("profile", "calibration", "config", "session")
FIX = "the file is written by `referee run`; start afresh with --fresh if it was damaged"


@dataclass(frozen=True)
class InputFile:
    """An input file of the run: what was given, where its copy is (relative to the folder), its hash."""

    given: str
    copy: str
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {"given": self.given, "copy": self.copy, "sha256": self.sha256}


@dataclass(frozen=True)
class Manifest:
    game: str
    source: str  # as given: a path, a camera index or a URL
    source_kind: str  # one of SOURCE_KINDS
    source_sha256: str | None  # a file's content hash; None for live feeds
    live: bool  # a file played at its own pace through the live path
    paced: bool  # a file played at its own pace, refereed as a file (every frame): the console's recorded matches
    detector: str
    pose: bool
    pose_model: str | None  # the model file used (None: bodies not watched)
    pose_model_sha256: str | None
    tracks: bool
    annotate: bool
    players: tuple[str, ...] | None
    rules_config: dict[str, Any]  # the rules engine's settings, as `referee replay` needs them
    inputs: dict[str, InputFile] = field(default_factory=dict)  # by role (INPUT_ROLES)
    referee_version: str = ""
    created_at: str = ""  # ISO 8601, UTC
    colours: tuple[tuple[str, BallColour], ...] = ()  # the ball colours given on the command line, by player

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "game": self.game, "created_at": self.created_at,
            "referee_version": self.referee_version,
            "source": {"given": self.source, "kind": self.source_kind, "sha256": self.source_sha256,
                       "live": self.live, "paced": self.paced},
            "detector": self.detector,
            "pose": {"on": self.pose, "model": self.pose_model, "sha256": self.pose_model_sha256},
            "tracks": self.tracks, "annotate": self.annotate,
            "players": None if self.players is None else list(self.players),
            "rules_config": self.rules_config,
            "inputs": {role: item.to_json() for role, item in self.inputs.items()},
            **({"colours": {player: colour.to_json() for player, colour in self.colours}} if self.colours else {}),
        }

    def input_path(self, folder: Path, role: str) -> Path | None:
        """The copy of an input in `folder`, or None when the run had none."""
        item = self.inputs.get(role)
        return None if item is None else folder / item.copy


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def copy_input(folder: Path, role: str, given: str, data: bytes, suffix: str) -> InputFile:
    """Keep an input file's bytes in the folder's inputs/ (created) as ROLE+SUFFIX; return its entry."""
    inputs = folder / INPUTS_DIR
    inputs.mkdir(exist_ok=True)
    copy = inputs / f"{role}{suffix or '.json'}"
    write_bytes_atomically(copy, data)  # replaces only the copy a start killed before its manifest left
    return InputFile(given, f"{INPUTS_DIR}/{copy.name}", hashlib.sha256(data).hexdigest())


def write_manifest(folder: Path, manifest: Manifest) -> Path:
    path = folder / MANIFEST_FILE
    if path.exists():
        raise RunFolderError(f"{path} exists already; a run folder is started once (resume it with --resume)")
    write_json_atomically(path, manifest.to_json())
    return path


def read_manifest(folder: str | Path) -> Manifest:
    """The folder's manifest, checked; RunFolderError names what is missing or wrong."""
    folder = Path(folder)
    path = folder / MANIFEST_FILE
    if not path.exists():
        raise RunFolderError(f"run folder {folder} has no {MANIFEST_FILE} (not a run folder, or one written before "
                             "manifests existed); replay it with `referee replay EVENTS.jsonl --game ...`, or "
                             "start afresh with --fresh")
    data = read_json(path, "manifest", fix=FIX, error=RunFolderError)
    try:
        return _parse(data, folder)
    except (KeyError, TypeError, ValueError) as problem:
        raise RunFolderError(f"{path}: {problem}; {FIX}") from None


def _parse(data: Any, folder: Path) -> Manifest:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"'format' is not {FORMAT!r}")
    game = _text(data, "game")
    if game not in GAMES:
        raise ValueError(f"'game' is {game!r}, not one of {', '.join(GAMES)}")
    source, pose = _object(data, "source"), _object(data, "pose")
    kind = _text(source, "kind")
    if kind not in SOURCE_KINDS:
        raise ValueError(f"'source.kind' is {kind!r}, not one of {', '.join(SOURCE_KINDS)}")
    players = data.get("players")
    if players is not None and not (isinstance(players, list) and all(isinstance(p, str) for p in players)):
        raise ValueError("'players' is not a list of colours or null")
    inputs = {}
    for role, item in _object(data, "inputs").items():
        if role not in INPUT_ROLES or not isinstance(item, dict):
            raise ValueError(f"'inputs.{role}' is not one of {', '.join(INPUT_ROLES)} with an object")
        entry = InputFile(_text(item, "given"), _text(item, "copy"), _text(item, "sha256"))
        copy = (folder / entry.copy).resolve()
        if folder.resolve() not in copy.parents:
            raise ValueError(f"'inputs.{role}.copy' points outside the run folder")
        inputs[role] = entry
    rules_config = _object(data, "rules_config")
    colours = data.get("colours", {})
    if not isinstance(colours, dict):
        raise ValueError("'colours' is not an object of ball colours by player")
    try:
        given = tuple((player, parse_colour(value, f"'colours.{player}'")) for player, value in colours.items())
    except InputError as error:
        raise ValueError(str(error)) from None
    return Manifest(
        game=game, source=_text(source, "given"), source_kind=kind, source_sha256=_optional_text(source, "sha256"),
        live=_flag(source, "live"), paced=_flag(source, "paced") if "paced" in source else False, detector=_text(data, "detector"), pose=_flag(pose, "on"),
        pose_model=_optional_text(pose, "model"), pose_model_sha256=_optional_text(pose, "sha256"),
        tracks=_flag(data, "tracks"), annotate=_flag(data, "annotate"),
        players=None if players is None else tuple(players), rules_config=rules_config, inputs=inputs,
        referee_version=_text(data, "referee_version"), created_at=_text(data, "created_at"), colours=given)


def _object(data: dict[str, Any], name: str) -> dict[str, Any]:
    value = data.get(name)
    if not isinstance(value, dict):
        raise ValueError(f"'{name}' is not an object")
    return value


def _text(data: dict[str, Any], name: str) -> str:
    value = data.get(name)
    if not isinstance(value, str):
        raise ValueError(f"'{name}' is not a string")
    return value


def _optional_text(data: dict[str, Any], name: str) -> str | None:
    value = data.get(name)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"'{name}' is not a string or null")
    return value


def _flag(data: dict[str, Any], name: str) -> bool:
    value = data.get(name)
    if not isinstance(value, bool):
        raise ValueError(f"'{name}' is not true or false")
    return value

