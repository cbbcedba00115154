"""The assignment solver loaded without `scipy.optimize`'s package import: SciPy's own answers, and a referee
that starts without that import."""

import subprocess
import sys

import numpy as np
import pytest
import scipy.optimize

from vision.assignment import linear_sum_assignment


@pytest.mark.parametrize("shape", [(0, 0), (1, 1), (3, 3), (4, 7), (9, 2), (32, 40)])
def test_it_gives_scipys_matching(shape):
    rng = np.random.default_rng(sum(shape))
    for _ in range(20):
        cost = rng.random(shape) * 100
        cost[rng.random(shape) < 0.3] = 1e6  # gated pairs, as the tracker passes them
        rows, cols = linear_sum_assignment(cost)
        want_rows, want_cols = scipy.optimize.linear_sum_assignment(cost)
        assert np.array_equal(rows, want_rows) and np.array_equal(cols, want_cols)


def test_the_referee_starts_without_importing_scipy_optimize():
    code = ("import sys, referee.session, vision.track, vision.cells; "
            "print('scipy.optimize' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_where_scipy_has_moved_the_compiled_module_the_public_solver_is_used(monkeypatch):
    import vision.assignment as assignment

    def moved():
        raise ImportError("scipy.optimize._lsap is not in scipy/optimize")

    monkeypatch.delitem(sys.modules, assignment.MODULE, raising=False)
    monkeypatch.setattr(assignment, "_load_alone", moved)
    assert assignment._compiled() is scipy.optimize.linear_sum_assignment
