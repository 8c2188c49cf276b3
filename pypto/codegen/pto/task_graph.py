"""PTO entries of the task-graph ops (pypto/ir/ops/task_graph.py): none reaches a kernel.

They describe how the orchestration submits tasks (TaskIds, declared edges, opt-outs, predicates),
so they live in host code — the orchestration artifact — and never in a `.pto` kernel module.
"""

from __future__ import annotations

from pypto.codegen.pto.registry import not_emitted

for _name in ("system.task_options", "system.task_id", "system.task_invalid", "system.task_dummy",
              "system.task_id_array", "system.task_id_array_get", "system.task_id_array_set",
              "system.manual_scope_begin", "system.manual_scope_end"):
    not_emitted(_name, "a task-graph op of the orchestration (host code); kernels cannot submit tasks")
