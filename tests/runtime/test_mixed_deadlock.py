"""Broken hand-written pipe protocols end in a DeadlockError naming each blocked core, its op and line."""

import time

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import DeadlockError
from pypto.runtime import RunConfig, run

SIMS = pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
T = pl.Tensor[[16, 16], pl.FP32]


@pl.program
class PopWithoutPush:
    """Each side waits for the other's data first: AIV pops C2V, AIC pops V2C, nobody pushes."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        v2c: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="v2c_buf", size=2048)
        c2v: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="c2v_buf", peer_func="vec")
        pl.system.aic_initialize_pipe(c2v, v2c, dir_mask=3, slot_size=1024, slot_num=2)
        m: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tile.tpop_from_aiv(split=0)   # CUBE-POP
        pl.system.tfree_to_aiv(m)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, x: pl.Tensor[[16, 16], pl.FP32],
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c2v: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="c2v_buf", size=2048)
        v2c: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="v2c_buf", peer_func="cube")
        pl.system.aiv_initialize_pipe(c2v, v2c, dir_mask=3, slot_size=1024, slot_num=2)
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)   # VEC-POP
        out = pl.store(t, [0, 0], out)
        pl.system.tfree_to_aic(t)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def group(self, x: pl.Tensor[[16, 16], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube(x, out)
        r = self.vec(x, out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        r = self.group(x, out)
        return r


@pl.program
class MissingTfree:
    """slot_num=1: the AIC pushes twice, the AIV pops once and never frees, then pops again."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        c2v: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="c2v_buf", peer_func="vec")
        pl.system.aic_initialize_pipe(c2v, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=1)
        m: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        pl.tile.tpush_to_aiv(m, split=0)
        pl.tile.tpush_to_aiv(m, split=0)      # CUBE-PUSH-2

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, x: pl.Tensor[[16, 16], pl.FP32],
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c2v: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="c2v_buf", size=1024)
        pl.system.aiv_initialize_pipe(c2v, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=1)
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
        out = pl.store(t, [0, 0], out)
        u: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)   # VEC-POP-2
        out = pl.store(u, [0, 0], out)
        pl.system.tfree_to_aic(t)
        pl.system.tfree_to_aic(u)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def group(self, x: pl.Tensor[[16, 16], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube(x, out)
        r = self.vec(x, out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        r = self.group(x, out)
        return r


def _line_of(marker: str) -> int:
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if marker in line and "_line_of" not in line:
                return i
    raise AssertionError(marker)


def _deadlock(program, platform) -> str:
    x = np.ones((16, 16), np.float32)
    out = np.zeros((16, 16), np.float32)
    # CPU seconds, not wall time: a spinning (undetected) deadlock burns CPU, while a loaded
    # machine only stretches the wall clock.
    start = time.process_time()
    with pytest.raises(DeadlockError) as info:
        run(program, x, out, config=RunConfig(platform=platform))
    assert time.process_time() - start < 5
    return str(info.value)


@SIMS
def test_pop_without_push_names_both_cores_and_lines(platform):
    msg = _deadlock(PopWithoutPush, platform)
    assert "AIC" in msg and "AIV" in msg
    assert f":{_line_of('# CUBE-POP')}:" in msg and f":{_line_of('# VEC-POP')}:" in msg
    assert "blocked on tile.tpop_from_aiv" in msg and "blocked on tile.tpop_from_aic" in msg


@SIMS
def test_missing_tfree_with_one_slot_deadlocks_push_and_pop(platform):
    msg = _deadlock(MissingTfree, platform)
    assert "AIC" in msg and "AIV" in msg
    assert f":{_line_of('# CUBE-PUSH-2')}:" in msg and f":{_line_of('# VEC-POP-2')}:" in msg
    assert "blocked on tile.tpush_to_aiv" in msg and "blocked on tile.tpop_from_aic" in msg
