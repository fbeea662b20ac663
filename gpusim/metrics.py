"""Reports in the profiler's language: Nsight Compute metric names, the stall breakdown, each unit's share of its
peak (SOL) and the verdict (:mod:`gpusim.bottleneck`)."""

from __future__ import annotations

from gpusim import bottleneck
from gpusim.chip import Simulation, class_totals, tensor_activity_of
from gpusim.engine import STALLS
from gpusim.memory.hbm import Hbm
from gpusim.memory.l2 import L2Partitions, L2WritePath
from gpusim.memory.l2_atomics import L2Atomics
from gpusim.memory.l2_port import L2Port
from gpusim.memory.lsu import L1TexPipe
from gpusim.memory.tma import TmaEngine
from gpusim.sm import clock as clock_model
from gpusim.sm.pipes import ExecutionPipes
from gpusim.sm.scheduler import IssueSlots
from gpusim.ir import STORES, TMA_KINDS, Compute, Loop, Mem
from gpusim.peaks import peaks
from gpusim.stalls import CAUSES
from gpusim.ncu import TIME

STALL_METRIC = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
PIPE = ExecutionPipes.NAME  # a pipe's busy cycles are reported under PIPE.format(its name)

# The metrics every report carries, in display order, with a short label.
HEADLINE = {
    TIME: "time (ns)",
    "dram__bytes_read.sum": "DRAM read (B)",
    "dram__bytes_write.sum": "DRAM write (B)",
    "lts__t_sector_hit_rate.pct": "L2 hit %",
    "l1tex__t_sector_hit_rate.pct": "L1 hit %",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "gld sectors",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "gld requests",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "lds conflicts",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "sts conflicts",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": "lds wavefronts",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "occupancy %",
    "launch__registers_per_thread": "regs",
}


def _op_total(sim: Simulation, name: str, field: str) -> float:
    """One memory operation's count over the whole launch (every warp of every CTA)."""
    trips = sim.kernel.loop.trips if sim.kernel.loop is not None else 1
    scale = sim.trip_scale if sim.in_loop[name] else 1.0
    # each class of CTAs (the interior, partial edge tiles) with its own pattern
    return class_totals(sim.classes, name, field, sim.in_loop[name], trips) * scale


def _sum_ops(sim: Simulation, space: str, kind: str, field: str, async_copy: bool = False,
             atomic: bool = False, local: bool | None = False, reduction: bool | None = None) -> float:
    """An operation field's total over the launch, of the operations of one space and kind; ``local``: of local
    memory (``Tensor.local``, the stack frame; ncu counts it apart from global), False: of global, None: of both;
    ``reduction``: of the global atomics that are reductions (RED: ncu's op_red) or not (op_atom), None: both."""
    frame = sim.kernel.local_tensors
    return sum(_op_total(sim, name, field) for name, p in sim.pats.items()
               if p.op.space == space and p.op.kind == kind and p.op.async_copy == async_copy
               and bool(p.op.atomic) == atomic and (local is None or (p.op.tensor in frame) == local)
               and (reduction is None or p.op.reduction == reduction))


def _l1_sector_hits(sim: Simulation, local: bool) -> float:
    """The L1 sector hits of the global (or ``local``: local-memory) loads over the launch."""
    frame = sim.kernel.local_tensors
    return sum(s.sector_hits / s.sectors * _op_total(sim, n, "sectors") for n, s in sim.l1.items()
               if s.sectors and (sim.pats[n].op.tensor in frame) == local)


def _local_requests(sim: Simulation, kind: str) -> float:
    """ncu's local-memory requests: one per 4-byte word of each lane's access (a frame interleaves threads word by word,
    so an STL.128 is four requests; measured: validate/measurements/h100/fresh-local-2026-11-28.json, localarr's 16
    STL.128 a thread count 2,097,152 requests for 524,288 warp instructions)."""
    frame = sim.kernel.local_tensors
    return sum(_op_total(sim, n, "instructions") * max(p.op.width_bytes // 4, 1) for n, p in sim.pats.items()
               if p.op.space == "global" and p.op.kind == kind and p.op.tensor in frame)


def _local_metrics(sim: Simulation) -> dict:
    """ncu's local-memory counters (spills, arrays indexed at run time), for a kernel that has any."""
    frame = sim.kernel.local_tensors
    if not frame:
        return {}
    sectors = _sum_ops(sim, "global", "ld", "sectors", local=True)
    hits = _l1_sector_hits(sim, local=True)
    return {"l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum": round(sectors),
            "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum": round(_local_requests(sim, "ld")),
            "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum": round(_sum_ops(sim, "global", "st", "sectors",
                                                                            local=True)),
            "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum": round(_local_requests(sim, "st")),
            "l1tex__t_sector_pipe_lsu_mem_local_op_ld_hit_rate.pct": round(100.0 * hits / sectors, 2) if sectors
            else 0.0}


def _atomic_metrics(sim: Simulation, l2_sectors: dict[str, float]) -> dict:
    """ncu's counters of atomics, for a kernel that has any: shared atomics' wavefronts, and global atomics'
    requests, sectors and L2 lookups under ncu's names: op_atom for those that return the old value (ATOMG),
    op_red for the reductions (RED). ``l2_sectors``: L2 lookups per operation."""
    if not any(p.op.atomic for p in sim.pats.values()):
        return {}
    out = {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum":
           round(_sum_ops(sim, "shared", "st", "wavefronts", atomic=True)),
           bottleneck.LINES_ATOM: round(_sum_ops(sim, "global", "st", "lines", atomic=True))}
    for op, red in (("atom", False), ("red", True)):
        names = [n for n, p in sim.pats.items() if p.op.atomic and p.op.space == "global" and p.op.reduction == red]
        out[f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum"] = round(
            _sum_ops(sim, "global", "st", "instructions", atomic=True, reduction=red))
        out[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum"] = round(
            _sum_ops(sim, "global", "st", "sectors", atomic=True, reduction=red))
        out[f"lts__t_sectors_op_{op}.sum"] = round(sum(l2_sectors.get(n, 0.0) for n in names))
    return out


def compute_totals(sim: Simulation) -> dict[str, tuple[float, float]]:
    """Per pipe: (warp instructions issued, pipe units worked) over the whole launch."""
    k = sim.kernel
    warps = -(-k.launch.threads_per_block // sim.config.sm.warp_size_threads)
    out: dict[str, list[float]] = {}

    def walk(ops, mult, js):
        for op in ops:
            if isinstance(op, Loop):
                walk(op.body, mult, [j for _ in js for j in range(op.trips)])
            elif isinstance(op, Compute):
                members = range(warps) if op.warps is None else [w for w in op.warps if w < warps]
                n = sum(1 for j in js for w in members if op.when is None or op.when(w, j))
                acc = out.setdefault(op.pipe, [0.0, 0.0])
                acc[0] += mult * n * op.count / op.units
                acc[1] += mult * n * op.count

    walk(k.prologue, 1.0, [0])
    if k.loop is not None:
        walk(k.loop.body, float(k.loop.trips) * sim.trip_scale, [0])
    walk(k.epilogue, 1.0, [0])
    return {pipe: (a * k.launch.num_ctas, b * k.launch.num_ctas) for pipe, (a, b) in out.items()}


def _unsimulated_instructions(k) -> int:
    """A persistent kernel's instructions outside its tiles: every launched CTA's set-up and exit, and the CTAs
    beyond the tile count, which run the set-up and exit at once."""
    if not k.persistent_ctas:
        return 0
    busy = min(k.persistent_ctas, k.launch.num_ctas)
    return busy * k.cta_instructions + (k.persistent_ctas - busy) * k.idle_cta_instructions


def report(sim: Simulation) -> dict:
    """One flat dict keyed by ncu metric names (plus ``gpusim__*`` keys for what ncu has no name for)."""
    cfg, k = sim.config, sim.kernel
    clock = sim.clock_hz or sm_clock_hz_for(sim)
    time_ns = sim.total_cycles / clock * 1e9 + cfg.chip.kernel_overhead_ns
    if any(op.kind in TMA_KINDS for op in sim.kernel.all_ops() if isinstance(op, Mem)):
        time_ns += cfg.chip.tensor_map_param_launch_ns  # its tensor maps come as __grid_constant__ parameters
    sb = cfg.l2.sector_bytes
    ld_sectors = _sum_ops(sim, "global", "ld", "sectors")
    st_sectors = _sum_ops(sim, "global", "st", "sectors")
    # ncu's op_ld shared counters include ldmatrix (measured: hgemm_mma, validate/measurements/h100/mma-*.json)
    ldsm_wf = _sum_ops(sim, "shared", "ldsm", "wavefronts")
    ldsm_conf = ldsm_wf - _sum_ops(sim, "shared", "ldsm", "ideal_wavefronts")
    lds_wf = _sum_ops(sim, "shared", "ld", "wavefronts") + ldsm_wf
    sts_wf = _sum_ops(sim, "shared", "st", "wavefronts")
    l1_hits = _l1_sector_hits(sim, local=False)
    l2_req_ld = sum(v for n, v in sim.l2.request_sectors.items() if sim.pats[n].op.kind in ("ld", "tma"))
    l2_req_st = sum(v for n, v in sim.l2.request_sectors.items() if sim.pats[n].op.kind in STORES)
    dram_rd = sum(sim.l2.dram_read_bytes.values())
    dram_wr = sum(sim.l2.dram_write_bytes.values())
    # ncu counts lookups in both L2 partitions: a sector that misses to DRAM is looked up
    # ``miss_lookups_per_sector`` times (measured), so lookups and misses both grow with DRAM reads
    # a missed sector is one miss however many neighbours the fetch brings along (hbm.fetch_granularity_bytes)
    fetch = sim.l2.fetch_ratio or {}
    missed = sum(v / fetch.get(n, 1.0) for n, v in sim.l2.dram_read_bytes.items()) / sb
    extra = missed * (cfg.l2.miss_lookups_per_sector - 1)
    l2_req_ld += extra
    # a stored sector is looked up ``store_lookups_per_sector`` times too (measured), each a hit: stores allocate; an
    # atomic's sectors as a store's (ncu: lts__t_sectors_op_red 1.50 per RED sector, fresh-2026-11-28.json), counted
    # under its own name (op_atom, op_red), not op_write
    l2_req_st *= cfg.l2.store_lookups_per_sector
    atomic_lookups = {n: v * cfg.l2.store_lookups_per_sector for n, v in sim.l2.request_sectors.items()
                  if sim.pats[n].op.atomic}
    l2_total = l2_req_ld + l2_req_st
    l2_hit = 100.0 * (1 - missed * cfg.l2.miss_lookups_per_sector / l2_total) if l2_total else 100.0
    res = sim.result
    occ_pct = 100.0 * res.warp_cycles / res.sm_active_cycles / cfg.sm.max_warps_per_sm if res.sm_active_cycles \
        else 0.0
    issue = res.issue_cycles
    stalls = res.stalls
    m: dict = {
        TIME: round(time_ns, 1),
        "gpc__cycles_elapsed.max": round(sim.total_cycles),
        "dram__bytes_read.sum": round(dram_rd),
        "dram__bytes_write.sum": round(dram_wr),
        "lts__t_sector_hit_rate.pct": round(l2_hit, 2),
        "lts__t_sectors_op_read.sum": round(l2_req_ld),
        "lts__t_sectors_op_write.sum": round(l2_req_st - sum(atomic_lookups.values())),
        "l1tex__t_sector_hit_rate.pct": round(100.0 * l1_hits / ld_sectors, 2) if ld_sectors else 0.0,
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": round(ld_sectors),
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": round(_sum_ops(sim, "global", "ld", "instructions")),
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": round(st_sectors),
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": round(_sum_ops(sim, "global", "st", "instructions")),
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum":
            round(lds_wf - ldsm_wf - _sum_ops(sim, "shared", "ld", "ideal_wavefronts") + ldsm_conf),
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum":
            round(sts_wf - _sum_ops(sim, "shared", "st", "ideal_wavefronts")),
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": round(lds_wf),
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": round(sts_wf),
        "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum": round(ldsm_wf),
        "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum": round(ldsm_conf),
        "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum":
            round(_sum_ops(sim, "shared", "stsm", "wavefronts")),
        "gpusim__ldgsts_shared_wavefronts": round(_sum_ops(sim, "shared", "st", "wavefronts", async_copy=True)),
        **_atomic_metrics(sim, atomic_lookups),
        **_local_metrics(sim),
        "sm__warps_active.avg.pct_of_peak_sustained_active": round(occ_pct, 2),
        "smsp__inst_executed.sum": round(issue + _unsimulated_instructions(k)),
        "launch__registers_per_thread": k.launch.regs_per_thread,
        "launch__shared_mem_per_block": k.launch.smem_bytes,
        "launch__block_size": k.launch.threads_per_block,
        "launch__grid_size": k.launch.num_ctas,
        "launch__occupancy_limit_registers": sim.occ.limits["registers"],
        "launch__occupancy_limit_shared_mem": sim.occ.limits["shared memory"],
        "launch__occupancy_limit_warps": sim.occ.limits["warps"],
        "launch__occupancy_limit_blocks": sim.occ.limits["blocks"],
    }
    pipes = compute_totals(sim)
    # ncu counts wgmma instructions on the hmma pipe too (measured: hopper-gemm-2026-11-22.json, fa3-*.json)
    m["sm__inst_executed_pipe_tensor_op_hmma.sum"] = round(pipes.get("tensor", (0, 0))[0] +
                                                           pipes.get("wgmma", (0, 0))[0])
    m["sm__inst_executed_pipe_tensor_op_gmma.sum"] = round(pipes.get("wgmma", (0, 0))[0])
    m["smsp__inst_executed_op_ldsm.sum"] = round(_sum_ops(sim, "shared", "ldsm", "instructions"))
    tma_bytes = sum(_op_total(sim, n, "sectors") for n, p in sim.pats.items() if p.op.kind == "tma") * sb
    m["gpusim__tma_load_bytes"] = round(tma_bytes)
    m["gpusim__tma_copies"] = round(sum(_op_total(sim, n, "instructions") / max(p.op.repeat, 1)
                                        for n, p in sim.pats.items() if p.op.kind == "tma"))
    m["gpusim__tma_store_bytes"] = round(sum(_op_total(sim, n, "sectors") for n, p in sim.pats.items()
                                             if p.op.kind == "tma_st") * sb)
    if k.warpgroup_regs:
        m["gpusim__setmaxnreg"] = "/".join(map(str, k.warpgroup_regs))
    for s in STALLS:
        if s == "membar" and not stalls[s]:  # only kernels with fences report it
            continue
        m[STALL_METRIC.format(s)] = round(stalls[s] / issue, 3) if issue else 0.0
    flops_per_s = k.flops / (time_ns * 1e-9)
    m["gpusim__gflops"] = round(flops_per_s / 1e9, 1)
    m["gpusim__tflops"] = round(flops_per_s / 1e12, 2)
    m["sm__cycles_elapsed.avg.per_second"] = round(clock)
    m["gpusim__ctas_per_sm"] = sim.occ.ctas_per_sm
    m["gpusim__occupancy_limiter"] = sim.occ.limiter
    m["gpusim__waves"] = round(k.launch.num_ctas / (cfg.chip.sm_count * sim.occ.ctas_per_sm), 3)
    m["gpusim__simulated_sms"] = sim.representatives
    m["gpusim__fast_forward"] = bool(res.fast_forward) or sim.l2.waves_simulated < sim.l2.waves_total
    m["gpusim__steady_state"] = bool(res.loop_steady)
    m["gpusim__utilization_pct"] = utilization(sim)
    # the L1TEX pipe's work: local memory's lines with global's
    m[bottleneck.LINES_LD] = round(_sum_ops(sim, "global", "ld", "lines", local=None))
    m[bottleneck.LINES_ST] = round(_sum_ops(sim, "global", "st", "lines", local=None))
    if tensor_activity(sim):
        m[bottleneck.TENSOR_KIND] = "wgmma" if _share(sim, PIPE.format("wgmma")) else "mma.sync"
    m[bottleneck.SOL] = sol(sim, time_ns)
    m[CAUSES] = stall_causes(res.stall_causes)
    a = bottleneck.analyze(m, cfg)
    m[bottleneck.LIMITER] = a.limiter
    m["gpusim__verdict"] = a.verdict
    return m


def stall_causes(tally: dict) -> dict[str, dict[str, float]]:
    """Per stall reason, the share (%) of its cycles each cause the engine tallied holds."""
    out: dict[str, dict[str, float]] = {}
    for (reason, cause), cycles in tally.items():
        out.setdefault(reason, {})[cause] = cycles
    for reason, got in out.items():
        total = sum(got.values()) or 1.0
        out[reason] = {c: round(100 * v / total, 1) for c, v in sorted(got.items(), key=lambda x: (-x[1], x[0]))}
    return {r: out[r] for r in sorted(out)}


def sol(sim: Simulation, time_ns: float) -> dict[str, float]:
    """Speed of light: each unit's busy time over the kernel's elapsed time (``gpu__time_duration.sum``, launch
    overheads included, as ncu's ``pct_of_peak_sustained_elapsed``), in percent of its own peak at the clock the
    model ran (:mod:`gpusim.peaks`). The tensor pipe is its FLOPs against the peak of the instruction the kernel uses
    (wgmma's dense peak, or mma.sync's measured one) over the whole chip, so it agrees with the FLOP/s printed beside
    it. The L2 write path's share is of the most it was measured to carry (``l2.write_peak_bytes_per_second``), which is
    above the rate the model runs it at. A unit's work cannot outrun its rate (:mod:`gpusim.resources`): no share
    exceeds 100%."""
    cfg, k, res = sim.config, sim.kernel, sim.result
    clock = sim.clock_hz or sm_clock_hz_for(sim)
    elapsed = (res.cycles / clock * 1e9) / time_ns if time_ns else 0.0  # active share of the elapsed time
    units = {"HBM": Hbm.NAME, "L2": L2Partitions.NAME, "L2 write path": L2WritePath.NAME, "L2 port": L2Port.NAME,
             "L1/shared pipe": L1TexPipe.NAME, "issue slots": IssueSlots.NAME, "FP32 pipe": PIPE.format("fp32")}
    out = {name: _share(sim, unit) * elapsed for name, unit in units.items()}
    pk = peaks(cfg, clock)  # the write path runs at the model's rate, its peak is the most measured (issue 27)
    out["L2 write path"] *= pk.l2_write_model_bytes_per_second / pk.l2_write_bytes_per_second
    if tensor_activity(sim):
        kind = "wgmma" if _share(sim, PIPE.format("wgmma")) > 0 else "mma.sync"
        out["tensor pipe"] = k.flops / (time_ns * 1e-9) / pk.tensor_for(kind) if time_ns else 0.0
    for name, unit in (("SFU pipe", PIPE.format("sfu")), ("TMA unit", TmaEngine.NAME),
                       ("TMA stores", TmaEngine.NAME + " store")):
        if _share(sim, unit) > 0:
            out[name] = _share(sim, unit) * elapsed
    atomics = max(_share(sim, L2Atomics.LINES), _share(sim, L2Atomics.SLICES))  # the busier of lines and slices
    if atomics > 0:
        out["L2 atomics"] = atomics * elapsed
    return {name: round(100 * float(v), 1) for name, v in out.items()}


def _share(sim: Simulation, unit: str) -> float:
    """Busy cycles of every instance of ``unit`` over the instances' cycles of the kernel."""
    res = sim.result
    return res.busy.get(unit, 0.0) / (res.instances.get(unit, 1) * max(res.cycles, 1.0))


def tensor_activity(sim: Simulation) -> float:
    """Tensor-core work per cycle as a share of the dense wgmma peak (:func:`gpusim.sm.clock.tensor_activity`)."""
    return tensor_activity_of(sim)


def sm_clock_hz_for(sim: Simulation) -> float:
    """The SM clock the kernel runs at (:func:`gpusim.sm.clock.sm_clock_hz_for`)."""
    return clock_model.sm_clock_hz_for(tensor_activity_of(sim), sim.config.chip, sim.config.pipes)


def utilization(sim: Simulation) -> dict[str, float]:
    """Share of each unit's peak used over the kernel, in percent: its busy cycles (every instance on the chip)
    over the kernel's cycles. Busy time cannot exceed elapsed time (:mod:`gpusim.resources`), so no share can
    exceed 100%. HBM is shown against the datasheet peak (the model runs it at the measured achievable rate);
    tensor work against the dense bf16 tensor peak (the wgmma rate; mma.sync runs at its own lower rate)."""
    pk = peaks(sim.config)

    def share(unit: str) -> float:
        return _share(sim, unit)

    out = {
        "HBM bandwidth": share(Hbm.NAME) * pk.hbm_bytes_per_second / pk.hbm_datasheet_bytes_per_second,
        "L2 bandwidth": share(L2Partitions.NAME),
        "L2 write": share(L2WritePath.NAME),
        "L2 port": share(L2Port.NAME),
        "L1/shared pipe": share(L1TexPipe.NAME),
        "issue slots": share(IssueSlots.NAME),
    }
    tensor = tensor_activity(sim)
    if tensor:
        out |= {"tensor peak": tensor, "SFU pipe": share(PIPE.format("sfu"))}
    else:
        out |= {"FP32 peak": share(PIPE.format("fp32"))}
    return {k: round(100 * v, 1) for k, v in out.items()}
