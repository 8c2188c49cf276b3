"""Every pass dump of every example re-parses: loading a dump and printing it again gives the
same text, so the dump is exactly the IR after that pass (the suite also round-trips every
pass in memory through PYPTO_VERIFY_LEVEL=roundtrip)."""

import pytest

import pypto.language as pl
from example_runs import EXAMPLES, example_id


@pytest.mark.parametrize("path", EXAMPLES, ids=example_id)
def test_every_pass_dump_reparses_to_the_same_program(path, run_example):
    dumps = sorted(run_example(path).build_dir.rglob("passes_dump/*.py"))
    names = {d.name for d in dumps}
    assert "00_frontend.py" in names
    assert any(n.endswith("_after_ConvertTensorToTileOps.py") for n in names)
    assert any(n.endswith("_after_AllocateMemoryAddr.py") for n in names)
    checked = set()                       # a pass that changed nothing dumps the same text again
    for dump in dumps:
        text = dump.read_text()
        if text in checked:
            continue
        assert pl.loads(str(dump)).as_python() == text, f"{dump.name} does not re-print identically"
        checked.add(text)
