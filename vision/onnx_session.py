"""onnxruntime sessions, configured in one place.

On a 2-core machine an onnxruntime session left to its defaults spins up as
many threads as it likes, and two sessions at once fight over the cores; so
every session gets an explicit thread count and sequential execution.
"""

from __future__ import annotations

from pathlib import Path

import onnxruntime as ort
from onnxruntime.capi import onnxruntime_pybind11_state as ort_errors

from rules.errors import InputError

# What onnxruntime raises for a file that is not a loadable model.
LOAD_ERRORS = (ort_errors.InvalidProtobuf, ort_errors.InvalidGraph, ort_errors.NoModel, ort_errors.Fail,
               ort_errors.InvalidArgument)


def open_session(model: str | Path, threads: int = 1) -> ort.InferenceSession:
    """A CPU inference session for `model` using `threads` intra-op threads."""
    model = Path(model)
    if not model.exists():
        raise InputError(f"model file {model} is missing; build it with `make models` (see models/README.md)")
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    try:
        return ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
    except LOAD_ERRORS as error:
        raise InputError(f"model file {model} cannot be loaded ({error}); rebuild it with `make models`") from None
