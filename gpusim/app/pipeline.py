"""The pipeline lab's arithmetic: shared memory per CTA and occupancy against the number of stages.

Building a kernel is cheap (no simulation), so the whole sweep is exact: each stage count's launch gives its
shared memory per CTA, and ``gpusim.sm.occupancy`` says how many CTAs fit on an SM, which resource limits
them, or why not even one fits.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.app import catalog
from gpusim.config import HardwareConfig
from gpusim.sm.occupancy import LaunchError, occupancy

STAGES = tuple(range(1, 9))  # the sweep when a kernel declares no choices for ``stages``


def stage_values(name: str) -> list[int]:
    return [int(s) for s in catalog.knob_values(name, "stages", STAGES)]


@dataclass(frozen=True)
class StagePoint:
    stages: int
    smem_bytes: int | None  # None: the kernel cannot be built with this many stages
    ctas_per_sm: int  # 0 when it does not fit
    warps_per_sm: int
    limiter: str
    error: str = ""

    @property
    def fits(self) -> bool:
        return not self.error


def smem_sweep(name: str, shape: tuple[int, ...], overrides: dict, cfg: HardwareConfig) -> list[StagePoint]:
    """For every allowed stage count: shared memory per CTA, resident CTAs per SM and the limiter."""
    out = []
    for s in stage_values(name):
        try:
            k = catalog.build(name, shape, {**overrides, "stages": s}, cfg)
        except ValueError as e:
            out.append(StagePoint(s, None, 0, 0, "", str(e)))
            continue
        launch = k.launch
        try:
            occ = occupancy(cfg.sm, launch.threads_per_block, launch.regs_per_thread, launch.smem_bytes,
                            cfg.shared_memory.carveouts_bytes)
        except LaunchError as e:
            out.append(StagePoint(s, launch.smem_bytes, 0, 0, "shared memory", str(e)))
            continue
        out.append(StagePoint(s, launch.smem_bytes, occ.ctas_per_sm, occ.warps_per_sm, occ.limiter))
    return out


def max_stages(points: list[StagePoint]) -> int:
    """The largest stage count that fits (0 if none does)."""
    return max((p.stages for p in points if p.fits), default=0)
