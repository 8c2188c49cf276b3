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

from pypto.errors import InternalError, ValueCheckError
from pypto.ir.enums import FunctionType, MemorySpace
from pypto.ir.expr import ConstInt, GlobalVar
from pypto.ir.function import Program
from pypto.ir.stmt import AssignStmt
from pypto.passes.analysis import calls_in
from pypto.ir.visitor import collect

_POP_SPACE = {"tile.tpop_from_aiv": (FunctionType.AIC, MemorySpace.Mat),
              "tile.tpop_from_aic": (FunctionType.AIV, MemorySpace.Vec)}
_TRANSFER = ("tile.tpush_to_aiv", "tile.tpush_to_aic", "tile.tpop_from_aic", "tile.tpop_from_aiv")


_CONSUMED_BIT = {FunctionType.AIC: 2, FunctionType.AIV: 1}     # AIC pops V2C (bit 2), AIV pops C2V (bit 1)
_SETUP_OF = {FunctionType.AIC: "system.aic_initialize_pipe", FunctionType.AIV: "system.aiv_initialize_pipe"}


def problems(program: Program) -> list:
    found = []
    for f in program.functions.values():
        if f.func_type is FunctionType.InCore:
            found.append(f"{f.name}: an InCore function remains after ExpandMixedKernel")
            continue
        if f.func_type not in (FunctionType.AIC, FunctionType.AIV):
            continue
        found.extend(_kernel_problems(f))
    return found


def _kernel_problems(f) -> list:
    found = []
    calls = [c for c in calls_in(f.body) if not isinstance(c.op, GlobalVar)]
    names = [c.op.name for c in calls]
    setup = _SETUP_OF[f.func_type]
    for s in collect(f.body, lambda n: isinstance(n, AssignStmt)):
        name = getattr(getattr(s.value, "op", None), "name", "")
        kind, space = _POP_SPACE.get(name, (None, None))
        if f.func_type is kind and getattr(s.var.type, "memory_space", None) is not space:
            got = getattr(getattr(s.var.type, "memory_space", None), "name", "none")
            found.append(_Problem(f"Function '{f.name}': a {name} result in MemorySpace::{space.name} is "
                                  f"required, '{s.var.name}' lands in {got}", s.span))
    first_transfer = next((i for i, n in enumerate(names) if n in _TRANSFER), None)
    if first_transfer is not None:
        if setup not in names[:first_transfer]:
            found.append(_Problem(f"Function '{f.name}' uses cross-core tile ops but has no '{setup}' call before "
                                  "the first of them", calls[first_transfer].span))
        inits = [c for c in calls if c.op.name == setup]
        wanted = sum(1 for c in inits if _mask(c) & _CONSUMED_BIT[f.func_type])
        if wanted and names.count("system.reserve_buffer") < wanted:
            found.append(_Problem(f"Function '{f.name}' has fewer 'system.reserve_buffer' calls than initialized "
                                  f"pipe directions require ({names.count('system.reserve_buffer')} for {wanted})",
                                  inits[0].span))
        for c in calls:
            if c.op.name in _TRANSFER:
                t = c.args[0].type if c.args else c.type
                if not all(isinstance(d, ConstInt) for d in getattr(t, "shape", ())):
                    found.append(_Problem(f"{f.name}: {c.op.name} moves a tile with a non-static shape", c.span))
    # pop / free pairing, per tile value: each popped tile is freed once
    pops = [s for s in collect(f.body, lambda n: isinstance(n, AssignStmt))
            if getattr(getattr(s.value, "op", None), "name", "").startswith("tile.tpop_from_")]
    outstanding = {s.var: 1 for s in pops}
    frees = []
    for c in calls:
        if c.op.name.startswith("system.tfree_to_") and c.args:
            tile = c.args[0]
            frees.append(tile)
            if outstanding.get(tile, 0) > 0:
                outstanding[tile] -= 1
            else:
                found.append(_Problem(f"Function '{f.name}' has '{c.op.name}' without a matching outstanding tpop "
                                      f"on the same tile value ('{getattr(tile, 'name', tile)}')", c.span))
    for s in pops:
        if s.var not in frees:
            side = s.value.op.name.rsplit("_", 1)[-1]
            found.append(_Problem(f"Function '{f.name}' uses {s.value.op.name} but has no matching "
                                  f"'system.tfree_to_{side}' call for '{s.var.name}'", s.span))
    return found


def _mask(call) -> int:
    m = call.kwargs.get("dir_mask", 0)
    return int(getattr(m, "value", m) or 0)


class _Problem(str):
    """A broken rule, and the statement or call that breaks it (for a hand-written kernel: the user's line)."""

    def __new__(cls, message: str, span=None):
        problem = super().__new__(cls, message)
        problem.span = span
        return problem


def check_expanded(program: Program, hand_written: tuple = ()) -> None:
    """InternalError when the pass broke a rule; a ValueCheckError at the user's line when a `hand_written`
    AIC / AIV function (as the user wrote it, before the pass) already broke it."""
    bad = problems(program)
    if not bad:
        return
    for f in hand_written:
        mine = _kernel_problems(f)
        if mine:
            raise ValueCheckError(f"the cross-core pipe protocol is broken: {mine[0]}", mine[0].span or f.span,
                                  hint="an AIC / AIV kernel initializes its pipe before the first tpush / tpop, "
                                       "and frees each popped tile with tfree")
    raise InternalError("MixedKernelExpanded violated:\n  " + "\n  ".join(bad))


def _diagnostics(program: Program) -> list:
    from pypto.ir.verifier import Diagnostic
    return [Diagnostic("MixedKernelExpanded", p, None) for p in problems(program)]


def register() -> None:
    """Make these checks the MixedKernelExpanded property verifier (they include the InCore one)."""
    from pypto.ir.verifier import VERIFIERS
    VERIFIERS["MixedKernelExpanded"] = _diagnostics


register()
