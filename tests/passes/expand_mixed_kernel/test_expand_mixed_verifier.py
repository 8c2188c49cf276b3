"""The MixedKernelExpanded checks (seed 004 "属性验证器") on hand-written split kernels."""

import pytest

import pypto.language as pl
from pypto.passes.expand_mixed_kernel.verifier import problems


def _program(*, tfree=True, init=True, reserve=True, pop_space=pl.Mem.Vec):
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            if reserve:
                buf: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="c2v", size=2048)
            if init:
                pl.system.aiv_initialize_pipe(pl.const(0, pl.INT32), pl.const(0, pl.INT32), dir_mask=1,
                                              slot_size=1024, slot_num=2)
            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
            out = pl.store(t, [0, 0], out)
            if tfree:
                pl.system.tfree_to_aic(t)
            return out
    return P


def _program_pop_in_mat():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, x: pl.Tensor[[16, 16], pl.FP32]):
            buf: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="v2c", size=2048)
            pl.system.aic_initialize_pipe(pl.const(0, pl.INT32), buf, dir_mask=2, slot_size=1024, slot_num=2)
            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Left] = pl.tile.tpop_from_aiv(split=0)
            pl.system.tfree_to_aiv(t)
    return P


def test_a_complete_consumer_passes():
    assert problems(_program()) == []


def test_missing_tfree_setup_or_reserve_are_reported():
    assert problems(_program(tfree=False)) == [
        "Function 'vec' uses tile.tpop_from_aic but has no matching 'system.tfree_to_aic' call for 't'"]
    assert problems(_program(init=False)) == [
        "Function 'vec' uses cross-core tile ops but has no 'system.aiv_initialize_pipe' call before the first of them"]
    assert problems(_program(reserve=False)) == [
        "Function 'vec' has fewer 'system.reserve_buffer' calls than initialized pipe directions require (0 for 1)"]


def test_an_aic_pop_must_land_in_mat():
    assert problems(_program_pop_in_mat()) == [
        "Function 'cube': a tile.tpop_from_aiv result in MemorySpace::Mat is required, 't' lands in Left"]


def _late_setup_and_double_free():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIV)
        def vec(self):
            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
            pl.system.tfree_to_aic(t)
            pl.system.tfree_to_aic(t)
            buf: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="c2v", size=2048)
            pl.system.aiv_initialize_pipe(pl.const(0, pl.INT32), buf, dir_mask=1, slot_size=1024, slot_num=2)
    return P


def _two_pipes_one_buffer():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self):
            buf: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="v2c", size=2048)
            pl.system.aic_initialize_pipe(pl.const(0, pl.INT32), buf, dir_mask=2, slot_size=512, id=0)
            pl.system.aic_initialize_pipe(pl.const(0, pl.INT32), buf, dir_mask=2, slot_size=512, id=1)
            a: pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat] = pl.tile.tpop_from_aiv(split=0, id=0)
            b: pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat] = pl.tile.tpop_from_aiv(split=0, id=1)
            pl.system.tfree_to_aiv(a, id=0)
            pl.system.tfree_to_aiv(b, id=1)
    return P


def test_setup_after_the_first_transfer_counts_as_missing_and_a_second_free_is_unmatched():
    found = problems(_late_setup_and_double_free())
    assert found == [
        "Function 'vec' uses cross-core tile ops but has no 'system.aiv_initialize_pipe' call before the first of them",
        "Function 'vec' has 'system.tfree_to_aic' without a matching outstanding tpop on the same tile value ('t')"]


def test_each_initialized_consumer_pipe_needs_its_own_reserved_buffer():
    assert problems(_two_pipes_one_buffer()) == [
        "Function 'cube' has fewer 'system.reserve_buffer' calls than initialized pipe directions require (1 for 2)"]


def test_the_checks_are_the_property_verifier():
    from pypto import ir
    import pypto.passes.expand_mixed_kernel  # noqa: F401  (registers the verifier)
    found = ir.verifier.verify_property("MixedKernelExpanded", _program(tfree=False))
    assert [d.message for d in found] == [
        "Function 'vec' uses tile.tpop_from_aic but has no matching 'system.tfree_to_aic' call for 't'"]
    assert ir.verifier.verify_property("MixedKernelExpanded", _program()) == []


def _source_line(text: str) -> int:
    import inspect
    lines, first = inspect.getsourcelines(_program)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("broken, line_of", [
    (dict(tfree=False), "t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic"),
    (dict(init=False), "pl.tile.tpop_from_aic(split=0)"),
    (dict(reserve=False), "pl.system.aiv_initialize_pipe("),
])
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_hand_written_kernel_breaking_the_protocol_is_a_user_error_at_its_line(broken, line_of, platform):
    from pypto import ir
    from pypto.errors import InternalError, ValueCheckError
    with pytest.raises(ValueCheckError, match="the cross-core pipe protocol is broken") as info:
        ir.compile(_program(**broken), platform=platform)
    assert not isinstance(info.value, InternalError)
    assert info.value.span.filename == __file__ and info.value.span.line == _source_line(line_of)
