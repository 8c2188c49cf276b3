"""ConvertTensorToTileOps phase 1, exit side: the assemble-loop rewrite (seed 003, 插入 tile.store).

A kernel that builds its result in a fresh on-chip buffer, one tile.assemble per iteration, and
then stores the whole buffer, writes every piece twice (UB, then GM) and holds the full result
on chip. When the returned value is such a loop's result, the loop carries the new Out tensor
instead and each assemble becomes a tile.store of its piece; the buffer and the exit store go.

    before:  buf = tile.create(...); for i, (acc,) in range(n, init=(buf,)): acc2 = tile.assemble(acc, e, off); yield acc2
             ret0_store = tile.store(r, zeros, ret0_out)
    after:   for i, (acc,) in range(n, init=(ret0_out,)): acc2 = tile.store(e, off, acc); yield acc2     # r returned
"""

from __future__ import annotations

from typing import Optional

from pypto.ir.expr import Call, GlobalVar, IterArg, Var
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, ForStmt, YieldStmt
from pypto.passes.analysis import as_seq, body_list, used_vars


def _op_name(e) -> Optional[str]:
    return e.op.name if isinstance(e, Call) and not isinstance(e.op, GlobalVar) else None


def _uses(nodes, var) -> int:
    return sum(1 for n in nodes for v in used_vars(n) if v is var)


def store_loop(stmts: list, value, out: Var) -> Optional[tuple]:
    """(new top-level stmts, the Var to return) when `value` comes from an assemble loop, else None."""
    loop_at = next((j for j, s in enumerate(stmts) if isinstance(s, ForStmt) and value in s.return_vars), None)
    if loop_at is None:
        return None
    loop = stmts[loop_at]
    k = loop.return_vars.index(value)
    ia = loop.iter_args[k]
    create_at = next((j for j, s in enumerate(stmts) if isinstance(s, AssignStmt) and s.var is ia.init_value
                      and _op_name(s.value) == "tile.create"), None)
    if create_at is None:
        return None
    others = stmts[:create_at] + stmts[create_at + 1:loop_at] + stmts[loop_at + 1:]
    if _uses(others, ia.init_value) or _uses([x for x in loop.iter_args if x is not ia], ia.init_value):
        return None
    body = body_list(loop.body)
    if not body or not isinstance(body[-1], YieldStmt):
        return None
    piece = body[-1].values[k]
    asm_at = next((j for j, s in enumerate(body) if isinstance(s, AssignStmt) and s.var is piece
                   and _op_name(s.value) == "tile.assemble" and s.value.args[0] is ia), None)
    if asm_at is None or _uses(body, ia) != 1 or _uses(body[:-1], piece) != 0:
        return None
    asm = body[asm_at].value
    new_ia = IterArg(ia.name_hint, out.type, out, ia.span)
    store = create_op_call("tile.store", [asm.args[1], asm.args[2], new_ia], {}, asm.span)
    stored = Var(piece.name_hint, store.type, piece.span)
    body = body[:asm_at] + [AssignStmt(stored, store, body[asm_at].span)] + body[asm_at + 1:]
    yields = list(body[-1].values)
    yields[k] = stored
    body[-1] = YieldStmt(yields, body[-1].span)
    result = Var(value.name_hint, out.type, value.span)
    iter_args = tuple(new_ia if x is ia else x for x in loop.iter_args)
    rvs = tuple(result if x is value else x for x in loop.return_vars)
    new_loop = loop.replace(iter_args=iter_args, body=as_seq(body, loop.body.span), return_vars=rvs)
    new = stmts[:create_at] + stmts[create_at + 1:loop_at] + [new_loop] + stmts[loop_at + 1:]
    return new, result
