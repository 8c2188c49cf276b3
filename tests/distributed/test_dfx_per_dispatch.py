"""Diagnostics of a distributed run land per dispatch: dfx_outputs/rank{r}/d{k}/ (the rank's k-th dispatch)."""

from __future__ import annotations

import json

import numpy as np

from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig

from tests.distributed.test_benchmark_views import N, TwoStagesOnRankZero


def test_each_dispatch_has_its_own_folder(tmp_path):
    c = ir.compile(TwoStagesOnRankZero, platform="a2a3sim", output_dir=tmp_path,
                   distributed_config=DistributedConfig(device_ids=[0, 1]))
    stale = tmp_path / "dfx_outputs" / "rank7" / "d3"
    stale.mkdir(parents=True)
    x = np.random.default_rng(1).standard_normal((N, N)).astype(np.float32)
    outs = [np.zeros_like(x) for _ in range(3)]
    c(x, *outs, config=RunConfig(enable_chip_swimlane=True, enable_scope_stats=True))
    np.testing.assert_array_equal(outs[2], -x)
    base = tmp_path / "dfx_outputs"
    assert sorted(str(p.relative_to(base)) for p in base.glob("rank*/d*")) == ["rank0/d0", "rank0/d1", "rank1/d0"]
    assert not stale.exists()                                    # an earlier run's folders do not linger
    kernels = {}
    for folder in base.glob("rank*/d*"):
        deps = json.loads((folder / "deps.json").read_text())    # the swimlane brings the task graph along
        kernels[str(folder.relative_to(base))] = {t["kernel"] for t in deps["tasks"]}
        records = json.loads((folder / "chip_swimlane_records.json").read_text())
        assert records["records"] and all(r["end_ns"] >= r["start_ns"] for r in records["records"])
        lines = (folder / "scope_stats" / "scope_stats.jsonl").read_text().splitlines()
        assert lines and all(json.loads(line)["tasks"] >= 1 for line in lines)
    assert kernels == {"rank0/d0": {"heavy"}, "rank0/d1": {"light"}, "rank1/d0": {"light"}}
    assert json.loads((base / "rank0" / "d1" / "chip_swimlane_records.json").read_text())["dispatch"] == "light_orch"


def test_dep_gen_alone_writes_only_the_graphs(tmp_path):
    c = ir.compile(TwoStagesOnRankZero, platform="a5sim", output_dir=tmp_path,
                   distributed_config=DistributedConfig(device_ids=[0, 1]))
    x = np.ones((N, N), np.float32)
    c(x, *[np.zeros_like(x) for _ in range(3)], config=RunConfig(platform="a5sim", enable_dep_gen=True))
    folder = tmp_path / "dfx_outputs" / "rank1" / "d0"
    assert sorted(p.name for p in folder.iterdir()) == ["deps.json"]
