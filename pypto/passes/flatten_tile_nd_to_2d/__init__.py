"""FlattenTileNdTo2D: kernels compute on 2-D tiles only; transpose gets its scratch tile here.

Requires: SSAForm, IncoreTileOps, NormalizedStmtStructure / Produces: (2-D kernel tiles) / Invalidates: —
Reference: pass doc 13 (compiler-and-runtime.md §2, dump 14: rank > 2 tiles → [prod(leading), last],
batch_matmul(_acc) → per-batch 2-D matmuls); seed 003 "Transpose 下沉" (scratch owner).

The PTO vector instructions address a tile as rows x columns, so a rank > 2 tile [d0, ..., dk]
becomes [d0 * ... * d(k-1), dk] (row-major, the same bytes). Every tile Var, iter-arg and
return var is retyped; compute ops are rebuilt on the 2-D operands (their types re-deduced; an op
whose flattened result is not the flattening of its N-D result, e.g. one reducing a leading axis,
is UnsupportedError); the shape arguments of tile.create / tile.full / tile.reshape are flattened.
Physical shapes must be static; valid regions flatten when they are a prefix of rows
(pypto/ir/ops/flat_window.py).
- GM boundary: the DMA itself reads an N-D window into the 2-D tile, as `pto.tload` does, so an
  N-D `tile.load` gets its `tile_shape` operand (result [prod(leading), last]) and a store into a
  rank > 2 tensor gets its `shapes` operand (the N-D window the tile's valid rows fill); no reshape.
- Transposes (transpose.py): every `tile.transpose(x, a, b)` gets the scratch the instruction needs
  (`tile.create` + the 4-argument form); rank > 2 ones run as a loop of 2-D transposes.
- Batched matmuls (batch_matmul.py): one 2-D matmul per batch, fed by per-batch Mat → Left / Right
  extracts that replace the whole-batch moves (why there: see that module).

    before:  t: Tile[[2, 16, 32]] = pl.tile.load(x, [0, 0, 0], [2, 16, 32], [2, 16, 32]);  y = pl.tile.exp(t)
    after:   t: Tile[[32, 32]] = pl.tile.load(x, [0, 0, 0], [2, 16, 32], [2, 16, 32], [32, 32])
             y: Tile[[32, 32]] = pl.tile.exp(t);   pl.tile.store(y, [0, 0, 0], out, [2, 16, 32])
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.enums import FunctionType
from pypto.ir.expr import Call, ConstInt, GlobalVar, MakeTuple, Var, as_int
from pypto.ir.equality import structural_equal
from pypto.ir.function import Function, Program
from pypto.ir.ops.flat_window import flat_shape, flat_valid
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt, SeqStmts
from pypto.ir.types import TensorType, TileType
from pypto.ir.visitor import collect, collect_statements
from pypto.passes.analysis import Retyper, as_seq
from pypto.passes.flatten_tile_nd_to_2d.batch_matmul import BATCHED, BatchSplitter, batch_operand_moves, split_loop
from pypto.passes.flatten_tile_nd_to_2d.transpose import nd_transpose, scratch_for
from pypto.passes.base import function_pass
from pypto.passes.properties import IRProperty, PassProperties

_KERNELS = (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV)
_SHAPE_ARG = {"tile.create": 0, "tile.full": 0, "tile.reshape": 1}


def _flat_type(t):
    """[d0, ..., dk] → [prod(d0..d(k-1)), dk] for tiles of rank > 2 (None: unchanged)."""
    if not isinstance(t, TileType) or t.rank <= 2:
        return None
    shape = [ConstInt(d) for d in flat_shape(t.shape, "a tile")]
    view = t.tile_view
    if view is not None and view.valid_shape:
        rows, cols = flat_valid(t.shape, view.valid_shape, "a tile")
        view = view.replace(valid_shape=(rows, cols))
    return TileType(shape, t.dtype, t.memref, view, t.memory_space)


def _stores_into_nd(call) -> bool:
    """A tile.store of a tile into a rank > 2 tensor without an explicit N-D window (`shapes`)."""
    return (call.op.name == "tile.store" and len(call.args) == 3 and isinstance(call.args[2].type, TensorType)
            and call.args[2].type.rank > 2)


class _Flattener(Retyper):
    def __init__(self, func: Function):
        super().__init__(_flat_type)
        defs = {s.var: s.value for s in collect_statements(func.body, lambda n: isinstance(n, AssignStmt))}
        dropped = batch_operand_moves(func.body)
        self.batches = BatchSplitter(self.mutate, dropped, defs)

    def mutate_var(self, v):
        if v in self.batches.split:
            raise UnsupportedError(f"FlattenTileNdTo2D: '{v.name_hint}', a rank {v.type.rank} tile.batch_matmul "
                                   "result, is used by something other than tile.store / tile.move / "
                                   "tile.batch_matmul_acc / a loop carry; its batches stay separate 2-D Acc tiles", v.span,
                                   hint="store the batched result to GM (pl.store) and load it back for other ops")
        return self.var(v)

    def mutate_seq_stmts(self, seq: SeqStmts):
        out: list = []
        for s in seq.stmts:
            if isinstance(s, AssignStmt) and isinstance(s.value, Call) and not isinstance(s.value.op, GlobalVar):
                if s.var not in self.batches.dropped:
                    out += self.rewrite(s.var, s.value, s.span)
            elif isinstance(s, EvalStmt) and isinstance(s.expr, Call) and not isinstance(s.expr.op, GlobalVar):
                out += self.rewrite(None, s.expr, s.span)
            elif isinstance(s, ForStmt) and any(ia.init_value in self.batches.split for ia in s.iter_args):
                out.append(split_loop(self, s, self.batches.split))
            else:
                out.append(self.mutate(s))
        return as_seq(out, seq.span)

    def bind(self, var, value, span) -> list:
        """`var = value` with `var` retyped to the value's (re-deduced) type; an EvalStmt when var is None."""
        if var is None:
            return [EvalStmt(value, span)]
        new = self.var(var)
        if value.type is not None and not structural_equal(new.type, value.type):
            new = Var(new.name_hint, value.type, new.span)       # re-deduced (e.g. a flattened valid region)
            self.vars[var] = new
        return [AssignStmt(new, value, span)]

    def rewrite(self, var, call: Call, span) -> list:
        name = call.op.name
        if name in BATCHED and call.type.rank > 2:
            return self.batches.matmul(var, call)
        if name == "tile.move" and call.args[0] in self.batches.split:
            stmts, value = self.batches.move(var, call)
            return stmts + self.bind(var, value, span)
        if name == "tile.store" and call.args[0] in self.batches.split:
            args = [None, self.mutate(call.args[1]), self.mutate(call.args[2])]
            out = []
            for target, value in self.batches.store(var, call, args):
                out += self.bind(target, value, span)
            return out
        args, pre = [self.mutate(a) for a in call.args], []
        orig = call.args[0].type if call.args else None
        if name == "tile.transpose" and orig.rank > 2:
            stmts, value = nd_transpose(call, args[0], orig)
            if value is None:                          # only size-1 axes moved: the same flattened tile
                self.vars[var] = args[0]
                return stmts
            return stmts + self.bind(var, value, span)
        if name == "tile.transpose" and len(args) == 3:
            stmt, tmp = scratch_for(args[0], call.span)
            pre.append(stmt)
            args.append(tmp)
        elif name == "tile.load" and call.type.rank > 2 and len(args) == 4:
            args.append(MakeTuple([ConstInt(d) for d in flat_shape(call.type.shape, name, call.span)], call.span))
        elif _stores_into_nd(call) and isinstance(orig, TileType):
            rank = call.args[2].type.rank
            window = [ConstInt(1)] * (rank - orig.rank) + list(orig.valid_shape)
            args.append(MakeTuple(window, call.span))
        elif name in _SHAPE_ARG and isinstance(call.type, TileType) and call.type.rank > 2:
            k = _SHAPE_ARG[name]
            args[k] = MakeTuple([ConstInt(d) for d in flat_shape(call.type.shape, name, call.span)], call.span)
        changed = any(a is not b for a, b in zip(args, call.args)) or len(args) != len(call.args)
        new_call = create_op_call(name, args, dict(call.kwargs), call.span, call.attrs or None) if changed else call
        if isinstance(new_call.type, TileType) and new_call.type.rank > 2:
            raise UnsupportedError(f"FlattenTileNdTo2D: {name} still produces a rank {new_call.type.rank} tile",
                                   call.span)
        want = _flat_type(call.type)
        if want is not None and [as_int(d) for d in new_call.type.shape] != [as_int(d) for d in want.shape]:
            raise UnsupportedError(f"FlattenTileNdTo2D: {name} on the flattened operands gives "
                                   f"{[as_int(d) for d in new_call.type.shape]}, not the flattened "
                                   f"{[as_int(d) for d in want.shape]} of its rank {call.type.rank} result; only ops "
                                   "that keep every leading axis (elementwise, last-axis reductions and broadcasts) "
                                   "flatten", call.span, hint="reduce over the last axis, or reshape to 2-D first")
        return pre + self.bind(var, new_call, span)


def _needs_work(f: Function) -> bool:
    nd = collect(f.body, lambda n: isinstance(n, Var) and isinstance(n.type, TileType) and n.type.rank > 2)
    calls = collect(f.body, lambda n: isinstance(n, Call) and not isinstance(n.op, GlobalVar)
                    and ((n.op.name == "tile.transpose" and len(n.args) == 3) or _stores_into_nd(n)))
    return bool(nd or calls)


def _run(func: Function, program: Program) -> Function:
    if func.func_type not in _KERNELS or not _needs_work(func):
        return func
    return _Flattener(func).function(func)


def flatten_tile_nd_to_2d():
    ssa, nss = IRProperty.SSAForm, IRProperty.NormalizedStmtStructure
    return function_pass("FlattenTileNdTo2D", _run,
                         PassProperties(required={ssa, IRProperty.IncoreTileOps, nss}, produced={ssa, nss}))

