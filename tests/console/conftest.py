"""The console's fixtures: a real `referee serve` per test (tests/console/serving.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest
from serving import SAMPLE, TOKEN, serve


@dataclass(frozen=True)
class Served:
    url: str
    token: str
    run_dir: Path


@pytest.fixture
def console_server(tmp_path: Path) -> Iterator[Served]:
    """starcluster/play_line_foul with its session, served from the start of its video."""
    out = tmp_path / "run"
    with serve(out, str(SAMPLE / "video.mp4"), "--game", "starcluster", "--session", str(SAMPLE / "truth.json"),
               "--token", TOKEN) as console:
        yield Served(console.url, TOKEN, out)
