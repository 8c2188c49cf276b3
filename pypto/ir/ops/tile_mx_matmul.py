"""MX (microscaling) matmul on the cube, a5 only: FP8 operands, one E8M0 exponent per 32 along K.

    c = pl.tile.matmul_mx(a_left, a_scale, b_right, b_scale)      # Tile[[M, N], FP32, Acc]

  lhs       [M, K]      FP8 (E4M3FN / E5M2) in Left
  lhs_scale [M, K/32]   FP8E8M0 in LeftScale   (A side: row/row, groups along K per row)
  rhs       [K, N]      FP8 in Right
  rhs_scale [K/32, N]   FP8E8M0 in RightScale  (B side: col/col, groups along K per column)
  c[m, n] = Σ_k (lhs[m, k] · 2^(lhs_scale[m, k/32] - 127)) · (rhs[k, n] · 2^(rhs_scale[k/32, n] - 127))

The scales reach LeftScale / RightScale from Mat (`pl.move(s_mat, target_memory=pl.Mem.LeftScale)`);
a2a3 has neither space, so its data-path check rejects the moves. `_acc` accumulates in place,
`_bias` adds a [1, N] FP32 Bias row. The pair of pl.tile.tquant_mx outputs feeds these ops.
"""

from __future__ import annotations

from pypto.errors import TypeCheckError
from pypto.ir.dtypes import FP8E4M3FN, FP8E5M2, FP8E8M0, FP32, INDEX
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import ConstInt
from pypto.ir.ops.common import dims_equal, expect_tile, fmt_shape, same_shape
from pypto.ir.ops.registry import CUBE, READ, READWRITE, OpDef, register_op
from pypto.ir.types import TileType, static_dims

MX_GROUP = 32
DATA_DTYPES = (FP8E4M3FN, FP8E5M2)


def _operand(name: str, arg_name: str, arg, space: MemorySpace, dtypes) -> TileType:
    t = expect_tile(name, arg_name, arg)
    if t.rank != 2:
        raise TypeCheckError(f"{name}: argument '{arg_name}' must be a 2-D tile, got {fmt_shape(t.shape)}")
    if t.dtype not in dtypes:
        raise TypeCheckError(f"{name}: argument '{arg_name}' must be {' or '.join(d.name for d in dtypes)}, "
                             f"got {t.dtype.name}", hint="pl.tile.tquant_mx produces the FP8 data and E8M0 scales")
    if t.memory_space is not None and t.memory_space is not space:
        raise TypeCheckError(f"{name}: argument '{arg_name}' must be in {space.name}, got {t.memory_space.name}",
                             hint=f"pl.move(x, target_memory=pl.Mem.{space.name}) first")
    return t


def _mx_product(name: str, args) -> tuple:
    """(shape, valid, FP32) of lhs [M, K] × rhs [K, N] with their scale tiles checked."""
    lhs = _operand(name, "lhs", args[0], MemorySpace.Left, DATA_DTYPES)
    lhs_scale = _operand(name, "lhs_scale", args[1], MemorySpace.LeftScale, (FP8E8M0,))
    rhs = _operand(name, "rhs", args[2], MemorySpace.Right, DATA_DTYPES)
    rhs_scale = _operand(name, "rhs_scale", args[3], MemorySpace.RightScale, (FP8E8M0,))
    if not dims_equal((lhs.shape[1],), (rhs.shape[0],)):
        raise TypeCheckError(f"{name}: inner dimensions differ: lhs {fmt_shape(lhs.shape)} × rhs "
                             f"{fmt_shape(rhs.shape)}", hint="lhs is [M, K] and rhs is [K, N]")
    k = (static_dims(lhs.shape) or (None, None))[1]
    if k is None or k % MX_GROUP:
        raise TypeCheckError(f"{name}: K = {fmt_shape(lhs.shape[1:])} must be a static multiple of {MX_GROUP} "
                             "(one scale per 32 elements along K)")
    groups = ConstInt(k // MX_GROUP, INDEX)
    for arg_name, scale, want in (("lhs_scale", lhs_scale, (lhs.shape[0], groups)),
                                  ("rhs_scale", rhs_scale, (groups, rhs.shape[1]))):
        if not dims_equal(scale.shape, want):
            raise TypeCheckError(f"{name}: argument '{arg_name}' must be {fmt_shape(want)} (one exponent per 32 "
                                 f"elements of K), got {fmt_shape(scale.shape)}")
    return (lhs.shape[0], rhs.shape[1]), (lhs.valid_shape[0], rhs.valid_shape[1])


def _acc(shape, valid) -> TileType:
    return TileType(shape, FP32, memory_space=MemorySpace.Acc).with_valid_shape(valid)


def _matmul_mx_type(args, kw):
    return _acc(*_mx_product("tile.matmul_mx", args))


def _matmul_mx_acc_type(args, kw):
    acc = expect_tile("tile.matmul_mx_acc", "acc", args[0])
    shape, valid = _mx_product("tile.matmul_mx_acc", args[1:])
    if acc.dtype is not FP32:
        raise TypeCheckError(f"tile.matmul_mx_acc: argument 'acc' must be FP32, got {acc.dtype.name}")
    same_shape("tile.matmul_mx_acc", acc.shape, shape, "acc and the product")
    return _acc(shape, valid)


def _matmul_mx_bias_type(args, kw):
    shape, valid = _mx_product("tile.matmul_mx_bias", args[:4])
    bias = expect_tile("tile.matmul_mx_bias", "bias", args[4])
    if not dims_equal(bias.shape, (ConstInt(1, INDEX), shape[1])):
        raise TypeCheckError(f"tile.matmul_mx_bias: argument 'bias' must be [1, N] = {fmt_shape((1, shape[1]))}, "
                             f"got {fmt_shape(bias.shape)}")
    return _acc(shape, valid)


_IN = {0: (MemorySpace.Left,), 1: (MemorySpace.LeftScale,), 2: (MemorySpace.Right,), 3: (MemorySpace.RightScale,)}
_READS = {i: READ for i in range(4)}
register_op(OpDef("tile.matmul_mx", args=("lhs", "lhs_scale", "rhs", "rhs_scale"), deduce=_matmul_mx_type,
                  affinity=CUBE, output_memory=MemorySpace.Acc, input_memory=dict(_IN), effects=dict(_READS),
                  description="MX: (lhs · 2^lhs_scale) × (rhs · 2^rhs_scale) → Acc FP32 (a5)"))
register_op(OpDef("tile.matmul_mx_acc", args=("acc", "lhs", "lhs_scale", "rhs", "rhs_scale"),
                  deduce=_matmul_mx_acc_type, affinity=CUBE, output_memory=MemorySpace.Acc,
                  input_memory={0: (MemorySpace.Acc,), **{i + 1: s for i, s in _IN.items()}},
                  effects={0: READWRITE, **{i + 1: READ for i in range(4)}}, reuses_input=0,
                  description="MX: acc += (lhs · 2^lhs_scale) × (rhs · 2^rhs_scale), in place (a5)"))
register_op(OpDef("tile.matmul_mx_bias", args=("lhs", "lhs_scale", "rhs", "rhs_scale", "bias"),
                  deduce=_matmul_mx_bias_type, affinity=CUBE, output_memory=MemorySpace.Acc,
                  input_memory={**_IN, 4: (MemorySpace.Bias,)}, effects={**_READS, 4: READ},
                  description="MX matmul + bias [1, N] broadcast (a5)"))
