"""Load, load, elementwise op, store of one block as one numpy call, when no one can see the tiles.

The commonest kernel body moves two GM windows into the arena, combines them and stores the result:

    ta = pl.load(a, [i * 8, 0], [8, n]);  tb = pl.load(b, [i * 8, 0], [8, n])
    pl.store(pl.add(ta, tb), [i * 8, 0], c)

Run op by op, each block costs three arena copies besides the GM traffic (about as much again as
numpy's own add). When the three tiles are each used once (by the next op of the group) and their
arena bytes belong to no other tile of the kernel (and the two loaded tiles share none), nothing
can ever read those bytes, and `ufunc(a[w], b[w], out=c[w])` leaves GM, the race records and the
Out-coverage record exactly as the four ops would (the ops are exact IEEE / wrapping elementwise
ufuncs; numpy buffers overlapping operands, so `c` may alias `a` or `b` as with loads first). The generated code is

    if not _fx_run(_sim_ctx, ufunc, a, o0, o1, b, p0, p1, c, q0, q1, rows, cols, dtype, _sim_fx, site):
        <the four ops, as without fusion>
    ...
    _fx_settle(_sim_fx, sites)          # before every return and at the end of the kernel

`run` checks at run time what the four fast paths would (windows inside the tensors, the tensors'
dtype the tiles' one, `c` writable) and that `a` and `b` are read-only (so no op can change them
before the kernel ends); anything else takes the unfused path, errors included. `settle` leaves the
arena as the ops would have: each group's tiles hold its last block (the next launch poisons them,
but the arena is the machine's state, and the poison's own tests look at it).
Kernels that can block (generators) are not fused: other tasks could run before they end.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from pypto.ir.expr import BinaryExpr, Call, ConstInt, MakeTuple, Var
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt, SeqStmts, WhileStmt
from pypto.ir.types import TileType, static_dims
from pypto.ir.walks import preorder, statements
from pypto.runtime.sim import fastpath
from pypto.runtime.sim.layout import static_placement
from pypto.runtime.sim.out_coverage import _TRACKED, first_store, note_load, note_store, note_stores
from pypto.runtime.sim.race_detector import note_gm
from pypto.runtime.sim.watchdog import ticks as watchdog_ticks

# exact elementwise ufuncs: the result does not depend on how numpy walks the operands
_EXACT = {np.add, np.subtract, np.multiply, np.maximum, np.minimum}
ENABLED = True           # internal switch: off, no kernel generated from then on fuses (bench/sim_throughput.py)


def run(ctx, ufunc, a, o0, o1, b, p0, p1, c, q0, q1, r, k, dtype, done: dict, site: int) -> bool:
    """c[q0:q0+r, q1:q1+k] = ufunc(a[o0:.., o1:..], b[p0:.., p1:..]) when the four fast paths would all
    take their simple case; False (nothing done) otherwise. What cannot change while the kernel runs
    (dtypes, writability, loads marking a tracked Out buffer read) is checked at the first block on
    these arrays; the windows at every block."""
    sa, sb, sc = a.shape, b.shape, c.shape
    if not (0 <= o0 <= sa[0] - r and 0 <= o1 <= sa[1] - k and 0 <= p0 <= sb[0] - r and 0 <= p1 <= sb[1] - k
            and 0 <= q0 <= sc[0] - r and 0 <= q1 <= sc[1] - k):
        return False
    last = done.get(site)
    if last is None or last[0] is not a or last[2] is not b or last[4] is not c:
        if not (a.dtype is dtype and b.dtype is dtype and c.dtype is dtype and c.flags.writeable
                and not a.flags.writeable and not b.flags.writeable):
            return False                 # (a dtype equal but not numpy's own object: the unfused path, same result)
        if _TRACKED:
            note_load(a)
            note_load(b)
    wa = (slice(o0, o0 + r), slice(o1, o1 + k))
    wb = (slice(p0, p0 + r), slice(p1, p1 + k))
    wc = (slice(q0, q0 + r), slice(q1, q1 + k))
    race = ctx.run.race
    if race is not None:
        note_gm(ctx, a, wa, False, race)
        note_gm(ctx, b, wb, False, race)
        note_gm(ctx, c, wc, True, race)
    ufunc(a[wa], b[wb], out=c[wc])
    done[site] = (a, wa, b, wb, c)
    if _TRACKED:
        note_store(c, q0, q1, r, k)
    return True


def settle(done: dict, sites: tuple) -> None:
    """The arena as the unfused ops leave it: each group that ran holds its last block's tiles."""
    for site, (ufunc, x, y, z) in enumerate(sites):
        last = done.get(site)
        if last is not None:
            a, wa, b, wb, _c = last
            x.data[...] = a[wa]
            y.data[...] = b[wb]
            ufunc(x.data, y.data, out=z.data)
            x.valid = y.valid = z.valid = x.data.shape


class _Kernel:
    """What fusion needs to know about a whole kernel, worked out once per function."""

    def __init__(self, gen):
        nodes = preorder(gen.func.body)
        self.uses: dict = {}
        bases: dict = {}
        self.static = True
        for n in nodes:
            if isinstance(n, Var):
                self.uses[n] = self.uses.get(n, 0) + 1
                t = n.type
                if isinstance(t, TileType) and t.memref is not None:
                    bases.setdefault(t.memref.base, set()).add(n)
        self.tiles_of = bases
        self.allocs = gen.allocs
        if any(a.addr is None or a.addr < 0 or a.size <= 0 for a in self.allocs.values()):
            self.static = False                 # a tile placed at run time: which bytes it uses is unknown

    def private(self, tiles: tuple) -> bool:
        """The tiles' allocations hold no other tile and overlap no other allocation."""
        bases = {t.type.memref.base for t in tiles}
        for base in bases:
            if base not in self.allocs or self.tiles_of.get(base, set()) - set(tiles):
                return False
        for base in bases:
            mine = self.allocs[base]
            for other, alloc in self.allocs.items():
                if other in bases or alloc.space is not mine.space:
                    continue
                if alloc.addr < mine.addr + mine.size and mine.addr < alloc.addr + alloc.size:
                    return False
        return True


def _overlap(p, q, shape: tuple, dtype) -> bool:
    """Whether two tiles of `shape` / `dtype` placed at (space, addr) p and q share arena bytes."""
    nbytes = int(np.prod(shape)) * dtype.to_numpy().itemsize
    return p[0] == q[0] and p[1] < q[1] + nbytes and q[1] < p[1] + nbytes


def _pure(e) -> bool:
    """An offset expression the generated code may evaluate twice: no op calls."""
    if isinstance(e, (Var, ConstInt)):
        return True
    if isinstance(e, BinaryExpr):
        return _pure(e.lhs) and _pure(e.rhs)
    return False


def _call_of(stmt, name: Optional[str] = None) -> Optional[Call]:
    value = stmt.value if isinstance(stmt, AssignStmt) else stmt.expr if isinstance(stmt, EvalStmt) else None
    if not isinstance(value, Call) or value.is_function_call() or (name is not None and value.op.name != name):
        return None
    return value


def _load(stmt) -> Optional[tuple]:
    call = _call_of(stmt, "tile.load")
    if call is None or not isinstance(stmt, AssignStmt) or fastpath.plan(call, stmt.var.type) is None:
        return None
    offs = call.args[1].elements
    return (stmt.var, call, offs) if all(_pure(o) for o in offs) else None


def plan(gen, stmts, k: int) -> Optional[tuple]:
    """(the two loads, the op, the store) starting at stmts[k] when they can run fused, else None."""
    if k + 4 > len(stmts) or not ENABLED:
        return None
    la, lb = _load(stmts[k]), _load(stmts[k + 1])
    if la is None or lb is None:
        return None
    op = _call_of(stmts[k + 2])
    st = _call_of(stmts[k + 3], "tile.store")
    if op is None or st is None or not isinstance(stmts[k + 2], AssignStmt):
        return None
    ufunc = getattr(fastpath._BINARY.get(op.op.name), "ufunc", None)
    z = stmts[k + 2].var
    if (ufunc not in _EXACT or fastpath.plan(op, z.type) is None or fastpath.plan(st, None) is None
            or {a for a in op.args} != {la[0], lb[0]} or la[0] is lb[0] or st.args[0] is not z
            or not isinstance(st.args[1], MakeTuple) or not all(_pure(o) for o in st.args[1].elements)):
        return None
    shape = static_dims(z.type.shape)
    if static_dims(la[0].type.shape) != shape or static_dims(lb[0].type.shape) != shape:
        return None
    kernel = getattr(gen, "_fusion_kernel", None)
    if kernel is None:
        kernel = gen._fusion_kernel = _Kernel(gen)
    tiles = (la[0], lb[0], z)
    if any(t.type.memref is None for t in tiles):
        return None
    if not kernel.static or any(kernel.uses.get(t, 0) != 2 for t in tiles) or not kernel.private(tiles):
        return None
    placed = [static_placement(t, gen.allocs) for t in tiles]
    if None in placed or _overlap(placed[0], placed[1], shape, dtype=la[0].type.dtype):
        return None                       # (two loads into shared bytes: the second clobbers the first)
    lhs, rhs = (la, lb) if op.args[0] is la[0] else (lb, la)
    return ufunc, lhs, rhs, st, shape, z.type.dtype


def prepare(gen) -> None:
    """Find the kernel's fused groups before its code is emitted (every return settles them all)."""
    gen.fused_sites = {}                 # id(first statement of a group) -> (site, plan)
    gen.loop_stores = {}                 # tensor var -> how many whole fused loops store into it
    gen.fused_settle = None              # the settle call's text, when there are groups
    if gen.is_host or not gen.fast_paths or gen.generator:
        return
    specs = []
    for seq in _looped_sequences(gen.func.body):
        stmts, k = seq.stmts, 0
        while k < len(stmts):
            planned = plan(gen, stmts, k)
            if planned is None:
                k += 1
                continue
            ufunc, (x, lx, _), (y, ly, _), _st, _shape, _dt = planned
            z = stmts[k + 2].var
            gen.fused_sites[id(stmts[k])] = (len(specs), planned)
            names = [gen.out_for(v, c) for v, c in ((x, lx), (y, ly), (z, stmts[k + 2].value))]
            specs.append(f"({gen.named_const(ufunc, 'np_' + ufunc.__name__)}, {', '.join(names)})")
            k += 4
    if specs:
        gen.g["_fx_run"] = run
        gen.g["_fx_settle"] = settle
        gen.fused_settle = f"_fx_settle(_sim_fx, ({', '.join(specs)},))"


def _looped_sequences(body) -> list:
    """The statement sequences inside a loop: a group run once per launch gains nothing (its settle
    redoes the four ops), so only groups that repeat are fused."""
    found: dict = {}
    for loop in statements(body):
        if isinstance(loop, (ForStmt, WhileStmt)):
            for seq in statements(loop.body):
                if isinstance(seq, SeqStmts):
                    found[id(seq)] = seq
    return list(found.values())


def emit(gen, stmts, k: int, ind: int) -> int:
    """Emit stmts[k:k + 4] fused (with the unfused code as the fallback) when `prepare` found a group there:
    4, else 0."""
    found = gen.fused_sites.get(id(stmts[k]))
    if found is None:
        return 0
    site, planned = found
    ufunc, (_, la, oa), (_, lb, ob), st, (rows, cols), dtype = planned
    fn = gen.named_const(ufunc, f"np_{ufunc.__name__}")
    dt = gen.dtype_const(dtype)
    ex = gen.expr
    q = st.args[1].elements
    where = st.span if st.span is not None and st.span.is_known() else stmts[k + 3].span
    gen.emit(ind, f"if not _fx_run(_sim_ctx, {fn}, {ex(la.args[0])}, {ex(oa[0])}, {ex(oa[1])}, {ex(lb.args[0])}, "
                  f"{ex(ob[0])}, {ex(ob[1])}, {ex(st.args[2])}, {ex(q[0])}, {ex(q[1])}, {rows}, {cols}, {dt}, "
                  f"_sim_fx, {site}):", "tile.store", where)
    for s in stmts[k:k + 4]:
        gen.stmt(s, ind + 1)
    if isinstance(stmts[k + 3], AssignStmt):             # the store's result: the tensor it wrote
        gen.emit(ind, "else:")
        gen.emit(ind + 1, f"{gen.namer.name(stmts[k + 3].var)} = {ex(st.args[2])}")
    return 4


# ------------------------------------------------------------------ a whole loop of one group, one call
#
# A `for` loop whose body is exactly one fused group, with window offsets affine in the loop variable,
# stores block j to the window q + j * dq. When those store windows are pairwise disjoint and the
# output shares no memory with the operands, no block can see another's result, so the n blocks are
# one ufunc call over (n, rows, cols) strided views of the three tensors. The generated code is
#
#     _sim_rN = range(start, stop, step)
#     if len(_sim_rN) > 1:  <the six offsets at the first and the second iteration>
#     if len(_sim_rN) < 2 or not _fx_loop(...):
#         for i in _sim_rN:  <the group, per block, as above>

def _affine(e, lv) -> bool:
    """`e` is c0 + c1 * lv with c0, c1 loop-invariant: +, - and * of invariants and at most one lv factor."""
    if isinstance(e, (Var, ConstInt)):
        return True
    if isinstance(e, BinaryExpr) and e.op in ("add", "sub"):
        return _affine(e.lhs, lv) and _affine(e.rhs, lv)
    if isinstance(e, BinaryExpr) and e.op == "mul":
        return _affine(e.lhs, lv) and _affine(e.rhs, lv) and not (_mentions(e.lhs, lv) and _mentions(e.rhs, lv))
    return False


def _mentions(e, v) -> bool:
    return any(n is v for n in preorder(e))


def loop_group(gen, loop) -> Optional[tuple]:
    """(site, plan) when `loop` is a carry-free `for` whose body is one fused group with affine offsets."""
    if not isinstance(loop, ForStmt) or loop.iter_args or loop.return_vars or not isinstance(loop.body, SeqStmts):
        return None
    stmts = loop.body.stmts
    found = gen.fused_sites.get(id(stmts[0])) if len(stmts) == 4 else None
    if found is None:
        return None
    _site, (_u, (_x, la, oa), (_y, lb, ob), st, _shape, _dt) = found
    if isinstance(stmts[3], AssignStmt) and gen._fusion_kernel.uses.get(stmts[3].var, 0) != 1:
        return None                      # (the store's result is read: the per-block path names it)
    offsets = [*oa, *ob, *st.args[1].elements]
    lv = loop.loop_var
    if len(offsets) != 6 or not all(_affine(o, lv) for o in offsets):
        return None
    return found


def emit_loop(gen, loop, ind: int) -> bool:
    """Emit `loop` as one fused call with its per-block code as the fallback, when `loop_group` allows."""
    found = loop_group(gen, loop)
    if found is None:
        return False
    site, planned = found
    ufunc, (_, la, oa), (_, lb, ob), st, (rows, cols), dtype = planned
    target = st.args[2]
    gen.loop_stores[target] = gen.loop_stores.get(target, 0) + 1
    ex = gen.expr
    lv = gen.namer.name(loop.loop_var)
    rng = f"_sim_r{site}"
    gen.emit(ind, f"{rng} = {gen.loop_range(loop)}", "for", loop.span)
    offs = ", ".join(ex(o) for o in (*oa, *ob, *st.args[1].elements))
    gen.emit(ind, "_sim_f0 = _sim_f1 = None")
    gen.emit(ind, f"if len({rng}) > 1:")
    for k in (0, 1):
        gen.emit(ind + 1, f"{lv} = {rng}[{k}]")
        gen.emit(ind + 1, f"_sim_f{k} = ({offs})")
    gen.g["_fx_loop"] = run_loop
    fn = gen.named_const(ufunc, f"np_{ufunc.__name__}")
    where = st.span if st.span is not None and st.span.is_known() else loop.span
    gen.emit(ind, f"if not _fx_loop(_sim_ctx, {fn}, {ex(la.args[0])}, {ex(lb.args[0])}, "
                  f"{ex(st.args[2])}, _sim_f0, _sim_f1, len({rng}), {rows}, {cols}, {gen.dtype_const(dtype)}, "
                  f"_sim_fx, {site}, {gen.const(loop.span, 'sim_span')}):", "tile.store", where)
    gen.g["_fx_fill"] = fill_before_blocks
    gen.emit(ind + 1, f"_fx_fill({ex(st.args[2])})")
    gen.emit(ind + 1, f"for {lv} in {rng}:", "for", loop.span)
    gen.watchdog_tick(loop, ind + 2)
    gen.body(loop.body, ind + 2)
    return True


def _strided(x: np.ndarray, x0: int, x1: int, d0: int, d1: int, n: int, r: int, k: int, writeable: bool):
    """The n windows x[x0 + j*d0 : .. + r, x1 + j*d1 : .. + k] as one (n, r, k) view (bounds checked)."""
    s0, s1 = x.strides
    return np.lib.stride_tricks.as_strided(x[x0:, x1:], shape=(n, r, k), strides=(d0 * s0 + d1 * s1, s0, s1),
                                           writeable=writeable)


def _window(x0: int, x1: int, r: int, k: int) -> tuple:
    """The r x k window at (x0, x1), as the ops record it."""
    return slice(x0, x0 + r), slice(x1, x1 + k)


def _windows(x0: int, x1: int, d0: int, d1: int, n: int, r: int, k: int) -> list:
    """The n blocks' windows, block j at (x0 + j * d0, x1 + j * d1)."""
    return [_window(x0 + j * d0, x1 + j * d1, r, k) for j in range(n)]


def _inside(x0: int, d: int, n: int, extent: int, size: int) -> bool:
    last = x0 + (n - 1) * d
    return 0 <= x0 <= size - extent and 0 <= last <= size - extent


def fill_before_blocks(c) -> None:
    """The loop runs block by block: an Out buffer whose poison fill was deferred gets it first."""
    if _TRACKED:
        first_store(c, False)


def _provable(a, b, c, f0: tuple, f1: tuple, n: int, r: int, k: int, dtype) -> bool:
    """Every block would take `run`'s fused path, and no block can see another's result."""
    if not all(isinstance(x, (int, np.integer)) for x in f0 + f1):
        return False
    o0, o1, p0, p1, q0, q1 = f0
    da0, da1, db0, db1, dc0, dc1 = (y - x for x, y in zip(f0, f1))
    if not (a.dtype is dtype and b.dtype is dtype and c.dtype is dtype and c.flags.writeable
            and not a.flags.writeable and not b.flags.writeable and a.ndim == b.ndim == c.ndim == 2):
        return False
    sa, sb, sc = a.shape, b.shape, c.shape
    if not (_inside(o0, da0, n, r, sa[0]) and _inside(o1, da1, n, k, sa[1]) and _inside(p0, db0, n, r, sb[0])
            and _inside(p1, db1, n, k, sb[1]) and _inside(q0, dc0, n, r, sc[0]) and _inside(q1, dc1, n, k, sc[1])):
        return False
    if not (abs(dc0) >= r or abs(dc1) >= k):
        return False                     # blocks store into overlapping windows: the last one wins, block by block
    return not (np.may_share_memory(c, a) or np.may_share_memory(c, b))   # else a block could load another's store


def run_loop(ctx, ufunc, a, b, c, f0: Optional[tuple], f1: Optional[tuple], n: int, r: int, k: int, dtype,
             done: dict, site: int, span) -> bool:
    """The n blocks of a fused loop as one ufunc call, when `_provable`; False (nothing done) otherwise, and
    the loop runs block by block (f0 None: fewer than two blocks), after `fill_before_blocks`. An Out
    buffer whose poison fill was deferred (out_coverage.first_store) is filled first unless these blocks
    cover it whole; then their result may stay pending until write-back (HostArgs.write_back writes it
    straight into the caller's array)."""
    if f0 is None or not _provable(a, b, c, f0, f1, n, r, k, dtype):
        return False
    o0, o1, p0, p1, q0, q1 = f0
    da0, da1, db0, db1, dc0, dc1 = (y - x for x, y in zip(f0, f1))
    sa, sb = _strided(a, o0, o1, da0, da1, n, r, k, False), _strided(b, p0, p1, db0, db1, n, r, k, False)

    def compute(out: np.ndarray) -> None:
        ufunc(sa, sb, out=_strided(out, q0, q1, dc0, dc1, n, r, k, True))

    # (disjoint windows inside c: they cover it whole when the sizes add up; a whole first loop into an
    # Out buffer nothing else touches may leave its result for write-back: out_coverage.first_store)
    pending = _TRACKED and first_store(c, n * r * k == c.size, (compute, (a, b)))
    watchdog_ticks(span, n)
    race = ctx.run.race
    task = getattr(ctx, "task", None)
    if race is not None and task is not None:   # the records of the four ops, block by block
        owner = task.parent or task
        wa, wb = _windows(o0, o1, da0, da1, n, r, k), _windows(p0, p1, db0, db1, n, r, k)
        race.records.extend(rec for x, y, z in zip(wa, wb, _windows(q0, q1, dc0, dc1, n, r, k))
                            for rec in ((owner, a, x, False), (owner, b, y, False), (owner, c, z, True)))
    if not pending:
        compute(c)
    if _TRACKED:
        note_load(a)
        note_load(b)
        if q1 == dc1 == 0 and k == c.shape[1] and dc0 == r:     # whole rows, block after block: one window
            note_store(c, q0, 0, n * r, k)
        else:
            note_stores(c, [(q0 + j * dc0, q1 + j * dc1) for j in range(n)], r, k)
    last = n - 1
    done[site] = (a, _window(o0 + last * da0, o1 + last * da1, r, k), b,
                  _window(p0 + last * db0, p1 + last * db1, r, k), c)
    return True


def loop_filled_params(gen) -> frozenset:
    """The kernel's parameters (by position) that nothing but whole fused loops touches: each use of the
    parameter is the store target of such a loop. An Out buffer passed there is written, or filled with
    poison, by the first of those loops before anything else could see it (out_coverage.first_store)."""
    stores = getattr(gen, "loop_stores", None)
    if not stores:
        return frozenset()
    uses = gen._fusion_kernel.uses
    return frozenset(i for i, p in enumerate(gen.func.params) if stores.get(p, 0) and uses.get(p, 0) == stores[p])
