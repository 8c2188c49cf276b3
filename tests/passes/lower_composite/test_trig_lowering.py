"""LowerCompositeOps on tile.sin / tile.cos: the exact primitive sequence (seed 001), the pass contract
(no-op, idempotent, ReturnStmt / EvalStmt), and FP32-only construction."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import TypeCheckError
from pypto.ir.dtypes import BF16, FP16, FP32, INT32
from pypto.ir.expr import Var
from pypto.ir.function import Function, Program
from pypto.ir.enums import FunctionType
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import EvalStmt, ReturnStmt, SeqStmts
from pypto.ir.types import TensorType, TileType
from pypto.ir.visitor import collect
from pypto.ir.expr import Call
from pypto.passes.convert_tensor_to_tile_ops import convert_tensor_to_tile_ops
from pypto.passes.lower_composite_ops import lower_composite_ops


def op_names(node) -> list:
    return [c.op.name for c in collect(node, lambda n: isinstance(n, Call) and not n.is_function_call())]


def trig_program(op):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[16, 16], pl.FP32],
                   out_0: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            x_tile: pl.Tile[[16, 16], pl.FP32] = pl.load(x, [0, 0], [16, 16])
            y_tile: pl.Tile[[16, 16], pl.FP32] = op(x_tile)
            out_0: pl.Tensor[[16, 16], pl.FP32] = pl.store(y_tile, [0, 0], out_0)
            return out_0

        @pl.function
        def main(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            out_0: pl.Tensor[[16, 16], pl.FP32] = pl.create_tensor([16, 16], dtype=pl.FP32)
            r: pl.Tensor[[16, 16], pl.FP32] = self.kernel(x, out_0)
            return r
    return Before


def test_factory_name():
    assert lower_composite_ops().get_name() == "LowerCompositeOps"


def test_sin_is_the_31_step_recipe():
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[16, 16], pl.FP32],
                   out_0: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            x_tile: pl.Tile[[16, 16], pl.FP32] = pl.load(x, [0, 0], [16, 16])
            s: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(x_tile, 0.31830987334251404)
            ki: pl.Tile[[16, 16], pl.INT32] = pl.tile.cast(s, target_type=pl.INT32, mode="round")
            k: pl.Tile[[16, 16], pl.FP32] = pl.tile.cast(ki, target_type=pl.FP32, mode="none")
            a0: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(k, 3.140625)
            t0: pl.Tile[[16, 16], pl.FP32] = pl.tile.sub(x_tile, a0)
            a1: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(k, 0.0009670257568359375)
            t1: pl.Tile[[16, 16], pl.FP32] = pl.tile.sub(t0, a1)
            a2: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(k, 6.2771141529083252e-07)
            t2: pl.Tile[[16, 16], pl.FP32] = pl.tile.sub(t1, a2)
            a3: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(k, 1.2164491636212915e-10)
            t3: pl.Tile[[16, 16], pl.FP32] = pl.tile.sub(t2, a3)
            a4: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(k, -1.0290622927356871e-13)
            t: pl.Tile[[16, 16], pl.FP32] = pl.tile.sub(t3, a4)
            hk: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(k, 0.5)
            fi: pl.Tile[[16, 16], pl.INT32] = pl.tile.cast(hk, target_type=pl.INT32, mode="floor")
            ff: pl.Tile[[16, 16], pl.FP32] = pl.tile.cast(fi, target_type=pl.FP32, mode="none")
            f4: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(ff, 4.0)
            n2: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(k, -2.0)
            sp: pl.Tile[[16, 16], pl.FP32] = pl.tile.add(f4, n2)
            sign: pl.Tile[[16, 16], pl.FP32] = pl.tile.adds(sp, 1.0)
            u: pl.Tile[[16, 16], pl.FP32] = pl.tile.mul(t, t)
            p0: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(u, 2.6049265215988271e-06)
            p1: pl.Tile[[16, 16], pl.FP32] = pl.tile.adds(p0, -0.00019808944489341229)
            q1: pl.Tile[[16, 16], pl.FP32] = pl.tile.mul(p1, u)
            p2: pl.Tile[[16, 16], pl.FP32] = pl.tile.adds(q1, 0.0083330497145652771)
            q2: pl.Tile[[16, 16], pl.FP32] = pl.tile.mul(p2, u)
            p3: pl.Tile[[16, 16], pl.FP32] = pl.tile.adds(q2, -0.16666658222675323)
            q3: pl.Tile[[16, 16], pl.FP32] = pl.tile.mul(p3, u)
            p: pl.Tile[[16, 16], pl.FP32] = pl.tile.adds(q3, 1.0)
            tp: pl.Tile[[16, 16], pl.FP32] = pl.tile.mul(t, p)
            y_tile: pl.Tile[[16, 16], pl.FP32] = pl.tile.mul(sign, tp)
            out_0: pl.Tensor[[16, 16], pl.FP32] = pl.store(y_tile, [0, 0], out_0)
            return out_0

        @pl.function
        def main(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            out_0: pl.Tensor[[16, 16], pl.FP32] = pl.create_tensor([16, 16], dtype=pl.FP32)
            r: pl.Tensor[[16, 16], pl.FP32] = self.kernel(x, out_0)
            return r

    after = lower_composite_ops()(trig_program(pl.tile.sin))
    ir.assert_structural_equal(after, Expected)
    body = after.functions["kernel"].body.stmts
    assert len(body) == 1 + 31 + 2          # load, the recipe, store, return


def test_cos_is_the_34_step_recipe():
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[16, 16], pl.FP32],
                   out_0: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            x_tile: pl.Tile[[16, 16], pl.FP32] = pl.load(x, [0, 0], [16, 16])
            s: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(x_tile, 0.31830987334251404)
            kp: pl.Tile[[16, 16], pl.FP32] = pl.tile.adds(s, 0.5)
            ki: pl.Tile[[16, 16], pl.INT32] = pl.tile.cast(kp, target_type=pl.INT32, mode="rint")
            k: pl.Tile[[16, 16], pl.FP32] = pl.tile.cast(ki, target_type=pl.FP32, mode="none")
            a0: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(k, 3.140625)
            t0: pl.Tile[[16, 16], pl.FP32] = pl.tile.sub(x_tile, a0)
            a1: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(k, 0.0009670257568359375)
            t1: pl.Tile[[16, 16], pl.FP32] = pl.tile.sub(t0, a1)
            t1h: pl.Tile[[16, 16], pl.FP32] = pl.tile.adds(t1, 1.5707963705062866)
            a2: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(k, 6.2771141529083252e-07)
            t2: pl.Tile[[16, 16], pl.FP32] = pl.tile.sub(t1h, a2)
            a3: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(k, 1.2164491636212915e-10)
            t3: pl.Tile[[16, 16], pl.FP32] = pl.tile.sub(t2, a3)
            a4: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(k, -1.0290622927356871e-13)
            t4: pl.Tile[[16, 16], pl.FP32] = pl.tile.sub(t3, a4)
            t: pl.Tile[[16, 16], pl.FP32] = pl.tile.adds(t4, -4.3711388286737929e-08)
            hk: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(k, 0.5)
            fi: pl.Tile[[16, 16], pl.INT32] = pl.tile.cast(hk, target_type=pl.INT32, mode="floor")
            ff: pl.Tile[[16, 16], pl.FP32] = pl.tile.cast(fi, target_type=pl.FP32, mode="none")
            f4: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(ff, 4.0)
            n2: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(k, -2.0)
            sp: pl.Tile[[16, 16], pl.FP32] = pl.tile.add(f4, n2)
            sign: pl.Tile[[16, 16], pl.FP32] = pl.tile.adds(sp, 1.0)
            u: pl.Tile[[16, 16], pl.FP32] = pl.tile.mul(t, t)
            p0: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(u, 2.6049265215988271e-06)
            p1: pl.Tile[[16, 16], pl.FP32] = pl.tile.adds(p0, -0.00019808944489341229)
            q1: pl.Tile[[16, 16], pl.FP32] = pl.tile.mul(p1, u)
            p2: pl.Tile[[16, 16], pl.FP32] = pl.tile.adds(q1, 0.0083330497145652771)
            q2: pl.Tile[[16, 16], pl.FP32] = pl.tile.mul(p2, u)
            p3: pl.Tile[[16, 16], pl.FP32] = pl.tile.adds(q2, -0.16666658222675323)
            q3: pl.Tile[[16, 16], pl.FP32] = pl.tile.mul(p3, u)
            p: pl.Tile[[16, 16], pl.FP32] = pl.tile.adds(q3, 1.0)
            tp: pl.Tile[[16, 16], pl.FP32] = pl.tile.mul(t, p)
            y_tile: pl.Tile[[16, 16], pl.FP32] = pl.tile.mul(sign, tp)
            out_0: pl.Tensor[[16, 16], pl.FP32] = pl.store(y_tile, [0, 0], out_0)
            return out_0

        @pl.function
        def main(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            out_0: pl.Tensor[[16, 16], pl.FP32] = pl.create_tensor([16, 16], dtype=pl.FP32)
            r: pl.Tensor[[16, 16], pl.FP32] = self.kernel(x, out_0)
            return r

    after = lower_composite_ops()(trig_program(pl.tile.cos))
    ir.assert_structural_equal(after, Expected)
    assert len(after.functions["kernel"].body.stmts) == 1 + 34 + 2


@pytest.mark.parametrize("op", [pl.tile.sin, pl.tile.cos])
def test_second_run_changes_nothing(op):
    once = lower_composite_ops()(trig_program(op))
    twice = lower_composite_ops()(once)
    assert twice is once or ir.structural_equal(twice, once)
    ir.assert_structural_equal(twice, once)


def test_program_without_composite_ops_is_unchanged():
    before = trig_program(pl.tile.exp)
    after = lower_composite_ops()(before)
    assert after is before
    ir.assert_structural_equal(after, before)


def test_sin_and_cos_in_one_function_get_distinct_temps():
    @pl.program
    class Both:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[16, 16], pl.FP32],
                   out_0: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            x_tile: pl.Tile[[16, 16], pl.FP32] = pl.load(x, [0, 0], [16, 16])
            a: pl.Tile[[16, 16], pl.FP32] = pl.tile.sin(x_tile)
            b: pl.Tile[[16, 16], pl.FP32] = pl.tile.cos(x_tile)
            y: pl.Tile[[16, 16], pl.FP32] = pl.tile.add(a, b)
            out_0: pl.Tensor[[16, 16], pl.FP32] = pl.store(y, [0, 0], out_0)
            return out_0

    after = lower_composite_ops()(Both)
    stmts = after.functions["kernel"].body.stmts
    assert len(stmts) == 1 + 31 + 34 + 3
    names = [s.var.name_hint for s in stmts[1:-2]]
    assert len(set(names)) == len(names)
    assert names[0].startswith("a__") and names[31].startswith("b__") and names[30] == "a" and names[64] == "b"
    assert "tile.sin" not in op_names(after) and "tile.cos" not in op_names(after)


def _return_program(op: str, as_eval: bool = False) -> Program:
    t = TileType([16, 16], FP32)
    x = Var("x", t)
    call = create_op_call(op, [x])
    body = SeqStmts([EvalStmt(call), ReturnStmt([x])]) if as_eval else ReturnStmt([call])
    return Program([Function("trig_return", [x], [t], body, func_type=FunctionType.InCore)], "P")


@pytest.mark.parametrize("op", ["tile.sin", "tile.cos"])
def test_composite_directly_in_return_is_lowered(op):
    after = lower_composite_ops()(_return_program(op))
    names = op_names(after)
    assert op not in names and {"tile.muls", "tile.cast", "tile.mul"} <= set(names)
    ret = after.functions["trig_return"].body.stmts[-1]
    assert isinstance(ret, ReturnStmt) and isinstance(ret.values[0], Var)


def test_composite_eval_stmt_is_lowered():
    after = lower_composite_ops()(_return_program("tile.sin", as_eval=True))
    assert "tile.sin" not in op_names(after)


@pytest.mark.parametrize("dtype", [FP16, BF16, INT32])
@pytest.mark.parametrize("family", ["tile", "tensor"])
@pytest.mark.parametrize("fn", ["sin", "cos"])
def test_non_fp32_trig_is_rejected_at_construction(dtype, family, fn):
    t = TileType([16, 16], dtype) if family == "tile" else TensorType([16, 16], dtype)
    with pytest.raises(TypeCheckError, match=rf"{family}\.{fn}.*FP32"):
        create_op_call(f"{family}.{fn}", [Var("x", t)])


def test_tensor_sin_converts_to_tile_sin():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[16, 16], pl.FP32],
                   out_0: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y: pl.Tensor[[16, 16], pl.FP32] = pl.sin(x)
            r: pl.Tensor[[16, 16], pl.FP32] = pl.assemble(out_0, y, [0, 0])
            return r

    converted = convert_tensor_to_tile_ops()(P)
    assert "tile.sin" in op_names(converted) and "tensor.sin" not in op_names(converted)
    lowered = lower_composite_ops()(converted)
    assert "tile.sin" not in op_names(lowered)
