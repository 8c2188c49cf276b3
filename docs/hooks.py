"""MkDocs hooks: the op catalog page is generated from the op registry on every build.

The page is not a file in docs/: `on_files` adds it, built by docs/gen_catalog.py, so the
published catalog always lists exactly the ops the code registers.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys

from mkdocs.structure.files import File

DOCS = pathlib.Path(__file__).resolve().parent
ROOT = DOCS.parent
CATALOG = "ops/catalog.md"


def _generator():
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))           # import pypto from this checkout
    spec = importlib.util.spec_from_file_location("gen_catalog", DOCS / "gen_catalog.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def on_files(files, config):
    existing = files.get_file_from_path(CATALOG)
    if existing is not None:
        files.remove(existing)
    files.append(File.generated(config, CATALOG, content=_generator().catalog_markdown()))
    return files
