"""Model-scale kernels at full size on the simulator: compile time, simulated run time, the numpy
golden's time in the same run (and the ratio), peak RSS.

    python bench/models.py [--only paged_attention|qwen3_decode_layer] [--small]

paged_attention: examples/models/04_paged_attention.py at batch 64, 16 heads, head dim 128,
block 128, context 8192, max model length 32768 (goal: <= 60 s simulated).
qwen3_decode_layer: examples/models/05_qwen3_decode_layer.py, one Qwen3-32B decode layer (batch 16,
hidden 8192, 64 / 8 heads, intermediate 25600, BF16 weights; goal: <= 10 min, <= 24 GB).
`--small` runs the examples' reduced sizes instead (what the test suite runs).
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import resource
import sys
import time

import numpy as np

from pypto.runtime import RunConfig

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples" / "models"
MODELS = {"paged_attention": "04_paged_attention.py", "qwen3_decode_layer": "05_qwen3_decode_layer.py"}


def _load(file: str):
    spec = importlib.util.spec_from_file_location(file[:-3], EXAMPLES / file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20     # Linux: KiB


def bench(name: str, small: bool) -> None:
    ex = _load(MODELS[name])
    sz = ex.SMALL if small else ex.FULL
    inputs = ex.make_inputs(sz)
    kernel = ex.build(sz)
    out = ex.make_output(sz)
    config = RunConfig()
    t0 = time.perf_counter()
    kernel.compile(*inputs.values(), out, config=config)
    t1 = time.perf_counter()
    kernel(*inputs.values(), out, config=config)
    t2 = time.perf_counter()
    golden = ex.reference(sz, **inputs)
    t3 = time.perf_counter()
    ex.check(out, golden)
    compile_s, run_s, golden_s = t1 - t0, t2 - t1, t3 - t2
    err = float(np.max(np.abs(out.astype(np.float32) - golden.astype(np.float32))))
    print(f"{name:20s} {'small' if small else 'full':5s}  compile {compile_s:7.1f} s  run {run_s:7.1f} s  "
          f"golden {golden_s:6.2f} s  (run / golden {run_s / max(golden_s, 1e-9):.2f}x)  max |err| {err:.3g}  "
          f"peak RSS {_peak_rss_gb():.1f} GB  OK", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(MODELS))
    parser.add_argument("--small", action="store_true")
    args = parser.parse_args()
    for name in MODELS:
        if args.only in (None, name):
            bench(name, args.small)


if __name__ == "__main__":
    main()
