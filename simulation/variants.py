"""Randomised table variants: tables the referee was not built around, drawn from a seed.

`variant(game, seed)` draws a whole table profile (the game's recipe: slot
counts, ball and cell sizes, gutters, marker ids and sizes), a camera (tilt,
side-step, distance), players (p1, p2, ...) with ball colours drawn from the
whole range of colourful sRGB, and the length of a short scripted scenario. The
profile is written as profile JSON and parsed with
`calibration.profile.parse_profile`, so a variant is checked exactly like a
user's file. `write_variant` plays and renders it into a sample folder that
`referee run` can referee on its own (video.mp4, truth.json, profile.json, and
run.json, which names the arguments); the truth's game_start gives each
player's ball colour, where the referee reads a session's.

Each game's recipe lives beside its simulator (simulation.games names the
module; its `RECIPE` is a `VariantRecipe`). Issue 15 asks that the referee
hold up on such tables without being tuned to them: `benchmarks/variants.py`
referees them, `tests/simulation/test_variants.py` checks the generator. The
same game and seed always give the same variant.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import random
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from calibration.profile import TableProfile, parse_profile
from calibration.render import TABLE, Bgr8, paint
from rules.colours import BallColour, delta_e, lab_to_srgb, srgb_to_lab
from rules.errors import InputError
from rules.events import BallLifted, BallSighting, GameStart, Location, Place, ShotStarted, Snapshot, TableSettled
from simulation.camera import Camera, make_camera
from simulation.games import GAMES, simulated_game
from simulation.realism import Realism
from simulation.render import Renderer, render_clip
from simulation.trajectory import Match, SimFrame
from simulation.truth import build_truth, write_truth
from vision.detect.colour_model import NOMINAL_BGR

SLOTS_RANGE = (3, 8)  # slots per Astrolabe Position
BALL_MM_RANGE = (14.0, 40.0)
TILT_DEG_RANGE = (30.0, 55.0)  # the optical axis below the horizontal
SIDE_STEP_DEG = 20.0  # the camera stands up to this far round from straight behind the player's end
# Ball colours: uniform in CIE hue, L* and C* over these ranges, within sRGB. Darker balls sink into shadows and
# slots, lighter ones into glare and the pale board; greyer ones look like the table's shading.
LIGHTNESS_RANGE = (30.0, 85.0)  # CIE L*
CHROMA_RANGE = (35.0, 110.0)  # CIE C*; sRGB holds up to about 130, at some hues only
MIN_COLOUR_LAB_DISTANCE = 40.0  # CIE76 ΔE between two players' balls: twice what the referee refuses (20)
MIN_PAINT_LAB_DISTANCE = 30.0  # ... between a ball and every paint of the table but its own starting row
ROW_CHROMA_DROP = 18.0  # a seat's row is painted in its player's ball colour this much greyer (CIE C*)
SCENARIO = "variant"

Bgr = tuple[float, float, float]
Lab = tuple[float, float, float]


@dataclass(frozen=True)
class CameraPose:
    """Where the camera stands and what it looks at (board mm), with the angles it was drawn from."""

    position: tuple[float, float, float]
    target: tuple[float, float, float]
    tilt_deg: float  # the optical axis below the horizontal
    azimuth_deg: float  # the side-step round the target from straight behind the near edge (y = 0)


@dataclass(frozen=True)
class Layout:
    """What a table's recipe says about it, for tests and the benchmark's table."""

    slots: tuple[int, ...]  # slots per Position 1..3; empty for a game without an Astrolabe
    cell_mm: float  # a slot's width or a space's side
    gutters_past_line: bool  # gutters run on past the Play Line towards the player
    seats: dict[str, int]  # player -> seat, for a game whose players sit at the table's sides


@dataclass(frozen=True)
class TableVariant:
    game: str
    seed: int
    profile_json: dict[str, Any]  # the profile as a user would write it
    profile: TableProfile  # the same, parsed and checked by calibration.profile.parse_profile
    camera: CameraPose
    players: tuple[str, ...]  # player ids in seat or side order
    colours: dict[str, BallColour]  # player id -> ball colour (sRGB), as the session gives it
    config: dict[str, Any]  # the rules config of the match
    length: float  # how long the scenario runs, in the recipe's unit (shots, or seconds)
    layout: Layout

    @property
    def name(self) -> str:
        return f"{self.game}_v{self.seed}"

    @property
    def ball_mm(self) -> float:
        return self.profile.ball_diameter_mm

    @property
    def ball_bgr(self) -> dict[str, Bgr]:
        """Player -> ball colour as the renderer draws it (BGR 0..1)."""
        return {player: (c.bgr[0] / 255, c.bgr[1] / 255, c.bgr[2] / 255) for player, c in self.colours.items()}

    @property
    def seat_paint(self) -> dict[int, Bgr8]:
        """Seat -> the paint of its starting row, in its player's ball colour (a game with seats)."""
        return {seat: row_paint(self.colours[player]) for player, seat in self.layout.seats.items()}

    def describe(self) -> dict[str, Any]:
        """The drawn parameters, for a benchmark row or a run.json."""
        return {"game": self.game, "seed": self.seed, "slots": list(self.layout.slots), "ball_mm": self.ball_mm,
                "cell_mm": self.layout.cell_mm, "tilt_deg": round(self.camera.tilt_deg, 1),
                "azimuth_deg": round(self.camera.azimuth_deg, 1), "players": list(self.players),
                "colours": {player: colour.hex for player, colour in self.colours.items()},
                "gutters_past_line": self.layout.gutters_past_line}


@dataclass(frozen=True)
class VariantRecipe:
    """How one game's tables are drawn and played; the draws run in this order on one seeded generator."""

    profile: Callable[[random.Random, int], dict[str, Any]]  # (rng, seed) -> profile JSON
    player_count: Callable[[random.Random], int]
    rules: Callable[[random.Random, dict[str, Any]], tuple[dict[str, Any], float]]  # -> (config, length)
    layout: Callable[[TableProfile, tuple[str, ...]], Layout]
    play: Callable[[TableVariant, float], Match]  # (variant, fps) -> the match, refereed live by the engine
    laid_out: Callable[[TableVariant], SimFrame]  # a still frame with every player's balls at rest (`laid_out`)


def recipe(game: str) -> VariantRecipe:
    module = simulated_game(game).variants
    if module is None:
        raise InputError(f"no table variants for game {game!r}; use one of "
                         f"{', '.join(name for name, g in GAMES.items() if g.variants)}")
    found: VariantRecipe = importlib.import_module(module).RECIPE
    return found


def variant(game: str, seed: int) -> TableVariant:
    """The table variant of `game` number `seed`; the same arguments always give the same variant."""
    how = recipe(game)
    rng = random.Random(f"{game}/{seed}")
    data = how.profile(rng, seed)
    players = tuple(f"p{i}" for i in range(1, how.player_count(rng) + 1))
    _former_colour_draws(rng, len(players))
    profile = parse_profile(json.loads(json.dumps(data)), f"variant {game} {seed}")  # read as a file would be
    camera = _camera_pose(rng, profile)
    config, length = how.rules(rng, data)
    layout = how.layout(profile, players)
    colours = draw_colours(random.Random(f"{game}/{seed}/colours"), players, profile, layout.seats)
    return TableVariant(game, seed, data, profile, camera, players, colours, config, length, layout)


def simulate_variant(v: TableVariant, fps: float = 30.0) -> Match:
    """Play the variant's scenario; the real rules engine referees it as it is played, so the truth is what the
    engine scored. Its game_start gives each player's ball colour (the engines never read it), so a truth.json
    given as the session tells the referee the colours as a user's session would."""
    match = recipe(v.game).play(v, fps)
    events = tuple(replace(e, players=tuple(replace(p, colour=v.colours[p.id]) for p in e.players))
                   if isinstance(e, GameStart) else e for e in match.events)
    return replace(match, events=events)


def laid_out(v: TableVariant) -> SimFrame:
    """A still frame of the variant's table with every player's balls at rest on it, where `referee calibrate` learns
    their colours (the game's recipe lays them out)."""
    return recipe(v.game).laid_out(v)


def markers(rng: random.Random, centres: list[tuple[float, float]], size_mm: float) -> dict[str, Any]:
    """A profile's `markers`: DICT_4X4_50 markers of drawn, distinct ids at `centres`."""
    ids = rng.sample(range(50), len(centres))
    return {"dictionary": "DICT_4X4_50", "markers": [
        {"id": i, "center": [round(x, 1), round(y, 1)], "size_mm": size_mm} for i, (x, y) in zip(ids, centres)]}


# ---------------------------------------------------------------------------------------------- colours, camera


def draw_colours(rng: random.Random, players: tuple[str, ...], profile: TableProfile,
                 seats: Mapping[str, int]) -> dict[str, BallColour]:
    """A ball colour per player, each MIN_COLOUR_LAB_DISTANCE from the others' and MIN_PAINT_LAB_DISTANCE from
    every paint of the table (`table_paints`) and every starting row painted in another player's colour: balls
    the referee can tell apart from each other and from the table, over the widest range that allows."""
    fixed = table_paints(profile, set(seats.values()))
    drawn: dict[str, BallColour] = {}
    for _ in range(10_000):  # at most 29 tries for the 200 first seeds of each game
        if len(drawn) == len(players):
            return drawn
        colour = _colourful(rng)
        balls = [c.lab for c in drawn.values()]
        rows = [_lab8(row_paint(c)) for c in drawn.values()] if seats else []
        if all(delta_e(colour.lab, ball) >= MIN_COLOUR_LAB_DISTANCE for ball in balls) \
                and all(delta_e(colour.lab, p) >= MIN_PAINT_LAB_DISTANCE for p in fixed + rows) \
                and (not seats or all(delta_e(_lab8(row_paint(colour)), ball) >= MIN_PAINT_LAB_DISTANCE
                                      for ball in balls)):
            drawn[players[len(drawn)]] = colour
    raise RuntimeError(f"no {len(players)} ball colours are {MIN_COLOUR_LAB_DISTANCE} apart and clear of the table")


def _colourful(rng: random.Random) -> BallColour:
    """An sRGB colour uniform in CIE hue, L* and C* over LIGHTNESS_RANGE and CHROMA_RANGE."""
    while True:
        light, chroma, hue = rng.uniform(*LIGHTNESS_RANGE), rng.uniform(*CHROMA_RANGE), rng.uniform(0, 2 * math.pi)
        lab = (light, chroma * math.cos(hue), chroma * math.sin(hue))
        colour = BallColour.from_srgb(lab_to_srgb(lab))  # clipped into sRGB, and rounded
        got_light, got_chroma = colour.lab[0], math.hypot(colour.lab[1], colour.lab[2])
        if delta_e(colour.lab, lab) < 1.0 and LIGHTNESS_RANGE[0] <= got_light <= LIGHTNESS_RANGE[1] \
                and CHROMA_RANGE[0] <= got_chroma <= CHROMA_RANGE[1]:  # in sRGB's gamut, still in range
            return colour


def table_paints(profile: TableProfile, own_rows: set[int]) -> list[Lab]:
    """CIE Lab of every colour `calibration.render.render_board` paints the table in, but the starting rows of
    the seats in `own_rows` (painted in their players' ball colours) and the markers' black and white."""
    bgr = {TABLE} | {paint(f) for f in profile.features if f.seat is None or f.seat not in own_rows}
    return [_lab8(c) for c in sorted(bgr)]


def row_paint(colour: BallColour) -> Bgr8:
    """A starting row's paint for balls of `colour`: the colour ROW_CHROMA_DROP greyer at the same L* and hue, as
    the default board's rows (calibration.render.SEAT_COLOURS) are painted 11-23 C* greyer than its balls."""
    light, a, b = colour.lab
    keep = 1 - ROW_CHROMA_DROP / max(math.hypot(a, b), ROW_CHROMA_DROP)  # a colour greyer than that: grey
    red, green, blue = lab_to_srgb((light, a * keep, b * keep))
    return blue, green, red


def _lab8(bgr: Bgr8) -> Lab:
    return srgb_to_lab((bgr[2], bgr[1], bgr[0]))


def _former_colour_draws(rng: random.Random, n: int) -> None:
    """Make the draws that picked `n` nominal colours 40 ΔE apart before ball colours were drawn freely, so each
    seed still draws the camera and the scenario it drew then."""
    names = sorted(NOMINAL_BGR)
    labs = {name: _lab8(NOMINAL_BGR[name]) for name in names}
    while True:
        picked = rng.sample(names, n)
        if all(delta_e(labs[a], labs[b]) >= 40.0 for i, a in enumerate(picked) for b in picked[:i]):
            return


def _camera_pose(rng: random.Random, profile: TableProfile) -> CameraPose:
    """From the player's end (the near edge, y = 0), tilted down by 30-55 degrees, stepped round by up to
    SIDE_STEP_DEG, standing back far enough to clear the near edge; `make_variant_camera` fits the focal length."""
    w, l = profile.table.x_max, profile.table.y_max
    tilt = rng.uniform(*TILT_DEG_RANGE)
    azimuth = rng.uniform(-SIDE_STEP_DEG, SIDE_STEP_DEG)
    target = (w / 2, l * rng.uniform(0.42, 0.55), 0.0)
    back = rng.uniform(250.0, 700.0)  # the camera's foot, in front of the near edge
    ground = (target[1] + back) / math.cos(math.radians(azimuth))
    a = math.radians(azimuth)
    position = (target[0] + ground * math.sin(a), target[1] - ground * math.cos(a),
                ground * math.tan(math.radians(tilt)))
    return CameraPose(position, target, tilt, azimuth)


def make_variant_camera(v: TableVariant, width: int = 1280, height: int = 720) -> Camera:
    """The variant's camera; the focal length makes the whole table fit the frame (simulation.camera)."""
    return make_camera(v.profile, "behind_play_line", width, height, position=v.camera.position,
                       target=v.camera.target, up=(0.0, 0.0, 1.0))


def make_variant_renderer(v: TableVariant, realism: Realism, fps: float) -> Renderer:
    """A renderer of the variant's table through its camera, in its ball colours and row paints."""
    return Renderer(v.profile, make_variant_camera(v), realism, fps, v.seed, colours=v.ball_bgr,
                    seat_paint=v.seat_paint)


# ---------------------------------------------------------------------------------------------- sample folders


def run_arguments(v: TableVariant) -> list[str]:
    """What `referee run` needs besides the video and --out, relative to the sample folder."""
    return ["--game", v.game, "--profile", "profile.json", "--session", "truth.json"]


def write_variant(v: TableVariant, out: str | Path, realism: Realism | None = None, width: int = 1280,
                  height: int = 720, fps: float = 30.0, progress: bool = False) -> dict[str, Any]:
    """Play and render `v` into the sample folder `out`: video.mp4, truth.json, profile.json and run.json.

    Referee it from inside the folder with `referee run video.mp4 --out RUN` plus run.json's `args`.
    """
    folder = Path(out)
    camera = make_variant_camera(v, width, height)
    realism = realism if realism is not None else Realism.moderate()
    match = simulate_variant(v, fps)
    frames = render_clip(match, v.profile, v.profile_json, camera, realism, folder, progress, colours=v.ball_bgr,
                         seat_paint=v.seat_paint)
    truth = build_truth(match, v.profile_json, camera, realism, frames)
    write_truth(folder / "truth.json", truth)
    write_run_files(v, folder)
    return truth


def write_run_files(v: TableVariant, folder: Path) -> None:
    """profile.json and run.json: what `referee run` needs besides the video and the truth."""
    (folder / "profile.json").write_text(json.dumps(v.profile_json, indent=1) + "\n", encoding="utf-8")
    (folder / "run.json").write_text(json.dumps({
        "variant": v.describe(), "args": run_arguments(v),
        "how": "in this folder: referee run video.mp4 --out RUN " + " ".join(run_arguments(v)),
    }, indent=1) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class Settled:
    """A table_settled of the match, with what the referee knows when it reads that table."""

    frame: int
    snapshot: Snapshot  # the truth
    before: Snapshot | None  # the last settled table less the balls struck or lifted since (vision.pipeline)
    tracked: frozenset[tuple[str, Location]]  # where the balls that moved since came to rest in a place


def settles_with_priors(v: TableVariant, match: Match) -> list[Settled]:
    """Every table_settled of the match, as a perfect tracker would have followed the balls to it."""
    out = []
    known: Counter | None = None
    last = 0
    for event in match.events:
        if isinstance(event, TableSettled):
            frame = min(round(event.t * match.fps), len(match.frames) - 1)
            moved = {b.id for f in match.frames[last:frame + 1] for b in f.balls if b.moving}
            places = {(b.owner, v.profile.locate((b.x, b.y)).at) for b in match.frames[frame].balls
                      if b.id in moved and b.on_table}
            before = None if known is None else Snapshot(tuple(BallSighting(o, at) for o, at in known.elements()))
            out.append(Settled(frame, event.snapshot, before,
                               frozenset(p for p in places if p[1].place in (Place.SLOT, Place.CELL))))
            known = Counter((b.owner, b.at) for b in event.snapshot.balls)
            last = frame
        elif known is not None and isinstance(event, BallLifted):
            known -= Counter({(event.owner, event.at): 1})
        elif known is not None and isinstance(event, ShotStarted) and event.ball_from is not None:
            known -= Counter({(event.player, event.ball_from): 1})
    return out


def main(argv: list[str] | None = None) -> int:
    """Write variant samples with contact sheets: `python -m simulation.variants --game G --seed N ... --out D`."""
    from simulation.make_samples import contact_sheet

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--game", required=True, choices=[name for name, g in GAMES.items() if g.variants])
    parser.add_argument("--seed", type=int, nargs="+", required=True)
    parser.add_argument("--out", type=Path, required=True, help="folder; each variant goes in OUT/v<seed>")
    parser.add_argument("--crf", type=int, default=28)
    args = parser.parse_args(argv)
    for seed in args.seed:
        v = variant(args.game, seed)
        folder = args.out / f"v{seed}"
        truth = write_variant(v, folder, Realism.moderate(crf=args.crf), progress=True)
        contact_sheet(folder / "video.mp4", truth, folder / "contact_sheet.jpg")
        print(f"{v.name}: {v.describe()}, {truth['frame_count']} frames, scores {truth['result']['final_scores']}",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
