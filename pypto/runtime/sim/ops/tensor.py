"""Numpy semantics of the tensor.* ops that survive to the final IR (orchestration-level GM ops).

GM tensors are numpy arrays; `out` is None for these ops. The tensor compute ops (tensor.add,
tensor.exp, ...) never reach the simulator: ConvertTensorToTileOps lowers them to tile ops
(listed in LOWERED_BEFORE_SIM so the coverage test knows).
"""

from __future__ import annotations

import numpy as np

from pypto.errors import SimulationError
from pypto.ir.enums import AtomicType
from pypto.ir.ops.registry import all_ops
from pypto.runtime.sim.ops.numeric import scalar_as
from pypto.runtime.sim.poison import poisoned


def create(ctx, out, shape, dtype=None, layout=None, **kwargs):
    return poisoned(shape, dtype.to_numpy())


def full(ctx, out, shape, dtype=None, value=0, **kwargs):
    np_dtype = dtype.to_numpy()
    return np.full(tuple(int(d) for d in shape), scalar_as(value, np_dtype)).astype(np_dtype)


def _check_index(t: np.ndarray, indices: tuple, what: str) -> tuple:
    idx = tuple(int(i) for i in indices)
    if len(idx) != t.ndim or any(not 0 <= i < n for i, n in zip(idx, t.shape)):
        raise SimulationError(f"{what}: index {list(idx)} is outside the tensor shape {list(t.shape)}")
    return idx


def slice_(ctx, out, x, shape, offset, valid_shape=None, drop_dims=(), **kwargs):
    """A view of the window (writes through it reach the parent tensor, as a GM sub-tensor does).

    A window that starts inside the tensor but runs past its end (`pl.slice(table, [64], [b * n + bn])`
    over a block table, of which the kernel reads only the first n_blocks) is a pointer and a shape on
    the device, legal as long as nothing touches the overhang: the view stops at the extent, so a
    read or load of the overhang is reported by that op, with its line. drop_dims: the unit axes the
    result leaves out."""
    for d, (o, n, ext) in enumerate(zip(offset, shape, x.shape)):
        if o < 0 or o > ext or n < 0:
            raise SimulationError(f"tensor.slice: dim {d} window [{o}, {o + n}) is outside the extent {ext}")
    drop = {int(d) for d in drop_dims or ()}     # a rank-reducing slice indexes its erased unit axes
    return x[tuple(int(o) if d in drop else slice(int(o), int(o) + int(n))
                   for d, (o, n) in enumerate(zip(offset, shape)))]


def assemble(ctx, out, target, source, offset, atomic=AtomicType.None_, **kwargs):
    region = tuple(slice(int(o), int(o) + int(n)) for o, n in zip(offset, source.shape))
    for d, (o, n, ext) in enumerate(zip(offset, source.shape, target.shape)):
        if o < 0 or o + n > ext:
            raise SimulationError(f"tensor.assemble: dim {d} window [{o}, {o + n}) is outside the extent {ext}")
    if atomic is AtomicType.Add:      # the host-side form of split-K accumulation
        target[region] = (target[region] + source).astype(target.dtype)
    else:
        target[region] = source.astype(target.dtype, copy=False)
    return target


def read(ctx, out, src, indices, **kwargs):
    return src[_check_index(src, indices, "tensor.read")].item()


def write(ctx, out, dst, indices, value, **kwargs):
    dst[_check_index(dst, indices, "tensor.write")] = scalar_as(value, dst.dtype)
    return dst


def dim(ctx, out, t, axis, **kwargs):
    return int(t.shape[int(axis)])


def table() -> dict:
    return {"tensor.create": create, "tensor.full": full, "tensor.slice": slice_, "tensor.assemble": assemble,
            "tensor.read": read, "tensor.write": write, "tensor.dim": dim}


def lowered_before_sim(sim_ops) -> frozenset:
    """tensor.* ops that ConvertTensorToTileOps always replaces by tile ops (those without semantics here)."""
    return frozenset(n for n in all_ops() if n.startswith("tensor.") and n not in sim_ops)
