"""The one bottleneck analysis every surface uses (``gpusim run``, ``--json``, the app, ``gpusim validate``).

Speed of light (SOL), as Nsight Compute's section of that name: each unit's busy time over the kernel's elapsed time,
as a share of the unit's own peak at the clock the model ran (:mod:`gpusim.peaks`). The model's units are rate
servers that never work faster than their peak, so no share exceeds 100%. The **limiter** is the unit with the
largest share; the verdict names it (and any unit within :data:`CO_LIMIT_PTS` of it, with its number) and the path
that explains it: what work the unit did, from the kernel's counters. A kernel whose busiest unit is below
:data:`BOUND_THRESHOLD_PCT` is latency-bound: its warps wait more than any unit works, and the verdict names the
stall that holds them and the mechanism behind it (:mod:`gpusim.stalls`).

Everything here reads a metrics dict (``gpusim.metrics.report``'s, or ncu's for a measurement) and the config,
so the CLI, the JSON, the app and the validation all say the same thing. :func:`measured_sol` costs a measurement's
ncu counters as the model costs its own (the config's rates; the kernel's access pattern for what ncu does not count)
over the measured time, which :func:`limiter_match` compares with the predicted limiter. :func:`why_faster` says why
one kernel beats another from the units whose work changed, true in the prediction and, where measured, in the
measurement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpusim import units as u
from gpusim.config import HardwareConfig
from gpusim.peaks import Peaks, peaks
from gpusim.ncu import TIME

CLOCK = "sm__cycles_elapsed.avg.per_second"
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"
SOL = "gpusim__sol_pct"
LIMITER = "gpusim__limiter"
LINES_LD = "gpusim__global_lines_op_ld"
LINES_ST = "gpusim__global_lines_op_st"
LINES_ATOM = "gpusim__global_lines_op_atom"  # global atomics and reductions (ncu counts them apart from stores)
SECTORS_ATOM = "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum"  # atomics that return the old value (ATOMG)
SECTORS_RED = "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"  # reductions (RED: the value unused)
L2_LOOKUPS = ("lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum", "lts__t_sectors_op_atom.sum",
              "lts__t_sectors_op_red.sum")
LOCAL_LD, LOCAL_ST = "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"
TENSOR_KIND = "gpusim__tensor_kind"

# Reporting rules, not hardware: a kernel is called bound by its busiest unit from this share of its peak, and a unit
# within this many points of the busiest is named beside it (the model's time error is several percent: a closer
# call is not one it can make)
BOUND_THRESHOLD_PCT = 60.0
CO_LIMIT_PTS = 3.0

# The SOL units in display order: the memory side from HBM inwards, then the SM side.
UNITS = ("HBM", "L2", "L2 write path", "L2 atomics", "L2 port", "L1/shared pipe", "issue slots", "FP32 pipe",
         "tensor pipe", "SFU pipe", "TMA unit", "TMA stores")
MEMORY_UNITS = ("HBM", "L2", "L2 write path", "L2 atomics")  # chip-wide, rates per second (the rest: per SM cycle)
ALWAYS = ("HBM", "L2", "L2 write path", "L2 port", "L1/shared pipe", "issue slots", "FP32 pipe")
BOUND_NAMES = {"HBM": "HBM-bound", "L2": "L2-bound", "L2 write path": "L2-write-bound",
               "L2 atomics": "L2-atomics-bound", "L2 port": "L2-port-bound",
               "L1/shared pipe": "L1/shared-bound", "issue slots": "issue-bound", "FP32 pipe": "FP32-bound",
               "tensor pipe": "tensor-bound", "SFU pipe": "SFU-bound", "TMA unit": "TMA-bound",
               "TMA stores": "TMA-store-bound"}
MEANING = {
    "HBM": "device memory: bytes read and written, against the measured sustained rate",
    "L2": "the L2's read side: sector lookups and line operations of loads and TMA copies",
    "L2 write path": "the path into the L2's data array: stores, and the lines HBM brings in on misses, against the "
                     "most it was measured to carry",
    "L2 atomics": "the L2's atomic units: a line's atomics applied one request at a time, the lines of a slice "
                  "(adjacent lines) sharing its throughput (the busier of the lines' and the slices' mean "
                  "share)",
    "L2 port": "each SM's path to the L2 (reads and writes)",
    "L1/shared pipe": "the L1TEX data pipe: one shared-memory wavefront or one 128-B global line per cycle",
    "issue slots": "one warp instruction per cycle per scheduler",
    "FP32 pipe": "FFMA/FADD/FMUL, 128 lanes per SM",
    "tensor pipe": "the tensor cores: FLOPs against the peak of the instruction the kernel uses",
    "SFU pipe": "MUFU (exp2, rcp, ...), 16 lanes per SM",
    "TMA unit": "the SM's bulk-copy engine",
    "TMA stores": "the SM's TMA stores reading their boxes out of shared memory, one after another",
}


def _num(m: dict, key: str) -> float:
    v = m.get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


def _has(m: dict, key: str) -> bool:
    v = m.get(key)
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def stalls(m: dict) -> dict[str, float]:
    """Stall reasons (without ``selected``) -> warps per issue."""
    return {k[len(STALL_PREFIX):-len(STALL_SUFFIX)]: float(v) for k, v in m.items()
            if k.startswith(STALL_PREFIX) and k.endswith(STALL_SUFFIX) and "selected" not in k
            and isinstance(v, (int, float))}


def peaks_of(m: dict, cfg: HardwareConfig) -> Peaks:
    """The peaks at the SM clock the prediction (or measurement) ran at."""
    return peaks(cfg, _num(m, CLOCK) or None)


@dataclass(frozen=True)
class UnitUse:
    unit: str
    pct: float  # busy share of its peak over the kernel's elapsed time
    work: str  # what it did, with units
    peak: str  # its peak, with units (and the clock where it follows the SM clock)


@dataclass(frozen=True)
class Analysis:
    units: tuple[UnitUse, ...]
    limiter: str  # the unit with the largest share
    co_limiters: tuple[str, ...]  # units within CO_LIMIT_PTS of it (the limiter not among them)
    bound: bool  # the limiter at BOUND_THRESHOLD_PCT or more
    path: str  # what the limiter did: the work that explains it
    verdict: str

    def pct(self, unit: str) -> float:
        return next((x.pct for x in self.units if x.unit == unit), 0.0)


def limiter_of(sol: dict[str, float]) -> str:
    """The unit with the largest share (the first in :data:`UNITS` order on a tie)."""
    order = [k for k in UNITS if k in sol] + [k for k in sol if k not in UNITS]
    return max(order, key=lambda k: sol[k]) if order else ""


def _l2_write_costs(m: dict, cfg: HardwareConfig) -> tuple[float, float]:
    """(stores, fills): the L2 write path's cycles (at the config's clock) for the stores and the HBM fills."""
    l1, l2 = cfg.l1, cfg.l2
    st_sectors = _num(m, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum") + _atomic_sectors(m) + _num(m, LOCAL_ST)
    st_lines = _num(m, LINES_ST) + _num(m, LINES_ATOM) or st_sectors * l2.sector_bytes / l1.line_bytes
    store = st_lines * l2.write_cycles_per_line + st_sectors * l2.write_cycles_per_sector
    fill_per_byte = (l2.write_cycles_per_sector + l2.write_cycles_per_line * l2.sector_bytes / l1.line_bytes) \
        / l2.sector_bytes
    return store, _num(m, "dram__bytes_read.sum") * fill_per_byte


def _shared_wavefronts(m: dict) -> float:
    """Every shared-memory wavefront of the L1TEX pipe (ncu's op_ld count includes ldmatrix's; shared atomics count
    under op_atom)."""
    return (_num(m, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
            + _num(m, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
            + _num(m, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum")
            + _num(m, "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum")
            + _num(m, "gpusim__ldgsts_shared_wavefronts"))


def _global_lines(m: dict) -> float:
    lines = _num(m, LINES_LD) + _num(m, LINES_ST) + _num(m, LINES_ATOM)
    if lines or _has(m, LINES_LD):
        return lines
    return (_num(m, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
            + _num(m, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum") + _atomic_sectors(m)
            + _num(m, LOCAL_LD) + _num(m, LOCAL_ST)) / 4


def _stored(m: dict) -> tuple[str, float]:
    """(what writes into the L2, its sectors): stores, and global atomics where the kernel has any."""
    st = _num(m, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum") + _num(m, LOCAL_ST)
    if _atomic_sectors(m):
        return "stores and atomics", st + _atomic_sectors(m)
    return "stores", st


def _atomic_instructions(m: dict) -> float:
    """Global atomic warp instructions: those that return the old value (op_atom) and the reductions (op_red)."""
    return (_num(m, "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum")
            + _num(m, "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"))


def _atomic_sectors(m: dict) -> float:
    """Global atomics' sectors: those that return the old value (ncu's op_atom) and the reductions (op_red)."""
    return _num(m, SECTORS_ATOM) + _num(m, SECTORS_RED)


def _work(unit: str, m: dict, cfg: HardwareConfig, pk: Peaks) -> tuple[str, str]:
    """(what ``unit`` did, its peak), with units."""
    t_s = _num(m, TIME) * 1e-9 or math.nan
    ghz = f"at {pk.sm_clock_hz / 1e9:.2f} GHz"
    if unit == "HBM":
        rd, wr = _num(m, "dram__bytes_read.sum"), _num(m, "dram__bytes_write.sum")
        return (f"{u.bytes_(rd)} read + {u.bytes_(wr)} written = {u.bytes_per_second((rd + wr) / t_s)}",
                f"{u.bytes_per_second(pk.hbm_bytes_per_second)} sustained "
                f"({u.bytes_per_second(pk.hbm_datasheet_bytes_per_second)} datasheet)")
    if unit == "L2":
        rd = _num(m, "lts__t_sectors_op_read.sum") * cfg.l2.sector_bytes
        return (f"{u.count(_num(m, 'lts__t_sectors_op_read.sum'), 'sector')} read lookups "
                f"({u.bytes_per_second(rd / t_s)}), hit rate {_num(m, 'lts__t_sector_hit_rate.pct'):.1f}%",
                u.bytes_per_second(pk.l2_bytes_per_second))
    if unit == "L2 write path":
        what, sectors = _stored(m)
        return (f"{what} {u.bytes_(sectors * cfg.l2.sector_bytes)}, "
                f"fills from HBM {u.bytes_(_num(m, 'dram__bytes_read.sum'))}",
                f"{u.bytes_per_second(pk.l2_write_bytes_per_second)} measured in whole 128-B lines (the model: "
                f"{u.bytes_per_second(pk.l2_write_model_bytes_per_second)})")
    if unit == "L2 atomics":
        return (f"{u.count(_atomic_instructions(m), 'global atomic warp instructions')}",
                f"a line: one request per {cfg.l2.atomic_request_min_ns:g} ns (float "
                f"{cfg.l2.atomic_float_request_min_ns:g}) to {cfg.l2.atomic_word_ns * 32:.2f} (32 words); a slice "
                f"({cfg.l2.atomic_slice_bytes} B of lines): "
                f"{cfg.l2.atomic_slice_request_ns:g} ns + {cfg.l2.atomic_slice_sector_ns:g} a sector a request")
    if unit == "L2 port":
        b = sum(_num(m, k) for k in L2_LOOKUPS) * cfg.l2.sector_bytes
        return (f"{u.bytes_per_second(b / t_s / pk.sm_count)} per SM (lookups)",
                f"{u.bytes_per_second(pk.l2_port_bytes_per_second_per_sm)} per SM {ghz}")
    if unit == "L1/shared pipe":
        return (f"{u.count(_shared_wavefronts(m), 'shared wavefronts')} + "
                f"{u.count(_global_lines(m), 'global lines')}",
                f"{u.si(pk.l1tex_wavefronts_per_second, 'wavefronts/s')} "
                f"({u.bytes_per_second(pk.shared_bytes_per_second)} shared) {ghz}")
    if unit == "issue slots":
        inst = _num(m, "smsp__inst_executed.sum")
        return (f"{u.count(inst, 'warp instructions')} = {u.si(inst / t_s, 'inst/s')}",
                f"{u.si(pk.issue_instructions_per_second, 'inst/s')} {ghz}")
    if unit == "FP32 pipe":
        flops = _num(m, 'gpusim__gflops') * 1e9
        return (f"{u.flops_per_second(flops)} counted FLOPs" if flops and not m.get(TENSOR_KIND) else
                "the counted FLOPs are on the tensor pipe" if flops else "no FLOPs counted",
                f"{u.flops_per_second(pk.fp32_flops_per_second)} FFMA {ghz}")
    if unit == "tensor pipe":
        kind = m.get(TENSOR_KIND) or "wgmma"
        return (f"{u.flops_per_second(_num(m, 'gpusim__gflops') * 1e9)} ({kind})",
                f"{u.flops_per_second(pk.tensor_for(kind))} bf16 {kind} {ghz}")
    if unit == "SFU pipe":
        return "MUFU instructions", f"{u.si(cfg.pipes.sfu_lanes_per_sm * pk.sm_count * pk.sm_clock_hz, 'op/s')} {ghz}"
    if unit == "TMA unit":
        return (f"{u.count(_num(m, 'gpusim__tma_copies'), 'copies')}, {u.bytes_(_num(m, 'gpusim__tma_load_bytes'))}",
                "one copy at a time per SM")
    if unit == "TMA stores":
        rate = cfg.tma.store_bytes_per_cycle * pk.sm_count * pk.sm_clock_hz
        return u.bytes_(_num(m, "gpusim__tma_store_bytes")), f"{u.bytes_(rate)}/s {ghz}"
    return "", ""


def _path(unit: str, m: dict, cfg: HardwareConfig, pk: Peaks, pct: float) -> str:
    """What the limiting unit's work was: the reason it is busy, from the counters."""
    t_s = _num(m, TIME) * 1e-9 or math.nan
    if unit == "HBM":
        rd, wr = _num(m, "dram__bytes_read.sum"), _num(m, "dram__bytes_write.sum")
        rate = (rd + wr) / t_s
        s = (f"HBM moves {u.bytes_(rd)} in and {u.bytes_(wr)} out at {u.bytes_per_second(rate)} "
             f"({100 * rate / pk.hbm_datasheet_bytes_per_second:.0f}% of the "
             f"{u.bytes_per_second(pk.hbm_datasheet_bytes_per_second)} datasheet peak)")
        by_bytes = 100 * rate / pk.hbm_bytes_per_second
        if pct > by_bytes + CO_LIMIT_PTS:
            s += (f"; it is busier ({pct:.0f}%) than its bytes alone ({by_bytes:.0f}%) make it: 64-B blocks fetched "
                  f"alone in their DRAM row cost {cfg.hbm.isolated_block_cost_ratio:g}x their bytes")
        return s
    if unit == "L2":
        sectors = _num(m, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") + _num(m, LOCAL_LD)
        lines = _num(m, LINES_LD)
        s = (f"{u.count(_num(m, 'lts__t_sectors_op_read.sum'), 'read sector lookups')} "
             f"(L2 hit rate {_num(m, 'lts__t_sector_hit_rate.pct'):.1f}%)")
        if lines and sectors:
            s += f"; loads touch {sectors / lines:.1f} of 4 sectors per line (each line costs an L2 line operation)"
        return s
    if unit == "L2 write path":
        store, fill = _l2_write_costs(m, cfg)
        total = store + fill or 1.0
        what, sectors = _stored(m)
        lines = _num(m, LINES_ST) + _num(m, LINES_ATOM)
        s = (f"{what} take {100 * store / total:.0f}% of it ({u.bytes_(sectors * cfg.l2.sector_bytes)}"
             + (f", {sectors / lines:.1f} of 4 sectors per line written: each line costs the same whatever its "
                f"sectors" if lines else "")
             + f"), lines filled from HBM on misses {100 * fill / total:.0f}% "
               f"({u.bytes_(_num(m, 'dram__bytes_read.sum'))})")
        return s
    if unit == "L2 atomics":
        return (f"{u.count(_atomic_instructions(m), 'global atomic warp instructions')} land on few lines: the L2 "
                f"applies a line's atomics one request at a time ({cfg.l2.atomic_request_min_ns:g} ns at least; lanes "
                f"on one word are separate requests), and adjacent lines ({cfg.l2.atomic_slice_bytes} B) share one "
                "slice's throughput, so the busiest lines' requests queue whatever the rest of the chip does")
    if unit == "L2 port":
        return "each SM's traffic to and from the L2 fills its port"
    if unit == "L1/shared pipe":
        wf, lines = _shared_wavefronts(m), _global_lines(m)
        total = wf + lines or 1.0
        ld = _num(m, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
        st = _num(m, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
        conf = (_num(m, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")
                + _num(m, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"))
        parts = []
        if wf:
            s = f"shared memory takes {100 * wf / total:.0f}% of its cycles ({u.count(wf, 'wavefronts')}"
            if ld + st > conf > 0:
                s += (f", {(ld + st) / (ld + st - conf):.1f} per conflict-free wavefront: "
                      f"{u.count(conf, 'bank conflicts')}")
            parts.append(s + ")")
        if lines:
            what = "global and local loads and stores" if _num(m, LOCAL_LD) + _num(m, LOCAL_ST) else \
                "global loads and stores"
            s = f"{what} {100 * lines / total:.0f}% ({u.count(lines, 'lines of 128 B')}"
            req = (_num(m, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
                   + _num(m, "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")
                   + _num(m, "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum")
                   + _num(m, "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum"))
            if req:
                s += f", {lines / req:.1f} lines per warp request"
            parts.append(s + ")")
        return "; ".join(parts) or "no work"
    if unit == "issue slots":
        inst = _num(m, "smsp__inst_executed.sum")
        flops = _num(m, "gpusim__gflops") * 1e9 * t_s
        s = (f"{u.count(inst, 'warp instructions')} to issue, "
             f"{inst / (t_s * pk.issue_instructions_per_second) * 4:.2f} per cycle per SM of 4")
        if flops and inst:
            s += f"; {flops / inst / 32:.1f} FLOPs per thread instruction"
        return s
    if unit == "FP32 pipe":
        return (f"FP32 math at {u.flops_per_second(_num(m, 'gpusim__gflops') * 1e9)} of the "
                f"{u.flops_per_second(pk.fp32_flops_per_second)} FFMA peak at {pk.sm_clock_hz / 1e9:.2f} GHz")
    if unit == "tensor pipe":
        kind = m.get(TENSOR_KIND) or "wgmma"
        return (f"the tensor cores run {kind} at {u.flops_per_second(_num(m, 'gpusim__gflops') * 1e9)} of its "
                f"{u.flops_per_second(pk.tensor_for(kind))} bf16 peak at {pk.sm_clock_hz / 1e9:.2f} GHz")
    if unit == "SFU pipe":
        return "transcendentals (MUFU) at 16 per cycle per SM"
    if unit == "TMA unit":
        return f"{u.count(_num(m, 'gpusim__tma_copies'), 'TMA copies')} issued one after another per SM"
    if unit == "TMA stores":
        return f"TMA stores read out of shared memory at {cfg.tma.store_bytes_per_cycle:g} B per cycle per SM"
    return ""


def analyze(m: dict, cfg: HardwareConfig, sol: dict[str, float] | None = None) -> Analysis:
    """The SOL table, the limiter and the verdict of a prediction (``sol``: :data:`SOL` of ``m`` unless given)."""
    from gpusim import stalls as stall_text

    sol = dict(m.get(SOL) or {}) if sol is None else sol
    pk = peaks_of(m, cfg)
    shown = [k for k in UNITS if k in sol]
    uses = tuple(UnitUse(k, float(sol[k]), *_work(k, m, cfg, pk)) for k in shown)
    top = limiter_of(sol)
    if not top:
        return Analysis(uses, "", (), False, "", "no unit did any work")
    top_pct = float(sol[top])
    co = tuple(k for k in shown if k != top and sol[k] >= top_pct - CO_LIMIT_PTS and sol[k] >= BOUND_THRESHOLD_PCT)
    bound = top_pct >= BOUND_THRESHOLD_PCT
    path = _path(top, m, cfg, pk, top_pct)
    if bound:
        beside = "".join(f"; {k} close behind at {sol[k]:.0f}%" for k in co)
        verdict = f"{BOUND_NAMES[top]}: {top} at {top_pct:.0f}% of its peak{beside}. {path[:1].upper()}{path[1:]}"
        if co:
            verdict += ". " + "; ".join(f"{_path(k, m, cfg, pk, sol[k])}" for k in co)
    else:
        st = stalls(m)
        worst = max(st, key=st.get) if st else ""
        cause = stall_text.explain(worst, m) if worst else ""
        verdict = (f"latency-bound: no unit reaches {BOUND_THRESHOLD_PCT:.0f}% of its peak (busiest: {top} at "
                   f"{top_pct:.0f}%); warps mostly wait on {worst} ({st.get(worst, 0.0):.1f} warps per issue)"
                   + (f": {cause}" if cause else ""))
    return Analysis(uses, top, co, bound, path, verdict)


# ---- the measured side --------------------------------------------------------------------------------------------

def _ratio(meas: dict, pred: dict, *keys: str) -> float | None:
    """Measured over predicted of the sum of ``keys`` (None: not measured, or nothing predicted)."""
    if not all(_has(meas, k) for k in keys):
        return None
    p = sum(_num(pred, k) for k in keys)
    if p <= 0:
        return None
    return sum(_num(meas, k) for k in keys) / p


def measured_sol(pred: dict, meas: dict, cfg: HardwareConfig) -> dict[str, float]:
    """Each unit's share of its peak in a measurement: the work the prediction booked on the unit, scaled by what ncu
    counted of it against what the model counted (bytes, lookups, wavefronts, instructions; a unit ncu does not count
    keeps the predicted work), over the measured time (CUDA events) at the measured SM clock. So each unit's work is
    costed as the model costs it: the config's rates, and the kernel's access pattern where ncu has no counter (global
    lines per sector, from the addresses). ``pred`` carries :data:`SOL`."""
    sol = pred.get(SOL) or {}
    t_p, t_m = _num(pred, TIME), _num(meas, TIME)
    if not sol or not t_p or not t_m:
        return {}
    clk_p = _num(pred, CLOCK) or cfg.chip.sm_clock_hz
    clk_m = _num(meas, CLOCK) or clk_p
    ratios: dict[str, float | None] = {
        "HBM": _ratio(meas, pred, "dram__bytes_read.sum", "dram__bytes_write.sum"),
        "L2": _ratio(meas, pred, "lts__t_sectors_op_read.sum"),
        "L2 port": _ratio(meas, pred, "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum"),
        "issue slots": _ratio(meas, pred, "smsp__inst_executed.sum"),
        "tensor pipe": _ratio(meas, pred, "sm__inst_executed_pipe_tensor_op_hmma.sum"),
    }
    store, fill = _l2_write_costs(pred, cfg)
    r_st = _ratio(meas, pred, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
    r_fill = _ratio(meas, pred, "dram__bytes_read.sum")
    if store + fill > 0:
        ratios["L2 write path"] = (store * (1.0 if r_st is None else r_st)
                                   + fill * (1.0 if r_fill is None else r_fill)) / (store + fill)
    wf, lines = _shared_wavefronts(pred), _global_lines(pred)
    r_wf = _ratio(meas, pred, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                  "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
    r_gl = _ratio(meas, pred, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                  "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
    if wf + lines > 0:
        ratios["L1/shared pipe"] = (wf * (1.0 if r_wf is None else r_wf)
                                    + lines * (1.0 if r_gl is None else r_gl)) / (wf + lines)
    out = {}
    for unit, pct in sol.items():
        r = ratios.get(unit)
        r = 1.0 if r is None else r
        time_scale = t_p / t_m if unit in MEMORY_UNITS else (t_p * clk_p) / (t_m * clk_m)
        out[unit] = round(float(pct) * r * time_scale, 1)
    return out


@dataclass(frozen=True)
class LimiterRow:
    where: str
    predicted: str
    measured: str
    predicted_pct: float
    measured_pct: float  # the measured share of the predicted limiter
    measured_top_pct: float

    @property
    def match(self) -> bool:
        return self.predicted == self.measured


def limiter_rows(rows, cfg: HardwareConfig) -> list[LimiterRow]:
    """Per validated row (``gpusim.validation.Row``): the predicted limiter and the measured one."""
    out = []
    for r in rows:
        ms = measured_sol(r.predicted, r.measured, cfg)
        ps = r.predicted.get(SOL) or {}
        if not ms or not ps:
            continue
        p, mtop = limiter_of(ps), limiter_of(ms)
        out.append(LimiterRow(r.where, p, mtop, float(ps[p]), ms.get(p, 0.0), ms[mtop]))
    return out


@dataclass(frozen=True)
class LimiterSummary:
    rows: list[LimiterRow]
    match_pct: float  # predicted limiter is the measured one
    tie_match_pct: float  # ... or within CO_LIMIT_PTS of the measured top in the measurement
    mismatches: list[LimiterRow]


def limiter_summary(rows, cfg: HardwareConfig) -> LimiterSummary:
    lr = limiter_rows(rows, cfg)
    n = len(lr) or 1
    tie = [r for r in lr if r.match or r.measured_pct >= r.measured_top_pct - CO_LIMIT_PTS]
    return LimiterSummary(lr, 100.0 * sum(r.match for r in lr) / n, 100.0 * len(tie) / n,
                          [r for r in lr if not r.match])


LIMITER_GOAL_PCT = 90.0  # issue 27: the predicted limiter is the measured one on at least this share of rows


def limiter_lines(s: LimiterSummary, ncu_dram: list[tuple[str, float, float]]) -> list[str]:
    """What ``gpusim validate`` prints about the limiter."""
    from collections import Counter

    out = [f"predicted limiter = measured limiter on {s.match_pct:.1f}% of {len(s.rows)} rows "
           f"({s.tie_match_pct:.1f}% counting the measured top and a unit within {CO_LIMIT_PTS:g} points of it as "
           f"tied; goal >= {LIMITER_GOAL_PCT:g}%) {'met' if s.match_pct >= LIMITER_GOAL_PCT else 'short'}",
           "  measured: each unit's work in the ncu counters (bytes, L2 lookups, wavefronts, instructions; the model's "
           "pattern for global lines, which ncu does not count) costed at the config's rates over the CUDA-event "
           "time at ncu's SM clock"]
    pairs = Counter((r.predicted, r.measured) for r in s.mismatches)
    for (p, m), n in pairs.most_common():
        where = [r.where for r in s.mismatches if (r.predicted, r.measured) == (p, m)]
        out.append(f"  predicted {p}, measured {m}: {n} row(s), e.g. {', '.join(where[:3])}")
    if ncu_dram:
        err = [abs(p - m) for _, p, m in ncu_dram]
        out.append(f"ncu's own DRAM SOL (dram__throughput.avg.pct_of_peak_sustained_elapsed, {len(ncu_dram)} rows that "
                   f"recorded it): predicted DRAM throughput within {sum(err) / len(err):.1f} points on average, "
                   f"{max(err):.1f} at worst")
    return out


def limiter_markdown(s: LimiterSummary, ncu_dram: list[tuple[str, float, float]]) -> list[str]:
    out = ["## Limiter: predicted against measured", "",
           "The predicted limiter is the unit with the largest share of its peak (`gpusim__sol_pct`). The measured "
           "share of each unit is its work in the row's ncu counters (DRAM bytes, L2 lookups, shared wavefronts and "
           "global sectors, instructions; global lines per sector, which ncu does not count, from the kernel's "
           "addresses) costed at the config's rates, over the CUDA-event time at ncu's SM clock. This is not "
           "independent of the model (a unit's cost per counted event is the model's): it checks that the "
           "measured counts and times put the same unit on top. ncu's own SOL percentages were recorded only in "
           "hopper-gemm-2026-11-22.json (DRAM and SM throughput); its DRAM throughput is compared below.",
           "", f"- {limiter_lines(s, ncu_dram)[0]}", "",
           "| row | predicted limiter | % | measured limiter | % | measured % of the predicted limiter |",
           "|---|---|---|---|---|---|"]
    for r in s.rows:
        out.append(f"| {r.where} | {r.predicted} | {r.predicted_pct:.1f} | {r.measured} | {r.measured_top_pct:.1f} | "
                   f"{r.measured_pct:.1f} |")
    if ncu_dram:
        out += ["", "| row | predicted DRAM % of datasheet peak | ncu dram__throughput % |", "|---|---|---|"]
        out += [f"| {w} | {p:.1f} | {m:.1f} |" for w, p, m in ncu_dram]
    return out + [""]


def ncu_dram_sol(rows, cfg: HardwareConfig) -> list[tuple[str, float, float]]:
    """Rows whose measurement holds ncu's own DRAM SOL (``dram__throughput.avg.pct_of_peak_sustained_elapsed``):
    (row, predicted DRAM bytes/s as a share of the datasheet peak, ncu's share)."""
    key = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
    out = []
    for r in rows:
        if not _has(r.measured, key):
            continue
        pk = peaks_of(r.predicted, cfg)
        rate = (_num(r.predicted, "dram__bytes_read.sum") + _num(r.predicted, "dram__bytes_write.sum")) \
            / (_num(r.predicted, TIME) * 1e-9)
        out.append((r.where, 100 * rate / pk.hbm_datasheet_bytes_per_second, _num(r.measured, key)))
    return out


# ---- why one kernel beats another ---------------------------------------------------------------------------------

# a unit's share of a time difference below this (of the difference) is not named as a reason
SHARE_FLOOR_PCT = 10.0
MOVE_RATIO = 1.5  # a metric that changes by this factor (either way) is listed as moved


@dataclass(frozen=True)
class UnitDelta:
    unit: str
    before_ns: float  # the unit's busy time in the slower kernel (its work at its peak)
    after_ns: float
    share_pct: float  # of the predicted time difference
    measured_share_pct: float | None  # of the measured difference, from :func:`measured_sol`

    @property
    def agrees(self) -> bool | None:
        if self.measured_share_pct is None:
            return None
        return (self.share_pct > 0) == (self.measured_share_pct > 0)


@dataclass(frozen=True)
class MetricMove:
    label: str
    before: float
    after: float
    measured_before: float | None
    measured_after: float | None

    @property
    def factor(self) -> float:
        return _factor(self.before, self.after)

    @property
    def measured_factor(self) -> float | None:
        if self.measured_before is None or self.measured_after is None:
            return None
        return _factor(self.measured_before, self.measured_after)

    @property
    def agrees(self) -> bool | None:
        mf = self.measured_factor
        if mf is None:
            return None
        return (self.factor > 1) == (mf > 1) or abs(math.log(mf)) < math.log(1.1)


def _factor(a: float, b: float) -> float:
    if a <= 0 and b <= 0:
        return 1.0
    if a <= 0:
        return math.inf
    return b / a


def _wf_per_ideal(m: dict) -> float | None:
    wf = (_num(m, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
          + _num(m, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"))
    conf = (_num(m, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")
            + _num(m, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"))
    return wf / (wf - conf) if wf > conf >= 0 and wf else None


def _per(a: str, b: str):
    return lambda m: _num(m, a) / _num(m, b) if _has(m, a) and _num(m, b) else None


def _sum(*keys: str):
    return lambda m: sum(_num(m, k) for k in keys) if all(_has(m, k) for k in keys) else None


# (label, value, the units (or unit parts, :func:`_parts`) whose work it explains, "lower" or "higher": the direction
# that means less work)
MOVES = (
    ("DRAM bytes (read + write)", _sum("dram__bytes_read.sum", "dram__bytes_write.sum"), ("HBM", "L2 write path:fill"),
     "lower"),
    ("L2 hit rate (%)", _sum("lts__t_sector_hit_rate.pct"), ("HBM", "L2 write path:fill"), "higher"),
    ("L2 read lookups (sectors)", _sum("lts__t_sectors_op_read.sum"), ("L2", "L2 port"), "lower"),
    ("global-load sectors per request", _per("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                                            "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
     ("L2", "L1/shared pipe:ld", "L2 port"), "lower"),
    ("global-store sectors per request", _per("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                                             "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
     ("L2 write path:store", "L1/shared pipe:st"), "lower"),
    ("global-load requests", _sum("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), ("L1/shared pipe:ld", "L2"),
     "lower"),
    ("global-load sectors", _sum("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), ("L1/shared pipe:ld", "L2"),
     "lower"),
    ("L1 hit rate (%)", _sum("l1tex__t_sector_hit_rate.pct"), ("L2", "L2 port"), "higher"),
    ("shared wavefronts per conflict-free wavefront", _wf_per_ideal, ("L1/shared pipe:shared",), "lower"),
    ("shared-memory wavefronts", _sum("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                                      "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
     ("L1/shared pipe:shared",), "lower"),
    ("warp instructions executed", _sum("smsp__inst_executed.sum"), ("issue slots",), "lower"),
    ("achieved occupancy (%)", _sum("sm__warps_active.avg.pct_of_peak_sustained_active"), (), "higher"),
    ("SM clock (Hz)", _sum(CLOCK), ("FP32 pipe", "tensor pipe", "issue slots"), "higher"),
)


def _parts(unit: str, m: dict, cfg: HardwareConfig) -> dict[str, float]:
    """A unit's work split by what does it (in the unit's cycles), for the units that do several kinds of work."""
    if unit == "L1/shared pipe":
        return {"shared": _shared_wavefronts(m), "ld": _num(m, LINES_LD), "st": _num(m, LINES_ST) + _num(m, LINES_ATOM)}
    if unit == "L2 write path":
        store, fill = _l2_write_costs(m, cfg)
        return {"store": store, "fill": fill}
    return {}


def metric_moves(before: dict, after: dict, meas_before: dict | None = None,
                 meas_after: dict | None = None) -> list[MetricMove]:
    """Every counter of :data:`MOVES` that changed by :data:`MOVE_RATIO` or more in the prediction or the
    measurement, the largest change first; then each stall reason that did, the largest first."""
    out = []
    cands = list(MOVES) + [(f"warps stalled on {r} per issue", _sum(f"{STALL_PREFIX}{r}{STALL_SUFFIX}"), (), "lower")
                           for r in sorted(set(stalls(before)) | set(stalls(after)))]
    for label, f, _units, _better in cands:
        a, b = f(before), f(after)
        if a is None or b is None:
            continue
        ma = f(meas_before) if meas_before else None
        mb = f(meas_after) if meas_after else None
        mv = MetricMove(label, a, b, ma, mb)
        big = max(abs(math.log(max(mv.factor, 1e-12))) if math.isfinite(mv.factor) else math.inf,
                  abs(math.log(max(mv.measured_factor, 1e-12))) if mv.measured_factor and math.isfinite(
                      mv.measured_factor) else 0.0)
        floor = 0.05 if label.startswith("warps stalled") else 0.0
        if max(a, b) <= floor and max(ma or 0, mb or 0) <= floor:
            continue
        if "hit rate" in label:  # compare the miss rates: 99% -> 99.9% hits is a 10x change of misses
            big = abs(math.log(max(100 - b, 0.1) / max(100 - a, 0.1)))
            if ma is not None and mb is not None:
                big = max(big, abs(math.log(max(100 - mb, 0.1) / max(100 - ma, 0.1))))
        if big >= math.log(MOVE_RATIO):
            out.append((big, mv))
    # the counters of work first (what a kernel changed), then the stalls (how its warps felt it)
    return [mv for _, mv in sorted(out, key=lambda x: (x[1].label.startswith("warps stalled"), -x[0]))]


@dataclass(frozen=True)
class Why:
    speedup: float  # predicted time of ``a`` over that of ``b`` (> 1: ``b`` is faster)
    measured_speedup: float | None  # the same, measured
    headline: str
    units: list[UnitDelta]
    moves: list[MetricMove]


def _unit_ns(m: dict, sol: dict) -> dict[str, float]:
    t = _num(m, TIME)
    return {k: float(v) / 100 * t for k, v in sol.items()}


def why_faster(a_name: str, a: dict, b_name: str, b: dict, cfg: HardwareConfig,
               a_meas: dict | None = None, b_meas: dict | None = None) -> Why:
    """Why ``b`` is faster (or slower) than ``a``: each unit's busy time (its work at its peak) in both, its change as
    a share of the change of the kernel's time, predicted and (with both measurements) measured; the headline names
    the unit whose work explains the largest share in both, and the counter behind it."""
    ta, tb = _num(a, TIME), _num(b, TIME)
    measured = a_meas is not None and b_meas is not None and _num(a_meas, TIME) and _num(b_meas, TIME)
    mta, mtb = (_num(a_meas, TIME), _num(b_meas, TIME)) if measured else (0.0, 0.0)
    pa, pb = _unit_ns(a, a.get(SOL) or {}), _unit_ns(b, b.get(SOL) or {})
    if measured:
        ma = _unit_ns(a_meas, measured_sol(a, a_meas, cfg))
        mb = _unit_ns(b_meas, measured_sol(b, b_meas, cfg))
    d = ta - tb
    md = mta - mtb
    deltas = []
    for unit in [k for k in UNITS if k in pa or k in pb]:
        x, y = pa.get(unit, 0.0), pb.get(unit, 0.0)
        share = 100 * (x - y) / d if d else 0.0
        mshare = None
        if measured and md and (unit in ma or unit in mb):
            mshare = 100 * (ma.get(unit, 0.0) - mb.get(unit, 0.0)) / md
        deltas.append(UnitDelta(unit, x, y, share, mshare))
    deltas.sort(key=lambda x: -x.share_pct)
    moves = metric_moves(a, b, a_meas if measured else None, b_meas if measured else None)
    faster = tb <= ta
    slow = a_name if faster else b_name
    speed = ta / tb if ta and tb else math.nan  # > 1: b is faster
    mspeed = mta / mtb if measured else None

    def times(x: float) -> str:
        return f"{x:.2f}x faster" if x >= 1 else f"{1 / x:.2f}x slower"

    head = f"{b_name} is {times(speed)} than {a_name} (predicted" + \
        (f"; measured {times(mspeed)})." if mspeed else ").")
    explained = [x for x in deltas if x.share_pct >= SHARE_FLOOR_PCT and x.agrees is not False]
    top = explained[0] if explained else None
    if top is not None:
        slower_m = a if faster else b
        lim = limiter_of(slower_m.get(SOL) or {})
        f = top.after_ns / top.before_ns if top.before_ns else math.inf
        fast_m = b if faster else a
        fast_lim = limiter_of(fast_m.get(SOL) or {})
        head += (f" The {top.unit}'s work {'fell' if f < 1 else 'grew'} from {u.duration_ns(top.before_ns)} to "
                 f"{u.duration_ns(top.after_ns)} of busy time: {top.share_pct:.0f}% of the time difference"
                 + (f" (measured {top.measured_share_pct:.0f}%)" if top.measured_share_pct is not None else "")
                 + (f"; {top.unit} limited {slow}" if lim == top.unit else ""))
        if top.share_pct > 150 and fast_lim and fast_lim != top.unit:  # the limit moved before all of it was saved
            head += f", and {fast_lim} limits {b_name if faster else a_name} now"
        head += "."
        fell = top.after_ns < top.before_ns
        pa_, pb_ = _parts(top.unit, a, cfg), _parts(top.unit, b, cfg)
        part = max(pa_, key=lambda k: abs(pa_[k] - pb_.get(k, 0.0))) if pa_ else ""
        tag = f"{top.unit}:{part}" if part else top.unit
        why_move = None
        for mv in moves:  # the largest move of a counter behind this unit, in the direction of its change of work
            row = next((x for x in MOVES if x[0] == mv.label), None)
            if row is None or tag not in row[2] or mv.agrees is False or mv.factor == 1:
                continue
            less_work = (mv.factor < 1) == (row[3] == "lower")
            if less_work == fell:
                why_move = mv
                break
        if why_move is not None:
            head += f" Behind it: {why_move.label} {_fmtv(why_move.before)} -> {_fmtv(why_move.after)}" + (
                f" (measured {_fmtv(why_move.measured_before)} -> {_fmtv(why_move.measured_after)})"
                if why_move.measured_factor is not None else "") + "."
    elif moves:
        mv = moves[0]
        head += (f" No unit's work explains {SHARE_FLOOR_PCT:.0f}% of the difference (both kernels wait more than "
                 f"they work); the largest change: {mv.label} {_fmtv(mv.before)} -> {_fmtv(mv.after)}"
                 + (f" (measured {_fmtv(mv.measured_before)} -> {_fmtv(mv.measured_after)})"
                    if mv.measured_factor is not None else "") + ".")
    else:
        head += f" No counter changed by {MOVE_RATIO:g}x or more, and no unit's work explains the difference."
    return Why(speed, mspeed, head, deltas, moves)


def _fmtv(v: float | None) -> str:
    if v is None:
        return "-"
    if abs(v) >= 1e4:
        return u.si(v, "").strip()
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.2f}"
