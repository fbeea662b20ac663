"""Instruction caches: the cost of fetching a hot loop's SASS that does not fit.

Measured, not derived (``validate/micro/icache.cu``): every warp loops over a straight-line body of N
instructions; the cycles each instruction costs beyond the pipe's rate grow in two steps as the body outgrows
two cache levels.
The model charges a warp ``fetch_cycles_per_instruction`` before each instruction it issues (ncu's
``no_instruction`` stall): zero while the kernel's hot loop fits the first level, the first level's miss cost up
to the second level's size, the second's beyond. The cost is a warp's own wait, whatever the number of warps: with
two warps per sub-partition a 256 KiB body runs at 3.01 cycles per instruction per sub-partition against 5.82 with
one (``validate/measurements/h100/icache-2026-11-24.json``), each warp still waiting as long as one alone; more
warps only overlap their waits (the engine's issue slot and pipes do that), they share no fetches.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.specfield import spec_field


@dataclass(frozen=True)
class IcacheSpec:
    """Instruction-cache parameters (``[icache]`` in the hardware config)."""

    instruction_bytes: int = spec_field(4, 32, "bytes per SASS instruction")
    l0_bytes: int = spec_field(1024, 1 << 22, "largest looped body fetched at no cost")
    l1_bytes: int = spec_field(1024, 1 << 24, "largest looped body fetched at the second level's cost")
    l1_miss_cycles: float = spec_field(0.0, 100.0, "a warp's cycles per instruction beyond l0")
    l2_miss_cycles: float = spec_field(0.0, 100.0, "a warp's cycles per instruction beyond l1")

    def fetch_cycles_per_instruction(self, loop_code_bytes: int) -> float:
        """Extra cycles a warp waits for each instruction of a hot loop of ``loop_code_bytes``."""
        if loop_code_bytes <= self.l0_bytes:
            return 0.0
        return self.l1_miss_cycles if loop_code_bytes <= self.l1_bytes else self.l2_miss_cycles
