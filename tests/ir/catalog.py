"""The reference's op catalog (tests/ir/data/reference_op_catalog.txt, names only) against our DSL.

    unknown_catalog_names()   # catalog spellings `pl.X` / `pl.tile.X` / `pld.tensor.X` we do not define
"""

from __future__ import annotations

from pathlib import Path

CATALOG = Path(__file__).parent / "data" / "reference_op_catalog.txt"


def catalog_names() -> list:
    return [line.strip() for line in CATALOG.read_text().splitlines() if line.strip()]


def resolves(name: str) -> bool:
    """Whether the dotted spelling names something in our `pl` / `pld` namespace."""
    import pypto.language as pl
    import pypto.language.distributed as pld
    root, *path = name.split(".")
    obj = {"pl": pl, "pld": pld}[root]
    for part in path:
        try:
            obj = getattr(obj, part)
        except AttributeError:
            return False
    return True


def unknown_catalog_names() -> list:
    return [n for n in catalog_names() if not resolves(n)]
