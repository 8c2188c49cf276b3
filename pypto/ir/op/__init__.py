"""`pypto.ir.op`: Python builders of op calls, one module per family (the reference's `ir.op` API).

    from pypto.ir.op import tensor, tile
    y = tensor.add(x, x)                      # Call of tensor.add, typed by the op's rule
    t = tile.load(x, [0, 0], [16, 16])        # the same positional / keyword forms as pl.tile.load

Each builder forwards to the DSL op layer (`pypto.language.ops.build_call`), so argument
handling, defaults and type checks are those of `pl.<family>.<op>(...)` — one op table for both.
`tile_ops` / `tensor_ops` are the reference's module names for the same families; `pld` holds
the distributed families (`pld.tensor.put`, `pld.tile.remote_load`, `pld.system.notify`, ...).
"""
