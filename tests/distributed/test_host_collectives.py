"""The host path in the Default pipeline: SynthesizeAllReduceSignals → MaterializeCommDomainScopes →
LowerHostTensorCollectives, then the multi-rank simulator."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.errors import UnsupportedError
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.ir.equality import assert_structural_equal, structural_equal
from pypto.ir.expr import Call
from pypto.ir.stmt import CommDomainScopeStmt
from pypto.ir.visitor import collect
from pypto.passes.convert_to_ssa import convert_to_ssa
from pypto.passes.lower_host_tensor_collectives import lower_host_tensor_collectives
from pypto.passes.manager import PassManager
from pypto.passes.materialize_comm_domain_scopes import materialize_comm_domain_scopes
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


def test_host_passes_sit_after_allocate_memory_addr_in_the_default_pipeline():
    names = PassManager.get_strategy().pass_names()
    i = names.index("SynthesizeAllReduceSignals")    # after the chip memory passes (the builtins' sub-build)
    assert names.index("AllocateMemoryAddr") < i
    assert names[i:i + 3] == ["SynthesizeAllReduceSignals", "MaterializeCommDomainScopes", "LowerHostTensorCollectives"]


def test_host_passes_are_no_ops_without_a_host_orchestrator():
    @pl.program
    class Plain:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
            t = pl.load(x, [0, 0], [8, 8])
            y = pl.store(t, [0, 0], y)
            return y

    for p in (synthesize_all_reduce_signals(), materialize_comm_domain_scopes(), lower_host_tensor_collectives()):
        assert p(Plain) is Plain


def test_pipeline_lowers_the_host_allreduce_into_builtin_dispatches():
    prog = convert_to_ssa()(host_allreduce(2, 17))
    with_sig = synthesize_all_reduce_signals()(prog)
    (ar,) = _calls(with_sig.get_function("host"), "pld.tensor.allreduce")
    assert len(ar.args) == 2 and ar.args[1].type.dtype is pl.INT32
    assert structural_equal(synthesize_all_reduce_signals()(with_sig), with_sig)
    scoped = materialize_comm_domain_scopes()(with_sig)
    (scope,) = collect(scoped.get_function("host").body, lambda n: isinstance(n, CommDomainScopeStmt))
    assert [b.name_hint for b in scope.buffers] == ["__allreduce_signal_buf", "data_buf"] and scope.devices is None
    assert materialize_comm_domain_scopes()(scoped) is scoped
    lowered = lower_host_tensor_collectives()(scoped)
    assert not _calls(lowered.get_function("host"), "pld.tensor.allreduce")
    builtins = {f.name: f.func_type.name for f in lowered.functions.values() if f.name.startswith("pld_builtin")}
    # the builtin is a sub-build: its kernel went through LowerCompositeOps and ExpandMixedKernel
    assert builtins == {"pld_builtin_allreduce_0": "AIV", "pld_builtin_allreduce_0_orch": "Orchestration"}
    assert not _calls(lowered.get_function("pld_builtin_allreduce_0"), "pld.tensor.allreduce")
    assert structural_equal(lower_host_tensor_collectives()(lowered), lowered)


def test_lower_host_collectives_requires_comm_domain_scopes():
    from pypto.errors import InternalError
    from pypto.passes.context import PassContext, VerificationLevel
    prog = synthesize_all_reduce_signals()(convert_to_ssa()(host_allreduce(2, 17)))
    with PassContext(verification_level=VerificationLevel.BASIC):
        with pytest.raises(InternalError, match="CommDomainScopesMaterialized"):
            lower_host_tensor_collectives()(prog)


def test_lower_composite_ops_leaves_host_collectives_alone():
    from pypto.passes.lower_composite_ops import lower_composite_ops
    from pypto.pypto_core import passes
    prog = synthesize_all_reduce_signals()(host_allreduce(2, 17))
    assert structural_equal(lower_composite_ops()(prog), prog)
    assert passes.synthesize_all_reduce_signals().get_name() == "SynthesizeAllReduceSignals"
    assert passes.materialize_comm_domain_scopes().get_name() == "MaterializeCommDomainScopes"
    assert passes.lower_host_tensor_collectives().get_name() == "LowerHostTensorCollectives"


# ---------------------------------------------------------------- MaterializeCommDomainScopes, Before / Expected

@pl.program
class Before:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, a: pld.DistributedTensor[[1, 8], pl.FP32], s: pld.DistributedTensor[[4, 1], pl.INT32]):
        pass

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_b(self, b: pld.DistributedTensor[[1, 8], pl.FP32]):
        pass

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        n = pld.world_size()
        abuf = pld.alloc_window_buffer([1, 8], dtype=pl.FP32)
        sbuf = pld.alloc_window_buffer([4, 1], dtype=pl.INT32)
        bbuf = pld.alloc_window_buffer(32)
        for r in pl.range(n):
            a = pld.window(abuf, [1, 8], dtype=pl.FP32)
            s = pld.window(sbuf, [4, 1], dtype=pl.INT32)
            self.chip(a, s, device=r)
        b = pld.window(bbuf, [1, 8], dtype=pl.FP32)
        self.chip_b(b, device=0)
        self.chip_b(b, device=2)


@pl.program
class Expected:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, a: pld.DistributedTensor[[1, 8], pl.FP32], s: pld.DistributedTensor[[4, 1], pl.INT32]):
        pass

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_b(self, b: pld.DistributedTensor[[1, 8], pl.FP32]):
        pass

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        abuf = pld.alloc_window_buffer([1, 8], dtype=pl.FP32)
        sbuf = pld.alloc_window_buffer([4, 1], dtype=pl.INT32)
        bbuf = pld.alloc_window_buffer(32)
        with pld.comm_domain([abuf, sbuf], name_hint="comm_d0"):
            with pld.comm_domain([bbuf], devices=[0, 2], name_hint="comm_d1"):
                n = pld.world_size()
                for r in pl.range(n):
                    a = pld.window(abuf, [1, 8], dtype=pl.FP32)
                    s = pld.window(sbuf, [4, 1], dtype=pl.INT32)
                    self.chip(a, s, device=r)
                b = pld.window(bbuf, [1, 8], dtype=pl.FP32)
                self.chip_b(b, device=0)
                self.chip_b(b, device=2)


def test_comm_domains_group_buffers_by_the_devices_that_use_them():
    after = materialize_comm_domain_scopes()(convert_to_ssa()(Before))
    assert_structural_equal(after, convert_to_ssa()(Expected))
    assert "with pld.comm_domain([bbuf], devices=[0, 2], name_hint='comm_d1'):" in after.as_python()


def test_window_allocation_inside_a_loop_is_refused_by_name():
    @pl.program
    class LoopAlloc:
        @pl.function(type=pl.FunctionType.Orchestration)
        def chip(self, a: pld.DistributedTensor[[1, 8], pl.FP32]):
            pass

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self):
            for r in pl.range(pld.world_size()):
                abuf = pld.alloc_window_buffer([1, 8], dtype=pl.FP32)
                a = pld.window(abuf, [1, 8], dtype=pl.FP32)
                self.chip(a, device=r)

    with pytest.raises(UnsupportedError, match="pld.alloc_window_buffer inside a loop"):
        materialize_comm_domain_scopes()(convert_to_ssa()(LoopAlloc))


def test_back_to_back_host_allreduces_share_one_builtin_and_one_signal():
    n, size = 2, 17
    Window = pld.DistributedTensor[[1, size], pl.FP32]

    @pl.program
    class Twice:
        @pl.function(type=pl.FunctionType.InCore)
        def stage_k(self, x: pl.Tensor[[1, size], pl.FP32],
                    data: pl.InOut[Window]) -> Window:
            t = pl.load(x, [0, 0], [1, size])
            data = pl.store(t, [0, 0], data)
            return data

        @pl.function(type=pl.FunctionType.InCore)
        def read_k(self, data: pld.DistributedTensor[[1, size], pl.FP32],
                   y: pl.Out[pl.Tensor[[1, size], pl.FP32]]) -> pl.Tensor[[1, size], pl.FP32]:
            t = pl.load(data, [0, 0], [1, size])
            y = pl.store(t, [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def stage(self, x: pl.Tensor[[1, size], pl.FP32],
                  data: pl.InOut[Window]) -> Window:
            return self.stage_k(x, data)

        @pl.function(type=pl.FunctionType.Orchestration)
        def read(self, data: pld.DistributedTensor[[1, size], pl.FP32],
                 y: pl.Out[pl.Tensor[[1, size], pl.FP32]]) -> pl.Tensor[[1, size], pl.FP32]:
            return self.read_k(data, y)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[n, 1, size], pl.FP32], y: pl.Out[pl.Tensor[[n, 1, size], pl.FP32]]):
            buf = pld.alloc_window_buffer([1, size], dtype=pl.FP32)
            data = pld.window(buf, [1, size], dtype=pl.FP32)
            for r in pl.range(pld.world_size()):
                self.stage(x[r], data, device=r)
            data = pld.tensor.allreduce(data)
            data = pld.tensor.allreduce(data)
            for r in pl.range(pld.world_size()):
                self.read(data, y[r], device=r)

    c = ir.compile(Twice, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(n))))
    assert sorted(f for f in c.chip.lowered.functions if f.startswith("pld_builtin")) == [
        "pld_builtin_allreduce_0", "pld_builtin_allreduce_0_orch"]
    x = np.random.default_rng(1).standard_normal((n, 1, size)).astype(np.float32)
    y = np.zeros_like(x)
    c(x, y, config=RunConfig(sim_schedule="random", sim_seed=4))
    np.testing.assert_allclose(y, np.broadcast_to(n * x.sum(axis=0, keepdims=True), x.shape), rtol=1e-5, atol=1e-5)
    (sig,) = [w for w in c.last_windows if w.nbytes == 64 * 4]
    assert all((b == 0).all() for b in sig.bufs), "the shared signal is back at zero after both calls"


def test_compiling_a_host_program_without_a_world_says_what_to_pass():
    with pytest.raises(UnsupportedError, match="has a HOST orchestrator") as e:
        ir.compile(host_allreduce(2, 17), platform="a2a3sim")
    assert "DistributedConfig(device_ids=" in e.value.hint
