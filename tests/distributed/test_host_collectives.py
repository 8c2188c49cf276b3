"""The host path: SynthesizeAllReduceSignals + LowerHostTensorCollectives, run on the multi-rank simulator."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.errors import UnsupportedError
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.ir.equality import structural_equal
from pypto.ir.expr import Call
from pypto.ir.visitor import collect
from pypto.passes.lower_host_tensor_collectives import lower_host_tensor_collectives
from pypto.passes.synthesize_all_reduce_signals import synthesize_all_reduce_signals
from pypto.runtime import RunConfig

from tests.distributed.programs import host_allreduce


def _calls(f, name):
    return [c for c in collect(f.body, lambda n: isinstance(n, Call) and not n.is_function_call()) if c.op.name == name]


@pytest.mark.parametrize("op", [pld.ReduceOp.Sum, pld.ReduceOp.Max])
def test_host_allreduce_without_a_signal_runs(op):
    n, size = 4, 17
    c = ir.compile(host_allreduce(n, size, op), platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=list(range(n))))
    x = np.random.default_rng(0).standard_normal((n, 1, size)).astype(np.float32)
    ref = {pld.ReduceOp.Sum: np.sum, pld.ReduceOp.Max: np.max}[op](x, axis=0, keepdims=True)
    for seed in range(3):
        y = np.zeros_like(x)
        c(x, y, config=RunConfig(sim_schedule="random", sim_seed=seed))
        np.testing.assert_allclose(y, np.broadcast_to(ref, x.shape), rtol=1e-5, atol=1e-5)
    sig = [w for w in c.last_windows if w.nbytes == 64 * 4]
    assert len(sig) == 1 and all((b == 0).all() for b in sig[0].bufs), "the synthesized signal ends at zero"


def test_synthesize_signal_then_lower_to_builtin_dispatches():
    prog = host_allreduce(2, 17)
    with_sig = synthesize_all_reduce_signals()(prog)
    host = with_sig.get_function("host")
    (ar,) = _calls(host, "pld.tensor.allreduce")
    assert len(ar.args) == 2 and ar.args[1].type.dtype is pl.INT32
    assert structural_equal(synthesize_all_reduce_signals()(with_sig), with_sig)
    lowered = lower_host_tensor_collectives()(with_sig)
    assert not _calls(lowered.get_function("host"), "pld.tensor.allreduce")
    kernels = [f for f in lowered.functions.values() if f.name.startswith("pld_builtin_allreduce")]
    assert {f.func_type.name for f in kernels} == {"InCore", "Orchestration"}
    assert structural_equal(lower_host_tensor_collectives()(lowered), lowered)


def test_host_allgather_is_refused_by_name():
    @pl.program
    class HostGather:
        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[2, 1, 16], pl.FP32]):
            buf = pld.alloc_window_buffer([2, 16], dtype=pl.FP32)
            sbuf = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
            t = pld.window(buf, [2, 16], dtype=pl.FP32)
            s = pld.window(sbuf, [2, 1], dtype=pl.INT32)
            t = pld.tensor.allgather(t, t, s)
    with pytest.raises(UnsupportedError, match="host-level pld.tensor.allgather"):
        lower_host_tensor_collectives()(HostGather)


def test_lower_composite_ops_leaves_host_collectives_alone():
    from pypto.passes.lower_composite_ops import lower_composite_ops
    from pypto.pypto_core import passes
    prog = synthesize_all_reduce_signals()(host_allreduce(2, 17))
    assert structural_equal(lower_composite_ops()(prog), prog)
    assert passes.synthesize_all_reduce_signals().get_name() == "SynthesizeAllReduceSignals"
    assert passes.lower_host_tensor_collectives().get_name() == "LowerHostTensorCollectives"
