"""AutoTileMatmulL0: tile Mat-resident matmuls so their operands fit L0A / L0B and the result L0C.

Requires: SSAForm, IncoreTileOps / Produces: — / Invalidates: —
Reference: pass doc 15 (compiler-and-runtime.md §2, dump 16). Implemented: the (m, n, k) choice
from the platform's L0 capacities (multiples of 16, a traffic cost model), the K loop of
Mat → Left / Right `tile.extract`s accumulating in one Acc buffer (`matmul_acc` with
`init_cond = ko == 0`); M / N output tiling when the [M, N] result overflows L0C and is either
consumed by exactly one `tile.store` (each [m, n] block stored straight to its window) or read back
on-chip through one Acc → Mat writeback (each block assembled into one [M, N] Mat scratch that
replaces the writeback, e.g. for a chained matmul), and of a split-K chain `matmul; for k: matmul_acc`
ending in one store (split_k_output_tiling.py: each block re-runs the chain on narrowed panels);
FIXPIPE cast folding (fixpipe_cast_fold.py: a
rint FP32 → FP16 / BF16 `tile.cast` of an Acc result feeding only that writeback becomes part of
it); and L1 streaming: when the Mat operands overflow Mat (L1) and each is a plain 2-D `tile.load`
of a GM window (a slice / window at any offset) or the `tile.transpose_view` of one (`a_trans` /
`b_trans`), every K step loads its [m, k] / [k, n] blocks from GM into Mat itself (a transposed
operand loads the [k, m] / [n, k] block and transposes it), so e.g. a 512 x 512 x 512 FP32 matmul
compiles. Tiles need not divide the problem: partial M / N blocks and the last K block are peeled.
Not implemented (the matmul is left as it is, so AllocateMemoryAddr reports the overflow):
M / N tiling of any other `matmul_acc` (a caller-owned [M, N] accumulator) or of results read on-chip
other than through a Mat writeback, L0C double buffering, `pl.pipeline` stage marking. A Vec left
operand is staged in Mat (tile.move) where the platform has a Vec → Mat path (a5).

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
from pypto.ir.visitor import IRVisitor
from pypto.passes.analysis import as_seq, body_list, used_vars
from pypto.passes.context import current_platform
from pypto.passes.fixpipe_cast_fold import fold_fixpipe_casts
from pypto.passes.loop_carry_buffers import substitute_with_inits
from pypto.passes.split_k_output_tiling import split_k_chain
from pypto.passes.manager import function_pass
from pypto.passes.properties import IRProperty, PassProperties

FRACTAL = 16                 # the cube's fractal edge: L0 tile dims are multiples of it
ITERATION_COST_BYTES = 4096  # per-iteration issue overhead of the cost model, in bytes of L1 → L0 traffic


def _candidates(extent: int) -> list:
    """Tile sizes for one dim: multiples of 16 below the extent (a partial last block is peeled) and
    the extent itself."""
    return sorted({extent} | set(range(FRACTAL, extent, FRACTAL)))


def _blocks(extent: int, size: int) -> int:
    return -(-extent // size)


def choose_l0_tile(M: int, N: int, K: int, bytes_a: int, bytes_b: int, bytes_c: int, platform) -> Optional[tuple]:
    """(m, n, k) whose Left [m, k], Right [k, n] and Acc [m, n] fit the platform's L0 buffers, with the
    least Mat → L0 traffic (A re-read per column block, B per row block) plus per-iteration overhead.
    A k that does not divide K needs a 16-aligned K (the peeled tail block is then 16-aligned too)."""
    cap_a = platform.space_capacity(MemorySpace.Left)
    cap_b = platform.space_capacity(MemorySpace.Right)
    cap_c = platform.space_capacity(MemorySpace.Acc)
    best = None
    for m in _candidates(M):
        for n in _candidates(N):
            if m * n * bytes_c > cap_c:
                continue
            for k in _candidates(K):
                if m * k * bytes_a > cap_a or k * n * bytes_b > cap_b or (K % k and K % FRACTAL):
                    continue
                rows, cols = _blocks(M, m), _blocks(N, n)
                steps = rows * cols * _blocks(K, k)
                cost = cols * M * K * bytes_a + rows * K * N * bytes_b + steps * ITERATION_COST_BYTES
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
        self.stream = None              # (window of a, window of b) while emitting an L1-streamed matmul
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

    def gm_window(self, mat: Var):
        """(tensor, row offset, col offset, transposed) when `mat` is a plain tile.load of a 2-D GM window
        into Mat, or the tile.transpose_view of one (a `*_trans=True` operand: transposed=True)."""
        value = self.defs.get(mat)
        transposed = _op_name(value) == "tile.transpose_view" and isinstance(value.args[0], Var)
        if transposed:
            value = self.defs.get(value.args[0])
        if _op_name(value) != "tile.load" or value.kwargs.get("target_memory") is not MemorySpace.Mat:
            return None
        offsets = getattr(value.args[1], "elements", None)
        if offsets is None or len(offsets) != 2:
            return None
        return value.args[0], offsets[0], offsets[1], transposed

    def l1_stream(self, a: Var, b: Var):
        """Both operands' GM windows when the Mat tiles behind them (a transposed operand counts its
        loaded source too: the transpose is its own buffer) overflow Mat (L1), else None."""
        wa, wb = self.gm_window(a), self.gm_window(b)
        need = sum(v.type.nbytes() * (2 if w is not None and w[3] else 1) for v, w in ((a, wa), (b, wb)))
        if need <= self.platform.space_capacity(MemorySpace.Mat):
            return None
        return (wa, wb) if wa is not None and wb is not None else None

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
        a, staged = self.mat_source(lhs, MemorySpace.Left), []
        if a is None:
            a, staged = self.vec_left(lhs)
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
        self.stream = self.l1_stream(a, b)
        if (m, n) == (M, N):
            init = call.args[0] if is_acc else None
            stmts, final = self.k_loop(a, b, 0, 0, m, n, K, k, result, init, s.span)
            self.replace[s.var] = final
            return staged + stmts, set()
        if is_acc:
            return None                          # M / N blocks of a caller-owned accumulator: not done
        store = self.single_store(s.var, after)
        if store is not None:
            grid = self.output_grid(a, b, (M, N, K), (m, n, k), result, _direct_store(store), s.span)
            return staged + grid, {id(store)}
        found = self.single_mat_writeback(s.var, after, M * N * result.dtype.get_byte())
        if found is None:
            chain = split_k_chain(self, s, after, a, b)
            if chain is None:
                return None
            store, block, consumed = chain
            grid = self.output_grid(a, b, (M, N, K), (m, n, k), result, _direct_store(store), s.span, block)
            return staged + grid, consumed
        placement, consumed = found
        return staged + self.output_grid(a, b, (M, N, K), (m, n, k), result, placement, s.span), consumed

    def vec_left(self, operand):
        """A Vec left operand (e.g. softmax probabilities feeding P @ V) on a platform with a Vec → Mat
        path (a5): (its Mat copy, [the tile.move making it]) so K steps extract Left slabs from Mat;
        (None, []) otherwise."""
        if not isinstance(operand, Var) or (MemorySpace.Vec, MemorySpace.Mat) not in self.platform.data_paths:
            return None, []
        src, value = operand, self.defs.get(operand)
        if operand.type.memory_space is MemorySpace.Left and _op_name(value) == "tile.move":
            src = value.args[0]
        t = src.type if isinstance(src, Var) else None
        if (not isinstance(t, TileType) or t.memory_space is not MemorySpace.Vec or t.rank != 2
                or static_dims(t.shape) is None or static_dims(t.valid_shape) != static_dims(t.shape)):
            return None, []
        move = create_op_call("tile.move", [src], {"target_memory": MemorySpace.Mat}, operand.span)
        mat = Var(f"{src.name_hint}_mat", move.type, operand.span)
        return mat, [AssignStmt(mat, move, operand.span)]

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

    def single_mat_writeback(self, var: Var, after: list, nbytes: int):
        """(placement, consumed statement ids) when the one reader of `var` in the same statement list
        writes it back to Mat — `tile.move(var, target_memory=Mat)`, or the `tile.assemble(scratch, var,
        [0, 0])` of a folded FIXPIPE cast — i.e. the result is used on-chip (e.g. as the next matmul's
        operand), and an [M, N] Mat scratch fits L1. The blocks then go into that scratch."""
        if _readers(self.func.body, var) != 1 or nbytes > self.platform.space_capacity(MemorySpace.Mat):
            return None
        for x in after:
            if not (isinstance(x, AssignStmt) and isinstance(x.value, Call) and any(a is var for a in x.value.args)):
                continue
            if _op_name(x.value) == "tile.move" and x.value.kwargs.get("target_memory") is MemorySpace.Mat:
                placement = _mat_scratch(x, tuple(static_dims(var.type.shape)), x.span)
                self.replace[x.var] = placement.final
                return placement, {id(x)}
            scratch = x.value.args[0]
            create = next((y for y in after if isinstance(y, AssignStmt) and y.var is scratch), None)
            if (_op_name(x.value) == "tile.assemble" and x.value.args[1] is var and create is not None
                    and _op_name(create.value) == "tile.create" and _readers(self.func.body, scratch) == 1
                    and static_dims(scratch.type.shape) == static_dims(var.type.shape)):
                return _Placement(x.var.name_hint, x.var.type, scratch, x.var, _assemble_block,
                                  [create]), {id(x), id(create)}
            return None
        return None

    # ------------------------------------------------------------------ emission
    def k_loop(self, a: Var, b: Var, mi, ni, m: int, n: int, K: int, k: int, result: TileType, init, span):
        """The K loop producing one [m, n] Acc tile, plus a peeled tail block when k does not divide K:
        (statements, the Var holding the finished tile)."""
        out: list = []
        acc_type = TileType([m, n], result.dtype, memory_space=MemorySpace.Acc)
        if init is None:
            create = create_op_call("tile.create", [[m, n]], {"dtype": result.dtype,
                                                              "target_memory": MemorySpace.Acc}, span)
            init = Var("acc_init", create.type, span)
            out.append(AssignStmt(init, create, span))
        full = K // k * k
        ko = Var("ko", _index_type(), span)
        carry = IterArg("acc", init.type, init, span)
        # a fresh accumulator (created just above) starts at ko == 0; a caller's one keeps accumulating
        fresh = BinaryExpr("eq", ko, ConstInt(0, INDEX, span), BOOL, span) if out else None
        body, pv = self.k_step(a, b, mi, ni, ko, m, n, k, carry, fresh, span)
        done = Var("acc_done", acc_type if init.type == acc_type else init.type, span)
        out.append(ForStmt(ko, const(0, span=span), const(full, span=span), const(k, span=span), [carry],
                           as_seq(body + [YieldStmt([pv], span)], span), [done], span=span))
        if full < K:
            tail, done = self.k_step(a, b, mi, ni, const(full, span=span), m, n, K - full, done, None, span)
            out += tail
        return out, done

    def k_step(self, a, b, mi, ni, ko, m: int, n: int, k: int, acc, init_cond, span) -> tuple:
        """Extract the [m, k] / [k, n] slabs at ko and accumulate their product into acc (L1-streamed:
        first load those slabs from GM into Mat, then extract them whole)."""
        loads: list = []
        if self.stream is not None:
            wa, wb = self.stream
            a = _stream_block(wa, mi, ko, m, k, "a_l1", loads, span)
            b = _stream_block(wb, ko, ni, k, n, "b_l1", loads, span)
            zero = const(0, span=span)
            mi, ni, ko_a, ko_b = zero, zero, zero, zero
        else:
            ko_a = ko_b = ko
        left = create_op_call("tile.extract", [a, mi, ko_a, [m, k]], {"target_memory": MemorySpace.Left}, span)
        right = create_op_call("tile.extract", [b, ko_b, ni, [k, n]], {"target_memory": MemorySpace.Right}, span)
        lv, rv = Var("a_l0", left.type, span), Var("b_l0", right.type, span)
        args = [acc, lv, rv] + ([init_cond] if init_cond is not None else [])
        product = create_op_call("tile.matmul_acc", args, {}, span)
        pv = Var("acc_next", product.type, span)
        return loads + [AssignStmt(lv, left, span), AssignStmt(rv, right, span), AssignStmt(pv, product, span)], pv

    def output_grid(self, a, b, dims, tile, result: TileType, placement: "_Placement", span, block=None) -> list:
        """The [M, N] output in [m, n] blocks: per region (full blocks, then the peeled partial row /
        column blocks) loops over its blocks (a loop only where there are several), each block a K loop
        whose Acc tile is placed (stored to its GM window, or assembled into a Mat scratch); the placement
        target is carried through every block."""
        (M, N, K), (m, n, k) = dims, tile
        regions = [(r, c) for r in _segments(M, m) for c in _segments(N, n)]
        stmts, current = list(placement.prelude), placement.start
        for i, (rows, cols) in enumerate(regions):
            last = i == len(regions) - 1
            final = placement.final if last else Var(f"{placement.name}_part", placement.carry_type, span)
            stmts += self.region(a, b, rows, cols, K, k, result, placement, current, final, span, block)
            current = final
        return stmts

    def region(self, a, b, rows, cols, K: int, k: int, result: TileType, placement: "_Placement", current, final,
               span, block=None) -> list:
        """One region's blocks; `block(mi, ni, m, n, span) -> (statements, Acc Var)` computes one block
        (default: the K loop of extracts)."""
        name, carry_type = placement.name, placement.carry_type
        loops = [(axis, start, stop, step) for axis, (start, stop, step) in (("mi", rows), ("ni", cols))
                 if stop - start > step]
        index = {axis: Var(axis, _index_type(), span) for axis, *_rest in loops}
        mi = index.get("mi", const(rows[0], span=span))
        ni = index.get("ni", const(cols[0], span=span))
        carries: list = []
        for axis, *_rest in loops:
            carries.append(IterArg(f"{name}_{axis}", carry_type, carries[-1] if carries else current, span))
        if block is None:
            stmts, acc = self.k_loop(a, b, mi, ni, rows[2], cols[2], K, k, result, None, span)
        else:
            stmts, acc = block(mi, ni, rows[2], cols[2], span)
        block = stmts
        placed = placement.place(acc, mi, ni, carries[-1] if carries else current, span)
        if not loops:
            return block + [AssignStmt(final, placed, span)]
        sv = Var(f"{name}_block", placed.type, span)
        body, value = block + [AssignStmt(sv, placed, span)], sv
        for depth in range(len(loops) - 1, -1, -1):
            axis, start, stop, step = loops[depth]
            rv = final if depth == 0 else Var(f"{name}_{axis}_done", carry_type, span)
            loop = ForStmt(index[axis], const(start, span=span), const(stop, span=span), const(step, span=span),
                           [carries[depth]], as_seq(body + [YieldStmt([value], span)], span), [rv], span=span)
            body, value = [loop], rv
        return body


class _Placement:
    """Where the [m, n] Acc blocks of an M / N-tiled matmul go: `place(acc, mi, ni, current, span)` builds
    the call that puts one block into the carried target (`start` before the first block, `final`
    binding the last one; `prelude` statements create the target)."""

    def __init__(self, name: str, carry_type, start, final: Var, place, prelude=()):
        self.name, self.carry_type, self.start, self.final = name, carry_type, start, final
        self.place, self.prelude = place, list(prelude)


def _direct_store(store: AssignStmt) -> _Placement:
    """Each block stored straight to its window of the single consumer store's GM tensor."""
    base_r, base_c = store.value.args[1].elements
    out = store.value.args[2]

    def place(acc, mi, ni, current, span):
        return create_op_call("tile.store", [acc, [_plus(base_r, mi, span), _plus(base_c, ni, span)], current], {},
                              span)

    return _Placement(out.name_hint, out.type, out, store.var, place)


def _mat_scratch(move: AssignStmt, dims: tuple, span) -> _Placement:
    """Each block assembled (Acc → Mat, the FIXPIPE writeback) into one [M, N] Mat scratch that stands for
    the single consumer `tile.move(result, target_memory=Mat)`, so the [M, N] result never sits in L0C."""
    create = create_op_call("tile.create", [list(dims)], {"dtype": move.var.type.dtype,
                                                          "target_memory": MemorySpace.Mat}, span)
    create = create.replace(type=move.var.type)          # readers keep seeing the move's tile type
    scratch = Var(f"{move.var.name_hint}_scratch", create.type, span)

    final = Var(move.var.name_hint, create.type, span)
    return _Placement(move.var.name_hint, create.type, scratch, final, _assemble_block,
                      [AssignStmt(scratch, create, span)])


def _assemble_block(acc, mi, ni, current, span):
    return create_op_call("tile.assemble", [current, acc, [mi, ni]], {}, span).replace(type=current.type)


def _stream_block(window, row, col, rows: int, cols: int, name: str, out: list, span) -> Var:
    """Load the [rows, cols] block at (row, col) of an operand's GM window into Mat (appending the
    statements to `out`): a transposed operand loads the [cols, rows] block at (col, row) of its
    tensor and takes its tile.transpose_view."""
    tensor, r0, c0, transposed = window
    if transposed:
        row, col, rows, cols = col, row, cols, rows
    load = create_op_call("tile.load", [tensor, [_plus(r0, row, span), _plus(c0, col, span)], [rows, cols],
                                        [rows, cols]], {"target_memory": MemorySpace.Mat}, span)
    block = Var(name + ("_src" if transposed else ""), load.type, span)
    out.append(AssignStmt(block, load, span))
    if transposed:
        view = create_op_call("tile.transpose_view", [block], {}, span)
        block = Var(name, view.type, span)
        out.append(AssignStmt(block, view, span))
    return block


def _segments(extent: int, size: int) -> list:
    """(start, stop, block size) runs covering [0, extent): the full blocks, then the partial one."""
    full = extent // size * size
    runs = [(0, full, size)] if full else []
    if full < extent:
        runs.append((full, extent, extent - full))
    return runs


def _index_type():
    from pypto.ir.types import ScalarType
    return ScalarType(INDEX)


def _plus(base, offset, span):
    if isinstance(base, ConstInt) and base.value == 0:
        return offset
    if isinstance(base, ConstInt) and isinstance(offset, ConstInt):     # the parser folds `256 + 352`
        return const(base.value + offset.value, span=span)
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
    """Remove the Mat → Left / Right moves the tiling left without a reader (and the whole-operand
    Mat loads an L1-streamed matmul replaced)."""
    while True:
        read = set(used_vars(func.body))
        dead = {s.var for s in _all_assigns(func.body) if s.var not in read and (
                (_op_name(s.value) == "tile.move" and s.var.type.memory_space in (MemorySpace.Left, MemorySpace.Right))
                or (_op_name(s.value) in ("tile.load", "tile.transpose_view")
                    and s.var.type.memory_space is MemorySpace.Mat))}
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
    func = fold_fixpipe_casts(func)
    for _round in range(3):        # a split-K chain's narrowed blocks are K-tiled in the next round
        tiler = _Tiler(func)
        body = as_seq(tiler.stmts(body_list(func.body)), func.body.span)
        if not tiler.changed:
            break
        if tiler.replace:
            body = substitute_with_inits(body, tiler.replace)   # a result may init a split-K loop
        func = _drop_dead_moves(func.replace(body=body))
    return func


def auto_tile_matmul_l0():
    return function_pass("AutoTileMatmulL0", _run,
                         PassProperties(required={IRProperty.SSAForm, IRProperty.IncoreTileOps}))
