"""Execution pipes of one SM: FP32, INT32 and the special-function unit.

Each pipe is a per-sub-partition server whose rate is its lanes per sub-partition over the warp size;
its fixed latency bounds how fast a chain of dependent instructions can issue (ncu's ``wait`` stall).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.specfield import spec_field


@dataclass(frozen=True)
class PipesSpec:
    """Execution-pipe widths and latencies (``[pipes]`` in the hardware config)."""

    fp32_lanes_per_sm: int = spec_field(32, 1024, "FP32 FMA lanes per SM")
    int32_lanes_per_sm: int = spec_field(16, 1024, "INT32 lanes per SM")
    fp32_latency_cycles: int = spec_field(1, 64, "dependent FFMA-to-FFMA latency")
    int32_latency_cycles: int = spec_field(1, 64, "dependent IADD-to-IADD latency")
    barrier_base_cycles: int = spec_field(0, 1000, "__syncthreads cost of a one-warp CTA")
    barrier_per_warp_cycles: int = spec_field(0, 100, "extra __syncthreads cost per warp of the CTA")

    def barrier_cycles(self, warps: int) -> int:
        """Cycles from the last warp's arrival at ``__syncthreads`` to the release of all ``warps``."""
        return self.barrier_base_cycles + self.barrier_per_warp_cycles * warps

    def instructions_per_cycle(self, pipe: str, subpartitions: int, warp_size: int) -> float:
        """Warp instructions per cycle one sub-partition's ``pipe`` accepts."""
        lanes = {"fp32": self.fp32_lanes_per_sm, "int32": self.int32_lanes_per_sm}[pipe]
        return lanes / subpartitions / warp_size

    def latency_cycles(self, pipe: str) -> int:
        return {"fp32": self.fp32_latency_cycles, "int32": self.int32_latency_cycles}[pipe]
