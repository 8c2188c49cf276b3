"""InferTileMemorySpace complete: forward resolution of every tile Var (carries, phis, annotations
without a space), demand retargeting that removes user moves, and loop-invariant Mat hoisting."""

import pypto.language as pl
from pypto import ir
from pypto.ir.visitor import collect
from pypto.pypto_core import passes

from tests.passes.infer_tile_memory_space.demand_marks import open_landing_spaces

M = pl.Mem


def _ops(func) -> list:
    return [n.op.name for n in collect(func.body, lambda n: isinstance(n, ir.Call) and hasattr(n.op, "input_memory"))]


def test_annotations_without_a_space_resolve_from_the_producer_not_to_vec():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            ta: pl.Tile[[32, 32], pl.FP32] = pl.tile.load(a, [0, 0], [32, 32], [32, 32], target_memory=M.Mat)
            tb: pl.Tile[[32, 32], pl.FP32] = pl.tile.load(b, [0, 0], [32, 32], [32, 32], target_memory=M.Mat)
            tl: pl.Tile[[32, 32], pl.FP32] = pl.tile.move(ta, target_memory=M.Left)
            tr: pl.Tile[[32, 32], pl.FP32] = pl.tile.move(tb, target_memory=M.Right)
            c: pl.Tile[[32, 32], pl.FP32] = pl.tile.matmul(tl, tr)
            r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(c, [0, 0], out)
            return r

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            ta: pl.Tile[[32, 32], pl.FP32, M.Mat] = pl.tile.load(a, [0, 0], [32, 32], [32, 32], target_memory=M.Mat)
            tb: pl.Tile[[32, 32], pl.FP32, M.Mat] = pl.tile.load(b, [0, 0], [32, 32], [32, 32], target_memory=M.Mat)
            tl: pl.Tile[[32, 32], pl.FP32, M.Left] = pl.tile.move(ta, target_memory=M.Left)
            tr: pl.Tile[[32, 32], pl.FP32, M.Right] = pl.tile.move(tb, target_memory=M.Right)
            c: pl.Tile[[32, 32], pl.FP32, M.Acc] = pl.tile.matmul(tl, tr)
            r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(c, [0, 0], out)
            return r

    ir.assert_structural_equal(passes.infer_tile_memory_space()(Before), Expected)


def test_an_accumulator_carry_takes_the_yielded_acc_space_and_its_create_is_retargeted():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            acc0: pl.Tile[[32, 32], pl.FP32] = pl.tile.create([32, 32], dtype=pl.FP32)
            for i, (acc,) in pl.range(0, 4, 1, init_values=(acc0,)):
                ta: pl.Tile[[32, 32], pl.FP32, M.Mat] = pl.tile.load(a, [0, 0], [32, 32], [32, 32], target_memory=M.Mat)
                tb: pl.Tile[[32, 32], pl.FP32, M.Mat] = pl.tile.load(b, [0, 0], [32, 32], [32, 32], target_memory=M.Mat)
                tl: pl.Tile[[32, 32], pl.FP32, M.Left] = pl.tile.move(ta, target_memory=M.Left)
                tr: pl.Tile[[32, 32], pl.FP32, M.Right] = pl.tile.move(tb, target_memory=M.Right)
                acc2: pl.Tile[[32, 32], pl.FP32] = pl.tile.matmul_acc(acc, tl, tr)
                acc_rv = pl.yield_(acc2)
            r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(acc_rv, [0, 0], out)
            return r

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            acc0: pl.Tile[[32, 32], pl.FP32, M.Acc] = pl.tile.create([32, 32], dtype=pl.FP32, target_memory=M.Acc)
            for i, (acc,) in pl.range(0, 4, 1, init_values=(acc0,)):
                ta: pl.Tile[[32, 32], pl.FP32, M.Mat] = pl.tile.load(a, [0, 0], [32, 32], [32, 32], target_memory=M.Mat)
                tb: pl.Tile[[32, 32], pl.FP32, M.Mat] = pl.tile.load(b, [0, 0], [32, 32], [32, 32], target_memory=M.Mat)
                tl: pl.Tile[[32, 32], pl.FP32, M.Left] = pl.tile.move(ta, target_memory=M.Left)
                tr: pl.Tile[[32, 32], pl.FP32, M.Right] = pl.tile.move(tb, target_memory=M.Right)
                acc2: pl.Tile[[32, 32], pl.FP32, M.Acc] = pl.tile.matmul_acc(acc, tl, tr)
                acc_rv = pl.yield_(acc2)
            r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(acc_rv, [0, 0], out)
            return r

    after = passes.infer_tile_memory_space()(Before)
    ir.assert_structural_equal(after, Expected)
    loop = next(s for s in after["k"].body.stmts if isinstance(s, ir.ForStmt))
    assert loop.iter_args[0].type.memory_space is M.Acc and loop.return_vars[0].type.memory_space is M.Acc


def test_a_carry_init_read_elsewhere_too_is_moved_before_the_loop():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]],
              out2: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            z: pl.Tile[[32, 32], pl.FP32, M.Vec] = pl.tile.full([32, 32], dtype=pl.FP32, value=0.0)
            s: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(z, [0, 0], out2)
            for i, (acc,) in pl.range(0, 2, 1, init_values=(z,)):
                ta: pl.Tile[[32, 32], pl.FP32, M.Mat] = pl.tile.load(a, [0, 0], [32, 32], [32, 32], target_memory=M.Mat)
                tl: pl.Tile[[32, 32], pl.FP32, M.Left] = pl.tile.move(ta, target_memory=M.Left)
                tr: pl.Tile[[32, 32], pl.FP32, M.Right] = pl.tile.move(ta, target_memory=M.Right)
                acc2: pl.Tile[[32, 32], pl.FP32] = pl.tile.matmul_acc(acc, tl, tr)
                acc_rv = pl.yield_(acc2)
            r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(acc_rv, [0, 0], out)
            return r

    after = passes.infer_tile_memory_space()(Before)
    stmts = after["k"].body.stmts
    move = stmts[2]
    assert isinstance(move, ir.AssignStmt) and move.value.op.name == "tile.move"
    assert move.value.args[0] is stmts[0].var and move.var.type.memory_space is M.Acc
    loop = stmts[3]
    assert loop.iter_args[0].init_value is move.var and loop.iter_args[0].type.memory_space is M.Acc
    assert stmts[0].var.type.memory_space is M.Vec            # the vector-side reader keeps its Vec tile


def test_an_if_phi_takes_its_branches_space():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 32], pl.FP32], n: pl.Scalar[pl.INDEX],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            ta: pl.Tile[[32, 32], pl.FP32, M.Mat] = pl.tile.load(a, [0, 0], [32, 32], [32, 32], target_memory=M.Mat)
            if n > 0:
                tl: pl.Tile[[32, 32], pl.FP32, M.Left] = pl.tile.move(ta, target_memory=M.Left)
                tr: pl.Tile[[32, 32], pl.FP32, M.Right] = pl.tile.move(ta, target_memory=M.Right)
                c1: pl.Tile[[32, 32], pl.FP32] = pl.tile.matmul(tl, tr)
                c = pl.yield_(c1)
            else:
                tl2: pl.Tile[[32, 32], pl.FP32, M.Left] = pl.tile.move(ta, target_memory=M.Left)
                tr2: pl.Tile[[32, 32], pl.FP32, M.Right] = pl.tile.move(ta, target_memory=M.Right)
                c2: pl.Tile[[32, 32], pl.FP32] = pl.tile.matmul(tl2, tr2)
                c = pl.yield_(c2)
            r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(c, [0, 0], out)
            return r

    after = passes.infer_tile_memory_space()(Before)
    phi = next(s for s in after["k"].body.stmts if isinstance(s, ir.IfStmt))
    assert phi.return_vars[0].type.memory_space is M.Acc


def test_a_load_followed_only_by_a_user_move_is_retargeted_and_the_move_removed():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            ta: pl.Tile[[32, 32], pl.FP32, M.Vec] = pl.tile.load(a, [0, 0], [32, 32], [32, 32])
            tm: pl.Tile[[32, 32], pl.FP32, M.Mat] = pl.tile.move(ta, target_memory=M.Mat)
            tl: pl.Tile[[32, 32], pl.FP32, M.Left] = pl.tile.move(tm, target_memory=M.Left)
            tr: pl.Tile[[32, 32], pl.FP32, M.Right] = pl.tile.move(tm, target_memory=M.Right)
            c: pl.Tile[[32, 32], pl.FP32, M.Acc] = pl.tile.matmul(tl, tr)
            r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(c, [0, 0], out)
            return r

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            ta: pl.Tile[[32, 32], pl.FP32, M.Mat] = pl.tile.load(a, [0, 0], [32, 32], [32, 32], target_memory=M.Mat)
            tl: pl.Tile[[32, 32], pl.FP32, M.Left] = pl.tile.move(ta, target_memory=M.Left)
            tr: pl.Tile[[32, 32], pl.FP32, M.Right] = pl.tile.move(ta, target_memory=M.Right)
            c: pl.Tile[[32, 32], pl.FP32, M.Acc] = pl.tile.matmul(tl, tr)
            r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(c, [0, 0], out)
            return r

    ir.assert_structural_equal(passes.infer_tile_memory_space()(open_landing_spaces(Before)), Expected)


def test_a_mat_load_only_vector_ops_read_lands_in_vec_instead_of_being_moved():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            ta: pl.Tile[[32, 32], pl.FP32, M.Mat] = pl.tile.load(a, [0, 0], [32, 32], [32, 32], target_memory=M.Mat)
            e: pl.Tile[[32, 32], pl.FP32] = pl.tile.exp(ta)
            r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(e, [0, 0], out)
            return r

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            ta: pl.Tile[[32, 32], pl.FP32, M.Vec] = pl.tile.load(a, [0, 0], [32, 32], [32, 32], target_memory=M.Vec)
            e: pl.Tile[[32, 32], pl.FP32, M.Vec] = pl.tile.exp(ta)
            r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(e, [0, 0], out)
            return r

    after = passes.infer_tile_memory_space()(open_landing_spaces(Before))
    ir.assert_structural_equal(after, Expected)
    assert "tile.move" not in _ops(after["k"])


def test_an_else_branch_yielding_another_space_moves_its_value_to_the_phis_space():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 32], pl.FP32], n: pl.Scalar[pl.INDEX],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            ta: pl.Tile[[32, 32], pl.FP32, M.Mat] = pl.tile.load(a, [0, 0], [32, 32], [32, 32], target_memory=M.Mat)
            if n > 0:
                tl: pl.Tile[[32, 32], pl.FP32, M.Left] = pl.tile.move(ta, target_memory=M.Left)
                tr: pl.Tile[[32, 32], pl.FP32, M.Right] = pl.tile.move(ta, target_memory=M.Right)
                c1: pl.Tile[[32, 32], pl.FP32] = pl.tile.matmul(tl, tr)
                c = pl.yield_(c1)
            else:
                z: pl.Tile[[32, 32], pl.FP32] = pl.tile.full([32, 32], dtype=pl.FP32, value=0.0)
                c = pl.yield_(z)
            r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(c, [0, 0], out)
            return r

    after = passes.infer_tile_memory_space()(Before)
    phi = next(s for s in after["k"].body.stmts if isinstance(s, ir.IfStmt))
    assert phi.return_vars[0].type.memory_space is M.Acc
    *_, move, y = phi.else_body.stmts
    assert move.value.op.name == "tile.move" and move.value.kwargs["target_memory"] is M.Acc
    assert y.values[0] is move.var and move.value.args[0].type.memory_space is M.Vec


def test_demand_flows_back_through_a_transpose_view_to_the_load():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            ta: pl.Tile[[32, 32], pl.FP32, M.Mat] = pl.tile.load(a, [0, 0], [32, 32], [32, 32], target_memory=M.Mat)
            tb: pl.Tile[[32, 32], pl.FP32, M.Vec] = pl.tile.load(b, [0, 0], [32, 32], [32, 32])
            tbt: pl.Tile[[32, 32], pl.FP32, M.Vec] = pl.tile.transpose_view(tb)
            tl: pl.Tile[[32, 32], pl.FP32, M.Left] = pl.tile.move(ta, target_memory=M.Left)
            tr: pl.Tile[[32, 32], pl.FP32, M.Right] = pl.tile.move(tbt, target_memory=M.Right)
            c: pl.Tile[[32, 32], pl.FP32, M.Acc] = pl.tile.matmul(tl, tr)
            r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(c, [0, 0], out)
            return r

    after = passes.infer_tile_memory_space()(open_landing_spaces(Before))
    stmts = after["k"].body.stmts
    assert stmts[1].value.kwargs["target_memory"] is M.Mat and stmts[1].var.type.memory_space is M.Mat
    assert stmts[2].value.op.name == "tile.transpose_view" and stmts[2].var.type.memory_space is M.Mat
    assert [s.value.op.name for s in stmts[:6]].count("tile.move") == 2     # no Vec → Mat move was needed
