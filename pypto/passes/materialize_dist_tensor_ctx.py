"""MaterializeDistTensorCtx: every kernel gets one explicit CommCtx parameter per DistributedTensor parameter.

A kernel that addresses a peer's window (notify, remote_load, put, ...) needs the window's
communication context — its rank, the world size, every rank's window base. On hardware that
is a pointer the launcher passes; making it an explicit parameter lets PTO codegen address peers
1:1. Per kernel (InCore / AIC / AIV / Group / Spmd) with DistributedTensor parameters d1..dk,
the pass appends parameters `d1_ctx .. dk_ctx: pld.CommCtx` (in that order), replaces each
`c = pld.get_comm_ctx(x)` in the kernel by the parameter of the window x was derived from, and
passes the context at every call: a kernel forwards its own parameter, an orchestration binds
`c: pld.CommCtx = pld.get_comm_ctx(d)` just before the call.

Requires: CommDomainScopesMaterialized / Produces: DistTensorCtxMaterialized / Invalidates: —
Seed: compiler-and-runtime.md §2 row 44 (the kernel side of seed 001's distributed ops).

    before:  def k(self, sig: pld.DistributedTensor[[4, 1], pl.INT32]): c = pld.get_comm_ctx(sig); me = pld.rank(c)
    after:   def k(self, sig: pld.DistributedTensor[[4, 1], pl.INT32], sig_ctx: pld.CommCtx): me = pld.rank(sig_ctx)
             (orchestration)  sig_ctx = pld.get_comm_ctx(sig); self.k(sig, sig_ctx)
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.enums import FunctionType, Level, ParamDirection
from pypto.ir.expr import Call, GlobalVar, IterArg, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt, SeqStmts, WhileStmt
from pypto.ir.types import CommCtxType, DistributedTensorType, TupleType
from pypto.ir.visitor import IRVisitor, SplicingMutator
from pypto.passes.base import Pass
from pypto.passes.properties import IRProperty, PassProperties

KERNEL_TYPES = (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV, FunctionType.Group, FunctionType.Spmd)


def _is_kernel(f: Function) -> bool:
    return f.func_type in KERNEL_TYPES and f.level is not Level.HOST


def _dist_params(f: Function) -> list:
    return [p for p in f.params if isinstance(p.type, DistributedTensorType) and not isinstance(p.type, CommCtxType)]


class _Roots(IRVisitor):
    """Which DistributedTensor parameter each window value of a function was derived from.

    A window value is the parameter itself, a copy, a loop carry of one, or the result of an op
    that updates a window in place (a store into it, a collective on it): the op's first
    argument of the same window type."""

    def __init__(self, params: list):
        self.root: dict = {p: p for p in params}

    def _of(self, e):
        return self.root.get(e) if isinstance(e, Var) else None

    def visit_assign_stmt(self, s: AssignStmt):
        self.visit_children(s)
        if not isinstance(s.var.type, DistributedTensorType):
            return
        v = s.value
        if isinstance(v, Var):
            r = self._of(v)
        elif isinstance(v, Call) and not v.is_function_call():
            r = next((self._of(a) for a in v.args if self._of(a) is not None and _same_window(a.type, s.var.type)),
                     None)
        else:
            r = None
        if r is not None:
            self.root[s.var] = r

    def _loop(self, s):
        for ia in s.iter_args:
            r = self._of(ia.init_value)
            if r is not None:
                self.root[ia] = r
        self.visit(s.body)
        for ia, rv in zip(s.iter_args, s.return_vars):
            if ia in self.root:
                self.root[rv] = self.root[ia]

    def visit_for_stmt(self, s: ForStmt):
        self._loop(s)

    def visit_while_stmt(self, s: WhileStmt):
        self._loop(s)


def _same_window(a, b) -> bool:
    return isinstance(a, DistributedTensorType) and a.dtype is b.dtype and len(a.shape) == len(b.shape)


class _Rewrite(SplicingMutator):
    """Drop `c = pld.get_comm_ctx(x)` for the context parameter; add contexts to calls of changed kernels."""

    def __init__(self, func: Function, ctx_of_param: dict, changed: dict, roots: dict):
        self.func = func
        self.ctx_of_param = ctx_of_param           # this function's DistributedTensor param -> its CommCtx param
        self.changed = changed                     # kernel name -> its new Function
        self.roots = roots
        self.subst: dict = {}

    def _ctx_of(self, x, span):
        root = self.roots.get(x) if isinstance(x, Var) else None
        return self.ctx_of_param.get(root) if root is not None else None

    def mutate_var(self, v):
        return self.subst.get(v, v)

    def mutate_assign_stmt(self, s: AssignStmt):
        v = s.value
        if self.ctx_of_param and isinstance(v, Call) and not v.is_function_call() and v.op.name == "pld.get_comm_ctx":
            ctx = self._ctx_of(v.args[0], s.span)
            if ctx is None:
                raise UnsupportedError(f"pld.get_comm_ctx in kernel '{self.func.name}': cannot tell which window "
                                       f"parameter '{getattr(v.args[0], 'name_hint', '?')}' comes from", s.span,
                                       hint="call pld.get_comm_ctx on a DistributedTensor parameter of the kernel")
            self.subst[s.var] = ctx
            return SeqStmts([], s.span)
        if isinstance(v, Call) and v.is_function_call() and v.op.name in self.changed:
            pre, call = self._call(v, s.span)
            return SeqStmts(pre + [s.replace(value=call)], s.span)
        return s.replace(value=self.mutate(v)) if self.subst else s

    def mutate_eval_stmt(self, s: EvalStmt):
        e = s.expr
        if isinstance(e, Call) and e.is_function_call() and e.op.name in self.changed:
            pre, call = self._call(e, s.span)
            return SeqStmts(pre + [s.replace(expr=call)], s.span)
        return s.replace(expr=self.mutate(e)) if self.subst else s

    def _call(self, c: Call, span):
        callee = self.changed[c.op.name]
        args = [self.mutate(a) for a in c.args]
        n_dist = sum(1 for p in callee.params if isinstance(p.type, CommCtxType))
        windows = [a for a, p in zip(args, callee.params) if isinstance(p.type, DistributedTensorType)
                   and not isinstance(p.type, CommCtxType)][:n_dist]
        pre, ctxs = [], []
        for w in windows:
            ctx = self._ctx_of(w, span) if self.ctx_of_param else None
            if ctx is None:                         # an orchestration (or a window the kernel cannot trace)
                get = create_op_call("pld.get_comm_ctx", [w], {}, span)
                ctx = Var(f"{getattr(w, 'name_hint', 'w')}_ctx", CommCtxType(), span)
                pre.append(AssignStmt(ctx, Call(get.op, get.args, get.kwargs, type=CommCtxType(), span=span), span))
            ctxs.append(ctx)
        return pre, c.replace(args=tuple(args) + tuple(ctxs))


def transform_materialize_dist_tensor_ctx(program: Program) -> Program:
    new_params: dict = {}                          # kernel name -> (params, directions, ctx_of_param)
    for f in program.functions.values():
        dist = _dist_params(f) if _is_kernel(f) else []
        if dist and not any(isinstance(p.type, CommCtxType) for p in f.params):
            ctxs = [Var(f"{p.name_hint}_ctx", CommCtxType(), p.span) for p in dist]
            new_params[f.name] = (list(f.params) + ctxs,
                                  list(f.param_directions) + [ParamDirection.In] * len(ctxs), dict(zip(dist, ctxs)))
    if not new_params:
        return program
    changed = {name: program.functions[name].replace(params=tuple(ps), param_directions=tuple(ds))
               for name, (ps, ds, _m) in new_params.items()}
    funcs = []
    for f in program.functions.values():
        params, dirs, ctx_of_param = new_params.get(f.name, (None, None, {}))
        roots = _Roots(list(ctx_of_param)) if ctx_of_param else _Roots([])
        roots.visit(f.body)
        body = _Rewrite(f, ctx_of_param, changed, roots.root).mutate(f.body)
        g = changed.get(f.name, f)
        funcs.append(g if body is f.body else g.replace(body=body))
    return program.with_functions(funcs)


def materialize_dist_tensor_ctx() -> Pass:
    return Pass("MaterializeDistTensorCtx", transform_materialize_dist_tensor_ctx,
                PassProperties(required={IRProperty.CommDomainScopesMaterialized},
                               produced={IRProperty.DistTensorCtxMaterialized}))
