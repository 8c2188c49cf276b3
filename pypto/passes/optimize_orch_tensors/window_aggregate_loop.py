"""OptimizeOrchTensors pattern 5, loop-aggregate output windows (the reference's AggregateWindowLoop).

A windowize kernel that carries its Out tensor through a loop and stores one tile per iteration,
at offsets that step through the tensor by exactly one tile per iteration, writes one contiguous
aggregate window: the union of the pieces. That window is what the call site slices; inside the
clone each store is rebased to the window's origin (loop var j, start s, per-dim step c):

    before:  for j, (acc,) in range(0, 4, init=(out,)): acc2 = tile.store(t, [r * 16, j * 32], acc)   # out: [64, 256]
    window:  [16, 128] at [r * 16, 0];  clone stores at [0, (j - 0) * 32] into a [16, 128] window

Built: one top-level ForStmt with constant bounds whose single carry starts from the Out param,
whose only use of the carry is one whole-tile `tile.store` yielded back, and whose result is the
kernel's only return value; each offset dim is `rest + c * j` with `rest` using only scalar
params / constants and `c * step` either 0 or the tile's extent along that dim (pieces abut,
ascending). Anything else stays full-tensor (the aggregate input-window form is not built).
"""

from __future__ import annotations

from typing import Optional

from pypto.ir.dtypes import INDEX
from pypto.ir.expr import BinaryExpr, Call, ConstInt, GlobalVar, IterArg, MakeTuple, Var
from pypto.ir.function import Function
from pypto.ir.stmt import AssignStmt, ForStmt, ReturnStmt, YieldStmt
from pypto.ir.types import ScalarType, TileType
from pypto.ir.equality import structural_equal
from pypto.ir.visitor import IRMutator, collect
from pypto.passes.analysis import body_list, used_vars


def _linear(e, j: Var) -> Optional[tuple]:
    """(c, rest) with e == rest + c * j, rest free of j (rest None means 0); None when not affine in j."""
    if e is j:
        return 1, None
    if j not in used_vars(e):
        return 0, e
    if isinstance(e, BinaryExpr) and e.op in ("add", "sub"):
        a, b = _linear(e.lhs, j), _linear(e.rhs, j)
        if a is None or b is None:
            return None
        sign = 1 if e.op == "add" else -1
        rest = a[1] if b[1] is None else (
            (b[1] if sign == 1 else BinaryExpr("sub", ConstInt(0, INDEX), b[1], INDEX)) if a[1] is None
            else BinaryExpr(e.op, a[1], b[1], INDEX))
        return a[0] + sign * b[0], rest
    if isinstance(e, BinaryExpr) and e.op == "mul":
        for var_side, k in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
            if isinstance(k, ConstInt) and j not in used_vars(k):
                inner = _linear(var_side, j)
                if inner is None:
                    return None
                rest = None if inner[1] is None else BinaryExpr("mul", inner[1], k, INDEX)
                return inner[0] * k.value, rest
    return None


def _plus(a, b):
    if a is None:
        return b
    if isinstance(b, ConstInt) and b.value == 0:
        return a
    return BinaryExpr("add", a, b, INDEX)


def _used_elsewhere(func: Function, p: Var, carry: IterArg) -> bool:
    """p is read somewhere other than as the init of `carry` (visitors reach an IterArg's init at each use
    of the IterArg, so occurrences are not counted: the places p could be read are listed instead)."""
    return bool(collect(func.body, lambda n: (isinstance(n, Call) and any(a is p for a in n.args))
                        or (isinstance(n, (YieldStmt, ReturnStmt)) and any(v is p for v in n.values))
                        or (isinstance(n, AssignStmt) and n.value is p)
                        or (isinstance(n, IterArg) and n.init_value is p and n is not carry)))


def aggregate_output_window(func: Function, j_index: int) -> Optional[tuple]:
    """(window shape, window offsets, {store call: rebased offsets}) for Out param j_index, or None."""
    p = func.params[j_index]
    stmts = body_list(func.body)
    ret = stmts[-1] if stmts and isinstance(stmts[-1], ReturnStmt) else None
    if ret is None or len(ret.values) != 1:
        return None
    loop = next((s for s in stmts if isinstance(s, ForStmt) and any(ia.init_value is p for ia in s.iter_args)), None)
    if loop is None or not all(isinstance(b, ConstInt) for b in (loop.start, loop.stop, loop.step)):
        return None
    k = next(n for n, ia in enumerate(loop.iter_args) if ia.init_value is p)
    ia = loop.iter_args[k]
    if ret.values[0] is not loop.return_vars[k] or _used_elsewhere(func, p, ia):
        return None
    body = body_list(loop.body)
    stores = [s for s in body if isinstance(s, AssignStmt) and isinstance(s.value, Call)
              and not isinstance(s.value.op, GlobalVar) and s.value.op.name == "tile.store" and s.value.args[2] is ia]
    yield_ = body[-1] if body and isinstance(body[-1], YieldStmt) else None
    if len(stores) != 1 or yield_ is None or yield_.values[k] is not stores[0].var \
            or len(collect(loop.body, lambda n: n is ia)) != 1:
        return None
    store = stores[0].value
    tile = store.args[0].type
    if not isinstance(tile, TileType) or not all(isinstance(d, ConstInt) for d in tile.shape) \
            or not structural_equal(tuple(tile.valid_shape), tuple(tile.shape)) or not isinstance(store.args[1], MakeTuple):
        return None
    start, step = loop.start.value, loop.step.value
    count = len(range(start, loop.stop.value, step))
    scalars = {q for q in func.params if isinstance(q.type, ScalarType)}
    shape, base, rebased = [], [], []
    for off, extent in zip(store.args[1].elements, tile.shape):
        lin = _linear(off, loop.loop_var)
        if lin is None or count < 1:
            return None
        c, rest = lin
        if rest is not None and not set(used_vars(rest)) <= scalars:
            return None
        if c == 0:
            shape.append(extent.value)
            base.append(rest if rest is not None else ConstInt(0, INDEX))
            rebased.append(ConstInt(0, INDEX))
            continue
        if c * step != extent.value:
            return None                              # pieces overlap, leave gaps or run backwards
        shape.append(extent.value * count)
        base.append(_plus(rest, ConstInt(c * start, INDEX)))
        from_start = loop.loop_var if start == 0 else BinaryExpr("sub", loop.loop_var, ConstInt(start, INDEX), INDEX)
        rebased.append(from_start if c == 1 else BinaryExpr("mul", from_start, ConstInt(c, INDEX), INDEX))
    return tuple(ConstInt(s, INDEX) for s in shape), MakeTuple(base), {id(store): MakeTuple(rebased)}


class RebaseStores(IRMutator):
    """Replace the offsets of the given store calls (keyed by id(call))."""

    def __init__(self, offsets: dict):
        self.offsets = offsets

    def mutate_call(self, c):
        if id(c) in self.offsets:
            args = list(c.args)
            args[1] = self.offsets[id(c)]
            return c.replace(args=tuple(args))
        return self.mutate_children(c)
