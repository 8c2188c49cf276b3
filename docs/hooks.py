"""MkDocs hooks: the op catalog and the examples page are generated on every build.

Neither page is a file in docs/: `on_files` adds them, built by docs/gen_catalog.py (from the
op registry) and docs/gen_examples.py (from the examples' docstrings), so the published pages
always list exactly the ops the code registers and the examples the repository holds.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys

from mkdocs.structure.files import File

DOCS = pathlib.Path(__file__).resolve().parent
ROOT = DOCS.parent
GENERATED = {"ops/catalog.md": ("gen_catalog", "catalog_markdown"),
             "examples.md": ("gen_examples", "examples_markdown")}


def _load(name: str):
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))           # import pypto from this checkout
    spec = importlib.util.spec_from_file_location(name, DOCS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def on_files(files, config):
    for page, (module, function) in GENERATED.items():
        existing = files.get_file_from_path(page)
        if existing is not None:
            files.remove(existing)
        files.append(File.generated(config, page, content=getattr(_load(module), function)()))
    return files
