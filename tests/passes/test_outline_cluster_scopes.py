"""OutlineClusterScopes (pl.cluster → Group, standalone pl.spmd → Spmd) and the spmd side of
OutlineIncoreScopes (block-index live-ins re-read in the kernel, auto-outlined spmd bodies)."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedError
from pypto.ir.verifier import verify_property
from pypto.passes import PassManager
from pypto.pypto_core import passes


def _outline(p):
    p = passes.convert_to_ssa()(p)
    return passes.outline_cluster_scopes()(passes.outline_incore_scopes()(p))


def test_cluster_scope_becomes_a_group_function():
    @pl.program
    class Before:
        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            with pl.cluster():
                y: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
            return y

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Group)
        def main_cluster_0(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            y: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
            return y

        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            y: pl.Tensor[[64], pl.FP32] = self.main_cluster_0(x)
            return y

    ssa = passes.convert_to_ssa()
    ir.assert_structural_equal(passes.outline_cluster_scopes()(ssa(Before)), ssa(Expected))


def test_spmd_for_with_kernel_scope_becomes_an_spmd_wrapper_forwarding_to_the_kernel():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[128, 64], pl.FP32],
                 out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
            for i in pl.spmd(4, sync_start=True):
                with pl.at(level=pl.Level.CORE_GROUP):
                    t: pl.Tensor[[32, 64], pl.FP32] = pl.slice(x, [32, 64], [i * 32, 0])
                    out = pl.assemble(out, pl.exp(t), [i * 32, 0])
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main_incore_0(self, x: pl.Tensor[[128, 64], pl.FP32],
                          out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
            i: pl.Scalar[pl.INDEX] = pl.tile.get_block_idx()          # re-read by each block, not passed
            t: pl.Tensor[[32, 64], pl.FP32] = pl.slice(x, [32, 64], [i * 32, 0])
            e: pl.Tensor[[32, 64], pl.FP32] = pl.exp(t)
            out1: pl.Tensor[[128, 64], pl.FP32] = pl.assemble(out, e, [i * 32, 0])
            return out1

        @pl.function(type=pl.FunctionType.Spmd, attrs={"core_num": 4, "sync_start": True})
        def main_spmd_0(self, x: pl.Tensor[[128, 64], pl.FP32],
                        out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
            out1: pl.Tensor[[128, 64], pl.FP32] = self.main_incore_0(x, out)
            return out1

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[128, 64], pl.FP32],
                 out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
            out1: pl.Tensor[[128, 64], pl.FP32] = self.main_spmd_0(x, out)
            return out1

    after = PassManager().run(Before, until="OutlineClusterScopes")
    ir.assert_structural_equal(after, Expected)
    assert not verify_property("ClusterOutlined", after)


def test_spmd_body_without_a_kernel_scope_is_outlined_as_one_kernel():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
            for i in pl.spmd(2):
                y: pl.Tensor[[64, 64], pl.FP32] = pl.add(x, x)
            return y

    after = _outline(Before)
    assert [f.func_type for f in after.functions.values()] == [pl.FunctionType.InCore, pl.FunctionType.Spmd,
                                                                pl.FunctionType.Orchestration]
    kernel = after["main_incore_0"]
    assert [p.name_hint for p in kernel.params] == ["x"]           # the block index is not a param
    assert after["main_spmd_0"].attrs == {"core_num": 2, "sync_start": False}


def test_spmd_needs_a_constant_core_count_and_cannot_nest():
    @pl.program
    class Dynamic:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
            with pl.spmd(n):
                with pl.at(level=pl.Level.CORE_GROUP):
                    y: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
            return y

    with pytest.raises(UnsupportedError, match="core count that is not a compile-time integer"):
        _outline(Dynamic)

    @pl.program
    class Nested:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            with pl.cluster():
                with pl.cluster():
                    y: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
            return y

    with pytest.raises(UnsupportedError, match="pl.cluster scope is nested"):
        _outline(Nested)


def test_cluster_outlined_verifier_flags_a_leftover_scope():
    @pl.program
    class P:
        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            with pl.cluster():
                y: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
            return y

    diags = verify_property("ClusterOutlined", P)
    assert len(diags) == 1 and "not outlined into a Group" in diags[0].message
