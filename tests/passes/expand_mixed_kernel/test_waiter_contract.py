"""The deferred-completion waiter contract: pld.system.defer_wait only in a task-level waiter kernel
(outlined from an orchestrator's pl.at scope, called by an Orchestration function as one block, without
early resolve or a dispatch predicate)."""

import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto.errors import ValueCheckError
from pypto.ir.enums import FunctionType
from pypto.passes.context import PassContext
from pypto.pypto_core import passes

S = pld.DistributedTensor[[1, 1], pl.INT32]


def _expand(program):
    with PassContext(PassContext.current().instruments, platform="a2a3"):
        return passes.expand_mixed_kernel()(passes.infer_tile_memory_space()(passes.convert_to_ssa()(program)))


def test_a_pl_at_waiter_is_outlined_marked_and_accepted_again_on_rerun():
    @pl.program
    class Waits:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, sig: S):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="waiter"):
                pld.system.defer_wait(sig, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)

    outlined = passes.outline_incore_scopes()(passes.convert_to_ssa()(Waits))
    assert outlined.get_function("waiter").attrs["deferred_completion_waiter"] is True
    once = passes.expand_mixed_kernel()(passes.infer_tile_memory_space()(outlined))
    again = passes.expand_mixed_kernel()(once)
    assert again.get_function("waiter").func_type is FunctionType.AIV


def test_an_unmarked_helper_kernel_is_rejected_at_its_defer_wait():
    @pl.program
    class Helper:
        @pl.function(type=pl.FunctionType.InCore)
        def helper(self, sig: S):
            pld.system.defer_wait(sig, offsets=[0, 0], expected=1)

    with pytest.raises(ValueCheckError, match="bypasses the deferred-waiter task contract") as err:
        _expand(Helper)
    assert err.value.span is not None and err.value.span.line > 0


def test_a_marker_without_an_orchestration_call_site_is_rejected():
    @pl.program
    class Forged:
        @pl.function(type=pl.FunctionType.InCore)
        def waiter(self, sig: S):
            pl.func_attr({"deferred_completion_waiter": True})
            pld.system.defer_wait(sig, offsets=[0, 0], expected=1)

    with pytest.raises(ValueCheckError, match="no task-level Orchestration call site"):
        _expand(Forged)


@pytest.mark.parametrize("attrs,match", [
    ({"allow_early_resolve": True}, "cannot use allow_early_resolve=True"),
    ({"core_num": 2}, "single-block task"),
    ({"sync_start": True}, "single-block task"),
])
def test_call_site_attrs_that_break_the_contract_are_rejected(attrs, match):
    @pl.program
    class Launch:
        @pl.function(type=pl.FunctionType.InCore)
        def waiter(self, sig: S):
            pl.func_attr({"deferred_completion_waiter": True})
            pld.system.defer_wait(sig, offsets=[0, 0], expected=1)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, sig: S):
            self.waiter(sig, attrs=attrs)

    with pytest.raises(ValueCheckError, match=match):
        _expand(Launch)
