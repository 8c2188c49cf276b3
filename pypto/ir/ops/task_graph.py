"""Task-graph ops of an orchestration function: TaskIds, declared edges, opt-outs, dispatch predicates.

The runtime orders tasks by the buffers they share; these ops let a program say more. They only
mean something on the host (an Orchestration function), where the simulator reads them:

    pl.system.task_options([t1, tids], [scratch], [flags, 0], [q], pred_op="gt", pred_value=0,
                           allow_early_resolve=False)   # applies to the next kernel call submitted
                                                        # (deps, opt-outs, predicate, dumps= marks)
    tid = pl.system.task_id()                            # the TaskId of the last task submitted
    join = pl.system.task_dummy([t1, t2])                # a task with no work: one TaskId for several
    tids = pl.system.task_id_array(extent=4)             # pl.array.create(4, pl.TASK_ID)
    tids = pl.system.task_id_array_set(tids, i, tid)     # tids[i] = tid (a new array value)
    pl.system.manual_scope_begin() / manual_scope_end()  # `with pl.manual_scope():`

The parser writes `task_options` right before the call it qualifies and `task_id` right after it,
so every pass keeps them in place like any other statement (no pass moves a kernel call across
another statement of the orchestration).
"""

from __future__ import annotations

from pypto.errors import TypeCheckError
from pypto.ir.dtypes import TASK_ID
from pypto.ir.expr import MakeTuple
from pypto.ir.ops.common import describe
from pypto.ir.ops.registry import SHARED, Kwarg, OpDef, register_op
from pypto.ir.types import ScalarType, TaskIdArrayType, UnknownType

PREDICATE_OPS = ("eq", "ne", "gt", "lt", "ge", "le")


def _nothing(args, kw):
    return UnknownType()


def _task_id(args, kw):
    return ScalarType(TASK_ID)


def _deps_list(name: str, e) -> None:
    items = e.elements if isinstance(e, MakeTuple) else None
    if items is None:
        raise TypeCheckError(f"{name}: deps must be a list of TaskIds")
    for x in items:
        t = x.type
        if not (isinstance(t, ScalarType) and t.dtype is TASK_ID):
            raise TypeCheckError(f"{name}: deps= entries must be TaskIds or TaskId arrays, got {describe(t)}")


def _options(args, kw):
    _deps_list("system.task_options", args[0])
    if kw["pred_op"] not in ("",) + PREDICATE_OPS:
        raise TypeCheckError(f"system.task_options: pred_op must be one of {PREDICATE_OPS}, got {kw['pred_op']!r}")
    return UnknownType()


def _dummy(args, kw):
    _deps_list("system.task_dummy", args[0])
    return ScalarType(TASK_ID)


def _array(args, kw):
    if kw["extent"] <= 0:
        raise TypeCheckError(f"system.task_id_array: extent must be positive, got {kw['extent']}")
    return TaskIdArrayType(kw["extent"])


def _expect_array(name: str, e) -> TaskIdArrayType:
    if not isinstance(e.type, TaskIdArrayType):
        raise TypeCheckError(f"{name}: expects a TaskId array (pl.array.create(n, pl.TASK_ID)), got {describe(e.type)}")
    return e.type


def _get(args, kw):
    _expect_array("system.task_id_array_get", args[0])
    return ScalarType(TASK_ID)


def _set(args, kw):
    t = _expect_array("system.task_id_array_set", args[0])
    v = args[2].type
    if not (isinstance(v, ScalarType) and not isinstance(v, TaskIdArrayType) and v.dtype is TASK_ID):
        raise TypeCheckError(f"system.task_id_array_set: the value must be a TaskId, got {describe(v)}")
    return t


register_op(OpDef("system.task_options", args=("deps", "no_dep_args", "predicate", "dumps"),
                  kwargs={"pred_op": Kwarg(str, ""), "pred_value": Kwarg(int, 0),
                          "allow_early_resolve": Kwarg(bool, False)},
                  deduce=_options, affinity=SHARED,
                  description="declared deps, opted-out tensors, the dispatch predicate and the dump marks of the "
                              "next task"))
register_op(OpDef("system.task_id", deduce=_task_id, affinity=SHARED,
                  description="the TaskId of the task submitted just before"))
register_op(OpDef("system.task_invalid", deduce=_task_id, affinity=SHARED,
                  description="the TaskId that names no task (a dependency on it is no edge)"))
register_op(OpDef("system.task_dummy", args=("deps",), deduce=_dummy, affinity=SHARED,
                  description="a task with no work that completes when its deps have: one TaskId for several"))
register_op(OpDef("system.task_id_array", kwargs={"extent": Kwarg(int)}, deduce=_array, affinity=SHARED,
                  description="an array of TaskIds, every slot invalid"))
register_op(OpDef("system.task_id_array_get", args=("array", "index"), deduce=_get, affinity=SHARED,
                  description="one slot of a TaskId array"))
register_op(OpDef("system.task_id_array_set", args=("array", "index", "value"), deduce=_set, affinity=SHARED,
                  description="the array with one slot replaced"))
register_op(OpDef("system.manual_scope_begin", deduce=_nothing, affinity=SHARED,
                  description="from here on, tasks get no inferred edges (pl.manual_scope)"))
register_op(OpDef("system.manual_scope_end", deduce=_nothing, affinity=SHARED,
                  description="the end of a pl.manual_scope region"))
