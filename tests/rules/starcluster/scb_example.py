"""The demo game (examples/starcluster_full_game.jsonl), scripted shot by shot.

Run `python tests/rules/starcluster/scb_example.py` from the repository root to rewrite the example;
test_scb_game.py checks the file still matches this script and plays it through the engine.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from rules.events import (  # noqa: E402
    BallLifted, BallSighting, Confirm, Event, GameStart, Location, OutOfBallsChoice, Place, PlayerSpec,
    PlayLineCrossing, RoundEnd, RoundStart, ShotStarted, Snapshot, TableSettled,
)

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "starcluster_full_game.jsonl"


class Table:
    """The physical table while scripting: slots, grouped balls, gutter balls, balls lying in the play area."""

    def __init__(self) -> None:
        self.slots: dict[tuple[int, int], str] = {}
        self.grouped: list[str] = []
        self.gutter: list[str] = []
        self.play: list[str] = []
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)

    def snapshot(self) -> Snapshot:
        balls = [BallSighting(o, Location.slot_at(*s)) for s, o in sorted(self.slots.items())]
        balls += [BallSighting(o, Location(Place.GROUPED)) for o in self.grouped]
        balls += [BallSighting(o, Location(Place.GUTTER)) for o in self.gutter]
        balls += [BallSighting(o, Location(Place.PLAY_AREA)) for o in self.play]
        return Snapshot(tuple(balls))

    def shot(self, t: float, player: str, to: str | tuple[int, int], knock: tuple | None = None,
             crossing: bool = False) -> str:
        """One shot: the ball goes `to` a slot, 'grouped', 'gutter' or 'play'; `knock` moves (from, to).

        Returns the id of the Play Line crossing, if any, so the umpire can confirm it.
        """
        self.play = []  # returned balls were picked up before this shot
        self.emit(ShotStarted(t, f"S{len(self.events)}", player=player))
        crossing_id = f"X{len(self.events)}"
        if crossing:
            self.emit(PlayLineCrossing(t + 0.4, crossing_id, player=player, body_part="left foot", confidence=0.93))
        if knock is not None:
            origin, target = knock
            owner = self.slots.pop(origin) if isinstance(origin, tuple) else self._take_grouped(origin)
            self._put(owner, target)
        self._put(player, to)
        self.emit(TableSettled(t + 3.0, f"T{len(self.events)}", snapshot=self.snapshot()))
        return crossing_id

    def _take_grouped(self, owner: str) -> str:
        self.grouped.remove(owner)
        return owner

    def _put(self, owner: str, to: str | tuple[int, int]) -> None:
        if isinstance(to, tuple):
            assert to not in self.slots, to
            self.slots[to] = owner
        else:
            {"grouped": self.grouped, "gutter": self.gutter, "play": self.play}[to].append(owner)


def example_events() -> list[Event]:
    table = Table()
    table.emit(GameStart(0.0, "G1", players=(PlayerSpec("red", "Rita", "right"), PlayerSpec("blue", "Ben", "left"))))
    # ---- round 1: red (right-hand side) starts
    table.emit(RoundStart(2.0, "R1"))
    table.shot(6.0, "red", (1, 3))  # P1 base 1
    table.shot(15.0, "red", (1, 4))  # chain: base 1 + chain 1
    table.shot(24.0, "red", (2, 2))  # P2 base 2
    table.shot(33.0, "red", "grouped")  # grouping ends red's turn
    table.shot(44.0, "blue", (3, 1))  # P3 base 5
    table.shot(53.0, "blue", (3, 2))  # chain: 5 + 5
    table.shot(62.0, "blue", "play")  # returned: fails to score
    table.shot(72.0, "red", (2, 3))  # chain with P2/2: 2 + 2
    table.shot(81.0, "red", "gutter")  # gutter: out for the round
    table.shot(92.0, "blue", (3, 0))  # Grand Slam of P3: 5 + 5 chain + 25 doubling
    table.shot(101.0, "blue", (1, 0), knock=((2, 3), (2, 4)))  # knocks red P2/3 -> P2/4: foul, red scores 2
    crossing = table.shot(113.0, "red", (1, 5), crossing=True)  # Play Line foul: void, ball out
    table.slots.pop((1, 5))
    table.emit(BallLifted(118.0, "U1", owner="red", at=Location.slot_at(1, 5)))
    table.emit(TableSettled(119.0, "U2", snapshot=table.snapshot()))
    table.emit(Confirm(120.0, "U3", target=crossing, reason="foot over the line on the replay"))
    table.shot(126.0, "blue", (2, 1))  # P2 base 2 (red's P2/2 is no chain partner)
    table.shot(135.0, "blue", "grouped")  # grouping: red to play
    table.shot(146.0, "red", (1, 5))  # chain P1/3-4-5: 1 + 1
    table.shot(155.0, "red", (1, 6))  # 1 + 1
    table.shot(164.0, "red", (1, 2))  # 1 + 1; red has no ball left: blue must choose
    table.emit(OutOfBallsChoice(172.0, "C1", player="blue", choice="final_sequence"))
    table.shot(180.0, "blue", (2, 3))  # Final Sequence ball 1: P2/3 between red balls: 2
    table.shot(189.0, "blue", "play")  # ball 2 rolls back: discarded
    table.shot(198.0, "blue", (1, 1))  # ball 3: chains with P1/0: 1 + 1
    table.shot(207.0, "blue", "gutter")  # ball 4: gutter; every ball played, round over
    # ---- round 2: blue (left-hand side) starts; the table was cleared
    table.slots, table.grouped, table.gutter, table.play = {}, [], [], []
    table.emit(RoundStart(400.0, "R2"))
    table.shot(405.0, "blue", (2, 0))  # 2
    table.shot(414.0, "blue", (2, 1))  # 2 + 2
    table.shot(423.0, "blue", (2, 2))  # 2 + 2
    table.shot(432.0, "blue", "grouped")  # grouping ends blue's turn
    table.shot(443.0, "red", (3, 1))  # 5
    table.shot(452.0, "red", (3, 0))  # 5 + 5
    table.shot(461.0, "red", "play")  # returned: blue to play
    table.shot(472.0, "blue", (2, 3))  # 2 + 2
    table.shot(481.0, "blue", (2, 4))  # completes P2: 2 + 2 + Grand Slam 18
    table.shot(490.0, "blue", "gutter")  # red to play
    table.shot(501.0, "red", (3, 2))  # completes P3: 5 + 5 + Grand Slam 25
    table.shot(510.0, "red", (1, 0))  # 1
    table.shot(519.0, "red", (1, 1))  # 1 + 1
    table.shot(528.0, "red", "grouped")  # blue to play
    table.shot(540.0, "blue", (1, 3), knock=("red", (1, 2)))  # knocks red's grouped ball into P1/2
    table.emit(RoundEnd(760.0, "R3"))  # the umpire calls time: remaining balls score 1 each
    return table.events


def write(path: Path = EXAMPLE) -> None:
    path.write_text("".join(json.dumps(e.to_json()) + "\n" for e in example_events()), encoding="utf-8")


if __name__ == "__main__":
    write()
    print(f"wrote {EXAMPLE}")
