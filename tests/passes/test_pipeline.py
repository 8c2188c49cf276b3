"""The Default pipeline end to end on a tensor-level and a tile-level kernel, plus dumps."""

import os

import pytest

from pypto import ir
from pypto.errors import CapacityError
from pypto.ir import (AssignStmt, ConstFloat, ForStmt, FunctionType as FT, InCoreScopeStmt, IterArg, MemorySpace,
                      ParamDirection as PD, Program, ReturnStmt, SeqStmts, Var, YieldStmt)
from pypto.ir.ops.registry import create_op_call
from pypto.ir.visitor import collect
from pypto.pypto_core import passes
from pypto.passes import OptimizationStrategy, PassManager
from pass_irb import IDX, call, func, let, op, tensor

DEFAULT_ORDER = ["InlineFunctions", "ConvertToSSA", "Simplify", "NormalizeStmtStructure", "FlattenCallExpr",
                 "OutlineIncoreScopes", "ConvertTensorToTileOps", "InferTileMemorySpace", "ExpandMixedKernel",
                 "InitMemRef", "AllocateMemoryAddr"]


def tensor_level_program():
    """main(x, out): with pl.at(CORE_GROUP): y = x + x; z = y * 2.0; out[:] = z   (parser-style, non-SSA)."""
    x = Var("x", tensor([64, 64]))
    out = Var("out", tensor([64, 64]))
    y, s1 = let("y", op("tensor.add", x, x))
    z, s2 = let("z", op("tensor.muls", y, ConstFloat(2.0)))
    s3 = AssignStmt(out, op("tensor.assemble", out, z, [0, 0]))
    scope = InCoreScopeStmt(SeqStmts([s1, s2, s3]))
    main = func("main", [x, out], [tensor([64, 64])], [scope, ReturnStmt([out])], FT.Opaque, [PD.In, PD.Out])
    return Program([main], "TensorLevel")


def tile_level_program():
    """An InCore kernel: acc = load(x); for i in range(4): acc = acc + acc; store(acc, out)."""
    x = Var("x", tensor([32, 32]))
    out = Var("out", tensor([32, 32]))
    acc, s0 = let("acc", op("tile.load", x, [0, 0], [32, 32], [32, 32]))
    i = Var("i", IDX)
    s1 = ForStmt(i, ir.ConstInt(0), ir.ConstInt(4), ir.ConstInt(1),
                 body=SeqStmts([AssignStmt(acc, op("tile.add", acc, acc))]))
    st, s2 = let("st", op("tile.store", acc, [0, 0], out))
    k = func("kernel", [x, out], [tensor([32, 32])], [s0, s1, s2, ReturnStmt([st])], FT.InCore, [PD.In, PD.Out])
    xo, oo = Var("x", tensor([32, 32])), Var("out", tensor([32, 32]))
    r, s3 = let("r", call("kernel", tensor([32, 32]), xo, oo))
    orch = func("main", [xo, oo], [tensor([32, 32])], [s3, ReturnStmt([r])], FT.Orchestration, [PD.In, PD.Out])
    return Program([k, orch], "TileLevel")


def _ops(f):
    return [c.op.name for c in collect(f.body, lambda n: isinstance(n, ir.Call) and not c_is_fn(n))]


def c_is_fn(n):
    return isinstance(n.op, ir.GlobalVar)


def test_default_pipeline_order():
    assert PassManager.get_strategy(OptimizationStrategy.Default).pass_names() == DEFAULT_ORDER


def test_tensor_level_kernel_full_pipeline():
    final = PassManager.get_strategy(OptimizationStrategy.Default).run_passes(tensor_level_program())
    assert set(final.functions) == {"main", "main_incore_0"}
    kernel, main = final["main_incore_0"], final["main"]
    assert kernel.func_type is FT.AIV and main.func_type is FT.Orchestration
    assert kernel.param_directions == (PD.In, PD.Out)
    names = _ops(kernel)
    assert names.count("tile.alloc") == 3
    assert [n for n in names if n != "tile.alloc"] == ["tile.load", "tile.add", "tile.muls", "tile.store"]
    addrs = [c.kwargs["addr"] for c in collect(kernel.body, lambda n: isinstance(n, ir.Call) and not c_is_fn(n)
                                               and n.op.name == "tile.alloc")]
    assert sorted(addrs) == [0, 16384, 32768]
    passes.verify_properties({passes.IRProperty.AllocatedMemoryAddr, passes.IRProperty.HasMemRefs,
                              passes.IRProperty.MixedKernelExpanded}, final)


def test_tile_level_kernel_full_pipeline():
    final = PassManager.get_strategy(OptimizationStrategy.Default).run_passes(tile_level_program())
    kernel = final["kernel"]
    assert kernel.func_type is FT.AIV
    loops = collect(kernel.body, lambda n: isinstance(n, ForStmt))
    assert len(loops) == 1 and len(loops[0].iter_args) == 1
    # the iter arg and loop result name the init's buffer; the op result in the body has its own,
    # so the loop never overwrites a value that is still live
    ia, rv = loops[0].iter_args[0], loops[0].return_vars[0]
    assert ia.type.memref.base is ia.init_value.type.memref.base is rv.type.memref.base
    assert loops[0].body.stmts[-1].values[0].type.memref.base is not ia.type.memref.base


def test_run_passes_dumps_every_pass(tmp_path):
    pm = PassManager.get_strategy(OptimizationStrategy.Default)
    pm.run_passes(tensor_level_program(), dump_ir=True, output_dir=str(tmp_path))
    files = sorted(os.listdir(tmp_path / "passes_dump"))
    assert files[0] == "00_frontend.py"
    assert files[1:] == [f"{i + 1:02d}_after_{n}.py" for i, n in enumerate(DEFAULT_ORDER)]
    text = (tmp_path / "passes_dump" / "11_after_AllocateMemoryAddr.py").read_text()
    assert "pl.tile.alloc(" in text and "addr=16384" in text


def test_capacity_error_names_space_and_sizes():
    x = Var("x", tensor([512, 512]))
    out = Var("out", tensor([512, 512]))
    t, s0 = let("big", op("tile.load", x, [0, 0], [512, 512], [512, 512]))
    st, s1 = let("st", op("tile.store", t, [0, 0], out))
    k = func("k", [x, out], [tensor([512, 512])], [s0, s1, ReturnStmt([st])], FT.InCore, [PD.In, PD.Out])
    with pytest.raises(CapacityError) as ei:
        PassManager.get_strategy().run_passes(Program([k], "Big"))
    msg = str(ei.value) + ei.value.note
    assert "Vec (UB)" in msg and "1048576" in msg and str(184 * 1024) in msg and "'big'" in msg
