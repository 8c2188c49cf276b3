"""Extract the code blocks of the user guide (docs/**/*.md) with their run markers.

A fenced ```python block is preceded (on the line before the fence) by one marker:

    <!-- run -->                                  the block runs and must not raise
    <!-- raises: TypeCheckError -->               the block must raise that pypto error (or a subclass)
    <!-- raises: DeadlockError match="blocked" --> ... and its message must contain the text
    <!-- skip: needs an NPU -->                    never run; the reason is shown to the reader only

Blocks of one page run in order in one namespace, like a reader typing them into one session.
"""

from __future__ import annotations

import pathlib
import re
from dataclasses import dataclass
from typing import Optional

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"
# Pages other helpers own and that hold no runnable blocks.
NOT_USER_GUIDE = {"internals.md"}

_MARKER = re.compile(r"^<!--\s*(run|raises|skip)\s*(?::\s*(.*?))?\s*-->\s*$")
_FENCE = re.compile(r"^(```+|~~~+)\s*([\w+-]*)")


@dataclass(frozen=True)
class Block:
    page: pathlib.Path
    line: int                      # 1-based line of the first code line
    language: str
    code: str
    marker: Optional[str]          # "run" / "raises" / "skip" / None
    argument: str                  # what follows the colon: error name and match, or the skip reason

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(DOCS.parent)}:{self.line}"

    def expected_error(self) -> tuple[str, Optional[str]]:
        m = re.match(r'(\w+)(?:\s+match="(.*)")?$', self.argument)
        if not m:
            raise ValueError(f"{self.where}: malformed raises marker {self.argument!r}")
        return m.group(1), m.group(2)


def blocks_of(page: pathlib.Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        fence = _FENCE.match(lines[i].strip())
        if not fence:
            i += 1
            continue
        ticks, language = fence.group(1), fence.group(2)
        indent = len(lines[i]) - len(lines[i].lstrip())
        prev = lines[i - 1].strip() if i > 0 else ""
        marker = _MARKER.match(prev)
        start, i = i + 1, i + 1
        while i < len(lines) and not lines[i].strip().startswith(ticks):
            i += 1
        code = "\n".join(line[indent:] for line in lines[start:i]) + "\n"
        found.append(Block(page, start + 1, language, code, marker.group(1) if marker else None,
                           (marker.group(2) or "") if marker else ""))
        i += 1
    return found


def user_guide_pages() -> list[pathlib.Path]:
    return sorted(p for p in DOCS.rglob("*.md") if p.name not in NOT_USER_GUIDE)
