"""tensor.create_l1(transpose=True) + tensor.gather_row(transpose=True): the ZN Mat accumulator.

GM row [r, c] of each gathered window lands at L1 [c, r]; the lowered tile.create carries the
transposed fractal view (blayout row_major, slayout col_major); a cube matmul consumes it."""

import numpy as np

import pypto.language as pl
from pypto import ir
from pypto.ir.visitor import collect
from pypto.pypto_core import passes
from pypto.ir.enums import TileLayout
from pypto.runtime import run

RNG = np.random.default_rng(11)


@pl.program
class GatherTransposed:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, q: pl.Tensor[[16, 64], pl.FP32], pool: pl.Tensor[[256, 64], pl.FP32], b0: pl.Scalar[pl.INDEX],
             b1: pl.Scalar[pl.INDEX],
             out: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            kv: pl.Tensor[[64, 128], pl.FP32] = pl.create_l1([64, 128], pl.FP32, transpose=True)
            kv1: pl.Tensor[[64, 128], pl.FP32] = pl.gather_row(kv, pool, [0, 0], [b0, 0], [64, 64], transpose=True)
            kv2: pl.Tensor[[64, 128], pl.FP32] = pl.gather_row(kv1, pool, [0, 64], [b1, 0], [64, 64],
                                                                transpose=True)
            out = pl.assemble(out, pl.matmul(q, kv2), [0, 0])
        return out


def test_transposed_create_l1_lowers_to_a_zn_mat_tile():
    @pl.program
    class Kernel:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, pool: pl.Tensor[[256, 64], pl.FP32], b0: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 128], pl.FP32]:
            kv: pl.Tensor[[64, 128], pl.FP32] = pl.create_l1([64, 128], pl.FP32, transpose=True)
            kv1: pl.Tensor[[64, 128], pl.FP32] = pl.gather_row(kv, pool, [0, 0], [b0, 0], [128, 64], transpose=True)
            return kv1

    kernel = passes.convert_tensor_to_tile_ops()(Kernel)["k"]
    calls = collect(kernel.body, lambda n: isinstance(n, ir.Call) and not n.is_function_call())
    create = [c for c in calls if c.op.name == "tile.create"]
    assert len(create) == 1 and create[0].kwargs.get("transpose") is True
    view = create[0].type.tile_view
    assert view is not None and view.blayout is TileLayout.row_major and view.slayout is TileLayout.col_major
    assert create[0].type.memory_space is pl.Mem.Mat
    gather = [c for c in calls if c.op.name == "tile.gather_row"][0]
    assert gather.type.tile_view == view                                  # the in-place result keeps the ZN view


def test_transposed_gather_row_places_gm_row_r_col_c_at_l1_col_r_row_c():
    q, pool = RNG.standard_normal((16, 64), dtype=np.float32), RNG.standard_normal((256, 64), dtype=np.float32)
    got = np.zeros((16, 128), np.float32)
    run(GatherTransposed)(q, pool, 8, 130, got)
    kv = np.concatenate([pool[8:72].T, pool[130:194].T], axis=1)        # [64, 128]: GM [r, c] at [c, r]
    np.testing.assert_allclose(got, q @ kv, rtol=1e-5, atol=1e-5)


def test_tile_create_transpose_needs_mat():
    import pytest
    from pypto.errors import TypeCheckError
    with pytest.raises(TypeCheckError, match="transpose=True .* needs target_memory=Mat"):
        ir.create_op_call("tile.create", [[16, 16]], {"dtype": pl.FP32, "target_memory": pl.Mem.Vec,
                                                      "transpose": True})
