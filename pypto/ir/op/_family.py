"""The builder behind each `pypto.ir.op.<family>` module: `family.<op>(*args, **kwargs)` → a Call."""

from __future__ import annotations

import sys

from pypto.ir.span import Span
from pypto.lazy_exports import resolve


def _caller_span() -> Span:
    frame = sys._getframe(2)
    return Span(frame.f_code.co_filename, frame.f_lineno, 1)


class OpFamily:
    """Attribute access gives the builder of `<prefix>.<name>` (`or_` → `or` unless the op itself ends in `_`)."""

    def __init__(self, prefix: str):
        self._prefix = prefix

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        from pypto.ir.ops.registry import has_op
        path = f"{self._prefix}.{name}"
        if name.endswith("_") and not has_op(path):
            path = path[:-1]

        def build(*args, span: Span = None, **kwargs):
            build_call = resolve("pypto.language.ops:build_call")  # the op layer sits above pypto.ir
            if args and isinstance(args[-1], Span):  # the reference passes the span last, positionally
                args, span = args[:-1], args[-1]
            return build_call(path, list(args), kwargs, span if span is not None else _caller_span())

        build.__name__ = name
        build.__qualname__ = path
        build.__doc__ = f"Build a call of {path} (arguments as for pl.{path})."
        return build

    def __repr__(self) -> str:
        return f"<op family {self._prefix}>"
