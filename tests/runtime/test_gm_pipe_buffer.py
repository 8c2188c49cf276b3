"""a2a3 cross-core rings live in the `__gm_pipe_buffer` InjectGMPipeBuffer threads to the kernels: the
simulator checks each ring fits the buffer it was given, codegen passes it to initialize_pipe."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import SimulationError
from pypto.ir.enums import FunctionType
from pypto.runtime import RunConfig, run

from tests.codegen.programs import MixedMatmulRelu


def _pipe_program(buffer_elems: int):
    """A hand-written C2V pipe (one 16x16 FP32 tile: slot 1024 B, 2 slots) whose orchestration creates a
    `buffer_elems`-element pipe buffer itself (the pass keeps a hand-written buffer)."""
    offsets = {"c2v@0": 0}

    @pl.program
    class HandWritten:
        @pl.function(type=pl.FunctionType.AIC, attrs={"gm_pipe_offsets": offsets})
        def cube(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                 __gm_pipe_buffer: pl.Out[pl.Tensor[[buffer_elems], pl.FP32]]):
            c2v: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="c2v_buf", peer_func="vec")
            pl.system.aic_initialize_pipe(c2v, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)
            m: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
            pl.tile.tpush_to_aiv(m, split=0)

        @pl.function(type=pl.FunctionType.AIV, attrs={"gm_pipe_offsets": offsets})
        def vec(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                __gm_pipe_buffer: pl.Out[pl.Tensor[[buffer_elems], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2v: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="c2v_buf", size=2048)
            pl.system.aiv_initialize_pipe(c2v, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)
            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
            out = pl.store(t, [0, 0], out)
            pl.system.tfree_to_aic(t)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def group(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                  __gm_pipe_buffer: pl.Out[pl.Tensor[[buffer_elems], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            self.cube(x, out, __gm_pipe_buffer)
            r = self.vec(x, out, __gm_pipe_buffer)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            buf = pl.create_tensor([buffer_elems], dtype=pl.FP32)
            r = self.group(x, out, buf)
            return r

    return HandWritten


def test_a_buffer_that_holds_the_ring_runs():
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    out = np.zeros((16, 16), np.float32)
    run(_pipe_program(512), x, out, config=RunConfig(platform="a2a3sim"))   # 512 FP32 = the 2048-byte ring
    np.testing.assert_array_equal(out, x)


def test_a_ring_that_does_not_fit_the_gm_buffer_is_an_error_naming_it():
    x = np.ones((16, 16), np.float32)
    out = np.zeros((16, 16), np.float32)
    with pytest.raises(SimulationError, match=r"C2V ring of pipe 0 in kernel (cube|vec) needs bytes \[0, 2048\) "
                                              r"of __gm_pipe_buffer, which holds 1024 bytes"):
        run(_pipe_program(256), x, out, config=RunConfig(platform="a2a3sim"))


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_compiled_mixed_kernel_carries_the_buffer_only_on_a2a3(platform, tmp_path):
    import ml_dtypes
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 128)).astype(ml_dtypes.bfloat16)
    y = rng.standard_normal((128, 128)).astype(ml_dtypes.bfloat16)
    compiled = ir.compile(MixedMatmulRelu, output_dir=tmp_path, platform=platform)
    final = compiled.lowered
    kernels = [f for f in final.functions.values() if f.func_type in (FunctionType.AIC, FunctionType.AIV,
                                                                        FunctionType.Group)]
    has = [f.params[-1].name_hint == "__gm_pipe_buffer" for f in kernels]
    assert all(has) if platform == "a2a3sim" else not any(has)
    out = compiled(x, y)
    np.testing.assert_allclose(out, np.maximum(x.astype(np.float32) @ y.astype(np.float32), 0), rtol=1e-3, atol=1e-3)
    pto = (tmp_path / "ptoas" / "mm_aic.pto").read_text()
    host = (tmp_path / "orchestration" / "main.sim.py").read_text()     # the host code that ran
    assert compiled.sim.functions["main"].source == host
    if platform == "a2a3sim":
        # 8192-byte slots x 2 (C2V only) = 16384 bytes = 4096 FP32; initialize_pipe gets the pointer
        assert "gm_pipe_buffer_0 = _sim_ctx.create_tensor((4096,), _sim_fp32)" in host
        assert "_sim_ctx.submit(_sim_task_mm, (x, y, out_0, gm_pipe_buffer_0, ))" in host
        assert "pto.aic_initialize_pipe {dir_mask = 1, slot_size = 8192, slot_num = 2} (gm_slot_buffer = %arg3 : " \
               "!pto.ptr<f32>, c2v_consumer_buf" in pto
    else:
        assert "gm_pipe_buffer" not in host and "gm_slot_buffer" not in pto


def test_a_later_pipe_id_gets_its_region_of_the_buffer_in_pto(tmp_path):
    """Pipe 0 (C2V + V2C, 2 x 1024 B each) fills bytes [0, 4096); pipe 1 starts at 4096 B = 1024 FP32."""
    from tests.passes.expand_mixed_kernel.test_inject_gm_pipe_buffer import Before
    ir.compile(Before, output_dir=tmp_path, platform="a2a3sim")
    for name, side in (("k_aic", "aic"), ("k_aiv", "aiv")):
        pto = (tmp_path / "ptoas" / f"{name}.pto").read_text()
        assert f"pto.{side}_initialize_pipe {{dir_mask = 3, slot_size = 1024, slot_num = 2}} (gm_slot_buffer = " \
               "%arg2 : !pto.ptr<f32>" in pto
        assert "%gm_slot_buffer = pto.addptr %arg2, %c1024_index : !pto.ptr<f32> -> !pto.ptr<f32>" in pto
        assert "(gm_slot_buffer = %gm_slot_buffer : !pto.ptr<f32>, c2v_consumer_buf" in pto
    assert "gm_slot_buffer" not in (tmp_path / "ptoas" / "plain.pto").read_text()
