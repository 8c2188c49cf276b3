"""pld.system.defer_wait in PTO: a call to the runtime's counter-completion adapter (declared once at
module scope) with the runtime-owned dispatch-args pointer, the signal base, the cell's checked element
offset and the threshold — no spin loop in the kernel."""

from __future__ import annotations

import re

from pypto import ir
from pypto.codegen.pto.registry import all_emitters, not_emitted_ops
from pypto.codegen.pto.verify import check_well_formed
from pypto.ir.distributed_compiled_program import DistributedConfig

from tests.distributed.test_defer_wait import ring_handoff

ADAPTER_TYPE = "(!pto.ptr<i64>, !pto.ptr<i32>, i64, i64)"


def _arm_pto(tmp_path, **kw) -> str:
    ir.compile(ring_handoff(**kw), platform="a2a3sim", output_dir=tmp_path,
               distributed_config=DistributedConfig(device_ids=[0, 1, 2]))
    assert "arm:" not in (tmp_path / "report" / "codegen.txt").read_text()
    return (tmp_path / "ptoas" / "arm.pto").read_text()


def test_defer_wait_has_an_emitter_not_a_named_gap():
    assert "pld.system.defer_wait" in all_emitters()
    assert "pld.system.defer_wait" not in not_emitted_ops()


def test_defer_wait_calls_the_counter_completion_adapter(tmp_path):
    text = _arm_pto(tmp_path, threshold=2)
    assert check_well_formed(text) == []
    lines = text.splitlines()
    decl = f"  func.func private @pypto_register_counter_completion{ADAPTER_TYPE}"
    assert lines.count(decl) == 1 and lines.index(decl) < next(i for i, l in enumerate(lines) if "func.func @arm(" in l)
    head = next(l for l in lines if "func.func @arm(" in l)
    params = re.findall(r"(%arg\d+): ([^,)]+(?:<[^>]*>)?)", head)
    # data, signal, their two CommCtx pointers, then the runtime-owned dispatch-args pointer
    assert [t for _, t in params] == ["!pto.ptr<f32>", "!pto.ptr<i32>", "!pto.ptr<i64>", "!pto.ptr<i64>",
                                      "!pto.ptr<i64>"]
    raw_args, signal = params[4][0], params[1][0]
    call = re.search(rf"func\.call @pypto_register_counter_completion\({raw_args}, {signal}, (%\w+), (%\w+)\) : "
                     rf"{re.escape(ADAPTER_TYPE)} -> \(\)", text)
    assert call, text
    offset, threshold = call.groups()
    assert re.search(rf"{threshold} = arith.constant 2 : i64", text)
    # the offset is -1 when a coordinate leaves the [3, 1] signal
    select = re.search(r"(%\w+) = arith.select %\w+, %cneg1_index, %\w+ : index", text)
    assert select and f"{offset} = arith.index_cast {select.group(1)} : index to i64" in text
    assert "pto.comm.twait" not in text, "a deferred wait never spins in the kernel"


def test_a_kernel_without_defer_wait_gets_no_adapter(tmp_path):
    ir.compile(ring_handoff(defer=False), platform="a2a3sim", output_dir=tmp_path,
               distributed_config=DistributedConfig(device_ids=[0, 1, 2]))
    for f in (tmp_path / "ptoas").glob("*.pto"):
        assert "pypto_register_counter_completion" not in f.read_text()
