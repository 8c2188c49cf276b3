"""M / N output tiling of a split-K chain (`acc = matmul(a0, b0); for k: acc = matmul_acc(acc, ak, bk)`):
when the [M, N] accumulator overflows L0C, every [m, n] output block re-runs the whole chain on narrowed
panel loads and is stored to its window — no [M, N] Acc tile is ever made. The blocks' K loops hand their
accumulator on in place (loop carries across loops share one Acc buffer)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.enums import MemorySpace
from pypto.ir.visitor import collect
from pypto.runtime import RunConfig, run
from pypto.runtime.compile import compile_program


@pl.program
class SplitK:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[256, 512], pl.FP32], b: pl.Tensor[[512, 256], pl.FP32],
             c: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            acc: pl.Tensor[[256, 256], pl.FP32] = pl.matmul(pl.slice(a, [256, 128], [0, 0]),
                                                            pl.slice(b, [128, 256], [0, 0]))
            for k in pl.range(128, 512, 128):
                acc = pl.matmul_acc(acc, pl.slice(a, [256, 128], [0, k]), pl.slice(b, [128, 256], [k, 0]))
            c[:] = acc
        return c


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_split_k_chain_is_tiled_per_output_block_and_matches_numpy(platform):
    kernel = compile_program(SplitK, platform=platform).lowered["main_incore_0"]
    acc = [c.type.nbytes() for c in collect(kernel.body, lambda n: isinstance(n, ir.Call) and not n.is_function_call())
           if isinstance(c.type, ir.TileType) and c.type.memory_space is MemorySpace.Acc]
    # a2a3: [256, 256] FP32 (256 KiB) overflows the 128 KiB L0C, so only [m, n] blocks exist; a5 holds it whole
    assert max(acc) <= (128 if platform == "a2a3sim" else 256) * 1024
    rng = np.random.default_rng(41)
    a = rng.standard_normal((256, 512), dtype=np.float32)
    b = rng.standard_normal((512, 256), dtype=np.float32)
    c = np.zeros((256, 256), np.float32)
    run(SplitK, a, b, c, config=RunConfig(platform=platform, sim_strict_memory=True))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=2e-3)
