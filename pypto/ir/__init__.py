"""pypto.ir: the immutable, typed, SSA intermediate representation.

`from pypto import ir` gives the node classes, types, dtypes, the op registry, structural
equality, the printer and `ir.compile` (which reaches the runtime driver lazily).
"""

from pypto.ir.dtypes import DataType
from pypto.ir.enums import (ArgDirection, AtomicType, CastMode, CmpType, CompactMode, ForKind, FunctionType, Level, MemorySpace,
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


# The reference's names that live in higher layers (resolved on first use, pypto.lazy_exports).
from pypto.lazy_exports import lazy_exports as _lazy_exports  # noqa: E402

__getattr__, _lazy_dir = _lazy_exports(__name__, {
    "VerificationLevel": "pypto.passes", "OptimizationStrategy": "pypto.passes", "PassManager": "pypto.passes",
    "PassDumpLevel": "pypto.runtime.compile_options", "CompiledProgram": "pypto.runtime.compiled_program"})


def serialize(node) -> bytes:
    """A Function or Program as bytes: a one-line header, then its DSL text (what `deserialize` parses back)."""
    if not isinstance(node, (Function, Program)):
        raise TypeError(f"serialize expects an ir.Function or ir.Program, got {type(node).__name__}")
    kind = "function" if isinstance(node, Function) else "program"
    return f"# pypto-ir {kind}\n".encode() + python_print(node).encode("utf-8")


def deserialize(data: bytes):
    """The Function or Program that `serialize` wrote (re-parsed from its DSL text)."""
    from pypto.lazy_exports import resolve
    text = bytes(data).decode("utf-8")
    header, _, body = text.partition("\n")
    if header not in ("# pypto-ir function", "# pypto-ir program"):
        raise ValueError("deserialize: the data was not written by pypto.ir.serialize")
    parsed = resolve("pypto.language:parse")(body, "<deserialize>")
    if header.endswith("function") and isinstance(parsed, Program) and len(parsed.functions) == 1:
        return next(iter(parsed.functions.values()))
    return parsed
