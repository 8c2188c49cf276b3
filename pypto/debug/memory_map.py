"""The memory map: what sits in each on-chip memory of each kernel, where, and for how long.

    pypto memory-map build_output/Prog_<ts>                  # the final IR of a build directory
    pypto memory-map passes_dump/21_after_MemoryReuse.py     # any dump after InitMemRef
    write_memory_map(program, "map.html")                    # a Program in Python

For every kernel and memory space it draws the buffers (`tile.alloc`s) as boxes: address across
(0 to the space's capacity on the platform), program order down (the statements in which the buffer
is live, as MemoryReuse computes lifetimes). Hovering a box names the tiles placed in it, its
bytes, address and lifetime; a table beside it lists the same, and the page ends with the text
report of `report/memory.txt`. A buffer without an address yet (a dump before
AllocateMemoryAddr) is drawn in its own column and marked unplaced. Nothing is executed.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from pypto.ir.enums import FunctionType
from pypto.ir.platform import get_platform
from pypto.ir.stmt import AssignStmt
from pypto.ir.types import TileType
from pypto.ir.visitor import collect
from pypto.passes.memory.memory_lifetimes import base_of, buffer_lifetimes
from pypto.runtime.sim.layout import find_allocs

_HOST = (FunctionType.Orchestration, FunctionType.Opaque, FunctionType.Inline)
_COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac"]


@dataclass
class Buffer:
    name: str
    space: str
    addr: Optional[int]             # None: not placed yet
    size: int
    first: int                      # program positions (statements in depth-first order)
    last: int
    tiles: list = field(default_factory=list)
    line: str = ""                  # the user's source line of the first tile placed in it
    pinned: bool = False


@dataclass
class KernelMap:
    kernel: str
    kind: str
    positions: int
    spaces: dict                    # space name → [Buffer]
    capacity: dict                  # space name → bytes


def kernel_maps(program, platform: str = "a2a3") -> list:
    """One KernelMap per kernel of `program` (functions that allocate on-chip memory)."""
    plat = get_platform(platform)
    out = []
    for f in program.functions.values():
        if f.func_type in _HOST:
            continue
        allocs = find_allocs(f)
        if not allocs:
            continue
        life, stmt_at = buffer_lifetimes(f)
        tiles: dict = {}
        for s in collect(f.body, lambda n: isinstance(n, AssignStmt)):
            base = base_of(s.var)
            if base is not None and isinstance(s.var.type, TileType):
                tiles.setdefault(base, []).append(s)
        positions = max([0] + list(stmt_at) + [lt.last for lt in life.values()]) + 1
        spaces: dict = {}
        for base, alloc in allocs.items():
            lt = life.get(base)
            first, last = (lt.first, lt.last) if lt is not None else (0, 0)
            placed = tiles.get(base, [])
            span = next((s.span for s in placed if s.span is not None and s.span.is_known()), None)
            addr = alloc.addr if alloc.addr is not None and alloc.addr >= 0 else None
            space = alloc.space.name
            spaces.setdefault(space, []).append(Buffer(base.name_hint, space, addr, int(alloc.size), first, last,
                                                       [s.var.name_hint for s in placed],
                                                       str(span) if span else "", bool(getattr(alloc, "pinned", False))))
        for bufs in spaces.values():
            bufs.sort(key=lambda b: (b.addr is None, b.addr or 0, b.first))
        capacity = {s: plat.space_capacity(_space(s)) for s in spaces}
        out.append(KernelMap(f.name, f.func_type.name, positions, spaces, capacity))
    return out


def _space(name: str):
    from pypto.ir.enums import MemorySpace
    return MemorySpace[name]


def peak_bytes(buffers: list, positions: int) -> int:
    """The most bytes live at one program position."""
    best = 0
    for p in range(positions):
        best = max(best, sum(b.size for b in buffers if b.first <= p <= b.last))
    return best


# ------------------------------------------------------------------ drawing
def _svg(km: KernelMap, space: str, width: int = 640) -> str:
    bufs = km.spaces[space]
    cap = km.capacity.get(space) or max((b.addr or 0) + b.size for b in bufs)
    placed_top = max([(b.addr or 0) + b.size for b in bufs if b.addr is not None] + [0])
    span_bytes = max(cap, placed_top)
    zoomed = 0 < placed_top < cap / 4               # a small kernel: draw the used range, say so
    if zoomed:
        span_bytes = _round_up(placed_top * 1.25)
    unplaced = [b for b in bufs if b.addr is None]
    row_h = max(6, min(22, 360 // max(1, km.positions)))
    left, top = 46, 22
    plot_w = width - left - (90 if unplaced else 16)
    height = top + row_h * km.positions + 24
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" class="map" '
             f'data-kernel="{html.escape(km.kernel)}" data-space="{space}">',
             f'<rect x="{left}" y="{top}" width="{plot_w}" height="{row_h * km.positions}" class="bg"/>']
    for frac in (0, 0.25, 0.5, 0.75, 1.0):                        # address ticks
        x = left + plot_w * frac
        parts.append(f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{top + row_h * km.positions}" class="grid"/>')
        parts.append(f'<text x="{x:.1f}" y="{top - 8}" class="tick" text-anchor="middle">{_kb(span_bytes * frac)}</text>')
    step = max(1, km.positions // 12)
    for p in range(0, km.positions, step):                        # program positions
        parts.append(f'<text x="{left - 6}" y="{top + row_h * p + row_h * 0.75:.1f}" class="tick" '
                     f'text-anchor="end">{p}</text>')
    if placed_top > cap:
        x = left + plot_w * cap / span_bytes
        parts.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + row_h * km.positions}" class="over"/>')
    for i, b in enumerate(bufs):
        color = _COLORS[i % len(_COLORS)]
        y = top + row_h * b.first
        h = row_h * (b.last - b.first + 1)
        if b.addr is None:
            k = unplaced.index(b)
            x, w = left + plot_w + 8 + (k % 4) * 18, 14
        else:
            x, w = left + plot_w * b.addr / span_bytes, max(2.0, plot_w * b.size / span_bytes)
        title = (f"{b.name}: {b.size} B at {'(unplaced)' if b.addr is None else b.addr}, live at positions "
                 f"{b.first}-{b.last}; tiles: {', '.join(b.tiles) or '-'}" + (f"; {b.line}" if b.line else ""))
        parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{color}" '
                     f'class="buf{" unplaced" if b.addr is None else ""}" data-name="{html.escape(b.name)}">'
                     f'<title>{html.escape(title)}</title></rect>')
        if w > 60 and h >= 12:
            parts.append(f'<text x="{x + 4:.1f}" y="{y + min(h, row_h) - 4:.1f}" class="lbl">{html.escape(b.name)}</text>')
    scale = f"showing 0–{_kb(span_bytes)} of {_kb(cap)}" if zoomed else f"capacity {_kb(cap)}"
    parts.append(f'<text x="{left}" y="{height - 6}" class="tick">address → ({scale}); program order ↓</text>')
    parts.append("</svg>")
    return "".join(parts)


def _round_up(n: float) -> int:
    step = 1
    while step * 10 < n:
        step *= 2
    return int(-(-n // step) * step)


def _kb(n: float) -> str:
    return f"{n / 1024:.3g} KB" if n >= 1024 else f"{n:.0f} B"


def render_html(maps: list, *, title: str = "memory map", report: str = "") -> str:
    sections = []
    for km in maps:
        blocks = []
        for space, bufs in km.spaces.items():
            cap = km.capacity.get(space, 0)
            peak = peak_bytes(bufs, km.positions)
            top = max([(b.addr or 0) + b.size for b in bufs if b.addr is not None] + [0])
            rows = "".join(
                f"<tr><td>{html.escape(b.name)}</td><td>{'unplaced' if b.addr is None else b.addr}</td>"
                f"<td>{b.size}</td><td>{b.first}–{b.last}</td><td>{html.escape(', '.join(b.tiles))}</td>"
                f"<td>{html.escape(b.line)}</td></tr>" for b in bufs)
            blocks.append(
                f'<div class="space"><h3>{space} <small>{len(bufs)} buffer(s), top address {top} B, '
                f'peak live {peak} B of {cap} B ({100 * peak / cap if cap else 0:.1f}%)</small></h3>'
                f'<div class="pair">{_svg(km, space)}<table><tr><th>buffer</th><th>addr</th><th>bytes</th>'
                f'<th>live</th><th>tiles</th><th>source</th></tr>{rows}</table></div></div>')
        sections.append(f'<section><h2>{html.escape(km.kernel)} <small>{km.kind}, {km.positions} program '
                        f'positions</small></h2>{"".join(blocks)}</section>')
    body = "".join(sections) or '<p class="note">no kernel allocates on-chip memory at this stage ' \
                                '(a dump before InitMemRef?)</p>'
    text = f"<h2>text report</h2><pre>{html.escape(report)}</pre>" if report else ""
    return _PAGE.replace("__TITLE__", html.escape(title)).replace("__BODY__", body + text)


def write_memory_map(program, path, *, platform: str = "a2a3", title: Optional[str] = None) -> Path:
    from pypto.runtime.compile import memory_report
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    maps = kernel_maps(program, platform)
    path.write_text(render_html(maps, title=title or f"memory map of {program.name}",
                                report=memory_report(program)))
    return path


def load_program(source):
    """The Program of a build directory (its final IR, orchestration/<Prog>.py) or of a dump file."""
    from pypto.language import parse
    p = Path(source)
    if p.is_dir():
        finals = [x for x in (p / "orchestration").glob("*.py") if not x.name.endswith(".sim.py")] \
            if (p / "orchestration").is_dir() else []
        if finals:
            p = sorted(finals)[0]
        else:
            dumps = sorted((p / "passes_dump").glob("*.py")) if (p / "passes_dump").is_dir() else []
            if not dumps:
                raise FileNotFoundError(f"{source} holds neither orchestration/<Prog>.py nor passes_dump/")
            p = dumps[-1]
    if not p.is_file():
        raise FileNotFoundError(f"{source}: no such file or build directory")
    return parse(p.read_text(), filename=str(p)) if _takes_filename(parse) else parse(p.read_text())


def _takes_filename(fn) -> bool:
    import inspect
    try:
        return "filename" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>__TITLE__</title>
<style>
body { font:14px/1.4 system-ui, sans-serif; margin:18px; color:#1d1f21; background:#fbfbfa; }
h1 { font-size:20px; } h2 { font-size:17px; margin-top:26px; border-bottom:1px solid #ddd; }
h3 { font-size:14px; margin:14px 0 6px; } small { color:#777; font-weight:normal; }
.pair { display:flex; gap:18px; align-items:flex-start; flex-wrap:wrap; }
svg.map { background:#fff; border:1px solid #ddd; }
svg .bg { fill:#f6f6f4; } svg .grid { stroke:#ddd; } svg .over { stroke:#c62828; stroke-width:2; }
svg .tick { font:10px ui-monospace, monospace; fill:#777; } svg .lbl { font:10px ui-monospace, monospace; fill:#fff; }
svg .buf { stroke:#fff; stroke-width:1; opacity:.9; } svg .buf:hover { opacity:1; stroke:#000; }
svg .unplaced { stroke-dasharray:3 2; stroke:#333; }
table { border-collapse:collapse; font:12px ui-monospace, monospace; }
td, th { border:1px solid #ddd; padding:2px 6px; text-align:left; } th { background:#f0efec; }
pre { background:#fff; border:1px solid #ddd; padding:8px; font-size:12px; }
.note { color:#777; }
</style></head><body><h1>__TITLE__</h1>
<p class="note">Address across, program order down: each box is one on-chip buffer over the statements in which it
is live. Hover a box for its tiles. This is what the compiler decided; nothing was run.</p>
__BODY__
</body></html>
"""
