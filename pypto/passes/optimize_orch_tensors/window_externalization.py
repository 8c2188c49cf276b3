"""OptimizeOrchTensors pattern 5, static window externalization (opt-in: `attrs={"windowize": True}`,
which `pl.at(..., windowize=True)` puts on the outlined kernel).

A kernel that writes only one static window of a large Out tensor, or reads only one static window
of a large In tensor, still receives the whole tensor, so the runtime sees whole-buffer accesses
and serializes sibling tasks that touch disjoint windows. For an opted-in InCore kernel this
rewrite makes the windows explicit at each call site: the kernel is cloned as `<name>__windowed`
with narrowed parameters (carrying the parent's strides) and offsets rebased to zero, and the call
passes `tensor.slice` windows (the output window is assembled back into its parent; the kernel
writes that window in place, so FuseCreateAssembleToSlice later drops the assemble).

Built shapes (the reference's FinalStore and PureInputWindowConsumer here, its AggregateWindowLoop
output form in window_aggregate_loop.py; the aggregate input-window form is not built): an Out parameter used once, by a top-level `tile.store` whose result the kernel
returns (its only return value); an In parameter every use of which is a `tile.load` of one
window, in a kernel that returns data. Windows are whole tiles (valid shape = shape), so a slice
never reaches past the tensor's edge where the kernel did not. A window's shape must be static and its offsets may use
only scalar parameters and constants; a window that is the whole tensor is left alone. Every
call of the kernel must come from orchestration code, else nothing changes.

    before:  r = self.k(i, out)                  # k stores tile t at [i * 32, 0] of out
    after:   w = tensor.slice(out, [32, 64], [i * 32, 0]);  w2 = self.k__windowed(i, w)
             r = tensor.assemble(out, w2, [i * 32, 0])      # k__windowed stores t at [0, 0]
"""

from __future__ import annotations

from typing import Optional

from pypto.ir.enums import FunctionType, ParamDirection
from pypto.ir.equality import structural_equal
from pypto.ir.expr import Call, ConstInt, GlobalVar, MakeTuple, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, EvalStmt, ReturnStmt, SeqStmts
from pypto.ir.types import ScalarType, TupleType, TensorLayout, TensorType, TensorView, TileType
from pypto.ir.visitor import IRMutator, collect, substitute
from pypto.passes.analysis import body_list, used_vars
from pypto.passes.optimize_orch_tensors.orch_tensor_strides import CallSites, trailing_strides
from pypto.passes.optimize_orch_tensors.param_retyping import retype_uses
from pypto.passes.optimize_orch_tensors.window_aggregate_loop import RebaseStores, aggregate_output_window

_SUFFIX = "__windowed"


def _op(e, name: str) -> bool:
    return isinstance(e, Call) and not isinstance(e.op, GlobalVar) and e.op.name == name


def _static(dims) -> bool:
    return all(isinstance(d, ConstInt) for d in dims)


def _uses(func: Function, p: Var) -> list:
    """The Calls that read p (p appears nowhere else when every use is a call argument)."""
    calls = collect(func.body, lambda n: isinstance(n, Call) and any(a is p for a in n.args))
    return calls if len(collect(func.body, lambda n: n is p)) == len(calls) else []


def _window_ok(func: Function, param: Var, shape, offsets) -> bool:
    scalars = {p for p in func.params if isinstance(p.type, ScalarType)}
    if not (_static(shape) and isinstance(offsets, MakeTuple)) or len(shape) != len(param.type.shape):
        return False
    if not all(set(used_vars(o)) <= scalars for o in offsets.elements):
        return False
    whole = all(isinstance(o, ConstInt) and o.value == 0 for o in offsets.elements) and \
        all(s.value == d.value for s, d in zip(shape, param.type.shape) if isinstance(d, ConstInt))
    return not whole


def _output_window(func: Function, j: int) -> Optional[tuple]:
    p = func.params[j]
    stmts = body_list(func.body)
    calls = _uses(func, p)
    if len(calls) != 1 or not _op(calls[0], "tile.store") or calls[0].args[2] is not p:
        return None
    store = next((s for s in stmts if isinstance(s, AssignStmt) and s.value is calls[0]), None)
    ret = stmts[-1] if stmts and isinstance(stmts[-1], ReturnStmt) else None
    if store is None or ret is None or list(ret.values) != [store.var]:
        return None
    tile = calls[0].args[0].type
    if not isinstance(tile, TileType) or not structural_equal(tuple(tile.valid_shape), tuple(tile.shape)) \
            or not _window_ok(func, p, tile.shape, calls[0].args[1]):
        return None
    return tuple(tile.shape), calls[0].args[1]


def _input_window(func: Function, i: int) -> Optional[tuple]:
    p = func.params[i]
    calls = _uses(func, p)
    if not calls or not func.return_types or not all(_op(c, "tile.load") and c.args[0] is p for c in calls):
        return None
    first = calls[0]
    same = all(structural_equal(c.args[1], first.args[1]) and structural_equal(c.args[2], first.args[2])
               for c in calls[1:])
    shape = first.args[2].elements if isinstance(first.args[2], MakeTuple) else ()
    whole_tiles = all(structural_equal(c.args[3], c.args[2]) for c in calls if len(c.args) > 3)
    if not same or not whole_tiles or not _window_ok(func, p, shape, first.args[1]):
        return None
    return tuple(shape), first.args[1]


def _windowed_type(t: TensorType, shape) -> TensorType:
    strides = trailing_strides(t, len(shape))
    view = TensorView(stride=list(strides), layout=TensorLayout.ND) if strides else None
    return TensorType(list(shape), t.dtype, None, view)


class _Rebase(IRMutator):
    """Loads / stores of the windowed params address their window from offset zero."""

    def __init__(self, windowed: set):
        self.windowed = windowed

    def mutate_call(self, c):
        c = self.mutate_children(c)
        hit = (_op(c, "tile.load") and c.args[0] in self.windowed) or (_op(c, "tile.store") and c.args[2] in self.windowed)
        if not hit:
            return c
        args = list(c.args)
        args[1] = MakeTuple([ConstInt(0) for _ in args[1].elements], args[1].span)
        return c.replace(args=tuple(args))


def _clone(func: Function, windows: dict) -> Function:
    renamed = {func.params[k]: Var(func.params[k].name_hint, _windowed_type(func.params[k].type, shape),
                                   func.params[k].span) for k, (shape, _) in windows.items()}
    body = _Rebase(set(renamed)).mutate(func.body)
    body = retype_uses(body, renamed)
    params = tuple(renamed.get(p, p) for p in func.params)
    ret = body_list(body)[-1]
    rets = tuple(v.type for v in ret.values) if isinstance(ret, ReturnStmt) else func.return_types
    attrs = {k: v for k, v in func.attrs.items() if k != "windowize"}
    return func.replace(name=func.name + _SUFFIX, params=params, body=body, return_types=rets, attrs=attrs)


class _CallSiteRewrite(IRMutator):
    def __init__(self, kernel: Function, clone: Function, windows: dict, out_index: Optional[int]):
        self.kernel, self.clone, self.windows, self.out_index = kernel, clone, windows, out_index
        self.vars: dict = {}

    def mutate_var(self, v):
        return self.vars.get(v, v)

    def _site(self, st, call):
        bind = dict(zip(self.kernel.params, call.args))
        args, before, after = list(call.args), [], []
        offsets = {}
        for k, (shape, offs) in self.windows.items():
            off = substitute(offs, bind)
            offsets[k] = off
            view = create_op_call("tensor.slice", [call.args[k], list(shape), off], {}, st.span)
            w = Var(f"{getattr(call.args[k], 'name_hint', 'arg')}_window", view.type, st.span)
            before.append(AssignStmt(w, view, st.span))
            args[k] = w
        rets = self.clone.return_types
        new_call = call.replace(op=GlobalVar(self.clone.name), args=tuple(args),
                                type=rets[0] if len(rets) == 1 else TupleType(list(rets)))
        if self.out_index is None or not isinstance(st, AssignStmt):
            if isinstance(st, AssignStmt):
                res = Var(st.var.name_hint, new_call.type, st.var.span)
                self.vars[st.var] = res
                return before + [AssignStmt(res, new_call, st.span)]
            return before + [EvalStmt(new_call, st.span)]
        res = Var(f"{st.var.name_hint}_window", new_call.type, st.span)
        back = create_op_call("tensor.assemble", [call.args[self.out_index], res, offsets[self.out_index]], {}, st.span)
        whole = Var(st.var.name_hint, back.type, st.var.span)
        self.vars[st.var] = whole
        return before + [AssignStmt(res, new_call, st.span), AssignStmt(whole, back, st.span)]

    def mutate_seq_stmts(self, s):
        out, changed = [], False
        for st in s.stmts:
            st = self.mutate(st)
            value = st.value if isinstance(st, AssignStmt) else getattr(st, "expr", None)
            if isinstance(value, Call) and isinstance(value.op, GlobalVar) and value.op.name == self.kernel.name:
                out += self._site(st, value)
                changed = True
            else:
                out.append(st)
        if not changed and len(out) == len(s.stmts) and all(a is b for a, b in zip(out, s.stmts)):
            return s
        return SeqStmts(out, s.span)


def externalize_windows(program: Program) -> Program:
    """Pattern 5 over every InCore kernel with attrs["windowize"] set (see module doc)."""
    if not any(f.func_type is FunctionType.InCore and f.attrs.get("windowize") for f in program.functions.values()):
        return program                    # no kernel asks for windows: no call sites to look up
    sites = CallSites(program)
    funcs = dict(program.functions)
    for name, f in program.functions.items():
        if f.func_type is not FunctionType.InCore or not f.attrs.get("windowize") or not sites.only_from_callers(name):
            continue
        windows, out_index, rebased = {}, None, {}
        for k, (p, d) in enumerate(zip(f.params, f.param_directions)):
            if not isinstance(p.type, TensorType):
                continue
            found = _output_window(f, k) if d is ParamDirection.Out else \
                _input_window(f, k) if d is ParamDirection.In else None
            if found is None and d is ParamDirection.Out:
                aggregate = aggregate_output_window(f, k)
                if aggregate is not None and _window_ok(f, p, aggregate[0], aggregate[1]):
                    found = aggregate[:2]
                    rebased.update(aggregate[2])
            if found is not None:
                windows[k] = found
                out_index = k if d is ParamDirection.Out else out_index
        if not windows:
            continue
        clone = _clone(f.replace(body=RebaseStores(rebased).mutate(f.body)) if rebased else f, windows)
        del funcs[name]
        funcs[clone.name] = clone
        for n, g in list(funcs.items()):
            if g.func_type in (FunctionType.Orchestration, FunctionType.Opaque):
                body = _CallSiteRewrite(f, clone, windows, out_index).mutate(g.body)
                if body is not g.body:
                    funcs[n] = g.replace(body=body)
    if set(funcs) == set(program.functions) and all(funcs[n] is g for n, g in program.functions.items()):
        return program
    return program.with_functions(funcs.values())
