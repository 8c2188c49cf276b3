"""Generate the op catalog page (docs/ops/catalog.md) from the op registry, so it cannot drift.

Every column is read from the code: the OpDef (name, arguments, keyword defaults, core
affinity, description), the PTO emitter table (the instruction an op is emitted as, or why it
never reaches codegen), the simulator's op table, and the op's own type rule (which dtypes it
accepts, found by calling the rule). The mkdocs hook (docs/hooks.py) builds the page from
`catalog_markdown()` on every build; run this file to write it out for reading offline:

    python docs/gen_catalog.py            # prints the page
    python docs/gen_catalog.py out.md     # writes it
"""

from __future__ import annotations

import enum
import inspect
import re
import sys
from collections import Counter

from pypto.errors import PyptoError
from pypto.ir import dtypes as D
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Var
from pypto.ir.ops.registry import all_ops, create_op_call
from pypto.ir.types import ScalarType, TensorType, TileType

FAMILIES = (("tile", "Tile ops (on-chip)"), ("tensor", "Tensor ops (global memory)"),
            ("system", "System ops (pipes, barriers)"), ("pld", "Distributed ops (`pld`)"))
PROBE_DTYPES = (D.FP32, D.FP16, D.BF16, D.INT32, D.INT16, D.INT8, D.UINT8)
CORES = {"vector": "AIV", "cube": "AIC", "shared": "AIC + AIV", "mixed": "AIC ↔ AIV boundary",
         None: "from operands"}
# Arguments the dtype probe can fill: a 16x16 shaped value, a [16, 1] row vector, or a scalar.
_SHAPED = {"x", "lhs", "rhs", "src", "src0", "src1", "target", "tmp", "on_true", "on_false", "tile", "acc"}
_PTO_FIELDS = ("pto", "pto_mnemonic", "pto_name", "mnemonic")     # a field the OpDef may grow


def _fmt_default(value) -> str:
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, D.DataType):
        return f"pl.{value.name}"
    return repr(value)


def signature(op) -> str:
    """`tile.load(tensor, offsets, shapes, valid_shapes, [tile_shape], target_memory=Vec)`."""
    n_required = op.min_args if op.min_args is not None else len(op.args)
    parts = [a if i < n_required or a.startswith("*") else f"[{a}]" for i, a in enumerate(op.args)]
    for key, spec in op.kwargs.items():
        parts.append(f"{key}" if spec.required else f"{key}={_fmt_default(spec.default)}")
    return f"{op.name}({', '.join(parts)})"


def _shaped(op, index: int, dtype, shape):
    if op.category == "tensor":
        return Var("p", TensorType(shape, dtype))
    spaces = op.input_memory.get(index) or (MemorySpace.Vec,)
    return Var("p", TileType(shape, dtype, memory_space=spaces[0]))


def _probe_args(op, dtype, scalar_rhs: bool):
    args = []
    for i, name in enumerate(op.args):
        if name == "vec":
            args.append(_shaped(op, i, dtype, [16, 1]))
        elif name in ("rhs", "scalar", "slope") and scalar_rhs:
            args.append(Var("s", ScalarType(dtype)))
        elif name in _SHAPED:
            args.append(_shaped(op, i, dtype, [16, 16]))
        else:
            return None
    return args


def accepted_dtypes(op) -> tuple:
    """The dtypes the op's type rule accepts with every operand of that one dtype (empty: not probed)."""
    if op.category not in ("tile", "tensor") or not op.args or op.kwargs and any(
            s.required for s in op.kwargs.values()):
        return ()
    for scalar_rhs in (False, True):
        found = []
        for dtype in PROBE_DTYPES:
            args = _probe_args(op, dtype, scalar_rhs)
            if args is None:
                return ()
            try:
                create_op_call(op.name, args)
            except PyptoError:
                continue
            found.append(dtype.name)
        if found:
            return tuple(found)
    return ()


def pto_spelling(op, emitters: dict, lowered: dict, refused: dict) -> str:
    for field in _PTO_FIELDS:
        value = getattr(op, field, None)
        if isinstance(value, str) and value:
            return f"`{value}`"
    if op.name in refused:
        return f"not emitted: {refused[op.name]}"
    emitter = emitters.get(op.name)
    if emitter is not None:
        names = [v for v in inspect.getclosurevars(emitter.fn).nonlocals.values()
                 if isinstance(v, str) and v.startswith("pto.")]
        if not names:
            try:
                names = sorted(set(re.findall(r"\bpto\.[a-z_][a-z0-9_.]*[a-z0-9]", inspect.getsource(emitter.fn))))
            except (OSError, TypeError):
                names = []
        if names:
            return ", ".join(f"`{n}`" for n in names)
        module = emitter.fn.__module__.rsplit(".", 1)[-1]
        return f"emitted by `{emitter.fn.__name__}` in `pypto/codegen/pto/{module}.py`"
    if op.name in lowered:
        return f"lowered: {lowered[op.name]}"
    return "—"


def sim_status(op, sim_ops, lowered_before_sim) -> str:
    if op.name in sim_ops:
        return "simulated"
    if op.name in lowered_before_sim:
        return "lowered before simulation"
    return "rewritten by a pass (not executed directly)"


def what_it_does(op) -> str:
    """The op's description, else what its declarative fields say (numpy semantics, tile form)."""
    parts = [op.description] if op.description else []
    fn, form = getattr(op, "numpy", None), getattr(op, "numpy_form", None)
    if fn is not None and not op.description:
        name = getattr(fn, "__name__", repr(fn))
        module = getattr(fn, "__module__", "") or ""
        spelled = f"np.{name}" if module.startswith("numpy") else name
        parts.append(f"numpy `{spelled}`" + (f" ({form.replace('_', ' ')})" if form else ""))
    lowers_to = getattr(op, "lowers_to", None)
    if lowers_to:
        parts.append(f"tensor form of `{lowers_to}`")
    return "; ".join(parts)


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def catalog_markdown() -> str:
    from pypto.codegen.pto.registry import all_emitters, lowered_away_ops, not_emitted_ops
    from pypto.runtime.sim.ops import LOWERED_BEFORE_SIM, SIM_OPS
    ops = all_ops()
    emitters, lowered, refused = all_emitters(), lowered_away_ops(), not_emitted_ops()
    counts = Counter(op.category for op in ops.values())
    lines = [
        "# Op catalog",
        "",
        "<!-- Generated by docs/gen_catalog.py from the op registry on every docs build: do not edit. -->",
        "",
        f"Every primitive op the compiler knows: {len(ops)} in all "
        + ", ".join(f"{n} `{fam}.*`" for fam, n in sorted(counts.items(), key=lambda kv: -kv[1])) + ". "
        "The page is generated from the op registry (`pypto/ir/ops`), the PTO emitter table "
        "(`pypto/codegen/pto`) and the simulator's op table (`pypto/runtime/sim/ops`) each time "
        "the documentation is built, so it lists exactly what the code registers.",
        "",
        "How to read the columns:",
        "",
        "- **Signature**: positional arguments in order (`[name]`: optional), then keyword "
        "arguments with their defaults. In a kernel, write `pl.tile.<op>` / `pl.tensor.<op>`, or "
        "the short `pl.<op>`, which picks the tile or tensor form from the first operand and the "
        "`<op>s` form when the right-hand side is a scalar (see [Op dispatch](dispatch.md)).",
        "- **Dtypes**: what the op's type rule accepts when every operand has the same dtype "
        "(probed with 16×16 operands over " + ", ".join(d.name for d in PROBE_DTYPES) + "). "
        "An empty cell means the probe does not apply (mixed-dtype operands, index arguments, "
        "loads and views): read the op's description and its type rule.",
        "- **Cores**: where ExpandMixedKernel places the op (AIV: vector core, AIC: cube core).",
        "- **PTO**: the instruction the PTO backend writes, or the pass that rewrites the op "
        "before codegen.",
        "- **Simulator**: `simulated` ops run in `a2a3sim` / `a5sim` as written; the others are "
        "rewritten into simulated ops by the compiler first.",
        "",
    ]
    known = {fam for fam, _ in FAMILIES}
    families = list(FAMILIES) + [(fam, f"`{fam}.*` ops") for fam in sorted(counts) if fam not in known]
    for fam, title in families:
        members = sorted((op for op in ops.values() if op.category == fam), key=lambda o: o.name)
        if not members:
            continue
        lines += [f"## {title}", "", "| Signature | Dtypes | Cores | PTO | Simulator | What it does |",
                  "|---|---|---|---|---|---|"]
        for op in members:
            dts = ", ".join(accepted_dtypes(op))
            lines.append("| " + " | ".join(_cell(c) for c in (
                f"`{signature(op)}`", dts, CORES.get(op.affinity, op.affinity),
                pto_spelling(op, emitters, lowered, refused), sim_status(op, SIM_OPS, LOWERED_BEFORE_SIM),
                what_it_does(op))) + " |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    text = catalog_markdown()
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w", encoding="utf-8") as f:
            f.write(text)
    else:
        print(text)
