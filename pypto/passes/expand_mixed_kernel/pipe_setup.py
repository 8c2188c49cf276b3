"""tfree insertion and the automatic pipe-setup prologue of split kernels (seed 004 steps 10–11).

Every consumer-side tpop gets its tfree after the last statement of its block that uses the
popped tile, a name it goes by (`a = t`, an if result every branch yields from it) or a same-side
tile it was moved into (a Mat → Left carrier), and before a trailing yield / return. A written
tfree of an alias is rewritten to free the popped tile itself, its kwargs (id) kept. Then both sides get the frontend pipe setup: the consumer reserves
each ring's buffer, the producer imports it (the V2C ring's statement before the C2V one), both
initialize the pipe.

    dir_mask   1 C2V, 2 V2C, 3 both          slot_size  largest transferred tile in bytes
    slot_num   attrs["slot_num"] or 2 (always emitted)   buffer size slot_size × (local_slot_num or slot_num)
    names      <func>_c2v_slot_buffer / <func>_v2c_slot_buffer, base -1 (AUTO)
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.dtypes import INT32
from pypto.ir.expr import ConstInt, Var, const
from pypto.ir.ops.registry import CUBE
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt, IfStmt, ReturnStmt, SeqStmts, WhileStmt, YieldStmt, \
    flatten_to_stmts
from pypto.ir.types import ScalarType, TileType
from pypto.passes.analysis import calls_in, used_vars
from pypto.passes.expand_mixed_kernel.affinity import stmt_call
from pypto.passes.expand_mixed_kernel.construct import op_call

DEFAULT_SLOT_NUM = 2
_POPS = {"tile.tpop_from_aic": "system.tfree_to_aic", "tile.tpop_from_aiv": "system.tfree_to_aiv"}


def tile_bytes(t: TileType) -> int:
    n = 1
    for d in t.shape:
        n *= int(d.value)
    return n * t.dtype.bits // 8


def insert_tfrees(body, carriers: dict) -> SeqStmts:
    stmts = flatten_to_stmts(body)
    out = [_recurse(s, carriers) for s in stmts]
    out = _canonical_frees(out)
    for s in list(out):
        c = stmt_call(s)
        if not (isinstance(s, AssignStmt) and c is not None and getattr(c.op, "name", "") in _POPS):
            continue
        if _has_tfree(out, s.var):
            continue
        watched = {s.var}       # a Mat → Left carrier move copies: the slot frees right after it
        pos = out.index(s)
        last = pos
        for j in range(pos + 1, len(out)):
            if watched & set(used_vars(out[j])):
                last = j
                watched |= _aliases(out[j], watched)
        if last > pos and isinstance(out[last], (YieldStmt, ReturnStmt)):
            last -= 1
        # the free's split code is StampTfreeSplit's to stamp (from its pop), after SplitVectorKernel
        free = EvalStmt(op_call(_POPS[c.op.name], [s.var], {"id": c.kwargs.get("id")}, c.span), c.span)
        out.insert(last + 1, free)
    return SeqStmts(out, getattr(body, "span", None))


def _aliases(s, watched: set) -> set:
    """Names `s` gives to a watched tile without copying it: `a = t`, or an if's result every branch
    of which yields a watched tile (the slot stays in use while they are read)."""
    if isinstance(s, AssignStmt) and isinstance(s.value, Var) and s.value in watched:
        return {s.var}
    if isinstance(s, IfStmt) and s.else_body is not None:
        yielded = [_yielded_aliases(b, watched) for b in (s.then_body, s.else_body)]
        if all(y is not None for y in yielded):
            return {rv for i, rv in enumerate(s.return_vars) if all(i < len(y) and y[i] for y in yielded)}
    return set()


def _yielded_aliases(branch, watched: set):
    """Per value of the branch's closing yield: whether it is a watched tile (through branch-local
    `a = t` names); None when the branch does not end in a yield."""
    stmts = flatten_to_stmts(branch)
    if not stmts or not isinstance(stmts[-1], YieldStmt):
        return None
    names = set(watched)
    for x in stmts[:-1]:
        names |= _aliases(x, names)
    return [v in names for v in stmts[-1].values]


def _canonical_frees(stmts: list) -> list:
    """A written tfree of an alias (`a = t; tfree(a)`) frees the popped tile itself, its kwargs kept."""
    alias = {}
    for s in stmts:
        if isinstance(s, AssignStmt) and isinstance(s.value, Var):
            alias[s.var] = alias.get(s.value, s.value)
    if not alias:
        return stmts
    out = []
    for s in stmts:
        c = stmt_call(s)
        if isinstance(s, EvalStmt) and c is not None and getattr(c.op, "name", "") in _POPS.values() \
                and c.args and c.args[0] in alias:
            s = s.replace(expr=c.replace(args=(alias[c.args[0]],) + tuple(c.args[1:])))
        out.append(s)
    return out


def _has_tfree(stmts, var) -> bool:
    return any(getattr(c.op, "name", "") in _POPS.values() and c.args and c.args[0] is var
               for s in stmts for c in calls_in(s))


def _recurse(s, carriers):
    if isinstance(s, (ForStmt, WhileStmt)):
        return s.replace(body=insert_tfrees(s.body, carriers))
    if isinstance(s, IfStmt):
        return s.replace(then_body=insert_tfrees(s.then_body, carriers),
                         else_body=insert_tfrees(s.else_body, carriers) if s.else_body is not None else None)
    return s


def transfers(body) -> dict:
    """{"c2v": [tile types], "v2c": [...]} of the transfers in one side's body."""
    found = {"c2v": [], "v2c": []}
    for c in calls_in(body):
        name = getattr(c.op, "name", "")
        if name == "tile.tpush_to_aiv":
            found["c2v"].append(_static_transfer(c, c.args[0].type))
        elif name == "tile.tpush_to_aic":
            found["v2c"].append(_static_transfer(c, c.args[0].type))
        elif name == "tile.tpop_from_aic":
            found["c2v"].append(_static_transfer(c, c.type))
        elif name == "tile.tpop_from_aiv":
            found["v2c"].append(_static_transfer(c, c.type))
    return found


def _static_transfer(call, t: TileType) -> TileType:
    """A tile crossing between the cores fills a pipe slot sized at compile time: its shape must be static."""
    if any(not isinstance(d, ConstInt) for d in t.shape):
        raise UnsupportedError(f"a tile moved between the cube and vector cores needs a static shape (its pipe slot "
                               f"is sized at compile time), got [{', '.join(str(d) for d in t.shape)}]", call.span,
                               hint="give the tile a static shape and put the run-time extent in valid_shape=")
    return t


def pipe_prologue(func_name: str, side: str, aic_body, aiv_body, attrs: dict) -> list:
    """The reserve / import / initialize_pipe statements one side starts with (empty without transfers)."""
    kinds = {"c2v": [], "v2c": []}
    for body in (aic_body, aiv_body):
        for k, types in transfers(body).items():
            kinds[k] += types
    if not kinds["c2v"] and not kinds["v2c"]:
        return []
    slot_size = max(tile_bytes(t) for t in kinds["c2v"] + kinds["v2c"])
    slot_num = int(attrs.get("slot_num") or DEFAULT_SLOT_NUM)
    local = attrs.get("local_slot_num")
    size = slot_size * int(local or slot_num)
    dir_mask = (1 if kinds["c2v"] else 0) | (2 if kinds["v2c"] else 0)
    stmts, bufs = [], {"c2v": const(0, INT32), "v2c": const(0, INT32)}
    consumer_of = {"c2v": "aiv", "v2c": "aic"}
    me = "aic" if side == CUBE else "aiv"
    peer = "aiv" if me == "aic" else "aic"
    for direction in ("v2c", "c2v"):          # the V2C ring's statement first on both sides
        if not kinds[direction]:
            continue
        name = f"{func_name}_{direction}_slot_buffer"
        if consumer_of[direction] == me:
            var = Var(f"{direction}_buf", ScalarType(INT32))
            call = op_call("system.reserve_buffer", [], {"name": name, "size": size, "base": -1})
        else:
            var = Var(f"{direction}_import", ScalarType(INT32))
            call = op_call("system.import_peer_buffer", [], {"name": name, "peer_func": f"{func_name}_{peer}"})
        stmts.append(AssignStmt(var, call))
        bufs[direction] = var
    init = op_call(f"system.{me}_initialize_pipe", [bufs["c2v"], bufs["v2c"]],
                   {"dir_mask": dir_mask, "slot_size": slot_size, "slot_num": slot_num, "local_slot_num": local})
    stmts.append(EvalStmt(init))
    return stmts
