"""M / N output tiling of a split-K accumulation chain (part of AutoTileMatmulL0, pass doc 15: "the
canonical split-K form is M/N-tiled outside its K loop").

The chain is what a tensor-level `acc = pl.matmul(a0, b0); for k: acc = pl.matmul_acc(acc, ak, bk)`
lowers to: a matmul of two Mat loads, then a loop whose body loads the next [M, kb] / [kb, N] panels
into Mat, moves them to Left / Right and accumulates, and one store of the result. When the [M, N]
accumulator overflows L0C, slicing it cannot help (the [M, N] Acc would still exist), so every
[m, n] output block re-runs the whole chain on narrowed loads (rows of A, columns of B) and is
stored to its window; the narrowed matmuls are K-tiled later like any other.

    before:  acc = matmul(move(load(a, [0, 0], [M, kb])), move(load(b, [0, 0], [kb, N])))
             for k, (acc1,) in pl.range(kb, K, kb, init_values=(acc,)): ... matmul_acc(acc1, ...)
             c1 = pl.tile.store(acc3, [0, 0], c)
    after:   for mi, (c_mi,) in pl.range(0, M, m, init_values=(c,)):      # (and ni)
                 acc = matmul(move(load(a, [mi, 0], [m, kb])), ...); for k ...: ...
                 c_block = pl.tile.store(acc3, [mi, ni], c_mi)
"""

from __future__ import annotations

from pypto.ir.dtypes import INDEX
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, ConstInt, GlobalVar, IterArg, Var
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, ForStmt, YieldStmt
from pypto.ir.visitor import substitute
from pypto.passes.analysis import add_index, as_seq, body_list, used_vars


def _op(value):
    return value.op.name if isinstance(value, Call) and not isinstance(value.op, GlobalVar) else None


def _panel_load(load: Call):
    """(tensor, row, col, rows, cols) of a plain 2-D GM → Mat load (fully valid), else None."""
    if _op(load) != "tile.load" or load.kwargs.get("target_memory") is not MemorySpace.Mat or len(load.args) != 4:
        return None
    offsets, shapes = getattr(load.args[1], "elements", None), getattr(load.args[2], "elements", None)
    valid = getattr(load.args[3], "elements", None)
    if offsets is None or shapes is None or len(offsets) != 2 or valid != shapes:
        return None
    return (load.args[0], *offsets, *shapes)


def _loop_body(loop: ForStmt, ia: IterArg):
    """The (load_a, load_b) Calls of a split-K loop body that is exactly: two Mat loads, [their moves
    to Left / Right,] `matmul_acc(ia, left, right)` and the yield of its result; else None."""
    stmts = body_list(loop.body)
    if len(stmts) not in (4, 6) or not isinstance(stmts[-1], YieldStmt) or not all(isinstance(x, AssignStmt)
                                                                         for x in stmts[:-1]):
        return None
    local = {x.var: x.value for x in stmts[:-1]}
    acc = next((x for x in stmts[:-1] if _op(x.value) == "tile.matmul_acc"), None)
    values = stmts[-1].values
    if acc is None or len(acc.value.args) != 3 or acc.value.args[0] is not ia or len(values) != 1 \
            or values[0] is not acc.var:
        return None
    loads = []
    for operand, space in zip(acc.value.args[1:], (MemorySpace.Left, MemorySpace.Right)):
        move = local.get(operand)
        if _op(move) == "tile.load":          # a Mat operand read directly (ConvertTensorToTileOps' form)
            loads.append(move)
            continue
        if _op(move) != "tile.move" or move.kwargs.get("target_memory") is not space:
            return None
        loads.append(local.get(move.args[0]))
    if any(_panel_load(ld) is None for ld in loads):
        return None
    return loads


def split_k_chain(tiler, s: AssignStmt, after: list, a: Var, b: Var):
    """(the consumer store, block builder, consumed statement ids) when `s` (a `tile.matmul` of Mat loads
    `a` / `b`) starts a split-K chain that ends in one store; else None."""
    wa, wb = tiler.gm_window(a), tiler.gm_window(b)
    if wa is None or wb is None or wa[3] or wb[3] or not after or not isinstance(after[0], ForStmt):
        return None
    loop = after[0]
    if len(loop.iter_args) != 1 or loop.iter_args[0].init_value is not s.var or len(loop.return_vars) != 1:
        return None
    if sum(1 for x in after if s.var in used_vars(x)) != 1:
        return None
    loads = _loop_body(loop, loop.iter_args[0])
    store = tiler.single_store(loop.return_vars[0], after[1:])
    if loads is None or store is None:
        return None
    first = (tiler.defs[a], tiler.defs[b])

    def narrowed(load: Call, rows_at, cols_at, rows, cols, mapping, span) -> Call:
        t, r, c, full_rows, full_cols = _panel_load(load)
        r, c = substitute(r, mapping), substitute(c, mapping)
        return create_op_call("tile.load", [t, [add_index(r, rows_at), add_index(c, cols_at)], [rows or full_rows,
                                            cols or full_cols], [rows or full_rows, cols or full_cols]],
                              {"target_memory": MemorySpace.Mat}, span)

    def panels(load_a, load_b, mi, ni, m, n, mapping, span, suffix):
        zero = ConstInt(0, INDEX)
        la = narrowed(load_a, mi, zero, m, None, mapping, span)
        lb = narrowed(load_b, zero, ni, None, n, mapping, span)
        va, vb = Var(f"a_panel{suffix}", la.type, span), Var(f"b_panel{suffix}", lb.type, span)
        ml = create_op_call("tile.move", [va], {"target_memory": MemorySpace.Left}, span)
        mr = create_op_call("tile.move", [vb], {"target_memory": MemorySpace.Right}, span)
        left, right = Var(f"a_left{suffix}", ml.type, span), Var(f"b_right{suffix}", mr.type, span)
        return [AssignStmt(va, la, span), AssignStmt(vb, lb, span), AssignStmt(left, ml, span),
                AssignStmt(right, mr, span)], left, right

    def block(mi, ni, m: int, n: int, span):
        out, left, right = panels(*first, mi, ni, m, n, {}, span, "0")
        product = create_op_call("tile.matmul", [left, right], {}, span)
        acc0 = Var(f"{s.var.name_hint}_block", product.type, span)
        out.append(AssignStmt(acc0, product, span))
        k = Var(loop.loop_var.name_hint, loop.loop_var.type, span)
        carry = IterArg(loop.iter_args[0].name_hint, acc0.type, acc0, span)
        body, left, right = panels(*loads, mi, ni, m, n, {loop.loop_var: k}, span, "")
        step = create_op_call("tile.matmul_acc", [carry, left, right], {}, span)
        nxt = Var(f"{s.var.name_hint}_next", step.type, span)
        done = Var(loop.return_vars[0].name_hint, acc0.type, span)
        out.append(ForStmt(k, loop.start, loop.stop, loop.step, [carry],
                           as_seq(body + [AssignStmt(nxt, step, span), YieldStmt([nxt], span)], span), [done],
                           span=span))
        return out, done

    return store, block, {id(loop), id(store)}
