"""The FP32 SGEMM ladder (Simon Boehm's 12 kernels, same tile parameters and thread mappings).

Row-major A (MxK), B (KxN), C (MxN); C = alpha*A@B + beta*C; FLOPs = 2*M*N*K. Every kernel names its
CUDA twin in ``validate/kernels/`` (and the twin names it back); the two must describe the same code.

Address expressions return byte offsets; ``ctx.tid`` is the thread index in the block, ``ctx.r`` the
repeat index of an unrolled loop, ``ctx.it`` the K-tile index. Integer instructions per iteration are
the loop and address arithmetic of the compiled loop body (``Compute(pipe="int32")``).
"""

from __future__ import annotations

import numpy as np

from gpusim.ir import Barrier, Compute, Kernel, Launch, Loop, Mem, Tensor, register, require_divisible

F32 = 4  # bytes per float
SHAPE = ("M", "N", "K")


def _tensors(M: int, N: int, K: int) -> tuple[Tensor, ...]:
    return (Tensor("A", M * K * F32), Tensor("B", K * N * F32), Tensor("C", M * N * F32))


def _check(name: str, shape, **tiles) -> tuple[int, int, int]:
    M, N, K = shape
    dims = {"M": M, "N": N, "K": K}
    for key, (dim, tile) in tiles.items():
        require_divisible(name, dim, dims[dim], key, tile)
    return M, N, K


def _twin(name: str) -> str:
    return f"validate/kernels/{name}.cu"


@register("sgemm_naive", "sgemm", SHAPE, {}, _twin("sgemm_naive"))
def sgemm_naive(shape):
    """Naive: one thread per C element, threadIdx.x walks M (uncoalesced A, broadcast B)."""
    M, N, K = _check("sgemm_naive", shape, BLOCK_M=("M", 32), BLOCK_N=("N", 32))
    row = lambda c: c.bx * 32 + c.tx
    col = lambda c: c.by * 32 + c.ty
    body = (
        Mem("ldA", "global", "ld", F32, lambda c: (row(c) * K + c.it) * F32, "A"),
        Mem("ldB", "global", "ld", F32, lambda c: (c.it * N + col(c)) * F32, "B"),
        Compute("fma", "fp32", 1, 1, after=("ldA", "ldB", "fma")),
        Compute("addr", "int32", 2, 2),
    )
    epi = (Mem("ldC", "global", "ld", F32, lambda c: (row(c) * N + col(c)) * F32, "C"),
           Compute("scale", "fp32", 2, 1, after=("ldC", "fma")),
           Mem("stC", "global", "st", F32, lambda c: (row(c) * N + col(c)) * F32, "C", after=("scale",)))
    return Kernel("sgemm_naive", "sgemm", shape, {}, Launch((M // 32, N // 32, 1), (32, 32, 1), 37, 0),
                  (), Loop(K, body), epi, _tensors(M, N, K), 2 * M * N * K, _twin("sgemm_naive"))


@register("sgemm_coalesced", "sgemm", SHAPE, {}, _twin("sgemm_coalesced"))
def sgemm_coalesced(shape):
    """Global-memory coalescing: consecutive threads take consecutive columns of C."""
    M, N, K = _check("sgemm_coalesced", shape, BLOCK_M=("M", 32), BLOCK_N=("N", 32))
    row = lambda c: c.bx * 32 + c.tid // 32
    col = lambda c: c.by * 32 + c.tid % 32
    body = (
        Mem("ldA", "global", "ld", F32, lambda c: (row(c) * K + c.it) * F32, "A"),
        Mem("ldB", "global", "ld", F32, lambda c: (c.it * N + col(c)) * F32, "B"),
        Compute("fma", "fp32", 1, 1, after=("ldA", "ldB", "fma")),
        Compute("addr", "int32", 2, 2),
    )
    epi = (Mem("ldC", "global", "ld", F32, lambda c: (row(c) * N + col(c)) * F32, "C"),
           Compute("scale", "fp32", 2, 1, after=("ldC", "fma")),
           Mem("stC", "global", "st", F32, lambda c: (row(c) * N + col(c)) * F32, "C", after=("scale",)))
    return Kernel("sgemm_coalesced", "sgemm", shape, {}, Launch((M // 32, N // 32, 1), (1024, 1, 1), 37, 0),
                  (), Loop(K, body), epi, _tensors(M, N, K), 2 * M * N * K, _twin("sgemm_coalesced"))


@register("sgemm_smem_blocking", "sgemm", SHAPE, {}, _twin("sgemm_smem_blocking"))
def sgemm_smem_blocking(shape):
    """Shared-memory blocking: 32x32 tiles of A and B staged in shared memory."""
    BS = 32
    M, N, K = _check("sgemm_smem_blocking", shape, BLOCKSIZE=("M", BS), BLOCKSIZE_N=("N", BS),
                     BLOCKSIZE_K=("K", BS))
    trow = lambda c: c.tid // BS
    tcol = lambda c: c.tid % BS
    as_base, bs_base = 0, BS * BS * F32
    body = (
        Mem("ldA", "global", "ld", F32, lambda c: ((c.bx * BS + trow(c)) * K + c.it * BS + tcol(c)) * F32, "A"),
        Mem("ldB", "global", "ld", F32, lambda c: ((c.it * BS + trow(c)) * N + c.by * BS + tcol(c)) * F32, "B"),
        Mem("stAs", "shared", "st", F32, lambda c: as_base + (trow(c) * BS + tcol(c)) * F32, after=("ldA",)),
        Mem("stBs", "shared", "st", F32, lambda c: bs_base + (trow(c) * BS + tcol(c)) * F32, after=("ldB",)),
        Barrier(),
        Mem("ldAs", "shared", "ld", F32, lambda c: as_base + (trow(c) * BS + c.r) * F32, repeat=BS),
        Mem("ldBs", "shared", "ld", F32, lambda c: bs_base + (c.r * BS + tcol(c)) * F32, repeat=BS),
        Compute("fma", "fp32", BS, 1, after=("ldAs", "ldBs", "fma")),
        Compute("addr", "int32", 6, 6),
        Barrier(),
    )
    row = lambda c: c.bx * BS + trow(c)
    col = lambda c: c.by * BS + tcol(c)
    epi = (Mem("ldC", "global", "ld", F32, lambda c: (row(c) * N + col(c)) * F32, "C"),
           Compute("scale", "fp32", 2, 1, after=("ldC", "fma")),
           Mem("stC", "global", "st", F32, lambda c: (row(c) * N + col(c)) * F32, "C", after=("scale",)))
    launch = Launch((M // BS, N // BS, 1), (BS * BS, 1, 1), 37, 2 * BS * BS * F32)
    return Kernel("sgemm_smem_blocking", "sgemm", shape, {}, launch, (), Loop(K // BS, body), epi,
                  _tensors(M, N, K), 2 * M * N * K, _twin("sgemm_smem_blocking"))


@register("sgemm_1d_blocktiling", "sgemm", SHAPE, {"BM": 64, "BN": 64, "BK": 8, "TM": 8},
          _twin("sgemm_1d_blocktiling"))
def sgemm_1d_blocktiling(shape, BM, BN, BK, TM):
    """1D blocktiling: each thread computes TM results of a column of C."""
    M, N, K = _check("sgemm_1d_blocktiling", shape, BM=("M", BM), BN=("N", BN), BK=("K", BK))
    threads = BM * BN // TM
    if threads != BM * BK or threads != BN * BK:
        raise_params("sgemm_1d_blocktiling", "needs BM*BN/TM == BM*BK == BN*BK (one element per thread per load)")
    as_base, bs_base = 0, BM * BK * F32
    tcol = lambda c: c.tid % BN
    trow = lambda c: c.tid // BN
    body = (
        Mem("ldA", "global", "ld", F32,
            lambda c: ((c.by * BM + c.tid // BK) * K + c.it * BK + c.tid % BK) * F32, "A"),
        Mem("ldB", "global", "ld", F32,
            lambda c: ((c.it * BK + c.tid // BN) * N + c.bx * BN + c.tid % BN) * F32, "B"),
        Mem("stAs", "shared", "st", F32, lambda c: as_base + c.tid * F32, after=("ldA",)),
        Mem("stBs", "shared", "st", F32, lambda c: bs_base + c.tid * F32, after=("ldB",)),
        Barrier(),
        # dotIdx = r // TM (outer), resIdx = r % TM: Bs read once per dotIdx, As per (dotIdx, resIdx)
        Mem("ldBs", "shared", "ld", F32, lambda c: bs_base + (c.r * BN + tcol(c)) * F32, repeat=BK),
        Mem("ldAs", "shared", "ld", F32,
            lambda c: as_base + ((trow(c) * TM + c.r % TM) * BK + c.r // TM) * F32, repeat=BK * TM),
        Compute("fma", "fp32", BK * TM, TM, after=("ldAs", "ldBs")),
        Compute("addr", "int32", 8, 8),
        Barrier(),
    )
    crow = lambda c: c.by * BM + trow(c) * TM + c.r
    ccol = lambda c: c.bx * BN + tcol(c)
    epi = (Mem("ldC", "global", "ld", F32, lambda c: (crow(c) * N + ccol(c)) * F32, "C", repeat=TM),
           Compute("scale", "fp32", 2 * TM, TM, after=("ldC", "fma")),
           Mem("stC", "global", "st", F32, lambda c: (crow(c) * N + ccol(c)) * F32, "C", repeat=TM,
               after=("scale",)))
    launch = Launch((N // BN, M // BM, 1), (threads, 1, 1), 40, (BM + BN) * BK * F32)
    return Kernel("sgemm_1d_blocktiling", "sgemm", shape, {"BM": BM, "BN": BN, "BK": BK, "TM": TM}, launch,
                  (), Loop(K // BK, body), epi, _tensors(M, N, K), 2 * M * N * K, _twin("sgemm_1d_blocktiling"))


def raise_params(name: str, why: str):
    from gpusim.ir import KernelError

    raise KernelError(f"{name}: {why}")


# --- Kernels 5-12: 2D blocktiling and beyond -----------------------------------------------------------------
# Shared-memory widths follow the SASS of the twins (nvcc 13.0 -arch=sm_90, fully unrolled inner loops): nvcc
# merges the reads of consecutive, provably 16-B aligned shared words into LDS.128 (and LDS.64 where only 8-B
# alignment holds, kernel 8). Integer instructions per K-tile are counted in the same SASS.

def _vec_reads(r, per_dot: int):
    """Split an unrolled repeat index into (dotIdx, float4 index within the dotIdx step)."""
    return r // per_dot, r % per_dot


def _c_epilogue(N: int, row, col, repeat: int, width: int, results: int):
    """Read-modify-write of C: ``row(c)``, ``col(c)`` give each lane's element for repeat ``c.r``."""
    def addr(c):
        return (row(c) * N + col(c)) * F32

    return (Mem("ldC", "global", "ld", width, addr, "C", repeat=repeat),
            Compute("scale", "fp32", 2 * results, results, after=("ldC", "fma")),
            Mem("stC", "global", "st", width, addr, "C", repeat=repeat, after=("scale",)))


def _need(name: str, ok: bool, why: str) -> None:
    if not ok:
        raise_params(name, why)


def _blocktile_threads(name: str, BM: int, BN: int, TM: int, TN: int) -> int:
    _need(name, BM % TM == 0 and BN % TN == 0, f"needs BM % TM == 0 and BN % TN == 0 (BM={BM}, TM={TM}, "
          f"BN={BN}, TN={TN})")
    threads = BM * BN // (TM * TN)
    _need(name, 32 <= threads <= 1024, f"BM*BN/(TM*TN) = {threads} threads per block, outside 32..1024")
    return threads


@register("sgemm_2d_blocktiling", "sgemm", SHAPE, {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8},
          _twin("sgemm_2d_blocktiling"))
def sgemm_2d_blocktiling(shape, BM, BN, BK, TM, TN):
    """2D blocktiling: each of 256 threads computes a TMxTN block of C from a 128x8 / 8x128 smem tile."""
    name = "sgemm_2d_blocktiling"
    M, N, K = _check(name, shape, BM=("M", BM), BN=("N", BN), BK=("K", BK))
    threads = _blocktile_threads(name, BM, BN, TM, TN)
    _need(name, threads % BK == 0 and threads % BN == 0,
          f"needs BK and BN to divide the {threads} threads (scalar tile loads, whole rows per pass)")
    stride_a, stride_b = threads // BK, threads // BN
    _need(name, BM % stride_a == 0 and BK % stride_b == 0, "needs the load passes to cover As and Bs exactly")
    _need(name, BK % 4 == 0 and TN % 4 == 0, "needs BK % 4 == 0 and TN % 4 == 0 (LDS.128 reads of As rows, Bs)")
    as_base, bs_base = 0, BM * BK * F32
    tcol = lambda c: c.tid % (BN // TN)
    trow = lambda c: c.tid // (BN // TN)
    a_row = lambda c: c.tid // BK + c.r * stride_a
    b_row = lambda c: c.tid // BN + c.r * stride_b
    body = (
        Mem("ldA", "global", "ld", F32, lambda c: ((c.by * BM + a_row(c)) * K + c.it * BK + c.tid % BK) * F32, "A",
            repeat=BM // stride_a),
        Mem("ldB", "global", "ld", F32, lambda c: ((c.it * BK + b_row(c)) * N + c.bx * BN + c.tid % BN) * F32, "B",
            repeat=BK // stride_b),
        Mem("stAs", "shared", "st", F32, lambda c: as_base + (a_row(c) * BK + c.tid % BK) * F32,
            repeat=BM // stride_a, after=("ldA",)),
        Mem("stBs", "shared", "st", F32, lambda c: bs_base + (b_row(c) * BN + c.tid % BN) * F32,
            repeat=BK // stride_b, after=("ldB",)),
        Barrier(),
        # As[(threadRow*TM + i)*BK + dotIdx] over the unrolled dotIdx loop: BK/4 LDS.128 per row i
        Mem("ldAs", "shared", "ld", 16,
            lambda c: as_base + ((trow(c) * TM + c.r // (BK // 4)) * BK + c.r % (BK // 4) * 4) * F32,
            repeat=TM * BK // 4),
        # Bs[dotIdx*BN + threadCol*TN + i]: TN/4 LDS.128 per dotIdx
        Mem("ldBs", "shared", "ld", 16,
            lambda c: bs_base + (_vec_reads(c.r, TN // 4)[0] * BN + tcol(c) * TN
                                 + _vec_reads(c.r, TN // 4)[1] * 4) * F32, repeat=BK * TN // 4),
        Compute("fma", "fp32", BK * TM * TN, TM * TN, after=("ldAs", "ldBs")),
        Compute("addr", "int32", 30, 30),
        Barrier(),
    )
    epi = _c_epilogue(N, lambda c: c.by * BM + trow(c) * TM + c.r // TN, lambda c: c.bx * BN + tcol(c) * TN + c.r % TN,
                      TM * TN, F32, TM * TN)
    launch = Launch((N // BN, M // BM, 1), (threads, 1, 1), 128, (BM + BN) * BK * F32)
    return Kernel(name, "sgemm", shape, {"BM": BM, "BN": BN, "BK": BK, "TM": TM, "TN": TN}, launch, (),
                  Loop(K // BK, body), epi, _tensors(M, N, K), 2 * M * N * K, _twin(name))


def _masked(only, addr):
    """Address function active only where ``only(c)`` holds (an inactive lane has a negative address)."""
    if only is None:
        return addr
    return lambda c: np.where(only(c), addr(c), -1)


def _load_a_transposed(K: int, BM: int, BK: int, load_threads: int, tile, as_base, suffix: str = "",
                       only=None, copy_bytes: int = 16) -> tuple[Mem, Mem]:
    """A's BM x BK tile -> As[k*BM + m] (transposed): innerRowA = t/(BK/4), innerColA = t%(BK/4), a pass
    every rowStrideA = load_threads*4/BK rows; float4 global loads and 4 scalar STS each
    (``copy_bytes=4``: one 4-byte global load per element, as 4-byte cp.async copies)."""
    stride = load_threads * 4 // BK
    passes = BM // stride
    t = lambda c: c.tid % load_threads
    irow = lambda c: t(c) // (BK // 4)
    icol = lambda c: t(c) % (BK // 4)
    if copy_bytes == 16:
        ld_addr = lambda c: ((c.by * BM + irow(c) + c.r * stride) * K + tile(c) * BK + icol(c) * 4) * F32
        ld_repeat = passes
    else:
        ld_addr = lambda c: ((c.by * BM + irow(c) + c.r // 4 * stride) * K
                             + tile(c) * BK + icol(c) * 4 + c.r % 4) * F32
        ld_repeat = 4 * passes
    ld = Mem("ldA" + suffix, "global", "ld", copy_bytes, _masked(only, ld_addr), "A", repeat=ld_repeat)
    st = Mem("stAs" + suffix, "shared", "st", F32,
             _masked(only, lambda c: as_base(c) + ((icol(c) * 4 + c.r % 4) * BM + irow(c) + c.r // 4 * stride) * F32),
             repeat=4 * passes, after=(ld.name,))
    return ld, st


def _load_b_rows(N: int, BN: int, BK: int, load_threads: int, tile, suffix: str = "", only=None):
    """B's BK x BN tile, float4 global loads: innerRowB = t/(BN/4), innerColB = t%(BN/4), a pass every
    rowStrideB = load_threads/(BN/4) rows. Returns the load, the passes, ``row(c, pass)`` and ``col(c)`` (the
    float4 starts at element 4*col)."""
    stride = load_threads // (BN // 4)
    t = lambda c: c.tid % load_threads
    row = lambda c, p: t(c) // (BN // 4) + p * stride
    col = lambda c: t(c) % (BN // 4)
    ld = Mem("ldB" + suffix, "global", "ld", 16,
             _masked(only, lambda c: ((tile(c) * BK + row(c, c.r)) * N + c.bx * BN + col(c) * 4) * F32), "B",
             repeat=BK // stride)
    return ld, BK // stride, row, col


def _store_b_vec(BN: int, bs_base, load_b, suffix: str = "", only=None) -> Mem:
    """float4 store of each loaded float4 of B to Bs[row*BN + 4*col]."""
    ld, passes, row, col = load_b
    return Mem("stBs" + suffix, "shared", "st", 16,
               _masked(only, lambda c: bs_base(c) + (row(c, c.r) * BN + col(c) * 4) * F32), repeat=passes,
               after=(ld.name,))


def _vectorized_checks(name: str, BM: int, BN: int, BK: int, TM: int, TN: int) -> int:
    threads = _blocktile_threads(name, BM, BN, TM, TN)
    _need(name, BK % 4 == 0 and BN % 4 == 0 and TM % 4 == 0 and TN % 4 == 0,
          "needs BK, BN, TM and TN multiples of 4 (float4 loads, LDS.128 reads, float4 epilogue)")
    _need(name, BM * BK == 4 * threads and BN * BK == 4 * threads,
          f"needs BM*BK == BN*BK == 4*threads = {4 * threads} (one float4 of A and of B per thread per tile)")
    return threads


def _vectorized_kernel(name: str, shape, BM: int, BN: int, BK: int, TM: int, TN: int, b_store, b_reads,
                       bs_words: int, int_per_tile: int, regs: int, extra: dict | None = None) -> Kernel:
    """Kernels 6-8: As transposed from one float4 of A per thread; B's float4 stored by ``b_store`` and read
    into regN by ``b_reads`` (the three differ only there); LDS.128 reads of As; float4 epilogue."""
    M, N, K = _check(name, shape, BM=("M", BM), BN=("N", BN), BK=("K", BK))
    threads = _vectorized_checks(name, BM, BN, BK, TM, TN)
    as_base, bs_base = 0, BM * BK * F32
    tile = lambda c: c.it
    tcol = lambda c: c.tid % (BN // TN)
    trow = lambda c: c.tid // (BN // TN)
    ld_a, st_a = _load_a_transposed(K, BM, BK, threads, tile, lambda c: as_base)
    load_b = _load_b_rows(N, BN, BK, threads, tile)
    reads_b = b_reads(bs_base, tcol)
    body = (
        ld_a, load_b[0], st_a, *b_store(bs_base, load_b),
        Barrier(),
        # As[dotIdx*BM + threadRow*TM + i]: TM/4 LDS.128 per dotIdx
        Mem("ldAs", "shared", "ld", 16,
            lambda c: as_base + (_vec_reads(c.r, TM // 4)[0] * BM + trow(c) * TM + _vec_reads(c.r, TM // 4)[1] * 4)
            * F32, repeat=BK * TM // 4),
        *reads_b,
        Compute("fma", "fp32", BK * TM * TN, TM * TN, after=("ldAs", *(op.name for op in reads_b))),
        Compute("addr", "int32", int_per_tile, int_per_tile),
        Barrier(),
    )
    q = TN // 4
    epi = _c_epilogue(N, lambda c: c.by * BM + trow(c) * TM + c.r // q,
                      lambda c: c.bx * BN + tcol(c) * TN + c.r % q * 4, TM * q, 16, TM * TN)
    params = {"BM": BM, "BN": BN, "BK": BK, "TM": TM, "TN": TN, **(extra or {})}
    launch = Launch((N // BN, M // BM, 1), (threads, 1, 1), regs, (BM * BK + bs_words) * F32)
    return Kernel(name, "sgemm", shape, params, launch, (), Loop(K // BK, body), epi, _tensors(M, N, K),
                  2 * M * N * K, _twin(name))


@register("sgemm_vectorized", "sgemm", SHAPE, {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8},
          _twin("sgemm_vectorized"))
def sgemm_vectorized(shape, BM, BN, BK, TM, TN):
    """Vectorized: float4 global loads, As stored transposed, float4 Bs stores, LDS.128 reads of regM/regN."""
    def store(bs_base, load_b):
        return (_store_b_vec(BN, lambda c: bs_base, load_b),)

    def reads(bs_base, tcol):
        # Bs[dotIdx*BN + threadCol*TN + i]: TN/4 LDS.128 per dotIdx
        return (Mem("ldBs", "shared", "ld", 16,
                    lambda c: bs_base + (_vec_reads(c.r, TN // 4)[0] * BN + tcol(c) * TN
                                         + _vec_reads(c.r, TN // 4)[1] * 4) * F32, repeat=BK * TN // 4),)

    return _vectorized_kernel("sgemm_vectorized", shape, BM, BN, BK, TM, TN, store, reads, BK * BN, 13, 110)


@register("sgemm_bank_linearized", "sgemm", SHAPE, {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8},
          _twin("sgemm_bank_linearized"))
def sgemm_bank_linearized(shape, BM, BN, BK, TM, TN):
    """Bank conflicts 1: Bs "linearized" (B[k][8c+i] at Bs[(8k+i)*16 + c]), read with scalar LDS."""
    # The twin hard-codes 8 = TN and 16 = BN/TN; the same layout for other TN (multiple of 4):
    # B[k][TN*c + i] at Bs[(k*TN + i)*(BN/TN) + c]. A float4 of B at column 4*innerColB starts at
    # c = 4*innerColB // TN, i = 4*innerColB % TN (Boehm: innerColB/2, (innerColB%2)*4).
    cols = BN // TN

    def store(bs_base, load_b):
        ld, passes, row, col = load_b
        return (Mem("stBs", "shared", "st", F32,
                    lambda c: bs_base + ((row(c, c.r // 4) * TN + col(c) * 4 % TN + c.r % 4) * cols
                                         + col(c) * 4 // TN) * F32,
                    repeat=4 * passes, after=(ld.name,)),)

    def reads(bs_base, tcol):
        # regN[i] = Bs[(dotIdx*TN + i)*(BN/TN) + threadCol]: TN scalar LDS per dotIdx
        return (Mem("ldBs", "shared", "ld", F32, lambda c: bs_base + (c.r * cols + tcol(c)) * F32, repeat=BK * TN),)

    return _vectorized_kernel("sgemm_bank_linearized", shape, BM, BN, BK, TM, TN, store, reads, BK * BN, 12, 100)


def _padded_row_reads(start_word: int, TN: int) -> list[tuple[int, int]]:
    """(width in words, word offset) of the LDS nvcc emits for TN consecutive words from ``start_word``, whose
    16-B alignment is start_word % 4 (the 4-word-aligned threadCol*TN part does not change it). Read off
    the twin's SASS: aligned -> LDS.128s; 2 mod 4 -> LDS.64, LDS.128s, LDS.64; 1 mod 4 -> LDS.128s from
    one word before (that word is not used), then LDS; 3 mod 4 -> LDS, then LDS.128s (the last reads a
    word past the row)."""
    m, n4 = start_word % 4, TN // 4
    if m == 0:
        return [(4, 4 * k) for k in range(n4)]
    if m == 2:
        return [(2, 0)] + [(4, 2 + 4 * k) for k in range(n4 - 1)] + [(2, TN - 2)]
    if m == 1:
        return [(4, 4 * k - 1) for k in range(n4)] + [(1, TN - 1)]
    return [(1, 0)] + [(4, 1 + 4 * k) for k in range(n4)]


@register("sgemm_bank_padded", "sgemm", SHAPE, {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8, "extraCols": 5},
          _twin("sgemm_bank_padded"))
def sgemm_bank_padded(shape, BM, BN, BK, TM, TN, extraCols):
    """Bank conflicts 2: each Bs row padded by extraCols=5 words; scalar Bs stores, mixed-width Bs reads."""
    pitch = BN + extraCols

    def store(bs_base, load_b):
        ld, passes, row, col = load_b
        # Bs[innerRowB*(BN + extraCols) + innerColB*4 + j]: the pitch breaks 16-B alignment -> 4 scalar STS
        return (Mem("stBs", "shared", "st", F32,
                    lambda c: bs_base + (row(c, c.r // 4) * pitch + col(c) * 4 + c.r % 4) * F32,
                    repeat=4 * passes, after=(ld.name,)),)

    def reads(bs_base, tcol):
        # regN[i] = Bs[dotIdx*(BN + extraCols) + threadCol*TN + i], split by alignment as nvcc does
        by_width: dict[int, list[int]] = {4: [], 2: [], 1: []}
        for d in range(BK):
            for words, off in _padded_row_reads(d * pitch, TN):
                by_width[words].append(d * pitch + off)
        ops = []
        for words, suffix in ((4, "128"), (2, "64"), (1, "32")):
            if by_width[words]:
                table = np.array(by_width[words]).reshape(-1, 1, 1)
                ops.append(Mem("ldBs" + suffix, "shared", "ld", words * F32,
                               lambda c, t=table: bs_base + (t[c.r.ravel()] + tcol(c) * TN) * F32,
                               repeat=len(by_width[words])))
        return tuple(ops)

    return _vectorized_kernel("sgemm_bank_padded", shape, BM, BN, BK, TM, TN, store, reads, BK * pitch, 13, 109,
                              {"extraCols": extraCols})
