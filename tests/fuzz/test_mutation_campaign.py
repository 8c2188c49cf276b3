"""A small, fixed-size run of the mutation fuzzer (bench/fuzz.py) in CI: mutants of the examples, drawn
by Hypothesis from a fixed seed, each run in this process; none may end in an internal error, a
location-less user error or a silent wrong answer. Long campaigns: `python bench/fuzz.py --mutants 10000`."""

from __future__ import annotations

import ast
import importlib.util
import pathlib
import random
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FUZZ_PATH = pathlib.Path(__file__).parents[2] / "bench" / "fuzz.py"
_spec = importlib.util.spec_from_file_location("pypto_bench_fuzz", FUZZ_PATH)
fuzz = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = fuzz                 # (its dataclasses look their module up)
_spec.loader.exec_module(fuzz)

# quick examples and every kind but the never-ending loop (the watchdog tests in tests/reliability cover it)
FAST = [p for p in fuzz.example_paths() if p.parent.name in ("beginner", "intermediate", "utils")]
KINDS = [k for k in fuzz.MUTATORS if k != "forever"]


@settings(max_examples=10, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(index=st.integers(min_value=0, max_value=10**6))
def test_a_mutant_ends_ok_or_in_a_located_user_error(index, tmp_path_factory):
    mutant = fuzz.make_mutant(index, 0, FAST, kinds=KINDS)
    outcome, message = fuzz.run_mutant(mutant, str(tmp_path_factory.mktemp("mutant")))
    assert outcome not in fuzz.BAD, (f"{outcome}: {mutant.example} {mutant.platform} {mutant.mutation}: {message}\n"
                                     + mutant.source)


def test_mutants_are_reproducible_and_change_the_program():
    a = fuzz.make_mutant(17, 3, FAST)
    b = fuzz.make_mutant(17, 3, FAST)
    assert a.source == b.source and a.mutation == b.mutation
    original = ast.unparse(ast.parse((fuzz.EXAMPLES / a.example).read_text()))
    assert a.source != original


@pytest.mark.parametrize("kind", sorted(fuzz.MUTATORS))
def test_every_mutation_kind_finds_a_site_in_some_example(kind):
    for path in fuzz.example_paths():
        tree = ast.parse(path.read_text())
        for fn in fuzz.kernel_functions(tree):
            if fuzz.MUTATORS[kind](fn, random.Random(0)) is not None:
                return
    pytest.fail(f"mutation kind {kind} applies to no example")


def test_the_classifier_tells_the_outcomes_apart(tmp_path):
    from pypto.errors import InternalError, TypeCheckError
    from pypto.ir.span import Span
    here = str(tmp_path / "m.py")
    (tmp_path / "m.py").write_text("x = 1\n")
    assert fuzz.classify(None, here, False)[0] == "ok"
    assert fuzz.classify(TypeCheckError("bad", Span(here, 1, 1, 1, 2)), here, False)[0] == "user_loc"
    assert fuzz.classify(TypeCheckError("bad"), here, False)[0] == "user_noloc"
    assert fuzz.classify(InternalError("bug"), here, False)[0] == "internal"
    assert fuzz.classify(AssertionError("mismatch"), here, True)[0] == "wrong"
    assert fuzz.classify(AssertionError("mismatch"), here, False)[0] == "differs"
    assert fuzz.classify(ValueError("the script's own unpacking"), here, False)[0] == "harness"
