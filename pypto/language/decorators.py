"""`@pl.program`, `@pl.function`, `@pl.inline`: decorators that parse source into IR.

They never execute the body. `@pl.program` turns the class object into an `ir.Program`;
`@pl.function` at module level returns an `ir.Function` (inside a program class it only
marks the method — the class decorator parses everything, signatures first).
Names the body uses are looked up in the caller's locals and globals at decoration time,
so constants defined next to the kernel work.
"""

from __future__ import annotations

import sys
from typing import Optional

from pypto.call_site import reject_unknown_options
from pypto.ir.enums import FunctionType, Level, Role
from pypto.language.parser.inline import InlineFunction


def _caller(depth: int):
    frame = sys._getframe(depth + 1)
    namespace = dict(frame.f_globals)
    namespace.update(frame.f_locals)
    return namespace, (frame.f_code.co_filename, frame.f_lineno)


def program(cls=None, *, strict_ssa: bool = False):
    """`@pl.program` / `@pl.program(strict_ssa=True)`: the class becomes an `ir.Program`."""
    def apply(c, depth):
        from pypto.language.parser import parse_program_class
        namespace, location = _caller(depth + 1)
        return parse_program_class(c, strict_ssa=strict_ssa, _namespace=namespace, _location=location)
    if cls is None:
        return lambda c: apply(c, 1)
    return apply(cls, 1)


def _in_class_body(depth: int) -> bool:
    frame = sys._getframe(depth + 1)
    return "__qualname__" in frame.f_locals and "__module__" in frame.f_locals and frame.f_code.co_name != "<module>"


class ProgramMethod:
    """A `@pl.function` method waiting for its `@pl.program` class to be parsed."""

    def __init__(self, pyfunc, options: dict):
        self.pyfunc = pyfunc
        self.options = options
        self.__name__ = pyfunc.__name__
        self.__doc__ = pyfunc.__doc__

    def __call__(self, *args, **kwargs):
        from pypto.language.scopes import KernelOnlyError
        raise KernelOnlyError(f"'{self.__name__}' is a @pl.function method: decorate its class with @pl.program")


def function(fn=None, *, type: FunctionType = FunctionType.Opaque, level: Optional[Level] = None,  # noqa: A002
             role: Optional[Role] = None, attrs: Optional[dict] = None, strict_ssa: bool = False,
             auto_scope: bool = True, external_source=None, **unknown):
    """`@pl.function(type=pl.FunctionType.InCore, ...)`: parse a function into an `ir.Function`."""
    if unknown:
        reject_unknown_options("@pl.function", unknown, ("type", "level", "role", "attrs", "strict_ssa", "auto_scope",
                                                  "external_source"))
    options = dict(type=type, level=level, role=role, attrs=attrs, strict_ssa=strict_ssa)

    def apply(f, depth):
        code = getattr(f, "__code__", None)
        if code is not None and code.co_argcount and code.co_varnames[0] == "self":
            return ProgramMethod(f, options)
        if _in_class_body(depth + 1):
            return ProgramMethod(f, options)      # a method without `self`: a static helper of the program
        from pypto.language.parser import parse_function
        namespace, location = _caller(depth + 1)
        return parse_function(f, func_type=type, level=level, role=role, attrs=attrs, strict_ssa=strict_ssa,
                              auto_scope=auto_scope, _namespace=namespace, _location=location)
    if fn is None:
        return lambda f: apply(f, 1)
    return apply(fn, 1)


def inline(fn):
    """`@pl.inline`: expand this helper's body wherever a kernel calls it."""
    namespace, _ = _caller(1)
    return InlineFunction(fn, namespace)
