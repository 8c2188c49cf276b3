"""OptimizeOrchTensors: fewer GM buffers across the orchestration / kernel boundary.

Requires: SplitIncoreOrch, IncoreTileOps / Produces: — / Invalidates: —
Reference: pass doc 11 (compiler-and-runtime.md §2, dump 12); seed 003 names it as the
cross-function counterpart of ConvertTensorToTileOps's assemble-loop rewrite. Built patterns:

1. Iter-arg buffer reuse. An orchestration loop that carries a tensor `acc` through a kernel,
   `o = tensor.create(...); r = self.k(..., acc, ..., o); yield r`, allocates a fresh output every
   iteration although `acc`'s buffer is dead once the kernel has read it. When the kernel reads
   its `acc` parameter only before it first writes its Out parameter, the loop starts from a
   buffer the caller owns (a tensor.create, or its own Out / InOut parameter — never an input),
   and every call of the kernel has this shape, the Out parameter folds into `acc`, which
   becomes InOut; calls drop the create and the extra argument.
3. Assemble-loop rewrite. A kernel whose result is a tile.assemble loop over a tile.create
   buffer followed by one store into an Out parameter stores each piece instead
   (convert_tensor_to_tile_ops/assemble_loop.py, shared with ConvertTensorToTileOps).
2. Assemble parent strides and 4. slice input strides (orch_tensor_strides.py): a parameter
   the orchestration fills with a window of a larger tensor carries the parent's strides.
5. Static window externalization (window_externalization.py, opt-in `attrs={"windowize": True}`):
   a kernel touching one static window of a tensor gets that window, sliced at the call site.

The package's other modules are its helpers: window_aggregate_loop.py (pattern 5 over a loop of
windows) and param_retyping.py (a kernel parameter and its uses re-typed, for patterns 2, 4, 5).

    before:  for i, (acc,) in range(n, init=(a0,)): o = tensor.create(...); r = self.k(acc, x, o); yield r
    after:   for i, (acc,) in range(n, init=(a0,)): r = self.k(acc, x); yield r      # k(acc: InOut, x)
"""

from __future__ import annotations

from collections import Counter

from pypto.ir.enums import FunctionType, ParamDirection
from pypto.ir.equality import structural_equal
from pypto.ir.expr import Call, GlobalVar, Var
from pypto.ir.function import Function, Program
from pypto.ir.stmt import AssignStmt, ForStmt, ReturnStmt, SeqStmts, YieldStmt
from pypto.ir.visitor import IRMutator, IRVisitor, collect_statements, substitute
from pypto.passes.analysis import as_seq, body_list, calls_in, used_vars
from pypto.passes.convert_tensor_to_tile_ops.assemble_loop import store_loop
from pypto.passes.base import Pass
from pypto.passes.optimize_orch_tensors.orch_tensor_strides import apply_parent_strides
from pypto.passes.optimize_orch_tensors.window_externalization import externalize_windows
from pypto.passes.properties import IRProperty, PassProperties

_KERNELS = (FunctionType.InCore,)
_CALLERS = (FunctionType.Orchestration, FunctionType.Opaque)


def _op_name(e):
    return e.op.name if isinstance(e, Call) and not isinstance(e.op, GlobalVar) else None


# ---------------------------------------------------------------------------- pattern 3
def _assemble_loop_to_store_loop(f: Function) -> Function:
    stmts = body_list(f.body)
    if len(stmts) < 2 or not isinstance(stmts[-1], ReturnStmt):
        return f
    ret = stmts[-1]
    outs = {p for p, d in zip(f.params, f.param_directions) if d is ParamDirection.Out}
    changed = False
    for k, v in enumerate(ret.values):
        at = next((j for j, s in enumerate(stmts) if isinstance(s, AssignStmt) and s.var is v
                   and _op_name(s.value) == "tile.store" and s.value.args[2] in outs), None)
        if at is None or any(getattr(o, "value", 1) != 0 for o in stmts[at].value.args[1].elements):
            continue
        store = stmts[at].value
        rest = stmts[:at] + stmts[at + 1:-1]
        rewritten = store_loop(rest, store.args[0], store.args[2])
        if rewritten is None:
            continue
        new_stmts, result = rewritten
        values = list(ret.values)
        values[k] = result
        stmts = new_stmts + [ReturnStmt(values, ret.span)]
        ret = stmts[-1]
        changed = True
    return f.replace(body=as_seq(stmts, f.body.span)) if changed else f


# ---------------------------------------------------------------------------- pattern 1
class _Sites(IRVisitor):
    """Every call of each kernel: (call, enclosing loop or None, the statement list holding it)."""

    def __init__(self, kernels, writable=frozenset()):
        self.kernels = kernels
        self.writable = writable          # caller tensors a kernel may overwrite (creates, Out / InOut params)
        self.sites: dict = {}
        self.loops: list = []

    def visit_for_stmt(self, s):
        self.loops.append(s)
        self.visit_children(s)
        self.loops.pop()

    def visit_call(self, c):
        if isinstance(c.op, GlobalVar) and c.op.name in self.kernels:
            self.sites.setdefault(c.op.name, []).append((c, self.loops[-1] if self.loops else None, self.writable))
        self.visit_children(c)


def _reads_before_writes(kernel: Function, read_param: Var, out_param: Var) -> bool:
    """Every top-level statement using read_param comes before the first one using out_param."""
    stmts = body_list(kernel.body)
    first_write = next((j for j, s in enumerate(stmts) if out_param in used_vars(s)), None)
    if first_write is None:
        return False
    return not any(read_param in used_vars(s) for s in stmts[first_write:])


def _writable(f: Function) -> frozenset:
    """Tensors of a caller that may be overwritten: its tensor.create results and its Out / InOut params."""
    created = {s.var for s in collect_statements(f.body, _is_tensor_create)}
    return frozenset(created | {p for p, d in zip(f.params, f.param_directions) if d is not ParamDirection.In})


def _is_tensor_create(s) -> bool:
    return isinstance(s, AssignStmt) and _op_name(s.value) == "tensor.create"


def _fold_candidate(kernel: Function, site, loop) -> tuple | None:
    """(index of the carried In param, index of the Out param) when one call site fits pattern 1."""
    call, _, writable = site
    if loop is None or not call.args:
        return None
    body = body_list(loop.body)
    yields = body[-1].values if body and isinstance(body[-1], YieldStmt) else ()
    assign = next((s for s in body if isinstance(s, AssignStmt) and s.value is call), None)
    if assign is None or assign.var not in yields:
        return None
    pos = list(yields).index(assign.var)
    carried = loop.iter_args[pos]
    if carried not in call.args or carried.init_value not in writable:
        return None                       # the first iteration would overwrite the caller's input
    i_in = list(call.args).index(carried)
    creates = {s.var for s in body if isinstance(s, AssignStmt) and _op_name(s.value) == "tensor.create"}
    for i_out, (a, d) in enumerate(zip(call.args, kernel.param_directions)):
        if d is ParamDirection.Out and a in creates and kernel.param_directions[i_in] is ParamDirection.In \
                and structural_equal(kernel.params[i_in].type, kernel.params[i_out].type) \
                and _reads_before_writes(kernel, kernel.params[i_in], kernel.params[i_out]):
            return i_in, i_out
    return None


def _fold_kernel(kernel: Function, i_in: int, i_out: int) -> Function:
    keep, out = kernel.params[i_in], kernel.params[i_out]
    body = substitute(kernel.body, {out: keep})
    params = [p for j, p in enumerate(kernel.params) if j != i_out]
    dirs = [ParamDirection.InOut if j == i_in else d for j, d in enumerate(kernel.param_directions) if j != i_out]
    return kernel.replace(params=tuple(params), param_directions=tuple(dirs), body=body)


class _DropArg(IRMutator):
    """Calls of `name` lose argument i_out; the tensor.create that fed it goes when nothing else reads it."""

    def __init__(self, name: str, i_out: int):
        self.name, self.i_out = name, i_out
        self.dropped: set = set()

    def mutate_call(self, c):
        c = self.mutate_children(c)
        if isinstance(c.op, GlobalVar) and c.op.name == self.name:
            self.dropped.add(c.args[self.i_out])
            return c.without_arg(self.i_out)
        return c

    def mutate_seq_stmts(self, seq):
        seq = self.mutate_children(seq)
        used = set(used_vars(SeqStmts([s for s in seq.stmts if not isinstance(s, AssignStmt)
                                       or s.var not in self.dropped], seq.span)))
        keep = [s for s in seq.stmts if not (isinstance(s, AssignStmt) and s.var in self.dropped
                                             and s.var not in used and _op_name(s.value) == "tensor.create")]
        return seq if len(keep) == len(seq.stmts) else as_seq(keep, seq.span)


def _iter_arg_reuse(program: Program) -> Program:
    funcs = dict(program.functions)
    kernels = {n for n, f in funcs.items() if f.func_type in _KERNELS}
    callers = [n for n, f in funcs.items() if f.func_type in _CALLERS]
    sites = _Sites(kernels)
    for n in callers:
        sites.writable = _writable(funcs[n])
        sites.visit(funcs[n].body)
    if not sites.sites:
        return program
    all_calls = Counter(c.op.name for f in funcs.values() for c in calls_in(f.body) if isinstance(c.op, GlobalVar))
    changed = False
    for name, found in sites.sites.items():
        if len(found) != all_calls[name]:
            continue                      # also called from a wrapper or elsewhere: leave it
        folds = {_fold_candidate(funcs[name], site, site[1]) for site in found}
        if len(folds) != 1 or None in folds:
            continue
        i_in, i_out = folds.pop()
        funcs[name] = _fold_kernel(funcs[name], i_in, i_out)
        for n in callers:
            funcs[n] = funcs[n].replace(body=_DropArg(name, i_out).mutate(funcs[n].body))
        changed = True
    return program.with_functions(funcs.values()) if changed else program


def _run(program: Program) -> Program:
    funcs = [(_assemble_loop_to_store_loop(f) if f.func_type in _KERNELS else f) for f in program.functions.values()]
    if any(a is not b for a, b in zip(funcs, program.functions.values())):
        program = program.with_functions(funcs)
    return externalize_windows(apply_parent_strides(_iter_arg_reuse(program)))


def optimize_orch_tensors() -> Pass:
    return Pass("OptimizeOrchTensors", _run,
                PassProperties(required={IRProperty.SplitIncoreOrch, IRProperty.IncoreTileOps}))
