"""The base of every IR node: immutable, with declared fields that drive generic machinery.

Each subclass lists FIELDS as (name, kind) pairs:
  - "def":    a binding site (Vars defined here; equality auto-maps them),
  - "usual":  compared and visited normally,
  - "ignore": cosmetic (names, spans); skipped by equality and hashing.
Visitors, mutators, structural equality and hashing all walk FIELDS, so adding a node means
declaring its fields once.

For speed each class also gets, when it is defined, `_field_names` (every field) and
`_child_fields` (the fields that may hold IR nodes the traversal engine descends into: fields
named in PLAIN_FIELD_NAMES hold only names, numbers, enums, dtypes or Types, which no visitor
enters). Analyses cache their results on a node in its `_memo` dict (`memo_of(node)`): nodes are
immutable, so a cached answer stays right for the node's life, and `replace` starts a fresh one.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pypto.ir.span import NO_SPAN, Span

DEF, USUAL, IGNORE = "def", "usual", "ignore"

# Field names that, on every node class, hold no IR node other than a Type (visitors never enter
# Types). A node class may name more of its own in PLAIN_FIELDS.
PLAIN_FIELD_NAMES = frozenset({"type", "return_types", "name_hint", "name", "dtype", "param_directions",
                               "func_type", "level", "role", "kind"})


class IRTuple(tuple):
    """A node's sequence field (shape, args, stmts, ...). The reference's Python API hands these out as
    lists, and its callers compare them with list literals (`t.shape == [1, 24]`, `call.args == [v]`),
    so an IRTuple also equals a list of equal items, an integer constant counting as the int it holds."""
    __slots__ = ()

    def __eq__(self, other):
        if isinstance(other, list):
            return len(self) == len(other) and all(_item_equals(a, b) for a, b in zip(self, other))
        return tuple.__eq__(self, other)

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__


def _item_equals(a, b) -> bool:
    from pypto.ir.expr import ConstInt
    if isinstance(a, ConstInt) and isinstance(b, int) and not isinstance(b, bool):
        return a.value == b
    return bool(a == b)


def as_field_value(v: Any) -> Any:
    """Node fields hold sequences as IRTuples (a plain tuple is wrapped; anything else is kept)."""
    return IRTuple(v) if v.__class__ is tuple else v


# The constructors that run most often (Var, ConstInt, Call, AssignStmt, ...) set their fields with
# this directly: a third of the cost of `_set(**fields)` (no keyword dict, no tuple check per field;
# their sequence fields are made IRTuples where they are built).
set_field = object.__setattr__


class Node:
    __slots__ = ("span", "_memo")
    FIELDS: ClassVar[tuple[tuple[str, str], ...]] = ()
    PLAIN_FIELDS: ClassVar[frozenset] = frozenset()
    _field_names: ClassVar[tuple[str, ...]] = ()
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _def_fields: ClassVar[tuple[str, ...]] = ()
    _use_fields: ClassVar[tuple[tuple[str, bool], ...]] = ()     # (name, is a binding site), FIELDS order

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        plain = PLAIN_FIELD_NAMES | cls.PLAIN_FIELDS
        cls._field_names = tuple(name for name, _kind in cls.FIELDS)
        cls._child_fields = tuple(name for name in cls._field_names if name not in plain)
        cls._def_fields = tuple(name for name, kind in cls.FIELDS if kind == DEF)
        cls._use_fields = tuple((name, kind == DEF) for name, kind in cls.FIELDS if kind == DEF or name not in plain)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"IR nodes are immutable; use .replace({key}=...) to get a changed copy")

    def _set(self, **values: Any) -> None:
        set_ = object.__setattr__
        for k, v in values.items():
            set_(self, k, IRTuple(v) if v.__class__ is tuple else v)

    def replace(self, **changes: Any) -> "Node":
        """A copy with some fields changed (the same node when nothing changes)."""
        for k, v in changes.items():
            if getattr(self, k) is not v:
                break
        else:
            return self
        cls = type(self)
        new = object.__new__(cls)
        set_ = object.__setattr__
        slots = _SLOTS_CACHE.get(cls) or _all_slots(cls)
        for name in slots:
            if name in changes:
                v = changes[name]
                set_(new, name, IRTuple(v) if v.__class__ is tuple else v)     # (as_field_value, inlined)
            else:
                set_(new, name, getattr(self, name))
        return new

    def field_values(self):
        for name, kind in self.FIELDS:
            yield name, kind, getattr(self, name)

    def __repr__(self) -> str:
        from pypto.ir.printer import python_print
        try:
            return python_print(self)
        except Exception:  # printing must never hide the real problem
            return f"<{type(self).__name__}>"


_SLOTS_CACHE: dict = {}


def _all_slots(cls) -> tuple[str, ...]:
    slots = _SLOTS_CACHE.get(cls)
    if slots is None:
        names: list[str] = []
        for klass in reversed(cls.__mro__):
            for s in getattr(klass, "__slots__", ()):
                if s not in names and s != "_memo":
                    names.append(s)
        slots = _SLOTS_CACHE[cls] = tuple(names)
    return slots


def memo_of(node: Node) -> dict:
    """The node's analysis cache (created on first use; a replaced copy gets its own)."""
    try:
        return node._memo
    except AttributeError:
        memo: dict = {}
        object.__setattr__(node, "_memo", memo)
        return memo


def span_of(span: Span | None) -> Span:
    return span if span is not None else NO_SPAN
