"""One AIC / AIV kernel → one `func.func` in the PTO dialect, in the reference's fixed order:

    (1) constants   (2) pto.make_tensor_view per tensor param   (3) pto.alloc_tile per tile
    variable at its MemRef's address (variables sharing a MemRef share one handle)   (4) the body

Every op line carries `loc("file.py":line:col)` from its span. SPMD identity
(block_idx / block_num, subblock_idx) arrives as trailing i32 parameters when the kernel
asks for it. This module owns the per-function state (SSA names, constants, handles) and
the statements (pypto/codegen/pto/statements.py); the op emitters (tile.py, system.py, ...)
call the helpers below. It is a 1:1 translation: every decision was made by a pass.
"""

from __future__ import annotations

import re
from typing import Optional

from pypto.errors import InternalError, UnsupportedError
from pypto.ir.dtypes import BOOL, INDEX, INT64, DataType
from pypto.ir.enums import FunctionType, TensorLayout
from pypto.ir.expr import (BinaryExpr, Call, ConstBool, ConstFloat, ConstInt, Expr, MakeTuple, UnaryExpr, Var)
from pypto.ir.function import Function
from pypto.ir.types import CommCtxType, ScalarType, TensorType, TileType
from pypto.codegen.pto import scalars
from pypto.codegen.pto.registry import emitter_for
from pypto.codegen.pto.types import (mlir_dtype, partition_view_type, ptr_type, tensor_view_type, tile_buf_type)

KERNEL_KINDS = {FunctionType.AIC: "cube", FunctionType.AIV: "vector"}
SPMD_PARAMS = {"block_idx": "%__pypto_spmd_block_idx", "block_num": "%__pypto_spmd_block_num",
               "subblock_idx": "%__pypto_spmd_subblock_idx"}


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


class FunctionEmitter:
    """Emits one kernel. Op emitters see it as `ctx`: `ctx.call`, `ctx.value(e)`, `ctx.result`, `ctx.emit(...)`."""

    def __init__(self, func: Function, *, emit_tile_addr: bool = True):
        self.func = func
        self.emit_tile_addr = emit_tile_addr
        self.call: Optional[Call] = None
        self.result_var: Optional[Var] = None
        self.span = None
        self._consts: dict = {}
        self._const_lines: list = []
        self._prologue: list = []
        self._body: list = []
        self._out = self._body
        self._indent = 2
        self._names: dict = {}          # Var -> SSA name
        self._views: dict = {}          # tensor Var -> its tensor_view SSA
        self._types: dict = {}          # SSA name -> type string
        self._taken: set = set()
        self._spmd_used: set = set()
        self._pending_yield: Optional[list] = None
        self._signature: list = []
        self._hidden: dict = {}         # runtime-owned parameter key -> its %argN (after the dynamic dims)
        self._decls: list = []          # module-level declarations the kernel's ops need (emitted once)

    # ------------------------------------------------------------------ names and lines
    def fresh(self, hint: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_]", "_", hint or "v") or "v"
        if base[0].isdigit():
            base = "v" + base
        name, n = f"%{base}", 0
        while name in self._taken:
            n += 1
            name = f"%{base}_{n}"
        self._taken.add(name)
        return name

    def bind(self, var: Var, ssa: str, type_str: str = "") -> None:
        self._names[var] = ssa
        if type_str:
            self._types.setdefault(ssa, type_str)

    def bind_tensor(self, var: Var, ssa: str, view: Optional[str]) -> None:
        self._names[var] = ssa
        if view is not None:
            self._views[var] = view

    def alias_tensor(self, var: Var, source: Expr) -> None:
        """`var` is the GM tensor `source` (a store's result, a loop carry): same pointer, same view."""
        self.bind_tensor(var, self.value(source), self._views.get(source) if isinstance(source, Var) else None)

    def loc(self) -> str:
        s = self.span
        if s is None or not getattr(s, "line", 0) or not getattr(s, "filename", ""):
            return ""
        return f' loc("{_escape(s.filename)}":{s.line}:{s.column})'

    def emit(self, line: str, *, with_loc: bool = True) -> None:
        self._out.append("  " * self._indent + line + (self.loc() if with_loc else ""))

    def structural(self, line: str) -> None:
        self._out.append("  " * self._indent + line)

    def indent(self, delta: int) -> None:
        self._indent += delta

    # ------------------------------------------------------------------ constants and scalar values
    def const(self, value, dtype: DataType) -> str:
        key = (repr(value), dtype.name)
        if key in self._consts:
            return self._consts[key]
        ty = mlir_dtype(dtype)
        if dtype is BOOL:
            literal = "true" if value else "false"
            name = self.fresh(literal)
            ty = ""
        elif dtype.is_float():
            name, literal = self.fresh("cst"), scalars.float_literal(float(value))
        else:
            tag = f"neg{-int(value)}" if int(value) < 0 else str(int(value))
            name, literal = self.fresh(f"c{tag}_{ty}"), str(int(value))
        self._taken.add(name)
        self._consts[key] = name
        self._const_lines.append(f"    {name} = arith.constant {literal}" + (f" : {ty}" if ty else ""))
        self._types[name] = ty or "i1"
        return name

    def const_index(self, value: int) -> str:
        return self.const(int(value), INDEX)

    def value(self, e: Expr) -> str:
        """The SSA name holding e (scalar arithmetic is emitted at the current position)."""
        if isinstance(e, Var):
            name = self._names.get(e)
            if name is None:
                raise InternalError(f"PTO codegen: '{e.name_hint}' is used before its definition in {self.func.name}")
            return name
        if isinstance(e, ConstBool):
            return self.const(e.value, BOOL)
        if isinstance(e, ConstInt):
            return self.const(e.value, e.dtype)
        if isinstance(e, ConstFloat):
            return self.const(e.value, e.dtype)
        if isinstance(e, BinaryExpr):
            return self._binary(e)
        if isinstance(e, UnaryExpr):
            return self._unary(e)
        if isinstance(e, Call):
            raise InternalError("PTO codegen: a nested call reached codegen (FlattenCallExpr must run first)")
        raise UnsupportedError(f"PTO codegen: cannot emit a {type(e).__name__} as a value", e.span)

    def dtype_of(self, e: Expr) -> DataType:
        t = e.type
        if not isinstance(t, ScalarType):
            raise InternalError(f"PTO codegen: expected a scalar, got {type(t).__name__}")
        return t.dtype

    def cast(self, ssa: str, src: DataType, dst: DataType) -> str:
        op = scalars.cast_op(src, dst)
        if op is None:
            return ssa
        out = self.fresh("cast")
        self.emit(f"{out} = {op} {ssa} : {mlir_dtype(src)} to {mlir_dtype(dst)}")
        self._types[out] = mlir_dtype(dst)
        return out

    def value_as(self, e: Expr, dtype: DataType) -> str:
        if isinstance(e, ConstInt) and not dtype.is_float():
            return self.const(e.value, dtype)
        return self.cast(self.value(e), self.dtype_of(e), dtype)

    def index(self, e: Expr) -> str:
        return self.value_as(e, INDEX)

    def _binary(self, e: BinaryExpr) -> str:
        lt = self.dtype_of(e.lhs)
        a, b = self.value(e.lhs), self.value_as(e.rhs, lt)
        out = self.fresh("t")
        ty = mlir_dtype(lt)
        if e.op in ("eq", "ne", "lt", "le", "gt", "ge"):
            op, pred = scalars.compare(e.op, lt)
            self.emit(f"{out} = {op} {pred}, {a}, {b} : {ty}")
            self._types[out] = "i1"
            return out
        self.emit(f"{out} = {scalars.binary_op(e.op, lt)} {a}, {b} : {ty}")
        self._types[out] = ty
        return self.cast(out, lt, e.dtype)

    def _unary(self, e: UnaryExpr) -> str:
        src = self.dtype_of(e.operand)
        x = self.value(e.operand)
        if e.op == "cast":
            return self.cast(x, src, e.dtype)
        ty, out = mlir_dtype(src), self.fresh("t")
        if e.op == "neg":
            line = f"arith.negf {x} : {ty}" if src.is_float() else f"arith.subi {self.const(0, src)}, {x} : {ty}"
        elif e.op == "abs":
            line = f"math.absf {x} : {ty}" if src.is_float() else f"math.absi {x} : {ty}"
        elif e.op == "not":
            line = f"arith.xori {x}, {self.const(True, BOOL)} : i1"
        elif e.op == "bitnot":
            line = f"arith.xori {x}, {self.const(-1, src)} : {ty}"
        else:
            raise UnsupportedError(f"PTO codegen: unary operator '{e.op}' has no arith spelling", e.span)
        self.emit(f"{out} = {line}")
        self._types[out] = ty
        return out

    def indices(self, e: Expr) -> list:
        if not isinstance(e, MakeTuple):
            raise InternalError("PTO codegen: expected a list of offsets / sizes")
        return [self.index(x) for x in e.elements]

    # ------------------------------------------------------------------ typed operands
    def type_of(self, e: Expr) -> str:
        t = e.type
        if isinstance(t, TileType):
            ssa = self._names.get(e) if isinstance(e, Var) else None
            return self._types.get(ssa) or tile_buf_type(t)
        if isinstance(t, CommCtxType):
            return "!pto.ptr<i64>"              # the CommContext words (pypto/codegen/pto/distributed.py)
        if isinstance(t, ScalarType):
            return "i1" if t.dtype is BOOL else mlir_dtype(t.dtype)
        if isinstance(t, TensorType):
            return ptr_type(t)
        return ""

    def tensor_view(self, e: Expr) -> str:
        view = self._views.get(e) if isinstance(e, Var) else None
        if view is None:
            raise InternalError(f"PTO codegen: tensor '{getattr(e, 'name_hint', e)}' has no tensor_view")
        return view

    @property
    def result(self) -> str:
        """The SSA of the current call's result: the tile's buffer handle, or a fresh scalar name."""
        var = self.result_var
        if var is None:
            raise InternalError(f"PTO codegen: {self.call.op.name} needs an assignment target")
        name = self._names.get(var)
        if name is None:
            name = self.fresh(var.name_hint)
            self.bind(var, name, self.type_of(var) if not isinstance(var.type, TileType) else tile_buf_type(var.type))
        return name

    @property
    def result_type(self) -> str:
        return self.type_of(self.result_var) if self.result_var is not None else ""

    def emit_ins_outs(self, pto_op: str, operands=None, *, attr: str = "", outs: Optional[tuple] = None,
                      trailing: str = "") -> None:
        """`pto.op ins(%a, %b [attr] : Ta, Tb) outs(%dst : Td)` — the reference's ins / outs clause."""
        operands = list(self.call.args if operands is None else operands)
        names = ", ".join(self.value(a) for a in operands)
        types = ", ".join(t for t in (self.type_of(a) for a in operands) if t)
        dst, dst_type = outs if outs is not None else (self.result, self.result_type)
        text = f"{pto_op} ins({names}" + (f" {attr}" if attr else "") + (f" : {types}" if types else "")
        self.emit(text + f") outs({dst}" + (f" : {dst_type}" if dst_type else "") + ")" + trailing)

    def partition_view(self, tensor: Expr, offsets: Expr, sizes) -> tuple:
        """%pv = pto.partition_view of a tensor window; returns (ssa, partition type)."""
        view = self.tensor_view(tensor)
        offs = self.indices(offsets)
        size_names = [self.index(s) for s in sizes]
        ptype = partition_view_type(sizes, tensor.type.dtype)
        pv = self.fresh("pview")
        self.emit(f"{pv} = pto.partition_view {view}, offsets = [{', '.join(offs)}], sizes = "
                  f"[{', '.join(size_names)}] : {tensor_view_type(tensor.type)} -> {ptype}")
        return pv, ptype

    def hidden_param(self, key: str, type_str: str) -> str:
        """A runtime-owned parameter (e.g. the raw dispatch-args pointer), appended once after the dynamic dims."""
        if key not in self._hidden:
            arg = f"%arg{len(self._signature)}"
            self._taken.add(arg)
            self._signature.append(f"{arg}: {type_str}")
            self._hidden[key] = arg
        return self._hidden[key]

    def declare(self, line: str) -> None:
        """A module-level declaration (an external function the kernel calls), emitted once before it."""
        if line not in self._decls:
            self._decls.append(line)

    def spmd(self, which: str) -> str:
        self._spmd_used.add(which)
        return SPMD_PARAMS[which]

    # ------------------------------------------------------------------ prologue
    def _make_tensor_views(self, params) -> None:
        """Bind the signature: tensors first (%arg0..), then scalars, then the dynamic dims of the tensor
        shapes (index), as the reference orders them; then one make_tensor_view per tensor."""
        self._out = self._prologue
        tensors = [p for p in params if isinstance(p.type, TensorType)]
        others = [p for p in params if not isinstance(p.type, TensorType)]
        for p in others:
            if not isinstance(p.type, ScalarType):
                raise UnsupportedError(f"PTO codegen: kernel parameter '{p.name_hint}' of type "
                                       f"{type(p.type).__name__} cannot be passed to a PTO kernel", p.span)
        self._signature = []
        for i, p in enumerate(tensors + others):
            arg = f"%arg{i}"
            self._taken.add(arg)
            self._names[p] = arg
            self._signature.append(f"{arg}: {ptr_type(p.type) if p in tensors else self.type_of(p)}")
        for d in self._dynamic_dims(tensors):
            arg = f"%arg{len(self._signature)}"
            self._taken.add(arg)
            self.bind(d, arg, "index")
            self._signature.append(f"{arg}: index")
        for p in tensors:
            self._views[p] = self._tensor_view_of(p, self._names[p])
        self._out = self._body

    def _dynamic_dims(self, tensors) -> list:
        out = []
        for p in tensors:
            for d in p.type.shape:
                if isinstance(d, Var) and d not in self._names and d not in out:
                    out.append(d)
        return out

    def _tensor_view_of(self, p: Var, arg: str) -> str:
        t = p.type
        shape = list(t.shape)
        strides = list(t.tensor_view.stride) if t.tensor_view is not None and t.tensor_view.stride else None
        layout = t.tensor_view.layout if t.tensor_view is not None else TensorLayout.ND
        dims = [self._dim(d, p) for d in shape]
        if strides is not None:
            stride_names = [self._dim(s, p) for s in strides]
            layout_name = layout.name.lower()
        elif layout is TensorLayout.DN and len(dims) == 2:
            dims, stride_names, layout_name = [dims[1], dims[0]], [self.const_index(1), dims[1]], "dn"
        elif len(shape) == 2 and isinstance(shape[1], ConstInt) and shape[1].value == 1:
            stride_names, layout_name = [self.const_index(1), dims[0]], "dn"    # a column vector is DN
        else:
            stride_names, layout_name = self._packed_strides(shape, dims), "nd"
        view = self.fresh(f"{p.name_hint}_view")
        self.emit(f"{view} = pto.make_tensor_view {arg}, shape = [{', '.join(dims)}], strides = "
                  f"[{', '.join(stride_names)}] {{layout = #pto.layout<{layout_name}>}} : {tensor_view_type(t)}",
                  with_loc=False)
        return view

    def _dim(self, d: Expr, p: Var) -> str:
        if isinstance(d, ConstInt):
            return self.const_index(d.value)
        try:
            return self.index(d)
        except InternalError:
            pass
        raise UnsupportedError(f"PTO codegen: dynamic dim '{getattr(d, 'name_hint', d)}' of tensor "
                               f"'{p.name_hint}' is not a kernel parameter", p.span,
                               hint="pass the dim to the kernel as a Scalar[INDEX] parameter")

    def _packed_strides(self, shape: list, dims: list) -> list:
        """Row-major strides: static products fold to constants, dynamic ones become arith.muli."""
        out, static, dynamic = [], 1, None
        for d, name in zip(reversed(shape), reversed(dims)):
            out.append(self.const_index(static) if dynamic is None else self._scaled(dynamic, static))
            if isinstance(d, ConstInt):
                static *= d.value
            else:
                dynamic = name if dynamic is None else self._mul(dynamic, name)
        return list(reversed(out))

    def _mul(self, a: str, b: str) -> str:
        out = self.fresh("stride")
        self.emit(f"{out} = arith.muli {a}, {b} : index", with_loc=False)
        return out

    def _scaled(self, dynamic: str, static: int) -> str:
        return dynamic if static == 1 else self._mul(dynamic, self.const_index(static))

    def alloc_tile(self, var: Var, key, addr: Optional[int], handles: dict) -> None:
        """Bind `var` to the handle of its buffer, emitting `pto.alloc_tile` the first time. A runtime
        valid shape known at the function head (a parameter) is passed as valid_row / valid_col."""
        type_str = tile_buf_type(var.type)
        valid = self._valid_operands(var.type)
        full_key = (key, type_str, valid)
        if full_key in handles:
            self.bind(var, handles[full_key], type_str)
            return
        name = self.fresh(var.name_hint)
        self._out = self._prologue
        at = f" addr = {self.const(addr, INT64)}" if addr is not None and addr >= 0 and self.emit_tile_addr else ""
        self.emit(f"{name} = pto.alloc_tile{at}{valid} : {type_str}", with_loc=False)
        self._out = self._body
        handles[full_key] = name
        self.bind(var, name, type_str)

    def _valid_operands(self, t: TileType) -> str:
        valid = t.valid_shape
        if len(valid) != 2 or all(isinstance(d, ConstInt) for d in valid):
            return ""
        try:
            row, col = (self.index(d) for d in valid)
        except InternalError:                     # defined in the body: the type keeps v_row / v_col = ?
            return ""
        return f" valid_row = {row} valid_col = {col}"

    # ------------------------------------------------------------------ ops
    def emit_call(self, call: Call, result_var: Optional[Var]) -> None:
        if call.is_function_call():
            raise UnsupportedError(f"PTO codegen: kernel {self.func.name} calls function '{call.op.name}'; a PTO "
                                   "kernel cannot call another function", call.span,
                                   hint="InlineFunctions / outlining should have removed the call")
        em = emitter_for(call.op.name)
        if em is None:
            raise UnsupportedError(f"PTO codegen: op {call.op.name} has no PTO emitter", call.span,
                                   hint="add one in pypto/codegen/pto/<family>.py")
        saved = (self.call, self.result_var, self.span)
        self.call, self.result_var = call, result_var
        if call.span is not None and getattr(call.span, "line", 0):
            self.span = call.span
        try:
            em.fn(self)
        finally:
            self.call, self.result_var, self.span = saved

    # ------------------------------------------------------------------ assembly
    def signature(self) -> str:
        params = list(self._signature)
        if self._spmd_used & {"block_idx", "block_num"}:
            params += [f"{SPMD_PARAMS['block_idx']}: i32", f"{SPMD_PARAMS['block_num']}: i32"]
        if "subblock_idx" in self._spmd_used:
            params.append(f"{SPMD_PARAMS['subblock_idx']}: i32")
        kind = KERNEL_KINDS.get(self.func.func_type)
        attrs = f" attributes {{pto.kernel_kind = #pto.kernel_kind<{kind}>}}" if kind else ""
        return f"  func.func @{self.func.name}({', '.join(params)}){attrs} {{"

    def generate(self) -> str:
        from pypto.codegen.pto.statements import emit_function_body
        self._make_tensor_views(self.func.params)
        emit_function_body(self)
        lines = [*(f"  {d}" for d in self._decls), self.signature(), *self._const_lines, *self._prologue, *self._body, "    return", "  }"]
        return "\n".join(lines)

