"""Functions and programs.

A Function's level / role default from its type (Orchestration → CHIP / Orchestrator,
InCore → CHIP_DIE / SubWorker, AIC → AIC, AIV → AIV, Group → CORE_GROUP), as the reference derives them.
A Program is an ordered name → Function map; equality matches functions by name.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

from pypto.ir.enums import FunctionType, Level, ParamDirection, Role
from pypto.ir.expr import GlobalVar, Var
from pypto.ir.node import DEF, IGNORE, USUAL, Node
from pypto.ir.span import Span
from pypto.ir.stmt import Stmt
from pypto.ir.types import Type

_DEFAULT_LEVEL_ROLE = {
    FunctionType.Orchestration: (Level.CHIP, Role.Orchestrator),
    FunctionType.InCore: (Level.CHIP_DIE, Role.SubWorker),
    FunctionType.AIC: (Level.AIC, Role.SubWorker),
    FunctionType.AIV: (Level.AIV, Role.SubWorker),
    FunctionType.Group: (Level.CORE_GROUP, Role.SubWorker),
}


def default_level_role(func_type: FunctionType):
    return _DEFAULT_LEVEL_ROLE.get(func_type, (None, None))


class Function(Node):
    __slots__ = ("name", "params", "param_directions", "return_types", "body", "func_type", "level", "role", "attrs")
    FIELDS = (("name", USUAL), ("params", DEF), ("param_directions", USUAL), ("return_types", USUAL),
              ("func_type", USUAL), ("level", USUAL), ("role", USUAL), ("attrs", USUAL), ("body", USUAL))

    def __init__(self, name: str, params: Sequence[Var], return_types: Sequence[Type], body: Stmt,
                 func_type: FunctionType = FunctionType.Opaque, *reference_rest,
                 param_directions: Optional[Sequence[ParamDirection]] = None, level: Optional[Level] = None,
                 role: Optional[Role] = None, attrs: Optional[dict] = None, span: Optional[Span] = None,
                 type: Optional[FunctionType] = None, requires_runtime_binding: bool = False):
        if isinstance(func_type, Span) or reference_rest or type is not None:
            # the reference's order: (name, params, return_types, body, span, type, level, role, attrs)
            if isinstance(func_type, Span):
                span, func_type = func_type, FunctionType.Opaque
            rest = list(reference_rest) + [None] * (4 - len(reference_rest))
            func_type = rest[0] or type or func_type
            level, role, attrs = rest[1] or level, rest[2] or role, rest[3] if rest[3] is not None else attrs
        if any(isinstance(p, tuple) for p in params):  # the reference's (Var, ParamDirection) pairs
            pairs = [p if isinstance(p, tuple) else (p, ParamDirection.In) for p in params]
            params, param_directions = [p for p, _d in pairs], [d for _p, d in pairs]
        params = tuple(params)
        directions = tuple(param_directions) if param_directions is not None else (ParamDirection.In,) * len(params)
        if len(directions) != len(params):
            raise ValueError(f"function {name}: {len(params)} params but {len(directions)} directions")
        if level is None and role is None:
            level, role = default_level_role(func_type)
        self._set(name=name, params=params, param_directions=directions, return_types=tuple(return_types), body=body,
                  func_type=func_type, level=level, role=role, attrs=dict(attrs or {}), span=span)

    @property
    def split(self):
        """The SplitMode of a cross-core kernel (attrs["split"]), or None."""
        return self.attrs.get("split")

    @property
    def requires_runtime_binding(self) -> bool:
        """A HOST SubWorker declared with a `...` body: its implementation is bound at `prepare(callbacks=)`."""
        return bool(self.attrs.get("runtime_bound", False))

    def as_python(self, concise: bool = False) -> str:
        from pypto.ir.printer import python_print
        return python_print(self)

    def with_type(self, func_type: FunctionType) -> "Function":
        """Retype the function, re-deriving level / role for the new type."""
        level, role = default_level_role(func_type)
        return self.replace(func_type=func_type, level=level, role=role)

    def as_python(self, concise: bool = False) -> str:
        """The function as DSL text (`@pl.function ...`), which `pl.parse` reads back."""
        from pypto.ir.printer import python_print
        return python_print(self)


class Program(Node):
    __slots__ = ("functions", "name")
    FIELDS = (("functions", USUAL), ("name", IGNORE))

    def __init__(self, functions: Iterable[Function], name: str = "", span: Optional[Span] = None):
        funcs = {}
        for f in functions:
            if f.name in funcs:
                raise ValueError(f"program {name}: two functions named {f.name!r}")
            funcs[f.name] = f
        self._set(functions=funcs, name=name, span=span)

    def get_function(self, name: str) -> Optional[Function]:
        return self.functions.get(name)

    def __getitem__(self, name: str) -> Function:
        return self.functions[name]

    def with_functions(self, functions: Iterable[Function]) -> "Program":
        return Program(functions, self.name, self.span)

    def as_python(self, concise: bool = False) -> str:
        from pypto.ir.printer import python_print
        return python_print(self)

    def global_var(self, name: str) -> GlobalVar:
        return GlobalVar(name)
