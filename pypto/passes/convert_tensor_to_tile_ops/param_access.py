"""Which GM params a converted kernel writes (seed 003: a written parameter cannot stay In).

Converted ops that store into a tensor note it as they convert; the ops left for later passes
(put / get / notify targets, the collectives, syncall's workspace) say it through their op
effects. A param only written becomes Out, one also read (or written read-modify-write, like an
AtomicAdd notify or a barrier's signal) InOut. An orchestrator param that is passed to such a
kernel param is promoted the same way, so its reader sees the write (the read-after-write edge).

    def k(self, signal: pld.DistributedTensor[[2, 1], pl.INT32]):   # before: In
        pld.tensor.barrier(signal)
    def k(self, signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]]):
"""

from __future__ import annotations

from pypto.ir.comm_enums import NotifyOp
from pypto.ir.enums import ParamDirection
from pypto.ir.expr import Call, GlobalVar, Var
from pypto.ir.ops.registry import READ, READWRITE, WRITE
from pypto.ir.stmt import AssignStmt, ForStmt, WhileStmt, child_bodies, flatten_to_stmts
from pypto.ir.types import TensorType
from pypto.passes.analysis import calls_in

_ALIAS_OPS = ("tensor.view", "tensor.slice", "tensor.reshape", "pld.tensor.view")


def _aliases(body) -> dict:
    """Var → the Var it views (tensor views, loop carries initialised from a tensor)."""
    out: dict = {}

    def walk(s):
        for x in flatten_to_stmts(s):
            if isinstance(x, AssignStmt) and isinstance(x.value, Call) and not isinstance(x.value.op, GlobalVar) \
                    and x.value.op.name in _ALIAS_OPS and x.value.args and isinstance(x.value.args[0], Var):
                out[x.var] = x.value.args[0]
            elif isinstance(x, AssignStmt) and isinstance(x.value, Var):      # buf = x
                out[x.var] = x.value
            if isinstance(x, (ForStmt, WhileStmt)):
                for ia, rv in zip(x.iter_args, x.return_vars):
                    if isinstance(ia.init_value, Var) and isinstance(ia.type, TensorType):
                        out[ia] = ia.init_value
                        out[rv] = ia.init_value
            for child in child_bodies(x):
                walk(child)
    walk(body)
    return out


def _root(v, aliases: dict):
    seen = 0
    while v in aliases and seen < 64:
        v, seen = aliases[v], seen + 1
    return v


def _effects(c: Call) -> dict:
    if c.op.name == "pld.system.notify":
        op = c.kwargs.get("op", NotifyOp.AtomicAdd)
        return {0: WRITE if op in (NotifyOp.Set, 1) else READWRITE}
    if c.op.name == "system.syncall":
        return {i: READWRITE for i, a in enumerate(c.args) if isinstance(a.type, TensorType)}
    return c.op.effects or {}


def param_access(body, params) -> dict:
    """param → (read, written) for the GM params the body's remaining op calls touch."""
    aliases = _aliases(body)
    wanted = set(params)
    out: dict = {}
    for c in calls_in(body):
        if isinstance(c.op, GlobalVar):
            continue
        for i, eff in _effects(c).items():
            if i >= len(c.args) or not isinstance(c.args[i], Var):
                continue
            p = _root(c.args[i], aliases)
            if p not in wanted:
                continue
            r, w = out.get(p, (False, False))
            out[p] = (r or eff in (READ, READWRITE), w or eff in (WRITE, READWRITE))
    return out


def promoted(direction: ParamDirection, read: bool, written: bool) -> ParamDirection:
    """The direction a param needs once the kernel writes it (In → Out / InOut; Out read → InOut)."""
    if not written:
        return direction
    if direction is ParamDirection.In:
        return ParamDirection.InOut if read else ParamDirection.Out
    return direction


def promote_callers(funcs: dict, promoted_params: dict) -> None:
    """Orchestrator / wrapper params passed straight to a promoted kernel param follow it (in place)."""
    from pypto.ir.enums import FunctionType
    if not promoted_params:
        return
    for name, f in list(funcs.items()):
        if f.func_type not in (FunctionType.Orchestration, FunctionType.Opaque, FunctionType.Spmd,
                               FunctionType.Group):
            continue
        aliases = _aliases(f.body)
        directions = list(f.param_directions)
        changed = False
        for c in calls_in(f.body):
            if not isinstance(c.op, GlobalVar) or c.op.name not in promoted_params:
                continue
            for idx, new_dir in promoted_params[c.op.name].items():
                if idx >= len(c.args) or not isinstance(c.args[idx], Var):
                    continue
                p = _root(c.args[idx], aliases)
                if p not in f.params:
                    continue
                j = list(f.params).index(p)
                d = directions[j]
                if d is ParamDirection.In:
                    directions[j], changed = new_dir, True
                elif d is ParamDirection.Out and new_dir is ParamDirection.InOut:
                    directions[j], changed = ParamDirection.InOut, True
        if changed:
            funcs[name] = f.replace(param_directions=tuple(directions))
