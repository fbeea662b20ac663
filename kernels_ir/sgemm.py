"""The FP32 SGEMM ladder (Simon Boehm's 12 kernels, same tile parameters and thread mappings).

Row-major A (MxK), B (KxN), C (MxN); C = alpha*A@B + beta*C; FLOPs = 2*M*N*K. Every kernel names its
CUDA twin in ``validate/kernels/`` (and the twin names it back); the two must describe the same code.

Address expressions return byte offsets; ``ctx.tid`` is the thread index in the block, ``ctx.r`` the
repeat index of an unrolled loop, ``ctx.it`` the K-tile index and ``ctx.j`` the index of the inner
(dotIdx) loop.

Instruction order follows the twins' SASS (``nvcc 13.0 -cubin -arch=sm_90``, the code summarised in
``validate/measurements/h100/sass_summary.json``; ptxas is the one NVRTC uses). Kernels 7, 8, 9 and 11 are the
public kernels' code, whose dotIdx loop nvcc keeps rolled: their IR adds each iteration's loop instructions (the
addresses, counter and branch) to the same per-dotIdx operations. The fully unrolled dotIdx loop of the other
kernels 3-12 issues, for each dotIdx (or group of dotIdx sharing an LDS.128), that step's shared loads and
then its FFMAs, so the inner loop is a ``Loop(var="j")`` of (shared loads of step j, FFMA of step j after
them); ptxas hoists a few loads of step j+1 into the last FFMAs of step j, which the IR does not show.
Integer instructions (``Compute(pipe="int32")``: address arithmetic, loop counters, branches, uniform-datapath
ops; everything in the loop body that is not a memory op, an FFMA or a barrier) are counted in the same SASS
and placed where the SASS has them: ``addr`` before/among the global loads, ``addr_st`` between the global
loads and the shared stores, ``loop`` among the FFMAs. Registers per thread are the twins' NVRTC counts
(``registers_per_thread`` in ``validate/measurements/h100/2026-11-22.json``, the build that was measured).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from gpusim.ir import Barrier, Compute, Kernel, Launch, Loop, Mem, Tensor, register, require_divisible

F32 = 4  # bytes per float
SHAPE = ("M", "N", "K")
# The mean control-code stall cycles of each rung's main-loop SASS instructions (local nvcc, sm_90a, the twins'
# defaults): its memory instructions, its FP32 arithmetic and the rest (integer and address work). Printed by
# `python validate/sass_stalls.py`. A warp alone issues no faster; the cycles beyond one per instruction are ncu's
# `wait` (0.10-0.31 per issue at 512^3, where one CTA runs per SM). The same means stand for a rung's other tile
# sizes, whose code has the same shape.
SASS_FP32_STALLS = {
    "sgemm_naive": (2.0, 1.75, 2.53), "sgemm_coalesced": (2.5, 1.88, 2.79), "sgemm_smem_blocking": (2.2, 2.88, 2.71),
    "sgemm_1d_blocktiling": (2.71, 1.52, 1.8), "sgemm_2d_blocktiling": (1.98, 1.03, 1.83),
    "sgemm_vectorized": (2.54, 1.01, 1.5), "sgemm_bank_padded": (3.64, 1.0, 1.87),
    "sgemm_bank_linearized": (3.56, 1.0, 1.83), "sgemm_autotuned": (3.26, 1.0, 1.91),
    "sgemm_warptiling": (2.98, 1.0, 2.29), "sgemm_double_buffered": (2.76, 1.0, 2.03),
    "sgemm_memcpy_async": (2.61, 1.0, 1.72)}
# The mean register-file reads of each rung's main-loop FFMA (sources not from the operand reuse cache; printed by
# `python validate/sass_stalls.py`): three-source FFMA take 1.5 issue cycles (validate/micro/run_regread.py).
SASS_FFMA_READS = {
    "sgemm_naive": 3.0, "sgemm_coalesced": 3.0, "sgemm_smem_blocking": 3.0, "sgemm_1d_blocktiling": 2.67,
    "sgemm_2d_blocktiling": 2.35, "sgemm_vectorized": 2.24, "sgemm_bank_padded": 2.19, "sgemm_bank_linearized": 2.19,
    "sgemm_autotuned": 2.19, "sgemm_warptiling": 2.26, "sgemm_double_buffered": 2.2, "sgemm_memcpy_async": 2.17}


def _stalled(ops, means: tuple[float, float, float], reads: float) -> tuple:
    """``ops`` with each instruction issued no faster than its SASS's mean control-code stall (``means``: memory,
    FP32, the rest), where an operation does not say already, and the FP32 bundles reading ``reads`` registers an
    instruction."""
    mem, fp32, rest = means
    out = []
    for op in ops:
        if isinstance(op, Loop):
            op = dataclasses.replace(op, body=_stalled(op.body, means, reads))
        elif isinstance(op, Compute) and not op.group and not op.stall_cycles:
            op = dataclasses.replace(op, stall_cycles=round((fp32 if op.pipe == "fp32" else rest) * op.count),
                                     register_reads=reads if op.pipe == "fp32" else op.register_reads)
        elif isinstance(op, Mem) and not op.async_copy and op.kind != "tma" and not op.stall_cycles:
            op = dataclasses.replace(op, stall_cycles=round(mem * op.repeat))
        out.append(op)
    return tuple(out)


def _control_stalls(builder):
    """The rung's builder, its main loop issued at the control codes' stalls (SASS_FP32_STALLS) and its FFMA's
    register reads (SASS_FFMA_READS)."""
    @functools.wraps(builder)
    def build(*args, **kw):
        k = builder(*args, **kw)
        if k.loop is None:
            return k
        body = _stalled(k.loop.body, SASS_FP32_STALLS[k.name], SASS_FFMA_READS[k.name])
        return dataclasses.replace(k, loop=dataclasses.replace(k.loop, body=body))
    return build


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


def raise_params(name: str, why: str):
    from gpusim.ir import KernelError

    raise KernelError(f"{name}: {why}")


def _need(name: str, ok: bool, why: str) -> None:
    if not ok:
        raise_params(name, why)


def _ints(name: str, count: int, warps: tuple[int, ...] | None = None) -> tuple[Compute, ...]:
    """``count`` independent integer instructions (none when ``count`` is 0)."""
    return (Compute(name, "int32", count, count, warps=warps),) if count else ()


def _when(cond: bool, addr):
    """Address ``addr`` in the inner-loop steps where ``cond`` holds; no instruction in the others."""
    return addr if cond else np.full(np.shape(addr), -1)


def _c_epilogue(N: int, row, col, repeat: int, width: int, results: int, fma: str | tuple[str, ...] = "fma"):
    """Read-modify-write of C: ``row(c)``, ``col(c)`` give each lane's element for repeat ``c.r``."""
    def addr(c):
        return (row(c) * N + col(c)) * F32

    fmas = (fma,) if isinstance(fma, str) else tuple(fma)
    return (Mem("ldC", "global", "ld", width, addr, "C", repeat=repeat),
            Compute("scale", "fp32", 2 * results, results, after=("ldC", *fmas)),
            Mem("stC", "global", "st", width, addr, "C", repeat=repeat, after=("scale",)))


# --- Kernels 1-2: no shared memory; the K loop is unrolled by ptxas ------------------------------------------

def _unrolled_k(name: str, K: int, unroll: int) -> None:
    _need(name, K % unroll == 0, f"K={K} is not a multiple of {unroll}: the twin's compiled K loop is unrolled "
          f"x{unroll} (the remainder path is not modelled)")


def _one_thread_per_c(name, shape, row, col, block, unroll, ints_among, ints_after) -> Kernel:
    """Kernels 1-2: each thread computes one C element over a K loop unrolled ``unroll`` times (as compiled)."""
    M, N, K = _check(name, shape, BLOCK_M=("M", 32), BLOCK_N=("N", 32))
    U = unroll
    _unrolled_k(name, K, U)
    body = (
        *_ints("addr", ints_among),
        Mem("ldA", "global", "ld", F32, lambda c: (row(c) * K + c.it * U + c.r) * F32, "A", repeat=U),
        Mem("ldB", "global", "ld", F32, lambda c: ((c.it * U + c.r) * N + col(c)) * F32, "B", repeat=U),
        Compute("fma", "fp32", U, 1, after=("ldA", "ldB", "fma")),
        *_ints("loop", ints_after),
    )
    epi = (Mem("ldC", "global", "ld", F32, lambda c: (row(c) * N + col(c)) * F32, "C"),
           Compute("scale", "fp32", 2, 1, after=("ldC", "fma")),
           Mem("stC", "global", "st", F32, lambda c: (row(c) * N + col(c)) * F32, "C", after=("scale",)))
    # 32 registers: NVRTC build of the twin (registers_per_thread, 2026-11-22.json)
    return Kernel(name, "sgemm", shape, {}, Launch((M // 32, N // 32, 1), block, 32, 0),
                  (), Loop(K // U, body), epi, _tensors(M, N, K), 2 * M * N * K, _twin(name))


@register("sgemm_naive", "sgemm", SHAPE, {}, _twin("sgemm_naive"))
@_control_stalls
def sgemm_naive(shape):
    """Naive: one thread per C element, threadIdx.x walks M (uncoalesced A, broadcast B)."""
    # SASS: the K loop is unrolled x4 (0x220-0x410: 8 LDG.E, 4 dependent FFMA, 20 integer/branch; an x1 loop
    # handles K % 4): 11 integer instructions (64-bit address IMAD.WIDE) among the loads, 9 after the last one
    return _one_thread_per_c("sgemm_naive", shape, row=lambda c: c.bx * 32 + c.tx, col=lambda c: c.by * 32 + c.ty,
                             block=(32, 32, 1), unroll=4, ints_among=11, ints_after=9)


@register("sgemm_coalesced", "sgemm", SHAPE, {}, _twin("sgemm_coalesced"))
@_control_stalls
def sgemm_coalesced(shape):
    """Global-memory coalescing: consecutive threads take consecutive columns of C."""
    # SASS: the K loop is unrolled x16 (0x260-0x6e0: 32 LDG.E hoisted ahead of 16 dependent FFMA, 25 integer/
    # branch; x8 and x4 steps and an x1 loop handle the rest): 18 integer instructions among the loads, 7 after
    return _one_thread_per_c("sgemm_coalesced", shape, row=lambda c: c.bx * 32 + c.tid // 32,
                             col=lambda c: c.by * 32 + c.tid % 32, block=(1024, 1, 1), unroll=16,
                             ints_among=18, ints_after=7)


# --- Kernels 3-4: shared-memory tiles, scalar accumulators -----------------------------------------------------

@register("sgemm_smem_blocking", "sgemm", SHAPE, {}, _twin("sgemm_smem_blocking"))
@_control_stalls
def sgemm_smem_blocking(shape):
    """Shared-memory blocking: 32x32 tiles of A and B staged in shared memory."""
    name = "sgemm_smem_blocking"
    BS = 32
    M, N, K = _check(name, shape, BLOCKSIZE=("M", BS), BLOCKSIZE_N=("N", BS), BLOCKSIZE_K=("K", BS))
    trow = lambda c: c.tid // BS
    tcol = lambda c: c.tid % BS
    as_base, bs_base = 0, BS * BS * F32
    # SASS (loop 0x2a0-0x7f0): per group of 4 dotIdx one LDS.128 of the As row (4 contiguous words) and 4 LDS
    # of Bs, then 4 FFMA of the single accumulator chain; 8 groups = 8 LDS.128 + 32 LDS + 32 FFMA per tile
    dot = Loop(BS // 4, (
        Mem("ldAs", "shared", "ld", 4 * F32, lambda c: as_base + (trow(c) * BS + 4 * c.j) * F32),
        Mem("ldBs", "shared", "ld", F32, lambda c: bs_base + ((4 * c.j + c.r) * BS + tcol(c)) * F32, repeat=4),
        Compute("fma", "fp32", 4, 1, after=("ldAs", "ldBs", "fma")),
    ), var="j")
    body = (
        *_ints("addr", 6),
        Mem("ldA", "global", "ld", F32, lambda c: ((c.bx * BS + trow(c)) * K + c.it * BS + tcol(c)) * F32, "A"),
        Mem("ldB", "global", "ld", F32, lambda c: ((c.it * BS + trow(c)) * N + c.by * BS + tcol(c)) * F32, "B"),
        *_ints("addr_st", 2),
        Mem("stAs", "shared", "st", F32, lambda c: as_base + (trow(c) * BS + tcol(c)) * F32, after=("ldA",)),
        Mem("stBs", "shared", "st", F32, lambda c: bs_base + (trow(c) * BS + tcol(c)) * F32, after=("ldB",)),
        Barrier(),
        dot,
        Barrier(),
    )
    row = lambda c: c.bx * BS + trow(c)
    col = lambda c: c.by * BS + tcol(c)
    epi = (Mem("ldC", "global", "ld", F32, lambda c: (row(c) * N + col(c)) * F32, "C"),
           Compute("scale", "fp32", 2, 1, after=("ldC", "fma")),
           Mem("stC", "global", "st", F32, lambda c: (row(c) * N + col(c)) * F32, "C", after=("scale",)))
    # 32 registers: NVRTC build of the twin (registers_per_thread, 2026-11-22.json)
    launch = Launch((M // BS, N // BS, 1), (BS * BS, 1, 1), 32, 2 * BS * BS * F32)
    return Kernel(name, "sgemm", shape, {}, launch, (), Loop(K // BS, body), epi,
                  _tensors(M, N, K), 2 * M * N * K, _twin(name))


@register("sgemm_1d_blocktiling", "sgemm", SHAPE, {"BM": 64, "BN": 64, "BK": 8, "TM": 8},
          _twin("sgemm_1d_blocktiling"))
@_control_stalls
def sgemm_1d_blocktiling(shape, BM, BN, BK, TM):
    """1D blocktiling: each thread computes TM results of a column of C."""
    name = "sgemm_1d_blocktiling"
    M, N, K = _check(name, shape, BM=("M", BM), BN=("N", BN), BK=("K", BK))
    threads = BM * BN // TM
    if threads != BM * BK or threads != BN * BK:
        raise_params(name, "needs BM*BN/TM == BM*BK == BN*BK (one element per thread per load)")
    if BK % 4:
        raise_params(name, f"needs BK % 4 == 0 (As rows are read with LDS.128), got BK={BK}")
    as_base, bs_base = 0, BM * BK * F32
    tcol = lambda c: c.tid % BN
    trow = lambda c: c.tid // BN
    # SASS (loop 0x340-0x970): the dotIdx loop runs in groups of 4 dotIdx (one LDS.128 reads 4 dotIdx of an As
    # row) x 4 rows: [4 LDS of Bs (first row group only), 4 LDS.128 of As, 16 FFMA (4 accumulators)]; 4 groups
    # = 8 LDS + 16 LDS.128 + 64 FFMA per tile. (A TM that is not a multiple of 4 takes all TM rows per group.)
    rows = 4 if TM % 4 == 0 else TM
    row_groups = TM // rows
    quad = lambda c: c.j // row_groups
    dot = Loop(BK // 4 * row_groups, (
        Mem("ldBs", "shared", "ld", F32,
            lambda c: _when(c.j % row_groups == 0, bs_base + ((4 * quad(c) + c.r) * BN + tcol(c)) * F32), repeat=4),
        Mem("ldAs", "shared", "ld", 4 * F32,
            lambda c: as_base + ((trow(c) * TM + c.j % row_groups * rows + c.r) * BK + 4 * quad(c)) * F32,
            repeat=rows),
        Compute("fma", "fp32", 4 * rows, rows, after=("ldAs", "ldBs")),
    ), var="j")
    body = (
        *_ints("addr", 1),
        Mem("ldA", "global", "ld", F32,
            lambda c: ((c.by * BM + c.tid // BK) * K + c.it * BK + c.tid % BK) * F32, "A"),
        Mem("ldB", "global", "ld", F32,
            lambda c: ((c.it * BK + c.tid // BN) * N + c.bx * BN + c.tid % BN) * F32, "B"),
        *_ints("addr_st", 5),
        Mem("stAs", "shared", "st", F32, lambda c: as_base + c.tid * F32, after=("ldA",)),
        Mem("stBs", "shared", "st", F32, lambda c: bs_base + c.tid * F32, after=("ldB",)),
        Barrier(),
        dot,
        Barrier(),
    )
    crow = lambda c: c.by * BM + trow(c) * TM + c.r
    ccol = lambda c: c.bx * BN + tcol(c)
    epi = (Mem("ldC", "global", "ld", F32, lambda c: (crow(c) * N + ccol(c)) * F32, "C", repeat=TM),
           Compute("scale", "fp32", 2 * TM, TM, after=("ldC", "fma")),
           Mem("stC", "global", "st", F32, lambda c: (crow(c) * N + ccol(c)) * F32, "C", repeat=TM,
               after=("scale",)))
    # 44 registers: NVRTC build of the twin (registers_per_thread, 2026-11-22.json)
    launch = Launch((N // BN, M // BM, 1), (threads, 1, 1), 44, (BM + BN) * BK * F32)
    return Kernel(name, "sgemm", shape, {"BM": BM, "BN": BN, "BK": BK, "TM": TM}, launch,
                  (), Loop(K // BK, body), epi, _tensors(M, N, K), 2 * M * N * K, _twin(name))


# --- Kernels 5-12: 2D blocktiling and beyond -----------------------------------------------------------------
# Shared-memory widths follow the SASS of the twins (nvcc 13.0 -arch=sm_90, fully unrolled inner loops): nvcc
# merges the reads of consecutive, provably 16-B aligned shared words into LDS.128 (and LDS.64 where only 8-B
# alignment holds, kernel 8).

def _blocktile_threads(name: str, BM: int, BN: int, TM: int, TN: int) -> int:
    _need(name, BM % TM == 0 and BN % TN == 0, f"needs BM % TM == 0 and BN % TN == 0 (BM={BM}, TM={TM}, "
          f"BN={BN}, TN={TN})")
    threads = BM * BN // (TM * TN)
    _need(name, 32 <= threads <= 1024, f"BM*BN/(TM*TN) = {threads} threads per block, outside 32..1024")
    return threads


@register("sgemm_2d_blocktiling", "sgemm", SHAPE, {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8},
          _twin("sgemm_2d_blocktiling"))
@_control_stalls
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
    # SASS (loop 0x830-0x2d20: 32 LDS.128, 512 FFMA, 30 integer): As[(threadRow*TM + i)*BK + dotIdx] is read
    # 4 dotIdx at a time, so every 4th dotIdx starts with TM LDS.128 of As (rows i); every dotIdx reads TN/4
    # LDS.128 of Bs[dotIdx*BN + threadCol*TN + ...] and issues its TM*TN FFMA
    dot = Loop(BK, (
        Mem("ldAs", "shared", "ld", 16,
            lambda c: _when(c.j % 4 == 0, as_base + ((trow(c) * TM + c.r) * BK + c.j) * F32), repeat=TM),
        Mem("ldBs", "shared", "ld", 16, lambda c: bs_base + (c.j * BN + tcol(c) * TN + 4 * c.r) * F32,
            repeat=TN // 4),
        Compute("fma", "fp32", TM * TN, TM * TN, after=("ldAs", "ldBs")),
    ), var="j")
    body = (
        *_ints("addr", 23),  # 64-bit addresses of the 8 LDG (LEA/LEA.HI.X) and the loop's pointer updates
        Mem("ldA", "global", "ld", F32, lambda c: ((c.by * BM + a_row(c)) * K + c.it * BK + c.tid % BK) * F32, "A",
            repeat=BM // stride_a),
        Mem("ldB", "global", "ld", F32, lambda c: ((c.it * BK + b_row(c)) * N + c.bx * BN + c.tid % BN) * F32, "B",
            repeat=BK // stride_b),
        Mem("stAs", "shared", "st", F32, lambda c: as_base + (a_row(c) * BK + c.tid % BK) * F32,
            repeat=BM // stride_a, after=("ldA",)),
        Mem("stBs", "shared", "st", F32, lambda c: bs_base + (b_row(c) * BN + c.tid % BN) * F32,
            repeat=BK // stride_b, after=("ldB",)),
        Barrier(),
        dot,
        *_ints("loop", 7),  # loop counter and K-offset updates issued among the last FFMA
        Barrier(),
    )
    epi = _c_epilogue(N, lambda c: c.by * BM + trow(c) * TM + c.r // TN, lambda c: c.bx * BN + tcol(c) * TN + c.r % TN,
                      TM * TN, F32, TM * TN)
    # 128 registers: NVRTC build of the twin (registers_per_thread, 2026-11-22.json)
    launch = Launch((N // BN, M // BM, 1), (threads, 1, 1), 128, (BM + BN) * BK * F32)
    return Kernel(name, "sgemm", shape, {"BM": BM, "BN": BN, "BK": BK, "TM": TM, "TN": TN}, launch, (),
                  Loop(K // BK, body), epi, _tensors(M, N, K), 2 * M * N * K, _twin(name))


def _load_a_transposed(K: int, BM: int, BK: int, load_threads: int, tile, as_base, suffix: str = "",
                       warps=None, copy_bytes: int = 16, async_copy: bool = False) -> tuple[Mem, Mem]:
    """A's BM x BK tile -> As[k*BM + m] (transposed): innerRowA = t/(BK/4), innerColA = t%(BK/4), a pass
    every rowStrideA = load_threads*4/BK rows; float4 global loads and 4 scalar STS each
    (``copy_bytes=4``: one 4-byte global load per element, as 4-byte cp.async copies). ``t`` is the thread
    index modulo ``load_threads``; ``warps`` restricts both operations to the loading warps."""
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
    ld = Mem("ldA" + suffix, "global", "ld", copy_bytes, ld_addr, "A", repeat=ld_repeat, warps=warps)
    st = Mem("stAs" + suffix, "shared", "st", F32,
             lambda c: as_base(c) + ((icol(c) * 4 + c.r % 4) * BM + irow(c) + c.r // 4 * stride) * F32,
             repeat=4 * passes, after=(ld.name,), warps=warps, async_copy=async_copy)
    return ld, st


def _load_b_rows(N: int, BN: int, BK: int, load_threads: int, tile, suffix: str = "", warps=None, passes=None):
    """B's BK x BN tile, float4 global loads: innerRowB = t/(BN/4), innerColB = t%(BN/4), a pass every
    rowStrideB = load_threads/(BN/4) rows; ``passes`` (indices): only those, in that order (default: every pass).
    Returns the load, its repeat count, ``row(c, r)`` (the row of the load's ``r``-th pass) and ``col(c)`` (the
    float4 starts at element 4*col)."""
    stride = load_threads // (BN // 4)
    chosen = np.arange(BK // stride) if passes is None else np.asarray(passes)
    t = lambda c: c.tid % load_threads
    row = lambda c, r: t(c) // (BN // 4) + chosen[r] * stride
    col = lambda c: t(c) % (BN // 4)
    ld = Mem("ldB" + suffix, "global", "ld", 16,
             lambda c: ((tile(c) * BK + row(c, c.r)) * N + c.bx * BN + col(c) * 4) * F32, "B",
             repeat=len(chosen), warps=warps)
    return ld, len(chosen), row, col


def _store_b_vec(BN: int, bs_base, load_b, suffix: str = "", warps=None, async_copy: bool = False) -> Mem:
    """float4 store of each loaded float4 of B to Bs[row*BN + 4*col]."""
    ld, passes, row, col = load_b
    return Mem("stBs" + suffix, "shared", "st", 16,
               lambda c: bs_base(c) + (row(c, c.r) * BN + col(c) * 4) * F32, repeat=passes,
               after=(ld.name,), warps=warps, async_copy=async_copy)


def _b_rounds(N: int, BN: int, BK: int, load_threads: int, tile, bs_base, groups, suffix: str = "",
              warps=None) -> list:
    """B's float4 loads and stores split into rounds, as ptxas orders them where it reuses registers: one (load,
    store) pair of operations per group of passes (``groups``: tuples of pass indices), each store waiting for its
    load. Placed one round after another, a round's loads issue only once the stores before them have their data."""
    out = []
    for k, group in enumerate(groups):
        load_b = _load_b_rows(N, BN, BK, load_threads, tile, f"_r{k}{suffix}", warps, group)
        out.append((load_b[0], _store_b_vec(BN, bs_base, load_b, f"_r{k}{suffix}", warps)))
    return out


def _vectorized_checks(name: str, BM: int, BN: int, BK: int, TM: int, TN: int) -> int:
    threads = _blocktile_threads(name, BM, BN, TM, TN)
    _need(name, BK % 4 == 0 and BN % 4 == 0 and TM % 4 == 0 and TN % 4 == 0,
          "needs BK, BN, TM and TN multiples of 4 (float4 loads, LDS.128 reads, float4 epilogue)")
    _need(name, BM * BK == 4 * threads and BN * BK == 4 * threads,
          f"needs BM*BK == BN*BK == 4*threads = {4 * threads} (one float4 of A and of B per thread per tile)")
    return threads


def _vectorized_kernel(name: str, shape, BM: int, BN: int, BK: int, TM: int, TN: int, b_store, b_reads,
                       bs_words: int, ints: tuple[int, int], regs: int, extra: dict | None = None,
                       dot_ints: int = 0, tail_ints: tuple[int, int] = (0, 0), bar_ints: int = 0) -> Kernel:
    """Kernels 6-8: As transposed from one float4 of A per thread; B's float4 stored by ``b_store`` and read
    into regN by ``b_reads`` (the three differ only there); LDS.128 reads of As; float4 epilogue. ``ints``:
    integer instructions per tile before the global loads and between them and the shared stores (SASS).
    A twin whose dotIdx loop stays rolled (the public kernel's code) has ``dot_ints`` integer instructions per
    dotIdx (addresses, counter, branch), ``bar_ints`` between the shared stores and the first barrier and
    ``tail_ints`` after that loop, before and after the second barrier."""
    M, N, K = _check(name, shape, BM=("M", BM), BN=("N", BN), BK=("K", BK))
    threads = _vectorized_checks(name, BM, BN, BK, TM, TN)
    as_base, bs_base = 0, BM * BK * F32
    tile = lambda c: c.it
    tcol = lambda c: c.tid % (BN // TN)
    trow = lambda c: c.tid // (BN // TN)
    ld_a, st_a = _load_a_transposed(K, BM, BK, threads, tile, lambda c: as_base)
    load_b = _load_b_rows(N, BN, BK, threads, tile)
    reads_b = b_reads(bs_base, tcol)
    # per dotIdx (SASS: 'S4 F64' for kernel 6): TM/4 LDS.128 of As[dotIdx*BM + threadRow*TM + ...], the Bs
    # reads of regN, then the TM*TN FFMA
    dot = Loop(BK, (
        *_ints("int_dot", dot_ints),
        Mem("ldAs", "shared", "ld", 16, lambda c: as_base + (c.j * BM + trow(c) * TM + 4 * c.r) * F32, repeat=TM // 4),
        *reads_b,
        Compute("fma", "fp32", TM * TN, TM * TN, after=("ldAs", *(op.name for op in reads_b))),
    ), var="j")
    body = (
        *_ints("addr", ints[0]),
        ld_a, load_b[0],
        *_ints("addr_st", ints[1]),
        st_a, *b_store(bs_base, load_b),
        *_ints("addr_bar", bar_ints),
        Barrier(),
        dot,
        *_ints("loop_a", tail_ints[0]),
        Barrier(),
        *_ints("loop", tail_ints[1]),
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
@_control_stalls
def sgemm_vectorized(shape, BM, BN, BK, TM, TN):
    """Vectorized: float4 global loads, As stored transposed, float4 Bs stores, LDS.128 reads of regM/regN."""
    def store(bs_base, load_b):
        return (_store_b_vec(BN, lambda c: bs_base, load_b),)

    def reads(bs_base, tcol):
        # Bs[dotIdx*BN + threadCol*TN + i]: TN/4 LDS.128 per dotIdx
        return (Mem("ldBs", "shared", "ld", 16, lambda c: bs_base + (c.j * BN + tcol(c) * TN + 4 * c.r) * F32,
                    repeat=TN // 4),)

    # SASS loop 0x6c0-0x2a10: 32 LDS.128, 512 FFMA, 13 integer (4 before the LDG, 8 before the STS, the branch);
    # 118 registers: NVRTC build of the twin (registers_per_thread, 2026-11-22.json)
    return _vectorized_kernel("sgemm_vectorized", shape, BM, BN, BK, TM, TN, store, reads, BK * BN, (5, 8), 118)


@register("sgemm_bank_linearized", "sgemm", SHAPE, {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8},
          _twin("sgemm_bank_linearized"))
@_control_stalls
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
        return (Mem("ldBs", "shared", "ld", F32, lambda c: bs_base + ((c.j * TN + c.r) * cols + tcol(c)) * F32,
                    repeat=TN),)

    # SASS (the public kernel 7's code, nvcc 13.0 sm_90, `gpusim sass`): tile loop 0x340-0xb60 with the dotIdx
    # loop 0x5f0-0xb00 kept rolled: per dotIdx 2 LDS.128 + 8 LDS, 64 FFMA, 8 integer (4 LEA/SHF/LOP3 of the
    # addresses, counter, compare, branch); per tile 13 integer among the 2 LDG.128, 19 between them and the
    # 8 STS, 2 after the dotIdx loop and 3 after the second barrier; 92 registers (NVRTC build,
    # ladder79-2026-11-28.json)
    return _vectorized_kernel("sgemm_bank_linearized", shape, BM, BN, BK, TM, TN, store, reads, BK * BN, (13, 19), 92,
                              dot_ints=8, tail_ints=(2, 3))


@register("sgemm_bank_padded", "sgemm", SHAPE, {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8, "extraCols": 5},
          _twin("sgemm_bank_padded"))
@_control_stalls
def sgemm_bank_padded(shape, BM, BN, BK, TM, TN, extraCols):
    """Bank conflicts 2: each Bs row padded by extraCols=5 words; scalar Bs stores and reads."""
    pitch = BN + extraCols

    def store(bs_base, load_b):
        ld, passes, row, col = load_b
        # Bs[innerRowB*(BN + extraCols) + innerColB*4 + j]: the pitch breaks 16-B alignment -> 4 scalar STS
        return (Mem("stBs", "shared", "st", F32,
                    lambda c: bs_base + (row(c, c.r // 4) * pitch + col(c) * 4 + c.r % 4) * F32,
                    repeat=4 * passes, after=(ld.name,)),)

    def reads(bs_base, tcol):
        # regN[i] = Bs[dotIdx*(BN + extraCols) + threadCol*TN + i]: in the rolled dotIdx loop nvcc cannot know the
        # row's 16-B alignment, so TN scalar LDS per dotIdx
        return (Mem("ldBs", "shared", "ld", F32, lambda c: bs_base + (c.j * pitch + tcol(c) * TN + c.r) * F32,
                    repeat=TN),)

    # SASS (the public kernel 8's code, nvcc 13.0 sm_90, `gpusim sass`): tile loop 0x340-0xb30 with the dotIdx
    # loop 0x5d0-0xad0 kept rolled: per dotIdx 2 LDS.128 + 8 LDS, 64 FFMA, 7 integer (the addresses, counter,
    # compare, branch); per tile 13 integer among the 2 LDG.128, 15 between them and the 8 STS, 2 between the STS
    # and the barrier, 2 after the dotIdx loop and 3 after the second barrier; 92 registers (NVRTC build,
    # ladder8-2026-11-28.json)
    return _vectorized_kernel("sgemm_bank_padded", shape, BM, BN, BK, TM, TN, store, reads, BK * pitch, (13, 15), 92,
                              {"extraCols": extraCols}, dot_ints=7, tail_ints=(2, 3), bar_ints=2)


@register("sgemm_autotuned", "sgemm", SHAPE, {"BM": 128, "BN": 128, "BK": 16, "TM": 8, "TN": 8},
          _twin("sgemm_autotuned"))
@_control_stalls
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
    # loops wmIdx, wnIdx, dotIdx (j = (wmIdx*WNITER + wnIdx)*BK + dotIdx): TM/4 LDS.128 of regM, TN/4 LDS.128
    # of regN, TM*TN FFMA. SASS (the public kernel 9's code, nvcc 13.0 sm_90, `gpusim sass`): tile loop
    # 0x330-0xba0 with the dotIdx loop 0x670-0xb40 kept rolled: per dotIdx 4 LDS.128, 64 FFMA, 10 integer
    # (uniform-datapath counter and compare, the LDS addresses, branch); per tile 20 integer among the 4 LDG.128,
    # 15 between them and the STS, 2 after the STS, 1 after the dotIdx loop and 4 after the second barrier
    dot_idx = lambda c: c.j % BK
    wn_idx = lambda c: c.j // BK % WNITER
    wm_idx = lambda c: c.j // (BK * WNITER)
    dot = Loop(WMITER * WNITER * BK, (
        *_ints("int_dot", 10),
        Mem("ldAs", "shared", "ld", 16,
            lambda c: as_base + (dot_idx(c) * BM + wm_idx(c) * WM + trow(c) * TM + 4 * c.r) * F32, repeat=qm),
        Mem("ldBs", "shared", "ld", 16,
            lambda c: bs_base + (dot_idx(c) * BN + wn_idx(c) * WN + tcol(c) * TN + 4 * c.r) * F32, repeat=qn),
        Compute("fma", "fp32", TM * TN, TM * TN, after=("ldAs", "ldBs")),
    ), var="j")
    body = (
        *_ints("addr", 20),
        ld_a, load_b[0],
        *_ints("addr_st", 15),
        st_a, _store_b_vec(BN, lambda c: bs_base, load_b),
        *_ints("addr_bar", 2),
        Barrier(),
        dot,
        *_ints("loop_a", 1),
        Barrier(),
        *_ints("loop", 4),
    )
    epi = _c_epilogue(N, lambda c: c.by * BM + c.r // (qn * TM * WNITER) * WM + trow(c) * TM + c.r // qn % TM,
                      lambda c: c.bx * BN + c.r // (qn * TM) % WNITER * WN + tcol(c) * TN + c.r % qn * 4,
                      WMITER * WNITER * TM * qn, 16, WMITER * WNITER * TM * TN)
    # 94 registers: NVRTC build of the twin (registers_per_thread, ladder79-2026-11-28.json)
    launch = Launch((N // BN, M // BM, 1), (threads, 1, 1), 94, (BM + BN) * BK * F32)
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

    def compute_tile(self, as_base, bs_base, suffix: str = "", warps=None, split_b: bool = False,
                     ints: int = 0) -> Loop:
        """compute_tile of the twins: for each dotIdx j, WMITER*TM/4 LDS.128 of As (regM), WNITER*TN/4 LDS.128
        of Bs (regN), then the WMITER*WNITER*TM*TN FFMA of that dotIdx after them (SASS of kernel 10: 'S4 F64
        S2 F64' per dotIdx, i.e. 6 LDS.128 and 128 FFMA). ``warps``: the warps that compute this tile.
        ``split_b``: the SASS loads B one warp sub-tile at a time, each just before the FFMA of that sub-tile
        (``fma``, ``fma1``, ... after it), so every one of those loads' latency shows. ``ints``: integer
        instructions per dotIdx (the LDS addresses the SASS computes among the FFMA)."""
        qm, qn = self.TM // 4, self.TN // 4
        BM, BN = self.BM, self.BN

        def a(c):
            return as_base(c) + (c.j * BM + self.warp_row(c) * self.WM + c.r // qm * self.WSUBM
                                 + self.lane_row(c) * self.TM + c.r % qm * 4) * F32

        def b(c):
            return bs_base(c) + (c.j * BN + self.warp_col(c) * self.WN + c.r // qn * self.WSUBN
                                 + self.lane_col(c) * self.TN + c.r % qn * 4) * F32

        acc = self.WMITER * self.WNITER * self.TM * self.TN
        if split_b:
            def b_sub(n):
                return lambda c: b(dataclasses.replace(c, r=c.r + n * qn))

            ops = [*_ints("int_dot" + suffix, ints, warps),
                   Mem("ldAs" + suffix, "shared", "ld", 16, a, repeat=self.WMITER * qm, warps=warps)]
            for n in range(self.WNITER):
                tag = str(n) if n else ""
                ops.append(Mem(f"ldBs{tag}{suffix}", "shared", "ld", 16, b_sub(n), repeat=qn, warps=warps))
                ops.append(Compute(f"fma{tag}{suffix}", "fp32", acc // self.WNITER, acc // self.WNITER,
                                   after=(("ldAs" + suffix,) if not n else ()) + (f"ldBs{tag}{suffix}",),
                                   warps=warps))
            return Loop(self.BK, tuple(ops), var="j")
        return Loop(self.BK, (
            *_ints("int_dot" + suffix, ints, warps),
            Mem("ldAs" + suffix, "shared", "ld", 16, a, repeat=self.WMITER * qm, warps=warps),
            Mem("ldBs" + suffix, "shared", "ld", 16, b, repeat=self.WNITER * qn, warps=warps),
            Compute("fma" + suffix, "fp32", acc, acc, after=("ldAs" + suffix, "ldBs" + suffix), warps=warps),
        ), var="j")

    def epilogue(self, N: int, fma: str | tuple[str, ...] = "fma"):
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
@_control_stalls
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
    # SASS loop 0xb80-0x9550: 8 LDG.128, 20 STS, 96 LDS.128, 2048 FFMA, 32 integer: 22 among the LDG, 3 after
    # them (among the STS), 7 among the last FFMA (loop counter, pointer updates)
    copy = (ld_a, load_b[0], *_ints("addr_st", 3), st_a, _store_b_vec(BN, lambda c: bs_base, load_b))
    if w.params() == WARPTILE_DEFAULTS:
        # the measured build reuses registers: A's four float4 and B's last go first, the STS of A's first three
        # wait for them, and only then B's first three float4 load: two rounds of loads per tile (the SASS; see
        # validate/DEVIATIONS.md, "The one-stage mma.sync twins load their k-tile in three rounds")
        passes = load_b[1]
        (ld_b_last, st_b_last), (ld_b_rest, st_b_rest) = _b_rounds(
            N, BN, BK, w.threads, tile, lambda c: bs_base, ((passes - 1,), tuple(range(passes - 1))))
        copy = (ld_a, ld_b_last, *_ints("addr_st", 3), st_a, ld_b_rest, st_b_last, st_b_rest)
    body = (
        *_ints("addr", 22),
        *copy,
        Barrier(),
        w.compute_tile(lambda c: as_base, lambda c: bs_base),
        *_ints("loop", 7),
        Barrier(),
    )
    # 180 registers: NVRTC build of the twin (registers_per_thread, 2026-11-22.json)
    launch = Launch((N // BN, M // BM, 1), (w.threads, 1, 1), 180, (BM + BN) * BK * F32)
    return Kernel(name, "sgemm", shape, w.params(), launch, (), Loop(K // BK, body), w.epilogue(N),
                  _tensors(M, N, K), 2 * M * N * K, _twin(name))


DOUBLE_BUFFERED_DEFAULTS = {"BM": 128, "BN": 256, "BK": 16, "WM": 128, "WN": 32, "WNITER": 1, "TM": 8, "TN": 8}


@register("sgemm_double_buffered", "sgemm", SHAPE, DOUBLE_BUFFERED_DEFAULTS, _twin("sgemm_double_buffered"))
@_control_stalls
def sgemm_double_buffered(shape, BM, BN, BK, WM, WN, WNITER, TM, TN):
    """Double buffering: two smem buffers; threads 0-127 and 128-255 take turns loading while the others compute."""
    # The twin (the public kernel 11's code: no #pragma unroll, so the dotIdx loop stays a loop), per pair of
    # K-tiles (buffers B0, B1) in three sections between __syncthreads:
    #   group 0 (tid < 128, warps 0..3):   compute B0        | compute B1 | load tile+2 -> B0 (not in the last pair)
    #   group 1 (tid >= 128, warps 4..7):  load tile+1 -> B1 | compute B0 | compute B1
    # Each group loads with ltid = tid % 128 as if the block had 128 threads. The IR gives every operation the
    # warps of the group that executes it. The last pair (no tile+2 load) is the epilogue, so the loop runs
    # K/(2*BK) - 1 full pairs.
    # SASS (nvcc 13.0 sm_90, `gpusim sass`; the measured NVRTC build has 174 registers, 2 more): the pair's loop
    # 0x0f00-0x4280 holds each group's path and four rolled dotIdx loops (compute_tile), each iteration 6 LDS.128,
    # 128 FFMA and 8 integer (5 LEA of the LDS addresses, the counter, compare, branch; 9 in group 1's second).
    # Integer instructions outside them, per section and group: group 0: 17 | 5 | 60 (its load); group 1:
    # 69 (its load) | 14 | 5; then 3 for both before the third barrier and 6 after it (pointers, counter, branch).
    name = "sgemm_double_buffered"
    M, N, K = _check(name, shape, BM=("M", BM), BN=("N", BN), **{"2*BK": ("K", 2 * BK)})
    w = _Warptile(name, BM, BN, BK, WM, WN, WNITER, TM, TN)
    _need(name, w.threads >= 64, "needs at least 2 warps (two load groups)")
    half = w.threads // 2
    w.check_loads(name, half)
    nw = w.threads // 32
    g0, g1 = tuple(range(nw // 2)), tuple(range(nw // 2, nw))
    as_words, bs_words = BM * BK, BK * BN
    a_buf = lambda b: (lambda c: b * as_words * F32)
    b_buf = lambda b: (lambda c: (2 * as_words + b * bs_words) * F32)
    tiles = K // BK
    pairs = tiles // 2

    defaults = w.params() == DOUBLE_BUFFERED_DEFAULTS

    def load(tile, buf, suffix, warps, ints):
        ld_a, st_a = _load_a_transposed(K, BM, BK, half, tile, a_buf(buf), suffix, warps)
        load_b = _load_b_rows(N, BN, BK, half, tile, suffix, warps)
        if defaults:
            # the measured build loads in two rounds of B (the SASS, both groups' copies of the code): A's four
            # float4 and B's first three among A's stores, then B's last five once those three are stored
            passes = load_b[1]
            rounds = _b_rounds(N, BN, BK, half, tile, b_buf(buf),
                               (tuple(range(3)), tuple(range(3, passes))), suffix, warps)
            return (*_ints("addr" + suffix, ints, warps), ld_a, st_a, *(op for pair in rounds for op in pair))
        return (*_ints("addr" + suffix, ints, warps), ld_a, load_b[0], st_a,
                _store_b_vec(BN, b_buf(buf), load_b, suffix, warps))

    # section 2: group 0 computes B1, group 1 computes B0 (one operation, the buffer depends on the warp)
    s2_as = lambda c: np.where(c.warp < nw // 2, 1, 0) * as_words * F32
    s2_bs = lambda c: (2 * as_words + np.where(c.warp < nw // 2, 1, 0) * bs_words) * F32

    def pair(suffix, odd_tile, even_load):
        """The three sections of one pair of tiles: group 1 loads ``odd_tile`` -> B1 in section 1, group 0 runs
        ``even_load`` (its load of tile+2 -> B0) in section 3."""
        return (
            *_ints("int_s1" + suffix, 17, g0), w.compute_tile(a_buf(0), b_buf(0), "_s1" + suffix, g0, ints=8),
            *load(odd_tile, 1, "_odd" + suffix, g1, 69),
            Barrier(),
            *_ints("int_s2a" + suffix, 5, g0), *_ints("int_s2b" + suffix, 14, g1),
            w.compute_tile(s2_as, s2_bs, "_s2" + suffix, ints=8),
            Barrier(),
            *even_load,
            *_ints("int_s3b" + suffix, 5, g1), w.compute_tile(a_buf(1), b_buf(1), "_s3" + suffix, g1, ints=9),
            *_ints("join" + suffix, 3),
            Barrier(),
            *_ints("loop" + suffix, 6),
        )

    body = pair("", lambda c: 2 * c.it + 1, load(lambda c: 2 * c.it + 2, 0, "_even", g0, 60))
    prologue = load(lambda c: 0, 0, "_first", g0, 0) + (Barrier(),)
    last = pair("_last", lambda c: tiles - 1, _ints("int_s3a_last", 2, g0))  # no tile+2 to load
    fmas = ("fma_s2_last", "fma_s3_last")  # group 0 finishes in section 2, group 1 in section 3
    # 174 registers: NVRTC build of the twin (registers_per_thread, ladder11-2026-11-28.json)
    launch = Launch((N // BN, M // BM, 1), (w.threads, 1, 1), 174, 2 * (as_words + bs_words) * F32)
    acc = w.WMITER * WNITER * TM * TN
    return Kernel(name, "sgemm", shape, w.params(), launch, prologue,
                  Loop(pairs - 1, body) if pairs > 1 else None, (*last, *w.epilogue(N, fmas)),
                  _tensors(M, N, K), 2 * M * N * K, _twin(name),
                  # the pair's loop code (`gpusim sass`): 825 instructions, 512 of them the four dotIdx loops'
                  # FFMA (WMITER*WNITER*TM*TN each): 13 KB, which the instruction caches hold
                  loop_sass_instructions=825 - 4 * 128 + 4 * acc)


@register("sgemm_memcpy_async", "sgemm", SHAPE, WARPTILE_DEFAULTS, _twin("sgemm_memcpy_async"))
@_control_stalls
def sgemm_memcpy_async(shape, BM, BN, BK, WM, WN, WNITER, TM, TN):
    """Async copies: warptiling double-buffered with cp.async (4-B copies of A, 16-B of B) overlapping the FFMA."""
    # Twin: copy tile 0 -> buffer 0; per tile t < last: copy tile t+1 -> buffer 1-b (LDGSTS), commit,
    # cp.async.wait_group 1 (tile t has landed), __syncthreads, compute buffer b, __syncthreads; then
    # wait_group 0, __syncthreads and the last tile. Each copy is a global load (the LDGSTS: one issue slot) and
    # an async shared store (no issue slot) after it. The store of tile t is placed where the warp waits for it:
    # at the top of iteration t, before the copies of tile t+1, so ``after=`` names the global loads of the
    # previous iteration (ldA/ldB) or, for t = 0, of the prologue (ldA_first/ldB_first).
    # The measured build's loop (NVRTC; ncu's executed counts per SASS instruction in
    # validate/measurements/h100/stallsamples-2026-11-25.json; 2,459 instructions, 39,344 B): 16 LDGSTS.E +
    # 4 LDGSTS.E.BYPASS.128, 96 LDS.128, 2048 FFMA; among the copies 93 integer and 3 predicated-off LDS (85 before
    # the last copy, 11 after it), among the FFMA 195 integer (the LDS addresses: 12 per dotIdx, 3 more at the end).
    # At 255 registers each LDS.128 of B is read by the FFMA right after it: the PC samples put 32% of the warps'
    # time in short_scoreboard on those FFMA.
    name = "sgemm_memcpy_async"
    M, N, K = _check(name, shape, BM=("M", BM), BN=("N", BN), BK=("K", BK))
    w = _Warptile(name, BM, BN, BK, WM, WN, WNITER, TM, TN)
    w.check_loads(name, w.threads)
    as_words, bs_words = BM * BK, BK * BN
    tiles = K // BK
    as_base = lambda b: (lambda c: b(c) * as_words * F32)
    bs_base = lambda b: (lambda c: (2 * as_words + b(c) * bs_words) * F32)

    def copy(tile, buf, suffix):
        """The copies of one tile: (global loads, async shared stores). At 255 registers the SASS reuses the copies'
        address registers: A's four 4-B copies of a float4 share one source pair, each B copy has its own; the
        next group's address waits for the LSU to read them (ncu's long_scoreboard on that MOV)."""
        ld_a, st_a = _load_a_transposed(K, BM, BK, w.threads, tile, as_base(buf), suffix, copy_bytes=4,
                                        async_copy=True)
        load_b = _load_b_rows(N, BN, BK, w.threads, tile, suffix)
        ld_a, ld_b = dataclasses.replace(ld_a, operand_reuse=4), dataclasses.replace(load_b[0], operand_reuse=1)
        return (ld_a, ld_b), (st_a, _store_b_vec(BN, bs_base(buf), load_b, suffix, async_copy=True))

    def landed(stores):
        """The async stores of a tile wait for its copies: the loads of the previous loop iteration (or, before
        the loop has run, of the prologue)."""
        st_a, st_b = stores
        return (dataclasses.replace(st_a, after=("ldA", "ldA_first")),
                dataclasses.replace(st_b, after=("ldB", "ldB_first")))

    first_ld, _ = copy(lambda c: 0, lambda c: 0, "_first")
    next_ld, _ = copy(lambda c: c.it + 1, lambda c: (c.it + 1) % 2, "")
    _, this_st = copy(lambda c: c.it, lambda c: c.it % 2, "")
    body = (
        *_ints("addr", 85),
        *landed(this_st),  # cp.async.wait_group: tile it (copied in the previous iteration) has landed
        *next_ld,
        *_ints("wait", 11),
        Barrier("wait"),  # __syncthreads: ... in every warp
        w.compute_tile(as_base(lambda c: c.it % 2), bs_base(lambda c: c.it % 2), split_b=True, ints=12),
        *_ints("loop", 3),
        Barrier(),
    )
    last = (tiles - 1) % 2
    _, last_st = copy(lambda c: tiles - 1, lambda c: last, "_last")
    fmas = tuple(f"fma{n or ''}_last" for n in range(w.WNITER))
    epi = (*landed(last_st), Barrier("wait_last"),
           w.compute_tile(as_base(lambda c: last), bs_base(lambda c: last), "_last", split_b=True, ints=12),
           *w.epilogue(N, fmas))
    # 255 registers: NVRTC build of the twin (registers_per_thread, 2026-11-22.json)
    launch = Launch((N // BN, M // BM, 1), (w.threads, 1, 1), 255, 2 * (as_words + bs_words) * F32)
    return Kernel(name, "sgemm", shape, w.params(), launch, first_ld,
                  Loop(tiles - 1, body) if tiles > 1 else None, epi, _tensors(M, N, K), 2 * M * N * K, _twin(name))
