"""Host collectives as runtime builtins: a rendezvous of the domain's ranks, then one numpy pass.

LowerHostTensorCollectives compiles each host collective into a builtin chip program (the
credit-barrier recipe, for codegen and for the recipe mode below) and marks its Orchestration
wrapper `attrs["host_collective"]`. On the device the reference runs such calls as builtin
kernels of its runtime; the simulator does the same by default: each rank's dispatch of one call
arrives at a shared rendezvous and blocks (a Block the scheduler retries, so a missing rank is a
DeadlockError naming who waits) until every member of the window's comm domain has arrived,
i.e. until each of them finished the dispatches before it; the last to arrive computes the
result for all of them from their windows, and every member goes on. The signal windows are
left as they are (the recipe's self-cleaning protocol ends at zero, and so does an unused
signal). Reductions fold the members in domain-rank order.

`RunConfig(sim_host_collectives="recipe")` runs the compiled recipe instead, as any
other chip program (every notify / wait / remote_load simulated), which tests of the recipes use.

    native = NativeCollectives(world)                       # one per run (HostLevel owns it)
    code = native.dispatch_code(orch_code, rank, bound_args) # the rank's dispatch: arrive, wait, compute
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pypto.errors import SimulationError
from pypto.runtime.sim.blocking import Block
from pypto.runtime.sim.codegen import FunctionCode

_REDUCE = {"Sum": np.add, "Max": np.maximum, "Min": np.minimum, "Prod": np.multiply}
# which operand is the (updated) result window, per op
_RESULT = {"pld.tensor.allgather": 1, "pld.tensor.all_to_all": 1}
SUPPORTED = ("pld.tensor.allreduce", "pld.tensor.barrier", "pld.tensor.broadcast", "pld.tensor.reduce_scatter",
             "pld.tensor.allgather", "pld.tensor.all_to_all")


@dataclass(eq=False)
class _Call:
    """One host collective call: the members' arguments as they arrive."""
    op: str
    attrs: dict
    members: list                         # world ranks, in domain-rank order
    args: dict = field(default_factory=dict)
    done: bool = False


class NativeCollectives:
    def __init__(self, world):
        self.world = world
        self.calls: dict = {}             # (orchestration name, domain, call index) -> _Call
        self.counts: dict = {}            # (orchestration name, domain, world rank) -> calls dispatched so far

    def dispatch_code(self, orch: FunctionCode, rank: int, args: list, members: list) -> FunctionCode:
        attrs = orch.func.attrs
        op = attrs["host_collective"]
        # one builtin serves every call of its signature, also in disjoint domains: a call is the i-th of
        # this builtin on this domain (every member dispatches its calls in the same order)
        domain = tuple(members)
        i = self.counts.get((orch.name, domain, rank), 0)
        self.counts[(orch.name, domain, rank)] = i + 1
        call = self.calls.get((orch.name, domain, i))
        if call is None:
            call = self.calls[(orch.name, domain, i)] = _Call(op, dict(attrs), list(members))
        if rank not in call.members:
            raise SimulationError(f"host {op}: rank {rank} dispatched to a collective of the comm domain "
                                  f"{call.members}")

        def run(_ctx, *_args):
            call.args[rank] = args
            if len(call.args) == len(call.members):
                _compute(call)
                call.done = True
            elif not call.done:
                waiting = lambda: call.done                                      # noqa: E731
                missing = [r for r in call.members if r not in call.args]
                yield Block(waiting, op, f"rank {rank} waits for ranks {missing} to reach host {op}")
            return args[_RESULT.get(op, 0)]
            yield  # noqa: unreachable (makes run a generator)

        return FunctionCode(f"{orch.name} (builtin {op})", orch.func, "", "<pypto builtin collective>", run, True,
                            {}, [])


def _compute(call: _Call) -> None:
    op, members = call.op, call.members
    args = [call.args[r] for r in members]
    rop = _REDUCE.get(call.attrs.get("collective_op", "Sum"), np.add)
    with np.errstate(all="ignore"):
        if op == "pld.tensor.allreduce":
            targets = [a[0] for a in args]
            acc = targets[0]                            # folded in place: the first member's window is a result
            for t in targets[1:]:
                rop(acc, t, out=acc)
            for t in targets[1:]:
                np.copyto(t, acc)
        elif op == "pld.tensor.broadcast":
            root = int(call.attrs.get("collective_root", 0))
            src = args[root][0].copy()
            for a in args:
                a[0][...] = src
        elif op == "pld.tensor.reduce_scatter":
            targets = [a[0] for a in args]
            for i, t in enumerate(targets):             # domain rank i keeps the reduction of row i
                acc = targets[0][i].copy()
                for other in targets[1:]:
                    rop(acc, other[i], out=acc)
                t[i] = acc
        elif op == "pld.tensor.allgather":
            chunks = [np.asarray(a[0]).copy() for a in args]
            for a in args:
                for src, chunk in enumerate(chunks):
                    a[1][src] = chunk.reshape(a[1][src].shape)
        elif op == "pld.tensor.all_to_all":
            inputs = [np.asarray(a[0]).copy() for a in args]
            for dst, a in enumerate(args):
                for src, x in enumerate(inputs):
                    a[1][src] = x[dst]
        # pld.tensor.barrier: the rendezvous is the whole effect
