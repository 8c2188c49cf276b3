"""AdaptManualVtoCPush: hand-written V→C pushes on a5 push an NZ Vec copy; idempotent; a2a3 untouched."""

import pytest

import pypto.language as pl
from pypto.ir.stmt import flatten_to_stmts
from pypto.passes.context import PassContext
from pypto.pypto_core import passes


@pl.program
class Manual:
    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, x: pl.Tensor[[16, 16], pl.FP16]):
        imp: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="v2c", peer_func="cube")
        pl.system.aiv_initialize_pipe(pl.const(0, pl.INT32), imp, dir_mask=2, slot_size=512, slot_num=2)
        t: pl.Tile[[16, 16], pl.FP16, pl.Mem.Vec] = pl.load(x, [0, 0], [16, 16])
        pl.tile.tpush_to_aic(t, split=0, id=1)


def _expand(program, platform):
    with PassContext(PassContext.current().instruments, platform=platform):
        return passes.expand_mixed_kernel()(program)


def _calls(f):
    return [getattr(s, "value", None) or getattr(s, "expr", None) for s in flatten_to_stmts(f.body)]


def test_a5_pushes_an_nz_copy_keeping_kwargs_and_is_idempotent():
    once = _expand(Manual, "a5")
    calls = _calls(once["vec"])
    move, push = calls[-2], calls[-1]
    assert move.op.name == "tile.move" and push.op.name == "tile.tpush_to_aic"
    assert push.args[0].type.tile_view.blayout is pl.TileLayout.col_major
    assert push.args[0].type.tile_view.slayout is pl.TileLayout.row_major
    assert push.kwargs["id"] == 1 and push.kwargs["split"] == 0
    twice = _expand(once, "a5")
    assert [c.op.name for c in _calls(twice["vec"])] == [c.op.name for c in calls]


@pytest.mark.parametrize("platform", ["a2a3"])
def test_a2a3_hand_written_push_is_left_alone(platform):
    after = _expand(Manual, platform)
    assert [c.op.name for c in _calls(after["vec"])][-1] == "tile.tpush_to_aic"
    assert "tile.move" not in [c.op.name for c in _calls(after["vec"])]
