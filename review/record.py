"""A finished run read back for review: what was called when, the score at every moment, the tracks.

`referee run` leaves a folder (docs/pipeline.md), read by `record.run_folder.read_run`:
events, result, tracks and calibration. The review tools only show what is in it. The
captions are result.json's decisions. The scoreboard comes from the rules engine's
standings, replayed event by event, because a result only holds the final score.
Nothing here decides anything.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from record.run_folder import TrackFrame, read_run
from rules.colours import BallColour, parse_colour
from rules.engine import RoundClock, RulesEngine
from rules.errors import InputError
from rules.events import (
    Event,
    Location,
    Place,
    PlayLineCrossing,
    ShotStarted,
    Snapshot,
    TableSettled,
    UmpireFoul,
)
from rules.games import make_engine
from rules.replay import AMENDMENTS, resolve_umpire_inputs
from vision.games import GameVision, game_vision

CHAIN_MOMENT = 3  # a chain of this many balls or more is a highlight
SAME_S = 1e-3  # decisions carry their times rounded to the millisecond
# Moment kinds, in the order a clip is named by the first one it holds.
MOMENT_KINDS = ("grand_slam", "foul", "knock_in", "chain", "secured", "capture", "last_shot")
# Decisions the scoreboard already shows, so they get no caption line.
UNCAPTIONED = {"turn"}


class ReviewError(InputError):
    """A run folder that cannot be reviewed; the message names the file and what to do."""


@dataclass(frozen=True)
class Player:
    id: str  # names the player, and their balls' colour unless `colour` gives it
    name: str | None = None
    colour: BallColour | None = None  # their balls' colour, as the game_start gave it

    @property
    def label(self) -> str:
        return f"{self.name} ({self.id})" if self.name else self.id


@dataclass(frozen=True)
class Board:
    """The scoreboard after one event: what the engine's standings said then, and the round clock."""

    t: float
    scores: tuple[tuple[str, int], ...]  # player id -> points in the current game
    to_play: str | None
    round_label: str  # "game 1, round 2"; "" when the game has no rounds (Piratenbillard)
    clock: RoundClock | None  # None: the game has no round clock

    def clock_s(self, t: float) -> float | None:
        """Round time left (counting down) or gone (counting up) at time `t`; None without a clock."""
        return None if self.clock is None else self.clock.at(t)


@dataclass(frozen=True)
class Caption:
    """The calls made at one moment, worded for the screen, and what makes the moment notable."""

    t: float
    headline: str
    lines: tuple[str, ...]
    kinds: tuple[str, ...]  # moment kinds (MOMENT_KINDS) in that order; empty: nothing notable
    players: tuple[str, ...]  # whom the calls concern
    shot_t: float | None  # when the shot behind these calls began; None when no shot led to them


@dataclass(frozen=True)
class RunRecord:
    dir: Path
    game: str
    players: tuple[Player, ...]
    captions: tuple[Caption, ...]
    boards: tuple[Board, ...]  # in time order, one per event the engine saw
    track_frames: tuple[TrackFrame, ...]  # empty when the run wrote no tracks.jsonl

    @property
    def has_rounds(self) -> bool:
        """The game is played in timed rounds: the scoreboard shows the round and its clock."""
        return any(board.round_label for board in self.boards)

    def board_at(self, t: float) -> Board | None:
        """The scoreboard as it stood at time `t` (after every event at or before it)."""
        index = bisect_right(self.boards, t, key=lambda board: board.t)
        return self.boards[index - 1] if index else None


def load_run(run_dir: str | Path) -> RunRecord:
    """Read a finished run folder; a missing or malformed file is an InputError naming it."""
    folder = read_run(run_dir)
    result = folder.finished_result()
    game, config = result["game"], result.get("config") or {}
    stream, _ = resolve_umpire_inputs(list(folder.events))
    players = tuple(Player(p["id"], p.get("name"), parse_colour(p["colour"], f"result.json player {p['id']}")
                           if p.get("colour") is not None else None) for p in result["players"])
    frames = tuple(sorted(folder.tracks, key=lambda f: f.t)) if folder.tracks is not None else ()
    return RunRecord(folder.dir, game, players, _captions(result["decisions"], stream, game_vision(game)),
                     _boards(stream, game, config), frames)


# --------------------------------------------------------------------------- the scoreboard


def _boards(stream: list[Event], game: str, config: dict[str, Any]) -> tuple[Board, ...]:
    """Feed the (umpire-resolved) log to a fresh engine, keeping its standings and round clock after every
    event (and after the log's end, when the clock may still end a round)."""
    engine = make_engine(game, config)
    boards = []
    for event in stream:
        if not isinstance(event, AMENDMENTS):
            engine.feed(event)
        boards.append(_board(event.t, engine))
    if stream:
        engine.close(stream[-1].t)
        boards.append(_board(stream[-1].t, engine))
    return tuple(boards)


def _board(t: float, engine: RulesEngine) -> Board:
    """The scoreboard from the engine: scores of the current game, whose turn, and, for a game played in timed
    rounds, the round and its clock."""
    standings = engine.standings()
    current = standings.games[-1] if standings.games else None
    scores = tuple((p, (current.totals if current else {}).get(p, 0)) for p in standings.players)
    state = engine.state() if standings.players else None
    if state is None or state.round_length_s is None or state.round_number is None or current is None:
        return Board(t, scores, standings.to_play, "", None)
    label = f"game {current.number}, {'tie-break ' if state.round_tiebreak else ''}round {state.round_number}"
    return Board(t, scores, standings.to_play, label, RoundClock.of(state))


# --------------------------------------------------------------------------- captions


def _captions(decisions: list[dict[str, Any]], stream: list[Event], game: GameVision) -> tuple[Caption, ...]:
    """One caption per moment: the decisions made at the same time, in the result's order."""
    by_id = {event.id: event for event in stream}
    last_shots = _last_shots(decisions)
    captions = []
    group: list[tuple[int, dict[str, Any]]] = []
    for index, decision in enumerate(decisions):
        if group and decision["t"] != group[0][1]["t"]:
            captions.append(_caption(group, stream, by_id, last_shots, game))
            group = []
        group.append((index, decision))
    if group:
        captions.append(_caption(group, stream, by_id, last_shots, game))
    return tuple(c for c in captions if c is not None)


def _last_shots(decisions: list[dict[str, Any]]) -> set[int]:
    """Indices of the last `shot` decision before each round result (and of the game's last shot)."""
    last: set[int] = set()
    shot = None
    for index, decision in enumerate(decisions):
        if decision["kind"] == "shot":
            shot = index
        elif decision["kind"] in ("round_result", "game_result") and shot is not None:
            last.add(shot)
            shot = None
    if shot is not None:
        last.add(shot)  # Piratenbillard has no round results, and footage may stop mid-round
    return last


def _caption(group: list[tuple[int, dict[str, Any]]], stream: list[Event], by_id: dict[str, Event],
             last_shots: set[int], game: GameVision) -> Caption | None:
    shown = [d for _, d in group if d["kind"] not in UNCAPTIONED]
    if not shown:
        return None
    t = group[0][1]["t"]
    kinds: set[str] = set()
    if any(index in last_shots for index, _ in group):
        kinds.add("last_shot")
    chain = 0
    lines: list[str] = []
    for d in shown:
        kind = d["kind"]
        items = d.get("breakdown") or []
        if kind == "foul":
            kinds.add("foul")
            if d.get("foul") == "knocked_in":
                kinds.add("knock_in")
        if kind == "score" and d.get("rule") == "SCB-5.7":
            kinds.add("knock_in")
        if kind == "score" and any(i["label"].endswith("Grand Slam") and i["points"] > 0 for i in items):
            kinds.add("grand_slam")
        if kind == "score":
            chain = max(chain, _chain(d, stream, by_id, game))
        if kind == "capture":
            secured = any(i["label"].startswith("secured") for i in items)
            kinds.add("secured" if secured else "capture")
        lines.extend(_lines(d, by_id))
    if chain >= CHAIN_MOMENT:
        kinds.add("chain")
    ordered = tuple(k for k in MOMENT_KINDS if k in kinds)
    players = tuple(dict.fromkeys(d["player"] for d in shown if d.get("player")))
    headline = _headline(ordered, shown, chain)
    if headline is None:
        headline = lines[0]
    lines = [line for line in lines if line != headline]
    return Caption(t, headline, tuple(lines), ordered, players, _shot_start(stream, t))


def _lines(d: dict[str, Any], by_id: dict[str, Event]) -> list[str]:
    review = " [review]" if d.get("flagged") else ""
    if d["kind"] in ("score", "capture"):
        points = f"{d.get('points', 0):+d}"
        said = d["summary"].endswith(points)  # "lands in the Astrolabe: +2" already says it
        out = [f"{d.get('player', '?')}{'' if said else ' ' + points}: {d['summary']}{review}"]
        items = d.get("breakdown") or []
        if len(items) > 1 or (items and items[0]["points"] != d.get("points")):
            out.append("   " + " + ".join(f"{i['label']} {i['points']}" for i in items))
        return out
    if d["kind"] == "foul":
        cause = by_id.get(d.get("cause") or "")
        if isinstance(cause, PlayLineCrossing):
            who = f"{cause.player}'s " if cause.player else ""
            return [f"{d['summary']}{review}",
                    f"   {who}{cause.body_part.replace('_', ' ')} over the Play Line ({cause.confidence:.0%} sure)"]
        if isinstance(cause, UmpireFoul):
            return [f"{d['summary']}{review}", f"   called by the umpire: {cause.foul.replace('_', ' ')}"]
    return [f"{d['summary']}{review}"]


def _headline(kinds: tuple[str, ...], shown: list[dict[str, Any]], chain: int) -> str | None:
    """The caption's big line: what makes the moment notable, a result, or the points; None: the first call."""
    words = {"grand_slam": "GRAND SLAM", "foul": "FOUL", "knock_in": "KNOCKED IN", "chain": f"CHAIN OF {chain}",
             "secured": "SECURED", "capture": "CAPTURE"}
    parts = [words[k] for k in kinds if k in words]
    points = [f"{d['player']} {d['points']:+d}" for d in shown
              if d["kind"] in ("score", "capture") and d.get("player") and d.get("points")]
    if parts:
        return " - ".join(parts) + (f"   {', '.join(points)}" if points else "")
    results = [d["summary"] for d in shown if d["kind"] in ("round_result", "game_result", "match_result")]
    if results:
        return results[-1]
    return ", ".join(points) if points else None


def _shot_start(stream: list[Event], t: float) -> float | None:
    """When the shot settled at `t` began: the last shot_started with no earlier settle after it."""
    start = None
    for event in stream:
        if event.t > t + SAME_S:
            break
        if isinstance(event, ShotStarted):
            start = event.t
        elif isinstance(event, TableSettled) and event.t < t - SAME_S:
            start = None
    return start


def _chain(d: dict[str, Any], stream: list[Event], by_id: dict[str, Event], game: GameVision) -> int:
    """The longest chain the score's landed balls are part of (the game says what a chain is), from the
    settled table it was called on and the one before it."""
    settled = by_id.get(d.get("cause") or "")
    if not isinstance(settled, TableSettled):
        return 0
    return game.chain_length(d, _previous_snapshot(stream, settled), settled.snapshot)


def _previous_snapshot(stream: list[Event], settled: TableSettled) -> Snapshot | None:
    previous = None
    for event in stream:
        if event is settled:
            return previous
        if isinstance(event, TableSettled):
            previous = event.snapshot
    return previous


def place_name(where: Location) -> str:
    """A place the way the engines' calls name it: 'P1/slot 3', '(5,4)', 'grouped'."""
    if where.place is Place.SLOT:
        return f"P{where.position}/slot {where.slot}"
    if where.place is Place.CELL:
        return f"({where.row},{where.col})"
    return where.place.value.replace("_", " ")
