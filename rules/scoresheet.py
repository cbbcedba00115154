"""The printed score sheet: every shot, each turn's subtotal, every round and game.

It is written from decisions alone, so the sheet of a live run and of its
replay are the same text.
"""

from __future__ import annotations

import math

from .decisions import Decision, DecisionKind
from .games import TITLES
from .replay import ReplayResult
from .result import POINT_KINDS

# Decisions that get a line of their own under the shot they belong to.
DETAIL_KINDS = (DecisionKind.FOUL, DecisionKind.BALL_REMOVED, DecisionKind.BALL_RETURNED, DecisionKind.PHASE,
                DecisionKind.CHOICE_REQUIRED, DecisionKind.LIFT, DecisionKind.UMPIRE, DecisionKind.WARNING)


CALL_WIDTH = 76  # characters of the call column; longer calls are cut


def clock(t: float) -> str:
    if not math.isfinite(t):  # the log reader refuses such times; never a traceback here all the same
        return f"{t}"
    minutes, seconds = divmod(t, 60.0)
    return f"{int(minutes):02d}:{seconds:05.2f}"


def render_score_sheet(replayed: ReplayResult, title: str) -> str:
    players = replayed.standings.players
    running = {player: 0 for player in players}
    turn_points = {player: 0 for player in players}
    turn_player: str | None = None
    lines = [f"{TITLES.get(replayed.game, replayed.game)} score sheet: {title}",
             "Players: " + ", ".join(players), ""]
    header = f"{'time':>8}  {'call':<{CALL_WIDTH}}{'pts':>5}  " + "".join(f"{p:>7}" for p in players)
    lines.append(header)
    lines.append("-" * len(header))

    def row(decision: Decision, text: str, points: str = "") -> None:
        scores = "".join(f"{running[p]:>7}" for p in players)
        lines.append(f"{clock(decision.t):>8}  {text[:CALL_WIDTH]:<{CALL_WIDTH}}{points:>5}  {scores}")

    def close_turn() -> None:
        """Subtotal of the turn that ends: the shooter's points, and any an opponent won meanwhile."""
        if turn_player is not None:
            others = ", ".join(f"{p} {n:+d}" for p, n in turn_points.items() if n and p != turn_player)
            label = f"turn total for {turn_player}" + (f" (meanwhile {others})" if others else "")
            lines.append(f"{'':>8}  {label:<{CALL_WIDTH}}{turn_points.get(turn_player, 0):>+5}")
        for player in turn_points:
            turn_points[player] = 0

    for decision in replayed.decisions:
        kind = decision.kind
        if kind in POINT_KINDS and decision.player is not None:
            running[decision.player] = running.get(decision.player, 0) + decision.points
            turn_points[decision.player] = turn_points.get(decision.player, 0) + decision.points
            detail = ", ".join(f"{item.label} {item.points:+d}" for item in decision.breakdown)
            row(decision, f"  {decision.player}: {decision.summary}" + (f" [{detail}]" if detail else ""),
                f"{decision.points:+d}")
        elif kind is DecisionKind.SHOT:
            row(decision, decision.summary)
        elif kind is DecisionKind.TURN:
            close_turn()
            turn_player = decision.player
            lines.append(f"{'':>8}  == {decision.summary} ==")
        elif kind in (DecisionKind.ROUND_RESULT, DecisionKind.GAME_RESULT, DecisionKind.MATCH_RESULT):
            close_turn()
            turn_player = None
            lines.append(f"{clock(decision.t):>8}  ** {decision.summary} **")
            if kind is not DecisionKind.ROUND_RESULT:
                lines.append("")
        elif kind in DETAIL_KINDS:
            flag = " (flagged for review)" if decision.flagged else ""
            rule = f" [{decision.rule}]" if decision.rule else ""
            row(decision, f"  {kind.value}: {decision.summary}{rule}{flag}")

    standings = replayed.standings
    lines.append("")
    for game in standings.games:
        rounds = "  ".join(
            f"R{r.number}{'(tie-break)' if r.tiebreak else ''}: "
            + " ".join(f"{p} {r.scores.get(p, 0)}" for p in players)
            for r in game.rounds
        )
        winners = " and ".join(game.winners) if game.winners else "no winner yet"
        lines.append(f"Game {game.number}: {rounds}  | totals "
                     + " ".join(f"{p} {game.totals.get(p, 0)}" for p in players) + f"  | winner: {winners}")
    if standings.winners:
        lines.append(("Winner: " if len(standings.winners) == 1 else "Shared victory: ")
                     + " and ".join(standings.winners))
    if not standings.complete:
        lines.append(f"The log ends before the game does: {standings.status}")
    flagged = sum(1 for d in replayed.decisions if d.flagged)
    if flagged:
        lines.append(f"{flagged} call(s) flagged for the umpire's review")
    lines.extend(f"Warning: {warning}" for warning in replayed.warnings)
    return "\n".join(lines) + "\n"
