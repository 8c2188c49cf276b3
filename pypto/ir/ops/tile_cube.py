"""Cube ops beyond matmul / matmul_acc / matmul_bias (tile.py): GEMV and batched matmul.

GEMV is a matmul whose M is 1, on the same cube MAD: lhs [1, K] in Left, rhs [K, N] in Right,
result in Acc (FP32, INT32 for INT8 inputs). The accumulator is one fractal row high: its physical
shape is [16, N] with valid_shape [1, N] (the cube writes whole 16-row boxes), as in the reference;
a gemv_acc accumulator must have that type, a gemv_bias bias exactly one valid row. `acc_phase`
tells the accumulator whether this step is a partial or the final contribution ("unspecified" by
default). Batched matmul multiplies [.., M, K] × [.., K, N] per leading index; FlattenTileNdTo2D
lowers it to 2-D matmuls.

    y = pl.tile.gemv(x_left, w_right)                 # Tile[[16, N], FP32, Acc, TileView(valid_shape=[1, N])]
    c = pl.tile.batch_matmul(a_left, b_right)         # Tile[[B, M, N], FP32, Acc]
"""

from __future__ import annotations

from pypto.errors import TypeCheckError
from pypto.ir.enums import MemorySpace
from pypto.ir.ops.common import dims_equal, expect_scalar, expect_tile, fmt_shape, same_dtype
from pypto.ir.dtypes import INDEX
from pypto.ir.expr import ConstInt, as_int
from pypto.ir.ops.registry import CUBE, READ, READWRITE, Kwarg, OpDef, register_op
from pypto.ir.ops.tile import _acc_tile, _product, accumulator_dtype
from pypto.ir.types import TileType

ACC_PHASES = ("unspecified", "partial", "final")
_LR = {0: (MemorySpace.Left,), 1: (MemorySpace.Right,)}


def _phase(name, kw):
    if kw["acc_phase"] not in ACC_PHASES:
        raise TypeCheckError(f"{name}: acc_phase must be one of {', '.join(ACC_PHASES)}, got {kw['acc_phase']!r}")


GEMV_ACC_ROWS = 16     # the physical rows of a GEMV accumulator: one fractal box row


def _gemv_result(name, lhs_arg, rhs_arg) -> TileType:
    """The Acc tile a GEMV of lhs [1, K] × rhs [K, N] writes: [16, N], valid [1, N]."""
    lhs = expect_tile(name, "lhs", lhs_arg)
    if lhs.rank == 2 and as_int(lhs.shape[0]) != 1:
        raise TypeCheckError(f"{name}: argument 'lhs' must be a row vector [1, K], got {fmt_shape(lhs.shape)}",
                             hint="use pl.matmul for M > 1")
    shape, valid, dtype = _product(name, lhs_arg, rhs_arg)
    return _acc_tile((ConstInt(GEMV_ACC_ROWS, INDEX), shape[1]), valid, dtype)


def _gemv_type(args, kw):
    _phase("tile.gemv", kw)
    return _gemv_result("tile.gemv", args[0], args[1])


def _gemv_acc_type(args, kw):
    _phase("tile.gemv_acc", kw)
    acc = expect_tile("tile.gemv_acc", "acc", args[0])
    want = _gemv_result("tile.gemv_acc", args[1], args[2])
    if acc.dtype is not want.dtype or not dims_equal(acc.shape, want.shape) \
            or not dims_equal(acc.valid_shape, want.valid_shape):
        raise TypeCheckError(f"tile.gemv_acc: argument 'acc' must be {want.dtype.name} {fmt_shape(want.shape)} with "
                             f"valid_shape {fmt_shape(want.valid_shape)} (a GEMV accumulator), got {acc.dtype.name} "
                             f"{fmt_shape(acc.shape)} valid {fmt_shape(acc.valid_shape)}",
                             hint="start the accumulation with pl.tile.gemv (or gemv_bias)")
    if len(args) > 3:
        expect_scalar("tile.gemv_acc", "init_cond", args[3])
    return want


def _gemv_bias_type(args, kw):
    _phase("tile.gemv_bias", kw)
    want = _gemv_result("tile.gemv_bias", args[0], args[1])
    bias = expect_tile("tile.gemv_bias", "bias", args[2])
    if not dims_equal(bias.shape, (ConstInt(1, INDEX), want.shape[1])):
        raise TypeCheckError(f"tile.gemv_bias: argument 'bias' must be [1, N] = {fmt_shape((1, want.shape[1]))}, "
                             f"got {fmt_shape(bias.shape)}")
    if bias.dtype is not want.dtype:
        raise TypeCheckError(f"tile.gemv_bias: argument 'bias' must be {want.dtype.name} like the accumulator, "
                             f"got {bias.dtype.name}")
    return want


_PHASE_KW = {"acc_phase": Kwarg(str, "unspecified")}
register_op(OpDef("tile.gemv", args=("lhs", "rhs"), kwargs=dict(_PHASE_KW), deduce=_gemv_type, affinity=CUBE,
                  output_memory=MemorySpace.Acc, input_memory=dict(_LR), effects={0: READ, 1: READ},
                  description="Left [1,K] × Right [K,N] → Acc [16,N] (valid [1,N])"))
register_op(OpDef("tile.gemv_acc", args=("acc", "lhs", "rhs", "init_cond"), min_args=3, kwargs=dict(_PHASE_KW),
                  deduce=_gemv_acc_type, affinity=CUBE, output_memory=MemorySpace.Acc,
                  input_memory={0: (MemorySpace.Acc,), 1: (MemorySpace.Left,), 2: (MemorySpace.Right,)},
                  effects={0: READWRITE, 1: READ, 2: READ}, reuses_input=0,
                  description="acc [16,N] (valid [1,N]) += lhs [1,K] × rhs [K,N] (in place); init_cond true restarts"))
register_op(OpDef("tile.gemv_bias", args=("lhs", "rhs", "bias"), kwargs=dict(_PHASE_KW), deduce=_gemv_bias_type,
                  affinity=CUBE, output_memory=MemorySpace.Acc,
                  input_memory={0: (MemorySpace.Left,), 1: (MemorySpace.Right,), 2: (MemorySpace.Bias,)},
                  effects={0: READ, 1: READ, 2: READ}, description="lhs [1,K] × rhs [K,N] + bias [1,N]"))


def matmul_batch_dims(name: str, a_shape, b_shape) -> list:
    """The batch dims of [..., M, K] x [..., K, N]: numpy matmul broadcasting of everything before the last
    two dims (a missing leading dim counts as 1, a static 1 stretches to the other side)."""
    a_batch, b_batch = list(a_shape[:-2]), list(b_shape[:-2])
    rank = max(len(a_batch), len(b_batch))
    one = ConstInt(1, INDEX)
    a_batch = [one] * (rank - len(a_batch)) + a_batch
    b_batch = [one] * (rank - len(b_batch)) + b_batch
    out = []
    for x, y in zip(a_batch, b_batch):
        xs, ys = as_int(x), as_int(y)
        if xs == 1 and ys != 1:
            out.append(y)
        elif ys == 1 or xs == ys or xs is None or ys is None:
            out.append(x)
        else:
            raise TypeCheckError(f"{name}: batch dims of {fmt_shape(a_shape)} and {fmt_shape(b_shape)} do not "
                                 "broadcast", hint="make one side's batch dim 1, or slice both to one batch shape")
    return out


def _batch(name, lhs_arg, rhs_arg):
    a = expect_tile(name, "lhs", lhs_arg)
    b = expect_tile(name, "rhs", rhs_arg)
    if a.rank < 2 or b.rank < 2 or max(a.rank, b.rank) < 3:
        raise TypeCheckError(f"{name}: needs [..., M, K] x [..., K, N] with a batch dim on at least one side, got "
                             f"{fmt_shape(a.shape)} and {fmt_shape(b.shape)}", hint="use pl.matmul for 2-D tiles")
    same_dtype(name, a.dtype, b.dtype, "arguments 'lhs' and 'rhs'")
    if not dims_equal((a.shape[-1],), (b.shape[-2],)):
        raise TypeCheckError(f"{name}: {fmt_shape(a.shape)} x {fmt_shape(b.shape)}: lhs K must equal rhs K")
    # Mat is accepted too, as for tile.matmul: ConvertTensorToTileOps hands the cube its operands in Mat
    for arg, t, space in (("lhs", a, MemorySpace.Left), ("rhs", b, MemorySpace.Right)):
        if t.memory_space is not None and t.memory_space not in (space, MemorySpace.Mat):
            raise TypeCheckError(f"{name}: argument '{arg}' must be in {space.name} (or Mat), got "
                                 f"{t.memory_space.name}")
    shape = (*matmul_batch_dims(name, a.shape, b.shape), a.shape[-2], b.shape[-1])
    return TileType(shape, accumulator_dtype(a.dtype), memory_space=MemorySpace.Acc)


def _batch_type(args, kw):
    return _batch("tile.batch_matmul", args[0], args[1])


def _batch_acc_type(args, kw):
    acc = expect_tile("tile.batch_matmul_acc", "acc", args[0])
    t = _batch("tile.batch_matmul_acc", args[1], args[2])
    if acc.dtype is not t.dtype or not dims_equal(acc.shape, t.shape):
        raise TypeCheckError(f"tile.batch_matmul_acc: argument 'acc' must be {t.dtype.name} {fmt_shape(t.shape)}")
    return TileType(acc.shape, acc.dtype, memory_space=MemorySpace.Acc)


register_op(OpDef("tile.batch_matmul", args=("lhs", "rhs"), deduce=_batch_type, affinity=CUBE,
                  output_memory=MemorySpace.Acc, input_memory=dict(_LR), effects={0: READ, 1: READ},
                  description="[..., M, K] × [..., K, N] → [..., M, N] per batch index"))
register_op(OpDef("tile.batch_matmul_acc", args=("acc", "lhs", "rhs"), deduce=_batch_acc_type, affinity=CUBE,
                  output_memory=MemorySpace.Acc,
                  input_memory={0: (MemorySpace.Acc,), 1: (MemorySpace.Left,), 2: (MemorySpace.Right,)},
                  effects={0: READWRITE, 1: READ, 2: READ}, reuses_input=0,
                  description="acc += lhs × rhs per batch index (in place)"))
