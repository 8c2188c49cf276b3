"""A picture of a run's task graph: `dfx_outputs/deps.json` (written with `RunConfig(enable_dep_gen=True)`)
as a self-contained HTML page with an SVG drawing.

    pypto task-graph build_output/Prog_<ts>          # → dfx_outputs/deps.html
    write_task_graph(deps_json_path, "deps.html")

Each task is a box (kernel name, task id, estimated start and end from the swimlane cost model);
columns are dependency depth (a task sits one column right of the deepest task it waits for), one
band per rank; an arrow joins each task to every task that waited for it.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

_W, _H, _GAP_X, _GAP_Y = 170, 44, 60, 16


def layout(deps: dict) -> dict:
    """{(rank, task): (column, row)}: column = dependency depth, rows in submission order per column."""
    preds: dict = {}
    for e in deps["edges"]:
        preds.setdefault((e["rank"], e["to"]), []).append((e["rank"], e["from"]))
    depth: dict = {}
    for t in sorted(deps["tasks"], key=lambda t: (t["rank"], t["task"])):
        key = (t["rank"], t["task"])
        depth[key] = 1 + max((depth.get(p, 0) for p in preds.get(key, [])), default=-1)
    rows: dict = {}
    place = {}
    rank_base, base = {}, 0
    for rank in sorted({k[0] for k in depth}):
        rank_base[rank] = base
        counts: dict = {}
        for key in sorted(k for k in depth if k[0] == rank):
            col = depth[key]
            place[key] = (col, base + counts.get(col, 0))
            counts[col] = counts.get(col, 0) + 1
        base += max(counts.values(), default=0) + 1
        rows[rank] = base
    return place


def render_html(deps: dict, title: str = "task graph") -> str:
    place = layout(deps)
    by_key = {(t["rank"], t["task"]): t for t in deps["tasks"]}
    width = (max((c for c, _ in place.values()), default=0) + 1) * (_W + _GAP_X) + 40
    height = (max((r for _, r in place.values()), default=0) + 1) * (_H + _GAP_Y) + 40

    def box(key):
        c, r = place[key]
        return 20 + c * (_W + _GAP_X), 20 + r * (_H + _GAP_Y)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#777"/></marker></defs>']
    for e in deps["edges"]:
        a, b = (e["rank"], e["from"]), (e["rank"], e["to"])
        if a in place and b in place:
            (x1, y1), (x2, y2) = box(a), box(b)
            parts.append(f'<line class="edge" x1="{x1 + _W}" y1="{y1 + _H / 2}" x2="{x2}" y2="{y2 + _H / 2}" '
                         'stroke="#777" marker-end="url(#arrow)"/>')
    for key, t in sorted(by_key.items()):
        x, y = box(key)
        start, end = t.get("start_ns"), t.get("end_ns")
        when = f"{start / 1e3:.2f}–{end / 1e3:.2f} µs" if start is not None and end is not None else "not finished"
        label = html.escape(f"{t['kernel']} #{t['task']}")
        parts.append(f'<g class="task" data-task="{t["task"]}" data-rank="{t["rank"]}">'
                     f'<rect x="{x}" y="{y}" width="{_W}" height="{_H}" rx="6" fill="#e8eef9" stroke="#7a9cd6"/>'
                     f'<text x="{x + 8}" y="{y + 18}" font-size="12" font-family="monospace">{label}</text>'
                     f'<text x="{x + 8}" y="{y + 34}" font-size="10" fill="#666" font-family="monospace">'
                     f'rank {t["rank"]}, {when}</text><title>{label}: depends on '
                     f'{", ".join("#" + str(d) for d in t.get("depends_on", [])) or "nothing"}</title></g>')
    parts.append("</svg>")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            '<style>body{font:14px system-ui,sans-serif;margin:18px;background:#fbfbfa}</style></head><body>'
            f'<h1 style="font-size:18px">{html.escape(title)}</h1><p style="color:#777">{len(deps["tasks"])} '
            f'task(s), {len(deps["edges"])} dependency edge(s); columns are dependency depth; times are the '
            f'swimlane estimate.</p>{"".join(parts)}</body></html>')


def write_task_graph(deps_path, out_path=None) -> Path:
    deps_path = Path(deps_path)
    out = Path(out_path) if out_path else deps_path.with_suffix(".html")
    out.write_text(render_html(json.loads(deps_path.read_text()), title=f"task graph ({deps_path.parent.parent.name})"))
    return out
