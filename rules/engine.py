"""What every rules engine offers, and the live standings it reports.

An engine is fed events one at a time, in log order, and answers with the
decisions each one causes. It never looks at pixels and never reads a clock:
time comes only from the events, so replaying a log always gives the same
decisions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Protocol

from .decisions import Decision
from .events import Event


@dataclass(frozen=True)
class RoundScore:
    number: int  # 1-based; tie-break rounds continue the count
    scores: Mapping[str, int]  # player id -> points scored in this round
    tiebreak: bool = False
    complete: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, "scores": dict(self.scores), "tiebreak": self.tiebreak,
                "complete": self.complete}


@dataclass(frozen=True)
class GameScore:
    number: int
    rounds: tuple[RoundScore, ...]
    totals: Mapping[str, int]
    winners: tuple[str, ...] = ()  # more than one: a shared victory
    complete: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, "rounds": [r.to_json() for r in self.rounds],
                "totals": dict(self.totals), "winners": list(self.winners), "complete": self.complete}


@dataclass(frozen=True)
class Standings:
    """The live score: every game so far, match wins, and what happens next."""

    players: tuple[str, ...]
    games: tuple[GameScore, ...]
    match_wins: Mapping[str, int]
    winners: tuple[str, ...] = ()  # of the whole match (or the single game)
    complete: bool = False
    to_play: str | None = None  # whose turn it is now
    status: str = ""  # one line: round, phase, what the engine waits for

    def to_json(self) -> dict[str, Any]:
        return {"players": list(self.players), "games": [g.to_json() for g in self.games],
                "match_wins": dict(self.match_wins), "winners": list(self.winners),
                "complete": self.complete, "to_play": self.to_play, "status": self.status}


class RulesEngine(Protocol):
    game: str  # "starcluster" | "piratenbillard"

    def feed(self, event: Event) -> list[Decision]:
        """Apply one event (log order) and return the decisions it causes."""

    def close(self, t: float) -> list[Decision]:
        """The log has ended at time `t`: finish what the rules finish (clock, results)."""

    def standings(self) -> Standings:
        """The score as it stands now."""
