"""ChipWorker / DeviceTensor: resident tensors, reusable handles, explicit copies only."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import TypeCheckError, ValueCheckError
from pypto.runtime import ChipWorker, DeviceTensor, RunConfig, benchmark


@pl.program
class Affine:
    @pl.function(type=pl.FunctionType.InCore)
    def affine(self, x: pl.Tensor[[32, 64], pl.FP32], w: pl.Tensor[[32, 64], pl.FP32],
               out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        tx = pl.load(x, [0, 0], [32, 64])
        tw = pl.load(w, [0, 0], [32, 64])
        y = pl.add(pl.mul(tx, tw), tw)
        out = pl.store(y, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], w: pl.Tensor[[32, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        out = self.affine(x, w, out)
        return out


@pytest.fixture(scope="module")
def compiled():
    return ir.compile(Affine)


def _inputs(seed):
    return np.random.default_rng(seed).standard_normal((32, 64), dtype=np.float32)


def test_resident_weight_runs_three_times_without_copies(compiled):
    weight = _inputs(0)
    with ChipWorker(config=RunConfig()) as worker:
        w = worker.alloc_tensor([32, 64], pl.FP32, init=weight)
        out = worker.alloc_tensor([32, 64], pl.FP32)
        step = worker.register(compiled)
        for i in range(3):
            x = _inputs(i + 1)
            step(x, w, out)
            assert worker.stats.copies_from_device == i        # nothing came back by itself
            got = worker.copy_from(out)
            np.testing.assert_allclose(got, x * weight + weight, rtol=1e-6)
        assert worker.stats.copies_to_device == 1               # the weight, once
        assert worker.stats.runs == 3 and step.calls == 3
        np.testing.assert_array_equal(worker.copy_from(w), weight)   # the input stayed as it was
    assert worker.closed and w.freed


def test_device_output_is_written_in_place(compiled):
    worker = ChipWorker()
    w = worker.alloc_tensor([32, 64], np.float32, init=1.0)
    out = worker.alloc_tensor([32, 64], pl.FP32)
    before = out.device_array(worker)
    compiled(_inputs(5), w, out)                     # a DeviceTensor argument routes the call to its worker
    assert out.device_array(worker) is before        # same device memory, no reallocation
    np.testing.assert_allclose(out.numpy(), _inputs(5) + 1.0, rtol=1e-6)
    worker.close()


def test_context_worker_runs_plain_calls_and_return_style(compiled):
    x, weight = _inputs(7), _inputs(8)
    with ChipWorker() as worker:
        w = worker.alloc_tensor([32, 64], pl.FP32, init=weight)
        y = compiled(x, w)                            # return style: out allocated on the host side
        assert worker.stats.runs == 1
    np.testing.assert_allclose(y, x * weight + weight, rtol=1e-6)


def test_errors_name_the_problem(compiled):
    worker = ChipWorker()
    w = worker.alloc_tensor([16, 64], pl.FP32, init=0.0)
    out = worker.alloc_tensor([32, 64], pl.FP32)
    with pytest.raises(TypeCheckError, match="'w' expects shape"):
        worker.run(compiled, _inputs(0), w, out)
    worker.free_tensor(w)
    with pytest.raises(ValueCheckError, match="freed"):
        worker.copy_from(w)
    with pytest.raises(TypeCheckError, match="shape"):
        worker.copy_to(out, np.zeros((2, 2), np.float32))
    other = ChipWorker()
    with pytest.raises(ValueCheckError, match="another ChipWorker"):
        other.run(compiled, _inputs(0), worker.alloc_tensor([32, 64], pl.FP32, init=0.0), out)
    worker.close()
    with pytest.raises(ValueCheckError, match="closed"):
        worker.alloc_tensor([1], pl.FP32)


def test_malloc_gives_a_pointer_for_raw_copies():
    """malloc returns an integer device pointer: copy_to / copy_from move bytes through it, free releases it."""
    host = np.arange(32, dtype=np.float32)
    back = np.zeros_like(host)
    worker = ChipWorker()
    ptr = worker.malloc(host.nbytes)
    assert isinstance(ptr, int) and not isinstance(ptr, DeviceTensor)
    worker.copy_to(ptr, host.ctypes.data, host.nbytes)
    worker.copy_from(back.ctypes.data + 16, ptr + 16, host.nbytes - 16)     # an interior range is fine
    np.testing.assert_array_equal(back[4:], host[4:])
    assert not back[:4].any()
    with pytest.raises(ValueCheckError, match="not inside a live allocation"):
        worker.copy_to(ptr, host.ctypes.data, host.nbytes + 1)              # past the end
    with pytest.raises(ValueCheckError, match="worker_id=1"):
        worker.malloc(8, worker_id=1)                                      # a ChipWorker has chip 0 only
    for bad in (0, -4, 2.5, True):
        with pytest.raises(ValueCheckError, match="positive int"):
            worker.malloc(bad)
    worker.free(ptr)
    with pytest.raises(ValueCheckError, match="not a live pointer"):
        worker.free(ptr)                                                   # twice
    with pytest.raises(ValueCheckError, match="not inside a live allocation"):
        worker.copy_from(back.ctypes.data, ptr, 4)                         # after free


def test_tensor_memory_is_not_freed_as_a_pointer_and_close_frees_everything():
    worker = ChipWorker()
    t = worker.alloc_tensor([4, 4], pl.FP32, init=1.0)
    with pytest.raises(ValueCheckError, match="free_tensor"):
        worker.free(t.data_ptr)
    assert "FP32" in repr(t)
    worker.free(t)                              # a DeviceTensor given to free() is free_tensor(t)
    assert t.freed and "freed" in repr(t)
    kept, ptr = worker.alloc_tensor([2], pl.INT32), worker.malloc(64)
    worker.close()
    assert kept.freed
    with pytest.raises(RuntimeError, match="called after close"):
        worker.copy_to(ptr, np.zeros(16, np.float32).ctypes.data, 64)


def test_device_platform_needs_a_device():
    from pypto.errors import UnsupportedError
    with pytest.raises(UnsupportedError, match="a2a3sim"):
        ChipWorker(config=RunConfig(platform="a2a3"))


def test_benchmark_times_rounds(compiled):
    x, w, out = _inputs(1), _inputs(2), np.zeros((32, 64), np.float32)
    result = benchmark(compiled, [x, w, out], rounds=3, warmup=1)
    assert result.rounds == 3 and len(result.times) == 3 and result.min <= result.median <= result.max
    assert "rounds=3" in str(result)
    np.testing.assert_allclose(out, x * w + w, rtol=1e-6)
    with pytest.raises(ValueCheckError, match="rounds"):
        benchmark(compiled, [x, w, out], rounds=0)


def test_resident_matmul_weight_on_a_mixed_kernel():
    """The weight of a cube + vector kernel stays on the device across three calls (return style)."""
    import ml_dtypes
    from tests.codegen.programs import MixedMatmulRelu
    compiled = ir.compile(MixedMatmulRelu)
    rng = np.random.default_rng(11)
    weight = rng.standard_normal((128, 128)).astype(ml_dtypes.bfloat16)
    with ChipWorker() as worker:
        w = worker.alloc_tensor([128, 128], pl.BF16, init=weight)
        run = worker.register(compiled)
        for _ in range(3):
            x = rng.standard_normal((16, 128)).astype(ml_dtypes.bfloat16)
            y = run(x, w)
            want = np.maximum(x.astype(np.float32) @ weight.astype(np.float32), 0)
            np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-4)
        assert worker.stats.copies_to_device == 1 and worker.stats.copies_from_device == 0
