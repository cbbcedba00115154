"""The tournament page: every match of a batch, the standings and each player's figures, in one HTML file.

Like the review report (review/report.py) the page is self-contained: inline CSS, no script, nothing fetched,
it opens from disk. Its links (each match's report.html and highlight reel, the day's reel) are relative to the
page's folder, so the folder can be moved or zipped whole; a file that is not there gets no link.

Each match is read from its run folder by `record.run_folder.read_run`. Its result is result.corrected.json when
the umpire corrected the match (`referee correct`), else result.json; its events are events.jsonl with those
corrections merged in and the umpire's inputs applied (`rules.replay.resolve_umpire_inputs`): the stream that
result was decided from. A folder that cannot be read is listed as a failed match with its one-line reason, and
the page is written all the same. Players are their player ids, as the results name them.

What is counted:

* Standings, per game (the games score differently, so they are never mixed), over the finished matches
  (result `complete`): a match is won by its only winner; players who share the win, or every player of a
  finished match that names no winner, drew it; the others lost it. Points for: the player's `final_scores`;
  points against: the other players' `final_scores` added up. Sorted by wins, then point difference, then
  points for, then player id.
* Figures, per game, over every match that could be read, finished or not. Shots: the player's `shot` calls.
  Points at own shots: the points the `score` and `capture` calls made with a shot (same time and same cause as
  the `shot` call) award the shooter; points per shot is that divided by the shots. Points scored at no shot
  (balls left in hand, banking) are in the standings, not here. Outcomes: the `outcome` of the shot calls
  (Piratenbillard's captured and secured among them). Fouls: the `foul` calls, by the player they name and by
  kind: the call's `foul` field (its rule when it has none), followed by the event that caused it when that is
  not a table reading and not of the same name, e.g. "void shot (play line crossing)".
* Heat map, for a game whose table has slots (its rules config's `slots_per_position`, which the table profile
  sets, as the game's engine reads it): one cell per slot of the table. A shot's ball came to rest in slot S
  when the table_settled its `shot` call names (the call's cause) shows a ball of the shooter's in S that the
  table did not hold just before (the previous table_settled, with the balls lifted or placed by hand since).
  Exactly one such slot: the shot counts in that cell, void shots included (their ball landed there, even if
  the rules then take it off). No such slot: the shot reached no slot. More than one: the shot also knocked one
  of the player's own balls into a new slot; balls of one colour look alike, so which one is the shot ball cannot
  be told, and the shot is counted apart, not on the map. For the same reason a shot ball that knocks the
  player's own ball on and stops in the slot it left counts in the slot the other ball moved to. A cell's rate is
  its count over all the player's shots; the colour scale runs from 0 to the game's highest cell rate.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any, Iterable, Sequence
from urllib.parse import quote

from record.run_folder import read_corrected_result, read_run
from rules.colours import parse_colour
from rules.errors import InputError
from rules.events import BallLifted, BallPlaced, Event, Location, Place, TableSettled
from rules.files import write_bytes_atomically
from rules.games import GAMES, TITLES, make_engine
from rules.replay import resolve_umpire_inputs
from rules.result import POINT_KINDS

from .corrections import Run, corrected_log
from .plot import player_colour

POINT_KIND_NAMES = frozenset(kind.value for kind in POINT_KINDS)  # the calls that carry points
SAME_S = 2e-3  # decision times are rounded to 1 ms in result.json
# Heat map colours, from no shot to the highest rate (light yellow, orange, dark red).
HEAT_STOPS = ((255, 247, 214), (253, 141, 60), (165, 15, 21))

Slot = tuple[int, int]  # (Astrolabe Position from 1, slot from 0), as the engines' calls name them


@dataclass(frozen=True)
class MatchEntry:
    """One match of the batch as the caller knows it; the page reads the rest from its run folder."""

    match_id: str  # the manifest's id for the match, e.g. "table3-r2"
    game: str  # "starcluster" or "piratenbillard"
    run_dir: Path | None  # the match's run folder written by `referee run` (None: it failed before one existed)
    report: Path | None  # its review page (report.html), if written
    reel: Path | None  # its highlight reel (RUN_DIR/highlights/reel.mp4), if any
    error: str | None  # one-line error if the match failed, else None


@dataclass(frozen=True)
class TournamentSummary:
    path: Path
    matches: int
    failed: int
    players: int  # distinct player ids over the matches that could be read
    size_bytes: int


@dataclass(frozen=True)
class Shot:
    """One `shot` call: who shot, what it came to, the points it won the shooter, where its ball came to rest."""

    player: str
    outcome: str
    points: int
    landed: tuple[Slot, ...]  # the shooter's newly filled slots at its settle (see the module docstring)


@dataclass(frozen=True)
class Match:
    """A match whose run folder could be read."""

    entry: MatchEntry
    game: str
    players: tuple[str, ...]
    names: tuple[tuple[str, str], ...]  # player id -> name (the id when the result gives none)
    colours: tuple[tuple[str, str], ...]  # player id -> CSS colour of their balls
    result: dict[str, Any]  # result.corrected.json when there is one, else result.json
    corrections: int
    flagged: int  # calls flagged for the umpire's review
    shots: tuple[Shot, ...]
    fouls: tuple[tuple[str, str], ...]  # (player, kind) of each foul call
    slots: frozenset[Slot]  # every slot of the table; empty for a game without slots


@dataclass(frozen=True)
class Failed:
    """A match with no readable run folder, and why."""

    entry: MatchEntry
    reason: str


@dataclass(frozen=True)
class Standing:
    """A player's line in a game's standings, over its finished matches."""

    player: str
    played: int
    won: int
    drawn: int
    lost: int
    points_for: int
    points_against: int

    @property
    def difference(self) -> int:
        return self.points_for - self.points_against


@dataclass(frozen=True)
class Figures:
    """A player's shots in one game, over every match read."""

    player: str
    shots: int
    points: int  # won at their own shots
    outcomes: tuple[tuple[str, int], ...]
    fouls: tuple[tuple[str, int], ...]
    hits: tuple[tuple[Slot, int], ...]  # shots whose ball came to rest in exactly one new slot, by slot
    unplaced: int  # shots that filled more than one new slot of the player's: not on the map

    @property
    def points_per_shot(self) -> float | None:
        return self.points / self.shots if self.shots else None


def build_tournament_page(entries: Sequence[MatchEntry], out: Path, title: str = "Tournament",
                          day_reel: Path | None = None) -> TournamentSummary:
    """Read every match's run folder, write the page atomically; a folder that cannot be read is a failed row."""
    out = Path(out)
    read = [read_match(entry) for entry in entries]
    matches = [m for m in read if isinstance(m, Match)]
    page = render(title, read, matches, out.parent.resolve(), day_reel)
    write_bytes_atomically(out, page.encode("utf-8"))
    players = {p for m in matches for p in m.players}
    return TournamentSummary(out, len(entries), len(read) - len(matches), len(players), out.stat().st_size)


def read_match(entry: MatchEntry) -> Match | Failed:
    """The match as its run folder tells it, or why it cannot be shown."""
    if entry.error is not None:
        return Failed(entry, " ".join(entry.error.split()) or "failed")
    if entry.run_dir is None:
        return Failed(entry, "no run folder was written")
    try:
        return _read_match(entry, Path(entry.run_dir))
    except InputError as error:
        return Failed(entry, " ".join(str(error).split()))
    except (KeyError, TypeError, ValueError) as error:  # a field the result checks let through, of the wrong type
        return Failed(entry, f"{entry.run_dir}: cannot be summarised ({type(error).__name__}: {error}); "
                             "re-run `referee replay` or `referee run` on it")


def _read_match(entry: MatchEntry, run_dir: Path) -> Match:
    folder = read_run(run_dir, tracks=False)
    original = folder.finished_result()
    corrected = read_corrected_result(folder.dir) if folder.corrections else None
    result = corrected if corrected is not None else original
    game = result["game"]
    if game != entry.game:
        raise InputError(f"{run_dir}: the run refereed {game}, not {entry.game} as the batch says; "
                         "check the manifest's game for this match")
    stream, by_id = resolve_umpire_inputs(corrected_log(Run.from_folder(folder), folder.corrections))
    players = tuple(p["id"] for p in result["players"])
    names = tuple((p["id"], str(p.get("name") or p["id"])) for p in result["players"])
    colours = tuple((p["id"], parse_colour(p["colour"], f"result.json player {p['id']}").hex
                     if p.get("colour") is not None else player_colour(p["id"], i))
                    for i, p in enumerate(result["players"]))
    decisions = result["decisions"]
    fouls = tuple((str(d.get("player") or "?"), _foul_kind(d, by_id)) for d in decisions if d["kind"] == "foul")
    return Match(entry, game, players, names, colours, result, len(folder.corrections),
                 sum(1 for d in decisions if d.get("flagged")), _shots(decisions, stream), fouls,
                 _slots(game, result.get("config") or {}))


def _slots(game: str, config: dict[str, Any]) -> frozenset[Slot]:
    """The table's slots, from `slots_per_position` of the rules config as the game's engine reads it (with its
    defaults); none for a game whose config has no slots."""
    rules = getattr(make_engine(game, config), "config", None)
    layout = getattr(rules, "slots_per_position", ())
    return frozenset((position, slot) for position, count in enumerate(layout, start=1) for slot in range(count))


def _foul_kind(decision: dict[str, Any], by_id: dict[str, Event]) -> str:
    """The foul's kind, and the event behind it when that says more (a Play Line crossing behind a void shot)."""
    kind = str(decision.get("foul") or f"rule {decision.get('rule') or '?'}")
    cause = by_id.get(str(decision.get("cause") or ""))
    if cause is not None and not isinstance(cause, TableSettled) and cause.TYPE != kind:
        kind += f" ({cause.TYPE})"
    return kind.replace("_", " ")


def _shots(decisions: list[dict[str, Any]], stream: list[Event]) -> tuple[Shot, ...]:
    """Each `shot` call, with the points the calls made with it (same time, same cause) award the shooter, and
    the shooter's slots its settle newly fills."""
    arrivals = _arrivals(stream)
    settles = [(e.t, e.id) for e in stream if isinstance(e, TableSettled)]
    shots = []
    for index, shot in enumerate(decisions):
        if shot["kind"] != "shot":
            continue
        player = str(shot.get("player") or "?")
        points = 0
        for later in decisions[index + 1:]:
            if not _made_with(shot, later):
                break
            if later["kind"] in POINT_KIND_NAMES and later.get("player") == player:
                points += int(later.get("points", 0))
        settle = shot.get("cause") if shot.get("cause") in arrivals else next(
            (i for t, i in settles if abs(t - shot["t"]) < SAME_S), None)
        landed = sorted(slot for owner, slot in arrivals.get(settle or "", ()) if owner == player)
        shots.append(Shot(player, str(shot.get("outcome") or "?"), points, tuple(landed)))
    return tuple(shots)


def _made_with(shot: dict[str, Any], later: dict[str, Any]) -> bool:
    """Whether a call that follows a `shot` call is one of its calls: made at its time, for the same cause (round-end
    calls at the same moment have theirs)."""
    return later["kind"] != "shot" and abs(later["t"] - shot["t"]) <= SAME_S and later.get("cause") == shot.get("cause")


def _arrivals(stream: Iterable[Event]) -> dict[str, frozenset[tuple[str, Slot]]]:
    """For each table_settled id: the balls (owner, slot) it shows in slots that the table did not hold just
    before it (the previous table_settled, with the balls lifted or placed by hand since)."""
    table: set[tuple[str, Slot]] = set()
    out: dict[str, frozenset[tuple[str, Slot]]] = {}
    for event in stream:
        if isinstance(event, TableSettled):
            now = {(ball.owner, slot) for ball in event.snapshot.balls if (slot := _slot_of(ball.at)) is not None}
            out[event.id] = frozenset(now - table)
            table = now
        elif isinstance(event, (BallLifted, BallPlaced)) and (slot := _slot_of(event.at)) is not None:
            if isinstance(event, BallLifted):
                table.discard((event.owner, slot))
            else:
                table.add((event.owner, slot))
    return out


def _slot_of(at: Location) -> Slot | None:
    if at.place is not Place.SLOT or at.position is None or at.slot is None:
        return None
    return (at.position, at.slot)


# ------------------------------------------------------------------------------------------ tables


def standings(matches: Iterable[Match]) -> list[Standing]:
    """One game's standings over its finished matches (see the module docstring)."""
    rows: dict[str, list[int]] = {}
    for match in matches:
        result = match.result
        if not result["complete"]:
            continue
        scores = {p: int(result["final_scores"].get(p, 0)) for p in match.players}
        winners = set(result["winners"])
        for player in match.players:
            row = rows.setdefault(player, [0] * 6)
            sole = winners == {player}
            shared = (player in winners and len(winners) > 1) or not winners
            row[0] += 1
            row[1] += sole
            row[2] += shared
            row[3] += not sole and not shared
            row[4] += scores[player]
            row[5] += sum(points for other, points in scores.items() if other != player)
    table = [Standing(player, *row) for player, row in rows.items()]
    return sorted(table, key=lambda s: (-s.won, -s.difference, -s.points_for, s.player))


def figures(matches: Iterable[Match]) -> list[Figures]:
    """Each player's shots, outcomes, fouls and landings in one game, over every match read."""
    shots: dict[str, list[Shot]] = {}
    fouls: dict[str, Counter[str]] = {}
    for match in matches:
        for player in match.players:
            shots.setdefault(player, [])
            fouls.setdefault(player, Counter())
        for shot in match.shots:
            shots.setdefault(shot.player, []).append(shot)
        for player, kind in match.fouls:
            fouls.setdefault(player, Counter())[kind] += 1
            shots.setdefault(player, [])
    out = []
    for player in sorted(shots):
        taken = shots[player]
        hits = Counter(shot.landed[0] for shot in taken if len(shot.landed) == 1)
        out.append(Figures(player, len(taken), sum(s.points for s in taken),
                           tuple(sorted(Counter(s.outcome for s in taken).items())),
                           tuple(sorted(fouls.get(player, Counter()).items())), tuple(sorted(hits.items())),
                           sum(1 for s in taken if len(s.landed) > 1)))
    return out


# ------------------------------------------------------------------------------------------ page

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d1d1f;background:#f5f5f7}
main{max-width:1180px;margin:0 auto;padding:20px 24px 40px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:32px 0 8px}h3{font-size:15px;margin:20px 0 6px}
.sub{color:#666;margin:0 0 16px}
.card{background:#fff;border-radius:8px;padding:14px 18px;box-shadow:0 1px 2px rgba(0,0,0,.08)}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #e5e5ea;vertical-align:top}
th{background:#fafafa;font-weight:600;font-size:13px}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}td.who{white-space:nowrap}
tr.failed{background:#fdecea}.error{color:#b3261e;word-break:break-word}
.flag{color:#b45309;font-weight:600}.ok{color:#2f7d32}.muted{color:#888}
.swatch{display:inline-block;width:11px;height:11px;border-radius:50%;margin-right:5px;vertical-align:-1px}
.note{color:#555;font-size:13px;margin:6px 0}
video{width:100%;max-width:720px;border-radius:6px;background:#000;display:block;margin-bottom:6px}
.heatmaps{display:flex;flex-wrap:wrap;gap:18px}
figure.heat{margin:0;background:#fff;border-radius:8px;padding:10px 12px;box-shadow:0 1px 2px rgba(0,0,0,.08)}
figure.heat figcaption{font-weight:600;margin-bottom:6px}
table.heatmap{width:auto}table.heatmap td,table.heatmap th{border:1px solid #fff;text-align:center}
table.heatmap td.cell{min-width:42px;font-variant-numeric:tabular-nums}
table.heatmap td.cell small{display:block;font-size:10px;opacity:.85}
table.heatmap td.none{background:#fff}
.legend{display:flex;align-items:center;gap:8px;font-size:12px;color:#555;margin:8px 0}
.legend .bar{width:160px;height:10px;border-radius:3px}
"""


def render(title: str, read: Sequence[Match | Failed], matches: Sequence[Match], page_dir: Path,
           day_reel: Path | None) -> str:
    failed = len(read) - len(matches)
    counts = (f"{len(read)} match{'es' if len(read) != 1 else ''}: {len(matches)} refereed"
              + (f", {failed} failed" if failed else ""))
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
             f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><style>{CSS}</style></head>"
             f"<body><main><h1>{escape(title)}</h1><p class=\"sub\">{escape(counts)}</p>"]
    parts.append(_day_reel_html(day_reel, page_dir))
    parts.append(_matches_html(read, page_dir))
    games = sorted({m.game for m in matches}, key=list(GAMES).index)  # a result's game is one of GAMES
    if not matches:
        parts.append('<p class="empty note">No match could be read, so there are no standings and no figures.</p>'
                     if read else "")
    for game in games:
        parts.append(_game_html(game, [m for m in matches if m.game == game]))
    parts.append("</main></body></html>\n")
    return "".join(parts)


def _href(target: Path, page_dir: Path) -> str:
    """A link to `target` relative to the page's folder, so the folder can move; another drive: absolute."""
    path = Path(target).resolve()
    try:
        return quote(Path(os.path.relpath(path, page_dir)).as_posix())
    except ValueError:
        return path.as_uri()


def _link(target: Path | None, page_dir: Path, text: str) -> str:
    if target is None:
        return '<span class="muted">-</span>'
    if not Path(target).is_file():
        return f'<span class="muted" title="{escape(str(target))}">missing</span>'
    return f'<a href="{escape(_href(target, page_dir))}">{escape(text)}</a>'


def _day_reel_html(day_reel: Path | None, page_dir: Path) -> str:
    if day_reel is None:
        return ""
    if not Path(day_reel).is_file():
        return f'<p class="note">The day\'s highlight reel {escape(str(day_reel))} is missing.</p>'
    href = escape(_href(day_reel, page_dir))
    return (f'<h2>The day\'s highlights</h2><div class="card day-reel"><video controls preload="metadata" '
            f'src="{href}"></video><a href="{href}">{escape(Path(day_reel).name)}</a></div>')


def _player(pid: str, names: dict[str, str], colours: dict[str, str]) -> str:
    name = names.get(pid, pid)
    label = pid if name == pid else f"{name} ({pid})"
    return f'<span class="swatch" style="background:{escape(colours.get(pid, "#999"))}"></span>{escape(label)}'


def _matches_html(read: Sequence[Match | Failed], page_dir: Path) -> str:
    if not read:
        return '<h2>Matches</h2><p class="empty note">No matches in this batch.</p>'
    rows = []
    for item in read:
        entry = item.entry
        game = escape(TITLES.get(entry.game, entry.game))
        links = (f'<td class="report">{_link(entry.report, page_dir, "report")}</td>'
                 f'<td class="reel">{_link(entry.reel, page_dir, "reel")}</td>')
        if isinstance(item, Failed):
            rows.append(f'<tr class="match failed" data-match="{escape(entry.match_id)}">'
                        f"<td>{escape(entry.match_id)}</td><td>{game}</td><td></td>"
                        f'<td class="result"><b>failed:</b> <span class="error">{escape(item.reason)}</span></td>'
                        f"<td></td>{links}</tr>")
            continue
        names, colours = dict(item.names), dict(item.colours)
        result = item.result
        players = "<br>".join(_player(p, names, colours) for p in item.players)
        scores = " &middot; ".join(f'{escape(names.get(p, p))} <b data-player="{escape(p)}" class="score">'
                                   f'{int(result["final_scores"].get(p, 0))}</b>' for p in item.players)
        review = f'<span class="flag">{item.flagged}</span>' if item.flagged else '<span class="ok">0</span>'
        corrected = (f'<div class="note corrected">after {item.corrections} umpire correction(s)</div>'
                     if item.corrections else "")
        rows.append(f'<tr class="match" data-match="{escape(entry.match_id)}"><td>{escape(entry.match_id)}</td>'
                    f'<td>{game}</td><td class="who">{players}</td>'
                    f'<td class="result">{scores}<div class="note">{_outcome(result, names)}</div>{corrected}</td>'
                    f'<td class="num">{review}</td>{links}</tr>')
    return ("<h2>Matches</h2><table class=\"matches\"><thead><tr><th>match</th><th>game</th><th>players</th>"
            "<th>result</th><th class=\"num\">flagged calls</th><th>report</th><th>reel</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _outcome(result: dict[str, Any], names: dict[str, str]) -> str:
    """Who won, or why nobody has yet, as result.json says it."""
    winners = [escape(names.get(w, w)) for w in result["winners"]]
    if result["complete"]:
        said = (f"{winners[0]} wins" if len(winners) == 1 else
                f"draw: {' and '.join(winners)} share the win" if winners else "draw")
    else:
        said = "not complete"
    status = escape(str(result.get("status") or ""))
    stopped = result.get("stopped")
    if isinstance(stopped, dict):  # the run was stopped before its source ended (docs/record.md)
        said += f"; the run was stopped at {float(stopped.get('t', 0)):.1f} s: {escape(str(stopped.get('reason')))}"
    return f'<span class="outcome">{said}</span>' + (f" ({status})" if status else "")


def _game_html(game: str, matches: list[Match]) -> str:
    known: dict[str, list[str]] = {}  # a player id may be given different names in different matches
    colours: dict[str, str] = {}
    for match in matches:
        for pid, name in match.names:
            if name != pid and name not in known.setdefault(pid, []):
                known[pid].append(name)
        colours.update((p, c) for p, c in match.colours if p not in colours)
    names = {pid: " / ".join(given) for pid, given in known.items() if given}
    table = standings(matches)
    unfinished = sum(1 for m in matches if not m.result["complete"])
    figs = figures(matches)
    parts = [f'<section class="game" data-game="{escape(game)}"><h2>{escape(TITLES.get(game, game))}</h2>',
             _standings_html(table, names, colours, len(matches) - unfinished, unfinished),
             _figures_html(figs, names, colours)]
    slots = frozenset().union(*(m.slots for m in matches))
    if slots:
        parts.append(_heatmaps_html(figs, slots, names, colours))
    parts.append("</section>")
    return "".join(parts)


def _standings_html(table: list[Standing], names: dict[str, str], colours: dict[str, str], finished: int,
                    unfinished: int) -> str:
    left_out = (f" {unfinished} match{'es' if unfinished != 1 else ''} not complete "
                f"{'are' if unfinished != 1 else 'is'} left out." if unfinished else "")
    head = (f'<h3>Standings</h3><p class="note">Over {finished} finished match{"es" if finished != 1 else ""}.'
            f"{left_out}</p>")
    if not table:
        return head
    rows = "".join(
        f'<tr data-player="{escape(s.player)}"><td class="num">{rank}</td><td>{_player(s.player, names, colours)}'
        f'</td><td class="num" data-stat="played">{s.played}</td><td class="num" data-stat="won">{s.won}</td>'
        f'<td class="num" data-stat="drawn">{s.drawn}</td><td class="num" data-stat="lost">{s.lost}</td>'
        f'<td class="num" data-stat="for">{s.points_for}</td><td class="num" data-stat="against">'
        f'{s.points_against}</td><td class="num" data-stat="difference">{s.difference:+d}</td></tr>'
        for rank, s in enumerate(table, start=1))
    return (f'{head}<table class="standings"><thead><tr><th class="num">#</th><th>player</th>'
            '<th class="num">played</th><th class="num">won</th><th class="num">drawn</th><th class="num">lost</th>'
            '<th class="num">points for</th><th class="num">against</th><th class="num">difference</th></tr>'
            f"</thead><tbody>{rows}</tbody></table>")


def _figures_html(figs: list[Figures], names: dict[str, str], colours: dict[str, str]) -> str:
    outcomes = sorted({kind for f in figs for kind, _ in f.outcomes})
    fouls = sorted({kind for f in figs for kind, _ in f.fouls})
    head = ('<th>player</th><th class="num">shots</th><th class="num">points at own shots</th>'
            '<th class="num">points per shot</th>'
            + "".join(f'<th class="num">{escape(o)}</th>' for o in outcomes)
            + "".join(f'<th class="num">foul: {escape(k)}</th>' for k in fouls))
    rows = []
    for f in figs:
        per_shot = f"{f.points_per_shot:.2f}" if f.points_per_shot is not None else "-"
        got, fouled = dict(f.outcomes), dict(f.fouls)
        rows.append(f'<tr data-player="{escape(f.player)}"><td>{_player(f.player, names, colours)}</td>'
                    f'<td class="num" data-stat="shots">{f.shots}</td><td class="num" data-stat="points">{f.points}'
                    f'</td><td class="num" data-stat="per-shot">{per_shot}</td>'
                    + "".join(f'<td class="num" data-outcome="{escape(o)}">{got.get(o, 0)}</td>' for o in outcomes)
                    + "".join(f'<td class="num" data-foul="{escape(k)}">{fouled.get(k, 0)}</td>' for k in fouls)
                    + "</tr>")
    return ('<h3>Players</h3><p class="note">Over every match read, finished or not. Points at own shots: what the '
            "calls made with the player's shots awarded them (points at the end of a round are not a shot's).</p>"
            f'<table class="figures"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>')


def _heat(rate: float, top: float) -> tuple[str, str]:
    """Background and text colour of a heat-map cell, on the scale 0..top."""
    x = min(1.0, rate / top) if top > 0 else 0.0
    lower = min(int(x * (len(HEAT_STOPS) - 1)), len(HEAT_STOPS) - 2)
    part = x * (len(HEAT_STOPS) - 1) - lower
    rgb = [round(a + (b - a) * part) for a, b in zip(HEAT_STOPS[lower], HEAT_STOPS[lower + 1])]
    return "#{:02x}{:02x}{:02x}".format(*rgb), "#fff" if x > 0.6 else "#1d1d1f"


def _heatmaps_html(figs: list[Figures], slots: frozenset[Slot], names: dict[str, str],
                   colours: dict[str, str]) -> str:
    cells = set(slots) | {slot for f in figs for slot, _ in f.hits}
    top = max([count / f.shots for f in figs for _, count in f.hits] + [0.0])
    positions = sorted({p for p, _ in cells})
    width = max(s for _, s in cells) + 1
    legend = ('<div class="legend"><span>0%</span><span class="bar" style="background:linear-gradient(90deg,'
              + ",".join(_heat(top * i / 4, top)[0] for i in range(5))
              + f')"></span><span>{top:.0%}</span><span>of the player\'s shots came to rest in the slot; the '
              "number in a cell is how many</span></div>")
    maps = []
    for f in figs:
        hits = dict(f.hits)
        placed = sum(hits.values())
        head = "".join(f'<th class="num">slot {s}</th>' for s in range(width))
        rows = []
        for position in positions:
            tds = []
            for s in range(width):
                if (position, s) not in cells:
                    tds.append('<td class="none"></td>')
                    continue
                count = hits.get((position, s), 0)
                rate = count / f.shots if f.shots else 0.0
                back, ink = _heat(rate, top)
                tds.append(f'<td class="cell" data-position="{position}" data-slot="{s}" data-count="{count}" '
                           f'title="P{position}/slot {s}: {count} of {f.shots} shot(s), {rate:.0%}" '
                           f'style="background:{back};color:{ink}">{count}<small>{rate:.0%}</small></td>')
            rows.append(f'<tr><th>P{position}</th>{"".join(tds)}</tr>')
        apart = f"; {f.unplaced} shot(s) filled more than one new slot: not placed" if f.unplaced else ""
        maps.append(f'<figure class="heat" data-player="{escape(f.player)}" data-shots="{f.shots}" '
                    f'data-placed="{placed}" data-unplaced="{f.unplaced}">'
                    f"<figcaption>{_player(f.player, names, colours)}</figcaption>"
                    f'<table class="heatmap"><thead><tr><th></th>{head}</tr></thead><tbody>{"".join(rows)}</tbody>'
                    f'</table><div class="note">{placed} of {f.shots} shot(s) came to rest in a slot{apart}</div>'
                    "</figure>")
    return (f'<h3>Where the shots came to rest</h3>{legend}<div class="heatmaps">{"".join(maps)}</div>'
            '<p class="note">A shot counts in the slot of the player\'s colour that its settled table newly fills '
            "(void shots too: the ball landed there). Balls of one colour look alike: a shot that also knocked one "
            "of the player's balls into a new slot is not placed.</p>")
