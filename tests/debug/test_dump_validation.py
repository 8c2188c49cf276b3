"""validate_pass_ir_codegen_results: every dumped pass IR of a build, run with reference semantics and
compared by name with the expected outputs; the first wrong file is named."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.debug import validate_pass_ir_codegen_results


@pl.program
class Scale:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]
          ) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 64])
        out = pl.store(pl.add(pl.mul(t, 2.0), t), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]
             ) -> pl.Tensor[[16, 64], pl.FP32]:
        out = self.k(a, out)
        return out


@pytest.fixture
def dumps(tmp_path):
    ir.compile(Scale, platform="a2a3sim", dump_passes=True, output_dir=tmp_path / "build")
    return tmp_path / "build" / "passes_dump"


def test_every_dump_of_a_correct_build_agrees(dumps, capsys):
    a = np.random.default_rng(0).standard_normal((16, 64)).astype(np.float32)
    results = validate_pass_ir_codegen_results(dumps, {"a": a}, {"out": 3 * a})
    checked = [r for r in results if r[1] is not None]
    assert len(checked) >= 10 and all(d["out"] < 1e-5 for _, d in checked)
    printed = capsys.readouterr().out
    assert "validate tensor: 'out'" in printed and "pass: False" not in printed


def test_a_wrong_dump_is_named_with_its_difference(dumps):
    victim = sorted(dumps.glob("*_after_InitMemRef.py"))[0]
    victim.write_text(victim.read_text().replace("2.0", "5.0"))
    a = np.ones((16, 64), np.float32)
    with pytest.raises(AssertionError, match=rf"{victim.name}: 'out' differs .*max abs diff 3\.0"):
        validate_pass_ir_codegen_results(dumps, {"a": a}, {"out": 3 * a}, quiet=True)


def test_a_single_file_and_a_missing_input_are_handled(dumps):
    first = dumps / "00_frontend.py"
    a = np.ones((16, 64), np.float32)
    assert validate_pass_ir_codegen_results(first, {"a": a}, {"out": 3 * a}, quiet=True)[0][0] == first.name
    from pypto.errors import ValueCheckError
    with pytest.raises(ValueCheckError, match="no value for parameter 'a'"):
        validate_pass_ir_codegen_results(first, {}, {"out": 3 * a}, quiet=True)
