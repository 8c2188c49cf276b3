"""AutoTileMatmulL0 for matmul results used on-chip, and FIXPIPE cast folding.

An [M, N] result that overflows L0C and is read back into Mat (the next matmul's operand) is computed
in [m, n] blocks, each assembled into one [M, N] Mat scratch (the Acc → Mat writeback), so no [M, N]
Acc tile exists. A `tile.cast(acc, BF16 / FP16, mode=rint)` feeding only that writeback is folded
into it (FIXPIPE narrows with round-half-to-even): the kernel stays on the cube, no vector cast."""

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.enums import MemorySpace
from pypto.ir.types import static_dims
from pypto.pypto_core import passes
from pypto.runtime import RunConfig, run
from pypto.runtime.compile import compile_program
from tests.helpers import op_calls

BF16 = ml_dtypes.bfloat16


def _chain(M: int, K: int, N: int, P: int, dtype: str, cast_mode=None):
    """t = A @ B (Acc, FP32) → [cast to BF16] → Mat → Left; out = t @ D."""
    tdt = "pl.BF16" if cast_mode else dtype
    cast = (f"        t_c: pl.Tile[[{M}, {N}], pl.BF16, pl.Mem.Acc] = pl.tile.cast(t, target_type=pl.BF16, "
            f"mode={cast_mode})\n" if cast_mode else "")
    return pl.parse(f"""
import pypto.language as pl

@pl.program
class Chain:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[{M}, {K}], {dtype}], b: pl.Tensor[[{K}, {N}], {dtype}], d: pl.Tensor[[{N}, {P}], {tdt}],
          out: pl.Out[pl.Tensor[[{M}, {P}], pl.FP32]]) -> pl.Tensor[[{M}, {P}], pl.FP32]:
        a_mat: pl.Tile[[{M}, {K}], {dtype}, pl.Mem.Mat] = pl.load(a, [0, 0], [{M}, {K}], target_memory=pl.Mem.Mat)
        b_mat: pl.Tile[[{K}, {N}], {dtype}, pl.Mem.Mat] = pl.load(b, [0, 0], [{K}, {N}], target_memory=pl.Mem.Mat)
        l: pl.Tile[[{M}, {K}], {dtype}, pl.Mem.Left] = pl.move(a_mat, target_memory=pl.Mem.Left)
        r: pl.Tile[[{K}, {N}], {dtype}, pl.Mem.Right] = pl.move(b_mat, target_memory=pl.Mem.Right)
        t: pl.Tile[[{M}, {N}], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(l, r)
{cast}        t_mat: pl.Tile[[{M}, {N}], {tdt}, pl.Mem.Mat] = pl.move({"t_c" if cast_mode else "t"}, target_memory=pl.Mem.Mat)
        t_left: pl.Tile[[{M}, {N}], {tdt}, pl.Mem.Left] = pl.move(t_mat, target_memory=pl.Mem.Left)
        d_mat: pl.Tile[[{N}, {P}], {tdt}, pl.Mem.Mat] = pl.load(d, [0, 0], [{N}, {P}], target_memory=pl.Mem.Mat)
        d_right: pl.Tile[[{N}, {P}], {tdt}, pl.Mem.Right] = pl.move(d_mat, target_memory=pl.Mem.Right)
        u: pl.Tile[[{M}, {P}], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(t_left, d_right)
        out2: pl.Tensor[[{M}, {P}], pl.FP32] = pl.store(u, [0, 0], out)
        return out2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{M}, {K}], {dtype}], b: pl.Tensor[[{K}, {N}], {dtype}], d: pl.Tensor[[{N}, {P}], {tdt}],
             out: pl.Out[pl.Tensor[[{M}, {P}], pl.FP32]]) -> pl.Tensor[[{M}, {P}], pl.FP32]:
        out2 = self.k(a, b, d, out)
        return out2
""")


def test_an_oversized_result_read_back_on_chip_is_assembled_block_by_block_into_mat():
    # t: [256, 256] FP32 = 256 KiB, over a2a3's 128 KiB L0C (a5's 256 KiB L0C holds it: nothing to tile there)
    program = _chain(256, 64, 256, 32, "pl.FP32")
    kernel = compile_program(program, platform="a2a3sim").lowered["k"]
    acc = [c.type for c in op_calls(kernel) if isinstance(c.type, ir.TileType) and c.type.memory_space is MemorySpace.Acc]
    assert max(t.nbytes() for t in acc) <= 128 * 1024
    (assemble,) = op_calls(kernel, "tile.assemble")                    # inside the M-block loop
    assert assemble.type.memory_space is MemorySpace.Mat and static_dims(assemble.type.shape) == (256, 256)
    rng = np.random.default_rng(31)
    a = rng.standard_normal((256, 64), dtype=np.float32)
    b = rng.standard_normal((64, 256), dtype=np.float32)
    d = rng.standard_normal((256, 32), dtype=np.float32)
    out = np.zeros((256, 32), np.float32)
    run(program, a, b, d, out, config=RunConfig(platform="a2a3sim"))
    np.testing.assert_allclose(out, (a @ b) @ d, rtol=1e-4, atol=2e-3)


@pl.program
class CastBefore:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[32, 32], pl.BF16], b: pl.Tensor[[32, 32], pl.BF16],
          out: pl.Out[pl.Tensor[[32, 32], pl.BF16]]) -> pl.Tensor[[32, 32], pl.BF16]:
        a_mat: pl.Tile[[32, 32], pl.BF16, pl.Mem.Mat] = pl.load(a, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        b_mat: pl.Tile[[32, 32], pl.BF16, pl.Mem.Mat] = pl.load(b, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        l: pl.Tile[[32, 32], pl.BF16, pl.Mem.Left] = pl.move(a_mat, target_memory=pl.Mem.Left)
        r: pl.Tile[[32, 32], pl.BF16, pl.Mem.Right] = pl.move(b_mat, target_memory=pl.Mem.Right)
        t: pl.Tile[[32, 32], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(l, r)
        t_c: pl.Tile[[32, 32], pl.BF16, pl.Mem.Acc] = pl.tile.cast(t, target_type=pl.BF16, mode=pl.CastMode.rint)
        t_mat: pl.Tile[[32, 32], pl.BF16, pl.Mem.Mat] = pl.move(t_c, target_memory=pl.Mem.Mat)
        u: pl.Tile[[32, 32], pl.BF16, pl.Mem.Vec] = pl.move(t_mat, target_memory=pl.Mem.Vec)
        out2: pl.Tensor[[32, 32], pl.BF16] = pl.store(u, [0, 0], out)
        return out2


@pl.program
class CastExpected:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[32, 32], pl.BF16], b: pl.Tensor[[32, 32], pl.BF16],
          out: pl.Out[pl.Tensor[[32, 32], pl.BF16]]) -> pl.Tensor[[32, 32], pl.BF16]:
        a_mat: pl.Tile[[32, 32], pl.BF16, pl.Mem.Mat] = pl.load(a, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        b_mat: pl.Tile[[32, 32], pl.BF16, pl.Mem.Mat] = pl.load(b, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        l: pl.Tile[[32, 32], pl.BF16, pl.Mem.Left] = pl.move(a_mat, target_memory=pl.Mem.Left)
        r: pl.Tile[[32, 32], pl.BF16, pl.Mem.Right] = pl.move(b_mat, target_memory=pl.Mem.Right)
        t: pl.Tile[[32, 32], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(l, r)
        t_mat_scratch: pl.Tile[[32, 32], pl.BF16, pl.Mem.Mat] = pl.tile.create([32, 32], dtype=pl.BF16,
                                                                                target_memory=pl.Mem.Mat)
        t_mat: pl.Tile[[32, 32], pl.BF16, pl.Mem.Mat] = pl.tile.assemble(t_mat_scratch, t, [0, 0])
        u: pl.Tile[[32, 32], pl.BF16, pl.Mem.Vec] = pl.move(t_mat, target_memory=pl.Mem.Vec)
        out2: pl.Tensor[[32, 32], pl.BF16] = pl.store(u, [0, 0], out)
        return out2


def test_a_rint_cast_feeding_the_mat_writeback_folds_into_it():
    ir.assert_structural_equal(passes.auto_tile_matmul_l0()(CastBefore), CastExpected)


def test_a_cast_fixpipe_cannot_reproduce_stays_a_vector_cast():
    # the default mode (round: half away from zero) is not FIXPIPE's round-half-to-even
    text = CastBefore.as_python().replace("mode=pl.CastMode.rint", "mode=pl.CastMode.round")
    program = pl.parse(text)
    assert passes.auto_tile_matmul_l0()(program) is program


@pytest.mark.parametrize("platform, dims", [("a5sim", (128, 64, 128, 64)), ("a2a3sim", (256, 128, 256, 64))],
                         ids=["fits-l0c", "mn-tiled"])
def test_folded_bf16_chain_stays_on_the_cube_and_matches_numpy(platform, dims):
    M, K, N, P = dims
    program = _chain(M, K, N, P, "pl.BF16", cast_mode="pl.CastMode.rint")
    lowered = compile_program(program, platform=platform).lowered
    kinds = {f.func_type for f in lowered.functions.values()}
    assert kinds == {pl.FunctionType.AIC, pl.FunctionType.Orchestration}      # no vector half, no pipes
    assert not op_calls(lowered["k"], "tile.cast")
    rng = np.random.default_rng(32)
    a, b = rng.standard_normal((M, K)).astype(BF16), rng.standard_normal((K, N)).astype(BF16)
    d = rng.standard_normal((N, P)).astype(BF16)
    out = np.zeros((M, P), np.float32)
    run(program, a, b, d, out, config=RunConfig(platform=platform))
    t = (a.astype(np.float32) @ b.astype(np.float32)).astype(BF16).astype(np.float32)    # RNE, as FIXPIPE
    np.testing.assert_allclose(out, t @ d.astype(np.float32), rtol=1e-4, atol=1e-3)


def _cast_store_program(n: int, mode: str):
    return pl.parse(f"""
import pypto.language as pl

@pl.program
class CastStore:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{n}, {n}], pl.BF16], b: pl.Tensor[[{n}, {n}], pl.BF16],
             c: pl.Out[pl.Tensor[[{n}, {n}], pl.BF16]]) -> pl.Tensor[[{n}, {n}], pl.BF16]:
        with pl.at(level=pl.Level.CORE_GROUP):
            c[:] = pl.cast(pl.matmul(a, b, out_dtype=pl.FP32), pl.BF16, mode={mode})
        return c
""")


@pytest.mark.parametrize("platform, n", [("a5sim", 128), ("a2a3sim", 256)], ids=["fits-l0c", "mn-tiled"])
def test_a_rint_cast_before_the_gm_store_folds_into_the_acc_store(platform, n):
    program = _cast_store_program(n, "pl.CastMode.rint")
    lowered = compile_program(program, platform=platform).lowered
    assert {f.func_type for f in lowered.functions.values()} == {pl.FunctionType.AIC, pl.FunctionType.Orchestration}
    stores = op_calls(lowered["main_incore_0"], "tile.store")
    assert stores and all(s.args[0].type.memory_space is MemorySpace.Acc and s.args[0].type.dtype is pl.FP32
                          for s in stores)                            # FP32 Acc → BF16 GM: FIXPIPE converts
    rng = np.random.default_rng(33)
    a, b = rng.standard_normal((n, n)).astype(BF16), rng.standard_normal((n, n)).astype(BF16)
    c = np.zeros((n, n), BF16)
    run(program, a, b, c, config=RunConfig(platform=platform))
    ref = (a.astype(np.float32) @ b.astype(np.float32)).astype(BF16).astype(np.float32)
    # one BF16 ulp: the K loop sums in another order than numpy, which can flip a rounding
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=2 ** -7, atol=1e-2)


def test_a_round_mode_cast_before_the_store_keeps_the_vector_cast():
    lowered = compile_program(_cast_store_program(128, "pl.CastMode.round"), platform="a5sim").lowered
    casts = [c for f in lowered.functions.values() for c in op_calls(f, "tile.cast")]
    assert casts and all(c.args[0].type.memory_space is MemorySpace.Vec for c in casts)


@pl.program
class VecLeftBefore:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 512], pl.FP32], v: pl.Tensor[[512, 64], pl.FP32],
          out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        xt: pl.Tile[[64, 512], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [64, 512])
        p: pl.Tile[[64, 512], pl.FP32, pl.Mem.Vec] = pl.exp(xt)
        p_left: pl.Tile[[64, 512], pl.FP32, pl.Mem.Left] = pl.move(p, target_memory=pl.Mem.Left)
        v_mat: pl.Tile[[512, 64], pl.FP32, pl.Mem.Mat] = pl.load(v, [0, 0], [512, 64], target_memory=pl.Mem.Mat)
        v_right: pl.Tile[[512, 64], pl.FP32, pl.Mem.Right] = pl.move(v_mat, target_memory=pl.Mem.Right)
        o: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(p_left, v_right)
        out2: pl.Tensor[[64, 64], pl.FP32] = pl.store(o, [0, 0], out)
        return out2


@pl.program
class VecLeftExpected:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 512], pl.FP32], v: pl.Tensor[[512, 64], pl.FP32],
          out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        xt: pl.Tile[[64, 512], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [64, 512])
        p: pl.Tile[[64, 512], pl.FP32, pl.Mem.Vec] = pl.exp(xt)
        v_mat: pl.Tile[[512, 64], pl.FP32, pl.Mem.Mat] = pl.load(v, [0, 0], [512, 64], target_memory=pl.Mem.Mat)
        p_mat: pl.Tile[[64, 512], pl.FP32, pl.Mem.Mat] = pl.move(p, target_memory=pl.Mem.Mat)     # Vec → Mat (a5)
        acc_init: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.create([64, 64], dtype=pl.FP32,
                                                                          target_memory=pl.Mem.Acc)
        for ko, (acc,) in pl.range(0, 512, 256, init_values=(acc_init,)):
            a_l0: pl.Tile[[64, 256], pl.FP32, pl.Mem.Left] = pl.tile.extract(p_mat, 0, ko, [64, 256],
                                                                             target_memory=pl.Mem.Left)
            b_l0: pl.Tile[[256, 64], pl.FP32, pl.Mem.Right] = pl.tile.extract(v_mat, ko, 0, [256, 64],
                                                                              target_memory=pl.Mem.Right)
            acc_next: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc, a_l0, b_l0, ko == 0)
            acc_done = pl.yield_(acc_next)
        out2: pl.Tensor[[64, 64], pl.FP32] = pl.store(acc_done, [0, 0], out)
        return out2


def test_a_vec_left_operand_is_staged_in_mat_where_the_platform_has_a_vec_to_mat_path():
    from pypto.passes import PassContext
    with PassContext(platform="a5"):                 # a5 lists Vec → Mat
        ir.assert_structural_equal(passes.auto_tile_matmul_l0()(VecLeftBefore), VecLeftExpected)
    with PassContext(platform="a2a3"):               # a2a3 has no Vec → Mat path: left as written
        assert passes.auto_tile_matmul_l0()(VecLeftBefore) is VecLeftBefore
