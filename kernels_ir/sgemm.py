"""The FP32 SGEMM ladder (Simon Boehm's 12 kernels, same tile parameters and thread mappings).

Row-major A (MxK), B (KxN), C (MxN); C = alpha*A@B + beta*C; FLOPs = 2*M*N*K. Every kernel names its
CUDA twin in ``validate/kernels/`` (and the twin names it back); the two must describe the same code.

Address expressions return byte offsets; ``ctx.tid`` is the thread index in the block, ``ctx.r`` the
repeat index of an unrolled loop, ``ctx.it`` the K-tile index. Integer instructions per iteration are
the loop and address arithmetic of the compiled loop body (``Compute(pipe="int32")``).
"""

from __future__ import annotations

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
    row = lambda c: c.bx * 32 + c.tx  # noqa: E731
    col = lambda c: c.by * 32 + c.ty  # noqa: E731
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
    row = lambda c: c.bx * 32 + c.tid // 32  # noqa: E731
    col = lambda c: c.by * 32 + c.tid % 32  # noqa: E731
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
    trow = lambda c: c.tid // BS  # noqa: E731
    tcol = lambda c: c.tid % BS  # noqa: E731
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
    row = lambda c: c.bx * BS + trow(c)  # noqa: E731
    col = lambda c: c.by * BS + tcol(c)  # noqa: E731
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
    tcol = lambda c: c.tid % BN  # noqa: E731
    trow = lambda c: c.tid // BN  # noqa: E731
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
    crow = lambda c: c.by * BM + trow(c) * TM + c.r  # noqa: E731
    ccol = lambda c: c.bx * BN + tcol(c)  # noqa: E731
    epi = (Mem("ldC", "global", "ld", F32, lambda c: (crow(c) * N + ccol(c)) * F32, "C", repeat=TM),
           Compute("scale", "fp32", 2 * TM, TM, after=("ldC", "fma")),
           Mem("stC", "global", "st", F32, lambda c: (crow(c) * N + ccol(c)) * F32, "C", repeat=TM,
               after=("scale",)))
    launch = Launch((N // BN, M // BM, 1), (threads, 1, 1), 40, (BM + BN) * BK * F32)
    return Kernel("sgemm_1d_blocktiling", "sgemm", shape, dict(BM=BM, BN=BN, BK=BK, TM=TM), launch, (),
                  Loop(K // BK, body), epi, _tensors(M, N, K), 2 * M * N * K, _twin("sgemm_1d_blocktiling"))


def raise_params(name: str, why: str):
    from gpusim.ir import KernelError

    raise KernelError(f"{name}: {why}")
