"""`python -m pypto.tools.memory_map <dump.py | build dir> -o map.html`: the reference's spelling of
`pypto memory-map` (pypto.debug.memory_map draws the page)."""

from __future__ import annotations

import sys
from typing import Optional


def main(argv: Optional[list] = None) -> int:
    from pypto.cli import main as pypto
    return pypto(["memory-map", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
