"""The reference's tool entry points (`python -m pypto.tools.memory_map ...`), over pypto.debug."""
