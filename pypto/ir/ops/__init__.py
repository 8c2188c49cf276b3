"""The op registry and its families (tensor, tile, system)."""

from pypto.ir.ops.registry import (CUBE, MIXED, READ, READWRITE, SHARED, VECTOR, WRITE, Kwarg, OpDef, all_ops,
                                   create_op_call, get_op, has_op, register_op)
