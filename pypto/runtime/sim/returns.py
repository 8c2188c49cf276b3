"""Call sites of kernels: argument directions, and which arguments a kernel's results are.

A kernel returns the GM tensors it wrote (its Out / InOut params, through `tile.store`
chains and loop carries). The host cannot wait for the task to learn that, so the mapping
"return value i is argument j" is read from the callee's IR once, when the site is generated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from pypto.errors import UnsupportedError
from pypto.ir.enums import FunctionType, ParamDirection
from pypto.ir.expr import Call, Var
from pypto.ir.function import Function, Program
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, ReturnStmt, WhileStmt, YieldStmt, flatten_to_stmts
from pypto.ir.types import ScalarType, TensorType
from pypto.ir.visitor import IRVisitor
from pypto.ir.walks import collect

READ, WRITE, READWRITE = "in", "out", "inout"
_NO_DEP = "no_dep"              # an argument direction: tracked by the callee's direction, ordered by nothing
_DIRECTION_NAMES = {"in": READ, "input": READ, "out": WRITE, "output": WRITE, "outputexisting": WRITE,
                    "output_existing": WRITE, "inout": READWRITE, "nodep": _NO_DEP, "no_dep": _NO_DEP,
                    "scalar": None}


@dataclass(frozen=True)
class CallSite:
    """One kernel call in a host (or Group) function."""
    callee: str
    directions: tuple           # per argument: "in" / "out" / "inout", or None (scalar, no dependency)
    ret_map: Optional[tuple]    # per callee result: the index of the argument it is
    multi: bool                 # the call's value is a tuple
    span: object
    core_num: int = 1           # blocks of an Spmd launch
    no_dep: tuple = ()          # arguments left out of dependency tracking (pl.no_dep / pl.adir.no_dep)


def _direction(value) -> Optional[str]:
    name = getattr(value, "name", value)
    key = str(name).lower()
    if key not in _DIRECTION_NAMES:
        raise UnsupportedError(f"unknown argument direction {value!r} in a call's arg_directions")
    return _DIRECTION_NAMES[key]


def call_directions(call: Call, callee: Function) -> tuple:
    given = call.attrs.get("arg_directions")
    out = []
    for i, arg in enumerate(call.args):
        if not isinstance(arg.type, TensorType):
            out.append(None)
        elif given is not None and i < len(given) and _direction(given[i]) is not _NO_DEP:
            out.append(_direction(given[i]))
        elif i < len(callee.param_directions):
            d = callee.param_directions[i]
            out.append({ParamDirection.In: READ, ParamDirection.Out: WRITE, ParamDirection.InOut: READWRITE}[d])
        else:
            out.append(READWRITE)
    return tuple(out)


class _Defs(IRVisitor):
    """Var → what defines it (an expression, or the value a loop / if result starts from)."""

    def __init__(self):
        self.defs: dict = {}
        self.returns: list = []

    def visit_assign_stmt(self, s: AssignStmt):
        self.defs[s.var] = s.value
        self.visit_children(s)

    def visit_for_stmt(self, s: ForStmt):
        for a, rv in zip(s.iter_args, s.return_vars):
            self.defs[rv] = a.init_value
            self.defs[a] = a.init_value
        self.visit_children(s)

    visit_while_stmt = visit_for_stmt

    def visit_if_stmt(self, s: IfStmt):
        stmts = flatten_to_stmts(s.then_body)
        if stmts and isinstance(stmts[-1], YieldStmt):
            for rv, val in zip(s.return_vars, stmts[-1].values):
                self.defs[rv] = val
        self.visit_children(s)

    def visit_return_stmt(self, s: ReturnStmt):
        self.returns.append(s)


def _trace(expr, params: dict, defs: dict, program: Optional[Program], depth: int = 0) -> Optional[int]:
    from pypto.ir.expr import TupleGetItem
    index = None                                  # pending TupleGetItem index into a call's results
    while depth < 10000:
        depth += 1
        if isinstance(expr, Var) and expr in params:
            return params[expr]
        if isinstance(expr, Var) and expr in defs:
            expr = defs[expr]
            continue
        if isinstance(expr, TupleGetItem):
            index = expr.index
            expr = expr.tuple
            continue
        if isinstance(expr, Call) and expr.is_function_call() and program is not None:
            callee = program.get_function(expr.op.name)
            inner = return_param_map(callee, program) if callee is not None else None
            if not inner:
                return None
            expr = expr.args[inner[index or 0]]
            index = None
            continue
        if isinstance(expr, Call) and not expr.is_function_call() and expr.op.reuses_input is not None:
            expr = expr.args[expr.op.reuses_input]
            continue
        return None
    return None


def return_param_map(func: Function, program: Optional[Program] = None) -> Optional[tuple]:
    """For each value the function returns, the index of the parameter it is (None: untraceable)."""
    finder = _Defs()
    finder.visit(func.body)
    if not finder.returns:
        return ()
    params = {p: i for i, p in enumerate(func.params)}
    out = []
    for v in finder.returns[-1].values:
        idx = _trace(v, params, finder.defs, program)
        if idx is None:
            return None
        out.append(idx)
    return tuple(out)


def make_call_site(call: Call, callee: Function, program: Program, span) -> CallSite:
    ret_map = return_param_map(callee, program)
    n_results = len(callee.return_types)
    if ret_map is None and n_results:
        if all(isinstance(t, ScalarType) for t in callee.return_types):
            raise UnsupportedError(f"kernel '{callee.name}' returns a scalar; a task cannot return values to the "
                                   "host in the simulator", span)
        raise UnsupportedError(f"cannot tell which argument kernel '{callee.name}' returns", span,
                               hint="a kernel returns the Out / InOut tensors it stores to")
    core_num = call.attrs.get("core_num", callee.attrs.get("core_num", 1))
    if not isinstance(core_num, int):
        core_num = getattr(core_num, "value", None)
        if not isinstance(core_num, int):
            raise UnsupportedError(f"Spmd launch of '{callee.name}' with a core_num that is not a constant", span)
    return CallSite(callee.name, call_directions(call, callee), ret_map, n_results > 1, span, core_num,
                    _no_dep_args(call, callee))


def _no_dep_args(call: Call, callee: Function) -> tuple:
    """The arguments of `call` the runtime leaves out of dependency tracking: its own `pl.no_dep` positions
    (attrs arg_direction_overrides, or a pl.adir.no_dep direction) and, for a Group / Spmd launch, those of
    its member calls that pass one of the wrapper's parameters."""
    marked = set(_marked(call))
    if callee.func_type in (FunctionType.Group, FunctionType.Spmd):
        params = {p: i for i, p in enumerate(callee.params)}
        for inner in collect(callee.body, lambda n: isinstance(n, Call) and n.is_function_call()):
            marked.update(params[inner.args[i]] for i in _marked(inner) if inner.args[i] in params)
    return tuple(sorted(i for i in marked if i < len(call.args)))


def _marked(call: Call) -> list:
    given = call.attrs.get("arg_directions") or ()
    return list(call.attrs.get("arg_direction_overrides") or ()) + \
        [i for i, d in enumerate(given) if _direction(d) is _NO_DEP]
