"""OutlineHierarchyScopes: `pl.at(level=<above the cores>, role=...)` scopes become level / role functions."""

import pypto.language as pl
from pypto import ir
from pypto.ir.verifier import verify_property
from pypto.pypto_core import passes


def _outline(p):
    return passes.outline_hierarchy_scopes()(passes.convert_to_ssa()(p))


def test_a_scope_becomes_a_function_of_its_level_and_role():
    @pl.program
    class Before:
        @pl.function
        def main(self, x: pl.Tensor[[32], pl.FP32]) -> pl.Tensor[[32], pl.FP32]:
            with pl.at(level=pl.Level.HOST, role=pl.Role.Orchestrator):
                y: pl.Tensor[[32], pl.FP32] = pl.mul(x, x)
            return y

    @pl.program
    class Expected:
        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def main_host_orch_0(self, x: pl.Tensor[[32], pl.FP32]) -> pl.Tensor[[32], pl.FP32]:
            y: pl.Tensor[[32], pl.FP32] = pl.mul(x, x)
            return y

        @pl.function
        def main(self, x: pl.Tensor[[32], pl.FP32]) -> pl.Tensor[[32], pl.FP32]:
            y: pl.Tensor[[32], pl.FP32] = self.main_host_orch_0(x)
            return y

    after = _outline(Before)
    ir.assert_structural_equal(after, passes.convert_to_ssa()(Expected))
    assert after.functions["main"].func_type is pl.FunctionType.Opaque     # the parent keeps its type
    assert verify_property("HierarchyOutlined", after) == []
    assert verify_property("HierarchyOutlined", passes.convert_to_ssa()(Before)) != []


def test_names_count_per_parent_and_nested_scopes_chain():
    @pl.program
    class Before:
        @pl.function
        def main(self, x: pl.Tensor[[32], pl.FP32]) -> pl.Tensor[[32], pl.FP32]:
            with pl.at(level=pl.Level.CHIP):
                a: pl.Tensor[[32], pl.FP32] = pl.add(x, x)
            with pl.at(level=pl.Level.GLOBAL, role=pl.Role.Orchestrator):
                b: pl.Tensor[[32], pl.FP32] = pl.add(a, x)
                with pl.at(level=pl.Level.POD, role=pl.Role.Orchestrator):   # POD is CLUSTER_0
                    c: pl.Tensor[[32], pl.FP32] = pl.mul(b, b)
            return c

    after = _outline(Before)
    funcs = after.functions
    assert set(funcs) == {"main", "main_chip_0", "main_global_orch_1", "main_global_orch_1_cluster0_orch_0"}
    inner = funcs["main_global_orch_1_cluster0_orch_0"]
    assert (inner.level, inner.role) == (pl.Level.CLUSTER_0, pl.Role.Orchestrator)
    assert funcs["main_chip_0"].level is pl.Level.CHIP and funcs["main_chip_0"].role is None
    # the outer function calls the inner one; main calls both outer ones
    assert "main_global_orch_1_cluster0_orch_0" in ir.python_print(funcs["main_global_orch_1"])
    text = ir.python_print(funcs["main"])
    assert "self.main_chip_0(x)" in text and "self.main_global_orch_1(" in text
    # print -> parse round trip
    ir.assert_structural_equal(after, pl.parse_program(ir.python_print(after)))


def test_kernel_scopes_inside_stay_for_outline_incore_scopes():
    @pl.program
    class Before:
        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator):
                with pl.at(level=pl.Level.CORE_GROUP):
                    t = pl.exp(x)
                    pl.assemble(y, t, [0, 0])

    after = passes.outline_incore_scopes()(_outline(Before))
    chip = after.functions["host_chip_orch_0"]
    assert chip.func_type is pl.FunctionType.Orchestration and chip.level is pl.Level.CHIP
    assert chip.param_directions[1] is pl.ParamDirection.Out        # y is written inside: an Out parameter
    assert after.functions["host_chip_orch_0_incore_0"].func_type is pl.FunctionType.InCore
    assert after.functions["host"].level is pl.Level.HOST
