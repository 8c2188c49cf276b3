"""Statements of a kernel body → PTO text: assignments, scf.for / scf.if / scf.while, yields.

Only scalars travel through `iter_args` / `scf.if` results: a tile carried by a loop or
merged by an if lives in one buffer (InitMemRef made the carried values share a MemRef), so
it is bound to that buffer's handle; a tensor is a reference written in place, so it keeps
the tensor_view it came in with — the reference's convention.

    for i, (acc,) in pl.range(0, 4, 1, init_values=(s0,)):      %acc_rv = scf.for %i = %c0_index to
        ...                                              →          %c4_index step %c1_index iter_args(%acc = %s0)
        acc_rv = pl.yield_(acc2)                                     -> (f32) { ... scf.yield %acc2 : f32 }
"""

from __future__ import annotations

from pypto.errors import InternalError, UnsupportedError
from pypto.ir.dtypes import BOOL
from pypto.ir.expr import Call, ConstInt, IterArg, Var
from pypto.ir.stmt import (AssignStmt, BreakStmt, ContinueStmt, EvalStmt, ForStmt, IfStmt, ReturnStmt, ScopeStmt,
                           SeqStmts, WhileStmt, YieldStmt)
from pypto.ir.types import ScalarType, TensorType, TileType
from pypto.ir.visitor import collect
from pypto.codegen.pto.registry import emitter_for


def emit_function_body(ctx) -> None:
    _alloc_tiles(ctx)
    _stmt(ctx, ctx.func.body)


# ---------------------------------------------------------------------------- buffers
def _alloc_addresses(func) -> dict:
    """base Ptr Var → the address its tile.alloc was given (None when unplanned)."""
    out = {}
    for s in collect(func.body, lambda n: isinstance(n, AssignStmt)):
        v = s.value
        if isinstance(v, Call) and not v.is_function_call() and v.op.name == "tile.alloc":
            out[s.var] = v.kwargs.get("addr")
    return out


def _tile_vars(func) -> list:
    """Tile Vars in definition order, except results an instruction defines itself (views, pops)."""
    out = []
    for node in collect(func.body, lambda n: isinstance(n, (AssignStmt, ForStmt, IfStmt, WhileStmt))):
        if isinstance(node, AssignStmt):
            v = node.value
            if isinstance(v, Call) and not v.is_function_call():
                em = emitter_for(v.op.name)
                if em is not None and em.binds_result:
                    continue
            out.append(node.var)
        elif isinstance(node, (ForStmt, WhileStmt)):
            out.extend(node.iter_args)
            out.extend(node.return_vars)
        else:
            out.extend(node.return_vars)
    return [v for v in out if isinstance(v.type, TileType)]


def _alloc_tiles(ctx) -> None:
    addresses = _alloc_addresses(ctx.func)
    handles: dict = {}
    for var in _tile_vars(ctx.func):
        memref = var.type.memref
        if memref is None:
            raise InternalError(f"PTO codegen: tile '{var.name_hint}' of {ctx.func.name} has no MemRef "
                                "(InitMemRef must run before codegen)")
        offset = memref.byte_offset.value if isinstance(memref.byte_offset, ConstInt) else None
        if offset is None:
            raise UnsupportedError(f"PTO codegen: tile '{var.name_hint}' has a symbolic byte offset", var.span)
        base_addr = addresses.get(memref.base)
        addr = None if base_addr is None or base_addr < 0 else base_addr + offset
        ctx.alloc_tile(var, (memref.base, offset), addr, handles)


# ---------------------------------------------------------------------------- statements
def _stmt(ctx, s) -> None:
    if s is None:
        return
    if isinstance(s, SeqStmts):
        for x in s.stmts:
            _stmt(ctx, x)
        return
    if s.span is not None and getattr(s.span, "line", 0):
        ctx.span = s.span
    handler = _HANDLERS.get(type(s))
    if handler is None:
        if isinstance(s, ScopeStmt):
            raise UnsupportedError(f"PTO codegen: a {type(s).__name__} is left inside kernel {ctx.func.name}",
                                   s.span, hint="scopes are outlined into functions before codegen")
        raise UnsupportedError(f"PTO codegen: statement {type(s).__name__} is not supported in a kernel", s.span)
    handler(ctx, s)


def _assign(ctx, s: AssignStmt) -> None:
    v = s.value
    if isinstance(v, Call):
        ctx.emit_call(v, s.var)
        return
    t = s.var.type
    if isinstance(t, ScalarType):
        ctx.bind(s.var, ctx.value_as(v, t.dtype) if isinstance(v.type, ScalarType) else ctx.value(v),
                 ctx.type_of(s.var))
        return
    if isinstance(v, Var) and isinstance(t, TensorType):
        ctx.alias_tensor(s.var, v)
        return
    if isinstance(v, Var) and isinstance(t, TileType):
        return                                     # an alias: bound to the same buffer by _alloc_tiles
    raise UnsupportedError(f"PTO codegen: cannot emit the assignment of a {type(v).__name__}", s.span)


def _eval(ctx, s: EvalStmt) -> None:
    if not isinstance(s.expr, Call):
        return
    ctx.emit_call(s.expr, None)


def _return(ctx, s: ReturnStmt) -> None:
    """Kernel results are the Out tensors written in place; the function itself returns nothing."""


def _yield(ctx, s: YieldStmt) -> None:
    ctx._pending_yield = list(s.values)


def _no_break(ctx, s) -> None:
    raise UnsupportedError(f"PTO codegen: {type(s).__name__[:-4].lower()} inside kernel {ctx.func.name}", s.span,
                           hint="structured control flow (CtrlFlowTransform) is needed before codegen")


def _carry_init(ctx, carried: IterArg, result: Var) -> None:
    """Bind a non-scalar carry and its result: tiles already share a handle; tensors keep their view."""
    if isinstance(carried.type, TensorType):
        init = carried.init_value
        for var in (carried, result):
            ctx.alias_tensor(var, init)


def _loop_carries(ctx, s) -> tuple:
    """A for / while loop's carries: tiles and tensors enter their buffers (they are not scf values);
    returns the scalar carries' (indices, init values, types), which travel as scf iter_args."""
    scalar = [i for i, a in enumerate(s.iter_args) if isinstance(a.type, ScalarType)]
    for i, (a, r) in enumerate(zip(s.iter_args, s.return_vars)):
        if i not in scalar:
            _carry_init(ctx, a, r)
    _carry_in(ctx, s)
    inits = [ctx.value(s.iter_args[i].init_value) for i in scalar]
    types = [ctx.type_of(s.iter_args[i]) for i in scalar]
    return scalar, inits, types


def _for(ctx, s: ForStmt) -> None:
    lb, ub, step = ctx.index(s.start), ctx.index(s.stop), ctx.index(s.step)
    iv = ctx.fresh(s.loop_var.name_hint)
    ctx.bind(s.loop_var, iv, "index")
    scalar, inits, types = _loop_carries(ctx, s)
    inner = []
    for i in scalar:
        name = ctx.fresh(s.iter_args[i].name_hint)
        ctx.bind(s.iter_args[i], name, ctx.type_of(s.iter_args[i]))
        inner.append(name)
    results = [ctx.fresh(s.return_vars[i].name_hint) for i in scalar]
    head = f"scf.for {iv} = {lb} to {ub} step {step}"
    if scalar:
        pairs = ", ".join(f"{n} = {v}" for n, v in zip(inner, inits))
        head = f"{', '.join(results)} = {head} iter_args({pairs}) -> ({', '.join(types)})"
    ctx.structural(head + " {")
    _branch(ctx, s.body, scalar, types, [s.iter_args[i].type.dtype for i in scalar], s.iter_args)
    ctx.structural("}")
    for i, name in zip(scalar, results):
        ctx.bind(s.return_vars[i], name, types[scalar.index(i)])
    _carry_out(ctx, s)


def _carry_out(ctx, s) -> None:
    """Tiles: the init value enters the carry's buffer first; the carry leaves into the result's."""
    for a, r in zip(s.iter_args, s.return_vars):
        if isinstance(a.type, TileType):
            _tile_move(ctx, a, r)


def _carry_in(ctx, s) -> None:
    for a in s.iter_args:
        if isinstance(a.type, TileType) and isinstance(a.init_value, Var):
            _tile_move(ctx, a.init_value, a)


def _condition(ctx, cond) -> str:
    name = ctx.value(cond)
    if isinstance(cond.type, ScalarType) and cond.type.dtype is not BOOL:
        zero = ctx.const(0, cond.type.dtype)
        out = ctx.fresh("cond")
        ctx.emit(f"{out} = arith.cmpi ne, {name}, {zero} : {ctx.type_of(cond)}")
        return out
    return name


def _if(ctx, s: IfStmt) -> None:
    cond = _condition(ctx, s.condition)
    scalar = [i for i, r in enumerate(s.return_vars) if isinstance(r.type, ScalarType)]
    types = [ctx.type_of(s.return_vars[i]) for i in scalar]
    results = [ctx.fresh(s.return_vars[i].name_hint) for i in scalar]
    head = f"scf.if {cond}"
    if scalar:
        head = f"{', '.join(results)} = {head} -> ({', '.join(types)})"
    ctx.structural(head + " {")
    then_yield = _branch(ctx, s.then_body, scalar, types, targets=s.return_vars)
    if s.else_body is not None or scalar:
        if s.else_body is None:
            raise InternalError("PTO codegen: an if with results needs an else branch")
        ctx.structural("} else {")
        _branch(ctx, s.else_body, scalar, types, targets=s.return_vars)
    ctx.structural("}")
    for i, name in zip(scalar, results):
        ctx.bind(s.return_vars[i], name, types[scalar.index(i)])
    for i, r in enumerate(s.return_vars):
        if isinstance(r.type, TensorType) and then_yield:
            src = then_yield[i]
            ctx.alias_tensor(r, src)


def _tile_move(ctx, src, dst) -> None:
    """A tile yielded into a carry / result that lives in another buffer is copied there."""
    a, b = ctx.value(src), ctx.value(dst)
    if a != b:
        ctx.emit(f"pto.tmov ins({a} : {ctx.type_of(src)}) outs({b} : {ctx.type_of(dst)})")


def _branch(ctx, body, scalar: list, types: list, dtypes=None, targets=()) -> list:
    """Emit a region body; its YieldStmt's scalar values become the region's `scf.yield`, its tiles
    are copied into the carry / result buffers `targets` when they sit elsewhere."""
    ctx._pending_yield = None
    ctx.indent(1)
    _stmt(ctx, body)
    values = ctx._pending_yield or []
    for value, target in zip(values, targets):
        if isinstance(target.type, TileType) and isinstance(value, Var):
            _tile_move(ctx, value, target)
    if scalar:
        if len(values) <= max(scalar):
            raise InternalError("PTO codegen: a loop / if body yields fewer values than it carries")
        dtypes = dtypes or [values[i].type.dtype for i in scalar]
        names = [ctx.value_as(values[i], d) for i, d in zip(scalar, dtypes)]
        ctx.emit(f"scf.yield {', '.join(names)} : {', '.join(types)}")
    ctx._pending_yield = None
    ctx.indent(-1)
    return values


def _while(ctx, s: WhileStmt) -> None:
    scalar, inits, types = _loop_carries(ctx, s)
    before = [ctx.fresh(s.iter_args[i].name_hint) for i in scalar]
    results = [ctx.fresh(s.return_vars[i].name_hint) for i in scalar]
    sig = ", ".join(types)
    head = f"scf.while ({', '.join(f'{b} = {v}' for b, v in zip(before, inits))}) : ({sig}) -> ({sig})"
    if results:
        head = f"{', '.join(results)} = {head}"
    ctx.structural(head + " {")
    ctx.indent(1)
    for i, name in zip(scalar, before):
        ctx.bind(s.iter_args[i], name, ctx.type_of(s.iter_args[i]))
    cond = _condition(ctx, s.condition)
    tail = f" {', '.join(before)} : {sig}" if scalar else ""
    ctx.emit(f"scf.condition({cond}){tail}")
    ctx.indent(-1)
    after = [ctx.fresh(s.iter_args[i].name_hint) for i in scalar]
    ctx.structural("} do {")
    ctx.structural(f"^bb0({', '.join(f'{a}: {t}' for a, t in zip(after, types))}):")
    for i, name in zip(scalar, after):
        ctx.bind(s.iter_args[i], name, ctx.type_of(s.iter_args[i]))
    _branch(ctx, s.body, scalar, types, [s.iter_args[i].type.dtype for i in scalar], s.iter_args)
    if not scalar:
        ctx.indent(1)
        ctx.emit("scf.yield")
        ctx.indent(-1)
    ctx.structural("}")
    for i, name in zip(scalar, results):
        ctx.bind(s.return_vars[i], name, types[scalar.index(i)])
    _carry_out(ctx, s)


_HANDLERS = {AssignStmt: _assign, EvalStmt: _eval, ReturnStmt: _return, YieldStmt: _yield, ForStmt: _for,
             IfStmt: _if, WhileStmt: _while, BreakStmt: _no_break, ContinueStmt: _no_break}
