"""MemoryReuse's a2a3 load + tpop hazard guard: on a2a3 a tile popped from the cube never takes
the UB bytes of a loaded tile, even once the loaded tile is dead; on a5 it may. Both run right."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.passes import PassContext, PassManager
from pypto.runtime import RunConfig, run


@pl.program
class LoadThenPop:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 16], pl.FP32],
             o1: pl.Out[pl.Tensor[[16, 16], pl.FP32]], o2: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        imp: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="c2v", peer_func="vec")
        pl.system.aic_initialize_pipe(imp, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)
        m: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.load(y, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        pl.tile.tpush_to_aiv(m, split=0)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 16], pl.FP32],
            o1: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
            o2: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        buf: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="c2v", size=2048)
        pl.system.aiv_initialize_pipe(buf, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)
        a: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [16, 16])
        o1 = pl.store(a, [0, 0], o1)
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
        o2 = pl.store(t, [0, 0], o2)
        pl.system.tfree_to_aic(t)
        return o2

    @pl.function(type=pl.FunctionType.Group)
    def g(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 16], pl.FP32],
          o1: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
          o2: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube(x, y, o1, o2)
        r = self.vec(x, y, o1, o2)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 16], pl.FP32],
             o1: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             o2: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        r = self.g(x, y, o1, o2)
        return r


def _vec_bases(platform: str) -> dict:
    with PassContext(platform=platform):
        kernel = PassManager.get_strategy().run_passes(LoadThenPop)["vec"]
    return {v.name_hint: v.type.memref.base for v in ir.verifier.defined_vars(kernel.body)
            if isinstance(v.type, ir.TileType) and v.type.memref is not None}


def test_on_a2a3_a_popped_tile_never_takes_a_loaded_tiles_bytes():
    bases = _vec_bases("a2a3")
    assert bases["a"] is not bases["t"]


def test_on_a5_the_dead_loaded_tiles_buffer_is_reused_for_the_pop():
    bases = _vec_bases("a5")
    assert bases["a"] is bases["t"]


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_load_then_pop_runs_right(platform):
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    y = -x
    o1, o2 = np.zeros_like(x), np.zeros_like(x)
    run(LoadThenPop, x, y, o1, o2, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(o1, x)
    np.testing.assert_array_equal(o2, y)
