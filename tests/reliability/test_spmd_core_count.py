"""An spmd launch of no blocks (fuzz seed 32: `pl.spmd(0, ...)` with a later task depending on it) never
completes: the run deadlocked with no line to blame. The core count is checked where it is written (a
positive integer, as the reference requires), and a deadlock with no blocked op names the call of a task
that cannot start."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import DeadlockError
from pypto.language.parser.diagnostics.exceptions import ParserTypeError
from pypto.language.parser import task_graph
from pypto.runtime import RunConfig


def _scaled(count):
    @pl.jit
    def scaled(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.spmd(count, name_hint="scale") as tid:
            with pl.at(level=pl.Level.CORE_GROUP):
                b = pl.tile.get_block_idx()
                t = pl.load(x, [b * 16, 0], [16, 64])
                pl.store(pl.mul(t, 2.0), [b * 16, 0], out)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="finish", deps=[tid]):
            u = pl.load(out, [0, 0], [16, 64])
            pl.store(pl.add(u, 1.0), [0, 0], out)
        return out
    return scaled


@pytest.mark.parametrize("count, want", [(0, "must be a positive integer, got 0"),
                                         (-2, "must be a positive integer, got -2"),
                                         (2.5, "must be an integer, got 2.5"),
                                         (True, "must be an integer, got True")])
def test_a_core_count_that_is_not_a_positive_integer_is_refused_at_the_line(count, want):
    x = np.ones((32, 64), np.float32)
    with pytest.raises(ParserTypeError, match=want) as info:
        _scaled(count)(x, np.zeros_like(x))
    assert "pl.spmd(count" in info.value.span.text


def test_a_positive_count_runs():
    x = np.ones((32, 64), np.float32)
    out = np.zeros_like(x)
    _scaled(2)(x, out)
    want = 2 * x
    want[:16] += 1
    np.testing.assert_array_equal(out, want)


def test_spmd_submit_checks_its_core_count_too():
    text = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
        t: pl.Tile[[16, 64], pl.FP32] = pl.load(x, [0, 0], [16, 64])
        pl.store(t, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
        tid = pl.spmd_submit(self.k, x, out, core_num=0)
        return out
'''
    with pytest.raises(ParserTypeError, match="pl.spmd_submit: the core count must be a positive integer, got 0"):
        pl.parse(text)


def test_a_deadlock_without_a_blocked_op_names_the_waiting_tasks_call(monkeypatch):
    """With the parse check bypassed, the 0-block launch never completes and `finish` never starts."""
    from pypto.language.parser.values import to_expr
    monkeypatch.setattr(task_graph, "core_count_expr", lambda n, span, what: to_expr(n, span))
    x = np.ones((32, 64), np.float32)
    with pytest.raises(DeadlockError, match="waiting for dependencies: task #\\d+ finish") as info:
        _scaled(0)(x, np.zeros_like(x), config=RunConfig())
    assert info.value.span is not None and "name_hint=\"finish\"" in info.value.span.text
