"""AutoTileMatmulL0's L1 streaming beyond plain 2-D GM loads: transposed operands (`b_trans=True`,
`a_trans=True`: a tile.transpose_view of a loaded window) stream their [n, k] / [k, m] blocks from GM
and transpose each block in Mat; operands that are slices of larger tensors (static or runtime
offsets) stream from their windows."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.enums import MemorySpace
from pypto.ir.visitor import collect
from pypto.runtime import RunConfig, run
from pypto.runtime.compile import compile_program
from tests.helpers import op_calls


def _trans_program(M: int, K: int, N: int, a_trans: bool):
    a_shape = f"[{K}, {M}]" if a_trans else f"[{M}, {K}]"
    flags = "a_trans=True, b_trans=True" if a_trans else "b_trans=True"
    return pl.parse(f"""
import pypto.language as pl

@pl.program
class MMT:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[{a_shape}, pl.FP32], b: pl.Tensor[[{N}, {K}], pl.FP32],
             c: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]) -> pl.Tensor[[{M}, {N}], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            c[:] = pl.matmul(a, b, {flags})
        return c
""")


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_512_cubed_fp32_matmul_with_b_trans_streams_transposed_blocks_and_matches_numpy(platform):
    program = _trans_program(512, 512, 512, a_trans=False)
    kernel = compile_program(program, platform=platform).lowered["main_incore_0"]
    k_loop = next(lp for lp in collect(kernel.body, lambda n: isinstance(n, ir.ForStmt))
                  if lp.loop_var.name_hint.startswith("ko"))
    loads, views = op_calls(k_loop.body, "tile.load"), op_calls(k_loop.body, "tile.transpose_view")
    assert len(loads) == 2 and len(views) == 1 and views[0].type.memory_space is MemorySpace.Mat
    assert all(c.type.nbytes() < 512 * 512 * 4 for c in op_calls(kernel.body, "tile.load"))   # no whole operand
    rng = np.random.default_rng(21)
    a = rng.standard_normal((512, 512), dtype=np.float32)
    b = rng.standard_normal((512, 512), dtype=np.float32)
    c = np.zeros((512, 512), np.float32)
    run(program, a, b, c, config=RunConfig(platform=platform))
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-4, atol=1e-3)


def test_both_operands_transposed_with_partial_blocks_match_numpy():
    # 200 x 200 x 200: the two loads plus their transposed copies (4 x 156 KiB) overflow L1, so it streams
    program = _trans_program(200, 200, 200, a_trans=True)
    rng = np.random.default_rng(22)
    a = rng.standard_normal((200, 200), dtype=np.float32)
    b = rng.standard_normal((200, 200), dtype=np.float32)
    c = np.zeros((200, 200), np.float32)
    run(program, a, b, c, config=RunConfig(platform="a5sim", sim_strict_memory=True))
    np.testing.assert_allclose(c, a.T @ b.T, rtol=1e-4, atol=1e-3)


@pl.program
class SliceOperands:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[512, 512], pl.FP32], b: pl.Tensor[[512, 1024], pl.FP32], r: pl.Scalar[pl.INDEX],
             c: pl.Out[pl.Tensor[[128, 384], pl.FP32]]) -> pl.Tensor[[128, 384], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            a_s: pl.Tensor[[128, 512], pl.FP32] = pl.slice(a, [128, 512], [r, 0])        # 256 KiB
            b_s: pl.Tensor[[512, 384], pl.FP32] = pl.slice(b, [512, 384], [0, 256])      # 768 KiB: over L1
            c[:] = pl.matmul(a_s, b_s)
        return c


def test_operands_that_are_slices_at_runtime_offsets_stream_from_their_windows():
    rng = np.random.default_rng(23)
    a = rng.standard_normal((512, 512), dtype=np.float32)
    b = rng.standard_normal((512, 1024), dtype=np.float32)
    c = np.zeros((128, 384), np.float32)
    kernel = compile_program(SliceOperands, platform="a2a3sim").lowered["main_incore_0"]
    assert all(c.type.nbytes() < 128 * 512 * 4 for c in op_calls(kernel.body, "tile.load"))   # streamed blocks
    run(SliceOperands, a, b, 200, c, config=RunConfig(platform="a2a3sim"))
    np.testing.assert_allclose(c, a[200:328] @ b[:, 256:640], rtol=1e-4, atol=1e-3)
