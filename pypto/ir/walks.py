"""Whole-subtree queries over the IR, cached on the immutable nodes they answer for.

    preorder(node)            # every IR node under node (itself included, types excluded), pre-order
    collect(node, pred)       # those for which pred(n) holds
    statements(node)          # the statements among them (expressions are not entered)
    collect_statements(node, pred)   # collect() for a predicate that holds for statements only
    defined_vars(node)        # every binding site under node, pre-order

Each walk dispatches through a table keyed by value class (like the visitors of pypto.ir.visitor)
and treats a value by its kind: not an IR node (or a Type), a Var, another expression (walked in
place), or a statement / function / program / other node. A node holding statements (a sequence,
loop, if, scope, function, program) caches its answer in its `_memo` (pypto.ir.node), so after a
pass changes one statement of a function only that statement's enclosing nodes are walked again.
"""

from __future__ import annotations

from pypto.ir.node import Node, memo_of
from pypto.ir.types import Dims, Type

# How the walks below treat a value, by its class: not an IR node (or a Type), a Var, another
# expression (walked inline), or a statement / function / program / other node (answers cached on it).
LEAF, VAR, EXPR, STMT = 0, 1, 2, 3
_KIND: dict = {}


def node_kind(cls) -> int:
    kind = _KIND.get(cls)
    if kind is None:
        from pypto.ir.expr import Expr, Var
        if not issubclass(cls, Node) or issubclass(cls, Type):
            kind = LEAF
        elif issubclass(cls, Var):
            kind = VAR
        else:
            kind = EXPR if issubclass(cls, Expr) else STMT
        kind = _KIND[cls] = kind
    return kind


def _holds_statements(n) -> bool:
    """Whether a statement-kind node has statements among its fields (a body, a sequence)."""
    for name in n._child_fields:
        value = getattr(n, name)
        cls = value.__class__
        if cls is tuple or cls is list or cls is Dims:
            if value and node_kind(value[0].__class__) == STMT:
                return True
        elif cls is dict:
            return True
        elif node_kind(cls) == STMT:
            return True
    return False


def _pre_values(out: list, values) -> None:
    table = _PRE
    for x in values:
        try:
            h = table[x.__class__]
        except KeyError:
            h = _pre_handler(x.__class__)
        if h is not None:
            h(out, x)


def _pre_dict(out: list, d) -> None:
    if d:
        _pre_values(out, d.values())


def _pre_node(out: list, n) -> None:
    out.append(n)
    table = _PRE
    for name in n._child_fields:
        x = getattr(n, name)
        try:
            h = table[x.__class__]
        except KeyError:
            h = _pre_handler(x.__class__)
        if h is not None:
            h(out, x)


def _pre_stmt(out: list, n) -> None:
    memo = getattr(n, "_memo", None)
    got = memo.get("preorder") if memo is not None else None
    if got is not None:
        out.extend(got)
    elif _holds_statements(n):
        out.extend(preorder(n))
    else:                                   # a simple statement: walked in place like an expression
        _pre_node(out, n)


_PRE: dict = {}                  # value class → how `preorder` walks it (None: not an IR node)


def _pre_handler(cls):
    kind = node_kind(cls)
    if cls is tuple or cls is list or cls is Dims:
        h = _pre_values
    elif cls is dict:
        h = _pre_dict
    else:
        h = None if kind == LEAF else _pre_stmt if kind == STMT else _pre_node
    _PRE[cls] = h
    return h


def preorder(node) -> tuple:
    """Every IR node under `node` (itself included, types excluded) in pre-order. The answer for a
    statement holding statements (a sequence, loop, if, scope, function, program) is cached on it,
    so unchanged parts of a changed function are not walked again."""
    out: list = []
    if node_kind(node.__class__) != STMT:
        _pre_values(out, (node,))
        return tuple(out)
    memo = memo_of(node)
    got = memo.get("preorder")
    if got is None:
        _pre_node(out, node)
        got = memo["preorder"] = tuple(out)
    return got


def collect(node, predicate) -> list:
    """All nodes under `node` (types excluded) for which predicate(node) is true, in pre-order."""
    return [n for n in preorder(node) if predicate(n)]


def collect_statements(node, predicate) -> list:
    """What `collect(node, predicate)` returns when predicate can hold only for statements (an
    AssignStmt, a loop, a scope, ...), found without entering expressions: after a pass rebuilt a
    function, this is a walk over its statements instead of over every node."""
    return [s for s in statements(node) if predicate(s)]


def statements(node) -> tuple:
    """The statement-kind nodes under `node` (itself included if it is one) in pre-order: what `collect`
    returns for a predicate that holds only for statements, found without entering expressions (they
    hold no statements). Cached on a node holding statements, like `preorder`."""
    if node_kind(node.__class__) != STMT:
        return ()
    memo = getattr(node, "_memo", None)
    got = memo.get("statements") if memo is not None else None
    if got is not None:
        return got
    out: list = [node]
    _from_statements(out, [getattr(node, name) for name in node._child_fields], statements)
    got = tuple(out)
    if len(got) > 1 or _holds_statements(node):
        memo_of(node)["statements"] = got
    return got


def defined_vars(node) -> list:
    """Every binding site under `node` in pre-order (params, assignments, loop vars, iter args, return
    vars). Bindings live in statements and functions only (an expression binds nothing), so the walk
    visits those alone; a statement holding statements caches its answer on it."""
    out: list = []
    _from_statements(out, (node,), _stmt_defs)
    return out


def _from_statements(out: list, values, of) -> None:
    """`out` extended with of(s) for each statement-kind node s among `values` (sequences and dicts opened;
    expressions are not entered: they hold no statement)."""
    kinds = _KIND
    for x in values:
        cls = x.__class__
        if cls is tuple or cls is list or cls is Dims:
            _from_statements(out, x, of)
        elif cls is dict:
            _from_statements(out, x.values(), of)
        else:
            kind = kinds.get(cls)
            if (kind if kind is not None else node_kind(cls)) == STMT:
                out.extend(of(x))


def _stmt_defs(node) -> tuple:
    memo = getattr(node, "_memo", None)
    got = memo.get("defs") if memo is not None else None
    if got is not None:
        return got
    out: list = []
    for name in node._def_fields:
        value = getattr(node, name)
        out.extend(value if isinstance(value, tuple) else (value,))
    nested = len(out)
    _from_statements(out, [getattr(node, name) for name in node._child_fields], _stmt_defs)
    got = tuple(out)
    if len(out) > nested or _holds_statements(node):      # a simple statement is quicker to redo than to cache
        memo_of(node)["defs"] = got
    return got
