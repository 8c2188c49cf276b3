"""A matmul operand narrowed by pl.set_validshape still loads straight into Mat (the Mat demand reaches
the slice through the metadata-only set_validshape), and the product's Acc tile keeps the narrowed rows.
The Expected program writes its tile annotations without views: a view-less annotation keeps the valid
region its value deduces (the layout being the memory space's own)."""

import pypto.language as pl
from pypto import ir
from pypto.passes import convert_tensor_to_tile_ops
from pypto.passes.convert_tensor_to_tile_ops.registry import MAT_BRIDGE_ATTRS as BRIDGE
from tests.helpers import op_calls


@pl.program
class Before:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, src: pl.Tensor[[32, 64], pl.FP16], w: pl.Tensor[[64, 32], pl.FP16]) -> pl.Tensor[[16, 32], pl.FP32]:
        rows: pl.Tensor[[16, 64], pl.FP16] = pl.slice(src, [16, 64], [16, 0])
        few: pl.Tensor[[16, 64], pl.FP16] = pl.set_validshape(rows, 4, 64)
        prod: pl.Tensor[[16, 32], pl.FP32] = pl.matmul(few, w, out_dtype=pl.FP32)
        return prod


@pl.program
class Expected:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, src: pl.Tensor[[32, 64], pl.FP16], w: pl.Tensor[[64, 32], pl.FP16],
          ret0_out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        rows: pl.Tile[[16, 64], pl.FP16, pl.Mem.Mat] = pl.load(src, [16, 0], [16, 64], [16, 64],
                                                             target_memory=pl.Mem.Mat, attrs=BRIDGE)
        few = pl.tile.set_validshape(rows, 4, 64)
        w_mat: pl.Tile[[64, 32], pl.FP16, pl.Mem.Mat] = pl.load(w, [0, 0], [64, 32], [64, 32],
                                                              target_memory=pl.Mem.Mat, attrs=BRIDGE)
        prod: pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(few, w_mat)
        out: pl.Tensor[[16, 32], pl.FP32] = pl.store(prod, [0, 0], ret0_out)
        return out


def test_narrowed_operand_loads_to_mat_and_the_product_keeps_its_rows():
    after = convert_tensor_to_tile_ops()(Before)
    kernel = after["k"]
    assert "tile.move" not in [c.op.name for c in op_calls(kernel)]
    (mm,) = op_calls(kernel, "tile.matmul")
    assert [d.value for d in mm.type.valid_shape] == [4, 32]
    ir.assert_structural_equal(after["k"], Expected["k"])


def test_a_view_less_annotation_keeps_the_deduced_valid_region_only():
    k = Expected["k"]
    few, prod = (s.var for s in k.body.stmts if getattr(s, "var", None) is not None
                 and s.var.name_hint in ("few", "prod"))
    assert [d.value for d in prod.type.valid_shape] == [4, 32]
    # the layout stays the Acc tile's own (an annotation naming the space names its layout)
    implicit = ir.TileType(prod.type.shape, prod.type.dtype, memory_space=pl.Mem.Acc).effective_view
    assert prod.type.tile_view.blayout == implicit.blayout and prod.type.tile_view.slayout == implicit.slayout
    rows = next(s.var for s in k.body.stmts if getattr(s, "var", None) is not None and s.var.name_hint == "rows")
    assert rows.type.tile_view is None
