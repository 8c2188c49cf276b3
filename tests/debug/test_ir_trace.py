"""The IR trace page: one stage per pass, unchanged passes marked, side-by-side diffs, highlighted IR,
source links for live programs, and nothing loaded from the network."""

import json
import re
from html.parser import HTMLParser

import pytest

import pypto.language as pl
from pypto.debug.ir_trace import build_trace, dump_stages, highlight, pipeline_stages, write_ir_trace
from pypto.passes import PassManager


@pl.program
class Twice:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[32, 64], pl.FP32], y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [32, 64])
        y = pl.store(pl.add(t, t), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        y = self.kernel(x, y)
        return y


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.external, self.data, self._in_data = [], "", False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("src", "href"):
            if tag in ("script", "link", "img") and attrs.get(key, "").startswith(("http:", "https:", "//")):
                self.external.append(attrs[key])
        self._in_data = tag == "script" and attrs.get("id") == "data"

    def handle_endtag(self, tag):
        self._in_data = False

    def handle_data(self, data):
        if self._in_data:
            self.data += data


def _parse(path):
    page = _Page()
    page.feed(path.read_text())
    return page, json.loads(page.data.replace("<\\/", "</"))


def test_live_trace_has_every_pass_diffs_and_source_links(tmp_path):
    out = write_ir_trace(pipeline_stages(Twice), tmp_path / "trace.html")
    page, data = _parse(out)
    assert page.external == []
    stages = data["stages"]
    assert [s["name"].split(" ", 1)[1] for s in stages] == ["frontend"] + PassManager().pass_names()
    by_name = {s["name"].split(" ", 1)[1]: s for s in stages}
    assert not by_name["InlineFunctions"]["changed"] and "same_as" in by_name["InlineFunctions"]
    mem = by_name["InitMemRef"]
    assert mem["changed"] and mem["added"] > 0
    added = [r for r in mem["diff"] if r[0] in ("add", "chg")]
    assert any("tile.alloc" in re.sub("<[^>]+>", "", r[4]) for r in added)
    links = [x for x in stages[0]["src"] if x]
    assert links and all(x["label"].startswith("test_ir_trace.py:") and x["href"].startswith("file://")
                         for x in links)


def test_trace_from_a_build_directory(tmp_path):
    from pypto import ir
    build = tmp_path / "build"
    ir.compile(Twice, output_dir=build, dump_passes=True)
    stages = dump_stages(build)
    assert stages[0][0] == "00 frontend" and len(stages) == len(PassManager().passes) + 1
    data = build_trace(stages)
    assert all(x is None for s in data["stages"] if "src" in s for x in s["src"])     # dumps carry no spans
    with pytest.raises(FileNotFoundError):
        dump_stages(tmp_path)


def test_highlighting_marks_keywords_ops_strings_and_escapes_html():
    got = highlight("x: pl.Tile = pl.tile.add(a, 'b<c>')  # note")
    assert '<span class="op">add</span>' in got and '<span class="str">&#x27;b&lt;c&gt;&#x27;</span>' in got
    assert '<span class="com"># note</span>' in got
    assert '<span class="kw">return</span>' in highlight("return y")
