"""Regenerate sample_videos/: one clip per scenario per game, one full game each, contact sheets and README.

Run: `.venv/bin/python -m simulation.make_samples [--only GAME/SCENARIO ...]`. Every sample is
deterministic (fixed seed), so rerunning reproduces the same truth.json files.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import cv2
import numpy as np

from calibration.profile import parse_profile
from rules.colours import parse_colour
from simulation.games import GAMES
from simulation.realism import Realism
from simulation.render import PLAYER_COLOURS
from simulation.simulate import simulate_to
from vision.video_io import read_frames

ROOT = Path(__file__).resolve().parent.parent / "sample_videos"
SEED = 1
OVERHEAD = {("piratenbillard", "capture"), ("piratenbillard", "off_board"), ("starcluster", "gutter_ball"),
            ("starcluster", "grouping")}


def samples() -> list[tuple[str, str]]:
    every = [(name, s) for name, game in GAMES.items() for s in game.simulator().scenarios]
    return sorted(every, key=lambda sample: sample[1] == "full_game")  # the long full games last


def contact_sheet(video: Path, truth: dict, out: Path, tiles: int = 6, tile_w: int = 640) -> None:
    """A grid of frames at the clip's key moments, with each ball's id and place drawn from the truth."""
    profile = parse_profile(truth["profile"], f"{video.parent}/truth.json")  # the table the clip was drawn on
    times = [e["t"] for e in truth["events"] if e["type"] in ("shot_started", "table_settled", "ball_lifted",
                                                              "play_line_crossing", "table_movement")]
    n = truth["frame_count"]
    picks = sorted({min(int(round(t * truth["fps"])), n - 1) for t in times})
    if len(picks) > tiles:
        picks = [picks[round(i * (len(picks) - 1) / (tiles - 1))] for i in range(tiles)]
    picks = sorted(set(picks) | {round(i * (n - 1) / (tiles - 1)) for i in range(tiles)})
    picks = [picks[round(i * (len(picks) - 1) / (tiles - 1))] for i in range(tiles)]
    wanted = set(picks)
    images = {f.index: f.image for f in read_frames(video) if f.index in wanted}
    owners = truth["ball_owners"]
    given = {p["id"]: parse_colour(p["colour"], "truth game_start").bgr for e in truth["events"]
             if e["type"] == "game_start" for p in e["players"] if "colour" in p}  # a table variant's own colours
    labels = {**{p: tuple(int(255 * c) for c in bgr) for p, bgr in PLAYER_COLOURS.items()}, **given}
    cells = []
    for index in picks:
        img = images[index].copy()
        frame = truth["frames"][index]
        for ball_id, x, y, _z, u, v, r, visible, occluded, _moving in frame["balls"]:
            if not (0 <= u < img.shape[1] and 0 <= v < img.shape[0]):
                continue
            colour = labels.get(owners[str(ball_id)], (153, 153, 153))
            ring = (255, 255, 255) if visible else (0, 0, 255)
            cv2.circle(img, (int(round(u)), int(round(v))), int(round(r + 3)), ring, 1, cv2.LINE_AA)
            where = profile.locate((x, y)).at
            place = {"slot": f"P{where.position}/{where.slot}", "cell": f"{where.row},{where.col}"}.get(
                where.place.value, where.place.value[:4])
            label = f"{ball_id}:{place}" + ("" if visible else " hidden" if occluded else "")
            cv2.putText(img, label, (int(u + r + 3), int(v - r)), cv2.FONT_HERSHEY_SIMPLEX, 0.38, (0, 0, 0), 3,
                        cv2.LINE_AA)
            cv2.putText(img, label, (int(u + r + 3), int(v - r)), cv2.FONT_HERSHEY_SIMPLEX, 0.38, colour, 1,
                        cv2.LINE_AA)
        person = frame.get("person")
        if person:
            for (px, py, vis), name in zip(person["keypoints_px"], person["keypoints"]):
                if vis > 0:
                    crossing = name in person["crossing_keypoints"]
                    cv2.circle(img, (int(px), int(py)), 5, (0, 0, 255) if crossing else (0, 255, 0), -1)
        cv2.putText(img, f"t={frame['t']:.2f}s frame {index}", (12, 30), cv2.FONT_HERSHEY_SIMPLEX, 0.9,
                    (255, 255, 255), 2, cv2.LINE_AA)
        cells.append(cv2.resize(img, (tile_w, tile_w * img.shape[0] // img.shape[1]), interpolation=cv2.INTER_AREA))
    rows = [np.hstack(cells[i:i + 3]) for i in range(0, len(cells), 3)]
    cv2.imwrite(str(out), np.vstack(rows), [cv2.IMWRITE_JPEG_QUALITY, 80])


def make(game: str, scenario: str) -> dict:
    out = ROOT / game / scenario
    camera = "overhead" if (game, scenario) in OVERHEAD else "behind_play_line"
    started = time.perf_counter()
    truth, speed = simulate_to(out, game, SEED, scenario, camera, realism=Realism.moderate(crf=28))
    contact_sheet(out / "video.mp4", truth, out / "contact_sheet.jpg")
    return {"game": game, "scenario": scenario, "camera": camera, "duration_s": truth["duration_s"],
            "frames": truth["frame_count"], "video_mb": (out / "video.mp4").stat().st_size / 1e6,
            "truth_mb": (out / "truth.json").stat().st_size / 1e6, "fps_render": speed,
            "wall_s": time.perf_counter() - started, "notes": truth["notes"],
            "final_scores": truth["result"]["final_scores"]}


README_HEAD = """# Sample videos

Synthetic match videos with exact ground truth, made by `referee simulate` (issue 4) and
regenerated by `.venv/bin/python -m simulation.make_samples`. Each folder
`<game>/<scenario>/` holds `video.mp4` (H.264, 1280x720, 30 fps, crf 28, every realism knob on at
moderate strength), `truth.json` and `contact_sheet.jpg` (six frames at the clip's key moments,
each ball ringed at its truth pixel - white when visible, red when hidden - and labelled
`id:place`, where place is the Astrolabe slot `P<position>/<slot>`, the Piratenbillard space
`row,col`, or the region; person keypoints in green, red where they are past the Play Line).

Make your own: `referee simulate --game starcluster|piratenbillard --seed N --out DIR
[--scenario NAME] [--duration S] [--camera overhead|behind_play_line] [--width W --height H --fps F]
[--players N] [--crf Q] [--clean]`. The same seed and options give a byte-identical truth.json.

Randomised table variants (issue 15: other slot counts, ball and cell sizes, gutters, cameras, colours) are in
[variants/](variants/README.md), one level deeper so that nothing taking every `<game>/<scenario>/` picks them up.

## How it is made

* Piratenbillard (`simulation/piratenbillard.py`): a struck ball hops ballistically (a parabola
  in height, two bounces with restitution 0.35) from its space towards the aimed space plus the
  player's aiming error (13 mm per axis), settling into the landing space's hollow, or leaving
  the board when it lands outside the grid. The real rules engine referees the match live; its
  LIFT decisions send a hand from the receiving player's side to take the balls off.
* Star Cluster Ball: `simulation/starcluster.py` (pymunk physics and players, by a colleague).
* The renderer (`simulation/render.py`, `camera.py`, `sprites.py`, `people.py`, `realism.py`):
  a pinhole camera K[R|t] at a preset pose (`overhead`, or `behind_play_line`: high angle from
  the player's end); the table texture is `calibration.render.render_board` (ArUco markers
  included) warped through the z=0 plane homography, moved by any table shove; balls are
  shaded spheres (glass for Star Cluster Ball, painted wood for Piratenbillard) drawn at their
  true 3-D centre with soft shadows and motion blur; a skin-coloured arm reaches in to lift
  balls; the player at the Play Line is a real photograph (`skimage.data.astronaut()`, cut out
  with a hand-drawn outline, COCO keypoints annotated once in
  `simulation/assets/astronaut_keypoints.json`); then a slowly drifting lighting gain field,
  camera shake (a smooth small rotation, applied as the exact homography K dR K^-1), sensor
  noise and H.264 compression.
* Truth and video agree: `tests/simulation/test_render.py` decodes rendered video and finds
  each resting, unoccluded ball's pixels within 2.0 px of its truth pixel (measured error is
  typically under 0.3 px before compression; the H.264 4:2:0 chroma costs up to about 1.5 px).

## truth.json

| field | meaning |
|---|---|
| `format` | `table-referee/sim-truth@1` |
| `game`, `seed`, `scenario`, `notes` | what was simulated, and what the clip shows |
| `video`, `fps`, `frame_count`, `duration_s` | the video beside it; frame `i` is at `t = i / fps` |
| `profile` | the table profile JSON the table was drawn from (calibration issue format) |
| `camera` | `preset`, `image_size` [w, h], `K` (3x3), `R` (3x3, board -> camera), `t` (mm), `centre_mm`; pixel = K(R X + t) before shake |
| `realism` | the realism knobs used (lighting, noise, motion_blur, crf, shake_deg, table_bump, hand, person) |
| `config` | the game config the rules engine used |
| `ball_owners` | ball id -> player colour |
| `ball_columns` | the columns of each row in `frames[].balls` |
| `frames[]` | per frame: `t`; `balls`: one row per ball on the table: `id, x_mm, y_mm, z_mm` (board axes, z = height of the centre), `u_px, v_px` (where the centre is drawn, shake included), `r_px` (drawn radius), `visible` (1: in the frame and not hidden), `occluded` (1: a hand or body hides it), `moving`; optional `shake_deg` [about camera x, y, z], `table_shift` [dx mm, dy mm, rotation deg], `hand_px` (fingertip), `person` (below) |
| `frames[].person` | `player`, `reach_mm` (furthest reach past the Play Line), `crossing_part`, `keypoints` (the 17 COCO names), `keypoints_px` ([x, y, v] in the image; v: 2 visible, 1 hidden in the photo, 0 outside it), `keypoints_board_mm` (each keypoint mapped to the table plane), `crossing_keypoints` (those past the Play Line) |
| `events` | the event log a perfect vision pipeline and umpire produce (docs/events.md) |
| `result` | the expected `result.json`: `rules.result.build_result` of the replayed `events` |

Floats are rounded to 0.01 and keys sorted, so the file is byte-for-byte reproducible.

## The samples
"""


def write_readme(index: dict) -> None:
    lines = [README_HEAD, "| sample | shows | camera | duration | video | truth | render speed |",
             "|---|---|---|---|---|---|---|"]
    for key, e in sorted(index.items()):
        lines.append(f"| [{key}]({key}/contact_sheet.jpg) | {'; '.join(e['notes'])} | {e['camera']} | "
                     f"{e['duration_s']:.1f} s | {e['video_mb']:.2f} MB | {e['truth_mb']:.2f} MB | "
                     f"{e['fps_render']:.1f} frames/s |")
    speeds = [e["frames"] / (e["wall_s"] or 1) for e in index.values()]
    total = sum(e["video_mb"] + e["truth_mb"] for e in index.values())
    lines += ["", f"Render speed on the 2-core development machine (shared): "
              f"{min(e['fps_render'] for e in index.values()):.1f} to {max(e['fps_render'] for e in index.values()):.1f} "
              f"frames/s for 1280x720 (render and H.264 encode); about {np.median(speeds):.1f} frames/s "
              f"end to end including the physics and the contact sheet. All samples together: {total:.1f} MB.", ""]
    for key in sorted(index):
        lines += [f"### {key}", "", f"![{key}]({key}/contact_sheet.jpg)", ""]
    (ROOT / "README.md").write_text("\n".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", nargs="*", default=[], metavar="GAME/SCENARIO")
    args = parser.parse_args(argv)
    index_path = ROOT / "index.json"
    index = json.loads(index_path.read_text()) if index_path.exists() else {}
    for game, scenario in samples():
        if args.only and f"{game}/{scenario}" not in args.only:
            continue
        entry = make(game, scenario)
        index[f"{game}/{scenario}"] = entry
        print(f"{game}/{scenario}: {entry['duration_s']:.1f} s, {entry['video_mb']:.2f} MB video, "
              f"{entry['fps_render']:.1f} frames/s", flush=True)
        index_path.write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
    write_readme(index)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
