"""ml_dtypes costs about a second to import, so `import pypto.language` must not load it; it is
loaded on the first conversion of a low-precision dtype (BF16 / FP8 / FP4 / INT4) to numpy."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_importing_the_language_does_not_load_ml_dtypes():
    out = _run("import sys, numpy as np, pypto.language as pl\n"
               "from pypto.ir.dtypes import DataType\n"
               "assert DataType.from_numpy(np.float16) is pl.FP16 and pl.FP32.to_numpy() == np.float32\n"
               "print('ml_dtypes' in sys.modules)")
    assert out == "False"


def test_a_low_precision_dtype_loads_ml_dtypes_when_first_converted():
    out = _run("import sys, pypto.language as pl\n"
               "from pypto.ir.dtypes import DataType\n"
               "dt = pl.BF16.to_numpy()\n"
               "print('ml_dtypes' in sys.modules, dt, DataType.from_numpy(dt))")
    assert out == "True bfloat16 pl.BF16"


def test_simulating_an_fp32_kernel_does_not_load_ml_dtypes():
    out = _run("import sys, numpy as np, pypto.language as pl\n"
               "from pypto.runtime import RunConfig\n"
               "prog = pl.parse('''\n"
               "@pl.function(type=pl.FunctionType.Orchestration)\n"
               "def add(a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):\n"
               "    with pl.at(level=pl.Level.CORE_GROUP):\n"
               "        t = pl.load(a, [0, 0], [16, 16])\n"
               "        pl.store(pl.add(t, t), [0, 0], c)\n"
               "    return c\n"
               "''')\n"
               "from pypto.runtime import run\n"
               "a = np.ones((16, 16), np.float32); c = np.zeros_like(a)\n"
               "run(prog, a, c, config=RunConfig(platform='a2a3sim'))\n"
               "print('ml_dtypes' in sys.modules, float(c[3, 3]))")
    assert out == "False 2.0"
