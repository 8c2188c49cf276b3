"""Buffer groups for InitMemRef: which tile Vars must share one buffer, and the copies that make
loop carries safe.

Groups: plain aliases and in-place ops (OpDef.reuses_input) share their source's buffer; an if
result names its then value's buffer (the text form gives it that type) and is *exact* when the
else value can live there too (both values local to their branch, or a branch-local value joining
a loop carry's in-place chain when nothing reads the carry afterwards); each loop carry — init,
iter arg, yielded value, result — is one buffer, because the next iteration reads the iter arg
after the body re-ran every op. Sharing is safe when
  - the init is an op result (or an earlier loop's result) used only as this init (or, under any
    of its names, read only before the loop: a dead `out = acc` alias does not count), and
  - the yielded value is (an alias / in-place chain of) op results of this body, all written
    after the body's last read of the iter arg, and no inexact if result.
Otherwise a `tile.move` copy (Vec → Vec) is inserted before the loop or before the yield:

    before:  for i, (a,) in pl.range(4, init_values=(y,)):      # y is read again later
    after:   a_init = pl.tile.move(y, target_memory=pl.Mem.Vec)
             for i, (a,) in pl.range(4, init_values=(a_init,)):
"""

from __future__ import annotations

from collections import Counter
from typing import Optional

from pypto.errors import UnsupportedError
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, GlobalVar, IterArg, Var
from pypto.ir.function import Function
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, ScopeStmt, SeqStmts, WhileStmt, YieldStmt
from pypto.ir.types import TileType, static_dims
from pypto.ir.visitor import IRMutator, IRVisitor
from pypto.passes.analysis import as_seq, body_list, defined_vars, used_vars


class BufferGroups:
    """Union-find over tile Vars; the earliest-defined Var represents its group."""

    def __init__(self):
        self.parent: dict = {}
        self.order: dict = {}

    def add(self, v) -> None:
        if isinstance(v, Var) and isinstance(v.type, TileType) and v not in self.parent:
            self.parent[v] = v
            self.order[v] = len(self.order)

    def find(self, v):
        while self.parent[v] is not v:
            self.parent[v] = self.parent[self.parent[v]]
            v = self.parent[v]
        return v

    def union(self, a, b) -> None:
        if a not in self.parent or b not in self.parent or a.type.memory_space != b.type.memory_space:
            return
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            first, second = (ra, rb) if self.order[ra] < self.order[rb] else (rb, ra)
            self.parent[second] = first

    def same(self, a, b) -> bool:
        return a in self.parent and b in self.parent and self.find(a) is self.find(b)

    def members(self, v) -> list:
        root = self.find(v)
        return [m for m in self.parent if self.find(m) is root]


def shared_source(value):
    """The Var a value must share its buffer with: itself when an alias, the input of an in-place op,
    the input of a view (a reshape of a fully valid tile: the same bytes under another shape)."""
    if isinstance(value, Var):
        return value
    if isinstance(value, Call) and not isinstance(value.op, GlobalVar) and value.op.reuses_input is not None:
        i = value.op.reuses_input
        if i < len(value.args) and isinstance(value.args[i], Var):
            return value.args[i]
    if isinstance(value, Call) and not isinstance(value.op, GlobalVar) and value.op.name == "tile.reshape":
        x = value.args[0]
        if (isinstance(x, Var) and isinstance(x.type, TileType) and x.type.nbytes() is not None
                and x.type.nbytes() == value.type.nbytes()
                and static_dims(x.type.valid_shape) == static_dims(x.type.shape)):
            return x
    return None


def yielded(body) -> tuple:
    stmts = body_list(body)
    return stmts[-1].values if stmts and isinstance(stmts[-1], YieldStmt) else ()


def _is_op_assign(s) -> bool:
    return isinstance(s, AssignStmt) and isinstance(s.value, Call) and not isinstance(s.value.op, GlobalVar)


class _UseCounter(IRVisitor):
    """Counts the reads of each Var (binding sites excluded; a loop's inits are read at its header)."""

    def __init__(self, counts: Counter):
        self.counts = counts

    def visit_var(self, v):
        self.counts[v] += 1

    def visit_iter_arg(self, v):
        self.counts[v] += 1

    def visit_for_stmt(self, s):
        for ia in s.iter_args:
            self.visit(ia.init_value)
        for f in ("start", "stop", "step", "body"):
            self.visit(getattr(s, f))

    def visit_while_stmt(self, s):
        for ia in s.iter_args:
            self.visit(ia.init_value)
        self.visit(s.condition)
        self.visit(s.body)

    def visit_assign_stmt(self, s):
        self.visit(s.value)


class _Analysis:
    """Decides which loop carries need an init copy and which a yield copy (loops: inner first)."""

    def __init__(self, func: Function):
        self.groups = BufferGroups()
        self._use_count: Optional[Counter] = None   # counted on first need: only loops ask
        self.inexact: set = set()       # if results whose else value lives in another buffer
        self.loops: list = []           # enclosing loops while walking
        self.init_copy: set = set()      # (loop, k)
        self.yield_copy: set = set()     # (loop, k)
        for v in [*func.params, *defined_vars(func.body)]:
            self.groups.add(v)
        self.body = func.body
        self.walk(body_list(func.body))

    @property
    def use_count(self) -> Counter:
        """Var → how often it is read in the function (a walk of the whole body, done once, when a loop asks)."""
        if self._use_count is None:
            self._use_count = Counter()
            _UseCounter(self._use_count).visit(self.body)
        return self._use_count

    def walk(self, stmts: list) -> None:
        for i, s in enumerate(stmts):
            if isinstance(s, AssignStmt):
                src = shared_source(s.value)
                if src is not None:
                    self.groups.union(src, s.var)
            elif isinstance(s, (ForStmt, WhileStmt)):
                self.loops.append(s)
                self.walk(body_list(s.body))
                self.loops.pop()
                self.loop(s, stmts[:i], stmts[i + 1:])
            elif isinstance(s, IfStmt):
                self.walk(body_list(s.then_body))
                if s.else_body is not None:
                    self.walk(body_list(s.else_body))
                self.if_results_merge(s, stmts[i + 1:])
            elif isinstance(s, ScopeStmt):
                self.walk(body_list(s.body))

    def if_results_merge(self, s: IfStmt, after: list) -> None:
        """An if result names the then value's buffer (the text form's type). It is *exact* — both
        branch values really live there — when the else value can share that buffer too."""
        then_vals, else_vals = yielded(s.then_body), yielded(s.else_body) if s.else_body is not None else ()
        branches = [(body_list(s.then_body), set(defined_vars(s.then_body))),
                    (body_list(s.else_body), set(defined_vars(s.else_body)) if s.else_body is not None else set())]
        for k, rv in enumerate(s.return_vars):
            tv = then_vals[k] if k < len(then_vals) else None
            ev = else_vals[k] if k < len(else_vals) else None
            if not isinstance(tv, Var) or rv not in self.groups.parent:
                continue
            exact = isinstance(ev, Var) and self.branches_can_share(tv, ev, branches, after)
            self.groups.union(tv, rv)
            if exact:
                self.groups.union(ev, rv)
            else:
                self.inexact.add(rv)

    def branches_can_share(self, tv: Var, ev: Var, branches, after: list) -> bool:
        if tv not in self.groups.parent or ev not in self.groups.parent:
            return False
        if self.groups.same(tv, ev):
            return True
        groups = [set(self.groups.members(tv)), set(self.groups.members(ev))]
        if any(g & self.inexact for g in groups):
            return False
        local = [g <= defs for g, (_stmts, defs) in zip(groups, branches)]
        if all(local):
            return True                  # each value lives only in its own branch
        if not any(local):
            return False
        # one side is branch-local, the other reaches outside (an in-place chain from a loop carry,
        # e.g. matmul_acc on the iter arg): the local value may take the outside buffer if nothing
        # reads that buffer after the local value is written
        li = local.index(True)
        outside = groups[1 - li] - branches[1 - li][1]
        carries = set(self.loops[-1].iter_args) if self.loops else set()
        if not outside <= {m for m in self.groups.parent if any(self.groups.same(m, c) for c in carries)}:
            return False
        if any(set(used_vars(x)) & outside for x in after):
            return False
        stmts, _defs = branches[li]
        writes = [i for i, x in enumerate(stmts) if set(defined_vars(x)) & groups[li]]
        reads = [i for i, x in enumerate(stmts) if set(used_vars(x)) & outside]
        return not reads or (writes and min(writes) > max(reads))

    def only_this_loop_reads(self, s, k: int, after: list) -> bool:
        """Whether the init's buffer (the init and every name sharing it) is read from this loop's
        header on only as iter arg k's init: then the loop may write into it, as no later read
        expects the old value."""
        init = s.iter_args[k].init_value
        names = set(self.groups.members(init)) | {init}
        inits = [ia.init_value for ia in s.iter_args]
        if sum(1 for v in inits if v in names) != 1:
            return False
        header = [s.start, s.stop, s.step] if isinstance(s, ForStmt) else [s.condition]
        return not any(set(used_vars(x)) & names for x in [*header, s.body, *after])

    def loop(self, s, before: list, after: list) -> None:
        # values nothing else holds: op results, and results of an earlier loop (e.g. the K loop that
        # computed a split-K chain's first block, handing its accumulator to the next loop)
        fresh_ops = {x.var for x in before if _is_op_assign(x)}
        loop_results = {rv for x in before if isinstance(x, (ForStmt, WhileStmt)) for rv in x.return_vars}
        values = yielded(s.body)
        for k, ia in enumerate(s.iter_args):
            if not isinstance(ia.type, TileType):
                continue
            init = ia.init_value
            enclosing = set(self.loops[-1].iter_args) if self.loops else set()
            if (isinstance(init, Var) and init in fresh_ops and self.use_count[init] == 1
                    and len(self.groups.members(init)) == 1):
                self.groups.union(init, ia)
            elif isinstance(init, Var) and init in fresh_ops and self.only_this_loop_reads(s, k, after):
                self.groups.union(init, ia)     # its other names (e.g. a dead `out = acc`) are read before the loop only
            elif isinstance(init, Var) and init in enclosing | loop_results and self.use_count[init] == 1:
                self.groups.union(init, ia)     # an enclosing / earlier carry, read only here, continues in place
            else:
                self.init_copy.add((s, k))
            if k < len(s.return_vars):
                self.groups.union(ia, s.return_vars[k])
            v = values[k] if k < len(values) else ia
            if v is ia:
                continue
            if isinstance(v, Var) and self.groups.same(v, ia) and not set(self.groups.members(v)) & self.inexact:
                continue    # an in-place chain from the iter arg (e.g. matmul_acc) already writes the carry
            if isinstance(v, Var) and self.yield_in_place(s, ia, v):
                self.groups.union(v, ia)
            else:
                self.yield_copy.add((s, k))

    def yield_in_place(self, s, ia: Var, v: Var) -> bool:
        if v not in self.groups.parent:
            return False
        members = set(self.groups.members(v))
        inside = set(defined_vars(s.body))
        if not members <= inside or members & self.inexact:
            return False
        carried = set(self.groups.members(ia))
        body = [x for x in body_list(s.body) if not isinstance(x, YieldStmt)]
        writes = [i for i, x in enumerate(body)
                  if set(defined_vars(x)) & members and not (isinstance(x, AssignStmt) and isinstance(x.value, Var))]
        reads = [i for i, x in enumerate(body) if set(used_vars(x)) & carried]
        if not writes or not reads:
            return True
        first_write, last_read = min(writes), max(reads)
        return first_write > last_read or (first_write == last_read and _is_op_assign(body[first_write]))


def _copy(value: Var, like: Var, name: str, span) -> tuple:
    space = like.type.memory_space
    if space is not MemorySpace.Vec:
        raise UnsupportedError(f"InitMemRef: loop-carried tile '{like.name_hint}' in {space.name} would need a copy "
                               f"to keep its buffer intact, and {space.name} → {space.name} copies do not exist",
                               span, hint="carry the value through an in-place op (e.g. matmul_acc), or give the "
                                          "loop a fresh init that is used only by the loop")
    call = create_op_call("tile.move", [value], {"target_memory": space}, span).replace(type=like.type)
    var = Var(name, like.type, span)
    return var, AssignStmt(var, call, span)


class _Rewrite:
    def __init__(self, analysis: _Analysis):
        self.a = analysis

    def body(self, stmt) -> SeqStmts:
        out: list = []
        for s in body_list(stmt):
            out += self.stmt(s)
        return as_seq(out, getattr(stmt, "span", None))

    def stmt(self, s) -> list:
        if isinstance(s, (ForStmt, WhileStmt)):
            return self.loop(s)
        if isinstance(s, IfStmt):
            return [s.replace(then_body=self.body(s.then_body),
                              else_body=self.body(s.else_body) if s.else_body is not None else None)]
        if isinstance(s, ScopeStmt):
            return [s.replace(body=self.body(s.body))]
        return [s]

    def loop(self, s) -> list:
        pre, mapping = [], {}
        for k, ia in enumerate(s.iter_args):
            if (s, k) in self.a.init_copy:
                var, assign = _copy(ia.init_value, ia, f"{ia.name_hint}_init", s.span)
                pre.append(assign)
                mapping[ia] = IterArg(ia.name_hint, ia.type, var, ia.span)
        stmts = list(self.body(s.body).stmts)
        copies = [k for k in range(len(s.iter_args)) if (s, k) in self.a.yield_copy]
        if copies and stmts and isinstance(stmts[-1], YieldStmt):
            values = list(stmts[-1].values)
            extra = []
            for k in copies:
                var, assign = _copy(values[k], s.iter_args[k], f"{s.iter_args[k].name_hint}_next", s.span)
                extra.append(assign)
                values[k] = var
            stmts = stmts[:-1] + extra + [YieldStmt(values, stmts[-1].span)]
        new = s.replace(body=as_seq(stmts, s.body.span))
        if mapping:
            new = substitute_with_inits(new, mapping)
        return pre + [new]


class _InitAwareSubstituter(IRMutator):
    """Var substitution that also reaches loop inits: an iter arg whose init changes is rebuilt (once)
    and its uses follow — an inner loop's init may be the outer loop's (replaced) iter arg."""

    def __init__(self, mapping: dict):
        self.mapping = dict(mapping)

    def mutate_var(self, v):
        got = self.mapping.get(v)
        if got is not None:
            return got
        if isinstance(v, IterArg):
            init = self.mutate(v.init_value)
            if init is not v.init_value:
                self.mapping[v] = IterArg(v.name_hint, v.type, init, v.span)
                return self.mapping[v]
        return v


def substitute_with_inits(node, mapping: dict):
    return _InitAwareSubstituter(mapping).mutate(node) if mapping else node


def plan_carry_buffers(func: Function) -> tuple:
    """(`func` with the copies its tile loop carries need, the buffer groups of that function)."""
    for _attempt in range(4):
        analysis = _Analysis(func)
        if not analysis.init_copy and not analysis.yield_copy:
            return func, analysis.groups
        func = func.replace(body=_Rewrite(analysis).body(func.body))
    from pypto.errors import InternalError
    raise InternalError(f"InitMemRef: loop carries of {func.name} still need copies after inserting them")
