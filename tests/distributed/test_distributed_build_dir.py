"""A distributed build directory: written on first read of output_dir, with a next_levels/ sub-build per
host-collective builtin; `x[i, r]` picks nested shards of a stacked host tensor."""

from __future__ import annotations

import numpy as np

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig

from tests.distributed.programs import host_allreduce

C = 32


def test_output_dir_holds_the_host_code_and_a_sub_build_per_builtin(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    c = ir.compile(host_allreduce(2, 40, pld.ReduceOp.Max), platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=[0, 1]))
    assert c.build_dir is None                            # nothing written until asked
    out = c.output_dir
    assert (out / "orchestration" / "host.host_orch.py").read_text() == c.host_code().source
    variant = out / "next_levels" / "builtin.tensor.allreduce__max__fp32"
    assert (variant / "kernel_config.py").is_file() and list((variant / "ptoas").glob("*.pto"))
    x = np.random.default_rng(0).standard_normal((2, 1, 40)).astype(np.float32)
    y = np.zeros_like(x)
    c(x, y)
    np.testing.assert_array_equal(y, np.broadcast_to(x.max(axis=0), x.shape))


def test_nested_shards_of_a_stacked_host_tensor():
    @pl.program
    class Rounds:
        @pl.function(type=pl.FunctionType.InCore)
        def neg_k(self, x: pl.Tensor[[1, C], pl.FP32], y: pl.Out[pl.Tensor[[1, C], pl.FP32]]) -> pl.Tensor[[1, C], pl.FP32]:
            y = pl.store(pl.neg(pl.load(x, [0, 0], [1, C])), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def neg(self, x: pl.Tensor[[1, C], pl.FP32], y: pl.Out[pl.Tensor[[1, C], pl.FP32]]) -> pl.Tensor[[1, C], pl.FP32]:
            y = self.neg_k(x, y)
            return y

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, xs: pl.Tensor[[3, 2, 1, C], pl.FP32], ys: pl.Out[pl.Tensor[[3, 2, 1, C], pl.FP32]]):
            for rd in pl.range(3):
                for r in pl.range(pld.world_size()):
                    self.neg(xs[rd, r], ys[rd, r], device=r)

    c = ir.compile(Rounds, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=[0, 1]))
    xs = np.random.default_rng(1).standard_normal((3, 2, 1, C)).astype(np.float32)
    ys = np.zeros_like(xs)
    c(xs, ys)
    np.testing.assert_array_equal(ys, -xs)
