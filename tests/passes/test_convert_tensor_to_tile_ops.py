"""ConvertTensorToTileOps: seed 003's Before/After example and its phases."""

import pytest

from pypto import ir
from pypto.errors import UnsupportedError
from pypto.ir import FunctionType as FT, MemorySpace, ParamDirection as PD, Program, ReturnStmt, Var
from pypto.pypto_core import passes
from pass_irb import call, func, let, op, tensor


def _before():
    x = Var("x", tensor([64]))
    y, s1 = let("y", op("tensor.add", x, x))
    k = func("main_incore_0", [x], [tensor([64])], [s1, ReturnStmt([y])], FT.InCore)
    xo = Var("x", tensor([64]))
    yo, s2 = let("y", call("main_incore_0", tensor([64]), xo))
    m = func("main", [xo], [tensor([64])], [s2, ReturnStmt([yo])], FT.Orchestration)
    return Program([k, m], "Before")


def _expected():
    x = Var("x", tensor([64]))
    out = Var("ret0_out", tensor([64]))
    xt, s0 = let("x_tile", op("tile.load", x, [0], [64], [64], target_memory=MemorySpace.Vec))
    yt, s1 = let("y_tile", op("tile.add", xt, xt))
    st, s2 = let("ret0_store", op("tile.store", yt, [0], out))
    k = func("main_incore_0", [x, out], [tensor([64])], [s0, s1, s2, ReturnStmt([st])], FT.InCore,
             [PD.In, PD.Out])
    xo = Var("x", tensor([64]))
    ro, s3 = let("ret0_out", op("tensor.create", [64], dtype=ir.DataType.FP32))
    yo, s4 = let("y", call("main_incore_0", tensor([64]), xo, ro))
    m = func("main", [xo], [tensor([64])], [s3, s4, ReturnStmt([yo])], FT.Orchestration)
    return Program([k, m], "After")


def test_seed_003_example():
    after = passes.convert_tensor_to_tile_ops()(_before())
    ir.assert_structural_equal(after, _expected())


def test_idempotent_on_tile_program():
    once = passes.convert_tensor_to_tile_ops()(_before())
    twice = passes.convert_tensor_to_tile_ops()(once)
    ir.assert_structural_equal(once, twice)


def test_missing_converter_names_op():
    x = Var("x", tensor([64]))
    y, s1 = let("y", op("tensor.create", [64], dtype=ir.DataType.FP32))
    k = func("k", [x], [tensor([64])], [s1, ReturnStmt([y])], FT.InCore)
    from pypto.passes.convert_tensor_to_tile_ops import registry
    saved = registry.CONVERTERS.pop("tensor.create")
    try:
        with pytest.raises(UnsupportedError, match="tensor.create"):
            passes.convert_tensor_to_tile_ops()(Program([k], "P"))
    finally:
        registry.CONVERTERS["tensor.create"] = saved
