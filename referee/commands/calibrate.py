"""`referee calibrate`: find the table in a video frame or image, write the calibration and a preview; learn
the players' ball colours from the balls on that frame, a person saying only which colour is whose."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from rules.errors import InputError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "calibrate",
        help="find the table in a video or image and write a calibration file",
        description=(
            "Map camera pixels to the table: automatically from the profile's ArUco markers, "
            "or from 4+ known points (--manual). Writes the calibration JSON and a preview PNG "
            "with the profile drawn over the frame. The balls on the frame are grouped by colour: the groups are "
            "numbered on the preview and listed here; --assign 1=alice,2=bob (or the prompt, on a terminal) says "
            "whose each is, and the calibration then holds those players' ball colours for `referee run "
            "--calibration` (docs/formats.md, 'Ball colours')."
        ),
    )
    p.add_argument("source", metavar="VIDEO|IMAGE", help="a video file or a still image of the table")
    p.add_argument(
        "--profile", required=True,
        help="table profile JSON, or 'starcluster' / 'piratenbillard' for the shipped defaults",
    )
    when = p.add_mutually_exclusive_group()
    when.add_argument("--frame", type=int, help="video frame index to calibrate on (default 0)")
    when.add_argument("--at", type=float, metavar="SECONDS", help="video time to calibrate on")
    p.add_argument("--out", help="calibration JSON to write (default: SOURCE.calibration.json)")
    p.add_argument("--preview", help="preview PNG to write (default: SOURCE.calibration.png)")
    p.add_argument("--intrinsics", help="camera matrix and distortion JSON (from cv2.calibrateCamera)")
    p.add_argument(
        "--manual", action="store_true",
        help="use known points instead of markers: --points, --points-file, or clicks on a window",
    )
    p.add_argument("--points", help='manual pairs "u,v=x,y;..." (image pixels = board mm)')
    p.add_argument("--points-file", help='manual pairs as JSON {"points": [{"image": [u, v], "board": [x, y]}]}')
    p.add_argument("--assign", metavar="N=PLAYER,...",
                   help="whose balls each listed colour group is, e.g. 1=alice,2=bob (the groups are numbered on the "
                        "preview and the terminal); without it a terminal asks, group by group")
    p.add_argument("--config", type=Path, help="game config JSON whose 'pipeline' object sets the colour settings "
                                               "(docs/config.md: colour_model.min_delta_e)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import cv2

    from calibration.calibrate import Calibration, calibrate_markers, calibrate_points, save_calibration, with_source
    from calibration.distortion import load_intrinsics
    from calibration.manual import read_frame
    from calibration.preview import draw_overlay
    from calibration.profile import load_profile
    from vision.detect.colour_model import (check_separation, find_ball_colours, fitted_colour, surface_lab,
                                            table_pixels)
    from vision.games import game_vision
    from vision.mapping import BoardMapper

    profile = load_profile(args.profile)
    intrinsics = load_intrinsics(args.intrinsics) if args.intrinsics else None
    if (args.points or args.points_file) and not args.manual:
        raise InputError("--points and --points-file need --manual; add --manual or drop the points")
    frame, frame_index, time_s = read_frame(args.source, args.frame, args.at)
    size = (frame.shape[1], frame.shape[0])
    if args.manual:
        image_pts, board_pts = manual_points(args, frame, profile)
        cal: Calibration = calibrate_points(image_pts, board_pts, profile, size, intrinsics)
    else:
        cal = calibrate_markers(frame, profile, intrinsics)
    cal = with_source(cal, args.source, frame_index, time_s)
    out = Path(args.out or f"{args.source}.calibration.json")
    preview = Path(args.preview or f"{args.source}.calibration.png")
    config = colour_config(args.config)
    mapper = BoardMapper(cal, profile)
    surface = surface_lab(frame, table_pixels(frame.shape[:2], mapper.table_polygon_px(0.0)))
    clusters = find_ball_colours(frame, mapper, config, game_vision(profile.game).start_places(profile))
    assignment = parse_assign(args.assign, len(clusters)) if args.assign is not None else None
    for number, cluster in enumerate(clusters, start=1):
        where = f" (on {' and '.join(cluster.start)})" if cluster.start else ""
        print(f"colour {number}: {cluster.colour.hex}, Lab {_lab_text(cluster.lab)}, {len(cluster.balls)} "
              f"ball{'s' if len(cluster.balls) != 1 else ''}{where}")
    if assignment is None and clusters and sys.stdin.isatty():
        assignment = ask_assign(clusters)
    chosen = [clusters[number - 1] for number in (assignment or {})]
    learned = {player: fitted_colour(frame, mapper, clusters[number - 1], chosen, config)
               for number, player in (assignment or {}).items()}
    check_separation({player: colour.lab for player, colour in learned.items()}, surface if learned else None,
                     config.min_delta_e, "assign the colours again (each player one group), or play with balls of "
                     "more distinct colours; nothing was written")
    cal = replace(cal, surface_lab=surface, ball_colours=tuple(sorted(learned.items())))
    picture = draw_clusters(draw_overlay(frame, profile, cal), clusters)
    save_calibration(cal, out)
    if not cv2.imwrite(str(preview), picture):
        raise InputError(f"cannot write preview {preview}; check the folder exists and the name ends in .png")
    how = f"markers {list(cal.markers_used)}" if cal.method == "aruco" else f"{cal.points_used} manual points"
    print(
        f"calibrated {args.source} on {profile.name} from {how}: reprojection error "
        f"rms {cal.rms_mm:.2f} mm, max {cal.max_mm:.2f} mm -> {out}, preview {preview}"
    )
    if learned:
        print("ball colours: " + ", ".join(f"{player} {colour.hex} (Lab {_lab_text(colour.lab)})"
                                           for player, colour in sorted(learned.items())))
    return 0


def colour_config(path: Path | None) -> Any:
    """The colour model's settings: the game config's pipeline.colour_model, else the defaults."""
    from rules.games import load_config
    from vision.config import PipelineConfig, split_config

    return (split_config(load_config(path))[1] if path else PipelineConfig()).colour_model


def parse_assign(text: str, groups: int) -> dict[int, str]:
    """--assign "1=alice,2=bob" -> {1: "alice", 2: "bob"}; each group and each player at most once."""
    assignment: dict[int, str] = {}
    for item in (part.strip() for part in text.split(",")):
        number, sep, player = (piece.strip() for piece in item.partition("="))
        if not sep or not number.isdigit() or not player:
            raise InputError(f"--assign {text!r}: {item!r} is not N=PLAYER; e.g. --assign 1=alice,2=bob")
        if not 1 <= int(number) <= groups:
            found = f"groups 1 to {groups}" if groups else "no ball-coloured groups"
            raise InputError(f"--assign {text!r}: there is no colour group {number} (this frame has {found}); "
                             "put each player's balls on the table's plain surface and calibrate on that frame")
        if int(number) in assignment:
            raise InputError(f"--assign {text!r}: group {number} is given twice; give each group one player")
        if player in assignment.values():
            raise InputError(f"--assign {text!r}: {player} is given two groups; give each player one group")
        assignment[int(number)] = player
    return assignment


def ask_assign(clusters: list[Any]) -> dict[int, str]:
    """Ask on the terminal whose each colour group is (an empty answer: nobody's)."""
    answers: dict[int, str] = {}
    for number in range(1, len(clusters) + 1):
        player = input(f"whose balls are colour {number}? (a player id; empty: nobody's) ").strip()
        if player:
            answers[number] = player
    return parse_assign(",".join(f"{n}={p}" for n, p in answers.items()), len(clusters)) if answers else {}


def draw_clusters(picture: Any, clusters: list[Any]) -> Any:
    """Each ball of each colour group circled in the group's colour, with the group's number."""
    import cv2

    for number, cluster in enumerate(clusters, start=1):
        colour = cluster.colour.bgr
        for u, v, r in cluster.balls:
            centre = (round(u), round(v))
            cv2.circle(picture, centre, round(r) + 3, (255, 255, 255), 3, cv2.LINE_AA)
            cv2.circle(picture, centre, round(r) + 3, colour, 2, cv2.LINE_AA)
            org = (round(u + r + 4), round(v - r - 2))
            cv2.putText(picture, str(number), org, cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 3, cv2.LINE_AA)
            cv2.putText(picture, str(number), org, cv2.FONT_HERSHEY_SIMPLEX, 0.6, colour, 1, cv2.LINE_AA)
    return picture


def _lab_text(lab: tuple[float, float, float]) -> str:
    return "({:.1f} {:.1f} {:.1f})".format(*lab)


def manual_points(args: argparse.Namespace, frame: Any, profile: Any) -> tuple[Any, Any]:
    """The point pairs of --manual: from --points, --points-file, or clicks on a window where there is a display."""
    from calibration.manual import click_corners, parse_points, read_points_file

    if args.points:
        return parse_points(args.points)
    if args.points_file:
        return read_points_file(args.points_file)
    if not os.environ.get("DISPLAY"):
        raise InputError(
            "--manual without a display: give the points with --points \"u,v=x,y;...\" or --points-file FILE"
        )
    return click_corners(frame, profile)
