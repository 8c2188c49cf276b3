"""Forward memory resolution for InferTileMemorySpace: every tile Var gets a concrete memory space.

Type deduction places most tiles, but a written annotation without a space (`pl.Tile[[64], pl.FP32]`)
overrides it, and loop carries / branch phis have no op to deduce from. This walk assigns each
tile Var, in program order, the space its producer puts it in:
  - an op with a fixed output space (matmul → Acc, full → Vec) → that space; a `target_memory`
    op (load, create, move, extract) → its kwarg; an "inherit" op (elementwise, views) → its
    first tile operand's space; any other op → its deduced space, else Vec;
  - `y = x` → x's space; a loop iter-arg / return var → the space its body yields (a carry whose
    initial value lands elsewhere — `acc0 = tile.create(Vec)` feeding `matmul_acc` — takes the
    yielded space: the initial tile.create / tile.load is retargeted when the carry is its only
    reader, otherwise a tile.move before the loop brings it over); an if phi → its then branch
    (an else branch yielding another space gets a tile.move before its yield).

    before:  ta: Tile[[32, 32], FP32] = tile.load(a, ..., target_memory=Mat)
    after:   ta: Tile[[32, 32], FP32, Mem.Mat] = tile.load(a, ..., target_memory=Mat)
"""

from __future__ import annotations

from typing import Optional

from pypto.errors import PyptoError
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, GlobalVar, IterArg, Var
from pypto.ir.function import Function
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, SeqStmts, WhileStmt, YieldStmt, flatten_to_stmts
from pypto.ir.types import TileType, implicit_tile_view
from pypto.ir.visitor import IRVisitor, SplicingMutator

_LOADS_LAND_IN = (MemorySpace.Vec, MemorySpace.Mat)


def _last_yield(body) -> Optional[YieldStmt]:
    stmts = flatten_to_stmts(body)
    return stmts[-1] if stmts and isinstance(stmts[-1], YieldStmt) else None


class _Resolver(IRVisitor):
    """Computes var → MemorySpace for every tile Var (iter-args and return vars included)."""

    def __init__(self):
        self.space: dict = {}
        self.carry_fixes: dict = {}         # IterArg → space its init must be brought to
        self.yield_fixes: dict = {}         # if-branch YieldStmt → {position: space of the phi}

    def of(self, e) -> Optional[MemorySpace]:
        if isinstance(e, Var):
            got = self.space.get(e)
            if got is not None:
                return got
        t = getattr(e, "type", None)
        return t.memory_space if isinstance(t, TileType) else None

    def _op_space(self, call: Call) -> MemorySpace:
        if isinstance(call.op, GlobalVar):
            return self.of(call) or MemorySpace.Vec
        rule = call.op.output_memory
        if isinstance(rule, MemorySpace):
            return rule
        if rule == "target_memory" and isinstance(call.kwargs.get("target_memory"), MemorySpace):
            return call.kwargs["target_memory"]
        tile_args = [a for a in call.args if isinstance(getattr(a, "type", None), TileType)]
        if rule == "inherit" and tile_args:
            return self._inherited_space(call, tile_args[0])
        if self.of(call) is not None:
            return self.of(call)
        try:
            deduced = create_op_call(call.op.name, list(call.args), call.kwargs, call.span, call.attrs or None).type
        except PyptoError:
            deduced = None
        if isinstance(deduced, TileType) and deduced.memory_space is not None:
            return deduced.memory_space
        return (self.of(tile_args[0]) if tile_args else None) or MemorySpace.Vec

    def _inherited_space(self, call: Call, first_tile) -> MemorySpace:
        """The first tile operand's space, unless the op cannot read that space: then insert_operand_moves
        will move the operand into the op's first accepted space, and the result lands there. (A loop
        carry resolved from the unmoved space would disagree with the value its body finally yields.)"""
        space = self.of(first_tile) or MemorySpace.Vec
        index = next(i for i, a in enumerate(call.args) if a is first_tile)
        allowed = call.op.input_memory.get(index)
        return allowed[0] if allowed and space not in allowed else space

    def visit_assign_stmt(self, s):
        self.visit(s.value)
        if not isinstance(s.var.type, TileType):
            return
        if isinstance(s.value, Call):
            self.space[s.var] = self._op_space(s.value)
        elif isinstance(s.value, Var):
            self.space[s.var] = self.of(s.value) or MemorySpace.Vec
        else:                                 # e.g. an element of a tuple result: its annotation, else Vec
            self.space[s.var] = self.of(s.var) or MemorySpace.Vec

    def _loop(self, s, carries):
        tiles = [ia for ia in s.iter_args if isinstance(ia.type, TileType)]
        for ia in tiles:
            self.space[ia] = self.of(ia.init_value) or MemorySpace.Vec
        for _round in range(len(tiles) + 1):       # each round can only settle more carries
            carries()
            y = _last_yield(s.body)
            changed = False
            for ia, value in zip(s.iter_args, y.values if y else ()):
                got = self.of(value)
                if ia in self.space and got is not None and got is not self.space[ia]:
                    self.space[ia] = got
                    changed = True
            if not changed:
                break
        for ia, rv in zip(s.iter_args, s.return_vars):
            if ia in self.space:
                self.space[rv] = self.space[ia]
                if self.of(ia.init_value) is not self.space[ia]:
                    self.carry_fixes[ia] = self.space[ia]

    def visit_for_stmt(self, s):
        for e in (s.start, s.stop, s.step):
            self.visit(e)
        self._loop(s, lambda: self.visit(s.body))

    def visit_while_stmt(self, s):
        self._loop(s, lambda: (self.visit(s.condition), self.visit(s.body)))

    def visit_if_stmt(self, s):
        self.visit(s.condition)
        self.visit(s.then_body)
        self.visit(s.else_body)
        branches = [y for y in (_last_yield(s.then_body), _last_yield(s.else_body)) if y is not None]
        for i, rv in enumerate(s.return_vars):
            if isinstance(rv.type, TileType):
                got = next((self.of(y.values[i]) for y in branches if self.of(y.values[i]) is not None), None)
                self.space[rv] = got or self.of(rv) or MemorySpace.Vec
                for y in branches:            # a branch yielding another space moves its value over
                    if self.of(y.values[i]) not in (None, self.space[rv]):
                        self.yield_fixes.setdefault(y, {})[i] = self.space[rv]


def _retype(t: TileType, space: MemorySpace) -> TileType:
    """The tile in `space`: its data metadata (valid_shape, pad, ...) kept, its layout the space's own."""
    if t.memory_space is space:
        return t
    native = implicit_tile_view(space)
    view = t.effective_view.replace(blayout=native.blayout, slayout=native.slayout, fractal=native.fractal)
    return t.replace(memory_space=space, tile_view=view)


class _Apply(SplicingMutator):
    """Rewrites every tile Var with its resolved space; brings mismatched loop inits over."""

    def __init__(self, space: dict, carry_fixes: dict, yield_fixes: dict):
        self.space = space
        self.carry_fixes = carry_fixes
        self.yield_fixes = yield_fixes
        self.vars: dict = {}

    def var(self, v: Var) -> Var:
        got = self.vars.get(v)
        if got is not None:
            return got
        space = self.space.get(v)
        new_type = _retype(v.type, space) if space is not None and isinstance(v.type, TileType) else v.type
        if isinstance(v, IterArg):
            init = self.mutate(v.init_value)
            new = v if new_type is v.type and init is v.init_value else IterArg(v.name_hint, new_type, init, v.span)
        else:
            new = v if new_type is v.type else Var(v.name_hint, new_type, v.span)
        self.vars[v] = new
        return new

    def mutate_var(self, v):
        return self.var(v)

    def mutate_assign_stmt(self, s):
        var = self.var(s.var)
        value = self.mutate(s.value)
        if isinstance(value, Call) and isinstance(var.type, TileType) and isinstance(value.type, TileType):
            value = value.replace(type=_retype(value.type, var.type.memory_space))
        if var is s.var and value is s.value:
            return s
        return AssignStmt(var, value, s.span)

    def _bring_inits(self, s):
        """tile.moves (before the loop) for carried inits that land elsewhere than the carry."""
        moves, renamed = [], {}
        for ia in s.iter_args:
            target = self.carry_fixes.get(ia)
            if target is None:
                continue
            init = self.mutate(ia.init_value)
            move = create_op_call("tile.move", [init], {"target_memory": target}, s.span)
            moved = Var(f"{getattr(init, 'name_hint', 'init')}_{target.name.lower()}", move.type, s.span)
            moves.append(AssignStmt(moved, move, s.span))
            new_ia = self.var(ia)
            renamed[ia] = IterArg(new_ia.name_hint, new_ia.type, moved, new_ia.span)
        self.vars.update(renamed)
        return moves

    def _loop(self, s):
        moves = self._bring_inits(s)
        new = self.mutate_children(s)
        return SeqStmts([*moves, new], s.span) if moves else new

    def mutate_for_stmt(self, s):
        return self._loop(s)

    def mutate_while_stmt(self, s):
        return self._loop(s)

    def mutate_yield_stmt(self, s):
        fixes = self.yield_fixes.get(s)
        new = self.mutate_children(s)
        if not fixes:
            return new
        values, moves = list(new.values), []
        for i, target in fixes.items():
            move = create_op_call("tile.move", [values[i]], {"target_memory": target}, s.span)
            moved = Var(f"{getattr(values[i], 'name_hint', 'value')}_{target.name.lower()}", move.type, s.span)
            moves.append(AssignStmt(moved, move, s.span))
            values[i] = moved
        return SeqStmts([*moves, new.replace(values=tuple(values))], s.span)


def _retarget_inits(func: Function, carry_fixes: dict) -> tuple:
    """Retarget a tile.create / tile.load that only initializes a carry to the carry's space;
    returns (function, the carry fixes still needing a move)."""
    producers = {}

    class _Find(IRVisitor):
        def visit_assign_stmt(self, s):
            v = s.value
            if isinstance(v, Call) and not isinstance(v.op, GlobalVar) and v.op.name in ("tile.create", "tile.load"):
                producers[s.var] = s

    _Find().visit(func.body)
    uses: dict = {}

    seen_carries: set = set()

    class _Uses(IRVisitor):
        def visit_var(self, v):
            uses[v] = uses.get(v, 0) + 1

        def visit_iter_arg(self, v):          # its init is read once, at the loop header
            if v not in seen_carries:
                seen_carries.add(v)
                self.visit(v.init_value)

        def visit_assign_stmt(self, s):
            self.visit(s.value)

    _Uses().visit(func.body)
    retarget, left = {}, {}
    for ia, space in carry_fixes.items():
        init = ia.init_value
        stmt = producers.get(init)
        ok = stmt is not None and uses.get(init) == 1 and (stmt.value.op.name == "tile.create" or space in _LOADS_LAND_IN)
        if ok and not stmt.value.kwargs.get("transpose", False):
            retarget[init] = space
        else:
            left[ia] = space
    if not retarget:
        return func, left

    class _Rewrite(SplicingMutator):
        def mutate_assign_stmt(self, s):
            if s.var in retarget:
                c = s.value
                new = create_op_call(c.op.name, list(c.args), {**c.kwargs, "target_memory": retarget[s.var]},
                                     c.span, c.attrs or None)
                return AssignStmt(s.var, new, s.span)
            return s

    return func.replace(body=_Rewrite().mutate(func.body)), left


def resolve_tile_memory(func: Function) -> Function:
    """Give every tile Var of `func` its memory space (see module doc)."""
    r = _Resolver()
    r.visit(func.body)
    if r.carry_fixes:
        func, _ = _retarget_inits(func, r.carry_fixes)
        r = _Resolver()
        r.visit(func.body)
    body = _Apply(r.space, r.carry_fixes, r.yield_fixes).mutate(func.body)
    return func if body is func.body else func.replace(body=body)
