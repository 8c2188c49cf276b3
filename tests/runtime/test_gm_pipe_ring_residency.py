"""a2a3 ring slots are bytes of `__gm_pipe_buffer`: a push writes the tile into the buffer at its
ring's recorded offset and a pop reads it back from there, so two rings laid over the same bytes
corrupt each other's transfers, as on the chip. With disjoint offsets the same kernel is exact."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig, run


def _two_pipe_program(pipe1_offset: int):
    """Two C2V pipes (one 16x16 FP32 tile per slot, 1 slot each). The cube pushes x on pipe 0, then
    2 * x on pipe 1; the vector pops pipe 1 first (so both pushes happened, whatever the schedule),
    then pipe 0, and stores pipe 0's tile. Pipe 1's ring starts at byte `pipe1_offset`."""
    offsets = {"c2v@0": 0, "c2v@1": pipe1_offset}

    @pl.program
    class TwoPipes:
        @pl.function(type=pl.FunctionType.AIC, attrs={"gm_pipe_offsets": offsets})
        def cube(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                 __gm_pipe_buffer: pl.Out[pl.Tensor[[512], pl.FP32]]):
            p0: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="p0_buf", peer_func="vec")
            p1: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="p1_buf", peer_func="vec")
            pl.system.aic_initialize_pipe(p0, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=1)
            pl.system.aic_initialize_pipe(p1, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=1, id=1)
            a: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
            pl.tile.tpush_to_aiv(a, split=0)
            b: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.load(y, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
            pl.tile.tpush_to_aiv(b, split=0, id=1)

        @pl.function(type=pl.FunctionType.AIV, attrs={"gm_pipe_offsets": offsets})
        def vec(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 16], pl.FP32],
                out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                __gm_pipe_buffer: pl.Out[pl.Tensor[[512], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            p0: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="p0_buf", size=1024)
            p1: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="p1_buf", size=1024)
            pl.system.aiv_initialize_pipe(p0, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=1)
            pl.system.aiv_initialize_pipe(p1, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=1, id=1)
            t1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0, id=1)
            pl.system.tfree_to_aic(t1, id=1)
            t0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
            out = pl.store(t0, [0, 0], out)
            pl.system.tfree_to_aic(t0)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def group(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 16], pl.FP32],
                  out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                  __gm_pipe_buffer: pl.Out[pl.Tensor[[512], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            self.cube(x, y, out, __gm_pipe_buffer)
            r = self.vec(x, y, out, __gm_pipe_buffer)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            buf = pl.create_tensor([512], dtype=pl.FP32)
            r = self.group(x, y, out, buf)
            return r

    return TwoPipes


def _inputs():
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    return x, 2 * x + 1, np.zeros((16, 16), np.float32)


def test_disjoint_rings_in_the_gm_buffer_transfer_exactly():
    x, y, out = _inputs()
    run(_two_pipe_program(1024), x, y, out, config=RunConfig(platform="a2a3sim"))
    np.testing.assert_array_equal(out, x)


@pytest.mark.parametrize("seed", [None, 3])
def test_overlapping_rings_in_the_gm_buffer_corrupt_the_transfer(seed):
    """Pipe 1's ring laid over pipe 0's: the second push overwrites the first tile's bytes in GM
    before its pop, so the vector side reads pipe 1's tile — the slot is the GM buffer, not a copy."""
    x, y, out = _inputs()
    random = {} if seed is None else {"sim_schedule": "random", "sim_seed": seed}
    cfg = RunConfig(platform="a2a3sim", **random)
    run(_two_pipe_program(0), x, y, out, config=cfg)
    np.testing.assert_array_equal(out, y)


def test_a5_rings_do_not_live_in_gm():
    """a5 keeps consumer-SRAM rings: the same overlapping offsets (ignored there) transfer exactly."""
    x, y, out = _inputs()
    run(_two_pipe_program(0), x, y, out, config=RunConfig(platform="a5sim"))
    np.testing.assert_array_equal(out, x)


def _spmd_program(elems: int):
    """Two blocks, each pushing its 16-row block of x through one C2V slot; the host hands in the
    `elems`-element pipe buffer so a test can read where each block's ring was."""

    @pl.program
    class SpmdRings:
        @pl.function(type=pl.FunctionType.AIC, attrs={"gm_pipe_offsets": {"c2v@0": 0}})
        def cube(self, x: pl.Tensor[[32, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
                 __gm_pipe_buffer: pl.Out[pl.Tensor[[elems], pl.FP32]]):
            c2v: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="c2v_buf", peer_func="vec")
            pl.system.aic_initialize_pipe(c2v, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=1)
            i = pl.tile.get_block_idx()
            m: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.load(x, [i * 16, 0], [16, 16], target_memory=pl.Mem.Mat)
            pl.tile.tpush_to_aiv(m, split=0)

        @pl.function(type=pl.FunctionType.AIV, attrs={"gm_pipe_offsets": {"c2v@0": 0}})
        def vec(self, x: pl.Tensor[[32, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
                __gm_pipe_buffer: pl.Out[pl.Tensor[[elems], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
            c2v: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="c2v_buf", size=1024)
            pl.system.aiv_initialize_pipe(c2v, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=1)
            i = pl.tile.get_block_idx()
            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
            out = pl.store(t, [i * 16, 0], out)
            pl.system.tfree_to_aic(t)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def group(self, x: pl.Tensor[[32, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
                  __gm_pipe_buffer: pl.Out[pl.Tensor[[elems], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
            self.cube(x, out, __gm_pipe_buffer)
            r = self.vec(x, out, __gm_pipe_buffer)
            return r

        @pl.function(type=pl.FunctionType.Spmd, attrs={"core_num": 2})
        def launch(self, x: pl.Tensor[[32, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
                   __gm_pipe_buffer: pl.Out[pl.Tensor[[elems], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
            r = self.group(x, out, __gm_pipe_buffer)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[32, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
                 buf: pl.Out[pl.Tensor[[elems], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
            r = self.launch(x, out, buf)
            return r

    return SpmdRings


def test_each_block_of_an_spmd_launch_has_its_rings_in_its_own_region():
    x = np.arange(512, dtype=np.float32).reshape(32, 16)
    out = np.zeros((32, 16), np.float32)
    buf = np.full(512, -1.0, np.float32)
    run(_spmd_program(512), x, out, buf, config=RunConfig(platform="a2a3sim"))
    np.testing.assert_array_equal(out, x)
    np.testing.assert_array_equal(buf[:256], x[:16].reshape(-1))      # block 0's slot: bytes [0, 1024)
    np.testing.assert_array_equal(buf[256:], x[16:].reshape(-1))      # block 1's slot: bytes [1024, 2048)


def test_an_spmd_buffer_with_one_region_for_two_blocks_is_an_error():
    x = np.zeros((32, 16), np.float32)
    with pytest.raises(Exception, match=r"needs bytes \[0, 1024\) of __gm_pipe_buffer, which holds 512 bytes "
                                        r"per block \(2 blocks\)"):
        run(_spmd_program(256), x, np.zeros((32, 16), np.float32), np.zeros(256, np.float32),
            config=RunConfig(platform="a2a3sim"))


def test_inject_sizes_an_spmd_buffer_with_one_region_per_block(tmp_path):
    """The compiled Spmd launch of a mixed kernel (core_num 4) creates 4 x the per-cluster ring bytes."""
    from pypto import ir
    from tests.runtime.test_mixed_launch import spmd_mixed
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (64, 32)).astype(np.float16)
    b = rng.uniform(-1, 1, (32, 16)).astype(np.float16)
    lowered = spmd_mixed.lower(a, b, np.zeros((64, 16), np.float32), config=RunConfig(platform="a2a3sim"))
    from pypto.passes.inject_gm_pipe_buffer import ring_geometry, ring_layout
    kernel = lowered["spmd_mixed_incore_0_aic"]
    per_cluster = ring_layout(ring_geometry(kernel))[1]
    assert per_cluster == 2 * 1024                                   # one C2V ring: 2 slots of a 16x16 FP32 tile
    for name in ("spmd_mixed_incore_0_aic", "spmd_mixed_incore_0_aiv", "spmd_mixed_incore_0", "spmd_mixed_spmd_0"):
        assert lowered[name].params[-1].type.shape[0].value == 4 * per_cluster // 4
    assert "pl.tensor.create([2048], dtype=pl.FP32" in ir.python_print(lowered)


def test_pto_offsets_each_block_into_its_own_region_of_the_buffer(tmp_path):
    """Codegen matches the simulator: under an Spmd launch of 4 blocks the kernels start their rings at
    block_idx x (buffer elements / 4), read from the launch's block index."""
    from tests.runtime.test_mixed_launch import spmd_mixed
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (64, 32)).astype(np.float16)
    b = rng.uniform(-1, 1, (32, 16)).astype(np.float16)
    spmd_mixed.compile(a, b, np.zeros((64, 16), np.float32),
                       config=RunConfig(platform="a2a3sim", save_kernels_dir=str(tmp_path)))
    for side in ("aic", "aiv"):
        pto = (tmp_path / "ptoas" / f"spmd_mixed_incore_0_{side}.pto").read_text()
        assert "arith.muli %gm_block, %c512_index : index" in pto       # 2048 B / 4 bytes = 512 FP32 per region
        assert "%gm_slot_buffer = pto.addptr" in pto and "(gm_slot_buffer = %gm_slot_buffer" in pto
