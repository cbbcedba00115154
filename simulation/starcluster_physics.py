"""Star Cluster Ball table physics: marbles on a tilted board, in pymunk.

The table plane is the simulation plane (board millimetres, y up the slope).
Gravity along the tilt is the rolling-ball component 5/7·g·sin(tilt) along −y;
rolling friction is a velocity damping. Walls come from the profile: the outer
rails, a low bumper on the Play Line that stops returning balls (a launched
ball passes over it), and the Astrolabe combs. Each slot is a pocket: two
teeth, a back wall above, and a lip across its downhill opening. The lip is a
small ridge: a ball crossing it faster than `lip_speed` climbs over (losing
that much speed), a slower one is stopped, so a resting ball stays in its slot
unless struck. Gutters are capture regions: a ball whose centre enters one is
in the gutter and stops there.

One shot is a pure function of the resting balls and the launch, so aim
searches and the match driver see exactly the same outcome.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pymunk

from calibration.profile import StarClusterProfile
from rules.errors import InputError

G_MM_S2 = 9810.0
BALL, WALL, LIP, BUMPER = 1, 2, 3, 4
_CAT_BALL, _CAT_WALL, _CAT_BUMPER = 0b001, 0b010, 0b100
_WALL_RADIUS = 2.0
_TOOTH_RADIUS = 1.5
_LIP_RADIUS = 1.0


@dataclass(frozen=True)
class PhysicsConfig:
    """Table physics; the defaults give marbles that take 3–5 s to settle a shot."""

    tilt_deg: float = 10.0
    damping_per_s: float = 0.35  # rolling friction: velocity decays as exp(−k·t)
    hz: int = 240  # physics steps per second
    ball_elasticity: float = 0.95  # contact restitution is the product of the two shapes'
    wall_elasticity: float = 0.4
    lip_speed: float = 260.0  # mm/s across the lip needed to climb over it
    rest_speed: float = 3.0  # mm/s below which a ball counts as at rest
    max_shot_s: float = 20.0  # a shot that has not settled by then is stopped

    def __post_init__(self) -> None:
        if not 2.0 <= self.tilt_deg <= 25.0:
            raise InputError(f"physics: tilt_deg must be 2..25 degrees, got {self.tilt_deg}")
        if self.hz < 60 or self.damping_per_s < 0 or self.lip_speed <= 0:
            raise InputError("physics: hz must be >= 60, damping_per_s >= 0 and lip_speed > 0")

    @property
    def slope_accel(self) -> float:
        """Acceleration of a rolling ball down the slope, mm/s²."""
        return 5.0 / 7.0 * G_MM_S2 * math.sin(math.radians(self.tilt_deg))


@dataclass(frozen=True)
class RestingBall:
    """A ball on the table before a shot (at rest); `in_gutter` balls are fixed where they lie."""

    id: int
    x: float
    y: float
    in_gutter: bool = False


@dataclass(frozen=True)
class Launch:
    """A shot: the ball is released at (x, line − behind_mm) with velocity (vx, vy) mm/s.

    A shove jolts the table sideways `shove_at` seconds after release: every
    loose ball gets the velocity `shove_dv` (mm/s, along x) relative to the table.
    """

    x: float
    vx: float
    vy: float
    shove_at: float | None = None
    shove_dv: float = 0.0


@dataclass(frozen=True)
class BallSample:
    id: int
    x: float
    y: float
    vx: float
    vy: float
    in_gutter: bool


@dataclass(frozen=True)
class ShotTrace:
    """Every ball at every video frame of a shot; frame 0 is the release."""

    frames: tuple[tuple[BallSample, ...], ...]
    crossing_frame: int | None  # first frame with the shot ball's centre over the Play Line
    settle_frame: int  # first frame at which every ball has rested for the debounce time
    shove_frame: int | None

    @property
    def final(self) -> tuple[BallSample, ...]:
        return self.frames[self.settle_frame]


class Table:
    """The static geometry of one profile, and the shot simulator built on it."""

    def __init__(self, profile: StarClusterProfile, physics: PhysicsConfig) -> None:
        self.profile = profile
        self.physics = physics
        self.radius = profile.ball_diameter_mm / 2
        self.line_y = min(profile.play_line[0][1], profile.play_line[1][1])
        self.x_min = profile.play_area.x_min
        self.x_max = profile.play_area.x_max
        self.y_max = max(g.rect.y_max for g in profile.gutters)
        self.gutters = tuple(g.rect for g in profile.gutters)
        self.segments = self._segments()

    # ------------------------------------------------------------------ geometry

    def _segments(self) -> tuple[tuple[tuple[float, float], tuple[float, float], float, int], ...]:
        """(a, b, radius, kind) for every wall; surfaces lie on the profile's outlines."""
        w = _WALL_RADIUS
        x0, x1, y1, line = self.x_min, self.x_max, self.y_max, self.line_y
        near = self.profile.table.y_min  # the near rail: a ball that bounces back before the bumper stops here
        segs = [
            ((x0 - w, near - w), (x0 - w, y1 + w), w, WALL),
            ((x1 + w, near - w), (x1 + w, y1 + w), w, WALL),
            ((x0 - w, y1 + w), (x1 + w, y1 + w), w, WALL),
            ((x0 - w, near - w), (x1 + w, near - w), w, WALL),
            ((x0, line - w), (x1, line - w), w, BUMPER),
        ]
        t = _TOOTH_RADIUS
        for pos in self.profile.positions:
            hw, hd = pos.slot_width_mm / 2, pos.slot_depth_mm / 2
            for sx, sy in pos.slots:
                left, right = sx - hw - t, sx + hw + t
                segs.append(((left, sy - hd), (left, sy + hd), t, WALL))
                segs.append(((right, sy - hd), (right, sy + hd), t, WALL))
                segs.append(((left, sy + hd + t), (right, sy + hd + t), t, WALL))
                segs.append(((sx - hw, sy - hd + _LIP_RADIUS), (sx + hw, sy - hd + _LIP_RADIUS), _LIP_RADIUS, LIP))
        return tuple(segs)

    def comb_boxes(self) -> tuple[tuple[float, float, float, float], ...]:
        """Bounding box (x_min, y_min, x_max, y_max) of each Astrolabe Position's comb."""
        boxes = []
        for pos in self.profile.positions:
            hw, hd = pos.slot_width_mm / 2, pos.slot_depth_mm / 2
            xs = [s[0] for s in pos.slots]
            y = pos.slots[0][1]
            m = 2 * _TOOTH_RADIUS
            boxes.append((min(xs) - hw - m, y - hd, max(xs) + hw + m, y + hd + m))
        return tuple(boxes)

    def gutter_at(self, x: float, y: float) -> bool:
        return any(g.x_min <= x <= g.x_max and g.y_min <= y <= g.y_max for g in self.gutters)

    def _gutter_rest(self, x: float, y: float) -> tuple[float, float]:
        """Where a captured ball lies: inside the gutter it entered."""
        r = self.radius
        for g in self.gutters:
            if g.x_min <= x <= g.x_max and g.y_min <= y <= g.y_max:
                return (min(max(x, g.x_min + r), g.x_max - r), min(max(y, g.y_min + r), g.y_max - r))
        return (x, y)

    # ------------------------------------------------------------------ simulation

    def _space(self) -> tuple[pymunk.Space, dict[tuple[int, int], bool]]:
        space = pymunk.Space()
        space.gravity = (0.0, -self.physics.slope_accel)
        space.damping = math.exp(-self.physics.damping_per_s)
        space.iterations = 20
        for a, b, radius, kind in self.segments:
            shape = pymunk.Segment(space.static_body, a, b, radius)
            shape.elasticity = self.physics.wall_elasticity
            shape.friction = 0.0
            shape.collision_type = kind
            category = _CAT_BUMPER if kind == BUMPER else _CAT_WALL
            shape.filter = pymunk.ShapeFilter(categories=category)
            space.add(shape)
        passing: dict[tuple[int, int], bool] = {}
        lip_speed = self.physics.lip_speed

        def begin(arbiter: pymunk.Arbiter, _space: pymunk.Space, _data: object) -> None:
            ball_shape, lip_shape = arbiter.shapes
            if ball_shape.collision_type != BALL:
                ball_shape, lip_shape = lip_shape, ball_shape
            body = ball_shape.body
            assert body is not None  # every ball shape is attached to its ball's body
            vx, vy = body.velocity
            if abs(vy) > lip_speed:
                passing[(id(ball_shape), id(lip_shape))] = True
                body.velocity = (vx, math.copysign(math.sqrt(vy * vy - lip_speed * lip_speed), vy))
                arbiter.process_collision = False

        def pre_solve(arbiter: pymunk.Arbiter, _space: pymunk.Space, _data: object) -> None:
            a, b = arbiter.shapes
            if passing.get((id(a), id(b))) or passing.get((id(b), id(a))):
                arbiter.process_collision = False

        def separate(arbiter: pymunk.Arbiter, _space: pymunk.Space, _data: object) -> None:
            a, b = arbiter.shapes
            passing.pop((id(a), id(b)), None)
            passing.pop((id(b), id(a)), None)

        space.on_collision(BALL, LIP, begin=begin, pre_solve=pre_solve, separate=separate)
        return space, passing

    def _ball(self, space: pymunk.Space, x: float, y: float, launching: bool) -> pymunk.Body:
        body = pymunk.Body(1.0, math.inf)
        body.position = (x, y)
        shape = pymunk.Circle(body, self.radius)
        shape.elasticity = self.physics.ball_elasticity
        shape.friction = 0.0
        shape.collision_type = BALL
        mask = _CAT_BALL | _CAT_WALL | (0 if launching else _CAT_BUMPER)
        shape.filter = pymunk.ShapeFilter(categories=_CAT_BALL, mask=mask)
        space.add(body, shape)
        return body

    def launch_start(self, launch: Launch) -> tuple[float, float]:
        return (launch.x, self.line_y - 3 * self.radius)

    def check_launch(self, launch: Launch) -> None:
        r = self.radius
        if not self.x_min + r <= launch.x <= self.x_max - r:
            raise InputError(f"launch x {launch.x:.1f} mm is off the Play Line ({self.x_min + r:g}..{self.x_max - r:g})")
        if launch.vy <= 0:
            raise InputError("a launch must roll up the table (vy > 0)")

    def simulate(self, resting: tuple[RestingBall, ...], shot_id: int, launch: Launch, fps: float,
                 debounce_s: float) -> ShotTrace:
        """Play one shot from a table at rest until everything has rested `debounce_s`."""
        self.check_launch(launch)
        phys = self.physics
        space, _ = self._space()
        substeps = max(1, round(phys.hz / fps))
        dt = 1.0 / (fps * substeps)
        bodies: dict[int, pymunk.Body] = {}
        fixed: dict[int, tuple[float, float]] = {}
        for ball in resting:
            if ball.in_gutter:
                fixed[ball.id] = (ball.x, ball.y)
            else:
                bodies[ball.id] = self._ball(space, ball.x, ball.y, launching=False)
        sx, sy = self.launch_start(launch)
        shot = self._ball(space, sx, sy, launching=True)
        shot.velocity = (launch.vx, launch.vy)
        bodies[shot_id] = shot
        armed = False  # the launched ball collides with the bumper once it is over the line
        order = sorted(set(bodies) | set(fixed))
        frames: list[tuple[BallSample, ...]] = []
        crossing: int | None = None
        shove_frame: int | None = None
        rest_frames = 0
        need_rest = max(1, math.ceil(debounce_s * fps - 1e-9))
        max_frames = int(phys.max_shot_s * fps)
        frame = 0
        while True:
            frames.append(self._sample(order, bodies, fixed))
            if crossing is None and shot_id in bodies and bodies[shot_id].position.y >= self.line_y:
                crossing = frame
            moving = any(b.velocity.length > phys.rest_speed for b in bodies.values())
            rest_frames = 0 if moving else rest_frames + 1
            # done once everything has rested, the shot's ball over the line or dropped into a gutter short of it
            # (a gutter running on past the line beside the shooter: before, it "rested" until max_shot_s, 20 s)
            if (rest_frames > need_rest and (crossing is not None or shot_id in fixed)) or frame >= max_frames:
                break
            if launch.shove_at is not None and shove_frame is None and frame / fps >= launch.shove_at:
                shove_frame = frame
                for body in bodies.values():
                    body.velocity = (body.velocity.x + launch.shove_dv, body.velocity.y)
            for _ in range(substeps):
                space.step(dt)
                if not armed and shot_id in bodies and bodies[shot_id].position.y > self.line_y + self.radius + 1:
                    armed = True
                    for s in bodies[shot_id].shapes:
                        s.filter = pymunk.ShapeFilter(categories=_CAT_BALL)
                for ball_id in [i for i, b in bodies.items() if self.gutter_at(*b.position)]:
                    body = bodies.pop(ball_id)
                    fixed[ball_id] = self._free_gutter_spot(self._gutter_rest(*body.position), fixed)
                    space.remove(body, *body.shapes)
            frame += 1
        if frame >= max_frames and rest_frames <= need_rest:
            frames[-1] = tuple(BallSample(b.id, b.x, b.y, 0.0, 0.0, b.in_gutter) for b in frames[-1])
        settle = len(frames) - 1
        return ShotTrace(tuple(frames), crossing, settle, shove_frame)

    def _free_gutter_spot(self, spot: tuple[float, float], fixed: dict[int, tuple[float, float]]) -> tuple[float, float]:
        """Captured balls lie side by side along the gutter, never on top of each other."""
        x, y = spot
        d = 2 * self.radius + 0.5
        for _ in range(200):
            if all(math.dist((x, y), other) >= d for other in fixed.values()):
                return (x, y)
            g = next((g for g in self.gutters if g.contains((x, y))), None)
            if g is not None and (g.y_max - g.y_min) > (g.x_max - g.x_min):
                y = y - d if y - d >= g.y_min + self.radius else y + 3 * d
            else:
                x = x - d if x - d >= (g.x_min if g else self.x_min) + self.radius else x + 3 * d
        return (x, y)

    def _sample(self, order: list[int], bodies: dict[int, pymunk.Body],
                fixed: dict[int, tuple[float, float]]) -> tuple[BallSample, ...]:
        out = []
        for ball_id in order:
            if ball_id in bodies:
                b = bodies[ball_id]
                out.append(BallSample(ball_id, b.position.x, b.position.y, b.velocity.x, b.velocity.y, False))
            else:
                x, y = fixed[ball_id]
                out.append(BallSample(ball_id, x, y, 0.0, 0.0, True))
        return tuple(out)
