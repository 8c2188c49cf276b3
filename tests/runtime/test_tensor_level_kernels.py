"""Tensor-level kernels (the form algorithm developers write) through the Default pipeline and
the simulator, compared with numpy: seed 003's lowerings end to end."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import run

RNG = np.random.default_rng(7)


def _run(program, *args):
    """Run on a2a3sim; the result is the last (Out) argument, filled in place."""
    result = run(program)(*args)
    return args[-1] if result is None else result


@pl.program
class ElementwiseChain:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], y: pl.Tensor[[32, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            a: pl.Tensor[[32, 64], pl.FP32] = pl.mul(x, y)
            b: pl.Tensor[[32, 64], pl.FP32] = pl.sub(a, pl.exp(y))
            c: pl.Tensor[[32, 64], pl.FP32] = pl.maximum(pl.abs(b), x)
            d: pl.Tensor[[32, 64], pl.FP32] = pl.sqrt(pl.adds(c, 1.0))
            out = pl.assemble(out, pl.divs(d, 2.0), [0, 0])
        return out


def test_elementwise_chain():
    x, y = RNG.standard_normal((32, 64), dtype=np.float32), RNG.uniform(-1, 1, (32, 64)).astype(np.float32)
    got = _run(ElementwiseChain, x, y, np.zeros_like(x))
    want = np.sqrt(np.maximum(np.abs(x * y - np.exp(y)), x) + 1.0) / 2.0
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pl.program
class RowNormalize:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            s: pl.Tensor[[32, 1], pl.FP32] = pl.row_sum(x)
            out = pl.assemble(out, pl.row_expand_div(x, s), [0, 0])
        return out


def test_row_sum_then_row_expand_div():
    x = RNG.uniform(0.5, 2.0, (32, 64)).astype(np.float32)
    np.testing.assert_allclose(_run(RowNormalize, x, np.zeros_like(x)), x / x.sum(1, keepdims=True), rtol=1e-5)


@pl.program
class Transpose:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.assemble(out, pl.transpose(x, 0, 1), [0, 0])
        return out


def test_transpose():
    x = RNG.standard_normal((32, 64), dtype=np.float32)
    np.testing.assert_array_equal(_run(Transpose, x, np.zeros((64, 32), np.float32)), x.T)


@pl.program
class ScatterUpdate:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP32], idx: pl.Tensor[[2, 8], pl.INT32],
             src: pl.Tensor[[16, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.assemble(out, pl.scatter_update(x, -2, idx, src), [0, 0])
        return out


@pl.program
class ScatterUpdateFp16:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP16], idx: pl.Tensor[[2, 8], pl.INT32],
             src: pl.Tensor[[16, 32], pl.FP16],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP16]]) -> pl.Tensor[[32, 32], pl.FP16]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.assemble(out, pl.scatter_update(x, -2, idx, src), [0, 0])
        return out


@pytest.mark.parametrize("program, dtype", [(ScatterUpdate, np.float32), (ScatterUpdateFp16, np.float16)])
def test_scatter_update_matches_numpy_fancy_indexing(program, dtype):
    x = RNG.standard_normal((32, 32)).astype(dtype)
    idx = RNG.choice(32, 16, replace=False).astype(np.int32).reshape(2, 8)   # 16 of 32 rows are hit
    src = RNG.standard_normal((16, 32)).astype(dtype)
    want = x.copy()
    want[idx.ravel()] = src
    got = _run(program, x, idx, src, np.zeros_like(x))
    np.testing.assert_array_equal(got, want)
    untouched = np.setdiff1d(np.arange(32), idx.ravel())
    np.testing.assert_array_equal(got[untouched], x[untouched])        # rows no index names keep the input


@pl.program
class PagedGather:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, pool: pl.Tensor[[128, 32], pl.FP32], ids: pl.Tensor[[16], pl.INT32],
             table: pl.Tensor[[8], pl.INT32],
             out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            g: pl.Tensor[[16, 32], pl.FP32] = pl.paged_gather(pool, ids, table, 16, 32, 16, space=pl.Mem.Vec)
            out = pl.assemble(out, pl.muls(g, 2.0), [0, 0])
        return out


def test_paged_gather_with_a_random_block_table():
    pool = RNG.standard_normal((128, 32), dtype=np.float32)
    table = RNG.permutation(8).astype(np.int32)
    ids = RNG.choice(128, 16, replace=False).astype(np.int32)
    phys = table[ids // 16] * 16 + ids % 16
    np.testing.assert_array_equal(_run(PagedGather, pool, ids, table, np.zeros((16, 32), np.float32)), 2 * pool[phys])


@pl.program
class SpmdFor:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[128, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        for i in pl.spmd(4):
            t: pl.Tensor[[32, 64], pl.FP32] = pl.slice(x, [32, 64], [i * 32, 0])
            out = pl.assemble(out, pl.exp(t), [i * 32, 0])
        return out


@pl.program
class SpmdWith:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[128, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        with pl.spmd(4, sync_start=True):
            with pl.at(level=pl.Level.CORE_GROUP):
                b: pl.Scalar[pl.INDEX] = pl.tile.get_block_idx()
                n: pl.Scalar[pl.INDEX] = pl.tile.get_block_num()
                rows: pl.Scalar[pl.INDEX] = 128 // n
                t: pl.Tensor[[32, 64], pl.FP32] = pl.slice(x, [32, 64], [b * rows, 0])
                out = pl.assemble(out, pl.adds(t, 1.0), [b * rows, 0])
        return out


def test_spmd_for_form_runs_four_blocks():
    x = RNG.standard_normal((128, 64), dtype=np.float32)
    np.testing.assert_allclose(_run(SpmdFor, x, np.zeros_like(x)), np.exp(x), rtol=1e-6)


def test_spmd_with_form_reads_block_index_and_count():
    x = RNG.standard_normal((128, 64), dtype=np.float32)
    np.testing.assert_array_equal(_run(SpmdWith, x, np.zeros_like(x)), x + 1)


@pl.program
class CallInLoop:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, t: pl.Tensor[[32, 64], pl.FP32]) -> pl.Tensor[[32, 64], pl.FP32]:
        y: pl.Tensor[[32, 64], pl.FP32] = pl.add(pl.mul(t, t), t)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[128, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        for i in pl.range(4):
            t: pl.Tensor[[32, 64], pl.FP32] = pl.slice(x, [32, 64], [i * 32, 0])
            y: pl.Tensor[[32, 64], pl.FP32] = self.scale(t)
            out = pl.assemble(out, y, [i * 32, 0])
        return out


def test_call_site_inside_an_orchestration_loop():
    x = RNG.standard_normal((128, 64), dtype=np.float32)
    compiled = run(CallInLoop)
    loop = [s for s in compiled.lowered["main"].body.stmts if type(s).__name__ == "ForStmt"][0]
    call = next(s.value for s in loop.body.stmts if type(s).__name__ == "AssignStmt" and s.value.is_function_call())
    out_buffer = next(s.value for s in loop.body.stmts if type(s).__name__ == "AssignStmt" and s.var is call.args[-1])
    # the new Out buffer is bound per iteration: a tensor.create, which OptimizeOrchTensors (pattern 2)
    # turns into the window of `out` the result is assembled into
    assert out_buffer.op.name in ("tensor.create", "tensor.slice")
    got = np.zeros_like(x)
    compiled(x, got)
    np.testing.assert_allclose(got, x * x + x, rtol=1e-6)


@pl.program
class Cluster:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], w: pl.Tensor[[64, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        with pl.cluster():
            with pl.at(level=pl.Level.CORE_GROUP):
                out = pl.assemble(out, pl.matmul(x, w), [0, 0])
        return out


def test_cluster_launches_its_kernels_as_one_group():
    x, w = RNG.standard_normal((64, 64), dtype=np.float32), RNG.standard_normal((64, 64), dtype=np.float32)
    compiled = run(Cluster)
    assert compiled.lowered["main_cluster_0"].func_type is pl.FunctionType.Group
    got = np.zeros_like(x)
    compiled(x, w, got)
    np.testing.assert_allclose(got, x @ w, rtol=1e-4, atol=1e-4)


@pl.program
class ThreeD:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[2, 16, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[2, 16, 32], pl.FP32]]) -> pl.Tensor[[2, 16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            y: pl.Tensor[[2, 16, 32], pl.FP32] = pl.add(pl.exp(x), x)
            out = pl.assemble(out, y, [0, 0, 0])
        return out


def test_rank3_tensors_compute_on_flattened_2d_tiles():
    x = RNG.standard_normal((2, 16, 32), dtype=np.float32)
    compiled = run(ThreeD)
    kernel = compiled.lowered["main_incore_0"]
    computes = [s.value for s in kernel.body.stmts if type(s).__name__ == "AssignStmt"
                and s.value.op.name in ("tile.exp", "tile.add")]
    assert [c.type.rank for c in computes] == [2, 2]
    got = np.zeros_like(x)
    compiled(x, got)
    np.testing.assert_allclose(got, np.exp(x) + x, rtol=1e-6)


@pl.program
class AssembleLoop:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 32], pl.FP32]) -> pl.Tensor[[64, 32], pl.FP32]:
        buf: pl.Tensor[[64, 32], pl.FP32] = pl.tensor.create([64, 32], dtype=pl.FP32)
        for i, (acc,) in pl.range(4, init_values=(buf,)):
            t: pl.Tensor[[16, 32], pl.FP32] = pl.slice(x, [16, 32], [i * 16, 0])
            acc2: pl.Tensor[[64, 32], pl.FP32] = pl.assemble(acc, pl.exp(t), [i * 16, 0])
            r = pl.yield_(acc2)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 32], pl.FP32]) -> pl.Tensor[[64, 32], pl.FP32]:
        y: pl.Tensor[[64, 32], pl.FP32] = self.k(x)
        return y


def test_assemble_loop_kernel_stores_its_pieces():
    x = RNG.standard_normal((64, 32), dtype=np.float32)
    np.testing.assert_allclose(run(AssembleLoop)(x), np.exp(x), rtol=1e-6)


@pl.program
class PagedGatherMatmul:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, q: pl.Tensor[[16, 32], pl.FP32], pool: pl.Tensor[[128, 32], pl.FP32],
             ids: pl.Tensor[[16], pl.INT32], table: pl.Tensor[[8], pl.INT32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            kv: pl.Tensor[[16, 32], pl.FP32] = pl.paged_gather(pool, ids, table, 16, 32, 16)   # into L1 (Mat)
            out = pl.assemble(out, pl.matmul(q, kv, b_trans=True), [0, 0])
        return out


def test_paged_gather_into_l1_feeds_the_matmul_directly():
    q, pool = RNG.standard_normal((16, 32), dtype=np.float32), RNG.standard_normal((128, 32), dtype=np.float32)
    table = RNG.permutation(8).astype(np.int32)
    ids = RNG.choice(128, 16, replace=False).astype(np.int32)
    phys = table[ids // 16] * 16 + ids % 16
    compiled = run(PagedGatherMatmul)
    assert compiled.lowered["main_incore_0"].func_type is pl.FunctionType.AIC    # no UB staging: cube only
    got = np.zeros((16, 16), np.float32)
    compiled(q, pool, ids, table, got)
    np.testing.assert_allclose(got, q @ pool[phys].T, rtol=1e-5, atol=1e-5)


@pl.program
class GatherRowTwoRuns:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, q: pl.Tensor[[16, 64], pl.FP32], pool: pl.Tensor[[256, 64], pl.FP32], b0: pl.Scalar[pl.INDEX],
             b1: pl.Scalar[pl.INDEX], r1: pl.Scalar[pl.INDEX],
             out: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            kv: pl.Tensor[[128, 64], pl.FP32] = pl.create_l1([128, 64], pl.FP32)
            kv1: pl.Tensor[[128, 64], pl.FP32] = pl.gather_row(kv, pool, [0, 0], [b0, 0], [128, 64],
                                                                valid_shape=[r1, 64])
            kv2: pl.Tensor[[128, 64], pl.FP32] = pl.gather_row(kv1, pool, [r1, 0], [b1, 0], [128, 64],
                                                                valid_shape=[128 - r1, 64])
            out = pl.assemble(out, pl.matmul(q, kv2, b_trans=True), [0, 0])
        return out


@pytest.mark.parametrize("r1", [40, 1])
def test_gather_row_two_run_split_with_a_runtime_length(r1):
    q, pool = RNG.standard_normal((16, 64), dtype=np.float32), RNG.standard_normal((256, 64), dtype=np.float32)
    got = np.zeros((16, 128), np.float32)
    run(GatherRowTwoRuns)(q, pool, 10, 100, r1, got)
    kv = np.concatenate([pool[10:10 + r1], pool[100:100 + 128 - r1]])
    np.testing.assert_allclose(got, q @ kv.T, rtol=1e-5, atol=1e-5)


@pl.jit
def jit_blocks(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.spmd(4):
        t = pl.slice(x, [32, 64], [i * 32, 0])
        out = pl.assemble(out, pl.exp(t), [i * 32, 0])
    return out


def test_spmd_for_form_in_a_jit_kernel():
    from pypto.runtime import RunConfig
    x = RNG.standard_normal((128, 64), dtype=np.float32)
    got = np.zeros_like(x)
    jit_blocks(x, got, config=RunConfig())
    np.testing.assert_allclose(got, np.exp(x), rtol=1e-6)


@pl.program
class TileScatterUpdate:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 32], pl.FP32], idx: pl.Tensor[[2, 8], pl.INT32], src: pl.Tensor[[16, 32], pl.FP32],
          out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        xt: pl.Tile[[32, 32], pl.FP32] = pl.load(x, [0, 0], [32, 32])
        it: pl.Tile[[2, 8], pl.INT32] = pl.load(idx, [0, 0], [2, 8])
        st: pl.Tile[[16, 32], pl.FP32] = pl.load(src, [0, 0], [16, 32])
        y: pl.Tile[[32, 32], pl.FP32] = pl.tile.scatter_update(xt, -2, it, st)
        r: pl.Tensor[[32, 32], pl.FP32] = pl.store(y, [0, 0], out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP32], idx: pl.Tensor[[2, 8], pl.INT32], src: pl.Tensor[[16, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        r: pl.Tensor[[32, 32], pl.FP32] = self.k(x, idx, src, out)
        return r


def test_tile_level_scatter_update_is_lowered_the_same_way():
    x, src = RNG.standard_normal((32, 32), dtype=np.float32), RNG.standard_normal((16, 32), dtype=np.float32)
    idx = RNG.choice(32, 16, replace=False).astype(np.int32).reshape(2, 8)
    compiled = run(TileScatterUpdate)
    names = {s.value.op.name for s in compiled.lowered["k"].body.stmts if type(s).__name__ == "AssignStmt"}
    assert "tile.scatter_update" not in names and {"tile.scatter", "tile.sel"} <= names
    want = x.copy()
    want[idx.ravel()] = src
    got = np.zeros_like(x)
    compiled(x, idx, src, got)
    np.testing.assert_array_equal(got, want)


@pl.program
class Transpose3D:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[3, 16, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[3, 32, 16], pl.FP32]]) -> pl.Tensor[[3, 32, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.assemble(out, pl.transpose(x, 1, 2), [0, 0, 0])
        return out


def test_rank3_transpose_runs_page_by_page():
    x = RNG.standard_normal((3, 16, 32), dtype=np.float32)
    np.testing.assert_array_equal(_run(Transpose3D, x, np.zeros((3, 32, 16), np.float32)), x.transpose(0, 2, 1))
