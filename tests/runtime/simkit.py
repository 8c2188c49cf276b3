"""Hand-built final IR for simulator tests (no parser or passes needed).

`kernel_add(...)` / `program(...)` build an Orchestration function calling AIV kernels whose
tile vars carry MemRefs bound by `tile.alloc(memory_space=, size=, addr=)`. `OPS` is the
simulator op table for these tests: the real SIM_OPS plus two test-only blocking ops
(`test.put` / `test.take`, a one-value mailbox).
"""

from __future__ import annotations

import numpy as np

from pypto.ir import (AssignStmt, Call, ConstInt, EvalStmt, ForStmt, Function, FunctionType, GlobalVar, IterArg, ScalarType,
                      MemorySpace, MemRef, Program, PtrType, ReturnStmt, SeqStmts, Span, TensorType, TileType, Var,
                      YieldStmt, create_op_call)
from pypto.ir.dtypes import FP32, INDEX
from pypto.ir.enums import ParamDirection
from pypto.ir.ops.registry import OpDef, get_op
from pypto.runtime.sim.blocking import Block, may_block
from pypto.runtime.sim.ops import SIM_OPS

Vec = MemorySpace.Vec


def span(line: int) -> Span:
    return Span("kernels.py", line, 5, line, 20, text="")


def alloc(name: str, size: int, addr: int, space=Vec):
    ptr = Var(name, PtrType())
    call = Call(get_op("tile.alloc"), [], {"memory_space": space, "size": size, "addr": addr}, PtrType())
    return ptr, AssignStmt(ptr, call)


def tile_var(name, shape, base, offset=0, dtype=FP32, space=Vec):
    n = int(np.prod(shape)) * dtype.get_byte()
    return Var(name, TileType(shape, dtype, MemRef(base, offset, n), memory_space=space))


def tensor(name, shape, dtype=FP32):
    return Var(name, TensorType(shape, dtype))


# ---------------------------------------------------------------- test-only blocking ops
class Mailbox:
    """A one-value pipe for blocking tests: `test.put` sets it, `test.take` blocks until set."""
    def __init__(self):
        self.value = None


MAILBOX = Mailbox()


@may_block
def _take(ctx, out, **kw):
    if MAILBOX.value is None:
        return Block(lambda: MAILBOX.value is not None, "test.take", "mailbox empty")
    v, MAILBOX.value = MAILBOX.value, None
    return v


def _put(ctx, out, value, **kw):
    MAILBOX.value = value
    return None


OPS = {**SIM_OPS, "test.take": _take, "test.put": _put}

TAKE = OpDef("test.take")
PUT = OpDef("test.put", args=("value",))


# ---------------------------------------------------------------- builders
def load(var, t, offs, shape, line):
    call = create_op_call("tile.load", [t, list(offs), list(shape), list(shape)], {"target_memory": Vec}, span(line))
    return AssignStmt(var, call.replace(type=var.type), span(line))


def binary(op, var, a, b, line):
    call = create_op_call(f"tile.{op}", [a, b], span=span(line))
    return AssignStmt(var, call.replace(type=var.type), span(line))


def store(var, tile, offs, out, line):
    return AssignStmt(var, create_op_call("tile.store", [tile, list(offs), out], span=span(line)), span(line))


def kernel_binary(name="add_kernel", op="add", rows=64, cols=128, addrs=(0, None, None), func_type=FunctionType.AIV):
    """out = a <op> b on one tile; `addrs` places tiles a, b, c (None: packed after the previous one)."""
    nbytes = rows * cols * 4
    a, b, out = tensor("a", [rows, cols]), tensor("b", [rows, cols]), tensor("out", [rows, cols])
    places = []
    nxt = 0
    for x in addrs:
        x = nxt if x is None else x
        places.append(x)
        nxt = x + nbytes
    ptrs, allocs = zip(*[alloc(f"mem{i}", nbytes, p) for i, p in enumerate(places)])
    ta, tb, tc = (tile_var(n, [rows, cols], p) for n, p in zip(("ta", "tb", "tc"), ptrs))
    res = tensor("res", [rows, cols])
    body = SeqStmts([*allocs, load(ta, a, (0, 0), (rows, cols), 10), load(tb, b, (0, 0), (rows, cols), 11),
                     binary(op, tc, ta, tb, 12), store(res, tc, (0, 0), out, 13), ReturnStmt([res], span(14))])
    return Function(name, [a, b, out], [out.type], body, func_type,
                    param_directions=[ParamDirection.In, ParamDirection.In, ParamDirection.Out])


def orchestration(calls, params, directions, name="main", ret=None):
    """`calls` is a list of (callee, [arg vars], result var or None)."""
    stmts = []
    for i, (callee, args, res) in enumerate(calls):
        call = Call(GlobalVar(callee.name), args, type=callee.return_types[0] if callee.return_types else None,
                    span=span(100 + i))
        stmts.append(AssignStmt(res, call, span(100 + i)) if res is not None else EvalStmt(call, span(100 + i)))
    stmts.append(ReturnStmt([ret] if ret is not None else [], span(199)))
    return Function(name, params, [ret.type] if ret is not None else [], SeqStmts(stmts), FunctionType.Orchestration,
                    param_directions=directions)


def add_program(**kw):
    k = kernel_binary(**kw)
    a, b, out = (tensor(n, [kw.get("rows", 64), kw.get("cols", 128)]) for n in ("a", "b", "out"))
    r = tensor("r", [kw.get("rows", 64), kw.get("cols", 128)])
    main = orchestration([(k, [a, b, out], r)], [a, b, out],
                         [ParamDirection.In, ParamDirection.In, ParamDirection.Out], ret=r)
    return Program([k, main], "AddProg")


def blocked_kernel(rows=256, cols=128, block=64, name="blocked", alternate=False):
    """out[i*block:(i+1)*block] = a + b (or a - b on odd blocks when `alternate`), a loop over row blocks.

    The output tensor is carried through the loop (iter_arg / yield / return_var) as ConvertToSSA
    leaves it, and an INDEX counter is carried beside it.
    """
    from pypto.ir import BinaryExpr, IfStmt
    nbytes = block * cols * 4
    a, b, out = tensor("a", [rows, cols]), tensor("b", [rows, cols]), tensor("out", [rows, cols])
    ptrs, allocs = zip(*[alloc(f"mem{i}", nbytes, i * nbytes) for i in range(3)])
    ta, tb, tc = (tile_var(n, [block, cols], p) for n, p in zip(("ta", "tb", "tc"), ptrs))
    i = Var("i", ScalarType(INDEX))
    o_it = IterArg("o", out.type, out)
    n_it = IterArg("n", ScalarType(INDEX), ConstInt(0, INDEX))
    off = Var("off", ScalarType(INDEX))
    st = tensor("st", [rows, cols])
    n2 = Var("n2", ScalarType(INDEX))
    body = [AssignStmt(off, BinaryExpr("mul", i, ConstInt(block, INDEX)), span(20)),
            load(ta, a, (off, 0), (block, cols), 21), load(tb, b, (off, 0), (block, cols), 22)]
    if alternate:
        tc_then, tc_else = (tile_var(n, [block, cols], ptrs[2]) for n in ("tc_add", "tc_sub"))
        cond = BinaryExpr("eq", BinaryExpr("floormod", i, ConstInt(2, INDEX)), ConstInt(0, INDEX))
        body.append(IfStmt(cond, SeqStmts([binary("add", tc_then, ta, tb, 23), YieldStmt([tc_then])]),
                           SeqStmts([binary("sub", tc_else, ta, tb, 24), YieldStmt([tc_else])]), [tc], span(23)))
    else:
        body.append(binary("add", tc, ta, tb, 23))
    body += [store(st, tc, (off, 0), o_it, 25),
             AssignStmt(n2, BinaryExpr("add", n_it, ConstInt(1, INDEX)), span(26)), YieldStmt([st, n2])]
    o_rv, n_rv = tensor("o_rv", [rows, cols]), Var("n_rv", ScalarType(INDEX))
    loop = ForStmt(i, ConstInt(0, INDEX), ConstInt(rows // block, INDEX), ConstInt(1, INDEX), [o_it, n_it],
                   SeqStmts(body), [o_rv, n_rv], span=span(19))
    fbody = SeqStmts([*allocs, loop, ReturnStmt([o_rv], span(27))])
    return Function(name, [a, b, out], [out.type], fbody, FunctionType.AIV,
                    param_directions=[ParamDirection.In, ParamDirection.In, ParamDirection.Out])


def single_kernel_program(kernel, rows, cols):
    a, b, out = (tensor(n, [rows, cols]) for n in ("a", "b", "out"))
    r = tensor("r", [rows, cols])
    main = orchestration([(kernel, [a, b, out], r)], [a, b, out],
                         [ParamDirection.In, ParamDirection.In, ParamDirection.Out], ret=r)
    return Program([kernel, main], "Prog")
