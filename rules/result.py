"""The result file (`result.json`): the stable record that later tools read.

Documented field by field in docs/result.md and by rules/schemas/result.schema.json.
"""

from __future__ import annotations

from typing import Any

from .decisions import DecisionKind
from .events import GameStart
from .replay import ReplayResult

FORMAT = "table-referee/result@1"
POINT_KINDS = (DecisionKind.SCORE, DecisionKind.CAPTURE)


def build_result(replayed: ReplayResult, source: dict[str, Any]) -> dict[str, Any]:
    standings = replayed.standings
    starts = [e for e in replayed.events if isinstance(e, GameStart)]
    players = [p.to_json() for p in starts[0].players] if starts else [{"id": p} for p in standings.players]
    points = {player: 0 for player in standings.players}
    for decision in replayed.decisions:
        if decision.kind in POINT_KINDS and decision.player is not None:
            points[decision.player] = points.get(decision.player, 0) + decision.points
    return {
        "format": FORMAT,
        "game": replayed.game,
        "complete": standings.complete,
        "players": players,
        "winners": list(standings.winners),
        "final_scores": points,
        "games": [game.to_json() for game in standings.games],
        "match_wins": dict(standings.match_wins),
        "status": standings.status,
        "config": replayed.config,
        "source": source,
        "decisions": [decision.to_json() for decision in replayed.decisions],
    }
