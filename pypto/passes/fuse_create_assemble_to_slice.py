"""FuseCreateAssembleToSlice: a kernel output staged in a buffer only to be assembled into a larger
tensor is written by the kernel straight into that tensor's window; the assemble goes.

Requires: SplitIncoreOrch / Produces: — / Invalidates: —
Reference: pass doc 36 (compiler-and-runtime.md §2, dump 37), after the memory passes. Seed 003
names OptimizeOrchTensors pattern 2 as the step before it: pattern 2 turns the staging
`tensor.create` into a `tensor.slice` of the parent (the kernel Out parameter takes the parent's
strides) but keeps the assemble, which is then a copy of the window onto itself.

In an Orchestration / Opaque function, for a kernel call `r = self.k(..., buf, ...)` whose result
`r` is `buf` written by the kernel (its return value traces back to that parameter through
tile.store / loop carries / wrapper forwarding), followed in the same block by
`t2 = tensor.assemble(t, r, offsets)`:
  - `buf = tensor.slice(t, shape, offsets)` (pattern 2's form, same `t`, same offsets): the
    assemble copies the window onto itself: it is dropped and `t2` becomes `t`;
  - `buf = tensor.create(shape)`, read by nothing but this call, `r` read by nothing but the
    assemble, nothing between the call and the assemble reading `t` or calling a kernel, and the
    kernel parameter's layout is the window's (its strides are the parent's, or the window is
    contiguous in the parent): the create becomes that slice, placed right before the call (with
    the parent's DDR MemRef at the window's offset), the assemble is dropped, `t2` becomes `t`.
A call with several results (TupleGetItem) is left as it is.

    before:  o = tensor.slice(c, [32, 32], [mb, nb]); r = self.k(a, o); c2 = tensor.assemble(c, r, [mb, nb]); yield c2
    after:   o = tensor.slice(c, [32, 32], [mb, nb]); r = self.k(a, o); yield c
    (and o = tensor.create([4, 128]) assembled at [i, 0] into a [16, 128] c → o = tensor.slice(c, [4, 128], [i, 0]))
"""

from __future__ import annotations

from typing import Optional

from pypto.ir.enums import FunctionType
from pypto.ir.equality import structural_equal
from pypto.ir.expr import Call, ConstInt, GlobalVar, MakeTuple, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, ForStmt, ReturnStmt, WhileStmt
from pypto.ir.types import MemRef, TensorType
from pypto.ir.visitor import IRMutator, collect, collect_statements, substitute
from pypto.ir.walks import statements
from pypto.passes.analysis import add_index, body_list, used_vars
from pypto.passes.memory.ddr_memrefs import slice_byte_offset
from pypto.passes.base import Pass
from pypto.passes.optimize_orch_tensors.orch_tensor_strides import trailing_strides
from pypto.passes.properties import IRProperty, PassProperties

_CALLERS = (FunctionType.Orchestration, FunctionType.Opaque)


def _op_name(e) -> Optional[str]:
    return e.op.name if isinstance(e, Call) and not isinstance(e.op, GlobalVar) else None


def written_param(program: Program, func: Function, depth: int = 0) -> Optional[int]:
    """Index of the parameter whose buffer `func`'s single return value is (None when not provable)."""
    stmts = body_list(func.body)
    if depth > 8 or not stmts or not isinstance(stmts[-1], ReturnStmt) or len(stmts[-1].values) != 1:
        return None
    defs: dict = {}
    for s in collect_statements(func.body, lambda n: isinstance(n, (AssignStmt, ForStmt, WhileStmt))):
        if isinstance(s, AssignStmt):
            defs[s.var] = s.value
        else:
            defs.update({rv: ia.init_value for ia, rv in zip(s.iter_args, s.return_vars)})
    params = list(func.params)
    v = stmts[-1].values[0]
    for _ in range(64):
        if v in params:
            return params.index(v)
        value = defs.get(v)
        if isinstance(value, Var):
            v = value
        elif _op_name(value) == "tile.store":
            v = value.args[2]
        elif isinstance(value, Call) and isinstance(value.op, GlobalVar) and value.op.name in program.functions:
            k = written_param(program, program.functions[value.op.name], depth + 1)
            if k is None or k >= len(value.args):
                return None
            v = value.args[k]
        else:
            return None
    return None


def _contiguous_strides(t: TensorType) -> Optional[tuple]:
    return trailing_strides(t, len(t.shape))


def _layout_fits(param: TensorType, parent: TensorType) -> bool:
    """The kernel addresses `param` the way a window of `parent` is laid out."""
    window = trailing_strides(parent, len(param.shape))
    if window is None:
        return False
    declared = param.tensor_view.stride if param.tensor_view is not None and param.tensor_view.stride else None
    if declared is not None:
        return all(isinstance(s, ConstInt) and s.value == w for s, w in zip(declared, window))
    return _contiguous_strides(param) == window


def _is_kernel_call(n) -> bool:
    return isinstance(n, Call) and isinstance(n.op, GlobalVar)


class _Fuse(IRMutator):
    def __init__(self, program: Program, func: Function):
        self.program = program
        self.defs = {s.var: s for s in collect_statements(func.body, lambda n: isinstance(n, AssignStmt))}
        self.reads: dict = {}
        for v in used_vars(func.body):
            self.reads[v] = self.reads.get(v, 0) + 1
        self.replaced: dict = {}       # dropped assemble result → the parent it wrote

    def mutate_seq_stmts(self, seq):
        seq = self.mutate_children(seq)
        stmts = list(seq.stmts)
        changed = False
        i = 0
        while i < len(stmts):
            fused = self._fuse_at(stmts, i)
            if fused is not None:
                stmts, i = fused
                changed = True
            i += 1
        return seq.replace(stmts=tuple(stmts)) if changed else seq

    def _fuse_at(self, stmts: list, at: int):
        call_stmt = stmts[at]
        if not isinstance(call_stmt, AssignStmt) or not _is_kernel_call(call_stmt.value):
            return None
        call, result = call_stmt.value, call_stmt.var
        callee = self.program.functions.get(call.op.name)
        if callee is None or not isinstance(result.type, TensorType):
            return None
        j = written_param(self.program, callee)
        if j is None or j >= len(call.args) or not isinstance(call.args[j], Var):
            return None
        buf = call.args[j]
        k = next((n for n in range(at + 1, len(stmts)) if isinstance(stmts[n], AssignStmt)
                  and _op_name(stmts[n].value) == "tensor.assemble" and stmts[n].value.args[1] is result), None)
        if k is None:
            return None
        assemble = stmts[k]
        parent, offsets = assemble.value.args[0], assemble.value.args[2]
        staging = self.defs.get(buf)
        if staging is None or not structural_equal(list(buf.type.shape), list(result.type.shape)):
            return None
        if _op_name(staging.value) == "tensor.slice":
            s = staging.value
            if s.args[0] is not parent or not structural_equal(s.args[2], offsets) or len(s.args) > 3:
                return None
            return self._drop(stmts, k, assemble, parent), at
        if _op_name(staging.value) != "tensor.create" or staging not in stmts[:at]:
            return None
        if self.reads.get(buf, 0) != 1 or self.reads.get(result, 0) != 1:
            return None
        between = stmts[at + 1:k]
        bound = {d for s in between for d in collect_statements(s, lambda n: isinstance(n, AssignStmt))}
        bound_vars = {s.var for s in bound}
        if any(v in bound_vars for v in used_vars(parent) + used_vars(offsets)):
            return None
        if any(parent in used_vars(s) or collect(s, _is_kernel_call) for s in between):
            return None
        if not isinstance(parent.type, TensorType) or not _layout_fits(callee.params[j].type, parent.type):
            return None
        view = self._slice(parent, buf, offsets, staging.span)
        stmts = self._drop(stmts, k, assemble, parent)
        at_create = stmts.index(staging)
        del stmts[at_create]
        at_call = stmts.index(call_stmt)
        stmts.insert(at_call, view)
        return stmts, at_call + 1

    def _slice(self, parent: Var, buf: Var, offsets, span) -> AssignStmt:
        """`buf = tensor.slice(parent, shape, offsets)`, typed with the parent's DDR MemRef when it has one."""
        value = create_op_call("tensor.slice", [parent, list(buf.type.shape), offsets], {}, span)
        t = value.type
        ref = parent.type.memref
        if ref is not None and isinstance(offsets, MakeTuple):
            extra = slice_byte_offset(parent.type, offsets.elements)
            t = t.replace(memref=MemRef(ref.base, add_index(ref.byte_offset, extra), t.nbytes() or ref.size))
        new = Var(buf.name_hint, t, buf.span)
        self.replaced[buf] = new
        return AssignStmt(new, value.replace(type=t), span)

    def _drop(self, stmts: list, k: int, assemble: AssignStmt, parent: Var) -> list:
        self.replaced[assemble.var] = parent
        return stmts[:k] + stmts[k + 1:]


def _fuse_function(program: Program, func: Function) -> Function:
    if not any(isinstance(s, AssignStmt) and _op_name(s.value) == "tensor.assemble" for s in statements(func.body)):
        return func                       # every fusion drops a tensor.assemble: none here, nothing to fuse
    fuse = _Fuse(program, func)
    body = fuse.mutate(func.body)
    if not fuse.replaced:
        return func
    mapping = dict(fuse.replaced)
    for _ in range(len(mapping)):      # a parent may itself be a dropped result of an inner fusion
        mapping = {a: mapping.get(b, b) for a, b in mapping.items()}
    return func.replace(body=substitute(body, mapping))


def _run(program: Program) -> Program:
    new = [(_fuse_function(program, f) if f.func_type in _CALLERS else f) for f in program.functions.values()]
    if all(a is b for a, b in zip(new, program.functions.values())):
        return program
    return program.with_functions(new)


def fuse_create_assemble_to_slice() -> Pass:
    return Pass("FuseCreateAssembleToSlice", _run,
                PassProperties(required={IRProperty.SplitIncoreOrch}))
