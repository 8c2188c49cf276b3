"""OutlineIncoreScopes: pl.at(level=CORE_GROUP) scopes become InCore functions."""

import pypto.language as pl
from pypto import ir
from pypto.pypto_core import passes


def _ssa(p):
    return passes.convert_to_ssa()(p)


def test_scope_becomes_incore_function_with_out_param():
    @pl.program
    class Before:
        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32], out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP):
                y: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
                out2: pl.Tensor[[64], pl.FP32] = pl.assemble(out, y, [0])
            return out2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main_incore_0(self, x: pl.Tensor[[64], pl.FP32],
                          out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
            y: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
            out2: pl.Tensor[[64], pl.FP32] = pl.assemble(out, y, [0])
            return out2

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64], pl.FP32], out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
            out2: pl.Tensor[[64], pl.FP32] = self.main_incore_0(x, out)
            return out2

    ir.assert_structural_equal(passes.outline_incore_scopes()(_ssa(Before)), Expected)


def test_scope_in_loop_with_scalar_live_in_and_two_live_outs():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64], pl.FP32], s: pl.Scalar[pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            for i in pl.range(2):
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
                    a: pl.Tensor[[64], pl.FP32] = pl.mul(x, s)
                    b: pl.Tensor[[64], pl.FP32] = pl.add(a, x)
                c: pl.Tensor[[64], pl.FP32] = pl.add(a, b)
            return x

    after = passes.outline_incore_scopes()(_ssa(Before))
    kernel = after["scale"]
    assert kernel.func_type is pl.FunctionType.InCore
    assert [p.name_hint for p in kernel.params] == ["x", "s"]
    assert len(kernel.return_types) == 2
    loop = after["main"].body.stmts[0]
    first = loop.body.stmts[0]
    assert first.value.op.name == "scale" and isinstance(first.var.type, ir.TupleType)
    assert [type(s.value).__name__ for s in loop.body.stmts[1:3]] == ["TupleGetItem", "TupleGetItem"]
    assert not ir.verifier.verify_property("SplitIncoreOrch", after)


def test_user_written_incore_functions_are_kept():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            y: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
            return y

    assert passes.outline_incore_scopes()(P) is P
