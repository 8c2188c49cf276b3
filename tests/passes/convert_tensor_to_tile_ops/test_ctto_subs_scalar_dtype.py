"""pl.sub with a float scalar on an integer tensor: tensor.subs / tile.subs keep the operand's dtype and
the scalar its own (pto.tsubs takes the pair), the scalar being narrowed toward zero when the kernel runs.
Other scalar ops still refuse a float scalar on an integer operand."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import TypeCheckError
from pypto.ir import ScalarType, TensorType, Var
from pypto.ir.dtypes import FP32, INT16
from pypto.ir.ops.registry import create_op_call
from pypto.passes import convert_tensor_to_tile_ops
from pypto.runtime import RunConfig, run
from tests.helpers import op_calls


def test_float_scalar_keeps_both_dtypes_through_conversion():
    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[8, 16], pl.INT16], s: pl.Scalar[pl.FP32]) -> pl.Tensor[[8, 16], pl.INT16]:
            y: pl.Tensor[[8, 16], pl.INT16] = pl.tensor.subs(x, s)
            return y

    (subs,) = op_calls(convert_tensor_to_tile_ops()(Prog)["k"], "tile.subs")
    assert subs.args[0].type.dtype is INT16 and subs.args[1].type.dtype is FP32
    assert subs.type.dtype is INT16


def test_only_subs_narrows_a_float_scalar():
    x = Var("x", TensorType([8, 16], INT16))
    s = Var("s", ScalarType(FP32))
    assert create_op_call("tensor.subs", [x, s], {}).type.dtype is INT16
    with pytest.raises(TypeCheckError, match="FP32 scalar but the operand is INT16"):
        create_op_call("tensor.adds", [x, s], {})


@pl.program
class SubFloat:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.INT16], out: pl.Out[pl.Tensor[[8, 16], pl.INT16]]
             ) -> pl.Tensor[[8, 16], pl.INT16]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.assemble(out, pl.sub(x, 2.75), [0, 0])
        return out


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_float_scalar_subtracts_as_its_integer_part(platform):
    x = np.arange(-64, 64, dtype=np.int16).reshape(8, 16)
    got = np.zeros_like(x)
    run(SubFloat, config=RunConfig(platform=platform))(x, got)
    np.testing.assert_array_equal(got, x - 2)
