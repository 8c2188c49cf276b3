"""The DSL op layer: the parser turns every `pl.<path>(...)` op call into IR through `build_call`.

    from pypto.language.ops import build_call, is_dsl_op
    if is_dsl_op("add"):
        expr = build_call("add", [a, b], {}, span)    # tile.add / tensor.add / tile.adds / BinaryExpr
"""

from pypto.language.ops.dispatch import ALIASES, build_call, dsl_op_paths, is_dsl_op

# Every accepted path at import time (is_dsl_op also sees ops registered later).
DSL_OP_PATHS = dsl_op_paths()

__all__ = ["ALIASES", "DSL_OP_PATHS", "build_call", "dsl_op_paths", "is_dsl_op"]
