"""Spellings the reference's programs and seeds use: unqualified cross-core ops (`pl.reserve_buffer`,
`pl.tpop_from_aic(shape=, dtype=)`, ...), block indices without a namespace, and `pl.read(t, i)`
with one bare index on a 1-D tensor. Each runs and matches numpy on both simulators."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError
from pypto.ir.enums import MemorySpace
from pypto.runtime import RunConfig, run

SIMS = pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])


@pl.program
class Ring:
    """A hand-written cube → vector pipe in the reference's unqualified spelling."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        peer = pl.import_peer_buffer(name="c2v", peer_func="vec")
        pl.aic_initialize_pipe(peer, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)
        m: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        pl.tpush_to_aiv(m, split=0)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, x: pl.Tensor[[16, 16], pl.FP32],
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        buf = pl.reserve_buffer(name="c2v", size=2048, base=pl.AUTO)
        pl.aiv_initialize_pipe(buf, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)
        t = pl.tpop_from_aic(shape=[16, 16], dtype=pl.FP32, split=0)
        out = pl.store(pl.mul(t, 3.0), [0, 0], out)
        pl.tfree_to_aic(t)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def g(self, x: pl.Tensor[[16, 16], pl.FP32],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube(x, out)
        r = self.vec(x, out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        r = self.g(x, out)
        return r


def test_tpop_with_shape_and_dtype_types_the_popped_tile():
    pop = next(s for s in Ring.functions["vec"].body.stmts if getattr(getattr(s, "value", None), "op", None)
               and s.value.op.name == "tile.tpop_from_aic")
    t = pop.var.type
    assert [d.value for d in t.shape] == [16, 16] and t.dtype is pl.FP32 and t.memory_space is MemorySpace.Vec


@SIMS
def test_unqualified_pipe_spellings_run(platform):
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    out = np.full((16, 16), np.nan, np.float32)
    run(Ring, x, out, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out, 3 * x)


def test_tpop_shape_without_dtype_is_a_clear_error():
    with pytest.raises(PyptoError, match="shape= and dtype= name the popped tile together"):
        @pl.function(type=pl.FunctionType.AIV)
        def bad(x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.tpop_from_aic(shape=[16, 16], split=0)
            pl.tfree_to_aic(t)
            return x


@pl.jit
def blockwise(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.spmd(4):
        i = pl.get_block_idx()
        n = pl.get_block_num()
        t = pl.load(a, [i * 16, 0], [16, 32])
        pl.store(pl.add(t, pl.cast(i * 10 + n, pl.FP32)), [i * 16, 0], c)
    return c


@SIMS
def test_unqualified_block_index_and_count(platform):
    a = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    c = np.full((64, 32), np.nan, np.float32)
    blockwise(a, c, config=RunConfig(platform=platform))
    expected = a + (np.repeat(np.arange(4), 16) * 10 + 4)[:, None].astype(np.float32)
    np.testing.assert_allclose(c, expected, rtol=1e-6)


@pl.program
class ReadOne:
    """A runtime config tensor read with one bare (expression) index, then a scale picked by it."""

    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = pl.store(pl.mul(pl.load(a, [0, 0], [16, 16]), s), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], cfg: pl.Tensor[[4], pl.INT64], scales: pl.Tensor[[4], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        i = pl.tensor.read(cfg, 0)
        s = pl.read(scales, i + 1)
        out = self.scale(a, s, out)
        return out


@SIMS
@pytest.mark.parametrize("pick", [0, 2])
def test_read_with_one_bare_index(platform, pick):
    a = np.random.default_rng(1).standard_normal((16, 16)).astype(np.float32)
    scales = np.array([1.5, 2.0, -3.0, 4.0], np.float32)
    out = np.zeros((16, 16), np.float32)
    run(ReadOne, a, np.array([pick, 0, 0, 0], np.int64), scales, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, a * scales[pick + 1], rtol=1e-6)
