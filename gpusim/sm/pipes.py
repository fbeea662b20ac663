"""Execution pipes of one SM: FP32, INT32, the special-function unit (MUFU: ex2 for softmax), warp shuffles
(SHFL, through the shared-memory crossbar: its results are waited for like shared loads) and the
tensor cores, as driven by ``mma.sync.m16n8k16`` (pipe ``tensor``) and by Hopper's asynchronous
``wgmma.mma_async.m64nNk16`` (pipe ``wgmma``), bf16/fp16 in, fp32 accumulate.

Tensor work is counted in units of 4096 FLOP (``2*16*8*16``): one ``mma.sync.m16n8k16``, or one warp's
share of an ``m64n8k16`` slice of a wgmma (a warpgroup's ``m64nNk16`` is ``N/8`` units on each of its four
warps, one warp per sub-partition).

Each pipe is a per-sub-partition server whose rate is its lanes per sub-partition over the warp size
(:class:`ExecutionPipes`, the unit the engine's warps call); its fixed latency bounds how fast a chain of dependent
instructions can issue (ncu's ``wait`` stall). The unit also says how a compute bundle is cut into quanta
(:meth:`ExecutionPipes.quanta`, its static cost) and which stall a warp held back by a busy pipe is charged to
(:attr:`ExecutionPipes.throttle`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpusim.resources import RateServer
from gpusim.specfield import spec_field

if TYPE_CHECKING:
    from gpusim.sm.clock import Clock
    from gpusim.sm.occupancy import SmSpec

PIPES = ("fp32", "int32", "sfu", "shfl", "tensor", "wgmma")
MMA_M16N8K16_FLOPS = 2 * 16 * 8 * 16


@dataclass(frozen=True)
class PipesSpec:
    """Execution-pipe widths and latencies (``[pipes]`` in the hardware config)."""

    fp32_lanes_per_sm: int = spec_field(32, 1024, "FP32 FMA lanes per SM")
    int32_lanes_per_sm: int = spec_field(16, 1024, "INT32 lanes per SM")
    fp32_latency_cycles: int = spec_field(1, 64, "dependent FFMA-to-FFMA latency")
    int32_latency_cycles: int = spec_field(1, 64, "dependent IADD-to-IADD latency")
    sfu_lanes_per_sm: int = spec_field(4, 256, "special-function (MUFU) lanes per SM")
    sfu_latency_cycles: int = spec_field(1, 200, "dependent MUFU latency")
    shfl_lanes_per_sm: int = spec_field(4, 256, "warp-shuffle (SHFL) lanes per SM")
    shfl_latency_cycles: int = spec_field(1, 200, "dependent SHFL latency")
    match_slots_per_distinct_value: float = spec_field(0.1, 64, "shuffle-pipe slots one MATCH.ANY (__match_any_sync) "
                                                       "takes per distinct value among the warp's lanes")
    mma_sync_flops_per_cycle_per_sm: float = spec_field(256, 65536, "mma.sync m16n8k16 bf16 FLOP per cycle per SM")
    mma_sync_latency_cycles: int = spec_field(1, 500, "dependent mma.sync m16n8k16 latency")
    wgmma_flops_per_cycle_per_sm: float = spec_field(256, 65536, "wgmma m64nNk16 bf16 FLOP per cycle per SM")
    wgmma_latency_cycles: int = spec_field(1, 2000, "wgmma completion latency beyond its issue-rate time")
    barrier_base_cycles: int = spec_field(0, 1000, "__syncthreads cost of a one-warp CTA")
    barrier_per_warp_cycles: int = spec_field(0, 100, "extra __syncthreads cost per warp of the CTA")

    def barrier_cycles(self, warps: int) -> int:
        """Cycles from the last warp's arrival at ``__syncthreads`` to the release of all ``warps``."""
        return self.barrier_base_cycles + self.barrier_per_warp_cycles * warps

    def instructions_per_cycle(self, pipe: str, subpartitions: int, warp_size: int) -> float:
        """Warp instructions per cycle one sub-partition's ``pipe`` accepts."""
        if pipe == "tensor":  # one mma.sync.m16n8k16 is 2*16*8*16 FLOP
            return self.mma_sync_flops_per_cycle_per_sm / subpartitions / MMA_M16N8K16_FLOPS
        if pipe == "wgmma":  # units of one warp's m64n8k16 share (same FLOP as one mma.sync)
            return self.wgmma_flops_per_cycle_per_sm / subpartitions / MMA_M16N8K16_FLOPS
        lanes = {"fp32": self.fp32_lanes_per_sm, "int32": self.int32_lanes_per_sm, "sfu": self.sfu_lanes_per_sm,
                 "shfl": self.shfl_lanes_per_sm}[pipe]
        return lanes / subpartitions / warp_size

    def latency_cycles(self, pipe: str) -> int:
        return {"fp32": self.fp32_latency_cycles, "int32": self.int32_latency_cycles,
                "sfu": self.sfu_latency_cycles, "shfl": self.shfl_latency_cycles,
                "tensor": self.mma_sync_latency_cycles,
                "wgmma": self.wgmma_latency_cycles}[pipe]


class ExecutionPipes:
    """One SM's execution pipes at run time: per pipe, one server per sub-partition at the pipe's warp
    instructions per cycle (``rate``), and the pipe's dependent-issue ``latency`` in cycles."""

    NAME = "pipe {}"  # each pipe's busy cycles are reported under "pipe fp32", "pipe sfu", ...

    def __init__(self, sm: int, subpartitions: int, rate: dict[str, float], latency: dict[str, int],
                 issue_per_cycle: float = 1.0) -> None:
        self.rate = dict(rate)
        self.latency = dict(latency)
        self.pipes = {name: [RateServer(r, f"SM{sm} {name} {i}") for i in range(subpartitions)]
                      for name, r in rate.items()}
        # the stall of a warp whose instruction finds its pipe busy: the MUFU reach their pipe through the MIO
        # queue, so ncu names a warp held back from a busy one mio_throttle (its PC samples:
        # validate/measurements/h100/stallsamples-2026-11-25.json, fa2's MUFU.EX2). A pipe that takes an
        # instruction every cycle the scheduler issues one (FP32) is busy only with what another warp issued in the
        # cycles before: that warp was selected, this one not (ncu: math_pipe_throttle 0.0-0.04 per issue on the
        # FP32 rungs). A slower pipe: math_pipe_throttle
        self.throttle = {name: "mio_throttle" if name == "sfu" else
                         "not_selected" if r >= issue_per_cycle else "math_pipe_throttle" for name, r in rate.items()}

    @classmethod
    def from_spec(cls, spec: PipesSpec, clock: Clock, sm: int, sm_spec: SmSpec,
                  issue_per_cycle: float = 1.0) -> ExecutionPipes:
        """SM ``sm``'s pipes of ``spec`` for its ``sm_spec.subpartitions`` sub-partitions (``issue_per_cycle``: what
        one scheduler issues, against which a busy pipe's stall is named)."""
        sub, warp = sm_spec.subpartitions, sm_spec.warp_size_threads
        return cls(sm, sub, {pipe: spec.instructions_per_cycle(pipe, sub, warp) for pipe in PIPES},
                   {pipe: spec.latency_cycles(pipe) for pipe in PIPES}, issue_per_cycle)

    def quanta(self, pipe: str, count: int, ilp: int, stall_cycles: float, quantum: int,
               issue_per_cycle: float, units: int = 1, waits_for_results: bool = True) -> tuple[tuple[int, float], ...]:
        """A bundle of ``count`` pipe units (``units`` per instruction: a MATCH takes the shuffle unit per distinct
        value) cut in quanta of at most ``quantum`` instructions (a warp yields the issue slot between them): per
        quantum, (instructions, cycles until the next can issue). A quantum takes the slower of its issue (at the
        pipe's rate or the scheduler's) and its dependent chains (``ilp`` independent ones, each instruction waiting
        for the pipe's latency; or the control codes' ``stall_cycles`` for the whole bundle). A bundle that does not
        wait for its results (a run of SASS instructions) lets the warp go on when its chains' last instructions
        issue, one latency before their results."""
        out = []
        total = count // units
        remaining = total
        rate, latency = self.rate[pipe], self.latency[pipe]
        while remaining > 0:
            n = min(remaining, quantum)
            remaining -= n
            steps = math.ceil(n / max(ilp, 1))
            if not waits_for_results:
                steps -= 1
            chain = max(steps * latency, stall_cycles * n / total)
            if units == 1:
                out.append((n, max(n / min(rate, issue_per_cycle), chain)))
            else:
                out.append((n, max(n / issue_per_cycle, n * units / rate, chain)))
        return tuple(out)

    def of(self, sub: int) -> dict[str, RateServer]:
        """Sub-partition ``sub``'s pipes by name, for a warp to book its work on."""
        return {name: lst[sub] for name, lst in self.pipes.items()}

    def dispatch(self, ledger: dict, pipe: str, sub: int, t: float, n: float) -> tuple[float, float]:
        """``n`` units of work (warp instructions, or tensor units) on sub-partition ``sub``'s ``pipe`` from ``t``:
        (start, end) of the pipe's work."""
        return self.pipes[pipe][sub].book(ledger, t, n)

    def reported(self) -> list[tuple[str, RateServer, float]]:
        return [(self.NAME.format(name), s, 1.0) for name, lst in self.pipes.items() for s in lst]
