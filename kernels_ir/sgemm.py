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
        # nvcc merges the 32 contiguous As reads of the unrolled dotIdx loop into 8 LDS.128 (twin's SASS)
        Mem("ldAs", "shared", "ld", 4 * F32, lambda c: as_base + (trow(c) * BS + 4 * c.r) * F32, repeat=BS // 4),
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
    if BK % 4:
        raise_params("sgemm_1d_blocktiling", f"needs BK % 4 == 0 (As rows are read with LDS.128), got BK={BK}")
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
        # for each resIdx the BK contiguous As words are read as BK/4 LDS.128 (twin's SASS: 16 LDS.128)
        Mem("ldAs", "shared", "ld", 4 * F32,
            lambda c: as_base + ((trow(c) * TM + c.r // (BK // 4)) * BK + 4 * (c.r % (BK // 4))) * F32,
            repeat=TM * BK // 4),
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
    launch = Launch((N // BN, M // BM, 1), (threads, 1, 1), 44, (BM + BN) * BK * F32)
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


def _c_epilogue(N: int, row, col, repeat: int, width: int, results: int, fma: str = "fma"):
    """Read-modify-write of C: ``row(c)``, ``col(c)`` give each lane's element for repeat ``c.r``."""
    def addr(c):
        return (row(c) * N + col(c)) * F32

    return (Mem("ldC", "global", "ld", width, addr, "C", repeat=repeat),
            Compute("scale", "fp32", 2 * results, results, after=("ldC", fma)),
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


@register("sgemm_autotuned", "sgemm", SHAPE, {"BM": 128, "BN": 128, "BK": 16, "TM": 8, "TN": 8},
          _twin("sgemm_autotuned"))
def sgemm_autotuned(shape, BM, BN, BK, TM, TN):
    """Autotuned: kernel 6's design with BK=16 and load loops (2 float4 of A and of B per thread per tile)."""
    name = "sgemm_autotuned"
    threads = 256  # K9_NUM_THREADS: fixed in the design, the tile sizes adapt to it
    M, N, K = _check(name, shape, BM=("M", BM), BN=("N", BN), BK=("K", BK))
    _need(name, BK % 4 == 0 and BN % 4 == 0 and TM % 4 == 0 and TN % 4 == 0,
          "needs BK, BN, TM and TN multiples of 4 (float4 loads, LDS.128 reads, float4 epilogue)")
    _need(name, BM % (16 * TM) == 0 and BN % (16 * TN) == 0,
          "needs BM % (16*TM) == 0 and BN % (16*TN) == 0 (a 16x16 thread grid tiles the block)")
    _need(name, (BM * BK) % (4 * threads) == 0 and (BN * BK) % (4 * threads) == 0
          and (4 * threads) % BK == 0 and (4 * threads) % BN == 0,
          f"needs BM*BK and BN*BK multiples of {4 * threads} and BK, BN dividing {4 * threads} (whole float4 "
          "load passes by 256 threads)")
    WM, WN = 16 * TM, 16 * TN
    WMITER, WNITER = BM // WM, BN // WN
    as_base, bs_base = 0, BM * BK * F32
    tile = lambda c: c.it
    tcol = lambda c: c.tid % (WN // TN)
    trow = lambda c: c.tid // (WN // TN)
    ld_a, st_a = _load_a_transposed(K, BM, BK, threads, tile, lambda c: as_base)
    load_b = _load_b_rows(N, BN, BK, threads, tile)
    qm, qn = TM // 4, TN // 4
    # unrolled loops wmIdx, wnIdx, dotIdx, then TM/4 (TN/4) LDS.128 of regM (regN)
    body = (
        ld_a, load_b[0], st_a, _store_b_vec(BN, lambda c: bs_base, load_b),
        Barrier(),
        Mem("ldAs", "shared", "ld", 16,
            lambda c: as_base + (c.r // qm % BK * BM + c.r // (qm * BK * WNITER) * WM + trow(c) * TM
                                 + c.r % qm * 4) * F32, repeat=WMITER * WNITER * BK * qm),
        Mem("ldBs", "shared", "ld", 16,
            lambda c: bs_base + (c.r // qn % BK * BN + c.r // (qn * BK) % WNITER * WN + tcol(c) * TN
                                 + c.r % qn * 4) * F32, repeat=WMITER * WNITER * BK * qn),
        Compute("fma", "fp32", WMITER * WNITER * BK * TM * TN, WMITER * WNITER * TM * TN, after=("ldAs", "ldBs")),
        Compute("addr", "int32", 29, 29),
        Barrier(),
    )
    epi = _c_epilogue(N, lambda c: c.by * BM + c.r // (qn * TM * WNITER) * WM + trow(c) * TM + c.r // qn % TM,
                      lambda c: c.bx * BN + c.r // (qn * TM) % WNITER * WN + tcol(c) * TN + c.r % qn * 4,
                      WMITER * WNITER * TM * qn, 16, WMITER * WNITER * TM * TN)
    launch = Launch((N // BN, M // BM, 1), (threads, 1, 1), 122, (BM + BN) * BK * F32)
    return Kernel(name, "sgemm", shape, {"BM": BM, "BN": BN, "BK": BK, "TM": TM, "TN": TN}, launch, (),
                  Loop(K // BK, body), epi, _tensors(M, N, K), 2 * M * N * K, _twin(name))


class _Warptile:
    """Boehm's warptiling (kernels 10-12): warp w owns the WM x WN tile (w / (BN/WN), w % (BN/WN)) of the
    block tile, as WMITER x WNITER sub-tiles of WSUBM x WSUBN; lane (lane / (WSUBN/TN), lane % (WSUBN/TN))
    computes TM x TN of each sub-tile."""

    def __init__(self, name: str, BM: int, BN: int, BK: int, WM: int, WN: int, WNITER: int, TM: int, TN: int):
        _need(name, BM % WM == 0 and BN % WN == 0, f"needs BM % WM == 0 and BN % WN == 0 (BM={BM}, WM={WM}, "
              f"BN={BN}, WN={WN})")
        _need(name, (WM * WN) % (32 * TM * TN * WNITER) == 0,
              "needs WM*WN to be a multiple of 32*TM*TN*WNITER (whole warp sub-tiles)")
        self.WMITER = WM * WN // (32 * TM * TN * WNITER)
        _need(name, self.WMITER > 0 and WM % self.WMITER == 0 and WN % WNITER == 0,
              "needs WM % WMITER == 0 and WN % WNITER == 0")
        self.WSUBM, self.WSUBN = WM // self.WMITER, WN // WNITER
        _need(name, self.WSUBN % TN == 0 and self.WSUBM % TM == 0, "needs TN | WSUBN and TM | WSUBM")
        _need(name, TM % 4 == 0 and TN % 4 == 0 and BK % 4 == 0 and BN % 4 == 0,
              "needs TM, TN, BK and BN multiples of 4 (float4 loads, LDS.128 reads, float4 epilogue)")
        self.threads = (BM // WM) * (BN // WN) * 32
        _need(name, self.threads <= 1024, f"(BM/WM)*(BN/WN) = {self.threads // 32} warps, more than 32")
        self.BM, self.BN, self.BK, self.WM, self.WN, self.WNITER, self.TM, self.TN = BM, BN, BK, WM, WN, WNITER, TM, TN

    def check_loads(self, name: str, load_threads: int) -> None:
        BM, BN, BK = self.BM, self.BN, self.BK
        _need(name, (BM * BK) % (4 * load_threads) == 0 and (BN * BK) % (4 * load_threads) == 0
              and (4 * load_threads) % BK == 0 and load_threads % (BN // 4) == 0,
              f"needs BM*BK and BN*BK multiples of 4*{load_threads} and BK | {4 * load_threads}, BN/4 | {load_threads} "
              f"(whole float4 load passes by {load_threads} threads)")

    def warp_row(self, c):
        return c.warp // (self.BN // self.WN)

    def warp_col(self, c):
        return c.warp % (self.BN // self.WN)

    def lane_row(self, c):
        return c.lane // (self.WSUBN // self.TN)

    def lane_col(self, c):
        return c.lane % (self.WSUBN // self.TN)

    def reads(self, as_base, bs_base, suffix: str = "", only=None) -> tuple[Mem, Mem]:
        """Per dotIdx: WMITER*TM/4 LDS.128 of As (regM), then WNITER*TN/4 LDS.128 of Bs (regN)."""
        qm, qn = self.TM // 4, self.TN // 4
        BM, BN, BK = self.BM, self.BN, self.BK

        def a(c):
            d, rest = c.r // (qm * self.WMITER), c.r % (qm * self.WMITER)
            return as_base(c) + (d * BM + self.warp_row(c) * self.WM + rest // qm * self.WSUBM
                                 + self.lane_row(c) * self.TM + rest % qm * 4) * F32

        def b(c):
            d, rest = c.r // (qn * self.WNITER), c.r % (qn * self.WNITER)
            return bs_base(c) + (d * BN + self.warp_col(c) * self.WN + rest // qn * self.WSUBN
                                 + self.lane_col(c) * self.TN + rest % qn * 4) * F32

        return (Mem("ldAs" + suffix, "shared", "ld", 16, _masked(only, a), repeat=BK * self.WMITER * qm),
                Mem("ldBs" + suffix, "shared", "ld", 16, _masked(only, b), repeat=BK * self.WNITER * qn))

    def fma(self, suffix: str = "", share: int = 1, loads: str | None = None) -> Compute:
        """The BK*WMITER*WNITER*TM*TN FFMA of one K-tile (``1/share`` of them), after its shared reads (and,
        with ``loads``, after the global loads ``ldA``/``ldB`` + ``loads`` of the same warp)."""
        acc = self.WMITER * self.WNITER * self.TM * self.TN
        after = ("ldAs" + suffix, "ldBs" + suffix) + (("ldA" + loads, "ldB" + loads) if loads is not None else ())
        return Compute("fma" + suffix, "fp32", self.BK * acc // share, acc, after=after)

    def epilogue(self, N: int, fma: str = "fma"):
        """float4 read-modify-write of C, sub-tile by sub-tile."""
        qn, TM = self.TN // 4, self.TM
        BM, BN = self.BM, self.BN
        n = self.WMITER * self.WNITER * TM * qn
        return _c_epilogue(
            N,
            lambda c: (c.by * BM + self.warp_row(c) * self.WM + c.r // (qn * TM * self.WNITER) * self.WSUBM
                       + self.lane_row(c) * TM + c.r // qn % TM),
            lambda c: (c.bx * BN + self.warp_col(c) * self.WN + c.r // (qn * TM) % self.WNITER * self.WSUBN
                       + self.lane_col(c) * self.TN + c.r % qn * 4),
            n, 16, self.WMITER * self.WNITER * TM * self.TN, fma)

    def params(self) -> dict:
        return {"BM": self.BM, "BN": self.BN, "BK": self.BK, "WM": self.WM, "WN": self.WN, "WNITER": self.WNITER,
                "TM": self.TM, "TN": self.TN}


WARPTILE_DEFAULTS = {"BM": 128, "BN": 128, "BK": 16, "WM": 64, "WN": 64, "WNITER": 4, "TM": 8, "TN": 4}


@register("sgemm_warptiling", "sgemm", SHAPE, WARPTILE_DEFAULTS, _twin("sgemm_warptiling"))
def sgemm_warptiling(shape, BM, BN, BK, WM, WN, WNITER, TM, TN):
    """Warptiling: 4 warps each own a 64x64 warp tile, computed as 4 sub-tiles of 64x16 (TM=8 x TN=4 per lane)."""
    name = "sgemm_warptiling"
    M, N, K = _check(name, shape, BM=("M", BM), BN=("N", BN), BK=("K", BK))
    w = _Warptile(name, BM, BN, BK, WM, WN, WNITER, TM, TN)
    w.check_loads(name, w.threads)
    as_base, bs_base = 0, BM * BK * F32
    tile = lambda c: c.it
    ld_a, st_a = _load_a_transposed(K, BM, BK, w.threads, tile, lambda c: as_base)
    load_b = _load_b_rows(N, BN, BK, w.threads, tile)
    body = (
        ld_a, load_b[0], st_a, _store_b_vec(BN, lambda c: bs_base, load_b),
        Barrier(),
        *w.reads(lambda c: as_base, lambda c: bs_base),
        w.fma(),
        Compute("addr", "int32", 32, 32),
        Barrier(),
    )
    launch = Launch((N // BN, M // BM, 1), (w.threads, 1, 1), 182, (BM + BN) * BK * F32)
    return Kernel(name, "sgemm", shape, w.params(), launch, (), Loop(K // BK, body), w.epilogue(N),
                  _tensors(M, N, K), 2 * M * N * K, _twin(name))


@register("sgemm_double_buffered", "sgemm", SHAPE,
          {"BM": 128, "BN": 256, "BK": 16, "WM": 128, "WN": 32, "WNITER": 1, "TM": 8, "TN": 8},
          _twin("sgemm_double_buffered"))
def sgemm_double_buffered(shape, BM, BN, BK, WM, WN, WNITER, TM, TN):
    """Double buffering: two smem buffers; threads 0-127 and 128-255 take turns loading while the others compute."""
    # Per pair of K-tiles (buffers B0, B1), in three sections between __syncthreads:
    #   group 0 (warps 0..3): compute B0 | compute B1 | load tile+2 -> B0
    #   group 1 (warps 4..7): load tile+1 -> B1 | compute B0 | compute B1
    # Each group loads as if the block had half its threads. The IR's compute bundles cannot differ between
    # warps, so the sections where only one group computes give every warp half a tile of FFMA; each
    # sub-partition holds one warp of each group, so the FP32 work per sub-partition and section is the same.
    # The loading group's half waits for its global loads, as that group is busy with them in the twin.
    name = "sgemm_double_buffered"
    M, N, K = _check(name, shape, BM=("M", BM), BN=("N", BN), **{"2*BK": ("K", 2 * BK)})
    w = _Warptile(name, BM, BN, BK, WM, WN, WNITER, TM, TN)
    _need(name, w.threads >= 64, "needs at least 2 warps (two load groups)")
    half = w.threads // 2
    w.check_loads(name, half)
    warps = w.threads // 32
    g0 = lambda c: c.warp < warps // 2
    g1 = lambda c: c.warp >= warps // 2
    as_words, bs_words = BM * BK, BK * BN
    a_buf = lambda b: (lambda c: b * as_words * F32)
    b_buf = lambda b: (lambda c: (2 * as_words + b * bs_words) * F32)
    tiles = K // BK

    def load(tile, buf, suffix, only):
        ld_a, st_a = _load_a_transposed(K, BM, BK, half, tile, a_buf(buf), suffix, only)
        load_b = _load_b_rows(N, BN, BK, half, tile, suffix, only)
        return (ld_a, load_b[0]), (st_a, _store_b_vec(BN, b_buf(buf), load_b, suffix, only))

    first_ld, first_st = load(lambda c: 0, 0, "_first", g0)
    odd_ld, odd_st = load(lambda c: 2 * c.it + 1, 1, "_odd", g1)
    # the last pair loads no tile+2 (an `if` in the twin); the IR reloads the last tile there instead
    even_ld, even_st = load(lambda c: min(2 * c.it + 2, tiles - 1), 0, "_even", g0)
    mid_as = lambda c: np.where(g0(c), 1, 0) * as_words * F32
    mid_bs = lambda c: (2 * as_words + np.where(g0(c), 1, 0) * bs_words) * F32
    body = (
        *odd_ld, *w.reads(a_buf(0), b_buf(0), "_s1", g0), *odd_st, w.fma("_s1", 2, loads="_odd"),
        Compute("addr_s1", "int32", 28, 28),
        Barrier(),
        *w.reads(mid_as, mid_bs, "_s2"), w.fma("_s2"),
        Compute("addr_s2", "int32", 28, 28),
        Barrier(),
        *even_ld, *w.reads(a_buf(1), b_buf(1), "_s3", g1), *even_st, w.fma("_s3", 2, loads="_even"),
        Compute("addr_s3", "int32", 28, 28),
        Barrier(),
    )
    launch = Launch((N // BN, M // BM, 1), (w.threads, 1, 1), 183, 2 * (as_words + bs_words) * F32)
    return Kernel(name, "sgemm", shape, w.params(), launch, (*first_ld, *first_st, Barrier()),
                  Loop(tiles // 2, body), w.epilogue(N, "fma_s3"), _tensors(M, N, K), 2 * M * N * K, _twin(name),
                  notes="compute split between the two load groups approximated per sub-partition; "
                        "the last pair's tile+2 load is a reload of the last tile")


@register("sgemm_memcpy_async", "sgemm", SHAPE, WARPTILE_DEFAULTS, _twin("sgemm_memcpy_async"))
def sgemm_memcpy_async(shape, BM, BN, BK, WM, WN, WNITER, TM, TN):
    """Async copies: warptiling double-buffered with cp.async (4-B copies of A, 16-B of B) overlapping the FFMA."""
    # Twin: copy tile 0 -> buffer 0; per tile t < last: copy tile t+1 -> buffer 1-b, wait for tile t,
    # __syncthreads, compute buffer b, __syncthreads; then the last tile. Each cp.async is modelled as a
    # global load plus a shared store of the other buffer placed after this tile's FFMA, so the FFMA never
    # wait for it (the hardware writes shared memory when the data arrives; LDGSTS is one instruction).
    name = "sgemm_memcpy_async"
    M, N, K = _check(name, shape, BM=("M", BM), BN=("N", BN), BK=("K", BK))
    w = _Warptile(name, BM, BN, BK, WM, WN, WNITER, TM, TN)
    w.check_loads(name, w.threads)
    as_words, bs_words = BM * BK, BK * BN
    tiles = K // BK
    as_base = lambda c, b: b * as_words * F32
    bs_base = lambda c, b: (2 * as_words + b * bs_words) * F32

    def copy(tile, buf, suffix):
        ld_a, st_a = _load_a_transposed(K, BM, BK, w.threads, tile, lambda c: as_base(c, buf(c)), suffix,
                                        copy_bytes=4)
        load_b = _load_b_rows(N, BN, BK, w.threads, tile, suffix)
        return (ld_a, load_b[0]), (st_a, _store_b_vec(BN, lambda c: bs_base(c, buf(c)), load_b, suffix))

    first_ld, first_st = copy(lambda c: 0, lambda c: 0, "_first")
    next_ld, next_st = copy(lambda c: c.it + 1, lambda c: (c.it + 1) % 2, "")
    body = (
        *next_ld,
        Barrier("wait"),  # cp.async.wait_group 1 + __syncthreads: tile it has landed everywhere
        *w.reads(lambda c: as_base(c, c.it % 2), lambda c: bs_base(c, c.it % 2)), w.fma(),
        Compute("addr", "int32", 82, 82),
        *next_st,
        Barrier(),
    )
    last = (tiles - 1) % 2
    epi = (Barrier("wait_last"), *w.reads(lambda c: as_base(c, last), lambda c: bs_base(c, last), "_last"),
           w.fma("_last"), *w.epilogue(N, "fma_last"))
    launch = Launch((N // BN, M // BM, 1), (w.threads, 1, 1), 255, 2 * (as_words + bs_words) * F32)
    return Kernel(name, "sgemm", shape, w.params(), launch, (*first_ld, *first_st),
                  Loop(tiles - 1, body) if tiles > 1 else None, epi, _tensors(M, N, K), 2 * M * N * K, _twin(name))
