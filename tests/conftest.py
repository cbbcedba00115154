"""Suite-wide settings.

Under CI (CI=true) Hypothesis derandomizes: the same examples every run, so a
landing is never decided by the luck of a draw. Local runs keep exploring new
random examples, which is where new bugs are found.
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
