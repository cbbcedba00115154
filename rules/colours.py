"""A ball colour as a person gives it: sRGB ("#7b3fa0", [123, 63, 160]) or CIE Lab ({"lab": [L, a, b]}).

The session, the table profile, the calibration and the command line all say a
player's ball colour this way, so it is parsed in one place; the rules engines
never read it (a colour is vision's business: it tells the detector what to look
for and the pages what to draw). Conversions are CIE L*a*b* under D65 from sRGB,
as OpenCV computes them, in plain Python so the record's layers stay free of numpy.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from .errors import InputError

FORMS = ('"#rrggbb", [r, g, b] (sRGB, 0-255), {"srgb": [r, g, b]}, {"lab": [L, a, b]} '
         'or "lab(L a b)" (CIE L* 0-100, a*, b*)')
_WHITE = (0.950456, 1.0, 1.088754)  # D65, as OpenCV's Lab conversion
_RGB_TO_XYZ = ((0.412453, 0.357580, 0.180423), (0.212671, 0.715160, 0.072169), (0.019334, 0.119193, 0.950227))
_XYZ_TO_RGB = ((3.240479, -1.53715, -0.498535), (-0.969256, 1.875991, 0.041556), (0.055648, -0.204043, 1.057311))
_HEX = re.compile(r"^#([0-9a-fA-F]{6})$")
_LAB = re.compile(r"^lab\(\s*([^,\s)]+)[\s,]+([^,\s)]+)[\s,]+([^,\s)]+)\s*\)$", re.IGNORECASE)


@dataclass(frozen=True)
class BallColour:
    """A player's ball colour: CIE Lab (L* 0-100), and the sRGB triple when it was given in sRGB."""

    lab: tuple[float, float, float]
    srgb: tuple[int, int, int] | None = None

    @classmethod
    def from_srgb(cls, rgb: tuple[int, int, int]) -> BallColour:
        return cls(srgb_to_lab(rgb), rgb)

    @property
    def rgb(self) -> tuple[int, int, int]:
        """sRGB 0-255 to draw it with (a Lab colour outside sRGB is clipped into it)."""
        return self.srgb if self.srgb is not None else lab_to_srgb(self.lab)

    @property
    def hex(self) -> str:
        r, g, b = self.rgb
        return f"#{r:02x}{g:02x}{b:02x}"

    @property
    def bgr(self) -> tuple[int, int, int]:
        r, g, b = self.rgb
        return b, g, r

    def to_json(self) -> Any:
        """As it was given: "#rrggbb" for sRGB, {"lab": [L, a, b]} for Lab."""
        return self.hex if self.srgb is not None else {"lab": [round(v, 2) for v in self.lab]}

    def __str__(self) -> str:
        return self.hex if self.srgb is not None else "lab({:.1f} {:.1f} {:.1f})".format(*self.lab)


def delta_e(first: tuple[float, float, float], second: tuple[float, float, float]) -> float:
    """CIE76 colour difference: the Euclidean distance in Lab (about 2.3 is just noticeable)."""
    return math.dist(first, second)


def parse_colour(value: Any, where: str) -> BallColour:
    """A colour from JSON or a command-line string; `where` names it in the one-line error."""
    if isinstance(value, str):
        text = value.strip()
        if (match := _HEX.match(text)) is not None:
            digits = match.group(1)
            return BallColour.from_srgb((int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)))
        if (match := _LAB.match(text)) is not None:
            try:
                return _lab([float(number) for number in match.groups()], where)
            except ValueError:
                pass
    elif isinstance(value, list):
        return BallColour.from_srgb(_srgb(value, where))
    elif isinstance(value, dict) and len(value) == 1 and "srgb" in value:
        return BallColour.from_srgb(_srgb(value["srgb"], where))
    elif isinstance(value, dict) and len(value) == 1 and "lab" in value and isinstance(value["lab"], list):
        return _lab(value["lab"], where)
    raise InputError(f"{where}: {value!r} is not a colour; give {FORMS}")


def _numbers(values: list[Any], where: str, what: str) -> list[float]:
    numbers = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise InputError(f"{where}: {values!r} is not {what}; give {FORMS}")
        numbers.append(float(v))
    if len(numbers) != 3:
        raise InputError(f"{where}: {values!r} is not {what} (three numbers); give {FORMS}")
    return numbers


def _srgb(values: Any, where: str) -> tuple[int, int, int]:
    what = "an sRGB triple of integers 0-255"
    if not isinstance(values, list):
        raise InputError(f"{where}: {values!r} is not {what}; give {FORMS}")
    r, g, b = _numbers(values, where, what)
    if not all(c == int(c) and 0 <= c <= 255 for c in (r, g, b)):
        raise InputError(f"{where}: {values!r} is not {what}; give {FORMS}")
    return int(r), int(g), int(b)


def _lab(values: list[Any], where: str) -> BallColour:
    what = "a CIE Lab triple with L* 0-100 and a*, b* within -128..127"
    light, a, b = _numbers(values, where, what)
    if not (0 <= light <= 100 and -128 <= a <= 127 and -128 <= b <= 127):
        raise InputError(f"{where}: {values!r} is not {what}; give {FORMS}")
    return BallColour((light, a, b))


def srgb_to_lab(rgb: tuple[int, int, int]) -> tuple[float, float, float]:
    """sRGB 0-255 -> CIE L*a*b* (D65)."""
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (v / 255 for v in rgb)]
    x, y, z = (sum(m * c for m, c in zip(row, linear)) / w for row, w in zip(_RGB_TO_XYZ, _WHITE))

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    light = 116 * y ** (1 / 3) - 16 if y > 0.008856 else 903.3 * y
    return light, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def lab_to_srgb(lab: tuple[float, float, float]) -> tuple[int, int, int]:
    """CIE L*a*b* (D65) -> sRGB 0-255, clipped into the sRGB gamut."""
    light, a, b = lab
    fy = (light + 16) / 116
    fx, fz = fy + a / 500, fy - b / 200

    def inverse(t: float) -> float:
        return t ** 3 if t > 6 / 29 else (t - 16 / 116) / 7.787

    xyz = (inverse(fx) * _WHITE[0], inverse(fy), inverse(fz) * _WHITE[2])
    rgb = []
    for row in _XYZ_TO_RGB:
        c = max(0.0, min(1.0, sum(m * v for m, v in zip(row, xyz))))
        rgb.append(round(255 * (12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055)))
    return rgb[0], rgb[1], rgb[2]
