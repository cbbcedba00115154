"""Decisions: what a rules engine concludes from the events it is fed.

A decision is a call a referee would announce: points with their breakdown, a
foul and the rule behind it, the turn passing, a ball removed, a round or game
result. Each names the event that caused it (`cause`), so an umpire can find,
confirm or overturn it, and the rule clause it applies (`rule`, the ids of
docs/rules.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class DecisionKind(str, Enum):
    SHOT = "shot"  # how a shot ended (scored, failed, void, grouped...); carries no points itself
    SCORE = "score"  # points for a player, with a breakdown
    FOUL = "foul"  # a foul and its consequence
    TURN = "turn"  # the turn passes to `player`
    BALL_REMOVED = "ball_removed"  # a ball is out for the round / out of the game
    BALL_RETURNED = "ball_returned"  # a ball goes back to its owner's hand
    CHOICE_REQUIRED = "choice_required"  # the engine waits for an umpire input
    PHASE = "phase"  # Final Sequence, tie-break round, repeat strike, ...
    CAPTURE = "capture"  # Piratenbillard: balls to a player's treasure
    LIFT = "lift"  # balls the players must now lift off the board
    ROUND_RESULT = "round_result"
    GAME_RESULT = "game_result"
    MATCH_RESULT = "match_result"
    UMPIRE = "umpire"  # an umpire input that was applied (confirm, overturn, correction)
    WARNING = "warning"  # something the umpire should look at; changes no score


@dataclass(frozen=True)
class ScoreItem:
    """One line of a points breakdown, e.g. ("P3 chain bonus", 5)."""

    label: str
    points: int

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "points": self.points}


@dataclass(frozen=True)
class Decision:
    t: float
    kind: DecisionKind
    summary: str  # one line a referee would say out loud
    player: str | None = None
    points: int = 0
    breakdown: tuple[ScoreItem, ...] = ()
    rule: str | None = None  # rule clause id from docs/rules.md
    cause: str | None = None  # id of the event that led to this decision
    confidence: float = 1.0
    flagged: bool = False  # below the confidence threshold: needs the umpire's review
    data: tuple[tuple[str, Any], ...] = field(default=())  # extra, kind-specific fields

    def __post_init__(self) -> None:
        if self.breakdown and sum(item.points for item in self.breakdown) != self.points:
            raise ValueError(f"breakdown of {self.summary!r} does not add up to {self.points}")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"t": round(self.t, 3), "kind": self.kind.value, "summary": self.summary}
        if self.player is not None:
            out["player"] = self.player
        if self.kind is DecisionKind.SCORE or self.points:
            out["points"] = self.points
        if self.breakdown:
            out["breakdown"] = [item.to_json() for item in self.breakdown]
        if self.rule:
            out["rule"] = self.rule
        if self.cause:
            out["cause"] = self.cause
        out["confidence"] = round(self.confidence, 3)
        if self.flagged:
            out["flagged"] = True
        for key, value in self.data:
            out[key] = value
        return out
