"""DistributedTensorType.window_buffer: a `pld.window` slice remembers the buffer it was cut from;
a kernel parameter annotation has none; equality ignores it (printed IR does not carry it)."""

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.ir.stmt import AssignStmt
from pypto.ir.walks import preorder


def two_windows_program():
    @pl.program
    class TwoWindows:
        @pl.function(type=pl.FunctionType.InCore)
        def kern(self, data: pl.InOut[pld.DistributedTensor[[1, 64], pl.FP32]]) -> pld.DistributedTensor[[1, 64], pl.FP32]:
            t = pl.load(data, [0, 0], [1, 64])
            data = pl.store(t, [0, 0], data)
            return data

        @pl.function(type=pl.FunctionType.Orchestration)
        def per_rank(self, data: pld.DistributedTensor[[1, 64], pl.FP32]) -> pld.DistributedTensor[[1, 64], pl.FP32]:
            data = self.kern(data)
            return data

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[2, 1, 64], pl.FP32]):
            first_buf = pld.alloc_window_buffer([1, 64], dtype=pl.FP32)
            second_buf = pld.alloc_window_buffer([1, 64], dtype=pl.FP32)
            for r in pl.range(pld.world_size()):
                first = pld.window(first_buf, [1, 64], dtype=pl.FP32)
                second = pld.window(second_buf, [1, 64], dtype=pl.FP32)
                self.per_rank(first, device=r)
                self.per_rank(second, device=r)

    return TwoWindows


def test_window_slices_name_their_buffer_and_parameters_have_none():
    program = two_windows_program()
    windows = {s.var.name_hint: s for s in preorder(program.get_function("host").body)
               if isinstance(s, AssignStmt) and s.var.name_hint in ("first", "second")}
    buffers = {s.var.name_hint: s.var for s in preorder(program.get_function("host").body)
               if isinstance(s, AssignStmt) and s.var.name_hint.endswith("_buf")}
    assert windows["first"].var.type.window_buffer is buffers["first_buf"]
    assert windows["second"].var.type.window_buffer is buffers["second_buf"]
    param_type = program.get_function("kern").params[0].type
    assert isinstance(param_type, ir.DistributedTensorType) and param_type.window_buffer is None
    # Same shape and dtype: structurally equal whatever buffer they came from.
    ir.assert_structural_equal(windows["first"].var.type, windows["second"].var.type)
