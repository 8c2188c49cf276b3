"""TensorSpec: a named tensor argument described by shape, dtype and how to fill it (the reference's harness type).

    spec = TensorSpec("query", [32, 128], torch.bfloat16, init_value=torch.randn)
    out = TensorSpec("out", [32, 128], torch.float32, is_output=True)      # zeros
    q = spec.create_tensor()

`init_value`: None (zeros), a number (every element), an array / tensor (converted to the dtype),
torch's randn / rand / zeros / ones (called with the shape and dtype), or any other callable taking
no arguments and returning the values. A torch dtype gives a torch tensor; a numpy or pl dtype gives
a numpy array (torch stays optional).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pypto.errors import TypeCheckError


def _torch_module_for(dtype):
    t = sys.modules.get("torch")
    return t if t is not None and isinstance(dtype, t.dtype) else None


@dataclass
class TensorSpec:
    name: str
    shape: list
    dtype: Any
    init_value: Any = field(default=None)
    is_output: bool = False

    def create_tensor(self):
        """A fresh tensor of this spec's shape and dtype, filled as `init_value` says."""
        torch = _torch_module_for(self.dtype)
        shape = [int(d) for d in self.shape]
        return self._torch(torch, shape) if torch is not None else self._numpy(shape)

    def _torch(self, torch, shape):
        init = self.init_value
        if init is None:
            return torch.zeros(shape, dtype=self.dtype)
        if isinstance(init, (bool, int, float)):
            return torch.full(shape, init, dtype=self.dtype)
        if isinstance(init, torch.Tensor):
            return init.to(dtype=self.dtype)
        if isinstance(init, np.ndarray):
            return torch.as_tensor(init).to(dtype=self.dtype)
        if init in (torch.randn, torch.rand, torch.zeros, torch.ones):
            return init(shape, dtype=self.dtype)
        if callable(init):
            return torch.as_tensor(init()).to(dtype=self.dtype)
        raise TypeCheckError(f"TensorSpec '{self.name}': init_value of type {type(init).__name__} is not supported",
                             hint="use None, a number, a tensor, torch.randn / rand / zeros / ones, or a callable")

    def _numpy(self, shape):
        from pypto.ir.dtypes import DataType
        dtype = self.dtype.to_numpy() if isinstance(self.dtype, DataType) else np.dtype(self.dtype)
        init = self.init_value
        if init is None:
            return np.zeros(shape, dtype)
        if isinstance(init, (bool, int, float)):
            return np.full(shape, init, dtype)
        if callable(init):
            init = init()
        from pypto.interop import as_numpy
        arr = as_numpy(init)
        values = arr if arr is not None else np.asarray(init)
        return np.ascontiguousarray(values.astype(dtype)).reshape(shape)
