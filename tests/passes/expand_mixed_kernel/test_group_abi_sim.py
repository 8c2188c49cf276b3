"""Hand-written Groups whose members were declared with different signatures run after ABI
normalization on both simulators and match numpy (the normalization must not change behaviour):
one Group with its own members, and two Groups sharing the members (private adapter pairs)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.ir.enums import FunctionType
from pypto.runtime import RunConfig, run

SIMS = pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])


@pl.program
class Handwritten:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16]):
        imp: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="c2v", peer_func="vec")
        pl.system.aic_initialize_pipe(imp, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)
        a_mat: pl.Tile[[16, 32], pl.FP16, pl.Mem.Mat] = pl.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
        b_mat: pl.Tile[[32, 16], pl.FP16, pl.Mem.Mat] = pl.load(b, [0, 0], [32, 16], target_memory=pl.Mem.Mat)
        left: pl.Tile[[16, 32], pl.FP16, pl.Mem.Left] = pl.move(a_mat, target_memory=pl.Mem.Left)
        right: pl.Tile[[32, 16], pl.FP16, pl.Mem.Right] = pl.move(b_mat, target_memory=pl.Mem.Right)
        z: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.matmul(left, right)
        pl.tile.tpush_to_aiv(z, split=0)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        buf: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="c2v", size=2048)
        pl.system.aiv_initialize_pipe(buf, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
        e: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.exp(t)
        out = pl.store(e, [0, 0], out)
        pl.system.tfree_to_aic(t)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def g(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube(a, b)
        r = self.vec(out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        r = self.g(a, b, out)
        return r


@pl.program
class TwoGroups:
    """Two Groups launch the same members with different Group signatures: each gets its own adapters."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16]):
        imp: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="c2v", peer_func="vec")
        pl.system.aic_initialize_pipe(imp, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)
        a_mat: pl.Tile[[16, 32], pl.FP16, pl.Mem.Mat] = pl.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
        b_mat: pl.Tile[[32, 16], pl.FP16, pl.Mem.Mat] = pl.load(b, [0, 0], [32, 16], target_memory=pl.Mem.Mat)
        left: pl.Tile[[16, 32], pl.FP16, pl.Mem.Left] = pl.move(a_mat, target_memory=pl.Mem.Left)
        right: pl.Tile[[32, 16], pl.FP16, pl.Mem.Right] = pl.move(b_mat, target_memory=pl.Mem.Right)
        z: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.matmul(left, right)
        pl.tile.tpush_to_aiv(z, split=0)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        buf: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="c2v", size=2048)
        pl.system.aiv_initialize_pipe(buf, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
        e: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.exp(t)
        out = pl.store(e, [0, 0], out)
        pl.system.tfree_to_aic(t)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def g1(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16],
           out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube(a, b)
        r = self.vec(out)
        return r

    @pl.function(type=pl.FunctionType.Group)
    def g2(self, out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], b: pl.Tensor[[32, 16], pl.FP16],
           a: pl.Tensor[[16, 32], pl.FP16]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube(a, b)
        r = self.vec(out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16],
             out1: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             out2: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        r1 = self.g1(a, b, out1)
        r2 = self.g2(out2, b, a)
        return r2


def _inputs():
    rng = np.random.default_rng(5)
    return rng.uniform(-1, 1, (16, 32)).astype(np.float16), rng.uniform(-1, 1, (32, 16)).astype(np.float16)


def _expected(a, b):
    return np.exp(a.astype(np.float32) @ b.astype(np.float32))


@SIMS
def test_a_normalized_handwritten_group_matches_numpy(platform):
    a, b = _inputs()
    out = np.full((16, 16), np.nan, np.float32)
    compiled = run(Handwritten, a, b, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, _expected(a, b), rtol=1e-5, atol=1e-6)
    group = [p.name_hint for p in compiled.lowered["g"].params]
    assert group[:3] == ["a", "b", "out"]       # (a2a3 appends its __gm_pipe_buffer to all three alike)
    for name in ("cube", "vec"):
        assert [p.name_hint for p in compiled.lowered[name].params] == group


@SIMS
def test_two_groups_sharing_members_run_on_private_adapters(platform):
    from pypto.passes.context import PassContext
    from pypto.pypto_core import passes
    a, b = _inputs()
    with PassContext(PassContext.current().instruments, platform=platform.removesuffix("sim")):
        expanded = passes.expand_mixed_kernel()(passes.convert_to_ssa()(TwoGroups))
    for g, order in (("g1", ["a", "b", "out"]), ("g2", ["out", "b", "a"])):
        for side in ("aic", "aiv"):
            adapter = expanded.get_function(f"{g}_{side}_adapter")
            assert adapter.func_type is (FunctionType.AIC if side == "aic" else FunctionType.AIV)
            assert [p.name_hint for p in adapter.params] == order
    out1 = np.full((16, 16), np.nan, np.float32)
    out2 = np.full((16, 16), np.nan, np.float32)
    run(TwoGroups, a, b, out1, out2, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out1, _expected(a, b), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out2, _expected(a, b), rtol=1e-5, atol=1e-6)
