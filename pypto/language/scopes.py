"""DSL constructs that only mean something inside a decorated kernel: loop iterators
(`pl.range`, `pl.parallel`, `pl.unroll`, `pl.pipeline`, `pl.while_`), block scopes (`pl.at`,
`pl.cluster`, `pl.spmd`, `pl.split_aiv`), `pl.yield_` / `pl.cond`, and the op stubs behind
every `pl.<op>` name.

The parser recognizes these objects by identity and translates them; calling one from plain
Python raises an error that says so, instead of silently doing something else.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional

from pypto.errors import PyptoError
from pypto.ir.enums import SplitMode


class KernelOnlyError(PyptoError, RuntimeError):
    """A DSL construct was called from plain Python, outside a decorated kernel."""


def _kernel_only(name: str):
    def stub(*args, **kwargs):
        raise KernelOnlyError(f"pl.{name} is a DSL construct: it is only usable inside a @pl.function, "
                              f"@pl.program or @pl.jit kernel body",
                              hint="the decorator parses the body into IR; it is never executed as Python")
    stub.__name__ = name
    stub.__qualname__ = name
    stub.__doc__ = f"`pl.{name}`: only meaningful inside a decorated kernel (the parser translates it)."
    return stub


range = _kernel_only("range")          # noqa: A001 - the DSL spells it pl.range
parallel = _kernel_only("parallel")
unroll = _kernel_only("unroll")
pipeline = _kernel_only("pipeline")
while_ = _kernel_only("while_")
cond = _kernel_only("cond")
yield_ = _kernel_only("yield_")
at = _kernel_only("at")
cluster = _kernel_only("cluster")
spmd = _kernel_only("spmd")
split_aiv = _kernel_only("split_aiv")
incore = _kernel_only("incore")        # older spelling of pl.at(level=pl.Level.CORE_GROUP)
comm_domain = _kernel_only("comm_domain")   # pld.comm_domain: printed by MaterializeCommDomainScopes
func_attr = _kernel_only("func_attr")
dump_tag = _kernel_only("dump_tag")          # pl.dump_tag(t): mark t for a selective dump (a statement)
static_print = _kernel_only("static_print")
static_assert = _kernel_only("static_assert")
submit = _kernel_only("submit")              # out, tid = pl.submit(self.k, ...): a task and its TaskId
spmd_submit = _kernel_only("spmd_submit")    # the same, launched over core_num blocks
manual_scope = _kernel_only("manual_scope")  # with pl.manual_scope(): no inferred edges inside
scope = _kernel_only("scope")                # with pl.scope(mode=pl.ScopeMode.X):


class ScopeMode(enum.Enum):
    """`pl.scope(mode=...)`: AUTO infers task edges from buffer overlap; MANUAL infers none (deps= only)."""
    AUTO = 0
    MANUAL = 1

LOOP_KINDS = {"range": range, "parallel": parallel, "unroll": unroll, "pipeline": pipeline}


@dataclass(frozen=True)
class SplitOption:
    """`pl.split(mode)` inside `pl.at(..., optimizations=[...])`."""
    mode: SplitMode
    slot_num: Optional[int] = None


def split(mode: SplitMode, *, slot_num: Optional[int] = None) -> SplitOption:
    """`pl.split(pl.SplitMode.UP_DOWN)`: ask the compiler to split a core-group scope across the AIV lanes."""
    if isinstance(mode, str):
        mode = SplitMode[mode]
    elif isinstance(mode, int) and not isinstance(mode, SplitMode):
        mode = SplitMode(mode)
    if slot_num is not None:
        import warnings
        warnings.warn("pl.split(..., slot_num=N) is deprecated: use optimizations=[pl.cross_core_slot(slot_num=N)]",
                      DeprecationWarning, stacklevel=2)
        _check_depths(slot_num, None)
    return SplitOption(mode, slot_num)


@dataclass(frozen=True)
class CrossCoreSlotOption:
    """`pl.cross_core_slot(slot_num=, local_slot_num=)`: the depth of a scope's cross-core rings."""
    slot_num: Optional[int] = None
    local_slot_num: Optional[int] = None


def _check_depths(slot_num, local_slot_num) -> None:
    from pypto.errors import ValueCheckError
    for name, v in (("slot_num", slot_num), ("local_slot_num", local_slot_num)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v <= 0):
            raise ValueCheckError(f"pl.cross_core_slot: {name} must be a positive integer, got {v!r}")
    if slot_num is not None and local_slot_num is not None and local_slot_num > slot_num:
        raise ValueCheckError(f"pl.cross_core_slot: local_slot_num ({local_slot_num}) must not exceed slot_num "
                              f"({slot_num})", hint="the on-chip consumer FIFO is at most as deep as the ring")


def cross_core_slot(slot_num: Optional[int] = None, local_slot_num: Optional[int] = None) -> CrossCoreSlotOption:
    """Ring depth (default 2 per direction) and, on a2a3, a shallower on-chip consumer FIFO."""
    _check_depths(slot_num, local_slot_num)
    if slot_num is None and local_slot_num is not None:
        from pypto.errors import ValueCheckError
        raise ValueCheckError("pl.cross_core_slot: local_slot_num needs slot_num")
    return CrossCoreSlotOption(slot_num, local_slot_num)


class DslOp:
    """The object behind `pl.add`, `pl.tile.load`, ...: the parser turns calls into IR op calls."""

    __slots__ = ("path",)

    def __init__(self, path: str):
        self.path = path

    def __call__(self, *args, **kwargs):
        raise KernelOnlyError(f"pl.{self.path} is a DSL op: it is only usable inside a @pl.function, "
                              f"@pl.program or @pl.jit kernel body",
                              hint="run kernels through ir.compile / pypto.runtime.run, or call a @pl.jit function")

    def __repr__(self) -> str:
        return f"<DSL op pl.{self.path}>"


class OpNamespace:
    """`pl.tile`, `pl.tensor`, `pl.system`: attribute access yields the DslOp of that family."""

    def __init__(self, prefix: str, is_op, names):
        self._prefix = prefix
        self._is_op = is_op
        self._names = names

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        path = f"{self._prefix}.{name}"
        if self._is_op(path):
            return DslOp(path)
        from pypto.language.parser.diagnostics import did_you_mean
        hint = did_you_mean(path, self._names())
        raise AttributeError(f"pl.{self._prefix} has no op '{name}'" + (f" ({hint})" if hint else ""))

    def __dir__(self):
        n = len(self._prefix) + 1
        return sorted(p[n:] for p in self._names() if p.startswith(self._prefix + "."))

    def __repr__(self) -> str:
        return f"<DSL op namespace pl.{self._prefix}>"
