"""`referee calibrate` end to end: files written on success, one-line errors and exit 2 otherwise."""

from __future__ import annotations

import json

import cv2
import jsonschema
import numpy as np
import pytest

from calibration.calibrate import load_calibration
from calibration.profile import load_schema
from calibration.render import warp_to_camera
from referee.cli import main

SIZE = (1280, 720)


@pytest.fixture(scope="module")
def shot(starcluster, board_images, make_camera, tmp_path_factory):
    camera = make_camera((320, -700, 1200), (320, 650, 0), 870, SIZE)
    image = warp_to_camera(board_images["starcluster"], starcluster, 2.0, camera.board_to_image, SIZE)
    folder = tmp_path_factory.mktemp("cli")
    path = folder / "table.png"
    cv2.imwrite(str(path), image)
    return camera, image, path


def test_calibrate_image_writes_calibration_and_preview(shot, tmp_path, capsys):
    camera, _image, path = shot
    out, preview = tmp_path / "cal.json", tmp_path / "preview.png"
    assert main(["calibrate", str(path), "--profile", "starcluster", "--out", str(out), "--preview", str(preview)]) == 0
    assert "reprojection error rms" in capsys.readouterr().out
    data = json.loads(out.read_text())
    jsonschema.validate(data, load_schema("calibration.schema.json"))
    assert data["method"] == "aruco" and len(data["markers_used"]) >= 4
    cal = load_calibration(out)
    probe = np.array([[320.0, 1050.0]])
    assert np.linalg.norm(cal.image_to_board(camera.project_board(probe)) - probe) < 2.0
    assert cv2.imread(str(preview)).shape == (SIZE[1], SIZE[0], 3)


def test_calibrate_video_frame(shot, tmp_path):
    _camera, image, _path = shot
    video = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, SIZE)
    for i in range(5):
        writer.write(image if i >= 2 else np.zeros_like(image))
    writer.release()
    out = tmp_path / "v.json"
    assert main(["calibrate", str(video), "--profile", "starcluster", "--frame", "3", "--out", str(out),
                 "--preview", str(tmp_path / "v.png")]) == 0
    assert json.loads(out.read_text())["source"]["frame"] == 3


def test_manual_points_from_command_line_and_file(shot, starcluster, tmp_path):
    camera, _image, path = shot
    board = np.array(starcluster.table.corners)
    pixels = camera.project_board(board)
    points = ";".join(f"{u:.2f},{v:.2f}={x:g},{y:g}" for (u, v), (x, y) in zip(pixels, board))
    out = tmp_path / "m.json"
    args = ["calibrate", str(path), "--profile", "starcluster", "--manual", "--out", str(out),
            "--preview", str(tmp_path / "m.png")]
    assert main(args + ["--points", points]) == 0
    assert json.loads(out.read_text())["method"] == "manual"
    pf = tmp_path / "points.json"
    pf.write_text(json.dumps({"points": [{"image": list(p), "board": list(b)} for p, b in zip(pixels, board)]}))
    assert main(args + ["--points-file", str(pf)]) == 0


def run_error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("referee: error: ") and "\n" not in err
    return err


def test_no_markers_found(tmp_path, capsys):
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((480, 640, 3), 128, np.uint8))
    err = run_error(capsys, ["calibrate", str(blank), "--profile", "starcluster", "--out", str(tmp_path / "x.json")])
    assert "found 0 of the profile's markers" in err and "--manual" in err


def test_too_few_points(shot, tmp_path, capsys):
    _c, _i, path = shot
    err = run_error(capsys, ["calibrate", str(path), "--profile", "starcluster", "--manual",
                             "--points", "10,10=0,0;20,10=640,0;20,20=640,1240", "--out", str(tmp_path / "x.json")])
    assert "too few points: 3" in err


def test_degenerate_homography(shot, tmp_path, capsys):
    _c, _i, path = shot
    err = run_error(capsys, ["calibrate", str(path), "--profile", "starcluster", "--manual", "--points",
                             "1100,700=0,0;100,700=640,0;900,100=0,1240;300,100=640,1240",
                             "--out", str(tmp_path / "x.json")])
    assert "degenerate homography: the table appears mirrored" in err


def test_profile_failing_validation(shot, tmp_path, capsys):
    _c, _i, path = shot
    profile = tmp_path / "club.json"
    profile.write_text(json.dumps({"format": "table-profile/1", "game": "starcluster", "name": "x", "units": "mm"}))
    err = run_error(capsys, ["calibrate", str(path), "--profile", str(profile)])
    assert f"profile {profile}: field 'table' is missing" in err


def test_missing_and_corrupt_video(tmp_path, capsys):
    err = run_error(capsys, ["calibrate", str(tmp_path / "none.mp4"), "--profile", "starcluster"])
    assert "no such file" in err
    corrupt = tmp_path / "corrupt.mp4"
    corrupt.write_bytes(b"not a video at all" * 10)
    err = run_error(capsys, ["calibrate", str(corrupt), "--profile", "starcluster"])
    assert "corrupt.mp4" in err


def test_manual_without_display_needs_points(shot, monkeypatch, capsys):
    _c, _i, path = shot
    monkeypatch.delenv("DISPLAY", raising=False)
    err = run_error(capsys, ["calibrate", str(path), "--profile", "starcluster", "--manual"])
    assert "--points" in err
