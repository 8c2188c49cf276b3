"""The simulator on hand-built final IR: loads / stores / loops, arena aliasing, poison, deadlocks,
task dependencies, write-back only on success, and errors that name the core, op and line."""

from __future__ import annotations

import numpy as np
import pytest

import simkit as K
from pypto.errors import CapacityError, DataRaceError, DeadlockError, PyptoWarning, SimulationError
from pypto.ir import AssignStmt, Call, Function, GlobalVar, FunctionType, Program, ReturnStmt, ScalarType, SeqStmts
from pypto.ir.dtypes import FP32, INDEX
from pypto.ir.expr import ConstInt, MakeTuple
from pypto.ir.enums import ParamDirection as PD
from pypto.ir.ops.registry import create_op_call
from pypto.runtime.compiled_program import CompiledProgram
from pypto.runtime.config import RunConfig
from pypto.runtime.sim import SimProgram

RNG = np.random.default_rng(0)


def arrays(rows=64, cols=128):
    a = RNG.standard_normal((rows, cols), dtype=np.float32)
    b = RNG.standard_normal((rows, cols), dtype=np.float32)
    return a, b, np.zeros((rows, cols), np.float32)


def compiled(program) -> CompiledProgram:
    c = CompiledProgram(program, program)
    c._shared["sim"] = SimProgram(program, "a2a3sim", ops=K.OPS)
    return c


def test_single_tile_add_in_place_and_return_style():
    c = compiled(K.add_program())
    a, b, out = arrays()
    assert c(a, b, out) is None
    np.testing.assert_array_equal(out, a + b)
    y = c(a, b)
    np.testing.assert_array_equal(y, a + b)
    assert y is not out


def test_loop_with_carried_tensor_counter_and_if():
    k = K.blocked_kernel(rows=256, cols=128, block=64, alternate=True)
    c = compiled(K.single_kernel_program(k, 256, 128))
    a, b, out = arrays(256, 128)
    c(a, b, out)
    for i in range(4):
        rows = slice(64 * i, 64 * (i + 1))
        expect = a[rows] + b[rows] if i % 2 == 0 else a[rows] - b[rows]
        np.testing.assert_array_equal(out[rows], expect)


def test_generated_source_is_readable_python():
    sim = SimProgram(K.single_kernel_program(K.blocked_kernel(), 256, 128), "a2a3sim", ops=K.OPS)
    src = sim.functions["blocked"].source
    assert "for i in range(0, 4, 1):" in src
    assert "tile_load" in src and "kernels.py:21" in src
    assert not sim.functions["blocked"].is_generator          # no blocking op: runs straight through
    assert sim.functions["main"].is_generator


def test_two_live_tiles_on_one_address_corrupt_each_other():
    # ta and tb both at address 0: loading b overwrites a, so the "sum" is b + b
    c = compiled(_alias_program())
    a, b, out = arrays()
    c(a, b, out)
    np.testing.assert_array_equal(out, b + b)
    assert not np.array_equal(out, a + b)


def _alias_program():
    k = K.kernel_binary(addrs=(0, 0, 65536))
    return K.single_kernel_program(k, 64, 128)


def test_tile_beyond_vec_capacity_is_a_capacity_error():
    k = K.kernel_binary(addrs=(0, 32768, 184 * 1024 - 1024))
    c = compiled(K.single_kernel_program(k, 64, 128))
    a, b, out = arrays()
    with pytest.raises(CapacityError) as e:
        c(a, b, out)
    assert "AIV core 0" in str(e.value) and "tile 'tc'" in str(e.value) and "Vec" in str(e.value)
    assert np.all(out == 0)


def test_misaligned_tile_is_rejected():
    k = K.kernel_binary(addrs=(0, 32768 + 16, 98304))
    c = compiled(K.single_kernel_program(k, 64, 128))
    with pytest.raises(SimulationError, match="not 32-byte aligned"):
        c(*arrays())


def test_a5_has_a_bigger_vec_arena():
    k = K.kernel_binary(addrs=(0, 32768, 200 * 1024))      # past a2a3's 184 KB, inside a5's 240 KB
    p = K.single_kernel_program(k, 64, 128)
    a, b, out = arrays()
    SimProgram(p, "a5sim", ops=K.OPS).run("main", [a, b, out])
    np.testing.assert_array_equal(out, a + b)
    with pytest.raises(CapacityError):
        SimProgram(p, "a2a3sim", ops=K.OPS).run("main", [a, b, np.zeros_like(a)])


def _partial_store_program():
    """The kernel stores only the first 32 of 64 rows of `out`."""
    a, b, out = K.tensor("a", [64, 128]), K.tensor("b", [64, 128]), K.tensor("out", [64, 128])
    ptr, alloc = K.alloc("mem0", 32 * 128 * 4, 0)
    t = K.tile_var("t", [32, 128], ptr)
    res = K.tensor("res", [64, 128])
    body = SeqStmts([alloc, K.load(t, a, (0, 0), (32, 128), 30), K.store(res, t, (0, 0), out, 31),
                     ReturnStmt([res])])
    k = Function("half", [a, b, out], [out.type], body, FunctionType.AIV, param_directions=[PD.In, PD.In, PD.Out])
    return K.single_kernel_program(k, 64, 128)


def test_fresh_outputs_are_poisoned_not_zero():
    c = compiled(_partial_store_program())
    a, b, _ = arrays()
    with pytest.warns(PyptoWarning, match=r"output 'out' was not written .* 4096 of 8192 elements"):
        y = c(a, b)
    np.testing.assert_array_equal(y[:32], a[:32])
    assert np.isnan(y[32:]).all()
    out = np.zeros_like(a)                     # in place: the caller's bytes stay where the kernel wrote nothing
    with pytest.warns(PyptoWarning, match=r"within \[32:64, 0:128\]"):
        c(a, b, out)
    np.testing.assert_array_equal(out[:32], a[:32])
    assert (out[32:] == 0).all()


def _two_task_program(first_writes_tmp=True, fail_second=False):
    """tmp = a + b (task 1, into a tensor.create buffer); out = tmp + b (task 2)."""
    k1 = K.kernel_binary("k1")
    k2 = K.kernel_binary("k2")
    a, b, out = (K.tensor(n, [64, 128]) for n in ("a", "b", "out"))
    tmp = K.tensor("tmp", [64, 128])
    r1, r2 = K.tensor("r1", [64, 128]), K.tensor("r2", [64, 128])
    create = create_op_call("tensor.create", [[64, 128]], {"dtype": FP32}, span=K.span(90))
    c1 = Call(GlobalVar("k1"), [a, b, tmp],
              type=tmp.type, span=K.span(91),
              attrs=None if first_writes_tmp else {"arg_directions": ["in", "in", "in"]})
    second_args = [tmp, b, out]
    c2 = Call(GlobalVar("k2"), second_args, type=out.type,
              span=K.span(92))
    body = SeqStmts([AssignStmt(tmp, create, K.span(90)), AssignStmt(r1, c1, K.span(91)),
                     AssignStmt(r2, c2, K.span(92)), ReturnStmt([r2])])
    if fail_second:                            # k2 loads past the end of its input
        k2 = K.kernel_binary("k2", rows=64, cols=128)
        k2 = _with_bad_load(k2)
    main = Function("main", [a, b, out], [out.type], body, FunctionType.Orchestration,
                    param_directions=[PD.In, PD.In, PD.Out])
    return Program([k1, k2, main], "TwoTasks")


def _with_bad_load(k):
    stmts = list(k.body.stmts)
    load = stmts[3]
    # built around type deduction (which rejects a static out-of-range window at compile time), so
    # the run fails in the simulator's own bounds check, as a run-time (symbolic) offset would
    shifted = MakeTuple([ConstInt(32, INDEX), ConstInt(0, INDEX)])
    bad = load.value.replace(args=(load.value.args[0], shifted, *load.value.args[2:]))
    stmts[3] = load.replace(value=bad)
    return k.replace(body=SeqStmts(stmts))


def test_dependent_tasks_through_a_created_tensor():
    c = compiled(_two_task_program())
    a, b, out = arrays()
    for cfg in [RunConfig(), *(RunConfig(sim_schedule="random", sim_seed=s) for s in range(6))]:
        out[:] = 0
        c(a, b, out, config=cfg)
        np.testing.assert_array_equal(out, (a + b) + b)


def test_missing_dependency_shows_under_random_schedule():
    # task 1 claims it only reads tmp: nothing orders task 2 after it
    c = compiled(_two_task_program(first_writes_tmp=False))
    a, b, out = arrays()
    with pytest.raises(DataRaceError, match="k1.*k2"):    # the race detector names it on every run
        c(a, b, out)
    c(a, b, out, config=RunConfig(sim_race_check=False))  # deterministic: submission order happens to work
    np.testing.assert_array_equal(out, (a + b) + b)
    wrong = 0
    for seed in range(12):
        c(a, b, out, config=RunConfig(sim_schedule="random", sim_seed=seed, sim_race_check=False))
        wrong += not np.array_equal(out, (a + b) + b)
    assert wrong > 0


def test_failed_run_leaves_user_arrays_untouched():
    c = compiled(_two_task_program(fail_second=True))
    a, b, out = arrays()
    out[:] = 7.0
    with pytest.raises(SimulationError) as e:
        c(a, b, out)
    assert np.all(out == 7.0)
    msg = str(e.value)
    assert "k2" in msg and "tile.load" in msg and "kernels.py:10" in msg


def _blocking_program(with_producer: bool):
    take_v = K.Var("got", ScalarType(INDEX))
    consumer = Function("consumer", [], [], SeqStmts([
        AssignStmt(take_v, Call(K.TAKE, [], {}, ScalarType(INDEX), span=K.span(40)), K.span(40)), ReturnStmt([])]),
        FunctionType.AIV)
    producer = Function("producer", [], [], SeqStmts([
        K.EvalStmt(Call(K.PUT, [K.ConstInt(5, INDEX)], {}, None, span=K.span(50)), K.span(50)), ReturnStmt([])]),
        FunctionType.AIV)
    calls = [(consumer, [], None)] + ([(producer, [], None)] if with_producer else [])
    main = K.orchestration(calls, [], [])
    return Program([consumer, producer, main], "Pipe")


def test_blocked_consumer_resumes_when_producer_runs():
    K.MAILBOX.value = None
    sim = SimProgram(_blocking_program(True), "a2a3sim", ops=K.OPS)
    assert sim.functions["consumer"].is_generator
    sim.run("main", [])
    assert K.MAILBOX.value is None             # consumed


def test_deadlock_names_agent_op_and_line():
    K.MAILBOX.value = None
    sim = SimProgram(_blocking_program(False), "a2a3sim", ops=K.OPS)
    with pytest.raises(DeadlockError) as e:
        sim.run("main", [])
    msg = str(e.value)
    assert "AIV core 0" in msg and "consumer" in msg and "test.take" in msg and "kernels.py:40" in msg
    assert "mailbox empty" in msg


def test_kernel_writing_an_in_parameter_fails_loudly():
    k = K.kernel_binary()
    k = k.replace(param_directions=(PD.In, PD.In, PD.In))
    a, b, out = arrays()
    prog = K.single_kernel_program(k, 64, 128)
    main = prog.functions["main"].replace(param_directions=(PD.In, PD.In, PD.In))
    c = compiled(Program([k, main], "P"))
    with pytest.raises(SimulationError, match="read-only"):
        c(a, b, out)
    assert np.all(out == 0)


def test_arguments_are_checked():
    c = compiled(K.add_program())
    a, b, out = arrays()
    with pytest.raises(TypeError, match="dtype FP32"):
        c(a.astype(np.float64), b, out)
    with pytest.raises(TypeError, match="shape"):
        c(a[:32], b, out)
    with pytest.raises(TypeError, match="3 arguments"):
        c(a)


def test_fast_paths_match_the_general_ops_bit_for_bit():
    prog = K.single_kernel_program(K.blocked_kernel(alternate=True), 256, 128)
    a, b, _ = arrays(256, 128)
    fast, slow = np.zeros_like(a), np.zeros_like(a)
    sim_fast = SimProgram(prog, "a2a3sim", ops=K.OPS)
    sim_slow = SimProgram(prog, "a2a3sim", ops=K.OPS, fast_paths=False)
    assert "_fp_tile_load(" in sim_fast.functions["blocked"].source
    assert "_fp_" not in sim_slow.functions["blocked"].source
    sim_fast.run("main", [a, b, fast])
    sim_slow.run("main", [a, b, slow])
    np.testing.assert_array_equal(fast, slow)


def _lane_kernel():
    """Each AIV lane copies its half of the rows: offset = subblock_idx * 32."""
    a, out = K.tensor("a", [64, 128]), K.tensor("out", [64, 128])
    ptr, alloc = K.alloc("mem0", 32 * 128 * 4, 0)
    t = K.tile_var("t", [32, 128], ptr)
    lane, off = K.Var("lane", ScalarType(INDEX)), K.Var("off", ScalarType(INDEX))
    from pypto.ir import BinaryExpr
    res = K.tensor("res", [64, 128])
    body = SeqStmts([alloc,
                     AssignStmt(lane, create_op_call("tile.get_subblock_idx", [], span=K.span(60)), K.span(60)),
                     AssignStmt(off, BinaryExpr("mul", lane, K.ConstInt(32, INDEX)), K.span(61)),
                     K.load(t, a, (off, 0), (32, 128), 62), K.store(res, t, (off, 0), out, 63), ReturnStmt([res])])
    return Function("lanes", [a, out], [out.type], body, FunctionType.AIV, param_directions=[PD.In, PD.Out],
                    attrs={"dual_aiv_dispatch": True})


def test_dual_aiv_dispatch_runs_both_lanes_of_a_cluster():
    k = _lane_kernel()
    a, out = K.tensor("a", [64, 128]), K.tensor("out", [64, 128])
    r = K.tensor("r", [64, 128])
    main = K.orchestration([(k, [a, out], r)], [a, out], [PD.In, PD.Out], ret=r)
    c = compiled(Program([k, main], "Lanes"))
    x = RNG.standard_normal((64, 128), dtype=np.float32)
    np.testing.assert_array_equal(c(x), x)           # both halves written (one lane alone leaves NaN poison)


def test_group_runs_its_members_on_one_cluster_concurrently():
    K.MAILBOX.value = None
    pipe = _blocking_program(True)
    consumer, producer = pipe.functions["consumer"], pipe.functions["producer"].with_type(FunctionType.AIC)
    members = SeqStmts([K.EvalStmt(Call(GlobalVar("consumer"), [], span=K.span(70)), K.span(70)),
                        K.EvalStmt(Call(GlobalVar("producer"), [], span=K.span(71)), K.span(71)), ReturnStmt([])])
    group = Function("grp", [], [], members, FunctionType.Group)
    main = K.orchestration([(group, [], None)], [], [])
    sim = SimProgram(Program([consumer, producer, group, main], "G"), "a2a3sim", ops=K.OPS)
    sim.run("main", [])                              # consumer blocks on AIV, producer (AIC) unblocks it
    assert K.MAILBOX.value is None


def test_host_read_waits_for_the_writing_task_and_reports_deadlock():
    # the kernel blocks forever before writing `out`; the host then reads `out`
    K.MAILBOX.value = None
    take_v = K.Var("got", ScalarType(INDEX))
    out_p = K.tensor("out", [4, 4])
    kernel = Function("stuck", [out_p], [], SeqStmts([
        AssignStmt(take_v, Call(K.TAKE, [], {}, ScalarType(INDEX), span=K.span(80)), K.span(80)), ReturnStmt([])]),
        FunctionType.AIV, param_directions=[PD.Out])
    out = K.tensor("out", [4, 4])
    v = K.Var("v", ScalarType(FP32))
    read = create_op_call("tensor.read", [out, [0, 0]], span=K.span(81))
    body = SeqStmts([K.EvalStmt(Call(GlobalVar("stuck"), [out], span=K.span(82)), K.span(82)),
                     AssignStmt(v, read, K.span(81)), ReturnStmt([])])
    main = Function("main", [out], [], body, FunctionType.Orchestration, param_directions=[PD.Out])
    c = compiled(Program([kernel, main], "Stuck"))
    with pytest.raises(DeadlockError) as e:
        c(np.zeros((4, 4), np.float32))
    msg = str(e.value)
    assert "host orchestrator (main)" in msg and "host access to a tensor" in msg and "kernels.py:81" in msg
    assert "stuck" in msg and "test.take" in msg


def test_non_strict_config_converts_dtypes():
    c = compiled(K.add_program())
    a, b, out = arrays()
    with pytest.raises(TypeError):
        c(a.astype(np.float64), b, out)
    c(a.astype(np.float64), b, out, config=RunConfig(sim_strict=False))
    np.testing.assert_array_equal(out, a + b)
    out64 = np.zeros(out.shape, np.float64)                # an Out array of another dtype gets the result too
    c(a, b, out64, config=RunConfig(sim_strict=False))
    np.testing.assert_array_equal(out64, (a + b).astype(np.float64))


def test_spmd_launch_runs_one_kernel_per_block_with_its_index():
    from pypto.ir import BinaryExpr
    a, out = K.tensor("a", [64, 128]), K.tensor("out", [64, 128])
    ptr, alloc = K.alloc("mem0", 16 * 128 * 4, 0)
    t = K.tile_var("t", [16, 128], ptr)
    blk, off = K.Var("blk", ScalarType(INDEX)), K.Var("off", ScalarType(INDEX))
    res = K.tensor("res", [64, 128])
    kernel = Function("rows", [a, out], [out.type], SeqStmts([
        alloc, AssignStmt(blk, create_op_call("tile.get_block_idx", [], span=K.span(64)), K.span(64)),
        AssignStmt(off, BinaryExpr("mul", blk, K.ConstInt(16, INDEX)), K.span(65)),
        K.load(t, a, (off, 0), (16, 128), 66), K.store(res, t, (off, 0), out, 67), ReturnStmt([res])]),
        FunctionType.AIV, param_directions=[PD.In, PD.Out])
    wa, wout, wr = K.tensor("a", [64, 128]), K.tensor("out", [64, 128]), K.tensor("r", [64, 128])
    wrapper = Function("launch", [wa, wout], [wout.type], SeqStmts([
        AssignStmt(wr, Call(GlobalVar("rows"), [wa, wout], type=wout.type, span=K.span(68)), K.span(68)),
        ReturnStmt([wr])]), FunctionType.Spmd, param_directions=[PD.In, PD.Out], attrs={"core_num": 4})
    ma, mout, mr = K.tensor("a", [64, 128]), K.tensor("out", [64, 128]), K.tensor("r", [64, 128])
    main = K.orchestration([(wrapper, [ma, mout], mr)], [ma, mout], [PD.In, PD.Out], ret=mr)
    c = compiled(Program([kernel, wrapper, main], "Spmd"))
    x = RNG.standard_normal((64, 128), dtype=np.float32)
    np.testing.assert_array_equal(c(x), x)          # 4 blocks x 16 rows: every row written once
    for seed in range(3):
        np.testing.assert_array_equal(c(x, config=RunConfig(sim_schedule="random", sim_seed=seed)), x)


def test_unplaced_tile_is_reported():
    k = K.kernel_binary(addrs=(0, -1, 65536))        # AllocateMemoryAddr did not place tile b
    c = compiled(K.single_kernel_program(k, 64, 128))
    with pytest.raises(SimulationError, match="tile 'tb' has no assigned address in Vec"):
        c(*arrays())
