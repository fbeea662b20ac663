"""Nsight Compute's sections for a prediction: every metric gpusim reports with its section, unit and meaning, the
text report ``gpusim run`` prints (and the app shows), the ``--metrics`` filter and the CSV.

Sections and their order follow ncu's (``GPU Speed Of Light Throughput``, ``Memory Workload Analysis``, ``Compute
Workload Analysis``, ``Launch Statistics``, ``Occupancy``, ``Warp State Statistics``), plus ``Simulation`` for what
only a model has. Every number carries its unit.
"""

from __future__ import annotations

import csv
import difflib
import fnmatch
import io
import re
from dataclasses import dataclass

from gpusim import bottleneck as bn
from gpusim import stalls as stall_text
from gpusim import units as u
from gpusim.config import HardwareConfig
from gpusim.ncu import TIME

SOL_SECTION = "GPU Speed Of Light Throughput"
MEMORY = "Memory Workload Analysis"
COMPUTE = "Compute Workload Analysis"
LAUNCH = "Launch Statistics"
OCCUPANCY = "Occupancy"
WARP_STATE = "Warp State Statistics"
SIMULATION = "Simulation"
SECTIONS = (SOL_SECTION, MEMORY, COMPUTE, LAUNCH, OCCUPANCY, WARP_STATE, SIMULATION)


@dataclass(frozen=True)
class MetricInfo:
    section: str
    unit: str  # as ncu's --print-units base spells it ("" for a ratio or a name)
    meaning: str


# every metric of gpusim.metrics.report, in its section, with its unit and meaning
CATALOG: dict[str, MetricInfo] = {
    TIME: MetricInfo(SOL_SECTION, "ns", "kernel duration, launch to the last write"),
    "sm__cycles_elapsed.avg.per_second": MetricInfo(SOL_SECTION, "Hz", "SM clock the kernel ran at"),
    "gpc__cycles_elapsed.max": MetricInfo(SOL_SECTION, "cycle", "elapsed SM cycles (without the launch overhead)"),
    bn.SOL: MetricInfo(SOL_SECTION, "%", "each unit's busy share of its peak over the elapsed time"),
    bn.LIMITER: MetricInfo(SOL_SECTION, "", "the unit with the largest share of its peak"),
    "gpusim__verdict": MetricInfo(SOL_SECTION, "", "the limiter and the work that explains it"),
    "gpusim__utilization_pct": MetricInfo(SOL_SECTION, "%", "busy share while the SMs ran (pct_of_peak_sustained_"
                                                            "active; HBM against its datasheet peak)"),
    "dram__bytes_read.sum": MetricInfo(MEMORY, "byte", "bytes read from HBM"),
    "dram__bytes_write.sum": MetricInfo(MEMORY, "byte", "bytes written to HBM"),
    "lts__t_sector_hit_rate.pct": MetricInfo(MEMORY, "%", "L2 sector lookups that hit"),
    "lts__t_sectors_op_read.sum": MetricInfo(MEMORY, "sector", "L2 read lookups (a miss is looked up 1.5 times)"),
    "lts__t_sectors_op_write.sum": MetricInfo(MEMORY, "sector", "L2 write lookups (stores; atomics count "
                                                                   "apart)"),
    "l1tex__t_sector_hit_rate.pct": MetricInfo(MEMORY, "%", "L1 sector hit rate of global loads"),
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": MetricInfo(MEMORY, "sector", "32-B sectors global loads touch"),
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": MetricInfo(MEMORY, "request", "global load warp instructions"),
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": MetricInfo(MEMORY, "sector", "32-B sectors global stores touch"),
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": MetricInfo(MEMORY, "request", "global store warp instructions"),
    bn.LINES_LD: MetricInfo(MEMORY, "line", "128-B lines global and local loads touch (the L1TEX pipe's cycles)"),
    bn.LINES_ST: MetricInfo(MEMORY, "line", "128-B lines global and local stores touch (each costs the L2 write path "
                                            "a line operation)"),
    bn.LOCAL_LD: MetricInfo(MEMORY, "sector", "32-B sectors local loads touch (the stack frame: spills, arrays "
                                              "indexed at run time)"),
    "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum": MetricInfo(MEMORY, "request", "local load requests (one a 4-B "
                                                                                   "word of each lane's access)"),
    bn.LOCAL_ST: MetricInfo(MEMORY, "sector", "32-B sectors local stores touch"),
    "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum": MetricInfo(MEMORY, "request", "local store requests (one a 4-B "
                                                                                   "word of each lane's access)"),
    "l1tex__t_sector_pipe_lsu_mem_local_op_ld_hit_rate.pct": MetricInfo(MEMORY, "%", "L1 sector hit rate of local "
                                                                                    "loads"),
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum": MetricInfo(MEMORY, "request", "global atomic warp "
                                                                     "instructions that return the old value (ATOMG)"),
    bn.SECTORS_ATOM: MetricInfo(MEMORY, "sector", "32-B sectors global atomics (ATOMG) touch"),
    "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum": MetricInfo(MEMORY, "request", "global reduction warp "
                                                                    "instructions (RED: the value unused)"),
    bn.SECTORS_RED: MetricInfo(MEMORY, "sector", "32-B sectors global reductions (RED) touch"),
    "lts__t_sectors_op_atom.sum": MetricInfo(MEMORY, "sector", "L2 lookups of global atomics (ATOMG)"),
    "lts__t_sectors_op_red.sum": MetricInfo(MEMORY, "sector", "L2 lookups of global reductions (RED)"),
    bn.LINES_ATOM: MetricInfo(MEMORY, "line", "128-B lines global atomics touch (each costs the L2 write path a line "
                                              "operation)"),
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": MetricInfo(MEMORY, "conflict",
                                                                           "extra wavefronts of shared loads"),
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": MetricInfo(MEMORY, "conflict",
                                                                           "extra wavefronts of shared stores"),
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": MetricInfo(MEMORY, "wavefront",
                                                                       "shared-load wavefronts (ldmatrix included)"),
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": MetricInfo(MEMORY, "wavefront", "shared-store wavefronts"),
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum": MetricInfo(MEMORY, "wavefront",
                                                                                 "ldmatrix wavefronts"),
    "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum": MetricInfo(MEMORY, "conflict",
                                                                                     "ldmatrix bank conflicts"),
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum": MetricInfo(MEMORY, "wavefront",
                                                                                 "stmatrix wavefronts"),
    "gpusim__ldgsts_shared_wavefronts": MetricInfo(MEMORY, "wavefront", "shared wavefronts cp.async writes"),
    "gpusim__tma_load_bytes": MetricInfo(MEMORY, "byte", "bytes TMA copies bring into shared memory"),
    "gpusim__tma_copies": MetricInfo(MEMORY, "copy", "TMA copy instructions"),
    "gpusim__tma_store_bytes": MetricInfo(MEMORY, "byte", "bytes TMA stores write from shared memory to global"),
    "gpusim__gflops": MetricInfo(COMPUTE, "GFLOP/s", "counted FLOPs over the duration"),
    "gpusim__tflops": MetricInfo(COMPUTE, "TFLOP/s", "counted FLOPs over the duration"),
    "smsp__inst_executed.sum": MetricInfo(COMPUTE, "inst", "warp instructions executed"),
    "sm__inst_executed_pipe_tensor_op_hmma.sum": MetricInfo(COMPUTE, "inst", "tensor-pipe instructions (mma.sync "
                                                                             "and wgmma, as ncu counts them)"),
    "sm__inst_executed_pipe_tensor_op_gmma.sum": MetricInfo(COMPUTE, "inst", "wgmma instructions"),
    "smsp__inst_executed_op_ldsm.sum": MetricInfo(COMPUTE, "inst", "ldmatrix instructions"),
    bn.TENSOR_KIND: MetricInfo(COMPUTE, "", "the tensor instruction the kernel uses"),
    "launch__block_size": MetricInfo(LAUNCH, "thread", "threads per CTA"),
    "launch__grid_size": MetricInfo(LAUNCH, "block", "CTAs launched"),
    "launch__registers_per_thread": MetricInfo(LAUNCH, "register/thread", "registers per thread"),
    "launch__shared_mem_per_block": MetricInfo(LAUNCH, "byte/block", "shared memory per CTA"),
    "gpusim__setmaxnreg": MetricInfo(LAUNCH, "register/thread", "registers per warpgroup after setmaxnreg"),
    "gpusim__waves": MetricInfo(LAUNCH, "wave", "CTAs over the CTAs the chip holds at once"),
    "sm__warps_active.avg.pct_of_peak_sustained_active": MetricInfo(OCCUPANCY, "%", "achieved occupancy"),
    "launch__occupancy_limit_registers": MetricInfo(OCCUPANCY, "block", "CTAs per SM the registers allow"),
    "launch__occupancy_limit_shared_mem": MetricInfo(OCCUPANCY, "block", "CTAs per SM shared memory allows"),
    "launch__occupancy_limit_warps": MetricInfo(OCCUPANCY, "block", "CTAs per SM the warp slots allow"),
    "launch__occupancy_limit_blocks": MetricInfo(OCCUPANCY, "block", "CTAs per SM the block slots allow"),
    "gpusim__ctas_per_sm": MetricInfo(OCCUPANCY, "block", "CTAs resident per SM"),
    "gpusim__occupancy_limiter": MetricInfo(OCCUPANCY, "", "what limits the CTAs per SM"),
    "gpusim__stall_causes": MetricInfo(WARP_STATE, "%", "per stall reason, the share of its cycles each cause the "
                                                        "model charged holds"),
    "gpusim__simulated_sms": MetricInfo(SIMULATION, "SM", "representative SMs simulated in detail"),
    "gpusim__fast_forward": MetricInfo(SIMULATION, "", "steady-state fast-forward used"),
    "gpusim__steady_state": MetricInfo(SIMULATION, "", "every loop reached a steady state before it was extrapolated"),
    "gpusim__kernel": MetricInfo(SIMULATION, "", "the kernel"),
    "gpusim__shape": MetricInfo(SIMULATION, "", "the problem shape"),
    "gpusim__validated": MetricInfo(SIMULATION, "", "whether measurements of this GPU and kernel family are "
                                                    "committed in validate/measurements"),
}


def info(name: str) -> MetricInfo:
    """A metric's section, unit and meaning (the stall reasons by pattern)."""
    if name in CATALOG:
        return CATALOG[name]
    if name.startswith(bn.STALL_PREFIX):
        reason = name[len(bn.STALL_PREFIX):-len(bn.STALL_SUFFIX)]
        return MetricInfo(WARP_STATE, "warp/issue", stall_text.REASONS.get(reason, ""))
    return MetricInfo(SIMULATION, "", "")


def flat(m: dict) -> dict[str, object]:
    """The metrics with nested dicts spelled ``name.key`` (``gpusim__sol_pct.HBM``), lists comma-joined."""
    out: dict[str, object] = {}

    def put(prefix: str, v) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                put(f"{prefix}.{k}", x)
        elif isinstance(v, (list, tuple)):
            out[prefix] = ",".join(map(str, v))
        else:
            out[prefix] = v

    for k, v in m.items():
        put(k, v)
    return out


def unit_of(name: str) -> str:
    """The unit of a (flattened) metric name."""
    base = name
    for k in (bn.SOL, "gpusim__utilization_pct", "gpusim__stall_causes"):
        if name.startswith(k + "."):
            base = k
    return info(base).unit


def section_of(name: str) -> str:
    base = name
    for k in (bn.SOL, "gpusim__utilization_pct", "gpusim__stall_causes"):
        if name.startswith(k + "."):
            base = k
    return info(base).section


class MetricsError(ValueError):
    """A ``--metrics`` name that matches no metric (one line, with the nearest names)."""


def select(m: dict, spec: str) -> dict[str, object]:
    """The flattened metrics ``spec`` names: comma-separated names, shell patterns (``dram__*``) or ``regex:EXPR``
    (ncu's syntax); a name or pattern that matches nothing is an error naming it and the nearest names."""
    fm = flat(m)
    out: dict[str, object] = {}
    for item in (x.strip() for x in spec.split(",")):
        if not item:
            continue
        if item.startswith("regex:"):
            try:
                rx = re.compile(item[6:])
            except re.error as e:
                raise MetricsError(f"--metrics {item!r}: not a regular expression: {e}") from None
            hits = [k for k in fm if rx.search(k)]
        elif any(c in item for c in "*?["):
            hits = [k for k in fm if fnmatch.fnmatchcase(k, item)]
        else:
            hits = [k for k in fm if k == item or k.startswith(item + ".")]
        if not hits:
            near = difflib.get_close_matches(item, list(fm), n=3, cutoff=0.5)
            inside = [k for k in fm if item.lower() in k.lower()]
            hint = (f"; did you mean {', '.join(near)}?" if near else
                    f"; {len(inside)} names contain it ({', '.join(inside[:3])}{', ...' if len(inside) > 3 else ''}): "
                    f"give '*{item}*' for all of them" if inside else "; `gpusim run ... --json` lists them")
            raise MetricsError(f"--metrics {item!r}: no such metric{hint}")
        out.update({k: fm[k] for k in hits})
    return out


def value_text(name: str, v) -> str:
    """A value as the text report prints it, with its unit."""
    unit = unit_of(name)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if unit == "ns":
        return f"{u.duration_ns(v)} ({v:,.0f} ns)" if v >= 1e3 else f"{v:,.1f} ns"
    if unit == "Hz":
        return u.hertz(v)
    if unit == "byte":
        return f"{u.bytes_(v)} ({int(v):,} B)" if v >= 1e3 else f"{int(v)} B"
    if unit == "%":
        return f"{v:.1f}%"
    if unit == "warp/issue":
        return f"{v:.3f} warps per issue"
    if unit in ("GFLOP/s", "TFLOP/s"):
        return f"{v:,.2f} {unit}"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:,.3f} {unit}".rstrip()
    return f"{int(v):,} {unit}".rstrip()


def csv_text(kernel: str, shape, m: dict, names: dict[str, object] | None = None) -> str:
    """ncu's ``--csv`` details layout: one row per metric (``names``: a selection, default every metric)."""
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(["Kernel Name", "Shape", "Section Name", "Metric Name", "Metric Unit", "Metric Value"])
    shape_s = ",".join(map(str, shape))
    for k, v in (names if names is not None else flat(m)).items():
        w.writerow([kernel, shape_s, section_of(k), k, unit_of(k), v])
    return buf.getvalue()


def _rows(m: dict, keys: list[str]) -> list[tuple[str, str, str]]:
    return [(k, value_text(k, m[k]), info(k).meaning) for k in keys if k in m]


def _table(rows: list[tuple[str, ...]], indent: str = "    ") -> list[str]:
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [indent + "  ".join(c.ljust(w) if i < len(r) - 1 else c for i, (c, w) in enumerate(zip(r, widths,
                                                                                                strict=True))).rstrip()
            for r in rows]


def report_lines(m: dict, cfg: HardwareConfig, kernel: str, shape, unvalidated: str = "") -> list[str]:
    """The text report of one prediction, section by section, every number with its unit."""
    a = bn.analyze(m, cfg)
    pk = bn.peaks_of(m, cfg)
    t = m[bn.TIME]
    out = [f"{kernel} {','.join(map(str, shape))} on {cfg.name}"]
    if unvalidated:
        out.append(f"  NOTE: {unvalidated}")
    notes = m.get("gpusim__notes")  # what the front-end's emulation could not follow, or took as free
    if isinstance(notes, str) and notes:
        out += [f"  NOTE: {n}" for n in notes.split("; ")]
    out += ["", f"  Section: {SOL_SECTION}",
            f"    Duration {u.duration_ns(t)}, SM frequency {u.hertz(pk.sm_clock_hz)}"]
    rows = [("unit", "% of peak", "work", "peak")] + [(x.unit, f"{x.pct:.1f}%", x.work, x.peak) for x in a.units]
    out += _table(rows)
    out += [f"    Limiter: {a.limiter}" + (f" (with {', '.join(a.co_limiters)} within {bn.CO_LIMIT_PTS:g} points)"
                                           if a.co_limiters else ""),
            f"    Verdict: {a.verdict}"]
    # memory workload
    rd, wr = m.get("dram__bytes_read.sum", 0), m.get("dram__bytes_write.sum", 0)
    t_s = t * 1e-9
    out += ["", f"  Section: {MEMORY}",
            f"    DRAM throughput {u.bytes_per_second((rd + wr) / t_s)} "
            f"({100 * (rd + wr) / t_s / pk.hbm_datasheet_bytes_per_second:.1f}% of the "
            f"{u.bytes_per_second(pk.hbm_datasheet_bytes_per_second)} datasheet peak, "
            f"{100 * (rd + wr) / t_s / pk.hbm_bytes_per_second:.1f}% of the "
            f"{u.bytes_per_second(pk.hbm_bytes_per_second)} sustained)"]
    mem = [k for k, i in CATALOG.items() if i.section == MEMORY and (m.get(k) or k.startswith("dram__"))]
    out += _table(_rows(m, mem))
    ld_s, ld_r = m.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 0), \
        m.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 0)
    if ld_r:
        out.append(f"    global loads: {ld_s / ld_r:.2f} sectors per request (a warp reading 4 B per lane, coalesced, "
                   "touches 4; 16 B per lane, 16)")
    # compute
    flops = m.get("gpusim__gflops", 0) * 1e9
    out += ["", f"  Section: {COMPUTE}"]
    if flops:
        kind = m.get(bn.TENSOR_KIND)
        peak = pk.tensor_for(kind) if kind else pk.fp32_flops_per_second
        label = f"bf16 {kind}" if kind else "FP32 FFMA"
        out.append(f"    Throughput {u.flops_per_second(flops)} ({100 * flops / peak:.1f}% of the "
                   f"{u.flops_per_second(peak)} {label} peak at {u.hertz(pk.sm_clock_hz)})")
    else:
        out.append("    The kernel declares no FLOPs: its rate is its DRAM throughput (above)")
    out += _table(_rows(m, ["smsp__inst_executed.sum", "sm__inst_executed_pipe_tensor_op_hmma.sum",
                            "sm__inst_executed_pipe_tensor_op_gmma.sum", "smsp__inst_executed_op_ldsm.sum",
                            bn.TENSOR_KIND]))
    out += ["", f"  Section: {LAUNCH}"]
    out += _table(_rows(m, [k for k, i in CATALOG.items() if i.section == LAUNCH]))
    out += ["", f"  Section: {OCCUPANCY}"]
    out += _table(_rows(m, [k for k, i in CATALOG.items() if i.section == OCCUPANCY]))
    out += ["", f"  Section: {WARP_STATE}", "    warps per issue (cycles a warp waits per instruction issued), "
                                            "largest first, and what the model's warps waited on"]
    st = sorted(bn.stalls(m).items(), key=lambda x: -x[1])
    for reason, v in st:
        if v < 0.005:
            continue
        out.append(f"    {reason:<20} {v:8.3f}  {stall_text.explain(reason, m, top=3)}")
    quiet = [r for r, v in st if v < 0.005]
    if quiet:
        out.append(f"    (below 0.005: {', '.join(quiet)})")
    out += ["", f"  Section: {SIMULATION}"]
    out += _table(_rows(m, ["gpusim__simulated_sms", "gpusim__fast_forward", "gpusim__steady_state",
                            "gpc__cycles_elapsed.max"]))
    return out
