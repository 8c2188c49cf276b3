"""The last catalog families: pld.tensor.remote_store on the multi-rank simulator, on-core arrays
(pl.array.*), the prefetch family (no effect on values) and the names that are not built yet."""

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.errors import PyptoError
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig, run


def remote_store_program(N, SIZE, atomic):
    @pl.program
    class RemoteStore:
        @pl.function(type=pl.FunctionType.InCore)
        def kern(self, x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
                 data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
                 signal: pl.InOut[pld.DistributedTensor[[N, 1], pl.INT32]]) -> pl.Tensor[[1, SIZE], pl.FP32]:
            ctx = pld.get_comm_ctx(data)
            me = pld.rank(ctx)
            n = pld.nranks(ctx)
            pld.tensor.remote_store(x, data, (me + 1) % n, [0, 0], atomic=atomic)
            signal = pld.tensor.barrier(signal)
            u = pl.load(data, [0, 0], [1, SIZE])
            y = pl.store(u, [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def per_rank(self, x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
                     data: pld.DistributedTensor[[1, SIZE], pl.FP32],
                     signal: pld.DistributedTensor[[N, 1], pl.INT32]) -> pl.Tensor[[1, SIZE], pl.FP32]:
            y = self.kern(x, y, data, signal)
            return y

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[N, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[N, 1, SIZE], pl.FP32]]):
            data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
            signal_buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
                signal = pld.window(signal_buf, [N, 1], dtype=pl.INT32)
                self.per_rank(x[r], y[r], data, signal, device=r)

    return RemoteStore


@pytest.mark.parametrize("atomic", [pld.AtomicType.None_, pld.AtomicType.Add])
def test_tensor_remote_store_writes_the_peer_window(atomic):
    N, SIZE = 3, 64
    x = np.random.default_rng(4).standard_normal((N, 1, SIZE), dtype=np.float32)
    compiled = ir.compile(remote_store_program(N, SIZE, atomic), platform="a2a3sim",
                          distributed_config=DistributedConfig(device_ids=list(range(N))))
    for seed in range(2):
        y = np.zeros_like(x)
        compiled(x, y, config=RunConfig(sim_schedule="random", sim_seed=seed))
        np.testing.assert_array_equal(y, np.roll(x, 1, axis=0))     # windows start zeroed: Add == store


ARRAY = """
import pypto.language as pl

@pl.program
class Arr:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[1, 8], pl.INT32], out: pl.Out[pl.Tensor[[1, 8], pl.INT32]]) -> pl.Tensor[[1, 8], pl.INT32]:
        a = pl.array.create(8, pl.INT32)
        for i in pl.range(8):
            v = pl.read(x, [0, i])
            a = pl.array.update_element(a, i, v * 3)
        t = pl.create_tile([1, 8], dtype=pl.INT32)
        for j in pl.range(8):
            t = pl.write(t, [0, j], pl.array.get_element(a, 7 - j))
        out = pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 8], pl.INT32], out: pl.Out[pl.Tensor[[1, 8], pl.INT32]]) -> pl.Tensor[[1, 8], pl.INT32]:
        out = self.kernel(x, out)
        return out
"""


def test_arrays_are_read_and_updated_by_element():
    x = np.arange(1, 9, dtype=np.int32)[None, :]
    out = np.zeros_like(x)
    result = run(pl.parse(ARRAY))(x, out)
    np.testing.assert_array_equal(out if result is None else result, 3 * x[:, ::-1])


PREFETCH = """
import pypto.language as pl

@pl.program
class Pre:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            c = pl.prefetch.make_context()
            e = pl.prefetch.async_prefetch(x, c)
            s = pl.prefetch.session(c)
            pl.prefetch.wait(e, s)
            out = pl.assemble(out, pl.adds(x, 2.0), [0, 0])
        return out
"""


def test_prefetch_leaves_values_alone_and_a_non_flat_source_is_refused_in_codegen(tmp_path):
    x = np.random.default_rng(1).standard_normal((16, 64), dtype=np.float32)
    out = np.zeros_like(x)
    result = run(pl.parse(PREFETCH))(x, out)
    np.testing.assert_allclose(out if result is None else result, x + 2, rtol=1e-6)
    ir.compile(pl.parse(PREFETCH), output_dir=tmp_path)      # [16, 64] is not flat: no .pto, the report says why
    report = "".join(p.read_text() for p in (tmp_path / "report").iterdir())
    assert "prefetch.async_prefetch: the source must be a flat, contiguous GM tensor" in report


def test_prefetch_of_a_flat_source_emits_the_async_sequence_with_a_hidden_workspace(tmp_path):
    text = PREFETCH.replace("[[16, 64]", "[[1, 1024]")
    x = np.arange(1024, dtype=np.float32).reshape(1, 1024)
    out = np.zeros_like(x)
    compiled = ir.compile(pl.parse(text), output_dir=tmp_path)
    compiled(x, out)
    np.testing.assert_array_equal(out, x + 2)
    (pto,) = (tmp_path / "ptoas").glob("*.pto")
    body = pto.read_text()
    head = next(line for line in body.splitlines() if "func.func" in line)
    assert head.rstrip().endswith("{") and "!pto.ptr<i8>)" in head          # the runtime's SDMA workspace
    order = ["pto.make_prefetch_async_context(", "pto.tprefetch_async(", "pto.get_prefetch_async_session",
             "pto.comm.wait_async_event("]
    at = [body.index(op) for op in order]
    assert at == sorted(at)
    assert "!pto.partition_tensor_view<1x1024xf32>, !pto.prefetch_async_context) -> !pto.async_event" in body


@pytest.mark.parametrize("name", ["submit", "spmd_submit"])
def test_submit_forms_need_a_kernel_method_reference(name):
    assert getattr(pl, name) is not None              # known to the namespace, not an AttributeError
    text = PREFETCH.replace("c = pl.prefetch.make_context()", f"c = pl.{name}(x)")
    with pytest.raises(PyptoError, match=f"pl.{name}.*self.<kernel> method reference"):
        pl.parse(text)
