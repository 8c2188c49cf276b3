"""pld kernel ops through PTO codegen: each kernel of a distributed program becomes a well-formed `.pto`
whose peer accesses go through the CommCtx parameter MaterializeDistTensorCtx added."""

from __future__ import annotations

import re

import pytest

import pypto.language as pl
from pypto import ir
from pypto.codegen.pto import all_emitters
from pypto.codegen.pto.registry import not_emitted_ops
from pypto.codegen.pto.verify import check_well_formed
from pypto.ir.distributed_compiled_program import DistributedConfig

from tests.distributed.programs import builtin_barrier_shift, collective, handrolled_barrier

KERNEL_OPS = ("pld.rank", "pld.nranks", "pld.system.notify", "pld.system.wait", "pld.tile.remote_load",
              "pld.tile.remote_store", "pld.tile.put", "pld.tile.get")


def test_pld_kernel_ops_have_emitters_not_named_gaps():
    emitters, gaps = all_emitters(), not_emitted_ops()
    for name in KERNEL_OPS:
        assert name in emitters and name not in gaps, name


def _kernel_pto(prog, tmp_path=None, n=4) -> str:
    """kern's `.pto`: from a build directory when tmp_path is given, else straight from the final IR."""
    if tmp_path is None:
        from pypto.codegen.pto import generate_function
        from pypto.runtime.compile import lower
        text = generate_function(lower(prog).get_function("kern"))
    else:
        ir.compile(prog, platform="a2a3sim", output_dir=tmp_path,
                   distributed_config=DistributedConfig(device_ids=list(range(n))))
        text = (tmp_path / "ptoas" / "kern.pto").read_text()
        assert "kern:" not in (tmp_path / "report" / "codegen.txt").read_text()
        assert "with pld.comm_domain(" in (tmp_path / "orchestration" / "host.host_orch.py").read_text()
    assert check_well_formed(text) == []
    return text


def _signature(text: str) -> list:
    head = next(line for line in text.splitlines() if "func.func @kern(" in line)
    return re.findall(r"%arg\d+: ([^,)]+(?:<[^>]*>)?)", head)


def test_notify_wait_and_rank_queries_read_the_comm_ctx_parameter(tmp_path):
    text = _kernel_pto(handrolled_barrier(4), tmp_path)
    # y, signal, then one CommCtx per DistributedTensor parameter
    assert _signature(text) == ["!pto.ptr<i32>", "!pto.ptr<i32>", "!pto.ptr<i64>"]
    assert "pto.load_scalar %arg2[%c0_index] : !pto.ptr<i64> -> i64" in text          # rank word
    assert re.search(r"pto\.addptr %arg1, %\w+ : !pto\.ptr<i32> -> !pto\.ptr<i32>", text)
    assert re.search(r"pto\.comm\.tnotify\(%\w+, %\w+ : !pto\.partition_tensor_view<1x1xi32>, i32\) "
                     r"\{notifyOp = #pto<notify_op atomic_add>\}", text)
    assert re.search(r"pto\.comm\.twait\(%\w+, %\w+ : !pto\.partition_tensor_view<1x1xi32>, i32\) "
                     r"\{cmp = #pto<wait_cmp ge>\}", text)


def test_remote_load_reads_the_peer_view():
    text = _kernel_pto(builtin_barrier_shift(4, 64))
    assert _signature(text)[-2:] == ["!pto.ptr<i64>", "!pto.ptr<i64>"]
    peer_views = re.findall(r"(%\w+) = pto\.make_tensor_view %peer_ptr\w*", text)
    assert peer_views
    assert re.search(r"pto\.tload ins\(%\w+ : !pto\.partition_tensor_view<1x64xf32>\)", text)


@pytest.mark.parametrize("kind,mnemonic", [("allgather", "pto.comm.tput"), ("broadcast", "pto.comm.tget")])
def test_put_and_get_stage_through_their_tile(kind, mnemonic):
    text = _kernel_pto(collective(kind, 4, 16))
    line = next(x for x in text.splitlines() if mnemonic in x)
    assert re.search(mnemonic.replace(".", r"\.") + r"\(%\w+, %\w+, buf\(%\w+\) : !pto\.partition_tensor_view<", line)
    assert ("atomicType = #pto<atomic_type atomic_none>" in line) == (kind == "allgather")


def test_a_kernel_without_its_comm_ctx_is_refused_by_name():
    import pypto.language.distributed as pld
    from pypto.codegen.pto import generate_function
    from pypto.errors import UnsupportedError
    from pypto.passes.manager import PassManager

    @pl.program
    class Raw:
        @pl.function(type=pl.FunctionType.InCore)
        def kern(self, signal: pld.DistributedTensor[[4, 1], pl.INT32]):
            pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
            pld.system.notify(signal, peer=1, offsets=[0, 0], value=1, op=pld.NotifyOp.Set)

    kern = PassManager().run(Raw, skip={"MaterializeDistTensorCtx"}).get_function("kern")
    with pytest.raises(UnsupportedError, match="no CommCtx parameter"):
        generate_function(kern)


def test_every_kernel_of_the_distributed_programs_is_well_formed():
    """The host allreduce: its stage / read kernels and its builtin (the mesh allreduce recipe of seed 001)."""
    from pypto.codegen.pto import generate
    from pypto.runtime.compile import lower

    from tests.distributed.programs import host_allreduce
    kernels = generate(lower(host_allreduce(2, 17)))
    assert set(kernels) == {"stage_k", "read_k", "pld_builtin_allreduce_0"}
    for name, text in kernels.items():
        assert check_well_formed(text) == [], name
    builtin = kernels["pld_builtin_allreduce_0"]
    assert "pto.comm.tnotify(" in builtin and "pto.comm.twait(" in builtin and "pto.tload" in builtin
