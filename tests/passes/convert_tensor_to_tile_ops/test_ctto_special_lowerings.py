"""ConvertTensorToTileOps: seed 003's special lowerings (scatter_update, paged_gather, create_l1 +
gather_row, aiv_shard / aic_gather) as Before / Expected programs, and their type rules."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError, TypeCheckError
from pypto.ir.visitor import collect
from pypto.pypto_core import passes


def _convert(program):
    return passes.convert_tensor_to_tile_ops()(program)


def test_scatter_update_is_i32_flat_index_scatter_mask_and_select():
    """The seed's FP32 example: [32, 32] input, [2, 8] index, [16, 32] src."""
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[32, 32], pl.FP32], idx: pl.Tensor[[2, 8], pl.INT32],
              src: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[32, 32], pl.FP32]:
            y: pl.Tensor[[32, 32], pl.FP32] = pl.scatter_update(x, -2, idx, src)
            return y

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[32, 32], pl.FP32], idx: pl.Tensor[[2, 8], pl.INT32],
              src: pl.Tensor[[16, 32], pl.FP32],
              ret0_out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            x_t: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [32, 32], [32, 32])
            idx_t: pl.Tile[[2, 8], pl.INT32, pl.Mem.Vec] = pl.tile.load(idx, [0, 0], [2, 8], [2, 8])
            src_t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(src, [0, 0], [16, 32], [16, 32])
            col: pl.Tile[[1, 32], pl.INT32, pl.Mem.Vec] = pl.tile.ci(pl.const(0, pl.INT32), [1, 32], dtype=pl.INT32)
            zero: pl.Tile[[16, 32], pl.INT32, pl.Mem.Vec] = pl.tile.full([16, 32], dtype=pl.INT32, value=0)
            col_nd: pl.Tile[[16, 32], pl.INT32, pl.Mem.Vec] = pl.tile.col_expand(zero, col)
            index_col: pl.Tile[[16, 1], pl.INT32, pl.Mem.Vec] = pl.tile.reshape(idx_t, [16, 1])
            row_base: pl.Tile[[16, 1], pl.INT32, pl.Mem.Vec] = pl.tile.muls(index_col, pl.const(32, pl.INT32))
            flat: pl.Tile[[16, 32], pl.INT32, pl.Mem.Vec] = pl.tile.row_expand_add(col_nd, row_base)
            base: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.full([32, 32], dtype=pl.FP32, value=0)
            scattered: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.scatter(base, src_t, flat)
            mask_base: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.full([32, 32], dtype=pl.FP32, value=0)
            ones: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.full([16, 32], dtype=pl.FP32, value=1)
            hit: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.scatter(mask_base, ones, flat)
            pred: pl.Tile[[32, 32], pl.UINT8, pl.Mem.Vec, pl.TileView(valid_shape=[32, 4])] = \
                pl.tile.cmps(hit, 0, cmp_type=pl.CmpType.NE)
            tmp: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.create([32, 32], dtype=pl.FP32)
            y: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.sel(pred, scattered, x_t, tmp)
            ret0_store: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(y, [0, 0], ret0_out)
            return ret0_store

    ir.assert_structural_equal(_convert(Before), Expected)


def test_scatter_update_of_two_byte_data_narrows_the_finished_index_to_i16():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[32, 32], pl.FP16], idx: pl.Tensor[[2, 8], pl.INT32],
              src: pl.Tensor[[16, 32], pl.FP16]) -> pl.Tensor[[32, 32], pl.FP16]:
            y: pl.Tensor[[32, 32], pl.FP16] = pl.scatter_update(x, -2, idx, src)
            return y

    kernel = _convert(Before)["k"]
    calls = [c for c in collect(kernel.body, lambda n: isinstance(n, ir.Call))]
    names = [c.op.name for c in calls]
    casts = [c for c in calls if c.op.name == "tile.cast"]
    # one cast, i32 → i16, after the row_expand_add that finishes the index and before the first scatter
    assert [c.kwargs["target_type"] for c in casts] == [pl.INT16]
    assert casts[0].kwargs["mode"] is pl.CastMode.none
    assert names.index("tile.row_expand_add") < names.index("tile.cast") < names.index("tile.scatter")
    assert "tile.mul" not in names            # the preserve blend is a select, never a multiply


def test_scatter_update_rejects_other_dims_and_mismatched_rows():
    x = ir.Var("x", ir.TensorType([32, 32], pl.FP32))
    idx = ir.Var("idx", ir.TensorType([2, 8], pl.INT32))
    src = ir.Var("src", ir.TensorType([16, 32], pl.FP32))
    with pytest.raises(TypeCheckError, match="only dim=-2"):
        ir.create_op_call("tensor.scatter_update", [x, -1, idx, src])
    short = ir.Var("src", ir.TensorType([12, 32], pl.FP32))
    with pytest.raises(TypeCheckError, match="names 16 rows but src has 12"):
        ir.create_op_call("tensor.scatter_update", [x, -2, idx, short])


def test_paged_gather_is_a_scalar_row_loop_of_gather_row_into_one_accumulator():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, pool: pl.Tensor[[64, 32], pl.FP32], ids: pl.Tensor[[16], pl.INT32],
              table: pl.Tensor[[4], pl.INT32]) -> pl.Tensor[[16, 32], pl.FP32]:
            g: pl.Tensor[[16, 32], pl.FP32] = pl.paged_gather(pool, ids, table, 16, 32, 16)
            return g

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, pool: pl.Tensor[[64, 32], pl.FP32], ids: pl.Tensor[[16], pl.INT32],
              table: pl.Tensor[[4], pl.INT32],
              ret0_out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
            acc0: pl.Tile[[16, 32], pl.FP32, pl.Mem.Mat] = pl.tile.create([16, 32], dtype=pl.FP32,
                                                                          target_memory=pl.Mem.Mat)
            for i, (acc,) in pl.range(16, init_values=(acc0,)):
                idx: pl.Scalar[pl.INT32] = pl.tensor.read(ids, [i])
                page: pl.Scalar[pl.INT32] = pl.tensor.read(table, [idx // 16])
                phys: pl.Scalar[pl.INT32] = page * 16 + idx % 16
                row: pl.Tile[[16, 32], pl.FP32, pl.Mem.Mat] = pl.tile.gather_row(acc, pool, [i, 0], [phys, 0],
                                                                                 [1, 32])
                gathered = pl.yield_(row)
            g: pl.Tile[[16, 32], pl.FP32, pl.Mem.Mat] = gathered
            ret0_store: pl.Tensor[[16, 32], pl.FP32] = pl.tile.store(g, [0, 0], ret0_out)
            return ret0_store

    after = _convert(Before)
    ir.assert_structural_equal(after, Expected)
    names = {c.op.name for c in collect(after["k"].body, lambda n: isinstance(n, ir.Call))}
    assert "tile.assemble" not in names and "tile.load" not in names   # straight GM → L1, no Vec staging


def test_paged_gather_transposed_fills_columns_and_checks_its_operands():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, pool: pl.Tensor[[64, 32], pl.FP32], ids: pl.Tensor[[1, 8], pl.INT32],
              table: pl.Tensor[[1, 4], pl.INT32]) -> pl.Tensor[[32, 8], pl.FP32]:
            g: pl.Tensor[[32, 8], pl.FP32] = pl.paged_gather(pool, ids, table, 16, 32, 8, is_trans=True)
            return g

    kernel = _convert(Before)["k"]
    gather = collect(kernel.body, lambda n: isinstance(n, ir.Call) and not n.is_function_call()
                        and n.op.name == "tile.gather_row")[0]
    assert gather.kwargs["transpose"] is True and gather.type.shape[0].value == 32
    assert isinstance(gather.args[2].elements[0], ir.ConstInt)          # dst offset [0, i]: one column per row
    pool = ir.Var("pool", ir.TensorType([64, 32], pl.FP32))
    bad_ids = ir.Var("ids", ir.TensorType([8], pl.FP32))
    table = ir.Var("t", ir.TensorType([4], pl.INT32))
    with pytest.raises(TypeCheckError, match="indices must be an INT32"):
        ir.create_op_call("tensor.paged_gather", [pool, bad_ids, table],
                          {"block_size": 16, "size": 32, "max_indices": 8})
    with pytest.raises(TypeCheckError, match="is_trans=True needs space=Mat"):
        ir.create_op_call("tensor.paged_gather", [pool, table, table],
                          {"block_size": 16, "size": 32, "max_indices": 8, "is_trans": True,
                           "space": pl.Mem.Vec})


def test_create_l1_and_gather_row_with_a_runtime_valid_shape():
    """The seed's two-run split: the second window [r1, r1 + 128) overhangs; only valid rows count."""
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, pool: pl.Tensor[[256, 64], pl.BF16], b0: pl.Scalar[pl.INDEX], b1: pl.Scalar[pl.INDEX],
              r1: pl.Scalar[pl.INDEX]) -> pl.Tensor[[128, 64], pl.BF16]:
            kv: pl.Tensor[[128, 64], pl.BF16] = pl.create_l1([128, 64], pl.BF16)
            kv1: pl.Tensor[[128, 64], pl.BF16] = pl.gather_row(kv, pool, [0, 0], [b0, 0], [128, 64],
                                                                valid_shape=[r1, 64])
            kv2: pl.Tensor[[128, 64], pl.BF16] = pl.gather_row(kv1, pool, [r1, 0], [b1, 0], [128, 64],
                                                                valid_shape=[128 - r1, 64])
            return kv2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, pool: pl.Tensor[[256, 64], pl.BF16], b0: pl.Scalar[pl.INDEX], b1: pl.Scalar[pl.INDEX],
              r1: pl.Scalar[pl.INDEX],
              ret0_out: pl.Out[pl.Tensor[[128, 64], pl.BF16]]) -> pl.Tensor[[128, 64], pl.BF16]:
            kv: pl.Tile[[128, 64], pl.BF16, pl.Mem.Mat] = pl.tile.create([128, 64], dtype=pl.BF16,
                                                                         target_memory=pl.Mem.Mat)
            kv1: pl.Tile[[128, 64], pl.BF16, pl.Mem.Mat] = pl.tile.gather_row(kv, pool, [0, 0], [b0, 0], [128, 64],
                                                                              valid_shape=[r1, 64])
            kv2: pl.Tile[[128, 64], pl.BF16, pl.Mem.Mat] = pl.tile.gather_row(kv1, pool, [r1, 0], [b1, 0],
                                                                              [128, 64], valid_shape=[128 - r1, 64])
            ret0_store: pl.Tensor[[128, 64], pl.BF16] = pl.tile.store(kv2, [0, 0], ret0_out)
            return ret0_store

    ir.assert_structural_equal(_convert(Before), Expected)


def test_gather_row_bounds_rule_is_on_the_written_region():
    acc = ir.Var("acc", ir.TensorType([128, 64], pl.BF16))
    pool = ir.Var("pool", ir.TensorType([256, 64], pl.BF16))
    # window [64, 192) overhangs the 128 rows, but only 64 rows are written: accepted
    ir.create_op_call("tensor.gather_row", [acc, pool, [64, 0], [0, 0], [128, 64], [64, 64]])
    with pytest.raises(TypeCheckError, match=r"writes \[64, 192\) beyond the destination extent 128"):
        ir.create_op_call("tensor.gather_row", [acc, pool, [64, 0], [0, 0], [128, 64]])
    with pytest.raises(TypeCheckError, match="valid_shape 200 is outside"):
        ir.create_op_call("tensor.gather_row", [acc, pool, [0, 0], [0, 0], [128, 64], [200, 64]])
    r = ir.Var("r", ir.ScalarType(pl.INDEX))
    with pytest.raises(TypeCheckError, match="shapes must be compile-time"):
        ir.create_op_call("tensor.gather_row", [acc, pool, [0, 0], [0, 0], [r, 64]])
    with pytest.raises(TypeCheckError, match="cannot be combined with transpose"):
        ir.create_op_call("tensor.gather_row", [acc, pool, [0, 0], [0, 0], [64, 128], [64, 128]],
                          {"transpose": True})


def test_gather_row_sixth_positional_is_transpose_and_valid_shape_is_keyword_only():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, pool: pl.Tensor[[256, 64], pl.BF16]) -> pl.Tensor[[64, 128], pl.BF16]:
            kv: pl.Tensor[[64, 128], pl.BF16] = pl.create_l1([64, 128], pl.BF16, True)
            kv1: pl.Tensor[[64, 128], pl.BF16] = pl.gather_row(kv, pool, [0, 0], [0, 0], [128, 64], True)
            return kv1

    call = P["k"].body.stmts[1].value
    assert call.op.name == "tensor.gather_row" and call.kwargs["transpose"] is True and len(call.args) == 5
    assert P["k"].body.stmts[0].value.kwargs["transpose"] is True


def test_aiv_shard_and_aic_gather_lower_one_to_one_with_the_region_split():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, q: pl.Tensor[[64, 64], pl.FP32], kk: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
            raw: pl.Tensor[[64, 64], pl.FP32] = pl.matmul(q, kk)
            for lane in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):
                h: pl.Tensor[[64, 32], pl.FP32] = pl.aiv_shard(raw)
                s: pl.Tensor[[64, 32], pl.FP32] = pl.exp(h)
                full: pl.Tensor[[64, 64], pl.FP32] = pl.aic_gather(s)
            return full

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, q: pl.Tensor[[64, 64], pl.FP32], kk: pl.Tensor[[64, 64], pl.FP32],
              ret0_out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            q_mat: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(q, [0, 0], [64, 64], [64, 64],
                                                                         target_memory=pl.Mem.Mat,
                                                                         attrs={"__compiler_tensor_to_tile_mat_bridge": True})
            k_mat: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(kk, [0, 0], [64, 64], [64, 64],
                                                                         target_memory=pl.Mem.Mat,
                                                                         attrs={"__compiler_tensor_to_tile_mat_bridge": True})
            raw: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(q_mat, k_mat)
            for lane in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):
                h: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.aiv_shard(raw, split=2)
                s: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.exp(h)
                full: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.aic_gather(s, split=2)
            ret0_store: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(full, [0, 0], ret0_out)
            return ret0_store

    ir.assert_structural_equal(_convert(Before), Expected)


def test_aiv_shard_on_a_tensor_needs_a_split_region_and_a_2d_operand():
    with pytest.raises(PyptoError, match="only valid inside a `for lane in pl.split_aiv"):
        @pl.program
        class Outside:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[32, 64], pl.FP32]:
                h: pl.Tensor[[32, 64], pl.FP32] = pl.aiv_shard(x)
                return h

    with pytest.raises(PyptoError, match="must be 2-D.*pl.reshape"):
        @pl.program
        class ThreeD:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[4, 64, 64], pl.FP32]) -> pl.Tensor[[4, 64, 64], pl.FP32]:
                for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    h: pl.Tensor[[2, 64, 64], pl.FP32] = pl.aiv_shard(x)
                return x

    with pytest.raises(PyptoError, match="tile.aiv_shard: argument 'x' must be a Tile"):
        @pl.program
        class TileFormOnTensor:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[32, 64], pl.FP32]:
                h: pl.Tensor[[32, 64], pl.FP32] = pl.tile.aiv_shard(x, split=1)
                return h


def test_aiv_shard_on_a_tile_inside_a_region_takes_the_region_split():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
            t: pl.Tile[[64, 64], pl.FP32] = pl.load(x, [0, 0], [64, 64])
            for lane in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):
                h: pl.Tile[[64, 32], pl.FP32] = pl.aiv_shard(t)
            return x

    shard = collect(P["k"].body, lambda n: isinstance(n, ir.Call) and not n.is_function_call()
                    and n.op.name == "tile.aiv_shard")[0]
    assert shard.kwargs["split"] == 2


def test_tile_aic_gather_without_split_takes_the_region_mode():
    """Inside a pl.split_aiv region the region provides the split mode (seed 003), also to the tile form."""
    @pl.program
    class Tiles:
        @pl.function(type=pl.FunctionType.InCore, attrs={"split_aiv": True, "split": pl.SplitMode.LEFT_RIGHT})
        def k(self, x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]
              ) -> pl.Tensor[[64, 128], pl.FP32]:
            xt: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [64, 64], [64, 64])
            for lane in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):
                h: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(xt)
                full: pl.Tile[[64, 128], pl.FP32, pl.Mem.Mat] = pl.tile.aic_gather(h)
            out = pl.tile.store(full, [0, 0], out)
            return out

    from pypto.ir.expr import Call
    from pypto.ir.visitor import collect
    gathers = collect(Tiles.get_function("k").body,
                      lambda n: isinstance(n, Call) and not n.is_function_call() and n.op.name == "tile.aic_gather")
    assert len(gathers) == 1 and gathers[0].kwargs["split"] == 2
    assert [d.value for d in gathers[0].type.shape] == [64, 128]
