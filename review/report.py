"""The post-match review report: one HTML file that opens from disk.

Everything is inline (CSS, the SVG plot, thumbnails as data: URIs), so the
page can be mailed, archived or opened on a laptop at the table with no server
and no network. It puts first what an umpire has to look at (calls flagged for
review, pipeline review warnings), then the score over time and every shot
with a picture of the settled table, its event id (what `referee correct`
takes) and, when highlight clips exist, a link to the clip that shows it.

When the run has umpire corrections, the result, plot and shots are those of
result.corrected.json; the review list stays the original one, each item with
what the umpire decided about it.
"""

from __future__ import annotations

import base64
import json
import os
import platform
from dataclasses import dataclass
from html import escape
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable

import cv2

from calibration.calibrate import load_calibration
from record.run_folder import (CALIBRATION_FILE, HIGHLIGHTS_DIR, HIGHLIGHTS_INDEX_FILE, read_corrected_result,
                               read_run)
from rules.colours import parse_colour
from rules.errors import InputError
from rules.events import Confirm, Event, GameStart, Overturn, SnapshotCorrection, Source, TableSettled
from rules.replay import AMENDMENTS, overturned
from rules.files import read_json
from rules.games import TITLES
from rules.result import POINT_KINDS
from vision.video_io import read_frames

from .corrections import Run
from .plot import Mark, Series, player_colour, score_plot_svg

THUMB_WIDTH = 320
THUMB_QUALITY = 70
TIME_TOLERANCE_S = 2e-3  # decision times are rounded to 1 ms in result.json
POINT_KIND_NAMES = frozenset(kind.value for kind in POINT_KINDS)  # the calls that carry points


@dataclass(frozen=True)
class Clip:
    """A highlight clip from an index.json, with the href the report links to."""

    start_s: float
    end_s: float
    href: str


@dataclass(frozen=True)
class ShotRow:
    """One shot: its call, what it earned, the running score and the settle it ended with."""

    number: int
    t: float
    player: str
    summary: str
    settle_id: str  # the table_settled event id: what --snapshot takes
    settle_t: float  # exact time of that event, where the thumbnail is grabbed
    points: tuple[tuple[str, int], ...]  # player -> points won at this shot
    scores: tuple[tuple[str, int], ...]  # player -> total after it
    notes: tuple[str, ...]  # fouls, removals, warnings decided with it
    flagged: bool
    confidence: float


@dataclass(frozen=True)
class ReviewItem:
    """A call flagged for review, or a pipeline warning marked for review."""

    t: float
    summary: str
    ids: tuple[str, ...]  # events it concerns (what --overturn/--confirm/--snapshot take)
    confidence: float | None
    origin: str  # "call" or "pipeline"
    status: str  # what the umpire decided, or ""
    shot: int | None  # the shot row it belongs to
    settle_t: float | None  # the table_settled it concerns, for its thumbnail


@dataclass(frozen=True)
class ReportSummary:
    path: Path
    size_bytes: int
    shots: int
    review_items: int
    thumbnails: int
    clips_linked: int


def build_report(run_dir: str | Path, out: str | Path, video: str | Path | None = None,
                 clips_dir: str | Path | None = None, calibration: str | Path | None = None,
                 thumbnails: bool = True) -> ReportSummary:
    """Read the run folder, grab the thumbnails, write the page; raise InputError before writing anything."""
    folder = read_run(run_dir, tracks=False)
    run = Run.from_folder(folder)
    original = folder.finished_result()
    corrected = read_corrected_result(run.dir) if run.corrections else None
    result = corrected if corrected is not None else original
    rows = shot_rows(result["decisions"], run.events)
    warnings = list(folder.warnings)
    review = review_items(original["decisions"], warnings, run, rows)
    times = [row.settle_t for row in rows] + [item.settle_t for item in review if item.settle_t is not None]
    images = grab_thumbnails(_video_path(run, video), times) if thumbnails else {}
    out = Path(out)
    if clips_dir and not (Path(clips_dir) / HIGHLIGHTS_INDEX_FILE).exists():
        raise InputError(f"--clips {clips_dir} holds no {HIGHLIGHTS_INDEX_FILE}; pass the --out folder of "
                         "`referee highlights`")
    clips = find_clips(Path(clips_dir) if clips_dir else run.dir / HIGHLIGHTS_DIR, out.parent)
    cal_path = Path(calibration) if calibration else run.dir / CALIBRATION_FILE
    cal = _calibration_facts(cal_path) if calibration or cal_path.exists() else {}
    page = render(run, original, result, rows, review, warnings, images, clips, cal)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    linked = sum(1 for row in rows if _clip_for(clips, row.settle_t))
    return ReportSummary(out, out.stat().st_size, len(rows), len(review), len(images), linked)


def shot_rows(decisions: list[dict[str, Any]], events: Iterable[Event]) -> list[ShotRow]:
    """Each `shot` call with the calls made right after it at the same moment (its points, fouls...)."""
    settles = [e for e in events if isinstance(e, TableSettled)]
    totals: dict[str, int] = {}
    groups: list[tuple[dict[str, Any], list[dict[str, Any]], dict[str, int]]] = []
    in_group = False
    for decision in decisions:
        if decision["kind"] in POINT_KIND_NAMES and decision.get("player"):
            totals[decision["player"]] = totals.get(decision["player"], 0) + decision.get("points", 0)
        if decision["kind"] == "shot":
            groups.append((decision, [], {}))
            in_group = True
        elif in_group and abs(decision["t"] - groups[-1][0]["t"]) < 1e-9:
            groups[-1][1].append(decision)
        else:
            in_group = False
        if in_group:
            groups[-1][2].update(totals)  # the running score once this shot's calls are in
    rows = []
    for number, (shot, rest, after) in enumerate(groups, start=1):
        settle = _settle_of(shot, settles)
        won: dict[str, int] = {}
        for d in rest:
            if d["kind"] in POINT_KIND_NAMES and d.get("player"):
                won[d["player"]] = won.get(d["player"], 0) + d.get("points", 0)
        notes = tuple(f"{d['kind']}: {d['summary']}" for d in rest if d["kind"] not in (*POINT_KIND_NAMES, "turn"))
        group = [shot, *rest]
        rows.append(ShotRow(
            number, shot["t"], shot.get("player", ""), shot["summary"],
            settle.id if settle else "", settle.t if settle else shot["t"],
            tuple(won.items()), tuple(after.items()), notes,
            any(d.get("flagged") for d in group), min(d.get("confidence", 1.0) for d in group)))
    return rows


def _settle_of(shot: dict[str, Any], settles: list[TableSettled]) -> TableSettled | None:
    """The settle that ended the shot: its cause when that is one (Star Cluster Ball), else the one at its time."""
    for settle in settles:
        if settle.id == shot.get("cause"):
            return settle
    near = [s for s in settles if abs(s.t - shot["t"]) < TIME_TOLERANCE_S]
    return min(near, key=lambda s: abs(s.t - shot["t"])) if near else None


def review_items(decisions: list[dict[str, Any]], warnings: list[dict[str, Any]], run: Run,
                 rows: list[ShotRow]) -> list[ReviewItem]:
    """Flagged calls and review warnings, in time order, each with the umpire's decision if any."""
    items = []
    for d in decisions:
        if d.get("flagged"):
            settles = _settles_at(run, d["t"])
            ids = tuple(dict.fromkeys(i for i in (d.get("cause"), *(e.id for e in settles)) if i))
            items.append(ReviewItem(d["t"], f"{d['kind']}: {d['summary']}", ids, d.get("confidence"), "call",
                                    _status(run, ids), _row_at(rows, d["t"]),
                                    settles[0].t if settles else None))
    for w in warnings:
        if w.get("review"):
            settles = _settles_at(run, w["t"])
            ids = tuple(e.id for e in settles)
            items.append(ReviewItem(w["t"], w["message"], ids, None, "pipeline", _status(run, ids),
                                    _row_at(rows, w["t"]), settles[0].t if settles else None))
    return sorted(items, key=lambda item: item.t)


def _settles_at(run: Run, t: float) -> list[TableSettled]:
    return [e for e in run.events if isinstance(e, TableSettled) and abs(e.t - t) < TIME_TOLERANCE_S]


def _row_at(rows: list[ShotRow], t: float) -> int | None:
    return next((row.number for row in rows if abs(row.t - t) < TIME_TOLERANCE_S), None)


def _status(run: Run, ids: tuple[str, ...]) -> str:
    """What the umpire decided about the events `ids`: during the match (events.jsonl) or after it (corrections)."""
    verbs = {Confirm: "confirmed", Overturn: "overturned", SnapshotCorrection: "snapshot corrected"}
    amendments = [e for e in (*run.events, *(c.event for c in run.corrections)) if isinstance(e, AMENDMENTS)]
    return "; ".join(f"{verbs[type(e)]} by {e.by} ({e.id}: {e.reason})" for e in amendments if e.target in ids)


def _umpire_html(run: Run, names: dict[str, str]) -> str:
    """Every input the umpire gave during the match (from the live console or a session file), who gave it, and
    whether it stands (an overturn of an input undoes it)."""
    inputs = [e for e in run.events if e.source is Source.UMPIRE]
    if not inputs:
        return ""
    undone = overturned(list(run.events))
    rows = []
    for event in inputs:
        fields = {k: v for k, v in event.to_json().items() if k not in ("type", "t", "id", "source", "by", "reason")}
        if isinstance(event, GameStart):
            fields = {"players": ", ".join(names.get(p.id, p.id) for p in event.players)}
        what = "; ".join(f"{k} {v}" for k, v in fields.items() if k != "balls")
        reason = getattr(event, "reason", "")
        stands = '<span class="flag">undone</span>' if event.id in undone else ""
        rows.append(f'<tr><td class="num">{event.t:.2f}</td><td><code>{escape(event.id)}</code></td>'
                    f"<td>{escape(event.TYPE)}</td><td>{escape(what)}</td><td>{escape(getattr(event, 'by', ''))}</td>"
                    f"<td>{escape(reason)}</td><td>{stands}</td></tr>")
    return (f"<h2>Umpire's inputs ({len(inputs)})</h2><table class=\"review\"><thead><tr><th>s</th><th>id</th>"
            "<th>input</th><th>what</th><th>by</th><th>why</th><th></th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _video_path(run: Run, video: str | Path | None) -> Path:
    recorded = run.source.get("video")
    path = Path(video) if video else Path(recorded) if recorded else None
    if path is None or not path.is_file():
        where = f"--video {video}" if video else f"the run's source {recorded!r}" if recorded else "the run"
        raise InputError(f"thumbnails need the source video, and {where} is not a video file here; "
                         "pass --video FILE, or --no-thumbnails")
    return path


def grab_thumbnails(video: Path, times: list[float]) -> dict[float, str]:
    """The first frame at or after each time, downscaled, as JPEG data: URIs; one pass through the video."""
    wanted = sorted(set(times))
    images: dict[float, str] = {}
    if not wanted:
        return images
    last = None
    for frame in read_frames(video):
        while wanted and frame.t + 1e-6 >= wanted[0]:
            images[wanted.pop(0)] = _jpeg_uri(frame.image)
        if not wanted:
            break
        last = frame
    for t in wanted:  # past the end of the video: its last frame
        if last is not None:
            images[t] = _jpeg_uri(last.image)
    return images


def _jpeg_uri(image) -> str:
    height, width = image.shape[:2]
    small = cv2.resize(image, (THUMB_WIDTH, round(height * THUMB_WIDTH / width)), interpolation=cv2.INTER_AREA)
    ok, data = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, THUMB_QUALITY])
    if not ok:
        raise InputError("a thumbnail could not be encoded as JPEG; check the OpenCV install")
    return "data:image/jpeg;base64," + base64.b64encode(data.tobytes()).decode("ascii")


def find_clips(folder: Path, page_dir: Path) -> list[Clip]:
    """Clips listed in FOLDER/index.json (`referee highlights`), as links relative to the page.

    Of each entry of its `clips` list the report uses `file` (relative to the index) and the time range
    `start_s`..`end_s` in the source video's seconds.
    """
    index = folder / HIGHLIGHTS_INDEX_FILE
    if not index.exists():
        return []
    clips = []
    try:
        for entry in read_json(index, "highlights index", fix="re-run `referee highlights`")["clips"]:
            target = (folder / entry["file"]).resolve()
            try:
                href = Path(os.path.relpath(target, page_dir.resolve())).as_posix()
            except ValueError:  # another drive: only an absolute link can reach it
                href = target.as_uri()
            clips.append(Clip(float(entry["start_s"]), float(entry["end_s"]), href))
    except (KeyError, TypeError, ValueError, OverflowError) as error:  # OverflowError: an integer past a float
        raise InputError(f"{index}: needs a 'clips' list, each with 'file', 'start_s' and 'end_s' ({error!r}); "
                         "re-run `referee highlights`") from None
    return clips


def _clip_for(clips: list[Clip], t: float) -> Clip | None:
    """The shortest clip covering t: the one about this shot rather than a whole turn."""
    covering = [c for c in clips if c.start_s - TIME_TOLERANCE_S <= t <= c.end_s + TIME_TOLERANCE_S]
    return min(covering, key=lambda c: c.end_s - c.start_s) if covering else None


def _calibration_facts(path: Path) -> dict[str, str]:
    """Profile and reprojection error of the calibration the run used, when it is known."""
    cal = load_calibration(path)
    return {"profile": f"{cal.profile_name} ({cal.game})",
            "calibration error": f"rms {cal.rms_mm:.2f} mm, max {cal.max_mm:.2f} mm ({cal.method}, "
                                 f"{cal.points_used} points; {path})"}


def _versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name, dist in (("referee", "table-referee"), ("opencv", "opencv-python"), ("onnxruntime", "onnxruntime"),
                       ("numpy", "numpy")):
        try:
            versions[name] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


# ------------------------------------------------------------------------------------------ page

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d1d1f;background:#f5f5f7}
main{max-width:1060px;margin:0 auto;padding:20px 24px 40px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.sub{color:#666;margin:0 0 16px}
.card{background:#fff;border-radius:8px;padding:14px 18px;box-shadow:0 1px 2px rgba(0,0,0,.08)}
.winner{font-size:20px;font-weight:600}
.scores{display:flex;gap:28px;margin:8px 0;flex-wrap:wrap}
.score b{font-size:26px;display:block}
.swatch{display:inline-block;width:11px;height:11px;border-radius:50%;margin-right:5px;vertical-align:-1px}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #e5e5ea;vertical-align:top}
th{background:#fafafa;font-weight:600;font-size:13px}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}td.who{white-space:nowrap}
tr.flagged{background:#fff4e5}
.flag{color:#b45309;font-weight:600}
.ok{color:#2f7d32}
.banner{background:#e8f0fe;border-left:4px solid #1a73e8;padding:8px 12px;margin:12px 0}
img.thumb{width:240px;height:auto;border-radius:4px;display:block}img.thumb.small{width:120px}
code{font-size:12px;background:#f0f0f3;padding:1px 4px;border-radius:3px}
.notes{color:#555;font-size:12px;margin-top:3px}
.legend span{margin-right:16px}
svg.score-plot{max-width:100%;height:auto;background:#fff}
svg .grid{stroke:#eee}svg .axis{stroke:#999}svg .mark{stroke:#999;stroke-dasharray:4 3}
svg .tick{font-size:11px;fill:#666}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;margin:0}
dl.meta dt{color:#666}dl.meta dd{margin:0;word-break:break-all}
"""


def render(run: Run, original: dict[str, Any], result: dict[str, Any], rows: list[ShotRow],
           review: list[ReviewItem], warnings: list[dict[str, Any]], images: dict[float, str], clips: list[Clip],
           calibration: dict[str, str]) -> str:
    players = [p["id"] for p in result["players"]]
    colours = {p["id"]: parse_colour(p["colour"], f"player {p['id']}").hex if p.get("colour") is not None
               else player_colour(p["id"], i) for i, p in enumerate(result["players"])}  # their balls' colour, if given
    names = {p["id"]: p.get("name") or p["id"] for p in result["players"]}
    title = f"{TITLES.get(result['game'], result['game'])}: review of {run.dir.name}"
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
             f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><style>{CSS}</style></head>"
             f"<body><main><h1>{escape(title)}</h1><p class=\"sub\">{escape(str(run.dir))}</p>"]
    parts.append(_result_html(original, result, run, names, colours))
    parts.append(_review_html(review, images))
    parts.append(_umpire_html(run, names))
    parts.append(_plot_html(result, players, names, colours))
    parts.append(_shots_html(rows, players, names, colours, images, clips))
    parts.append(_warnings_html(warnings))
    parts.append(_meta_html(run, result, calibration))
    parts.append("</main></body></html>\n")
    return "".join(parts)


def _player(pid: str, names: dict[str, str], colours: dict[str, str]) -> str:
    return f'<span class="swatch" style="background:{colours.get(pid, "#999")}"></span>{escape(names.get(pid, pid))}'


def _result_html(original: dict[str, Any], result: dict[str, Any], run: Run, names, colours) -> str:
    winners = result["winners"]
    if winners:
        headline = " and ".join(_player(w, names, colours) for w in winners) + (" win" if len(winners) > 1 else " wins")
    else:
        headline = "no winner yet"
    state = "Complete" if result["complete"] else "Not complete: the log stops mid-game, scores so far"
    stopped = result.get("stopped")
    if isinstance(stopped, dict):  # the run was stopped before its source ended (docs/record.md)
        state += (f" (the run was stopped at {stopped.get('t', 0):.1f}s: {stopped.get('reason', '')}; "
                  "`referee run --resume` continues it)")
    scores = "".join(f'<div class="score">{_player(p, names, colours)}<b>{result["final_scores"].get(p, 0)}</b></div>'
                     for p in names)
    rounds = []
    for game in result["games"]:
        for r in game["rounds"]:
            label = f"game {game['number']}, round {r['number']}" + (" (tie-break)" if r.get("tiebreak") else "")
            cells = "".join(f'<td class="num">{r["scores"].get(p, 0)}</td>' for p in names)
            rounds.append(f"<tr><td>{label}</td>{cells}</tr>")
        cells = "".join(f'<td class="num"><b>{game["totals"].get(p, 0)}</b></td>' for p in names)
        won = " and ".join(escape(names.get(w, w)) for w in game["winners"]) or "-"
        rounds.append(f"<tr><td><b>game {game['number']}</b> (winner: {won})</td>{cells}</tr>")
    head = "".join(f"<th>{_player(p, names, colours)}</th>" for p in names)
    banner = ""
    if result is not original:
        was = " and ".join(escape(names.get(w, w)) for w in original["winners"]) or "none"
        scores_was = ", ".join(f"{escape(names.get(p, p))} {v}" for p, v in original["final_scores"].items())
        applied = "".join(f"<li>{escape(c.describe())} <small>(recorded {escape(c.recorded_at)})</small></li>"
                          for c in run.corrections)
        banner = (f'<div class="banner"><b>After {len(run.corrections)} umpire correction(s).</b> As refereed: '
                  f"winner {was}; {scores_was}.<ul>{applied}</ul></div>")
    return (f'<section class="card"><div class="winner">{headline}</div>{banner}<div class="scores">{scores}</div>'
            f'<p>{escape(state)}. {escape(result.get("status", ""))}</p>'
            f"<table><thead><tr><th></th>{head}</tr></thead><tbody>{''.join(rounds)}</tbody></table></section>")


def _review_html(review: list[ReviewItem], images: dict[float, str]) -> str:
    if not review:
        return '<h2>For review</h2><p class="ok">No call was flagged for review.</p>'
    rows = []
    for item in review:
        ids = " ".join(f"<code>{escape(i)}</code>" for i in item.ids)
        conf = f"{item.confidence:.2f}" if item.confidence is not None else ""
        shot = f'<a href="#shot-{item.shot}">shot {item.shot}</a>' if item.shot else ""
        status = f'<span class="ok">{escape(item.status)}</span>' if item.status else '<span class="flag">open</span>'
        image = images.get(item.settle_t) if item.settle_t is not None else None
        thumb = f'<img class="thumb small" alt="table at {item.settle_t:.2f} s" src="{image}">' if image else ""
        rows.append(f'<tr><td class="num">{item.t:.2f}</td><td>{item.origin}</td><td>{escape(item.summary)}</td>'
                    f'<td class="num">{conf}</td><td>{ids}</td><td>{shot}</td><td>{status}</td><td>{thumb}</td></tr>')
    return (f'<h2>For review ({len(review)})</h2><table class="review"><thead><tr><th>s</th><th>from</th>'
            f"<th>what</th><th>confidence</th><th>event ids</th><th>shot</th><th>umpire</th><th>table</th></tr>"
            f"</thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _plot_html(result: dict[str, Any], players: list[str], names, colours) -> str:
    totals = {p: 0 for p in players}
    points: dict[str, list[tuple[float, int]]] = {p: [(0.0, 0)] for p in players}
    marks = []
    for d in result["decisions"]:
        if d["kind"] in POINT_KIND_NAMES and d.get("player") in totals and d.get("points"):
            totals[d["player"]] += d["points"]
            points[d["player"]].append((d["t"], totals[d["player"]]))
        elif d["kind"] == "round_result":
            marks.append(Mark(d["t"], f"R{d.get('round', '')}"))
    t_end = max([d["t"] for d in result["decisions"]] + [1.0])
    series = [Series(names[p], colours[p], tuple(points[p])) for p in players]
    legend = "".join(f"<span>{_player(p, names, colours)}</span>" for p in players)
    return (f'<h2>Score over time</h2><div class="card"><div class="legend">{legend}</div>'
            f"{score_plot_svg(series, t_end, tuple(marks))}</div>")


def _shots_html(rows: list[ShotRow], players: list[str], names, colours, images: dict[float, str],
                clips: list[Clip]) -> str:
    head = "".join(f'<th class="num">{_player(p, names, colours)}</th>' for p in players)
    body = []
    for row in rows:
        won = dict(row.points)
        after = dict(row.scores)
        cells = "".join(f'<td class="num">{after.get(p, 0)}{f" <small>({won[p]:+d})</small>" if won.get(p) else ""}'
                        f"</td>" for p in players)
        image = images.get(row.settle_t)
        thumb = f'<img class="thumb" alt="table at {row.settle_t:.2f} s" src="{image}">' if image else ""
        clip = _clip_for(clips, row.settle_t)
        link = f'<a href="{escape(clip.href)}">clip</a>' if clip else ""
        flag = ' <span class="flag">review</span>' if row.flagged else ""
        conf = f" <small>(confidence {row.confidence:.2f})</small>" if row.confidence < 1 else ""
        notes = "".join(f"<div>{escape(n)}</div>" for n in row.notes)
        body.append(f'<tr id="shot-{row.number}"{" class=flagged" if row.flagged else ""}>'
                    f'<td class="num">{row.number}</td><td class="num">{row.t:.2f}</td>'
                    f"<td class=\"who\">{_player(row.player, names, colours) if row.player else ''}</td>"
                    f"<td>{escape(row.summary)}{flag}{conf}<div class=\"notes\">{notes}</div></td>{cells}"
                    f"<td>{thumb}</td><td><code>{escape(row.settle_id)}</code></td><td>{link}</td></tr>")
    return (f"<h2>Shots ({len(rows)})</h2><table class=\"shots\"><thead><tr><th>#</th><th>s</th><th>player</th>"
            f"<th>call</th>{head}<th>settled table</th><th>settle id</th><th>clip</th></tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")


def _warnings_html(warnings: list[dict[str, Any]]) -> str:
    if not warnings:
        return ""
    items = "".join(f"<li><b>{w['t']:.2f} s</b> {escape(w['message'])}</li>" for w in warnings)
    return (f'<h2>Pipeline warnings ({len(warnings)})</h2><details class="card"><summary>show</summary>'
            f"<ul>{items}</ul></details>")


def _meta_html(run: Run, result: dict[str, Any], calibration: dict[str, str]) -> str:
    facts: dict[str, str] = {"run folder": str(run.dir), "game": result["game"], "events": str(len(run.events)),
                             "umpire corrections": str(len(run.corrections))}
    facts.update({f"source {k}": json.dumps(v) if not isinstance(v, str) else v for k, v in run.source.items()})
    facts["profile"] = calibration.get("profile", f"not recorded (no RUN_DIR/{CALIBRATION_FILE}; pass --calibration FILE)")
    facts["calibration error"] = calibration.get("calibration error", "not recorded")
    facts["rules config"] = json.dumps(result.get("config") or {})
    facts.update({f"{k} version": v for k, v in _versions().items()})
    rows = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in facts.items())
    return f'<h2>Run</h2><div class="card"><dl class="meta">{rows}</dl></div>'
