"""Where the AUTO `pl.split` lowering happens: LowerAutoVectorSplit (seed 004) turns the kernel's
C→V move into `tile.aiv_shard` and halves its vector tiles before ExpandMixedKernel, so every later
pass sees the same lane code a `pl.split_aiv` region gives; and the split-axis transpose check for
INT8 data."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedError
from pypto.ir.enums import FunctionType, MemorySpace
from pypto.ir.stmt import AssignStmt
from pypto.ir.types import TileType
from pypto.ir.visitor import collect
from pypto.runtime import RunConfig


@pl.program
class AutoSplit:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
            z = pl.matmul(a, b, out_dtype=pl.FP32)
            c = pl.assemble(c, pl.exp(z), [0, 0])
        return c


def _vec_rows(func) -> set:
    return {s.var.type.shape[0].value for s in collect(func.body, lambda n: isinstance(n, AssignStmt))
            if isinstance(s.var.type, TileType) and s.var.type.memory_space is MemorySpace.Vec}


def _dump(tmp_path, name):
    path = next((tmp_path / "passes_dump").glob(f"*_after_{name}.py"))
    return pl.parse(path.read_text())


def _calls(func, name):
    from pypto.passes.analysis import calls_in
    return [c for c in calls_in(func.body) if getattr(c.op, "name", None) == name]


def test_auto_split_is_halved_by_lower_auto_vector_split(tmp_path):
    ir.compile(AutoSplit, output_dir=tmp_path, dump_passes=True, platform="a5sim")
    before = _dump(tmp_path, "InferTileMemorySpace")
    kernel = next(f for f in before.functions.values() if f.func_type is FunctionType.InCore)
    assert _vec_rows(kernel) == {16} and not _calls(kernel, "tile.aiv_shard")   # whole tiles, a plain move
    after_lower = _dump(tmp_path, "LowerAutoVectorSplit")
    kernel = next(f for f in after_lower.functions.values() if f.func_type is FunctionType.InCore)
    assert kernel.attrs["split"] is pl.SplitMode.UP_DOWN and kernel.attrs["split_aiv"] is True
    assert _vec_rows(kernel) == {8}                                      # each lane's half, already here
    (shard,) = _calls(kernel, "tile.aiv_shard")
    assert shard.kwargs["split"] == 1 and shard.args[0].type.memory_space is MemorySpace.Acc
    assert len(_calls(kernel, "tile.get_subblock_idx")) == 1
    after_split = _dump(tmp_path, "SplitVectorKernel")
    aiv = next(f for f in after_split.functions.values() if f.func_type is FunctionType.AIV)
    assert _vec_rows(aiv) == {8}                                        # not halved a second time
    assert "pl.tile.tpop_from_aic(split=1" in after_split.as_python()


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_auto_split_runs_numpy_equal(platform):
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (16, 32)).astype(np.float16)
    b = rng.uniform(-1, 1, (32, 16)).astype(np.float16)
    c = np.full((16, 16), np.nan, np.float32)
    ir.compile(AutoSplit, platform=platform)(a, b, c)
    np.testing.assert_allclose(c, np.exp(a.astype(np.float32) @ b.astype(np.float32)), rtol=1e-5, atol=1e-5)


@pl.jit
def int8_transpose(a: pl.Tensor, b: pl.Tensor, x: pl.Tensor, c: pl.Out[pl.Tensor], d: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT)]):
        z = pl.matmul(a, b, out_dtype=pl.INT32)
        c = pl.assemble(c, z, [0, 0])
        d = pl.assemble(d, pl.transpose(x, 0, 1), [0, 0])
    return c, d


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_int8_transpose_of_the_split_axis_gets_the_actionable_message(platform):
    args = (np.ones((16, 32), np.int8), np.ones((32, 32), np.int8), np.ones((32, 64), np.int8),
            np.zeros((16, 32), np.int32), np.zeros((64, 32), np.int8))
    with pytest.raises(UnsupportedError) as err:
        int8_transpose.lower(*args, config=RunConfig(platform=platform))
    text = str(err.value)
    assert "pl.split(pl.SplitMode.LEFT_RIGHT)" in text and "tile.transpose of 'x_tile'" in text
    assert "swaps the split axis (columns)" in text
    assert "pl.SplitMode.NONE" in text and "column slice" in text
