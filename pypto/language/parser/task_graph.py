"""The task-graph constructs of an orchestration body (pypto/ir/ops/task_graph.py holds their ops).

    with pl.at(level=..., deps=[t0], no_dep_args=[out]) as t1:   → task_options; the scope; t1 = task_id()
    with pl.spmd(4, deps=[t1], predicate=(flags[0] > 0)) as t2:  → the same around an SpmdScopeStmt
    out, tid = pl.submit(self.k, x, pl.no_dep(out), deps=[t])    → task_options; out = self.k(x, out); task_id
    out, tid = pl.spmd_submit(self.k, x, out, core_num=4)        → an SpmdScopeStmt around the call
    tids = pl.array.create(n, pl.TASK_ID); tids[i] = tid; tids[i] → task_id_array / _set / _get
    join = pl.system.task_dummy(deps=[a, b])
    with pl.manual_scope():  /  with pl.scope(mode=pl.ScopeMode.MANUAL):   → manual_scope_begin / _end

`task_options` goes right before the call it qualifies and `task_id` right after it; the runtime
applies the options to the next task the orchestration submits and hands out that task's id.
A predicate is matched syntactically (`tensor[indices] OP int literal`) and never evaluated here:
reading the tensor in the orchestration would wait for its producer, which is what it avoids.
"""

from __future__ import annotations

import ast

from pypto.ir.dtypes import TASK_ID
from pypto.ir.enums import ArgDirection, FunctionType, ParamDirection
from pypto.ir.expr import Call, ConstInt, Expr, TupleGetItem, Var
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, EvalStmt, SpmdScopeStmt
from pypto.ir.types import ScalarType, TaskIdArrayType, TensorType, TupleType, UnknownType
from pypto.language import scopes
from pypto.language.parser.diagnostics import (InvalidOperationError, ParserSyntaxError, ParserTypeError,
                                               UnsupportedFeatureError)
from pypto.language.parser.dispatch import eval_expr
from pypto.language.parser.values import MethodRef, describe_value, is_scalar_expr, to_expr

_COMPARE = {ast.Eq: "eq", ast.NotEq: "ne", ast.Gt: "gt", ast.Lt: "lt", ast.GtE: "ge", ast.LtE: "le"}
_MIRROR = {"eq": "eq", "ne": "ne", "gt": "lt", "lt": "gt", "ge": "le", "le": "ge"}
TASK_OPTION_KEYS = ("deps", "no_dep_args", "predicate", "allow_early_resolve", "dumps")
# Functions whose kernel calls start the lanes of one task (a Group's AIC / AIV members, an Spmd's blocks)
LAUNCH_WRAPPERS = (FunctionType.Group, FunctionType.Spmd)
KERNEL_TYPES = (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV, *LAUNCH_WRAPPERS)
CREATE_TENSOR_PATHS = ("create_tensor", "tensor.create", "tensor.create_tensor")


def manual_dep_attrs(kwargs: dict, attrs, span):
    """`pl.create_tensor(..., manual_dep=True)`: the tensor leaves dependency tracking for its whole lifetime,
    carried as the call's attrs (printed only when set)."""
    value = kwargs.pop("manual_dep")
    if not isinstance(value, bool):
        raise ParserTypeError(f"manual_dep= must be True or False, got {describe_value(value)}", span)
    return {**(attrs or {}), "manual_dep": True} if value else attrs


def is_task_id(e) -> bool:
    t = getattr(e, "type", None)
    return isinstance(t, ScalarType) and t.dtype is TASK_ID


def deps_list(value, span) -> list:
    """The entries of `deps=[...]`: TaskIds and TaskId arrays; `None` (no producer yet) is dropped."""
    if value is None:
        return []
    items = getattr(value, "elements", value)
    if not isinstance(items, (list, tuple)):
        raise ParserTypeError(f"deps= takes a list of TaskIds, got {describe_value(value)}", span,
                              hint="e.g. deps=[tid] or deps=[tids] for a pl.array of pl.TASK_ID")
    out = []
    for x in items:
        if x is None:
            continue
        if not is_task_id(x) or isinstance(x, TupleGetItem):
            raise ParserTypeError(f"deps= entries must be a TaskId variable, got {describe_value(x)}", span,
                                  hint="bind it with `as tid`, `out, tid = pl.submit(...)` or read it from a "
                                       "TaskId array; tensors go in no_dep_args= instead")
        out.append(x)
    return out


def check_deps_syntax(ctx, call: ast.Call, what: str) -> None:
    """An entry of a `deps=[...]` literal indexes only a TaskId array: `res[1]` on the flat result of
    `res = pl.submit(...)` is a TaskId too, but not one the runtime can name, so it is refused as written."""
    kw = next((k for k in call.keywords if k.arg == "deps"), None)
    if kw is None or not isinstance(kw.value, (ast.List, ast.Tuple)):
        return
    for elt in kw.value.elts:
        if isinstance(elt, ast.Subscript) and \
                not isinstance(getattr(eval_expr(ctx, elt.value), "type", None), TaskIdArrayType):
            raise ParserTypeError(f"{what} deps= entries must be a TaskId variable, a TASK_ID array element "
                                  f"(e.g. `arr[i]`), or None - got '{ast.unparse(elt)}'", ctx.span(elt),
                                  hint="bind the TaskId to its own name (`out, tid = pl.submit(...)`) and pass that")


def tensor_list(value, span, keyword: str, hint: str) -> list:
    """The entries of `no_dep_args=[...]` / `dumps=[...]`: tensors visible here, each named once."""
    items = getattr(value, "elements", value)
    if not isinstance(items, (list, tuple)):
        raise ParserTypeError(f"{keyword}= takes a list of tensors, got {describe_value(value)}", span, hint=hint)
    for i, x in enumerate(items):
        if not isinstance(getattr(x, "type", None), TensorType):
            raise ParserTypeError(f"{keyword}= entries must be tensors visible here, got {describe_value(x)}", span,
                                  hint=hint)
        if any(x is y for y in items[:i]):
            raise ParserTypeError(f"{keyword}= lists '{getattr(x, 'name_hint', x)}' more than once", span)
    return list(items)


def no_dep_list(value, span) -> list:
    return tensor_list(value, span, "no_dep_args",
                       "deps= takes TaskIds; no_dep_args= takes the tensors to opt out of tracking")


def dumps_list(value, span) -> list:
    return tensor_list(value, span, "dumps", "dumps= takes the tensors of this task to mark for a selective dump")


def unwrap_no_dep(values: list) -> tuple:
    """(the arguments with each `pl.no_dep(t)` replaced by t, the positions so marked)."""
    out, marked = [], []
    for i, v in enumerate(values):
        if isinstance(v, Call) and not v.is_function_call() and v.op.name == "tensor.no_dep":
            v = v.args[0]
            marked.append(i)
        out.append(v)
    return out, marked


def call_attrs(attrs, no_dep: list, n_args: int, span):
    """A kernel call's attrs with `pl.no_dep` positions as `arg_direction_overrides` (argument indices the
    runtime leaves out of dependency tracking), after checking a given `arg_directions` (one per argument)."""
    attrs = dict(attrs or {})
    given = attrs.get("arg_directions")
    if given is not None:
        given = list(getattr(given, "elements", given))
        bad = next((d for d in given if not isinstance(d, (ArgDirection, ParamDirection))), None)
        if bad is not None:
            raise ParserTypeError(f"arg_directions entries are pl.adir.<direction>, got {describe_value(bad)}", span)
        if given and len(given) != n_args:
            raise ParserTypeError(f"arg_directions has {len(given)} entries for a call with {n_args} argument(s)",
                                  span, hint="give one pl.adir.<direction> per argument")
        attrs["arg_directions"] = given
    overrides = list(attrs.get("arg_direction_overrides") or [])
    if any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n_args for i in overrides):
        raise ParserTypeError(f"arg_direction_overrides are argument indices below {n_args}, got {overrides}", span)
    merged = sorted(set(overrides) | set(no_dep))
    if merged:
        attrs["arg_direction_overrides"] = merged
    return attrs or None


def parse_predicate(ctx, node: ast.expr) -> tuple:
    """`tensor[indices] OP int-literal` (or mirrored) → (tensor, [indices], op name, literal)."""
    span = ctx.span(node)
    hint = "only `tensor[indices] OP int-literal` is expressible (==, !=, >, <, >=, <=); reduce anything richer " \
           "to one gate value in a prior kernel"
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE):
        raise ParserSyntaxError("predicate= must be a single comparison", span, hint=hint)
    op = _COMPARE[type(node.ops[0])]
    lhs, rhs = node.left, node.comparators[0]
    if not isinstance(lhs, ast.Subscript):
        lhs, rhs, op = rhs, lhs, _MIRROR[op]
    literal = _int_literal(rhs)
    if not isinstance(lhs, ast.Subscript) or literal is None:
        raise ParserSyntaxError("predicate= compares one tensor element with an integer literal", span, hint=hint)
    tensor = eval_expr(ctx, lhs.value)
    if not isinstance(getattr(tensor, "type", None), TensorType):
        raise ParserTypeError(f"predicate= reads a tensor element, got {describe_value(tensor)}", span, hint=hint)
    idx_nodes = list(lhs.slice.elts) if isinstance(lhs.slice, ast.Tuple) else [lhs.slice]
    if len(idx_nodes) != len(tensor.type.shape):
        raise ParserTypeError(f"predicate= needs one index per dim of the rank-{len(tensor.type.shape)} tensor", span)
    indices = []
    for n in idx_nodes:
        v = eval_expr(ctx, n)
        if isinstance(v, bool) or not (isinstance(v, int) or (isinstance(v, Expr) and isinstance(v.type, ScalarType)
                                                               and v.type.dtype.is_int())):
            raise ParserTypeError(f"predicate= indices are integers, got {describe_value(v)}", ctx.span(n), hint=hint)
        indices.append(to_expr(v, span))
    return tensor, indices, op, literal


def _int_literal(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int_literal(node.operand)
        return None if inner is None else -inner
    return None


def split_predicate(node: ast.Call) -> tuple:
    """(the call without its predicate= keyword, the predicate's AST or None): the predicate is never evaluated."""
    pred = next((k.value for k in node.keywords if k.arg == "predicate"), None)
    if pred is None:
        return node, None
    stripped = ast.Call(func=node.func, args=node.args, keywords=[k for k in node.keywords if k.arg != "predicate"])
    ast.copy_location(stripped, node)
    return stripped, pred


def emit_options(ctx, span, *, deps=(), no_dep=(), predicate=None, allow_early_resolve=False, dumps=()) -> None:
    """The task_options statement for the next task, when any option is set."""
    if not (deps or no_dep or predicate is not None or allow_early_resolve or dumps):
        return
    if not isinstance(allow_early_resolve, bool):
        raise ParserTypeError(f"allow_early_resolve= must be True or False, got {describe_value(allow_early_resolve)}",
                              span)
    pred_args, op, value = [], "", 0
    if predicate is not None:
        tensor, indices, op, value = predicate
        pred_args = [tensor, *indices]
    call = create_op_call("system.task_options", [list(deps), list(no_dep), pred_args, list(dumps)],
                          {"pred_op": op, "pred_value": value, "allow_early_resolve": allow_early_resolve}, span)
    ctx.emit(EvalStmt(call, span))


def bind_task_id(ctx, target, span) -> None:
    """`name = pl.system.task_id()` (the TaskId of the task just submitted)."""
    from pypto.language.parser.statements import assign_target
    if isinstance(target, ast.Name) and target.id in ctx.names and ctx.names[target.id] is None \
            and ctx.control_depth > 0:
        raise ParserTypeError(f"'{target.id}' carries a TaskId through a loop but was seeded with the Python value "
                              "None, which cannot be carried", span,
                              hint=f"seed it with {target.id} = pl.system.task_invalid() (the TaskId of no task)")
    assign_target(ctx, target, create_op_call("system.task_id", [], {}, span), span)


def scope_options(ctx, kwargs: dict, pred_node, span, *, what: str) -> dict:
    """Pops the task-graph keywords of a pl.at / pl.spmd scope; returns them for emit_options."""
    opts = {"deps": deps_list(kwargs.pop("deps", None), span),
            "no_dep": no_dep_list(kwargs.pop("no_dep_args", []), span),
            "allow_early_resolve": kwargs.pop("allow_early_resolve", False)}
    if "dumps" in kwargs:
        if what != "pl.at":
            raise UnsupportedFeatureError(f"{what}(..., dumps=...) is not a form: dumps= is spelled on pl.at and "
                                          "pl.submit", span)
        opts["dumps"] = dumps_list(kwargs.pop("dumps"), span)
    if pred_node is not None:
        if what == "pl.at":
            raise ParserSyntaxError("pl.at has no predicate=", span, hint="use pl.spmd(...) or a pl.submit form for a "
                                                                            "predicated task")
        opts["predicate"] = parse_predicate(ctx, pred_node)
    given = [k for k, v in opts.items() if v]
    if given and ctx.cluster_depth:
        raise ParserSyntaxError(f"{what}(..., {given[0]}=...) inside pl.cluster(): the cluster is one task (a Group) "
                                "and its regions are lanes of it, so there is no launch to carry the option", span,
                                hint="move the option out of the cluster, onto the launch that runs it")
    return opts


# ---------------------------------------------------------------------------- pl.submit / pl.spmd_submit
def parse_submit_assign(ctx, targets, node: ast.Call, span) -> None:
    """`results..., tid = pl.submit(self.k, *args, deps=..., predicate=..., allow_early_resolve=...)`."""
    callee = eval_expr(ctx, node.func)
    name = "pl.submit" if callee is scopes.submit else "pl.spmd_submit"
    node, pred_node = split_predicate(node)
    check_deps_syntax(ctx, node, name)
    if not node.args:
        raise ParserSyntaxError(f"{name}(...) first argument must be a self.<kernel> method reference", span)
    kernel = eval_expr(ctx, node.args[0])
    if not isinstance(kernel, MethodRef):
        raise ParserSyntaxError(f"{name}(...) first argument must be a self.<kernel> method reference", span,
                                hint="from @pl.jit use `with pl.at(..., deps=[...]) as tid:` instead")
    args = [eval_expr(ctx, a) for a in node.args[1:]]
    kwargs = {}
    for kw in node.keywords:
        if kw.arg is None:
            raise ParserSyntaxError(f"{name}(...) takes no **kwargs", span)
        kwargs[kw.arg] = eval_expr(ctx, kw.value)
    opts = {"deps": deps_list(kwargs.pop("deps", None), span),
            "allow_early_resolve": kwargs.pop("allow_early_resolve", False)}
    if pred_node is not None:
        opts["predicate"] = parse_predicate(ctx, pred_node)
    if "dumps" in kwargs:
        opts["dumps"] = dumps_list(kwargs.pop("dumps"), span)
    in_group = ctx.func_type in LAUNCH_WRAPPERS
    if in_group and (opts["deps"] or pred_node is not None or opts["allow_early_resolve"] or opts.get("dumps")):
        raise ParserSyntaxError(f"{name}(...) inside a {ctx.func_type.name} function takes no deps=, predicate=, "
                                "allow_early_resolve= or dumps=", span,
                                hint="a Group's members are lanes of the Group's one task, not tasks of their own: "
                                     "put these on the launch of the Group in the orchestration")
    args = _runtime_outputs(ctx, kernel.name, args, kwargs, span)
    kwargs["attrs"] = {**(kwargs.get("attrs") or {}), "submit": True}
    core_num = sync_start = None
    if callee is scopes.spmd_submit:
        if "core_num" not in kwargs:
            raise ParserSyntaxError("pl.spmd_submit needs core_num=N (a required keyword; positional slots are the "
                                    "kernel's arguments)", span)
        core_num = kwargs.pop("core_num")
        sync_start = kwargs.pop("sync_start", False)
    from pypto.language.parser.calls import function_call
    call = function_call(ctx, node, kernel.name, args, kwargs)
    n_results = 0 if isinstance(call.type, UnknownType) else \
        len(call.type.types) if isinstance(call.type, TupleType) else 1
    names = list(targets.elts) if isinstance(targets, (ast.Tuple, ast.List)) else None
    if names is not None and len(names) != n_results + 1:
        raise ParserTypeError(f"{name}(...) unpacks {len(names) - 1} result value(s) but kernel '{kernel.name}' "
                              f"returns {n_results} (the last name takes the TaskId)", span,
                              hint="unpack only what the kernel returns, or give it a return type")
    emit_options(ctx, span, **opts)
    from pypto.language.parser.statements import assign_target
    if core_num is not None:                   # the call inside a pl.spmd region: one launch, one TaskId
        ctx.push_block()
    holder = None
    if names is None:                          # `res = pl.submit(...)`: the flat tuple in one name
        holder = Var(f"{kernel.name}_result", call.type, span) if n_results else None
        ctx.emit(AssignStmt(holder, call, span) if holder is not None else EvalStmt(call, span))
    elif n_results == 0:
        ctx.emit(EvalStmt(call, span))
    else:                                      # the call itself is assigned, so `out = ...` is no copy
        target = names[0] if n_results == 1 else ast.Tuple(elts=names[:-1], ctx=ast.Store())
        assign_target(ctx, target, call, span)
    if core_num is not None:
        body = ctx.pop_block(span)
        ctx.emit(SpmdScopeStmt(body, core_count_expr(core_num, span, "pl.spmd_submit"), bool(sync_start), "", span))
    if names is not None:
        bind_task_id(ctx, names[-1], span)
        return
    results = [] if holder is None else [holder] if n_results == 1 else \
        [TupleGetItem(holder, i, span) for i in range(n_results)]
    tid = Var("task_id", ScalarType(TASK_ID), span)
    ctx.emit(AssignStmt(tid, create_op_call("system.task_id", [], {}, span), span))
    ctx.bind(targets.id, (*results, tid), span)


def _runtime_outputs(ctx, kernel: str, args: list, kwargs: dict, span) -> list:
    """`pl.submit(self.k, x)` for `k(x, out: pl.Out[...])`: trailing Out parameters left out are outputs the
    runtime allocates for the task; here each is a fresh tensor of the parameter's type, created right
    before the submit and passed in its place (so the IR has no omitted-argument gap)."""
    sig = ctx.env.signatures.get(kernel)
    given = len(args) + len([k for k in kwargs if sig is not None and k in sig.param_names])
    if sig is None or given >= len(sig.param_types) or any(k in kwargs for k in sig.param_names[len(args):]):
        return args
    missing = range(len(args), len(sig.param_types))
    bad = next((i for i in missing if sig.directions[i] is not ParamDirection.Out
                or not isinstance(sig.param_types[i], TensorType)), None)
    if bad is not None:
        return args                    # function_call names the missing argument
    out = list(args)
    for i in missing:
        t = sig.param_types[i]
        if any(not isinstance(d, ConstInt) for d in t.shape):
            raise ParserTypeError(f"pl.submit: the omitted output '{sig.param_names[i]}' of '{kernel}' has a dynamic "
                                  "shape, so the runtime cannot allocate it", span,
                                  hint="create the tensor in the orchestration and pass it")
        buf = Var(f"{kernel}_{sig.param_names[i]}", t, span)
        ctx.emit(AssignStmt(buf, create_op_call("tensor.create", [[int(d.value) for d in t.shape]],
                                                {"dtype": t.dtype}, span), span))
        out.append(buf)
    return out


# ---------------------------------------------------------------------------- TaskId arrays
def array_op(path: str, args: list, kwargs: dict, span):
    """pl.array.* on TaskIds (None when the call is an ordinary on-core array)."""
    short = path.split(".", 1)[1]
    if short == "create":
        dtype = args[1] if len(args) > 1 else kwargs.get("dtype")
        if dtype is not TASK_ID:
            return None
        extent = args[0] if args else kwargs.get("extent")
        if isinstance(extent, bool) or not isinstance(extent, int):
            raise ParserTypeError(f"pl.array.create(n, pl.TASK_ID) needs a compile-time extent, got "
                                  f"{describe_value(extent)}", span)
        return create_op_call("system.task_id_array", [], {"extent": extent}, span)
    if not args or not isinstance(getattr(args[0], "type", None), TaskIdArrayType):
        return None
    if short == "get_element":
        return create_op_call("system.task_id_array_get", [args[0], to_expr(args[1], span)], {}, span)
    return create_op_call("system.task_id_array_set", [args[0], to_expr(args[1], span), args[2]], {}, span)


def array_index(ctx, node: ast.Subscript, span):
    index = eval_expr(ctx, node.slice)
    if isinstance(index, (tuple, list)) or isinstance(index, bool) or \
            not (isinstance(index, int) or (isinstance(index, Expr) and isinstance(index.type, ScalarType))):
        raise ParserTypeError(f"a TaskId array takes one integer index, got {describe_value(index)}", span)
    return to_expr(index, span)


def array_get(ctx, base, node: ast.Subscript):
    span = ctx.span(node)
    return create_op_call("system.task_id_array_get", [base, array_index(ctx, node, span)], {}, span)


def array_set(ctx, name: str, base, target: ast.Subscript, value, span) -> None:
    """`tids[i] = tid`: the array is rebound to a copy with slot i replaced (a carried value in a loop)."""
    if not is_task_id(value) or isinstance(value.type, TaskIdArrayType):
        raise ParserTypeError(f"a TaskId array slot takes a TaskId, got {describe_value(value)}", span)
    call = create_op_call("system.task_id_array_set", [base, array_index(ctx, target, span), value], {}, span)
    var = ctx.assign_var(name, call.type, span)
    ctx.emit(AssignStmt(var, call, span))


def task_dummy(args: list, kwargs: dict, span):
    deps = kwargs.pop("deps", args[0] if args else None)
    if kwargs or len(args) > 1:
        raise ParserSyntaxError("pl.system.task_dummy takes only deps=[...]", span)
    return create_op_call("system.task_dummy", [deps_list(deps, span)], {}, span)


# ---------------------------------------------------------------------------- runtime scopes
def parse_runtime_scope(ctx, callee, call: ast.Call, body_nodes, span) -> None:
    """`with pl.manual_scope():` / `with pl.scope(mode=...)`: the body is straight-line code of this function."""
    from pypto.language.parser.calls import eval_call_parts
    from pypto.language.parser.dispatch import parse_body
    args, kwargs = eval_call_parts(ctx, call)
    mode = scopes.ScopeMode.MANUAL if callee is scopes.manual_scope else kwargs.pop("mode", scopes.ScopeMode.AUTO)
    kwargs.pop("name_hint", None)
    if args or kwargs:
        raise ParserSyntaxError(f"pl.{callee.__name__}() takes only mode= and name_hint=", span)
    if not isinstance(mode, scopes.ScopeMode):
        raise ParserTypeError(f"pl.scope mode= must be pl.ScopeMode.AUTO or MANUAL, got {describe_value(mode)}", span)
    func_type = ctx.func_type
    if func_type in KERNEL_TYPES:
        raise InvalidOperationError(f"a runtime scope (pl.{callee.__name__}) belongs to an orchestration function, "
                                    f"not to a {func_type.name} function", span,
                                    hint="move it to the orchestration function that dispatches this kernel")
    depth = ctx.manual_scope_depth
    if depth and mode is scopes.ScopeMode.MANUAL:
        raise InvalidOperationError("a manual scope may not nest inside another manual scope", span,
                                    hint="flatten it into the enclosing manual scope")
    if mode is scopes.ScopeMode.AUTO and ctx.auto_scope:
        raise InvalidOperationError("a hand-placed AUTO `with pl.scope()` needs auto_scope=False on the function",
                                    span, hint="by default (auto_scope=True) the compiler places the AUTO scopes; "
                                               "write @pl.function(auto_scope=False) / @pl.jit(auto_scope=False) to "
                                               "place them yourself, or use pl.scope(mode=pl.ScopeMode.MANUAL)")
    if depth and mode is scopes.ScopeMode.AUTO:
        raise InvalidOperationError("an AUTO scope may not nest inside a MANUAL scope", span,
                                    hint="the runtime forbids it; move the AUTO scope outside the manual one")
    if mode is scopes.ScopeMode.AUTO:
        # Tracking stays on, as around it. On the device the scope is also a heap tier whose buffers are
        # reclaimed when its tasks retire; the simulator's memory has no tiers, so the region is its body.
        parse_body(ctx, body_nodes)
        return
    ctx.emit(EvalStmt(create_op_call("system.manual_scope_begin", [], {}, span), span))
    ctx.manual_scope_depth = depth + 1
    try:
        parse_body(ctx, body_nodes)
    finally:
        ctx.manual_scope_depth = depth
    ctx.emit(EvalStmt(create_op_call("system.manual_scope_end", [], {}, span), span))


def core_count_expr(core_num, span, what: str):
    """The block count of an spmd launch (`pl.spmd`, `pl.spmd_submit`) as IR: a positive integer, or an integer
    scalar expression. A launch of no blocks never completes, so a task waiting on it would deadlock without
    a line to blame."""
    value = core_num.value if isinstance(core_num, ConstInt) else core_num
    if isinstance(value, (bool, float)):
        raise ParserTypeError(f"{what}: the core count must be an integer, got {value!r}", span)
    if isinstance(value, int):
        if value < 1:
            raise ParserTypeError(f"{what}: the core count must be a positive integer, got {value}", span,
                                  hint="launch at least one block; skip the launch with predicate= instead")
        return to_expr(value, span)
    if is_scalar_expr(core_num) and core_num.type.dtype.is_int():
        return core_num
    raise ParserTypeError(f"{what}: the core count must be an integer, got {describe_value(core_num)}", span)
