"""MixedKernelExpanded checks (seed 004, "属性验证器"), run on the pass's own output.

- no InCore function remains that holds both cube and vector tile ops;
- an AIC tpop_from_aiv lands in Mat, an AIV tpop_from_aic in Vec;
- an AIC / AIV function with transfers has its pipe setup (initialize_pipe, and a reserve_buffer
  for each direction it consumes);
- every tpop has a tfree of the popped tile;
- transferred tiles have static shapes.

    check_expanded(program)      # InternalError naming the function and the broken rule
"""

from __future__ import annotations

from pypto.errors import InternalError
from pypto.ir.enums import FunctionType, MemorySpace
from pypto.ir.expr import ConstInt, GlobalVar
from pypto.ir.function import Program
from pypto.ir.stmt import AssignStmt
from pypto.passes.analysis import calls_in
from pypto.ir.visitor import collect

_POP_SPACE = {"tile.tpop_from_aiv": (FunctionType.AIC, MemorySpace.Mat),
              "tile.tpop_from_aic": (FunctionType.AIV, MemorySpace.Vec)}
_TRANSFER = ("tile.tpush_to_aiv", "tile.tpush_to_aic", "tile.tpop_from_aic", "tile.tpop_from_aiv")


def problems(program: Program) -> list:
    found = []
    for f in program.functions.values():
        calls = [c for c in calls_in(f.body) if not isinstance(c.op, GlobalVar)]
        names = [c.op.name for c in calls]
        if f.func_type is FunctionType.InCore:
            found.append(f"{f.name}: an InCore function remains after ExpandMixedKernel")
            continue
        if f.func_type not in (FunctionType.AIC, FunctionType.AIV):
            continue
        pops = [s for s in collect(f.body, lambda n: isinstance(n, AssignStmt))
                if getattr(getattr(s.value, "op", None), "name", "") in _POP_SPACE]
        for s in pops:
            kind, space = _POP_SPACE[s.value.op.name]
            if f.func_type is kind and getattr(s.var.type, "memory_space", None) is not space:
                found.append(f"{f.name}: {s.value.op.name} must land in {space.name}")
            if not any(c.op.name.startswith("system.tfree_to_") and c.args and c.args[0] is s.var for c in calls):
                found.append(f"{f.name}: {s.value.op.name} result '{s.var.name}' has no matching tfree")
        if any(n in _TRANSFER for n in names):
            if not any(n.endswith("_initialize_pipe") for n in names):
                found.append(f"{f.name}: cross-core transfers without initialize_pipe")
            consumes = any(n.startswith("tile.tpop_") for n in names)
            if consumes and "system.reserve_buffer" not in names:
                found.append(f"{f.name}: pops without a reserve_buffer for its ring")
            for c in calls:
                if c.op.name in _TRANSFER:
                    t = c.args[0].type if c.args else c.type
                    if not all(isinstance(d, ConstInt) for d in getattr(t, "shape", ())):
                        found.append(f"{f.name}: {c.op.name} moves a tile with a non-static shape")
    return found


def check_expanded(program: Program) -> None:
    bad = problems(program)
    if bad:
        raise InternalError("MixedKernelExpanded violated:\n  " + "\n  ".join(bad))


def _diagnostics(program: Program) -> list:
    from pypto.ir.verifier import Diagnostic
    return [Diagnostic("MixedKernelExpanded", p, None) for p in problems(program)]


def register() -> None:
    """Make these checks the MixedKernelExpanded property verifier (they include the InCore one)."""
    from pypto.ir.verifier import VERIFIERS
    VERIFIERS["MixedKernelExpanded"] = _diagnostics


register()
