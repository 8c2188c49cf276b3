"""IR → DSL text. The printed program is valid Python that `pl.parse` reads back into a
structurally equal program; pass dumps are exactly this text.

Format (one statement per line, every assignment annotated):

    # pypto.program: Prog
    import pypto.language as pl

    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[64], pl.FP32], out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
            t: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0], [64], [64], target_memory=pl.Mem.Vec)
            for i, (acc,) in pl.range(4, init_values=(t,)):
                a2: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc, t)
                acc_rv = pl.yield_(a2)
            ...
"""

from __future__ import annotations

import enum
import keyword
import math
import re
from typing import Optional

from pypto.ir.dtypes import FP32, INDEX, DataType
from pypto.ir.enums import ForKind, ParamDirection, SplitMode
from pypto.ir.expr import (BINARY_OPS, BinaryExpr, Call, ConstBool, ConstFloat, ConstInt, Expr, GlobalVar, IterArg,
                           MakeTuple, TupleGetItem, UnaryExpr, Var)
from pypto.ir.function import Function, Program, default_level_role
from pypto.ir.node import Node
from pypto.ir.stmt import (AssignStmt, BreakStmt, ClusterScopeStmt, CommDomainScopeStmt, ContinueStmt, EvalStmt,
                           ForStmt, HierarchyScopeStmt, IfStmt, InCoreScopeStmt, ReturnStmt, SeqStmts, SpmdScopeStmt,
                           SplitAivScopeStmt, Stmt, WhileStmt, YieldStmt)
from pypto.ir.types import (CommCtxType, DistributedTensorType, MemRef, PtrType, ScalarType, TensorType, TensorView,
                            TaskIdArrayType, TileType, TileView, TupleType, Type, UnknownType)

INDENT = "    "
_RESERVED = set(keyword.kwlist) | {"pl", "pld", "self", "True", "False", "None", "tuple", "float", "int"}
_PRECEDENCE = {"or": 1, "and": 2, "eq": 4, "ne": 4, "lt": 4, "le": 4, "gt": 4, "ge": 4, "bitor": 5, "bitxor": 6,
               "bitand": 7, "shl": 8, "shr": 8, "add": 9, "sub": 9, "mul": 10, "floordiv": 10, "floormod": 10,
               "truediv": 10, "pow": 12}


class VarNamer:
    """Gives every Var a unique, valid Python name within one generated function.

    `reserved`: names a Var may not take (they get a trailing "_"); `reserved_prefixes`: prefixes
    kept for the generator's own names (a Var starting with one gets a leading "v_")."""

    def __init__(self, reserved=frozenset(), reserved_prefixes: tuple = (), taken: Optional[set] = None):
        self.names: dict = {}
        self.used: set = set(taken or ())
        self.reserved = reserved
        self.reserved_prefixes = tuple(reserved_prefixes)

    def name(self, var: Var) -> str:
        n = self.names.get(var)
        if n is None:
            base = re.sub(r"\W", "_", var.name_hint or "v") or "v"
            if base[0].isdigit() or base.startswith(self.reserved_prefixes):
                base = "v_" + base
            if base in self.reserved or not base.isidentifier() or keyword.iskeyword(base):
                base = base + "_"
            n, k = base, 0
            while n in self.used:
                k += 1
                n = f"{base}_{k}"
            self.used.add(n)
            self.names[var] = n
        return n


class PythonPrinter:
    def __init__(self):
        self.namer = VarNamer(_RESERVED)
        self.lines: list[str] = []
        self.free_dims: dict = {}      # symbolic shape Vars not bound in the function → module-level pl.dynamic
        self.uses_pld = False
        self.yield_targets: list = []  # stack: return_vars of the enclosing for / if / while
        self.declared_bases: set = set()  # MemRef bases bound nowhere: user declarations pl.MemRef("name")

    # ------------------------------------------------------------------ types
    def type_str(self, t: Type) -> str:
        if isinstance(t, CommCtxType):
            self.uses_pld = True
            return "pld.CommCtx"
        if isinstance(t, TaskIdArrayType):
            return f"pl.Array[{t.extent}, pl.TASK_ID]"
        if isinstance(t, ScalarType):
            return f"pl.Scalar[{t.dtype!r}]"
        if isinstance(t, TileType):
            parts = [self.shape_str(t.shape), repr(t.dtype)]
            if t.memref is not None:
                parts.append(self.memref_str(t.memref))
            if t.memory_space is not None:
                parts.append(repr(t.memory_space))
            if t.tile_view is not None:
                parts.append(self.tile_view_str(t.tile_view))
            return f"pl.Tile[{', '.join(parts)}]"
        if isinstance(t, TensorType):
            parts = [self.shape_str(t.shape), repr(t.dtype)]
            if t.tensor_view is not None:
                parts.append(self.tensor_view_str(t.tensor_view))
            if t.memref is not None:
                parts.append(self.memref_str(t.memref))
            if isinstance(t, DistributedTensorType):
                self.uses_pld = True
                return f"pld.DistributedTensor[{', '.join(parts)}]"
            return f"pl.Tensor[{', '.join(parts)}]"
        if isinstance(t, TupleType):
            return f"pl.Tuple[{', '.join(self.type_str(x) for x in t.types)}]"
        if isinstance(t, PtrType):
            return "pl.Ptr"
        if isinstance(t, UnknownType):
            return "pl.Unknown"
        raise TypeError(f"cannot print type {type(t).__name__}")

    def shape_str(self, shape) -> str:
        return "[" + ", ".join(self.expr(d) for d in shape) + "]"

    def memref_str(self, m: MemRef) -> str:
        if m.base in self.declared_bases:
            return f"pl.MemRef({m.base.name_hint!r}, {self.expr(m.byte_offset)}, {m.size})"
        return f"pl.MemRef({self.expr(m.base)}, {self.expr(m.byte_offset)}, {m.size})"

    def tile_view_str(self, v: TileView) -> str:
        d = TileView()
        parts = []
        for name in ("valid_shape", "stride"):
            val = getattr(v, name)
            if val:
                parts.append(f"{name}={self.shape_str(val)}")
        if v.start_offset is not None:
            parts.append(f"start_offset={self.expr(v.start_offset)}")
        for name in ("blayout", "slayout", "fractal", "pad", "compact"):
            val = getattr(v, name)
            if val != getattr(d, name):
                parts.append(f"{name}={self.value(val)}")
        return f"pl.TileView({', '.join(parts)})"

    def tensor_view_str(self, v: TensorView) -> str:
        parts = []
        if v.stride:
            parts.append(f"stride={self.shape_str(v.stride)}")
        parts.append(f"layout={v.layout!r}")
        if v.valid_shape:
            parts.append(f"valid_shape={self.shape_str(v.valid_shape)}")
        if v.pad.name != "null":
            parts.append(f"pad={v.pad!r}")
        return f"pl.TensorView({', '.join(parts)})"

    # ------------------------------------------------------------------ values
    def value(self, v) -> str:
        """A kwarg / attr value (plain Python data, enums, dtypes, or IR expressions)."""
        if isinstance(v, Expr):
            return self.expr(v)
        if isinstance(v, (DataType, enum.Enum)):
            return repr(v)
        if isinstance(v, float):
            return _float_literal(v)
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(self.value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k!r}: {self.value(x)}" for k, x in v.items()) + "}"
        return repr(v)

    # ------------------------------------------------------------------ expressions
    def expr(self, e: Expr, parent_prec: int = 0) -> str:
        if isinstance(e, Var):
            return self.namer.name(e)
        if isinstance(e, ConstInt):
            return str(e.value) if e.dtype is INDEX else f"pl.const({e.value}, {e.dtype!r})"
        if isinstance(e, ConstFloat):
            lit = _float_literal(e.value)
            return lit if e.dtype is FP32 else f"pl.const({lit}, {e.dtype!r})"
        if isinstance(e, ConstBool):
            return "True" if e.value else "False"
        if isinstance(e, Call):
            return self.call(e)
        if isinstance(e, MakeTuple):
            return "[" + ", ".join(self.expr(x) for x in e.elements) + "]"
        if isinstance(e, TupleGetItem):
            return f"{self.expr(e.tuple, 100)}[{e.index}]"
        if isinstance(e, BinaryExpr):
            return self.binary(e, parent_prec)
        if isinstance(e, UnaryExpr):
            if e.op == "cast":
                return f"pl.cast({self.expr(e.operand)}, {e.dtype!r})"
            if e.op == "abs":
                return f"pl.abs({self.expr(e.operand)})"
            sym = {"neg": "-", "not": "not ", "bitnot": "~"}[e.op]
            text = f"{sym}{self.expr(e.operand, 11)}"
            return f"({text})" if parent_prec > 11 or e.op == "not" and parent_prec > 0 else text
        if isinstance(e, GlobalVar):
            return f"self.{e.name}"
        raise TypeError(f"cannot print expression {type(e).__name__}")

    def binary(self, e: BinaryExpr, parent_prec: int) -> str:
        sym = BINARY_OPS[e.op]
        explicit_dtype = e.dtype is not _default_binary_dtype(e)
        if sym is None or explicit_dtype:
            name = {"min": "pl.min", "max": "pl.max", "xor": "pl.xor_"}.get(e.op, f"pl.scalar_{e.op}")
            extra = f", dtype={e.dtype!r}" if explicit_dtype else ""
            return f"{name}({self.expr(e.lhs)}, {self.expr(e.rhs)}{extra})"
        prec = _PRECEDENCE[e.op]
        # comparisons do not chain in Python the way IR nests them: parenthesize nested comparisons
        lhs = self.expr(e.lhs, prec + (1 if prec == 4 else 0))
        rhs = self.expr(e.rhs, prec + 1)
        text = f"{lhs} {sym} {rhs}"
        return f"({text})" if prec < parent_prec or (prec == parent_prec == 4) else text

    def call(self, c: Call) -> str:
        args = [self.expr(a) for a in c.args]
        if isinstance(c.op, GlobalVar):
            head = f"self.{c.op.name}"
        else:
            head = c.op.name if c.op.name.startswith("pld.") else f"pl.{c.op.name}"
            self.uses_pld = self.uses_pld or head is c.op.name
            # a kwarg left at a default of None is not spelled: parsing fills it back in
            defaults = getattr(c.op, "kwargs", None) or {}
            args += [f"{k}={self.value(v)}" for k, v in c.kwargs.items()
                     if not (v is None and k in defaults and getattr(defaults[k], "default", 0) is None)]
        if c.attrs:
            args.append(f"attrs={self.value(c.attrs)}")
        return f"{head}({', '.join(args)})"

    # ------------------------------------------------------------------ statements
    def emit(self, indent: int, text: str) -> None:
        self.lines.append(INDENT * indent + text)

    def stmt(self, s: Stmt, indent: int) -> None:
        if isinstance(s, SeqStmts):
            if not s.stmts:
                self.emit(indent, "pass")
            for x in s.stmts:
                self.stmt(x, indent)
        elif isinstance(s, AssignStmt):
            value = self.expr(s.value)
            self.emit(indent, f"{self.namer.name(s.var)}: {self.type_str(s.var.type)} = {value}")
        elif isinstance(s, EvalStmt):
            self.emit(indent, self.expr(s.expr))
        elif isinstance(s, ReturnStmt):
            self.emit(indent, "return" + ("" if not s.values else " " + ", ".join(self.expr(v) for v in s.values)))
        elif isinstance(s, YieldStmt):
            vals = ", ".join(self.expr(v) for v in s.values)
            targets = self.yield_targets[-1] if self.yield_targets else ()
            if targets:
                self.emit(indent, f"{', '.join(self.namer.name(v) for v in targets)} = pl.yield_({vals})")
            else:
                self.emit(indent, f"pl.yield_({vals})")
        elif isinstance(s, BreakStmt):
            self.emit(indent, "break")
        elif isinstance(s, ContinueStmt):
            self.emit(indent, "continue")
        elif isinstance(s, IfStmt):
            self.if_stmt(s, indent)
        elif isinstance(s, ForStmt):
            self.for_stmt(s, indent)
        elif isinstance(s, WhileStmt):
            self.while_stmt(s, indent)
        elif isinstance(s, InCoreScopeStmt):
            kw = ["level=pl.Level.CORE_GROUP"]
            opts = [f"pl.split({s.split!r})"] if s.split is not SplitMode.NONE else []
            if s.slot_num is not None:
                local = f", local_slot_num={s.local_slot_num}" if s.local_slot_num is not None else ""
                opts.append(f"pl.cross_core_slot(slot_num={s.slot_num}{local})")
            if opts:
                kw.append(f"optimizations=[{', '.join(opts)}]")
            if s.windowize:
                kw.append("windowize=True")
            self.scope("pl.at", kw, s, indent)
        elif isinstance(s, ClusterScopeStmt):
            self.scope("pl.cluster", [], s, indent)
        elif isinstance(s, HierarchyScopeStmt):
            kw = [f"level={s.level!r}"] + ([f"role={s.role!r}"] if s.role is not None else [])
            self.scope("pl.at", kw, s, indent)
        elif isinstance(s, SpmdScopeStmt):
            kw = [self.expr(s.core_num)] + (["sync_start=True"] if s.sync_start else [])
            self.scope("pl.spmd", kw, s, indent)
        elif isinstance(s, CommDomainScopeStmt):
            kw = [f"[{', '.join(self.expr(b) for b in s.buffers)}]"]
            self.uses_pld = True
            self.scope("pld.comm_domain", kw + ([f"devices={list(s.devices)}"] if s.devices is not None else []), s,
                       indent)
        elif isinstance(s, SplitAivScopeStmt):
            kw = f"{s.count}, mode={s.split!r}" + (f", name_hint={s.name_hint!r}" if s.name_hint else "")
            self.emit(indent, f"for {self.namer.name(s.lane_var)} in pl.split_aiv({kw}):")
            self.stmt(s.body, indent + 1)
        else:
            raise TypeError(f"cannot print statement {type(s).__name__}")

    def scope(self, head: str, kw: list, s, indent: int) -> None:
        if s.name_hint:
            kw = kw + [f"name_hint={s.name_hint!r}"]
        self.emit(indent, f"with {head}({', '.join(kw)}):")
        self.stmt(s.body, indent + 1)

    def if_stmt(self, s: IfStmt, indent: int) -> None:
        self.emit(indent, f"if {self.expr(s.condition)}:")
        self.yield_targets.append(s.return_vars)
        self.stmt(s.then_body, indent + 1)
        if s.else_body is not None:
            self.emit(indent, "else:")
            self.stmt(s.else_body, indent + 1)
        self.yield_targets.pop()

    def for_stmt(self, s: ForStmt, indent: int) -> None:
        fn = {ForKind.Sequential: "pl.range", ForKind.Parallel: "pl.parallel", ForKind.Unroll: "pl.unroll",
              ForKind.Pipeline: "pl.pipeline"}[s.kind]
        bounds = [self.expr(s.start), self.expr(s.stop), self.expr(s.step)]
        if isinstance(s.step, ConstInt) and s.step.value == 1 and s.step.dtype is INDEX:
            bounds.pop()
            if isinstance(s.start, ConstInt) and s.start.value == 0 and s.start.dtype is INDEX:
                bounds.pop(0)
        args = bounds
        if s.iter_args:
            args.append(f"init_values=({''.join(self.expr(a.init_value) + ', ' for a in s.iter_args).rstrip(' ')})")
        attrs = dict(s.attrs)
        if s.kind is ForKind.Pipeline and "stage" in attrs:
            args.append(f"stage={self.value(attrs.pop('stage'))}")
        if attrs:
            args.append(f"attrs={self.value(attrs)}")
        target = self.namer.name(s.loop_var)
        if s.iter_args:
            target += ", (" + "".join(self.namer.name(a) + ", " for a in s.iter_args).rstrip(" ") + ")"
        self.emit(indent, f"for {target} in {fn}({', '.join(args)}):")
        self.yield_targets.append(s.return_vars)
        self.stmt(s.body, indent + 1)
        self.yield_targets.pop()

    def while_stmt(self, s: WhileStmt, indent: int) -> None:
        if not s.iter_args and not s.return_vars:
            self.emit(indent, f"while {self.expr(s.condition)}:")
            self.yield_targets.append(())
            self.stmt(s.body, indent + 1)
            self.yield_targets.pop()
            return
        names = "(" + "".join(self.namer.name(a) + ", " for a in s.iter_args).rstrip(" ") + ")"
        inits = "(" + "".join(self.expr(a.init_value) + ", " for a in s.iter_args).rstrip(" ") + ")"
        self.emit(indent, f"for {names} in pl.while_(init_values={inits}):")
        self.emit(indent + 1, f"pl.cond({self.expr(s.condition)})")
        self.yield_targets.append(s.return_vars)
        self.stmt(s.body, indent + 1)
        self.yield_targets.pop()

    # ------------------------------------------------------------------ functions and programs
    def function(self, f: Function, indent: int, method: bool) -> None:
        self.namer = VarNamer(_RESERVED)
        self.free_dims_before = dict(self.free_dims)
        self._collect_free_dims(f)
        self.declared_bases = _declared_bases(f)
        for var, name in self.free_dims.items():
            self.namer.names[var] = name
            self.namer.used.add(name)
        deco = [f"type={f.func_type!r}"]
        if (f.level, f.role) != default_level_role(f.func_type):
            if f.level is not None:
                deco.append(f"level={f.level!r}")
            if f.role is not None:
                deco.append(f"role={f.role!r}")
        if f.attrs:
            deco.append(f"attrs={self.value(f.attrs)}")
        self.emit(indent, f"@pl.function({', '.join(deco)})")
        params = ["self"] if method else []
        for p, d in zip(f.params, f.param_directions):
            t = self.type_str(p.type)
            if d is ParamDirection.Out:
                t = f"pl.Out[{t}]"
            elif d is ParamDirection.InOut:
                t = f"pl.InOut[{t}]"
            params.append(f"{self.namer.name(p)}: {t}")
        ret = ""
        if len(f.return_types) == 1:
            ret = f" -> {self.type_str(f.return_types[0])}"
        elif len(f.return_types) > 1:
            ret = f" -> tuple[{', '.join(self.type_str(t) for t in f.return_types)}]"
        self.emit(indent, f"def {f.name}({', '.join(params)}){ret}:")
        self.stmt(f.body, indent + 1)

    def _collect_free_dims(self, f: Function) -> None:
        """Symbolic dims used in types but bound nowhere in `f` become module-level pl.dynamic vars."""
        from pypto.ir.visitor import IRVisitor
        bound: set = set()
        used: list = []

        def scan_type(t):
            if isinstance(t, (TensorType, TileType)):
                dims = list(t.shape)
                view = getattr(t, "tile_view", None) or getattr(t, "tensor_view", None)
                if view is not None:
                    dims += list(view.valid_shape) + list(view.stride)
                for d in dims:
                    for v in _vars_in(d):
                        used.append(v)
            elif isinstance(t, TupleType):
                for x in t.types:
                    scan_type(x)

        class _V(IRVisitor):
            def visit_var(self, v):
                scan_type(v.type)

            def visit_assign_stmt(self, s):
                bound.add(s.var)
                scan_type(s.var.type)
                self.visit_children(s)

            def visit_for_stmt(self, s):
                bound.update([s.loop_var, *s.iter_args, *s.return_vars])
                for v in [*s.iter_args, *s.return_vars]:
                    scan_type(v.type)
                self.visit_children(s)

        for p in f.params:
            bound.add(p)
            scan_type(p.type)
        for t in f.return_types:
            scan_type(t)
        _V().visit(f.body)
        for v in used:
            if v not in bound and v not in self.free_dims:
                base = re.sub(r"\W", "_", v.name_hint or "dyn") or "dyn"
                name, k = base, 0
                while name in self.free_dims.values():
                    k += 1
                    name = f"{base}_{k}"
                self.free_dims[v] = name

    def program(self, p: Program) -> str:
        body_start = len(self.lines)
        cls = re.sub(r"\W", "_", p.name or "Program") or "Program"
        self.emit(0, "@pl.program")
        self.emit(0, f"class {cls}:")
        for i, f in enumerate(p.functions.values()):
            if i:
                self.emit(0, "")
            self.function(f, 1, method=True)
        return self._with_header(body_start, f"# pypto.program: {p.name or cls}")

    def _with_header(self, body_start: int, title: Optional[str]) -> str:
        head = [title] if title else []
        head.append("import pypto.language as pl")
        if self.uses_pld:
            head.append("import pypto.language.distributed as pld")
        head.append("")
        for var, name in self.free_dims.items():
            dtype = getattr(var.type, "dtype", INDEX)
            extra = "" if dtype == INDEX else f", {dtype!r}"     # keep an INT32 dim INT32
            head.append(f"{name} = pl.dynamic({var.name_hint!r}{extra})")
        if self.free_dims:
            head.append("")
        return "\n".join(head + [""] + self.lines[body_start:]) + "\n"


def _declared_bases(f: Function) -> set:
    """MemRef bases that no statement binds: user-declared tile allocations before InitMemRef, and
    DDR bases of tensors (GM is the runtime's, never allocated in a kernel)."""
    from pypto.ir.verifier import defined_vars
    defined = [*f.params, *defined_vars(f.body)]
    bases = {v.type.memref.base for v in defined
             if isinstance(v.type, (TileType, TensorType)) and v.type.memref is not None}
    return bases - set(defined)


def _vars_in(e) -> list:
    if isinstance(e, Var):
        return [e]
    if isinstance(e, BinaryExpr):
        return _vars_in(e.lhs) + _vars_in(e.rhs)
    if isinstance(e, UnaryExpr):
        return _vars_in(e.operand)
    return []


def _default_binary_dtype(e: BinaryExpr) -> DataType:
    from pypto.ir.dtypes import BOOL
    from pypto.ir.expr import COMPARE_OPS, LOGICAL_OPS
    return BOOL if e.op in COMPARE_OPS or e.op in LOGICAL_OPS else e.lhs.type.dtype


def _float_literal(v: float) -> str:
    if math.isnan(v):
        return 'float("nan")'
    if math.isinf(v):
        return 'float("inf")' if v > 0 else '-float("inf")'
    return repr(float(v))


def python_print(node, prefix: str = "pl", concise: bool = False) -> str:
    """Print a Program, Function, Stmt, Expr or Type as DSL text."""
    pr = PythonPrinter()
    if isinstance(node, Program):
        return pr.program(node)
    if isinstance(node, Function):
        pr.function(node, 0, method=False)
        return pr._with_header(0, None)
    if isinstance(node, Stmt):
        pr.stmt(node, 0)
        return "\n".join(pr.lines)
    if isinstance(node, Expr):
        return pr.expr(node)
    if isinstance(node, Type):
        return pr.type_str(node)
    if isinstance(node, (MemRef,)):
        return pr.memref_str(node)
    if isinstance(node, TileView):
        return pr.tile_view_str(node)
    if isinstance(node, TensorView):
        return pr.tensor_view_str(node)
    raise TypeError(f"python_print cannot print {type(node).__name__}")
