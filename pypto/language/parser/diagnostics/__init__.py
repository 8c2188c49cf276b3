"""Parser diagnostics: the ParserError family (exceptions.py) and how it is shown (renderer.py).

    error: Undefined variable 'tmp'
      --> kernel.py:12:19
       |
    12 |         y = pl.add(x, tmp)
       |                       ^^^
       = help: define it before use, or pass it as a parameter
"""

from pypto.language.parser.diagnostics.exceptions import (InvalidOperationError, ParserError, ParserSyntaxError,
                                                          ParserTypeError, ScopeIsolationError, SSAViolationError,
                                                          UndefinedVariableError, UnsupportedFeatureError,
                                                          did_you_mean)
from pypto.language.parser.diagnostics.renderer import colorize, install_excepthook

__all__ = ["InvalidOperationError", "ParserError", "ParserSyntaxError", "ParserTypeError", "ScopeIsolationError",
           "SSAViolationError", "UndefinedVariableError", "UnsupportedFeatureError", "did_you_mean", "colorize",
           "install_excepthook"]
