"""GM-mediated cube → vector dependencies: fence handshakes and their three conditions; tfree placement."""

import pypto.language as pl
from pypto.ir.stmt import ForStmt, flatten_to_stmts
from pypto.passes.context import PassContext
from pypto.pypto_core import passes


def _expand(program, platform="a2a3"):
    with PassContext(PassContext.current().instruments, platform=platform):
        return passes.expand_mixed_kernel()(passes.convert_to_ssa()(program))


def _ops(body) -> list:
    out = []
    for s in flatten_to_stmts(body):
        c = getattr(s, "value", None) or getattr(s, "expr", None)
        if c is not None and hasattr(c, "op"):
            out.append(c.op.name)
        elif isinstance(s, ForStmt):
            out.append(("for", _ops(s.body)))
    return out


@pl.program
class Straight:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP16], scratch: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        m: pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat] = pl.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        left: pl.Tile[[16, 16], pl.FP16, pl.Mem.Left] = pl.move(m, target_memory=pl.Mem.Left)
        right: pl.Tile[[16, 16], pl.FP16, pl.Mem.Right] = pl.move(m, target_memory=pl.Mem.Right)
        acc: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.matmul(left, right)
        scratch = pl.store(acc, [0, 0], scratch)
        for i in pl.range(2):
            v: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.load(scratch, [0, 0], [16, 16])
            out = pl.store(pl.add(v, v), [0, 0], out)
        return out


def test_cube_store_then_vector_load_gets_one_fence_before_the_consumer_loop():
    after = _expand(Straight)
    aic, aiv = after["k_aic"], after["k_aiv"]
    assert _ops(aic.body)[-2:] == ["tile.store", "tile.tpush_to_aiv"]
    ops = _ops(aiv.body)
    pop = ops.index("tile.tpop_from_aic")
    assert ops[pop + 1] == "system.tfree_to_aic" and ops[pop + 2][0] == "for"
    assert ops.count("tile.tpop_from_aic") == 1 and "tile.tpop_from_aic" not in ops[pop + 2][1]


@pl.program
class TwoStores:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP16], scratch: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        m: pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat] = pl.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        left: pl.Tile[[16, 16], pl.FP16, pl.Mem.Left] = pl.move(m, target_memory=pl.Mem.Left)
        right: pl.Tile[[16, 16], pl.FP16, pl.Mem.Right] = pl.move(m, target_memory=pl.Mem.Right)
        acc: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.matmul(left, right)
        scratch = pl.store(acc, [0, 0], scratch)
        scratch = pl.store(acc, [0, 0], scratch)
        v: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.load(scratch, [0, 0], [16, 16])
        out = pl.store(v, [0, 0], out)
        return out


def test_no_fence_when_the_tensor_has_two_cube_stores():
    after = _expand(TwoStores)
    assert "tile.tpop_from_aic" not in _ops(after["k_aiv"].body)
    assert "tile.tpush_to_aiv" not in _ops(after["k_aic"].body)


@pl.program
class VectorToCubeGm:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP16], scratch: pl.InOut[pl.Tensor[[16, 16], pl.FP16]],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        x: pl.Tile[[16, 16], pl.FP16, pl.Mem.Vec] = pl.load(a, [0, 0], [16, 16])
        scratch = pl.store(x, [0, 0], scratch)
        m: pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat] = pl.load(scratch, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        left: pl.Tile[[16, 16], pl.FP16, pl.Mem.Left] = pl.move(m, target_memory=pl.Mem.Left)
        right: pl.Tile[[16, 16], pl.FP16, pl.Mem.Right] = pl.move(m, target_memory=pl.Mem.Right)
        acc: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.matmul(left, right)
        out = pl.store(acc, [0, 0], out)
        return out


def test_vector_to_cube_gm_exchange_stays_unfenced():
    after = _expand(VectorToCubeGm)
    ops = _ops(after["k_aic"].body) + _ops(after["k_aiv"].body)
    assert not [o for o in ops if isinstance(o, str) and ("tpush" in o or "tpop" in o)]


@pl.program
class IfYield:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP16], n: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        m: pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat] = pl.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        left: pl.Tile[[16, 16], pl.FP16, pl.Mem.Left] = pl.move(m, target_memory=pl.Mem.Left)
        right: pl.Tile[[16, 16], pl.FP16, pl.Mem.Right] = pl.move(m, target_memory=pl.Mem.Right)
        acc: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.matmul(left, right)
        if n > 0:
            v: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.move(acc, target_memory=pl.Mem.Vec)
            r = pl.yield_(v)
        else:
            w: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.move(acc, target_memory=pl.Mem.Vec)
            r = pl.yield_(w)
        out = pl.store(r, [0, 0], out)
        return out


def test_tfree_goes_before_the_yield_of_each_branch():
    aiv = _expand(IfYield)["k_aiv"]
    branch = [s for s in flatten_to_stmts(aiv.body) if type(s).__name__ == "IfStmt"][0]
    for body in (branch.then_body, branch.else_body):
        assert [type(s).__name__ for s in flatten_to_stmts(body)] == ["AssignStmt", "EvalStmt", "YieldStmt"]
        assert _ops(body) == ["tile.tpop_from_aic", "system.tfree_to_aic"]
