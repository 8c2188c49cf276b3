"""What the reference programs written by numpy_codegen / torch_codegen call at run time.

A generated program is plain Python (one function per IR function, its statements in order); each
op is `_rt.op("tile.add", <result spec>, *args, **kwargs)`, applied by `reference_run.apply_op`,
i.e. with the simulator's own op semantics (SIM_OPS, built from the OpDef numpy functions), so a
generated program and `run_reference` can never disagree about what an op means. This module adds
only what the generated text needs around that: result specs from literals, the current block /
lane, a Group's members side by side, and tensor conversion at function boundaries (torch tensors
in and out for the torch variant; the arithmetic stays numpy, sharing the tensors' memory).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np

from pypto.debug.reference_run import Interpreter, NotRunnable, ResultSpec, _Ctx, apply_op
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace


class _DataTypes:
    """`DT.FP32` in generated text: the DataType of that name."""

    def __getattr__(self, name):
        return DataType.from_name(name)


DT = _DataTypes()


class ReferenceRuntime:
    NONE = ResultSpec(None)

    def __init__(self, platform: str = "a2a3", tensors: str = "numpy"):
        self.interp = Interpreter(None, platform)
        self.platform = self.interp.platform
        self.torch = tensors == "torch"
        self._local = threading.local()

    # ------------------------------------------------------------------ result specs
    @staticmethod
    def tile(shape, dtype: str, valid=None, space: str = None) -> ResultSpec:
        shape = None if shape is None else tuple(int(d) for d in shape)
        return ResultSpec("tile", shape, DataType.from_name(dtype), tuple(valid) if valid else shape,
                          MemorySpace[space] if space else None)

    @staticmethod
    def tensor(shape, dtype: str) -> ResultSpec:
        return ResultSpec("tensor", None if shape is None else tuple(int(d) for d in shape), DataType.from_name(dtype))

    # ------------------------------------------------------------------ ops
    @property
    def ctx(self):
        ctx = getattr(self._local, "ctx", None)
        if ctx is None:
            ctx = self._local.ctx = _Ctx(self.platform)
        return ctx

    def op(self, name: str, spec: ResultSpec, /, *args, **kwargs):
        args = [self.array(a) for a in args]
        with np.errstate(all="ignore"):
            return apply_op(self.interp, name, spec, args, kwargs, self.ctx)

    # ------------------------------------------------------------------ where a kernel runs
    def _with_ctx(self, ctx, fn, *args):
        saved = getattr(self._local, "ctx", None)
        self._local.ctx = ctx
        try:
            return fn(*args)
        finally:
            self._local.ctx = saved

    def each_block(self, n: int, body, *args):
        """An Spmd function: its body once per block, in block order (the last block's result)."""
        result = None
        for b in range(int(n)):
            result = self._with_ctx(_Ctx(self.platform, b, int(n)), body, *args)
        return result

    def blocks(self, n: int):
        """A pl.spmd scope's blocks: the loop body runs with each block index in turn."""
        saved = getattr(self._local, "ctx", None)
        try:
            for b in range(int(n)):
                self._local.ctx = _Ctx(self.platform, b, int(n))
                yield b
        finally:
            self._local.ctx = saved

    def each_lane(self, body, *args):
        """A vector kernel split into two lanes: lane 0, then lane 1 (the last lane's result)."""
        c = self.ctx
        result = None
        for lane in range(2):
            result = self._with_ctx(_Ctx(self.platform, c.block_idx, c.block_num, lane, 2), body, *args)
        return result

    @contextmanager
    def group(self):
        """A Group launch: its cross-core pipes start empty and are dropped afterwards."""
        saved = self.interp.pipes
        self.interp.pipes = {}
        try:
            yield
        finally:
            self.interp.pipes = saved

    def side_by_side(self, *members):
        """Group members with pipes both ways, each in its own thread (a pop waits for its push);
        their results in order."""
        parent = self.ctx
        return self.interp.side_by_side([lambda m=m: self._with_ctx(parent, m) for m in members])

    # ------------------------------------------------------------------ tensors in and out
    def array(self, value):
        """A numpy view of a torch tensor (bfloat16 through its bits); anything else unchanged."""
        if type(value).__module__.startswith("torch"):
            import torch
            if value.dtype == torch.bfloat16:
                import ml_dtypes
                return value.detach().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
            return value.detach().numpy()
        return value

    def enter(self, *args):
        """A function's arguments as numpy arrays (torch tensors by view: writes reach the caller's tensor)."""
        return tuple(self.array(a) for a in args)

    def leave(self, value):
        """A function's result: torch tensors for the torch variant, numpy arrays otherwise."""
        if not self.torch:
            return value
        if isinstance(value, tuple):
            return tuple(self.leave(v) for v in value)
        if isinstance(value, np.ndarray):
            import torch
            if value.dtype.name == "bfloat16":
                return torch.from_numpy(value.view(np.int16)).view(torch.bfloat16)
            return torch.from_numpy(value)
        return value

    # ------------------------------------------------------------------ running the file as a script
    def example_inputs(self, params, seed: int = 0):
        """Random inputs (zeros for outputs) of each (name, shape, dtype, is_output) parameter."""
        rng = np.random.default_rng(seed)
        out = []
        for name, shape, dtype, is_output in params:
            if shape is None:
                raise NotRunnable(f"parameter '{name}' has a dynamic shape: call the entry with your own inputs")
            if shape == "scalar":
                out.append(1)
                continue
            np_dtype = DataType.from_name(dtype).to_numpy()
            a = np.zeros(shape, np_dtype) if is_output else rng.uniform(-1, 1, shape).astype(np_dtype)
            out.append(self.leave(a))
        return out
