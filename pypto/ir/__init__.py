"""pypto.ir: the immutable, typed, SSA intermediate representation.

`from pypto import ir` gives the node classes, types, dtypes, the op registry, structural
equality, the printer and `ir.compile` (which reaches the runtime driver lazily).
"""

from pypto.ir.dtypes import DataType
from pypto.ir.enums import (AtomicType, CastMode, CmpType, CompactMode, ForKind, FunctionType, Level, MemorySpace,
                            PadValue, ParamDirection, PipeType, Role, SplitMode, TensorLayout, TileLayout)
from pypto.ir.equality import assert_structural_equal, structural_equal, structural_hash
from pypto.ir.expr import (BinaryExpr, Call, Cast, ConstBool, ConstFloat, ConstInt, Expr, GlobalVar, IterArg,
                           MakeTuple, TupleGetItem, UnaryExpr, Var, const)
from pypto.ir.function import Function, Program
from pypto.ir.node import Node
from pypto.ir.ops.registry import create_op_call, get_op
from pypto.ir.span import Span
from pypto.ir.stmt import (AssignStmt, BreakStmt, ClusterScopeStmt, ContinueStmt, EvalStmt, ForStmt,
                           HierarchyScopeStmt, IfStmt, InCoreScopeStmt, ReturnStmt, ScopeStmt, SeqStmts,
                           SpmdScopeStmt, SplitAivScopeStmt, Stmt, WhileStmt, YieldStmt, flatten_to_stmts)
from pypto.ir.types import (DistributedTensorType, MemRef, PtrType, ScalarType, TensorType, TensorView, TileType,
                            TileView, TupleType, Type, UnknownType)

# The reference's Python IR API layer (docs/internals.md, "The reference's IR API"); the visitor
# classes exported as ir.IRVisitor / ir.IRMutator are the reference protocol (pypto.ir.visitor_protocol).
from pypto.ir.builder import IRBuilder  # noqa: E402
from pypto.ir.ops.registry import OpDef as Op  # noqa: E402
from pypto.ir.reference_nodes import VIEWS as _VIEWS  # noqa: E402
from pypto.ir.visitor_protocol import IRMutator, IRVisitor  # noqa: E402

TupleGetItemExpr = TupleGetItem
globals().update(_VIEWS)

Mem = MemorySpace


def python_print(node, prefix: str = "pl", concise: bool = False) -> str:
    from pypto.ir.printer import python_print as _pp
    return _pp(node)


def compile(program, output_dir=None, **options):
    """Run the Default pipeline on `program` and return a CompiledProgram (see pypto.runtime).

    The reference's entry point; the driver lives two layers up, reached through pypto.lazy_exports."""
    from pypto.lazy_exports import resolve
    return resolve("pypto.runtime.compile:compile_program")(program, output_dir=output_dir, **options)
