"""InitMemRef, GM part: every tensor Var gets a DDR MemRef, so "which tensors are one buffer" is
written in the IR the way it is for tiles (reference: pass doc 31, compiler-and-runtime.md §1.2).

GM belongs to the runtime: a DDR base is a Ptr Var that no statement binds (no `tile.alloc`, and
AllocateMemoryAddr never places it); it prints as the by-name form `pl.MemRef('mem_ddr_0', 0, 16384)`,
which the parser interns per function, so every annotation naming it reads back as one base.

Rules (first match):
  - a tensor parameter, or a tensor made by any other op (`tensor.create`, a kernel call, ...):
    a fresh base `mem_ddr_<k>` of the tensor's byte size (0 when the shape is dynamic);
  - a plain alias `y = x`: x's MemRef;
  - an op whose OpDef writes into a GM tensor and returns it (`reuses_input`, e.g. `tile.store`
    → its output tensor, `tensor.assemble` → its target): that input's MemRef;
  - a view (`tensor.slice`, `tensor.view`, `tensor.reshape`, `tensor.reinterpret_view`): the
    source's base, at the source's offset plus the view's (row-major packed sources; a slice of
    a strided source keeps the source's offset), sized by the view's shape;
  - loop iter args and results take their init's MemRef (one carried buffer), if results the
    then-branch value's (the printed result type is the iter arg's / then value's).

    before:  out2: pl.Tensor[[64], pl.FP32] = pl.tile.store(t, [0], out)
    after:   out: pl.Out[pl.Tensor[[64], pl.FP32, pl.MemRef('mem_ddr_1', 0, 256)]]
             out2: pl.Tensor[[64], pl.FP32, pl.MemRef('mem_ddr_1', 0, 256)] = pl.tile.store(t, [0], out)
"""

from __future__ import annotations

from typing import Optional, Sequence

from pypto.ir.dtypes import INDEX
from pypto.ir.expr import BinaryExpr, Call, ConstInt, GlobalVar, MakeTuple, Var
from pypto.ir.function import Function
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt, IfStmt, ReturnStmt, ScopeStmt, WhileStmt
from pypto.ir.types import MemRef, PtrType, TensorType, TileType
from pypto.passes.analysis import VarMemRefs, add_index, as_seq, body_list
from pypto.passes.memory.loop_carry_buffers import yielded

TENSOR_VIEWS = ("tensor.slice", "tensor.view", "tensor.reshape", "tensor.reinterpret_view")


def _scaled(e, factor: int):
    if isinstance(e, ConstInt):
        return ConstInt(e.value * factor, INDEX)
    return e if factor == 1 else BinaryExpr("mul", e, ConstInt(factor, INDEX), INDEX)


def slice_byte_offset(source: TensorType, offsets) -> object:
    """The byte offset of a window at `offsets` inside a packed row-major `source`
    (ConstInt(0) when the source is strided or its shape dynamic: the view then keeps the source's start)."""
    dims = [d.value if isinstance(d, ConstInt) else None for d in source.shape]
    if (source.tensor_view is not None and source.tensor_view.stride) or None in dims[1:]:
        return ConstInt(0, INDEX)
    total = ConstInt(0, INDEX)
    stride = source.dtype.get_byte()
    for axis in range(len(dims) - 1, -1, -1):
        if axis < len(offsets):
            total = add_index(total, _scaled(offsets[axis], stride))
        stride *= dims[axis] if dims[axis] is not None else 1
    return total


class _Planner:
    """Walks one function in program order and decides each tensor Var's MemRef."""

    def __init__(self):
        self.memref: dict = {}
        self.count = 0

    def fresh(self, v: Var) -> MemRef:
        base = Var(f"mem_ddr_{self.count}", PtrType(), v.span)
        self.count += 1
        return MemRef(base, 0, v.type.nbytes() or 0)

    def ref(self, e):
        if isinstance(e, Var) and isinstance(e.type, TensorType):
            return self.memref.get(e, e.type.memref)
        return None

    def set(self, v, ref) -> None:
        if isinstance(v, Var) and isinstance(v.type, TensorType):
            self.memref[v] = ref if ref is not None else (v.type.memref or self.fresh(v))

    def plan(self, func: Function) -> dict:
        for p in func.params:
            self.set(p, None)
        self.stmts(body_list(func.body))
        return self.memref

    def stmts(self, stmts: list) -> None:
        for s in stmts:
            if isinstance(s, AssignStmt):
                if isinstance(s.var.type, TensorType):
                    self.set(s.var, self.value_ref(s.var, s.value))
            elif isinstance(s, (ForStmt, WhileStmt)):
                for ia in s.iter_args:
                    self.set(ia, self.ref(ia.init_value))
                self.stmts(body_list(s.body))
                for ia, rv in zip(s.iter_args, s.return_vars):     # the text form: result type = iter arg's
                    self.set(rv, self.ref(ia))
            elif isinstance(s, IfStmt):
                self.stmts(body_list(s.then_body))
                if s.else_body is not None:
                    self.stmts(body_list(s.else_body))
                then_vals = yielded(s.then_body)
                else_vals = yielded(s.else_body) if s.else_body is not None else ()
                for k, rv in enumerate(s.return_vars):
                    ref = self.ref(then_vals[k]) if k < len(then_vals) else None
                    if ref is None and k < len(else_vals):
                        ref = self.ref(else_vals[k])
                    self.set(rv, ref)
            elif isinstance(s, ScopeStmt):
                self.stmts(body_list(s.body))

    def value_ref(self, var: Var, value):
        if isinstance(value, Var):
            return self.ref(value)
        if not isinstance(value, Call) or isinstance(value.op, GlobalVar):
            return None
        op = value.op
        if op.reuses_input is not None and op.reuses_input < len(value.args):
            shared = self.ref(value.args[op.reuses_input])
            if shared is not None:
                return shared
        if op.name in TENSOR_VIEWS and value.args:
            src = self.ref(value.args[0])
            if src is None:
                return None
            extra = ConstInt(0, INDEX)
            if op.name == "tensor.slice" and len(value.args) > 2 and isinstance(value.args[2], MakeTuple):
                extra = slice_byte_offset(value.args[0].type, value.args[2].elements)
            return MemRef(src.base, add_index(src.byte_offset, extra), var.type.nbytes() or src.size)
        return None


class _Retype(VarMemRefs):
    """Retypes each planned tensor Var (params, definitions, iter args, uses) and the Call that
    defines it, so the printed annotation is both types (docs/internals.md §2).

    With `tiles` (InitMemRef's tile plan, Var → MemRef) it retypes the tiles in the same walk, by
    InitMemRef's rule (a call defining a tile takes its Var's new type): one walk of a kernel for
    both plans. A statement is re-deduced only when one of its tensors was retyped (`touched`)."""

    def __init__(self, memref: dict, tiles: Optional[dict] = None):
        super().__init__({**memref, **tiles} if tiles else memref)
        self.tensors = memref
        self.tile_rule = bool(tiles)
        self.touched = False            # a tensor Var was retyped since the flag was last cleared

    def mutate_var(self, v: Var):
        new = super().mutate_var(v)
        if new is not v and v in self.tensors:
            self.touched = True
        return new

    def mutate_assign_stmt(self, s: AssignStmt):
        var = self.mutate(s.var)
        value = self.mutate(s.value)
        if isinstance(value, Call):
            if self.tile_rule and isinstance(var.type, TileType) and isinstance(value.type, TileType):
                value = value.replace(type=var.type)
            elif isinstance(var.type, TensorType) and isinstance(value.type, TensorType) and var is not s.var:
                value = value.replace(type=var.type)
        return s.replace(var=var, value=value)

    def mutate_eval_stmt(self, s: EvalStmt):
        """An unassigned op call's type is its deduced type, which now carries its tensor input's MemRef."""
        self.touched = False
        new = self.mutate_children(s)
        return new.replace(expr=_rededuced(new.expr)) if self.touched else new

    def mutate_return_stmt(self, s: ReturnStmt):
        """`return pl.store(..., out)`: as an unassigned call, the returned op's type is re-deduced."""
        self.touched = False
        new = self.mutate_children(s)
        return new.replace(values=[_rededuced(v) for v in new.values]) if self.touched else new


def _rededuced(call):
    if (isinstance(call, Call) and not isinstance(call.op, GlobalVar) and isinstance(call.type, TensorType)
            and call.op.deduce is not None):
        return call.replace(type=call.op.deduce(tuple(call.args), call.kwargs))
    return call


def attach_ddr_memrefs(func: Function, tiles: Optional[dict] = None, allocs: Sequence = ()) -> Function:
    """`func` with a DDR MemRef on every tensor Var (see the module docstring); with InitMemRef's
    tile plan (`tiles`: Var → MemRef, `allocs`: the statements binding their bases), the tiles
    retyped in the same walk and the allocations put first in the body."""
    memref = _Planner().plan(func)
    if not memref and not tiles and not allocs:
        return func
    retype = _Retype(memref, tiles)
    params = [p if tiles and p in tiles else retype.mutate(p) for p in func.params]   # (tile params keep their type)
    body = retype.mutate(func.body)
    if allocs:
        body = as_seq([*allocs, *body_list(body)], func.body.span)
    if all(a is b for a, b in zip(params, func.params)) and body is func.body:
        return func
    return func.replace(params=params, body=body)
