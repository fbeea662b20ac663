"""HBM: device memory bandwidth, shared by the active SMs, and its load latency."""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.specfield import spec_field


@dataclass(frozen=True)
class HbmSpec:
    """HBM parameters (``[hbm]`` in the hardware config)."""

    capacity_bytes: int = spec_field(1 << 30, 1 << 40, "device memory size")
    peak_bandwidth_bytes_per_second: float = spec_field(1e11, 1e14, "datasheet bandwidth")
    achievable_bandwidth_bytes_per_second: float = spec_field(1e11, 1e14, "sustained bandwidth (copy)")
    load_latency_cycles: int = spec_field(1, 10000, "load latency of an L2 miss, end to end")
    fetch_granularity_bytes: int = spec_field(
        32, 256, "bytes the L2 reads from HBM for a missed sector: the aligned block around it")
