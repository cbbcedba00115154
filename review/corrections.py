"""Umpire corrections after the match, applied by replaying the whole log.

A correction is one of the event model's own umpire inputs (`confirm`,
`overturn`, `snapshot_correction`, `umpire_foul`, docs/events.md), so the
rules engines and `rules.replay` need nothing new. Corrections are appended to
RUN_DIR/corrections.jsonl, each with who, why and when; events.jsonl is never
touched, so the original call stays on record. The replay merges the two logs
in time order, and the corrected result is compared with the original one
call by call, so the umpire sees exactly what a correction changed.

Everything is checked before anything is written: a correction that points at
no event, a malformed location, a time past the end of the log or a log that
no longer replays stops with one line and leaves the run folder as it was.
"""

from __future__ import annotations

import re
from collections import defaultdict, deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable

from record.run_folder import (
    CORRECTED_RESULT_FILE,
    CORRECTION_TYPES,
    CORRECTIONS_FILE,
    DIFF_FILE,
    EVENTS_FILE,
    Correction,
    RunFolder,
    append_corrections,
    read_run,
)
from rules.errors import InputError
from rules.events import (
    BallSighting,
    Confirm,
    Event,
    GameStart,
    Location,
    LogError,
    Overturn,
    Place,
    Snapshot,
    SnapshotCorrection,
    TableSettled,
    UmpireFoul,
    parse_event,
)
from rules.files import read_json_lines, write_json_atomically
from rules.replay import OVERTURNABLE, OVERTURNABLE_TYPES, replay
from rules.result import build_result

DIFF_FORMAT = "table-referee/diff@1"
# Places a ball can be reported in, per game (docs/events.md, "Locations").
GAME_PLACES = {
    "starcluster": {Place.SLOT, Place.GROUPED, Place.PLAY_AREA, Place.GUTTER, Place.OFF_TABLE},
    "piratenbillard": {Place.CELL, Place.OFF_TABLE},
}
LOCATION_HELP = ("use slot:POSITION/SLOT (e.g. slot:3/4), cell:ROW/COL (e.g. cell:4/7), grouped, play_area, "
                 "gutter, off_table, or none")


class CorrectionError(InputError):
    """A correction that makes no sense for this run: nothing is written."""


@dataclass(frozen=True)
class Ask:
    """A correction as asked for on the command line, e.g. ("overturn", ("L31",))."""

    action: str  # "confirm" | "overturn" | "snapshot" | "foul"
    values: tuple[str, ...]


@dataclass(frozen=True)
class Run:
    """A run folder as `referee run` wrote it, with the corrections recorded so far."""

    dir: Path
    game: str
    config: dict[str, Any]
    source: dict[str, Any]
    events: tuple[Event, ...]
    corrections: tuple[Correction, ...]

    @classmethod
    def from_folder(cls, folder: RunFolder) -> "Run":
        """The run as `record.run_folder.read_run` read it; it must have finished (have its result)."""
        result = folder.finished_result()
        return cls(folder.dir, result["game"], dict(result.get("config") or {}), dict(result.get("source") or {}),
                   folder.events, folder.corrections)

    @property
    def corrections_path(self) -> Path:
        return self.dir / CORRECTIONS_FILE

    @property
    def players(self) -> tuple[str, ...]:
        starts = [e for e in self.events if isinstance(e, GameStart)]
        return tuple(p.id for p in starts[0].players) if starts else ()


def load_run(run_dir: str | Path) -> Run:
    """Read events.jsonl, the game and its config from result.json, and corrections.jsonl if any."""
    return Run.from_folder(read_run(run_dir, tracks=False))


def parse_location(text: str) -> Location | None:
    """`slot:3/4`, `cell:4/7`, `grouped`, `play_area`, `gutter`, `off_table`; `none` (not on the table) is None."""
    if text == "none":
        return None
    match = re.fullmatch(r"(slot|cell):(\d+)/(\d+)", text)
    try:
        if match and match[1] == "slot":
            return Location.slot_at(int(match[2]), int(match[3]))
        if match:
            return Location.cell_at(int(match[2]), int(match[3]))
        place = Place(text)
        if place in (Place.SLOT, Place.CELL):
            raise ValueError(f"{text} needs coordinates")
        return Location(place)
    except ValueError:
        raise CorrectionError(f"malformed location {text!r}; {LOCATION_HELP}") from None


def make_corrections(run: Run, asks: Iterable[Ask], file: Path | None, at: float | None, by: str, reason: str,
                     recorded_at: str) -> list[Correction]:
    """Turn the command line (and --file lines) into checked corrections, numbered after those recorded."""
    events: list[Event] = []
    for ask in asks:
        events.append(_from_ask(run, ask, at, by, reason, events))
    if file is not None:
        events.extend(_from_file(file, by, reason))
    corrections = []
    known = {e.id: e for e in run.events}
    known.update({c.event.id: c.event for c in run.corrections})
    for number, event in enumerate(events, start=len(run.corrections) + 1):
        event = replace(event, id=f"C{number}")
        _check(run, event, known)
        known[event.id] = event
        corrections.append(Correction(event, recorded_at))
    return corrections


def _from_ask(run: Run, ask: Ask, at: float | None, by: str, reason: str, earlier: list[Event]) -> Event:
    if ask.action == "foul":
        if at is None:
            raise CorrectionError("--foul needs --at SECONDS: a time during the shot it voids, or after its settle "
                                  "for a foul between shots")
        return UmpireFoul(t=at, **_foul_fields(ask.values[0]), by=by, reason=reason)
    target = _target(run, ask.values[0])
    t = target.t if at is None else at
    if ask.action == "confirm":
        return Confirm(t=t, target=target.id, by=by, reason=reason)
    if ask.action == "overturn":
        return Overturn(t=t, target=target.id, by=by, reason=reason)
    if not isinstance(target, TableSettled):
        raise CorrectionError(f"--snapshot {target.id}: that is a {target.TYPE}, not a table_settled; "
                              "pick the settle of the shot (its id is in the report's shot table)")
    if len(ask.values) < 2:
        raise CorrectionError(f"--snapshot {target.id} needs at least one edit like red@slot:3/5=slot:3/4")
    snapshot = _current_snapshot(run, target, earlier)
    for edit in ask.values[1:]:
        snapshot = _edit(snapshot, edit, target.id)
    return SnapshotCorrection(t=t, target=target.id, snapshot=snapshot, by=by, reason=reason)


def _foul_fields(text: str) -> dict[str, Any]:
    parts = text.split(":")
    if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != "free") or parts[1] not in UmpireFoul.FOULS:
        raise CorrectionError(f"malformed foul {text!r}; use PLAYER:KIND or PLAYER:KIND:free, KIND one of "
                              f"{', '.join(UmpireFoul.FOULS)}")
    return {"player": parts[0], "foul": parts[1], "free_shot": len(parts) == 3}


def _from_file(path: Path, by: str, reason: str) -> list[Event]:
    lines = read_json_lines(path, "corrections file", fix="each line must be one umpire event (docs/events.md)")
    events: list[Event] = []
    for number, data in lines:
        try:
            event = parse_event(data, number)
        except LogError as error:
            raise InputError(f"{path} {error}") from None
        if not isinstance(event, CORRECTION_TYPES):
            raise CorrectionError(f"{path} line {number}: a {event.TYPE} is not a correction; use confirm, "
                                  "overturn, snapshot_correction or umpire_foul")
        events.append(replace(event, by=event.by or by, reason=event.reason or reason))
    return events


def _target(run: Run, target_id: str) -> Event:
    for event in run.events + tuple(c.event for c in run.corrections):
        if event.id == target_id:
            return event
    raise CorrectionError(f"no event {target_id!r} in {run.dir / EVENTS_FILE} or its corrections; use an id "
                          f"from the report (L<line> of {EVENTS_FILE}, C<n> of {CORRECTIONS_FILE})")


def _current_snapshot(run: Run, target: TableSettled, earlier: list[Event]) -> Snapshot:
    """The snapshot as last corrected (edits build on earlier corrections, as replay applies the last one)."""
    snapshot = target.snapshot
    for event in [c.event for c in run.corrections] + earlier:
        if isinstance(event, SnapshotCorrection) and event.target == target.id:
            snapshot = event.snapshot
    return snapshot


def _edit(snapshot: Snapshot, edit: str, target_id: str) -> Snapshot:
    """Apply `COLOUR@FROM=TO`: move one ball; FROM `none` adds a missed ball, TO `none` drops a phantom."""
    match = re.fullmatch(r"([^@=\s]+)@([^=\s]+)=([^=\s]+)", edit)
    if not match:
        raise CorrectionError(f"malformed snapshot edit {edit!r}; use COLOUR@FROM=TO, e.g. red@slot:3/5=slot:3/4")
    owner, source, destination = match[1], parse_location(match[2]), parse_location(match[3])
    balls = list(snapshot.balls)
    if source is not None:
        index = next((i for i, b in enumerate(balls) if b.owner == owner and b.at == source), None)
        if index is None:
            seen = ", ".join(f"{b.owner}@{b.at}" for b in snapshot.balls) or "no balls"
            raise CorrectionError(f"snapshot {target_id} has no {owner} ball at {source}; it shows {seen}")
        del balls[index]
    if destination is not None:
        balls.append(BallSighting(owner, destination))
    return Snapshot(tuple(balls))


def _check(run: Run, event: Event, known: dict[str, Event]) -> None:
    """Refuse what replay would refuse, or silently misapply, naming the correction."""
    name = f"correction {event.id} ({event.TYPE})"
    if not getattr(event, "by", ""):
        raise CorrectionError(f"{name} has no --by: say who decided it")
    if not getattr(event, "reason", ""):
        raise CorrectionError(f"{name} has no --reason: say why")
    end = run.events[-1].t
    if not 0 <= event.t <= end:
        raise CorrectionError(f"{name} is at {event.t:g} s, outside the log (0 to {end:g} s); give --at within it")
    players = run.players
    if isinstance(event, UmpireFoul):
        if event.player not in players:
            raise CorrectionError(f"{name}: {event.player!r} is not a player of this game ({', '.join(players)})")
        return
    target_id = event.target  # type: ignore[attr-defined]
    target = known.get(target_id)
    if target is None:
        raise CorrectionError(f"{name} targets {target_id!r}, which is not in the log or its corrections")
    if isinstance(event, Overturn) and not isinstance(target, OVERTURNABLE):
        raise CorrectionError(f"{name}: {target.id} is a {target.TYPE}, which cannot be overturned; overturn one of "
                              f"{OVERTURNABLE_TYPES}, or fix a snapshot with --snapshot")
    if isinstance(event, SnapshotCorrection):
        if not isinstance(target, TableSettled):
            raise CorrectionError(f"{name}: {target.id} is a {target.TYPE}; a snapshot correction targets a "
                                  "table_settled")
        for ball in event.snapshot.balls:
            if ball.owner not in players:
                raise CorrectionError(f"{name}: {ball.owner!r} is not a player of this game ({', '.join(players)})")
            if ball.at.place not in GAME_PLACES[run.game]:
                raise CorrectionError(f"{name}: a {run.game} ball cannot be at {ball.at.place.value}")


def corrected_log(run: Run, corrections: Iterable[Correction]) -> list[Event]:
    """events.jsonl and the corrections in time order; at equal times the original events come first."""
    keyed = [(e.t, 0, i, e) for i, e in enumerate(run.events)]
    keyed += [(c.event.t, 1, i, c.event) for i, c in enumerate(corrections)]
    return [event for *_, event in sorted(keyed, key=lambda k: k[:3])]


@dataclass(frozen=True)
class ScoreChange:
    scope: str  # "final", "game 1", "game 1 round 2"
    player: str
    before: int | None
    after: int | None


@dataclass(frozen=True)
class ResultDiff:
    """What the corrections changed, from the original result to the corrected one."""

    winners: tuple[tuple[str, ...], tuple[str, ...]]
    complete: tuple[bool, bool]
    game_winners: tuple[tuple[int, tuple[str, ...], tuple[str, ...]], ...]  # only games whose winners changed
    scores: tuple[ScoreChange, ...]  # only changed points
    added: tuple[dict[str, Any], ...]
    removed: tuple[dict[str, Any], ...]
    changed: tuple[tuple[dict[str, Any], dict[str, Any]], ...]

    def to_json(self, corrections: Iterable[Correction]) -> dict[str, Any]:
        return {
            "format": DIFF_FORMAT,
            "corrections": [c.to_json() for c in corrections],
            "winners": {"before": list(self.winners[0]), "after": list(self.winners[1])},
            "complete": {"before": self.complete[0], "after": self.complete[1]},
            "games": [{"number": n, "winners": {"before": list(b), "after": list(a)}} for n, b, a in self.game_winners],
            "scores": [{"scope": c.scope, "player": c.player, "before": c.before, "after": c.after}
                       for c in self.scores],
            "decisions": {"added": list(self.added), "removed": list(self.removed),
                          "changed": [{"before": b, "after": a} for b, a in self.changed]},
        }

    def lines(self) -> list[str]:
        """The diff as a person reads it: results first, then every call that differs."""
        out = []
        if self.winners[0] != self.winners[1]:
            out.append(f"winner: {_names(self.winners[0])} -> {_names(self.winners[1])}")
        if self.complete[0] != self.complete[1]:
            out.append(f"complete: {self.complete[0]} -> {self.complete[1]}")
        out += [f"game {n} winner: {_names(b)} -> {_names(a)}" for n, b, a in self.game_winners]
        out += [f"{c.scope} points, {c.player}: {_num(c.before)} -> {_num(c.after)}" for c in self.scores]
        if not out:
            out.append("scores and winners unchanged")
        out.append(f"calls: {len(self.added)} added, {len(self.removed)} removed, {len(self.changed)} changed")
        out += [f"  + {_call(d)}" for d in self.added]
        out += [f"  - {_call(d)}" for d in self.removed]
        out += [f"  ~ {_call(b)}\n    -> {_call(a)}" for b, a in self.changed]
        return out


def _names(players: tuple[str, ...]) -> str:
    return " and ".join(players) or "(none yet)"


def _num(value: int | None) -> str:
    return "-" if value is None else str(value)


def _call(d: dict[str, Any]) -> str:
    points = f" [{d['points']:+d}]" if "points" in d else ""
    who = f" {d['player']}" if d.get("player") else ""
    return f"{d['t']:.2f}s {d['kind']}{who}: {d['summary']}{points}"


def diff_results(before: dict[str, Any], after: dict[str, Any]) -> ResultDiff:
    scores: list[ScoreChange] = _score_changes("final", before["final_scores"], after["final_scores"])
    games_before = {g["number"]: g for g in before["games"]}
    games_after = {g["number"]: g for g in after["games"]}
    game_winners = []
    for number in sorted(games_before.keys() | games_after.keys()):
        old, new = games_before.get(number, {}), games_after.get(number, {})
        if old.get("winners") != new.get("winners"):
            game_winners.append((number, tuple(old.get("winners", ())), tuple(new.get("winners", ()))))
        scores += _score_changes(f"game {number}", old.get("totals", {}), new.get("totals", {}))
        rounds_old = {r["number"]: r for r in old.get("rounds", ())}
        rounds_new = {r["number"]: r for r in new.get("rounds", ())}
        for r in sorted(rounds_old.keys() | rounds_new.keys()):
            scores += _score_changes(f"game {number} round {r}", rounds_old.get(r, {}).get("scores", {}),
                                     rounds_new.get(r, {}).get("scores", {}))
    added, removed, changed = _align(before["decisions"], after["decisions"])
    return ResultDiff((tuple(before["winners"]), tuple(after["winners"])), (before["complete"], after["complete"]),
                      tuple(game_winners), tuple(scores), added, removed, changed)


def _score_changes(scope: str, old: dict[str, int], new: dict[str, int]) -> list[ScoreChange]:
    players = list(old) + [p for p in new if p not in old]
    return [ScoreChange(scope, p, old.get(p), new.get(p)) for p in players if old.get(p) != new.get(p)]


def _align(before: list[dict[str, Any]], after: list[dict[str, Any]]):
    """Pair calls by (cause, kind, player) and occurrence: unpaired ones were added or removed."""
    def key(d: dict[str, Any]) -> tuple[Any, ...]:
        return (d.get("cause") or f"t={d['t']}", d["kind"], d.get("player"))

    waiting: dict[tuple[Any, ...], deque[dict[str, Any]]] = defaultdict(deque)
    for decision in before:
        waiting[key(decision)].append(decision)
    paired: set[int] = set()
    added, changed = [], []
    for decision in after:
        queue = waiting[key(decision)]
        if not queue:
            added.append(decision)
            continue
        old = queue.popleft()
        paired.add(id(old))
        if old != decision:
            changed.append((old, decision))
    removed = [d for d in before if id(d) not in paired]
    return tuple(added), tuple(removed), tuple(changed)


@dataclass(frozen=True)
class Outcome:
    """The original and corrected results, and their diff."""

    before: dict[str, Any]
    after: dict[str, Any]
    diff: ResultDiff


def apply_corrections(run: Run, new: list[Correction]) -> Outcome:
    """Replay the original log and the corrected one; raise InputError (and write nothing) if it fails."""
    original = replay(list(run.events), run.game, run.config)
    before = build_result(original, run.source)
    every = list(run.corrections) + new
    try:
        corrected = replay(corrected_log(run, every), run.game, run.config)
    except InputError as error:
        raise CorrectionError(f"with the corrections the log does not replay: {error}") from None
    after = build_result(corrected, {**run.source, "corrections": str(run.corrections_path),
                                     "corrections_applied": len(every)})
    return Outcome(before, after, diff_results(before, after))


def record(run: Run, new: list[Correction], outcome: Outcome) -> None:
    """Append the new corrections, then write the corrected result and the diff (each atomically)."""
    if new:
        append_corrections(run.dir, new)
    write_json_atomically(run.dir / CORRECTED_RESULT_FILE, outcome.after)
    write_json_atomically(run.dir / DIFF_FILE, outcome.diff.to_json(list(run.corrections) + new))
