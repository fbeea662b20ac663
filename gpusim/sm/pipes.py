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
from gpusim.specfield import spec_field, table_field

if TYPE_CHECKING:
    from gpusim.sm.clock import Clock
    from gpusim.sm.occupancy import SmSpec

PIPES = ("fp32", "int32", "sfu", "shfl", "tensor", "wgmma")  # the pipe names the IR's operations may name
MMA_M16N8K16_FLOPS = 2 * 16 * 8 * 16


@dataclass(frozen=True)
class PipeSpec:
    """One execution pipe (``[pipes.NAME]`` in the hardware config): its width, either in lanes (a warp instruction
    is a warp's worth of lane operations) or for a tensor pipe in FLOP (work counted in units of one
    ``mma.sync.m16n8k16``, 4096 FLOP), and its dependent-issue latency."""

    lanes_per_sm: int | None = spec_field(1, 1024, "lanes per SM (one lane operation per cycle each)",
                                          feature="lanes")
    flops_per_cycle_per_sm: float | None = spec_field(
        64, 65536, "tensor FLOP per cycle per SM (bf16 in, fp32 accumulate)", feature="tensor")
    latency_cycles: int = spec_field(1, 2000, "dependent-issue latency (for wgmma: completion beyond its issue-rate "
                                              "time)")

    ONE_OF = ("lanes_per_sm", "flops_per_cycle_per_sm")  # a pipe's width is one or the other

    def instructions_per_cycle(self, subpartitions: int, warp_size: int) -> float:
        """Warp instructions (tensor pipes: m16n8k16 units) per cycle one sub-partition's pipe accepts."""
        if self.flops_per_cycle_per_sm is not None:
            return self.flops_per_cycle_per_sm / subpartitions / MMA_M16N8K16_FLOPS
        return self.lanes_per_sm / subpartitions / warp_size


@dataclass(frozen=True)
class PipesSpec:
    """The SM's execution pipes, as the config declares them (``[pipes.NAME]``, in the config's order), and the
    ``__syncthreads`` cost (``[pipes]``). ``tensor`` is the pipe ``mma.sync`` runs on, ``wgmma`` Hopper's
    asynchronous warpgroup MMA (absent on a GPU without it)."""

    units: tuple[tuple[str, PipeSpec], ...] = table_field(PipeSpec, "the execution pipes, one sub-table each")
    barrier_base_cycles: int = spec_field(0, 1000, "__syncthreads cost of a one-warp CTA")
    barrier_per_warp_cycles: int = spec_field(0, 100, "extra __syncthreads cost per warp of the CTA")
    match_slots_per_distinct_value: float = spec_field(0.1, 64, "shuffle-pipe slots one MATCH.ANY (__match_any_sync) "
                                                       "takes per distinct value among the warp's lanes")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.units)

    def pipe(self, name: str) -> PipeSpec | None:
        return dict(self.units).get(name)

    def _value(self, name: str, key: str):
        unit = self.pipe(name)
        return None if unit is None else getattr(unit, key)

    # the pipes' numbers under their flat names (None where the GPU has no such pipe)
    fp32_lanes_per_sm = property(lambda self: self._value("fp32", "lanes_per_sm"))
    int32_lanes_per_sm = property(lambda self: self._value("int32", "lanes_per_sm"))
    sfu_lanes_per_sm = property(lambda self: self._value("sfu", "lanes_per_sm"))
    shfl_lanes_per_sm = property(lambda self: self._value("shfl", "lanes_per_sm"))
    fp32_latency_cycles = property(lambda self: self._value("fp32", "latency_cycles"))
    int32_latency_cycles = property(lambda self: self._value("int32", "latency_cycles"))
    sfu_latency_cycles = property(lambda self: self._value("sfu", "latency_cycles"))
    shfl_latency_cycles = property(lambda self: self._value("shfl", "latency_cycles"))
    mma_sync_flops_per_cycle_per_sm = property(lambda self: self._value("tensor", "flops_per_cycle_per_sm"))
    mma_sync_latency_cycles = property(lambda self: self._value("tensor", "latency_cycles"))
    wgmma_flops_per_cycle_per_sm = property(lambda self: self._value("wgmma", "flops_per_cycle_per_sm"))
    wgmma_latency_cycles = property(lambda self: self._value("wgmma", "latency_cycles"))

    @property
    def dense_tensor_flops_per_cycle_per_sm(self) -> float | None:
        """The SM's fastest tensor pipe (the dense tensor peak): wgmma's on Hopper, mma.sync's before it."""
        rates = [u.flops_per_cycle_per_sm for _, u in self.units if u.flops_per_cycle_per_sm is not None]
        return max(rates) if rates else None

    def barrier_cycles(self, warps: int) -> int:
        """Cycles from the last warp's arrival at ``__syncthreads`` to the release of all ``warps``."""
        return self.barrier_base_cycles + self.barrier_per_warp_cycles * warps

    def instructions_per_cycle(self, pipe: str, subpartitions: int, warp_size: int) -> float:
        """Warp instructions per cycle one sub-partition's ``pipe`` accepts (tensor pipes: m16n8k16 units; a
        wgmma's ``m64nNk16`` is ``N/8`` of them on each of its four warps)."""
        return self.pipe(pipe).instructions_per_cycle(subpartitions, warp_size)

    def latency_cycles(self, pipe: str) -> int:
        return self.pipe(pipe).latency_cycles


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
        return cls(sm, sub, {pipe: spec.instructions_per_cycle(pipe, sub, warp) for pipe in spec.names},
                   {pipe: spec.latency_cycles(pipe) for pipe in spec.names}, issue_per_cycle)  # the config's pipes

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
