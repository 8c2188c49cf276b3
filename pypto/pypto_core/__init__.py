"""Compatibility namespace for the documented import paths (`from pypto.pypto_core import passes`);
`passes` resolves its names on first use (pypto.lazy_exports)."""

from pypto.pypto_core import passes  # noqa: F401
