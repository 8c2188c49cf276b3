"""tile.* ops: on-chip tile operations (loads, stores, compute). Each maps 1:1 to a PTO instruction."""

from __future__ import annotations

from pypto.errors import TypeCheckError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.ops.common import expect_scalar, expect_tensor, expect_tile, expect_tuple, same_dtype, same_shape
from pypto.ir.ops.registry import READ, VECTOR, WRITE, SHARED, Kwarg, OpDef, register_op
from pypto.ir.types import TensorType, TileType, TileView


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
                  deduce=_load_type, output_memory="target_memory", effects={0: READ}, self_loading=True))


def _store_type(args, kw):
    expect_tile("tile.store", "tile", args[0])
    expect_tuple("tile.store", "offsets", args[1])
    out = expect_tensor("tile.store", "output_tensor", args[2])
    same_dtype("tile.store", args[0].type.dtype, out.dtype, "tile and output tensor")
    return out


register_op(OpDef("tile.store", args=("tile", "offsets", "output_tensor"), deduce=_store_type,
                  effects={0: READ, 2: WRITE}, reuses_input=2))


def _create_type(args, kw):
    shape = expect_tuple("tile.create", "shape", args[0])
    return TileType(shape, kw["dtype"], memory_space=kw["target_memory"])


register_op(OpDef("tile.create", args=("shape",),
                  kwargs={"dtype": Kwarg(DataType), "target_memory": Kwarg(MemorySpace, MemorySpace.Vec)},
                  deduce=_create_type, output_memory="target_memory", affinity=SHARED))


def _binary_type(name):
    def deduce(args, kw):
        a = expect_tile(name, "lhs", args[0])
        b = expect_tile(name, "rhs", args[1])
        same_dtype(name, a.dtype, b.dtype)
        same_shape(name, a.shape, b.shape)
        return TileType(a.shape, a.dtype, tile_view=a.tile_view, memory_space=a.memory_space)
    return deduce


def _scalar_binary_type(name):
    def deduce(args, kw):
        a = expect_tile(name, "lhs", args[0])
        expect_scalar(name, "rhs", args[1])
        return TileType(a.shape, a.dtype, tile_view=a.tile_view, memory_space=a.memory_space)
    return deduce


for _n in ("add", "sub", "mul", "div"):
    register_op(OpDef(f"tile.{_n}", args=("lhs", "rhs"), deduce=_binary_type(f"tile.{_n}"), affinity=VECTOR,
                      output_memory="inherit"))
    register_op(OpDef(f"tile.{_n}s", args=("lhs", "rhs"), deduce=_scalar_binary_type(f"tile.{_n}s"),
                      affinity=VECTOR, output_memory="inherit"))
