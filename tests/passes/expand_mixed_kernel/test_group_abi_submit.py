"""Seed 004 phase 4 on members written as `pl.submit`: the widened Call keeps its submit mark, a
`pl.no_dep` position follows its argument to the Group parameter it binds (the widened argument list
is the Group's), and per-argument `arg_directions` written for the old list are dropped."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedError
from pypto.ir.expr import GlobalVar
from pypto.passes.analysis import calls_in
from tests.passes.expand_mixed_kernel.test_group_abi import _expand


@pl.program
class Before:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[16, 16], pl.FP32], step: pl.Scalar[pl.INDEX]):
        pass

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, dst: pl.Out[pl.Tensor[[16, 16], pl.FP32]], step: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        return dst

    @pl.function(type=pl.FunctionType.Group)
    def g(self, a: pl.Tensor[[16, 16], pl.FP32], dst: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
          step: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        (first,) = pl.submit(self.cube, a, step)
        r, second = pl.submit(self.vec, pl.no_dep(dst), step,
                              attrs={"arg_directions": [pl.adir.output_existing, pl.adir.scalar]})
        return r


@pl.program
class Expected:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[16, 16], pl.FP32], dst: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             step: pl.Scalar[pl.INDEX]):
        pass

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: pl.Tensor[[16, 16], pl.FP32], dst: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
            step: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        return dst

    @pl.function(type=pl.FunctionType.Group)
    def g(self, a: pl.Tensor[[16, 16], pl.FP32], dst: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
          step: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube(a, dst, step, attrs={"submit": True})
        first: pl.Scalar[pl.TASK_ID] = pl.system.task_id()
        r: pl.Tensor[[16, 16], pl.FP32] = self.vec(a, dst, step, attrs={"submit": True,
                                                                        "arg_direction_overrides": [1]})
        second: pl.Scalar[pl.TASK_ID] = pl.system.task_id()
        return r


@pytest.mark.parametrize("platform", ["a2a3", "a5"])
def test_submitted_members_keep_no_dep_on_the_group_param(platform):
    after = _expand(Before, platform)
    ir.assert_structural_equal(after.functions["g"], _expand(Expected, platform).functions["g"])
    vec_call = next(c for c in calls_in(after.functions["g"].body)
                    if isinstance(c.op, GlobalVar) and c.op.name == "vec")
    assert isinstance(vec_call, ir.Submit)
    assert vec_call.arg_directions == []                          # described the old two-argument list
    assert vec_call.attrs["arg_direction_overrides"] == [1]       # dst: Group parameter 1


def test_no_dep_on_an_argument_that_is_no_group_tensor_is_reported():
    @pl.program
    class Marked:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: pl.Tensor[[16, 16], pl.FP32]):
            pass

        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, step: pl.Scalar[pl.INDEX], dst: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) \
                -> pl.Tensor[[16, 16], pl.FP32]:
            return dst

        @pl.function(type=pl.FunctionType.Group)
        def g(self, a: pl.Tensor[[16, 16], pl.FP32],
              dst: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            self.cube(a)
            r = self.vec(4, dst, attrs={"arg_direction_overrides": [0]})      # a constant: nothing to follow
            return r

    with pytest.raises(UnsupportedError, match="argument 0 of member vec is marked pl.no_dep"):
        _expand(Marked)
