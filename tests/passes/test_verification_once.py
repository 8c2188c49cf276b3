"""BASIC verification inside a pipeline verifies a property when a pass produces it, not again
before every pass that requires it (the reference pipeline's rule); a pass run on its own still
checks everything it requires."""

import collections

import pytest

import pypto.language as pl
from pypto.errors import InternalError
from pypto.ir import Function, FunctionType, Program, SeqStmts
from pypto.passes import OptimizationStrategy, PassContext, PassManager, VerificationLevel
from pypto.ir.verifier import verify_property
from pypto.passes import VerificationInstrument, VerificationMode


@pl.program
class _Add:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        y: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        y: pl.Tensor[[64], pl.FP32] = self.k(x)
        return y


def test_a_pipeline_verifies_each_property_once_per_production():
    counts = collections.Counter()

    def counting(name, program):
        counts[name] += 1
        return verify_property(name, program)

    pm = PassManager.get_strategy(OptimizationStrategy.Default)
    checks = VerificationInstrument(VerificationMode.BEFORE_AND_AFTER, verify=counting)
    with PassContext([checks], verification_level=VerificationLevel.BASIC):
        pm.run_passes(_Add)
    producers = collections.Counter(prop.value for p in pm.passes for prop in p.properties.produced)
    invalidations = collections.Counter(prop.value for p in pm.passes for prop in p.properties.invalidated)
    for name, n in counts.items():
        # at most: once after each producing pass, plus once before a requiring pass per invalidation / start
        assert n <= producers[name] + invalidations[name] + 1, (name, n)
    assert counts["SSAForm"] >= 1


def test_a_pass_run_alone_still_checks_what_it_requires():
    from pypto.ir import AssignStmt, ConstInt, ReturnStmt, ScalarType, Var
    from pypto.ir.dtypes import INDEX
    from pypto.pypto_core import passes
    x = Var("x", ScalarType(INDEX))
    body = SeqStmts([AssignStmt(x, ConstInt(1)), AssignStmt(x, ConstInt(2)), ReturnStmt([x])])   # not SSA
    not_ssa = Program([Function("f", [], [ScalarType(INDEX)], body, FunctionType.InCore)], "P")
    with PassContext(verification_level=VerificationLevel.BASIC):
        with pytest.raises(InternalError, match="SSAForm"):
            passes.convert_tensor_to_tile_ops()(not_ssa)
