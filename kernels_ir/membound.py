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

import numpy as np

from gpusim.ir import Barrier, Compute, Kernel, Launch, Loop, Mem, Tensor, register, require_divisible

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


def _tiled(name: str, shape, pitch: int, swizzled: bool = False, ints=(13, 17), regs: int = 28) -> Kernel:
    """A transpose through a 32-wide shared tile of ``pitch`` words per row, the column XOR-swizzled by the row
    when ``swizzled``. ``ints``: the SASS's integer instructions before the loads and between them and the
    shared stores (shared addresses of both phases, output addresses)."""
    n = _check(name, shape)

    def slot(row, col):  # word of the tile that holds (row, col)
        return row * pitch + (col ^ row if swizzled else col)

    # SASS: the address instructions, 4 LDG, the shared and output addresses, 4 STS, BAR.SYNC, 4 LDS, IMAD.WIDE,
    # 4 STG, EXIT
    ld = Mem("ldIn", "global", "ld", F32,
             lambda c: ((c.by * TILE + c.ty + ROWS * c.r) * n + c.bx * TILE + c.tx) * F32, "in", repeat=4)
    sts = Mem("stsTile", "shared", "st", F32, lambda c: slot(c.ty + ROWS * c.r, c.tx) * F32, repeat=4,
              after=("ldIn",))
    lds = Mem("ldsTile", "shared", "ld", F32, lambda c: slot(c.tx, c.ty + ROWS * c.r) * F32, repeat=4)
    st = Mem("stOut", "global", "st", F32,
             lambda c: ((c.bx * TILE + c.ty + ROWS * c.r) * n + c.by * TILE + c.tx) * F32, "out", repeat=4,
             after=("ldsTile",))
    body = (_ints("addr", ints[0]), ld, _ints("addr_sts", ints[1]), sts, Barrier(), lds, _ints("addr_st", 1), st,
            _ints("exit", 1))
    smem = TILE * pitch * F32
    return Kernel(name, "membound", shape, {}, Launch((n // TILE, n // TILE, 1), (TILE, ROWS, 1), regs, smem), body,
                  None, (), _tensors(n), 0, _twin(name))


@register("mem_transpose_shared", "membound", ("N",), {}, _twin("mem_transpose_shared"))
def mem_transpose_shared(shape):
    """Transpose through a 32x32 shared tile: coalesced both ways, 32-way bank conflicts on the column read."""
    return _tiled("mem_transpose_shared", shape, TILE)


@register("mem_transpose_padded", "membound", ("N",), {}, _twin("mem_transpose_padded"))
def mem_transpose_padded(shape):
    """As mem_transpose_shared with the tile padded to 33 columns: no bank conflicts."""
    return _tiled("mem_transpose_padded", shape, TILE + 1)


def _guarded(n: int, transposed: bool, word):
    """An address function of the guarded twins: this thread's element (row, col) of its tile (the block's tile, or
    the transposed block's when ``transposed``), at ``word(c, row, col)`` when the N x N matrix has it, else an
    inactive lane (the twins' bounds guard)."""
    def addr(c):
        tile_row, tile_col = (c.bx, c.by) if transposed else (c.by, c.bx)
        row, col = tile_row * TILE + c.ty + ROWS * c.r, tile_col * TILE + c.tx
        return np.where((col < n) & (row < n), word(c, row, col) * F32, -1)
    return addr


@register("mem_transpose_naive_guarded", "membound", ("N",), {}, _twin("mem_transpose_naive_guarded"))
def mem_transpose_naive_guarded(shape):
    """The naive transpose for any N: ceil(N/32) blocks per side, each element behind a bounds guard, so the last
    block row and column are partial tiles (their own access counts)."""
    (n,) = shape
    blocks = -(-n // TILE)
    # SASS (18 registers): 32 integer instructions (S2R, LEA, IADD3, ISETP, LDC, IMAD), the first guard an early
    # EXIT, the other three predicating their LDG/STG pair: every warp issues the four
    ld = Mem("ldIn", "global", "ld", F32, _guarded(n, False, lambda c, row, col: row * n + col), "in", repeat=4,
             predicated=True)
    st = Mem("stOut", "global", "st", F32, _guarded(n, False, lambda c, row, col: col * n + row), "out", repeat=4,
             after=("ldIn",), predicated=True)
    body = (_ints("addr", 28), ld, _ints("addr_st", 3), st, _ints("exit", 1))
    return Kernel("mem_transpose_naive_guarded", "membound", shape, {},
                  Launch((blocks, blocks, 1), (TILE, ROWS, 1), 18, 0), body, None, (), _tensors(n), 0,
                  _twin("mem_transpose_naive_guarded"))


@register("mem_transpose_padded_guarded", "membound", ("N",), {}, _twin("mem_transpose_padded_guarded"))
def mem_transpose_padded_guarded(shape):
    """The padded shared-tile transpose for any N: ceil(N/32) blocks per side, loads into the tile and stores out
    of it behind bounds guards (partial tiles in the last block row and column)."""
    (n,) = shape
    blocks = -(-n // TILE)
    pitch = TILE + 1
    # SASS (26 registers, 4224 B shared): 29 integer instructions before the four predicated LDG, 21 before the
    # four predicated STS, BAR.SYNC, 8 among the four LDS and STG (predicated, the last pair after an EXIT)
    src = _guarded(n, False, lambda c, row, col: row * n + col)
    sts = _guarded(n, False, lambda c, row, col: (c.ty + ROWS * c.r) * pitch + c.tx)
    lds = _guarded(n, True, lambda c, row, col: c.tx * pitch + c.ty + ROWS * c.r)
    dst = _guarded(n, True, lambda c, row, col: row * n + col)
    body = (_ints("addr", 29), Mem("ldIn", "global", "ld", F32, src, "in", repeat=4, predicated=True),
            _ints("addr_sts", 21),
            Mem("stsTile", "shared", "st", F32, sts, repeat=4, after=("ldIn",), predicated=True), Barrier(),
            Mem("ldsTile", "shared", "ld", F32, lds, repeat=4, predicated=True), _ints("addr_st", 8),
            Mem("stOut", "global", "st", F32, dst, "out", repeat=4, after=("ldsTile",), predicated=True),
            _ints("exit", 1))
    return Kernel("mem_transpose_padded_guarded", "membound", shape, {},
                  Launch((blocks, blocks, 1), (TILE, ROWS, 1), 26, TILE * pitch * F32), body, None, (), _tensors(n),
                  0, _twin("mem_transpose_padded_guarded"))


# STREAM scale / add / triad: one float4 per thread, 256 threads per block (instruction mixes from the SASS)
def _stream(name: str, shape, loads: int, pre: int, fp: str, regs: int) -> Kernel:
    (n,) = shape
    require_divisible(name, "N", n, "4 x 256", 1024)
    addr = lambda c: (c.bx * 256 + c.tid) * 16  # noqa: E731
    srcs = ("a", "b")[:loads] if loads > 1 else ("x",)
    ld = tuple(Mem(f"ld_{t}", "global", "ld", 16, addr, t) for t in srcs)
    body = (_ints("addr", pre), *ld, _ints("addr_st", 1),
            Compute("math", "fp32", 4, 4, after=tuple(o.name for o in ld)),
            Mem("st", "global", "st", 16, addr, "out", after=("math",)), _ints("exit", 1))
    tensors = tuple(Tensor(t, n * F32) for t in srcs) + (Tensor("out", n * F32),)
    return Kernel(name, "membound", shape, {}, Launch((n // 1024, 1, 1), (256, 1, 1), regs, 0), body, None, (),
                  tensors, n * (2 if fp == "ffma" else 1), _twin(name))


@register("mem_scale", "membound", ("N",), {}, _twin("mem_scale"))
def mem_scale(shape):
    """STREAM scale y = s*x over N floats, one float4 per thread."""
    # SASS: 9 (LDC, S2R, ULDC, LEA, IMAD.WIDE) before LDG.E.128, IMAD.WIDE, 4 FMUL, STG.E.128, EXIT; 14 registers
    return _stream("mem_scale", shape, 1, 9, "fmul", 14)


@register("mem_add", "membound", ("N",), {}, _twin("mem_add"))
def mem_add(shape):
    """STREAM add c = a + b over N floats, one float4 per thread."""
    # SASS: 10 before the two LDG.E.128, IMAD.WIDE, 4 FADD, STG.E.128, EXIT; 22 registers
    return _stream("mem_add", shape, 2, 10, "fadd", 22)


@register("mem_triad", "membound", ("N",), {}, _twin("mem_triad"))
def mem_triad(shape):
    """STREAM triad a = b + s*c over N floats, one float4 per thread."""
    # SASS: 11 before the two LDG.E.128, IMAD.WIDE, 4 FFMA, STG.E.128, EXIT; 22 registers
    return _stream("mem_triad", shape, 2, 11, "ffma", 22)


@register("mem_transpose_swizzled", "membound", ("N",), {}, _twin("mem_transpose_swizzled"))
def mem_transpose_swizzled(shape):
    """Transpose through an unpadded 32x32 shared tile, columns XOR-swizzled by row: no bank conflicts."""
    # SASS: 16 address instructions with the 3 IMAD.WIDE among the 4 LDG, 25 for the swizzled shared addresses of
    # both phases and the output addresses; 26 registers
    return _tiled("mem_transpose_swizzled", shape, TILE, swizzled=True, ints=(16, 25), regs=26)


# Block reductions (Harris): 256 threads sum their block's floats into one partial sum per block
RED = 256


def _guard(c, on, addr):
    return np.where(on, addr, -1)


def _reduce_tree(name: str, shape, interleaved: bool) -> Kernel:
    (n,) = shape
    require_divisible(name, "N", n, "the block", RED)

    def pair(c):  # (this thread's slot, the slot it adds) at step j, and whether the thread takes part
        if interleaved:
            s = 1 << c.j
            return 2 * s * c.tid, 2 * s * c.tid + s, 2 * s * c.tid < RED
        s = (RED // 2) >> c.j
        return c.tid, c.tid + s, c.tid < s

    def mine(c):
        a, _, on = pair(c)
        return _guard(c, on, a * F32)

    def other(c):
        _, b, on = pair(c)
        return _guard(c, on, b * F32)

    # every step is unrolled and predicated (@!P LDS/FADD/STS): all 8 warps issue it, whoever is on. SASS
    # (nvcc 13.0): interleaved, 17 ISETP/SHL/LEA among the 8 steps' 39 modelled instructions (the first step's LDS
    # pair is one LDS.64: modelled as two, so 2 per step makes the 56); sequential, one ISETP in steps 1-6 only
    cmp = _ints("cmp", 2) if interleaved else Compute("cmp", "int32", 1, 1, when=lambda w, j: 1 <= j <= 6)
    step = (cmp, Mem("lds_mine", "shared", "ld", F32, mine, predicated=True),
            Mem("lds_other", "shared", "ld", F32, other, predicated=True),
            Compute("add", "fp32", 1, after=("lds_mine", "lds_other")),
            Mem("sts_sum", "shared", "st", F32, mine, after=("add",), predicated=True), Barrier())
    # SASS before the steps: LDC, S2R x2, LDC.64, ULDC, IMAD/LEA, IMAD.WIDE before the LDG; after it S2UR, UMOV,
    # ULEA, the ISETPs (and SHLs) of the first steps and the LEAs of their addresses: 9 (interleaved), 6 (sequential)
    body = (_ints("addr", 7), Mem("ld_in", "global", "ld", F32, lambda c: (c.bx * RED + c.tid) * F32, "in"),
            _ints("addr_sts", 9 if interleaved else 6),
            Mem("sts_first", "shared", "st", F32, lambda c: c.tid * F32, after=("ld_in",)), Barrier(),
            Loop(8, step, var="j"),
            _ints("exit_test", 1),  # @P0 EXIT: every warp; warp 0 goes on (thread 0 stores the block's sum)
            Mem("lds_total", "shared", "ld", F32, lambda c: _guard(c, c.tid == 0, 0)),
            Compute("addr_out", "int32", 2, 2, warps=(0,)),  # LDC.64, IMAD.WIDE
            Mem("st_out", "global", "st", F32, lambda c: _guard(c, c.tid == 0, c.bx * F32), "out",
                after=("lds_total",)), Compute("exit", "int32", 1, 1, warps=(0,)))
    return Kernel(name, "membound", shape, {}, Launch((n // RED, 1, 1), (RED, 1, 1), 12, RED * F32), body, None,
                  (), (Tensor("in", n * F32), Tensor("out", n // RED * F32)), n - n // RED, _twin(name))


@register("mem_reduce_interleaved", "membound", ("N",), {}, _twin("mem_reduce_interleaved"))
def mem_reduce_interleaved(shape):
    """Block reduction, interleaved addressing (Harris 2): sdata[2*s*tid] += sdata[2*s*tid + s], bank conflicts."""
    # SASS: 8 strides unrolled, each ISETP/SHL + predicated LDS pair, FADD, STS, BAR (the first pair merged
    # into one LDS.64 by ptxas: modelled as two LDS, same wavefronts); then @P0 EXIT, LDS, LDC, IMAD.WIDE, STG
    return _reduce_tree("mem_reduce_interleaved", shape, True)


@register("mem_reduce_sequential", "membound", ("N",), {}, _twin("mem_reduce_sequential"))
def mem_reduce_sequential(shape):
    """Block reduction, sequential addressing (Harris 3): sdata[tid] += sdata[tid + s], no bank conflicts."""
    return _reduce_tree("mem_reduce_sequential", shape, False)


@register("mem_reduce_shuffle", "membound", ("N",), {}, _twin("mem_reduce_shuffle"))
def mem_reduce_shuffle(shape):
    """Block reduction with warp shuffles: one float4 per thread, five SHFL.DOWN per warp, 8 warp sums."""
    (n,) = shape
    require_divisible("mem_reduce_shuffle", "N", n, "4 x 256", 4 * RED)
    # SASS: 7 before LDG.E.128, 3 FADD, 5 x (SHFL.DOWN, FADD) with 9 integer instructions among them, @!P0 STS
    # (lane 0 of every warp), BAR.SYNC, @P1 EXIT (warps 1..7); warp 0: 8 integer (ISETP, S2R, MOV, SHF, LOP3, LEA,
    # HFMA2, IADD3), @!P1 LDS (lanes 0..7), 3 x (SHFL.DOWN, FADD), @P0 EXIT, LDC, IMAD.WIDE, STG (lane 0), EXIT
    first = (0,)
    body = (_ints("addr", 7), Mem("ld_in", "global", "ld", 16, lambda c: (c.bx * RED + c.tid) * 16, "in"),
            Compute("sum4", "fp32", 3, 2, after=("ld_in",)),
            Loop(5, (Compute("shfl", "shfl", 1, after=("sum4", "add")), Compute("add", "fp32", 1, after=("shfl",))),
                 var="j"),
            _ints("addr_sts", 9),
            Mem("sts_warp", "shared", "st", F32, lambda c: _guard(c, c.lane == 0, c.warp * F32), after=("add",)),
            Barrier(), _ints("exit_test", 1),
            Compute("addr_lds", "int32", 8, warps=first),
            Mem("lds_warps", "shared", "ld", F32, lambda c: _guard(c, c.lane < 8, c.lane * F32), warps=first),
            Loop(3, (Compute("shfl2", "shfl", 1, after=("lds_warps", "add2"), warps=first),
                     Compute("add2", "fp32", 1, after=("shfl2",), warps=first)), var="j"),
            Compute("addr_out", "int32", 3, warps=first),
            Mem("st_out", "global", "st", F32, lambda c: _guard(c, c.tid == 0, c.bx * F32), "out", after=("add2",),
                warps=first), Compute("exit", "int32", 1, 1, warps=first))
    return Kernel("mem_reduce_shuffle", "membound", shape, {}, Launch((n // (4 * RED), 1, 1), (RED, 1, 1), 12, 32),
                  body, None, (), (Tensor("in", n * F32), Tensor("out", n // (4 * RED) * F32)), n - n // (4 * RED),
                  _twin("mem_reduce_shuffle"))


@register("mem_strided", "membound", ("N",), {"stride": 4}, _twin("mem_strided"), {"stride": (1, 2, 4, 8, 16, 32)})
def mem_strided(shape, stride=4):
    """Strided read y[i] = x[i*stride]: a warp's load touches min(32, 4*stride) sectors; coalesced writes."""
    (n,) = shape
    require_divisible("mem_strided", "N", n, "the block", RED)
    # SASS: 14 (S2R, ULDC, USHF, LEA, IMAD, IMAD.WIDE.U32, IADD3, LEA, LEA.HI.X, LDC) before LDG, IMAD.WIDE.U32,
    # STG, EXIT; 10 registers
    i = lambda c: c.bx * RED + c.tid  # noqa: E731
    body = (_ints("addr", 14), Mem("ld_x", "global", "ld", F32, lambda c: i(c) * stride * F32, "x"),
            _ints("addr_st", 1), Mem("st_y", "global", "st", F32, lambda c: i(c) * F32, "y", after=("ld_x",)),
            _ints("exit", 1))
    return Kernel("mem_strided", "membound", shape, {"stride": stride}, Launch((n // RED, 1, 1), (RED, 1, 1), 10, 0),
                  body, None, (), (Tensor("x", n * stride * F32), Tensor("y", n * F32)), 0, _twin("mem_strided"))


GATHER_MULTIPLIER = 2654435761  # Knuth's multiplicative hash; odd, so i -> i*M mod 2^k permutes 0..2^k-1


@register("mem_gather", "membound", ("N",), {}, _twin("mem_gather"))
def mem_gather(shape):
    """Gather y[i] = x[idx[i]] with idx a scattered permutation (i * 2654435761 mod N, N a power of two)."""
    (n,) = shape
    if n < RED or n & (n - 1):
        from gpusim.ir import KernelError
        raise KernelError(f"mem_gather: N={n} must be a power of two and at least {RED}")
    # SASS: 9 before LDG idx, IMAD.WIDE.U32 (the gathered address), LDG x, IMAD.WIDE.U32, STG, EXIT; 12 registers
    i = lambda c: (c.bx * RED + c.tid).astype(np.int64)  # noqa: E731
    body = (_ints("addr", 9), Mem("ld_idx", "global", "ld", F32, lambda c: i(c) * F32, "idx"),
            Compute("addr_x", "int32", 1, after=("ld_idx",)),
            Mem("ld_x", "global", "ld", F32, lambda c: (i(c) * GATHER_MULTIPLIER % n) * F32, "x", after=("addr_x",)),
            _ints("addr_st", 1), Mem("st_y", "global", "st", F32, lambda c: i(c) * F32, "y", after=("ld_x",)),
            _ints("exit", 1))
    return Kernel("mem_gather", "membound", shape, {}, Launch((n // RED, 1, 1), (RED, 1, 1), 12, 0), body, None, (),
                  (Tensor("x", n * F32), Tensor("idx", n * F32), Tensor("y", n * F32)), 0, _twin("mem_gather"))
