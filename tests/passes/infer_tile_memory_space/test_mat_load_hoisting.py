"""InferTileMemorySpace, loop-invariant Mat residency: a stationary GM → Mat load (and its Mat → Right
staging) moves before its loop only when no write of the kernel can reach its bytes; the moved kernel
still computes x @ w."""

import numpy as np

import pypto.language as pl
from pypto import ir
from pypto.ir.visitor import collect
from pypto.pypto_core import passes
from pypto.runtime import RunConfig, run

M = pl.Mem


@pl.program
class Before:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, src: pl.Tensor[[32, 32], pl.FP32],
             dst: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        t: pl.Tile[[32, 32], pl.FP32, M.Vec] = pl.tile.load(src, [0, 0], [32, 32], [32, 32])
        r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(t, [0, 0], dst)
        return r

    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, x: pl.Tensor[[128, 32], pl.FP32], w: pl.Tensor[[32, 32], pl.FP32],
           out: pl.Out[pl.Tensor[[128, 32], pl.FP32]]) -> pl.Tensor[[128, 32], pl.FP32]:
        for i, (acc,) in pl.range(0, 128, 32, init_values=(out,)):
            xa: pl.Tile[[32, 32], pl.FP32, M.Mat] = pl.tile.load(x, [i, 0], [32, 32], [32, 32], target_memory=M.Mat)
            wa: pl.Tile[[32, 32], pl.FP32, M.Mat] = pl.tile.load(w, [0, 0], [32, 32], [32, 32], target_memory=M.Mat)
            xl: pl.Tile[[32, 32], pl.FP32, M.Left] = pl.tile.move(xa, target_memory=M.Left)
            wr: pl.Tile[[32, 32], pl.FP32, M.Right] = pl.tile.move(wa, target_memory=M.Right)
            c: pl.Tile[[32, 32], pl.FP32, M.Acc] = pl.tile.matmul(xl, wr)
            r: pl.Tensor[[128, 32], pl.FP32] = pl.tile.store(c, [i, 0], acc)
            res = pl.yield_(r)
        return res

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[128, 32], pl.FP32], w_host: pl.Tensor[[32, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[128, 32], pl.FP32]]) -> pl.Tensor[[128, 32], pl.FP32]:
        w: pl.Tensor[[32, 32], pl.FP32] = pl.tensor.create([32, 32], dtype=pl.FP32)
        w2: pl.Tensor[[32, 32], pl.FP32] = self.fill(w_host, w)
        y: pl.Tensor[[128, 32], pl.FP32] = self.mm(x, w, out)
        return y


@pl.program
class Expected:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, src: pl.Tensor[[32, 32], pl.FP32],
             dst: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        t: pl.Tile[[32, 32], pl.FP32, M.Vec] = pl.tile.load(src, [0, 0], [32, 32], [32, 32])
        r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(t, [0, 0], dst)
        return r

    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, x: pl.Tensor[[128, 32], pl.FP32], w: pl.Tensor[[32, 32], pl.FP32],
           out: pl.Out[pl.Tensor[[128, 32], pl.FP32]]) -> pl.Tensor[[128, 32], pl.FP32]:
        wa: pl.Tile[[32, 32], pl.FP32, M.Mat] = pl.tile.load(w, [0, 0], [32, 32], [32, 32], target_memory=M.Mat)
        wr: pl.Tile[[32, 32], pl.FP32, M.Right] = pl.tile.move(wa, target_memory=M.Right)
        for i, (acc,) in pl.range(0, 128, 32, init_values=(out,)):
            xa: pl.Tile[[32, 32], pl.FP32, M.Mat] = pl.tile.load(x, [i, 0], [32, 32], [32, 32], target_memory=M.Mat)
            xl: pl.Tile[[32, 32], pl.FP32, M.Left] = pl.tile.move(xa, target_memory=M.Left)
            c: pl.Tile[[32, 32], pl.FP32, M.Acc] = pl.tile.matmul(xl, wr)
            r: pl.Tensor[[128, 32], pl.FP32] = pl.tile.store(c, [i, 0], acc)
            res = pl.yield_(r)
        return res

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[128, 32], pl.FP32], w_host: pl.Tensor[[32, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[128, 32], pl.FP32]]) -> pl.Tensor[[128, 32], pl.FP32]:
        w: pl.Tensor[[32, 32], pl.FP32] = pl.tensor.create([32, 32], dtype=pl.FP32)
        w2: pl.Tensor[[32, 32], pl.FP32] = self.fill(w_host, w)
        y: pl.Tensor[[128, 32], pl.FP32] = self.mm(x, w, out)
        return y


def _loads_in_loops(func) -> list:
    return [n for loop in collect(func.body, lambda n: isinstance(n, ir.ForStmt))
            for n in collect(loop.body, lambda n: isinstance(n, ir.Call) and getattr(n.op, "name", "") == "tile.load")]


def test_a_stationary_mat_load_of_created_storage_moves_before_the_loop():
    ir.assert_structural_equal(passes.infer_tile_memory_space()(Before), Expected)


def test_a_source_the_orchestration_got_from_outside_stays_in_the_loop():
    # w_host and out are both orchestration parameters: the user may pass one array for both.
    text = Before.as_python().replace("self.mm(x, w, out)", "self.mm(x, w_host, out)")
    after = passes.infer_tile_memory_space()(pl.parse(text))
    assert len(_loads_in_loops(after["mm"])) == 2


def test_a_window_that_moves_with_the_loop_stays_in_the_loop():
    text = Before.as_python().replace("pl.tile.load(w, [0, 0]", "pl.tile.load(w, [0, i // 32]")
    after = passes.infer_tile_memory_space()(pl.parse(text))
    assert len(_loads_in_loops(after["mm"])) == 2


def test_the_hoisted_kernel_still_computes_x_at_w_on_the_simulator():
    rng = np.random.default_rng(11)
    x = rng.uniform(-1, 1, (128, 32)).astype(np.float32)
    w = rng.uniform(-1, 1, (32, 32)).astype(np.float32)
    out = np.full((128, 32), np.nan, np.float32)
    run(Before, x, w, out, config=RunConfig(platform="a2a3sim"))
    np.testing.assert_allclose(out, x @ w, rtol=1e-5, atol=1e-5)


def test_a_source_that_is_a_producer_kernels_result_on_created_storage_is_hoisted_too():
    # mm reads w2, the result of fill storing into the created w: the same private storage.
    text = Before.as_python().replace("self.mm(x, w, out)", "self.mm(x, w2, out)")
    after = passes.infer_tile_memory_space()(pl.parse(text))
    assert len(_loads_in_loops(after["mm"])) == 1
    first = after["mm"].body.stmts[0]
    assert isinstance(first, ir.AssignStmt) and first.value.args[0] is after["mm"].params[1]
