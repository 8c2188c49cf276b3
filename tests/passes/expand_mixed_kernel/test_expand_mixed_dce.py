"""Loop-carry repair / DCE after the split (seed 004 steps 6-9) terminates and keeps each carrier.

A software-pipelined body produces in one guard and consumes in another, so the two ifs write two
different carried tensors. On the AIV side the second if's result is only live once the carry set
has grown to include it; the sweep that first drops it and the sweep that keeps it must not both be
counted as changes, or the outer fixpoint never settles (it used to spin forever).
"""

import signal

import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.stmt import flatten_to_stmts
from pypto.passes.context import PassContext
from pypto.pypto_core import passes


@pytest.fixture
def finishes_in_time():
    """Fail (instead of hanging the suite) when the pass does not return within 30 s."""
    def _expired(signum, frame):
        raise TimeoutError("ExpandMixedKernel did not finish within 30 s (DCE fixpoint loops)")
    old = signal.signal(signal.SIGALRM, _expired)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pl.program
class TwoGuards:
    @pl.function(type=pl.FunctionType.InCore)
    def pipelined(self, a: pl.Tensor[[16, 64], pl.BF16], b: pl.Tensor[[64, 64], pl.BF16],
                  first: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
                  second: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        for k, (f_cur, s_cur) in pl.range(3, init_values=(first, second)):
            if k == 0:
                am = pl.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
                bm = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
                prod = pl.matmul(pl.move(am, target_memory=pl.Mem.Left), pl.move(bm, target_memory=pl.Mem.Right))
                pv = pl.move(prod, target_memory=pl.Mem.Vec, blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.none_box)
                f_new = pl.store(pv, [0, 0], f_cur)
                f_phi = pl.yield_(f_new)
            else:
                f_phi = pl.yield_(f_cur)
            if k == 2:
                am2 = pl.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
                bm2 = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
                prod2 = pl.matmul(pl.move(am2, target_memory=pl.Mem.Left), pl.move(bm2, target_memory=pl.Mem.Right))
                pv2 = pl.move(prod2, target_memory=pl.Mem.Vec, blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.none_box)
                s_new = pl.store(pv2, [0, 0], s_cur)
                s_phi = pl.yield_(s_new)
            else:
                s_phi = pl.yield_(s_cur)
            f_out, s_out = pl.yield_(f_phi, s_phi)
        return f_out


@pl.program
class TwoGuardsVectorSide:
    @pl.function(type=pl.FunctionType.AIV)
    def pipelined_aiv(self, a: pl.Tensor[[16, 64], pl.BF16], b: pl.Tensor[[64, 64], pl.BF16],
                      first: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
                      second: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        buf: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="pipelined_c2v_slot_buffer", size=8192)
        pl.system.aiv_initialize_pipe(buf, pl.const(0, pl.INT32), dir_mask=1, slot_size=4096, slot_num=2)
        for k, (f_cur, s_cur) in pl.range(3, init_values=(first, second)):
            if k == 0:
                pv: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
                f_new: pl.Tensor[[16, 64], pl.FP32] = pl.store(pv, [0, 0], f_cur)
                pl.system.tfree_to_aic(pv)
                f_phi = pl.yield_(f_new)
            else:
                f_phi = pl.yield_(f_cur)
            if k == 2:
                pv2: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
                s_new: pl.Tensor[[16, 64], pl.FP32] = pl.store(pv2, [0, 0], s_cur)
                pl.system.tfree_to_aic(pv2)
                s_phi = pl.yield_(s_new)
            else:
                s_phi = pl.yield_(s_cur)    # its own carrier, never f_cur
            f_out, s_out = pl.yield_(f_phi, s_phi)
        return f_out


@pytest.mark.parametrize("platform", ["a2a3", "a5"])
def test_two_divergent_guards_finish_and_keep_their_own_carriers(platform, finishes_in_time):
    with PassContext(PassContext.current().instruments, platform=platform):
        after = passes.expand_mixed_kernel()(passes.infer_tile_memory_space()(passes.convert_to_ssa()(TwoGuards)))
    expected = passes.convert_to_ssa()(TwoGuardsVectorSide).get_function("pipelined_aiv")
    if platform == "a2a3":                   # a no-split AIV driving a pipe runs on both vector lanes there
        expected = expected.replace(attrs={**expected.attrs, "dual_aiv_dispatch": True})
    ir.assert_structural_equal(after.get_function("pipelined_aiv"), expected)


@pl.program
class TwoGuardsCubeSide:
    @pl.function(type=pl.FunctionType.AIC)
    def pipelined_aic(self, a: pl.Tensor[[16, 64], pl.BF16], b: pl.Tensor[[64, 64], pl.BF16],
                      first: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
                      second: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
        imp: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="pipelined_c2v_slot_buffer",
                                                                peer_func="pipelined_aiv")
        pl.system.aic_initialize_pipe(imp, pl.const(0, pl.INT32), dir_mask=1, slot_size=4096, slot_num=2)
        for k, (f_cur, s_cur) in pl.range(3, init_values=(first, second)):
            if k == 0:
                am: pl.Tile[[16, 64], pl.BF16, pl.Mem.Mat] = pl.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
                bm: pl.Tile[[64, 64], pl.BF16, pl.Mem.Mat] = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
                prod = pl.matmul(pl.move(am, target_memory=pl.Mem.Left), pl.move(bm, target_memory=pl.Mem.Right))
                pl.tile.tpush_to_aiv(prod, split=0)
                f_phi = pl.yield_(f_cur)       # the store was the vector's: the branch passes its carry on
            else:
                f_phi = pl.yield_(f_cur)
            if k == 2:
                am2: pl.Tile[[16, 64], pl.BF16, pl.Mem.Mat] = pl.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
                bm2: pl.Tile[[64, 64], pl.BF16, pl.Mem.Mat] = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
                prod2 = pl.matmul(pl.move(am2, target_memory=pl.Mem.Left), pl.move(bm2, target_memory=pl.Mem.Right))
                pl.tile.tpush_to_aiv(prod2, split=0)
                s_phi = pl.yield_(s_cur)       # falls back to its own slot's carrier, not to f_cur
            else:
                s_phi = pl.yield_(s_cur)
            f_out, s_out = pl.yield_(f_phi, s_phi)


@pytest.mark.parametrize("platform", ["a2a3", "a5"])
def test_cube_side_branches_fall_back_to_their_own_carry_and_keep_it(platform, finishes_in_time):
    """A kept branch's yield reads the carry (seed 004: references in the loop body seed liveness), so the
    cube side keeps both tensor carries; each dangling branch yield falls back to the carrier of its slot."""
    with PassContext(PassContext.current().instruments, platform=platform):
        after = passes.expand_mixed_kernel()(passes.infer_tile_memory_space()(passes.convert_to_ssa()(TwoGuards)))
    expected = passes.convert_to_ssa()(TwoGuardsCubeSide)
    ir.assert_structural_equal(after.get_function("pipelined_aic"), expected.get_function("pipelined_aic"))
    # the Group returns the parameter the vector side's loop result writes back, through loop and branches
    group = after.get_function("pipelined")
    ret = flatten_to_stmts(group.body)[-1]
    assert ret.values[0] is group.params[2]
