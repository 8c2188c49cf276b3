"""Structural equality and hashing: names and spans ignored, binding sites auto-mapped.

Vars met at a binding site (a DEF field: parameters, assignment targets, loop vars, and the
free vars in their types) are always mapped to each other, a bijection built as they are met,
so `Before` / `Expected` tests need no renaming. Any other Var (a free use, like `x` in a bare
`x + 1`) must be the very same object unless `enable_auto_mapping=True`, which maps free Vars
consistently too (`x + x` equals `y + y` but not `y + z`). The default (False) is the
reference's. `assert_structural_equal` reports the first difference with a readable path.
"""

from __future__ import annotations

import enum
import hashlib

from pypto.ir.dtypes import DataType
from pypto.ir.expr import GlobalVar, Var
from pypto.ir.node import DEF, IGNORE, Node
from pypto.ir.span import Span
from pypto.ir.function import Function
from pypto.ir.stmt import ReturnStmt, SeqStmts
from pypto.ir.types import TileView


class StructuralMismatch(AssertionError):
    pass


class _Comparer:
    def __init__(self, enable_auto_mapping: bool = False):
        self.lr: dict = {}
        self.rl: dict = {}
        self.auto = enable_auto_mapping

    def fail(self, path: str, why: str, lhs, rhs):
        raise StructuralMismatch(f"structural mismatch at {path or '<root>'}: {why}\n  lhs: {_short(lhs)}\n  rhs: {_short(rhs)}")

    def eq(self, a, b, path: str) -> None:
        a, b = _lone_statement(a), _lone_statement(b)
        if a is b:
            if isinstance(a, Var):
                self.map_var(a, b, path)
            return
        if isinstance(a, Var) or isinstance(b, Var):
            if not (isinstance(a, Var) and isinstance(b, Var)) or type(a) is not type(b):
                self.fail(path, "different node kinds", a, b)
            self.map_var(a, b, path)
            return
        if isinstance(a, Node) or isinstance(b, Node):
            if type(a) is not type(b):
                self.fail(path, f"node kind {type(a).__name__} vs {type(b).__name__}", a, b)
            if hasattr(a, "op") and hasattr(a.op, "name") and not isinstance(a.op, str):
                if getattr(a.op, "name", None) != getattr(b.op, "name", None) or type(a.op) is not type(b.op):
                    self.fail(path + ".op", f"op {a.op.name} vs {b.op.name}", a, b)
            for name, kind, va in a.field_values():
                if kind == IGNORE or name == "op" and not isinstance(va, (str,)) and hasattr(va, "name"):
                    continue
                if kind == DEF and not self.auto:
                    self.auto = True       # binding sites always map, whatever the caller asked
                    try:
                        self.eq(va, getattr(b, name), f"{path}.{name}")
                    finally:
                        self.auto = False
                else:
                    self.eq(va, getattr(b, name), f"{path}.{name}")
            return
        if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
            if len(a) != len(b):
                self.fail(path, f"length {len(a)} vs {len(b)}", a, b)
            for i, (x, y) in enumerate(zip(a, b)):
                self.eq(x, y, f"{path}[{i}]")
            return
        if isinstance(a, dict) and isinstance(b, dict):
            if list(a.keys()) != list(b.keys()) and set(a.keys()) != set(b.keys()):
                self.fail(path, f"keys {sorted(map(str, a))} vs {sorted(map(str, b))}", a, b)
            for k in a:
                self.eq(a[k], b[k], f"{path}[{k!r}]")
            return
        if isinstance(a, float) and isinstance(b, float):
            if a != b and not (a != a and b != b):
                self.fail(path, "different float values", a, b)
            return
        if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                           and not isinstance(a, (bool, enum.Enum)) and not isinstance(b, (bool, enum.Enum))):
            self.fail(path, f"value kinds {type(a).__name__} vs {type(b).__name__}", a, b)
        if a != b:
            self.fail(path, "different values", a, b)

    def map_var(self, a: Var, b: Var, path: str) -> None:
        if not self.auto:
            if a in self.lr or b in self.rl:
                if self.lr.get(a) is b and self.rl.get(b) is a or a is b:
                    return
                self.fail(path, f"variable {a.name_hint!r} is bound to "
                          f"{getattr(self.lr.get(a), 'name_hint', None)!r} but meets {b.name_hint!r}", a, b)
            if a is not b:
                self.fail(path, f"free variables {a.name_hint!r} and {b.name_hint!r} are different objects "
                          "(pass enable_auto_mapping=True to map free variables)", a, b)
            return
        ma = self.lr.get(a)
        if ma is not None:
            if ma is not b:
                self.fail(path, f"variable {a.name_hint!r} is bound to {ma.name_hint!r} but meets {b.name_hint!r}", a, b)
            return
        if b in self.rl:
            self.fail(path, f"variable {b.name_hint!r} is already bound to {self.rl[b].name_hint!r}", a, b)
        self.lr[a] = b
        self.rl[b] = a
        self.eq(a.type, b.type, f"{path}<{a.name_hint}>.type")
        if hasattr(a, "init_value"):
            self.eq(a.init_value, b.init_value, f"{path}<{a.name_hint}>.init_value")


def _lone_statement(x):
    """A body of one statement means that statement, whether or not a SeqStmts wraps it
    (the reference's builder drops the wrapper; pypto's parser keeps it). Likewise a default
    TileView() means the same as no view (None)."""
    while type(x) is SeqStmts and len(x.stmts) == 1:
        x = x.stmts[0]
    if type(x) is TileView and x.is_default():
        return None
    if type(x) is Function and not x.return_types:
        return _without_void_tail(x)
    return x


def _without_void_tail(f):
    """A void function's closing bare `return` is implied (the reference's parser writes it, pypto's
    does not); only the top level's last statement, never an early return inside a body."""
    body = f.body
    stmts = body.stmts if type(body) is SeqStmts else (body,)
    if stmts and type(stmts[-1]) is ReturnStmt and not stmts[-1].values:
        return f.replace(body=SeqStmts(stmts[:-1], body.span))
    return f


def _short(x) -> str:
    try:
        if isinstance(x, Node):
            from pypto.ir.printer import python_print
            text = python_print(x)
        else:
            text = repr(x)
    except Exception:
        text = f"<{type(x).__name__}>"
    text = text.strip()
    return text if len(text) < 400 else text[:400] + " ..."


def structural_equal(lhs, rhs, enable_auto_mapping: bool = False) -> bool:
    try:
        _Comparer(enable_auto_mapping).eq(lhs, rhs, "")
        return True
    except StructuralMismatch:
        return False


def assert_structural_equal(lhs, rhs, enable_auto_mapping: bool = False) -> None:
    """Raise an AssertionError naming the first difference (path, both sides printed)."""
    _Comparer(enable_auto_mapping).eq(lhs, rhs, "")


class _Hasher:
    def __init__(self):
        self.var_ids: dict = {}
        self.h = hashlib.blake2b(digest_size=8)

    def feed(self, x) -> None:
        h = self.h
        x = _lone_statement(x)
        if isinstance(x, Var):
            vid = self.var_ids.get(x)
            if vid is None:
                vid = self.var_ids[x] = len(self.var_ids)
                h.update(f"V{vid}:{type(x).__name__}".encode())
                self.feed(x.type)
            else:
                h.update(f"v{vid}".encode())
            return
        if isinstance(x, Node):
            h.update(type(x).__name__.encode())
            for name, kind, v in x.field_values():
                if kind != IGNORE:
                    if name == "op" and hasattr(v, "name") and not isinstance(v, GlobalVar):
                        h.update(v.name.encode())
                    else:
                        self.feed(v)
            return
        if isinstance(x, (tuple, list)):
            h.update(f"[{len(x)}".encode())
            for v in x:
                self.feed(v)
            return
        if isinstance(x, dict):
            for k in sorted(x, key=str):
                h.update(str(k).encode())
                self.feed(x[k])
            return
        if isinstance(x, (DataType, enum.Enum)):
            h.update(repr(x).encode())
            return
        h.update(repr(x).encode())


def structural_hash(node, enable_auto_mapping: bool = True) -> int:
    hs = _Hasher()
    hs.feed(node)
    return int.from_bytes(hs.h.digest(), "little")
