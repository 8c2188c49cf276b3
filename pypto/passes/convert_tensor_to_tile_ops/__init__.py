"""ConvertTensorToTileOps: lower tensor.* ops in InCore kernels to tile.* ops and fix up call sites.

Requires: SSAForm, SplitIncoreOrch, NormalizedStmtStructure
Produces: SSAForm, IncoreTileOps, NormalizedStmtStructure / Invalidates: —
Seed 003 (ConvertTensorToTileOps), phase 1 core + phases 2a / 2b; reference pass doc 10.

Phase 1 (each InCore function): an entry `tile.load(p, zeros, shape, shape, target_memory=Vec)`
for each tensor param a converted op reads directly (self-loading ops — slice, read, write,
assemble, matmul — read GM themselves); each tensor op rewritten through the conversion
registry, types propagated through iter_args / return_vars; each returned tile stored with
`tile.store` into a new trailing Out param `ret<i>_out`, the store result returned.
Phase 2a: Spmd / Group wrappers forward the new Out params to their inner call.
Phase 2b: Orchestration / Opaque call sites create one `tensor.create` per new Out param.

    before:  def k(x) -> Tensor:             y = pl.add(x, x); return y
    after:   def k(x, ret0_out: Out) -> Tensor: x_tile = pl.tile.load(x, [0], [64], [64]); y = pl.tile.add(x_tile, x_tile)
                                              ret0_store = pl.tile.store(y, [0], ret0_out); return ret0_store
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.enums import FunctionType, MemorySpace, ParamDirection
from pypto.ir.expr import Call, Expr, GlobalVar, IterArg, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import (AssignStmt, EvalStmt, ForStmt, IfStmt, ReturnStmt, ScopeStmt, SeqStmts, Stmt, WhileStmt,
                           YieldStmt)
from pypto.ir.types import TensorType, TileType
from pypto.ir.visitor import IRMutator, IRVisitor, substitute
from pypto.ir.equality import structural_equal
from pypto.passes.analysis import as_seq, body_list
from pypto.passes.convert_tensor_to_tile_ops.registry import CONVERTERS, SELF_LOADING, zeros
from pypto.passes.manager import Pass
from pypto.passes.properties import IRProperty, PassProperties

_KERNEL = (FunctionType.InCore,)
_MATMULS = ("tensor.matmul", "tensor.matmul_acc")


def _is_tensor_op(e) -> bool:
    return isinstance(e, Call) and not isinstance(e.op, GlobalVar) and e.op.name.startswith("tensor.")


def _self_loading(call: Call) -> bool:
    return call.op.name in SELF_LOADING or bool(getattr(call.op, "self_loading", False))


class _EntryLoadScan(IRVisitor):
    """Tensor params that a converted (non-self-loading) op reads directly, and slices feeding matmuls."""

    def __init__(self, params):
        self.params = set(params)
        self.needs_load: dict = {}
        self.matmul_operands: set = set()

    def visit_call(self, c):
        if _is_tensor_op(c):
            if c.op.name in _MATMULS:
                self.matmul_operands.update(a for a in c.args if isinstance(a, Var))
            if not _self_loading(c):
                for a in c.args:
                    if a in self.params and isinstance(a.type, TensorType):
                        self.needs_load.setdefault(a, None)
        self.visit_children(c)


class ConversionContext:
    """What a converter may ask while rewriting one call (see registry.py)."""

    def __init__(self, converter: "_KernelConverter", var):
        self.k = converter
        self.var = var
        self.pre: list = []
        self.feeds_matmul = var in converter.matmul_operands

    def plain(self, e: Expr) -> Expr:
        return substitute(e, self.k.renamed)

    def tile(self, e: Expr) -> Expr:
        e = self.plain(e)
        if e in self.k.param_tiles:
            return self.k.param_tiles[e]
        if isinstance(e, Var) and isinstance(e.type, TensorType):
            raise UnsupportedError(f"ConvertTensorToTileOps: tensor '{e.name_hint}' is used by a tile-level "
                                   "computation but has no on-chip copy", e.span,
                                   hint="load it with pl.load or slice it first")
        return e

    def emit(self, stmt: Stmt) -> None:
        self.pre.append(stmt)

    def bind(self, name: str, value: Expr) -> Var:
        """Emit `name = value` before the converted statement; return the new Var."""
        var = Var(name, value.type, value.span)
        self.pre.append(AssignStmt(var, value, value.span))
        return var

    def note_written(self, tensor: Var) -> None:
        self.k.written.add(tensor)


class _KernelConverter:
    def __init__(self, func: Function):
        self.func = func
        self.renamed: dict = {}
        self.param_tiles: dict = {}
        self.written: set = set()
        scan = _EntryLoadScan(func.params)
        scan.visit(func.body)
        self.entry = list(scan.needs_load)
        self.matmul_operands = scan.matmul_operands

    # -- statements --------------------------------------------------------------
    def body(self, stmt) -> SeqStmts:
        out: list = []
        for s in body_list(stmt):
            out += self.stmt(s)
        return as_seq(out, getattr(stmt, "span", None))

    def retyped(self, var: Var, new_type) -> Var:
        if structural_equal(var.type, new_type):
            return var
        new = Var(var.name_hint, new_type, var.span)
        self.renamed[var] = new
        return new

    def stmt(self, s: Stmt) -> list:
        if isinstance(s, AssignStmt):
            if _is_tensor_op(s.value):
                ctx = ConversionContext(self, s.var)
                value = self.convert(s.value, ctx)
                return ctx.pre + [AssignStmt(self.retyped(s.var, value.type), value, s.span)]
            value = substitute(s.value, self.renamed)
            return [AssignStmt(self.retyped(s.var, value.type), value, s.span)]
        if isinstance(s, EvalStmt) and _is_tensor_op(s.expr):
            ctx = ConversionContext(self, None)
            value = self.convert(s.expr, ctx)
            return ctx.pre + [EvalStmt(value, s.span)]
        if isinstance(s, ForStmt):
            iter_args = self.iter_args(s.iter_args)
            body = self.body(s.body)
            rvs = [self.retyped(rv, ia.type) for rv, ia in zip(s.return_vars, iter_args)]
            return [s.replace(start=substitute(s.start, self.renamed), stop=substitute(s.stop, self.renamed),
                              step=substitute(s.step, self.renamed), iter_args=tuple(iter_args), body=body,
                              return_vars=tuple(rvs))]
        if isinstance(s, WhileStmt):
            iter_args = self.iter_args(s.iter_args)
            cond = substitute(s.condition, self.renamed)
            body = self.body(s.body)
            rvs = [self.retyped(rv, ia.type) for rv, ia in zip(s.return_vars, iter_args)]
            return [s.replace(iter_args=tuple(iter_args), condition=cond, body=body, return_vars=tuple(rvs))]
        if isinstance(s, IfStmt):
            cond = substitute(s.condition, self.renamed)
            then_b = self.body(s.then_body)
            else_b = self.body(s.else_body) if s.else_body is not None else None
            tail = then_b.stmts[-1] if then_b.stmts else None
            types = [v.type for v in tail.values] if isinstance(tail, YieldStmt) else [rv.type for rv in s.return_vars]
            rvs = [self.retyped(rv, t) for rv, t in zip(s.return_vars, types)]
            return [s.replace(condition=cond, then_body=then_b, else_body=else_b, return_vars=tuple(rvs))]
        if isinstance(s, ScopeStmt):
            return [s.replace(body=self.body(s.body))]
        return [substitute(s, self.renamed)]

    def iter_args(self, iter_args) -> list:
        out = []
        for ia in iter_args:
            init = substitute(ia.init_value, self.renamed)
            init = self.param_tiles.get(init, init)
            if init is ia.init_value and structural_equal(init.type, ia.type):
                out.append(ia)
                continue
            new = IterArg(ia.name_hint, init.type, init, ia.span)
            self.renamed[ia] = new
            out.append(new)
        return out

    def convert(self, call: Call, ctx: ConversionContext) -> Expr:
        fn = CONVERTERS.get(call.op.name)
        if fn is None:
            raise UnsupportedError(f"ConvertTensorToTileOps: no tile-level conversion is registered for "
                                   f"{call.op.name}", call.span,
                                   hint="write the kernel with pl.tile.* ops, or register a converter")
        return fn(call, ctx)

    # -- the function --------------------------------------------------------------
    def run(self) -> tuple:
        """(converted function, types of the Out params added for its returned tiles)."""
        f = self.func
        entry = []
        for p in self.entry:
            shape = list(p.type.shape)
            load = create_op_call("tile.load", [p, zeros(len(shape)), shape, shape],
                                  {"target_memory": MemorySpace.Vec}, p.span)
            tile = Var(f"{p.name_hint}_tile", load.type, p.span)
            self.param_tiles[p] = tile
            entry.append(AssignStmt(tile, load, p.span))
        stmts = list(self.body(f.body).stmts)
        params = list(f.params)
        directions = list(f.param_directions)
        added: list = []
        if stmts and isinstance(stmts[-1], ReturnStmt):
            ret = stmts.pop()
            values = []
            for i, (v, rt) in enumerate(zip(ret.values, f.return_types)):
                if isinstance(v.type, TileType) and isinstance(rt, TensorType):
                    out = Var(f"ret{i}_out", rt, ret.span)
                    params.append(out)
                    directions.append(ParamDirection.Out)
                    added.append(out)
                    store = create_op_call("tile.store", [v, zeros(len(rt.shape)), out], {}, ret.span)
                    sv = Var(f"ret{i}_store", store.type, ret.span)
                    stmts.append(AssignStmt(sv, store, ret.span))
                    values.append(sv)
                else:
                    values.append(v)
            stmts.append(ReturnStmt(values, ret.span))
        for i, p in enumerate(f.params):
            # a tensor the kernel now writes cannot stay In: Out, or InOut when it is also read
            if p in self.written and directions[i] is ParamDirection.In:
                directions[i] = ParamDirection.InOut if p in self.param_tiles else ParamDirection.Out
        new = f.replace(params=tuple(params), param_directions=tuple(directions),
                        body=as_seq(entry + stmts, f.body.span))
        return new, added


class _WrapperForward(IRMutator):
    """Phase 2a: the first inner call to a converted kernel gets the wrapper's new Out params appended."""

    def __init__(self, added: dict):
        self.added = added
        self.new_params: list = []

    def mutate_call(self, c: Call):
        c = self.mutate_children(c)
        if isinstance(c.op, GlobalVar) and c.op.name in self.added and not self.new_params:
            self.new_params = [Var(p.name_hint, p.type, p.span) for p in self.added[c.op.name]]
            return c.replace(args=c.args + tuple(self.new_params))
        return c


class _CallSiteUpdate(IRMutator):
    """Phase 2b: a `tensor.create` per new Out param before each call, passed as the extra argument."""

    def __init__(self, added: dict):
        self.added = added

    def mutate_seq_stmts(self, s: SeqStmts):
        out: list = []
        for x in s.stmts:
            call = x.value if isinstance(x, AssignStmt) else x.expr if isinstance(x, EvalStmt) else None
            if not self._target(call):
                out.append(self.mutate(x))
                continue
            creates = []
            for p in self.added[call.op.name]:
                create = create_op_call("tensor.create", [list(p.type.shape)], {"dtype": p.type.dtype}, call.span)
                v = Var(p.name_hint, create.type, call.span)
                creates.append(v)
                out.append(AssignStmt(v, create, call.span))
            new_call = call.replace(args=call.args + tuple(creates))
            out.append(x.replace(value=new_call) if isinstance(x, AssignStmt) else x.replace(expr=new_call))
        return as_seq(out, s.span)

    def _target(self, call) -> bool:
        return isinstance(call, Call) and isinstance(call.op, GlobalVar) and call.op.name in self.added


def _run(program: Program) -> Program:
    funcs = dict(program.functions)
    added: dict = {}
    for name, f in program.functions.items():
        if f.func_type in _KERNEL:
            new, outs = _KernelConverter(f).run()
            funcs[name] = new
            if outs:
                added[name] = outs
    if not added:
        return program.with_functions(funcs.values())
    # Phase 2a: Spmd / Group wrappers mirror the new Out params of the kernel they forward to.
    for name, f in list(funcs.items()):
        if f.func_type in (FunctionType.Spmd, FunctionType.Group):
            fw = _WrapperForward(added)
            body = fw.mutate(f.body)
            if fw.new_params:
                funcs[name] = f.replace(params=f.params + tuple(fw.new_params), body=body,
                                        param_directions=f.param_directions + (ParamDirection.Out,) * len(fw.new_params))
                added[name] = fw.new_params
    # Phase 2b: orchestration / opaque callers allocate the new outputs.
    for name, f in list(funcs.items()):
        if f.func_type in (FunctionType.Orchestration, FunctionType.Opaque):
            body = f.body if isinstance(f.body, SeqStmts) else SeqStmts([f.body])
            funcs[name] = f.replace(body=_CallSiteUpdate(added).mutate(body))
    return program.with_functions(funcs.values())


def convert_tensor_to_tile_ops() -> Pass:
    nss, ssa = IRProperty.NormalizedStmtStructure, IRProperty.SSAForm
    return Pass("ConvertTensorToTileOps", _run,
                PassProperties(required={ssa, IRProperty.SplitIncoreOrch, nss},
                               produced={ssa, IRProperty.IncoreTileOps, nss}))
