"""`pypto.ir.op.pld`: builders of the distributed ops: `pld.tensor.put(...)`, `pld.tile.remote_load(...)`,
`pld.system.notify(...)`, and the unqualified `pld.get_comm_ctx(...)` / `pld.rank(...)` (see pypto.ir.op)."""

from pypto.ir.op._family import OpFamily

tensor = OpFamily("pld.tensor")
tile = OpFamily("pld.tile")
system = OpFamily("pld.system")
_TOP = OpFamily("pld")


def __getattr__(name):
    return getattr(_TOP, name)
