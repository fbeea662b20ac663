"""Memory-bound kernels: a float4 copy and the three classic matrix transposes (naive, through a shared tile, the
tile padded). Nobody shaped the model around them: they test the chip's memory side (HBM reads and writes, the
store path with 32 sectors per request, write-back, L2 capacity) and teach the transpose lesson (naive slowest,
padded fastest).

Instruction mixes are counted in the twins' SASS (``nvcc 13.0 -cubin -arch=sm_90``, ``cuobjdump -sass``):
integer, address and control instructions (LDC, S2R, IMAD, LEA, SHF, MOV, EXIT) as ``Compute("int32")`` where
the SASS has them. Registers and shared memory from ``ptxas -v``. Shapes: ``N`` floats (copy, a multiple of
1024) and an ``N x N`` float matrix (transposes, a multiple of 32).
"""

from __future__ import annotations

from gpusim.ir import Barrier, Compute, Kernel, Launch, Mem, Tensor, register, require_divisible

F32 = 4
TILE, ROWS = 32, 8  # 32x32 tiles moved by 32x8 threads, 4 rows each


def _twin(name: str) -> str:
    return f"validate/kernels/{name}.cu"


def _ints(name: str, count: int) -> Compute:
    return Compute(name, "int32", count, count)


@register("mem_copy", "membound", ("N",), {}, _twin("mem_copy"))
def mem_copy(shape):
    """Copy N floats as float4, one per thread (256 per block): STREAM copy."""
    (n,) = shape
    require_divisible("mem_copy", "N", n, "4 x 256", 1024)
    # SASS: 9 (LDC, S2R, S2UR, IMAD, IMAD.WIDE) before LDG.E.128, IMAD.WIDE, STG.E.128, EXIT
    addr = lambda c: (c.bx * 256 + c.tid) * 16  # noqa: E731
    body = (_ints("addr", 9), Mem("ldX", "global", "ld", 16, addr, "x"),
            _ints("addr_st", 1), Mem("stY", "global", "st", 16, addr, "y", after=("ldX",)), _ints("exit", 1))
    return Kernel("mem_copy", "membound", shape, {}, Launch((n // 1024, 1, 1), (256, 1, 1), 14, 0), body, None, (),
                  (Tensor("x", n * F32), Tensor("y", n * F32)), 0, _twin("mem_copy"))


def _tensors(n: int) -> tuple[Tensor, ...]:
    return Tensor("in", n * n * F32), Tensor("out", n * n * F32)


def _check(name: str, shape) -> int:
    (n,) = shape
    require_divisible(name, "N", n, "the tile", TILE)
    return n


@register("mem_transpose_naive", "membound", ("N",), {}, _twin("mem_transpose_naive"))
def mem_transpose_naive(shape):
    """Transpose N x N floats directly: coalesced loads, stores down a column (32 sectors per request)."""
    n = _check("mem_transpose_naive", shape)
    # SASS: 15 address instructions, 4 LDG with 2 IMAD.WIDE among them, IMAD + IMAD.WIDE, 4 STG (+0x20 steps), EXIT
    ld = Mem("ldIn", "global", "ld", F32,
             lambda c: ((c.by * TILE + c.ty + ROWS * c.r) * n + c.bx * TILE + c.tx) * F32, "in", repeat=4)
    st = Mem("stOut", "global", "st", F32,
             lambda c: ((c.bx * TILE + c.tx) * n + c.by * TILE + c.ty + ROWS * c.r) * F32, "out", repeat=4,
             after=("ldIn",))
    body = (_ints("addr", 17), ld, _ints("addr_st", 2), st, _ints("exit", 1))
    return Kernel("mem_transpose_naive", "membound", shape, {}, Launch((n // TILE, n // TILE, 1), (TILE, ROWS, 1),
                  16, 0), body, None, (), _tensors(n), 0, _twin("mem_transpose_naive"))


def _tiled(name: str, shape, pitch: int) -> Kernel:
    n = _check(name, shape)
    # SASS: 13 address instructions, 4 LDG, 17 (shared addresses of both phases, output addresses), 4 STS,
    # BAR.SYNC, 4 LDS, IMAD.WIDE, 4 STG, EXIT
    ld = Mem("ldIn", "global", "ld", F32,
             lambda c: ((c.by * TILE + c.ty + ROWS * c.r) * n + c.bx * TILE + c.tx) * F32, "in", repeat=4)
    sts = Mem("stsTile", "shared", "st", F32, lambda c: ((c.ty + ROWS * c.r) * pitch + c.tx) * F32, repeat=4,
              after=("ldIn",))
    lds = Mem("ldsTile", "shared", "ld", F32, lambda c: (c.tx * pitch + c.ty + ROWS * c.r) * F32, repeat=4)
    st = Mem("stOut", "global", "st", F32,
             lambda c: ((c.bx * TILE + c.ty + ROWS * c.r) * n + c.by * TILE + c.tx) * F32, "out", repeat=4,
             after=("ldsTile",))
    body = (_ints("addr", 13), ld, _ints("addr_sts", 17), sts, Barrier(), lds, _ints("addr_st", 1), st,
            _ints("exit", 1))
    smem = TILE * pitch * F32
    return Kernel(name, "membound", shape, {}, Launch((n // TILE, n // TILE, 1), (TILE, ROWS, 1), 28, smem), body,
                  None, (), _tensors(n), 0, _twin(name))


@register("mem_transpose_shared", "membound", ("N",), {}, _twin("mem_transpose_shared"))
def mem_transpose_shared(shape):
    """Transpose through a 32x32 shared tile: coalesced both ways, 32-way bank conflicts on the column read."""
    return _tiled("mem_transpose_shared", shape, TILE)


@register("mem_transpose_padded", "membound", ("N",), {}, _twin("mem_transpose_padded"))
def mem_transpose_padded(shape):
    """As mem_transpose_shared with the tile padded to 33 columns: no bank conflicts."""
    return _tiled("mem_transpose_padded", shape, TILE + 1)
