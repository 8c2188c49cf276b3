"""tile.* ops: on-chip tile operations (loads, stores, vector compute). Each maps 1:1 to a PTO instruction.

Families share their type rules (pypto/ir/ops/common.py); this file only declares them:
names, arguments, kwargs with defaults, affinity, memory spec and effects.

    call = create_op_call("tile.add", [a, b])      # a, b: Tile[[64, 64], FP32] in Vec
"""

from __future__ import annotations

from pypto.errors import TypeCheckError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import CastMode, CmpType, MemorySpace, PadValue, TileLayout
from pypto.ir.ops.common import (assemble_rule, binary_rule, cast_rule, cmp_rule, cmps_rule, expand_rule, expands_rule,
                                 expect_tensor, expect_tile, expect_tuple, fillpad_rule, read_rule, reduce_rule,
                                 reshape_rule, same_dtype, scalar_binary_rule, slice_rule, transpose_rule, unary_rule,
                                 write_rule)
from pypto.ir.ops.registry import READ, READWRITE, SHARED, VECTOR, WRITE, Kwarg, OpDef, register_op
from pypto.ir.types import PtrType, TileType, TileView

VEC = (MemorySpace.Vec,)


def _vector(name: str, args: tuple, deduce, n_tiles: int = 1, **extra) -> OpDef:
    """A vector-unit op: runs on AIV, reads its tile operands from Vec, result stays in the lhs's space."""
    extra.setdefault("output_memory", "inherit")
    extra.setdefault("effects", {i: READ for i in range(n_tiles)})
    return register_op(OpDef(name, args=args, deduce=deduce, affinity=VECTOR,
                             input_memory={i: VEC for i in range(n_tiles)}, **extra))


# ---------------------------------------------------------------------------- data movement
def _load_type(args, kw):
    t = expect_tensor("tile.load", "tensor", args[0])
    offsets = expect_tuple("tile.load", "offsets", args[1])
    shapes = expect_tuple("tile.load", "shapes", args[2])
    valid = expect_tuple("tile.load", "valid_shapes", args[3])
    if not (len(offsets) == len(shapes) == len(valid) == len(t.shape)):
        raise TypeCheckError(f"tile.load: offsets, shapes and valid_shapes need one entry per tensor dim ({len(t.shape)})")
    if kw["target_memory"] not in (MemorySpace.Vec, MemorySpace.Mat):
        raise TypeCheckError(f"tile.load: loads from GM may only land in Vec or Mat, not {kw['target_memory'].name}",
                             hint="load into Mat, then pl.move to Left / Right / Bias")
    tt = TileType(shapes, t.dtype, memory_space=kw["target_memory"])
    return tt.with_valid_shape(valid) if valid else tt


register_op(OpDef("tile.load", args=("tensor", "offsets", "shapes", "valid_shapes"),
                  kwargs={"target_memory": Kwarg(MemorySpace, MemorySpace.Vec)},
                  deduce=_load_type, output_memory="target_memory", effects={0: READ}, self_loading=True,
                  description="GM window → tile; outside valid_shapes the tile is padded per its pad value"))


def _store_type(args, kw):
    tile = expect_tile("tile.store", "tile", args[0])
    offsets = expect_tuple("tile.store", "offsets", args[1])
    out = expect_tensor("tile.store", "output_tensor", args[2])
    same_dtype("tile.store", tile.dtype, out.dtype, "tile and output tensor")
    if len(offsets) != out.rank:
        raise TypeCheckError(f"tile.store: offsets need one entry per tensor dim ({out.rank}), got {len(offsets)}")
    return out


register_op(OpDef("tile.store", args=("tile", "offsets", "output_tensor"), deduce=_store_type,
                  effects={0: READ, 2: WRITE}, reuses_input=2,
                  description="valid region of the tile → GM at offsets; the result is the updated tensor"))


def _move_type(args, kw):
    t = expect_tile("tile.move", "tile", args[0])
    view = t.tile_view or TileView()
    if kw["blayout"] is not None:
        view = view.replace(blayout=kw["blayout"])
    if kw["slayout"] is not None:
        view = view.replace(slayout=kw["slayout"])
    return TileType(t.shape, t.dtype, tile_view=view, memory_space=kw["target_memory"])


register_op(OpDef("tile.move", args=("tile",),
                  kwargs={"target_memory": Kwarg(MemorySpace), "blayout": Kwarg(TileLayout, None),
                          "slayout": Kwarg(TileLayout, None)},
                  deduce=_move_type, output_memory="target_memory", effects={0: READ},
                  description="copy a tile between on-chip memory spaces (e.g. Mat → Left)"))


def _create_type(args, kw):
    shape = expect_tuple("tile.create", "shape", args[0])
    return TileType(shape, kw["dtype"], memory_space=kw["target_memory"])


register_op(OpDef("tile.create", args=("shape",),
                  kwargs={"dtype": Kwarg(DataType), "target_memory": Kwarg(MemorySpace, MemorySpace.Vec)},
                  deduce=_create_type, output_memory="target_memory", affinity=SHARED,
                  description="an uninitialised tile (scratch or accumulation target)"))


def _full_type(args, kw):
    shape = expect_tuple("tile.full", "shape", args[0])
    return TileType(shape, kw["dtype"], memory_space=MemorySpace.Vec)


register_op(OpDef("tile.full", args=("shape",),
                  kwargs={"dtype": Kwarg(DataType), "value": Kwarg((int, float))},
                  deduce=_full_type, output_memory=MemorySpace.Vec, affinity=VECTOR))


def _alloc_type(args, kw):
    if kw["size"] < 0:
        raise TypeCheckError(f"tile.alloc: size must be non-negative, got {kw['size']}")
    return PtrType()


register_op(OpDef("tile.alloc", kwargs={"memory_space": Kwarg(MemorySpace), "size": Kwarg(int), "addr": Kwarg(int, -1)},
                  deduce=_alloc_type, affinity=SHARED,
                  description="the base of a MemRef: `size` bytes in memory_space at addr (-1 until planned)"))


# ---------------------------------------------------------------------------- elementwise compute
BINARY = ("add", "sub", "mul", "div", "maximum", "minimum")
UNARY_FLOAT = ("exp", "log", "sqrt", "rsqrt", "recip")
UNARY_ANY = ("neg", "abs", "relu")

for _n in BINARY:
    _vector(f"tile.{_n}", ("lhs", "rhs"), binary_rule(f"tile.{_n}"), n_tiles=2)
    _vector(f"tile.{_n}s", ("lhs", "rhs"), scalar_binary_rule(f"tile.{_n}s"))
for _n in UNARY_FLOAT:
    _vector(f"tile.{_n}", ("x",), unary_rule(f"tile.{_n}", float_only=True))
for _n in UNARY_ANY:
    _vector(f"tile.{_n}", ("x",), unary_rule(f"tile.{_n}"))

_vector("tile.cast", ("x",), cast_rule("tile.cast"),
        kwargs={"target_type": Kwarg(DataType), "mode": Kwarg(CastMode, CastMode.round)})
_vector("tile.cmp", ("lhs", "rhs"), cmp_rule("tile.cmp"), n_tiles=2,
        kwargs={"cmp_type": Kwarg(CmpType, CmpType.EQ)})
_vector("tile.cmps", ("lhs", "rhs"), cmps_rule("tile.cmps"), kwargs={"cmp_type": Kwarg(CmpType, CmpType.EQ)})

# ---------------------------------------------------------------------------- reductions and broadcasts
# The hardware row reductions need a scratch tile (the reference requires it); col_sum may take one.
for _n in ("row_sum", "row_max", "row_min"):
    _vector(f"tile.{_n}", ("x", "tmp"), reduce_rule(f"tile.{_n}", axis=1), n_tiles=2)
_vector("tile.col_sum", ("x", "tmp"), reduce_rule("tile.col_sum", axis=0), n_tiles=2, min_args=1)
for _n in ("col_max", "col_min"):
    _vector(f"tile.{_n}", ("x",), reduce_rule(f"tile.{_n}", axis=0))

EXPAND_KINDS = ("add", "sub", "mul", "div", "max", "min")
for _axis, _prefix in ((1, "row_expand"), (0, "col_expand")):
    _vector(f"tile.{_prefix}", ("target", "vec"), expand_rule(f"tile.{_prefix}", _axis), n_tiles=2)
    for _k in EXPAND_KINDS:
        _vector(f"tile.{_prefix}_{_k}", ("target", "vec"), expand_rule(f"tile.{_prefix}_{_k}", _axis), n_tiles=2)
_vector("tile.expands", ("target", "scalar"), expands_rule("tile.expands"))

# ---------------------------------------------------------------------------- shape and view
_vector("tile.reshape", ("x", "shape"), reshape_rule("tile.reshape"))
_vector("tile.transpose", ("x", "axis1", "axis2", "tmp"), transpose_rule("tile.transpose"), min_args=3,
        effects={0: READ, 3: READWRITE})
_vector("tile.slice", ("x", "shape", "offset", "valid_shape"), slice_rule("tile.slice"), min_args=3)
register_op(OpDef("tile.assemble", args=("target", "source", "offset"), deduce=assemble_rule("tile.assemble"),
                  output_memory="inherit", effects={0: READWRITE, 1: READ}, reuses_input=0,
                  description="write source into target at offset (in place); the result is the updated target"))
_vector("tile.fillpad", ("x",), fillpad_rule("tile.fillpad"), kwargs={"pad_value": Kwarg(PadValue, PadValue.zero)})

# ---------------------------------------------------------------------------- element access
register_op(OpDef("tile.read", args=("src", "indices"), deduce=read_rule("tile.read"), effects={0: READ},
                  description="one element of a tile as a scalar"))
register_op(OpDef("tile.write", args=("dst", "indices", "value"), deduce=write_rule("tile.write"),
                  output_memory="inherit", effects={0: READWRITE}, reuses_input=0,
                  description="set one element of a tile (in place); the result is the updated tile"))
