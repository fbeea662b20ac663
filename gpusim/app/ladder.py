"""The ladder page's logic: measurements beside predictions, the roofline, and why a rung beats the one below.

Measurements are every schema-1 file with a ``kernels`` list in ``validate/measurements/<gpu>/`` (the
format ``validate/run_h100.py`` writes). An entry is a kernel at a shape with its non-default knobs
(``params``: ``{}`` for the kernel as registered, ``{"stages": 4}`` for a variant); a later file (by name)
overrides an earlier one for the same kernel, shape and knobs. Only runs marked correct are used.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gpusim.config import HardwareConfig
from gpusim.metrics import STALL_METRIC as STALL
from gpusim.validation import MEASUREMENTS, TIME


Params = tuple[tuple[str, str], ...]  # non-default knobs, sorted, values as strings


@dataclass(frozen=True)
class Measured:
    kernel: str
    shape: tuple[int, ...]
    params: Params
    time_ns: float
    ncu: dict
    source: str  # file name


def params_key(params: dict | None) -> Params:
    """Knobs as a hashable key, values as the CLI would spell them (``True`` -> ``"1"``)."""
    return tuple(sorted((str(k), str(int(v) if isinstance(v, bool) else v)) for k, v in (params or {}).items()))


def lookup(measured: dict, name: str, shape: tuple[int, ...], overrides: dict | None = None) -> Measured | None:
    """The measurement of ``name`` at ``shape`` with these knobs (those equal to the defaults dropped)."""
    from gpusim.app.catalog import registry

    defaults = registry()[name].defaults
    params = {k: v for k, v in (overrides or {}).items()
              if k not in defaults or params_key({k: v}) != params_key({k: defaults[k]})}
    return measured.get((name, tuple(shape), params_key(params)))


@dataclass(frozen=True)
class Reference:
    """A library baseline measured beside the ladder (cuBLAS)."""

    name: str
    shape: tuple[int, ...]
    time_ns: float
    how: str


def load_measured(cfg: HardwareConfig, folder: Path | None = None) -> tuple[dict, list[Reference]]:
    """``{(kernel, shape, params): Measured}`` and the library baselines (at default settings) measured on the
    config's GPU model."""
    folder = folder or MEASUREMENTS / cfg.gpu_model.lower()
    out: dict[tuple[str, tuple[int, ...], Params], Measured] = {}
    refs: dict[tuple[str, tuple[int, ...]], Reference] = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if not isinstance(data, dict) or data.get("schema") != 1 or not isinstance(data.get("kernels"), list):
            continue
        gpu = data.get("gpu")
        if not isinstance(gpu, dict) or gpu.get("name") not in cfg.device_names:
            continue  # measured on another GPU (the name must match exactly: an H100 PCIe is not an H100 SXM)
        for e in data["kernels"]:
            try:
                if not e.get("correct"):
                    continue
                key = (str(e["kernel"]), tuple(int(x) for x in e["shape"]), params_key(e.get("params")))
                out[key] = Measured(*key, float(e["time_ns"]["median"]), dict(e.get("ncu") or {}), path.name)
            except (KeyError, TypeError, ValueError):
                continue  # an entry without a usable time is not a measurement
        for r in data.get("reference") or []:
            if r.get("causal") or r.get("params"):
                continue  # baselines are compared with the kernels at their defaults
            try:
                key = (str(r["name"]), tuple(int(x) for x in r["shape"]))
                refs[key] = Reference(*key, float(r["time_ns"]["median"]), str(r.get("how", "")))
            except (KeyError, TypeError, ValueError):
                continue
    return out, list(refs.values())


# family -> the library baselines its ladder is drawn against
REFERENCES = {"sgemm": ("cublas_fp32",), "hgemm": ("cublas_bf16",), "attention": ("sdpa_flash", "torch_sdpa_cudnn")}


def references(refs: list[Reference], family: str, shape: tuple[int, ...]) -> list[Reference]:
    """The library baselines a ladder is compared with, at this shape."""
    return [r for r in refs if r.shape == tuple(shape) and r.name in REFERENCES.get(family, ())]


def measured_shapes(measured: dict, names: list[str]) -> list[tuple[int, ...]]:
    """Shapes at which any of ``names`` was measured, the most-measured (then largest) first."""
    count: dict[tuple[int, ...], int] = {}
    for kernel, shape, params in measured:
        if kernel in names and not params:
            count[shape] = count.get(shape, 0) + 1
    return sorted(count, key=lambda s: (-count[s], -math.prod(s)))


def roofs(cfg: HardwareConfig) -> dict[str, float]:
    """Peak FLOP/s of each pipe the ladders use, and HBM bytes/s, from the config."""
    sms, clock, p = cfg.chip.sm_count, cfg.chip.sm_clock_hz, cfg.pipes
    return {
        "FP32 FFMA peak": p.fp32_lanes_per_sm * 2 * sms * clock,
        "tensor (wgmma) peak": p.wgmma_flops_per_cycle_per_sm * sms * clock,
        "tensor (mma.sync) measured": p.mma_sync_flops_per_cycle_per_sm * sms * clock,
        "HBM": cfg.hbm.peak_bandwidth_bytes_per_second,
    }


def dram_bytes(m: dict) -> float:
    return float(m.get("dram__bytes_read.sum", 0) or 0) + float(m.get("dram__bytes_write.sum", 0) or 0)


# ---- why one rung is faster than the one below ---------------------------------------------------------

STALL_FLOOR = 0.05  # warps per issue: below this a stall reason is negligible
ZERO_SHARE = 1e-3  # a count below this share of the other rung's counts as (nearly) zero
HIT_FLOOR_PCT = 0.1  # miss rates below this are treated as this
MIN_SCORE = 0.05  # |log2| change under ~3.5%: the metric did not move
CAUSE_SCORE = 0.5  # a cause must change by ~1.4x to be the headline

def _ratio(a: str, b: str) -> Callable[[dict], float | None]:
    def f(m):
        x, y = m.get(a), m.get(b)
        return x / y if isinstance(x, (int, float)) and isinstance(y, (int, float)) and y else None
    return f


def _get(*keys: str) -> Callable[[dict], float | None]:
    def f(m):
        vals = [m.get(k) for k in keys]
        vals = [v for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool)]
        return float(sum(vals)) if vals else None
    return f


def _wavefronts_per_ideal(m: dict) -> float | None:
    wf = _get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
              "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum")(m)
    conf = _get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum")(m)
    if not wf or conf is None or wf - conf <= 0:
        return None
    return wf / (wf - conf)


@dataclass(frozen=True)
class Candidate:
    label: str
    value: Callable[[dict], float | None]
    better: str  # "lower" or "higher"
    kind: str  # "count" (ratio of values) or "hit" (a hit rate in %: compare the miss rates)
    why: str  # what a learner should take from a move in the good direction
    floor: float = 0.0  # values below this count as this (a stall ratio of 0.001 is as good as none)
    cause: bool = True  # a cause (traffic, conflicts, instructions) rather than a symptom (a stall)


CANDIDATES = (
    Candidate("DRAM traffic (bytes)", dram_bytes, "lower", "count",
              "each byte fetched from HBM is reused more often from on-chip memory (bigger tiles)"),
    Candidate("global-load sectors per request", _ratio("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                                                        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
              "lower", "count", "a warp's loads are coalesced: neighbouring lanes read neighbouring addresses, so "
                                "one request needs few 32-byte sectors"),
    Candidate("global-load instructions", _get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), "lower", "count",
              "fewer, wider loads (vectorized float4, data staged once in shared memory, or TMA bulk copies "
              "that need no load instruction per thread)"),
    Candidate("L1 hit rate (%)", _get("l1tex__t_sector_hit_rate.pct"), "higher", "hit",
              "more global loads are served by L1"),
    Candidate("L2 hit rate (%)", _get("lts__t_sector_hit_rate.pct"), "higher", "hit",
              "more of the traffic that leaves the SM is served by L2 instead of HBM"),
    Candidate("shared-memory wavefronts per conflict-free wavefront", _wavefronts_per_ideal, "lower", "count",
              "fewer bank conflicts: a shared-memory instruction needs fewer passes (wavefronts)"),
    Candidate("shared-memory wavefronts", _get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                                               "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum"),
              "lower", "count", "fewer shared-memory load instructions: each value loaded feeds more math (register "
                                "tiling), or wgmma reads its operands from shared memory itself"),
    Candidate("warp instructions executed", _get("smsp__inst_executed.sum"), "lower", "count",
              "less bookkeeping per FLOP: more math per load, address and loop instruction"),
    Candidate("achieved occupancy (%)", _get("sm__warps_active.avg.pct_of_peak_sustained_active"), "higher", "count",
              "more warps resident to hide latency"),
    *(Candidate(f"warps stalled on {reason} per issue", _get(STALL.format(reason)), "lower", "count", why,
                floor=STALL_FLOOR, cause=False)
      for reason, why in (
          ("long_scoreboard", "warps wait less for global loads: the next tiles are already in flight while the "
                              "math runs (pipelining), or the loads hit in cache"),
          ("barrier", "warps wait less at barriers: fewer __syncthreads, or the warps reach them together"),
          ("short_scoreboard", "warps wait less for shared-memory loads"),
          ("mio_throttle", "the shared-memory instruction queue fills less often"),
          ("lg_throttle", "the global-load queue fills less often: fewer, wider loads"),
          ("wait", "fewer fixed-latency dependency waits: more independent instructions in flight (ILP)"),
          ("math_pipe_throttle", "the math pipe is less oversubscribed"))),
)


@dataclass(frozen=True)
class Move:
    label: str
    before: float
    after: float
    score: float  # |log2| of the change (of the miss rate for hit rates)
    improved: bool
    why: str
    cause: bool


def moves(lower: dict, upper: dict) -> list[Move]:
    """Every candidate metric's change from ``lower`` (the rung below) to ``upper``, biggest first."""
    out = []
    for c in CANDIDATES:
        a, b = c.value(lower), c.value(upper)
        if a is None or b is None:
            continue
        if c.kind == "hit":
            ma, mb = max(100.0 - a, HIT_FLOOR_PCT), max(100.0 - b, HIT_FLOOR_PCT)
            score = abs(math.log2(mb / ma))
            improved = b > a
        else:
            floor = max(c.floor, ZERO_SHARE * max(a, b))
            if max(a, b) <= floor:
                continue
            score = abs(math.log2(max(b, floor) / max(a, floor)))
            improved = (b < a) if c.better == "lower" else (b > a)
        if score < MIN_SCORE:
            continue
        out.append(Move(c.label, a, b, score, improved, c.why, c.cause))
    return sorted(out, key=lambda m: -m.score)


@dataclass(frozen=True)
class Why:
    speedup: float  # time below / time here (> 1: faster)
    headline: str
    moves: list[Move]


def why_faster(lower_name: str, lower: dict, upper_name: str, upper: dict) -> Why:
    """Why ``upper_name`` beats (or loses to) ``lower_name``: the metric that moved most in the direction that
    explains the change of time."""
    speedup = lower[TIME] / upper[TIME] if upper.get(TIME) else math.nan
    ms = moves(lower, upper)
    faster = speedup >= 1
    # a cause that moved at least CAUSE_SCORE explains the change; else the symptom (stall) that moved most
    cause = next((m for m in ms if m.improved == faster and m.cause and m.score >= CAUSE_SCORE), None) or next(
        (m for m in ms if m.improved == faster), None)
    verb = f"{speedup:.2f}x faster than" if faster else f"{1 / speedup:.2f}x slower than"
    head = f"{upper_name} is {verb} {lower_name}."
    if cause is None:
        head += " None of the memory or instruction metrics moved much; the difference is in scheduling."
    else:
        change = _change(cause)
        head += f" The metric that moved: {cause.label}, {_fmt(cause.before)} -> {_fmt(cause.after)} ({change})"
        head += f": {cause.why}." if faster else "."
    return Why(speedup, head, ms)


def _change(m: Move) -> str:
    if m.before == 0:
        return "from zero"
    if m.after == 0:
        return "to zero"
    f = m.after / m.before
    return f"{f:.2f}x" if f >= 1 else f"{1 / f:.2f}x less"


def _fmt(v: float) -> str:
    if abs(v) >= 1e6:
        return f"{v:.3g}"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.2f}"
