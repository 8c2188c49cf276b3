"""Buffer planning: the memory passes of the pipeline and the helpers only they use.

- InitMemRef (`init_mem_ref`): one MemRef per tile; loop carries share one (`loop_carry_buffers`),
  DDR tensors get theirs (`ddr_memrefs`).
- MaterializeSemanticAliases (`materialize_semantic_aliases`): values that must be one buffer share it.
- MemoryReuse (`memory_reuse`): tiles whose lifetimes (`memory_lifetimes`) do not overlap share an allocation.
- AllocateMemoryAddr (`allocate_memory_addr`): addresses in each space, checked against its capacity.

    from pypto.passes.memory.init_mem_ref import init_mem_ref
"""
