"""Suite-wide settings.

No Hypothesis test has a deadline: how fast an example runs depends on what else the machine is
doing, and a test's verdict must not. Under CI (CI=true) Hypothesis also derandomizes: the same
examples every run, so a landing is never decided by the luck of a draw. Local runs keep exploring
new random examples, which is where new bugs are found.

No test leaves a pose worker thread behind (vision/pose_watch.py): whoever starts one closes it.
"""

import os
import threading

import pytest
from hypothesis import settings

settings.register_profile("local", deadline=None)
settings.register_profile("ci", parent=settings.get_profile("local"), derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "local")


@pytest.fixture(autouse=True)
def no_pose_worker_left_running():
    yield
    left = [t.name for t in threading.enumerate() if t.name.startswith("pose-worker")]
    assert not left, f"pose worker threads left running: {left}; close the PoseWatch (or the session that holds it)"
