"""FlashAttention forward (bf16 in and out, fp32 softmax and accumulation): FA2 (mma.sync + cp.async, 4 warps)
and FA3 (TMA + wgmma, a producer warpgroup and two consumer warpgroups taking turns). Shape ``B,H,N,d``;
Q, K, V, O are [B, H, N, d] contiguous; FLOPs = 4*B*H*N^2*d, halved for causal. Designs:
``validate/kernels/TC_DESIGNS.md``.

Softmax cost per S element and thread, counted from the designs (not tuned): FP32 max, scale-and-subtract,
row-sum add and half a bf16 pack (3.5 FP32 instructions) and one ``ex2`` on the SFU; the accumulator rescale
is one FP32 multiply per O element each iteration. Causal masking adds two FP32 instructions per element of
each block that crosses the diagonal.
"""

from __future__ import annotations

import numpy as np

from gpusim.ir import (Arrive, Barrier, Commit, Compute, Kernel, KernelError, Launch, Loop, MbarWait, Mem, Tensor,
                       WaitGroup, instructions_per_warp, register, require_divisible)
from kernels_ir.tc_common import (BF16, CHUNK, STAGES, SWIZZLES, check_smem, cp_async_tile, panel_offset, sass_rest,
                                  tma_boxes)

SHAPE = ("B", "H", "N", "d")
# fa3's loop bodies in the twin's SASS, per (d, bc, causal): (consumer, producer) instructions per iteration on the
# path that skips the masking block (taken only on the diagonal or ragged KV block, which "mask" models), from
# `gpusim sass validate/kernels/fa3.cu -DBR=128 -DBC=bc -DHEAD_DIM=d -DCAUSAL=c -DSTAGES=2 -DPV_SPLIT=0
# -DPINGPONG=1` ("N when every forward branch is taken"; stages=3 differs by 4 of 518)
SASS_FA3_LOOP = {(64, 64, 0): (296, 38), (64, 128, 0): (456, 38), (64, 176, 0): (579, 38),
                 (128, 64, 0): (358, 62), (128, 128, 0): (518, 62), (128, 176, 0): (641, 62),
                 (64, 64, 1): (300, 38), (64, 128, 1): (461, 38), (64, 176, 1): (583, 38),
                 (128, 64, 1): (363, 62), (128, 128, 1): (523, 62), (128, 176, 1): (645, 62)}
# fa2's instructions per warp as the measured binary executes them (ncu source counters, validate/sass_counts.py:
# validate/measurements/h100/sasscounts-2026-11-25.json and sasscounts-fa2-2026-11-25.json), per (d, causal) at the
# default br/bc: (prologue, every KV iteration, epilogue), the iteration's count including the 21-instruction
# prefetch of the next K block the last iteration skips; and the masking block each diagonal iteration of a causal
# run adds. E.g. d=128: 290 before the loop, 339 + 21 + 642 per iteration (256 HMMA, 80 LDSM, 16 LDGSTS, 384 FP32,
# 68 MUFU, 8 SHFL, 6 LDS, 10 LDL/STL, 172 integer, move and control), 33 + 87 + 79 + 79 + 70 after it. The operations
# below stand for part of each; the rest is issued as independent integer work (``sass_rest``).
SASS_FA2 = {(128, False): (290, 1002, 348), (128, True): (226, 865, 344),
            (64, False): (202, 1075, 215), (64, True): (175, 1087, 216)}
SASS_FA2_MASK = {128: 115, 64: 211}
# What fa3's warps execute outside the loops, per (d, bc, causal), same builds: (every warp to the role split,
# thread 0's mbarrier init, a consumer warp before its loop (set-up and the peeled first turn: Q K_0^T and its
# softmax), after it (the last P V, the normalization and the stores), the producer thread before its loop (Q's
# copies) and after it, an idle producer warp (setmaxnreg.dec, its EXIT)). Walked on the SASS from the role split
# to the loop and from the loop to EXIT, each forward branch taken (the mbarrier waits passing at once, the masking
# blocks skipped) unless it leaves the path to the loop, the way `gpusim sass` reckons the loop bodies (the same
# walk gives SASS_FA3_LOOP exactly); NOPs included.
FA3_PATHS = {(64, 64, 0): (30, 19, 307, 149, 32, 1, 4), (64, 128, 0): (30, 19, 450, 165, 32, 1, 4),
             (64, 176, 0): (30, 19, 559, 178, 32, 1, 4), (128, 64, 0): (30, 19, 404, 213, 43, 1, 4),
             (128, 128, 0): (30, 19, 546, 229, 43, 1, 4), (128, 176, 0): (30, 19, 654, 242, 43, 1, 4),
             (64, 64, 1): (39, 19, 318, 144, 31, 1, 4), (64, 128, 1): (39, 19, 461, 160, 31, 1, 4),
             (64, 176, 1): (40, 19, 569, 173, 31, 1, 4), (128, 64, 1): (39, 19, 415, 208, 42, 1, 4),
             (128, 128, 1): (39, 19, 557, 224, 42, 1, 4), (128, 176, 1): (40, 19, 665, 237, 42, 1, 4)}
# The control codes' stall cycles per instruction on the KV loop's path, by the bundle that stands for the
# instruction: (fp32: softmax, sfu: exp2, other: the sass_rest bundle), from `python validate/sass_stalls.py` (the
# same builds as SASS_FA3_LOOP). A warp issues each bundle no faster (``Compute.stall_cycles``): about 1.4 cycles
# an FP32 instruction in fa2 and 1.6 in fa3, whose MUFUs wait 3-4 (fa2's 1-1.3).
SASS_FA2_STALLS = {(64, False): (1.39, 1.2, 2.41), (64, True): (1.36, 1.0, 2.83), (128, False): (1.37, 1.28, 1.6),
                   (128, True): (1.18, 1.0, 2.52)}
SASS_FA3_STALLS = {(64, 64, 0): (1.7, 3.06, 2.38), (64, 128, 0): (1.64, 4.02, 2.25),
                   (64, 176, 0): (1.63, 3.84, 2.25), (128, 64, 0): (1.57, 2.65, 2.65),
                   (128, 128, 0): (1.63, 3.59, 2.75), (128, 176, 0): (1.6, 3.58, 2.94),
                   (64, 64, 1): (1.72, 3.06, 2.44), (64, 128, 1): (1.54, 3.58, 2.33),
                   (64, 176, 1): (1.62, 3.43, 2.24), (128, 64, 1): (1.53, 2.85, 2.7),
                   (128, 128, 1): (1.54, 3.91, 2.8), (128, 176, 1): (1.61, 3.62, 2.91)}
NO_STALLS = (1.0, 1.0, 1.0)  # builds without a table (non-default fa2 tiles): one issue a cycle
SOFTMAX_FP32_PER_ELEMENT = 3.5
MASK_FP32_PER_ELEMENT = 2


def _softmax(tag: str, e: int, o_elems: int, stalls: tuple[float, float, float], after=(), warps=None):
    """A warp's online softmax of one KV block: the FP32 work (``SOFTMAX_FP32_PER_ELEMENT`` per S element and the
    rescale of its O elements) and the exp2 of each S element, each issued no faster than its SASS instructions'
    control-code stalls (``stalls``: the FP32 and MUFU means of SASS_FA2_STALLS / SASS_FA3_STALLS)."""
    n_fp32 = int(SOFTMAX_FP32_PER_ELEMENT * e) + o_elems
    return (Compute("softmax" + tag, "fp32", n_fp32, ilp=8, after=after, warps=warps,
                    stall_cycles=round(stalls[0] * n_fp32)),
            Compute("exp2" + tag, "sfu", e, ilp=8, after=("softmax" + tag,), warps=warps,
                    stall_cycles=round(stalls[1] * e)))


def _twin(name: str) -> str:
    return f"validate/kernels/{name}.cu"


def _tensors(B, H, N, d):
    size = B * H * N * d * BF16
    return tuple(Tensor(t, size) for t in ("Q", "K", "V", "O"))


def _flops(B, H, N, d, causal):
    f = 4 * B * H * N * N * d
    return f // 2 if causal else f


def _check(name, shape, br, bc=0):
    """The shape's B, H, N, d; N a multiple of br (and of bc when given: fa3's TMA takes a ragged last KV block)."""
    B, H, N, d = shape
    if d not in (64, 128):
        raise KernelError(f"{name}: head dimension d={d} is not supported (64 or 128)")
    require_divisible(name, "N", N, "br", br)
    if bc:
        require_divisible(name, "N", N, "bc", bc)
    return B, H, N, d


def _causal_trips(br, bc, blocks_x):
    """KV blocks visited by the CTA with linear index i (its Q block is i % blocks_x)."""
    return lambda i: ((i % blocks_x) + 1) * br // bc if br >= bc else -(-((i % blocks_x) + 1) * br // bc)


def _row_addr(B, H, N, d, row_of):
    """Global byte address of chunk c16 of row ``row_of(c) + row`` of (batch bz, head by)."""
    def f(c, row, c16):
        return (((c.bz * H + c.by) * N + row_of(c) + row) * d + c16 * 8) * BF16
    return f


@register("fa2", "attention", SHAPE, {"br": 0, "bc": 0, "causal": False, "swizzle": "128B"}, _twin("fa2"),
          {"swizzle": SWIZZLES, "br": (0, 64, 128), "bc": (0, 32, 64, 128)})
def fa2(shape, br, bc, causal, swizzle, *, hw):
    """FlashAttention-2 forward: 4 warps, mma.sync + ldmatrix, cp.async K/V, online softmax (br/bc 0: defaults)."""
    name = "fa2"
    d = shape[3]
    br = br or 128
    bc = bc or (128 if d == 64 else 64)
    B, H, N, d = _check(name, shape, br, bc)
    threads, warps = 128, 4
    rows_w = br // warps  # Q rows per warp
    mi = rows_w // 16
    if mi < 1:
        raise KernelError(f"{name}: br={br} gives each of the 4 warps fewer than 16 rows")
    q_off, k_off, v_off = 0, br * d * BF16, (br + bc) * d * BF16
    smem = (br + 2 * bc) * d * BF16
    check_smem(name, smem, f"br={br}, bc={bc}, d={d}", hw)
    nblk = N // bc

    def s_addr(base, rows):
        return lambda c, row, cc: base + panel_offset(rows, row, cc, swizzle)

    q_ld = cp_async_tile("cpQ", "Q", br, d * BF16, threads, _row_addr(B, H, N, d, lambda c: c.bx * br),
                         s_addr(q_off, br))
    k0 = cp_async_tile("cpK0", "K", bc, d * BF16, threads, _row_addr(B, H, N, d, lambda c: 0), s_addr(k_off, bc))
    v_ld = cp_async_tile("cpV", "V", bc, d * BF16, threads, _row_addr(B, H, N, d, lambda c: c.it * bc),
                         s_addr(v_off, bc))
    k_next = cp_async_tile("cpK", "K", bc, d * BF16, threads,
                           _row_addr(B, H, N, d, lambda c: np.minimum(c.it + 1, nblk - 1) * bc), s_addr(k_off, bc))

    def ldsm_q(c):
        row = c.warp * rows_w + c.r * 16 + c.lane % 16
        return q_off + panel_offset(br, row, 2 * c.j + c.lane // 16, swizzle)

    def ldsm_k(c):
        row = c.r * 16 + c.lane % 8 + 8 * (c.lane // 16)
        return k_off + panel_offset(bc, row, 2 * c.j + (c.lane // 8) % 2, swizzle)

    def ldsm_v(c):  # .trans: rows of V are the k index of P V
        row = c.j * 16 + c.lane % 8 + 8 * ((c.lane // 8) % 2)
        return v_off + panel_offset(bc, row, 2 * c.r + c.lane // 16, swizzle)

    e = rows_w * bc // 32  # S elements per thread per iteration
    o_elems = rows_w * d // 32
    default_tiles = (br, bc) == (128, 128 if d == 64 else 64)
    stalls = SASS_FA2_STALLS[(d, bool(causal))] if default_tiles else NO_STALLS
    body = (
        WaitGroup("cp.async", 0), Barrier("kready"), *v_ld, Commit("cp.async"),
        Loop(d // 16, (Mem("ldsmQ", "shared", "ldsm", CHUNK, ldsm_q, repeat=mi, matrices=4),
                       Mem("ldsmK", "shared", "ldsm", CHUNK, ldsm_k, repeat=bc // 16, matrices=4),
                       Compute("mmaS", "tensor", mi * bc // 8, ilp=mi * bc // 8, after=("ldsmQ", "ldsmK"))), var="j"),
        *_softmax("", e, o_elems, stalls, after=("mmaS",)),
        WaitGroup("cp.async", 0), Barrier("vready"), *k_next, Commit("cp.async"),
        Loop(bc // 16, (Mem("ldsmV", "shared", "ldsm", CHUNK, ldsm_v, repeat=d // 16, matrices=4),
                        Compute("mmaO", "tensor", mi * d // 8, ilp=mi * d // 8, after=("ldsmV", "exp2"))), var="j"),
    )
    diag = max(br // bc, 1) if causal else 0
    counted = SASS_FA2.get((d, bool(causal))) if default_tiles else None
    if counted:  # the measured binary's instruction counts (at the default tiles; other tiles: the operations only)
        n_rest = counted[1] - instructions_per_warp(body, 0)
        body = (*body, sass_rest("loop_ctl", n_rest, None, stall_cycles=round(stalls[2] * n_rest)))

    def o_addr(c):
        m, rest = c.r // (d // 4), c.r % (d // 4)
        ni, h = rest // 2, rest % 2
        row = c.bx * br + c.warp * rows_w + m * 16 + c.lane // 4 + 8 * h
        return (((c.bz * H + c.by) * N + row) * d + ni * 8 + 2 * (c.lane % 4)) * BF16

    mask = SASS_FA2_MASK[d] if counted else MASK_FP32_PER_ELEMENT * e
    epi = ((Compute("mask", "fp32", mask * diag, ilp=8),) if diag else ()) + (
        Compute("normalize", "fp32", o_elems, ilp=8, after=("mmaO",)),
        Mem("stO", "global", "st", 4, o_addr, "O", repeat=mi * d // 4, after=("normalize",)))
    prologue = (*q_ld, *k0, Commit("cp.async"))
    if counted:
        prologue = (*prologue, sass_rest("pro_ctl", counted[0] - instructions_per_warp(prologue, 0), None))
        epi = (*epi, sass_rest("epi_ctl", counted[2] - instructions_per_warp(epi, 0) + mask * diag, None))
    grid = (N // br, H, B)
    trips = nblk
    trips_of = None
    if causal:
        trips_of = _causal_trips(br, bc, grid[0])
        trips = max(trips_of(i) for i in range(grid[0]))
    launch = Launch(grid, (threads, 1, 1), 255 if d == 128 else 254, smem)  # ptxas -v of the twin
    return Kernel(name, "attention", shape, {"br": br, "bc": bc, "causal": causal, "swizzle": swizzle}, launch,
                  prologue, Loop(trips, body), epi, _tensors(B, H, N, d),
                  _flops(B, H, N, d, causal), _twin(name), trips_of=trips_of)


@register("fa3", "attention", SHAPE, {"bc": 128, "causal": False, "stages": 2, "swizzle": "128B"}, _twin("fa3"),
          {"bc": (64, 128, 176), "stages": STAGES, "swizzle": SWIZZLES[1:]})
def fa3(shape, bc, causal, stages, swizzle, *, hw):
    """FlashAttention-3 forward: TMA K/V ring, wgmma, producer + 2 consumer warpgroups in ping-pong (br=128)."""
    name = "fa3"
    br = 128
    B, H, N, d = _check(name, shape, br)  # bc need not divide N: the last KV block is ragged
    q_bytes = br * d * BF16
    kv_bytes = bc * d * BF16
    smem = q_bytes + stages * 2 * kv_bytes + 1024
    check_smem(name, smem, f"stages={stages}, bc={bc}, d={d}", hw)
    nblk = -(-N // bc)
    producer = (0,)
    wg1, wg2 = (4, 5, 6, 7), (8, 9, 10, 11)
    consumers = wg1 + wg2
    panels = d // 64

    def boxes(prefix, tensor, rows, row_of, bar, seq):
        return tma_boxes(prefix, tensor, rows, 8 * panels, swizzle, _row_addr(B, H, N, d, row_of), bar, seq)

    q = boxes("tmaQ", "Q", br, lambda c: c.bx * br, "q", lambda it, j: 0)

    def kv_boxes(prefix, tensor):  # rows past N are out of the tensor map's bounds: the TMA fills zeros, reads nothing
        row_addr = _row_addr(B, H, N, d, lambda c: c.it * bc)
        return tma_boxes(prefix, tensor, bc, 8 * panels, swizzle,
                         lambda c, row, c16: np.where(c.it * bc + row < N, row_addr(c, row, c16), -1), "full",
                         lambda it, j: it)

    kv = (*kv_boxes("tmaK", "K"), *kv_boxes("tmaV", "V"))
    e = 64 * bc // 128  # S elements per consumer thread per iteration
    o_elems = 64 * d // 128
    stalls = SASS_FA3_STALLS.get((d, bc, int(bool(causal))), NO_STALLS)

    def consumer(wg, turn_wait, turn_arrive, tag):
        n_s = d // 16  # wgmma m64n{bc}k16 for S
        n_o = bc // 16  # wgmma m64n{d}k16 for O
        return (
            MbarWait("full", lambda it, j: it, wg),
            MbarWait(turn_wait, lambda it, j, t=tag: it - 1 if t == 1 else it, wg),  # ping-pong: take turns
            Compute("wgmmaS" + str(tag), "wgmma", n_s * bc // 8, warps=wg, group="wgmma", units=bc // 8),
            Commit("wgmma", wg), WaitGroup("wgmma", 0, wg),
            Arrive(turn_arrive, lambda it, j: it, wg),
            *_softmax(str(tag), e, o_elems, stalls, warps=wg),
            Compute("wgmmaO" + str(tag), "wgmma", n_o * d // 8, warps=wg, group="wgmma", units=d // 8,
                    after=("exp2" + str(tag),)),
            Commit("wgmma", wg), WaitGroup("wgmma", 0, wg),
            Arrive("empty", lambda it, j: it, wg),
        )

    body = (
        MbarWait("empty", lambda it, j: it - stages, producer), *kv,
        *consumer(wg1, "turn1", "turn2", 1),
        *consumer(wg2, "turn2", "turn1", 2),
    )
    sass = SASS_FA3_LOOP.get((d, bc, int(bool(causal))))
    if sass:  # the twin's address, loop-control, conversion and polling work the operations above leave out
        n_rest = sass[0] - instructions_per_warp(body, wg1[0])
        rest = (sass_rest("prod_ctl", sass[1] - instructions_per_warp(body, producer[0]), producer),
                sass_rest("cons_ctl", n_rest, consumers, stall_cycles=round(stalls[2] * n_rest)))
        body = (*rest, *body)
    diag = max(br // bc, 1) if causal else 0

    def o_addr(c):
        w = np.maximum(c.warp - 4, 0)
        ni, h = c.r // 2, c.r % 2
        row = c.bx * br + w * 16 + c.lane // 4 + 8 * h
        return (((c.bz * H + c.by) * N + row) * d + ni * 8 + 2 * (c.lane % 4)) * BF16

    epi = ((Compute("mask", "fp32", MASK_FP32_PER_ELEMENT * e * diag, ilp=8, warps=consumers),) if diag else ()) + (
        Compute("normalize", "fp32", o_elems, ilp=8, warps=consumers),
        Mem("stO", "global", "st", 4, o_addr, "O", repeat=d // 8 * 2, warps=consumers, after=("normalize",)))
    grid = (N // br, H, B)
    trips, trips_of = nblk, None
    if causal:
        trips_of = _causal_trips(br, bc, grid[0])
        trips = max(trips_of(i) for i in range(grid[0]))
    launch = Launch(grid, (384, 1, 1), 168, smem)
    prologue = (*q, MbarWait("q", lambda it, j: 0, consumers))
    paths = FA3_PATHS.get((d, bc, int(bool(causal))))
    if sass and paths:  # outside the loop: the set-up, the peeled first turn less the loop's full iteration the IR
        # runs for it, the last turn and the epilogue (the masking work, "mask", comes on top of the SASS path)
        common, init, cons_pre, cons_post, prod_pre, prod_post, idle = paths
        modelled = (*prologue, *(op for op in epi if op.name != "mask"))
        prologue = (sass_rest("setup", common, None), sass_rest("init", init, producer),
                    sass_rest("prod_setup", prod_pre + prod_post - instructions_per_warp(modelled, producer[0]),
                              producer),
                    sass_rest("idle_exit", idle, (1, 2, 3)),
                    sass_rest("cons_setup", cons_pre + cons_post - sass[0]
                              - instructions_per_warp(modelled, consumers[0]), consumers), *prologue)
    return Kernel(name, "attention", shape, {"bc": bc, "causal": causal, "stages": stages, "swizzle": swizzle},
                  launch, prologue, Loop(trips, body), epi, _tensors(B, H, N, d), _flops(B, H, N, d, causal),
                  _twin(name), mbarriers={"q": len(q), "full": len(kv), "empty": len(consumers), "turn1": 4,
                                          "turn2": 4},
                  warpgroup_regs=(24, 240, 240), trips_of=trips_of)
