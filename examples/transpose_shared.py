"""Transpose through shared memory (docs/authoring.md, step 2): coalesced reads and writes; the column read
of the 32x32 tile puts all 32 lanes of a warp in one bank (32-way conflicts, 31 extra wavefronts)."""

from gpusim.authoring import Barrier, Compute, Kernel, Launch, Loop, Mem, Tensor, register, require_divisible

F32 = 4
TILE, ROWS = 32, 8


def transpose_tiled(name: str, shape, pad: int, regs: int):
    """The shared-memory transpose with rows of ``TILE + pad`` floats (pad 1: the padded version)."""
    (n,) = shape
    require_divisible(name, "N", n, "TILE", TILE)
    row = TILE + pad

    def ld_in(c):  # in[(y + k) * n + x]
        return ((c.by * TILE + c.ty + ROWS * c.r) * n + c.bx * TILE + c.tx) * F32

    def st_tile(c):  # tile[ty + k][tx]
        return ((c.ty + ROWS * c.r) * row + c.tx) * F32

    def ld_tile(c):  # tile[tx][ty + k]: a column of the tile
        return (c.tx * row + c.ty + ROWS * c.r) * F32

    def st_out(c):  # out[(bx * 32 + ty + k) * n + by * 32 + tx]
        return ((c.bx * TILE + c.ty + ROWS * c.r) * n + c.by * TILE + c.tx) * F32

    body = (
        Compute("addr", "int32", 14, ilp=4),
        Mem("ld_in", "global", "ld", F32, ld_in, "in", repeat=4, after=("addr",)),  # 4 LDG
        Compute("addr_s", "int32", 6, ilp=2),
        Mem("st_tile", "shared", "st", F32, st_tile, repeat=4, after=("ld_in", "addr_s")),  # 4 STS
        Barrier(),  # BAR.SYNC
        Mem("ld_tile", "shared", "ld", F32, ld_tile, repeat=4),  # 4 LDS
        Mem("st_out", "global", "st", F32, st_out, "out", repeat=4, after=("ld_tile",)),  # 4 STG
    )
    return Kernel(name, shape, Launch((n // TILE, n // TILE, 1), (TILE, ROWS, 1), regs, TILE * row * F32),
                  tensors=(Tensor("in", n * n * F32), Tensor("out", n * n * F32)), loop=Loop(1, body))


@register("example_transpose_shared", shape_names=("N",), source="transpose.cu:transpose_shared")
def build(shape):
    return transpose_tiled("example_transpose_shared", shape, pad=0, regs=28)
