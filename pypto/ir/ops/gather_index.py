"""Gather / scatter by index, by mask pattern and by byte block (tile and tensor forms).

    v = pl.tile.gather(src, idx, tmp)                  # v[i, j] = src.flat[idx[i, j]]            (pto.tgather)
    e = pl.tile.gather_mask(s, mask_pattern=1)         # the even columns (P0101) of each row     (pto.tgather)
    d = pl.tile.scatter_mask(d, s, mask_pattern=1)     # s's columns into d's even ones, rest 0   (pto.tscatter)
    b = pl.tile.gatherb(src, offsets)                  # 32-byte blocks at UINT32 byte offsets    (pto.tgatherb)
    r = pl.tile.mgather(table, idx)                    # GM rows (or elements) by an index tile   (pto.mgather)
    t = pl.tile.mscatter(src, idx, t)                  # t.flat[idx[i, j]] = src[i, j] in GM      (pto.mscatter)
    g = pl.gather(x, 1, index)                         # GM, torch.gather along dim
    s = pl.scatter(x, 0, index, src)                   # GM, torch.scatter along dim

`pl.gather` / `pl.scatter` (and their tile / tensor spellings) pick the index or the mask form from
their arguments (pypto/language/ops/dispatch.py).
"""

from __future__ import annotations

from pypto.errors import TypeCheckError, UnsupportedError
from pypto.ir.dtypes import INDEX, INT16, INT32, UINT32, DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import ConstInt, as_int
from pypto.ir.ops.common import (dims_equal, expect_axis, expect_shaped, expect_tensor, expect_tile, fmt_shape,
                                 result_like, same_dtype)
from pypto.ir.ops.registry import READ, READWRITE, SHARED, VECTOR, WRITE, Kwarg, OpDef, register_op
from pypto.ir.types import TileType, TileView

# mask pattern → which columns of each group survive (1 = kept), as the hardware names them
MASK_PATTERNS = {1: "P0101", 2: "P1010", 3: "P0001", 4: "P0010", 5: "P0100", 6: "P1000", 7: "P1111"}
GATHER_OOB = ("undefined", "clamp", "wrap", "zero")
COALESCE = ("row", "elem")


def mask_columns(pattern: int, cols: int) -> list:
    """The columns a mask pattern keeps. The pattern's bits, read right to left, say which of every four
    consecutive columns survive: P0101 keeps the even columns (the values of a sort32 row), P1010 the
    odd ones (its indices), P0001 one column in four, P1111 all."""
    keep = {k for k, b in enumerate(reversed(MASK_PATTERNS[pattern][1:])) if b == "1"}
    return [c for c in range(cols) if c % 4 in keep]


def _index_tile(name: str, arg: str, e, dtypes=(INT32, INT16)):
    t = expect_shaped(name, arg, e)
    if t.dtype not in dtypes:
        raise TypeCheckError(f"{name}: argument '{arg}' must be {' or '.join(d.name for d in dtypes)}, got {t.dtype.name}")
    return t


# ---------------------------------------------------------------------------- gather (index form)
def _gather_type(args, kw):
    src = expect_tile("tile.gather", "src", args[0])
    idx = _index_tile("tile.gather", "indices", args[1])
    expect_tile("tile.gather", "tmp", args[2])
    return TileType(idx.shape, src.dtype, tile_view=TileView(valid_shape=tuple(idx.valid_shape)),
                    memory_space=src.memory_space)


register_op(OpDef("tile.gather", args=("src", "indices", "tmp"), deduce=_gather_type, affinity=VECTOR,
                  output_memory="inherit", input_memory={i: (MemorySpace.Vec,) for i in range(3)},
                  effects={0: READ, 1: READ, 2: READWRITE}, not_inplace_safe=True, pto="pto.tgather",
                  description="dst[i, j] = src.flat[indices[i, j]] (row-major over src's physical shape)"))


# ---------------------------------------------------------------------------- gather (mask form)
def _mask_type(name: str):
    def deduce(args, kw):
        src = expect_shaped(name, "src", args[0])
        pattern = kw["mask_pattern"]
        if pattern not in MASK_PATTERNS:
            raise TypeCheckError(f"{name}: mask_pattern must be 1..7 ({', '.join(f'{k}={v}' for k, v in MASK_PATTERNS.items())}), "
                                 f"got {pattern}")
        dtype = kw["output_dtype"] or src.dtype
        if dtype.bits != src.dtype.bits:
            raise TypeCheckError(f"{name}: output_dtype {dtype.name} must have src's width ({src.dtype.name})",
                                 hint="output_dtype reinterprets the gathered bits, it does not convert")
        cols = as_int(src.shape[-1])
        if cols is None:
            raise TypeCheckError(f"{name}: the last dim must be static")
        width = len(mask_columns(pattern, cols))
        return result_like(src, shape=(*src.shape[:-1], ConstInt(width, INDEX)), dtype=dtype, keep_view=False)
    return deduce


_MASK_KW = {"mask_pattern": Kwarg(int), "output_dtype": Kwarg(DataType, None)}
register_op(OpDef("tile.gather_mask", args=("src",), kwargs=dict(_MASK_KW), deduce=_mask_type("tile.gather_mask"),
                  affinity=VECTOR, output_memory="inherit", input_memory={0: (MemorySpace.Vec,)}, effects={0: READ},
                  description="the columns a fixed hardware mask pattern keeps (P0101: even, P1010: odd, ...)"))
register_op(OpDef("tensor.gather_mask", args=("src",), kwargs=dict(_MASK_KW), deduce=_mask_type("tensor.gather_mask"),
                  affinity=VECTOR, lowers_to="tile.gather_mask", description="the columns a mask pattern keeps"))


# ---------------------------------------------------------------------------- scatter (mask form)
def mask_stride(pattern: int) -> int:
    """How many destination columns one source column spreads over (P0101: 2, P0001: 4, P1111: 1)."""
    return 4 // MASK_PATTERNS[pattern].count("1")


def _scatter_mask_type(name: str):
    """scatter_mask(dst / input, ...): 2-D operands of one dtype and row count, and the destination as wide
    as the source times the pattern's stride (each source row fills the kept columns of a destination row)."""
    def deduce(args, kw):
        tile = name.startswith("tile.")
        src = expect_shaped(name, "src" if tile else "input", args[1 if tile else 0])
        dst = expect_shaped(name, "dst", args[0 if tile else 1])
        pattern = kw["mask_pattern"]
        if pattern not in MASK_PATTERNS:
            raise TypeCheckError(f"{name}: mask_pattern must be 1..7 ({', '.join(f'{k}={v}' for k, v in MASK_PATTERNS.items())}), "
                                 f"got {pattern}")
        same_dtype(name, dst.dtype, src.dtype, "dst and the source")
        if src.rank != 2 or dst.rank != 2:
            raise TypeCheckError(f"{name}: the source and dst must be 2-D, got {fmt_shape(src.shape)} and "
                                 f"{fmt_shape(dst.shape)}")
        rows, cols = (as_int(d) for d in src.shape)
        dst_rows, dst_cols = (as_int(d) for d in dst.shape)
        if None not in (rows, dst_rows) and rows != dst_rows:
            raise TypeCheckError(f"{name}: the source has {rows} rows but dst {dst_rows}")
        stride = mask_stride(pattern)
        if None not in (cols, dst_cols) and dst_cols != cols * stride:
            raise TypeCheckError(f"{name}: mask_pattern={pattern} ({MASK_PATTERNS[pattern]}) needs dst {cols * stride} "
                                 f"columns wide (the source's {cols} x {stride}), got {dst_cols}")
        return result_like(dst) if tile else result_like(dst, keep_view=False)
    return deduce


_SCATTER_MASK_KW = {"mask_pattern": Kwarg(int)}
register_op(OpDef("tile.scatter_mask", args=("dst", "src"), kwargs=dict(_SCATTER_MASK_KW),
                  deduce=_scatter_mask_type("tile.scatter_mask"), affinity=VECTOR, output_memory="inherit",
                  input_memory={0: (MemorySpace.Vec,), 1: (MemorySpace.Vec,)}, effects={0: READWRITE, 1: READ},
                  reuses_input=0,
                  description="each src row written into the columns of a dst row a mask pattern keeps; the other "
                              "dst columns become 0 (the instruction zero-fills dst)"))
register_op(OpDef("tensor.scatter_mask", args=("input", "dst"), kwargs=dict(_SCATTER_MASK_KW),
                  deduce=_scatter_mask_type("tensor.scatter_mask"), affinity=VECTOR,
                  description="a copy of dst with each input row written into the columns a mask pattern keeps"))


# ---------------------------------------------------------------------------- gatherb (32-byte blocks)
def _gatherb_type(args, kw):
    src = expect_tile("tile.gatherb", "src", args[0])
    off = _index_tile("tile.gatherb", "offset", args[1], dtypes=(UINT32,))
    dtype = kw["output_dtype"] or src.dtype
    per_block = 256 // dtype.bits
    cols = as_int(off.shape[-1])
    if cols is None:
        raise TypeCheckError("tile.gatherb: the offset tile's column count must be static")
    return TileType((*off.shape[:-1], ConstInt(cols * per_block, INDEX)), dtype, memory_space=src.memory_space)


register_op(OpDef("tile.gatherb", args=("src", "offset"), kwargs={"output_dtype": Kwarg(DataType, None)},
                  deduce=_gatherb_type, affinity=VECTOR, output_memory="inherit",
                  input_memory={0: (MemorySpace.Vec,), 1: (MemorySpace.Vec,)}, effects={0: READ, 1: READ},
                  not_inplace_safe=True, pto="pto.tgatherb",
                  description="the 32-byte block of src at each UINT32 byte offset, one offset column per block"))


# ---------------------------------------------------------------------------- mgather / mscatter (GM)
def _mode(name: str, key: str, value, names: tuple) -> int:
    if isinstance(value, str) and value in names:
        return names.index(value)
    if isinstance(value, int) and 0 <= value < len(names):
        return value
    raise TypeCheckError(f"{name}: {key} must be one of {', '.join(names)} (or 0..{len(names) - 1}), got {value!r}")


def _mgather_type(args, kw):
    mem = expect_tensor("tile.mgather", "mem", args[0])
    if kw["target_memory"] is not MemorySpace.Vec:
        raise UnsupportedError("tile.mgather: target_memory=Mat (the NZ gather) is not built; gather into Vec")
    idx = _index_tile("tile.mgather", "idx", args[1], dtypes=(INT32,))
    if idx.rank != 2:
        raise TypeCheckError(f"tile.mgather: idx must be a 2-D index tile, got {fmt_shape(idx.shape)}")
    _mode("tile.mgather", "gather_oob", kw["gather_oob"], GATHER_OOB)
    if _mode("tile.mgather", "coalesce", kw["coalesce"], COALESCE) == 1:
        return TileType(idx.shape, mem.dtype, tile_view=TileView(valid_shape=tuple(idx.valid_shape)),
                        memory_space=MemorySpace.Vec)
    if as_int(idx.shape[0]) != 1 and as_int(idx.shape[1]) != 1:
        raise TypeCheckError(f"tile.mgather: row mode needs an index vector [1, R] or [R, 1], got {fmt_shape(idx.shape)}")
    k = 1 if as_int(idx.shape[0]) == 1 else 0
    shape = (idx.shape[k], mem.shape[-1])
    return TileType(shape, mem.dtype, tile_view=TileView(valid_shape=(idx.valid_shape[k], mem.shape[-1])),
                    memory_space=MemorySpace.Vec)


register_op(OpDef("tile.mgather", args=("mem", "idx"),
                  kwargs={"coalesce": Kwarg((str, int), "row"), "gather_oob": Kwarg((str, int), "undefined"),
                          "target_memory": Kwarg(MemorySpace, MemorySpace.Vec)},
                  deduce=_mgather_type, affinity=VECTOR, output_memory=MemorySpace.Vec, self_loading=True,
                  effects={0: READ, 1: READ},
                  description="row mode: dst[r, :] = mem[idx[r], :]; elem mode: dst[i, j] = mem.flat[idx[i, j]]"))


def _mscatter_type(args, kw):
    src = expect_tile("tile.mscatter", "src", args[0])
    idx = _index_tile("tile.mscatter", "idx", args[1], dtypes=(INT32,))
    out = expect_tensor("tile.mscatter", "output_tensor", args[2])
    same_dtype("tile.mscatter", src.dtype, out.dtype, "src and output_tensor")
    if not dims_equal(idx.shape, src.shape):
        raise TypeCheckError(f"tile.mscatter: idx {fmt_shape(idx.shape)} must have src's shape {fmt_shape(src.shape)}")
    return out


register_op(OpDef("tile.mscatter", args=("src", "idx", "output_tensor"), deduce=_mscatter_type, affinity=VECTOR,
                  input_memory={0: (MemorySpace.Vec,), 1: (MemorySpace.Vec,)}, effects={0: READ, 1: READ, 2: WRITE},
                  reuses_input=2, description="output_tensor.flat[idx[i, j]] = src[i, j]; the result is the tensor"))


# ---------------------------------------------------------------------------- tensor.gather / tensor.scatter (GM)
def _dim_index_type(name: str, scatter: bool):
    def deduce(args, kw):
        x = expect_tensor(name, "input", args[0])
        axis = expect_axis(name, "dim", args[1], x.rank)
        index = expect_tensor(name, "index", args[2])
        if index.dtype not in (INT32, INT16) and not index.dtype.is_int():
            raise TypeCheckError(f"{name}: index must be an integer tensor, got {index.dtype.name}")
        if index.rank != x.rank:
            raise TypeCheckError(f"{name}: index must have input's rank {x.rank}, got {fmt_shape(index.shape)}")
        for d, (i, n) in enumerate(zip(index.shape, x.shape)):
            i, n = as_int(i), as_int(n)
            if d != axis and i is not None and n is not None and i > n:
                raise TypeCheckError(f"{name}: index dim {d} ({i}) exceeds input's ({n})")
        if not scatter:
            return result_like(x, shape=index.shape, keep_view=False)
        src = expect_tensor(name, "src", args[3])
        same_dtype(name, x.dtype, src.dtype, "input and src")
        return result_like(x)
    return deduce


register_op(OpDef("tensor.gather", args=("input", "dim", "index"), deduce=_dim_index_type("tensor.gather", False),
                  affinity=SHARED, effects={0: READ, 2: READ},
                  description="out[i][j] = input[index[i][j]][j] (dim 0) / input[i][index[i][j]] (dim 1), torch.gather"))
register_op(OpDef("tensor.scatter", args=("input", "dim", "index", "src"), deduce=_dim_index_type("tensor.scatter", True),
                  affinity=SHARED, effects={0: READ, 2: READ, 3: READ},
                  description="a copy of input with src written at index along dim, torch.scatter"))
