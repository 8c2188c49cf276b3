"""IRBuilder: build IR statement by statement with context managers (the reference's Python builder).

    ib = IRBuilder()
    with ib.program("demo") as prog:
        kernel = prog.declare_function("kernel")          # a GlobalVar usable before the function exists
        with ib.function("kernel", type=FunctionType.InCore) as f:
            x = f.param("x", TensorType([64], FP32))
            f.return_type(TensorType([64], FP32))
            y = ib.let("y", some_call)                    # AssignStmt; returns the new Var
            ib.return_stmt(y)
        prog.add_function(f.get_result())
    program = prog.get_result()

Loops: `with ib.for_loop(i, 0, n, 1) as loop:` (`loop.iter_arg(name, init)`, `loop.return_var(name)`,
the body ends with `ib.emit(YieldStmt([...]))`); `ib.while_loop(cond)`; `with ib.if_stmt(c) as br:`
(`br.return_var(name, type)`, `br.else_()`). Every node gets the span of the builder call's line.
The builder produces ordinary pypto nodes: there is no separate IR.
"""

from __future__ import annotations

import sys
from typing import Optional, Sequence

from pypto.errors import ValueCheckError
from pypto.ir.dtypes import INDEX
from pypto.ir.enums import ForKind, FunctionType, ParamDirection
from pypto.ir.expr import Expr, GlobalVar, IterArg, Var, const
from pypto.ir.function import Function, Program
from pypto.ir.span import Span
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, ReturnStmt, SeqStmts, Stmt, WhileStmt
from pypto.ir.types import MemRef, PtrType, TensorType, TensorView, TileType, TileView, TupleType, Type, UnknownType
from pypto.ir.visitor import IRMutator


def _caller_span(depth: int = 2) -> Span:
    frame = sys._getframe(depth)
    return Span(frame.f_code.co_filename, frame.f_lineno, 1)


def _as_expr(value) -> Expr:
    return value if isinstance(value, Expr) else const(value, INDEX if isinstance(value, int) else None)


def _body(stmts: list, span: Span) -> Stmt:
    return SeqStmts(stmts, span)


class _Context:
    """One open construct; statements emitted inside it land in `stmts`."""

    def __init__(self, builder: "IRBuilder", span: Span):
        self.builder = builder
        self.span = span
        self.stmts: list = []
        self._result = None

    def __enter__(self):
        self.builder._stack.append(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        popped = self.builder._stack.pop()
        if popped is not self:
            raise ValueCheckError(f"IRBuilder: {type(self).__name__} closed out of order")
        if exc_type is None:
            self._finish()
        return False

    def _finish(self) -> None:
        raise NotImplementedError

    def get_result(self):
        if self._result is None:
            raise ValueCheckError(f"IRBuilder: {type(self).__name__}.get_result() before its `with` block ended")
        return self._result


class ProgramBuilder(_Context):
    def __init__(self, builder, name: str, span: Span):
        super().__init__(builder, span)
        self.name = name
        self.functions: list = []
        self.declared: dict = {}

    def declare_function(self, name: str) -> GlobalVar:
        """A GlobalVar for a function added later (so calls can be built before their callee)."""
        return self.declared.setdefault(name, GlobalVar(name))

    def get_global_var(self, name: str) -> GlobalVar:
        return self.declare_function(name)

    def add_function(self, func: Function) -> None:
        self.functions.append(func)

    def _finish(self) -> None:
        self._result = Program(_type_function_calls(self.functions), self.name, self.span)


def _type_function_calls(functions: list) -> list:
    """Give calls of program functions built without a type (`ir.Call(gvar, args, span)`) the callee's
    return type, and the Vars bound to them likewise, as the parser types `self.kernel(...)`."""
    returns = {f.name: f.return_types for f in functions}

    class _Retype(IRMutator):
        def __init__(self):
            self.vars: dict = {}

        def mutate_call(self, call):
            call = self.mutate_children(call)
            types = returns.get(call.op.name) if isinstance(call.op, GlobalVar) else None
            if types and isinstance(call.type, UnknownType):
                call = call.replace(type=types[0] if len(types) == 1 else TupleType(types))
            return call

        def mutate_assign_stmt(self, stmt):
            value = self.mutate(stmt.value)
            var = stmt.var
            if isinstance(var.type, UnknownType) and not isinstance(value.type, UnknownType):
                var = self.vars[stmt.var] = Var(var.name_hint, value.type, var.span)
            return stmt.replace(var=var, value=value)

        def mutate_var(self, var):
            return self.vars.get(var, var)

    out = []
    for f in functions:
        r = _Retype()
        out.append(f.replace(body=r.mutate(f.body)))
    return out


class FunctionBuilder(_Context):
    def __init__(self, builder, name: str, func_type: FunctionType, span: Span, level=None, role=None, attrs=None):
        super().__init__(builder, span)
        self.name, self.func_type, self.level, self.role, self.attrs = name, func_type, level, role, attrs
        self.params: list = []
        self.directions: list = []
        self.return_types: list = []

    def param(self, name: str, type: Type, direction: ParamDirection = ParamDirection.In) -> Var:
        var = Var(name, type, _caller_span())
        self.params.append(var)
        self.directions.append(direction)
        return var

    def return_type(self, type: Type) -> None:
        self.return_types.append(type)

    def _finish(self) -> None:
        self._result = Function(self.name, self.params, self.return_types, _body(self.stmts, self.span), self.func_type,
                                param_directions=self.directions, level=self.level, role=self.role,
                                attrs=self.attrs, span=self.span)


class _CarryingLoop(_Context):
    """Shared by for / while: loop-carried values (iter_args) and the Vars bound after the loop."""

    def __init__(self, builder, span: Span):
        super().__init__(builder, span)
        self.iter_args: list = []
        self.return_vars: list = []

    def iter_arg(self, name: str, init_value, type: Optional[Type] = None) -> IterArg:
        init = _as_expr(init_value)
        arg = IterArg(name, type if type is not None else init.type, init, _caller_span())
        self.iter_args.append(arg)
        return arg

    def return_var(self, name: str, type: Optional[Type] = None) -> Var:
        if type is None:
            index = len(self.return_vars)
            if index >= len(self.iter_args):
                raise ValueCheckError(f"IRBuilder: return_var {name!r} has no matching iter_arg; give its type")
            type = self.iter_args[index].type
        var = Var(name, type, _caller_span())
        self.return_vars.append(var)
        return var

    def output(self, index: int = 0) -> Var:
        return self.return_vars[index]

    def outputs(self) -> list:
        return list(self.return_vars)

    def _check_counts(self) -> None:
        if len(self.iter_args) != len(self.return_vars):
            raise ValueCheckError(f"IRBuilder: a loop has {len(self.iter_args)} iter_args but "
                                  f"{len(self.return_vars)} return_vars")


class ForLoopBuilder(_CarryingLoop):
    def __init__(self, builder, loop_var: Var, start, stop, step, kind: ForKind, attrs, span: Span):
        super().__init__(builder, span)
        self.loop_var, self.start, self.stop, self.step = loop_var, _as_expr(start), _as_expr(stop), _as_expr(step)
        self.kind, self.attrs = kind, attrs

    def _finish(self) -> None:
        self._check_counts()
        self._result = ForStmt(self.loop_var, self.start, self.stop, self.step, self.iter_args,
                               _body(self.stmts, self.span), self.return_vars, self.kind, self.attrs, self.span)
        self.builder.emit(self._result)


class WhileLoopBuilder(_CarryingLoop):
    def __init__(self, builder, condition, span: Span):
        super().__init__(builder, span)
        self.condition = condition

    def set_condition(self, condition: Expr) -> None:
        """Set the condition once the iter_args it reads exist."""
        self.condition = condition

    def _finish(self) -> None:
        self._check_counts()
        if self.condition is None:
            raise ValueCheckError("IRBuilder: while_loop needs a condition (pass it or call set_condition)")
        self._result = WhileStmt(self.condition, self.iter_args, _body(self.stmts, self.span), self.return_vars,
                                 self.span)
        self.builder.emit(self._result)


class IfStmtBuilder(_Context):
    def __init__(self, builder, condition: Expr, span: Span):
        super().__init__(builder, span)
        self.condition = condition
        self.then_stmts: Optional[list] = None
        self.return_vars: list = []

    def return_var(self, name: str, type: Type) -> Var:
        var = Var(name, type, _caller_span())
        self.return_vars.append(var)
        return var

    def else_(self) -> None:
        """Statements emitted from now on form the else branch."""
        if self.then_stmts is not None:
            raise ValueCheckError("IRBuilder: else_() called twice")
        self.then_stmts, self.stmts = self.stmts, []

    def output(self, index: int = 0) -> Var:
        return self.return_vars[index]

    def outputs(self) -> list:
        return list(self.return_vars)

    def _finish(self) -> None:
        if self.then_stmts is None:
            then_body, else_body = _body(self.stmts, self.span), None
        else:
            then_body, else_body = _body(self.then_stmts, self.span), _body(self.stmts, self.span)
        self._result = IfStmt(self.condition, then_body, else_body, self.return_vars, self.span)
        self.builder.emit(self._result)


class IRBuilder:
    """Builds programs, functions and statements inside `with` blocks (see the module docstring)."""

    def __init__(self):
        self._stack: list = []

    # ---- constructs
    def program(self, name: str = "") -> ProgramBuilder:
        return ProgramBuilder(self, name, _caller_span())

    def function(self, name: str, type: FunctionType = FunctionType.Opaque, level=None, role=None,
                 attrs: Optional[dict] = None) -> FunctionBuilder:
        outer = self._innermost(FunctionBuilder)
        if outer is not None:
            raise ValueCheckError(f"Cannot begin function '{name}': already inside function '{outer.name}' "
                                  f"at {outer.span}")
        return FunctionBuilder(self, name, type, _caller_span(), level, role, attrs)

    def for_loop(self, loop_var: Var, start, stop, step=1, kind: ForKind = ForKind.Sequential,
                 attrs: Optional[dict] = None) -> ForLoopBuilder:
        self._require_body("for_loop")
        return ForLoopBuilder(self, loop_var, start, stop, step, kind, attrs, _caller_span())

    def while_loop(self, condition: Optional[Expr] = None) -> WhileLoopBuilder:
        self._require_body("while_loop")
        return WhileLoopBuilder(self, condition, _caller_span())

    def if_stmt(self, condition: Expr) -> IfStmtBuilder:
        self._require_body("if_stmt")
        return IfStmtBuilder(self, condition, _caller_span())

    if_ = if_stmt

    # ---- statements
    def emit(self, stmt: Stmt) -> None:
        self._require_body("emit").stmts.append(stmt)

    def var(self, name: str, type: Type) -> Var:
        return Var(name, type, _caller_span())

    def assign(self, var: Var, value: Expr) -> AssignStmt:
        stmt = AssignStmt(var, value, _caller_span())
        self.emit(stmt)
        return stmt

    def let(self, name: str, value: Expr, type: Optional[Type] = None) -> Var:
        """Bind `value` to a new Var named `name` (typed as the value unless `type` is given)."""
        span = _caller_span()
        var = Var(name, type if type is not None else getattr(value, "type", UnknownType()), span)
        self.emit(AssignStmt(var, value, span))
        return var

    def return_stmt(self, values=None) -> ReturnStmt:
        if values is None:
            values = []
        elif not isinstance(values, (list, tuple)):
            values = [values]
        stmt = ReturnStmt([_as_expr(v) for v in values], _caller_span())
        self.emit(stmt)
        return stmt

    # ---- state
    def in_function(self) -> bool:
        return self._innermost(FunctionBuilder) is not None

    def in_loop(self) -> bool:
        return self._innermost(_CarryingLoop) is not None

    def in_if(self) -> bool:
        return self._innermost(IfStmtBuilder) is not None

    # ---- type helpers
    def memref(self, memory_space=None, addr=0, size: int = 0, id: int = 0) -> MemRef:
        """A MemRef on a fresh base allocation (`memory_space` is carried by the tile type, not the MemRef)."""
        return MemRef(Var(f"mem_{id}", PtrType()), addr, size)

    def tile_view(self, valid_shape=(), stride=(), start_offset=None) -> TileView:
        return TileView(valid_shape, stride, None if start_offset is None else _as_expr(start_offset))

    def tensor_type(self, shape: Sequence, dtype, memref: Optional[MemRef] = None,
                    tensor_view: Optional[TensorView] = None) -> TensorType:
        return TensorType(shape, dtype, memref, tensor_view)

    def tile_type(self, shape: Sequence, dtype, memref: Optional[MemRef] = None, tile_view: Optional[TileView] = None,
                  memory_space=None) -> TileType:
        return TileType(shape, dtype, memref, tile_view, memory_space)

    def _innermost(self, kind):
        for ctx in reversed(self._stack):
            if isinstance(ctx, kind):
                return ctx
        return None

    def _require_body(self, what: str) -> _Context:
        for ctx in reversed(self._stack):
            if not isinstance(ctx, ProgramBuilder):
                return ctx
        raise ValueCheckError(f"IRBuilder.{what}: only inside a function (open one with `with ib.function(...)`)")
