"""Every example under examples/ runs on a2a3sim, checks itself against numpy and prints OK."""

import pathlib
import runpy

import pytest

EXAMPLES = sorted(p for p in (pathlib.Path(__file__).parents[2] / "examples").rglob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_example_runs_and_prints_ok(path, capsys):
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip().splitlines()[-1] == "OK"
