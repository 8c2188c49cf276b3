"""Every pass dump of every example re-parses: loading a dump and printing it again gives the
same text, so the dump is exactly the IR after that pass (the suite also round-trips every
pass in memory through PYPTO_VERIFY_LEVEL=roundtrip)."""

import pathlib
import runpy

import pytest

import pypto.language as pl

EXAMPLES = sorted((pathlib.Path(__file__).parents[2] / "examples").rglob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_pass_dump_reparses_to_the_same_program(path, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PYPTO_DUMP_PASSES", "1")
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    runpy.run_path(str(path), run_name="__main__")
    dumps = sorted(tmp_path.rglob("passes_dump/*.py"))
    names = {d.name for d in dumps}
    assert "00_frontend.py" in names
    assert any(n.endswith("_after_ConvertTensorToTileOps.py") for n in names)
    assert any(n.endswith("_after_AllocateMemoryAddr.py") for n in names)
    for dump in dumps:
        text = dump.read_text()
        assert pl.loads(str(dump)).as_python() == text, f"{dump.name} does not re-print identically"
