"""Loop-invariant Mat residency for InferTileMemorySpace: a stationary matmul operand is loaded once.

A `tile.load(src, offsets, shapes, ..., target_memory=Mat)` inside a sequential loop whose GM
window does not change between iterations loads the same bytes every iteration. It moves before
the loop (the loop's readers keep reading it from L1), while its loop-dependent peers keep streaming.

The move is only made when it cannot change a result (the reference's legality rules, reduced to
what this IR can express):
  - the loop is sequential with constant bounds and at least one iteration;
  - the load is a top-level statement of the loop body, not yielded, and its offsets / shapes use
    no value bound inside the loop;
  - `src` is an `In` parameter the kernel never writes, and at every call site (there must be
    one, in an orchestration function) its argument is storage the orchestration created with
    `tensor.create` (directly, through views, or as the result of a kernel that stored into it)
    and passes to no Out / InOut parameter of the same call — so no write by
    the kernel can reach the hoisted bytes (distinct parameters of the orchestration itself
    might be one user array, so they never count as proof);
  - every Mat tile of the kernel fits L1 at once (the hoisted tile lives across the whole loop).
A hoisted load's only reader, when it is a transpose_view or a Mat → Left / Right move read only
by matmul operand slots, leaves the loop with it (every Left / Right tile of the kernel must fit
L0 at once), so the stationary operand is not even re-staged each iteration.

    before:  for n in pl.range(4):  w = tile.load(W, [0, 0], [32, 32], target_memory=Mat); ...
    after:   w = tile.load(W, [0, 0], [32, 32], target_memory=Mat)
             for n in pl.range(4):  ...
"""

from __future__ import annotations

from typing import Optional

from pypto.ir.enums import ForKind, FunctionType, MemorySpace, ParamDirection
from pypto.ir.expr import Call, ConstInt, GlobalVar, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import READ
from pypto.ir.stmt import AssignStmt, ForStmt, ReturnStmt, SeqStmts, YieldStmt, flatten_to_stmts
from pypto.ir.types import TileType
from pypto.ir.visitor import IRVisitor, SplicingMutator, collect, collect_statements
from pypto.passes.analysis import body_list, used_vars
from pypto.passes.context import current_platform

# Caller-side ops whose result is a view of their first argument's storage.
_VIEW_OPS = ("tensor.slice", "tensor.view", "tensor.reshape", "tensor.assemble", "tensor.reinterpret_view")


def _bindings(body) -> dict:
    found = {}

    class _B(IRVisitor):
        def visit_assign_stmt(self, s):
            found[s.var] = s.value
            self.visit_children(s)

    _B().visit(body)
    return found


def _returned_param(callee: Optional[Function]) -> Optional[int]:
    """The parameter a single-result kernel returns: its result is the buffer it stored into."""
    stmts = body_list(callee.body) if callee is not None else []
    if not stmts or not isinstance(stmts[-1], ReturnStmt) or len(stmts[-1].values) != 1:
        return None
    bound, loops = _bindings(callee.body), {}
    for loop in collect_statements(callee.body, lambda n: isinstance(n, ForStmt)):
        loops.update({rv: ia.init_value for ia, rv in zip(loop.iter_args, loop.return_vars)})
    e = stmts[-1].values[0]
    for _ in range(64):
        if e in callee.params:
            return callee.params.index(e)
        if e in loops:
            e = loops[e]
        elif isinstance(bound.get(e), Var):
            e = bound[e]
        elif isinstance(bound.get(e), Call) and getattr(bound[e].op, "name", "") == "tile.store":
            e = bound[e].args[2]
        else:
            return None
    return None


def _root(e, bound: dict, program: Program):
    """The storage an orchestration value names: views, aliases and kernel results (the buffer the
    kernel stored into) followed to their base."""
    seen = 0
    while isinstance(e, Var) and e in bound and seen < 64:
        v = bound[e]
        if isinstance(v, Var):
            e = v
        elif isinstance(v, Call) and not isinstance(v.op, GlobalVar) and v.op.name in _VIEW_OPS and v.args:
            e = v.args[0]
        elif isinstance(v, Call) and isinstance(v.op, GlobalVar) \
                and (k := _returned_param(program.functions.get(v.op.name))) is not None and k < len(v.args):
            e = v.args[k]
        else:
            return e
        seen += 1
    return e


def _private_inputs(func: Function, program: Program) -> set:
    """Indices of func's In parameters every caller fills with its own, unaliased tensor.create storage."""
    sites = []
    for caller in program.functions.values():
        calls = collect(caller.body, lambda n: isinstance(n, Call) and isinstance(n.op, GlobalVar)
                        and n.op.name == func.name)
        if calls and caller.func_type is not FunctionType.Orchestration:
            return set()
        sites += [(caller, c) for c in calls]
    if not sites:
        return set()
    candidates = {i for i, d in enumerate(func.param_directions) if d is ParamDirection.In}
    for caller, call in sites:
        bound = _bindings(caller.body)
        roots = [_root(a, bound, program) for a in call.args]
        writable = {roots[i] for i, d in enumerate(func.param_directions)
                    if d is not ParamDirection.In and i < len(roots)}
        for i in list(candidates):
            r = roots[i] if i < len(roots) else None
            created = isinstance(bound.get(r), Call) and not isinstance(bound[r].op, GlobalVar) \
                and bound[r].op.name == "tensor.create"
            if not created or r in writable:
                candidates.discard(i)
    return candidates


def _tile_bytes(t: TileType):
    n = t.dtype.bits
    for d in t.shape:
        if not isinstance(d, ConstInt):
            return None
        n *= d.value
    return (n + 7) // 8


def _fits(func: Function, space: MemorySpace) -> bool:
    """Every tile of `space` allocated at once still fits it (views share their source's bytes)."""
    platform = current_platform()
    align, total = platform.alignment, 0
    for s in collect_statements(func.body, lambda n: isinstance(n, AssignStmt)):
        t = s.var.type
        if not (isinstance(t, TileType) and t.memory_space is space and isinstance(s.value, Call)):
            continue
        if isinstance(s.value.op, GlobalVar) or s.value.op.output_memory not in ("target_memory", space):
            continue
        size = _tile_bytes(t)
        if size is None:
            return False
        total += -(-size // align) * align
    return total <= platform.space_capacity(space)


def _runs_at_least_once(s: ForStmt) -> bool:
    if s.kind is not ForKind.Sequential or not all(isinstance(e, ConstInt) for e in (s.start, s.stop, s.step)):
        return False
    return s.step.value > 0 and s.start.value < s.stop.value


def _written_params(func: Function) -> set:
    """Parameters some op of the kernel writes (store / write targets, READWRITE / WRITE effects)."""
    written = set()
    for c in collect(func.body, lambda n: isinstance(n, Call) and not isinstance(n.op, GlobalVar)):
        for i, eff in c.op.effects.items():
            if i < len(c.args) and eff != READ and isinstance(c.args[i], Var):
                written.add(c.args[i])
    return written


_L0_OPERANDS = (MemorySpace.Left, MemorySpace.Right)


def _op_name(e) -> str:
    return e.op.name if isinstance(e, Call) and not isinstance(e.op, GlobalVar) else ""


class _Hoist(SplicingMutator):
    def __init__(self, sources: set, l0_fits: bool):
        self.sources = sources
        self.l0_fits = l0_fits

    def _load(self, s, inside: set, yielded: set) -> bool:
        v = getattr(s, "value", None)
        if not (isinstance(s, AssignStmt) and _op_name(v) == "tile.load"
                and v.kwargs.get("target_memory") is MemorySpace.Mat):
            return False
        if v.args[0] not in self.sources or s.var in yielded:
            return False
        return not any(u in inside for u in used_vars(v))

    def _l0_staging(self, s, hoisted_vars: set, uses: dict, readers: dict, yielded: set) -> bool:
        """A transpose_view / Mat → Left / Right move of a hoisted tile, its only reader, whose result
        only matmul operand slots read: the stationary operand's whole prefix leaves the loop."""
        v = getattr(s, "value", None)
        name = _op_name(v)
        if not isinstance(s, AssignStmt) or not v.args or v.args[0] not in hoisted_vars or uses.get(v.args[0]) != 1:
            return False
        if name == "tile.move" and v.kwargs.get("target_memory") in _L0_OPERANDS and self.l0_fits:
            return s.var not in yielded and all(r.startswith(("tile.matmul", "tile.gemv")) for r in readers[s.var])
        return name == "tile.transpose_view" and s.var not in yielded

    def mutate_for_stmt(self, s):
        s = self.mutate_children(s)
        if not _runs_at_least_once(s):
            return s
        stmts = flatten_to_stmts(s.body)
        inside = {s.loop_var, *s.iter_args, *_bindings(s.body)}
        for n in collect_statements(s.body, lambda n: isinstance(n, ForStmt)):
            inside |= {n.loop_var, *n.iter_args, *n.return_vars}
        yielded = {v for y in collect_statements(s.body, lambda n: isinstance(n, YieldStmt)) for v in y.values}
        hoisted = [x for x in stmts if self._load(x, inside, yielded)]
        if not hoisted:
            return s
        uses, readers = {}, {}
        for c in collect(s.body, lambda n: isinstance(n, Call)):
            for a in c.args:
                uses[a] = uses.get(a, 0) + 1
                readers.setdefault(a, []).append(_op_name(c))
        hoisted_vars = {x.var for x in hoisted}
        for x in stmts:
            if all(x is not h for h in hoisted) and self._l0_staging(x, hoisted_vars, uses, readers, yielded):
                hoisted.append(x)
                hoisted_vars.add(x.var)
        order = [x for x in stmts if any(x is h for h in hoisted)]
        body = SeqStmts([x for x in stmts if all(x is not h for h in hoisted)], s.body.span)
        return SeqStmts([*order, s.replace(body=body)], s.span)


def hoist_invariant_mat_loads(func: Function, program: Program) -> Function:
    """Move loop-invariant GM → Mat loads of `func` before their loops (see module doc)."""
    if not collect_statements(func.body, lambda n: isinstance(n, ForStmt)):
        return func
    private = _private_inputs(func, program)
    if not private:
        return func
    written = _written_params(func)
    sources = {p for i, p in enumerate(func.params) if i in private and p not in written}
    if not sources or not _fits(func, MemorySpace.Mat):
        return func
    body = _Hoist(sources, all(_fits(func, sp) for sp in _L0_OPERANDS)).mutate(func.body)
    return func if body is func.body else func.replace(body=body)
