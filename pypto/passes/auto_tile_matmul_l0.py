"""AutoTileMatmulL0: tile Mat-resident matmuls so their operands fit L0A / L0B and the result L0C.

Requires: SSAForm, IncoreTileOps / Produces: — / Invalidates: —
Reference: pass doc 15 (compiler-and-runtime.md §2, dump 16). Implemented: the (m, n, k) choice
from the platform's L0 capacities (16-aligned divisors, a traffic cost model), the K loop of
Mat → Left / Right `tile.extract`s accumulating in one Acc buffer (`matmul_acc` with
`init_cond = ko == 0`), and M / N output tiling when the [M, N] result overflows L0C and is
consumed by exactly one `tile.store` (each [m, n] sub-tile stored straight to its window).
Not implemented (the matmul is left as it is, so AllocateMemoryAddr reports the overflow):
non-divisor tiles / K peeling, M / N tiling of matmul_acc or of results used on-chip,
FIXPIPE cast folding, L0C double buffering, `pl.pipeline` stage marking.

    before:  l = pl.tile.move(a_mat, target_memory=Left); r = ...; c = pl.tile.matmul(l, r)
    after:   for ko, (acc,) in pl.range(0, K, k, init_values=(pl.tile.create([M, N], ..., Acc),)):
                 l = pl.tile.extract(a_mat, 0, ko, [M, k], target_memory=Left); r = ...
                 acc2 = pl.tile.matmul_acc(acc, l, r, ko == 0); pl.yield_(acc2)
"""

from __future__ import annotations

from typing import Optional

from pypto.ir.dtypes import BOOL, INDEX
from pypto.ir.enums import FunctionType, MemorySpace
from pypto.ir.expr import BinaryExpr, Call, ConstInt, GlobalVar, IterArg, Var, const
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, ScopeStmt, WhileStmt, YieldStmt
from pypto.ir.types import TileType, static_dims
from pypto.ir.visitor import IRVisitor, substitute
from pypto.passes.analysis import as_seq, body_list, used_vars
from pypto.passes.context import current_platform
from pypto.passes.manager import function_pass
from pypto.passes.properties import IRProperty, PassProperties

FRACTAL = 16                 # the cube's fractal edge: L0 tile dims are multiples of it
ITERATION_COST_BYTES = 4096  # per-iteration issue overhead of the cost model, in bytes of L1 → L0 traffic


def _candidates(extent: int) -> list:
    """Tile sizes for one dim: 16-aligned divisors of the extent (the extent itself always)."""
    out = {extent}
    if extent % FRACTAL == 0:
        out.update(d for d in range(FRACTAL, extent, FRACTAL) if extent % d == 0)
    return sorted(out)


def choose_l0_tile(M: int, N: int, K: int, bytes_a: int, bytes_b: int, bytes_c: int, platform) -> Optional[tuple]:
    """(m, n, k) whose Left [m, k], Right [k, n] and Acc [m, n] fit the platform's L0 buffers, with the
    least Mat → L0 traffic (A re-read per column block, B per row block) plus per-iteration overhead."""
    cap_a = platform.space_capacity(MemorySpace.Left)
    cap_b = platform.space_capacity(MemorySpace.Right)
    cap_c = platform.space_capacity(MemorySpace.Acc)
    best = None
    for m in _candidates(M):
        for n in _candidates(N):
            if m * n * bytes_c > cap_c:
                continue
            for k in _candidates(K):
                if m * k * bytes_a > cap_a or k * n * bytes_b > cap_b:
                    continue
                steps = (M // m) * (N // n) * (K // k)
                cost = (N // n) * M * K * bytes_a + (M // m) * K * N * bytes_b + steps * ITERATION_COST_BYTES
                key = (cost, -(m * n * k))
                if best is None or key < best[0]:
                    best = (key, (m, n, k))
    return best[1] if best else None


def _op_name(value) -> Optional[str]:
    if isinstance(value, Call) and not isinstance(value.op, GlobalVar):
        return value.op.name
    return None


def _readers(node, var: Var) -> int:
    """How many leaf statements (assignments, yields, returns, evals) under `node` read `var`."""
    n = 0
    for x in _leaf_stmts(node):
        if var in used_vars(x):
            n += 1
    return n


def _leaf_stmts(node) -> list:
    out: list = []
    for s in body_list(node):
        if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
            out.append(s.replace(body=as_seq([], s.body.span)))     # the header's reads (bounds, inits)
            out += _leaf_stmts(s.body)
        elif isinstance(s, IfStmt):
            out.append(s.replace(then_body=as_seq([], None), else_body=None))
            out += _leaf_stmts(s.then_body)
            if s.else_body is not None:
                out += _leaf_stmts(s.else_body)
        else:
            out.append(s)
    return out


class _Tiler:
    """Rewrites the matmuls of one kernel; `defs` maps each Var to its defining value."""

    def __init__(self, func: Function):
        self.func = func
        self.platform = current_platform()
        self.defs: dict = {}
        for s in _all_assigns(func.body):
            self.defs[s.var] = s.value
        self.replace: dict = {}         # store result Var → the tiled loop's result
        self.changed = False

    # ------------------------------------------------------------------ operands
    def mat_source(self, operand, space: MemorySpace):
        """The static 2-D Mat tile feeding a Left / Right operand (through a tile.move), or None."""
        if not isinstance(operand, Var) or not isinstance(operand.type, TileType):
            return None
        src = operand
        value = self.defs.get(operand)
        if operand.type.memory_space is space and _op_name(value) == "tile.move" and isinstance(value.args[0], Var):
            src = value.args[0]
        t = src.type
        if not isinstance(t, TileType) or t.memory_space is not MemorySpace.Mat or t.rank != 2:
            return None
        if static_dims(t.shape) is None or static_dims(t.valid_shape) != static_dims(t.shape):
            return None
        return src

    # ------------------------------------------------------------------ statements
    def stmts(self, stmts: list) -> list:
        out: list = []
        skip: set = set()
        for i, s in enumerate(stmts):
            if id(s) in skip:
                continue
            if isinstance(s, AssignStmt) and _op_name(s.value) in ("tile.matmul", "tile.matmul_acc"):
                tiled = self.matmul(s, stmts[i + 1:])
                if tiled is not None:
                    new, consumed = tiled
                    out += new
                    skip |= consumed
                    self.changed = True
                    continue
            out.append(self.nested(s))
        return out

    def nested(self, s):
        if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
            return s.replace(body=as_seq(self.stmts(body_list(s.body)), s.body.span))
        if isinstance(s, IfStmt):
            return s.replace(then_body=as_seq(self.stmts(body_list(s.then_body)), s.then_body.span),
                             else_body=as_seq(self.stmts(body_list(s.else_body)), s.else_body.span)
                             if s.else_body is not None else None)
        return s

    def matmul(self, s: AssignStmt, after: list):
        call = s.value
        is_acc = call.op.name == "tile.matmul_acc"
        if is_acc and len(call.args) > 3:
            return None                          # a user init_cond: leave the op as written
        lhs, rhs = call.args[1:3] if is_acc else call.args[:2]
        a = self.mat_source(lhs, MemorySpace.Left)
        b = self.mat_source(rhs, MemorySpace.Right)
        if a is None or b is None:
            return None
        (M, K), (_, N) = static_dims(a.type.shape), static_dims(b.type.shape)
        result = s.var.type
        if static_dims(result.shape) != (M, N):
            return None
        choice = choose_l0_tile(M, N, K, a.type.dtype.get_byte(), b.type.dtype.get_byte(), result.dtype.get_byte(),
                                self.platform)
        if choice is None or choice == (M, N, K):
            return None
        m, n, k = choice
        if (m, n) == (M, N):
            init = call.args[0] if is_acc else None
            stmts, final = self.k_loop(a, b, 0, 0, m, n, K, k, result, init, s.span)
            self.replace[s.var] = final
            return stmts, set()
        if is_acc:
            return None
        store = self.single_store(s.var, after)
        if store is None:
            return None
        return self.output_grid(a, b, (M, N, K), (m, n, k), result, store, s.span), {id(store)}

    def single_store(self, var: Var, after: list) -> Optional[AssignStmt]:
        """The one `tile.store` of `var` among the statements after it, when nothing between them
        touches the output tensor (the store then may move up to the matmul)."""
        if _readers(self.func.body, var) != 1:
            return None
        for j, x in enumerate(after):
            if isinstance(x, AssignStmt) and _op_name(x.value) == "tile.store" and x.value.args[0] is var:
                out = x.value.args[2]
                if not isinstance(out, Var) or any(out in used_vars(y) for y in after[:j]):
                    return None
                return x
        return None

    # ------------------------------------------------------------------ emission
    def k_loop(self, a: Var, b: Var, mi, ni, m: int, n: int, K: int, k: int, result: TileType, init, span):
        """The K loop producing one [m, n] Acc tile: (statements, the loop's result Var)."""
        out: list = []
        acc_type = TileType([m, n], result.dtype, memory_space=MemorySpace.Acc)
        if init is None:
            create = create_op_call("tile.create", [[m, n]], {"dtype": result.dtype,
                                                              "target_memory": MemorySpace.Acc}, span)
            init = Var("acc_init", create.type, span)
            out.append(AssignStmt(init, create, span))
        ko = Var("ko", _index_type(), span)
        carry = IterArg("acc", init.type, init, span)
        left = create_op_call("tile.extract", [a, mi, ko, [m, k]], {"target_memory": MemorySpace.Left}, span)
        right = create_op_call("tile.extract", [b, ko, ni, [k, n]], {"target_memory": MemorySpace.Right}, span)
        lv, rv = Var("a_l0", left.type, span), Var("b_l0", right.type, span)
        first = BinaryExpr("eq", ko, ConstInt(0, INDEX, span), BOOL, span)
        product = create_op_call("tile.matmul_acc", [carry, lv, rv, first], {}, span)
        pv = Var("acc_next", product.type, span)
        body = as_seq([AssignStmt(lv, left, span), AssignStmt(rv, right, span), AssignStmt(pv, product, span),
                       YieldStmt([pv], span)], span)
        done = Var("acc_done", acc_type if init.type == acc_type else init.type, span)
        out.append(ForStmt(ko, const(0, span=span), const(K, span=span), const(k, span=span), [carry], body,
                           [done], span=span))
        return out, done

    def output_grid(self, a, b, dims, tile, result: TileType, store: AssignStmt, span) -> list:
        """Loops over the [m, n] output blocks (a loop only where there are several), each block a K
        loop whose Acc tile is stored to its window; the output tensor is carried through the stores."""
        (M, N, K), (m, n, k) = dims, tile
        base_r, base_c, out = store.value.args[1].elements[0], store.value.args[1].elements[1], store.value.args[2]
        loops = [(name, extent, step) for name, extent, step in (("mi", M, m), ("ni", N, n)) if extent > step]
        index = {name: Var(name, _index_type(), span) for name, _e, _s in loops}
        mi, ni = index.get("mi", const(0, span=span)), index.get("ni", const(0, span=span))
        carries = [IterArg(f"{out.name_hint}_{name}", out.type, out, span) for name, _e, _s in loops]
        for inner, outer in zip(carries[1:], carries):
            carries[carries.index(inner)] = inner.replace(init_value=outer)
        target = carries[-1]
        block, acc = self.k_loop(a, b, mi, ni, m, n, K, k, result, None, span)
        offsets = [_plus(base_r, mi, span), _plus(base_c, ni, span)]
        stored = create_op_call("tile.store", [acc, offsets, target], {}, span)
        sv = Var(f"{out.name_hint}_block", stored.type, span)
        body = block + [AssignStmt(sv, stored, span)]
        value = sv
        for depth in range(len(loops) - 1, -1, -1):
            name, extent, step = loops[depth]
            rv = store.var if depth == 0 else Var(f"{out.name_hint}_{name}_done", out.type, span)
            loop = ForStmt(index[name], const(0, span=span), const(extent, span=span), const(step, span=span),
                           [carries[depth]], as_seq(body + [YieldStmt([value], span)], span), [rv], span=span)
            body, value = [loop], rv
        return body


def _index_type():
    from pypto.ir.types import ScalarType
    return ScalarType(INDEX)


def _plus(base, offset, span):
    if isinstance(base, ConstInt) and base.value == 0:
        return offset
    return BinaryExpr("add", base, offset, INDEX, span)


def _all_assigns(node) -> list:
    found: list = []

    class _Collect(IRVisitor):
        def visit_assign_stmt(self, s):
            found.append(s)
            self.visit_children(s)

    _Collect().visit(node)
    return found


def _drop_dead_moves(func: Function) -> Function:
    """Remove the Mat → Left / Right moves the tiling left without a reader."""
    while True:
        read = set(used_vars(func.body))
        dead = {s.var for s in _all_assigns(func.body) if _op_name(s.value) == "tile.move"
                and s.var.type.memory_space in (MemorySpace.Left, MemorySpace.Right) and s.var not in read}
        if not dead:
            return func

        def prune(stmts):
            kept = []
            for s in stmts:
                if isinstance(s, AssignStmt) and s.var in dead:
                    continue
                if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
                    s = s.replace(body=as_seq(prune(body_list(s.body)), s.body.span))
                elif isinstance(s, IfStmt):
                    s = s.replace(then_body=as_seq(prune(body_list(s.then_body)), s.then_body.span),
                                  else_body=as_seq(prune(body_list(s.else_body)), s.else_body.span)
                                  if s.else_body is not None else None)
                kept.append(s)
            return kept

        func = func.replace(body=as_seq(prune(body_list(func.body)), func.body.span))


def _run(func: Function, program: Program) -> Function:
    if func.func_type in (FunctionType.Orchestration, FunctionType.Opaque, FunctionType.Inline):
        return func
    tiler = _Tiler(func)
    body = as_seq(tiler.stmts(body_list(func.body)), func.body.span)
    if not tiler.changed:
        return func
    if tiler.replace:
        body = substitute(body, tiler.replace)
    return _drop_dead_moves(func.replace(body=body))


def auto_tile_matmul_l0():
    return function_pass("AutoTileMatmulL0", _run,
                         PassProperties(required={IRProperty.SSAForm, IRProperty.IncoreTileOps}))
