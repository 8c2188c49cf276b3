"""InferTileMemorySpace: backward demand retargets loads that only feed the cube into Mat."""

import pypto.language as pl
from pypto import ir
from pypto.passes.manager import PassManager
from pypto.pypto_core import passes

from tests.passes.infer_tile_memory_space.demand_marks import open_landing_spaces


def test_a_load_read_only_by_cube_moves_lands_in_mat():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            ta: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [32, 32], [32, 32])
            tb: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [0, 0], [32, 32], [32, 32])
            tl: pl.Tile[[32, 32], pl.FP32, pl.Mem.Left] = pl.tile.move(ta, target_memory=pl.Mem.Left)
            tr: pl.Tile[[32, 32], pl.FP32, pl.Mem.Right] = pl.tile.move(tb, target_memory=pl.Mem.Right)
            c: pl.Tile[[32, 32], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(tl, tr)
            r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(c, [0, 0], out)
            return r

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            ta: pl.Tile[[32, 32], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [32, 32], [32, 32],
                                                                     target_memory=pl.Mem.Mat)
            tb: pl.Tile[[32, 32], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [32, 32], [32, 32],
                                                                     target_memory=pl.Mem.Mat)
            tl: pl.Tile[[32, 32], pl.FP32, pl.Mem.Left] = pl.tile.move(ta, target_memory=pl.Mem.Left)
            tr: pl.Tile[[32, 32], pl.FP32, pl.Mem.Right] = pl.tile.move(tb, target_memory=pl.Mem.Right)
            c: pl.Tile[[32, 32], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(tl, tr)
            r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(c, [0, 0], out)
            return r

    ir.assert_structural_equal(passes.infer_tile_memory_space()(open_landing_spaces(Before)), Expected)


def test_a_load_a_vector_op_also_reads_keeps_vec():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]],
              out2: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            ta: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [32, 32], [32, 32])
            tl: pl.Tile[[32, 32], pl.FP32, pl.Mem.Left] = pl.tile.move(ta, target_memory=pl.Mem.Left)
            e: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.exp(ta)
            r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(e, [0, 0], out)
            return r

    after = passes.infer_tile_memory_space()(P)
    load = after["k"].body.stmts[0].value
    assert load.kwargs["target_memory"] is pl.Mem.Vec


@pl.program
class CubeMovesOfDefaultLoads:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32],
          out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        ta = pl.load(a, [0, 0], [32, 32])
        tb = pl.load(b, [0, 0], [32, 32])
        tl = pl.move(ta, target_memory=pl.Mem.Left)
        tr = pl.move(tb, target_memory=pl.Mem.Right)
        c = pl.matmul(tl, tr)
        r: pl.Tensor[[32, 32], pl.FP32] = pl.store(c, [0, 0], out)
        return r


def _move_targets(func) -> list:
    return [s.value.kwargs["target_memory"] for s in func.body.stmts
            if isinstance(s, ir.AssignStmt) and s.value.op.name == "tile.move"]


@pl.program
class TileMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32],
          out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        ta: pl.Tile[[32, 32], pl.FP32] = pl.load(a, [0, 0], [32, 32])
        tb: pl.Tile[[32, 32], pl.FP32] = pl.load(b, [0, 0], [32, 32])
        c: pl.Tile[[32, 32], pl.FP32] = pl.matmul(ta, tb)
        r: pl.Tensor[[32, 32], pl.FP32] = pl.store(c, [0, 0], out)
        return r


def test_tile_level_matmul_on_default_loads_keeps_the_vec_loads_and_hands_them_to_the_cube():
    # pl.load states Vec (its default), and a stated space is never overridden: the loads stay on
    # the vector side and the kernel splits into a vector half and a cube half.
    final = PassManager.get_strategy().run_passes(TileMatmul)
    assert final["k"].func_type is pl.FunctionType.Group
    assert final["k_aic"].func_type is pl.FunctionType.AIC and final["k_aiv"].func_type is pl.FunctionType.AIV


def test_a_stated_vec_load_feeding_a_cube_move_is_not_retargeted():
    after = passes.infer_tile_memory_space()(CubeMovesOfDefaultLoads)
    loads = [s for s in after["k"].body.stmts if isinstance(s, ir.AssignStmt) and s.value.op.name == "tile.load"]
    assert [s.value.kwargs["target_memory"] for s in loads] == [pl.Mem.Vec, pl.Mem.Vec]
    assert all(s.var.type.memory_space is pl.Mem.Vec for s in loads)
    assert _move_targets(after["k"]) == [pl.Mem.Left, pl.Mem.Right]


def test_a_create_read_only_by_cube_moves_is_retargeted_to_mat_not_moved():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, b: pl.Tensor[[32, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            z: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.create([32, 32], dtype=pl.FP32)
            tb: pl.Tile[[32, 32], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [32, 32], [32, 32],
                                                                     target_memory=pl.Mem.Mat)
            tl: pl.Tile[[32, 32], pl.FP32, pl.Mem.Left] = pl.tile.move(z, target_memory=pl.Mem.Left)
            tr: pl.Tile[[32, 32], pl.FP32, pl.Mem.Right] = pl.tile.move(tb, target_memory=pl.Mem.Right)
            c: pl.Tile[[32, 32], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(tl, tr)
            r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(c, [0, 0], out)
            return r

    after = passes.infer_tile_memory_space()(open_landing_spaces(Before))
    create = after["k"].body.stmts[0].value
    assert create.op.name == "tile.create" and create.kwargs["target_memory"] is pl.Mem.Mat
    assert create.type.memory_space is pl.Mem.Mat
    moves = [s.value for s in after["k"].body.stmts if isinstance(s, ir.AssignStmt)
             and isinstance(s.value, ir.Call) and s.value.op.name == "tile.move"]
    assert len(moves) == 2                                  # no Vec → Mat move was added for z


def test_a_create_a_vector_op_writes_keeps_vec():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            z: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.create([32, 32], dtype=pl.FP32)
            f: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.exp(z)
            tl: pl.Tile[[32, 32], pl.FP32, pl.Mem.Left] = pl.tile.move(z, target_memory=pl.Mem.Left)
            r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(f, [0, 0], out)
            return r

    after = passes.infer_tile_memory_space()(P)
    assert after["k"].body.stmts[0].value.kwargs["target_memory"] is pl.Mem.Vec
