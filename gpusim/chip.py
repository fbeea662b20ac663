"""The builder: wires a hardware config and a kernel into the chip model and runs it.

Steps, each owned by its unit: occupancy (``sm.occupancy``), exact per-warp access counts
(``patterns``), L1 hit rates from the SM's sector stream (``memory.l1``), L2 hit rates and DRAM bytes
from CTA waves in launch order (``memory.l2``), then the discrete-event SM model (``engine``) for a full
wave and for the tail wave, with L2 and HBM bandwidth shared by the SMs active in that wave.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpusim import patterns
from gpusim.config import HardwareConfig
from gpusim.engine import MemTiming, SmModel, SmParams, SmResult
from gpusim.ir import Kernel, Loop, Mem
from gpusim.memory.l1 import L1Stats, l1_hit_model
from gpusim.memory.l2 import L2Footprint, L2Result, l2_model
from gpusim.sm.occupancy import LaunchError, Occupancy, occupancy
from gpusim.sm.pipes import PIPES

L1_WARM_ITERATIONS = 8
L1_SAMPLE_ITERATIONS = 24
L2_CHUNKS = 16
L2_MAX_WAVES = 12


@dataclass
class Simulation:
    """Everything one run produced; :mod:`gpusim.metrics` turns it into a report."""

    kernel: Kernel
    config: HardwareConfig
    occ: Occupancy
    pats: dict[str, patterns.MemPattern]
    l1: dict[str, L1Stats]
    l2: L2Result
    full: SmResult | None
    tail: SmResult | None
    full_waves: int
    tail_ctas: int
    tail_ctas_per_sm: int
    total_cycles: float
    in_loop: dict[str, bool]  # whether each memory op sits in the outer loop
    trip_scale: float = 1.0  # mean over CTAs of their outer-loop trips / the kernel's loop trips


PROLOGUE, LOOP, EPILOGUE = "prologue", "loop", "epilogue"


def _structure(kernel: Kernel) -> dict[str, tuple[bool, int, str]]:
    """For each memory op: (in the outer loop, inner trips, part of the program)."""
    out = {}

    def visit(ops, part, inner):
        for op in ops:
            if isinstance(op, Loop):
                visit(op.body, part, op.trips)
            elif isinstance(op, Mem):
                out[op.name] = (part == LOOP, inner, part)

    visit(kernel.prologue, PROLOGUE, 1)
    if kernel.loop is not None:
        visit(kernel.loop.body, LOOP, 1)
    visit(kernel.epilogue, EPILOGUE, 1)
    return out


def per_warp_total(p: patterns.MemPattern, arr: np.ndarray, in_loop: bool, trips: int) -> np.ndarray:
    """Sum of a per-execution count over the whole kernel, per warp."""
    per_it = arr.sum(axis=1)  # (period, warps): inner iterations summed
    if not in_loop:
        return per_it[0]
    full, rest = divmod(trips, p.period)
    return full * per_it.sum(axis=0) + per_it[:rest].sum(axis=0)


def _l1_stream(kernel, pats, structure, ctas, sm_count, sector_bytes, iterations):
    ops = [p.op for p in pats.values() if p.op.space == "global" and p.op.kind == "ld"]
    residents = [patterns.cta_coords(kernel, c * sm_count) for c in range(ctas)
                 if c * sm_count < kernel.launch.num_ctas]

    def part(name, its):
        for it in its:
            for op in (o for o in ops if structure[o.name][2] == name):
                for j in range(structure[op.name][1]):
                    for cta in residents:
                        yield it, op.name, patterns.warp_sector_ids(kernel, op, cta, it, j, sector_bytes)

    yield from part(PROLOGUE, [0])
    yield from part(LOOP, range(iterations))
    yield from part(EPILOGUE, [0])


def _footprints(kernel, pats, structure, l1, trips, chunks, sector_bytes) -> list[L2Footprint]:
    out = []
    per_chunk = max(trips // chunks, 1)
    gx, gy, gz = kernel.launch.grid
    probe = [(0, 0, 0), (1 % gx, 0, 0), (0, 1 % gy, 0), (0, 0, 1 % gz)]
    for p in pats.values():
        op = p.op
        if op.space != "global":
            continue
        in_loop, inner, _ = structure[op.name]
        its = range(per_chunk) if in_loop else [0]

        base0 = patterns.cta_sector_ids(kernel, op, probe[0], [0], inner, sector_bytes)
        depends = tuple(probe[d + 1] != probe[0] and not np.array_equal(
            base0, patterns.cta_sector_ids(kernel, op, probe[d + 1], [0], inner, sector_bytes)) for d in range(3))
        base = patterns.cta_sector_ids(kernel, op, probe[0], its, inner, sector_bytes)
        # the chunk's distinct bytes, scaled so that all chunks together cover every loop iteration
        tile = len(base) * sector_bytes * (trips / (per_chunk * chunks) if in_loop else 1.0)
        req = float(per_warp_total(p, p.sectors, in_loop, trips).sum())
        if op.kind == "ld":
            st = l1.get(op.name)
            req *= 1 - (st.sector_hits / st.sectors if st and st.sectors else 0.0)
        scale = 1.0 / chunks if not in_loop else 1.0
        out.append(L2Footprint(op.name, op.tensor, op.kind, depends,
                               tile_bytes_per_chunk=tile * scale,
                               request_sectors_per_chunk=req / chunks))
    return out


def _data_keys(kernel, pats, sector_bytes):
    """Per global op, a function from linear CTA indices to the first sector each CTA's tile starts at."""
    out = {}
    for name, p in pats.items():
        if p.op.space != "global":
            continue

        def key(lin, op=p.op):
            firsts = []
            for i in np.asarray(lin).tolist():
                a = patterns.eval_addresses(kernel, op, patterns.cta_coords(kernel, i), 0, 0)
                firsts.append(int(a[a >= 0].min()) // sector_bytes if (a >= 0).any() else -1)
            return np.array(firsts, dtype=np.int64)
        out[name] = key
    return out


def _timings(cfg, pats, l1, l2) -> dict[str, MemTiming]:
    out = {}
    sb = cfg.l2.sector_bytes
    for name, p in pats.items():
        op = p.op
        if op.space == "shared":
            z = np.zeros_like(p.wavefronts, dtype=float)
            lat = cfg.shared_memory.ldmatrix_latency_cycles if op.kind == "ldsm" else \
                cfg.shared_memory.load_latency_cycles
            out[name] = MemTiming(p.wavefronts / cfg.shared_memory.wavefronts_per_cycle, p.instructions,
                                  p.period, z, z, 0.0, 0.0, lat)
            continue
        if op.kind == "tma":  # one instruction; bypasses L1; bytes to L2, misses to HBM
            h2 = l2.hit_fraction(name, sb)
            l2b = p.sectors * sb * 1.0
            out[name] = MemTiming(np.zeros_like(l2b), (p.instructions > 0).astype(np.int64), p.period, l2b,
                                  l2b * (1 - h2), 1.0, 1 - h2, cfg.tma.l2_latency_cycles)
            continue
        l1cyc = p.lines / cfg.l1.lines_per_cycle
        l1cyc = np.maximum(l1cyc, p.sectors * sb / cfg.l1.data_bytes_per_cycle)
        if op.kind == "ld":
            st = l1.get(name) or L1Stats()
            h1 = st.sector_hits / st.sectors if st.sectors else 0.0
            m1 = 1 - st.requests_all_hit / st.requests if st.requests else 1.0
            h2 = l2.hit_fraction(name, sb)
            l2b = p.sectors * sb * (1 - h1)
            out[name] = MemTiming(l1cyc, p.instructions, p.period, l2b, l2b * (1 - h2), m1, 1 - h2,
                                  cfg.l1.hit_latency_cycles)
        else:
            l2b = p.sectors * sb * 1.0
            written = l2.dram_write_bytes.get(name, 0.0)
            req = l2.request_sectors.get(name, 0.0) * sb
            frac = written / req if req else 0.0
            out[name] = MemTiming(l1cyc, p.instructions, p.period, l2b, l2b * frac, 0.0, 0.0,
                                  cfg.l1.hit_latency_cycles)
    return out


def _params(cfg: HardwareConfig, active_sms: int, warps_per_cta: int) -> SmParams:
    sm = cfg.sm
    return SmParams(
        subpartitions=sm.subpartitions, warp_size=sm.warp_size_threads,
        issue_per_cycle=cfg.scheduler.issue_instructions_per_cycle,
        pipe_rate={pipe: cfg.pipes.instructions_per_cycle(pipe, sm.subpartitions, sm.warp_size_threads)
                   for pipe in PIPES},
        pipe_latency={pipe: cfg.pipes.latency_cycles(pipe) for pipe in PIPES},
        barrier_latency=cfg.pipes.barrier_cycles(warps_per_cta),
        lsu_queue_cycles=cfg.l1.lsu_queue_cycles,
        l2_latency=cfg.l2.hit_latency_cycles,
        hbm_latency=cfg.hbm.load_latency_cycles,
        l2_bytes_per_cycle=cfg.l2.bandwidth_bytes_per_cycle / active_sms,
        hbm_bytes_per_cycle=cfg.hbm.achievable_bandwidth_bytes_per_second / cfg.chip.sm_clock_hz / active_sms,
        cta_launch_cycles=cfg.chip.cta_launch_cycles, tma=cfg.tma)


def _simulate_uneven(kernel, cfg, occ, pats, l1, l2, timings, structure, trace) -> Simulation:
    """CTAs with different loop trips (causal attention): the SM model gives the time of a CTA as a function of
    its trips (``t(n) = t(max) - (max - n) * period``, with ``ctas_per_sm`` CTAs sharing the SM); CTAs then go,
    in launch order, to whichever SM slot frees first (greedy list scheduling)."""
    import heapq

    sms = cfg.chip.sm_count
    n = kernel.launch.num_ctas
    trips = [kernel.trips_of(i) for i in range(n)]
    top = max(trips)
    slots = min(sms * occ.ctas_per_sm, n)
    per_sm = -(-slots // sms)
    res = SmModel(kernel, timings, _params(cfg, min(slots, sms), occ.warps_per_cta), per_sm, trace, trips=top).run()
    per_iter = res.period if res.period > 0 else res.cycles / max(top, 1)
    free = [0.0] * slots
    for t in trips:
        start = heapq.heappop(free)
        heapq.heappush(free, start + max(res.cycles - (top - t) * per_iter, 1.0))
    total = max(free)
    in_loop = {name: structure[name][0] for name in pats}
    scale = sum(trips) / (n * top)
    for d in (l2.request_sectors, l2.dram_read_bytes, l2.dram_write_bytes):  # the loop runs `scale` as often
        for name in d:
            if in_loop.get(name):
                d[name] *= scale
    return Simulation(kernel, cfg, occ, pats, l1, l2, res, None, total / res.cycles, 0, 0, total, in_loop,
                      trip_scale=scale)


def simulate(kernel: Kernel, cfg: HardwareConfig, trace: bool = False) -> Simulation:
    """Run the whole model for one kernel launch."""
    launch = kernel.launch
    try:
        occ = occupancy(cfg.sm, launch.threads_per_block, launch.regs_per_thread, launch.smem_bytes,
                        cfg.shared_memory.carveouts_bytes)
    except LaunchError as e:
        raise LaunchError(f"{kernel.name}: {e}") from None
    pats = patterns.analyze(kernel)
    structure = _structure(kernel)
    trips = patterns.loop_trips(kernel)
    sms = cfg.chip.sm_count
    sb = cfg.l1.sector_bytes
    l1_capacity = cfg.sm.unified_l1_smem_bytes - occ.smem_carveout_bytes
    warm = min(L1_WARM_ITERATIONS, trips // 2)
    l1 = l1_hit_model(_l1_stream(kernel, pats, structure, occ.ctas_per_sm, sms, sb,
                                 min(trips, L1_SAMPLE_ITERATIONS)), l1_capacity, sb, warm)
    chunks = min(trips, L2_CHUNKS)
    fps = _footprints(kernel, pats, structure, l1, trips, chunks, sb)
    per_wave = sms * occ.ctas_per_sm
    if kernel.persistent_ctas:  # one tile per persistent CTA at a time, in the scheduler's order
        per_wave = min(kernel.persistent_ctas, sms * occ.ctas_per_sm)
    keys_of = _data_keys(kernel, pats, sb) if kernel.cluster > 1 else None
    l2 = l2_model(fps, launch.grid, per_wave, chunks, cfg.l2, L2_MAX_WAVES, order=kernel.tile_order, keys_of=keys_of)
    timings = _timings(cfg, pats, l1, l2)
    n = launch.num_ctas
    if kernel.trips_of is not None:
        return _simulate_uneven(kernel, cfg, occ, pats, l1, l2, timings, structure, trace)
    full_waves, tail_ctas = divmod(n, per_wave)
    full = None
    if full_waves:
        full = SmModel(kernel, timings, _params(cfg, sms, occ.warps_per_cta), occ.ctas_per_sm, trace).run()
    tail_per_sm = -(-tail_ctas // sms)
    tail = None
    if tail_ctas:
        tail = SmModel(kernel, timings, _params(cfg, min(tail_ctas, sms), occ.warps_per_cta), tail_per_sm,
                       trace and not full_waves).run()
    total = full_waves * (full.cycles if full else 0.0) + (tail.cycles if tail else 0.0)
    in_loop = {name: structure[name][0] for name in pats}
    return Simulation(kernel, cfg, occ, pats, l1, l2, full, tail, full_waves, tail_ctas, tail_per_sm, total,
                      in_loop)
