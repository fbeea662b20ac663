"""Instruction caches: the rate at which a warp's hot loop arrives when its SASS does not fit.

Measured, not derived (``validate/micro/run_icache.py``, ``validate/micro/icache.cu``): one warp per sub-partition
loops over a straight-line body of FFMAs (which the FP32 pipe takes one a cycle) or IMADs (one every two cycles).
Beyond about 28 KiB of looped code the FFMA body slows down, and from 40 KiB on both bodies run at the same 2.43
cycles per instruction up to 128 KiB, then at 5.83 beyond 144 KiB: the instructions *arrive* at that rate, whatever
the warp does with them (``validate/measurements/h100/icache-ffma-2026-11-25.json``; an additive cost per
instruction would put the IMADs at 3.4). Between the steps the rate is measured at a few sizes (``[icache]
loop_bytes``, ``fetch_cycles_per_instruction``) and interpolated linearly.

The model holds each warp to that rate over its hot loop: a run of instructions cannot finish issuing sooner than
the fetch delivers them. While the warp stalls for another reason the fetch goes on, but only
``fetch_ahead_instructions`` ahead of it (measured with a dependent load in the body: ``--stall-every``). The excess
is ncu's ``no_instruction`` (:class:`InstructionFetch`, the unit the engine's warps call). It is each warp's own
stream: with two warps per sub-partition a 256 KiB body runs at 3.01 cycles per instruction per sub-partition
against 5.83 with one (``validate/measurements/h100/icache-2026-11-24.json``), each warp still waiting as long as
one alone; more warps only overlap their waits.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpusim.specfield import spec_field

if TYPE_CHECKING:
    from gpusim.sm.clock import Clock


@dataclass(frozen=True)
class IcacheSpec:
    """Instruction-cache parameters (``[icache]`` in the hardware config)."""

    instruction_bytes: int = spec_field(4, 32, "bytes per SASS instruction")
    loop_bytes: tuple[int, ...] = spec_field(1024, 1 << 24, "looped code sizes at which the fetch rate was "
                                                            "measured (the first: the largest that fits)")
    fetch_cycles_per_instruction: tuple[float, ...] = spec_field(
        0.0, 100.0, "one warp's cycles per instruction as the fetch delivers a loop of those sizes")
    fetch_ahead_instructions: int = spec_field(0, 100000, "instructions the fetch delivers ahead of a stalled warp")

    def fetch_interval(self, loop_code_bytes: int) -> float:
        """Cycles per instruction at which a warp's hot loop of ``loop_code_bytes`` arrives; 0 where it fits."""
        xs, ys = self.loop_bytes, self.fetch_cycles_per_instruction
        if loop_code_bytes <= xs[0]:
            return 0.0
        if loop_code_bytes >= xs[-1]:
            return ys[-1]
        i = bisect.bisect_right(xs, loop_code_bytes)
        x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
        return y0 + (y1 - y0) * (loop_code_bytes - x0) / (x1 - x0)


class InstructionFetch:
    """The instruction fetch of a kernel's hot loop at run time: it delivers ``cycles_per_instruction`` (0: the loop
    fits, the fetch never holds a warp back), running up to ``ahead_instructions`` ahead of a stalled warp."""

    def __init__(self, cycles_per_instruction: float, ahead_instructions: int) -> None:
        self.cycles_per_instruction = cycles_per_instruction
        self.head_cycles = ahead_instructions * cycles_per_instruction  # how far ahead it may run, in cycles

    @classmethod
    def from_spec(cls, spec: IcacheSpec, clock: Clock, loop_instructions: int) -> InstructionFetch:
        """The fetch of a hot loop of ``loop_instructions`` SASS instructions."""
        return cls(spec.fetch_interval(loop_instructions * spec.instruction_bytes), spec.fetch_ahead_instructions)

    def arrival(self, delivered: float, t: float, n: float) -> float:
        """When ``n`` instructions a warp asks for at ``t`` have arrived, the fetch having delivered what it asked for
        before by ``delivered`` (and running ahead of it by at most ``head_cycles``)."""
        return max(t - self.head_cycles, delivered) + n * self.cycles_per_instruction
