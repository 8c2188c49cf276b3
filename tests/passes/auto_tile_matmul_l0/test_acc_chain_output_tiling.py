"""AutoTileMatmulL0: M / N tiling of a straight-line accumulation chain `t = matmul(a0, b0);
c = matmul_acc(t, a1, b1)` whose [M, N] accumulator exceeds L0C (a2a3 128 KiB, a5 256 KiB): every
[m, n] block runs the first matmul's K loop (fresh accumulator) and then the matmul_acc's K loop
carrying that block on, so no [M, N] Acc tile exists."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.passes import PassContext
from pypto.pypto_core import passes
from pypto.runtime import RunConfig, run
from pypto.runtime.compile import compile_program
from tests.helpers import op_calls


def _chain(M: int, K0: int, K1: int, N: int):
    return pl.parse(f"""
import pypto.language as pl

@pl.program
class AccChain:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a0: pl.Tensor[[{M}, {K0}], pl.FP32], b0: pl.Tensor[[{K0}, {N}], pl.FP32],
             a1: pl.Tensor[[{M}, {K1}], pl.FP32], b1: pl.Tensor[[{K1}, {N}], pl.FP32],
             c: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]) -> pl.Tensor[[{M}, {N}], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.matmul(a0, b0)
            c[:] = pl.matmul_acc(t, a1, b1)
        return c
""")


@pytest.mark.parametrize("platform, l0c", [("a2a3sim", 128 * 1024), ("a5sim", 256 * 1024)])
def test_an_oversized_matmul_acc_chain_is_tiled_block_by_block_and_matches_numpy(platform, l0c):
    M, K0, K1, N = 512, 32, 48, 256                   # the [512, 256] FP32 accumulator is 512 KiB
    program = _chain(M, K0, K1, N)
    kernel = compile_program(program, platform=platform).lowered["main_incore_0"]
    accs = op_calls(kernel, "tile.matmul_acc")
    assert max(x.type.nbytes() for x in accs) <= l0c
    assert {len(x.args) for x in accs} == {3, 4}      # the second link carries the block on (no init_cond)
    assert not op_calls(kernel, "tile.matmul")
    rng = np.random.default_rng(51)
    a0, b0 = rng.standard_normal((M, K0), dtype=np.float32), rng.standard_normal((K0, N), dtype=np.float32)
    a1, b1 = rng.standard_normal((M, K1), dtype=np.float32), rng.standard_normal((K1, N), dtype=np.float32)
    c = np.zeros((M, N), np.float32)
    run(program, a0, b0, a1, b1, c, config=RunConfig(platform=platform))
    np.testing.assert_allclose(c, a0 @ b0 + a1 @ b1, rtol=1e-4, atol=1e-3)


@pl.program
class LoadedAccumulator:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, c0: pl.Tensor[[512, 256], pl.FP32], a: pl.Tensor[[512, 32], pl.FP32],
          b: pl.Tensor[[32, 256], pl.FP32],
          out: pl.Out[pl.Tensor[[512, 256], pl.FP32]]) -> pl.Tensor[[512, 256], pl.FP32]:
        acc_v: pl.Tile[[512, 256], pl.FP32, pl.Mem.Vec] = pl.load(c0, [0, 0], [512, 256])
        acc: pl.Tile[[512, 256], pl.FP32, pl.Mem.Acc] = pl.move(acc_v, target_memory=pl.Mem.Acc)
        a_mat: pl.Tile[[512, 32], pl.FP32, pl.Mem.Mat] = pl.load(a, [0, 0], [512, 32], target_memory=pl.Mem.Mat)
        b_mat: pl.Tile[[32, 256], pl.FP32, pl.Mem.Mat] = pl.load(b, [0, 0], [32, 256], target_memory=pl.Mem.Mat)
        l: pl.Tile[[512, 32], pl.FP32, pl.Mem.Left] = pl.move(a_mat, target_memory=pl.Mem.Left)
        r: pl.Tile[[32, 256], pl.FP32, pl.Mem.Right] = pl.move(b_mat, target_memory=pl.Mem.Right)
        t: pl.Tile[[512, 256], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc, l, r)
        out2: pl.Tensor[[512, 256], pl.FP32] = pl.store(t, [0, 0], out)
        return out2


def test_a_matmul_acc_on_an_accumulator_from_elsewhere_is_left_as_written():
    with PassContext(platform="a2a3"):
        assert passes.auto_tile_matmul_l0()(LoadedAccumulator) is LoadedAccumulator   # no GM / Vec path into Acc
