"""ConvertTensorToTileOps: one GM tensor is written through one store path per InCore kernel.

A kernel writes GM either by DMA (`tile.store`, and `tensor.assemble`, which lowers to it — the
MTE3 pipe) or by scalar stores (`tensor.write`, `tile.write` on a tensor — the scalar unit through
its D-cache). Nothing orders the two paths against each other or keeps their cache lines
coherent, so a kernel that mixes them on one tensor may lose either write on hardware (reference
rule, compiler-and-runtime.md §2 row 11). The check follows each tensor parameter through the
values that alias it (slices, store / assemble / write results, loop carries, branch results)
and rejects the kernel naming the tensor, both ops and their lines.

    t2 = pl.tensor.assemble(out, tile_result, [0, 0])     # MTE3
    t3 = pl.tensor.write(t2, [0, 0], 1.0)                  # scalar store → ValueCheckError
"""

from __future__ import annotations

from pypto.errors import ValueCheckError
from pypto.ir.expr import Call, GlobalVar, Var
from pypto.ir.function import Function
from pypto.ir.stmt import YieldStmt, flatten_to_stmts
from pypto.ir.types import TensorType
from pypto.ir.visitor import IRVisitor

# op → index of the GM tensor it writes
_DMA_STORES = {"tile.store": 2, "tensor.assemble": 0}
_SCALAR_STORES = {"tensor.write": 0, "tile.write": 0}
# ops whose result is (a view of) their first operand's storage
_VIEWS = ("tensor.slice", "tensor.view", "tensor.reshape", "tensor.reinterpret_view")


def _line(span) -> str:
    return f"line {span.line}" if span is not None and span.is_known() else "an unknown line"


class _StorePaths(IRVisitor):
    def __init__(self, func: Function):
        self.origin: dict = {p: frozenset([p]) for p in func.params if isinstance(p.type, TensorType)}
        self.dma: dict = {}          # param → (op name, span) of its first DMA store
        self.scalar: dict = {}       # param → (op name, span) of its first scalar store

    def of(self, e) -> frozenset:
        return self.origin.get(e, frozenset()) if isinstance(e, Var) else frozenset()

    def _call(self, c: Call, span):
        if isinstance(c.op, GlobalVar):
            return frozenset()
        name = c.op.name
        for table, seen in ((_DMA_STORES, self.dma), (_SCALAR_STORES, self.scalar)):
            if name in table and table[name] < len(c.args) and isinstance(c.args[table[name]].type, TensorType):
                target = self.of(c.args[table[name]])
                for p in target:
                    seen.setdefault(p, (name, c.span if c.span is not None and c.span.is_known() else span))
                return target
        return self.of(c.args[0]) if name in _VIEWS and c.args else frozenset()

    def visit_assign_stmt(self, s):
        if isinstance(s.value, Call):
            got = self._call(s.value, s.span)
        else:
            got = self.of(s.value)
        if got:
            self.origin[s.var] = got

    def visit_eval_stmt(self, s):
        if isinstance(s.expr, Call):
            self._call(s.expr, s.span)

    def _yields(self, body) -> list:
        stmts = flatten_to_stmts(body)
        return list(stmts[-1].values) if stmts and isinstance(stmts[-1], YieldStmt) else []

    def _loop(self, s):
        """A carry aliases its init and whatever the body yields for it: later iterations store through
        the yielded tensors, so the body is walked again until the carries' origins stop growing."""
        ys = self._yields(s.body)
        while True:
            before = [self.of(ia) for ia in s.iter_args]
            for k, ia in enumerate(s.iter_args):
                got = self.of(ia.init_value) | self.of(ia) | (self.of(ys[k]) if k < len(ys) else frozenset())
                if got:
                    self.origin[ia] = got
            self.visit(s.body)
            if [self.of(ia) for ia in s.iter_args] == before:
                break
        for k, (ia, rv) in enumerate(zip(s.iter_args, s.return_vars)):
            got = self.of(ia) | (self.of(ys[k]) if k < len(ys) else frozenset())
            if got:
                self.origin[rv] = got

    def visit_for_stmt(self, s):
        self._loop(s)

    def visit_while_stmt(self, s):
        self._loop(s)

    def visit_if_stmt(self, s):
        self.visit(s.then_body)
        self.visit(s.else_body)
        branches = [self._yields(b) for b in (s.then_body, s.else_body) if b is not None]
        for k, rv in enumerate(s.return_vars):
            got = frozenset().union(*(self.of(ys[k]) for ys in branches if k < len(ys)))
            if got:
                self.origin[rv] = got


def check_store_paths(func: Function) -> None:
    """Raise ValueCheckError when one GM tensor param of `func` gets both DMA and scalar stores."""
    paths = _StorePaths(func)
    paths.visit(func.body)
    for p in func.params:
        if p in paths.dma and p in paths.scalar:
            (dma_op, dma_span), (scalar_op, scalar_span) = paths.dma[p], paths.scalar[p]
            raise ValueCheckError(
                f"GM tensor '{p.name_hint}' mixes MTE3 and scalar stores in InCore function '{func.name}': "
                f"{dma_op} ({_line(dma_span)}) writes it by DMA and {scalar_op} ({_line(scalar_span)}) "
                f"by a scalar store", scalar_span,
                hint="write the updates into one UB tile (tile.write) and store that tile once, or write every "
                     "element of this tensor with tensor.write",
                note="the MTE3 pipe and the scalar unit's D-cache are not ordered or kept coherent with each "
                     "other, so either write may be lost")
