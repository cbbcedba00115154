"""The score-over-time plot, drawn as inline SVG.

Drawn by hand rather than with a plotting library so the report stays one
self-contained file with nothing to install and nothing to fetch: a step line
per player (a score only changes when a call awards points), a dot with a
tooltip at every change, and dashed lines where rounds end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

# Player ids are ball colours; these read well on white. Anything else gets the fallback palette.
_CSS_COLOURS = {
    "red": "#d62728", "blue": "#1f77b4", "green": "#2ca02c", "yellow": "#d4a600", "orange": "#ff7f0e",
    "purple": "#9467bd", "black": "#222222", "white": "#8c8c8c", "pink": "#e377c2", "brown": "#8c564b",
}
_FALLBACK = ("#17becf", "#bcbd22", "#7f7f7f", "#393b79")


@dataclass(frozen=True)
class Series:
    """One player's score: (t, score from t on), in time order, starting at 0 s."""

    label: str
    colour: str
    points: tuple[tuple[float, int], ...]


@dataclass(frozen=True)
class Mark:
    """A vertical marker, e.g. the end of a round."""

    t: float
    label: str


def player_colour(player: str, index: int) -> str:
    return _CSS_COLOURS.get(player.lower(), _FALLBACK[index % len(_FALLBACK)])


def nice_step(span: float, max_ticks: int = 6) -> float:
    """A 1-2-5 tick step giving at most `max_ticks` intervals over `span`."""
    if span <= 0:
        return 1.0
    raw = span / max_ticks
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def score_plot_svg(series: list[Series], t_end: float, marks: tuple[Mark, ...] = (),
                   width: int = 720, height: int = 260) -> str:
    """The plot as an <svg> element; scores are integers, so y ticks are whole points."""
    left, right, top, bottom = 44, 16, 14, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    t_end = max(t_end, 1e-6)
    lowest = min([0] + [score for s in series for _, score in s.points])
    highest = max([1] + [score for s in series for _, score in s.points])
    y_step = max(1.0, nice_step(highest - lowest, 5))
    y_min = math.floor(lowest / y_step) * y_step
    y_max = math.ceil(highest / y_step) * y_step

    def x(t: float) -> float:
        return left + plot_w * min(max(t, 0.0), t_end) / t_end

    def y(score: float) -> float:
        return top + plot_h * (y_max - score) / (y_max - y_min)

    parts = [f'<svg class="score-plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" role="img" aria-label="score over time">']
    tick = y_min
    while tick <= y_max + 1e-9:
        parts.append(f'<line class="grid" x1="{left}" x2="{left + plot_w}" y1="{y(tick):.1f}" y2="{y(tick):.1f}"/>'
                     f'<text class="tick" x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:g}</text>')
        tick += y_step
    t_step = nice_step(t_end, 8)
    tick = 0.0
    while tick <= t_end + 1e-9:
        parts.append(f'<text class="tick" x="{x(tick):.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
                     f'{tick:g}</text>')
        tick += t_step
    parts.append(f'<text class="tick" x="{left + plot_w}" y="{height - 2}" text-anchor="end">seconds</text>')
    parts.append(f'<line class="axis" x1="{left}" x2="{left + plot_w}" y1="{y(y_min):.1f}" y2="{y(y_min):.1f}"/>')
    for mark in marks:
        parts.append(f'<line class="mark" x1="{x(mark.t):.1f}" x2="{x(mark.t):.1f}" y1="{top}" '
                     f'y2="{top + plot_h}"/><text class="tick" x="{x(mark.t) - 3:.1f}" y="{top + 10}" '
                     f'text-anchor="end">{escape(mark.label)}</text>')
    for s in series:
        parts.append(_series_svg(s, t_end, x, y))
    parts.append("</svg>")
    return "".join(parts)


def _series_svg(series: Series, t_end: float, x, y) -> str:
    points = series.points or ((0.0, 0),)
    path = [f"M{x(points[0][0]):.1f},{y(points[0][1]):.1f}"]
    for t, score in points[1:]:
        path.append(f"H{x(t):.1f}V{y(score):.1f}")
    path.append(f"H{x(t_end):.1f}")
    label = escape(series.label)
    dots = "".join(f'<circle cx="{x(t):.1f}" cy="{y(score):.1f}" r="3"><title>{label} {score} at {t:.2f} s'
                   f'</title></circle>' for t, score in points[1:])
    return (f'<g class="series" data-player="{label}" stroke="{series.colour}" fill="{series.colour}">'
            f'<path fill="none" stroke-width="2" d="{"".join(path)}"/>{dots}</g>')
