"""`pl.adir`: the per-argument direction markers of a call site (pypto.ir.enums.ArgDirection).

    out, tid = pl.submit(self.k, x, out, attrs={"arg_directions": [pl.adir.input, pl.adir.output_existing]})

Each name is an ArgDirection member, not a function: `pl.adir.input(x)` is not a form. A callee's
own contract stays `pl.Out[...]` / `pl.InOut[...]` on its parameters; these markers say how one call
passes its arguments (one per argument), and `pl.no_dep(t)` at an argument is the usual way to get
`no_dep`.
"""

from __future__ import annotations

from pypto.ir.enums import ArgDirection

input = ArgDirection.input            # noqa: A001 - shadows the builtin inside this module only
output = ArgDirection.output
output_existing = ArgDirection.output_existing
inout = ArgDirection.inout
no_dep = ArgDirection.no_dep
scalar = ArgDirection.scalar

__all__ = ["ArgDirection", "input", "output", "output_existing", "inout", "no_dep", "scalar"]
