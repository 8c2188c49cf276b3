"""The base of every IR node: immutable, with declared fields that drive generic machinery.

Each subclass lists FIELDS as (name, kind) pairs:
  - "def":    a binding site (Vars defined here; equality auto-maps them),
  - "usual":  compared and visited normally,
  - "ignore": cosmetic (names, spans); skipped by equality and hashing.
Visitors, mutators, structural equality and hashing all walk FIELDS, so adding a node means
declaring its fields once.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pypto.ir.span import NO_SPAN, Span

DEF, USUAL, IGNORE = "def", "usual", "ignore"


class Node:
    __slots__ = ("span",)
    FIELDS: ClassVar[tuple[tuple[str, str], ...]] = ()

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"IR nodes are immutable; use .replace({key}=...) to get a changed copy")

    def _set(self, **values: Any) -> None:
        for k, v in values.items():
            object.__setattr__(self, k, v)

    def replace(self, **changes: Any) -> "Node":
        """A copy with some fields changed (the same node when nothing changes)."""
        if all(getattr(self, k) is v for k, v in changes.items()):
            return self
        new = object.__new__(type(self))
        for name in _all_slots(type(self)):
            object.__setattr__(new, name, changes[name] if name in changes else getattr(self, name))
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
                if s not in names:
                    names.append(s)
        slots = _SLOTS_CACHE[cls] = tuple(names)
    return slots


def span_of(span: Span | None) -> Span:
    return span if span is not None else NO_SPAN
