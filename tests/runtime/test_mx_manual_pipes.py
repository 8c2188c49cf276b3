"""AdaptManualVtoCPush for MX scales (seed 004): hand-written V→C scale pushes on a5 are planned
from the consuming pop — no NZ insert; a col/col consumer gets the row/row transpose_view carrier
and its pop views it back — and run numpy-equal on a5sim; a missing peer, a push / pop count
mismatch and a slot too small for the carrier are errors naming the kernel."""

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UnsupportedError
from pypto.ir.enums import TileLayout
from pypto.ir.stmt import flatten_to_stmts
from pypto.passes.analysis import calls_in
from pypto.passes.context import PassContext
from pypto.pypto_core import passes
from pypto.runtime import RunConfig, run
from tests.helpers import op_names

SOURCE = '''
import pypto.language as pl

@pl.program
class ManualMX:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[16, 64], pl.FP8E4M3FN], b: pl.Tensor[[64, 32], pl.FP8E4M3FN],
             c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
        buf: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="v2c", size=1024)
        pl.system.aic_initialize_pipe(pl.const(0, pl.INT32), buf, dir_mask=2, slot_size=SLOT, slot_num=2)
        a_m: pl.Tile[[16, 64], pl.FP8E4M3FN, pl.Mem.Mat] = pl.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
        a_l: pl.Tile[[16, 64], pl.FP8E4M3FN, pl.Mem.Left] = pl.move(a_m, target_memory=pl.Mem.Left)
        b_m: pl.Tile[[64, 32], pl.FP8E4M3FN, pl.Mem.Mat] = pl.load(b, [0, 0], [64, 32], target_memory=pl.Mem.Mat)
        b_r: pl.Tile[[64, 32], pl.FP8E4M3FN, pl.Mem.Right] = pl.move(b_m, target_memory=pl.Mem.Right)
        sa_m: pl.Tile[[16, 2], pl.FP8E8M0, pl.Mem.Mat] = pl.tile.tpop_from_aiv(split=0)
        sa_l: pl.Tile[[16, 2], pl.FP8E8M0, pl.Mem.LeftScale] = pl.move(sa_m, target_memory=pl.Mem.LeftScale)
        pl.system.tfree_to_aiv(sa_m)
        POP_SB
        z: pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_mx(a_l, sa_l, b_r, sb_r)
        c = pl.store(z, [0, 0], c)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, sa: pl.Tensor[[16, 2], pl.FP8E8M0], sb: pl.Tensor[[2, 32], pl.FP8E8M0]):
        imp: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="v2c", peer_func="PEER")
        pl.system.aiv_initialize_pipe(pl.const(0, pl.INT32), imp, dir_mask=2, slot_size=SLOT, slot_num=2)
        sa_v: pl.Tile[[16, 2], pl.FP8E8M0, pl.Mem.Vec] = pl.load(sa, [0, 0], [16, 2])
        pl.tile.tpush_to_aic(sa_v, split=0)
        sb_v: pl.Tile[[2, 32], pl.FP8E8M0, pl.Mem.Vec] = pl.load(sb, [0, 0], [2, 32])
        pl.tile.tpush_to_aic(sb_v, split=0)

    @pl.function(type=pl.FunctionType.Group)
    def g(self, a: pl.Tensor[[16, 64], pl.FP8E4M3FN], b: pl.Tensor[[64, 32], pl.FP8E4M3FN],
          sa: pl.Tensor[[16, 2], pl.FP8E8M0], sb: pl.Tensor[[2, 32], pl.FP8E8M0],
          c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
        self.cube(a, b, c)
        self.vec(sa, sb)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP8E4M3FN], b: pl.Tensor[[64, 32], pl.FP8E4M3FN],
             sa: pl.Tensor[[16, 2], pl.FP8E8M0], sb: pl.Tensor[[2, 32], pl.FP8E8M0],
             c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
        self.g(a, b, sa, sb, c)
'''
POP_SB = '''sb_m: pl.Tile[[2, 32], pl.FP8E8M0, pl.Mem.Mat, pl.TileView(blayout=pl.TileLayout.col_major, slayout=pl.TileLayout.col_major)] = pl.tile.tpop_from_aiv(split=0)
        sb_r: pl.Tile[[2, 32], pl.FP8E8M0, pl.Mem.RightScale, pl.TileView(blayout=pl.TileLayout.col_major, slayout=pl.TileLayout.col_major)] = pl.move(sb_m, target_memory=pl.Mem.RightScale)
        pl.system.tfree_to_aiv(sb_m)'''


def _program(slot=512, peer="cube", pop_sb=POP_SB):
    return pl.parse(SOURCE.replace("SLOT", str(slot)).replace("PEER", peer).replace("POP_SB", pop_sb))


def _expand(program):
    with PassContext(PassContext.current().instruments, platform="a5"):
        return passes.expand_mixed_kernel()(passes.convert_to_ssa()(program))


def test_scale_pushes_follow_the_consumers_pop_and_match_numpy_on_a5sim():
    after = _expand(_program())
    vec, cube = after.get_function("vec"), after.get_function("cube")
    assert "tile.move" in op_names(vec)                    # sb: row/row → col/col (the consumer's layout) ...
    pushes = [c.args[0].type for c in calls_in(vec.body) if c.op.name == "tile.tpush_to_aic"]
    assert [tuple(d.value for d in t.shape) for t in pushes] == [(16, 2), (32, 2)]      # ... then its carrier
    assert all((t.tile_view.blayout if t.tile_view else TileLayout.row_major) is TileLayout.row_major
               for t in pushes)                           # no NZ insert for scales
    pops = [c.type for c in calls_in(cube.body) if c.op.name == "tile.tpop_from_aiv"]
    assert [tuple(d.value for d in t.shape) for t in pops] == [(16, 2), (32, 2)]
    frees = [c.args[0] for c in calls_in(cube.body) if c.op.name == "system.tfree_to_aiv"]
    popped = [s.var for s in flatten_to_stmts(cube.body) if type(s).__name__ == "AssignStmt"
              and s.value.op.name == "tile.tpop_from_aiv"]
    assert frees == popped                                # the tfree frees the carrier it popped
    again = _expand(after)
    assert op_names(again.get_function("vec")) == op_names(vec)   # idempotent

    rng = np.random.default_rng(8)
    a = rng.uniform(-4, 4, (16, 64)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.uniform(-4, 4, (64, 32)).astype(ml_dtypes.float8_e4m3fn)
    sa = rng.integers(118, 136, (16, 2)).astype(np.uint8)
    sb = rng.integers(118, 136, (2, 32)).astype(np.uint8)
    c = np.full((16, 32), np.nan, np.float32)
    run(_program(), a, b, sa.view(ml_dtypes.float8_e8m0fnu), sb.view(ml_dtypes.float8_e8m0fnu), c,
        config=RunConfig(platform="a5sim"))
    ea = np.repeat(2.0 ** (sa.astype(np.float64) - 127), 32, axis=1)
    eb = np.repeat(2.0 ** (sb.astype(np.float64) - 127), 32, axis=0)
    want = (a.astype(np.float64) * ea) @ (b.astype(np.float64) * eb)
    np.testing.assert_allclose(c, want.astype(np.float32), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("variant, message", [
    (dict(slot=32), r"64-byte carrier does not fit the 32-byte slot"),
    (dict(peer="nobody"), r"cube peer nobody is not an AIC function"),
    (dict(pop_sb="sb_r: pl.Tile[[2, 32], pl.FP8E8M0, pl.Mem.RightScale] = pl.tile.create([2, 32], "
                 "dtype=pl.FP8E8M0, target_memory=pl.Mem.RightScale)"), r"2 pushes here but 1 pops in cube"),
])
def test_an_unplannable_manual_scale_push_is_an_error(variant, message):
    with pytest.raises(UnsupportedError, match=message) as e:
        _expand(_program(**variant))
    assert "hand-written MX scale push in vec" in str(e.value)
