"""The console's JSON (docs/console.md): the match state every page and API client reads, and the table's
geometry for the diagram.

The state is built in one place from the referee's `RefereeState`, the players as they were set up, and what
the hub keeps beside them (the phase, the feed, the score history, the umpire's inputs), so /api/state and
every /api/stream message say the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from calibration.geometry import FeatureKind
from calibration.profile import TableProfile
from referee.session import RefereeState, Setup
from review.plot import player_colour
from rules.decisions import Decision, DecisionKind
from rules.engine import Standings
from rules.events import BallSighting, GameStart, Place, PlayerSpec
from vision.detect.colour_model import NOMINAL_BGR

PHASES = ("waiting_for_setup", "running", "finished", "stopped")
SOURCE_STATUSES = ("waiting", "live", "lost", "ended")
AREAS = (FeatureKind.PLAY_AREA, FeatureKind.BOARD, FeatureKind.GUTTER)  # drawn under the places


@dataclass(frozen=True)
class SourceView:
    """The feed as the pages show it: "lost" while no frame came for over a second."""

    name: str
    live: bool
    status: str = "waiting"  # SOURCE_STATUSES
    message: str = ""
    received: int = 0  # frames the feed gave
    dropped: int = 0  # frames the referee skipped, too slow for the feed (see vision.sources.LiveSource)
    dropped_at_start: int = 0  # of those, while the first frame was refereed (it builds the colour model: once)


@dataclass(frozen=True)
class ScorePoint:
    """The totals from time `t` on: the score-over-time plot gets one point per change."""

    t: float
    scores: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class UmpireInput:
    """An umpire input the referee accepted in this match: what the console lists, and what undo takes back."""

    id: str
    type: str
    t: float
    by: str | None  # None: not known (an input read back from a resumed run's log that has no `by`)
    target: str | None = None  # an overturn's, a confirm's or a correction's event


@dataclass(frozen=True)
class ConsoleView:
    """What the hub keeps beside the referee's state, as of one published version."""

    game: str
    phase: str  # PHASES
    source: SourceView
    players: tuple[PlayerSpec, ...]
    colours: Mapping[str, str]  # player id -> "#rrggbb" given at setup
    history: tuple[ScorePoint, ...]
    inputs: tuple[UmpireInput, ...]
    table_t: float | None  # when the table shown was first seen read


def state_json(version: int, published_wall: float, view: ConsoleView, referee: RefereeState | None) -> dict[str, Any]:
    """The state JSON of docs/console.md; `referee` is None before the match is set up."""
    standings = referee.standings if referee is not None else None
    engine = referee.engine if referee is not None else None
    scores = totals(standings)
    players = [{"id": p.id, "name": p.name or p.id, "colour": colour_of(p, i, view.colours), "side": p.side,
                "seat": p.seat, "score": scores.get(p.id, 0),
                "match_wins": standings.match_wins.get(p.id, 0) if standings is not None else 0,
                "balls_to_play": engine.balls_to_play.get(p.id) if engine is not None else None}
               for i, p in enumerate(view.players)]
    calls = [d.to_json() for d in referee.last_decisions] if referee is not None else []
    last = last_call(referee.last_decisions) if referee is not None else None
    choice = engine.pending_choice if engine is not None else None
    return {
        "version": version, "published_wall": published_wall, "game": view.game, "phase": view.phase,
        "source": {"name": view.source.name, "live": view.source.live, "status": view.source.status,
                   "message": view.source.message, "received": view.source.received,
                   "dropped": view.source.dropped, "dropped_at_start": view.source.dropped_at_start},
        "t": round(referee.t, 3) if referee is not None else 0.0,
        "frames": referee.frames if referee is not None else 0,
        "players": players,
        "to_play": standings.to_play if standings is not None else None,
        "status_line": standings.status if standings is not None else "",
        "round": None if engine is None or referee is None else {
            "number": engine.round_number, "tiebreak": engine.round_tiebreak,
            "clock_s": None if referee.clock_s is None else round(referee.clock_s, 3),
            "counts_down": engine.clock_counts_down, "paused": engine.round_paused_at is not None,
            "length_s": engine.round_length_s},
        "pending_choice": None if choice is None else {"player": choice.player, "options": list(choice.options),
                                                       "reason": choice.reason},
        "calls": calls,
        "last_call": last.to_json() if last is not None else None,
        "review": [{"t": round(f.t, 3), "message": f.message, "cause": f.cause}
                   for f in (referee.review if referee is not None else ())],
        "table": {"event": referee.table_event if referee is not None else None,
                  "t": None if view.table_t is None else round(view.table_t, 3),
                  "balls": [ball_json(b) for b in sorted(referee.table.balls, key=lambda b: (b.owner, b.at))]
                  if referee is not None and referee.table is not None else []},
        "history": [{"t": round(p.t, 3), "scores": dict(p.scores)} for p in view.history],
        "umpire_inputs": [{"id": i.id, "type": i.type, "t": round(i.t, 3), "by": i.by}
                          | ({"target": i.target} if i.target else {}) for i in view.inputs],
        "winners": list(standings.winners) if standings is not None else [],
        "complete": standings.complete if standings is not None else False,
    }


def last_call(decisions: tuple[Decision, ...]) -> Decision | None:
    """The latest call worth showing: the turn passing is said by whose turn it is."""
    return next((d for d in reversed(decisions) if d.kind is not DecisionKind.TURN), None)


def totals(standings: Standings | None) -> dict[str, int]:
    """The current game's totals (a new game starts from 0)."""
    return dict(standings.games[-1].totals) if standings is not None and standings.games else {}


def ball_json(ball: BallSighting) -> dict[str, Any]:
    """A resting ball as the pages and the correction POST write it: the owner beside the place's fields."""
    return {"owner": ball.owner, **ball.at.to_json()}


def colour_of(player: PlayerSpec, index: int, given: Mapping[str, str]) -> str:
    """The colour a page draws a player in: the one given at setup, else their ball colour (`player_bgr`: the
    game_start's, else the one their id names), else the report's palette."""
    if player.id in given:
        return given[player.id]
    bgr = player_bgr((player,)).get(player.id)
    return f"#{bgr[2]:02x}{bgr[1]:02x}{bgr[0]:02x}" if bgr is not None else player_colour(player.id, index)


def player_bgr(players: tuple[PlayerSpec, ...]) -> dict[str, tuple[int, int, int]]:
    """Each player's ball colour as BGR 0..255 for drawing: the one their game_start gives, else the nominal
    colour their id names; players with neither are left out (drawn grey)."""
    colours = {p.id: p.colour.bgr for p in players if p.colour is not None}
    return {p.id: colours.get(p.id) or NOMINAL_BGR[p.id] for p in players if p.id in colours or p.id in NOMINAL_BGR}


def match_players(setup: Setup) -> tuple[PlayerSpec, ...]:
    """The players as the match's game_start names them."""
    start = next((e for e in setup.umpire if isinstance(e, GameStart)), None)
    return start.players if start is not None else ()


def table_json(profile: TableProfile) -> dict[str, Any]:
    """The table for the pages' diagram (GET /api/table): its outline, its Play Line, the areas under the
    places, and every place a ball can rest in, keyed as the correction POST names them, in board mm."""
    table = profile.table
    places = []
    for at, rect in profile.places:
        centre = {"x_mm": (rect.x_min + rect.x_max) / 2, "y_mm": (rect.y_min + rect.y_max) / 2}
        if at.place is Place.SLOT:
            places.append({"key": f"P{at.position}/{at.slot}", "place": "slot", "position": at.position,
                           "slot": at.slot, **centre, "r_mm": min(rect.x_max - rect.x_min, rect.y_max - rect.y_min) / 2})
        else:
            places.append({"key": f"r{at.row}c{at.col}", "place": at.place.value, "row": at.row, "col": at.col,
                           **centre, "size_mm": rect.x_max - rect.x_min})
    line = profile.play_line
    return {"game": profile.game,
            "outline_mm": [[table.x_min, table.y_min], [table.x_max, table.y_min], [table.x_max, table.y_max],
                           [table.x_min, table.y_max]],
            "play_line_mm": [list(line[0]), list(line[1])] if line is not None else None,
            "areas": [{"kind": f.kind.value, "x_min": f.rect.x_min, "y_min": f.rect.y_min, "x_max": f.rect.x_max,
                       "y_max": f.rect.y_max} for f in profile.features if f.kind in AREAS and f.rect is not None],
            "places": places}
