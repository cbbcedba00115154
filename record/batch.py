"""The files of `referee batch`: the manifest that names a tournament's matches, and each match's completion stamp.

The manifest is CSV (a header row) or JSON lines (one object a line), one match per row: `id`, `video`, `game`,
and optionally `profile` (a profile file, or a shipped profile's name), `calibration`, `session`, `config`,
`players` (ids separated by `;` or `,` in CSV, a list in JSON) and `pose` (true / false). Relative paths are read
from the manifest's folder. Every problem is one line naming the row and the field.

A match is complete when its folder holds `complete.json`, written atomically after everything else: the hashes
of what the match was refereed from (the video, every input file, the settings, the referee's version) and of
every file it wrote. A later batch skips a match whose stamp still matches both; anything else (no stamp, an
input or an output changed, a half-written folder left by Ctrl-C) is refereed again. Documented in
docs/formats.md ("Batch manifest").
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rules.errors import InputError
from rules.files import read_json, read_text, write_json_atomically
from rules.games import GAMES

from .manifest import sha256_file

FIELDS = ("id", "video", "game", "profile", "calibration", "session", "config", "players", "pose")
REQUIRED = ("id", "video", "game")
FILE_FIELDS = ("video", "calibration", "session", "config")
ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")  # a folder name on any system
STAMP_FILE = "complete.json"
ERROR_FILE = "error.json"
STAMP_FORMAT = "table-referee/batch-match@1"
ERROR_FORMAT = "table-referee/batch-error@1"


class ManifestError(InputError):
    """A batch manifest that cannot be read as given."""


@dataclass(frozen=True)
class MatchSpec:
    """One match of the manifest, its paths resolved."""

    match_id: str
    video: Path
    game: str
    profile: str | None = None  # a profile file's path, or a shipped profile's name; None: the game's own
    calibration: Path | None = None
    session: Path | None = None
    config: Path | None = None
    players: tuple[str, ...] | None = None
    pose: bool = True

    def fingerprint(self, referee_version: str, pose_model: Path | None) -> dict[str, Any]:
        """What the match's outputs depend on: hashes of its files, its settings, the referee's version."""
        files = {name: sha256_file(path) for name in FILE_FIELDS
                 if (path := getattr(self, name)) is not None}
        profile = self.profile
        if profile is not None and Path(profile).is_file():
            files["profile"] = sha256_file(profile)
        if self.pose and pose_model is not None and pose_model.is_file():
            files["pose_model"] = sha256_file(pose_model)
        return {"files": files, "game": self.game, "profile": None if "profile" in files else profile,
                "players": list(self.players) if self.players is not None else None, "pose": self.pose,
                "referee": referee_version}


def read_manifest(path: str | Path) -> list[MatchSpec]:
    """Every match of a CSV or JSON-lines manifest; any problem raises ManifestError naming its line and field."""
    path = Path(path)
    text = read_text(path, "batch manifest", fix="give a CSV or JSON-lines file naming one match a row "
                                                 "(docs/formats.md, 'Batch manifest')", error=ManifestError)
    rows = _json_rows(path, text) if _looks_like_json(text) else _csv_rows(path, text)
    matches: list[MatchSpec] = []
    seen: dict[str, int] = {}
    for line, row in rows:
        match = _match(path, line, row)
        if match.match_id in seen:
            raise ManifestError(f"{path} line {line}: id {match.match_id!r} is already the id of line "
                                f"{seen[match.match_id]}; give each match its own id")
        seen[match.match_id] = line
        matches.append(match)
    if not matches:
        raise ManifestError(f"{path} names no match; give one row per match (docs/formats.md, 'Batch manifest')")
    return matches


def _looks_like_json(text: str) -> bool:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first.startswith("{")


def _json_rows(path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise ManifestError(f"{path} line {number} is not JSON ({error.msg}); give one JSON object a line") \
                from None
        if not isinstance(row, dict):
            raise ManifestError(f"{path} line {number} is not a JSON object; give one object a line")
        rows.append((number, row))
    return rows


def _csv_rows(path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    reader = csv.reader(text.splitlines())
    header = next(reader, None)
    if header is None:
        return []
    header = [name.strip() for name in header]
    rows = []
    for row in reader:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise ManifestError(f"{path} line {reader.line_num} has {len(row)} cells where the header has "
                                f"{len(header)}; give one cell per column (quote a cell holding a comma)")
        rows.append((reader.line_num, {name: cell.strip() for name, cell in zip(header, row) if cell.strip()}))
    return rows


def _match(path: Path, line: int, row: dict[str, Any]) -> MatchSpec:
    where = f"{path} line {line}"
    unknown = sorted(set(row) - set(FIELDS))
    if unknown:
        raise ManifestError(f"{where}: unknown field {unknown[0]!r}; the fields are {', '.join(FIELDS)}")
    for name in REQUIRED:
        if row.get(name) in (None, ""):
            raise ManifestError(f"{where}: field {name!r} is missing; every match needs {', '.join(REQUIRED)}")
    for name, value in row.items():
        if name not in ("players", "pose") and not isinstance(value, str):
            raise ManifestError(f"{where}: field {name!r} must be text, got {json.dumps(value)}")
    match_id = row["id"]
    if not ID_PATTERN.match(match_id):
        raise ManifestError(f"{where}: field 'id' {match_id!r} must be 1-64 letters, digits, '.', '_' or '-' "
                            "(it names the match's folder)")
    if row["game"] not in GAMES:
        raise ManifestError(f"{where}: field 'game' is {row['game']!r}; give one of {', '.join(sorted(GAMES))}")
    files: dict[str, Path] = {}
    for name in FILE_FIELDS:
        if row.get(name):
            file = (path.parent / row[name]).resolve()
            if not file.is_file():
                raise ManifestError(f"{where}: field {name!r}: {file} is not a file; give a path relative to "
                                    "the manifest's folder, or an absolute one")
            files[name] = file
    profile = row.get("profile")
    if profile and (path.parent / profile).is_file():
        profile = str((path.parent / profile).resolve())
    elif profile and profile not in GAMES:
        raise ManifestError(f"{where}: field 'profile': {profile!r} is neither a file nor a shipped profile "
                            f"({', '.join(sorted(GAMES))}); give a profile JSON relative to the manifest's folder")
    return MatchSpec(match_id, files["video"], row["game"], profile, files.get("calibration"),
                     files.get("session"), files.get("config"), _players(where, row.get("players")),
                     _pose(where, row.get("pose", True)))


def _players(where: str, value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = [str(p).strip() for p in value] if isinstance(value, list) else \
        [p.strip() for p in re.split(r"[;,]", value)] if isinstance(value, str) else None
    if items is None or not all(items):
        raise ManifestError(f"{where}: field 'players' must list player ids (e.g. red;blue), got {value!r}")
    return tuple(items)


def _pose(where: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "yes", "1", "false", "no", "0"):
        return value.lower() in ("true", "yes", "1")
    raise ManifestError(f"{where}: field 'pose' must be true or false, got {value!r}")


# ------------------------------------------------------------------------------------------------- stamps
def write_stamp(match_dir: Path, match_id: str, fingerprint: dict[str, Any], outputs: list[Path],
                result: dict[str, Any], seconds: float) -> None:
    """The match is complete: written last, atomically, with the hash of every output (relative to the folder)."""
    write_json_atomically(match_dir / STAMP_FILE, {
        "format": STAMP_FORMAT, "id": match_id, "inputs": fingerprint,
        "outputs": {str(p.relative_to(match_dir)): sha256_file(p) for p in outputs},
        "result": result, "seconds": round(seconds, 3)})


def read_stamp(match_dir: Path, fingerprint: dict[str, Any]) -> dict[str, Any] | None:
    """The match's stamp if it is still true: same inputs, every output there with the same hash; else None."""
    path = match_dir / STAMP_FILE
    if not path.is_file():
        return None
    try:
        stamp = read_json(path, "match stamp", fix="it is rewritten when the match is refereed again")
    except InputError:
        return None  # unreadable: the match is refereed again, and the stamp rewritten
    if not isinstance(stamp, dict) or stamp.get("format") != STAMP_FORMAT or stamp.get("inputs") != fingerprint:
        return None
    outputs = stamp.get("outputs")
    if not isinstance(outputs, dict) or not outputs:
        return None
    for name, digest in outputs.items():
        file = match_dir / name
        if not file.is_file() or sha256_file(file) != digest:
            return None
    return stamp


def write_error(match_dir: Path, match_id: str, message: str, kind: str) -> None:
    write_json_atomically(match_dir / ERROR_FILE, {"format": ERROR_FORMAT, "id": match_id, "error": message,
                                                   "type": kind})
