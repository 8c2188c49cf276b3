"""Every registered op is complete: simulator semantics, a PTO entry, a tensor→tile converter where it
has a tensor form, and a DSL spelling. Each failure names the file to edit (docs/internals.md,
"Adding an op")."""

from __future__ import annotations

import numpy as np

import pypto.language as pl
from pypto.codegen.pto import all_emitters, lowered_away_ops
from pypto.ir.ops.registry import NUMPY_FORMS, all_ops
from pypto.language.ops import is_dsl_op
from pypto.passes.convert_tensor_to_tile_ops.registry import CONVERTERS
from pypto.runtime.sim.ops import LOWERED_BEFORE_SIM, SIM_OPS

ROW_FILE = "pypto/ir/ops/elementwise.py (numpy= / pto= / tensor form of its row)"


def _family(name: str) -> str:
    return name.split(".", 1)[0]


def test_every_chip_op_has_simulator_semantics():
    missing = sorted(n for n in all_ops() if _family(n) in ("tile", "tensor", "system")
                     and n not in SIM_OPS and n not in LOWERED_BEFORE_SIM)
    assert not missing, (f"ops without simulator semantics: {missing}; give the OpDef numpy= and numpy_form= "
                         f"({ROW_FILE}) or add a function to the table() of pypto/runtime/sim/ops/<family>.py")


def test_derived_semantics_are_wired_by_form():
    for name, op in all_ops().items():
        if op.numpy is None:
            continue
        assert op.numpy_form in NUMPY_FORMS, f"{name}: numpy_form must be one of {NUMPY_FORMS}"
        assert name in SIM_OPS, f"{name} declares numpy semantics but pypto/runtime/sim/ops/elementwise.py lost it"


def test_every_op_has_a_pto_entry():
    emitters, away = all_emitters(), lowered_away_ops()
    missing = sorted(n for n in all_ops() if n not in emitters and n not in away)
    assert not missing, (f"ops without a PTO entry: {missing}; give a 1:1 op pto=\"pto.t...\" in its OpDef "
                         f"({ROW_FILE}), or register emits(...) / lowered_away(...) / not_emitted(...) in "
                         "pypto/codegen/pto/<family>.py")
    declared = sorted(n for n, op in all_ops().items() if op.pto is not None and n in away)
    assert not declared, f"{declared} declare a PTO instruction and are also marked lowered away (pypto/codegen/pto)"


def test_every_tensor_form_has_a_converter():
    ops = all_ops()
    missing = sorted(n for n in LOWERED_BEFORE_SIM if n not in CONVERTERS)
    assert not missing, (f"tensor ops ConvertTensorToTileOps cannot lower: {missing}; declare lowers_to=\"tile.X\" "
                         f"({ROW_FILE}) or add @converts in pypto/passes/convert_tensor_to_tile_ops/")
    bad = sorted((n, op.lowers_to) for n, op in ops.items() if op.lowers_to is not None and op.lowers_to not in ops)
    assert not bad, f"lowers_to names an unregistered tile op: {bad} (fix the OpDef in pypto/ir/ops/)"


def test_every_op_has_a_dsl_spelling():
    missing = sorted(n for n in all_ops() if not is_dsl_op(n))
    shaped = sorted({op.short_name for op in all_ops().values() if op.category in ("tile", "tensor")})
    missing += [n for n in shaped if not is_dsl_op(n)]
    assert not missing, (f"ops the DSL cannot spell: {missing}; the DSL reaches every registered op by name "
                         "(pypto/language/ops/dispatch.py), so a missing one is a registration bug")
    for short in shaped:
        assert getattr(pl, short) is not None and getattr(pl.tile if f"tile.{short}" in all_ops() else pl.tensor,
                                                          short) is not None


def test_numpy_semantics_of_a_derived_row_run_in_the_simulator():
    """The derived simulator op of a row is the row's numpy function over the valid region."""
    from pypto.runtime.sim.values import TileValue
    x = np.linspace(0.5, 4.0, 64, dtype=np.float32).reshape(8, 8)
    for name, fn in (("tile.sqrt", np.sqrt), ("tile.neg", np.negative), ("tile.exp", np.exp)):
        out = TileValue(np.full((8, 8), -1.0, np.float32), (8, 8))
        SIM_OPS[name](None, out, TileValue(x.copy(), (4, 8)))
        np.testing.assert_allclose(out.data[:4], fn(x[:4]), rtol=1e-6)
        assert out.valid == (4, 8) and (out.data[4:] == -1.0).all()
