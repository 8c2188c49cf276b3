"""Ops that make values from nothing or reshape them by copying: index sequences, triangular masks,
counter-based random numbers, padded expansion and broadcast clones.

    idx = pl.arange(0, [1, 64])                       # tensor.ci → tile.ci (pto.tci)
    m = pl.tri(0, [64, 64], dtype=pl.FP32)            # tile.tri: 1 on and below the diagonal
    r = pl.random(1, 2, 0, 0, 0, 0, [16, 64])         # tensor.random → tile.random (pto.trandom)
    w = pl.fillpad_expand(t, [64, 64])                # t's valid region top-left, pad elsewhere
    c = pl.expand_clone(row, target)                  # row broadcast to target's shape (GM)
"""

from __future__ import annotations

from pypto.errors import TypeCheckError
from pypto.ir.dtypes import INT16, INT32, UINT32, DataType
from pypto.ir.enums import MemorySpace, PadValue
from pypto.ir.expr import as_int
from pypto.ir.ops.common import expect_scalar, expect_shaped, expect_tensor, expect_tuple, fmt_shape, result_like
from pypto.ir.ops.registry import READ, SHARED, VECTOR, Kwarg, OpDef, register_op
from pypto.ir.types import TensorType, TileType


def _static_shape(name: str, arg: str, e) -> tuple:
    shape = expect_tuple(name, arg, e)
    if any(as_int(d) is None for d in shape):
        raise TypeCheckError(f"{name}: argument '{arg}' must be static, got {fmt_shape(shape)}")
    return shape


# ---------------------------------------------------------------------------- tensor.ci (pl.arange)
def _tensor_ci_type(args, kw):
    shape = _static_shape("tensor.ci", "shape", args[1])
    if kw["dtype"] not in (INT16, INT32):
        raise TypeCheckError(f"tensor.ci: dtype must be INT16 or INT32, got {kw['dtype'].name}")
    if any(as_int(d) != 1 for d in shape[:-1]):
        raise TypeCheckError(f"tensor.ci: shape must have leading dims 1 (e.g. [1, N]), got {fmt_shape(shape)}",
                             hint="the instruction fills one row; broadcast it with pl.col_expand")
    expect_scalar("tensor.ci", "start", args[0])
    return TensorType(shape, kw["dtype"])


register_op(OpDef("tensor.ci", args=("start", "shape"),
                  kwargs={"dtype": Kwarg(DataType, INT32), "descending": Kwarg(bool, False)},
                  deduce=_tensor_ci_type, affinity=VECTOR, lowers_to="tile.ci",
                  description="an integer sequence in one row: t[0, k] = start ± k"))


# ---------------------------------------------------------------------------- tile.tri
def _tri_type(args, kw):
    expect_scalar("tile.tri", "diagonal", args[0])
    shape = _static_shape("tile.tri", "shape", args[1])
    if len(shape) != 2:
        raise TypeCheckError(f"tile.tri: shape must be 2-D, got {fmt_shape(shape)}")
    tt = TileType(shape, kw["dtype"], memory_space=MemorySpace.Vec)
    if len(args) > 2:
        valid = expect_tuple("tile.tri", "valid_shape", args[2])
        if len(valid) != 2:
            raise TypeCheckError(f"tile.tri: valid_shape must be 2-D, got {fmt_shape(valid)}")
        tt = tt.with_valid_shape(valid)
    return tt


# upper=False: 1 where col <= row + diagonal; upper=True: 1 where col >= row + diagonal; 0 elsewhere.
register_op(OpDef("tile.tri", args=("diagonal", "shape", "valid_shape"), min_args=2,
                  kwargs={"dtype": Kwarg(DataType, INT32), "upper": Kwarg(bool, False)},
                  deduce=_tri_type, affinity=VECTOR, output_memory=MemorySpace.Vec,
                  description="a lower / upper triangular 0-1 mask over the valid region (pto.ttri)"))


# ---------------------------------------------------------------------------- random
_SEEDS = ("key0", "key1", "counter0", "counter1", "counter2", "counter3")


def _random_type(name: str):
    def deduce(args, kw):
        for arg, e in zip(_SEEDS, args[:6]):
            expect_scalar(name, arg, e)
        shape = _static_shape(name, "shape", args[6])
        if kw["dtype"] not in (INT32, UINT32):
            raise TypeCheckError(f"{name}: dtype must be INT32 or UINT32, got {kw['dtype'].name}")
        if kw["rounds"] not in (7, 10):
            raise TypeCheckError(f"{name}: rounds must be 7 or 10, got {kw['rounds']}")
        if name.startswith("tensor."):
            return TensorType(shape, kw["dtype"])
        tt = TileType(shape, kw["dtype"], memory_space=MemorySpace.Vec)
        return tt.with_valid_shape(expect_tuple(name, "valid_shape", args[7])) if len(args) > 7 else tt
    return deduce


_RANDOM_KW = {"dtype": Kwarg(DataType, UINT32), "rounds": Kwarg(int, 10)}
register_op(OpDef("tile.random", args=_SEEDS + ("shape", "valid_shape"), min_args=7, kwargs=dict(_RANDOM_KW),
                  deduce=_random_type("tile.random"), affinity=VECTOR, output_memory=MemorySpace.Vec,
                  description="counter-based (Philox-4x32) random words over the valid region (pto.trandom)"))
register_op(OpDef("tensor.random", args=_SEEDS + ("shape",), kwargs=dict(_RANDOM_KW),
                  deduce=_random_type("tensor.random"), affinity=VECTOR, lowers_to="tile.random",
                  description="counter-based (Philox-4x32) random words"))


# ---------------------------------------------------------------------------- fillpad_expand
def _fillpad_expand_type(name: str):
    def deduce(args, kw):
        src = expect_shaped(name, "x", args[0])
        shape = _static_shape(name, "shape", args[1])
        dims = [as_int(d) for d in src.shape]
        if len(shape) != src.rank or any(d is not None and as_int(s) < d for s, d in zip(shape, dims)):
            raise TypeCheckError(f"{name}: shape {fmt_shape(shape)} must have x's rank and be at least x's shape "
                                 f"{fmt_shape(src.shape)}")
        if isinstance(src, TileType):
            return TileType(shape, src.dtype, memory_space=src.memory_space)
        return TensorType(shape, src.dtype)
    return deduce


register_op(OpDef("tile.fillpad_expand", args=("x", "shape"), kwargs={"pad_value": Kwarg(PadValue, PadValue.zero)},
                  deduce=_fillpad_expand_type("tile.fillpad_expand"), affinity=VECTOR, output_memory="inherit",
                  input_memory={0: (MemorySpace.Vec,)}, effects={0: READ},
                  description="x's valid region copied top-left into a larger tile, pad_value elsewhere"))
register_op(OpDef("tensor.fillpad_expand", args=("x", "shape"), kwargs={"pad_value": Kwarg(PadValue, PadValue.zero)},
                  deduce=_fillpad_expand_type("tensor.fillpad_expand"), affinity=VECTOR,
                  lowers_to="tile.fillpad_expand", description="x copied top-left into a larger tensor, padded"))


# ---------------------------------------------------------------------------- expand_clone
def _expand_clone_type(args, kw):
    src = expect_tensor("tensor.expand_clone", "src", args[0])
    target = expect_tensor("tensor.expand_clone", "target", args[1])
    if src.rank != target.rank:
        raise TypeCheckError(f"tensor.expand_clone: src {fmt_shape(src.shape)} and target {fmt_shape(target.shape)} "
                             "need the same rank")
    for d, (s, t) in enumerate(zip(src.shape, target.shape)):
        s, t = as_int(s), as_int(t)
        if s is not None and t is not None and s not in (1, t):
            raise TypeCheckError(f"tensor.expand_clone: dim {d} of src is {s}; it must be 1 or target's {t}",
                                 hint="only extent-1 dims broadcast")
    return TensorType(target.shape, src.dtype)


register_op(OpDef("tensor.expand_clone", args=("src", "target"), deduce=_expand_clone_type, affinity=SHARED,
                  effects={0: READ}, description="a fresh tensor of target's shape holding src broadcast over it"))


# ---------------------------------------------------------------------------- dependency / dump markers
def _same_tensor(name: str):
    def deduce(args, kw):
        return result_like(expect_tensor(name, "tensor", args[0]))
    return deduce


# Orchestration marker: the value is the tensor itself; the runtime leaves this argument out of dependency
# tracking. (pl.dump_tag is no op: the parser turns it into the dump_vars attr of later kernel calls.)
register_op(OpDef("tensor.no_dep", args=("tensor",), deduce=_same_tensor("tensor.no_dep"), affinity=SHARED,
                  effects={0: READ}, description="the same tensor, excluded from this task's dependency tracking"))
