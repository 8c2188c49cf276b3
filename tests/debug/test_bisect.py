"""Pass-by-pass numeric bisection: with the Default pipeline every stage agrees; with a deliberately
wrong rewrite injected into one pass, bisect names that pass (and the tensor and the error)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.debug.bisect import SIMULATOR_STAGE, bisect
from pypto.debug.reference_run import NotRunnable, run_reference
from pypto.ir.expr import ConstFloat
from pypto.ir.visitor import IRMutator
from pypto.passes import PassManager
from pypto.passes.base import Pass

M, N, K = 32, 64, 32


@pl.jit
def scale_exp(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:] = pl.exp(pl.mul(x, 2.0))          # tensor level: converted to tile ops by the pipeline
    return y


@pl.jit
def matmul_relu(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm_relu"):
        c = pl.assemble(c, pl.relu(pl.matmul(a, b, out_dtype=pl.FP32)), [0, 0])
    return c


class _TwoBecomesThree(IRMutator):
    """The wrong rewrite: every literal 2.0 becomes 3.0."""

    def mutate_const_float(self, c):
        return ConstFloat(3.0, c.dtype, c.span) if c.value == 2.0 else c


def _broken(name: str):
    passes = PassManager().passes
    real = next(p for p in passes if p.name == name)
    wrong = Pass(name, lambda prog: _TwoBecomesThree().mutate(real.transform(prog)), real.properties)
    return tuple(wrong if p.name == name else p for p in passes)


def _x():
    return np.random.default_rng(0).uniform(-1, 1, (M, N)).astype(np.float32)


def test_every_stage_of_the_default_pipeline_agrees():
    x = _x()
    report = bisect(scale_exp, [x, np.zeros_like(x)])
    assert report.culprit is None, str(report)
    checked = [s.name for s in report.stages if s.status == "ok"]
    assert {"frontend", "ConvertTensorToTileOps", "AllocateMemoryAddr", SIMULATOR_STAGE} <= set(checked)


@pytest.mark.parametrize("victim", ["ConvertTensorToTileOps", "InferTileMemorySpace", "AllocateMemoryAddr"])
def test_a_wrong_rewrite_is_blamed_on_the_pass_that_made_it(victim):
    x = _x()
    report = bisect(scale_exp, [x, np.zeros_like(x)], pipeline=_broken(victim))
    assert report.culprit == victim, str(report)
    bad = report.stages[-1]
    assert bad.status == "differs" and bad.tensor == "y" and bad.max_error > 0.1
    before = [s.status for s in report.stages[:-1]]
    assert "differs" not in before
    assert f"first stage that disagrees: {victim}" in str(report)


def test_expected_outputs_are_the_reference_when_given():
    x = _x()
    right = bisect(scale_exp, [x, np.zeros_like(x)], expected={"y": np.exp(2 * x)})
    assert right.culprit is None and right.stages[0].detail == "compared with the expected outputs given"
    wrong = bisect(scale_exp, [x, np.zeros_like(x)], expected={"y": np.exp(2 * x) + 1})
    assert wrong.culprit == "frontend"             # the program as written already disagrees


def test_mixed_kernel_stages_run_through_the_cube_to_vector_pipe():
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    report = bisect(matmul_relu, [a, b, np.zeros((M, N), np.float32)], rtol=1e-3, atol=1e-3)
    assert report.culprit is None, str(report)
    assert any(s.name == "ExpandMixedKernel" and s.status == "ok" for s in report.stages)


def test_the_reference_interpreter_computes_the_frontend_program():
    x = _x()
    program = scale_exp.compile(x, np.zeros_like(x)).program
    out = run_reference(program, [x, np.zeros_like(x)])
    np.testing.assert_allclose(out["y"], np.exp(2 * x), rtol=1e-6)
    with pytest.raises(NotRunnable, match="takes 2 arguments"):
        run_reference(program, [x])



def test_validate_ir_raises_naming_the_pass():
    from pypto.debug.bisect import validate_ir
    from pypto.errors import ValueCheckError
    x = _x()
    assert validate_ir(scale_exp, [x, np.zeros_like(x)], rtol=1e-5, atol=1e-5).culprit is None
    with pytest.raises(ValueCheckError, match="the IR after InferTileMemorySpace computes a different result"):
        validate_ir(scale_exp, [x, np.zeros_like(x)], pipeline=_broken("InferTileMemorySpace"))
