"""The generated pages (docs/gen_catalog.py, docs/gen_examples.py) match the code they describe,
and the README lists every example."""

from __future__ import annotations

import importlib.util
import pathlib
import re

import pytest

from pypto.ir.ops import all_ops

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def catalog():
    return _load("gen_catalog").catalog_markdown()


def _rows(page: str) -> dict:
    """op name → its table row."""
    return {m.group(1): line for line in page.splitlines() if (m := re.match(r"\| `([\w.]+)\(", line))}


def test_catalog_has_one_row_per_registered_op(catalog):
    rows = _rows(catalog)
    assert set(rows) == set(all_ops())
    assert sum(1 for line in catalog.splitlines() if re.match(r"\| `[\w.]+\(", line)) == len(all_ops())


def test_catalog_columns_come_from_the_registry_the_emitters_and_the_simulator(catalog):
    from pypto.codegen.pto.registry import emitter_for
    from pypto.runtime.sim.ops import SIM_OPS
    rows = _rows(catalog)
    declared = {name: op.pto for name, op in all_ops().items() if getattr(op, "pto", None)}
    for name, mnemonic in declared.items():
        assert f"`{mnemonic}`" in rows[name].split("|")[4], name
    assert "`pto.tload`" in rows["tile.load"] and emitter_for("tile.load") is not None   # read from the emitter
    assert "AIC" in rows["tile.matmul"].split("|")[3] and "AIV" in rows["tile.add"].split("|")[3]
    assert "target_memory=MemorySpace.Vec" in rows["tile.load"] and "[tile_shape]" in rows["tile.load"]
    for name, row in rows.items():
        assert ("| simulated |" in row) == (name in SIM_OPS), name


def test_catalog_dtypes_are_what_the_type_rule_accepts(catalog):
    rows = _rows(catalog)
    bitwise = rows["tile.and_"].split("|")[2]
    assert "INT32" in bitwise and "FP32" not in bitwise           # bitwise ops reject floats
    assert rows["tile.sin"].split("|")[2].strip() == "FP32"
    assert "FP16" in rows["tile.add"].split("|")[2]


def test_catalog_reads_fields_the_op_definition_may_grow(monkeypatch):
    gen = _load("gen_catalog")
    op = all_ops()["tile.add"]
    monkeypatch.setattr(op, "pto", "pto.tadd_from_field", raising=False)
    assert gen.pto_spelling(op, {}, {}, {}) == "`pto.tadd_from_field`"


def test_examples_page_and_readme_list_every_example():
    page = _load("gen_examples").examples_markdown()
    readme = (ROOT / "README.md").read_text()
    for path in sorted((ROOT / "examples").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        assert f"`{rel}`" in page, rel
        assert path.stem in readme, f"README does not list {rel}"
