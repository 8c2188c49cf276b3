"""Enumerations shared by the IR, the DSL and the runtime (names follow the reference API).

Each enum prints as the DSL spelling (`pl.Mem.Vec`, `pl.FunctionType.InCore`, ...) so the
printer can emit `repr(value)` and the parser can read it back.
"""

from __future__ import annotations

import enum


_PREFIX: dict = {}


class _DslEnum(enum.Enum):
    def __repr__(self) -> str:
        return f"{_PREFIX[type(self)]}.{self.name}"

    __str__ = __repr__

    # The reference's enums are integer enums: `int(pld.NotifyOp.AtomicAdd)` and `mode == 0` hold there.
    def __int__(self) -> int:
        if isinstance(self.value, int):
            return self.value
        raise TypeError(f"{self!r} has no integer value")

    def __index__(self) -> int:
        return self.__int__()

    def __eq__(self, other) -> bool:
        if isinstance(other, int) and not isinstance(other, (bool, enum.Enum)):
            return isinstance(self.value, int) and self.value == other
        return self is other

    __hash__ = enum.Enum.__hash__


class MemorySpace(_DslEnum):
    DDR = 0
    Vec = 1          # UB: unified buffer of an AIV core
    Mat = 2          # L1 of an AIC core
    Left = 3         # L0A
    Right = 4        # L0B
    Acc = 5          # L0C
    Bias = 6
    LeftScale = 7    # a5 MX scales
    RightScale = 8
    ScalarLocal = 9


_PREFIX[MemorySpace] = "pl.Mem"


class FunctionType(_DslEnum):
    Opaque = 0
    Orchestration = 1
    InCore = 2
    AIC = 3
    AIV = 4
    Group = 5
    Spmd = 6
    Inline = 7
    Graph = 8


_PREFIX[FunctionType] = "pl.FunctionType"


class ParamDirection(_DslEnum):
    In = 0
    Out = 1
    InOut = 2


_PREFIX[ParamDirection] = "pl.ParamDirection"


class ArgDirection(_DslEnum):
    """How one call site passes one argument to the runtime (`attrs={"arg_directions": [pl.adir.input, ...]}`).

    A parameter's direction (ParamDirection) is the callee's contract; an argument's direction is what
    the task submission says for this call: `output_existing` writes a caller tensor without reading it,
    `output` a buffer the runtime allocates, `no_dep` a tensor left out of dependency tracking.
    The members are spelled as `pl.adir.<name>`; the reference's CamelCase names are aliases."""
    input = 0            # noqa: A003 - the DSL spells it pl.adir.input
    output = 1
    inout = 2
    output_existing = 3
    no_dep = 4
    scalar = 5
    Input, Output, InOut, OutputExisting, NoDep, Scalar = 0, 1, 2, 3, 4, 5


_PREFIX[ArgDirection] = "pl.adir"


class ForKind(_DslEnum):
    Sequential = 0
    Parallel = 1
    Unroll = 2
    Pipeline = 3


_PREFIX[ForKind] = "pl.ForKind"


class Level(_DslEnum):
    AIV = 0
    AIC = 1
    CORE_GROUP = 2
    CHIP_DIE = 3
    CHIP = 4
    HOST = 5
    CLUSTER_0 = 6
    CLUSTER_1 = 7
    CLUSTER_2 = 8
    GLOBAL = 9
    # aliases (same value → same member)
    L2CACHE = 3
    PROCESSOR = 4
    UMA = 4
    NODE = 5
    POD = 6
    CLOS1 = 7
    CLOS2 = 8


_PREFIX[Level] = "pl.Level"


class Role(_DslEnum):
    Orchestrator = 0
    SubWorker = 1


_PREFIX[Role] = "pl.Role"


class TensorLayout(_DslEnum):
    ND = 0
    DN = 1
    NZ = 2
    MX_A_ZZ = 3
    MX_B_NN = 4


_PREFIX[TensorLayout] = "pl.TensorLayout"


class TileLayout(_DslEnum):
    none_box = 0
    row_major = 1
    col_major = 2


_PREFIX[TileLayout] = "pl.TileLayout"


class PadValue(_DslEnum):
    null = 0
    zero = 1
    max = 2
    min = 3


_PREFIX[PadValue] = "pl.PadValue"


class CompactMode(_DslEnum):
    null = 0
    normal = 1


_PREFIX[CompactMode] = "pl.CompactMode"


class SplitMode(_DslEnum):
    NONE = 0
    UP_DOWN = 1
    LEFT_RIGHT = 2


_PREFIX[SplitMode] = "pl.SplitMode"


class PipeType(_DslEnum):
    MTE1 = 0
    MTE2 = 1
    MTE3 = 2
    M = 3
    V = 4
    S = 5
    FIX = 6
    ALL = 7


_PREFIX[PipeType] = "pl.PipeType"


class CastMode(_DslEnum):
    """Rounding of tile.cast; the int values are the reference's (none=0, rint=1, round=2, floor=3 ...)."""
    none = 0
    rint = 1
    round = 2
    floor = 3
    ceil = 4
    trunc = 5
    odd = 6


_PREFIX[CastMode] = "pl.CastMode"


class CmpType(_DslEnum):
    EQ = 0
    NE = 1
    LT = 2
    LE = 3
    GT = 4
    GE = 5


_PREFIX[CmpType] = "pl.CmpType"


class AtomicType(_DslEnum):
    None_ = 0
    Add = 1


_PREFIX[AtomicType] = "pl.AtomicType"


DSL_ENUMS = (MemorySpace, FunctionType, ParamDirection, ForKind, Level, Role, TensorLayout, TileLayout,
             PadValue, CompactMode, SplitMode, PipeType, CastMode, CmpType, AtomicType)
