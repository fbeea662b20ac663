"""Naive transpose (docs/authoring.md, step 1): reads rows of ``in`` (coalesced), writes columns of ``out``
(each lane of a warp writes a different row: 32 sectors per request)."""

from gpusim.authoring import Compute, Kernel, Launch, Loop, Mem, Tensor, register, require_divisible

F32 = 4
TILE, ROWS = 32, 8  # a 32x32 tile per block, 32x8 threads, 4 elements per thread


@register("example_transpose_naive", shape_names=("N",), source="transpose.cu:transpose_naive")
def build(shape):
    (n,) = shape
    require_divisible("example_transpose_naive", "N", n, "TILE", TILE)

    def src(c):  # in[(y + k) * n + x], k = 8 * r
        return ((c.by * TILE + c.ty + ROWS * c.r) * n + c.bx * TILE + c.tx) * F32

    def dst(c):  # out[x * n + y + k]
        return ((c.bx * TILE + c.tx) * n + c.by * TILE + c.ty + ROWS * c.r) * F32

    body = (
        Compute("addr", "int32", 14, ilp=4),  # S2R/LEA/IMAD address arithmetic before the loads (SASS)
        Mem("ld_in", "global", "ld", F32, src, "in", repeat=4, after=("addr",)),  # 4 LDG.E.CONSTANT
        Mem("st_out", "global", "st", F32, dst, "out", repeat=4, after=("ld_in",)),  # 4 STG.E
    )
    return Kernel("example_transpose_naive", shape,
                  Launch(grid=(n // TILE, n // TILE, 1), block=(TILE, ROWS, 1), regs_per_thread=16, smem_bytes=0),
                  tensors=(Tensor("in", n * n * F32), Tensor("out", n * n * F32)), loop=Loop(1, body))
