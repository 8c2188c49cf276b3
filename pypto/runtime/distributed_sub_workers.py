"""Running HOST SubWorkers: the Python callbacks a HOST orchestrator calls between chip dispatches.

A SubWorker call waits until every dispatch before it finished (pypto.runtime.sim.host_level runs
the host in phases), then runs on the host with the call's tensors, which by then hold the chip
results. A concrete SubWorker is its own Python source, compiled once against the defining module's
globals and padded so a traceback lands on the user's lines; it receives its arguments as
parameters (torch tensors when the program was called with torch tensors, else numpy arrays). An
abstract one (`...` body) runs the callback bound with `prepare(callbacks={name: fn})`, which
receives one list of the arguments, as the reference's runtime-bound callbacks do.

    run = sub_worker_runner(compiled, worker, host_args)   # what launch hands host_phases
"""

from __future__ import annotations

import __future__
import builtins
import warnings

import numpy as np

from pypto.errors import SimulationError, UnsupportedError
from pypto.runtime.sim.watchdog import watching_python

_CODE_CACHE: dict = {}


def sub_worker_runner(compiled, worker, host_args):
    callbacks = dict(getattr(worker, "callbacks", None) or {})
    to_torch = bool(getattr(host_args, "any_torch", False))

    def run(call) -> None:
        fn = compiled.sub_workers.get(call.name)
        if fn is None:
            raise UnsupportedError(f"the host calls '{call.name}', which is not a HOST SubWorker", call.span)
        args = [_host_value(a, call, to_torch) for a in call.args]
        if call.name in callbacks and not fn.requires_runtime_binding:     # prepare(sub_worker_overrides=)
            with watching_python():
                callbacks[call.name](args)
            return
        if fn.requires_runtime_binding:
            bound = callbacks.get(call.name)
            if bound is None:
                raise SimulationError(f"HOST SubWorker '{call.name}' is a runtime-bound callback (`...` body) and "
                                      "nothing is bound to it", call.span,
                                      hint=f"run through compiled.prepare(callbacks={{'{call.name}': fn}})")
            with watching_python():
                bound(args)
            return
        with watching_python():                  # a loop that never ends in the callback: the watchdog's error
            python_function(fn)(*args)

    return run


def _host_value(a, call, to_torch: bool):
    from pypto.runtime.sim.host_level import WindowBinding
    if isinstance(a, WindowBinding):
        raise UnsupportedError(f"HOST SubWorker '{call.name}' called with a window view", call.span,
                               hint="a window lives on the chips; copy it into a host tensor with a chip dispatch")
    if to_torch and isinstance(a, np.ndarray):
        from pypto.interop import numpy_to_torch
        with warnings.catch_warnings():          # an In argument is a read-only view; torch warns about it
            warnings.simplefilter("ignore", UserWarning)
            return numpy_to_torch(a)
    return a


def python_function(fn):
    """The Python function of a concrete SubWorker (compiled once per source)."""
    key = (fn.name, fn.attrs["host_source"], fn.span.filename if fn.span is not None else "")
    got = _CODE_CACHE.get(key)
    if got is None:
        from pypto.language.parser.host_sub_worker import MODULE_GLOBALS
        filename = key[2] or f"<SubWorker {fn.name}>"
        line = int(fn.attrs.get("host_source_line", 1))
        text = "\n" * max(line - 1, 0) + fn.attrs["host_source"]
        code = compile(text, filename, "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True)
        namespace = dict(MODULE_GLOBALS.get(key[2], {"__builtins__": builtins}))
        exec(code, namespace)
        got = _CODE_CACHE[key] = namespace[fn.name]
    return got
