"""The chip around the SMs: SM count, clock and kernel-level overheads (the wgmma clock and the tensor-map launch
cost only on a GPU with wgmma and TMA: ``None`` elsewhere)."""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.specfield import spec_field


@dataclass(frozen=True)
class ChipSpec:
    """Chip-level parameters (``[chip]`` in the hardware config)."""

    sm_count: int = spec_field(1, 1024, "streaming multiprocessors")
    sm_clock_hz: float = spec_field(1e8, 5e9, "SM clock under load")
    sm_clock_mma_sync_saturated_hz: float = spec_field(
        1e8, 5e9, "SM clock with every SM's tensor pipe saturated by mma.sync (the power-limited clock)")
    sm_clock_wgmma_saturated_hz: float | None = spec_field(
        1e8, 5e9, "SM clock with every SM's tensor cores saturated by wgmma (the dense tensor peak)", feature="wgmma")
    kernel_overhead_ns: float = spec_field(0, 1e6, "fixed launch-to-completion time of an empty kernel")
    tensor_map_param_launch_ns: float | None = spec_field(
        0, 1e6, "more launch time of a kernel that takes TMA tensor maps by value (__grid_constant__ parameters)",
        feature="tma")
    cta_launch_cycles: int = spec_field(0, 100000, "cycles to start a CTA on an SM after a slot frees")
    mbarrier_init_first_cycles: float = spec_field(0, 100000, "CTA set-up: initialising its first mbarrier")
    mbarrier_init_each_more_cycles: float = spec_field(0, 10000, "CTA set-up: each further mbarrier")
    cta_dispatch_interval_ns: float = spec_field(0, 1e5, "time between successive CTA launches on the chip")
