"""Regressions for what the mutation fuzzer (bench/fuzz.py) found: each mutant of an example once ended in a
raw Python exception inside pypto, an InternalError, or a pypto error with no location. Each one is
the example with one line changed, run as a script; it must now fail with a pypto error on that line."""

from __future__ import annotations

import pathlib
import runpy
import warnings

import pytest

from pypto.errors import InternalError, PyptoError

EXAMPLES = pathlib.Path(__file__).parents[2] / "examples"

FINDINGS = [
    # (example, the line as written, the mutant's line, what the error says)
    ("intermediate/08_assemble.py", "        return y\n", "\n", "declares a return type but never returns"),
    ("intermediate/08_assemble.py", "        y: pl.Tensor[[BLOCK, N], pl.FP32] = pl.add(",
     "        y = {'a': 1}\n        y: pl.Tensor[[BLOCK, N], pl.FP32] = pl.add(", None),       # was InternalError
    ("intermediate/04_allreduce.py", "    @pl.function(type=pl.FunctionType.InCore)\n", "    @pl.function()\n",
     "tile ops run on a core"),
    ("beginner/01_hello_world.py", "    with pl.at(level=pl.Level.CORE_GROUP):\n", "    if True:\n",
     "tile ops run on a core"),
    ("advanced/01_split_k.py", "pl.slice(b, [KB, N], [k, 0])", "pl.slice(b, [KB, N], [k, 0], [k, 0])",
     "exceeds the tile shape"),
    ("distributed/03_remote_load.py", "data = pld.window(data_buf,", "data = pld.window(SIZE,",
     "must come from pld.alloc_window_buffer"),
    ("distributed/05_get_reduce_scatter.py", "pld.alloc_window_buffer([1, SIZE]", "pld.alloc_window_buffer([-1, SIZE]",
     "negative size"),
    ("distributed/03_remote_load.py", "signal: pld.DistributedTensor[[RANKS, 1], pl.INT32]) -> pl.Tensor[[1, SIZE]",
     "signal: pld.DistributedTensor[[RANKS, 2], pl.INT32]) -> pl.Tensor[[1, SIZE]",
     "argument 'signal' expects a tensor of shape [4, 2], got shape [4, 1]"),   # was found at the mesh-signal check
    ("utils/06_strict_memory.py", "        t = pl.load(a, [0, 0], [16, 64])\n        bias = pl.create_tile(",
     "        t = {'a': 1}\n        t = pl.load(a, [0, 0], [16, 64])\n        bias = pl.create_tile(", None),
    ("distributed/02_put_ring.py", "pld.window(data_buf, [1, SIZE]", "pld.window(data_buf, [1, data_buf]",
     "the shape must hold integers"),
    ("intermediate/04_allreduce.py", "pld.window(data_buf, [1, SIZE]", "pld.window(data_buf, [1]",
     "argument 'data' expects a tensor of shape [1, 256], got shape [1]"),   # was found when the window was bound
    ("intermediate/04_allreduce.py", "self.per_rank(x[r],", "self.per_rank(data[r],", "indexes a stacked host tensor"),
    ("distributed/05_get_reduce_scatter.py", "    @pl.function(type=pl.FunctionType.Orchestration)\n    def per_rank",
     "    @pl.function()\n    def per_rank", None),
]


@pytest.mark.parametrize("example, old, new, message", FINDINGS,
                         ids=[f"{e}:{m or 'no crash'}" for e, _, _, m in FINDINGS])
def test_fuzz_finding_is_a_located_pypto_error(example, old, new, message, tmp_path):
    source = (EXAMPLES / example).read_text()
    assert old in source, "the example changed: update this finding"
    path = tmp_path / pathlib.Path(example).name
    path.write_text(source.replace(old, new, 1))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runpy.run_path(str(path), run_name="__main__")
    except PyptoError as err:
        assert not isinstance(err, InternalError), str(err)
        assert err.span is not None and err.span.filename == str(path), f"no location: {err}"
        if message is not None:
            assert message in str(err)
        return
    except AssertionError:
        assert message is None               # the mutant ran and its numbers differ: fine, it did not crash
        return
    assert message is None, "expected an error"
