"""Naive transpose for any N (docs/authoring.md, step 6): the grid rounds up, so the last block of each grid
dimension is a partial tile, and every access sits behind a bounds guard (``if (x < n && y + k < n)``). Lanes
outside the matrix are inactive (address -1); nvcc predicates the loads and stores (three of four: the first
guard fails to an early EXIT), so every warp still issues them (``predicated=True``). gpusim gives the partial
blocks their own access counts."""

import numpy as np

from gpusim.authoring import Compute, Kernel, Launch, Loop, Mem, Tensor, register

F32 = 4
TILE, ROWS = 32, 8  # a 32x32 tile per block, 32x8 threads, 4 elements per thread


@register("example_transpose_guarded", shape_names=("N",), source="transpose.cu:transpose_guarded")
def build(shape):
    (n,) = shape
    blocks = -(-n // TILE)

    def inside(c):  # the guard: x < n and y + k < n
        return (c.bx * TILE + c.tx < n) & (c.by * TILE + c.ty + ROWS * c.r < n)

    def src(c):  # in[(y + k) * n + x]
        return np.where(inside(c), ((c.by * TILE + c.ty + ROWS * c.r) * n + c.bx * TILE + c.tx) * F32, -1)

    def dst(c):  # out[x * n + y + k]
        return np.where(inside(c), ((c.bx * TILE + c.tx) * n + c.by * TILE + c.ty + ROWS * c.r) * F32, -1)

    body = (
        Compute("addr", "int32", 30, ilp=4),  # gpusim sass: IMAD 10, IADD3 3, LEA 2, ISETP 5, S2R 4, LDC 6
        Mem("ld_in", "global", "ld", F32, src, "in", repeat=4, after=("addr",), predicated=True),
        Mem("st_out", "global", "st", F32, dst, "out", repeat=4, after=("ld_in",), predicated=True),
    )
    return Kernel("example_transpose_guarded", shape,
                  Launch(grid=(blocks, blocks, 1), block=(TILE, ROWS, 1), regs_per_thread=18, smem_bytes=0),
                  tensors=(Tensor("in", n * n * F32), Tensor("out", n * n * F32)), loop=Loop(1, body))
