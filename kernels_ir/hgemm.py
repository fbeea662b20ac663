"""The tensor-core GEMM ladder (bf16 in, fp32 accumulate, bf16 out): mma.sync with and without a swizzle and
with a cp.async pipeline, then Hopper's TMA + wgmma, warp specialization, clusters with TMA multicast and a
persistent kernel with a tile order. C = A * B^T with A M x K, B N x K, C M x N, all row-major; FLOPs 2*M*N*K.

The designs are fixed in ``validate/kernels/TC_DESIGNS.md`` (from pranjalssh's H100 worklog and Armbruster's
mma.sync worklog); every kernel names its CUDA twin in ``validate/kernels/``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from gpusim.config import HardwareConfig
from gpusim.ir import (Arrive, Barrier, Commit, Compute, Kernel, KernelError, Launch, Loop, MbarWait, Mem, Tensor,
                       WaitGroup, instructions_per_warp, register, require_divisible)
from kernels_ir.tc_common import BF16, CHUNK, PANEL_BYTES, STAGES, SWIZZLES, check_smem, cp_async_tile, \
    panel_offset, sass_rest, tma_boxes

SHAPE = ("M", "N", "K")
BK = 64


def _twin(name: str) -> str:
    return f"validate/kernels/{name}.cu"


def _tensors(M, N, K):
    return (Tensor("A", M * K * BF16), Tensor("B", N * K * BF16), Tensor("C", M * N * BF16))


def _check(name, shape, BM, BN):
    M, N, K = shape
    require_divisible(name, "M", M, "BM", BM)
    require_divisible(name, "N", N, "BN", BN)
    require_divisible(name, "K", K, "BK", BK)
    return M, N, K


# --- mma.sync family -----------------------------------------------------------------------------------------
MMA_BM = MMA_BN = 128
MMA_THREADS = 256
MMA_STAGE_BYTES = (MMA_BM + MMA_BN) * PANEL_BYTES


# The twins' SASS (`gpusim sass`, nvcc 13.0, sm_90a): instructions of the K loop and of the whole kernel. What the
# IR's operations do not stand for (address, loop-control, predicate work) is added per warp as an int32 bundle:
# the loop's share in the loop, the rest (set-up, drain, epilogue addresses) in the epilogue.
SASS_MMA = {"hgemm_mma": (161, 400), "hgemm_mma_swizzled": (156, 488), "hgemm_mma_pipelined": (190, 688)}
# What the three twins (one body, hgemm_mma_common.cuh, built with -DSTAGES -DSWIZZLE) execute per warp
# (`gpusim sass --listing`, NOPs included): (before the K loop, one K iteration, the copy block the last stages-1
# iterations branch over, after the loop), the K < 1 path skipped. STAGES=1, no swizzle: 0x0000-0x00c0 +
# 0x02e0-0x0870, loop 0x0880-0x1280, epilogue 0x1290-0x1860; STAGES=1 with a swizzle (32B, 64B and 128B build the
# same code): 0x0000-0x00b0 + 0x02d0-0x0df0, 0x0e00-0x17b0, 0x17c0-0x1d90. 128B: STAGES=2: 0x0000-0x05a0 +
# 0x07c0-0x1100, 0x1110-0x1d40, 0x1190-0x1770, 0x1d50-0x2320; STAGES=3: 0x0000-0x0d10 (the prologue copies) +
# 0x0f30-0x1850, 0x1860-0x2430, 0x18f0-0x1e60, 0x2440-0x2a10; STAGES=4: 0x0000-0x12f0 + 0x1510-0x1e30,
# 0x1e40-0x29f0, 0x1ec0-0x2420, 0x2a00-0x2fd0. Other builds use the static sizes of SASS_MMA.
MMA_PATHS = {(1, "none"): (103, 161, 0, 94), **{(1, sw): (191, 156, 0, 94) for sw in ("32B", "64B", "128B")},
             (2, "128B"): (240, 196, 95, 94), (3, "128B"): (357, 190, 88, 94), (4, "128B"): (451, 188, 87, 94)}


# The one-stage twins copy each k-tile through registers (4 LDG.128 of A and 4 of B per thread, then STS.128), and
# ptxas interleaves loads and stores so that a store waits for its load before the next loads issue: three rounds of
# loads, each a memory latency after the last (the measured binaries' SASS, NVRTC:
# validate/measurements/h100/diagnostics/hgemm_mma*_STAGES1_SWIZZLE*.sass; nvcc 13.0 gives the same). Rounds of
# (operand, chunk i of the thread's four): without a swizzle A0 A1 | B0 | B1 A2 B2 A3 B3; with one (32B, 64B and
# 128B build alike) A0 | B0 A1 B1 | A2 B2 A3 B3. validate/micro/run_ld_burst.py measures such rounds alone on an
# idle chip: 850-1000 cycles each from HBM, 350-550 from L2.
STAGE1_ROUNDS = {"none": ((("A", 0), ("A", 1)), (("B", 0),), (("B", 1), ("A", 2), ("B", 2), ("A", 3), ("B", 3))),
                 "swizzled": ((("A", 0),), (("B", 0), ("A", 1), ("B", 1)), (("A", 2), ("B", 2), ("A", 3), ("B", 3)))}


def _mma_kernel(name: str, shape, swizzle: str, stages: int, hw: HardwareConfig) -> Kernel:
    M, N, K = _check(name, shape, MMA_BM, MMA_BN)
    tiles = K // BK
    smem = stages * MMA_STAGE_BYTES
    check_smem(name, smem, f"stages={stages} x {MMA_STAGE_BYTES // 1024} KB", hw)
    if stages > 1 and tiles < stages:
        raise KernelError(f"{name}: stages={stages} needs at least {stages} K tiles of {BK}, K={K} has {tiles}")

    def gaddr(tensor_rows_of, tile_of):
        def f(c, row, c16):
            return ((tensor_rows_of(c) + row) * K + tile_of(c) * BK + c16 * 8) * BF16
        return f

    a_rows = lambda c: c.by * MMA_BM  # noqa: E731
    b_rows = lambda c: c.bx * MMA_BN  # noqa: E731

    def saddr(slot_of, operand):
        def f(c, row, c16):
            return slot_of(c) * MMA_STAGE_BYTES + operand * MMA_BM * PANEL_BYTES + panel_offset(128, row, c16, swizzle)
        return f

    def compute(slot_of, suffix: str):
        """4 k16 steps: 4 ldmatrix.x4 of A, 2 of B, 16 mma.sync per warp."""
        def lda(c):
            wm = c.warp // 4
            row = wm * 64 + c.r * 16 + c.lane % 16
            return slot_of(c) * MMA_STAGE_BYTES + panel_offset(128, row, 2 * c.j + c.lane // 16, swizzle)

        def ldb(c):
            wn = c.warp % 4
            row = wn * 32 + c.r * 16 + c.lane % 8 + 8 * (c.lane // 16)
            return slot_of(c) * MMA_STAGE_BYTES + MMA_BM * PANEL_BYTES + \
                panel_offset(128, row, 2 * c.j + (c.lane // 8) % 2, swizzle)

        return Loop(BK // 16, (
            Mem("ldsmA" + suffix, "shared", "ldsm", CHUNK, lda, repeat=4, matrices=4),
            Mem("ldsmB" + suffix, "shared", "ldsm", CHUNK, ldb, repeat=2, matrices=4),
            Compute("mma" + suffix, "tensor", 16, ilp=16, after=("ldsmA" + suffix, "ldsmB" + suffix)),
        ), var="j")

    def sync_copy(tile_of, slot_of):
        """The k-tile through registers, in the rounds ptxas orders it (STAGE1_ROUNDS): a round's loads issue once
        the last round's stores have their data, so each round waits a whole memory latency."""
        def idx(c, i):
            k = c.tid + MMA_THREADS * i
            return k // 8, k % 8

        ops = []
        for chunks in STAGE1_ROUNDS["none" if swizzle == "none" else "swizzled"]:
            loads, stores = [], []
            for op_name, i in chunks:
                rows_of, operand = (a_rows, 0) if op_name == "A" else (b_rows, 1)
                g, s = gaddr(rows_of, tile_of), saddr(slot_of, operand)
                name = f"{op_name}{i}"
                loads.append(Mem("ldg" + name, "global", "ld", CHUNK, lambda c, g=g, i=i: g(c, *idx(c, i)), op_name))
                stores.append(Mem("sts" + name, "shared", "st", CHUNK, lambda c, s=s, i=i: s(c, *idx(c, i)),
                                  after=("ldg" + name,)))
            ops += loads + stores
        return ops

    def async_copy(tile_of, slot_of, suffix):
        ops = []
        for op_name, rows_of, operand in (("A", a_rows, 0), ("B", b_rows, 1)):
            ops += cp_async_tile("cp" + op_name + suffix, op_name, 128, PANEL_BYTES, MMA_THREADS,
                                 gaddr(rows_of, tile_of), saddr(slot_of, operand))
        return (*ops, Commit("cp.async"))

    if stages == 1:
        zero = lambda c: 0  # noqa: E731
        prologue: tuple = ()
        body = (*sync_copy(lambda c: c.it, zero), Barrier(), compute(zero, ""), Barrier())
        loop = Loop(tiles, body)
        drain: tuple = ()
    else:
        prologue = (Loop(stages - 1, async_copy(lambda c: c.j, lambda c: c.j, "_pro"), var="j"),)
        ahead = stages - 1
        body = (WaitGroup("cp.async", stages - 2), Barrier(),
                *async_copy(lambda c: c.it + ahead, lambda c: (c.it + ahead) % stages, ""),
                compute(lambda c: c.it % stages, ""))
        loop = Loop(tiles - ahead, body) if tiles > ahead else None
        drain = ()
        for d in range(ahead):  # the last stages-1 tiles: no more copies to issue
            t = tiles - ahead + d
            drain += (WaitGroup("cp.async", 0), Barrier(), compute(lambda c, t=t: t % stages, f"_d{d}"))

    def c_addr(c):
        wm, wn = c.warp // 4, c.warp % 4
        mi, rest = c.r // 8, c.r % 8
        ni, h = rest // 2, rest % 2
        row = c.by * MMA_BM + wm * 64 + mi * 16 + c.lane // 4 + 8 * h
        col = c.bx * MMA_BN + wn * 32 + ni * 8 + 2 * (c.lane % 4)
        return (row * N + col) * BF16

    fmas = ("mma",) if loop is not None or stages == 1 else ()
    epilogue = (*drain, Compute("cvt", "fp32", 32, 32, after=(*fmas, *(f"mma_d{d}" for d in range(stages - 1)))),
                Mem("stC", "global", "st", 4, c_addr, "C", repeat=32, after=("cvt",)))
    sass_loop, sass_all = SASS_MMA[name]
    outside_total = sass_all - sass_loop
    if (stages, swizzle) in MMA_PATHS:  # the path the twin executes
        pre, sass_loop, issue, epi = MMA_PATHS[(stages, swizzle)]
        outside_total = pre + epi + (stages - 1) * (sass_loop - issue)
    if loop is not None:
        loop = Loop(loop.trips, (sass_rest("sass_rest", sass_loop - instructions_per_warp(loop.body), None),
                                 *loop.body))
    outside = outside_total - instructions_per_warp((*prologue, *epilogue))
    epilogue = (sass_rest("sass_rest_epi", outside, None), *epilogue)
    launch = Launch((N // MMA_BN, M // MMA_BM, 1), (MMA_THREADS, 1, 1), MMA_REGS[name], smem)
    return Kernel(name, "hgemm", shape, {"swizzle": swizzle, "stages": stages}, launch, prologue, loop, epilogue,
                  _tensors(M, N, K), 2 * M * N * K, _twin(name))


# registers per thread of the twins at their defaults (ptxas -v, nvcc 13.0 -arch=sm_90a)
MMA_REGS = {"hgemm_mma": 105, "hgemm_mma_swizzled": 128, "hgemm_mma_pipelined": 124}
MMA_CHOICES = {"swizzle": SWIZZLES, "stages": STAGES}


@register("hgemm_mma", "hgemm", SHAPE, {"swizzle": "none", "stages": 1}, _twin("hgemm_mma"), MMA_CHOICES)
def hgemm_mma(shape, swizzle, stages, *, hw):
    """mma.sync m16n8k16 + ldmatrix, 128x128x64 tiles, 8 warps, unswizzled shared memory (8-way ldmatrix conflicts)."""
    return _mma_kernel("hgemm_mma", shape, swizzle, stages, hw)


@register("hgemm_mma_swizzled", "hgemm", SHAPE, {"swizzle": "128B", "stages": 1}, _twin("hgemm_mma_swizzled"),
          MMA_CHOICES)
def hgemm_mma_swizzled(shape, swizzle, stages, *, hw):
    """As hgemm_mma with the 128B XOR swizzle: conflict-free ldmatrix."""
    return _mma_kernel("hgemm_mma_swizzled", shape, swizzle, stages, hw)


@register("hgemm_mma_pipelined", "hgemm", SHAPE, {"swizzle": "128B", "stages": 3}, _twin("hgemm_mma_pipelined"),
          MMA_CHOICES)
def hgemm_mma_pipelined(shape, swizzle, stages, *, hw):
    """As hgemm_mma_swizzled with a multi-stage cp.async pipeline (stages 1..8)."""
    return _mma_kernel("hgemm_mma_pipelined", shape, swizzle, stages, hw)


# --- Hopper: TMA + wgmma -------------------------------------------------------------------------------------
def _wgmma(name: str, n: int, count: int, warps, after=()) -> Compute:
    """``count`` wgmma m64n{n}k16 issued by each warp of a warpgroup (n/8 pipe units each)."""
    return Compute(name, "wgmma", count * (n // 8), after=after, warps=warps, group="wgmma", units=n // 8)


def _hopper_c_store(N, BN, rows_of, cols_of, warps, wg_first: int, name="stC"):
    """Each consumer warp stores its 16 rows x BN of a 64-row block as bf16 pairs (4-byte stores)."""
    def addr(c):
        w = np.maximum(c.warp - wg_first, 0)
        wg, wi = w // 4, w % 4
        ni, h = c.r // 2, c.r % 2
        row = rows_of(c) + wg * 64 + wi * 16 + c.lane // 4 + 8 * h
        col = cols_of(c) + ni * 8 + 2 * (c.lane % 4)
        return (row * N + col) * BF16
    return Mem(name, "global", "st", 4, addr, "C", repeat=BN // 8 * 2, warps=warps)


@register("hgemm_tma_wgmma", "hgemm", SHAPE, {"stages": 1, "swizzle": "128B"}, _twin("hgemm_tma_wgmma"),
          {"stages": STAGES, "swizzle": SWIZZLES[1:]})
def hgemm_tma_wgmma(shape, stages, swizzle, *, hw):
    """TMA tile loads on an mbarrier + wgmma m64n128k16, 128x128x64 tiles, one warpgroup."""
    name = "hgemm_tma_wgmma"
    BM = BN = 128
    M, N, K = _check(name, shape, BM, BN)
    tiles = K // BK
    stage_bytes = (BM + BN) * PANEL_BYTES
    smem = stages * stage_bytes + 1024
    check_smem(name, smem, f"stages={stages} x {stage_bytes // 1024} KB", hw)
    warps = (0, 1, 2, 3)
    ahead = stages - 1

    def copies(tile_of, suffix, seq):
        ga = lambda c, r, c16: ((c.by * BM + r) * K + tile_of(c) * BK + c16 * 8) * BF16  # noqa: E731
        gb = lambda c, r, c16: ((c.bx * BN + r) * K + tile_of(c) * BK + c16 * 8) * BF16  # noqa: E731
        return (*tma_boxes("tmaA" + suffix, "A", BM, 8, swizzle, ga, "full", seq),
                *tma_boxes("tmaB" + suffix, "B", BN, 8, swizzle, gb, "full", seq))

    # thread 0 keeps stages-1 tiles in flight: the prologue copies tiles 0..stages-2; iteration it copies tile
    # it+stages-1 into the slot freed by the __syncthreads that ended iteration it-1, then computes tile it
    prologue = (Loop(ahead, copies(lambda c: c.j, "_pro", lambda it, j: j), var="j"),) if ahead else ()
    ring = copies(lambda c: np.minimum(c.it + ahead, tiles - 1), "", lambda it, j: it + ahead)
    paths = TMA_WGMMA_PATHS[swizzle]
    wait = MbarWait("full", lambda it, j: it, warps)
    mma = _wgmma("wgmma", BN, 2 * BK // 16, warps)
    sync = (Commit("wgmma"), WaitGroup("wgmma", 0), Barrier())
    body = (sass_rest("copy_ctl", paths.copy - instructions_per_warp(ring, 0), (0,)), *ring, wait, mma,
            sass_rest("ctl", paths.iter - instructions_per_warp((wait, mma, *sync), 1), warps), *sync)
    stores = (_hopper_c_store(N, BN, lambda c: c.by * BM, lambda c: c.bx * BN, None, 0, "stC0"),
              _hopper_c_store(N, BN, lambda c: c.by * BM + 64, lambda c: c.bx * BN, None, 0, "stC1"))
    cvt = sass_rest("cvt", 64, warps, "fp32")
    epi = (cvt, sass_rest("epi_ctl", paths.epi - instructions_per_warp((cvt, *stores), 1), warps), *stores)
    prologue = (sass_rest("setup", paths.setup, warps), sass_rest("init", paths.init, (0,)), *prologue)
    launch = Launch((N // BN, M // BM, 1), (128, 1, 1), 154, smem)  # ptxas -v of the twin
    return Kernel(name, "hgemm", shape, {"stages": stages, "swizzle": swizzle}, launch, prologue,
                  Loop(tiles, body), epi, _tensors(M, N, K), 2 * M * N * K, _twin(name),
                  mbarriers={"full": len(ring)},
                  notes="the last stages-1 iterations issue copies the twin does not (their traffic is counted)")


# Instructions of the twins' SASS that the operations above do not stand for (`gpusim sass`, nvcc 13.0, sm_90a):
# address, loop-control, predicate and uniform-datapath work, counted per warp and taken as independent (ilp 8).
class TmaWgmmaPaths(NamedTuple):
    """Instructions one warp of hgemm_tma_wgmma executes on each path of its SASS (NOPs included, the mbarrier
    wait passing at its first try)."""
    setup: int  # every warp: parameters, the accumulator zeroing, the BAR.SYNC after thread 0's init
    init: int  # warp 0: thread 0's tensor-map prefetch and mbarrier init
    iter: int  # every warp per k-iteration: the wait, 8 HGMMA, the descriptors, DEPBAR, BAR.SYNC, the branch
    copy: int  # warp 0 per k-iteration in addition: thread 0's arrive.expect_tx and UTMALDGs (elect loops)
    epi: int  # every warp: 64 F2FP, 64 STG, their addresses, EXIT


# Counted by address range on `gpusim sass --listing -DSTAGES=1 -DSWIZZLE=..` (nvcc 13.0, sm_90a), SWIZZLE=128:
# setup 0x0000-0x0460 + 0x0550-0x0690, init 0x0470-0x0540 (1 NOP), iter 0x06a0-0x06b0 + 0x0880-0x08d0 +
# 0x09a0-0x0e10 (120 static: the wait's retry block 0x08e0-0x0990 is skipped), copy 0x06c0-0x0870 (2 UTMALDG),
# epi 0x0e20-0x1870. SWIZZLE=64 / 32 likewise with 4 / 8 UTMALDG in copy (0x06c0-0x09a0, 0x06c0-0x0c00). The
# STAGES > 1 builds are taken as the same per iteration (their prologue copies' control is not counted).
TMA_WGMMA_PATHS = {"128B": TmaWgmmaPaths(92, 14, 80, 28, 166), "64B": TmaWgmmaPaths(92, 14, 80, 47, 166),
                   "32B": TmaWgmmaPaths(92, 14, 80, 85, 166)}


class WsPaths(NamedTuple):
    """Instructions one warp executes on each path of a warp-specialized twin's SASS, NOPs included (ncu counts
    them), every mbarrier wait passing at its first try (the out-of-line retry blocks, which poll
    SR_CLOCKLO and branch back, are not counted: how often they run depends on timing)."""
    pre: int  # every warp: up to the role split (thread 0's branch, the BAR.SYNC, the warpgroup test)
    init: int  # warp 0 only: thread 0's tensor-map prefetch and mbarrier init block
    cons_setup: int  # consumer warps before their k loop (setmaxnreg.inc, zeroing the accumulators)
    cons_iter: int  # consumer warps per k-iteration: the full-barrier wait passing at once, 4 HGMMA, the arrive
    cons_epi: int  # consumer warps after the k loop: F2FP, STG, addresses and the exit (per tile if persistent)
    prod_common: int  # every producer warp: setmaxnreg.dec and the thread-0 test
    prod_setup: int  # the producer thread's warp before its k loop
    prod_iter: int  # the producer thread per k-iteration: the empty-barrier wait passing at once, 2 UTMALDG
    exit: int  # a warp's way out (BSYNC, EXIT; the cluster's final barrier)
    tile: int = 0  # persistent: the consumer warps per tile before the k loop (the tile index, the zeroing)
    prod_tile: int = 0  # persistent: the producer thread per tile (the tile index) and after its k loop
    once: int = 0  # persistent: the consumer warps once, between the tile-count test and the first tile
    prod_once: int = 0  # persistent: the producer thread once, likewise
    tile_test: int = 0  # persistent: the consumer warps' tile-count test (the producer's is in prod_common)


# Counted on the listings of `gpusim sass --listing -DSTAGES=3 -DSWIZZLE=128 -DBN=.. [-DORDER=..]` by address
# range. hgemm_ws bn=256: pre 0x0000-0x00f0 + 0x0260-0x0300, init 0x0100-0x0250 (1 NOP), cons_setup 0x0310-0x07a0,
# cons_iter 0x07b0-0x0830 + 0x0900-0x0d40 (2 NOPs; 90 static, the 12 of the retry path 0x0840-0x08f0 skipped),
# cons_epi 0x0d50-0x16a0 + 0x1ab0-0x1ac0 (64 F2FP, 64 STG, 24 others), prod_common 0x16c0-0x1700, prod_setup
# 0x1710-0x1750, prod_iter 0x1760-0x1800 + 0x18e0-0x1aa0 (the first STAGES iterations skip 5 of them), exit
# 0x1ab0-0x1ac0. hgemm_ws bn=128 likewise (0x0000-0x0130 + 0x02a0-0x0350, ..., cons_iter 0x0610-0x0690 +
# 0x0760-0x0b70, cons_epi 0x0b80-0x10d0 + exit). hgemm_ws_cluster bn=256: cons_iter 0x0820-0x08a0 + 0x0970-0x0de0
# (one more arrive, on the partner's empty barrier), exit 0x1b90-0x1c10 (the final cluster barrier: MEMBAR x2,
# ERRBAR, CGAERRBAR, UCGABAR_ARV/WAIT, CCTL, EXIT). hgemm_persistent bn=256, ORDER=1 (grouped): tile 0x0430-0x0870,
# cons_iter 0x0880-0x0900 + 0x09d0-0x0e20, cons_epi (per tile) 0x0e30-0x1b70 (with the next tile's index: IABS,
# I2F, MUFU.RCP, F2I divisions), once 0x0400-0x0420 + the final BRA 0x1b80, tile_test 0x03d0-0x03f0, prod_common
# 0x1ba0-0x1bd0, prod_setup (thread 0's tile-count test) 0x1be0-0x1c00, prod_once 0x1c10-0x1c40, prod_tile
# 0x1c50-0x2020 + 0x23b0-0x23d0, prod_iter 0x2030-0x20f0 + 0x21d0-0x23a0; ORDER=0 (row) and 2 (hilbert: the tile's
# entry loaded with one LDG per tile), and bn=128 (hgemm_ws_cluster and hgemm_persistent), likewise. The tables
# hold for STAGES=3 and SWIZZLE=128 (other values change a few instructions of the k loop).
WS_PATHS = {
    ("hgemm_ws", 256, ""): WsPaths(27, 22, 74, 78, 152, 5, 5, 40, 2),
    ("hgemm_ws", 128, ""): WsPaths(32, 22, 43, 75, 88, 5, 1, 40, 2),
    ("hgemm_ws_cluster", 256, ""): WsPaths(33, 22, 75, 81, 150 + 9, 5, 7, 42, 9),
    ("hgemm_ws_cluster", 128, ""): WsPaths(37, 22, 44, 77, 86 + 9, 5, 4, 43, 9),
    ("hgemm_persistent", 256, "row"): WsPaths(36, 22, 4, 79, 181, 4, 3, 43, 2, tile=69, prod_tile=35, once=3 + 1,
                                              prod_once=3, tile_test=3),
    ("hgemm_persistent", 256, "grouped"): WsPaths(35, 22, 4, 79, 213, 4, 3, 43, 2, tile=69, prod_tile=65,
                                                  once=3 + 1, prod_once=4, tile_test=3),
    ("hgemm_persistent", 256, "hilbert"): WsPaths(36, 22, 4, 79, 157, 4, 3, 43, 2, tile=72, prod_tile=14,
                                                  once=1 + 1, prod_once=2, tile_test=3),
    ("hgemm_persistent", 128, "row"): WsPaths(37, 22, 4, 76, 108, 4, 3, 43, 2, tile=37, prod_tile=35, once=15 + 1,
                                              prod_once=3, tile_test=3),
    ("hgemm_persistent", 128, "grouped"): WsPaths(36, 22, 4, 76, 137, 4, 3, 43, 2, tile=37, prod_tile=65,
                                                  once=16 + 1, prod_once=4, tile_test=3),
    ("hgemm_persistent", 128, "hilbert"): WsPaths(37, 22, 4, 76, 83, 4, 3, 43, 2, tile=40, prod_tile=14,
                                                  once=13 + 1, prod_once=2, tile_test=3),
}


def _ws_kernel(name: str, shape, stages: int, bn: int, swizzle: str, hw: HardwareConfig, cluster: int = 1,
               order: str = "") -> Kernel:
    BM, BN = 128, bn
    M, N, K = _check(name, shape, BM, BN)
    tiles = K // BK
    stage_bytes = (BM + BN) * PANEL_BYTES
    smem = stages * stage_bytes + 1024
    check_smem(name, smem, f"stages={stages} x {stage_bytes // 1024} KB (bn={bn})", hw)
    mt, nt = M // BM, N // BN
    if cluster > 1:
        require_divisible(name, "M tiles", mt, "cluster", cluster)
        # grid walks M first so that cluster partners (adjacent blockIdx.x) share the B tile
        bm_of, bn_of = (lambda c: c.bx), (lambda c: c.by)
        grid = (mt, nt, 1)
    else:
        bm_of, bn_of = (lambda c: c.by), (lambda c: c.bx)
        grid = (nt, mt, 1)
    producer = (0,)
    consumers = tuple(range(4, 12))
    a = tma_boxes("tmaA", "A", BM, 8, swizzle,
                  lambda c, r, c16: ((bm_of(c) * BM + r) * K + c.it * BK + c16 * 8) * BF16, "full", lambda it, j: it)
    b_rows = BN // cluster  # each cluster member loads its share of B and multicasts it to all members
    b = tma_boxes("tmaB", "B", b_rows, 8, swizzle,
                  lambda c, r, c16: ((bn_of(c) * BN + (bm_of(c) % cluster) * b_rows + r) * K + c.it * BK + c16 * 8)
                  * BF16, "full", lambda it, j: it)
    paths = WS_PATHS[(name, bn, order)]
    producer_ops = (MbarWait("empty", lambda it, j: it - stages, producer), *a, *b)
    consumer_ops = (MbarWait("full", lambda it, j: it, consumers), _wgmma("wgmma", BN, BK // 16, consumers),
                    Commit("wgmma", consumers), WaitGroup("wgmma", 0, consumers),
                    Arrive("empty", lambda it, j: it, consumers))
    body = (
        # producer: wait until the consumers released the slot (tile it - stages), then copy tile it
        producer_ops[0], sass_rest("prod_ctl", paths.prod_iter - instructions_per_warp(producer_ops, 0), producer),
        *producer_ops[1:],
        # consumers: wait for tile it, 4 wgmma m64n{bn}k16 per warpgroup, release the slot
        # (the descriptor and loop arithmetic sits between the asynchronous HGMMAs in the SASS: issued while they run)
        *consumer_ops[:2], sass_rest("cons_ctl", paths.cons_iter - instructions_per_warp(consumer_ops, 4), consumers),
        *consumer_ops[2:],
    )
    stores = _hopper_c_store(N, BN, lambda c: bm_of(c) * BM, lambda c: bn_of(c) * BN, consumers, 4)
    cvt = sass_rest("cvt", 64 * BN // 256, consumers, "fp32")
    epi = (cvt, sass_rest("epi_ctl", paths.cons_epi - instructions_per_warp((cvt, stores), 4), consumers), stores)
    prologue: tuple = ()
    tensors = _tensors(M, N, K)
    if order == "hilbert":  # the twin reads each tile's (m, n) from a host-computed table: the producer thread
        # and every consumer warp load the same 4-byte entry
        prologue = (Mem("ldOrder", "global", "ld", 4, lambda c: (c.by * grid[0] + c.bx) * 4 + 0 * c.lane, "order",
                        warps=(0, *consumers)),)
        tensors = (*tensors, Tensor("order", mt * nt * 4))
    cta_instructions = idle_cta_instructions = 0
    if order:  # per tile: the tile index (and the zeroing) before the k loop, the epilogue after it; once per CTA
        # (counted, not simulated): the set-up, the tile-count test, the exit
        prologue = (*prologue,
                    sass_rest("tile_ctl", paths.tile - instructions_per_warp(prologue, 4), consumers),
                    sass_rest("prod_tile", paths.prod_tile - instructions_per_warp(prologue, 0), producer))
        common = 12 * paths.pre + paths.init + 3 * (paths.prod_common + paths.exit)
        idle_cta_instructions = (common + len(consumers) * (paths.cons_setup + paths.tile_test + paths.exit)
                                 + paths.prod_common + paths.prod_setup + paths.exit)
        cta_instructions = idle_cta_instructions + len(consumers) * paths.once + paths.prod_once
    else:  # set-up once per CTA: every warp to the role split, thread 0's mbarrier init, each role's own set-up
        prologue = (sass_rest("setup", paths.pre, None), sass_rest("init", paths.init, producer),
                    sass_rest("prod_setup", paths.prod_common + paths.prod_setup + paths.exit, producer),
                    sass_rest("idle_exit", paths.prod_common + paths.exit, (1, 2, 3)),
                    sass_rest("cons_setup", paths.cons_setup, consumers))
    params = {"stages": stages, "bn": bn, "swizzle": swizzle} | ({"order": order} if order else {})
    order_fn, persistent = None, 0
    if order:
        order_fn = tile_order(order, mt, nt)
        persistent = hw.chip.sm_count  # one CTA per SM (the twin asks the device for its SM count)
    launch = Launch(grid, (384, 1, 1), 168, smem)  # __launch_bounds__(384, 1): 65536 / 384 rounded to 8
    return Kernel(name, "hgemm", shape, params, launch, prologue, Loop(tiles, body), epi, tensors,
                  2 * M * N * K, _twin(name), mbarriers={"full": len(a) + len(b), "empty": len(consumers)},
                  warpgroup_regs=(40, 232, 232), cluster=cluster, tile_order=order_fn, persistent_ctas=persistent,
                  cta_instructions=cta_instructions, idle_cta_instructions=idle_cta_instructions,
                  notes=("cluster partners are assumed symmetric: the partner's multicast half of B lands when this "
                         "CTA's does" if cluster > 1 else ""))


WS_CHOICES = {"stages": STAGES, "bn": (128, 256), "swizzle": SWIZZLES[1:]}


@register("hgemm_ws", "hgemm", SHAPE, {"stages": 3, "bn": 256, "swizzle": "128B"}, _twin("hgemm_ws"), WS_CHOICES)
def hgemm_ws(shape, stages, bn, swizzle, *, hw):
    """Warp-specialized: a TMA producer warpgroup and 2 wgmma consumer warpgroups over an S-stage ring."""
    return _ws_kernel("hgemm_ws", shape, stages, bn, swizzle, hw)


@register("hgemm_ws_cluster", "hgemm", SHAPE, {"stages": 3, "bn": 256, "swizzle": "128B"},
          _twin("hgemm_ws_cluster"), WS_CHOICES)
def hgemm_ws_cluster(shape, stages, bn, swizzle, *, hw):
    """As hgemm_ws in 2x1 clusters: the partners share the B tile through TMA multicast."""
    return _ws_kernel("hgemm_ws_cluster", shape, stages, bn, swizzle, hw, cluster=2)


@register("hgemm_persistent", "hgemm", SHAPE, {"stages": 3, "bn": 256, "swizzle": "128B", "order": "grouped"},
          _twin("hgemm_persistent"), WS_CHOICES | {"order": ("row", "grouped", "hilbert")})
def hgemm_persistent(shape, stages, bn, swizzle, order, *, hw):
    """As hgemm_ws, persistent (one CTA per SM) with a tile order: row-major, grouped (8 M-tiles) or Hilbert."""
    return _ws_kernel("hgemm_persistent", shape, stages, bn, swizzle, hw, order=order)


GROUP_M = 8


HILBERT_MAX_POINTS = 1 << 24  # the Hilbert order is tabulated (like the twin's host table) up to this many points


def tile_order(order: str, mt: int, nt: int):
    """The scheduler's tile order as a function from positions (an integer array) to linear tile indices
    (``m * nt + n``: the grid's blockIdx.y * gridDim.x + blockIdx.x). Row and grouped orders are closed forms;
    the Hilbert order is a table over the smallest power-of-two square holding the tiles."""
    if order == "row":
        return lambda pos: np.asarray(pos, dtype=np.int64)
    if order == "grouped":
        def grouped(pos):
            pos = np.asarray(pos, dtype=np.int64)
            g, rest = pos // (GROUP_M * nt), pos % (GROUP_M * nt)
            rows = np.minimum(GROUP_M, mt - g * GROUP_M)  # the last group may hold fewer M tiles
            n, m = rest // rows, g * GROUP_M + rest % rows
            return m * nt + n
        return grouped
    if order == "hilbert":
        side = 1
        while side < max(mt, nt):
            side *= 2
        if side * side > HILBERT_MAX_POINTS:
            raise KernelError(f"hilbert order: {mt} x {nt} tiles need a {side} x {side} curve, more than the "
                              f"{HILBERT_MAX_POINTS} points gpusim tabulates")
        m, n = _hilbert_d2xy(side, np.arange(side * side, dtype=np.int64))
        keep = (m < mt) & (n < nt)
        table = (m * nt + n)[keep]
        return lambda pos: table[np.asarray(pos, dtype=np.int64)]
    raise KernelError(f"unknown tile order '{order}' (row, grouped, hilbert)")


def tile_sequence(order: str, mt: int, nt: int) -> np.ndarray:
    """Every tile in processing order."""
    return tile_order(order, mt, nt)(np.arange(mt * nt))


def _hilbert_d2xy(side: int, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions ``d`` along the Hilbert curve filling a ``side`` x ``side`` square (side a power of two)."""
    x = np.zeros_like(d)
    y = np.zeros_like(d)
    s, t = 1, d.copy()
    while s < side:
        rx = 1 & (t // 2)
        ry = 1 & (t ^ rx)
        flip = (ry == 0) & (rx == 1)
        x = np.where(flip, s - 1 - x, x)
        y = np.where(flip, s - 1 - y, y)
        swap = ry == 0
        x, y = np.where(swap, y, x), np.where(swap, x, y)
        x = x + s * rx
        y = y + s * ry
        t //= 4
        s *= 2
    return x, y
