"""Ball colours on the command line: learned by `referee calibrate --assign` from a rendered frame, given to
`referee run` with --colour, and refused (one line, exit 2, nothing written) when too alike."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import cv2
import numpy as np
import pytest
from colour_scenes import PAIRS, SRGB, assert_all_found, render_with, spread

import calibration
from calibration.calibrate import calibrate_markers, load_calibration
from calibration.profile import load_profile
from record.manifest import read_manifest
from referee.cli import main
from referee.session import RunSpec, prepare
from rules.colours import BallColour, delta_e, parse_colour, srgb_to_lab
from rules.errors import InputError
from review.record import load_run
from rules.events import GameStart
from vision.detect import make_detector
from vision.detect.colour_model import FIT_CHROMA, FIT_LIGHTNESS, ball_colour, find_ball_colours, fitted_colour
from vision.games import game_vision
from vision.mapping import BoardMapper
from vision.video_io import VideoWriter

LISTED = re.compile(r"^colour (\d+): #[0-9a-f]{6}, Lab \((\S+) (\S+) (\S+)\), (\d+) balls?(?: \(on [^)]*\))?$",
                    re.MULTILINE)


def rendered_colour(image, truth, owner) -> tuple[float, float, float]:
    """The colour the owner's balls show on the rendered frame: `ball_colour` of each ball's disc where the
    truth has it, the median over the balls (the learned colour's measure, on the balls where they truly are)."""
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB)
    colours = []
    for ball in (b for b in truth.balls if b.owner == owner and b.visible):
        disc = np.zeros(image.shape[:2], np.uint8)
        cv2.circle(disc, (round(ball.u), round(ball.v)), max(1, round(0.7 * ball.r_px)), 255, -1)
        colours.append(ball_colour(lab[disc > 0]))
    light, a, b = np.median(colours, axis=0)
    return light, a, b


def calibrate_colours(game, tmp_path, capsys, dy):
    """Render the game's table with both players' balls, calibrate on it and assign each listed colour to the
    player whose balls it looks like (what a person does by eye): the image, its truth and the listing."""
    profile = load_profile(game)
    owners = PAIRS[game]
    _, _, image, truth = render_with(game, spread(profile, owners, 2, 3, dy))
    path = tmp_path / f"{game}.png"
    cv2.imwrite(str(path), image)
    assert main(["calibrate", str(path), "--profile", game, "--out", str(tmp_path / "probe.json")]) == 0
    listed = [(int(n), (float(L), float(a), float(b)), int(k))
              for n, L, a, b, k in LISTED.findall(capsys.readouterr().out)]
    assert listed, "no colour groups listed"
    pick = {owner: min(listed, key=lambda g: delta_e(g[1], srgb_to_lab(SRGB[owner])))[0] for owner in owners}
    return profile, image, truth, path, listed, pick


@pytest.mark.parametrize("game, dy", [("starcluster", 120.0), ("piratenbillard", 0.0)])
def test_calibrate_learns_the_colours_a_person_assigns_and_run_picks_them_up(game, dy, tmp_path, capsys):
    profile, image, truth, path, listed, pick = calibrate_colours(game, tmp_path, capsys, dy)
    owners = PAIRS[game]
    assert len(set(pick.values())) == 2  # the two players' balls are two groups
    assert all(k == 3 for n, _, k in listed if n in pick.values())  # each holds that player's three balls
    out = tmp_path / "cal.json"
    assign = ",".join(f"{n}={owner}" for owner, n in pick.items())
    assert main(["calibrate", str(path), "--profile", game, "--out", str(out), "--assign", assign]) == 0
    assert "ball colours: " in capsys.readouterr().out
    cal = load_calibration(out)
    learned = dict(cal.ball_colours)
    assert set(learned) == set(owners) and cal.surface_lab is not None
    group = {owner: next(lab for n, lab, _ in listed if n == pick[owner]) for owner in owners}
    for owner in owners:  # the colour the rendered balls show (within a few ΔE of the group's), fitted to the
        # detector's model (`fitted_colour`): as chromatic or more, the same hue, about as light; nearer the colour
        # the owner's balls were rendered in than the other player's
        shown, written = rendered_colour(image, truth, owner), learned[owner].lab
        assert delta_e(group[owner], shown) < 6.0
        turn = math.degrees(math.atan2(written[2], written[1]) - math.atan2(shown[2], shown[1]))
        assert abs((turn + 180) % 360 - 180) < 8.0
        assert 0.95 <= math.hypot(*written[1:]) / math.hypot(*group[owner][1:]) <= max(FIT_CHROMA) + 0.05
        assert min(FIT_LIGHTNESS) - 0.05 <= written[0] / group[owner][0] <= max(FIT_LIGHTNESS) + 0.05
        other = next(o for o in owners if o != owner)
        assert delta_e(learned[owner].lab, srgb_to_lab(SRGB[owner])) < delta_e(learned[owner].lab,
                                                                              srgb_to_lab(SRGB[other]))
    # what is written is each group's colour fitted to the detector's model on that frame, not the colour as listed
    frame = cv2.imread(str(path))
    mapper = BoardMapper(calibrate_markers(frame, profile), profile)
    clusters = find_ball_colours(frame, mapper, start=game_vision(game).start_places(profile))
    chosen = [clusters[n - 1] for n in pick.values()]
    assert {owner: learned[owner].hex for owner in owners} == {
        owner: fitted_colour(frame, mapper, clusters[n - 1], chosen).hex for owner, n in pick.items()}
    # `referee run --calibration` gives them to the players
    setup = prepare(RunSpec(str(tmp_path / "none.mp4"), game, tmp_path / "run", calibration=out, players=owners,
                            pose=False))
    start = next(e for e in setup.umpire if isinstance(e, GameStart))
    assert {p.id: p.colour for p in start.players} == learned


def test_star_cluster_balls_are_found_with_the_colours_calibrate_learned(tmp_path, capsys):
    """Star Cluster starts on an empty table, so the learned colours are all the detector knows of the balls.
    (Piratenbillard learns each player's balls from their starting row, painted in the seat's colour.)"""
    profile, _, _, path, _, pick = calibrate_colours("starcluster", tmp_path, capsys, 120.0)
    out = tmp_path / "cal.json"
    assign = ",".join(f"{n}={owner}" for owner, n in pick.items())
    assert main(["calibrate", str(path), "--profile", "starcluster", "--out", str(out), "--assign", assign]) == 0
    cal = load_calibration(out)
    owners = PAIRS["starcluster"]
    _, first, later, later_truth = render_with("starcluster", spread(profile, owners[::-1], 2, 3, 135.0))
    detector = make_detector("color", first, BoardMapper(cal, profile), list(owners), None,
                             colours=dict(cal.ball_colours))
    assert_all_found(later_truth, detector.detect(later))


def test_calibrate_on_a_piratenbillard_start_lists_each_starting_rows_balls_as_one_colour(tmp_path, capsys):
    """The first frame of a committed variant video (four players, their balls in full rows): each player's colour
    is listed once, on their seat's row, and assigned it is nearer the colour their balls were drawn in than any
    other player's."""
    folder = Path(__file__).resolve().parents[2] / "sample_videos" / "variants" / "piratenbillard" / "v10"
    start = next(e for e in json.loads((folder / "truth.json").read_text())["events"] if e["type"] == "game_start")
    drawn = {p["id"]: parse_colour(p["colour"], p["id"]).lab for p in start["players"]}
    argv = ["calibrate", str(folder / "video.mp4"), "--profile", str(folder / "profile.json"),
            "--out", str(tmp_path / "probe.json"), "--preview", str(tmp_path / "probe.png")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    rows = dict(re.findall(r"^colour (\d+): .*\(on (the \w+ starting row)\)$", out, re.MULTILINE))
    listed = {int(n): (float(L), float(a), float(b)) for n, L, a, b, _ in LISTED.findall(out)}
    pick = {player: min(listed, key=lambda n: delta_e(listed[n], lab)) for player, lab in drawn.items()}
    assert len(set(pick.values())) == len(drawn) and all(str(n) in rows for n in pick.values()), (pick, rows)
    assert sorted(int(n) for n in rows) == list(range(1, len(rows) + 1))  # the rows' groups are listed first
    argv[5] = str(tmp_path / "cal.json")
    assert main(argv + ["--assign", ",".join(f"{n}={player}" for player, n in pick.items())]) == 0
    learned = dict(load_calibration(tmp_path / "cal.json").ball_colours)
    for player, colour in learned.items():
        assert min(drawn, key=lambda p: delta_e(colour.lab, drawn[p])) == player


def run_refused(capsys, argv, out) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and not out.exists()
    return err


@pytest.fixture(scope="module")
def table_video(tmp_path_factory):
    """A short video of the Star Cluster table, empty as before play (a game starts with no ball on it: what the
    first frame shows in a player's colour is the table's), then with violet and golden balls on it. At crf 18: the
    balls first show on a P-frame, coarser than the key frame they were on when the clip started with them (at the
    default crf 23, two of the dark violet balls' scores fall to 0.49 and 0.57)."""
    profile = load_profile("starcluster")
    _, first, image, _ = render_with("starcluster", spread(profile, PAIRS["starcluster"], 2, 3, 120.0))
    path = tmp_path_factory.mktemp("colours") / "table.mp4"
    with VideoWriter(path, image.shape[1], image.shape[0], 30, crf=18) as writer:
        for frame in (first, image, image, image):
            writer.write(frame)
    return path


def test_run_with_colours_given_finds_the_balls_in_them_and_records_the_colours(table_video, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", str(table_video), "--game", "starcluster", "--players", "violet,sun", "--colour",
                 "violet=#7b3fa0", "--colour", "sun=lab(78.3 -3.1 75.1)", "--no-pose", "--quiet",
                 "--out", str(out)]) == 0
    start = json.loads((out / "events.jsonl").read_text().splitlines()[0])
    assert start["type"] == "game_start"
    assert {p["id"]: p.get("colour") for p in start["players"]} == {"violet": "#7b3fa0",
                                                                    "sun": {"lab": [78.3, -3.1, 75.1]}}
    assert json.loads((out / "manifest.json").read_text())["colours"] == start_colours(start)
    assert dict(read_manifest(out).colours) == {"violet": BallColour.from_srgb((123, 63, 160)),  # for --resume
                                                "sun": BallColour((78.3, -3.1, 75.1))}
    rows = [json.loads(line) for line in (out / "tracks.jsonl").read_text().splitlines()]
    seen = [d[0] for d in rows[-1]["detections"] if d[-1] >= 0.5]
    assert sorted(seen) == ["sun"] * 3 + ["violet"] * 3
    result = json.loads((out / "result.json").read_text())
    assert {p["id"]: p.get("colour") for p in result["players"]} == start_colours(start)
    assert {p.id: str(p.colour) for p in load_run(out).players} == {  # what the review video draws them in
        "violet": "#7b3fa0", "sun": "lab(78.3 -3.1 75.1)"}


def start_colours(start):
    return {p["id"]: p["colour"] for p in start["players"]}


@pytest.mark.parametrize("second, colour, against", [
    ("plum", "lab(40 40 -36)", "player 'plum'"),  # too like the other player
    ("sand", "#e4d8c4", "the table surface"),  # too like the table on the video's first frame
])
def test_run_refuses_a_colour_too_alike_to_tell_apart(table_video, tmp_path, capsys, second, colour, against):
    out = tmp_path / "run"
    err = run_refused(capsys, ["run", str(table_video), "--game", "starcluster", "--players", f"violet,{second}",
                               "--colour", "violet=#7b3fa0", "--colour", f"{second}={colour}", "--no-pose",
                               "--out", str(out)], out)
    first, other = ("violet", against) if second == "plum" else (second, against)
    assert re.search(rf"player '{first}' and {other} are too alike to tell apart: ΔE \d+\.\d", err), err


def test_run_refuses_an_unnamed_player_without_a_colour_and_a_bad_colour(table_video, tmp_path, capsys):
    out = tmp_path / "run"
    err = run_refused(capsys, ["run", str(table_video), "--game", "starcluster", "--players", "violet,yellow",
                               "--no-pose", "--out", str(out)], out)
    assert "no colour for player 'violet'" in err and "--colour violet=" in err
    err = run_refused(capsys, ["run", str(table_video), "--game", "starcluster", "--players", "violet,yellow",
                               "--colour", "violet=#7b3fa", "--no-pose", "--out", str(out)], out)
    assert "--colour violet: '#7b3fa' is not a colour" in err
    err = run_refused(capsys, ["run", str(table_video), "--game", "starcluster", "--players", "violet,yellow",
                               "--colour", "violet=#7b3fa0", "--colour", "bob=#102030", "--no-pose",
                               "--out", str(out)], out)
    assert "--colour names bob, who is not playing" in err


def test_calibrate_refuses_colours_assigned_too_alike_and_writes_nothing(tmp_path, capsys):
    _, _, _, path, listed, pick = calibrate_colours("starcluster", tmp_path, capsys, 120.0)
    out, preview = tmp_path / "cal.json", tmp_path / "cal.png"
    one = pick["violet"]
    argv = ["calibrate", str(path), "--profile", "starcluster", "--out", str(out), "--preview", str(preview)]
    assert main(argv + ["--assign", f"{one}=violet,{one}=plum"]) == 2
    assert "group " in capsys.readouterr().err and not out.exists()
    # colours that a stricter config finds too alike: refused, and neither the calibration nor its preview written
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"pipeline": {"colour_model": {"min_delta_e": 60}}}))
    assert main(argv + ["--assign", f"{pick['violet']}=violet,{pick['sun']}=sun", "--config", str(config)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert re.search(r"player '\w+' and the table surface are too alike to tell apart: ΔE \d+\.\d "
                     r"\(CIE76 Lab distance; at least 60 is needed\)", err), err
    assert not out.exists() and not preview.exists()


def test_a_players_colour_comes_from_the_command_line_then_the_session_then_the_profile(tmp_path):
    shipped = json.loads((Path(calibration.__file__).parent / "profiles" / "starcluster_default.json").read_text())
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({**shipped, "ball_colours": {"violet": "#7b3fa0", "sun": {"lab": [78, -3, 75]},
                                                               "red": "#c02020"}}))
    session = tmp_path / "session.jsonl"
    session.write_text(json.dumps({"type": "game_start", "t": 0, "players": [
        {"id": "violet", "side": "right", "colour": "#6a3090"}, {"id": "sun", "side": "left"}]}) + "\n")

    def colours(**given):
        setup = prepare(RunSpec(str(tmp_path / "none.mp4"), "starcluster", tmp_path / "run", profile=profile,
                                pose=False, **given))
        start = next(e for e in setup.umpire if isinstance(e, GameStart))
        return {p.id: str(p.colour) for p in start.players}

    assert colours(players=("violet", "sun")) == {"violet": "#7b3fa0", "sun": "lab(78.0 -3.0 75.0)"}
    assert colours(players=("red", "blue")) == {"red": "#c02020", "blue": "None"}  # blue: its nominal colour
    assert colours(session=session) == {"violet": "#6a3090", "sun": "lab(78.0 -3.0 75.0)"}
    assert colours(session=session, colours=(("sun", BallColour.from_srgb((224, 192, 32))),)) == \
        {"violet": "#6a3090", "sun": "#e0c020"}
    profile.write_text(json.dumps({**shipped, "ball_colours": {"violet": "violett"}}))
    with pytest.raises(InputError, match=r"profile .*: ball_colours\.violet: 'violett' is not a colour"):
        colours(players=("violet", "sun"))


def test_on_a_terminal_calibrate_asks_whose_each_colour_is(tmp_path, capsys, monkeypatch):
    _, _, _, path, listed, pick = calibrate_colours("starcluster", tmp_path, capsys, 120.0)
    whose = {n: owner for owner, n in pick.items()}
    asked = []

    def answer(prompt: str) -> str:
        asked.append(prompt)
        return whose.get(len(asked), "")

    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", answer)
    out = tmp_path / "cal.json"
    assert main(["calibrate", str(path), "--profile", "starcluster", "--out", str(out)]) == 0
    assert len(asked) == len(listed) and all("whose balls are colour" in q for q in asked)
    assigned = tmp_path / "assigned.json"
    assign = ",".join(f"{n}={owner}" for owner, n in pick.items())
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert main(["calibrate", str(path), "--profile", "starcluster", "--out", str(assigned), "--assign", assign]) == 0
    assert load_calibration(out).ball_colours == load_calibration(assigned).ball_colours
    assert {p for p, _ in load_calibration(out).ball_colours} == set(pick)
