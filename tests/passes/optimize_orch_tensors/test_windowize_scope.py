"""`pl.at(..., windowize=True)`: the opt-in of OptimizeOrchTensors pattern 5 written on the scope.

The flag survives print / parse, OutlineIncoreScopes puts it on the kernel (attrs["windowize"]),
pattern 5 slices the kernel's window at the call site, and FuseCreateAssembleToSlice drops the
assemble back into the parent: the lowered orchestration hands each task its own window."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError
from pypto.passes import PassManager
from pypto.runtime import RunConfig, run
from tests.helpers import op_names


@pl.program
class RowBands:
    @pl.function
    def main(self, x: pl.Tensor[[128, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        for i in pl.range(4):
            with pl.at(level=pl.Level.CORE_GROUP, windowize=True, name_hint="rows"):
                t = pl.load(x, [i * 32, 0], [32, 64])
                e = pl.tile.exp(t)
                out = pl.store(e, [i * 32, 0], out)
        return out


def test_the_flag_prints_and_parses_back():
    text = RowBands.as_python()
    assert "windowize=True" in text
    ir.assert_structural_equal(pl.parse(text), RowBands)
    plain = pl.parse(text.replace(", windowize=True", ""))
    assert not ir.structural_equal(plain, RowBands)


def test_the_outlined_kernel_carries_the_opt_in():
    prog = PassManager().run(RowBands, until="OutlineIncoreScopes")
    assert prog["rows"].attrs.get("windowize") is True
    plain = pl.parse(RowBands.as_python().replace(", windowize=True", ""))
    plain = PassManager().run(plain, until="OutlineIncoreScopes")
    assert "windowize" not in plain["rows"].attrs


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_each_task_gets_its_window_and_results_match_numpy(platform):
    x = np.random.default_rng(31).uniform(-1, 1, (128, 64)).astype(np.float32)
    out = np.full((128, 64), np.nan, np.float32)
    compiled = run(RowBands, x, out, config=RunConfig(platform=platform))
    main = compiled.lowered["main"]
    assert "rows__windowed" in compiled.lowered.functions
    windowed = compiled.lowered["rows__windowed"]
    assert [[d.value for d in p.type.shape] for p in windowed.params if isinstance(p.type, ir.TensorType)] == [[32, 64]] * 2
    assert op_names(main).count("tensor.slice") == 2 and "tensor.assemble" not in op_names(main)
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-6)


def test_windowize_must_be_a_bool_on_a_core_group_scope():
    good = RowBands.as_python()
    with pytest.raises(PyptoError, match="windowize must be True or False"):
        pl.parse(good.replace("windowize=True", "windowize=3"))
    with pytest.raises(PyptoError, match="windowize=True applies to pl.at"):
        pl.parse(good.replace("level=pl.Level.CORE_GROUP, windowize=True",
                              "level=pl.Level.HOST, role=pl.Role.SubWorker, windowize=True"))
