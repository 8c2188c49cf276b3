"""Simulator semantics of the task-graph ops (mirrors pypto/ir/ops/task_graph.py).

They run in the host agent (`ctx` is its HostContext) and talk to the rank's Run: a TaskId is the
submitted Task's id (an int), the invalid TaskId is None, a TaskId array is a tuple of them.
"""

from __future__ import annotations

from pypto.errors import SimulationError


def _host_run(ctx, name: str):
    if getattr(ctx, "task", None) is not None or not hasattr(ctx, "submit"):
        raise SimulationError(f"{name} runs in an orchestration function, not in a kernel")
    return ctx.run


def _options(ctx, out, deps, no_dep_args, predicate, dumps=(), pred_op="", pred_value=0, allow_early_resolve=False,
             **kw):   # dumps= marks tensors for a selective dump; the simulator collects no dumps
    _host_run(ctx, "system.task_options").set_task_options(deps, no_dep_args, predicate, pred_op, pred_value,
                                                           allow_early_resolve)


def _task_id(ctx, out, **kw):
    task = getattr(ctx, "task", None)
    if task is not None:        # a pl.submit in a Group / Spmd body: the member is a lane of the wrapper's task
        return (task.parent or task).id
    return _host_run(ctx, "system.task_id").last_task_id


def _dummy(ctx, out, deps, **kw):
    return _host_run(ctx, "system.task_dummy").submit_dummy(deps)


def _array(ctx, out, extent=1, **kw):
    return (None,) * int(extent)


def _index(array, index, name: str) -> int:
    i = int(index)
    if not 0 <= i < len(array):
        raise SimulationError(f"{name}: index {i} is outside the TaskId array of {len(array)} slots")
    return i


def _get(ctx, out, array, index, **kw):
    return array[_index(array, index, "system.task_id_array_get")]


def _set(ctx, out, array, index, value, **kw):
    i = _index(array, index, "system.task_id_array_set")
    return array[:i] + (value,) + array[i + 1:]


def _manual(delta: int):
    def run(ctx, out, **kw):
        _host_run(ctx, "pl.manual_scope").manual_depth += delta
    return run


def table() -> dict:
    return {"system.task_options": _options, "system.task_id": _task_id,
            "system.task_invalid": lambda ctx, out, **kw: None, "system.task_dummy": _dummy,
            "system.task_id_array": _array, "system.task_id_array_get": _get, "system.task_id_array_set": _set,
            "system.manual_scope_begin": _manual(1), "system.manual_scope_end": _manual(-1)}
