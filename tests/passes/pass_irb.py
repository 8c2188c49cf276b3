"""Tiny IR-building helpers for pass tests (until every test is a @pl.program)."""

from pypto import ir
from pypto.ir import (AssignStmt, Call, ConstInt, EvalStmt, ForStmt, Function, FunctionType, GlobalVar, IfStmt,
                      IterArg, ParamDirection, Program, ReturnStmt, ScalarType, SeqStmts, TensorType, TileType, Var,
                      YieldStmt, create_op_call)
from pypto.ir.dtypes import FP32, INDEX

IDX = ScalarType(INDEX)


def tensor(shape, dtype=FP32):
    return TensorType(shape, dtype)


def op(name, *args, **kwargs):
    return create_op_call(name, list(args), kwargs)


def call(fname, ret_type, *args):
    return Call(GlobalVar(fname), list(args), type=ret_type)


def let(name, value):
    """(var, AssignStmt) binding `value` to a new Var typed like the value."""
    v = Var(name, value.type)
    return v, AssignStmt(v, value)


def seq(*stmts):
    return SeqStmts(list(stmts))


def func(name, params, ret_types, stmts, ftype=FunctionType.Opaque, directions=None):
    return Function(name, params, ret_types, SeqStmts(list(stmts)), ftype, param_directions=directions)
