"""ConvertTensorToTileOps: lower tensor.* ops in InCore kernels to tile.* ops and fix up call sites.

Requires: SSAForm, SplitIncoreOrch, NormalizedStmtStructure
Produces: SSAForm, IncoreTileOps, NormalizedStmtStructure / Invalidates: —
Seed 003 (ConvertTensorToTileOps), phase 1 core + phases 2a / 2b; reference pass doc 10.

Phase 1 (each InCore function): first the GM stores are put on one path per tensor (a full init plus
scalar updates is staged in UB: staged_updates.py; a constant contiguous fill loop becomes one bulk
store: fill_loops.py; a tensor still written both by DMA and by scalar stores is rejected:
store_paths.py); then an entry `tile.load(p, zeros, shape, shape, target_memory=Vec)`
for each tensor param a converted op reads directly (self-loading ops — slice, read, write,
assemble, matmul — read GM themselves); each tensor op rewritten through the conversion
registry, types propagated through iter_args / return_vars; each returned tile stored with
`tile.store` into a new trailing Out param `ret<i>_out`, the store result returned (a result built
by a tile.assemble loop instead stores each piece into the Out param: assemble_loop.py).
Phase 2a: Spmd / Group wrappers forward the new Out params to their inner call.
Phase 2b: Orchestration / Opaque call sites create one `tensor.create` per new Out param.

    before:  def k(x) -> Tensor:             y = pl.add(x, x); return y
    after:   def k(x, ret0_out: Out) -> Tensor: x_tile = pl.tile.load(x, [0], [64], [64]); y = pl.tile.add(x_tile, x_tile)
                                              ret0_store = pl.tile.store(y, [0], ret0_out); return ret0_store
"""

from __future__ import annotations

from pypto.errors import InternalError, UnsupportedError, ValueCheckError
from pypto.ir.enums import FunctionType, MemorySpace, ParamDirection
from pypto.ir.expr import Call, Expr, GlobalVar, IterArg, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import (AssignStmt, EvalStmt, ForStmt, IfStmt, ReturnStmt, ScopeStmt, SeqStmts, Stmt, WhileStmt,
                           YieldStmt)
from pypto.ir.types import TensorType, TileType
from pypto.ir.visitor import IRMutator, IRVisitor, substitute
from pypto.ir.equality import structural_equal
from pypto.ir.verifier import tensor_ops_in_kernel
from pypto.passes.analysis import as_seq, as_seq_like, body_list, used_vars
from pypto.passes.convert_tensor_to_tile_ops.assemble_loop import store_loop
from pypto.passes.convert_tensor_to_tile_ops.call_sites import CallSiteUpdate, WrapperForward
from pypto.passes.convert_tensor_to_tile_ops.registry import CONVERTERS, SELF_LOADING, zeros
from pypto.passes.convert_tensor_to_tile_ops.special import LOWERED_TILE_OPS
from pypto.passes.convert_tensor_to_tile_ops import division as _division  # noqa: F401  (registers tensor.div)
from pypto.passes.convert_tensor_to_tile_ops import gather_lowering as _gather_lowering  # noqa: F401
from pypto.passes.convert_tensor_to_tile_ops import scatter_lowering as _scatter_lowering  # noqa: F401
from pypto.passes.convert_tensor_to_tile_ops import expand_clone as _expand_clone  # noqa: F401
from pypto.passes.convert_tensor_to_tile_ops.registry import check_gm_source as _check_gm_source
from pypto.passes.convert_tensor_to_tile_ops.param_access import param_access, promote_callers, promoted
from pypto.passes.convert_tensor_to_tile_ops.fill_loops import bulk_fill_loops
from pypto.passes.convert_tensor_to_tile_ops.staged_updates import stage_scalar_updates
from pypto.passes.convert_tensor_to_tile_ops.store_paths import check_store_paths
from pypto.passes.base import Pass
from pypto.passes.properties import IRProperty, PassProperties

_KERNEL = (FunctionType.InCore,)
_MATMULS = ("tensor.matmul", "tensor.matmul_acc")
# ops whose result is their operand's data under another shape / valid region: a matmul's demand for a
# Mat operand reaches through them to the slice that loads it
_OPERAND_VIEWS = ("tensor.reshape", "tensor.set_validshape")


def _is_tensor_op(e) -> bool:
    """A call this pass rewrites: a tensor op, or a tile op that is lowered like its tensor form."""
    return isinstance(e, Call) and not isinstance(e.op, GlobalVar) and (
        e.op.category == "tensor" or e.op.name in LOWERED_TILE_OPS or e.op.name in _CONVERTED_PLD_OPS)


# distributed tensor-level ops this pass turns into their tile form (the others stay for LowerCompositeOps)
_CONVERTED_PLD_OPS = {"pld.tensor.remote_store", "pld.tensor.put", "pld.tensor.get"}


def _self_loading(call: Call) -> bool:
    return call.op.name in SELF_LOADING or bool(getattr(call.op, "self_loading", False))


class _EntryLoadScan(IRVisitor):
    """Tensor params that a converted (non-self-loading) op reads directly, and slices feeding matmuls."""

    def __init__(self, params):
        self.params = set(params)
        self.needs_load: dict = {}
        self.matmul_operands: set = set()
        self.sources: dict = {}      # x → y for `x = y` and `x = tensor.reshape / set_validshape(y, ...)`

    def visit_assign_stmt(self, s):
        v = s.value
        if isinstance(v, Var):
            self.sources[s.var] = v
        elif isinstance(v, Call) and getattr(v.op, "name", "") in _OPERAND_VIEWS and isinstance(v.args[0], Var):
            self.sources[s.var] = v.args[0]
        self.visit_children(s)

    def operands_through_aliases(self) -> set:
        """A slice that reaches a matmul through plain aliases, a reshape or a set_validshape also loads into
        Mat (seed 003, MatmulSlice): close the operand set over those edges."""
        found = set(self.matmul_operands)
        todo = list(found)
        while todo:
            src = self.sources.get(todo.pop())
            if src is not None and src not in found:
                found.add(src)
                todo.append(src)
        return found

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
        if isinstance(e, IterArg) and isinstance(e.type, TensorType) and e in self.k.carry_origin:
            raise _CarryNeedsTile(self.k.carry_origin[e])
        if isinstance(e, Var) and e in self.k.params and isinstance(e.type, TensorType):
            return self.k.param_tile(e)
        if isinstance(e, Var) and e in self.k.gm_views:     # a zero-copy GM view: load it where it is read
            return self.k.as_tile(e, self.pre)
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
        self.k.written.add(self.k.gm_views.get(tensor, tensor))

    def note_view(self, source: Var) -> None:
        """The converted statement's Var is a zero-copy view of GM tensor `source` (tensor.view)."""
        if self.var is not None:
            self.k.gm_views[self.var] = self.k.gm_views.get(source, source)


class _CarryNeedsTile(Exception):
    """A converted op reads a loop-carried tensor: the loop must carry a tile instead (retried)."""

    def __init__(self, iter_arg, space=None):
        super().__init__(iter_arg.name_hint)
        self.iter_arg = iter_arg
        self.space = space      # set: the carry starts from a tensor.create that must land in this space


class _KernelConverter:
    def __init__(self, func: Function):
        self.func = func
        self.params = set(func.params)
        self.renamed: dict = {}
        self.param_tiles: dict = {}
        self.entry: list = []            # entry tile.load statements (emitted in parameter order)
        self.written: set = set()
        self.gm_views: dict = {}         # Var of a tensor.view of GM → the tensor it views (its root)
        self.tile_carries: set = set()   # original IterArgs that carry a tile
        self.carry_space: dict = {}      # original IterArg → memory space its created init must use
        self.created: dict = {}          # tile Var from a converted tensor.create → its tile.create call
        self.carry_origin: dict = {}     # IterArg (original or rebuilt) → original IterArg
        scan = _EntryLoadScan(func.params)
        scan.visit(func.body)
        self.matmul_operands = scan.operands_through_aliases()
        for p in scan.needs_load:
            self.param_tile(p)

    def param_tile(self, p: Var) -> Var:
        """The entry `tile.load` of a tensor param (created on first request)."""
        tile = self.param_tiles.get(p)
        if tile is None:
            shape = list(p.type.shape)
            load = create_op_call("tile.load", [p, zeros(len(shape)), shape, shape],
                                  {"target_memory": MemorySpace.Vec}, p.span)
            tile = Var(f"{p.name_hint}_tile", load.type, p.span)
            self.param_tiles[p] = tile
            self.entry.append(AssignStmt(tile, load, p.span))
        return tile

    def as_tile(self, value: Expr, pre: list) -> Expr:
        """`value` as an on-chip tile: params via their entry load, other GM tensors loaded in place."""
        if not isinstance(value.type, TensorType):
            return value
        if value in self.params:
            return self.param_tile(value)
        shape = list(value.type.shape)
        load = create_op_call("tile.load", [value, zeros(len(shape)), shape, shape],
                              {"target_memory": MemorySpace.Vec}, value.span)
        tile = Var(f"{getattr(value, 'name_hint', 't')}_tile", load.type, value.span)
        pre.append(AssignStmt(tile, load, value.span))
        return tile

    # -- statements --------------------------------------------------------------
    def body(self, stmt) -> SeqStmts:
        out: list = []
        for s in body_list(stmt):
            out += self.stmt(s)
        return as_seq_like(out, stmt)

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
                var = self.retyped(s.var, value.type)
                if s.value.op.name == "tensor.create" and isinstance(value, Call):
                    self.created[var] = value
                return ctx.pre + [AssignStmt(var, value, s.span)]
            value = substitute(s.value, self.renamed)
            if value in self.param_tiles:       # `y = x` of a param loaded at entry aliases its tile
                value = self.param_tiles[value]
            _check_gm_source(value)
            return [s.replace(var=self.retyped(s.var, value.type), value=value)]
        if isinstance(s, EvalStmt) and _is_tensor_op(s.expr):
            ctx = ConversionContext(self, None)
            value = self.convert(s.expr, ctx)
            return ctx.pre + [EvalStmt(value, s.span)]
        if isinstance(s, (ForStmt, WhileStmt)):
            return self.loop(s)
        if isinstance(s, IfStmt):
            return self.if_stmt(s)
        if isinstance(s, ScopeStmt):
            return [s.replace(body=self.body(s.body))]
        out = substitute(s, self.renamed)
        if isinstance(out, EvalStmt):
            _check_gm_source(out.expr)
        return [out]

    def loop(self, s) -> list:
        """Convert a loop; a carry that the body turns into a tile is retried as a tile carry."""
        while True:
            try:
                return self._loop_once(s)
            except _CarryNeedsTile as e:
                if e.space is not None and e.iter_arg in s.iter_args and e.iter_arg not in self.carry_space:
                    self.carry_space[e.iter_arg] = e.space
                    continue
                if e.iter_arg not in s.iter_args or e.iter_arg in self.tile_carries:
                    raise
                self.tile_carries.add(e.iter_arg)

    def _loop_once(self, s) -> list:
        pre: list = []
        iter_args = self.iter_args(s.iter_args, pre)
        fields = {}
        if isinstance(s, ForStmt):
            fields = {k: substitute(getattr(s, k), self.renamed) for k in ("start", "stop", "step")}
        else:
            fields["condition"] = substitute(s.condition, self.renamed)
        stmts = list(self.body(s.body).stmts)
        if stmts and isinstance(stmts[-1], YieldStmt):
            values = list(stmts[-1].values)
            for k, ia in enumerate(iter_args):
                if k < len(values) and isinstance(values[k].type, TileType) and isinstance(ia.type, TensorType):
                    raise _CarryNeedsTile(s.iter_args[k])
                if (k < len(values) and isinstance(values[k].type, TileType) and isinstance(ia.type, TileType)
                        and values[k].type.memory_space is not ia.type.memory_space and ia.init_value in self.created):
                    # e.g. an accumulator created in Vec but carried through matmul results in Acc
                    raise _CarryNeedsTile(s.iter_args[k], values[k].type.memory_space)
                if k < len(values) and isinstance(ia.type, TileType):
                    values[k] = self.as_tile(values[k], pre_yield := [])
                    stmts[-1:-1] = pre_yield
            stmts[-1] = YieldStmt(values, stmts[-1].span)
        rvs = [self.retyped(rv, ia.type) for rv, ia in zip(s.return_vars, iter_args)]
        return pre + [s.replace(iter_args=tuple(iter_args), body=as_seq(stmts, s.body.span),
                                return_vars=tuple(rvs), **fields)]

    def if_stmt(self, s: IfStmt) -> list:
        cond = substitute(s.condition, self.renamed)
        then_b = list(self.body(s.then_body).stmts)
        else_b = list(self.body(s.else_body).stmts) if s.else_body is not None else None
        then_y = then_b[-1] if then_b and isinstance(then_b[-1], YieldStmt) else None
        else_y = else_b[-1] if else_b and isinstance(else_b[-1], YieldStmt) else None
        if then_y is not None and else_y is not None:
            # a phi of a tile and a GM tensor carries the tile: the tensor side is loaded
            tv, ev = list(then_y.values), list(else_y.values)
            for k in range(min(len(tv), len(ev))):
                if isinstance(tv[k].type, TileType) and isinstance(ev[k].type, TensorType):
                    ev[k] = self.as_tile(ev[k], pre := [])
                    else_b[-1:-1] = pre
                elif isinstance(ev[k].type, TileType) and isinstance(tv[k].type, TensorType):
                    tv[k] = self.as_tile(tv[k], pre := [])
                    then_b[-1:-1] = pre
            then_b[-1] = YieldStmt(tv, then_y.span)
            else_b[-1] = YieldStmt(ev, else_y.span)
        types = [v.type for v in then_b[-1].values] if then_y is not None else [rv.type for rv in s.return_vars]
        rvs = [self.retyped(rv, t) for rv, t in zip(s.return_vars, types)]
        return [s.replace(condition=cond, then_body=as_seq(then_b, s.then_body.span),
                          else_body=as_seq(else_b, s.else_body.span) if else_b is not None else None,
                          return_vars=tuple(rvs))]

    def iter_args(self, iter_args, pre: list) -> list:
        out = []
        for ia in iter_args:
            init = substitute(ia.init_value, self.renamed)
            if ia in self.tile_carries:
                init = self.as_tile(init, pre)
            else:
                init = self.param_tiles.get(init, init)
            if ia in self.carry_space and init in self.created:
                kwargs = dict(self.created[init].kwargs, target_memory=self.carry_space[ia])
                call = create_op_call("tile.create", list(self.created[init].args), kwargs, init.span)
                init = Var(init.name_hint, call.type, init.span)
                pre.append(AssignStmt(init, call, init.span))
            if init is ia.init_value and structural_equal(init.type, ia.type):
                new = ia
            else:
                new = IterArg(ia.name_hint, init.type, init, ia.span)
                self.renamed[ia] = new
            self.carry_origin[new] = ia
            out.append(new)
        return out

    def _drop_unused_creates(self, body: SeqStmts) -> SeqStmts:
        """A created tile replaced by one in another memory space (see carry_space) is dead: drop it."""
        used = set(used_vars(body))
        dead = {v for v in self.created if v not in used}
        if not dead:
            return body

        class _Drop(IRMutator):
            def mutate_seq_stmts(self, seq):
                seq = self.mutate_children(seq)
                keep = [x for x in seq.stmts if not (isinstance(x, AssignStmt) and x.var in dead)]
                return seq if len(keep) == len(seq.stmts) else seq.replace(stmts=tuple(keep))

        return _Drop().mutate(body)

    def convert(self, call: Call, ctx: ConversionContext) -> Expr:
        fn = CONVERTERS.get(call.op.name)
        if fn is None:     # every tensor op has a converter (tests/ir/test_op_coverage.py): a compiler gap
            raise InternalError(f"ConvertTensorToTileOps: tensor op '{call.op.name}' has no registered tile "
                                "conversion", call.span,
                                hint="write the kernel with pl.tile.* ops; a converter belongs in "
                                     "pypto/passes/convert_tensor_to_tile_ops/")
        return fn(call, ctx)

    # -- the function --------------------------------------------------------------
    def run(self) -> tuple:
        """(converted function, types of the Out params added for its returned tiles)."""
        f = self.func
        stmts = list(self._drop_unused_creates(self.body(f.body)).stmts)
        order = {p: i for i, p in enumerate(f.params)}
        entry = sorted(self.entry, key=lambda st: order.get(st.value.args[0], len(order)))   # parameter order
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
                    rewritten = store_loop(stmts, v, out)
                    if rewritten is not None:       # an assemble loop stores its pieces into the Out param
                        stmts, result = rewritten
                        values.append(result)
                        continue
                    store = create_op_call("tile.store", [v, zeros(len(rt.shape)), out], {}, ret.span)
                    sv = Var(f"ret{i}_store", store.type, ret.span)
                    stmts.append(AssignStmt(sv, store, ret.span))
                    values.append(sv)
                else:
                    values.append(v)
            same = len(values) == len(ret.values) and all(a is b for a, b in zip(values, ret.values))
            stmts.append(ret if same else ReturnStmt(values, ret.span))
        body = as_seq_like(entry + stmts, f.body)
        access = param_access(body, f.params)
        for i, p in enumerate(f.params):
            # a tensor the kernel now writes cannot stay In: Out, or InOut when it is also read
            if p in self.written and directions[i] is ParamDirection.In:
                directions[i] = ParamDirection.InOut if p in self.param_tiles else ParamDirection.Out
            elif p in access:
                directions[i] = promoted(directions[i], *access[p])
        self.promoted = {i: d for i, d in enumerate(directions[:len(f.params)]) if d is not f.param_directions[i]}
        new = f.replace(params=tuple(params) if added else f.params,
                        param_directions=tuple(directions) if directions != list(f.param_directions) else f.param_directions,
                        body=body)
        return new, added


def _refuse_tensor_ops(f: Function) -> None:
    """Hand-written AIC / AIV kernels are tile-level: this pass converts only InCore kernels, so a tensor op
    written in one is the author's to change (it would otherwise surface as a failed property check)."""
    left = tensor_ops_in_kernel(f)
    if left:
        c = left[0]
        raise UnsupportedError(f"tensor op '{c.op.name}' in the hand-written {f.func_type.name} kernel '{f.name}': "
                               f"such kernels work on tiles", c.span,
                               hint="load the tensor into a tile (pl.load) and use the tile op, or declare the "
                                    "kernel @pl.function(type=pl.FunctionType.InCore) so the compiler converts it")


def _run(program: Program) -> Program:
    funcs = dict(program.functions)
    added: dict = {}
    promoted_params: dict = {}
    for name, f in program.functions.items():
        if f.func_type in (FunctionType.AIC, FunctionType.AIV):
            _refuse_tensor_ops(f)
        if f.func_type in _KERNEL:
            f = bulk_fill_loops(stage_scalar_updates(f))
            check_store_paths(f)
            conv = _KernelConverter(f)
            new, outs = conv.run()
            funcs[name] = new
            if outs:
                added[name] = outs
            if conv.promoted:
                promoted_params[name] = conv.promoted
    promote_callers(funcs, promoted_params)
    if not added:
        return program.with_functions(funcs.values())
    # Phase 2a: Spmd / Group wrappers mirror the new Out params of the kernel they forward to.
    for name, f in list(funcs.items()):
        if f.func_type in (FunctionType.Spmd, FunctionType.Group):
            fw = WrapperForward(added)
            body = fw.mutate(f.body)
            if fw.new_params:
                funcs[name] = f.replace(params=f.params + tuple(fw.new_params), body=body,
                                        param_directions=f.param_directions + (ParamDirection.Out,) * len(fw.new_params))
                added[name] = fw.new_params
    # Phase 2b: orchestration / opaque callers allocate the new outputs.
    for name, f in list(funcs.items()):
        if f.func_type in (FunctionType.Orchestration, FunctionType.Opaque):
            body = f.body if isinstance(f.body, SeqStmts) else SeqStmts([f.body])
            funcs[name] = f.replace(body=CallSiteUpdate(added).mutate(body))
    return program.with_functions(funcs.values())


def convert_tensor_to_tile_ops() -> Pass:
    nss, ssa = IRProperty.NormalizedStmtStructure, IRProperty.SSAForm
    return Pass("ConvertTensorToTileOps", _run,
                PassProperties(required={ssa, IRProperty.SplitIncoreOrch, nss},
                               produced={ssa, IRProperty.IncoreTileOps, nss}))
