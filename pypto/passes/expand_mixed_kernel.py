"""ExpandMixedKernel (minimum): retype each InCore kernel AIV (pure vector) or AIC (pure cube).

Requires: SSAForm, IncoreTileOps, TileMemoryInferred / Produces: MixedKernelExpanded / Invalidates: —
Reference: pass doc 21 (compiler-and-runtime.md §2, dump 22); the cube/vector split of a mixed
kernel (AIC + AIV + Group with tpush / tpop) is not built here and is rejected.

An op's side comes from OpDef.affinity, else from its tile operands' memory spaces
(Vec → vector; Mat / Left / Right / Acc / Bias → cube); a shared op follows its result's space.

    before:  @pl.function(type=pl.FunctionType.InCore) def k(...): ... pl.tile.add(a, b) ...
    after:   @pl.function(type=pl.FunctionType.AIV)    def k(...): ... pl.tile.add(a, b) ...
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.enums import FunctionType, MemorySpace
from pypto.ir.expr import Call, GlobalVar
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import CUBE, MIXED, SHARED, VECTOR
from pypto.ir.types import TileType
from pypto.passes.analysis import calls_in
from pypto.passes.manager import function_pass
from pypto.passes.properties import IRProperty, PassProperties

_CUBE_SPACES = {MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc, MemorySpace.Bias,
                MemorySpace.LeftScale, MemorySpace.RightScale}


def call_affinity(c: Call) -> str:
    """VECTOR, CUBE, SHARED or MIXED for one op call. A shared op (e.g. tile.create) still goes
    where its result lives: a Vec tile exists only on an AIV core, a Mat / Acc tile only on an AIC."""
    if c.op.affinity not in (None, SHARED):
        return c.op.affinity
    if c.op.affinity == SHARED:
        space = getattr(c.type, "memory_space", None) if isinstance(c.type, TileType) else None
        return SHARED if space is None else CUBE if space in _CUBE_SPACES else VECTOR
    spaces = [a.type.memory_space for a in c.args if isinstance(a.type, TileType)]
    if isinstance(c.type, TileType):
        spaces.append(c.type.memory_space)
    spaces = [s for s in spaces if s is not None]
    if not spaces:
        return SHARED
    return CUBE if spaces[0] in _CUBE_SPACES else VECTOR


def _run(func: Function, program: Program) -> Function:
    if func.func_type is not FunctionType.InCore:
        return func
    sides: dict = {}
    for c in calls_in(func.body):
        if isinstance(c.op, GlobalVar):
            continue
        side = call_affinity(c)
        if side in (VECTOR, CUBE, MIXED):
            sides.setdefault(side, c)
    if MIXED in sides or (VECTOR in sides and CUBE in sides):
        cube = sides.get(CUBE) or sides[MIXED]
        vec = sides.get(VECTOR) or sides[MIXED]
        raise UnsupportedError(f"ExpandMixedKernel: kernel {func.name} mixes cube ops ({cube.op.name}) and vector "
                               f"ops ({vec.op.name}); the cube/vector split into AIC + AIV is not built yet",
                               vec.span or cube.span, hint="split the kernel into a cube kernel and a vector kernel")
    return func.with_type(FunctionType.AIC if CUBE in sides else FunctionType.AIV)


def expand_mixed_kernel():
    return function_pass("ExpandMixedKernel", _run,
                         PassProperties(required={IRProperty.SSAForm, IRProperty.TileMemoryInferred},
                                        produced={IRProperty.MixedKernelExpanded}))
