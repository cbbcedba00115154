"""`linear_sum_assignment` (the Hungarian problem: tracks to detections, balls to places) without the import of
`scipy.optimize`.

The solver is one compiled function in SciPy's private module `scipy.optimize._lsap`, but importing it the usual
way runs the whole `scipy.optimize` package first (linear programming, `scipy.linalg`, `scipy.fft`): about 0.4 s
of the referee's 1.5 s start, before the first frame of a live feed is looked at. Here the compiled module is
loaded on its own. Its place is SciPy's to change: where it is not found, or does not hold the function, the
public import is used.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import numpy as np
import scipy

MODULE = "scipy.optimize._lsap"


def _compiled() -> Callable[..., Any]:
    """The solver from the compiled module loaded alone; where SciPy has moved or changed it, the public one."""
    try:
        loaded = sys.modules.get(MODULE) or _load_alone()
        solver: Callable[..., Any] = loaded.linear_sum_assignment
        return solver
    except (ImportError, AttributeError):
        return importlib.import_module("scipy.optimize").linear_sum_assignment


def _load_alone() -> ModuleType:
    folder = Path(scipy.__file__).parent / "optimize"
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        spec = importlib.util.spec_from_file_location(MODULE, folder / ("_lsap" + suffix))
        if spec is not None and spec.loader is not None and (folder / ("_lsap" + suffix)).is_file():
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            sys.modules[MODULE] = module  # a later `import scipy.optimize` finds it loaded, and uses it
            return module
    raise ImportError(f"{MODULE} is not in {folder}")


_solve = _compiled()


def linear_sum_assignment(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns of the least-cost matching of a cost matrix, as `scipy.optimize.linear_sum_assignment`."""
    rows, cols = _solve(cost)
    return rows, cols
