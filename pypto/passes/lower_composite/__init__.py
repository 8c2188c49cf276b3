"""The rules of LowerCompositeOps (the pass entry is pypto/passes/lower_composite_ops.py).

    builder.py   LoweringBuilder: per-call statements, primitive op helpers, structured control flow
    rules.py     the read-only op name → rule table
    trig.py      tile.sin / tile.cos (Cody-Waite + Horner)
    select.py    tile.select (packed mask + TSEL / TSELS), scratch.py its backend scratch plans
    mx.py        tile.tquant_mx (packed MX quantization)
"""
