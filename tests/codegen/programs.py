"""Programs the codegen tests compile: a mixed cube + vector kernel, loops with carries, SPMD identity."""

import pypto.language as pl


@pl.program
class MixedMatmulRelu:
    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, x: pl.Tensor[[16, 128], pl.BF16], y: pl.Tensor[[128, 128], pl.BF16],
           out_0: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        x_mat: pl.Tile[[16, 128], pl.BF16, pl.Mem.Mat] = pl.load(x, [0, 0], [16, 128], target_memory=pl.Mem.Mat)
        y_mat: pl.Tile[[128, 128], pl.BF16, pl.Mem.Mat] = pl.load(y, [0, 0], [128, 128], target_memory=pl.Mem.Mat)
        x_left: pl.Tile[[16, 128], pl.BF16, pl.Mem.Left] = pl.move(x_mat, target_memory=pl.Mem.Left)
        y_right: pl.Tile[[128, 128], pl.BF16, pl.Mem.Right] = pl.move(y_mat, target_memory=pl.Mem.Right)
        z_tile: pl.Tile[[16, 128], pl.FP32, pl.Mem.Acc] = pl.matmul(x_left, y_right)
        z_vec: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.move(z_tile, target_memory=pl.Mem.Vec)
        r = pl.relu(z_vec)
        out_0 = pl.store(r, [0, 0], out_0)
        return out_0

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 128], pl.BF16],
             y: pl.Tensor[[128, 128], pl.BF16]) -> pl.Tensor[[16, 128], pl.FP32]:
        out_0 = pl.create_tensor([16, 128], dtype=pl.FP32)
        out_0 = self.mm(x, y, out_0)
        return out_0


@pl.program
class LoopCarries:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32],
          out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        acc = pl.load(x, [0, 0], [64, 64])
        s: pl.Scalar[pl.FP32] = 0.0
        for i in pl.range(4):
            t = pl.load(x, [0, 0], [64, 64])
            acc = pl.add(acc, t)
            s = s + 1.0
            if i < 2:
                acc = pl.muls(acc, 2.0)
        acc = pl.adds(acc, s)
        out = pl.store(acc, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        out = self.k(x, out)
        return out


@pl.program
class ManyOps:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32],
          out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        b = pl.tile.get_block_idx()
        t = pl.load(x, [0, 0], [64, 64])
        tmp = pl.create_tile([64, 64], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        m: pl.Tile[[64, 1], pl.FP32] = pl.row_max(t, tmp)
        e = pl.exp(pl.row_expand_sub(t, m))
        c2 = pl.cast(pl.cast(e, target_type=pl.FP16), target_type=pl.FP32)
        v = pl.tile.read(c2, [0, 1])
        f = pl.muls(c2, v)
        sl = pl.tile.slice(f, [32, 64], [32, 0])
        out = pl.store(sl, [b, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        out = self.k(x, out)
        return out


M = pl.dynamic("M")


@pl.program
class DynamicRows:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[M, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[M, 64], pl.FP32]]) -> pl.Tensor[[M, 64], pl.FP32]:
        for i in pl.range(n):
            t = pl.exp(pl.load(x, [i * 16, 0], [16, 64]))
            out = pl.store(t, [i * 16, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[M, 64], pl.FP32]]) -> pl.Tensor[[M, 64], pl.FP32]:
        out = self.k(x, 4, out)
        return out


@pl.program
class SpmdBlocks:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[128, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        with pl.spmd(4, sync_start=True):
            with pl.at(level=pl.Level.CORE_GROUP):
                b: pl.Scalar[pl.INDEX] = pl.tile.get_block_idx()
                t: pl.Tensor[[32, 64], pl.FP32] = pl.slice(x, [32, 64], [b * 32, 0])
                out = pl.assemble(out, pl.adds(t, 1.0), [b * 32, 0])
        return out


@pl.program
class TwoEntries:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[32, 32], pl.FP32], k: pl.Scalar[pl.FP32],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        out = pl.store(pl.muls(pl.load(x, [0, 0], [32, 32]), k), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def double(self, x: pl.Tensor[[32, 32], pl.FP32],
               out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        out = self.scale(x, 2.0, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def triple(self, x: pl.Tensor[[32, 32], pl.FP32],
               out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        out = self.scale(x, 3.0, out)
        return out


@pl.program
class WhileCount:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 64])
        i: pl.Scalar[pl.INDEX] = 0
        while i < n:
            t = pl.adds(t, 1.0)
            i = i + 1
        out = pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        out = self.k(x, 3, out)
        return out


@pl.program
class ColumnVector:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32],
          out: pl.Out[pl.Tensor[[64, 1], pl.FP32]]) -> pl.Tensor[[64, 1], pl.FP32]:
        t = pl.load(x, [0, 0], [64, 64])
        tmp = pl.create_tile([64, 64], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        s: pl.Tile[[64, 1], pl.FP32] = pl.row_sum(t, tmp)
        out = pl.store(s, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 1], pl.FP32]]) -> pl.Tensor[[64, 1], pl.FP32]:
        out = self.k(x, out)
        return out


@pl.program
class Rank3:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[2, 16, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[2, 16, 32], pl.FP32]]) -> pl.Tensor[[2, 16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            y: pl.Tensor[[2, 16, 32], pl.FP32] = pl.add(pl.exp(x), x)
            out = pl.assemble(out, y, [0, 0, 0])
        return out


@pl.program
class RuntimeValidRows:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [64, 64], valid_shapes=[n, 64])
        out = pl.store(pl.exp(t), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        out = self.k(x, 16, out)
        return out
