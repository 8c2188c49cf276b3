"""`import pypto.language as pl`: the DSL namespace.

    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            ...

Holds dtypes and enums, type annotations, decorators, loop / scope constructs, every DSL op
name (`pl.add`, `pl.tile.load`, ...; calling one outside a kernel raises a clear error), and
the text entry points `pl.parse` / `pl.loads`.
"""

from __future__ import annotations

from pypto.ir.dtypes import (BF16, BOOL, FP4, FP8E4M3FN, FP8E5M2, FP8E8M0, FP16, FP32, FP64, HF4, HF8, INDEX, INT4,
                             INT8, INT16, INT32, INT64, TASK_ID, UINT4, UINT8, UINT16, UINT32, UINT64, DataType)
from pypto.ir.enums import (AtomicType, CastMode, CmpType, CompactMode, ForKind, FunctionType, Level, MemorySpace,
                            PadValue, ParamDirection, PipeType, Role, SplitMode, TensorLayout, TileLayout)
from pypto.language import arg_direction as adir
from pypto.language.decorators import InlineFunction, function, inline, program
from pypto.language.scopes import (DslOp, KernelOnlyError, OpNamespace, ScopeMode, at, cluster, cond, dump_tag, func_attr, incore,
                                   manual_scope, parallel, scope, spmd_submit, submit,
                                   pipeline, range, spmd, split, split_aiv, cross_core_slot, static_assert, static_print, unroll,
                                   while_, yield_)
from pypto.language.typing import (Array, InOut, MemRef, Out, Ptr, Scalar, Tensor, TensorView, Tile, TileView, Tuple,
                                   Unknown, const, dynamic)

# Opt-in (`pl.install_excepthook()` in a script): importing the DSL leaves sys.excepthook alone;
# `pypto` (the CLI) renders pypto errors itself, and every error's str() starts with file:line:col.
from pypto.language.parser.diagnostics import install_excepthook
from pypto.lazy_exports import lazy_exports

Mem = MemorySpace
ND, DN, NZ = TensorLayout.ND, TensorLayout.DN, TensorLayout.NZ
MX_A_ZZ, MX_B_NN = TensorLayout.MX_A_ZZ, TensorLayout.MX_B_NN
TaskId = Scalar[TASK_ID]
AUTO = -1


def _is_op(path: str) -> bool:
    from pypto.language.parser.op_bridge import is_dsl_op
    return is_dsl_op(path)


def _op_names() -> list:
    from pypto.language.parser.op_bridge import dsl_op_paths
    return dsl_op_paths()


tile = OpNamespace("tile", _is_op, _op_names)
tensor = OpNamespace("tensor", _is_op, _op_names)
system = OpNamespace("system", _is_op, _op_names)
array = OpNamespace("array", _is_op, _op_names)
prefetch = OpNamespace("prefetch", _is_op, _op_names)
xor_ = DslOp("xor_")   # scalar xor as the printer spells it


def parse(text: str, filename: str = "<string>", *, globals: dict | None = None):
    """Parse DSL text (e.g. `ir.python_print` output) into a Program or Function."""
    from pypto.language.parser import parse_source
    return parse_source(text, filename=filename, globals=globals)


def parse_program(text: str, filename: str = "<string>", *, globals: dict | None = None):
    """Parse DSL text that must define a program."""
    from pypto.ir.function import Function, Program
    result = parse(text, filename, globals=globals)
    if isinstance(result, Function):
        result = Program([result], result.name)
    assert isinstance(result, Program)
    return result


def loads(path, *, globals: dict | None = None):
    """Parse a DSL file (e.g. a pass dump `passes_dump/NN_after_X.py`)."""
    with open(path, encoding="utf-8") as f:
        return parse(f.read(), str(path), globals=globals)


def loads_program(path, *, globals: dict | None = None):
    with open(path, encoding="utf-8") as f:
        return parse_program(f.read(), str(path), globals=globals)


# `pl.jit` / `pl.JITFunction` belong to the runtime layer above this one: a compatibility path.
_RUNTIME_NAMES = {"jit": "pypto.runtime.jit", "JITFunction": "pypto.runtime.jit", "RUNTIME": "pypto.runtime.jit"}
_runtime_getattr, _ = lazy_exports(__name__, _RUNTIME_NAMES)


def __getattr__(name: str):
    """`pl.jit` (the runtime engineer's module, loaded lazily) and every DSL op name."""
    if name in _RUNTIME_NAMES:        # the runtime's names, resolved on first use (not by `import pypto.language`)
        return _runtime_getattr(name)
    if name.startswith("__") or name in ("ops", "parser", "distributed"):
        raise AttributeError(name)
    if _is_op(name):
        return DslOp(name)
    from pypto.language.parser.diagnostics import did_you_mean
    hint = did_you_mean(name, [n for n in globals() if not n.startswith("_")] + _op_names())
    raise AttributeError(f"module 'pypto.language' has no attribute '{name}'" + (f" ({hint})" if hint else ""))
