"""A simulated Piratenbillard table for tests: strikes become the events the vision would log.

The table is kept apart from the engine (as the real one is): a strike moves a
ball on it, the snapshot is read off it, and the players lift the balls that
the engine's LIFT decisions name, as they would at a real table.
"""

from __future__ import annotations

import json
from pathlib import Path

from rules.decisions import Decision, DecisionKind
from rules.events import BallSighting, Event, GameStart, Location, PlayerSpec, ShotStarted, Snapshot, TableSettled
from rules.piratenbillard import PiratenbillardConfig, PiratenbillardEngine
from rules.piratenbillard.board import starting_row

Cell = tuple[int, int]
OFF = None  # a strike that leaves the board


class Game:
    def __init__(self, seats: list[tuple[str, int]], config: PiratenbillardConfig | None = None) -> None:
        self.config = config or PiratenbillardConfig()
        self.engine = PiratenbillardEngine(self.config)
        self.events: list[Event] = []
        self.decisions: list[Decision] = []
        self.table: dict[tuple[Cell, str], int] = {}
        self.t = 0.0
        for player, seat in seats:
            for cell in starting_row(seat)[: self.config.balls_per_player]:
                self.table[(cell, player)] = 1
        self.feed(GameStart(t=0.0, id="L1", players=tuple(PlayerSpec(p, seat=s) for p, s in seats)))

    def feed(self, event: Event) -> list[Decision]:
        self.events.append(event)
        out = self.engine.feed(event)
        self.decisions.extend(out)
        return out

    def event_id(self) -> str:
        return f"L{len(self.events) + 1}"

    def tick(self) -> float:
        self.t += 2.5
        return self.t

    def snapshot(self) -> Snapshot:
        return Snapshot(tuple(BallSighting(owner, Location.cell_at(*cell))
                              for (cell, owner), n in sorted(self.table.items()) for _ in range(n)))

    def strike(self, player: str | None, src: Cell, dst: Cell | None, *, ball_from: bool = True,
               lift: bool = True) -> list[Decision]:
        """`player` strikes its ball at `src`; it comes to rest at `dst` (None: off the board)."""
        owner = player or self.engine.standings().to_play
        assert self.table.get((src, owner), 0) > 0, f"no {owner} ball at {src} on the simulated table"
        self.table[(src, owner)] -= 1
        if not self.table[(src, owner)]:
            del self.table[(src, owner)]
        if dst is not None:
            self.table[(dst, owner)] = self.table.get((dst, owner), 0) + 1
        out = self.feed(ShotStarted(t=self.tick(), id=self.event_id(), player=player,
                                    ball_from=Location.cell_at(*src) if ball_from else None))
        out += self.feed(TableSettled(t=self.tick(), id=self.event_id(), snapshot=self.snapshot()))
        if lift:
            self.lift(out)
        return out

    def lift(self, decisions: list[Decision]) -> None:
        for d in decisions:
            if d.kind is DecisionKind.LIFT:
                data = dict(d.data)
                key = (tuple(data["cell"]), data["owner"])
                self.table[key] -= data["count"]
                if not self.table[key]:
                    del self.table[key]

    def points(self) -> dict[str, int]:
        return dict(self.engine.standings().games[0].totals)

    def write_log(self, path: Path) -> None:
        path.write_text("".join(json.dumps(e.to_json()) + "\n" for e in self.events), encoding="utf-8")


def kinds(decisions: list[Decision], kind: DecisionKind) -> list[Decision]:
    return [d for d in decisions if d.kind is kind]


def only(decisions: list[Decision], kind: DecisionKind) -> Decision:
    found = kinds(decisions, kind)
    assert len(found) == 1, f"expected one {kind.value}, got {[d.summary for d in found]}"
    return found[0]


def ball_count(engine: PiratenbillardEngine) -> int:
    """Balls on the board + in treasures + out of the game: never more or fewer than dealt."""
    return (sum(engine.state().board.values()) + sum(engine.state().treasure_balls.values())
            + sum(engine.state().out_of_game.values()))
