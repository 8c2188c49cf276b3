"""A split_aiv kernel's tile.aiv_shard becomes a transfer pair carrying the pto-isa split code of its
full-width tile (seed 004, step 4a / "split code"), the free keeps split 0 for StampTfreeSplit, a
statement a region placed on the AIV lane stays there alone, and the placement mark is gone after."""

import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.errors import UnsupportedError
from pypto.passes.expand_mixed_kernel import expand_mixed_kernel
from pypto.ir.expr import Call
from pypto.ir.visitor import collect


def _shard_program(valid_rows: int):
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore, attrs={"split": pl.SplitMode.UP_DOWN, "split_aiv": True})
        def k(self, qk: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[valid_rows, 128])],
              sig: pld.DistributedTensor[[4, 4], pl.INT32], peer: pl.Scalar[pl.INT32],
              out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
            half: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.aiv_shard(qk, split=1)
            pld.system.notify(sig, peer, [0, 0], 1, op=pld.NotifyOp.AtomicAdd, attrs={"core_placement": "aiv"})
            r: pl.Tensor[[64, 128], pl.FP32] = pl.store(half, [0, 0], out)
            return r
    return P


def _calls(func, name):
    return [c for c in collect(func.body, lambda n: isinstance(n, Call)) if getattr(c.op, "name", "") == name]


@pytest.mark.parametrize("valid_rows, code", [(128, 1), (127, 3), (40, 1)])
def test_the_transport_pair_carries_the_lane_extent_code(valid_rows, code):
    after = expand_mixed_kernel()(_shard_program(valid_rows))
    push, = _calls(after.get_function("k_aic"), "tile.tpush_to_aiv")
    pop, = _calls(after.get_function("k_aiv"), "tile.tpop_from_aic")
    free, = _calls(after.get_function("k_aiv"), "system.tfree_to_aic")
    assert push.kwargs["split"] == code and pop.kwargs["split"] == code
    assert free.kwargs["split"] == 0


def test_a_placed_notify_runs_on_the_aiv_lane_only_and_the_mark_is_stripped():
    after = expand_mixed_kernel()(_shard_program(128))
    assert len(_calls(after.get_function("k_aiv"), "pld.system.notify")) == 1
    assert _calls(after.get_function("k_aic"), "pld.system.notify") == []
    assert "core_placement" not in ir.python_print(after)
    assert after.get_function("k_aic").level is pl.Level.AIC
    assert after.get_function("k_aiv").level is pl.Level.AIV


def test_an_unplaceable_lane_split_is_rejected_with_the_extents():
    with pytest.raises(UnsupportedError, match="leaves the two AIV lanes 64 and 36 cells"):
        expand_mixed_kernel()(_shard_program(100))
