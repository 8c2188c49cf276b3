"""IR properties: the facts a pass requires, produces or invalidates.

A pass states its contract with a `PassProperties`; the verification instrument checks the
required set before and the produced set after each pass with the verifiers of
`pypto.ir.verifier` (keyed by the property's name).

    PassProperties(required={IRProperty.SSAForm}, produced={IRProperty.IncoreTileOps})
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class IRProperty(enum.Enum):
    """One checkable fact about a program (the value is the verifier key)."""
    TypeChecked = "TypeChecked"
    InlineFunctionsEliminated = "InlineFunctionsEliminated"
    SSAForm = "SSAForm"
    NormalizedStmtStructure = "NormalizedStmtStructure"
    NoNestedCalls = "NoNestedCalls"
    HierarchyOutlined = "HierarchyOutlined"
    SplitIncoreOrch = "SplitIncoreOrch"
    ClusterOutlined = "ClusterOutlined"
    IncoreTileOps = "IncoreTileOps"
    TileMemoryInferred = "TileMemoryInferred"
    MixedKernelExpanded = "MixedKernelExpanded"
    HasMemRefs = "HasMemRefs"
    AllocatedMemoryAddr = "AllocatedMemoryAddr"
    CommDomainScopesMaterialized = "CommDomainScopesMaterialized"
    DistTensorCtxMaterialized = "DistTensorCtxMaterialized"


class IRPropertySet(set):
    """A set of IRProperty with the reference's method names (`insert`, `contains`, `to_list`)."""

    def insert(self, prop: IRProperty) -> None:
        self.add(prop)

    def contains(self, prop: IRProperty) -> bool:
        return prop in self

    def to_list(self) -> list:
        return sorted(self, key=lambda p: p.value)


def property_set(*props: IRProperty) -> frozenset:
    return frozenset(props)


@dataclass(frozen=True)
class PassProperties:
    required: frozenset = field(default_factory=frozenset)
    produced: frozenset = field(default_factory=frozenset)
    invalidated: frozenset = field(default_factory=frozenset)

    def __post_init__(self):
        for name in ("required", "produced", "invalidated"):
            object.__setattr__(self, name, frozenset(getattr(self, name)))
