"""Run the IR of any compiler stage with reference (numpy) semantics, to check a pass numerically.

The simulator runs only final IR (tiles at assigned addresses). Bisection needs the value a program
computes after *each* pass, so this module executes IR directly: tiles are fresh numpy buffers
(memory spaces and addresses are ignored), tensors are the arrays passed in, tile ops are the
simulator's own op semantics (SIM_OPS) and tensor-level ops their tile counterpart applied to whole
tensors. Scopes run their body; a Group launch runs the side that pushes before the side that pops,
with cross-core pipes as queues (with pipes both ways, its members run side by side in threads and
a pop waits for its push); Spmd launches run block after block.

    outputs = run_reference(program, [x, y_out])     # {parameter name: array} of the written tensors

Split vector kernels run lane 0, then lane 1, each popping its half of a cube push and pushing its part
of a vector push. A stage this interpreter cannot execute (an op without
reference semantics) raises NotRunnable naming the construct; bisection reports that stage as
unchecked rather than guessing.
"""

from __future__ import annotations

import operator
import threading
from typing import Optional

import numpy as np

from pypto.errors import PyptoError
from pypto.ir.enums import FunctionType, ParamDirection
from pypto.ir.expr import (BinaryExpr, Call, ConstBool, ConstFloat, ConstInt, GlobalVar, MakeTuple, TupleGetItem,
                           UnaryExpr, Var)
from pypto.ir.function import Program
from pypto.ir.stmt import (AssignStmt, BreakStmt, ContinueStmt, EvalStmt, ForStmt, IfStmt, ReturnStmt, ScopeStmt,
                           SeqStmts, SplitAivScopeStmt, SpmdScopeStmt, WhileStmt, YieldStmt)
from pypto.ir.types import TensorType, TileType, static_dims
from pypto.ir.visitor import collect
from pypto.runtime.sim.blocking import Block
from pypto.runtime.sim.layout import tile_valid
from pypto.runtime.sim.ops import SIM_OPS
from pypto.runtime.sim.poison import poisoned
from pypto.runtime.sim.values import TileValue


class NotRunnable(PyptoError):
    """This stage's IR holds something the reference interpreter does not execute."""


_BINARY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "floordiv": operator.floordiv,
           "floormod": operator.mod, "truediv": operator.truediv, "pow": operator.pow, "eq": operator.eq,
           "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
           "and": lambda a, b: a and b, "or": lambda a, b: a or b, "bitand": operator.and_,
           "bitor": operator.or_, "bitxor": operator.xor, "xor": operator.xor, "shl": operator.lshift,
           "shr": operator.rshift, "min": min, "max": max}
_UNARY = {"neg": operator.neg, "not": operator.not_, "bitnot": operator.invert, "abs": abs}


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Return(Exception):
    def __init__(self, values):
        self.values = values


class _Ctx:
    """What SIM_OPS functions read from their context, for a core that has no arena."""

    def __init__(self, platform, block_idx=0, block_num=1, subblock_idx=0, subblock_num=1):
        self.platform = platform
        self.block_idx, self.block_num = block_idx, block_num
        self.subblock_idx, self.subblock_num = subblock_idx, subblock_num
        self.run = self.core = self.cluster = self.task = self.agent = self.machine = None


def _as_tile(value):
    if isinstance(value, np.ndarray):
        return TileValue(value, value.shape)
    return value


class Interpreter:
    def __init__(self, program: Program, platform):
        from pypto.ir.platform import get_platform
        self.program = program
        self.platform = get_platform(platform) if isinstance(platform, str) else platform
        self.pipes: dict = {}
        self.pipe_cv = threading.Condition()     # pushes and pops of members running side by side
        self.concurrent = False
        self.failed: list = []

    # ------------------------------------------------------------------ functions
    def call(self, name: str, args: list, ctx):
        func = self.program.get_function(name)
        if func is None:
            raise NotRunnable(f"call of unknown function '{name}'")
        env = dict(zip(func.params, args))
        for p, a in zip(func.params, args):          # symbolic dims take their values from the arguments
            if isinstance(p.type, TensorType) and isinstance(a, np.ndarray):
                for d, n in zip(p.type.shape, a.shape):
                    if isinstance(d, Var) and d not in env:
                        env[d] = n
        if func.func_type is FunctionType.Group:
            return self._group(func, env, ctx)
        refuse_lane_code(func)
        if func.func_type is FunctionType.Spmd:
            n = int(func.attrs.get("core_num") or 1)
            result = None
            for b in range(n):
                result = self._body(func, dict(env), _Ctx(self.platform, b, n))
            return result
        if func.func_type is FunctionType.AIV and runs_split(func):
            result = None                        # a split vector kernel: lane 0, then lane 1
            for lane in range(2):
                lane_ctx = _Ctx(self.platform, ctx.block_idx, ctx.block_num, lane, 2)
                result = self._body(func, dict(env), lane_ctx)
            return result
        return self._body(func, env, ctx)

    def _body(self, func, env: dict, ctx):
        try:
            self.stmt(func.body, env, ctx)
        except _Return as r:
            vals = r.values
            return vals[0] if len(vals) == 1 else tuple(vals) if vals else None
        return None

    def _group(self, func, env: dict, ctx):
        """Members of a Group, producer side first: its pushes queue up for the consumer side (with pipes
        in both directions the sides run side by side)."""
        plan, calls = group_plan(self.program, func)
        if plan == "side_by_side":              # each side waits for the other: run them side by side
            return self._group_side_by_side(func, calls, env, ctx)
        order = calls
        try:
            for stmt in order:
                self.stmt(stmt, env, ctx)
        except _Return as r:
            return r.values[0] if len(r.values) == 1 else tuple(r.values) if r.values else None
        return None

    def _group_side_by_side(self, func, calls: list, env: dict, ctx):
        """Pipes in both directions: each member in its own thread; a pop waits for its push."""
        members = [c for c in calls if _callee(self.program, c) is not None]
        rest = [c for c in calls if _callee(self.program, c) is None]
        self.side_by_side([lambda c=c: self.stmt(c, env, ctx) for c in members])
        try:
            for c in rest:
                self.stmt(c, env, ctx)
        except _Return as r:
            return r.values[0] if len(r.values) == 1 else tuple(r.values) if r.values else None
        return None

    def side_by_side(self, thunks: list) -> list:
        """Run each thunk in its own thread (a pipe pop waits for its push) and return their results in
        order; the first failure is re-raised in the launching thread."""
        results = [None] * len(thunks)

        def work(i, thunk):
            try:
                with np.errstate(all="ignore"):
                    results[i] = thunk()
            except BaseException as e:           # handed to the launching thread
                self.failed.append(e)
            finally:
                with self.pipe_cv:
                    self.pipe_cv.notify_all()

        self.concurrent = True
        try:
            threads = [threading.Thread(target=work, args=(i, t), daemon=True) for i, t in enumerate(thunks)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            self.concurrent = False
        if self.failed:
            first, self.failed = self.failed[0], []
            raise first
        return results

    # ------------------------------------------------------------------ statements
    def stmt(self, s, env: dict, ctx):
        if isinstance(s, SeqStmts):
            for x in s.stmts:
                self.stmt(x, env, ctx)
        elif isinstance(s, AssignStmt):
            env[s.var] = self.expr(s.value, env, ctx, s.var)
        elif isinstance(s, EvalStmt):
            self.expr(s.expr, env, ctx)
        elif isinstance(s, ForStmt):
            for a in s.iter_args:
                env[a] = self.expr(a.init_value, env, ctx)
            for i in range(int(self.expr(s.start, env, ctx)), int(self.expr(s.stop, env, ctx)),
                           int(self.expr(s.step, env, ctx))):
                env[s.loop_var] = i
                try:
                    self._loop_body(s, env, ctx)
                except _Break:
                    break
            for rv, a in zip(s.return_vars, s.iter_args):
                env[rv] = env[a]
        elif isinstance(s, WhileStmt):
            for a in s.iter_args:
                env[a] = self.expr(a.init_value, env, ctx)
            while self.expr(s.condition, env, ctx):
                try:
                    self._loop_body(s, env, ctx)
                except _Break:
                    break
            for rv, a in zip(s.return_vars, s.iter_args):
                env[rv] = env[a]
        elif isinstance(s, IfStmt):
            body = s.then_body if self.expr(s.condition, env, ctx) else s.else_body
            if body is not None:
                yielded = self._yielding(body, env, ctx)
                for rv, v in zip(s.return_vars, yielded or ()):
                    env[rv] = v
        elif isinstance(s, YieldStmt):
            raise _Yield([self.expr(v, env, ctx) for v in s.values])
        elif isinstance(s, ReturnStmt):
            raise _Return([self.expr(v, env, ctx) for v in s.values])
        elif isinstance(s, BreakStmt):
            raise _Break()
        elif isinstance(s, ContinueStmt):
            raise _Continue()
        elif isinstance(s, SplitAivScopeStmt):
            raise NotRunnable("a pl.split_aiv scope")
        elif isinstance(s, SpmdScopeStmt):
            n = int(self.expr(s.core_num, env, ctx)) if not isinstance(s.core_num, int) else s.core_num
            for b in range(n):
                self.stmt(s.body, env, _Ctx(self.platform, b, n))
        elif isinstance(s, ScopeStmt):
            self.stmt(s.body, env, ctx)
        else:
            raise NotRunnable(f"a {type(s).__name__} statement")

    def _loop_body(self, s, env, ctx):
        try:
            yielded = self._yielding(s.body, env, ctx)
        except _Continue:
            return
        for a, v in zip(s.iter_args, yielded or ()):
            env[a] = v

    def _yielding(self, body, env, ctx):
        try:
            self.stmt(body, env, ctx)
        except _Yield as y:
            return y.values
        return None

    # ------------------------------------------------------------------ expressions
    def expr(self, e, env: dict, ctx, target=None):
        if isinstance(e, Var):
            if e not in env:
                raise NotRunnable(f"'{e.name_hint}' is read before it is bound")
            return env[e]
        if isinstance(e, (ConstInt, ConstFloat, ConstBool)):
            return e.value
        if isinstance(e, BinaryExpr):
            return _BINARY[e.op](self.expr(e.lhs, env, ctx), self.expr(e.rhs, env, ctx))
        if isinstance(e, UnaryExpr):
            x = self.expr(e.operand, env, ctx)
            if e.op == "cast":
                return bool(x) if e.dtype.name == "BOOL" else int(x) if e.dtype.is_int() else float(x)
            return _UNARY[e.op](x)
        if isinstance(e, MakeTuple):
            return tuple(self.expr(x, env, ctx) for x in e.elements)
        if isinstance(e, TupleGetItem):
            return self.expr(e.tuple, env, ctx)[e.index]
        if isinstance(e, Call):
            args = [self.expr(a, env, ctx) for a in e.args]
            if isinstance(e.op, GlobalVar):
                return self.call(e.op.name, args, ctx)
            return self.op(e, args, ctx, target)
        raise NotRunnable(f"a {type(e).__name__} expression")

    def op(self, call: Call, args: list, ctx, target):
        t = target.type if target is not None else call.type
        return apply_op(self, call.op.name, result_spec(t, lambda d: self._dim(d)), args, dict(call.kwargs), ctx,
                        call.span)

    def _dim(self, d):
        return d.value if isinstance(d, ConstInt) else d


class ResultSpec:
    """What an op needs to know of its result type: a tile (shape, dtype, static valid region, memory space),
    a tensor (shape, dtype) or anything else (kind None). The generated reference programs build these
    from literals, the interpreter from IR types: both then apply ops through `apply_op`."""

    __slots__ = ("kind", "shape", "dtype", "valid", "space")

    def __init__(self, kind, shape=None, dtype=None, valid=None, space=None):
        self.kind, self.shape, self.dtype, self.valid, self.space = kind, shape, dtype, valid, space

    def fresh_tile(self) -> TileValue:
        if self.shape is None:
            raise NotRunnable("a tile of dynamic physical shape")
        return TileValue(poisoned(self.shape, self.dtype.to_numpy()), self.valid or self.shape, self.space)


def result_spec(t, dim=None) -> ResultSpec:
    """The ResultSpec of IR type `t`; `dim` evaluates a symbolic tensor dimension (None: unknown)."""
    if isinstance(t, TileType):
        shape = static_dims(t.shape)
        return ResultSpec("tile", shape, t.dtype, tile_valid(t) if shape is not None else None, t.memory_space)
    if isinstance(t, TensorType):
        shape = static_dims(t.shape)
        if shape is None and dim is not None:
            shape = [dim(d) for d in t.shape]
            shape = shape if all(isinstance(d, (int, np.integer)) for d in shape) else None
        return ResultSpec("tensor", tuple(shape) if shape is not None else None, t.dtype)
    return ResultSpec(None)


def apply_op(interp, name: str, spec: ResultSpec, args: list, kwargs: dict, ctx, span=None):
    """Op `name` on evaluated `args` with the simulator's semantics (SIM_OPS; a tensor op through the tile
    op it lowers to, on whole tensors); cross-core pipes are `interp`'s queues."""
    if name in _PIPE_OPS:
        return _PIPE_OPS[name](interp, ctx, spec, args, kwargs)
    if name in _TASK_GRAPH_OPS:
        return _TASK_GRAPH_OPS[name](interp, args, span)
    if name == "tensor.create":
        if spec.shape is None:
            raise NotRunnable("a tensor.create of dynamic shape", span)
        return poisoned(spec.shape, spec.dtype.to_numpy())
    if name in _TENSOR_OPS:
        return _TENSOR_OPS[name](spec, args, kwargs)
    fn = SIM_OPS.get(name)
    if fn is None:
        from pypto.ir.ops.registry import get_op, has_op
        lowered = get_op(name).lowers_to if has_op(name) else None
        if lowered and lowered in SIM_OPS:
            return _tensor_via_tile(SIM_OPS[lowered], spec, args, kwargs)
        raise NotRunnable(f"op '{name}' has no reference semantics here", span)
    out = spec.fresh_tile() if spec.kind == "tile" else None
    result = fn(ctx, out, *args, **kwargs)
    if isinstance(result, Block):
        raise NotRunnable(f"'{name}' would block (it waits for another core)", span)
    return result


def _tensor_via_tile(fn, spec, args, kwargs):
    """A tensor op applied as its tile op to whole tensors (each tensor one tile)."""
    if spec.kind != "tensor":
        raise NotRunnable("a tensor op whose result is not a tensor")
    if spec.shape is None:
        raise NotRunnable("a tensor of dynamic shape")
    out = TileValue(poisoned(spec.shape, spec.dtype.to_numpy()), spec.shape)
    fn(None, out, *[_as_tile(a) for a in args], **kwargs)
    return out.data


class _Yield(Exception):
    def __init__(self, values):
        self.values = values


def group_plan(program, func):
    """How a Group's member calls run: ("ordered", statements with the pushing side first) or
    ("side_by_side", statements) when pipes go both ways (each side waits for the other)."""
    calls = _flat(func.body)
    pushes = set()
    for s in calls:
        callee = _callee(program, s)
        if callee is not None:
            pushes |= {c.op.name for c in collect(callee.body, lambda n: isinstance(n, Call))
                       if c.op.name in ("tile.tpush_to_aic", "tile.tpush_to_aiv")}
    if len(pushes) == 2:
        return "side_by_side", calls
    first = FunctionType.AIV if pushes == {"tile.tpush_to_aic"} else FunctionType.AIC
    return "ordered", sorted(calls, key=lambda c: 0 if _callee_type(program, c) is first else 1)


def _flat(s):
    return list(s.stmts) if isinstance(s, SeqStmts) else [s]


def refuse_lane_code(func) -> None:
    """LowerAutoVectorSplit's output: one InCore body holding the cube code and one lane's vector code,
    joined by shard / gather boundaries that need both lanes at once; it runs once ExpandMixedKernel
    has split it into an AIC and a two-lane AIV."""
    if func.func_type is FunctionType.InCore and func.attrs.get("split_aiv"):
        raise NotRunnable(f"kernel {func.name} in lane code before ExpandMixedKernel (pl.split / pl.split_aiv)",
                          func.span)


def runs_split(func) -> bool:
    """A vector kernel already split into lanes (SplitVectorKernel): its pipe ops carry a split mode.
    Before that pass the split attribute is only a request, and the body is the whole computation."""
    if not getattr(func.attrs.get("split"), "value", 0):
        return False
    return any(_axis(c.kwargs.get("split")) is not None
               for c in collect(func.body, lambda n: isinstance(n, Call) and not isinstance(n.op, GlobalVar))
               if c.op.name in _PIPE_OPS)


def _callee(program, s):
    value = s.value if isinstance(s, AssignStmt) else s.expr if isinstance(s, EvalStmt) else None
    if isinstance(value, Call) and isinstance(value.op, GlobalVar):
        return program.get_function(value.op.name)
    return None


def _callee_type(program, s):
    f = _callee(program, s)
    return f.func_type if f is not None else None


# ------------------------------------------------------------------ tensor-level ops without a 1:1 tile op
def _row(reduce):
    def fn(t, args, kwargs):
        return reduce(args[0], axis=-1, keepdims=True).astype(t.dtype.to_numpy())
    return fn


def _matmul(t, args, kwargs):
    a, b = args[0], args[1]
    a = a.T if kwargs.get("a_trans") else a
    b = b.T if kwargs.get("b_trans") else b
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(t.dtype.to_numpy())


def _matmul_acc(t, args, kwargs):
    acc, a, b = args[0], args[1], args[2]
    return (acc.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)).astype(t.dtype.to_numpy())


_TENSOR_OPS = {"tensor.row_max": _row(np.max), "tensor.row_sum": _row(np.sum), "tensor.row_min": _row(np.min),
               "tensor.matmul": _matmul, "tensor.matmul_acc": _matmul_acc}


# ------------------------------------------------------------------ cross-core pipes as queues
_PIPE_WAIT_SECONDS = 2.0                          # a side-by-side pop that waits longer: the sides deadlock
def _axis(split) -> Optional[int]:
    split = int(getattr(split, "value", split) or 0)
    return None if not split else (0 if split in (1, 3) else 1)


def _pipe(interp, direction, kwargs) -> dict:
    return interp.pipes.setdefault((direction, kwargs.get("id") or 0), {"slots": [], "pushed": {}, "popped": {}})


def _push(direction):
    """A pushed slot holds one part per producer lane (a split vector -> cube push has two)."""
    def fn(interp, ctx, t, args, kwargs):
        pipe = _pipe(interp, direction, kwargs)
        lane = ctx.subblock_idx if direction == "v2c" and _axis(kwargs.get("split")) is not None else 0
        k = pipe["pushed"].get(lane, 0)
        pipe["pushed"][lane] = k + 1
        while len(pipe["slots"]) <= k:
            pipe["slots"].append({})
        tile = args[0]
        with interp.pipe_cv:
            pipe["slots"][k][lane] = (np.array(tile.data, copy=True), tile.valid)
            interp.pipe_cv.notify_all()
        return None
    return fn


def _pop(direction):
    """Each consumer lane pops every slot; a split pop takes its lane's half, a split cube pop joins the parts."""
    def fn(interp, ctx, t, args, kwargs):
        pipe = _pipe(interp, direction, kwargs)
        axis = _axis(kwargs.get("split"))
        lane = ctx.subblock_idx if direction == "c2v" and axis is not None else 0
        k = pipe["popped"].get(lane, 0)
        with interp.pipe_cv:
            while k >= len(pipe["slots"]) or not pipe["slots"][k]:
                if not interp.concurrent:
                    raise NotRunnable(f"a pop from an empty {direction} pipe (the producer runs later)")
                if interp.failed or not interp.pipe_cv.wait(timeout=_PIPE_WAIT_SECONDS):
                    raise NotRunnable(f"a pop from the {direction} pipe waits for a push that does not come")
        pipe["popped"][lane] = k + 1
        parts = pipe["slots"][k]
        out = t.fresh_tile()
        if axis is None:
            data, valid = parts[min(parts)]
            out.data[...] = data.reshape(out.data.shape) if data.size == out.data.size else data
            out.valid = valid
        elif direction == "c2v":                 # this lane's rows (or columns) of the pushed tile
            full, valid = parts[0]
            stride = int(kwargs.get("lane_stride") or out.data.shape[axis])
            ext = min(max(valid[axis] - lane * stride, 0), out.data.shape[axis])
            src = np.take(full, range(lane * stride, lane * stride + ext), axis=axis)
            region = [slice(None)] * full.ndim
            region[axis] = slice(0, ext)
            out.data[tuple(region)] = src
            v = list(valid)
            v[axis] = ext
            out.valid = tuple(v)
        else:                                    # the lanes' parts side by side
            stride = int(kwargs.get("lane_stride") or parts[min(parts)][0].shape[axis])
            total = list(parts[min(parts)][1])
            total[axis] = 0
            for part_lane in sorted(parts):
                data, valid = parts[part_lane]
                ext = int(valid[axis])
                take = [slice(None)] * data.ndim
                take[axis] = slice(0, ext)
                put = [slice(None)] * data.ndim
                put[axis] = slice(part_lane * stride, part_lane * stride + ext)
                out.data[tuple(put)] = data[tuple(take)]
                if ext:
                    total[axis] = part_lane * stride + ext
            out.valid = tuple(total)
        return out
    return fn


def _nothing(interp, ctx, t, args, kwargs):
    return None


_PIPE_OPS = {"tile.tpush_to_aiv": _push("c2v"), "tile.tpush_to_aic": _push("v2c"),
             "tile.tpop_from_aic": _pop("c2v"), "tile.tpop_from_aiv": _pop("v2c"),
             "system.tfree_to_aic": _nothing, "system.tfree_to_aiv": _nothing,
             "system.aic_initialize_pipe": _nothing, "system.aiv_initialize_pipe": _nothing,
             "system.reserve_buffer": lambda *a: 0, "system.import_peer_buffer": lambda *a: 0}


# ------------------------------------------------------------------ task graphs, run in program order
def _task_options(interp, args, span):
    """deps= and opt-outs only order tasks, and program order satisfies every order; a predicate decides
    whether a task runs at all, which this run does not model."""
    if len(args) > 2 and args[2]:
        raise NotRunnable("a task with a dispatch predicate (predicate=)", span)
    return None


def _next_task_id(interp, args, span):
    interp.task_ids = getattr(interp, "task_ids", 0) + 1
    return interp.task_ids


_TASK_GRAPH_OPS = {"system.task_options": _task_options, "system.task_id": _next_task_id,
                   "system.task_dummy": _next_task_id, "system.manual_scope_begin": lambda *a: None,
                   "system.manual_scope_end": lambda *a: None}


# ------------------------------------------------------------------ entry
def entry_function(program: Program):
    """The function a call of the program runs: its Orchestration function, else the one nobody calls."""
    funcs = list(program.functions.values())
    for f in funcs:
        if f.func_type is FunctionType.Orchestration:
            return f
    called = set()
    for f in funcs:
        for c in collect(f.body, lambda n: isinstance(n, Call) and isinstance(n.op, GlobalVar)):
            called.add(c.op.name)
    roots = [f for f in funcs if f.name not in called]
    if len(roots) != 1:
        raise NotRunnable(f"program '{program.name}' has no single entry function ({[f.name for f in roots]})")
    return roots[0]


def run_reference(program: Program, args: list, *, platform: str = "a2a3") -> dict:
    """Execute `program`'s entry on copies of `args`; {parameter name: array} of every tensor it may write
    (Out / InOut parameters) plus "return" / "return.<i>" for returned tensors."""
    func = entry_function(program)
    if len(args) != len(func.params):
        raise NotRunnable(f"'{func.name}' takes {len(func.params)} arguments at this stage, {len(args)} given")
    copies = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    interp = Interpreter(program, platform)
    with np.errstate(all="ignore"):
        result = interp.call(func.name, copies, _Ctx(interp.platform))
    out = {}
    for p, d, a in zip(func.params, func.param_directions, copies):
        if d is not ParamDirection.In and isinstance(a, np.ndarray):
            out[p.name_hint] = a
    values = result if isinstance(result, tuple) else (result,)
    for i, v in enumerate(values):
        if isinstance(v, np.ndarray) and not any(v is a or np.shares_memory(v, a) for a in out.values()):
            out["return" if len(values) == 1 else f"return.{i}"] = v
    return out
