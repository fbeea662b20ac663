"""The hierarchical roofline: FP32 and tensor roofs, and HBM, L2 and L1/shared ceilings, from the config's peaks
(:mod:`gpusim.peaks`); each kernel's achieved FLOP/s at its arithmetic intensity against the bytes of each level.

A compute roof is drawn at the clock its pipe holds when it is saturated (the H100 lowers its SM clock under tensor
work: ``chip.sm_clock_mma_sync_saturated_hz``, ``chip.sm_clock_wgmma_saturated_hz``), so no roof promises more than the
model lets that pipe deliver. ``gpusim roofline`` draws it (PNG or SVG); the app's ladder page draws the same data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from gpusim.bottleneck import L2_LOOKUPS
from gpusim.config import HardwareConfig
from gpusim.peaks import peaks
from gpusim.ncu import TIME

LEVELS = ("HBM", "L2", "L1/shared")
MARKERS = {"HBM": "o", "L2": "s", "L1/shared": "^"}


@dataclass(frozen=True)
class Ceiling:
    name: str
    kind: str  # "compute" (FLOP/s) or "memory" (bytes/s)
    value: float
    note: str  # the clock or the source, for the label


def ceilings(cfg: HardwareConfig, tensor: bool = True, fp32: bool = True) -> list[Ceiling]:
    """The roofs and ceilings of ``cfg``: compute roofs at the clock their pipe holds, memory ceilings per second."""
    chip = cfg.chip
    base = peaks(cfg)
    out = []
    if fp32:
        out.append(Ceiling("FP32 FFMA", "compute", base.fp32_flops_per_second, f"{chip.sm_clock_hz / 1e9:.2f} GHz"))
    if tensor:
        mma = peaks(cfg, chip.sm_clock_mma_sync_saturated_hz)
        out.append(Ceiling("bf16 mma.sync", "compute", mma.mma_sync_flops_per_second,
                           f"{chip.sm_clock_mma_sync_saturated_hz / 1e9:.2f} GHz"))
        if chip.sm_clock_wgmma_saturated_hz is not None:  # a GPU with wgmma (Hopper)
            wg = peaks(cfg, chip.sm_clock_wgmma_saturated_hz)
            out.append(Ceiling("bf16 wgmma (dense)", "compute", wg.tensor_flops_per_second,
                               f"{chip.sm_clock_wgmma_saturated_hz / 1e9:.2f} GHz"))
    out += [Ceiling("HBM", "memory", base.hbm_bytes_per_second, "sustained"),
            Ceiling("L2", "memory", base.l2_bytes_per_second, "read"),
            Ceiling("L1/shared", "memory", base.shared_bytes_per_second, f"{chip.sm_clock_hz / 1e9:.2f} GHz")]
    return out


def level_bytes(m: dict, cfg: HardwareConfig) -> dict[str, float]:
    """Bytes each level moved: HBM (read + written), L2 (sector lookups), L1/shared (global sectors and shared
    wavefronts of 128 B)."""
    sb = cfg.l2.sector_bytes
    wf = (m.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 0) or 0) + \
        (m.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", 0) or 0)
    wave_bytes = cfg.shared_memory.banks * cfg.shared_memory.bank_width_bytes
    return {
        "HBM": float((m.get("dram__bytes_read.sum", 0) or 0) + (m.get("dram__bytes_write.sum", 0) or 0)),
        "L2": float(sum(m.get(k, 0) or 0 for k in L2_LOOKUPS) * sb),
        "L1/shared": float(((m.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 0) or 0)
                            + (m.get("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 0) or 0)) * sb
                           + wf * wave_bytes),
    }


@dataclass(frozen=True)
class Point:
    kernel: str
    level: str
    intensity: float  # FLOP per byte of the level
    flops_per_second: float
    source: str = "predicted"


def points(label: str, m: dict, flops: float, cfg: HardwareConfig, source: str = "predicted") -> list[Point]:
    """One point per level with traffic: (FLOP per byte of that level, achieved FLOP/s)."""
    t = m.get(TIME) or 0
    if not flops or not t:
        return []
    rate = flops / (t * 1e-9)
    return [Point(label, lv, flops / b, rate, source) for lv, b in level_bytes(m, cfg).items() if b > 0]


def figure(kernel_points: list[Point], cfg: HardwareConfig, path: str | Path, title: str = "",
           fmt: str | None = None) -> None:
    """Draw the roofline with every point (PNG or SVG, from the extension): one colour per kernel, one marker per
    level, the ceilings labelled with their value."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = [p for p in kernel_points if p.intensity > 0 and p.flops_per_second > 0]
    kernels = list(dict.fromkeys(p.kernel for p in pts))
    tensor = any(p.flops_per_second > ceilings(cfg, tensor=False)[0].value * 1.0001 for p in pts)
    cs = ceilings(cfg, tensor=tensor)
    lo = min([p.intensity for p in pts] + [0.1]) / 4
    hi = max([p.intensity for p in pts] + [100.0]) * 4
    fig, ax = plt.subplots(figsize=(11, 7))
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    top = max(c.value for c in cs if c.kind == "compute")
    ys_all = [p.flops_per_second for p in pts] or [1e12]
    ymin, ymax = min(ys_all) / 8, top * 2
    ax.set_xlim(lo, hi)
    ax.set_ylim(ymin, ymax)
    mem_style = {"HBM": "-", "L2": "--", "L1/shared": ":"}
    for c in cs:  # the ceilings are named in the legend (by line style): a label on the plot would sit on points
        if c.kind == "memory":
            ax.plot(xs, [min(c.value * x, top) for x in xs], mem_style[c.name], color="0.35", lw=1.2)
    for k, c in enumerate(sorted((c for c in cs if c.kind == "compute"), key=lambda c: -c.value)):
        ax.axhline(c.value, color="0.2", lw=1.0)
        x_at = hi / 1.05 / (12 ** k)  # staggered along the roof so that close roofs keep their labels apart
        ax.text(x_at, c.value * 1.04, f"{c.name} {c.value / 1e12:,.0f} TFLOP/s at {c.note}", fontsize=8,
                ha="right", va="bottom", color="0.15", clip_on=True)
    cmap = plt.get_cmap("tab20" if len(kernels) > 10 else "tab10")
    for i, k in enumerate(kernels):
        color = cmap(i % cmap.N)
        mine = [p for p in pts if p.kernel == k]
        for p in mine:
            ax.scatter(p.intensity, p.flops_per_second, marker=MARKERS[p.level], s=46, color=color,
                       edgecolors="black" if p.source == "predicted" else "none", linewidths=0.5,
                       alpha=1.0 if p.source == "predicted" else 0.55, zorder=3)
        xs_k = sorted(p.intensity for p in mine if p.source == "predicted")
        if len(xs_k) > 1:
            ax.plot(xs_k, [mine[0].flops_per_second] * len(xs_k), color=color, lw=0.8, alpha=0.6, zorder=2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(ymin, ymax)
    ax.set_xlabel("arithmetic intensity (FLOP per byte moved at that level)")
    ax.set_ylabel("achieved FLOP/s")
    ax.set_title(title or f"Hierarchical roofline, {cfg.name}")
    handles = [plt.Line2D([], [], ls="", marker="o", color=cmap(i % cmap.N), label=k) for i, k in enumerate(kernels)]
    handles += [plt.Line2D([], [], ls="", marker=MARKERS[lv], color="0.5", label=f"{lv} bytes") for lv in LEVELS]
    handles += [plt.Line2D([], [], ls=mem_style[c.name], color="0.35", label=f"{c.name} ceiling "
                           f"{c.value / 1e12:.2f} TB/s ({c.note})") for c in cs if c.kind == "memory"]
    if any(p.source == "measured" for p in pts):
        handles.append(plt.Line2D([], [], ls="", marker="o", color="0.5", alpha=0.55, label="measured (ncu, faded)"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False,
              ncol=1 if len(handles) <= 30 else 2)
    ax.grid(True, which="major", color="0.92")
    fig.tight_layout()
    svg = (fmt or Path(path).suffix[1:]).lower() == "svg"
    if svg:
        plt.rcParams["svg.hashsalt"] = "gpusim"  # the same file for the same figure
    fig.savefig(path, dpi=130, format="svg" if svg else "png",
                metadata={"Date": None, "Creator": None} if svg else {"Software": None})
    plt.close(fig)


def nice_intensity(x: float) -> str:
    return f"{x:.3g}" if math.isfinite(x) else "-"
