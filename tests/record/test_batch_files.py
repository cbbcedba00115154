"""The batch manifest (CSV and JSON lines) and the match stamp that says a match is complete."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from record.batch import ManifestError, MatchSpec, read_manifest, read_stamp, write_stamp


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "videos").mkdir()
    for name in ("a.mp4", "b.mp4"):
        (tmp_path / "videos" / name).write_bytes(name.encode())
    (tmp_path / "s.json").write_text("{}")
    return tmp_path


def test_csv_and_json_lines_name_the_same_matches(files: Path) -> None:
    (files / "m.csv").write_text("id,video,game,session,players,pose\n"
                                 "t1-r1,videos/a.mp4,starcluster,s.json,ana;ben,false\n"
                                 "\n"
                                 "t2-r1,videos/b.mp4,piratenbillard,,,\n")
    (files / "m.jsonl").write_text(
        json.dumps({"id": "t1-r1", "video": "videos/a.mp4", "game": "starcluster", "session": "s.json",
                    "players": ["ana", "ben"], "pose": False}) + "\n\n"
        + json.dumps({"id": "t2-r1", "video": str(files / "videos" / "b.mp4"), "game": "piratenbillard"}) + "\n")
    from_csv, from_json = read_manifest(files / "m.csv"), read_manifest(files / "m.jsonl")
    assert from_csv == from_json
    assert from_csv[0] == MatchSpec("t1-r1", (files / "videos" / "a.mp4").resolve(), "starcluster",
                                    session=(files / "s.json").resolve(), players=("ana", "ben"), pose=False)
    assert from_csv[1].pose is True and from_csv[1].players is None and from_csv[1].profile is None


@pytest.mark.parametrize("rows, expected", [
    ("id,video,game,colour\nx,videos/a.mp4,starcluster,red\n", "line 2: unknown field 'colour'"),
    ("id,video,game\nx,,starcluster\n", "line 2: field 'video' is missing"),
    ("id,video,game\nx,videos/nope.mp4,starcluster\n", "line 2: field 'video':"),
    ("id,video,game\nx,videos/a.mp4,snooker\n", "line 2: field 'game' is 'snooker'"),
    ("id,video,game\n../x,videos/a.mp4,starcluster\n", "line 2: field 'id' '../x'"),
    ("id,video,game\nx,videos/a.mp4,starcluster\nx,videos/b.mp4,starcluster\n", "line 3: id 'x' is already"),
    ("id,video,game,pose\nx,videos/a.mp4,starcluster,maybe\n", "line 2: field 'pose' must be true or false"),
    ("id,video,game,profile\nx,videos/a.mp4,starcluster,big_table\n", "line 2: field 'profile': 'big_table'"),
    ("id,video,game\nx,videos/a.mp4\n", "line 2 has 2 cells where the header has 3"),
    ('{"id": "x", "video": "videos/a.mp4"}\n', "line 1: field 'game' is missing"),
    ('{"id": "x", "video": "videos/a.mp4", "game": "starcluster"}\n[1]\n', "line 2 is not a JSON object"),
    ('{"id": "x", "video": 3, "game": "starcluster"}\n', "line 1: field 'video' must be text"),
    ("id,video,game\n", "names no match"),
])
def test_a_bad_row_is_one_line_naming_the_line_and_the_field(files: Path, rows: str, expected: str) -> None:
    (files / "m.txt").write_text(rows)
    with pytest.raises(ManifestError) as error:
        read_manifest(files / "m.txt")
    assert expected in str(error.value) and "\n" not in str(error.value)


def test_a_stamp_holds_while_inputs_and_outputs_are_unchanged(files: Path) -> None:
    match = read_manifest(_manifest(files))[0]
    folder = files / "out" / "x"
    (folder / "run").mkdir(parents=True)
    output = folder / "run" / "result.json"
    output.write_text('{"done": true}')
    fingerprint = match.fingerprint("1.0", None)
    assert read_stamp(folder, fingerprint) is None  # never stamped
    write_stamp(folder, "x", fingerprint, [output], {"complete": True}, 1.0)
    assert read_stamp(folder, fingerprint)["outputs"] == {"run/result.json": _sha(output)}
    assert read_stamp(folder, match.fingerprint("1.1", None)) is None  # another referee version
    (files / "videos" / "a.mp4").write_bytes(b"another video")
    assert read_stamp(folder, read_manifest(_manifest(files))[0].fingerprint("1.0", None)) is None
    assert read_stamp(folder, fingerprint) is not None
    output.write_text('{"done": false}')  # an output changed: the match is no longer complete
    assert read_stamp(folder, fingerprint) is None
    output.unlink()
    assert read_stamp(folder, fingerprint) is None
    (folder / "complete.json").write_text('{"format": "table-ref')  # a torn stamp counts as none
    assert read_stamp(folder, fingerprint) is None


def _manifest(files: Path) -> Path:
    (files / "m.csv").write_text("id,video,game\nx,videos/a.mp4,starcluster\n")
    return files / "m.csv"


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()
