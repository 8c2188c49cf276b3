"""The reference's ChipWorker surface: torch dtypes, data_ptr and raw copies, registration handles,
compiled.prepare(), the load counter, BenchmarkStats per span, TensorSpec, CompiledProgram.validate_ir."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import TypeCheckError, ValueCheckError
from pypto.runtime import BenchmarkStats, ChipWorker, RegistrationHandle, RunConfig, TensorSpec, benchmark
from tests.runtime.test_worker import Affine

try:
    import torch
except ImportError:          # torch is optional: the torch-typed forms are checked where it is installed
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed (optional)")


@pytest.fixture(scope="module")
def compiled():
    return ir.compile(Affine)


def _t(seed):
    """A [32, 64] FP32 input: a torch tensor where torch is installed, else a numpy array (the
    worker surface takes both, so the tests below run either way)."""
    if torch is None:
        return np.random.default_rng(seed).standard_normal((32, 64)).astype(np.float32)
    g = torch.Generator().manual_seed(seed)
    return torch.randn(32, 64, generator=g, dtype=torch.float32)


def _zeros():
    return np.zeros((32, 64), np.float32) if torch is None else torch.zeros(32, 64)


def _assert_close(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1.3e-6, atol=1e-5)


@needs_torch
def test_alloc_tensor_takes_torch_dtypes_and_runs_resident(compiled):
    x, w = _t(0), _t(1)
    with ChipWorker(config=RunConfig()) as worker:
        dev = worker.alloc_tensor((32, 64), torch.float32, init=w)
        assert dev.dtype is pl.FP32 and dev.shape == (32, 64)
        bf = worker.alloc_tensor([4], torch.bfloat16)
        assert bf.dtype is pl.BF16
        out = torch.zeros(32, 64)
        worker.run(compiled, x, dev, out)
        torch.testing.assert_close(out, x * w + w)
        with pytest.raises(TypeCheckError, match="not a dtype pypto can hold"):
            worker.alloc_tensor([4], "no-such-dtype")


@needs_torch
def test_raw_copies_through_data_ptr():
    host = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    back = torch.zeros(3, 4)
    with ChipWorker() as worker:
        dev = worker.alloc_tensor((3, 4), torch.float32)
        assert isinstance(dev.data_ptr, int) and dev.nbytes == 48
        worker.copy_to(dev.data_ptr, host.data_ptr(), dev.nbytes)
        np.testing.assert_array_equal(dev.numpy(), host.numpy())
        worker.copy_from(back.data_ptr(), dev.data_ptr, dev.nbytes)
        torch.testing.assert_close(back, host)
        worker.copy_from(dev, back)                     # the tensor form fills a torch tensor too
        with pytest.raises(ValueCheckError, match="not inside a live allocation"):
            worker.copy_from(back.data_ptr(), dev.data_ptr + 8, dev.nbytes)
        with pytest.raises(TypeCheckError, match="two integer addresses and a byte count"):
            worker.copy_to(dev.data_ptr, host.data_ptr())
        worker.free_tensor(dev)
        with pytest.raises(ValueCheckError, match="freed"):
            dev.data_ptr


def test_registration_handles_alias_unregister_and_scope(compiled):
    x, w = _t(2), _t(3)
    out = _zeros()
    worker = ChipWorker()
    try:
        before = worker.aicpu_dlopen_count
        h1 = worker.register(compiled)
        h2 = worker.register(compiled)
        assert isinstance(h1, RegistrationHandle) and worker.aicpu_dlopen_count == before + 1
        for _ in range(3):
            h1(x, w, out)
        h2(x, w, out)
        assert h1.calls == h2.calls == 4 and worker.aicpu_dlopen_count == before + 1
        _assert_close(out, x * w + w)
        h1.unregister()
        assert not h2.registered
        with pytest.raises(ValueCheckError, match="unregistered"):
            h2(x, w, out)
        with worker.register(compiled) as h3:
            h3(x, w, out)
        with pytest.raises(ValueCheckError, match="unregistered"):
            h3(x, w, out)
    finally:
        worker.close()
    with pytest.raises(ValueCheckError, match="closed"):
        worker.register(compiled)


def test_register_rejects_a_program_for_another_platform(compiled):
    with ChipWorker(config=RunConfig(platform="a5sim")) as worker:
        with pytest.raises(ValueCheckError, match="compiled for a2a3sim"):
            worker.register(compiled)


def test_prepare_is_a_worker_running_the_program(compiled):
    x, w = _t(4), _t(5)
    out = _zeros()
    with compiled.prepare() as rt:
        weight = rt.alloc_tensor(w.shape, w.dtype, init=w)
        rt(x, weight, out)
        _assert_close(out, x * w + w)
        assert rt.stats.copies_to_device == 1 and rt.aicpu_dlopen_count == 1
    assert rt.closed


def test_benchmark_reports_per_span_figures(compiled):
    x, w, out = _t(6), _t(7), _zeros()
    stats = benchmark(compiled, [x, w, out], rounds=4, warmup=1, platform="a2a3sim", device_id=0)
    assert isinstance(stats, BenchmarkStats) and stats.rounds == 4 and len(stats.invocations) == 4
    assert len(stats.samples) == 4 and stats.samples == stats.device_wall_us
    for inv in stats.invocations:
        assert inv["chip.run"] >= inv["device_wall"] > 0 and inv["bind"] >= 0 and inv["write_back"] >= 0
        assert inv["bind"] + inv["device_wall"] + inv["write_back"] == pytest.approx(inv["chip.run"])
    assert stats.device_wall_us_min <= stats.device_wall_us_median <= max(stats.device_wall_us)
    assert stats.device_us_median == stats.device_wall_us_median and not stats.all_zero_device
    assert "|- device_wall" in stats.format_mean_tree(spread="both") and "launch 0" in stats.format_tree(0)
    _assert_close(out, x * w + w)
    with pytest.raises(ValueCheckError, match="not both"):
        benchmark(compiled, [x, w, out], config=RunConfig(), platform="a2a3sim")
    with pytest.raises(AttributeError):
        stats.device_wall_us_mode


@needs_torch
def test_tensor_spec_creates_torch_and_numpy_tensors():
    q = TensorSpec("q", [4, 8], torch.bfloat16, init_value=torch.randn).create_tensor()
    assert q.dtype is torch.bfloat16 and tuple(q.shape) == (4, 8)
    out = TensorSpec("out", [2, 3], torch.float32, is_output=True).create_tensor()
    assert torch.count_nonzero(out) == 0
    lens = TensorSpec("lens", [3], torch.int32, init_value=lambda: torch.tensor([1, 2, 3])).create_tensor()
    assert lens.dtype is torch.int32 and lens.tolist() == [1, 2, 3]
    assert TensorSpec("s", [2], torch.float32, init_value=0.5).create_tensor().tolist() == [0.5, 0.5]
    arr = TensorSpec("n", [2, 2], np.float32, init_value=3).create_tensor()
    assert isinstance(arr, np.ndarray) and arr.dtype == np.float32 and float(arr[1, 1]) == 3.0
    with pytest.raises(TypeCheckError, match="init_value"):
        TensorSpec("bad", [1], torch.float32, init_value="x").create_tensor()


def test_validate_ir_names_the_pass_that_broke_the_program(tmp_path):
    compiled = ir.compile(Affine, output_dir=tmp_path, dump_passes=True)
    rng = np.random.default_rng(8)
    x, w = (rng.standard_normal((32, 64)).astype(np.float32) for _ in range(2))
    compiled.validate_ir({"x": x, "w": w}, {"out": x * w + w})
    with pytest.raises(AssertionError, match="as given"):
        compiled.validate_ir({"x": x, "w": w}, {"out": x * w})
    dumps = sorted((tmp_path / "passes_dump").glob("*_after_*.py"))
    victim = next(p for p in dumps if "pl.tile.mul(" in p.read_text())
    victim.write_text(victim.read_text().replace("pl.tile.mul(", "pl.tile.sub(", 1))
    pass_name = victim.stem.split("_after_", 1)[1]
    with pytest.raises(AssertionError, match=f"after {pass_name} "):
        compiled.validate_ir({"x": x, "w": w}, {"out": x * w + w})
    with pytest.raises(ValueCheckError, match="dump_passes=True"):
        ir.compile(Affine).validate_ir({"x": x, "w": w}, {"out": x})


def test_benchmark_runs_a_distributed_program_per_round():
    from pypto.runtime import DistributedConfig
    from tests.distributed.test_allreduce_dynamic_length import symbolic_valid_allreduce
    n, r, c, vr, vc = 2, 8, 64, 3, 20
    dist = ir.compile(symbolic_valid_allreduce(n, r, c, vr, vc), platform="a2a3sim",
                      distributed_config=DistributedConfig(device_ids=list(range(n))))
    x = np.random.default_rng(9).standard_normal((n, r, c)).astype(np.float32)
    y = np.zeros_like(x)
    stats = benchmark(dist, [x, np.zeros((n, 1, vc), np.int32), y], rounds=2, warmup=0)
    assert len(stats.device_wall_us) == 2 and all(v > 0 for v in stats.device_wall_us)
    want = x.copy()
    want[:, :vr, :vc] = x[:, :vr, :vc].max(axis=0)
    np.testing.assert_array_equal(y, want)
