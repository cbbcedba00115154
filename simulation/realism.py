"""Realism knobs: what separates a rendered frame from a clean diagram.

Every effect is drawn from a seeded generator owned by the render, so a clip
renders to the same truth every time (the encoded pixels may differ only if
the encoder does).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import cv2
import numpy as np

from rules.errors import InputError


@dataclass(frozen=True)
class Realism:
    lighting: float = 0.0  # amplitude of the smooth, slowly drifting gain field (0.15 = +-15 %)
    noise: float = 0.0  # sensor noise, standard deviation in grey levels (0..255)
    motion_blur: float = 0.0  # exposure as a fraction of the frame time; moving balls smear over it
    crf: int = 23  # H.264 quality (higher = smaller file, more artefacts)
    shake_deg: float = 0.0  # camera shake: amplitude of the smooth random rotation, degrees
    table_bump: bool = True  # draw the table where TableShift puts it
    hand: bool = True  # draw hands that reach in (and let them hide balls)
    person: bool = True  # composite the player at the Play Line

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, float) and value < 0:
                raise InputError(f"realism: {f.name!r} must be >= 0, got {value}")
        if not 0 <= self.crf <= 51:
            raise InputError(f"realism: 'crf' must be 0..51, got {self.crf}")

    @staticmethod
    def moderate(crf: int = 28) -> "Realism":
        """Every knob on at a moderate strength: the setting of the committed samples."""
        return Realism(lighting=0.15, noise=3.0, motion_blur=0.5, crf=crf, shake_deg=0.12)


class Effects:
    """Per-frame lighting, shake and noise, smooth in time, from one seeded generator."""

    def __init__(self, realism: Realism, width: int, height: int, fps: float, seed: int) -> None:
        self.realism, self.width, self.height, self.fps = realism, width, height, fps
        rng = np.random.default_rng(seed)
        self._light_fields = rng.normal(0, 1, (3, 6, 10)).astype(np.float32)
        self._light_phase = rng.uniform(0, 2 * np.pi, 3)
        self._light_freq = rng.uniform(0.03, 0.12, 3)  # Hz: clouds and people moving past a window
        self._shake_phase = rng.uniform(0, 2 * np.pi, (3, 3))
        self._shake_freq = rng.uniform(0.4, 2.5, (3, 3))
        self._noise_bank = [rng.normal(0, 1, (height, width, 3)).astype(np.float32) for _ in range(4)] \
            if realism.noise > 0 else []
        self._noise_pick = np.random.default_rng(seed + 1)

    def shake_angles(self, t: float) -> tuple[float, float, float]:
        """Smooth rotation (about camera x, y, z) in degrees at time t: sums of slow sines."""
        a = self.realism.shake_deg
        if a == 0:
            return (0.0, 0.0, 0.0)
        waves = np.sin(2 * np.pi * self._shake_freq * t + self._shake_phase).mean(axis=1)
        return (float(a * waves[0]), float(a * waves[1]), float(0.5 * a * waves[2]))

    def gain(self, t: float) -> np.ndarray | None:
        if self.realism.lighting == 0:
            return None
        weights = np.sin(2 * np.pi * self._light_freq * t + self._light_phase).astype(np.float32)
        field = np.tensordot(weights, self._light_fields, axes=1) / np.sqrt(3)
        field = cv2.resize(field, (self.width, self.height), interpolation=cv2.INTER_CUBIC)
        # a vignette-like fall-off plus the drifting field
        return (1.0 + self.realism.lighting * np.clip(field, -2.5, 2.5) / 2.5)[..., None]

    def finish(self, img: np.ndarray, t: float, shake_h: np.ndarray | None) -> np.ndarray:
        """Apply lighting, camera shake and noise to a float frame; return uint8 BGR."""
        gain = self.gain(t)
        if gain is not None:
            img = img * gain
        if shake_h is not None:
            img = cv2.warpPerspective(img, shake_h, (self.width, self.height), flags=cv2.INTER_LINEAR,
                                      borderMode=cv2.BORDER_REPLICATE)
        img = img * 255.0  # a new array from here on: the steps below work in place
        if self._noise_bank:
            pick = int(self._noise_pick.integers(len(self._noise_bank)))
            shift = int(self._noise_pick.integers(self.width))
            noise = self._noise_bank[pick]  # rolled `shift` columns to the right, as two slices
            img[:, shift:] += self.realism.noise * noise[:, :self.width - shift]
            img[:, :shift] += self.realism.noise * noise[:, self.width - shift:]
        return np.clip(img, 0, 255, out=img).astype(np.uint8)
