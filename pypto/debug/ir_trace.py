"""The IR trace viewer: one self-contained HTML page with the IR after every pass.

    pypto trace-ir build_output/Prog_<ts>            # from a build directory's passes_dump/
    pypto trace-ir kernels.py                        # compiles the file's programs, with source links
    write_ir_trace(stages, "trace.html")             # stages: [(name, Program or DSL text)]
    trace_program(MyProgram, "trace.html")           # runs the Default pipeline and writes the page

The page lists the passes (unchanged ones dimmed, a "changed only" filter), shows each stage's IR
with syntax highlighting, a side-by-side diff against the previous stage, and a search box. When
the stages are Programs (not dump files, which carry no source positions), every statement links
to the user's source line it came from. Nothing is loaded from the network.
"""

from __future__ import annotations

import difflib
import html
import io
import json
import keyword
import re
import tokenize
from pathlib import Path
from typing import Optional

from pypto.ir.printer import PythonPrinter
from pypto.ir.stmt import SeqStmts

_DUMP = re.compile(r"^(\d+)_(?:after_)?(.+)\.py$")


# ------------------------------------------------------------------ printing with source positions
class _SpanPrinter(PythonPrinter):
    """The ordinary printer, remembering the source span of the statement each line starts."""

    def __init__(self):
        super().__init__()
        self.span_at: dict = {}

    def stmt(self, s, indent: int) -> None:
        start = len(self.lines)
        super().stmt(s, indent)
        span = getattr(s, "span", None)
        if not isinstance(s, SeqStmts) and span is not None and span.is_known() and start < len(self.lines):
            self.span_at.setdefault(start, span)


def print_with_spans(program) -> tuple:
    """(DSL text, {0-based line: span}) of a Program."""
    pr = _SpanPrinter()
    text = pr.program(program)
    lines = text.splitlines()
    offset = len(lines) - len(pr.lines)           # the header is put in front of the body lines
    spans = {}
    for k, span in pr.span_at.items():
        if 0 <= k + offset < len(lines) and lines[k + offset] == pr.lines[k]:
            spans[k + offset] = span
    return text, spans


# ------------------------------------------------------------------ highlighting
def highlight(line: str) -> str:
    """One line of DSL text as HTML with <span class=...> for keywords, strings, numbers, comments, ops."""
    out, pos = [], 0
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return html.escape(line)
    prev = None
    for tok in tokens:
        if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT):
            continue
        (_, c0), (_, c1) = tok.start, tok.end
        if c0 < pos:
            continue
        out.append(html.escape(line[pos:c0]))
        text = html.escape(tok.string)
        cls = None
        if tok.type == tokenize.COMMENT:
            cls = "com"
        elif tok.type == tokenize.STRING:
            cls = "str"
        elif tok.type == tokenize.NUMBER:
            cls = "num"
        elif tok.type == tokenize.NAME and keyword.iskeyword(tok.string):
            cls = "kw"
        elif tok.type == tokenize.NAME and prev is not None and prev.string == ".":
            cls = "op" if tok.string[:1].islower() else "ty"
        elif tok.type == tokenize.OP and tok.string == "@":
            cls = "kw"
        out.append(f'<span class="{cls}">{text}</span>' if cls else text)
        pos = c1
        prev = tok
    out.append(html.escape(line[pos:]))
    return "".join(out)


def _diff_rows(a: list, b: list, context: int = 3) -> list:
    """Side-by-side rows [kind, left line no, left html, right line no, right html]; "gap" rows between hunks."""
    rows = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for n, group in enumerate(matcher.get_grouped_opcodes(context)):
        if n:
            rows.append(["gap", None, "", None, ""])
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows += [["eq", i + 1, highlight(a[i]), j + 1, highlight(b[j])] for i, j in zip(range(i1, i2),
                                                                                             range(j1, j2))]
                continue
            for k in range(max(i2 - i1, j2 - j1)):
                i, j = i1 + k, j1 + k
                left = [i + 1, highlight(a[i])] if i < i2 else [None, ""]
                right = [j + 1, highlight(b[j])] if j < j2 else [None, ""]
                kind = "chg" if i < i2 and j < j2 else "del" if i < i2 else "add"
                rows.append([kind] + left + right)
    return rows


def _stage_text(value) -> tuple:
    if isinstance(value, str):
        return value, {}
    return print_with_spans(value)


def build_trace(stages: list) -> dict:
    """The page's data: per stage its name, highlighted lines, source links and diff with the previous stage."""
    out, prev, shown = [], None, 0
    for index, (name, value) in enumerate(stages):
        text, spans = _stage_text(value)
        lines = text.splitlines()
        src = [None] * len(lines)
        for k, span in spans.items():
            on_disk = bool(span.filename) and not span.filename.startswith("<")
            src[k] = {"label": f"{Path(span.filename).name}:{span.line}", "title": str(span),
                      "href": f"{Path(span.filename).resolve().as_uri()}#L{span.line}" if on_disk else None}
        changed = prev is None or lines != prev
        stage = {"index": index, "name": name, "changed": changed, "added": 0, "removed": 0, "diff": []}
        if changed:
            stage.update(lines=[highlight(x) for x in lines], src=src)
            shown = index
        else:                                  # the page shows the last changed stage's text
            stage["same_as"] = shown
        if prev is not None and changed:
            rows = _diff_rows(prev, lines)
            stage["diff"] = rows
            stage["added"] = sum(1 for r in rows if r[0] in ("add", "chg"))
            stage["removed"] = sum(1 for r in rows if r[0] in ("del", "chg"))
        out.append(stage)
        prev = lines
    return {"stages": out}


def dump_stages(build_dir) -> list:
    """[(stage name, DSL text)] from a build directory's passes_dump/ (or a passes_dump folder itself)."""
    d = Path(build_dir)
    if (d / "passes_dump").is_dir():
        d = d / "passes_dump"
    found = []
    for p in d.glob("*.py"):
        m = _DUMP.match(p.name)
        if m:
            found.append((int(m.group(1)), m.group(2), p))
    if not found:
        raise FileNotFoundError(f"{build_dir} has no pass dumps (compile with dump_passes=True or `pypto compile`)")
    return [(f"{n:02d} {name}", p.read_text()) for n, name, p in sorted(found)]


def pipeline_stages(program, *, platform: str = "a2a3", pipeline=None) -> list:
    """[(stage name, Program)]: the program and its IR after every pass of `pipeline` (default: Default)."""
    from pypto.language import parse
    from pypto.passes import PassContext, PassManager
    passes = tuple(PassManager().passes if pipeline is None else pipeline)
    base = platform[:-3] if platform.endswith("sim") else platform
    stages = [("00 frontend", program)]
    with PassContext(platform=base, parse=parse):
        for i, p in enumerate(passes, start=1):
            program = p(program)
            stages.append((f"{i:02d} {p.name}", program))
    return stages


def write_ir_trace(stages: list, path, *, title: str = "IR trace") -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(build_trace(stages)).replace("</", "<\\/")
    path.write_text(_PAGE.replace("__TITLE__", html.escape(title)).replace("__DATA__", data))
    return path


def trace_program(program, path, *, platform: str = "a2a3", pipeline=None) -> Path:
    return write_ir_trace(pipeline_stages(program, platform=platform, pipeline=pipeline), path,
                          title=f"IR trace of {program.name}")


_PAGE = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>__TITLE__</title>
<style>
:root { --bg:#fbfbfa; --fg:#1d1f21; --dim:#9a9a9a; --side:#f0efec; --add:#e3f6e3; --del:#fbe4e4; --chg:#fff4d6; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.4 system-ui, sans-serif; color:var(--fg); background:var(--bg); display:flex; height:100vh; }
nav { width:300px; background:var(--side); overflow:auto; border-right:1px solid #ddd; padding:8px 0; flex:none; }
nav h1 { font-size:15px; margin:4px 12px 8px; overflow-wrap:anywhere; }
nav label { display:block; margin:0 12px 8px; font-size:13px; }
nav ol { list-style:none; margin:0; padding:0; }
nav li { padding:3px 12px; cursor:pointer; font-family:ui-monospace, monospace; font-size:12.5px; white-space:nowrap; }
nav li.unchanged { color:var(--dim); }
nav li.sel { background:#dfe7f5; }
nav li .cnt { margin-left:8px; font-size:11px; }
nav li .cnt .a { color:#1a7f37; } nav li .cnt .r { color:#c62828; }
nav.changed-only li.unchanged { display:none; }
main { flex:1; display:flex; flex-direction:column; min-width:0; }
header { padding:8px 14px; border-bottom:1px solid #ddd; display:flex; gap:12px; align-items:center; }
header h2 { font-size:16px; margin:0; flex:1; font-family:ui-monospace, monospace; }
header button { border:1px solid #bbb; background:#fff; padding:3px 10px; border-radius:4px; cursor:pointer; }
header button.on { background:#dfe7f5; border-color:#7a9cd6; }
header input { width:240px; padding:3px 6px; }
#hits { color:var(--dim); font-size:12px; min-width:70px; }
#view { flex:1; overflow:auto; }
table { border-collapse:collapse; font:12.5px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; width:100%; }
td { padding:0 8px; white-space:pre; vertical-align:top; }
td.ln { color:var(--dim); text-align:right; user-select:none; width:1%; }
table.diff { table-layout:fixed; } table.diff td.ln { width:3.5em; }
table.diff td.l, table.diff td.r { white-space:pre-wrap; word-break:break-all; }
td.src { text-align:right; width:1%; font-size:11px; }
td.src a { color:#5a6fa8; text-decoration:none; }
tr.add td.r, tr.chg td.r { background:var(--add); } tr.del td.l, tr.chg td.l { background:var(--del); }
tr.gap td { background:#eee; color:var(--dim); text-align:center; }
tr.hit td { outline:1px solid #e0b000; } tr.cur td { background:#ffe58a !important; }
.kw { color:#a626a4; } .str { color:#50a14f; } .num { color:#986801; } .com { color:#a0a1a7; font-style:italic; }
.op { color:#4078f2; } .ty { color:#c18401; }
.note { padding:16px; color:var(--dim); }
</style></head>
<body>
<nav id="nav"><h1>__TITLE__</h1><label><input type="checkbox" id="only"> changed passes only</label><ol id="list"></ol></nav>
<main>
<header><h2 id="stage"></h2>
<button id="b-ir" class="on">IR</button><button id="b-diff">diff vs previous</button>
<input id="q" type="search" placeholder="search (Enter: next)"><span id="hits"></span></header>
<div id="view"></div>
</main>
<script id="data" type="application/json">__DATA__</script>
<script>
const DATA = JSON.parse(document.getElementById('data').textContent);
const S = DATA.stages; let cur = 0, mode = 'ir', hit = -1;
const $ = id => document.getElementById(id);
function item(s) {
  const li = document.createElement('li');
  li.className = s.changed ? 'changed' : 'unchanged';
  li.innerHTML = s.name.replace(/&/g,'&amp;').replace(/</g,'&lt;') + (s.changed && s.index ?
    ` <span class="cnt"><span class="a">+${s.added}</span> <span class="r">-${s.removed}</span></span>` :
    '');
  if (!s.changed) li.title = 'this pass left the IR unchanged';
  li.onclick = () => show(s.index); return li;
}
S.forEach(s => $('list').appendChild(item(s)));
function irTable(s) {
  if (s.same_as !== undefined) s = Object.assign({}, S[s.same_as], {name: s.name});
  return '<table>' + s.lines.map((l, i) => {
    const x = s.src[i];
    const src = !x ? '' : x.href ? `<a href="${x.href}" title="${x.title}">${x.label}</a>` : `<span title="${x.title}">${x.label}</span>`;
    return `<tr><td class="ln">${i + 1}</td><td class="code">${l || ' '}</td><td class="src">${src}</td></tr>`;
  }).join('') + '</table>';
}
function diffTable(s) {
  if (!s.index) return '<div class="note">the first stage: nothing to compare with</div>';
  if (!s.changed) return '<div class="note">this pass left the IR unchanged</div>';
  return '<table class="diff">' + s.diff.map(r => r[0] === 'gap' ? '<tr class="gap"><td colspan="4">…</td></tr>' :
    `<tr class="${r[0]}"><td class="ln">${r[1] ?? ''}</td><td class="l">${r[2] || ' '}</td><td class="ln">${r[3] ?? ''}</td><td class="r">${r[4] || ' '}</td></tr>`).join('') + '</table>';
}
function show(i) {
  cur = i; const s = S[i];
  [...$('list').children].forEach((li, k) => li.classList.toggle('sel', k === i));
  $('stage').textContent = s.name + (s.changed ? '' : '  (unchanged)');
  $('view').innerHTML = mode === 'ir' ? irTable(s) : diffTable(s);
  hit = -1; search(false);
}
function search(advance) {
  const q = $('q').value.toLowerCase(); const rows = [...$('view').querySelectorAll('tr')];
  rows.forEach(r => r.classList.remove('hit', 'cur'));
  if (!q) { $('hits').textContent = ''; return; }
  const found = rows.filter(r => r.textContent.toLowerCase().includes(q));
  found.forEach(r => r.classList.add('hit'));
  $('hits').textContent = found.length + ' match' + (found.length === 1 ? '' : 'es');
  if (advance && found.length) { hit = (hit + 1) % found.length; found[hit].classList.add('cur');
    found[hit].scrollIntoView({block: 'center'}); }
}
$('q').addEventListener('input', () => { hit = -1; search(false); });
$('q').addEventListener('keydown', e => { if (e.key === 'Enter') search(true); });
$('b-ir').onclick = () => { mode = 'ir'; $('b-ir').classList.add('on'); $('b-diff').classList.remove('on'); show(cur); };
$('b-diff').onclick = () => { mode = 'diff'; $('b-diff').classList.add('on'); $('b-ir').classList.remove('on'); show(cur); };
$('only').onchange = e => $('nav').classList.toggle('changed-only', e.target.checked);
// #15, #15diff, #InitMemRef or #InitMemRef-diff open that stage (in diff view)
const h = decodeURIComponent(location.hash.slice(1)).match(/^(.*?)-?(diff)?$/);
let pick = S.length - 1;
if (h && h[1]) {
  const byName = S.findIndex(s => s.name.split(' ').slice(1).join(' ') === h[1]);
  pick = /^\d+$/.test(h[1]) ? Math.min(+h[1], S.length - 1) : (byName >= 0 ? byName : pick);
}
if (h && h[2]) { mode = 'diff'; $('b-diff').classList.add('on'); $('b-ir').classList.remove('on'); }
show(pick);
</script>
</body></html>
"""
