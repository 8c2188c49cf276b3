"""The memory map: per kernel and memory space, each buffer's address, size and lifetime, drawn as SVG
boxes in a self-contained HTML page; buffers not placed yet are marked."""

from html.parser import HTMLParser

import pypto.language as pl
from pypto import ir
from pypto.debug.memory_map import kernel_maps, load_program, peak_bytes, write_memory_map
from pypto.passes import PassManager


@pl.program
class Chain:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[32, 64], pl.FP32], y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        a = pl.load(x, [0, 0], [32, 64])
        b = pl.exp(a)
        c = pl.add(b, a)
        d = pl.mul(c, c)
        y = pl.store(d, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        y = self.kernel(x, y)
        return y


class _Boxes(HTMLParser):
    def __init__(self):
        super().__init__()
        self.boxes, self.svgs = [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "svg":
            self.svgs.append((attrs["data-kernel"], attrs["data-space"]))
        if tag == "rect" and "buf" in attrs.get("class", ""):
            self.boxes.append(attrs)


def test_final_ir_buffers_do_not_overlap_while_both_are_live():
    final = ir.compile(Chain).lowered
    (km,) = kernel_maps(final)
    bufs = km.spaces["Vec"]
    assert km.kernel == "kernel" and all(b.addr is not None for b in bufs)
    for i, p in enumerate(bufs):
        for q in bufs[i + 1:]:
            live_together = p.first <= q.last and q.first <= p.last
            overlap = p.addr < q.addr + q.size and q.addr < p.addr + p.size
            assert not (live_together and overlap), (p, q)
    assert peak_bytes(bufs, km.positions) <= km.capacity["Vec"]
    assert {t for b in bufs for t in b.tiles} >= {"a", "b", "c", "d"}


def test_html_page_draws_one_box_per_buffer(tmp_path):
    build = tmp_path / "build"
    ir.compile(Chain, output_dir=build)
    program = load_program(build)
    out = write_memory_map(program, tmp_path / "map.html")
    page = _Boxes()
    page.feed(out.read_text())
    (km,) = kernel_maps(program)
    assert page.svgs == [("kernel", "Vec")]
    assert sorted(b["data-name"] for b in page.boxes) == sorted(b.name for b in km.spaces["Vec"])
    assert "on-chip memory per kernel" in out.read_text()          # the text report is included


def test_a_dump_before_allocation_shows_unplaced_buffers(tmp_path):
    before = PassManager().run(Chain, until="InitMemRef")
    (km,) = kernel_maps(before)
    assert all(b.addr is None for b in km.spaces["Vec"])
    page = _Boxes()
    page.feed(write_memory_map(before, tmp_path / "m.html").read_text())
    assert page.boxes and all("unplaced" in b["class"] for b in page.boxes)
