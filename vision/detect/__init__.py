"""Ball detectors, picked by name (`--detector`).

Every backend implements `vision.types.Detector`: `detect(image, mask)` ->
`Detection`s in image pixels with a colour (a player id, or "unknown") and a
score, and a classmethod `learn(first_image, mapper, players, samples_mm, config,
colours)` that sets it up for one camera view and one game (`samples_mm`: board
points known to hold each player's balls on the first frame; `colours`: the
players' ball colours as given, by player). A backend may also have a static
`warm_up()`: its one-time set-up that needs no frame, which a session runs on a
thread of its own while it opens (`warm_up` here). A learned backend (an
ONNX model) plugs in by adding its class here.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any, Mapping, Sequence

import numpy as np

from calibration.geometry import Point
from rules.colours import BallColour
from rules.errors import InputError
from vision.config import PipelineConfig
from vision.detect.colour import ColourDetector
from vision.mapping import BoardMapper
from vision.types import Detector

DETECTORS: dict[str, Any] = {"color": ColourDetector}


def warm_up(name: str) -> Future[None]:
    """Start backend `name`'s `warm_up` on a thread of its own, so that it runs while the session opens, not on the
    first frame. Its learning waits for the returned future first (`result()`, which raises what the warm-up
    raised); none to run (an unknown name, which `make_detector` refuses): one already done."""
    done: Future[None] = Future()
    step = getattr(DETECTORS.get(name), "warm_up", None)
    if step is None:
        done.set_result(None)
        return done

    def run() -> None:
        try:
            step()
        except BaseException as error:  # handed to whoever waits for it
            done.set_exception(error)
        else:
            done.set_result(None)

    threading.Thread(target=run, name=f"warm up {name}", daemon=True).start()
    return done


def make_detector(name: str, first_image: np.ndarray, mapper: BoardMapper, players: Sequence[str],
                  samples_mm: Mapping[str, Sequence[Point]] | None = None,
                  config: PipelineConfig = PipelineConfig(),
                  colours: Mapping[str, BallColour] | None = None, balls_per_player: int | None = None) -> Detector:
    """Set up backend `name` for this view and these players (`colours`: the ones given, by player;
    `balls_per_player`: the most balls of one colour there can be)."""
    try:
        backend = DETECTORS[name]
    except KeyError:
        raise InputError(f"unknown detector {name!r}; use one of {', '.join(DETECTORS)}") from None
    return backend.learn(first_image, mapper, players, samples_mm, config, colours, balls_per_player)
