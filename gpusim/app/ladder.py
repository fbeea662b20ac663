"""The ladder page's logic: measurements beside predictions, the roofline, and why a rung beats the one below.

Measurements are every schema-1 file with a ``kernels`` list in ``validate/measurements/<gpu>/`` (the
format ``validate/run_h100.py`` writes). An entry is a kernel at a shape with its non-default knobs
(``params``: ``{}`` for the kernel as registered, ``{"stages": 4}`` for a variant); a later file (by name)
overrides an earlier one for the same kernel, shape and knobs (its time; its ncu counters too, unless it has none:
a timing-only rerun keeps the counters of the run before). Only runs marked correct are used.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from gpusim.config import HardwareConfig
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
                ncu = dict(e.get("ncu") or {})
                if not ncu and key in out:  # a later timing-only run: the counters of the same launch stay
                    ncu = out[key].ncu
                out[key] = Measured(*key, float(e["time_ns"]["median"]), ncu, path.name)
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
    out = {
        "FP32 FFMA peak": p.fp32_lanes_per_sm * 2 * sms * clock,
        "tensor (wgmma) peak": (p.wgmma_flops_per_cycle_per_sm or 0) * sms * clock,
        "tensor (mma.sync) measured": p.mma_sync_flops_per_cycle_per_sm * sms * clock,
        "HBM": cfg.hbm.peak_bandwidth_bytes_per_second,
    }
    return {k: v for k, v in out.items() if v}  # a GPU without wgmma has no wgmma roof


def dram_bytes(m: dict) -> float:
    return float(m.get("dram__bytes_read.sum", 0) or 0) + float(m.get("dram__bytes_write.sum", 0) or 0)


# ---- why one rung is faster than the one below ---------------------------------------------------------

def why_faster(lower_name: str, lower: dict, upper_name: str, upper: dict, cfg: HardwareConfig,
               lower_meas: dict | None = None, upper_meas: dict | None = None):
    """Why ``upper_name`` beats (or loses to) ``lower_name``: :func:`gpusim.bottleneck.why_faster`, the units whose
    work changed by their share of the time difference, predicted and measured, and every counter that moved."""
    from gpusim import bottleneck

    return bottleneck.why_faster(lower_name, lower, upper_name, upper, cfg, lower_meas, upper_meas)


def measured_metrics(meas: Measured) -> dict:
    """A measurement as a metrics dict: its ncu counters and its CUDA-event time."""
    return {**meas.ncu, TIME: meas.time_ns}
