"""Instruction caches: the cost of fetching a hot loop's SASS that does not fit.

Measured, not derived (``validate/micro/icache.cu``): every warp loops over a straight-line body of N
instructions; the cycles each instruction costs beyond the pipe's rate grow in two steps as the body outgrows
two cache levels, and shrink as more warps of a sub-partition run the same code (one fetch serves them all).
The model charges a warp ``fetch_cycles_per_instruction`` before each instruction it issues (ncu's
``no_instruction`` stall): zero while the kernel's hot loop fits the first level, the first level's miss cost up
to the second level's size, the second's beyond; between 1 and 4 warps per sub-partition the cost is linear in
1/warps, beyond 4 it falls as 4/warps (shared fetches).
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
    l1_miss_cycles_1warp: float = spec_field(0.0, 100.0, "cycles per instruction beyond l0, one warp per SMSP")
    l1_miss_cycles_4warps: float = spec_field(0.0, 100.0, "cycles per instruction beyond l0, four warps per SMSP")
    l2_miss_cycles_1warp: float = spec_field(0.0, 100.0, "cycles per instruction beyond l1, one warp per SMSP")
    l2_miss_cycles_4warps: float = spec_field(0.0, 100.0, "cycles per instruction beyond l1, four warps per SMSP")

    def fetch_cycles_per_instruction(self, loop_code_bytes: int, warps_per_smsp: float) -> float:
        """Extra cycles a warp waits for each instruction of a hot loop of ``loop_code_bytes``."""
        if loop_code_bytes <= self.l0_bytes or warps_per_smsp <= 0:
            return 0.0
        one, four = (self.l1_miss_cycles_1warp, self.l1_miss_cycles_4warps) if loop_code_bytes <= self.l1_bytes \
            else (self.l2_miss_cycles_1warp, self.l2_miss_cycles_4warps)
        w = max(warps_per_smsp, 1.0)
        if w <= 4:
            return four + (one - four) * (1 / w - 0.25) / 0.75
        return four * 4 / w
