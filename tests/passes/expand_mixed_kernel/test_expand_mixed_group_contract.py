"""The Group ExpandMixedKernel builds (seed 004): it keeps the kernel's split / slot_num attributes, like
its AIC and AIV members, and the automatic pipe setup follows the slot count on both sides."""

import pytest

import pypto.language as pl
from pypto.ir.enums import FunctionType, SplitMode
from pypto.ir.expr import Call
from pypto.ir.visitor import collect
from pypto.passes.context import PassContext
from pypto.pypto_core import passes


@pl.program
class Deep:
    @pl.function(type=pl.FunctionType.InCore, attrs={"split": pl.SplitMode.UP_DOWN, "slot_num": 16})
    def k(self, x: pl.Tensor[[16, 128], pl.BF16], y: pl.Tensor[[128, 64], pl.BF16],
          out_0: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        xm: pl.Tile[[16, 128], pl.BF16, pl.Mem.Mat] = pl.load(x, [0, 0], [16, 128], target_memory=pl.Mem.Mat)
        ym: pl.Tile[[128, 64], pl.BF16, pl.Mem.Mat] = pl.load(y, [0, 0], [128, 64], target_memory=pl.Mem.Mat)
        z: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.matmul(pl.move(xm, target_memory=pl.Mem.Left),
                                                              pl.move(ym, target_memory=pl.Mem.Right))
        zv: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.move(z, target_memory=pl.Mem.Vec)
        out_0 = pl.store(zv, [0, 0], out_0)
        return out_0


@pytest.mark.parametrize("platform", ["a2a3", "a5"])
def test_group_keeps_split_and_slot_num(platform):
    with PassContext(PassContext.current().instruments, platform=platform):
        after = passes.expand_mixed_kernel()(passes.infer_tile_memory_space()(passes.convert_to_ssa()(Deep)))
    expected_attrs = {"split": SplitMode.UP_DOWN, "slot_num": 16}
    for name, kind in (("k", FunctionType.Group), ("k_aic", FunctionType.AIC), ("k_aiv", FunctionType.AIV)):
        f = after.get_function(name)
        assert f.func_type is kind and dict(f.attrs) == expected_attrs, (name, dict(f.attrs))
    for side in ("k_aic", "k_aiv"):
        inits = collect(after.get_function(side).body,
                        lambda n: isinstance(n, Call) and not n.is_function_call() and "initialize_pipe" in n.op.name)
        assert len(inits) == 1 and inits[0].kwargs["slot_num"] == 16


@pl.program
class MatRelayout:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 128], pl.BF16], b: pl.Tensor[[128, 64], pl.BF16],
          out_0: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        am: pl.Tile[[16, 128], pl.BF16, pl.Mem.Mat] = pl.load(a, [0, 0], [16, 128], target_memory=pl.Mem.Mat)
        am2: pl.Tile[[16, 128], pl.BF16, pl.Mem.Mat] = pl.move(am, target_memory=pl.Mem.Mat)
        bm: pl.Tile[[128, 64], pl.BF16, pl.Mem.Mat] = pl.load(b, [0, 0], [128, 64], target_memory=pl.Mem.Mat)
        al: pl.Tile[[16, 128], pl.BF16, pl.Mem.Left] = pl.move(am2, target_memory=pl.Mem.Left)
        br: pl.Tile[[128, 64], pl.BF16, pl.Mem.Right] = pl.move(bm, target_memory=pl.Mem.Right)
        z: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.matmul(al, br)
        zv: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.move(z, target_memory=pl.Mem.Vec)
        out_0 = pl.store(zv, [0, 0], out_0)
        return out_0


@pytest.mark.parametrize("platform", ["a2a3", "a5"])
def test_a_mat_to_mat_move_stays_on_the_cube(platform):
    with PassContext(PassContext.current().instruments, platform=platform):
        after = passes.expand_mixed_kernel()(passes.convert_to_ssa()(MatRelayout))
    moves = collect(after.get_function("k_aic").body,
                    lambda n: isinstance(n, Call) and not n.is_function_call() and n.op.name == "tile.move")
    assert any(m.args[0].type.memory_space is m.kwargs["target_memory"] for m in moves)
