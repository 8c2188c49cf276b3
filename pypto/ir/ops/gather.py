"""Gather / scatter ops and the AIV-split boundary ops, tensor and tile forms (seed 003's special lowerings).

Tensor forms are what kernels write; ConvertTensorToTileOps lowers them:
    tensor.scatter_update(input, dim, index, src)  → ci / col_expand / muls / row_expand_add / scatter / cmps / sel
    tensor.paged_gather(src, indices, block_table) → a scalar per-row loop of tile.gather_row into one accumulator
    tensor.create_l1(shape) / tensor.gather_row(acc, src, ...) → tile.create(Mat) / tile.gather_row (1:1)
    tensor.aiv_shard(x) / tensor.aic_gather(x)     → tile.aiv_shard / tile.aic_gather (1:1)

    acc = create_op_call("tensor.create_l1", [[128, 64]], {"dtype": BF16})
"""

from __future__ import annotations

from pypto.errors import TypeCheckError
from pypto.ir.dtypes import INT16, INT32, DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import ConstInt, as_int
from pypto.ir.ops.common import (dims_equal, expect_const_int, expect_shaped, expect_tensor, expect_tile, expect_tuple,
                                 fmt_shape, result_like, same_dtype)
from pypto.ir.ops.registry import CUBE, MIXED, READ, READWRITE, VECTOR, Kwarg, OpDef, register_op
from pypto.ir.types import TensorType, TileType

_INDEX_DTYPES = (INT16, INT32)


# ---------------------------------------------------------------------------- tile.ci / tile.scatter
def _ci_type(args, kw):
    shape = expect_tuple("tile.ci", "shape", args[1])
    if kw["dtype"] not in _INDEX_DTYPES:
        raise TypeCheckError(f"tile.ci: dtype must be INT16 or INT32, got {kw['dtype'].name}")
    dims = [as_int(d) for d in shape]
    if any(d is None for d in dims) or any(d != 1 for d in dims[:-1]):
        raise TypeCheckError(f"tile.ci: shape must be static with leading dims 1 (e.g. [1, N]), got {fmt_shape(shape)}",
                             hint="the instruction fills one row; broadcast it with pl.col_expand")
    return TileType(shape, kw["dtype"], memory_space=MemorySpace.Vec)


register_op(OpDef("tile.ci", args=("start", "shape"),
                  kwargs={"dtype": Kwarg(DataType, INT32), "descending": Kwarg(bool, False)},
                  deduce=_ci_type, affinity=VECTOR, output_memory=MemorySpace.Vec,
                  description="an integer sequence in one row: dst[0, k] = start ± k (pto.tci)"))


def _scatter_type(args, kw):
    dst = expect_tile("tile.scatter", "dst", args[0])
    src = expect_tile("tile.scatter", "src", args[1])
    idx = expect_tile("tile.scatter", "indexes", args[2])
    same_dtype("tile.scatter", dst.dtype, src.dtype, "dst and src")
    if idx.dtype not in _INDEX_DTYPES:
        raise TypeCheckError(f"tile.scatter: argument 'indexes' must be INT16 or INT32, got {idx.dtype.name}")
    if not dims_equal(idx.shape, src.shape):
        raise TypeCheckError(f"tile.scatter: indexes {fmt_shape(idx.shape)} must have src's shape {fmt_shape(src.shape)}",
                             hint="one flat destination index per source element")
    return result_like(dst)


register_op(OpDef("tile.scatter", args=("dst", "src", "indexes"), deduce=_scatter_type, affinity=VECTOR,
                  output_memory="inherit", input_memory={i: (MemorySpace.Vec,) for i in range(3)},
                  effects={0: READWRITE, 1: READ, 2: READ}, reuses_input=0,
                  description="dst.flat[indexes[i, j]] = src[i, j] (pto.tscatter, index form)"))


# ---------------------------------------------------------------------------- scatter_update
def _scatter_update_rule(name: str):
    """Whole-row update input[index.flat[k], :] = src[k, :] (dim = -2 only; 2-D operands)."""
    def deduce(args, kw):
        inp = expect_shaped(name, "input", args[0])
        dim = expect_const_int(name, "dim", args[1])
        idx = expect_shaped(name, "index", args[2])
        src = expect_shaped(name, "src", args[3])
        if dim not in (-2, inp.rank - 2):
            raise TypeCheckError(f"{name}: only dim=-2 (whole-row update) is supported, got dim={dim}")
        if inp.rank not in (2, 4) or src.rank != inp.rank:
            raise TypeCheckError(f"{name}: input and src must be 2-D (or 4-D [blocks, block_size, 1, d] caches), "
                                 f"got ranks {inp.rank} and {src.rank}",
                                 hint="reshape the cache to [rows, d] first")
        same_dtype(name, inp.dtype, src.dtype, "input and src")
        if idx.rank != 2 or idx.dtype not in _INDEX_DTYPES:
            raise TypeCheckError(f"{name}: index must be a 2-D INT32 (or INT16) [b, s] tensor, got "
                                 f"{fmt_shape(idx.shape)} {idx.dtype.name}")
        if inp.rank == 4:   # the paged-cache form type-checks; ConvertTensorToTileOps lowers only 2-D
            if not dims_equal(inp.shape[2:], src.shape[2:]):
                raise TypeCheckError(f"{name}: src {fmt_shape(src.shape)} must end like input {fmt_shape(inp.shape)}")
            return result_like(inp, keep_view=False)
        if not dims_equal(inp.shape[1:], src.shape[1:]):
            raise TypeCheckError(f"{name}: src rows {fmt_shape(src.shape)} must be as wide as input rows "
                                 f"{fmt_shape(inp.shape)}")
        n_idx, n_src = as_int(idx.shape[0]), as_int(src.shape[0])
        if n_idx is not None and as_int(idx.shape[1]) is not None and n_src is not None \
                and n_idx * as_int(idx.shape[1]) != n_src:
            raise TypeCheckError(f"{name}: index {fmt_shape(idx.shape)} names {n_idx * as_int(idx.shape[1])} rows but "
                                 f"src has {n_src}")
        return result_like(inp, keep_view=False)
    return deduce


register_op(OpDef("tensor.scatter_update", args=("input", "dim", "index", "src"),
                  deduce=_scatter_update_rule("tensor.scatter_update"), affinity=VECTOR,
                  description="rows of input replaced by src rows at index.flat positions; others kept"))
register_op(OpDef("tile.scatter_update", args=("input", "dim", "index", "src"),
                  deduce=_scatter_update_rule("tile.scatter_update"), affinity=VECTOR, output_memory="inherit",
                  description="tile form of scatter_update; ConvertTensorToTileOps lowers it like the tensor form"))


# ---------------------------------------------------------------------------- gather_row / create_l1
def _gather_row_rule(name: str):
    """gather_row(dst, src, dst_offset, src_offset, shapes[, valid_shape]): one GM window into dst, in place.

    shapes is static (it sizes the hardware sub-view); valid_shape may be runtime. The bound is
    on what is written: dst_offset + valid_shape <= dst.shape, where both are known.
    """
    def deduce(args, kw):
        dst = expect_shaped(name, "dst", args[0])
        src = expect_tensor(name, "src", args[1])
        dst_off = expect_tuple(name, "dst_offset", args[2])
        src_off = expect_tuple(name, "src_offset", args[3])
        shapes = expect_tuple(name, "shapes", args[4])
        valid = expect_tuple(name, "valid_shape", args[5]) if len(args) > 5 else shapes
        same_dtype(name, dst.dtype, src.dtype, "dst and src")
        if dst.rank != 2 or src.rank != 2 or not len(dst_off) == len(src_off) == len(shapes) == len(valid) == 2:
            raise TypeCheckError(f"{name}: dst, src and the offsets / shapes must be 2-D")
        if any(as_int(s) is None for s in shapes):
            raise TypeCheckError(f"{name}: shapes must be compile-time integers (they size the sub-view)",
                                 hint="pass the runtime extent as valid_shape=[...]")
        if kw["transpose"] and len(args) > 5:
            raise TypeCheckError(f"{name}: valid_shape cannot be combined with transpose=True",
                                 hint="a transposed gather copies its whole window")
        if isinstance(dst, TileType) and dst.memory_space not in (None, MemorySpace.Mat, MemorySpace.Vec):
            raise TypeCheckError(f"{name}: dst must be a Mat or Vec tile, got {dst.memory_space.name}")
        placed = list(reversed(valid)) if kw["transpose"] else list(valid)
        for k, (o, v, s, d) in enumerate(zip(dst_off, placed, (list(reversed(shapes)) if kw["transpose"] else shapes),
                                           dst.shape)):
            o, v, s, d = as_int(o), as_int(v), as_int(s), as_int(d)
            if v is not None and s is not None and not 0 <= v <= s:
                raise TypeCheckError(f"{name}: dim {k}: valid_shape {v} is outside [0, shapes {s}]")
            if o is not None and v is not None and d is not None and o + v > d:
                raise TypeCheckError(f"{name}: dim {k}: writes [{o}, {o + v}) beyond the destination extent {d}",
                                     hint="dst_offset + valid_shape must stay within dst.shape")
        return result_like(dst)
    return deduce


register_op(OpDef("tensor.gather_row", args=("acc", "src", "dst_offset", "src_offset", "shapes", "valid_shape"),
                  kwargs={"transpose": Kwarg(bool, False)}, min_args=5, deduce=_gather_row_rule("tensor.gather_row"),
                  affinity=CUBE, self_loading=True, effects={0: READWRITE, 1: READ}, reuses_input=0,
                  description="DMA one GM window of src into acc at dst_offset (the result is acc)"))
register_op(OpDef("tile.gather_row", args=("dst", "src", "dst_offset", "src_offset", "shapes", "valid_shape"),
                  kwargs={"transpose": Kwarg(bool, False)}, min_args=5, deduce=_gather_row_rule("tile.gather_row"),
                  output_memory="inherit", self_loading=True, effects={0: READWRITE, 1: READ}, reuses_input=0,
                  description="GM window → sub-region of an on-chip tile, in place (subview + tload, no tmov)"))


def _create_l1_type(args, kw):
    shape = expect_tuple("tensor.create_l1", "shape", args[0])
    if any(as_int(d) is None for d in shape):
        raise TypeCheckError("tensor.create_l1: shape must be static (it sizes an L1 buffer)")
    return TensorType(shape, kw["dtype"])


register_op(OpDef("tensor.create_l1", args=("shape",),
                  kwargs={"dtype": Kwarg(DataType), "transpose": Kwarg(bool, False)},
                  deduce=_create_l1_type, affinity=CUBE, self_loading=True,
                  description="an L1 (Mat) accumulator that gather_row fills (transpose: the ZN layout)"))


# ---------------------------------------------------------------------------- paged_gather
def _paged_gather_type(args, kw):
    src = expect_tensor("tensor.paged_gather", "src", args[0])
    idx = expect_tensor("tensor.paged_gather", "indices", args[1])
    table = expect_tensor("tensor.paged_gather", "block_table", args[2])
    if src.rank != 2:
        raise TypeCheckError(f"tensor.paged_gather: src must be a 2-D KV pool, got rank {src.rank}")
    for what, t in (("indices", idx), ("block_table", table)):
        if t.dtype is not INT32 or t.rank not in (1, 2) or (t.rank == 2 and as_int(t.shape[0]) != 1):
            raise TypeCheckError(f"tensor.paged_gather: {what} must be an INT32 [n] or [1, n] tensor, got "
                                 f"{fmt_shape(t.shape)} {t.dtype.name}")
    for key in ("block_size", "size", "max_indices"):
        if kw[key] <= 0:
            raise TypeCheckError(f"tensor.paged_gather: {key} must be positive, got {kw[key]}")
    cols = as_int(src.shape[1])
    if cols is not None and kw["col_off"] + kw["size"] > cols:
        raise TypeCheckError(f"tensor.paged_gather: col_off + size = {kw['col_off'] + kw['size']} exceeds the "
                             f"{cols} columns of src")
    if kw["space"] not in (MemorySpace.Mat, MemorySpace.Vec):
        raise TypeCheckError(f"tensor.paged_gather: space must be Mat or Vec, got {kw['space'].name}")
    if kw["is_trans"] and kw["space"] is not MemorySpace.Mat:
        raise TypeCheckError("tensor.paged_gather: is_trans=True needs space=Mat (the matmul B layout)")
    shape = [kw["size"], kw["max_indices"]] if kw["is_trans"] else [kw["max_indices"], kw["size"]]
    return TensorType(shape, src.dtype)


register_op(OpDef("tensor.paged_gather", args=("src", "indices", "block_table"),
                  kwargs={"block_size": Kwarg(int), "size": Kwarg(int), "max_indices": Kwarg(int),
                          "space": Kwarg(MemorySpace, MemorySpace.Mat), "col_off": Kwarg(int, 0),
                          "is_trans": Kwarg(bool, False), "is_b_matrix": Kwarg(bool, False)},
                  deduce=_paged_gather_type, affinity=CUBE, self_loading=True, effects={0: READ, 1: READ, 2: READ},
                  description="rows src[block_table[i // bs] * bs + i % bs] for i in indices, into an on-chip buffer"))


# ---------------------------------------------------------------------------- AIV split boundary
_SPLIT_NAMES = {1: "UP_DOWN", 2: "LEFT_RIGHT"}


def _split_rule(name: str, halve: bool, space=None):
    """split=1 halves / doubles axis 0, split=2 axis 1, split=0 keeps the shape (mode NONE)."""
    def deduce(args, kw):
        x = expect_shaped(name, "x", args[0])
        split = kw["split"]
        if split not in (0, 1, 2):
            raise TypeCheckError(f"{name}: split must be 0 (none), 1 (UP_DOWN) or 2 (LEFT_RIGHT), got {split}")
        if type(x).__name__ == "DistributedTensorType":
            raise TypeCheckError(f"{name}: distributed tensors cannot cross the AIV split boundary")
        if split and x.rank != 2:
            raise TypeCheckError(f"{name}: the operand must be 2-D, got rank {x.rank}",
                                 hint="pl.reshape it to [rows, cols] first: N-D operands are flattened to "
                                      "[prod(leading), last], which a per-row split would not match")
        shape = list(x.shape)
        if split:
            axis = split - 1
            n = as_int(shape[axis])
            if n is None:
                raise TypeCheckError(f"{name}: the {_SPLIT_NAMES[split]} axis must be static")
            # an odd extent gives each lane the larger half (lane 1's valid part is one less: split code 3 / 4)
            shape[axis] = ConstInt((n + 1) // 2 if halve else n * 2)
            _check_lane_stride(name, kw.get("lane_stride"), (n + 1) // 2 if halve else n)
        elif kw.get("lane_stride") is not None:
            raise TypeCheckError(f"{name}: lane_stride partitions a split axis, but split=0 has none")
        if isinstance(x, TileType):
            # the boundary lands in the consuming lane's space, whatever the operand's (never inherited)
            return TileType(shape, x.dtype, memory_space=space)
        return TensorType(shape, x.dtype)
    return deduce


def _check_lane_stride(name: str, stride, half: int) -> None:
    """lane_stride (LowerAutoVectorSplit's balanced partition of a ragged boundary) moves where lane 1's
    part starts inside the physical lane box, so it must be a positive stride no larger than that box."""
    if stride is not None and not 0 < stride <= half:
        raise TypeCheckError(f"{name}: lane_stride must be a partition stride in 1..{half} (the lane box on the "
                             f"split axis), got {stride}")


_SPLIT_KW = {"split": Kwarg(int)}
register_op(OpDef("tensor.aiv_shard", args=("x",), kwargs=dict(_SPLIT_KW), deduce=_split_rule("tensor.aiv_shard", True),
                  affinity=MIXED, effects={0: READ}, description="C→V: this lane's half of a cube result"))
register_op(OpDef("tensor.aic_gather", args=("x",), kwargs=dict(_SPLIT_KW),
                  deduce=_split_rule("tensor.aic_gather", False), affinity=MIXED, effects={0: READ},
                  description="V→C: the lanes' halves rejoined for the cube"))
register_op(OpDef("tile.aiv_shard", args=("x",), kwargs={**_SPLIT_KW, "lane_stride": Kwarg(int, None)},
                  deduce=_split_rule("tile.aiv_shard", True, MemorySpace.Vec), affinity=MIXED, output_memory=MemorySpace.Vec,
                  effects={0: READ}, description="C→V boundary: Acc tile → this lane's half in Vec"))
register_op(OpDef("tile.aic_gather", args=("x",), kwargs={**_SPLIT_KW, "lane_stride": Kwarg(int, None)}, deduce=_split_rule("tile.aic_gather", False, MemorySpace.Mat),
                  affinity=MIXED, output_memory=MemorySpace.Mat, effects={0: READ},
                  description="V→C boundary: the lanes' Vec halves → one Mat tile"))

