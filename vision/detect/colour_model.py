"""Per-player ball colour models in CIELAB hue and saturation, with lightness handled apart.

A pixel is described by its CIELAB hue angle atan2(b*, a*) and saturation
C*/L*: shading, a shadow or a lighting drift scale L*, a* and b* together, so
hue and saturation hardly move and the class does not flip. (Plain a*, b* do
move: a red ball's shaded side and a red painted square in a ball's shadow
share their a*, b*, but not their saturation.) Lightness enters only in
coarse bands, each blurred into its neighbours, and as a gate: pixels too dark
(slots, marker ink) or too bright (highlights, glare) carry no reliable colour
and are left unclassified.

Each class is a smoothed histogram over (lightness band, hue, saturation),
learned from pixel samples, and all of them turn into one lookup table over
quantised 8-bit Lab: bin -> label (background, a player, or "unknown":
clearly coloured but neither a player nor the table). A player's bin must lie in that player's support (a rejection
threshold, like a Mahalanobis gate but for any shape of cluster) and be more
likely under the player than under the background. The background histogram
is learned from the table itself, so painted areas that look like a ball's
colour (Piratenbillard's starting rows, the Play Line) count against it.

Samples come, best first, from balls sitting in known places in the first
frames (every Piratenbillard starting space holds its seat's ball), or from
the player's given colour (the session's, the calibration's learned one, the
profile's; `referee.session` picks it), or from the nominal colour that the
player's id names, each shaded synthetically. Colours too alike to tell apart,
one player's and another's or one and the table surface's, are refused at start
(`check_separation`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

import cv2
import numpy as np

from rules.colours import BallColour, delta_e, lab_to_srgb
from rules.errors import InputError
from vision.config import ColourModelConfig
from vision.mapping import BoardMapper
from vision.numeric import median_byte, percentile_sorted

QUANT = 2  # 8-bit L, a*, b* are shifted right by 2 for the lookup table: 64^3 bins
LBINS = 8  # lightness bands of the class histograms
HBINS = 64  # hue angle bins over 360 degrees
SBINS = 64  # saturation (C*/L*) bins over [0, MAX_SAT)
MAX_SAT = 4.0
UNSEEN = 0.002  # background density (of its peak) below which the table never shows a colour
RING_SCALE = 1.8  # the table within this many radii of a known ball is its close background
UNKNOWN = 255  # label of "coloured, but no player's colour"
BACKGROUND = 0
MARKER_MARGIN = 1.5  # a printed marker with its white margin, in marker sizes: left out when looking for balls
LIT = 20  # percent of a ball's more saturated pixels, the brightest, that show it fully lit (`ball_colour`)
LOOKALIKE_SHADE = 0.5  # of a player's lit lightness: a colour darker, shown by the empty table, is the table's ...
LOOKALIKE_REACH = (2, 1, 1)  # ... and so are its neighbours this many lookup bins away in L, a*, b* (lighting drift)
SHADE_DISC = 0.8  # of a ball's radius: the disc its shading is measured in (inside its rim, which blends into the table)

# Nominal ball colours, sRGB as BGR 0..255, by player id: for a player named by colour whose colour is not given.
NOMINAL_BGR: dict[str, tuple[int, int, int]] = {
    "red": (31, 31, 217),
    "blue": (217, 97, 20),
    "yellow": (26, 209, 242),
    "green": (64, 179, 26),
    "orange": (20, 120, 240),
    "purple": (150, 40, 120),
    "pink": (180, 105, 255),
}


@dataclass(frozen=True)
class ColourModel:
    """Bin -> label lookup (0 background, 1..K the players in order, 255 unknown) and its posterior."""

    players: tuple[str, ...]
    labels: np.ndarray = field(repr=False)  # (64**3,) uint8 over quantised Lab
    posterior: np.ndarray = field(repr=False)  # (64**3,) float32, how sure the label is
    fill: tuple[float, ...]  # per player: fraction of a ball's disc that classifies as its colour
    config: ColourModelConfig = ColourModelConfig()
    learned: tuple[bool, ...] = ()  # per player: from real ball pixels (True) or nominal (False)
    shading: tuple[float, ...] = ()  # per player: the median `shading` of their balls on the first frame (0: unknown)

    def label_of(self, player: str) -> int:
        return self.players.index(player) + 1

    def name_of(self, label: int) -> str:
        return "unknown" if label == UNKNOWN else self.players[label - 1]

    def bin_index(self, bgr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """BGR uint8 image -> (bin index uint16, lightness-valid bool) per pixel."""
        lab = cv2.cvtColor(bgr, cv2.COLOR_BGR2LAB)
        light, a, b = cv2.split(lab)
        index = _index(light, a, b)
        valid = (light >= self.config.min_lightness) & (light <= self.config.max_lightness)
        return index, valid

    def classify(self, bgr: np.ndarray) -> np.ndarray:
        """BGR uint8 image -> label image uint8 (0 where the lightness gate rejects the pixel)."""
        index, valid = self.bin_index(bgr)
        labels = self.labels[index]
        labels[~valid] = BACKGROUND
        return labels


def colour_bgr(player: str, colours: Mapping[str, BallColour] | None = None) -> tuple[int, int, int]:
    """The player's ball colour as sRGB BGR 0..255: the given one, else the nominal one their id names."""
    given = (colours or {}).get(player)
    if given is not None:
        return given.bgr
    if player not in NOMINAL_BGR:
        raise InputError(
            f"no colour for player {player!r}: give it (--colour {player}=#rrggbb, the session's game_start "
            f"'colour', or the profile's 'ball_colours'), learn it with `referee calibrate --assign`, or name "
            f"players by ball colour ({', '.join(NOMINAL_BGR)})")
    return NOMINAL_BGR[player]


def colour_lab(player: str, colours: Mapping[str, BallColour] | None = None) -> tuple[float, float, float]:
    """The player's ball colour in CIE Lab (L* 0-100): the given one, else the nominal one."""
    given = (colours or {}).get(player)
    if given is not None:
        return given.lab
    b, g, r = colour_bgr(player)
    return BallColour.from_srgb((r, g, b)).lab


def table_pixels(shape: tuple[int, ...], polygon_px: np.ndarray) -> np.ndarray:
    """A uint8 mask (255 inside) of the table's outline in image pixels."""
    mask = np.zeros(shape[:2], np.uint8)
    cv2.fillConvexPoly(mask, np.round(np.asarray(polygon_px) * 16).astype(np.int32), 255, cv2.LINE_8, 4)
    return mask


def surface_lab(image: np.ndarray, table_mask: np.ndarray,
                balls_mask: np.ndarray | None = None) -> tuple[float, float, float]:
    """The table surface's colour in CIE Lab: the median of the table's pixels (outside `balls_mask`)."""
    keep = table_mask > 0
    if balls_mask is not None:
        keep &= balls_mask == 0
    rows, cols = np.flatnonzero(keep.any(axis=1)), np.flatnonzero(keep.any(axis=0))
    if not len(rows):
        raise InputError("the table is not in view of this frame; check the calibration")
    y0, y1, x0, x1 = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1  # only the table's box is converted
    lab = cv2.cvtColor(image[y0:y1, x0:x1], cv2.COLOR_BGR2LAB)[keep[y0:y1, x0:x1]]
    light, a, b = (median_byte(lab[:, channel]) for channel in range(3))
    return float(light * 100 / 255), float(a - 128), float(b - 128)


def check_separation(colours: Mapping[str, tuple[float, float, float]], surface: tuple[float, float, float] | None,
                     min_delta_e: float, fix: str) -> None:
    """Refuse, in one line, the closest pair of colours (two players', or one player's and the table surface's)
    nearer than `min_delta_e` (CIE76); `fix` says what to do."""
    pairs = [(delta_e(colours[a], colours[b]), f"player {a!r} and player {b!r}")
             for i, a in enumerate(colours) for b in list(colours)[i + 1:]]
    if surface is not None:
        pairs += [(delta_e(lab, surface), f"player {player!r} and the table surface")
                  for player, lab in colours.items()]
    close = min(pairs, default=None)
    if close is not None and close[0] < min_delta_e:
        raise InputError(f"the ball colours of {close[1]} are too alike to tell apart: ΔE {close[0]:.1f} "
                         f"(CIE76 Lab distance; at least {min_delta_e:g} is needed); {fix}")


def nominal_samples(bgr: tuple[int, int, int]) -> np.ndarray:
    """Lab pixels (N, 3) of a ball of this colour under shading, highlights and a little haze."""
    colour = np.asarray(bgr, np.float32) / 255
    shades = np.linspace(0.3, 1.15, 12)[:, None] * colour
    highlights = colour + np.array([0.1, 0.2, 0.3])[:, None] * (1 - colour)
    hazes = [(1 - w) * s + w * 0.75 for w in (0.1, 0.2) for s in shades[::2]]
    rgb = np.clip(np.vstack([shades, highlights, *hazes]), 0, 1)
    return cv2.cvtColor((rgb * 255).astype(np.uint8)[None], cv2.COLOR_BGR2LAB)[0]


def _index(light: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Quantised 8-bit Lab -> lookup-table index (uint32)."""
    return ((light >> QUANT).astype(np.uint32) << 12) | ((a >> QUANT).astype(np.uint32) << 6) | (b >> QUANT)


def _features(lab: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """8-bit Lab (N, 3) -> lightness band, hue bin, saturation bin, CIELAB chroma C*."""
    lab = np.asarray(lab, float).reshape(-1, 3)
    light = lab[:, 0] * 100 / 255
    a, b = lab[:, 1] - 128, lab[:, 2] - 128
    chroma = np.hypot(a, b)
    band = np.clip(lab[:, 0] * LBINS / 256, 0, LBINS - 1).astype(int)
    hue = ((np.degrees(np.arctan2(b, a)) % 360) * HBINS / 360).astype(int) % HBINS
    sat = np.clip(chroma / np.maximum(light, 1.0) * SBINS / MAX_SAT, 0, SBINS - 1).astype(int)
    return band, hue, sat, chroma


def _histogram(lab: np.ndarray, sigma: float, cfg: ColourModelConfig) -> np.ndarray:
    """(LBINS, HBINS, SBINS) density: blurred in hue (circularly) and saturation, and across bands."""
    lab = np.asarray(lab, np.uint8).reshape(-1, 3)
    keep = (lab[:, 0] >= cfg.min_lightness) & (lab[:, 0] <= cfg.max_lightness)
    band, hue, sat, _ = _features(lab[keep])
    # counts by bincount (np.add.at took 14 ms a model): whole numbers, the same in float32
    counts = np.bincount(np.ravel_multi_index((band, hue, sat), (LBINS, HBINS, SBINS)), minlength=LBINS * HBINS * SBINS)
    hist: np.ndarray = counts.astype(np.float32).reshape(LBINS, HBINS, SBINS)
    if sigma > 0:
        pad = int(np.ceil(3 * sigma))
        wrapped = np.concatenate([hist[:, -pad:], hist, hist[:, :pad]], axis=1)
        hist = np.stack([cv2.GaussianBlur(h, (0, 0), sigma) for h in wrapped])[:, pad:-pad]
    # lighting drifts move a pixel by a band or so: spread each band into its neighbours
    padded = np.concatenate([hist[:1], hist, hist[-1:]])
    hist = 0.25 * padded[:-2] + 0.5 * padded[1:-1] + 0.25 * padded[2:]
    total = hist.sum()
    return hist / total if total > 0 else hist


@functools.lru_cache(maxsize=1)
def _lut_features() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Of every quantised Lab bin's centre, in lookup-table order: its 8-bit lightness, its CIELAB chroma C*, and the
    histogram cell (lightness band, hue, saturation, flattened) it falls in (read-only: made once, 16 ms)."""
    centres = (np.arange(64) << QUANT) + (1 << QUANT) // 2
    lab = np.stack(np.meshgrid(centres, centres, centres, indexing="ij"), axis=-1).reshape(-1, 3)
    band, hue, sat, chroma = _features(lab)
    made = (lab[:, 0].copy(), chroma, np.ravel_multi_index((band, hue, sat), (LBINS, HBINS, SBINS)))
    for array in made:
        array.flags.writeable = False
    return made


def build_tables() -> None:
    """Make the tables colour work needs once a process and that need no frame: OpenCV's 8-bit Lab conversion tables
    (built on a process's first such conversion: 70 ms of one core here) and the Lab bins' features (`_lut_features`,
    18 ms), so that they can be made beside other work (`ColourDetector.warm_up`)."""
    cv2.cvtColor(np.zeros((1, 1, 3), np.uint8), cv2.COLOR_BGR2LAB)
    _lut_features()


def build_model(player_samples: Mapping[str, np.ndarray | None], background: np.ndarray | None,
                config: ColourModelConfig = ColourModelConfig(),
                fill: Mapping[str, float] | None = None,
                colours: Mapping[str, BallColour] | None = None) -> ColourModel:
    """Lab samples per player (None: their given colour in `colours`, else the nominal colour their id names)
    and of the background -> a model."""
    players = tuple(player_samples)
    if not players:
        raise InputError("colour model: no players to model")
    hists, learned = [], []
    for player in players:
        samples = player_samples[player]
        if samples is None or len(samples) == 0:
            # a colour guessed from the id is blurred more than one given for these balls (or measured on them)
            given = player in (colours or {})
            hists.append(_histogram(nominal_samples(colour_bgr(player, colours)),
                                    config.smoothing_bins if given else config.nominal_smoothing_bins, config))
            learned.append(False)
        else:
            hists.append(_histogram(samples, config.smoothing_bins, config))
            learned.append(True)
    stack = np.stack(hists)  # (K, LBINS, HBINS, SBINS)
    bg = _histogram(background, config.smoothing_bins, config) if background is not None and len(background) \
        else np.zeros((LBINS, HBINS, SBINS), np.float32)
    _, chroma, cell = _lut_features()
    # decided once per histogram cell (8 x 64 x 64), then spread to the 64**3 bins that fall in each: the same values,
    # an eighth of the work
    dens = stack.reshape(len(players), -1)  # (K, cells)
    bg_dens = bg.reshape(-1)
    best = dens.argmax(axis=0)
    best_density = dens.max(axis=0)
    peak = dens.max(axis=1)
    in_support = best_density >= config.support * peak[best]
    beats_bg = best_density > config.background_ratio * bg_dens
    labels = np.where(in_support & beats_bg, best + 1, BACKGROUND).astype(np.uint8)[cell]
    bg_peak = bg.max() if bg.max() > 0 else 1.0
    unknown = (labels == BACKGROUND) & (chroma > config.unknown_chroma) & (bg_dens < UNSEEN * bg_peak)[cell] \
        & ~in_support[cell]
    labels[unknown] = UNKNOWN
    posterior = np.where(unknown, 0.5, (best_density / (dens.sum(axis=0) + bg_dens + 1e-12))[cell]).astype(np.float32)
    fills = tuple(float((fill or {}).get(p, 0.6)) for p in players)
    return ColourModel(players, labels, posterior, fills, config, tuple(learned))


def disc_mask(shape: tuple[int, int], centres_px: np.ndarray, radii_px: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """A uint8 mask (255 inside) of discs of `scale` x each radius."""
    mask = np.zeros(shape, np.uint8)
    for (u, v), r in zip(np.asarray(centres_px).reshape(-1, 2), np.asarray(radii_px).reshape(-1)):
        cv2.circle(mask, (int(round(u * 4)), int(round(v * 4))), max(1, int(round(r * scale * 4))), 255, -1,
                   cv2.LINE_8, 2)
    return mask


def disc_in(image: np.ndarray, u: float, v: float, r: float, scale: float = 1.0) -> np.ndarray:
    """`image[disc_mask(image.shape[:2], [[u, v]], [r], scale) > 0]`, to the pixel and in the same order, drawn and
    read in the disc's own box: a whole-frame mask per ball cost 60 ms of the first frame on a 32-ball board."""
    h, w = image.shape[:2]
    cu, cv, radius = int(round(u * 4)), int(round(v * 4)), max(1, int(round(r * scale * 4)))
    x0, y0 = max(0, (cu - radius) // 4 - 1), max(0, (cv - radius) // 4 - 1)
    x1, y1 = min(w, (cu + radius) // 4 + 2), min(h, (cv + radius) // 4 + 2)
    if x1 <= x0 or y1 <= y0:
        return image[:0, 0]
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.circle(mask, (cu - 4 * x0, cv - 4 * y0), radius, 255, -1, cv2.LINE_8, 2)
    return image[y0:y1, x0:x1][mask > 0]


def learn_model(image: np.ndarray, players: Sequence[str], known_px: Mapping[str, Sequence[tuple[float, float, float]]],
                table_mask: np.ndarray, config: ColourModelConfig = ColourModelConfig(),
                colours: Mapping[str, BallColour] | None = None) -> ColourModel:
    """Learn from one frame: ball pixels at `known_px` (player -> [(u, v, r_px)]), background elsewhere on the table.

    Players without known balls keep their given colour (`colours`), else their nominal one. The ball discs that
    disagree with the rest of their player's discs (an empty starting space, a
    hand) are dropped before learning.
    """
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB)
    h, w = image.shape[:2]
    everything = [(u, v, r) for balls in known_px.values() for (u, v, r) in balls]
    balls_mask = disc_mask((h, w), np.array([b[:2] for b in everything]), np.array([b[2] for b in everything]), 1.05)
    background = lab[(table_mask > 0) & (balls_mask == 0)]
    if len(background) > 200_000:
        background = background[:: len(background) // 200_000 + 1]
    samples: dict[str, np.ndarray | None] = {}
    for player in players:
        discs = []
        for u, v, r in known_px.get(player, ()):
            pix = disc_in(lab, u, v, r, 0.6)
            pix = pix[(pix[:, 0] >= config.min_lightness) & (pix[:, 0] <= config.max_lightness)]
            if len(pix):
                discs.append(pix)
        samples[player] = _consistent(discs)
    # the table within RING_SCALE radii of the known balls
    rings = disc_mask((h, w), np.array([b[:2] for b in everything]), np.array([b[2] for b in everything]),
                      RING_SCALE) if everything else np.zeros((h, w), np.uint8)
    if everything and config.ring_weight > 0:
        # The table right around the balls (a painted starting row) is what a ball is mistaken for: give it
        # `ring_weight` of the background's mass, or a ball-coloured paint reads as balls.
        ring = lab[(table_mask > 0) & (rings > 0) & (balls_mask == 0)]
        if len(ring):
            copies = int(np.ceil(config.ring_weight / (1 - config.ring_weight) * len(background) / len(ring)))
            background = np.vstack([background, np.tile(ring, (copies, 1))])
    model = build_model(samples, background, config, colours=colours)
    # The table away from the known balls shows no ball on the first frame: what of it still reads as the shade
    # of a player's given colour is the table's (a dark slot's floor for a salmon ball's shaded side:
    # starcluster_v6 read every slot as a ball), give or take a lighting drift (`LOOKALIKE_REACH`). The balls' lit
    # colours keep their labels (a ball held over the first frame, a ball resting in a slot).
    core = _lit_bins(model, [_lit_lightness(samples[p], p, colours) for p in players])
    lookalikes = _lookalike_bins(model, lab[(table_mask > 0) & (rings == 0)]) & ~core
    if lookalikes.any():
        model = replace(model, labels=np.where(lookalikes, BACKGROUND, model.labels).astype(np.uint8))
    return _with_fill(model, lab, known_px)


def _lit_lightness(samples: np.ndarray | None, player: str, colours: Mapping[str, BallColour] | None) -> float:
    """A player's balls' lightness where fully lit (8-bit L), for the look-alike test: their given (or nominal)
    colour's; 0 for a player learnt from their balls' own pixels on this table (every bin of theirs is a ball's:
    only a given colour's shades are guessed, `nominal_samples`, and reach into dark colours the table shows)."""
    if samples is not None and len(samples):
        return 0.0
    return colour_lab(player, colours)[0] * 255 / 100


def _lit_bins(model: ColourModel, lit: Sequence[float]) -> np.ndarray:
    """(64**3,) bool: the bins `model` gives a player that are at least `LOOKALIKE_SHADE` of that player's lit
    lightness `lit` (by label - 1)."""
    limit = np.array([0.0, *lit, *([0.0] * (UNKNOWN - len(lit)))], np.float32)[model.labels] * LOOKALIKE_SHADE
    return (model.labels != BACKGROUND) & (model.labels != UNKNOWN) & (_lut_features()[0] >= limit)


def _lookalike_bins(model: ColourModel, table: np.ndarray) -> np.ndarray:
    """(64**3,) bool: the bins of the 8-bit Lab pixels `table` (N, 3) that `model` reads as a player's, and their
    neighbours within `LOOKALIKE_REACH` bins (lightness, a*, b*)."""
    index = _index(table[:, 0], table[:, 1], table[:, 2])
    labels = model.labels[index]
    seen = np.zeros(64 ** 3, bool)
    seen[index[(labels != BACKGROUND) & (labels != UNKNOWN) & (table[:, 0] >= model.config.min_lightness)]] = True
    near = seen.reshape(64, 64, 64)
    for axis, reach in enumerate(LOOKALIKE_REACH):
        grown = near.copy()
        for step in range(1, reach + 1):
            ahead = [slice(None)] * 3
            behind = [slice(None)] * 3
            ahead[axis], behind[axis] = slice(step, None), slice(None, -step)
            grown[tuple(ahead)] |= near[tuple(behind)]
            grown[tuple(behind)] |= near[tuple(ahead)]
        near = grown
    return near.reshape(-1) & (model.labels != BACKGROUND) & (model.labels != UNKNOWN)


def _consistent(discs: list[np.ndarray]) -> np.ndarray | None:
    """Pool the discs whose median chroma agrees with the others' (drops empty spaces and hands)."""
    kept = _consistent_at(discs)
    return np.vstack([discs[k] for k in kept]) if kept else None


def _consistent_at(discs: list[np.ndarray]) -> list[int]:
    """The indices of the discs (8-bit Lab pixels each, none empty) whose median chroma agrees with the others'."""
    if not discs:
        return []
    medians = np.array([np.median(d[:, 1:].astype(float), axis=0) for d in discs])
    centre = np.median(medians, axis=0)
    spread = np.hypot(*(medians - centre).T)
    limit = max(3 * np.median(spread), 6.0)
    return [k for k, s in enumerate(spread) if s <= limit]


def _with_fill(model: ColourModel, lab: np.ndarray, known_px: Mapping[str, Sequence[tuple[float, float, float]]]) -> ColourModel:
    """Measure, per player, what fraction of a ball's disc the model labels as that player, and how shaded the
    balls are inside their rims (`shading`: what flat paint of the colour is told from a ball by)."""
    labels = model.labels[_index(lab[..., 0], lab[..., 1], lab[..., 2])]
    light = lab[..., 0]
    labels[(light < model.config.min_lightness) | (light > model.config.max_lightness)] = BACKGROUND
    fills, shades = [], []
    for i, player in enumerate(model.players):
        values, spreads = [], []
        for u, v, r in known_px.get(player, ()):
            area = np.pi * r * r
            values.append(np.count_nonzero(disc_in(labels, u, v, r) == i + 1) / area)
            spreads.append(shading(disc_in(light, u, v, r, SHADE_DISC)))
        fills.append(float(np.clip(np.median(values), 0.2, 1.0)) if values else model.fill[i])
        shades.append(float(np.median(spreads)) if spreads else 0.0)
    return replace(model, fill=tuple(fills), shading=tuple(shades))


def shading(light: np.ndarray) -> float:
    """How unevenly lit pixels are, given their lightness (8-bit L* of a disc inside a ball's rim): its spread,
    10th to 90th percentile. A ball's curved surface spans light to shade; paint is flat (only the camera's noise),
    whatever its shape and colour."""
    if len(light) < 3:
        return 0.0
    ordered = np.sort(light, axis=None).astype(np.float64)
    return float(percentile_sorted(ordered, 90) - percentile_sorted(ordered, 10))


class BgrLabels:
    """`model.classify` for every 24-bit colour, by one lookup a pixel: a (2**24,) uint8 table indexed by
    b | g << 8 | r << 16, filled block by block (16 x 16 x 16 colours) as frames show the blocks' colours.

    A frame is labelled by one lookup a pixel instead of a CIELAB conversion, a quantisation and a lookup (measured
    1 ms against 7 ms on a 790x540 crop), with exactly the labels `classify` gives: the same conversion, pixel by
    pixel. Built whole, the table cost 0.2-0.4 s at start, a tenth of a short clip's run; a table and its balls
    show a few hundred of the 4096 blocks, most of them on the first frame.
    """

    PENDING = 254  # a colour of a block not yet filled (no label: players are numbered from 1, UNKNOWN is 255)
    BLOCK_SHIFT = 4
    FILL_BLOCKS = 32  # blocks classified at once: the conversion's temporaries stay a few MB (742 at once: +48 MB peak)

    def __init__(self, model: ColourModel) -> None:
        if len(model.players) >= self.PENDING:
            raise InputError(f"{len(model.players)} players' colours: at most {self.PENDING - 1} can be told apart")
        self.model = model
        self.table = np.full(1 << 24, self.PENDING, np.uint8)
        self.filled = np.zeros(1 << (3 * (8 - self.BLOCK_SHIFT)), bool)

    def __call__(self, packed: np.ndarray) -> np.ndarray:
        """Labels of packed colours (uint32, b | g << 8 | r << 16)."""
        labels = np.take(self.table, packed)
        pending = labels == self.PENDING
        if pending.any():
            self._fill(np.unique(_block(packed[pending])))
            labels = np.take(self.table, packed)
        return labels

    def _fill(self, blocks: np.ndarray) -> None:
        blocks = blocks[~self.filled[blocks]]
        within = np.arange(1 << (3 * self.BLOCK_SHIFT), dtype=np.uint32)
        for start in range(0, len(blocks), self.FILL_BLOCKS):
            some = blocks[start:start + self.FILL_BLOCKS]
            b, g, r = (_channel(some[:, None], within, k).ravel() for k in range(3))
            bgr = np.stack([b, g, r], axis=-1).astype(np.uint8)[None]
            self.table[b | g << 8 | r << 16] = self.model.classify(bgr)[0]
            self.filled[some] = True


def _channel(blocks: np.ndarray, within: np.ndarray, k: int) -> np.ndarray:
    """Channel `k` (0 b, 1 g, 2 r) of the colours numbered `within` of `blocks` (`BgrLabels`)."""
    low = BgrLabels.BLOCK_SHIFT
    high = 8 - low
    return ((blocks >> (k * high)) & ((1 << high) - 1)) << low | (within >> (k * low)) & ((1 << low) - 1)


def _block(packed: np.ndarray) -> np.ndarray:
    """The block (`BgrLabels`) of packed colours (b | g << 8 | r << 16): b, g and r's high bits, b's lowest."""
    low = BgrLabels.BLOCK_SHIFT
    high = 8 - low
    keep = (1 << high) - 1
    b, g, r = ((packed >> (8 * k + low)) & keep for k in range(3))
    return b | g << high | r << 2 * high


@dataclass(frozen=True)
class ColourCluster:
    """Ball-sized blobs of one colour on a frame: their median colour and where they are."""

    lab: tuple[float, float, float]  # CIE Lab (L* 0-100): the median of its balls' colours
    balls: tuple[tuple[float, float, float], ...]  # (u, v, r) image pixels of each ball
    start: tuple[str, ...] = ()  # the start places (`GameVision.start_places`) whose balls are among them

    @property
    def colour(self) -> BallColour:
        return BallColour(self.lab)


def find_ball_colours(image: np.ndarray, mapper: BoardMapper, config: ColourModelConfig = ColourModelConfig(),
                      start: Mapping[str, Sequence[tuple[float, float]]] | None = None) -> list[ColourCluster]:
    """The colours of the balls on a frame of the table, for a person to say whose is which: the groups holding a
    start place's balls first, then the most balls first.

    `start` (a name -> the board points its balls stand on when a game starts: a seat's starting row) is read
    as the referee learns the players' colours on a game's first frame: the balls there, told from empty
    places by their colour agreeing with the rest of the row's (`_consistent`), are one colour, measured on all
    their pixels together. A full row of touching balls is one blob much larger than a ball.

    The table without its balls is estimated by a median filter wider than a ball (a ball is small against
    it; painted areas and the surface are not), so the pixels that differ from it by `min_delta_e` / 2 or more
    (CIE76) and make a blob of about a ball's size at its place (a ball and its shadow; not a line, a marker or
    a painted area) are balls. A blob larger than a ball (a ball with a long shadow, or in a dark slot or gutter,
    or on the Play Line, found as one blob with it) is split twice: what of it differs from the table in hue and
    chroma (a shadow and a grey slot do not), then what differs from the colour most of that shows, are blobs of
    their own. Each blob's colour is the median of the disc around its innermost point (the
    ball, not its shadow), lightness-gated as the model is; blobs whose colours lie within `min_delta_e` / 2 of
    each other are one cluster (single linkage): colours closer than `min_delta_e` are refused anyway.

    On frames with every player's balls at rest on randomised table variants (benchmarks/calibrate_colours.py),
    each player's balls were a group of their own on 9 of 36 Star Cluster and 0 of 36 Piratenbillard variants
    before the split and the start places; on 36 and 36 with them.
    """
    h, w = image.shape[:2]
    printed = np.zeros((h, w), np.uint8)
    for marker in mapper.profile.markers.markers:  # printed squares and their white margins, not balls
        centre = np.array(marker.center, float)
        square = centre + MARKER_MARGIN * (np.array(marker.corners, float) - centre)
        cv2.fillConvexPoly(printed, np.round(mapper.calibration.board_to_image(square)).astype(np.int32), 255)
    table = table_pixels((h, w), mapper.table_polygon_px(0.0))
    corners = mapper.table_polygon_px(0.0)
    r_max = float(np.nanmax(mapper.ball_radius_px(mapper.to_board(corners))))
    scale = min(1.0, 6.0 / max(r_max, 1.0))  # the largest ball about 6 px in radius
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    lab8 = cv2.cvtColor(small, cv2.COLOR_BGR2LAB)
    on_table = cv2.resize(table, size, interpolation=cv2.INTER_NEAREST) > 0
    around = lab8.copy()
    around[~on_table] = np.median(lab8[on_table], axis=0).astype(np.uint8)  # beyond the table: not its colour
    keep = on_table & (cv2.resize(printed, size, interpolation=cv2.INTER_NEAREST) == 0)
    window = 2 * int(np.ceil(3 * r_max * scale)) + 1  # 6 radii: a ball is a fifth of it
    empty = cv2.merge([cv2.medianBlur(channel, window) for channel in cv2.split(around)])
    differs = _delta_e8(lab8, empty) >= config.min_delta_e / 2
    # an opening by a disc of half a ball's radius (the smallest ball's) takes away lines and edges, not balls
    r_min = float(np.nanmin(mapper.ball_radius_px(mapper.to_board(corners)))) * scale
    side = max(3, 2 * int(round(r_min / 2)) + 1)
    opening = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (side, side))
    blobs = cv2.morphologyEx((differs & keep).astype(np.uint8), cv2.MORPH_OPEN, opening)
    full_lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB)
    found: list[tuple[tuple[float, float, float], tuple[float, float, float], str | None]] = []
    # what differs, where it lies in `lab8`, what it differs from (None: `empty`), and how many times it was split
    # from a larger blob
    pieces: list[tuple[np.ndarray, tuple[int, int], np.ndarray | None, int]] = [(blobs, (0, 0), None, 0)]
    while pieces:
        mask, (ox, oy), surround, split = pieces.pop()
        count, comp, stats, centroids = cv2.connectedComponentsWithStats(mask, connectivity=8)
        for i in range(1, count):
            x, y, bw, bh, area = stats[i]
            x, y = x + ox, y + oy
            centre = (centroids[i] + (ox, oy)) / scale
            r = float(mapper.ball_radius_px(mapper.to_board(centre[None]))[0])
            expected = np.pi * (r * scale) ** 2
            inside = (comp[y - oy:y - oy + bh, x - ox:x - ox + bw] == i).astype(np.uint8)
            if split < 2 and (area > 2.5 * expected or max(bw, bh) > 4 * r * scale):
                # larger than a ball: a ball and its long shadow, a slot, a gutter, a line, with or without balls on
                # it. What differs from the table in hue and chroma (not a shadow, nor a grey slot or gutter), and
                # then what differs from the colour most of what is left shows (a slot, a gutter or the Play Line),
                # is looked at as a blob of its own
                own = lab8[y:y + bh, x:x + bw]
                if split == 0:
                    table_there = empty[y:y + bh, x:x + bw].astype(np.float32)
                    hue = np.hypot(*(own[..., 1:].astype(np.float32) - table_there[..., 1:]).transpose(2, 0, 1))
                    foreign, surround = (hue >= config.min_delta_e / 2) & (inside > 0), None
                else:
                    surround = np.median(own[inside > 0], axis=0).astype(np.float32)
                    foreign = (_delta_e8(own, np.broadcast_to(surround, own.shape)) >= config.min_delta_e / 2) \
                        & (inside > 0)
                pieces.append((cv2.morphologyEx(foreign.astype(np.uint8), cv2.MORPH_OPEN, opening), (x, y), surround,
                               split + 1))
                continue
            if not (0.4 * expected <= area <= 2.5 * expected) or max(bw, bh) > 4 * r * scale:
                continue
            _, enclosing = cv2.minEnclosingCircle(cv2.findNonZero(inside))
            if area < 0.5 * np.pi * enclosing ** 2:  # not round: a corner of a band, a piece of a line
                continue
            # its centre: the blob's pixels weighted by how far their hue and chroma are from what is around it
            # (a shadow darkens the table but keeps its a*, b*; the ball does not)
            x0, y0 = int(x / scale), int(y / scale)
            x1, y1 = min(w, int(np.ceil((x + bw) / scale))), min(h, int(np.ceil((y + bh) / scale)))
            part = cv2.resize(inside, (x1 - x0, y1 - y0), interpolation=cv2.INTER_NEAREST) > 0
            seen = full_lab[y0:y1, x0:x1].astype(np.float32)
            under = cv2.resize(empty[y:y + bh, x:x + bw], (x1 - x0, y1 - y0), interpolation=cv2.INTER_NEAREST) \
                if surround is None else np.broadcast_to(surround, seen.shape)
            weight: np.ndarray = np.hypot(*(seen[..., 1:] - under[..., 1:]).transpose(2, 0, 1)) * part
            if weight.sum() <= 0:
                weight = part.astype(np.float32)
            ys, xs = np.mgrid[y0:y1, x0:x1]
            u, v = float((weight * xs).sum() / weight.sum()), float((weight * ys).sum() / weight.sum())
            pixels = disc_in(full_lab, u, v, r, 0.7)
            pixels = pixels[(pixels[:, 0] >= config.min_lightness) & (pixels[:, 0] <= config.max_lightness)]
            if len(pixels) < 5:
                continue
            colour = ball_colour(pixels)
            ring = (disc_mask((h, w), np.array([[u, v]]), np.array([r]), 2.5) > 0) & (table > 0) \
                & (disc_mask((h, w), np.array([[u, v]]), np.array([r]), 1.5) == 0)
            around_ball = np.median(full_lab[ring].astype(float), axis=0) - [0, 128, 128] if ring.any() else None
            if around_ball is not None and delta_e(colour, (around_ball[0] * 100 / 255, around_ball[1],
                                                            around_ball[2])) < config.min_delta_e / 2:
                continue  # the table's own colour where the table-without-balls estimate went wrong (a narrow strip)
            found.append((colour, (float(u), float(v), r), None))
    return _linked(_with_start(found, full_lab, mapper, config, start or {}), config.min_delta_e / 2)


FIT_CHROMA = (1.0, 1.15, 1.3, 1.45, 1.6)  # `fitted_colour`: how much more chromatic than measured a colour is tried
FIT_LIGHTNESS = (0.9, 1.0, 1.1, 1.2)  # ... and how much lighter (or darker)


def fitted_colour(image: np.ndarray, mapper: BoardMapper, cluster: ColourCluster, others: Sequence[ColourCluster] = (),
                  config: ColourModelConfig = ColourModelConfig()) -> BallColour:
    """The colour to give the detector for a group's balls (`find_ball_colours` on `image`): of the group's colour made
    more chromatic (`FIT_CHROMA`) and lighter or darker (`FIT_LIGHTNESS`), the one whose model (`learn_model`: its
    shades, highlights and haze, against the table this frame shows away from the balls of this group and of
    `others`) labels the most of the group's balls' pixels as theirs, less the table's pixels it labels so. A colour
    measured is the ball as the camera shows it, glass, haze and all, where a colour given is taken as the ball's own
    and hazed by the model; given as measured, the model reached into the table's colours (Star Cluster variants
    refereed with the measured colours: 16 of 36 exact; fitted, 22; with the colours the balls were drawn in, 27)."""
    h, w = image.shape[:2]
    every = [ball for group in (cluster, *others) for ball in group.balls]
    clear = disc_mask((h, w), np.array([b[:2] for b in every]), np.array([b[2] for b in every]), 1.5)
    table = table_pixels((h, w), mapper.table_polygon_px(0.0))
    table[clear > 0] = 0
    own = disc_mask((h, w), np.array([b[:2] for b in cluster.balls]), np.array([b[2] for b in cluster.balls]), 0.7) > 0
    scored = own | (table > 0)  # the group's balls and the bare table (apart: the table is cleared round every ball)
    pixels, mine = image[scored][None], own[scored]  # labelled as one row, once converted a candidate
    light, a, b = cluster.lab
    best: tuple[int, BallColour] | None = None
    for chroma in FIT_CHROMA:
        for lighter in FIT_LIGHTNESS:
            candidate = BallColour.from_srgb(lab_to_srgb((min(100.0, light * lighter), a * chroma, b * chroma)))
            labels = learn_model(image, ["ball"], {}, table, config, {"ball": candidate}).classify(pixels)[0] == 1
            net = int(np.count_nonzero(labels[mine])) - int(np.count_nonzero(labels[~mine]))
            if best is None or net > best[0]:
                best = (net, candidate)
    assert best is not None
    return best[1]


def _with_start(found: list[tuple[tuple[float, float, float], tuple[float, float, float], str | None]],
                lab: np.ndarray, mapper: BoardMapper, config: ColourModelConfig,
                start: Mapping[str, Sequence[tuple[float, float]]]
                ) -> list[tuple[tuple[float, float, float], tuple[float, float, float], str | None]]:
    """`found` (colour, (u, v, r) px, start place) with the balls standing on the `start` places (`find_ball_colours`)
    in place of the blobs found on them (any whose disc overlaps one of theirs: two balls do not overlap, so it is
    a part of them, as the paint between two touching balls of a row is): each place's balls take the colour of their
    pixels together."""
    measured = []
    for name, points in start.items():
        discs = mapper.ball_discs_px(np.array(points, float))
        pixels = [disc_in(lab, u, v, r, 0.6) for u, v, r in discs]
        pixels = [p[(p[:, 0] >= config.min_lightness) & (p[:, 0] <= config.max_lightness)] for p in pixels]
        shown = [(disc, p) for disc, p in zip(discs, pixels) if len(p)]
        kept = _consistent_at([p for _, p in shown])
        if kept:
            colour = ball_colour(np.vstack([shown[k][1] for k in kept]))
            measured += [(colour, shown[k][0], name) for k in kept]
    every = [disc for _, disc, _ in measured]
    return [f for f in found if all(np.hypot(f[1][0] - u, f[1][1] - v) >= r + f[1][2] for u, v, r in every)] + measured


def ball_colour(pixels: np.ndarray) -> tuple[float, float, float]:
    """A ball's own colour (CIE Lab, L* 0-100) from its 8-bit Lab pixels: how it looks where the light falls
    fully, as a colour given is taken (the detector shades it darker, `nominal_samples`). Shading darkens a ball
    and a highlight whitens it, taking chroma away, so these are its brightest pixels among those that keep
    their chroma: the median of the top `LIT` of the lightness of its more saturated half."""
    lab = pixels.astype(float) - [0, 128, 128]
    chroma = np.hypot(lab[:, 1], lab[:, 2])
    vivid = lab[chroma >= np.median(chroma)]
    lit = vivid[vivid[:, 0] >= np.percentile(vivid[:, 0], 100 - LIT)]
    light, a, b = np.median(lit, axis=0)
    return float(light * 100 / 255), float(a), float(b)


def _delta_e8(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """CIE76 distance between two 8-bit OpenCV Lab images."""
    d = first.astype(np.float32) - second.astype(np.float32)
    d[..., 0] *= 100 / 255
    return np.sqrt((d ** 2).sum(axis=-1))


def _linked(found: list[tuple[tuple[float, float, float], tuple[float, float, float], str | None]],
            within: float) -> list[ColourCluster]:
    """Single-linkage clusters of the blobs' colours (blobs within `within` ΔE join): those holding a start place's
    balls first (a seat's row: a player's colour, where a blob elsewhere may be a grid line's crossing), then the
    most blobs first."""
    groups: list[list[int]] = []
    for i, (lab, _, _) in enumerate(found):
        near = [g for g in groups if any(delta_e(lab, found[j][0]) < within for j in g)]
        merged = [i] + [j for g in near for j in g]
        groups = [g for g in groups if g not in near] + [merged]
    clusters = []
    for group in groups:
        labs = np.array([found[j][0] for j in group])
        light, a, b = np.median(labs, axis=0)
        start = tuple(dict.fromkeys(name for j in sorted(group) if (name := found[j][2]) is not None))
        clusters.append(ColourCluster((float(light), float(a), float(b)), tuple(found[j][1] for j in sorted(group)),
                                      start))
    return sorted(clusters, key=lambda c: (not c.start, -len(c.balls), c.lab))
