"""Helpers a runtime-bound SubWorker callback uses on the arguments it receives (the reference's import path).

    def inspect(args):
        f = _tensor_from_continuous(args[0])      # a torch tensor over the host memory (numpy without torch)
"""

from __future__ import annotations

import sys

import numpy as np


def _tensor_from_continuous(value):
    """A callback argument as a tensor over the same memory: torch when torch is loaded, else numpy."""
    if isinstance(value, np.ndarray) and "torch" in sys.modules:
        import warnings

        from pypto.interop import numpy_to_torch
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return numpy_to_torch(value)
    return value


tensor_from_continuous = _tensor_from_continuous
