"""An output written whole twice in a row loses the first write: the compile rejects it (PartialCodegenError,
as the reference does), pointing at the lost write; a second write that reads the first is fine."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.backend.pto_backend import PartialCodegenError


@pl.jit
def lost_write(x: pl.Tensor, result: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        result = pl.mul(x, 2.0)
        result = pl.add(x, 1.0)
    return result


@pl.jit
def chained_write(x: pl.Tensor, result: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        result = pl.mul(x, 2.0)
        result = pl.add(result, 1.0)
    return result


def test_a_lost_whole_write_is_rejected_at_its_line():
    x = np.ones(64, np.float32)
    with pytest.raises(PartialCodegenError, match="output 'result' of 'lost_write' is written whole here") as info:
        lost_write(x, np.zeros_like(x))
    first_line = lost_write.pyfunc.__code__.co_firstlineno + 3      # decorator, def, with, the write
    assert info.value.span.line == first_line and f"line {first_line + 1}" in str(info.value)


def test_a_second_write_that_reads_the_first_is_kept():
    """(The check alone: reading an output inside a tensor-level block is a compiler limit of its own.)"""
    from pypto.runtime.output_writes import check_discarded_output_writes
    x = np.ones(64, np.float32)
    check_discarded_output_writes(chained_write._parse(chained_write._bind((x, np.zeros_like(x)))))
    check_discarded_output_writes(lost_write._parse(lost_write._bind((x[:32], np.zeros(64, np.float32)))))
