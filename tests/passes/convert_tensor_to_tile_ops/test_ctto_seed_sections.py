"""ConvertTensorToTileOps: one Before / Expected program per section of seed 003.

(The seed's own Before/After example, iter-arg propagation, Spmd forwarding and the
missing-converter error live in tests/passes/test_convert_tensor_to_tile_ops.py.)
Tile annotations spell the memory space type deduction gives them (docs/internals.md §1).
"""

import pypto.language as pl
from pypto import ir
from pypto.pypto_core import passes

# the provenance mark ConvertTensorToTileOps puts on the Mat loads it makes for cube operands
BRIDGE = {"__compiler_tensor_to_tile_mat_bridge": True}


def _convert(program):
    return passes.convert_tensor_to_tile_ops()(program)


@pl.program
class SliceMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[32, 64], pl.FP32]) -> pl.Tensor[[32, 32], pl.FP32]:
        a_s: pl.Tensor[[32, 64], pl.FP32] = pl.slice(a, [32, 64], [32, 0])
        b_s: pl.Tensor[[32, 64], pl.FP32] = pl.slice(b, [32, 64], [0, 0])
        c: pl.Tensor[[32, 32], pl.FP32] = pl.matmul(a_s, b_s, b_trans=True)
        return c


def test_matmul_slice_loads_into_mat_and_transposed_operand_gets_a_transpose_view():
    """The matmul reads the Mat tiles themselves; no Mat → Left / Right move is this pass's."""
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[32, 64], pl.FP32],
              ret0_out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            a_s: pl.Tile[[32, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [32, 0], [32, 64], [32, 64],
                                                                       target_memory=pl.Mem.Mat, attrs=BRIDGE)
            b_s: pl.Tile[[32, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [32, 64], [32, 64],
                                                                       target_memory=pl.Mem.Mat, attrs=BRIDGE)
            b_t: pl.Tile[[64, 32], pl.FP32, pl.Mem.Mat,
                        pl.TileView(blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.col_major)] = \
                pl.tile.transpose_view(b_s)
            c: pl.Tile[[32, 32], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a_s, b_t)
            ret0_store: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(c, [0, 0], ret0_out)
            return ret0_store

    ir.assert_structural_equal(_convert(SliceMatmul), Expected)


def test_infer_tile_memory_space_adds_the_mat_to_left_right_moves():
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[32, 64], pl.FP32],
              ret0_out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            a_s: pl.Tile[[32, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [32, 0], [32, 64], [32, 64],
                                                                       target_memory=pl.Mem.Mat, attrs=BRIDGE)
            b_s: pl.Tile[[32, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [32, 64], [32, 64],
                                                                       target_memory=pl.Mem.Mat, attrs=BRIDGE)
            b_t: pl.Tile[[64, 32], pl.FP32, pl.Mem.Mat,
                        pl.TileView(blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.col_major)] = \
                pl.tile.transpose_view(b_s)
            a_l: pl.Tile[[32, 64], pl.FP32, pl.Mem.Left] = pl.tile.move(a_s, target_memory=pl.Mem.Left)
            b_r: pl.Tile[[64, 32], pl.FP32, pl.Mem.Right] = \
                pl.tile.move(b_t, target_memory=pl.Mem.Right)
            c: pl.Tile[[32, 32], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a_l, b_r)
            ret0_store: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(c, [0, 0], ret0_out)
            return ret0_store

    after = passes.infer_tile_memory_space()(_convert(SliceMatmul))
    ir.assert_structural_equal(after.get_function("k"), Expected.get_function("k"))


def test_a_vec_operand_moves_to_mat_in_its_own_shape_then_views():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 64], pl.FP32], b0: pl.Tensor[[32, 64], pl.FP32],
              b1: pl.Tensor[[32, 64], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:
            bt: pl.Tensor[[32, 64], pl.FP32] = pl.add(b0, b1)
            y: pl.Tensor[[16, 32], pl.FP32] = pl.matmul(a, bt, b_trans=True)
            return y

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 64], pl.FP32], b0: pl.Tensor[[32, 64], pl.FP32],
              b1: pl.Tensor[[32, 64], pl.FP32],
              ret0_out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
            b0_t: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(b0, [0, 0], [32, 64], [32, 64])
            b1_t: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(b1, [0, 0], [32, 64], [32, 64])
            bt: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.add(b0_t, b1_t)
            a_m: pl.Tile[[16, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [16, 64], [16, 64],
                                                                       target_memory=pl.Mem.Mat, attrs=BRIDGE)
            bt_m: pl.Tile[[32, 64], pl.FP32, pl.Mem.Mat] = pl.tile.move(bt, target_memory=pl.Mem.Mat)
            bt_v: pl.Tile[[64, 32], pl.FP32, pl.Mem.Mat,
                        pl.TileView(blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.col_major)] = \
                pl.tile.transpose_view(bt_m)
            y: pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a_m, bt_v)
            ret0_store: pl.Tensor[[16, 32], pl.FP32] = pl.tile.store(y, [0, 0], ret0_out)
            return ret0_store

    ir.assert_structural_equal(_convert(Before), Expected)


def test_entry_loads_only_for_params_a_converted_op_reads():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 32], pl.FP32], big: pl.Tensor[[64, 32], pl.FP32],
              i: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 32], pl.FP32]:
            part: pl.Tensor[[16, 32], pl.FP32] = pl.slice(big, [16, 32], [i, 0])
            e: pl.Scalar[pl.FP32] = pl.tensor.read(big, [0, 0])
            y: pl.Tensor[[16, 32], pl.FP32] = pl.add(x, part)
            z: pl.Tensor[[16, 32], pl.FP32] = pl.muls(y, e)
            return z

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 32], pl.FP32], big: pl.Tensor[[64, 32], pl.FP32], i: pl.Scalar[pl.INDEX],
              ret0_out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
            x_tile: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 32], [16, 32],
                                                                          target_memory=pl.Mem.Vec)
            part: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(big, [i, 0], [16, 32], [16, 32],
                                                                        target_memory=pl.Mem.Vec)
            e: pl.Scalar[pl.FP32] = pl.tensor.read(big, [0, 0])
            y: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.add(x_tile, part)
            z: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.muls(y, e)
            ret0_store: pl.Tensor[[16, 32], pl.FP32] = pl.tile.store(z, [0, 0], ret0_out)
            return ret0_store

    ir.assert_structural_equal(_convert(Before), Expected)


def test_exit_store_per_returned_tile_into_new_out_params():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[8, 32], pl.FP32]) -> tuple[pl.Tensor[[8, 32], pl.FP32], pl.Tensor[[8, 1], pl.FP32]]:
            e: pl.Tensor[[8, 32], pl.FP32] = pl.exp(x)
            s: pl.Tensor[[8, 1], pl.FP32] = pl.row_sum(e)
            return e, s

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[8, 32], pl.FP32]) -> pl.Tensor[[8, 1], pl.FP32]:
            r: pl.Tuple[pl.Tensor[[8, 32], pl.FP32], pl.Tensor[[8, 1], pl.FP32]] = self.k(x)
            s: pl.Tensor[[8, 1], pl.FP32] = r[1]
            return s

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[8, 32], pl.FP32], ret0_out: pl.Out[pl.Tensor[[8, 32], pl.FP32]],
              ret1_out: pl.Out[pl.Tensor[[8, 1], pl.FP32]]) -> tuple[pl.Tensor[[8, 32], pl.FP32],
                                                                       pl.Tensor[[8, 1], pl.FP32]]:
            x_tile: pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [8, 32], [8, 32],
                                                                         target_memory=pl.Mem.Vec)
            e: pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec] = pl.tile.exp(x_tile)
            tmp: pl.Tile[[8, 128], pl.FP32, pl.Mem.Vec] = pl.tile.create([8, 128], dtype=pl.FP32,
                                                                        target_memory=pl.Mem.Vec)
            s: pl.Tile[[8, 1], pl.FP32, pl.Mem.Vec] = pl.tile.row_sum(e, tmp)
            ret0_store: pl.Tensor[[8, 32], pl.FP32] = pl.tile.store(e, [0, 0], ret0_out)
            ret1_store: pl.Tensor[[8, 1], pl.FP32] = pl.tile.store(s, [0, 0], ret1_out)
            return ret0_store, ret1_store

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[8, 32], pl.FP32]) -> pl.Tensor[[8, 1], pl.FP32]:
            ret0_out: pl.Tensor[[8, 32], pl.FP32] = pl.tensor.create([8, 32], dtype=pl.FP32)
            ret1_out: pl.Tensor[[8, 1], pl.FP32] = pl.tensor.create([8, 1], dtype=pl.FP32)
            r: pl.Tuple[pl.Tensor[[8, 32], pl.FP32], pl.Tensor[[8, 1], pl.FP32]] = self.k(x, ret0_out, ret1_out)
            s: pl.Tensor[[8, 1], pl.FP32] = r[1]
            return s

    ir.assert_structural_equal(_convert(Before), Expected)


def test_group_wrapper_forwards_out_params_and_caller_in_a_loop_creates_them():
    """Phase 2a (no tensor.create inside the wrapper) and phase 2b (a create per call, inside the loop)."""
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            y: pl.Tensor[[16, 16], pl.FP32] = pl.neg(x)
            return y

        @pl.function(type=pl.FunctionType.Group)
        def grp(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            y: pl.Tensor[[16, 16], pl.FP32] = self.k(x)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i, (a,) in pl.range(3, init_values=(x,)):
                b: pl.Tensor[[16, 16], pl.FP32] = self.grp(a)
                a_rv = pl.yield_(b)
            return a_rv

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32],
              ret0_out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            x_tile: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16], [16, 16],
                                                                          target_memory=pl.Mem.Vec)
            y: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.neg(x_tile)
            ret0_store: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(y, [0, 0], ret0_out)
            return ret0_store

        @pl.function(type=pl.FunctionType.Group)
        def grp(self, x: pl.Tensor[[16, 16], pl.FP32],
                ret0_out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y: pl.Tensor[[16, 16], pl.FP32] = self.k(x, ret0_out)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i, (a,) in pl.range(3, init_values=(x,)):
                ret0_out: pl.Tensor[[16, 16], pl.FP32] = pl.tensor.create([16, 16], dtype=pl.FP32)
                b: pl.Tensor[[16, 16], pl.FP32] = self.grp(a, ret0_out)
                a_rv = pl.yield_(b)
            return a_rv

    ir.assert_structural_equal(_convert(Before), Expected)


def test_transpose_becomes_the_three_argument_tile_transpose():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[32, 64], pl.FP32]) -> pl.Tensor[[64, 32], pl.FP32]:
            y: pl.Tensor[[64, 32], pl.FP32] = pl.transpose(x, 0, 1)
            return y

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[32, 64], pl.FP32],
              ret0_out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
            x_tile: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [32, 64], [32, 64],
                                                                          target_memory=pl.Mem.Vec)
            y: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.transpose(x_tile, 0, 1)
            ret0_store: pl.Tensor[[64, 32], pl.FP32] = pl.tile.store(y, [0, 0], ret0_out)
            return ret0_store

    ir.assert_structural_equal(_convert(Before), Expected)


def test_returned_assemble_loop_stores_each_piece_into_the_out_param():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[64, 32], pl.FP32]) -> pl.Tensor[[64, 32], pl.FP32]:
            buf: pl.Tensor[[64, 32], pl.FP32] = pl.tensor.create([64, 32], dtype=pl.FP32)
            for i, (acc,) in pl.range(4, init_values=(buf,)):
                t: pl.Tensor[[16, 32], pl.FP32] = pl.slice(x, [16, 32], [i * 16, 0])
                e: pl.Tensor[[16, 32], pl.FP32] = pl.exp(t)
                acc2: pl.Tensor[[64, 32], pl.FP32] = pl.assemble(acc, e, [i * 16, 0])
                r = pl.yield_(acc2)
            return r

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[64, 32], pl.FP32],
              ret0_out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
            for i, (acc,) in pl.range(4, init_values=(ret0_out,)):
                t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * 16, 0], [16, 32], [16, 32])
                e: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
                acc2: pl.Tensor[[64, 32], pl.FP32] = pl.tile.store(e, [i * 16, 0], acc)
                r = pl.yield_(acc2)
            return r

    ir.assert_structural_equal(_convert(Before), Expected)


def test_assemble_loop_whose_buffer_is_read_keeps_the_on_chip_buffer():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[64, 32], pl.FP32]) -> pl.Tensor[[64, 32], pl.FP32]:
            buf: pl.Tensor[[64, 32], pl.FP32] = pl.tensor.create([64, 32], dtype=pl.FP32)
            for i, (acc,) in pl.range(4, init_values=(buf,)):
                t: pl.Tensor[[16, 32], pl.FP32] = pl.slice(x, [16, 32], [i * 16, 0])
                acc2: pl.Tensor[[64, 32], pl.FP32] = pl.assemble(acc, t, [i * 16, 0])
                acc3: pl.Tensor[[64, 32], pl.FP32] = pl.add(acc2, acc2)
                r = pl.yield_(acc3)
            return r

    kernel = _convert(Before)["k"]
    names = [s.value.op.name for s in kernel.body.stmts if isinstance(s, ir.AssignStmt)]
    assert names == ["tile.create", "tile.store"]       # not the pattern: the buffer stays, one exit store


def test_types_propagate_through_if_return_vars():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], flag: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            if flag > 0:
                a: pl.Tensor[[16, 16], pl.FP32] = pl.exp(x)
                r = pl.yield_(a)
            else:
                b: pl.Tensor[[16, 16], pl.FP32] = pl.neg(x)
                r = pl.yield_(b)
            return r

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], flag: pl.Scalar[pl.INDEX],
              ret0_out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            x_tile: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16], [16, 16])
            if flag > 0:
                a: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.exp(x_tile)
                r = pl.yield_(a)
            else:
                b: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.neg(x_tile)
                r = pl.yield_(b)
            ret0_store: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(r, [0, 0], ret0_out)
            return ret0_store

    ir.assert_structural_equal(_convert(Before), Expected)


def test_entry_loads_follow_the_parameter_order():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16], pl.FP32], b: pl.Tensor[[16], pl.FP32], c: pl.Tensor[[16], pl.FP32]
              ) -> pl.Tensor[[16], pl.FP32]:
            t: pl.Tensor[[16], pl.FP32] = pl.add(c, b)      # first use order: c, b, a
            u: pl.Tensor[[16], pl.FP32] = pl.add(t, a)
            return u

    body = _convert(Before).get_function("k").body.stmts
    loaded = [s.value.args[0].name_hint for s in body[:3]]
    assert all(s.value.op.name == "tile.load" for s in body[:3]) and loaded == ["a", "b", "c"]


def test_a_branch_that_passes_a_loaded_param_through_yields_its_entry_tile():
    """`y = x` of a param a converted op also reads aliases x's entry tile (no second load in the branch)."""
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[32], pl.FP32], flag: pl.Scalar[pl.INDEX]) -> pl.Tensor[[32], pl.FP32]:
            if flag > 0:
                same: pl.Tensor[[32], pl.FP32] = x
                r = pl.yield_(same)
            else:
                e: pl.Tensor[[32], pl.FP32] = pl.exp(x)
                r = pl.yield_(e)
            return r

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[32], pl.FP32], flag: pl.Scalar[pl.INDEX],
              ret0_out: pl.Out[pl.Tensor[[32], pl.FP32]]) -> pl.Tensor[[32], pl.FP32]:
            x_tile: pl.Tile[[32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0], [32], [32])
            if flag > 0:
                same: pl.Tile[[32], pl.FP32, pl.Mem.Vec] = x_tile
                r = pl.yield_(same)
            else:
                e: pl.Tile[[32], pl.FP32, pl.Mem.Vec] = pl.tile.exp(x_tile)
                r = pl.yield_(e)
            ret0_store: pl.Tensor[[32], pl.FP32] = pl.tile.store(r, [0], ret0_out)
            return ret0_store

    ir.assert_structural_equal(_convert(Before), Expected)
