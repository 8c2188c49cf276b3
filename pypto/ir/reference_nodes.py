"""The reference's per-operator scalar expression classes, as views of pypto's two scalar nodes.

pypto keeps scalar arithmetic in one `BinaryExpr` / `UnaryExpr` keyed by an operator name
(expr.py). The reference has a class per operator (`ir.Add`, `ir.Min`, `ir.Neg`, ...). Each name
here is such a view: calling it builds the pypto node, `isinstance` matches pypto nodes of that
operator, and visitor hooks named after it (`visit_min`, `mutate_neg`) are dispatched by
`pypto.ir.visitor_protocol`.

    ir.Min(a, b, DataType.INDEX, span)      # BinaryExpr("min", a, b, INDEX, span)
    isinstance(e, ir.Neg)                   # e is a UnaryExpr with op "neg"
    isinstance(e, ir.Submit)                # e is a function Call written as pl.submit (attrs["submit"])
"""

from __future__ import annotations

from pypto.ir.expr import BinaryExpr, Call, UnaryExpr

# reference class name → (pypto node class, operator name)
BINARY_CLASSES = {
    "Add": "add", "Sub": "sub", "Mul": "mul", "FloorDiv": "floordiv", "FloorMod": "floormod",
    "FloatDiv": "truediv", "Min": "min", "Max": "max", "Pow": "pow", "Eq": "eq", "Ne": "ne", "Lt": "lt",
    "Le": "le", "Gt": "gt", "Ge": "ge", "And": "and", "Or": "or", "Xor": "xor", "BitAnd": "bitand",
    "BitOr": "bitor", "BitXor": "bitxor", "BitShiftLeft": "shl", "BitShiftRight": "shr",
}
UNARY_CLASSES = {"Abs": "abs", "Neg": "neg", "Not": "not", "BitNot": "bitnot"}


class _OperatorView(type):
    """Metaclass of the views: construction and isinstance go to the pypto node with that operator."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, cls.node_class) and obj.op == cls.op_name

    def __call__(cls, *args, **kwargs):
        return cls.node_class(cls.op_name, *args, **kwargs)


def _view(name: str, node_class, op_name: str):
    return _OperatorView(name, (), {"node_class": node_class, "op_name": op_name,
                                    "__doc__": f"The reference's ir.{name}: a {node_class.__name__} with op {op_name!r}."})


class _SubmitView(type):
    """`isinstance(e, ir.Submit)`: a function Call the program wrote as `pl.submit` / `pl.spmd_submit`."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Call) and obj.is_function_call() and bool(obj.attrs.get("submit"))

    def __call__(cls, *args, **kwargs):
        raise TypeError("ir.Submit is a view: pypto writes a task launch as a Call with attrs['submit'], between "
                        "its system.task_options and system.task_id statements; build it with the parser")


Submit = _SubmitView("Submit", (), {"__doc__": "The reference's ir.Submit (a task launch that also hands out a "
                                               "TaskId): a function Call with attrs['submit'] set."})

VIEWS = {name: _view(name, BinaryExpr, op) for name, op in BINARY_CLASSES.items()}
VIEWS["Submit"] = Submit
VIEWS.update({name: _view(name, UnaryExpr, op) for name, op in UNARY_CLASSES.items()})
# operator name → reference class name, for hook dispatch (visit_add, visit_neg, ...)
HOOK_NAME = {(BinaryExpr, op): _name for _name, op in BINARY_CLASSES.items()}
HOOK_NAME.update({(UnaryExpr, op): _name for _name, op in UNARY_CLASSES.items()})
globals().update(VIEWS)
