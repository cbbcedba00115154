"""Small numeric helpers for the per-frame loop, exact to numpy's bits without numpy's per-call cost."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def median(values: Sequence[float]) -> float:
    """`float(np.median(values))` to the bit, for a few numbers, without building an array.

    numpy takes the mean of the middle one or two: their sum, started from +0.0 (so a -0.0 comes out +0.0),
    over their count. Anything not finite is left to numpy (its NaN rules). Empty `values` are an error."""
    ordered = sorted(values)
    if not math.isfinite(sum(ordered)):
        return float(np.median(values))
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[middle] + 0.0)
    return float((ordered[middle - 1] + ordered[middle] + 0.0) / 2)
