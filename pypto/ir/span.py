"""Source locations. Every IR node carries one; equality ignores them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    filename: str = ""
    line: int = 0
    column: int = 0          # 1-based, like compilers print
    end_line: int = 0
    end_column: int = 0
    text: str = ""           # the source line itself, when the file is not on disk (pl.parse text)

    def is_known(self) -> bool:
        return self.line > 0

    def source_line(self) -> str:
        return self.text

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.column}" if self.is_known() else "<unknown>"

    # The reference's spellings (IR API layer, docs/internals.md).
    @staticmethod
    def unknown() -> "Span":
        return NO_SPAN

    @property
    def begin_line(self) -> int:
        return self.line

    @property
    def begin_column(self) -> int:
        return self.column

    def is_valid(self) -> bool:
        return self.is_known()

    def to_string(self) -> str:
        return str(self)


NO_SPAN = Span()
