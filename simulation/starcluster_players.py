"""Simulated Star Cluster Ball players: how they aim, and which slot they go for.

A player aims like a person who knows the table: for a target slot they pick a
release point on the Play Line and a roll whose free path (gravity along the
tilt and rolling friction, in closed form) reaches the slot's opening from
below at a speed that clears the lip without bouncing out, and that passes no
comb or resting ball on the way. Then their hand adds noise, and the physics
decides what really happens.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np

from .starcluster_physics import Launch, Table

Slot = tuple[int, int]  # (position 1.., slot index 0..)


@dataclass(frozen=True)
class Skill:
    """How well a simulated player rolls: relative speed error and angle error (1 sigma)."""

    speed_sigma: float = 0.025
    angle_sigma_deg: float = 0.7
    arrival_speed: tuple[float, float] = (440.0, 540.0)  # mm/s across the lip they aim for


@dataclass(frozen=True)
class Aim:
    target: Slot
    launch: Launch  # the intended roll, before the hand's noise
    duration: float  # seconds from release to the slot opening


def slot_entry(table: Table, slot: Slot) -> tuple[float, float]:
    """The ball centre where it first touches a slot's lip from below."""
    pos = next(p for p in table.profile.positions if p.number == slot[0])
    sx, sy = pos.slots[slot[1]]
    return (sx, sy - pos.slot_depth_mm / 2 - table.radius)


def solve_roll(table: Table, x0: float, target: tuple[float, float], arrival_vy: float) -> Aim | None:
    """The release velocity that reaches `target` moving up at `arrival_vy` (no obstacles)."""
    a = table.physics.slope_accel
    k = max(table.physics.damping_per_s, 1e-6)
    y0 = table.launch_start(Launch(x0, 0.0, 1.0))[1]
    dy = target[1] - y0
    if dy <= 0:
        return None

    def rise(vy0: float) -> tuple[float, float]:
        e = (arrival_vy + a / k) / (vy0 + a / k)
        t = -math.log(e) / k
        return (vy0 - arrival_vy) / k - a / k * t, t

    lo, hi = arrival_vy, 6000.0
    if rise(hi)[0] < dy:
        return None
    for _ in range(50):
        mid = (lo + hi) / 2
        if rise(mid)[0] < dy:
            lo = mid
        else:
            hi = mid
    vy0 = (lo + hi) / 2
    t = rise(vy0)[1]
    vx0 = (target[0] - x0) * k / (1 - math.exp(-k * t))
    return Aim((0, 0), Launch(x0, vx0, vy0), t)


def free_path(table: Table, launch: Launch, duration: float, samples: int = 80) -> np.ndarray:
    """Centre positions along the obstacle-free roll, shape (samples, 2)."""
    a = table.physics.slope_accel
    k = max(table.physics.damping_per_s, 1e-6)
    x0, y0 = table.launch_start(launch)
    t = np.linspace(0.0, duration, samples)
    decay = (1 - np.exp(-k * t)) / k
    x = x0 + launch.vx * decay
    y = y0 + (launch.vy + a / k) * decay - a / k * t
    return np.stack([x, y], axis=1)


def path_is_clear(table: Table, path: np.ndarray, target: Slot, obstacles: list[tuple[float, float]]) -> bool:
    """True when the roll stays on the board and misses every comb and resting ball."""
    r = table.radius
    p = table.profile
    x, y = path[:, 0], path[:, 1]
    if np.any(x < table.x_min + r + 1) or np.any(x > table.x_max - r - 1):
        return False
    on_board = y >= p.board.y_min - 1
    if np.any(on_board & ((x < p.board.x_min + r + 2) | (x > p.board.x_max - r - 2))):
        return False
    for number, (bx0, by0, bx1, by1) in enumerate(table.comb_boxes(), start=1):
        m = r + 2
        bottom = by0 - r + 0.5 if number == target[0] else by0 - m
        if np.any((x > bx0 - m) & (x < bx1 + m) & (y > bottom) & (y < by1 + m)):
            return False
    for ox, oy in obstacles:
        if np.any(np.hypot(x - ox, y - oy) < 2 * r + 2):
            return False
    return True


def aims_for(table: Table, slot: Slot, arrival_vy: float, obstacles: list[tuple[float, float]],
             step_mm: float = 5.0) -> list[Aim]:
    """Every clear roll into `slot` from release points `step_mm` apart along the Play Line."""
    target = slot_entry(table, slot)
    r = table.radius
    out = []
    for x0 in np.arange(table.x_min + r + 2, table.x_max - r - 2 + 1e-9, step_mm):
        aim = solve_roll(table, float(x0), target, arrival_vy)
        if aim is None:
            continue
        if path_is_clear(table, free_path(table, aim.launch, aim.duration), slot, obstacles):
            out.append(Aim(slot, aim.launch, aim.duration))
    return out


def with_noise(launch: Launch, skill: Skill, rng: random.Random) -> Launch:
    """The roll the hand actually makes."""
    speed = math.hypot(launch.vx, launch.vy) * (1 + rng.gauss(0.0, skill.speed_sigma))
    angle = math.atan2(launch.vy, launch.vx) + math.radians(rng.gauss(0.0, skill.angle_sigma_deg))
    return Launch(launch.x, speed * math.cos(angle), speed * math.sin(angle), launch.shove_at, launch.shove_dv)


@dataclass(frozen=True)
class TableView:
    """What a player sees before a shot: who holds which slot, and where loose balls rest."""

    slots: dict[Slot, str]
    loose: list[tuple[float, float]]  # grouped balls on the board


def choose_aim(table: Table, view: TableView, player: str, skill: Skill, rng: random.Random,
               attack_rate: float = 0.15) -> Aim:
    """A simple policy: extend own chains, prefer valuable reachable slots, sometimes attack.

    The value of a free slot is its base score, plus a bonus when it touches
    one of the player's own balls, divided by how hard it is to reach (fewer
    clear release points = harder).
    """
    obstacles = view.loose + [slot_center(table, s) for s in view.slots]
    arrival = rng.uniform(*skill.arrival_speed)
    opponents = [s for s, owner in view.slots.items() if owner != player]
    if opponents and rng.random() < attack_rate:
        rng.shuffle(opponents)
        for slot in opponents:
            others = [o for o in obstacles if o != slot_center(table, slot)]
            aims = aims_for(table, slot, arrival * 1.8, others)
            if aims:
                return rng.choice(aims)
    base = {1: 1.0, 2: 2.0, 3: 5.0}
    scored: list[tuple[float, list[Aim]]] = []
    for pos in table.profile.positions:
        for index in range(len(pos.slots)):
            slot = (pos.number, index)
            if slot in view.slots:
                continue
            aims = aims_for(table, slot, arrival, obstacles)
            if not aims:
                continue
            chain = any(view.slots.get((pos.number, index + d)) == player for d in (-1, 1))
            value = base.get(pos.number, 1.0) * (2.0 if chain else 1.0)
            value *= min(1.0, len(aims) / 12.0) ** 2
            scored.append((value, aims))
    if not scored:  # nothing reachable: roll straight up the middle
        return solve_roll(table, (table.x_min + table.x_max) / 2,
                          slot_entry(table, (1, len(table.profile.positions[0].slots) // 2)), arrival) or Aim(
            (1, 0), Launch((table.x_min + table.x_max) / 2, 0.0, 1200.0), 1.0)
    weights = [v for v, _ in scored]
    _, aims = rng.choices(scored, weights=weights, k=1)[0]
    return rng.choice(aims)


def slot_center(table: Table, slot: Slot) -> tuple[float, float]:
    pos = next(p for p in table.profile.positions if p.number == slot[0])
    return pos.slots[slot[1]]
