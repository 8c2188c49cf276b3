"""PTO codegen names a partition of another rank's window `pview_peer*`, so the emitted MLIR says
which tload / tnotify reaches a peer (the reference's codegen checks find the remote view by it)."""

import re

import pypto.language as pl
from pypto import backend, codegen, ir
from pypto.backend import BackendType
from pypto.ir.pass_manager import OptimizationStrategy, PassManager

SRC = '''
import pypto.language as pl
import pypto.language.distributed as pld
n = pl.dynamic("N")
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def step(self, data: pl.InOut[pld.DistributedTensor[[1, n], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]]) -> pld.DistributedTensor[[1, n], pl.FP32]:
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)
        return data
'''


def test_remote_partitions_are_named_peer_and_local_ones_are_not():
    backend.reset_for_testing()
    backend.set_backend_type(BackendType.Ascend910B)
    try:
        prog = PassManager.get_strategy(OptimizationStrategy.Default).run_passes(pl.parse(SRC))
    finally:
        backend.reset_for_testing()
    f = prog.get_function("step")
    mlir = codegen.PTOCodegen().generate(ir.Program([f], f.name, prog.span)).splitlines()
    peer = [ln for ln in mlir if "pto.partition_view" in ln and "%pview_peer" in ln]
    assert peer, "the remote load and the notifies partition a peer window"
    remote_data = [ln for ln in peer if "xf32>" in ln]
    assert remote_data and all(re.search(r"sizes = \[%c1_index, %[\w.$]+\]", ln) for ln in remote_data)
    names = {ln.split("=")[0].strip() for ln in peer}
    remote_tloads = [ln for ln in mlir if "pto.tload" in ln and any(f"ins({v} " in ln for v in names)]
    assert len(remote_tloads) == 1                            # the one chunk loop's peer read
    local_tloads = [ln for ln in mlir if "pto.tload" in ln and "pview_peer" not in ln]
    assert local_tloads                                       # the rank's own chunk keeps a plain pview
