"""ExpandMixedKernel: split each mixed InCore kernel into AIC + AIV (+ Group); retype pure ones.

Requires: SSAForm, TileMemoryInferred / Produces: MixedKernelExpanded / Invalidates: —
Seed 004 (pass doc 21; compiler-and-runtime.md §2, dump 22). Phases: pre-scan callers (which
kernels an existing Group calls), expand each InCore kernel (side_body.py: affinity.py,
construct.py with mx_carrier.py for MX scales, versions.py, loop_repair.py, dce.py,
pipe_setup.py), rewrite Group callers in place, adapt
hand-written V→C pushes (adapt_push.py, mx_manual.py), normalize hand-written Groups to one
shared member ABI (group_abi.py), check the result (verifier.py, data_paths.py).

    before:  InCore k(x, y, out): ... z = matmul(l, r); v = move(z, Vec); out = store(v, ..)
    after:   AIC k_aic: ... z = matmul(l, r); tpush_to_aiv(z)   AIV k_aiv: v = tpop_from_aic(); store; tfree
             Group k(x, y, out): self.k_aic(x, y, out); self.k_aiv(x, y, out); return out
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.enums import FunctionType
from pypto.ir.expr import Call, GlobalVar, TupleGetItem, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import CUBE, VECTOR
from pypto.ir.stmt import AssignStmt, EvalStmt, ReturnStmt, SeqStmts, flatten_to_stmts
from pypto.ir.types import TupleType, UnknownType
from pypto.ir.visitor import IRMutator, substitute
from pypto.passes.context import current_platform
from pypto.passes.expand_mixed_kernel.affinity import PLACEMENT_ATTR, call_affinity, stmt_affinity  # noqa: F401 (re-export)
from pypto.passes.expand_mixed_kernel.transpose_hazard import check_no_split_transpose
from pypto.passes.expand_mixed_kernel.waiter_contract import check_waiters
from pypto.passes.expand_mixed_kernel.construct import is_mixed
from pypto.passes.expand_mixed_kernel.adapt_push import adapt_manual_pushes
from pypto.passes.expand_mixed_kernel.mx_manual import adapt_mx_pushes
from pypto.passes.expand_mixed_kernel.data_paths import check_data_paths
from pypto.passes.expand_mixed_kernel.group_abi import normalize_group_abis
from pypto.passes.expand_mixed_kernel.dual_dispatch import stamp_dual_dispatch
from pypto.passes.expand_mixed_kernel.side_body import side_body
from pypto.passes.expand_mixed_kernel.versions import returned_params
from pypto.passes.expand_mixed_kernel.pipe_setup import pipe_prologue, transfers
from pypto.passes.expand_mixed_kernel.verifier import check_expanded
from pypto.passes.base import Pass
from pypto.passes.properties import IRProperty, PassProperties

_DROPPED_ATTRS = ("split",)


def _calls_to(func: Function, name: str) -> bool:
    from pypto.passes.analysis import calls_in
    return any(isinstance(c.op, GlobalVar) and c.op.name == name for c in calls_in(func.body))


def _gathers_in_mat(func: Function) -> Function:
    """A `tile.aic_gather` result bound to a Var typed outside Mat is the Mat tile the gather makes: its
    readers (a Mat → Left move) then stay on the cube side instead of counting as a second boundary."""
    from pypto.ir.walks import collect
    retyped = {}
    for s in collect(func.body, lambda n: isinstance(n, AssignStmt)):
        c = s.value
        if isinstance(c, Call) and not isinstance(c.op, GlobalVar) and c.op.name == "tile.aic_gather" \
                and getattr(s.var.type, "memory_space", None) is not getattr(c.type, "memory_space", None):
            retyped[s.var] = Var(s.var.name_hint, c.type, s.var.span)
    return func.replace(body=substitute(func.body, retyped)) if retyped else func


def _expand(func: Function, platform_name: str) -> tuple:
    """(aic, aiv) for a mixed kernel."""
    func = _gathers_in_mat(func)
    attrs = dict(func.attrs)                   # a mixed kernel keeps its split mode for SplitVectorKernel
    aic_body = side_body(func, CUBE, platform_name)
    aiv_body = side_body(func, VECTOR, platform_name)
    if platform_name == "a5" and func.attrs.get("local_slot_num") is not None and \
            (transfers(aic_body)["c2v"] or transfers(aic_body)["v2c"]):
        raise UnsupportedError(f"pl.cross_core_slot(local_slot_num={func.attrs['local_slot_num']}) on kernel "
                               f"{func.name}: a5 (Ascend950) keeps its rings in the consumer's SRAM and has no "
                               "separate local depth", func.span, hint="omit local_slot_num (portable source)")
    aic_pro = pipe_prologue(func.name, CUBE, aic_body, aiv_body, func.attrs)
    aiv_pro = pipe_prologue(func.name, VECTOR, aic_body, aiv_body, func.attrs)
    aic = _with_own_params(Function(f"{func.name}_aic", func.params, [], SeqStmts(aic_pro + flatten_to_stmts(aic_body)),
                                    FunctionType.AIC, param_directions=func.param_directions, attrs=attrs,
                                    span=func.span))
    aiv = Function(f"{func.name}_aiv", func.params, func.return_types, SeqStmts(aiv_pro + flatten_to_stmts(aiv_body)),
                   FunctionType.AIV, param_directions=func.param_directions, attrs=attrs, span=func.span)
    return aic, aiv


def _with_own_params(func: Function) -> Function:
    """A copy whose params are fresh Vars: two functions never share a binding."""
    from pypto.passes.analysis import alpha_rename
    fresh = [Var(p.name_hint, p.type, p.span) for p in func.params]
    body, _ = alpha_rename(func.body, dict(zip(func.params, fresh)))
    return func.replace(params=tuple(fresh), body=body)


def _call(func: Function, args, span) -> Call:
    rts = func.return_types
    t = UnknownType() if not rts else rts[0] if len(rts) == 1 else TupleType(rts)
    return Call(GlobalVar(func.name, span), args, type=t, span=span)


def _group(func: Function, aic: Function, aiv: Function) -> Function:
    params = [Var(p.name_hint, p.type, p.span) for p in func.params]
    stmts = [EvalStmt(_call(aic, params, func.span), func.span)]
    rets = returned_params(aiv)
    aiv_call = _call(aiv, params, func.span)
    if rets and all(r is not None for r in rets):
        stmts.append(EvalStmt(aiv_call, func.span))
        stmts.append(ReturnStmt([params[list(aiv.params).index(r)] for r in rets], func.span))
    elif func.return_types:
        res = Var("result", aiv_call.type, func.span)
        stmts.append(AssignStmt(res, aiv_call, func.span))
        values = [res] if len(func.return_types) == 1 else [TupleGetItem(res, i) for i in range(len(func.return_types))]
        stmts.append(ReturnStmt(values, func.span))
    else:
        stmts.append(EvalStmt(aiv_call, func.span))
    # the Group keeps the kernel's split / slot_num (and the other scope attrs) like its AIC / AIV members
    return Function(func.name, params, func.return_types, SeqStmts(stmts), FunctionType.Group,
                    param_directions=func.param_directions, attrs=dict(func.attrs), span=func.span)


class _GroupCallerRewrite(IRMutator):
    """In a Group: `r = k(args)` → `k_aic(args); r = k_aiv(args)` (seed phase 3)."""

    def __init__(self, split: dict):
        self.split = split

    def mutate_seq_stmts(self, s):
        out = []
        for x in s.stmts:
            x = self.mutate(x)
            c = x.value if isinstance(x, AssignStmt) else x.expr if isinstance(x, EvalStmt) else None
            if isinstance(c, Call) and isinstance(c.op, GlobalVar) and c.op.name in self.split:
                aic, aiv = self.split[c.op.name]
                out.append(EvalStmt(_call(aic, c.args, c.span).replace(attrs=c.attrs), x.span))
                aiv_call = _call(aiv, c.args, c.span).replace(attrs=c.attrs)
                out.append(AssignStmt(x.var, aiv_call, x.span) if isinstance(x, AssignStmt) else
                           EvalStmt(aiv_call, x.span))
            else:
                out.append(x)
        return s.replace(stmts=tuple(out))


def _run(program: Program) -> Program:
    platform_name = current_platform().name
    check_waiters(program)
    funcs = list(program.functions.values())
    split: dict = {}
    retyped: dict = {}
    for f in funcs:
        if f.func_type is not FunctionType.InCore:
            continue
        check_no_split_transpose(f)
        if is_mixed(f.body):
            split[f.name] = _expand(f, platform_name)
        else:
            sides = {stmt_affinity(s) for s in flatten_to_stmts(f.body)}
            kind = FunctionType.AIC if CUBE in sides else FunctionType.AIV
            attrs = {k: v for k, v in f.attrs.items() if k not in _DROPPED_ATTRS}
            retyped[f.name] = f.with_type(kind).replace(attrs=attrs)
    manual = {f.name for f in funcs if f.func_type is FunctionType.AIV} | set(retyped)
    hand_written = tuple(f for f in funcs if f.func_type in (FunctionType.AIC, FunctionType.AIV))
    if not split and not retyped and not (platform_name == "a5" and manual):
        result = normalize_group_abis(program.with_functions(
            [stamp_dual_dispatch(f, platform_name) for f in funcs]))
        check_expanded(result, hand_written)
        return result
    out = []
    rewrite = _GroupCallerRewrite(split)
    for f in funcs:
        if f.name in retyped:
            out.append(retyped[f.name])
        elif f.name in split:
            aic, aiv = split[f.name]
            out += [aic, aiv]
            others = [g for g in funcs if g.name != f.name and g.func_type is not FunctionType.Group
                      and _calls_to(g, f.name)]
            groups = [g for g in funcs if g.func_type is FunctionType.Group and _calls_to(g, f.name)]
            if others or not groups:
                out.append(_group(f, aic, aiv))
        elif f.func_type is FunctionType.Group and any(_calls_to(f, n) for n in split):
            out.append(f.replace(body=rewrite.mutate(f.body)))
        else:
            out.append(f)
    # AdaptManualVtoCPush: the pass's last phase, on the AIV functions it did not build pushes for
    if platform_name == "a5":                  # MX scales first: planned from the peer's pops (program-wide)
        by_name = {f.name: f for f in out}
        for name in sorted(manual & set(by_name)):
            by_name.update(adapt_mx_pushes(by_name, by_name[name]))
        out = [by_name[f.name] for f in out]
    out = [adapt_manual_pushes(f, platform_name) if f.name in manual else f for f in out]
    # a2a3: every AIV driving a pipe without a split mode runs on both vector lanes (step 12)
    built = manual | {aiv.name for _aic, aiv in split.values()}
    out = [stamp_dual_dispatch(f, platform_name) if f.name in built else f for f in out]
    # phase 4: hand-written Groups get one shared member ABI (after the pushes are adapted: clones keep them)
    result = normalize_group_abis(program.with_functions(out))
    platform = current_platform()
    for f in out:
        if f.func_type in (FunctionType.AIC, FunctionType.AIV) and (f.name in retyped or f.name.endswith(("_aic", "_aiv"))):
            check_data_paths(f, platform)
    check_expanded(result, hand_written)
    return _strip_placement(result)


class _StripPlacement(IRMutator):
    def mutate_call(self, c):
        c = self.mutate_children(c)
        if c.attrs and PLACEMENT_ATTR in c.attrs:
            return c.replace(attrs={k: v for k, v in c.attrs.items() if k != PLACEMENT_ATTR})
        return c


def _strip_placement(program: Program) -> Program:
    """The placement mark only bridges region erasure to the split: no expanded function keeps it."""
    stripper = _StripPlacement()
    return program.with_functions([f.replace(body=stripper.mutate(f.body)) for f in program.functions.values()])


def expand_mixed_kernel() -> Pass:
    return Pass("ExpandMixedKernel", _run,
                PassProperties(required={IRProperty.SSAForm, IRProperty.TileMemoryInferred},
                               produced={IRProperty.MixedKernelExpanded}))
