"""AutoTileMatmulL0: (m, n, k) choice per platform, the K loop it emits, M / N output blocks, and
tensor-level matmuls of realistic size running on both simulators against numpy."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.enums import MemorySpace
from pypto.ir.platform import get_platform
from pypto.ir.visitor import collect
from pypto.passes import PassContext
from pypto.passes.auto_tile_matmul_l0 import choose_l0_tile
from pypto.pypto_core import passes
from pypto.runtime import RunConfig, run
from pypto.runtime.compile import compile_program
from tests.helpers import op_names


@pytest.mark.parametrize("platform", ["a2a3", "a5"])
@pytest.mark.parametrize("dims, width", [((256, 256, 256), 4), ((128, 512, 1024), 2), ((64, 64, 4096), 4)])
def test_chosen_tile_fits_every_l0_buffer_and_divides_the_problem(platform, dims, width):
    p = get_platform(platform)
    M, N, K = dims
    m, n, k = choose_l0_tile(M, N, K, width, width, 4, p)
    assert m * k * width <= p.space_capacity(MemorySpace.Left)
    assert k * n * width <= p.space_capacity(MemorySpace.Right)
    assert m * n * 4 <= p.space_capacity(MemorySpace.Acc)
    assert M % m == 0 and N % n == 0 and K % k == 0
    assert all(d % 16 == 0 for d in (m, n, k))


def test_l0c_size_decides_whether_the_output_is_blocked():
    # 256 x 256 FP32 = 256 KiB of Acc: over a2a3's 128 KiB L0C, exactly a5's 256 KiB
    m2, n2, _ = choose_l0_tile(256, 256, 256, 4, 4, 4, get_platform("a2a3"))
    m5, n5, _ = choose_l0_tile(256, 256, 256, 4, 4, 4, get_platform("a5"))
    assert m2 * n2 < 256 * 256 and (m5, n5) == (256, 256)


@pl.program
class KLoopBefore:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 512], pl.FP32], b: pl.Tensor[[512, 64], pl.FP32],
          c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        a_mat: pl.Tile[[64, 512], pl.FP32, pl.Mem.Mat] = pl.load(a, [0, 0], [64, 512], target_memory=pl.Mem.Mat)
        a_left: pl.Tile[[64, 512], pl.FP32, pl.Mem.Left] = pl.move(a_mat, target_memory=pl.Mem.Left)
        b_mat: pl.Tile[[512, 64], pl.FP32, pl.Mem.Mat] = pl.load(b, [0, 0], [512, 64], target_memory=pl.Mem.Mat)
        b_right: pl.Tile[[512, 64], pl.FP32, pl.Mem.Right] = pl.move(b_mat, target_memory=pl.Mem.Right)
        t: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a_left, b_right)
        c2: pl.Tensor[[64, 64], pl.FP32] = pl.store(t, [0, 0], c)
        return c2


@pl.program
class KLoopExpected:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 512], pl.FP32], b: pl.Tensor[[512, 64], pl.FP32],
          c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        a_mat: pl.Tile[[64, 512], pl.FP32, pl.Mem.Mat] = pl.load(a, [0, 0], [64, 512], target_memory=pl.Mem.Mat)
        b_mat: pl.Tile[[512, 64], pl.FP32, pl.Mem.Mat] = pl.load(b, [0, 0], [512, 64], target_memory=pl.Mem.Mat)
        acc0: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.create([64, 64], dtype=pl.FP32,
                                                                      target_memory=pl.Mem.Acc)
        for ko, (acc,) in pl.range(0, 512, 256, init_values=(acc0,)):
            a_l0: pl.Tile[[64, 256], pl.FP32, pl.Mem.Left] = pl.tile.extract(a_mat, 0, ko, [64, 256],
                                                                             target_memory=pl.Mem.Left)
            b_l0: pl.Tile[[256, 64], pl.FP32, pl.Mem.Right] = pl.tile.extract(b_mat, ko, 0, [256, 64],
                                                                              target_memory=pl.Mem.Right)
            acc2: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc, a_l0, b_l0, ko == 0)
            acc_done = pl.yield_(acc2)
        c2: pl.Tensor[[64, 64], pl.FP32] = pl.store(acc_done, [0, 0], c)
        return c2


def test_k_loop_of_extracts_accumulating_in_one_acc_tile():
    with PassContext(platform="a2a3"):
        after = passes.auto_tile_matmul_l0()(KLoopBefore)
    ir.assert_structural_equal(after, KLoopExpected)


def test_matmul_that_fits_is_left_alone():
    @pl.program
    class Small:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
            a_mat: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
            l: pl.Tile[[64, 64], pl.FP32, pl.Mem.Left] = pl.move(a_mat, target_memory=pl.Mem.Left)
            r: pl.Tile[[64, 64], pl.FP32, pl.Mem.Right] = pl.move(a_mat, target_memory=pl.Mem.Right)
            t: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(l, r)
            c2: pl.Tensor[[64, 64], pl.FP32] = pl.store(t, [0, 0], c)
            return c2

    assert passes.auto_tile_matmul_l0()(Small) is Small


@pl.program
class TensorMatmul:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[256, 256], pl.FP32], b: pl.Tensor[[256, 256], pl.FP32],
             c: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            c[:] = pl.matmul(a, b)
        return c


@pytest.mark.parametrize("platform, output_blocks", [("a2a3sim", True), ("a5sim", False)])
def test_256_cubed_fp32_tensor_matmul_is_tiled_for_l0_and_matches_numpy(platform, output_blocks):
    compiled = compile_program(TensorMatmul, platform=platform)
    kernel = compiled.lowered["main_incore_0"]
    assert kernel.func_type is pl.FunctionType.AIC
    names = op_names(kernel)
    assert "tile.extract" in names and "tile.matmul" not in names and "tile.move" not in names
    loops = collect(kernel.body, lambda n: isinstance(n, ir.ForStmt))
    assert len(loops) == (2 if output_blocks else 1)       # [M-block loop,] K loop
    rng = np.random.default_rng(8)
    a = rng.standard_normal((256, 256), dtype=np.float32)
    b = rng.standard_normal((256, 256), dtype=np.float32)
    c = np.zeros((256, 256), np.float32)
    run(TensorMatmul, a, b, c, config=RunConfig(platform=platform))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)


def test_without_auto_tiling_the_same_matmul_overflows_l0a():
    from pypto.errors import CapacityError
    from pypto.passes import PassManager
    with PassContext(platform="a2a3"), pytest.raises(CapacityError, match=r"Left \(L0A\) buffers need 262144 bytes"):
        PassManager().run(TensorMatmul, skip={"AutoTileMatmulL0"})


def _matmul_program(M: int, K: int, N: int):
    return pl.parse(f"""
import pypto.language as pl

@pl.program
class MM:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{M}, {K}], pl.FP32], b: pl.Tensor[[{K}, {N}], pl.FP32],
             c: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]) -> pl.Tensor[[{M}, {N}], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            c[:] = pl.matmul(a, b)
        return c
""")


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("M, K, N", [(144, 176, 208), (200, 96, 300)], ids=["k-tail", "partial-blocks"])
def test_tiles_that_do_not_divide_the_problem_peel_their_last_blocks(platform, M, K, N):
    mm = _matmul_program(M, K, N)
    m, n, k = choose_l0_tile(M, N, K, 4, 4, 4, get_platform(platform[:-3]))
    if platform == "a2a3sim":
        assert K % k or N % n or M % m                   # these shapes force a partial block somewhere
    rng = np.random.default_rng(M)
    a = rng.standard_normal((M, K), dtype=np.float32)
    b = rng.standard_normal((K, N), dtype=np.float32)
    c = np.zeros((M, N), np.float32)
    run(mm, a, b, c, config=RunConfig(platform=platform, sim_strict_memory=True))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_512_cubed_fp32_matmul_streams_its_l1_blocks_from_gm_and_matches_numpy(platform):
    program = _matmul_program(512, 512, 512)          # each operand is 1 MiB: over L1 on both platforms
    kernel = compile_program(program, platform=platform).lowered["main_incore_0"]
    loops = collect(kernel.body, lambda n: isinstance(n, ir.ForStmt))
    k_loop = next(lp for lp in loops if lp.loop_var.name_hint.startswith("ko"))
    in_loop = [c for c in collect(k_loop.body, lambda n: isinstance(n, ir.Call) and not n.is_function_call())
               if c.op.name == "tile.load"]
    assert len(in_loop) == 2 and all(c.type.memory_space is MemorySpace.Mat for c in in_loop)
    loads = [c for c in collect(kernel.body, lambda n: isinstance(n, ir.Call) and not n.is_function_call())
             if c.op.name == "tile.load"]
    assert all(c.type.nbytes() < 512 * 512 * 4 for c in loads)      # no whole-operand loads left
    rng = np.random.default_rng(5)
    a = rng.standard_normal((512, 512), dtype=np.float32)
    b = rng.standard_normal((512, 512), dtype=np.float32)
    c = np.zeros((512, 512), np.float32)
    run(program, a, b, c, config=RunConfig(platform=platform))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)


def test_without_l1_streaming_the_512_cubed_matmul_overflows_mat(monkeypatch):
    from pypto.errors import CapacityError
    from pypto.passes.auto_tile_matmul_l0 import MatmulTiler
    monkeypatch.setattr(MatmulTiler, "l1_stream", lambda self, a, b: None)
    with pytest.raises(CapacityError, match=r"Mat"):
        compile_program(_matmul_program(512, 512, 512), platform="a2a3sim")
