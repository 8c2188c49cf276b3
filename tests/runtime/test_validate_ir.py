"""CompiledProgram.validate_ir like a call (`validate_ir(x, w, out)`) as well as by name, on the stage
walk it shares with pypto.debug.bisect (runtime/validate_ir.py: walk_stages, compare_outputs)."""

import numpy as np
import pytest

from pypto import ir
from pypto.errors import ValueCheckError
from pypto.runtime.validate_ir import StageFailed, StageUnchecked, compare_outputs, walk_stages
from tests.runtime.test_worker import Affine


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    out = tmp_path_factory.mktemp("affine")
    return ir.compile(Affine, output_dir=out, dump_passes=True), out


def _xw():
    rng = np.random.default_rng(3)
    return [rng.standard_normal((32, 64)).astype(np.float32) for _ in range(2)]


def test_positional_arguments_like_a_call(build):
    compiled, _ = build
    x, w = _xw()
    report = compiled.validate_ir(x, w, np.zeros_like(x))           # the program as given is the reference
    assert report.culprit is None and report.stages[0].name == "as given"
    assert len(report.stages) > 5 and {s.status for s in report.stages} <= {"ok"}
    assert compiled.validate_ir(x, w, expected={"out": x * w + w}).culprit is None   # inputs only
    with pytest.raises(AssertionError, match=r"as given .*gives wrong 'out'"):
        compiled.validate_ir(x, w, np.zeros_like(x), expected={"out": x})
    with pytest.raises(ValueCheckError, match="takes 3 arguments"):
        compiled.validate_ir(x)


def test_a_broken_dump_is_named_when_called_positionally(tmp_path):
    compiled = ir.compile(Affine, output_dir=tmp_path, dump_passes=True)
    x, w = _xw()
    dumps = sorted((tmp_path / "passes_dump").glob("*_after_*.py"))
    victim = next(p for p in dumps if "pl.tile.add(" in p.read_text())
    victim.write_text(victim.read_text().replace("pl.tile.add(", "pl.tile.sub(", 1))
    pass_name = victim.stem.split("_after_", 1)[1]
    with pytest.raises(AssertionError, match=f"after {pass_name} .*max abs error"):
        compiled.validate_ir(x, w, np.zeros_like(x))


def test_the_dict_form_checks_names(build):
    compiled, _ = build
    x, w = _xw()
    with pytest.raises(ValueCheckError, match="'nope' is not a parameter"):
        compiled.validate_ir({"x": x, "w": w}, {"nope": x})
    with pytest.raises(TypeError, match="two dicts"):
        compiled.validate_ir({"x": x, "w": w}, x)


def test_the_stage_walk_stops_at_the_first_difference_and_goes_on_past_unchecked_stages():
    want = {"y": np.ones(4)}
    seen = []

    def evaluate(name, payload):
        seen.append(name)
        if payload == "skip":
            raise StageUnchecked("cannot run this one")
        if payload == "boom":
            raise StageFailed("it crashed")
        return {"y": np.ones(4) * payload}

    stages = [("a", 1.0), ("b", None), ("c", "skip"), ("d", 1.5), ("e", 1.0)]
    report = walk_stages(stages, evaluate, want, rtol=0, atol=1e-6)
    assert [s.status for s in report.stages] == ["ok", "unchanged", "unchecked", "differs"]
    assert report.culprit == "d" and report.failing.max_error == pytest.approx(0.5) and seen == ["a", "c", "d"]
    report = walk_stages([("a", "boom"), ("b", 1.0)], evaluate, want, rtol=0, atol=1e-6)
    assert report.culprit == "a" and report.failing.status == "failed" and "it crashed" in str(report)


def test_compare_outputs_counts_missing_reshaped_and_nan_outputs_as_infinite():
    want = {"a": np.zeros(3), "b": np.zeros(3), "c": np.zeros(3), "d": np.zeros(3)}
    got = {"b": np.zeros(4), "c": np.array([0, np.nan, 0]), "d": np.zeros(3)}
    assert compare_outputs(got, want, 0, 0) == [("a", float("inf")), ("b", float("inf")), ("c", float("inf"))]
