"""Torch / numpy interop: the one place that knows a torch CPU tensor is a numpy array in disguise.

A leaf module (numpy and pypto.errors only) so the language layer and the runtime can both use
it without importing each other. torch is never imported unless the caller already did
(`sys.modules`), so `import pypto` stays torch-free.

    arr = as_array(x, "parameter 'a'")        # numpy as is; a torch CPU tensor as a view of its memory
    spec = array_spec(x)                      # (shape, numpy dtype) of an array argument, else None
"""

from __future__ import annotations

import sys
from typing import Optional

import numpy as np

from pypto.errors import TypeCheckError


def is_torch_tensor(x) -> bool:
    t = sys.modules.get("torch")
    return t is not None and isinstance(x, t.Tensor)


def torch_as_numpy(x) -> np.ndarray:
    """A numpy view sharing the CPU tensor's memory (bfloat16 / fp8 through a same-width integer view)."""
    if x.device.type != "cpu":
        raise TypeCheckError(f"torch tensor on device {x.device} given to the simulator; pass a CPU tensor")
    x = x.detach()
    special = _torch_special_dtypes()
    if x.dtype in special:
        np_dtype, int_dtype = special[x.dtype]
        return x.view(int_dtype).numpy().view(np_dtype)
    return x.numpy()


def numpy_to_torch(arr: np.ndarray):
    import torch
    import ml_dtypes
    if arr.dtype == np.dtype(ml_dtypes.bfloat16):
        return torch.from_numpy(np.ascontiguousarray(arr).view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(arr))


def _torch_special_dtypes() -> dict:
    import torch
    import ml_dtypes
    table = {torch.bfloat16: (np.dtype(ml_dtypes.bfloat16), torch.int16)}
    for tname, mname in (("float8_e4m3fn", "float8_e4m3fn"), ("float8_e5m2", "float8_e5m2"),
                         ("float8_e8m0fnu", "float8_e8m0fnu")):
        if hasattr(torch, tname) and hasattr(ml_dtypes, mname):
            table[getattr(torch, tname)] = (np.dtype(getattr(ml_dtypes, mname)), torch.uint8)
    return table


def as_numpy(x) -> Optional[np.ndarray]:
    """The numpy array behind an array argument (numpy as is, torch CPU as a view); None for anything else."""
    if isinstance(x, np.ndarray):
        return x
    if is_torch_tensor(x):
        return torch_as_numpy(x)
    return None


def as_array(x, what: str) -> np.ndarray:
    arr = as_numpy(x)
    if arr is None:
        raise TypeCheckError(f"{what} must be a numpy array (or a torch CPU tensor), got {type(x).__name__}")
    return arr


def numpy_dtype_of(dtype) -> np.dtype:
    """A numpy dtype for a numpy dtype-like or a torch dtype (`torch.float32`, `torch.bfloat16`, ...)."""
    t = sys.modules.get("torch")
    if t is not None and isinstance(dtype, t.dtype):
        special = _torch_special_dtypes()
        if dtype in special:
            return special[dtype][0]
        return t.empty((), dtype=dtype).numpy().dtype
    return np.dtype(dtype)
