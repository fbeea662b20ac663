"""The tensor-core GEMM ladder (bf16 in, fp32 accumulate, bf16 out): mma.sync with and without a swizzle and
with a cp.async pipeline, then Hopper's TMA + wgmma, warp specialization, clusters with TMA multicast and a
persistent kernel with a tile order. C = A * B^T with A M x K, B N x K, C M x N, all row-major; FLOPs 2*M*N*K.

The designs are fixed in ``validate/kernels/TC_DESIGNS.md`` (from pranjalssh's H100 worklog and Armbruster's
mma.sync worklog); every kernel names its CUDA twin in ``validate/kernels/``.
"""

from __future__ import annotations

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
        def idx(c):
            i = c.tid + MMA_THREADS * c.r
            return i // 8, i % 8

        ops = []
        for op_name, rows_of in (("A", a_rows), ("B", b_rows)):
            g = gaddr(rows_of, tile_of)
            ops.append(Mem("ldg" + op_name, "global", "ld", CHUNK, lambda c, g=g: g(c, *idx(c)), op_name, repeat=4))
        for op_name, operand in (("A", 0), ("B", 1)):
            s = saddr(slot_of, operand)
            ops.append(Mem("sts" + op_name, "shared", "st", CHUNK, lambda c, s=s: s(c, *idx(c)), repeat=4,
                           after=("ldg" + op_name,)))
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
    if loop is not None:
        loop = Loop(loop.trips, (sass_rest("sass_rest", sass_loop - instructions_per_warp(loop.body), None),
                                 *loop.body))
    outside = sass_all - sass_loop - instructions_per_warp((*prologue, *epilogue))
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
    body = (sass_rest("copy_ctl", SASS_TMA_WGMMA_LOOP[1] - 3, (0,)), *ring, MbarWait("full", lambda it, j: it, warps),
            _wgmma("wgmma", BN, 2 * BK // 16, warps), sass_rest("ctl", SASS_TMA_WGMMA_LOOP[0] - 15, warps),
            Commit("wgmma"), WaitGroup("wgmma", 0), Barrier())
    epi = (sass_rest("cvt", 64, warps, "fp32"), sass_rest("epi_ctl", SASS_EPILOGUE_INT, warps),
           _hopper_c_store(N, BN, lambda c: c.by * BM, lambda c: c.bx * BN, None, 0, "stC0"),
           _hopper_c_store(N, BN, lambda c: c.by * BM + 64, lambda c: c.bx * BN, None, 0, "stC1"))
    launch = Launch((N // BN, M // BM, 1), (128, 1, 1), 154, smem)  # ptxas -v of the twin
    return Kernel(name, "hgemm", shape, {"stages": stages, "swizzle": swizzle}, launch, prologue,
                  Loop(tiles, body), epi, _tensors(M, N, K), 2 * M * N * K, _twin(name),
                  mbarriers={"full": len(ring)},
                  notes="the last stages-1 iterations issue copies the twin does not (their traffic is counted)")


# Instructions of the twins' SASS that the operations above do not stand for (`gpusim sass`, nvcc 13.0, sm_90a):
# address, loop-control, predicate and uniform-datapath work, counted per warp and taken as independent (ilp 8).
# Per k-iteration: the consumer loop of hgemm_ws / _cluster / _persistent holds 89 / 93 / 91 instructions, of which
# 4 HGMMA, 4 SYNCS (mbarrier wait and arrive) and 2 WARPGROUP (arrive, depbar) are the modelled ones; the
# producer loop 53 / 55 / 56, of which 2 UTMALDG and 4 SYNCS. hgemm_tma_wgmma's loop holds 120: 28 of them
# (0x6c0-0x880: the copies, 2 UTMALDG and an arrive modelled) only thread 0's warp runs; of the other 92, 8 HGMMA,
# 4 SYNCS, 1 BAR and 2 WARPGROUP are modelled. The epilogue of every consumer warp converts its 64 accumulator
# pairs (F2FP, on the FP32 pipe) before the 64 STG, with 28 more instructions (BN = 256; halved at BN = 128).
# The persistent twin's tile loop adds 154 (consumer: the tile index, MUFU divisions, the epilogue's addresses)
# and 65 (producer) per tile.
SASS_CONSUMER_LOOP = {"hgemm_ws": 89, "hgemm_ws_cluster": 93, "hgemm_persistent": 91}
SASS_PRODUCER_LOOP = {"hgemm_ws": 53, "hgemm_ws_cluster": 55, "hgemm_persistent": 56}
SASS_TMA_WGMMA_LOOP = (92, 28)  # every warp, thread 0's warp in addition
SASS_EPILOGUE_INT = 28
SASS_PERSISTENT_TILE = (154, 65)  # consumer, producer


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
    body = (
        # producer: wait until the consumers released the slot (tile it - stages), then copy tile it
        MbarWait("empty", lambda it, j: it - stages, producer), sass_rest("prod_ctl", SASS_PRODUCER_LOOP[name] - 6,
                                                                            producer), *a, *b,
        # consumers: wait for tile it, 4 wgmma m64n{bn}k16 per warpgroup, release the slot
        # (the descriptor and loop arithmetic sits between the asynchronous HGMMAs in the SASS: issued while they run)
        MbarWait("full", lambda it, j: it, consumers), _wgmma("wgmma", BN, BK // 16, consumers),
        sass_rest("cons_ctl", SASS_CONSUMER_LOOP[name] - 10, consumers),
        Commit("wgmma", consumers), WaitGroup("wgmma", 0, consumers), Arrive("empty", lambda it, j: it, consumers),
    )
    tile_rest = SASS_PERSISTENT_TILE if order else (SASS_EPILOGUE_INT, 0)
    epi = (sass_rest("cvt", 64 * BN // 256, consumers, "fp32"), sass_rest("epi_ctl", tile_rest[0], consumers),
           *((sass_rest("prod_tile", tile_rest[1], producer),) if tile_rest[1] else ()),
           _hopper_c_store(N, BN, lambda c: bm_of(c) * BM, lambda c: bn_of(c) * BN, consumers, 4))
    prologue: tuple = ()
    tensors = _tensors(M, N, K)
    if order == "hilbert":  # the twin reads each tile's (m, n) from a host-computed table: the producer thread
        # and every consumer warp load the same 4-byte entry
        prologue = (Mem("ldOrder", "global", "ld", 4, lambda c: (c.by * grid[0] + c.bx) * 4 + 0 * c.lane, "order",
                        warps=(0, *consumers)),)
        tensors = (*tensors, Tensor("order", mt * nt * 4))
    params = {"stages": stages, "bn": bn, "swizzle": swizzle} | ({"order": order} if order else {})
    order_fn, persistent = None, 0
    if order:
        order_fn = tile_order(order, mt, nt)
        persistent = hw.chip.sm_count  # one CTA per SM (the twin asks the device for its SM count)
    launch = Launch(grid, (384, 1, 1), 168, smem)  # __launch_bounds__(384, 1): 65536 / 384 rounded to 8
    return Kernel(name, "hgemm", shape, params, launch, prologue, Loop(tiles, body), epi, tensors,
                  2 * M * N * K, _twin(name), mbarriers={"full": len(a) + len(b), "empty": len(consumers)},
                  warpgroup_regs=(40, 232, 232), cluster=cluster, tile_order=order_fn, persistent_ctas=persistent,
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
