"""Every Python block of the user guide runs (docs/**/*.md): the docs cannot show code that fails.

Blocks marked `<!-- raises: Error -->` must raise that error; every Python block carries a
marker (tests/docs/doc_snippets.py), so an unmarked example cannot slip in unchecked.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import linecache

import pytest

import pypto.errors
import pypto.language.parser.diagnostics
import doc_snippets
from doc_snippets import blocks_of, user_guide_pages

PAGES = user_guide_pages()


def _error_class(name: str) -> type:
    for namespace in (pypto.errors, pypto.language.parser.diagnostics, builtins):
        cls = getattr(namespace, name, None)
        if isinstance(cls, type) and issubclass(cls, BaseException):
            return cls
    raise AssertionError(f"raises marker names an unknown error class {name!r}")


def _run(block, namespace: dict, page_source: list) -> None:
    """Run one block with the page's line numbers. Every block run so far is kept in one
    linecache entry for the page, so a function defined in an earlier block still finds its
    source when a later block makes it compile again (a new jit specialisation)."""
    filename = block.where.rsplit(":", 1)[0]
    lines = block.code.splitlines(True)
    while len(page_source) < block.line - 1 + len(lines):
        page_source.append("\n")
    page_source[block.line - 1:block.line - 1 + len(lines)] = lines
    linecache.cache[filename] = (sum(map(len, page_source)), None, list(page_source), filename)
    code = "\n" * (block.line - 1) + block.code
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, filename, "exec"), namespace)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(doc_snippets.DOCS).as_posix())
def test_every_python_block_of_the_page_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                 # dumps and build folders a snippet writes land here
    namespace = {"__name__": "__doc_snippet__"}
    page_source: list = []
    for block in blocks_of(page):
        if block.language not in ("python", "py"):
            continue
        assert block.marker is not None, f"{block.where}: python block without a run / raises / skip marker"
        if block.marker == "skip":
            assert block.argument, f"{block.where}: a skip marker says why"
            continue
        if block.marker == "run":
            try:
                _run(block, namespace, page_source)
            except Exception as e:
                raise AssertionError(f"{block.where}: the block raised {type(e).__name__}: {e}") from e
            continue
        name, match = block.expected_error()
        with pytest.raises(_error_class(name)) as info:
            _run(block, namespace, page_source)
        if match is not None:
            assert match in str(info.value), f"{block.where}: {match!r} not in {str(info.value)!r}"


def test_collector_sees_markers_and_rejects_unmarked_blocks(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n<!-- run -->\n```python\nx = 1\n```\n"
                    "<!-- raises: TypeCheckError match=\"bad\" -->\n```python\nraise TypeError\n```\n"
                    "```python\nunmarked = True\n```\n```bash\necho hi\n```\n")
    blocks = doc_snippets.blocks_of(page)
    assert [(b.language, b.marker) for b in blocks] == [("python", "run"), ("python", "raises"),
                                                       ("python", None), ("bash", None)]
    assert blocks[0].line == 4 and blocks[0].code == "x = 1\n"
    assert blocks[1].expected_error() == ("TypeCheckError", "bad")


def test_every_page_of_the_guide_has_checked_code():
    counts = {p.relative_to(doc_snippets.DOCS).as_posix(): sum(b.marker in ("run", "raises") for b in blocks_of(p))
              for p in PAGES}
    assert sum(counts.values()) >= 40, counts
    assert not [page for page, n in counts.items() if n == 0], counts
