"""Debugging tools for kernel authors: swimlane timelines, pass-by-pass numeric bisection, the IR
trace viewer and the memory map (each a module; the CLI wraps them as `pypto bisect`,
`pypto trace-ir`, `pypto memory-map`)."""
