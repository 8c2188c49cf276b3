"""Parsing state: the module environment (globals, program signatures) and the per-function
context (the name table, the statement blocks being filled, the loop / if frames that
collect `pl.yield_` values).

The IR the parser emits is *non-SSA*: one Var per Python name per function, reused on every
rebinding with the same type (ConvertToSSA renames later). A rebinding with a different type
gets a new Var at the function's top level, and is an error inside a loop or if.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from pypto.ir.equality import structural_equal
from pypto.ir.expr import IterArg, Var
from pypto.ir.ops.common import describe
from pypto.ir.span import Span
from pypto.ir.stmt import SeqStmts, Stmt
from pypto.ir.types import Type
from pypto.language.parser.diagnostics import (ParserTypeError, SSAViolationError, UndefinedVariableError,
                                               did_you_mean)
from pypto.language.parser.dump_tags import end_tag
from pypto.language.parser.source import SourceFile


@dataclass
class Signature:
    """What a caller needs of a program function: params, directions and return types."""
    name: str
    param_names: list
    param_types: list
    directions: list
    return_types: Optional[list]   # None until known (no return annotation and body not parsed yet)


@dataclass
class ModuleEnv:
    """What every function of one parse shares."""
    source: SourceFile
    globals: dict
    signatures: dict = field(default_factory=dict)         # name → Signature (program methods)
    resolve_return: Optional[Callable[[str], list]] = None  # parses a callee on demand
    auto_added: dict = field(default_factory=dict)         # module-level ir.Functions called by name
    in_program: bool = False


@dataclass
class YieldFrame:
    """A for / while / if whose body may end in `pl.yield_`."""
    kind: str                     # "for" | "while" | "if"
    targets: Optional[list] = None
    values: list = field(default_factory=list)   # one list of Exprs per branch that yielded
    spans: list = field(default_factory=list)


_MISSING = object()


class FunctionContext:
    """The state of parsing one function body."""

    def __init__(self, env: ModuleEnv, *, strict_ssa: bool = False, func_name: str = ""):
        self.env = env
        self.func_name = func_name
        self.strict_ssa = strict_ssa
        self.names: dict = {}
        self.def_spans: dict = {}
        self.var_depth: dict = {}
        self.var_block: dict = {}          # Var → the statement list its binding was emitted into
        self.control_depth = 0
        self.blocks: list = [[]]
        self.frames: list = []
        self.func_attrs: dict = {}
        self.region_vars: set = set()
        self.split_modes: list = []                # SplitMode of each enclosing pl.split_aiv region
        self.return_types: Optional[list] = None   # declared return types (None: inferred from the return)
        self.written_params: set = set()           # Out / InOut parameter Vars (`out = expr` writes through)
        self.storage_roots: dict = {}              # a Var holding a written parameter's buffer → that parameter
        self.input_params: set = set()             # In tensor parameters not yet re-bound (see _write_through)
        self.unbound_bases: dict = {}              # name → the one Ptr Var of a MemRef written by name
        # the task graph (parser/task_graph.py): what this body may say about tasks and runtime scopes
        self.func_type = None                      # the FunctionType being parsed (None: not known here)
        self.auto_scope = True                     # False: the function places its own AUTO pl.scope() regions
        self.manual_scope_depth = 0                # enclosing `with pl.manual_scope():` regions
        self.cluster_depth = 0                     # enclosing `with pl.cluster():` regions (one Group task)
        self.spmd_depth = 0                        # enclosing `with pl.spmd(n):` regions (one launch, one task)
        self.dump_tags: list = []                  # pl.dump_tag markers (parser/dump_tags.py), in order

    # -- locations ------------------------------------------------------------
    def span(self, node) -> Span:
        return self.env.source.span(node)

    # -- statements -------------------------------------------------------------
    def emit(self, stmt: Stmt) -> None:
        self.blocks[-1].append(stmt)

    def push_block(self) -> None:
        self.blocks.append([])

    def pop_block(self, span: Optional[Span] = None) -> SeqStmts:
        return SeqStmts(self.blocks.pop(), span)

    # -- names ------------------------------------------------------------------
    def lookup(self, name: str, node) -> Any:
        if name in self.names:
            return self.names[name]
        value = self.env.globals.get(name, _MISSING)
        if value is not _MISSING:
            return value
        value = getattr(builtins, name, _MISSING)
        if value is not _MISSING:
            return value
        candidates = list(self.names) + [k for k in self.env.globals if not k.startswith("__")]
        raise UndefinedVariableError(f"Undefined variable '{name}'", self.span(node),
                                     hint=did_you_mean(name, candidates) or "define it before use, or pass it as a parameter")

    def bind(self, name: str, value: Any, span: Optional[Span]) -> None:
        """Bind a name to a fresh binding site (params, loop vars, iter args, return vars, constants)."""
        self.names[name] = value
        self.def_spans[name] = span
        if isinstance(value, Var):
            self.var_depth[value] = self.control_depth
            self.var_block[value] = self.blocks[-1]

    def assign_var(self, name: str, type_: Type, span: Optional[Span]) -> Var:
        """The Var an assignment `name = <value of type_>` writes (reused on same-type rebinding)."""
        cur = self.names.get(name)
        if isinstance(cur, Var):
            end_tag(self, cur)                     # a rebound name is a new value: a pl.dump_tag on it ends
            if self.strict_ssa:
                self._ssa_error(name, span)
            if not isinstance(cur, IterArg) and not self._is_region_var(cur) and structural_equal(cur.type, type_) \
                    and self.var_block.get(cur) is not self.blocks[-1]:
                # re-assigned inside a loop body or branch: one Var, so ConvertToSSA builds the carry / phi
                self.def_spans[name] = span
                return cur
            # (a finished loop's loop var carries nothing: a new value of another type is a new name)
            if self.var_depth.get(cur, 0) < self.control_depth and not isinstance(cur, IterArg) \
                    and not self._is_region_var(cur) and not structural_equal(cur.type, type_):
                raise ParserTypeError(f"Cannot reassign '{name}' with a different type inside a loop or if: "
                                      f"it was {describe(cur.type)}, now {describe(type_)}", span,
                                      hint="use a new name, or carry the value with init_values= / pl.yield_",
                                      note=f"previous definition at {self.def_spans.get(name)}")
        elif cur is not None and not isinstance(cur, Var) and self.control_depth > 0 and name in self.names \
                and _is_python_scalar(cur):
            raise ParserTypeError(f"Cannot reassign '{name}' inside a loop or if: it holds the compile-time "
                                  f"constant {cur!r}", span,
                                  hint=f"annotate its first assignment (e.g. {name}: pl.Scalar[pl.INDEX] = {cur!r}) "
                                       "to make it a runtime scalar")
        # a new binding (also straight-line shadowing in the same block, which keeps the IR in SSA form)
        var = Var(name, type_, span)
        if isinstance(cur, Var) and cur in self.written_params:     # (cur may be any compile-time value)
            self.written_params.add(var)     # still the caller's buffer: `out = expr` keeps writing through
            self.storage_roots[var] = self.storage_root(cur)
        self.bind(name, var, span)
        return var

    def storage_root(self, var) -> Optional[Var]:
        """The written parameter whose buffer `var` holds (itself, a rebinding of it, or a loop carry started
        from it), or None."""
        root = self.storage_roots.get(var)
        if root is None and var in self.written_params:
            root = var
        return root

    def carry_storage(self, init, carried: Var) -> None:
        """A loop carry (iter arg or return var) started from a parameter's buffer holds that buffer."""
        root = self.storage_root(init) if isinstance(init, Var) else None
        if root is not None:
            self.storage_roots[carried] = root

    def _is_region_var(self, var: Var) -> bool:
        return var in self.region_vars

    def mark_region_var(self, var: Var) -> None:
        """Loop vars and lane vars are bound by their statement; assignments never write them."""
        self.region_vars.add(var)

    def _ssa_error(self, name: str, span: Optional[Span]) -> None:
        raise SSAViolationError(f"SSA violation: '{name}' is assigned more than once", span,
                                hint="strict_ssa=True forbids rebinding; use a new name",
                                previous_span=self.def_spans.get(name))


def _is_python_scalar(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)
