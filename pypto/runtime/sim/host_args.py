"""User arrays in and out of a simulated run.

In-params are passed as read-only views of the user's arrays (no copy; a kernel that writes
one fails loudly). Out / InOut params run on private buffers (Out ones poisoned, InOut ones
copied), and `write_back` copies them into the user's arrays only after the whole run
succeeded, so a failed run leaves the caller's data untouched. torch CPU tensors are handled
through numpy views of their memory (pypto.interop); torch is never imported unless the caller
gave one. A caller that already classified its arguments (@pl.jit) passes numpy arrays and says
`torch=True` when they came from torch tensors, so nothing is converted twice.
"""

from __future__ import annotations

import weakref
from typing import Optional

import numpy as np

from pypto.errors import TypeCheckError, ValueCheckError
from pypto.interop import as_array, is_torch_tensor, numpy_to_torch
from pypto.ir.enums import ParamDirection
from pypto.ir.enums import FunctionType
from pypto.ir.expr import Call, ConstInt, Var
from pypto.ir.function import Function
from pypto.ir.stmt import EvalStmt, ReturnStmt
from pypto.ir.types import ScalarType, TensorType
from pypto.ir.walks import preorder, statements
from pypto.runtime.sim.out_coverage import materialize, track, untrack
from pypto.runtime.sim.poison import copy_if_written, poison_output, unwritten_mask, warn_unwritten
from pypto.runtime.sim.race_detector import array_bounds


class ParamPlan:
    """What a function's parameters need from host values, worked out once per compiled program."""
    __slots__ = ("var", "name", "direction", "is_scalar", "convert", "dtype", "static_shape", "dtype_name",
                 "_last_bounds")

    def __init__(self, var: Var, direction: ParamDirection):
        t = var.type
        self.var = var
        self.name = var.name_hint
        self.direction = direction
        self.is_scalar = isinstance(t, ScalarType)
        if self.is_scalar:
            self.convert = float if t.dtype.is_float() else bool if t.dtype.name == "BOOL" else int
            self.dtype = None
            self.static_shape = None
            self.dtype_name = t.dtype.name
        elif isinstance(t, TensorType):
            self.convert = None
            self.dtype = t.dtype.to_numpy()
            self.dtype_name = t.dtype.name
            dims = [d.value if isinstance(d, ConstInt) else None for d in t.shape]
            self.static_shape = tuple(dims) if None not in dims else None
        else:
            raise TypeCheckError(f"parameter '{self.name}' has type {type(t).__name__}, which the host cannot pass")
        self._last_bounds = None

    def bounds_of(self, arr: np.ndarray, bounds_of) -> tuple:
        """`bounds_of(arr)` (the scheduler's byte bounds), remembered for the array the last call passed: a
        cached call passes the same arrays again, and an array's bounds change only with its shape / strides."""
        last = self._last_bounds
        if last is not None and last[0]() is arr and last[1] == arr.shape and last[2] == arr.strides:
            return last[3]
        got = bounds_of(arr)
        try:
            self._last_bounds = (weakref.ref(arr), arr.shape, arr.strides, got)
        except TypeError:                          # an array type without weak references: not remembered
            pass
        return got


def plan_params(func: Function) -> list:
    return [ParamPlan(p, d) for p, d in zip(func.params, func.param_directions)]


class HostArgs:
    """The simulator-side values of one call's arguments, and what to copy back afterwards."""

    def __init__(self, plans: list, args: list, *, return_style: bool, strict: bool = True,
                 pool: Optional[dict] = None, torch: bool = False, defer_fill: bool = False):
        self.pool = pool if pool is not None else {}
        self.defer_fill = defer_fill       # the caller will call `fill_outputs` before the run
        self.deferred: list = []           # (Out buffer, plan) whose poison fill waits for `fill_outputs`
        self.sim_args: list = []
        self.writebacks: list = []         # (user numpy view, private buffer, plan)
        self.written: dict = {}            # id(poisoned Out buffer) -> its WrittenWindows (out_coverage)
        self.outputs: list = []            # return style: the freshly allocated Out buffers
        self.any_torch = torch
        self.return_style = return_style
        self.dims: dict = {}
        self._bounded: list = []           # (sim-side array, the array whose bounds it has, its plan)
        it = iter(args)
        late = []
        for plan in plans:
            if return_style and plan.direction is ParamDirection.Out:
                late.append((len(self.sim_args), plan))
                self.sim_args.append(None)          # filled once the inputs bound the dynamic dims
                continue
            self.sim_args.append(self._convert(plan, next(it), strict))
        self.output_plans = [plan for _, plan in late]
        for i, plan in late:
            buf = poison_output(np.empty(self._shape_of(plan.var), plan.dtype))
            self.written[id(buf)] = track(buf)
            self.sim_args[i] = buf
            self.outputs.append(buf)

    def _shape_of(self, p: Var) -> tuple:
        out = []
        for dim in p.type.shape:
            if isinstance(dim, ConstInt):
                out.append(dim.value)
            elif dim in self.dims:
                out.append(self.dims[dim])
            else:
                raise ValueCheckError(f"output '{p.name_hint}': dynamic dim '{getattr(dim, 'name_hint', dim)}' is not "
                                      "fixed by any input; call with all parameters (in-place style)")
        return tuple(out)

    def _convert(self, plan: ParamPlan, value, strict: bool):
        if plan.is_scalar:
            if isinstance(value, np.ndarray) or is_torch_tensor(value):
                raise TypeCheckError(f"parameter '{plan.name}' is a scalar {plan.dtype_name}, got an array")
            return plan.convert(value)
        if isinstance(value, np.ndarray):
            arr = value
        else:
            arr = as_array(value, f"parameter '{plan.name}'")
            self.any_torch = True
        want = plan.dtype
        user = arr
        if arr.dtype != want:
            if strict:
                raise TypeCheckError(f"parameter '{plan.name}' expects dtype {plan.dtype_name} ({want}), got "
                                     f"{arr.dtype}", hint=f"pass {plan.name}.astype({_numpy_spelling(want)})")
            arr = arr.astype(want)
        if plan.static_shape is None or arr.shape != plan.static_shape:
            self._check_shape(plan.var, arr)
        d = plan.direction
        if d is ParamDirection.In:
            view = arr.view()
            view.setflags(write=False)           # (cheaper than through view.flags)
            self._bounded.append((view, arr, plan))     # a view has its array's bounds
            return view
        if not user.flags.writeable:
            raise TypeCheckError(f"parameter '{plan.name}' is {d.name} (the kernel writes it), but the array passed "
                                 "is read-only", hint="pass a writable array (e.g. arr.copy())")
        buf = self.pool.get(plan.name)              # private buffers are reused across calls (warm pages)
        if buf is None or buf.shape != arr.shape:
            buf = self.pool[plan.name] = np.empty(arr.shape, want)
        if d is ParamDirection.Out:
            if self.defer_fill:
                self.deferred.append((buf, plan))
            else:
                poison_output(buf)
            self.written[id(buf)] = track(buf)
        else:
            buf[...] = arr                          # (arr has the buffer's dtype and shape)
        self.writebacks.append((user, buf, plan))
        self._bounded.append((buf, buf, plan))
        return buf

    def fill_outputs(self, sim, entry: Optional[str]) -> None:
        """Poison the Out buffers whose fill `defer_fill` held back, except those of `entry`'s parameters
        that only whole fused loops ever store into (`loop_filled_outputs`): such a buffer is filled by
        the first of those loops unless it overwrites every element first (out_coverage.first_store), or
        at write-back when no loop ran. `entry` None: a run this cannot see whole (fill them all)."""
        if not self.deferred:
            return
        names = loop_filled_outputs(sim, entry) if entry is not None else frozenset()
        for buf, plan in self.deferred:
            if plan.name in names:
                self.written[id(buf)].unfilled = True
            else:
                poison_output(buf)
        self.deferred = []

    def bounds(self) -> dict:
        """{id(sim-side array): (array, array_bounds)} of the bound arrays: what the Run's OverlapMap starts
        from (asked for only when the run submits through it, not when a launch plan replays the tasks)."""
        return {id(a): (a, plan.bounds_of(of, array_bounds)) for a, of, plan in self._bounded}

    def _check_shape(self, p: Var, arr: np.ndarray) -> None:
        shape = p.type.shape
        if len(shape) != arr.ndim:
            raise TypeCheckError(f"parameter '{p.name_hint}' expects a {len(shape)}-d tensor, got shape {arr.shape}")
        for i, (dim, n) in enumerate(zip(shape, arr.shape)):
            if isinstance(dim, ConstInt):
                if dim.value != n:
                    want = tuple(x.value if isinstance(x, ConstInt) else x.name_hint for x in shape)
                    raise TypeCheckError(f"parameter '{p.name_hint}' expects shape {want}, got {arr.shape}")
            else:
                bound = self.dims.setdefault(dim, n)
                if bound != n:
                    raise TypeCheckError(f"dynamic dim '{getattr(dim, 'name_hint', dim)}' is {bound} elsewhere but "
                                         f"{n} in parameter '{p.name_hint}' (axis {i})")

    def write_back(self) -> None:
        """All outputs or none: every destination is checked before the first byte moves. Where an Out
        buffer still holds its poison the kernel wrote nothing: the caller's bytes stay (as on the device,
        which copies the output in and out) and a PyptoWarning names the parameter and the region. A whole
        fused loop's pending result (out_coverage.first_store) is computed straight into the caller's array."""
        for user, buf, plan in self.writebacks:
            if not user.flags.writeable or user.shape != buf.shape:
                raise TypeCheckError(f"output '{plan.name}' cannot be written back (read-only or reshaped array); "
                                     "no output was changed")
        self._settle_pending()
        for user, buf, plan in self.writebacks:
            unwritten = None
            if plan.direction is ParamDirection.Out:
                windows = self.written.get(id(buf))
                if windows is not None and windows.pending is not None and windows.covers_all():
                    materialize(windows, user)          # the kernel's result, written where it belongs
                    self._stored_whole(buf)             # (drops the record)
                    continue
                if not self._stored_whole(buf):
                    if copy_if_written(user, buf):
                        continue                        # every element written: checked and copied in one pass
                    unwritten = unwritten_mask(buf)
            if unwritten is None:
                if user.dtype == buf.dtype and user.__class__ is np.ndarray:
                    user[...] = buf                     # (a plain copy, without copyto's dispatch)
                else:                                   # sim_strict=False converted it
                    np.copyto(user, buf, casting="unsafe")
            else:
                warn_unwritten(plan.name, unwritten)
                np.copyto(user, buf, casting="unsafe", where=~unwritten)

    def _settle_pending(self) -> None:
        """Compute into their private buffers, before any caller's array changes, the pending results that
        cannot go straight into the caller's array: a converted dtype, or an operand sharing memory with
        any array this write-back writes (its bytes would change under the computation)."""
        pending = [(user, buf, w) for user, buf, _ in self.writebacks
                   if (w := self.written.get(id(buf))) is not None and w.pending is not None]
        if not pending:
            return
        users = [user for user, _, _ in self.writebacks]
        for user, buf, windows in pending:
            operands = windows.pending[1]
            if (user.__class__ is not np.ndarray or user.dtype != buf.dtype
                    or any(np.may_share_memory(u, x) for u in users for x in operands)):
                materialize(windows, buf)

    def abandon(self) -> None:
        """The run failed: forget the Out records (and any pending result with the operands it holds)."""
        for user, buf, _ in self.writebacks:
            self.written.pop(id(buf), None)
            untrack(buf)

    def _stored_whole(self, buf: np.ndarray) -> bool:
        """The kernels' plain stores covered every element of the Out buffer `buf` (no poison scan needed);
        its record is dropped either way (asked once per buffer per call). A pending result is written
        into `buf` first (write-back takes the ones it writes straight through before asking)."""
        windows = self.written.pop(id(buf), None)
        if windows is None:
            return False
        untrack(buf)
        if windows.pending is not None:
            materialize(windows, buf)
        if windows.unfilled:                # no loop touched it: the deferred fill, for the scan to find
            poison_output(buf)
            return False
        return windows.covers_all()

    def results(self, value):
        """The run's return value for the caller (torch tensors back when torch tensors came in)."""
        returned = value if isinstance(value, tuple) else (value,)
        for buf, plan in zip(self.outputs, self.output_plans):   # a fresh Out buffer returned as it is
            stored_whole = self._stored_whole(buf)
            unwritten = unwritten_mask(buf) if not stored_whole and any(v is buf for v in returned) else None
            if unwritten is not None:
                warn_unwritten(plan.name, unwritten)
        if not self.any_torch:
            return value
        if isinstance(value, tuple):
            return tuple(numpy_to_torch(v) if isinstance(v, np.ndarray) else v for v in value)
        return numpy_to_torch(value) if isinstance(value, np.ndarray) else value


def loop_filled_outputs(sim, entry: str) -> frozenset:
    """The names of `entry`'s parameters that only whole fused loops store into (and nothing else touches):
    a kernel's own (FunctionCode.loop_filled), or an orchestration's passed only to such kernel parameters
    (by plain call statements) or returned. Worked out once per entry."""
    code = sim.functions.get(entry)
    if code is None:
        return frozenset()
    got = code.__dict__.get("_loop_filled_names")
    if got is None:
        got = code._loop_filled_names = _loop_filled_names(sim, code)
    return got


def _loop_filled_names(sim, code) -> frozenset:
    func = code.func
    params = set(func.params)
    if any(isinstance(s, ReturnStmt) and not all(v in params for v in s.values) for s in statements(func.body)):
        return frozenset()          # it may return other memory under an output's name (copied in by launch)
    if func.func_type is not FunctionType.Orchestration:
        return frozenset(func.params[i].name_hint for i in code.loop_filled)
    seen: dict = {}
    fine: dict = {}
    for n in preorder(func.body):
        if isinstance(n, Var):
            seen[n] = seen.get(n, 0) + 1
    for stmt in statements(func.body):
        if isinstance(stmt, ReturnStmt):
            args, filled = stmt.values, range(len(stmt.values))
        elif isinstance(stmt, EvalStmt) and isinstance(stmt.expr, Call) and stmt.expr.is_function_call():
            callee = sim.functions.get(stmt.expr.op.name)
            args = stmt.expr.args
            filled = callee.loop_filled if callee is not None and callee.func.func_type is not \
                FunctionType.Orchestration else ()
        else:
            continue
        for i, arg in enumerate(args):
            if isinstance(arg, Var) and i in filled:
                fine[arg] = fine.get(arg, 0) + 1
    return frozenset(p.name_hint for p in func.params if seen.get(p) and seen[p] == fine.get(p, 0))


def _numpy_spelling(dtype) -> str:
    """How a user writes `dtype` in numpy: np.float32, or ml_dtypes.bfloat16 for the dtypes numpy lacks."""
    name = np.dtype(dtype).name
    return f"np.{name}" if hasattr(np, name) else f"ml_dtypes.{name}"
