"""Final-IR function → Python source of one function the simulator runs (once per compile).

Each IR statement becomes one or a few lines of plain Python: op calls go through SIM_OPS on
whole tiles, loops are Python loops carrying their iter_args in locals, ifs are ifs. A kernel
with no op that can block is an ordinary function (it runs straight through); the host
orchestrator and kernels with blocking ops are generators that `yield` a Block to the
scheduler. The source is kept; with an output dir it is written there and compiled from that
file (`load_source`), so users read the code that runs and can set breakpoints in it; tracebacks point into it and `lines` maps each generated
line back to the op and the user's source span.

    def add_kernel(_sim_ctx, a, b, out):
        _sim_s0, _sim_s1, _sim_s2 = _sim_ctx.views(_sim_F)
        ta = _op0(_sim_ctx, _sim_s0, a, (0, 0), (64, 64), (64, 64), **_kw0)   # k.py:7
"""

from __future__ import annotations

import itertools
import linecache
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from pypto.errors import SimulationError, UnsupportedError
from pypto.ir import dtypes as D
from pypto.ir.enums import FunctionType, PadValue
from pypto.ir.expr import (BinaryExpr, Call, ConstBool, ConstFloat, ConstInt, Expr, GlobalVar, MakeTuple, TupleGetItem,
                           UnaryExpr, Var)
from pypto.ir.function import Function, Program
from pypto.ir.printer import VarNamer
from pypto.ir.stmt import (AssignStmt, BreakStmt, ContinueStmt, EvalStmt, ForStmt, IfStmt, ReturnStmt, ScopeStmt,
                           SeqStmts, Stmt, WhileStmt, YieldStmt)
from pypto.ir.types import TensorType, TileType, static_dims
from pypto.ir.visitor import collect
from pypto.runtime.sim import fastpath, fused_blocks, scalar_division
from pypto.runtime.sim.blocking import Block, is_blocking_op
from pypto.runtime.sim.layout import TileSlot, find_allocs, static_placement, tile_valid
from pypto.runtime.sim.returns import CallSite, make_call_site
from pypto.runtime.sim.watchdog import tick as watchdog_tick

HOST_TYPES = (FunctionType.Orchestration, FunctionType.Opaque)
# Orchestration ops that only describe or allocate GM buffers: the host need not wait for tasks.
NO_DATA_OPS = frozenset({"tensor.create", "tensor.slice", "tensor.view", "tensor.reshape", "tensor.dim",
                         "tensor.transpose_view", "system.task_invalid", "tile.alloc", "system.task_options",
                         "system.task_id", "system.task_dummy", "system.task_id_array", "system.task_id_array_get",
                         "system.task_id_array_set", "system.manual_scope_begin", "system.manual_scope_end",
                         "pld.get_comm_ctx"})          # a window's comm context is metadata, not its data
_PY_BINARY = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "floormod": "%", "truediv": "/", "pow": "**",
              "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "and": "and", "or": "or",
              "bitand": "&", "bitor": "|", "bitxor": "^", "xor": "^", "shl": "<<", "shr": ">>"}


_DIVISIONS = frozenset({"truediv", "floordiv", "floormod"})
_KEYS = itertools.count()


@dataclass(eq=False)
class FunctionCode:
    """One IR function turned into Python: its source, the callable and the line → op map."""
    name: str
    func: Function
    source: str
    filename: str
    fn: object
    is_generator: bool
    lines: dict                       # generated line → (op / statement description, user span)
    slots: list                       # TileSlots bound once per core
    sites: list = field(default_factory=list)
    key: int = field(default_factory=lambda: next(_KEYS))
    loop_filled: frozenset = frozenset()   # params only ever stored to by whole fused loops (fused_blocks)

    @property
    def kind(self) -> FunctionType:
        return self.func.func_type


def _cast_helper(dtype):
    """Scalar conversion to `dtype`, as the scalar unit does it (ints truncate toward zero)."""
    if dtype is D.BOOL:
        return bool
    if dtype.is_int():
        return int
    if dtype is D.FP64:
        return float
    np_t = dtype.to_numpy().type
    return lambda x: float(np_t(x))


# Names the generated code may not give a Var: builtins it calls, and its own helper prefixes.
_SIM_RESERVED = frozenset({"self", "range", "min", "max", "abs", "int", "float", "bool", "len", "None", "True",
                           "False"})
_SIM_PREFIXES = ("_sim", "_op", "_kw")


class SourceGenerator:
    """One function's simulator source; pypto.runtime.sim.host_level subclasses it for HOST orchestrators."""
    RESERVED = _SIM_RESERVED               # names a Var may not take in the generated code
    def __init__(self, func: Function, program: Program, ops: dict, needs_yield, filename: str,
                 fast_paths: bool = True):
        self.fast_paths = fast_paths
        self.func = func
        self.program = program
        self.ops = ops
        self.needs_yield = needs_yield
        self.filename = filename
        self.is_host = func.func_type in HOST_TYPES
        # Group and Spmd functions are launch wrappers: their calls start member kernels
        self.is_group = func.func_type in (FunctionType.Group, FunctionType.Spmd)
        self.generator = needs_yield(func.name)
        self.namer = VarNamer(self.RESERVED, _SIM_PREFIXES)
        self.out: list = []
        self.lines: dict = {}
        self.g: dict = {"_Block": Block, "_sim_F": None}
        self.slots: list = []
        self.slot_of: dict = {}
        self.sites: list = []
        self.yield_targets: list = []
        self.allocs = find_allocs(func)
        self.has_yield = False
        self._k = 0
        self.fused_sites: dict = {}     # fused_blocks.prepare: the load / load / op / store groups run as one call
        self.fused_settle = None

    # ------------------------------------------------------------------ helpers
    def emit(self, ind: int, text: str, what: str = "", span=None) -> None:
        self.out.append("    " * ind + text)
        if what or span is not None:
            self.lines[len(self.out)] = (what, span)

    def const(self, value, prefix: str) -> str:
        self._k += 1
        name = f"_{prefix}{self._k}"
        self.g[name] = value
        return name

    def named_const(self, value, name: str) -> str:
        """A global the reader can understand by its name (`_sim_fp32`, `_sim_task_mm`); unique per function."""
        base, k = "_sim_" + re.sub(r"\W", "_", name), 1
        name = base
        while name in self.g and self.g[name] is not value:
            k += 1
            name = f"{base}_{k}"
        self.g[name] = value
        return name

    def dtype_const(self, dtype) -> str:
        return self.named_const(dtype.to_numpy(), dtype.name.lower())

    # ------------------------------------------------------------------ expressions
    def expr(self, e: Expr) -> str:
        if isinstance(e, Var):
            return self.namer.name(e)
        if isinstance(e, ConstBool):
            return "True" if e.value else "False"
        if isinstance(e, ConstInt):
            return repr(e.value)
        if isinstance(e, ConstFloat):
            return repr(e.value) if math.isfinite(e.value) else f"float({str(e.value)!r})"
        if isinstance(e, BinaryExpr):
            lhs, rhs = self.expr(e.lhs), self.expr(e.rhs)
            if e.op in ("min", "max"):
                return f"{e.op}({lhs}, {rhs})"
            if e.op in _DIVISIONS and not (isinstance(e.rhs, (ConstInt, ConstFloat)) and e.rhs.value != 0):
                dtype = getattr(e.type, "dtype", None)       # a divisor that may be 0: the device's answer
                helper = scalar_division.HELPERS[(e.op, dtype is not None and dtype.is_float())]
                return f"{self.named_const(helper, helper.__name__)}({lhs}, {rhs})"
            return f"({lhs} {_PY_BINARY[e.op]} {rhs})"
        if isinstance(e, UnaryExpr):
            x = self.expr(e.operand)
            if e.op == "cast":
                return f"{self.const(_cast_helper(e.dtype), 'sim_cast')}({x})"
            if e.op == "abs":
                return f"abs({x})"
            return {"neg": f"(-{x})", "not": f"(not {x})", "bitnot": f"(~{x})"}[e.op]
        if isinstance(e, MakeTuple):
            return self.tuple_text([self.expr(x) for x in e.elements])
        if isinstance(e, TupleGetItem):
            return f"{self.expr(e.tuple)}[{e.index}]"
        if isinstance(e, Call) and not e.is_function_call():
            return self.op_expr(e, "None")
        raise UnsupportedError(f"the simulator cannot evaluate a {type(e).__name__} expression here",
                               e.span, hint="final IR is three-address form (FlattenCallExpr)")

    def op_fn(self, call: Call) -> tuple:
        name = call.op.name
        fn = self.ops.get(name)
        if fn is None and self.is_host and name.startswith("tensor."):      # compute left outside `pl.at`
            raise UnsupportedError(f"{name} in '{self.func.name}', which runs on the host "
                                   f"({self.func.func_type.name} function): tensor compute runs on a core",
                                   call.span, hint="put it inside `with pl.at(level=pl.Level.CORE_GROUP):`, or "
                                                   "call an InCore function that computes it")
        if fn is None:
            raise UnsupportedError(f"the simulator has no semantics for op '{name}'", call.span,
                                   hint="add it to pypto/runtime/sim/ops (SIM_OPS)")
        gname = "_op_" + re.sub(r"\W", "_", name)
        self.g[gname] = fn
        return fn, gname

    def op_expr(self, call: Call, out: str, result_type=None) -> str:
        _fn, fname = self.op_fn(call)
        args = "".join(", " + self.expr(a) for a in call.args)
        kwargs = dict(call.kwargs)
        view = getattr(result_type, "tile_view", None)
        if view is not None and view.pad is not PadValue.null and "pad" not in kwargs:
            kwargs["pad"] = view.pad           # the destination's pad value (loads fill outside the valid region)
        kw = f", **{self.const(kwargs, 'kw')}" if kwargs else ""
        return f"{fname}(_sim_ctx, {out}{args}{kw})"

    @staticmethod
    def tuple_text(items: list) -> str:
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"

    # ------------------------------------------------------------------ tile placement
    def out_for(self, var: Optional[Var], call: Call) -> str:
        """The destination TileValue expression for an op's result var."""
        t = var.type if var is not None else call.type
        if not isinstance(t, TileType) or t.memref is None:
            return "None"
        shape = static_dims(t.shape)
        if shape is None:
            raise SimulationError(f"tile '{var.name_hint}' has a dynamic physical shape; the simulator needs the "
                                  "static shapes Simplify produces", var.span)
        placed = static_placement(var, self.allocs)
        np_dtype = t.dtype.to_numpy()
        if placed is not None:
            if var in self.slot_of:
                return self.slot_of[var]
            space, addr = placed
            name = f"_sim_s{len(self.slots)}"
            self.slots.append(TileSlot(var.name_hint, space, addr, shape, np_dtype, tile_valid(t), var.span))
            self.slot_of[var] = name
            return name
        alloc = self.allocs[t.memref.base]
        if alloc.addr is None or alloc.addr < 0:
            raise SimulationError(f"tile '{var.name_hint}': its tile.alloc has no assigned constant address",
                                  var.span, hint="AllocateMemoryAddr must run before the simulator")
        desc = self.const(TileSlot(var.name_hint, t.memory_space or alloc.space, alloc.addr, shape, np_dtype,
                                   tile_valid(t), var.span), "sim_ts")
        return f"_sim_ctx.bind_tile({desc}, {self.expr(t.memref.byte_offset)})"

    # ------------------------------------------------------------------ statements
    def body(self, s: Optional[Stmt], ind: int) -> None:
        start = len(self.out)
        if s is not None:
            self.stmt(s, ind)
        if len(self.out) == start:
            self.emit(ind, "pass")

    def stmt(self, s: Stmt, ind: int) -> None:
        if isinstance(s, SeqStmts):
            stmts, k = s.stmts, 0
            while k < len(stmts):      # (a load / load / op / store group may run as one numpy call: fused_blocks)
                done = fused_blocks.emit(self, stmts, k, ind) if self.fused_sites else 0
                if not done:
                    self.stmt(stmts[k], ind)
                k += done or 1
        elif isinstance(s, AssignStmt):
            self.assign(self.namer.name(s.var), s.var, s.value, ind, s.span)
        elif isinstance(s, EvalStmt):
            self.assign(None, None, s.expr, ind, s.span)
        elif isinstance(s, ForStmt):
            if self.fused_sites and fused_blocks.emit_loop(self, s, ind):    # the whole loop as one numpy call
                return
            self.carry_init(s.iter_args, ind)
            lv = self.namer.name(s.loop_var)
            self.emit(ind, f"for {lv} in {self.loop_range(s)}:", "for", s.span)
            self.yield_targets.append([self.namer.name(a) for a in s.iter_args])
            self.watchdog_tick(s, ind + 1)
            self.body(s.body, ind + 1)
            self.yield_targets.pop()
            self.carry_out(s.return_vars, s.iter_args, ind)
        elif isinstance(s, WhileStmt):
            self.carry_init(s.iter_args, ind)
            self.emit(ind, f"while {self.expr(s.condition)}:", "while", s.span)
            self.yield_targets.append([self.namer.name(a) for a in s.iter_args])
            self.watchdog_tick(s, ind + 1)
            self.body(s.body, ind + 1)
            self.yield_targets.pop()
            self.carry_out(s.return_vars, s.iter_args, ind)
        elif isinstance(s, IfStmt):
            self.emit(ind, f"if {self.expr(s.condition)}:", "if", s.span)
            self.yield_targets.append([self.namer.name(v) for v in s.return_vars])
            self.body(s.then_body, ind + 1)
            if s.else_body is not None:
                self.emit(ind, "else:")
                self.body(s.else_body, ind + 1)
            self.yield_targets.pop()
        elif isinstance(s, YieldStmt):
            targets = self.yield_targets[-1] if self.yield_targets else []
            if len(targets) != len(s.values):
                raise SimulationError(f"yield of {len(s.values)} value(s) where {len(targets)} are carried", s.span)
            if targets:
                self.emit(ind, self.parallel_assign(targets, [self.expr(v) for v in s.values]), "yield", s.span)
        elif isinstance(s, ReturnStmt):
            if self.fused_settle:
                self.emit(ind, self.fused_settle)
            vals = [self.expr(v) for v in s.values]
            text = "return" if not vals else f"return {vals[0]}" if len(vals) == 1 else f"return ({', '.join(vals)})"
            self.emit(ind, text, "return", s.span)
        elif isinstance(s, BreakStmt):
            self.emit(ind, "break")
        elif isinstance(s, ContinueStmt):
            self.emit(ind, "continue")
        elif isinstance(s, ScopeStmt):
            raise UnsupportedError(f"{type(s).__name__} reached the simulator", s.span,
                                   hint="the simulator runs final IR; the outlining passes remove scopes")
        else:
            raise UnsupportedError(f"the simulator cannot run a {type(s).__name__}", s.span)

    def loop_range(self, loop: ForStmt) -> str:
        """The `range(...)` a `for` loop runs over."""
        step = self.expr(loop.step)
        if not (isinstance(loop.step, ConstInt) and loop.step.value != 0):   # a run-time step: 0 never advances
            self.g["_sim_step"] = _nonzero_step
            step = f"_sim_step({step})"
        return f"range({self.expr(loop.start)}, {self.expr(loop.stop)}, {step})"

    def watchdog_tick(self, loop, ind: int) -> None:
        """Every loop iteration reports to the livelock watchdog (pypto.runtime.sim.watchdog)."""
        self.g["_sim_tick"] = watchdog_tick
        self.emit(ind, f"_sim_tick({self.const(loop.span, 'sim_span')})", "while" if isinstance(loop, WhileStmt)
                  else "for", loop.span)

    @staticmethod
    def parallel_assign(targets: list, values: list) -> str:
        return f"{', '.join(targets)} = {', '.join(values)}"

    def carry_init(self, iter_args, ind: int) -> None:
        if iter_args:
            self.emit(ind, self.parallel_assign([self.namer.name(a) for a in iter_args],
                                                [self.expr(a.init_value) for a in iter_args]))

    def carry_out(self, return_vars, iter_args, ind: int) -> None:
        if return_vars:
            self.emit(ind, self.parallel_assign([self.namer.name(v) for v in return_vars],
                                                [self.namer.name(a) for a in iter_args]))

    def assign(self, target: Optional[str], var: Optional[Var], value: Expr, ind: int, span) -> None:
        lhs = f"{target} = " if target else ""
        if isinstance(value, Call) and value.is_function_call():
            self.function_call(lhs, value, ind, span)
            return
        if not isinstance(value, Call):
            if target:
                self.emit(ind, f"{lhs}{self.expr(value)}", "", span)
            return
        name = value.op.name
        if self.is_host and name != "tile.alloc" and (name.startswith("tile.") or isinstance(getattr(var, "type", None),
                                                                                         TileType)):
            raise UnsupportedError(f"tile op {name} in '{self.func.name}', which runs on the host "
                                   f"({self.func.func_type.name} function): tile ops run on a core", value.span or span,
                                   hint="give the function type=pl.FunctionType.InCore, or put the tile ops inside "
                                        "`with pl.at(level=pl.Level.CORE_GROUP):`")
        if name == "tile.alloc":
            alloc = self.allocs.get(var)
            self.emit(ind, f"{lhs}{alloc.addr if alloc is not None else -1}", name, value.span or span)
            return
        if name == "tensor.create" and self.is_host:
            t = value.type
            shape = self.tuple_text([self.expr(d) for d in t.shape]) if t.shape else "()"
            manual = ", manual_dep=True" if value.attrs.get("manual_dep") else ""
            self.emit(ind, f"{lhs}_sim_ctx.create_tensor({shape}, {self.dtype_const(t.dtype)}{manual})",
                      name, value.span or span)
            return
        where = value.span if value.span is not None and value.span.is_known() else span
        if self.is_host and name not in NO_DATA_OPS:
            tensors = [self.expr(a) for a in value.args if isinstance(a.type, TensorType)]
            if tensors:
                self.wait_loop(ind, f"_sim_ctx.gm_wait(({''.join(t + ', ' for t in tensors)}))", name, where)
        fn, _ = self.op_fn(value)
        out = self.out_for(var, value)
        if not self.is_host and self.fast_paths and not is_blocking_op(fn) and fastpath.emit(self, lhs, var, value, out,
                                                                                                ind, where):
            return
        call = self.op_expr(value, out, var.type if var is not None else None)
        if is_blocking_op(fn):
            if not self.generator:
                raise SimulationError(f"blocking op '{name}' in a function that cannot yield", where)
            sp = self.const(where, "sim_span")
            self.emit(ind, f"_sim_r = {call}", name, where)
            self.has_yield = True
            self.emit(ind, "while _sim_r.__class__ is _Block:")
            self.emit(ind + 1, f"yield _sim_r.at({sp})", name, where)
            self.emit(ind + 1, f"_sim_r = {call}", name, where)
            if target:
                self.emit(ind, f"{target} = _sim_r")
        else:
            self.emit(ind, f"{lhs}{call}", name, where)

    def wait_loop(self, ind: int, probe: str, what: str, span) -> None:
        sp = self.const(span, "sim_span")
        self.has_yield = True
        self.emit(ind, "while True:")
        self.emit(ind + 1, f"_sim_b = {probe}", what, span)
        self.emit(ind + 1, "if _sim_b is None:")
        self.emit(ind + 2, "break")
        self.emit(ind + 1, f"yield _sim_b.at({sp})", what, span)

    def function_call(self, lhs: str, call: Call, ind: int, span) -> None:
        callee = self.program.get_function(call.op.name)
        if callee is None:
            raise SimulationError(f"call of unknown function '{call.op.name}'", call.span or span)
        args = "(" + "".join(self.expr(a) + ", " for a in call.args) + ")"
        where = call.span if call.span is not None and call.span.is_known() else span
        what = f"call {callee.name}"
        if (self.is_host or self.is_group) and callee.func_type not in HOST_TYPES:
            site = make_call_site(call, callee, self.program, where)
            self.sites.append(site)
            sname = self.named_const(site, "task_" + callee.name)
            if self.is_host:
                self.wait_loop(ind, "_sim_ctx.window_wait()", "task submission (task window full)", where)
                self.emit(ind, f"{lhs}_sim_ctx.submit({sname}, {args})", what, where)
            else:
                self.emit(ind, f"{lhs}_sim_ctx.spawn({sname}, {args})", what, where)
            return
        fname = self.const(callee.name, "sim_callee")
        inner = f"_sim_ctx.functions[{fname}].fn(_sim_ctx, *{args})"
        if self.needs_yield(callee.name):
            self.has_yield = True
            self.emit(ind, f"{lhs}yield from {inner}", what, where)
        else:
            self.emit(ind, f"{lhs}{inner}", what, where)

    # ------------------------------------------------------------------ whole function
    def header(self) -> list:
        """The comment block above the function: what this file is and, for host code, the tasks it submits."""
        f = self.func
        if not self.is_host:
            return [f"# Simulator code for {f.func_type.name} function `{f.name}` (generated from final IR by "
                    "pypto.runtime.sim; do not edit).", "# Each line ends with the user's source line it runs."]
        lines = [f"# Orchestration `{f.name}` of program `{self.program.name}`: the host code the simulator runs.",
                 "# Generated from the final IR by pypto.runtime.sim (do not edit); the simulator executes this",
                 "# file, so tracebacks and breakpoints land here. Each line ends with the user's source line.",
                 "# `_sim_ctx.create_tensor(shape, dtype)` allocates a GM tensor; `_sim_ctx.submit(task, args)`",
                 "# queues one kernel launch (its results are the arguments it writes); `window_wait` yields",
                 "# while the task window is full."]
        rows = task_table(self.program, [name for name, value in self.g.items() if isinstance(value, CallSite)],
                          self.g)
        if rows:
            lines += ["#", "# Tasks (kernel: core type; per parameter its direction):"] + [f"#   {r}" for r in rows]
        return lines

    def run(self) -> FunctionCode:
        f = self.func
        params = [self.namer.name(p) for p in f.params]
        fname = re.sub(r"\W", "_", f.name)
        bound: set = set()
        for p, pname in zip(f.params, params):           # symbolic dims take their values from the arguments
            if isinstance(p.type, TensorType):
                for k, d in enumerate(p.type.shape):
                    if isinstance(d, Var) and d not in bound and d not in f.params:
                        bound.add(d)
                        self.emit(1, f"{self.namer.name(d)} = {pname}.shape[{k}]")
        fused_blocks.prepare(self)
        self.stmt(f.body, 1)
        if self.fused_settle:
            self.emit(1, self.fused_settle)
        if self.generator and not self.has_yield:
            self.emit(1, "if False:")
            self.emit(2, "yield None")
        if not self.out:
            self.emit(1, "pass")
        head = self.header() + [f"def {fname}(_sim_ctx{''.join(', ' + p for p in params)}):"]   # after the body:
        prologue = []                                                                         # it lists the tasks
        if self.slots:
            names = ", ".join(f"_sim_s{i}" for i in range(len(self.slots)))
            prologue.append(f"    {names}{',' if len(self.slots) == 1 else ''} = _sim_ctx.views(_sim_F)")
        elif self.allocs:
            prologue.append("    _sim_ctx.views(_sim_F)")      # no static tiles, but the launch still poisons
        if self.fused_settle:
            prologue.append("    _sim_fx = {}")                 # the last block of each fused group (fused_blocks)
        body_lines = prologue + self.out
        shift = len(head) + len(prologue)
        lines = {ln + shift: info for ln, info in self.lines.items()}
        text_lines = []
        for i, line in enumerate(body_lines, start=len(head) + 1):
            info = lines.get(i)
            if info and info[1] is not None and info[1].is_known():
                line = f"{line}    # {info[1]}"
            text_lines.append(line)
        source = load_source("\n".join(head + text_lines) + "\n", self.filename)
        code = compile(source, self.filename, "exec")
        exec(code, self.g)
        fc = FunctionCode(f.name, f, source, self.filename, self.g[fname], self.generator, lines, self.slots,
                          self.sites, loop_filled=fused_blocks.loop_filled_params(self))
        self.g["_sim_F"] = fc
        return fc


def _nonzero_step(step):
    """A loop's step, checked: Python's range() would stop the run with a bare ValueError."""
    if step == 0:
        raise SimulationError("the loop's step is 0 at run time: it would never advance",
                              hint="check the step argument of pl.range (or the scalar it is computed from)")
    return step


def load_source(source: str, filename: str) -> str:
    """The text to compile as `filename`. A real path (not `<pypto-sim ...>`) is written first and the
    code is compiled from what the file then holds: the file a user reads is the code that runs."""
    if not filename.startswith("<"):
        path = Path(filename)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
        source = path.read_text()
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return source


def task_table(program: Program, names: list, g: dict) -> list:
    """One line per submitted task: `_sim_task_mm  mm: Group = mm_aic (AIC) + mm_aiv (AIV); x: In, ...`."""
    rows = []
    for name in names:
        callee = program.get_function(g[name].callee)
        kind = callee.func_type.name
        members = [c.op.name for c in _calls(callee)] if callee.func_type in (FunctionType.Group,
                                                                                FunctionType.Spmd) else []
        if members:
            kind += " = " + " + ".join(f"{m} ({program.get_function(m).func_type.name})" for m in members)
        extras = [f"{k}={callee.attrs[k]!r}" for k in ("core_num", "sync_start") if callee.attrs.get(k)]
        params = ", ".join(f"{p.name_hint}: {'Scalar' if d is None else d.name}"
                           for p, d in zip(callee.params, _param_directions(callee)))
        rows.append(f"{name:<24} {callee.name}: {kind}{' (' + ', '.join(extras) + ')' if extras else ''}; {params}")
    return rows


def _calls(func: Function) -> list:
    return collect(func.body, lambda n: isinstance(n, Call) and isinstance(n.op, GlobalVar))


def _param_directions(func: Function) -> list:
    return [None if not isinstance(p.type, TensorType) else d for p, d in zip(func.params, func.param_directions)]


def generate_function(func: Function, program: Program, ops: dict, needs_yield, filename: str, *,
                      fast_paths: bool = True) -> FunctionCode:
    """Turn one final-IR function into its simulator FunctionCode."""
    return SourceGenerator(func, program, ops, needs_yield, filename, fast_paths).run()
