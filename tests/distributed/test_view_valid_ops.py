"""tensor.view, tile.set_validshape, tile.fillpad_inplace (pypto/ir/ops/view_valid.py): type rules,
simulator semantics against numpy, PTO spelling."""

from __future__ import annotations

import re

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.codegen.pto import generate
from pypto.errors import PyptoError, TypeCheckError
from pypto.ir.dtypes import FP32, INDEX
from pypto.ir.expr import MakeTuple, Var, const
from pypto.ir.ops.registry import create_op_call
from pypto.ir.types import ScalarType, TensorType, TileType
from pypto.runtime import RunConfig, run


def _tensor(shape):
    return Var("t", TensorType(shape, FP32))


def test_view_keeps_the_element_count_and_carries_a_valid_shape():
    t = create_op_call("tensor.view", [_tensor([2, 3, 4]), MakeTuple([const(6), const(4)]),
                                       MakeTuple([const(3), const(2)])])
    assert [d.value for d in t.type.shape] == [6, 4]
    assert [d.value for d in t.type.tensor_view.valid_shape] == [3, 2]
    with pytest.raises(TypeCheckError, match=r"tensor.view: shape \[5, 5\] holds 25 elements"):
        create_op_call("tensor.view", [_tensor([2, 3, 4]), MakeTuple([const(5), const(5)])])


def test_set_validshape_rules():
    tile = Var("x", TileType([16, 32], FP32))
    n = Var("n", ScalarType(INDEX))
    narrowed = create_op_call("tile.set_validshape", [tile, const(4), n])
    assert narrowed.type.tile_view.valid_shape[1] is n and narrowed.op.reuses_input == 0
    with pytest.raises(TypeCheckError, match="tile.set_validshape: cols=40 is outside the tile extent 32"):
        create_op_call("tile.set_validshape", [tile, const(4), const(40)])
    with pytest.raises(TypeCheckError, match="needs a 2-D tile"):
        create_op_call("tile.set_validshape", [Var("y", TileType([2, 4, 8], FP32)), const(1), const(1)])


def test_set_validshape_has_a_tensor_form():
    src = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = pl.set_validshape(x, 4, 8)
        return y
"""
    y = pl.parse(src)["k"].body.stmts[0].var        # the reference's tensor.set_validshape (metadata only)
    assert [d.value for d in y.type.tensor_view.valid_shape] == [4, 8]


@pl.program
class NarrowPad:
    """Load 16 x 32, narrow to [rows, 20], pad the rest with -1 in place, store the whole tile."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 32], pl.FP32], rows: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        narrowed = pl.tile.set_validshape(t, rows, 20)
        padded = pl.tile.fillpad_inplace(narrowed, pad_value=pl.PadValue.min)
        halved = pl.muls(padded, 0.5)
        out = pl.store(halved, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        out = self.k(x, 5, out)
        return out


def test_narrow_then_pad_in_place_matches_numpy():
    x = np.random.default_rng(0).uniform(-2, 2, (16, 32)).astype(np.float32)
    out = np.zeros_like(x)
    run(NarrowPad, x, out, config=RunConfig(platform="a2a3sim", sim_strict_memory=True))
    ref = np.full_like(x, -np.inf)                      # PadValue.min of a float tile is -inf
    ref[:5, :20] = x[:5, :20]
    np.testing.assert_array_equal(out, ref * np.float32(0.5))


def test_pto_spelling_of_set_validshape_and_fillpad_inplace():
    text = generate(ir.compile(NarrowPad).lowered)["k"]
    assert "pto.set_validshape %" in text and "pto.tfillpad ins(" in text


def test_pto_spelling_of_tensor_view_is_a_second_tensor_view_of_the_same_pointer():
    from pypto.codegen.pto import generate_function

    @pl.program
    class Viewed:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[2, 3, 4], pl.FP32],
              out: pl.Out[pl.Tensor[[1, 1], pl.FP32]]) -> pl.Tensor[[1, 1], pl.FP32]:
            v = pl.tensor.view(x, [1, 24])
            s = pl.tensor.read(v, [0, 5])
            out = pl.tensor.write(out, [0, 0], s)
            return out

    text = generate_function(Viewed.get_function("k"))
    assert re.search(r"%v_view = pto\.make_tensor_view %arg0, shape = \[%c1_index, %c24_index\], "
                     r"strides = \[%c24_index, %c1_index\] \{layout = #pto\.layout<nd>\}", text)
    assert re.search(r"pto\.load_scalar %arg0\[", text)
