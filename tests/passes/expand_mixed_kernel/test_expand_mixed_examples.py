"""Seed 004 Examples 1 and 2, written as Before / Expected programs, plus the V2C boundary shape."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.stmt import flatten_to_stmts
from pypto.passes.context import PassContext
from pypto.pypto_core import passes

A2A3_AND_A5 = pytest.mark.parametrize("platform", ["a2a3", "a5"])


def _expand(program, platform="a5"):
    with PassContext(PassContext.current().instruments, platform=platform):
        return passes.expand_mixed_kernel()(passes.convert_to_ssa()(program))


@pl.program
class Example1:
    @pl.function(type=pl.FunctionType.InCore)
    def compute_incore_0(self, x: pl.Tensor[[16, 128], pl.BF16], y: pl.Tensor[[128, 128], pl.BF16],
                         out_0: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        x_mat: pl.Tile[[16, 128], pl.BF16, pl.Mem.Mat] = pl.load(x, [0, 0], [16, 128], target_memory=pl.Mem.Mat)
        y_mat: pl.Tile[[128, 128], pl.BF16, pl.Mem.Mat] = pl.load(y, [0, 0], [128, 128], target_memory=pl.Mem.Mat)
        x_left: pl.Tile[[16, 128], pl.BF16, pl.Mem.Left] = pl.move(x_mat, target_memory=pl.Mem.Left)
        y_right: pl.Tile[[128, 128], pl.BF16, pl.Mem.Right] = pl.move(y_mat, target_memory=pl.Mem.Right)
        z_tile: pl.Tile[[16, 128], pl.FP32, pl.Mem.Acc] = pl.matmul(x_left, y_right)
        z_vec: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.move(z_tile, target_memory=pl.Mem.Vec)
        out_0 = pl.store(z_vec, [0, 0], out_0)
        return out_0

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 128], pl.BF16], y: pl.Tensor[[128, 128], pl.BF16]) -> pl.Tensor[[16, 128], pl.FP32]:
        out_0 = pl.create_tensor([16, 128], dtype=pl.FP32)
        return self.compute_incore_0(x, y, out_0)


@pl.program
class Example1Expected:
    @pl.function(type=pl.FunctionType.AIC)
    def compute_incore_0_aic(self, x: pl.Tensor[[16, 128], pl.BF16], y: pl.Tensor[[128, 128], pl.BF16],
                             out_0: pl.Out[pl.Tensor[[16, 128], pl.FP32]]):
        c2v_import: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="compute_incore_0_c2v_slot_buffer",
                                                                       peer_func="compute_incore_0_aiv")
        pl.system.aic_initialize_pipe(c2v_import, pl.const(0, pl.INT32), dir_mask=1, slot_size=8192, slot_num=2)
        x_mat: pl.Tile[[16, 128], pl.BF16, pl.Mem.Mat] = pl.load(x, [0, 0], [16, 128], target_memory=pl.Mem.Mat)
        y_mat: pl.Tile[[128, 128], pl.BF16, pl.Mem.Mat] = pl.load(y, [0, 0], [128, 128], target_memory=pl.Mem.Mat)
        x_left: pl.Tile[[16, 128], pl.BF16, pl.Mem.Left] = pl.move(x_mat, target_memory=pl.Mem.Left)
        y_right: pl.Tile[[128, 128], pl.BF16, pl.Mem.Right] = pl.move(y_mat, target_memory=pl.Mem.Right)
        z_tile: pl.Tile[[16, 128], pl.FP32, pl.Mem.Acc] = pl.matmul(x_left, y_right)
        pl.tile.tpush_to_aiv(z_tile, split=0)

    @pl.function(type=pl.FunctionType.AIV)
    def compute_incore_0_aiv(self, x: pl.Tensor[[16, 128], pl.BF16], y: pl.Tensor[[128, 128], pl.BF16],
                             out_0: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        c2v_buf: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="compute_incore_0_c2v_slot_buffer", size=16384)
        pl.system.aiv_initialize_pipe(c2v_buf, pl.const(0, pl.INT32), dir_mask=1, slot_size=8192, slot_num=2)
        z_vec: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
        out_1: pl.Tensor[[16, 128], pl.FP32] = pl.store(z_vec, [0, 0], out_0)
        pl.system.tfree_to_aic(z_vec)
        return out_1

    @pl.function(type=pl.FunctionType.Group)
    def compute_incore_0(self, x: pl.Tensor[[16, 128], pl.BF16], y: pl.Tensor[[128, 128], pl.BF16],
                         out_0: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        self.compute_incore_0_aic(x, y, out_0)
        self.compute_incore_0_aiv(x, y, out_0)
        return out_0

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 128], pl.BF16], y: pl.Tensor[[128, 128], pl.BF16]) -> pl.Tensor[[16, 128], pl.FP32]:
        out_0 = pl.create_tensor([16, 128], dtype=pl.FP32)
        return self.compute_incore_0(x, y, out_0)


@A2A3_AND_A5
def test_example1_no_group_caller_creates_a_group_with_the_kernel_name(platform):
    expected = passes.convert_to_ssa()(Example1Expected)
    if platform == "a2a3":     # seed 004 step 12: the no-split AIV is marked for dual AIV dispatch there
        aiv = expected.get_function("compute_incore_0_aiv")
        expected = expected.with_functions([aiv.replace(attrs={"dual_aiv_dispatch": True}) if f is aiv else f
                                            for f in expected.functions.values()])
    ir.assert_structural_equal(_expand(Example1, platform), expected)


@pl.program
class Example2:
    @pl.function(type=pl.FunctionType.InCore)
    def compute_incore_0(self, x: pl.Tensor[[16, 128], pl.BF16], y: pl.Tensor[[128, 128], pl.BF16],
                         out_0: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        x_mat: pl.Tile[[16, 128], pl.BF16, pl.Mem.Mat] = pl.load(x, [0, 0], [16, 128], target_memory=pl.Mem.Mat)
        y_mat: pl.Tile[[128, 128], pl.BF16, pl.Mem.Mat] = pl.load(y, [0, 0], [128, 128], target_memory=pl.Mem.Mat)
        x_left: pl.Tile[[16, 128], pl.BF16, pl.Mem.Left] = pl.move(x_mat, target_memory=pl.Mem.Left)
        y_right: pl.Tile[[128, 128], pl.BF16, pl.Mem.Right] = pl.move(y_mat, target_memory=pl.Mem.Right)
        z_tile: pl.Tile[[16, 128], pl.FP32, pl.Mem.Acc] = pl.matmul(x_left, y_right)
        z_vec: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.move(z_tile, target_memory=pl.Mem.Vec)
        out_0 = pl.store(z_vec, [0, 0], out_0)
        return out_0

    @pl.function(type=pl.FunctionType.Group)
    def compute_group(self, x: pl.Tensor[[16, 128], pl.BF16], y: pl.Tensor[[128, 128], pl.BF16],
                      out_0: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        result = self.compute_incore_0(x, y, out_0)
        return result

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 128], pl.BF16], y: pl.Tensor[[128, 128], pl.BF16]) -> pl.Tensor[[16, 128], pl.FP32]:
        out_0 = pl.create_tensor([16, 128], dtype=pl.FP32)
        return self.compute_group(x, y, out_0)


def test_example2_existing_group_caller_is_rewritten_in_place():
    after = _expand(Example2)
    assert list(after.functions) == ["compute_incore_0_aic", "compute_incore_0_aiv", "compute_group", "main"]
    group = after["compute_group"]
    calls = [s for s in flatten_to_stmts(group.body)]
    assert type(calls[0]).__name__ == "EvalStmt" and calls[0].expr.op.name == "compute_incore_0_aic"
    assert type(calls[1]).__name__ == "AssignStmt" and calls[1].value.op.name == "compute_incore_0_aiv"
    assert calls[1].var.name_hint == "result" and calls[2].values[0] is calls[1].var
    ir.assert_structural_equal(after["main"], passes.convert_to_ssa()(Example2)["main"])
    expected1 = passes.convert_to_ssa()(Example1Expected)
    ir.assert_structural_equal(after["compute_incore_0_aiv"], expected1["compute_incore_0_aiv"])


@pl.program
class V2C:
    @pl.function(type=pl.FunctionType.InCore)
    def main_incore_0(self, x: pl.Tensor[[16, 128], pl.BF16], y: pl.Tensor[[128, 128], pl.BF16],
                      out_0: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        x_vec: pl.Tile[[16, 128], pl.BF16, pl.Mem.Vec] = pl.load(x, [0, 0], [16, 128])
        x_left: pl.Tile[[16, 128], pl.BF16, pl.Mem.Left] = pl.move(x_vec, target_memory=pl.Mem.Left)
        y_mat: pl.Tile[[128, 128], pl.BF16, pl.Mem.Mat] = pl.load(y, [0, 0], [128, 128], target_memory=pl.Mem.Mat)
        y_right: pl.Tile[[128, 128], pl.BF16, pl.Mem.Right] = pl.move(y_mat, target_memory=pl.Mem.Right)
        z: pl.Tile[[16, 128], pl.FP32, pl.Mem.Acc] = pl.matmul(x_left, y_right)
        z_vec: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.move(z, target_memory=pl.Mem.Vec)
        out_0 = pl.store(z_vec, [0, 0], out_0)
        return out_0


def _ops(func) -> list:
    out = []
    for s in flatten_to_stmts(func.body):
        c = getattr(s, "value", None) or getattr(s, "expr", None)
        if c is not None and hasattr(c, "op"):
            out.append(c.op.name)
    return out


@A2A3_AND_A5
def test_v2c_boundary_pops_into_mat_then_moves_to_left(platform):
    after = _expand(V2C, platform)
    assert [f.func_type.name for f in after.functions.values()] == ["AIC", "AIV", "Group"]
    aic, aiv = after["main_incore_0_aic"], after["main_incore_0_aiv"]
    assert _ops(aic) == ["system.reserve_buffer", "system.import_peer_buffer", "system.aic_initialize_pipe",
                         "tile.tpop_from_aiv", "tile.move", "system.tfree_to_aiv", "tile.load", "tile.move",
                         "tile.matmul", "tile.tpush_to_aiv"]
    adapter = ["tile.move"] if platform == "a5" else []      # a5 moves to an NZ Vec tile before the push
    assert _ops(aiv) == ["system.import_peer_buffer", "system.reserve_buffer", "system.aiv_initialize_pipe",
                         "tile.load", *adapter, "tile.tpush_to_aic", "tile.tpop_from_aic", "tile.store",
                         "system.tfree_to_aic"]
    init = flatten_to_stmts(aic.body)[2].expr
    # V2C carries BF16 [16,128] = 4096 B, C2V FP32 [16,128] = 8192 B: one slot size, the max
    assert (init.kwargs["dir_mask"], init.kwargs["slot_size"], init.kwargs["slot_num"]) == (3, 8192, 2)
    reserve = flatten_to_stmts(aic.body)[0].value
    assert reserve.kwargs == {"name": "main_incore_0_v2c_slot_buffer", "size": 16384, "base": -1}
    pop = flatten_to_stmts(aic.body)[3].var.type
    assert pop.memory_space is pl.Mem.Mat
    assert (pop.effective_view.blayout, pop.effective_view.slayout) == (pl.TileLayout.col_major, pl.TileLayout.row_major)
    assert not [f for f in after.functions.values() if f.func_type is pl.FunctionType.InCore]


def test_slot_num_attr_sizes_the_ring():
    prog = passes.convert_to_ssa()(V2C)
    f = prog["main_incore_0"]
    prog = prog.with_functions([f.replace(attrs={**f.attrs, "slot_num": 16})])
    with PassContext(PassContext.current().instruments, platform="a5"):
        after = passes.expand_mixed_kernel()(prog)
    stmts = flatten_to_stmts(after["main_incore_0_aiv"].body)      # the V2C import, then the C2V reserve
    assert stmts[1].value.kwargs["size"] == 8192 * 16 and stmts[2].expr.kwargs["slot_num"] == 16
