"""The reference's examples/distributed/04_barrier.py shape, written with @pl.jit.host (2 ranks)."""

import pypto.language as pl
import pypto.language.distributed as pld

N_RANKS = 2
SIZE = 64


@pl.jit.incore
def barrier_handrolled(y: pl.Out[pl.Tensor[[N_RANKS, 1], pl.INT32]],
                       signal: pld.DistributedTensor[[N_RANKS, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(signal)
    my_rank = pld.rank(ctx)
    for peer in pl.range(N_RANKS):
        if peer != my_rank:
            pld.system.notify(signal, peer=peer, offsets=[my_rank, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    for src in pl.range(N_RANKS):
        if src != my_rank:
            pld.system.wait(signal, offsets=[src, 0], expected=1, cmp=pld.WaitCmp.Ge)
    for i in pl.range(N_RANKS):
        val = pl.read(signal, [i, 0])
        pl.write(y, [i, 0], val)
    return y


@pl.jit.incore
def barrier_builtin(x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
                    data: pld.DistributedTensor[[1, SIZE], pl.FP32],
                    signal: pld.DistributedTensor[[N_RANKS, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(data)
    my_rank = pld.rank(ctx)
    nranks = pld.nranks(ctx)
    local = pl.load(x, [0, 0], [1, SIZE])
    data = pl.store(local, [0, 0], data)
    signal = pld.tensor.barrier(signal)
    peer = (my_rank + 1) % nranks
    recv = pld.tile.remote_load(data, peer=peer, offsets=[0, 0], shape=[1, SIZE])
    y = pl.store(recv, [0, 0], y)
    return y


@pl.jit
def per_rank_hand(y: pl.Out[pl.Tensor[[N_RANKS, 1], pl.INT32]],
                  signal: pld.DistributedTensor[[N_RANKS, 1], pl.INT32]):
    return barrier_handrolled(y, signal)


@pl.jit
def per_rank_builtin(x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
                     data: pld.DistributedTensor[[1, SIZE], pl.FP32],
                     signal: pld.DistributedTensor[[N_RANKS, 1], pl.INT32]):
    return barrier_builtin(x, y, data, signal)


@pl.jit.host
def barrier_program_hand(y: pl.Out[pl.Tensor[[N_RANKS, N_RANKS, 1], pl.INT32]]):
    signal_buf = pld.alloc_window_buffer([N_RANKS, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        signal = pld.window(signal_buf, [N_RANKS, 1], dtype=pl.INT32)
        per_rank_hand(y[r], signal, device=r)


@pl.jit.host
def barrier_program_builtin(x: pl.Tensor[[N_RANKS, 1, SIZE], pl.FP32],
                            y: pl.Out[pl.Tensor[[N_RANKS, 1, SIZE], pl.FP32]]):
    data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([N_RANKS, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(signal_buf, [N_RANKS, 1], dtype=pl.INT32)
        per_rank_builtin(x[r], y[r], data, signal, device=r)
