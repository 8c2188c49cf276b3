"""FlattenTileNdTo2D: kernels compute on 2-D tiles only; transpose gets its scratch tile here.

Requires: SSAForm, IncoreTileOps, NormalizedStmtStructure / Produces: (2-D kernel tiles) / Invalidates: —
Reference: pass doc 13 (compiler-and-runtime.md §2, dump 14); seed 003 "Transpose 下沉" (scratch owner).

The PTO vector instructions address a tile as rows x columns, so a rank > 2 tile [d0, ..., dk]
becomes [d0 * ... * d(k-1), dk] (row-major, the same bytes). Every tile Var, iter-arg and
return var is retyped; compute ops are rebuilt on the 2-D operands (their types re-deduced);
the shape arguments of tile.create / tile.full / tile.reshape are flattened. At the GM boundary
the N-D window view stays: an N-D tile.load is followed by a tile.reshape to 2-D, and a 2-D tile
stored into an N-D window is reshaped back first (on hardware both reshapes are the same bytes).
Physical shapes must be static. Every `tile.transpose(x, a, b)` gets the scratch the hardware
instruction needs: `tmp = tile.create(x.shape, x.dtype, target_memory=x's space)` and the
4-argument form; a rank > 2 transpose of the last two axes runs page by page (slice, 4-argument
transpose with one shared page scratch, assemble); other rank > 2 transposes are UnsupportedError.

    before:  y: Tile[[2, 16, 32]] = pl.tile.exp(x3);     t = pl.tile.transpose(a, 0, 1)
    after:   y: Tile[[32, 32]]    = pl.tile.exp(x2);     tmp = pl.tile.create([32, 64], ...)
                                                          t = pl.tile.transpose(a, 0, 1, tmp)
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.enums import FunctionType, MemorySpace
from pypto.ir.expr import Call, ConstInt, GlobalVar, MakeTuple, Var, as_int
from pypto.ir.equality import structural_equal
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, SeqStmts
from pypto.ir.types import TileType
from pypto.passes.analysis import Retyper, as_seq
from pypto.passes.manager import function_pass
from pypto.passes.properties import IRProperty, PassProperties

_KERNELS = (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV)
_SHAPE_ARG = {"tile.create": 0, "tile.full": 0, "tile.reshape": 1}


def _flat_dims(shape, what: str, span=None) -> list:
    dims = [as_int(d) for d in shape]
    if any(d is None for d in dims):
        raise UnsupportedError(f"FlattenTileNdTo2D: {what} has a dynamic physical shape; rank > 2 tiles must be "
                               "static to flatten", span, hint="give the tile a static shape (valid_shape may vary)")
    lead = 1
    for d in dims[:-1]:
        lead *= d
    return [lead, dims[-1]]


def _flat_type(t):
    """[d0, ..., dk] → [prod(d0..d(k-1)), dk] for tiles of rank > 2 (None: unchanged)."""
    if not isinstance(t, TileType) or t.rank <= 2:
        return None
    shape = [ConstInt(d) for d in _flat_dims(t.shape, "a tile")]
    view = t.tile_view
    if view is not None and view.valid_shape:
        valid = [as_int(v) for v in view.valid_shape]
        if any(v is None for v in valid) or valid[:-1] != [as_int(d) for d in t.shape[:-1]]:
            raise UnsupportedError("FlattenTileNdTo2D: a rank > 2 tile whose valid region is partial in a leading "
                                   "dim cannot be flattened to one 2-D valid region")
        view = view.replace(valid_shape=(shape[0], ConstInt(valid[-1])))
    return TileType(shape, t.dtype, t.memref, view, t.memory_space)


class _Flattener(Retyper):
    def __init__(self):
        super().__init__(_flat_type)

    def mutate_seq_stmts(self, seq: SeqStmts):
        out: list = []
        for s in seq.stmts:
            if isinstance(s, AssignStmt) and isinstance(s.value, Call) and not isinstance(s.value.op, GlobalVar):
                out += self.assign(s)
            else:
                out.append(self.mutate(s))
        return as_seq(out, seq.span)

    def paged_transpose(self, s: AssignStmt, x) -> list:
        stmts, last = _page_transpose_stmts(s, x, s.value.args[0].type)
        var = Var(s.var.name_hint, last.type, s.var.span)
        self.vars[s.var] = var
        return stmts + [AssignStmt(var, last, s.span)]

    def assign(self, s: AssignStmt) -> list:
        call, pre = s.value, []
        name = call.op.name
        args = [self.mutate(a) for a in call.args]
        if name in ("tile.batch_matmul", "tile.batch_matmul_acc"):
            # a per-batch split needs row slices of Left / Right / Acc tiles, which only the vector unit
            # can take (tile.slice); splitting belongs before the Mat → Left / Right moves instead
            raise UnsupportedError(f"FlattenTileNdTo2D: {name} of rank {call.type.rank} tiles is not split into "
                                   "per-batch 2-D matmuls yet", call.span,
                                   hint="load each batch's [M, K] / [K, N] window as a 2-D tile and call "
                                        "pl.matmul / pl.matmul_acc per batch index")
        if name == "tile.transpose":
            x = args[0]
            if call.args[0].type.rank > 2:
                return self.paged_transpose(s, x)
            if len(args) == 3:
                t = x.type
                scratch = create_op_call("tile.create", [list(t.shape)],
                                         {"dtype": t.dtype, "target_memory": t.memory_space or MemorySpace.Vec},
                                         call.span)
                tmp = Var("transpose_tmp", scratch.type, call.span)
                pre.append(AssignStmt(tmp, scratch, call.span))
                args.append(tmp)
        elif name == "tile.store" and call.args[0].type.rank > 2:
            orig = call.args[0].type
            back = create_op_call("tile.reshape", [args[0], list(orig.shape)], {}, call.span)
            nd = Var(f"{getattr(args[0], 'name_hint', 'tile')}_nd", back.type, call.span)
            pre.append(AssignStmt(nd, back, call.span))
            args[0] = nd
        elif name in _SHAPE_ARG and isinstance(call.type, TileType) and call.type.rank > 2:
            k = _SHAPE_ARG[name]
            args[k] = MakeTuple([ConstInt(d) for d in _flat_dims(call.type.shape, name, call.span)], call.span)
        if name == "tile.load" and call.type.rank > 2:
            nd = Var(f"{s.var.name_hint}_nd", call.type, call.span)
            flat = create_op_call("tile.reshape", [nd, _flat_dims(call.type.shape, name, call.span)], {}, call.span)
            return [AssignStmt(nd, call.replace(args=tuple(args)), s.span), AssignStmt(self.var(s.var), flat, s.span)]
        changed = any(a is not b for a, b in zip(args, call.args)) or len(args) != len(call.args)
        new_call = create_op_call(name, args, dict(call.kwargs), call.span, call.attrs or None) if changed else call
        var = self.var(s.var)
        if isinstance(new_call.type, TileType) and new_call.type.rank > 2:
            raise UnsupportedError(f"FlattenTileNdTo2D: {name} still produces a rank {new_call.type.rank} tile",
                                   call.span)
        if new_call.type is None or structural_equal(var.type, new_call.type):
            return pre + [AssignStmt(var, new_call, s.span)]
        var = Var(var.name_hint, new_call.type, var.span)       # re-deduced (e.g. a flattened valid region)
        self.vars[s.var] = var
        return pre + [AssignStmt(var, new_call, s.span)]


def _page_transpose_stmts(s: AssignStmt, x, orig) -> tuple:
    """[.., M, N] with its last two axes swapped, page by page: slice page b of the 2-D view, transpose it
    (with one shared scratch), assemble it at rows [b*N, (b+1)*N) of the [pages*N, M] result.
    Returns (statements, the final assemble call)."""
    call, span = s.value, s.value.span
    rank = orig.rank
    axes = sorted(int(as_int(a)) % rank for a in call.args[1:3])
    if axes != [rank - 2, rank - 1]:
        raise UnsupportedError(f"FlattenTileNdTo2D: tile.transpose of a rank {rank} tile over axes {axes} is not "
                               "supported; only the last two axes (page by page) are", span,
                               hint="move the axes to swap to the end with pl.reshape first")
    m, n = (as_int(d) for d in orig.shape[-2:])
    pages = _flat_dims(orig.shape, "tile.transpose", span)[0] // m
    space = x.type.memory_space or MemorySpace.Vec
    out: list = []

    def bind(name, value):
        v = Var(name, value.type, span)
        out.append(AssignStmt(v, value, span))
        return v

    acc = bind("transposed", create_op_call("tile.create", [[pages * n, m]],
                                            {"dtype": orig.dtype, "target_memory": space}, span))
    tmp = bind("transpose_tmp", create_op_call("tile.create", [[m, n]],
                                               {"dtype": orig.dtype, "target_memory": space}, span))
    step = None
    for b in range(pages):
        if step is not None:
            acc = bind("transposed", step)
        page = bind(f"page{b}", create_op_call("tile.slice", [x, [m, n], [b * m, 0]], {}, span))
        pt = bind(f"page{b}_t", create_op_call("tile.transpose", [page, 0, 1, tmp], {}, span))
        step = create_op_call("tile.assemble", [acc, pt, [b * n, 0]], {}, span)
    return out, step


def _needs_work(f: Function) -> bool:
    from pypto.ir.visitor import collect
    nd = collect(f.body, lambda n: isinstance(n, Var) and isinstance(n.type, TileType) and n.type.rank > 2)
    transposes = collect(f.body, lambda n: isinstance(n, Call) and not isinstance(n.op, GlobalVar)
                         and n.op.name == "tile.transpose" and len(n.args) == 3)
    return bool(nd or transposes)


def _run(func: Function, program: Program) -> Function:
    if func.func_type not in _KERNELS or not _needs_work(func):
        return func
    return _Flattener().function(func)


def flatten_tile_nd_to_2d():
    ssa, nss = IRProperty.SSAForm, IRProperty.NormalizedStmtStructure
    return function_pass("FlattenTileNdTo2D", _run,
                         PassProperties(required={ssa, IRProperty.IncoreTileOps, nss}, produced={ssa, nss}))

