"""Operand moves for InferTileMemorySpace: a tile operand in a memory space its op cannot read
gets a `tile.move` into the op's first accepted space, and the types that follow are re-deduced.

This is what turns a tensor-level `z = pl.matmul(a, b); w = pl.add(z, bias)` into a kernel
with an explicit Acc → Vec move, the CV boundary ExpandMixedKernel splits on (seed 004 relies
on InferTileMemorySpace having inserted it: pass doc 17, "insert tile.move").

    before:  z: Tile[.., Acc] = tile.matmul(l, r);  w: Tile[.., Acc] = tile.add(z, bias)
    after:   z: Tile[.., Acc] = tile.matmul(l, r);  z_vec: Tile[.., Vec] = tile.move(z, Vec)
             w: Tile[.., Vec] = tile.add(z_vec, bias)
"""

from __future__ import annotations

from pypto.ir.expr import Call, GlobalVar, Var
from pypto.ir.function import Function
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, EvalStmt, SeqStmts
from pypto.ir.types import TileType
from pypto.ir.visitor import IRMutator


class _OperandMoves(IRMutator):
    def __init__(self):
        self.map: dict = {}

    def mutate_var(self, v):
        return self.map.get(v, v)

    def mutate_seq_stmts(self, s):
        out = []
        for x in s.stmts:
            nx = self.mutate(x)
            out.extend(nx.stmts if isinstance(nx, SeqStmts) and not isinstance(x, SeqStmts) else [nx])
        return s.replace(stmts=tuple(out)) if any(a is not b for a, b in zip(out, s.stmts)) or \
            len(out) != len(s.stmts) else s

    def _fix(self, call):
        if not isinstance(call, Call) or isinstance(call.op, GlobalVar):
            return self.mutate(call), []
        args = [self.mutate(a) for a in call.args]
        moves = []
        for i, allowed in call.op.input_memory.items():
            if i >= len(args) or not isinstance(args[i].type, TileType):
                continue
            space = args[i].type.memory_space
            if space is None or space in allowed:
                continue
            move = create_op_call("tile.move", [args[i]], {"target_memory": allowed[0]}, call.span)
            moved = Var(f"{args[i].name_hint}_{allowed[0].name.lower()}", move.type, call.span) \
                if isinstance(args[i], Var) else Var("moved", move.type, call.span)
            moves.append(AssignStmt(moved, move, call.span))
            args[i] = moved
        if all(a is b for a, b in zip(args, call.args)):
            return call, []
        new = create_op_call(call.op.name, args, call.kwargs, call.span, call.attrs or None)
        return new, moves

    def mutate_assign_stmt(self, s):
        value, moves = self._fix(s.value)
        if value is s.value:
            return s
        var = s.var
        old, new = var.type, value.type
        if isinstance(old, TileType) and isinstance(new, TileType) and old.memory_space is not new.memory_space:
            var = Var(var.name_hint, new.replace(memref=old.memref) if old.memref is not None else new, var.span)
            self.map[s.var] = var
        else:
            value = value.replace(type=old)
        stmt = AssignStmt(var, value, s.span)
        return SeqStmts([*moves, stmt], s.span) if moves else stmt

    def mutate_eval_stmt(self, s):
        value, moves = self._fix(s.expr)
        if value is s.expr:
            return s
        stmt = EvalStmt(value, s.span)
        return SeqStmts([*moves, stmt], s.span) if moves else stmt


def insert_operand_moves(func: Function) -> Function:
    body = _OperandMoves().mutate(func.body)
    return func if body is func.body else func.replace(body=body)
