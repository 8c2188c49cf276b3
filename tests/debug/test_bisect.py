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


@pl.jit
def scaled_matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="smm"):
        s = pl.cast(pl.mul(pl.cast(a, pl.FP32), 2.0), pl.FP16)          # AIV, then a vector -> cube pipe
        c = pl.assemble(c, pl.matmul(s, b, out_dtype=pl.FP32), [0, 0])
    return c


@pl.jit
def split_rows(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
        z = pl.matmul(a, b, out_dtype=pl.FP32)
        c = pl.assemble(c, pl.relu(pl.mul(z, 2.0)), [0, 0])        # each AIV lane on half the rows
    return c


@pl.program
class RoundTrip:
    """Vector -> cube -> vector: pipes both ways."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        v2c: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="v2c_buf", size=2048)
        c2v: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="c2v_buf", peer_func="vec")
        pl.system.aic_initialize_pipe(c2v, v2c, dir_mask=3, slot_size=1024, slot_num=2)
        m: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tile.tpop_from_aiv(split=0)
        pl.tile.tpush_to_aiv(m, split=0)
        pl.system.tfree_to_aiv(m)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, x: pl.Tensor[[16, 16], pl.FP32],
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c2v: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="c2v_buf", size=2048)
        v2c: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="v2c_buf", peer_func="cube")
        pl.system.aiv_initialize_pipe(c2v, v2c, dir_mask=3, slot_size=1024, slot_num=2)
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [16, 16])
        pl.tile.tpush_to_aic(t, split=0)
        u: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
        e: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.mul(u, 2.0)
        out = pl.store(e, [0, 0], out)
        pl.system.tfree_to_aic(u)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def group(self, x: pl.Tensor[[16, 16], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube(x, out)
        r = self.vec(x, out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        r = self.group(x, out)
        return r


@pl.program
class BothPopFirst:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        v2c: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="v2c_buf", size=2048)
        c2v: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="c2v_buf", peer_func="vec")
        pl.system.aic_initialize_pipe(c2v, v2c, dir_mask=3, slot_size=1024, slot_num=2)
        m: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tile.tpop_from_aiv(split=0)
        pl.tile.tpush_to_aiv(m, split=0)
        pl.system.tfree_to_aiv(m)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, x: pl.Tensor[[16, 16], pl.FP32],
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c2v: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="c2v_buf", size=2048)
        v2c: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="v2c_buf", peer_func="cube")
        pl.system.aiv_initialize_pipe(c2v, v2c, dir_mask=3, slot_size=1024, slot_num=2)
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [16, 16])
        u: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)   # waits for the cube,
        pl.tile.tpush_to_aic(t, split=0)                                                # which waits for this
        e: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.mul(u, 2.0)
        out = pl.store(e, [0, 0], out)
        pl.system.tfree_to_aic(u)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def group(self, x: pl.Tensor[[16, 16], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube(x, out)
        r = self.vec(x, out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        r = self.group(x, out)
        return r


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


def test_a_vector_to_cube_pipe_runs_the_vector_side_first_and_a_wrong_pass_is_found():
    rng = np.random.default_rng(4)
    a = rng.uniform(-1, 1, (M, K * 2)).astype(np.float16)
    b = rng.uniform(-1, 1, (K * 2, N)).astype(np.float16)
    args = [a, b, np.zeros((M, N), np.float32)]
    assert "tile.tpush_to_aic" in scaled_matmul.compile(*args).lowered.as_python()
    report = bisect(scaled_matmul, args, rtol=1e-3, atol=1e-3)
    assert report.culprit is None, str(report)
    assert all(s.status != "unchecked" for s in report.stages)
    broken = bisect(scaled_matmul, args, rtol=1e-3, atol=1e-3, pipeline=_broken("ExpandMixedKernel"))
    assert broken.culprit == "ExpandMixedKernel"


@pytest.mark.parametrize("rows", [16, 15])
def test_split_vector_lanes_are_checked_and_a_wrong_split_is_found(rows):
    rng = np.random.default_rng(5)
    a = rng.uniform(-1, 1, (rows, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, 16)).astype(np.float16)
    args = [a, b, np.zeros((rows, 16), np.float32)]
    report = bisect(split_rows, args, rtol=1e-3, atol=1e-3)
    assert report.culprit is None, str(report)
    # LowerAutoVectorSplit leaves one mixed kernel in lane code (shard / gather boundaries need both
    # lanes at once): the interpreter says so, and every stage from ExpandMixedKernel on is checked again
    unchecked = [s for s in report.stages if s.status == "unchecked"]
    assert [s.name for s in unchecked] == ["LowerAutoVectorSplit"], str(report)
    assert "lane code" in unchecked[0].detail
    broken = bisect(split_rows, args, rtol=1e-3, atol=1e-3, pipeline=_broken("SplitVectorKernel"))
    assert broken.culprit == "SplitVectorKernel"


def test_pipes_both_ways_run_side_by_side():
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    report = bisect(RoundTrip, [x, np.zeros_like(x)], expected={"out": 2 * x})
    assert report.culprit is None, str(report)
    assert all(s.status != "unchecked" for s in report.stages), str(report)


def test_a_pipe_protocol_that_deadlocks_is_unchecked_and_the_simulator_names_it(monkeypatch):
    import pypto.debug.reference_run as rr
    monkeypatch.setattr(rr, "_PIPE_WAIT_SECONDS", 0.2)
    x = np.ones((16, 16), np.float32)
    report = bisect(BothPopFirst, [x, np.zeros_like(x)], expected={"out": 2 * x})
    front = report.stages[0]
    assert front.status == "unchecked" and "waits for a push that does not come" in front.detail
    assert report.culprit == SIMULATOR_STAGE and "deadlock" in report.stages[-1].detail


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
