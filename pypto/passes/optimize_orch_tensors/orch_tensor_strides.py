"""OptimizeOrchTensors patterns 2 and 4: a kernel parameter that is a window of a larger tensor
addresses GM with the larger tensor's strides.

A kernel parameter's TensorType without a TensorView means "contiguous in its own shape". When
the orchestration hands the kernel a window of a bigger tensor, the rows of that window lie the
parent's row pitch apart, and the kernel's `pto.make_tensor_view` must say so (codegen reads
`tensor_view.stride`). The strides are the parent's row-major strides, trailing `rank` of them.

Pattern 4 (slice input strides): every call passes, for an In parameter, a `tensor.slice` of
parents with one stride vector → the parameter carries those strides.

Pattern 2 (assemble parent strides): every call fills an Out parameter with a fresh
`tensor.create` buffer whose only purpose is `tensor.assemble(parent, result, offset)` → the
parameter carries the parent's strides, and (so that the strides describe the buffer the kernel
really gets) the staging buffer becomes `tensor.slice(parent, shape, offset)`: the kernel writes
its result in place. The assemble stays, as a copy of the window onto itself, until
FuseCreateAssembleToSlice (after the memory passes) drops it.

    before:  o = tensor.create([32, 32]);  r = self.k(a, o);  c2 = tensor.assemble(c, r, [mb, nb])
    after:   o = tensor.slice(c, [32, 32], [mb, nb]);  r = self.k(a, o);  c2 = tensor.assemble(c, r, [mb, nb])
             # k(a, out: pl.Out[pl.Tensor[[32, 32], FP32, pl.TensorView(stride=[128, 1])]])
"""

from __future__ import annotations

from typing import Optional

from pypto.ir.enums import FunctionType, ParamDirection
from pypto.ir.equality import structural_equal
from pypto.ir.expr import Call, ConstInt, GlobalVar, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, ForStmt, ReturnStmt, SeqStmts
from pypto.ir.types import TensorLayout, TensorType, TensorView
from pypto.ir.visitor import IRMutator, IRVisitor, collect, collect_statements
from pypto.passes.analysis import body_list, used_vars
from pypto.passes.optimize_orch_tensors.param_retyping import retype_params

_CALLERS = (FunctionType.Orchestration, FunctionType.Opaque)


def _op_name(e) -> Optional[str]:
    return e.op.name if isinstance(e, Call) and not isinstance(e.op, GlobalVar) else None


def trailing_strides(parent: TensorType, rank: int) -> Optional[tuple]:
    """The last `rank` row-major strides of a static parent shape (None when a dim is dynamic)."""
    if not isinstance(parent, TensorType) or rank > len(parent.shape) \
            or not all(isinstance(d, ConstInt) for d in parent.shape):
        return None
    strides, acc = [], 1
    for d in reversed(parent.shape):
        strides.append(acc)
        acc *= d.value
    return tuple(reversed(strides))[len(parent.shape) - rank:]


def _strided(t: TensorType, strides: tuple) -> TensorType:
    return TensorType(t.shape, t.dtype, t.memref, TensorView(stride=list(strides), layout=TensorLayout.ND))


def _has_strides(t) -> bool:
    return isinstance(t, TensorType) and t.tensor_view is not None and bool(t.tensor_view.stride)


class CallSites(IRVisitor):
    """Every call of a program function: name → [(caller, call, statement list, index)]."""

    def __init__(self, program: Program):
        self.sites: dict = {}
        for f in program.functions.values():
            self.caller = f
            self.visit(f.body)

    def visit_seq_stmts(self, s):
        for i, st in enumerate(s.stmts):
            value = getattr(st, "value", None) if isinstance(st, AssignStmt) else getattr(st, "expr", None)
            if isinstance(value, Call) and isinstance(value.op, GlobalVar):
                self.sites.setdefault(value.op.name, []).append((self.caller, value, s, i))
            self.visit(st)

    def only_from_callers(self, name: str) -> list:
        """The call sites of `name`, or [] when a non-orchestration function calls it too."""
        found = self.sites.get(name, [])
        return found if all(c.func_type in _CALLERS for c, *_ in found) else []


def _bindings(func: Function) -> dict:
    return {s.var: s for s in collect_statements(func.body, lambda n: isinstance(n, AssignStmt))}


def _use_count(func: Function, var: Var) -> int:
    """How often `var` is read in func (its binding is not a read)."""
    seen = len(collect(func.body, lambda n: n is var))
    return seen - len(collect_statements(func.body, lambda n: isinstance(n, AssignStmt) and n.var is var))


# ---------------------------------------------------------------------------- pattern 4
def _slice_input_strides(kernel: Function, sites: list) -> dict:
    """In-param index → strides, for params every call fills with a tensor.slice."""
    found = {}
    for i, (p, d) in enumerate(zip(kernel.params, kernel.param_directions)):
        if d is not ParamDirection.In or not isinstance(p.type, TensorType) or _has_strides(p.type):
            continue
        agreed = None
        for caller, call, *_ in sites:
            stmt = _bindings(caller).get(call.args[i]) if i < len(call.args) else None
            if stmt is None or _op_name(stmt.value) != "tensor.slice":
                agreed = None
                break
            strides = trailing_strides(stmt.value.args[0].type, len(p.type.shape))
            if strides is None or (agreed is not None and strides != agreed):
                agreed = None
                break
            agreed = strides
        if agreed is not None:
            found[i] = agreed
    return found


# ---------------------------------------------------------------------------- pattern 2
def _returned_store_index(kernel: Function, out: Var) -> Optional[int]:
    """Which return value is the tile.store into `out` (directly or through a loop carrying it)."""
    stmts = body_list(kernel.body)
    if not stmts or not isinstance(stmts[-1], ReturnStmt):
        return None
    holders = set()
    for s in collect_statements(kernel.body, lambda n: isinstance(n, (AssignStmt, ForStmt))):
        if isinstance(s, AssignStmt) and _op_name(s.value) == "tile.store" and s.value.args[2] is out:
            holders.add(s.var)
        elif isinstance(s, ForStmt):
            holders |= {rv for ia, rv in zip(s.iter_args, s.return_vars) if ia.init_value is out}
    hits = [k for k, v in enumerate(stmts[-1].values) if v in holders]
    return hits[0] if len(hits) == 1 else None


def _assemble_site(kernel: Function, j: int, site) -> Optional[tuple]:
    """(create stmt, assemble stmt, strides) when call site `site` stages Out param j for one assemble."""
    caller, call, seq, at = site
    if len(kernel.return_types) != 1 or not isinstance(seq.stmts[at], AssignStmt):
        return None
    staging = call.args[j] if j < len(call.args) else None
    create = _bindings(caller).get(staging)
    if create is None or _op_name(create.value) != "tensor.create" or _use_count(caller, staging) != 1 \
            or create not in seq.stmts[:at]:
        return None
    result = seq.stmts[at].var
    later = list(seq.stmts[at + 1:])
    k = next((n for n, s in enumerate(later) if isinstance(s, AssignStmt) and _op_name(s.value) == "tensor.assemble"
              and s.value.args[1] is result), None)
    if k is None or _use_count(caller, result) != 1:
        return None
    assemble = later[k]
    between = later[:k]
    bound_between = {s.var for s in between if isinstance(s, AssignStmt)}
    if any(v in bound_between for v in used_vars(assemble.value.args[0]) + used_vars(assemble.value.args[2])):
        return None
    # The kernel now writes the parent at the call, not at the assemble: nothing in between may
    # look at the parent (directly, or through another kernel that could reach it).
    if any(assemble.value.args[0] in used_vars(s) or collect(s, lambda n: isinstance(n, Call)
                                                             and isinstance(n.op, GlobalVar)) for s in between):
        return None
    strides = trailing_strides(assemble.value.args[0].type, len(kernel.params[j].type.shape))
    return (create, assemble, strides) if strides is not None else None


def _assemble_parent_strides(kernel: Function, sites: list) -> tuple:
    """(Out-param index → strides, {create stmt: assemble stmt}) for Out params pattern 2 fits."""
    found, staged = {}, {}
    for j, (p, d) in enumerate(zip(kernel.params, kernel.param_directions)):
        if d is not ParamDirection.Out or _has_strides(p.type) or _returned_store_index(kernel, p) is None:
            continue
        matches = [_assemble_site(kernel, j, s) for s in sites]
        if not matches or None in matches or len({m[2] for m in matches}) != 1:
            continue
        found[j] = matches[0][2]
        staged.update({m[0]: m[1] for m in matches})
    return found, staged


class _StageInPlace(IRMutator):
    """Each staging tensor.create becomes a tensor.slice of its assemble's parent, right before the call."""

    def __init__(self, staged: dict):
        self.staged = staged
        self.vars: dict = {}

    def mutate_var(self, v):
        return self.vars.get(v, v)

    def mutate_seq_stmts(self, s):
        out, pending = [], {}
        for st in s.stmts:
            if st in self.staged:
                a = self.staged[st].value
                view = create_op_call("tensor.slice", [a.args[0], list(st.var.type.shape), a.args[2]], {}, st.span)
                pending[st.var] = view
                continue
            uses = [v for v in used_vars(st) if v in pending]
            for v in uses:
                new = Var(v.name_hint, pending[v].type, v.span)
                self.vars[v] = new
                out.append(AssignStmt(new, pending.pop(v), v.span))
            out.append(self.mutate(st))
        if len(out) == len(s.stmts) and all(a is b for a, b in zip(out, s.stmts)):
            return s
        return SeqStmts(out, s.span)


def apply_parent_strides(program: Program) -> Program:
    """Patterns 2 and 4 over every InCore kernel called only from orchestration code."""
    sites = CallSites(program)
    funcs = dict(program.functions)
    staged_all: dict = {}
    for name, f in program.functions.items():
        if f.func_type is not FunctionType.InCore:
            continue
        calls = sites.only_from_callers(name)
        if not calls:
            continue
        new_types = {i: _strided(f.params[i].type, st) for i, st in _slice_input_strides(f, calls).items()}
        outs, staged = _assemble_parent_strides(f, calls)
        new_types.update({j: _strided(f.params[j].type, st) for j, st in outs.items()})
        staged_all.update(staged)
        if new_types:
            funcs[name] = retype_params(f, new_types)
    if staged_all:
        for name, f in funcs.items():
            if f.func_type in _CALLERS:
                body = _StageInPlace(staged_all).mutate(f.body)
                if body is not f.body:
                    funcs[name] = f.replace(body=body)
    if all(funcs[n] is f for n, f in program.functions.items()):
        return program
    return program.with_functions(funcs.values())
