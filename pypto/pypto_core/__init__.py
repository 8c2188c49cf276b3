"""Compatibility namespace for the documented import paths (`from pypto.pypto_core import passes`)."""

from pypto.pypto_core import passes  # noqa: F401
