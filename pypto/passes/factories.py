"""The reference's `passes.<snake_name>()` spelling on the `pypto.passes` package.

Each pass lives in a submodule named after its factory (`pypto.passes.convert_to_ssa` defines
`convert_to_ssa()`), so `passes.convert_to_ssa` is that submodule. `PassesPackage` (the class of
the `pypto.passes` module object) makes such a submodule callable on access: calling it calls
its factory, and `import pypto.passes.convert_to_ssa as m` keeps giving the module. Names that are
not submodules (`run_verifier`, `unroll_loops`) are defined here and reached
through the package's `__getattr__`.

    from pypto import passes
    program = passes.convert_to_ssa()(program)
"""

from __future__ import annotations

import types

from pypto.passes.base import Pass
from pypto.passes.instruments import verify_properties
from pypto.passes.properties import IRProperty, PassProperties


class PassModule(types.ModuleType):
    """A pass submodule that can be called like its same-named factory."""

    def __call__(self, *args, **kwargs):
        return getattr(self, self.__name__.rsplit(".", 1)[1])(*args, **kwargs)


class PassesPackage(types.ModuleType):
    """The class of `pypto.passes`: submodules with a same-named factory become PassModules when read."""

    def __getattribute__(self, name):
        value = super().__getattribute__(name)
        if type(value) is types.ModuleType and callable(value.__dict__.get(name)):
            value.__class__ = PassModule
        return value


def run_verifier(properties=None) -> Pass:
    """A pass that checks `properties` (default: TypeChecked and SSAForm) and returns the program unchanged."""
    props = frozenset(properties) if properties is not None else frozenset({IRProperty.TypeChecked,
                                                                            IRProperty.SSAForm})

    def run(program):
        verify_properties(props, program, "RunVerifier")
        return program

    return Pass("RunVerifier", run, PassProperties())


def unroll_loops() -> Pass:
    """Expand every `pl.unroll` loop with constant bounds into copies of its body (see unroll.py)."""
    from pypto.passes.unroll import unroll_program
    return Pass("UnrollLoops", unroll_program, PassProperties())
