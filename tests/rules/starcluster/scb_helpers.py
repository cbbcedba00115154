"""Builders for Star Cluster Ball event logs in tests: terse snapshots, running clock."""

from __future__ import annotations

from rules.decisions import Decision, DecisionKind
from rules.events import (
    BallSighting, Event, GameStart, Location, OutOfBallsChoice, Place, PlayerSpec, PlayLineCrossing, RoundEnd,
    RoundStart, ShotStarted, Snapshot, TableMovement, TableSettled, UmpireFoul,
)
from rules.starcluster import StarClusterConfig, StarClusterEngine

PLACES = {"play": Place.PLAY_AREA, "grouped": Place.GROUPED, "gutter": Place.GUTTER, "off": Place.OFF_TABLE}


def ball(spec: str) -> BallSighting:
    """'red@3.1' is red in Position 3 slot 1; 'red@grouped', 'red@gutter', 'red@play', 'red@off'."""
    owner, where = spec.split("@")
    if where in PLACES:
        return BallSighting(owner, Location(PLACES[where]))
    position, slot = where.split(".")
    return BallSighting(owner, Location.slot_at(int(position), int(slot)))


def snap(*specs: str) -> Snapshot:
    return Snapshot(tuple(ball(s) for s in specs))


class Log:
    """Builds events with increasing t and ids E1, E2, ...; `board` is the current table, edited per shot."""

    def __init__(self, players: tuple[tuple[str, str], ...] = (("red", "right"), ("blue", "left"))) -> None:
        self.events: list[Event] = [GameStart(0.0, "E0", players=tuple(PlayerSpec(p, side=s) for p, s in players))]
        self.t = 0.0

    def _next(self, dt: float) -> tuple[float, str]:
        self.t += dt
        return self.t, f"E{len(self.events)}"

    def add(self, cls: type, dt: float = 1.0, **fields: object) -> "Log":
        t, eid = self._next(dt)
        self.events.append(cls(t, eid, **fields))
        return self

    def shot(self, *board: str, player: str | None = None, void: bool = False, movement: float | None = None,
             foul: str | None = None, free_shot: bool = False, dt: float = 5.0) -> "Log":
        """One shot: start, optional foul events, then the settled table showing `board`."""
        self.add(ShotStarted, dt, player=player)
        if void:
            self.add(PlayLineCrossing, 0.5, body_part="foot")
        if movement is not None:
            self.add(TableMovement, 0.5, magnitude_mm=movement)
        if foul is not None:
            self.add(UmpireFoul, 0.5, player=player or "red", foul=foul, free_shot=free_shot)
        return self.add(TableSettled, 2.0, snapshot=snap(*board))

    def settle(self, *board: str, dt: float = 1.0) -> "Log":
        return self.add(TableSettled, dt, snapshot=snap(*board))

    def choice(self, player: str, choice: str) -> "Log":
        return self.add(OutOfBallsChoice, 1.0, player=player, choice=choice)

    def round_start(self) -> "Log":
        return self.add(RoundStart, 1.0)

    def round_end(self) -> "Log":
        return self.add(RoundEnd, 1.0)


def run(events: list[Event], config: StarClusterConfig | None = None,
        close: bool = True) -> tuple[StarClusterEngine, list[Decision]]:
    engine = StarClusterEngine(config or StarClusterConfig())
    out: list[Decision] = []
    for event in events:
        out.extend(engine.feed(event))
    if close:
        out.extend(engine.close(events[-1].t))
    return engine, out


def points(decisions: list[Decision], player: str) -> int:
    return sum(d.points for d in decisions if d.kind in (DecisionKind.SCORE, DecisionKind.CAPTURE)
               and d.player == player)


def kinds(decisions: list[Decision], kind: DecisionKind) -> list[Decision]:
    return [d for d in decisions if d.kind is kind]


def cfg(**fields: object) -> StarClusterConfig:
    return StarClusterConfig.from_dict(fields)
