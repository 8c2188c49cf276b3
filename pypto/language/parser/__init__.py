"""The DSL parser: Python AST → PyPTO IR, with a source span on every node.

Entry points (used by the decorators, `pl.parse` and `@pl.jit`):

    parse_source(text, filename="<string>", globals=None) -> Program | Function
    parse_program_class(cls) -> Program
    parse_function(pyfunc, func_type=..., overrides={"x": TensorType(...), "n": 4}) -> Function

The parser is split by syntax kind behind dispatch tables (dispatch.py): expressions,
calls, subscripts, annotations, statements, control_flow, with_scopes, inline, functions,
programs; diagnostics.py holds the ParserError family.
"""

from __future__ import annotations

import ast
import inspect
from typing import Optional

from pypto.language.parser.diagnostics import (InvalidOperationError, ParserError, ParserSyntaxError, ParserTypeError,
                                               ScopeIsolationError, SSAViolationError, UndefinedVariableError,
                                               UnsupportedFeatureError)

__all__ = ["parse_source", "parse_program_class", "parse_function", "ParserError", "ParserSyntaxError",
           "ParserTypeError", "UndefinedVariableError", "SSAViolationError", "UnsupportedFeatureError",
           "InvalidOperationError", "ScopeIsolationError"]


def parse_source(text: str, *, filename: str = "<string>", globals: Optional[dict] = None):
    """Parse DSL text (e.g. `ir.python_print` output): the one program it defines, else its function(s)."""
    from pypto.ir.function import Program
    from pypto.language.parser.programs import parse_module_text
    programs, functions = parse_module_text(text, filename, globals)
    if len(programs) > 1:
        raise ParserSyntaxError(f"{filename} defines {len(programs)} programs; pl.parse expects one",
                                hint="parse each program separately")
    if programs:
        return programs[0]
    if len(functions) == 1:
        return functions[0]
    if functions:
        return Program(functions, "")
    from pypto.language.parser.diagnostics.exceptions import NothingToParseError
    raise NothingToParseError(f"{filename} defines no @pl.program class and no @pl.function",
                            hint="DSL text holds a @pl.program class (as printed by ir.python_print)")


def parse_program_class(cls, *, strict_ssa: bool = False, _namespace: Optional[dict] = None,
                        _location: Optional[tuple] = None):
    """The Program of a `@pl.program` class (parsed from its source, never executed)."""
    from pypto.language.parser.context import ModuleEnv
    from pypto.language.parser.programs import parse_program_node
    from pypto.language.parser.source import locate_definition
    filename, lineno = _location if _location else (None, None)
    node, src = locate_definition(cls, ast.ClassDef, filename, lineno)
    namespace = dict(_namespace) if _namespace is not None else dict(vars(inspect.getmodule(cls) or object()))
    for value in vars(cls).values():
        pyfunc = getattr(value, "pyfunc", None)
        if pyfunc is not None:
            namespace.update(closure_values(pyfunc))
    return parse_program_node(ModuleEnv(src, namespace), node, strict_ssa=strict_ssa, name=cls.__name__)


def parse_function(pyfunc, *, func_type=None, level=None, role=None, attrs: Optional[dict] = None,
                   overrides: Optional[dict] = None, extra_globals: Optional[dict] = None, strict_ssa: bool = False,
                   auto_scope: bool = True, _namespace: Optional[dict] = None, _location: Optional[tuple] = None):
    """An `ir.Function` from a Python function's source.

    overrides: param name → IR Type (fills a bare `pl.Tensor`) or Python number (the param is
    dropped and every use is that constant). extra_globals: more names (e.g. ir.Functions
    callable by bare name).
    """
    from pypto.ir.enums import FunctionType
    from pypto.language.parser.context import ModuleEnv
    from pypto.language.parser.functions import FunctionOptions, parse_function_def
    from pypto.language.parser.source import locate_definition
    filename, lineno = _location if _location else (None, None)
    node, src = locate_definition(pyfunc, ast.FunctionDef, filename, lineno)
    namespace = dict(getattr(pyfunc, "__globals__", {}))
    if _namespace:
        namespace.update(_namespace)
    namespace.update(closure_values(pyfunc))
    if extra_globals:
        namespace.update(extra_globals)
    opts = FunctionOptions(func_type=func_type if func_type is not None else FunctionType.Opaque, level=level,
                           role=role, attrs=dict(attrs or {}), strict_ssa=strict_ssa, auto_scope=auto_scope)
    method = bool(node.args.args) and node.args.args[0].arg == "self"
    return parse_function_def(ModuleEnv(src, namespace), node, opts, method=method, overrides=overrides)


def closure_values(pyfunc) -> dict:
    code = getattr(pyfunc, "__code__", None)
    cells = getattr(pyfunc, "__closure__", None) or ()
    out = {}
    if code is not None:
        for name, cell in zip(code.co_freevars, cells):
            try:
                out[name] = cell.cell_contents
            except ValueError:  # not yet assigned
                pass
    return out
