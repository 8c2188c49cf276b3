"""The task-graph spellings parse into the task_graph ops and print back to text that reads the same."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError
from pypto.ir.types import TaskIdArrayType
from tests.helpers import op_names


def _program():
    @pl.program
    class Shaped:
        @pl.function(type=pl.FunctionType.InCore)
        def stripe(self, x: pl.Tensor[[64, 32], pl.FP32], row: pl.Scalar[pl.INDEX],
                   out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
            t: pl.Tile[[16, 32], pl.FP32] = pl.load(x, [row, 0], [16, 32])
            ret = pl.store(t, [row, 0], out)
            return ret

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 32], pl.FP32], gate: pl.Tensor[[4], pl.INT32],
                 out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
            scratch = pl.create_tensor([64, 32], dtype=pl.FP32, manual_dep=True)
            with pl.manual_scope():
                tids = pl.array.create(4, pl.TASK_ID)
                for k in pl.parallel(4):
                    scratch, tid = pl.submit(self.stripe, x, k * 16, pl.no_dep(scratch))
                    tids[k] = tid
                join = pl.system.task_dummy(deps=[tids, None])
                first = tids[0]
                out, last = pl.spmd_submit(self.stripe, scratch, 0, out, core_num=2, deps=[join, first],
                                           predicate=(gate[3] != -1), allow_early_resolve=True)
            return out

    return Shaped


def test_the_spellings_become_task_graph_ops():
    main = _program().functions["main"]
    names = op_names(main)
    for op in ("system.manual_scope_begin", "system.task_id_array", "system.task_options", "system.task_id",
               "system.task_id_array_set", "system.task_dummy", "system.task_id_array_get",
               "system.manual_scope_end"):
        assert op in names, op
    assert names.index("system.manual_scope_begin") < names.index("system.task_id_array") \
        < names.index("system.manual_scope_end")
    text = main_text = ir.python_print(main)
    assert "pl.Array[4, pl.TASK_ID]" in text and "attrs={'manual_dep': True}" in main_text
    assert "pred_op='ne', pred_value=-1, allow_early_resolve=True" in text


def test_the_printed_program_parses_back_equal():
    prog = _program()
    ir.assert_structural_equal(prog, pl.parse(ir.python_print(prog)))


def test_array_annotation_and_bad_uses():
    assert isinstance(pl.Array[8, pl.TASK_ID], TaskIdArrayType)
    text = """
import pypto.language as pl

@pl.function(type=pl.FunctionType.Orchestration)
def main(x: pl.Tensor[[16], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16], pl.FP32]:
    tids = pl.array.create(n, pl.TASK_ID)
    return x
"""
    with pytest.raises(PyptoError, match="compile-time extent"):
        pl.parse(text)
    with pytest.raises(PyptoError, match="slot takes a TaskId"):
        pl.parse(text.replace("pl.array.create(n, pl.TASK_ID)", "pl.array.create(4, pl.TASK_ID)\n    tids[0] = n"))
