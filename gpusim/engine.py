"""Discrete-event model of the chip running one kernel (SimPy, cycles): warps walking their program through the
units, barriers, and the fast-forward.

The units live next to their specs, are built from them (``from_spec(spec, clock)``) and know nothing of each
other: issue slots (:mod:`gpusim.sm.scheduler`), execution pipes (:mod:`gpusim.sm.pipes`), the instruction fetch
(:mod:`gpusim.sm.icache`), the L1TEX pipe and the LSU queues in front of it (:mod:`gpusim.memory.lsu`), the SM's
port to L2 (:mod:`gpusim.memory.l2_port`), the TMA engine (:mod:`gpusim.memory.tma`), the L2 partitions, write path
and fill (:mod:`gpusim.memory.l2`), HBM (:mod:`gpusim.memory.hbm`), and bar.sync barriers, mbarriers and
asynchronous groups (:mod:`gpusim.sm.barriers`). This module puts them into a few *representative* SMs
(:class:`SmUnit`) that run in one SimPy environment against the chip-wide L2 and HBM (:class:`ChipMemory`), and
walks the kernel's program in one process per warp. A memory instruction walks the path its space and kind name
(:data:`gpusim.request.PATHS`): the SM's front (LSU queue and L1TEX pipe, or the TMA engine), then the memory side,
whose stages each serve the :class:`gpusim.request.Request` and say when they pass it on; a load missing a level
waits for the next level's answer.

Each representative CTA stands for ``weight`` real CTAs (the builder in :mod:`gpusim.chip` chooses which CTAs are
simulated and what each stands for): what it asks of the SM's own units (issue slots, pipes, the L1TEX pipe, its
L2 port, its TMA engine) is asked once, what it asks of the chip-wide L2 and HBM is asked ``weight`` times, as its
clones on the other SMs would. So the chip's bandwidth is shared dynamically: an SM whose neighbours are idle (a
tail, a phase of the kernel that does not touch memory) gets more of it, up to its own port.

A memory or compute operation books work on the units it uses and the warp sleeps until it may go on. Every cycle
a warp spends not issuing is charged to one of Nsight Compute's stall reasons. CTAs are handed to SM slots in
launch order as slots free (:meth:`ChipModel._slot`), staggered by the chip's CTA launch interval; persistent CTAs
run their tiles one after another. Stores are fire-and-forget for the warp, but a warp stays resident until its
stores have reached L2 (ncu's ``drain``), and the kernel ends when the last write and write-back have drained.
Each unit's busy cycles are collected from the servers it reports (:meth:`ChipModel._busy`).

Fast-forward, three kinds, each only once it has proved a steady state:
- a CTA's outer loop: after a warm-up, the period of each warp's iterations is measured over a window; when
  two successive windows agree, the rest of the trips is skipped, their work booked on every unit as a
  background reservation (stretched when the unit has no room for it) and in the warps' ledgers as simulated work
  is; what was in flight at the skip (results, stores, async groups) is in flight at its end; otherwise it
  simulates on;
- a persistent CTA's tiles, as a loop's iterations (a tile's work counts its own skipped iterations');
- the grid: once CTAs complete at a steady rate, the CTAs in the middle of the queue are skipped, and their
  time and work added from that rate (the last ones still run in detail, so the tail is simulated).
Each skipped stretch books on every unit, and adds to the stalls and their causes, what its window did.
``GPUSIM_FAST_FORWARD=0`` (:data:`FAST_FORWARD_ENV`) turns them off: the reference they are checked against
(:mod:`gpusim.fast_forward_check`).
"""

from __future__ import annotations

import itertools
import math
import os
from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import simpy

from gpusim.ir import (LOADS, Arrive, Barrier, Commit, Compute, Fence, Kernel, KernelError, Loop, MbarWait, Mem,
                       WaitGroup)
from gpusim.memory.hbm import Hbm
from gpusim.memory.l2 import L2Fill, L2Partitions, L2WritePath
from gpusim.memory.l2_atomics import L2Atomics
from gpusim.memory.l2_port import L2Port
from gpusim.memory.lsu import L1TexPipe, Lsu
from gpusim.memory.tma import TmaEngine
from gpusim.patterns import pattern_row
from gpusim.request import FILL, HBM, L2, L2_ATOMICS, L2_PORT, L2_WRITE, PATHS, Request, misses, walk
from gpusim.resources import RateServer
from gpusim.sm.barriers import AsyncGroups, CtaBarriers, Mbarriers, mbarrier_setup_cycles
from gpusim.sm.clock import Clock
from gpusim.sm.icache import InstructionFetch
from gpusim.sm.pipes import ExecutionPipes
from gpusim.sm.scheduler import IssueSlots

EXTRAPOLATED = "extrapolated"  # the trace category of a warp's fast-forwarded stretch (not simulated)
STALLS = ("long_scoreboard", "short_scoreboard", "lg_throttle", "mio_throttle", "barrier",
          "math_pipe_throttle", "wait", "drain", "no_instruction", "dispatch_stall", "not_selected", "membar",
          "selected")
# The constants below are algorithmic, not hardware: they decide how much of the kernel is simulated in detail
# before the model extrapolates a steady state (the hardware numbers the engine uses come from configs/, through
# the units built from their specs). Numerical guards (1e-12 against an empty window) are not model parameters.
# loop fast-forward: iterations simulated before the first steady-state test, the window each test compares
# with the one before it, the largest relative difference of the two windows' periods that counts as steady,
# and the most iterations simulated before the loop is extrapolated anyway (reported as not steady)
WARM_ITERATIONS = 4
WINDOW_ITERATIONS = 6
STEADY_TOLERANCE = 0.03
STEADY_SPIKE = 1.5  # a loop's steady windows hold no iteration longer than this times their median
MAX_LOOP_ITERATIONS = 64
# a persistent CTA's tiles: tiles simulated before the first steadiness test and the window of tiles it compares
TILE_WARM = 1
TILE_WINDOW = 2
# grid fast-forward: completed CTA "rounds" (every slot once) per window of the CTA-throughput test, and rounds
# always simulated at the end of the grid. The test compares the slots' mean period (dispatch wait, launch and run)
# over three windows in a row and skips whole rounds; with two windows, CTAs whose slots were still settling passed
# by chance (sgemm_2d_blocktiling BM=64,BN=64 7% short of its whole grid). A CTA with an outer loop settles inside
# it (the loop fast-forward's window), so one-round windows do; a CTA without a loop is one short phase whose
# length depends on how it meets the other CTAs' phases on its SM, which settles over several rounds (the Harris
# reductions' CTAs lengthened while one-round windows agreed): its windows are two rounds. Over the 140 validated
# rows the fast-forward lands within 0.08% of the whole grid on average, 2.6% at most (validate/DEVIATIONS.md)
GRID_WINDOW_ROUNDS = 1
GRID_WINDOW_ROUNDS_NO_LOOP = 2
GRID_TAIL_ROUNDS = 1
# not a model parameter: the fast-forwards the engine may use, an environment variable: unset or "1", all of them;
# "0", none (every iteration, tile and CTA simulated in detail: the reference every fast-forward is checked against,
# gpusim/fast_forward_check.py); or some of FAST_FORWARDS, comma-separated
FAST_FORWARD_ENV = "GPUSIM_FAST_FORWARD"
FAST_FORWARDS = ("loop", "tile", "grid")  # a CTA's outer loop, a persistent CTA's tiles, the grid's CTAs


def fast_forwards() -> frozenset[str]:
    """The fast-forwards :data:`FAST_FORWARD_ENV` allows."""
    value = os.environ.get(FAST_FORWARD_ENV, "1").strip()
    if value in ("", "1"):
        return frozenset(FAST_FORWARDS)
    if value == "0":
        return frozenset()
    kinds = frozenset(v.strip() for v in value.split(","))
    if not kinds <= set(FAST_FORWARDS):
        raise ValueError(f"{FAST_FORWARD_ENV}={value}: allowed 0, 1 or some of {', '.join(FAST_FORWARDS)}")
    return kinds


# each stall reason's column in a warp's stall counts
(LONG_SCOREBOARD, SHORT_SCOREBOARD, LG_THROTTLE, MIO_THROTTLE, BARRIER, MATH_PIPE_THROTTLE, WAIT, DRAIN, NO_INSTRUCTION,
 DISPATCH_STALL, NOT_SELECTED, MEMBAR, SELECTED) = range(len(STALLS))
STALL_INDEX = {name: i for i, name in enumerate(STALLS)}
# the kinds of step a warp walks (:func:`_unrolled`)
_MEM, _COMPUTE, _SYNC = range(3)


class DeadlockError(KernelError):
    """A barrier or mbarrier wait that no remaining work can complete."""


@dataclass(frozen=True)
class MemTiming:
    """Per-operation numbers the model needs beyond the pattern counts."""

    l1tex_cycles: np.ndarray  # (period, inner, warps)
    instructions: np.ndarray  # (period, inner, warps)
    period: int
    l2_bytes: np.ndarray  # (period, inner, warps) expected bytes sent to L2 per execution
    hbm_bytes: np.ndarray  # expected bytes HBM moves per execution (reads, or write-backs for stores)
    l1_miss_fraction: float  # executions that miss L1 (request level)
    l2_miss_fraction: float  # of those, executions that miss L2
    latency_hit_cycles: int
    # executions whose sectors all hit, one or more in a line a miss of the same iteration brought in: ncu's hits,
    # but the data is that miss's, still on its way (:meth:`ChipModel._pending`)
    l1_pending_fraction: float = 0.0
    l2_write_cycles: np.ndarray | None = None  # stores: cycles of the chip's L2 write path per execution
    l2_read_cost: np.ndarray | None = None  # loads: bytes of the L2's read bandwidth per execution (lines cost more)
    last: bool = False  # arrays have a row ``period`` for a ragged last loop iteration (patterns.pattern_row)
    hbm_cost: float = 1.0  # HBM time per fetched byte over a stream's (blocks fetched alone in their DRAM rows)
    # a global atomic: per (period, inner, warps) the line and the slice of the L2 it loads most (-1: none) and its
    # requests' nanoseconds on each (:func:`gpusim.memory.l2_atomics.hottest`), and the chance that another CTA's warp
    # loads the same line, and slice (:func:`gpusim.memory.l2_atomics.sharing`)
    atomic_line: np.ndarray | None = None
    atomic_line_ns: np.ndarray | None = None
    atomic_slice: np.ndarray | None = None
    atomic_slice_ns: np.ndarray | None = None
    atomic_sharing: tuple[float, float] = (0.0, 0.0)
    # per representative CTA (linear index) whose lines differ from its class's CTA's: (lines, slices) it is shifted by
    atomic_shifts: dict | None = None
    conflict_pace_cycles: np.ndarray | None = None  # shared loads and stores: cycles bank conflicts add to their pace


class OpRow(NamedTuple):
    """One execution of a memory operation by one warp (a pattern row, an inner iteration): what it asks of the
    units of its path, as Python numbers."""

    instructions: int
    l1tex_cycles: float
    l2_bytes: float
    hbm_bytes: float
    l2_write_cycles: float  # a store's
    l2_read_cost: float  # a load's bytes of the L2 read bandwidth
    conflict_pace: float  # cycles its bank conflicts add to a shared access's own pace through the pipe


class _OpTiming:
    """A :class:`MemTiming` as the warps read it: per pattern row, inner iteration and warp, an :class:`OpRow`, and
    its scalars."""

    __slots__ = ("rows", "period", "last", "latency_hit_cycles", "l1_miss_fraction", "l2_miss_fraction", "hbm_cost",
                 "atomic", "sharing", "shifts", "l1_pending_share")

    def __init__(self, tm: MemTiming) -> None:
        ins, l1, l2, hbm = (a.tolist() for a in (tm.instructions, tm.l1tex_cycles, tm.l2_bytes, tm.hbm_bytes))
        wc = tm.l2_write_cycles.tolist() if tm.l2_write_cycles is not None else None
        rc = tm.l2_read_cost.tolist() if tm.l2_read_cost is not None else None
        lx = tm.conflict_pace_cycles.tolist() if tm.conflict_pace_cycles is not None else None
        self.rows = [[[OpRow(int(ins[r][j][w]), float(l1[r][j][w]), float(l2[r][j][w]), float(hbm[r][j][w]),
                             float(wc[r][j][w]) if wc is not None else 0.0,
                             float(rc[r][j][w]) if rc is not None else float(l2[r][j][w]),
                             float(lx[r][j][w]) if lx is not None else 0.0)
                       for w in range(len(ins[r][j]))]
                      for j in range(len(ins[r]))] for r in range(len(ins))]
        self.period = tm.period
        self.last = tm.last
        self.latency_hit_cycles = tm.latency_hit_cycles
        self.l1_miss_fraction = tm.l1_miss_fraction
        self.l2_miss_fraction = tm.l2_miss_fraction
        # of the executions that do not miss, the share that finds its line on its way
        hit = 1.0 - tm.l1_miss_fraction
        self.l1_pending_share = min(tm.l1_pending_fraction / hit, 1.0) if hit > 0 else 0.0
        self.hbm_cost = tm.hbm_cost
        self.sharing = dict(zip(("line", "slice"), tm.atomic_sharing, strict=True))
        self.shifts = tm.atomic_shifts or {}
        # per row, inner iteration and warp: its (("line", id), ns) and (("slice", id), ns) at the L2's atomic units
        self.atomic = None
        if tm.atomic_line is not None:
            ln, lns, sl, sns = (a.tolist() for a in (tm.atomic_line, tm.atomic_line_ns, tm.atomic_slice,
                                                     tm.atomic_slice_ns))
            self.atomic = [[[tuple((k, n) for k, n in ((("line", ln[r][j][w]), lns[r][j][w]),
                                                         (("slice", sl[r][j][w]), sns[r][j][w])) if k[1] >= 0 and n > 0)
                             for w in range(len(ln[r][j]))] for j in range(len(ln[r]))] for r in range(len(ln))]

    def atomic_keys(self) -> set:
        """The lines and slices its executions load: (kind, id)."""
        if self.atomic is None:
            return set()
        return {k for row in self.atomic for inner in row for warp in inner for k, _ in warp}

    def shifted(self, key: tuple, index: int) -> tuple:
        """``key`` (("line" | "slice", id)) as the CTA of linear ``index`` loads it (its own lines)."""
        kind, i = key
        shift = self.shifts.get(index)
        return (kind, i + shift[kind == "slice"]) if shift else key


@dataclass
class CtaWork:
    """One representative CTA: which real CTA (or persistent CTA's tiles) it is and how many it stands for."""

    index: int  # linear index of the real CTA (its first tile, for a persistent CTA)
    weight: float  # real CTAs it stands for
    trips: int  # outer-loop trips (of each tile)
    tiles: tuple[int, ...] = ()  # persistent: the tiles (linear grid indices) it processes, in order


@dataclass
class ChipResult:
    cycles: float  # kernel time, launch to the last write drained
    warp_cycles: float  # sum over real warps of resident cycles
    sm_active_cycles: float  # sum over real SMs of cycles with a CTA resident (each SM with work counted once)
    stalls: dict[str, float]  # reason -> warp-cycles over all real warps
    issue_cycles: float  # warp instructions issued, all real warps
    busy: dict[str, float]  # unit -> busy cycles (all instances of the unit on the chip)
    instances: dict[str, int]  # unit -> how many the chip has
    fast_forward: bool  # any part extrapolated
    loop_steady: bool  # every loop fast-forward found a steady state first
    grid_skipped_ctas: float  # real CTAs whose time came from the grid fast-forward
    simulated_iterations: int  # most outer-loop iterations simulated by one warp
    period: float = 0.0  # cycles per outer-loop iteration of the first CTA in its measured window
    trace: list = field(default_factory=list)  # (slot x warps per CTA + warp, name, category, t0, t1) on SM 0
    # (stall reason, what the warps waited on) -> warp-cycles the simulated warps spent so, each times the real CTAs
    # its CTA stands for (as the stalls): the share of each reason's cycles each cause holds (gpusim/stalls.py words
    # them)
    stall_causes: dict = field(default_factory=dict)


class ChipMemory:
    """The chip-wide memory side: the L2's partitions, write path and fill, and HBM, built from the config's
    ``[l2]`` and ``[hbm]``."""

    def __init__(self, cfg, clock: Clock, atomic_keys=()) -> None:
        """``atomic_keys``: the L2 atomic units' servers (lines, slices) the run's global atomics load
        (:class:`L2Atomics`)."""
        self.l2 = L2Partitions.from_spec(cfg.l2, clock)
        self.l2_write = L2WritePath.from_spec(cfg.l2, clock, cfg.l1.line_bytes)
        self.fill = L2Fill(self.l2_write)
        self.hbm = Hbm.from_spec(cfg.hbm, clock)
        self.atomics = L2Atomics.from_spec(clock, atomic_keys)

    def stages(self) -> dict:
        """The chip-wide stages of a request's path, by the names :data:`gpusim.request.PATHS` uses."""
        return {L2: self.l2, L2_WRITE: self.l2_write, L2_ATOMICS: self.atomics, HBM: self.hbm, FILL: self.fill}

    def reported(self) -> list[tuple[str, RateServer, float]]:
        return [*self.l2.reported(), *self.hbm.reported(), *self.l2_write.reported(), *self.atomics.reported()]


class SmUnit:
    """One representative SM: its sub-partitions' issue slots and pipes, the L1TEX pipe and the LSU queues in front
    of it, its L2 port and its TMA engine."""

    def __init__(self, index: int, cfg, clock: Clock, memory: ChipMemory) -> None:
        self.index = index
        sub = cfg.sm.subpartitions
        self.issue = IssueSlots.from_spec(cfg.scheduler, clock, index, sub)
        self.pipes = ExecutionPipes.from_spec(cfg.pipes, clock, index, cfg.sm, self.issue.instructions_per_cycle)
        self.l1tex = L1TexPipe.from_spec(cfg.l1, clock, index)
        self.lsu = Lsu.from_spec(cfg.l1, clock, self.l1tex, sub)
        self.port = L2Port.from_spec(cfg.l2, clock, index)
        self.tma = TmaEngine.from_spec(cfg.tma, clock, index) if getattr(cfg, "tma", None) is not None else None
        # per (space, kind): the memory-side stages of its path, this SM's port and the chip's L2 and HBM
        stages = {L2_PORT: self.port, **memory.stages()}
        self.memory_side = {key: tuple(stages[s] for s in path.memory_side) for key, path in PATHS.items()}
        # the real SMs this one stands for while CTAs are resident: its CTAs' weights (real CTAs each), at most the
        # SMs it stands for (a full wave's CTAs share them; a small grid's or a tail's CTAs, one per SM, do not)
        self.resident_weight = 0.0
        self.active_since = 0.0
        self.active_cycles = 0.0  # real-SM cycles with a CTA resident
        # the loop fast-forward's view of the SM: its resident CTAs (serial -> _Cta), and per CTA the end of its
        # latest skipped stretch (a co-resident CTA's iterations that overlap it ran against a background
        # reservation, not against that CTA's iterations: they do not measure the steady state)
        self.resident: dict[int, _Cta] = {}
        self.skipped_until: dict[int, float] = {}
        self.partial_works = 0  # CTAs of a partial wave it was dealt

    def occupy(self, now: float, weight: float, cap: float) -> None:
        """A CTA standing for ``weight`` real CTAs arrives (negative: leaves) at ``now``; ``cap``: the real SMs this
        one stands for."""
        self.active_cycles += (now - self.active_since) * min(self.resident_weight, cap)
        self.active_since = now
        self.resident_weight = max(self.resident_weight + weight, 0.0)

    def reported(self) -> list[tuple[str, RateServer, float]]:
        return [*self.issue.reported(), *self.pipes.reported(), *self.l1tex.reported(), *self.port.reported(),
                *(self.tma.reported() if self.tma else [])]

    def servers(self) -> list[RateServer]:
        return [s for _, s, _ in self.reported()]


class _Cta:
    """Run-time state of one CTA (or one tile of a persistent CTA) on a representative SM."""

    def __init__(self, serial: int, work: CtaWork, sm: SmUnit, slot: int, nwarps: int) -> None:
        self.serial = serial
        self.work = work
        self.sm = sm
        self.slot = slot
        self.steady = True
        self.loop_warps = nwarps  # warps with work in the outer loop (set by the model)
        # per tile (a persistent CTA runs several; -1: its tiles) and stretch of detailed iterations (a loop that
        # skipped part of its trips and goes on in detail starts a new one)
        self.loops: dict[tuple[int, int], _LoopState] = {}
        self.current: _LoopState | None = None  # the outer loop its warps run now
        self.stats = [[0.0] * len(STALLS) for _ in range(nwarps)]  # per warp, cycles per stall reason
        self.start = np.zeros(nwarps)
        self.end = np.zeros(nwarps)
        self.booked: dict = {}  # unit -> work its warps booked (requests and skipped stretches)
        self.causes: dict = {}  # (stall reason, what it waited on) -> its warps' cycles
        self.traced = False
        self.began = 0.0  # when it was handed its slot
        # (load, tile, iteration, inner iteration) -> when its first execution in the CTA left the L1TEX pipe
        self.first_seen: dict[tuple[str, int, int, int], float] = {}

    def work_vector(self, index: dict) -> np.ndarray:
        """Work its warps booked on each unit, in ``index`` order."""
        v = np.zeros(len(index))
        for srv, w in self.booked.items():
            v[index[srv]] += w
        return v

    def loop(self, tile: int, env: simpy.Environment, stretch: int = 0, first: int = 0) -> _LoopState:
        st = self.loops.get((tile, stretch))
        if st is None:
            st = self.loops[tile, stretch] = _LoopState(env.event(), first)
        return st


class _LoopState:
    """One run of the outer loop by a CTA: its fast-forward decision and the warps waiting at the skip."""

    __slots__ = ("skip_after", "skip_end", "first", "settled", "started", "skips", "event", "began", "window_end",
                 "group_period", "own_period")

    def __init__(self, event: simpy.Event, first: int = 0) -> None:
        self.first = first  # the first iteration of this stretch of detailed iterations
        # the iteration the forced skip (MAX_LOOP_ITERATIONS) counts from: the first, or the last at which the loop
        # waited for a CTA about to join it on the SM (:meth:`ChipModel._filling`): its windows begin after that
        self.settled = first
        self.skip_after: int | None = None  # last simulated iteration, once decided
        # the iteration the skip goes to: None, the last (or the ragged last); else a window measured beside another
        # CTA's skipped stretch, which holds only until that stretch ends (:meth:`ChipModel._skip_end`)
        self.skip_end: int | None = None
        self.started = -1  # the furthest iteration any warp has begun
        self.skips: list = []  # (warp, arrival, skipped cycles, work per unit) of each warp at the skip point
        self.event = event
        self.began: list[float] = []  # when the first warp began each iteration (from ``first``)
        # a loop that skips because another CTA on its SM did: its window ends there (what its warps run after it
        # runs beside that CTA's background reservation)
        self.window_end: float | None = None
        # CTAs that skip together (one and those that join it, with the same trips): their common period, and this
        # one's over its last two windows where it ran them (:meth:`ChipModel._join`)
        self.group_period: float | None = None
        self.own_period: float | None = None


class _Warp:
    """Run-time state of one warp."""

    __slots__ = ("lw", "cta", "sub", "stats", "slot", "pipes", "ready", "exec_count", "groups", "stores_done",
                 "fetch_free", "marks", "work", "causes", "tracing", "t", "tile", "shared_end")

    def __init__(self, lw: int, cta: _Cta, sub: int, tracing: bool) -> None:
        self.lw = lw
        self.cta = cta
        self.sub = sub  # its sub-partition, whose issue slot and pipes it uses
        self.stats = cta.stats[lw]
        self.slot = cta.sm.issue.slot(sub)
        self.pipes = cta.sm.pipes.of(sub)
        self.ready: dict[str, float] = {}
        self.exec_count: dict[str, int] = {}
        self.groups = AsyncGroups()
        self.stores_done = 0.0
        self.tile = 0  # which of its CTA's tiles it works on (a persistent CTA runs several)
        self.fetch_free = 0.0  # when the instruction fetch has delivered what the warp asked for so far
        self.shared_end = 0.0  # when its last shared-memory access's wavefronts were through the pipe, at its pace
        # per iteration: time, stats, work per server, stall causes
        self.marks: list[tuple[float, list, dict, dict]] = []
        self.work: dict[RateServer, float] = {}  # work booked on each server so far (its ledger)
        self.causes: dict[tuple[str, str], float] = {}  # (stall reason, what it waited on) -> cycles so far
        self.tracing = tracing
        self.t: dict = {}  # the timings of its current tile's access pattern


class ChipModel:
    """Representative SMs and the chip's memory side running a list of representative CTAs."""

    def __init__(self, kernel: Kernel, timings: dict[str, MemTiming] | list[dict[str, MemTiming]], cfg,
                 sms: int, ctas_per_sm: int, works: list[CtaWork], sm_weight: float, trace: bool = False,
                 class_of=None, loop_instructions: int = 0) -> None:
        """``cfg``: the hardware config (:class:`gpusim.config.HardwareConfig`) at the SM clock the kernel runs at;
        ``loop_instructions``: the SASS instructions of its outer loop (what the instruction fetch delivers)."""
        self.k = kernel
        # per access-pattern class of CTAs (the interior first), and which class a linear CTA index has
        self.timings = [timings] if isinstance(timings, dict) else list(timings)
        self.t = [{name: _OpTiming(tm) for name, tm in ts.items()} for ts in self.timings]
        self.class_of = class_of or (lambda linear: 0)
        # a loop whose last iteration has its own pattern runs that iteration after a fast-forward
        self.ragged_last = kernel.loop is not None and any(tm.last for ts in self.timings for tm in ts.values())
        self.trips = kernel.loop.trips if kernel.loop is not None else 1
        clock = Clock(cfg.chip.sm_clock_hz)
        self.env = simpy.Environment()
        self.subpartitions = cfg.sm.subpartitions
        self.wpc = -(-kernel.launch.threads_per_block // cfg.sm.warp_size_threads)
        self.mem = ChipMemory(cfg, clock, self._atomic_keys(works))
        self.atomic_servers = frozenset(self.mem.atomics.servers.values())
        self.sms = [SmUnit(i, cfg, clock, self.mem) for i in range(sms)]
        pipes, slots = self.sms[0].pipes, self.sms[0].issue  # every SM's are alike
        # the program's parts as the warps walk them, inner loops unrolled, compute bundles cut in quanta
        self.prologue = _unrolled(kernel.prologue, pipes, slots)
        self.body = _unrolled(kernel.loop.body, pipes, slots) if kernel.loop is not None else ()
        self.epilogue = _unrolled(kernel.epilogue, pipes, slots)
        self.fetch = InstructionFetch.from_spec(cfg.icache, clock, loop_instructions)
        self.fetch_cycles_per_instruction = self.fetch.cycles_per_instruction
        self.pipe_latency = pipes.latency
        # the stall of a warp held back by a busy pipe (the pipes say which)
        self.throttle_stall = {pipe: STALL_INDEX[name] for pipe, name in pipes.throttle.items()}
        self.cta_launch_cycles = cfg.chip.cta_launch_cycles + mbarrier_setup_cycles(cfg.chip, len(kernel.mbarriers))
        self.cta_dispatch_interval_cycles = clock.cycles_of_ns(cfg.chip.cta_dispatch_interval_ns)
        self.fence_cycles = cfg.l2.fence_cycles
        self.fence_after_store_cycles = cfg.l2.fence_after_store_cycles
        self.ctas_per_sm = ctas_per_sm
        self.sm_weight = sm_weight  # real SMs one representative stands for
        self.works = works
        self.tracing = trace
        self.trace: list = []
        self.traced_slots: set[int] = set()
        # the stall a warp waiting for an operation's result is charged to (the default: wait)
        self.kind_of = {op.name: (LONG_SCOREBOARD if op.space == "global" else SHORT_SCOREBOARD)
                        for op in kernel.all_ops() if isinstance(op, Mem) and op.kind in LOADS}
        # a global atomic's old value (ATOMG) comes back from the L2 through the L1TEX path, as a global load's data
        atomg = [op for op in kernel.all_ops() if isinstance(op, Mem) and op.space == "global" and op.atomic
                 and not op.reduction]
        self.kind_of |= {op.name: LONG_SCOREBOARD for op in atomg}
        # a shuffle's result comes back through the MIO path, like a shared load (ncu: short_scoreboard)
        self.kind_of |= {op.name: SHORT_SCOREBOARD for op in kernel.all_ops()
                         if isinstance(op, Compute) and op.pipe == "shfl"}
        # what a warp waiting on an operation's result waits for, as the stall explanations name it
        self.cause_of = {op.name: f"{op.space} {'ldmatrix' if op.kind == 'ldsm' else 'load'} '{op.name}'"
                         for op in kernel.all_ops() if isinstance(op, Mem) and op.kind in LOADS}
        self.cause_of |= {op.name: f"{op.pipe} '{op.name}'" for op in kernel.all_ops() if isinstance(op, Compute)}
        self.cause_of |= {op.name: f"global atomic '{op.name}' (its old value, from the L2)" for op in atomg}
        # ... and a warp waiting on an mbarrier: what completes its phases (TMA copies landing, warps arriving)
        tma = {op.arrive for op in kernel.all_ops() if isinstance(op, Mem) and op.arrive}
        warps = {op.bar for op in kernel.all_ops() if isinstance(op, Arrive)}
        self.cause_of |= {f"mbarrier:{b}": f"mbarrier '{b}' <- " + " and ".join(
            x for x, on in (("TMA copies", b in tma), ("warps arriving", b in warps)) if on) for b in tma | warps}
        self.stall_causes: dict[tuple[str, str], float] = {}
        self.barriers = CtaBarriers.from_spec(cfg.pipes, clock, self.env, self.wpc)
        self.mbarriers = Mbarriers(self.env, kernel.mbarriers)
        self.phases_per_tile = _phases_per_tile(kernel)
        self.waiting: dict = {}  # (cta serial, warp) -> what it waits on
        self.unfinished: set = set()
        self.serial = 0
        # results, weighted by the real CTAs each representative stands for
        self.stalls = np.zeros(len(STALLS))
        self.warp_cycles = 0.0
        self.last_end = 0.0
        self.max_iterations = 0
        self.loop_ff = False
        self.loop_steady = True
        self.may_skip = fast_forwards()  # which fast-forwards it may use
        self.first_period = 0.0
        # the grid fast-forward
        self.queue = deque(works)
        # per completed CTA, its slot's period: from the end of the slot's previous CTA (or the start) to its own end,
        # the wait for its dispatch and its launch included (a grid whose CTAs come slower than the slots free runs
        # at the dispatch rate, not at its CTAs' durations)
        self.done_periods: list[float] = []
        self.slot_end: dict[tuple[int, int], float] = {}
        self.done_weight: list[float] = []
        self.done_shape: list[tuple] = []  # per completed CTA: its trips and tile count (what makes CTAs alike)
        self.done_stats: list[tuple[np.ndarray, float]] = []
        self.skip_time = 0.0
        self.skip_weight = 0.0
        self.skip_stats = np.zeros(len(STALLS))
        self.skip_warp_cycles = 0.0
        self.next_launch = 0.0
        # CTAs of a partial wave stand for fewer real CTAs than a full wave's (chip.representative_works); they are
        # dealt to the SMs in turn (:meth:`_slot`)
        self.wave_weight = max((w.weight for w in works), default=0.0)
        self.partial_turn: simpy.Event | None = None
        # every unit, the name it is reported under and what one instance counts for: a representative's own units
        # stand for as many real SMs as have work (fewer than sm_weight when the grid does not fill the chip)
        chip_sms = round(len(self.sms) * sm_weight)
        ctas = min(kernel.persistent_ctas, kernel.launch.num_ctas) if kernel.persistent_ctas else kernel.launch.num_ctas
        sm_weight = min(sm_weight, max(min(chip_sms, ctas), 1) / len(self.sms))
        # (name, server, what its busy cycles count for): a server may stand for several instances (the L2's
        # partitions), listed once for each
        self._reported = [(name, s, share) for name, s, share in self.mem.reported()]
        for sm in self.sms:
            self._reported += [(name, s, sm_weight * share) for name, s, share in sm.reported()]
        self._servers = list(dict.fromkeys(s for _, s, _ in self._reported))
        self._index = {srv: i for i, srv in enumerate(self._servers)}
        self._rates = np.array([srv.rate for srv in self._servers])
        # per SM unit (the L1TEX pipe, the issue slots, ...), its server on each representative SM: alike SMs, over
        # which the grid fast-forward's skipped CTAs spread evenly
        peers = zip(*([self._index[s] for _, s, _ in sm.reported()] for sm in self.sms), strict=True)
        self._sm_peers = [list(dict.fromkeys(p)) for p in peers]
        self.done_work: list[np.ndarray] = []  # per completed CTA: work it booked on each unit, times its weight
        self.done_causes: list[dict] = []  # per completed CTA: its warps' stall cycles per cause
        self.skip_busy = np.zeros(len(self._servers))
        # warps with no work in the outer loop (idle members of a warp-specialized CTA) skip it
        self.loop_idle = [not _has_work(kernel.loop.body if kernel.loop else (), self.timings[0], lw)
                          for lw in range(self.wpc)]
        # warps with nothing to do in a whole tile (prologue, loop and epilogue)
        self.tile_idle = [self.loop_idle[lw] and not _has_work((*kernel.prologue, *kernel.epilogue), self.timings[0],
                                                               lw)
                          for lw in range(self.wpc)]

    # --- helpers -------------------------------------------------------------------------------------
    def _span(self, wp: _Warp, name: str, cat: str, t0: float, t1: float) -> None:
        if t1 > t0:
            self.trace.append((wp.cta.slot * self.wpc + wp.lw, name, cat, t0, t1))

    def _fetch(self, wp: _Warp, t: float, wait: float) -> None:
        """The warp waits ``wait`` cycles for instructions to arrive from the instruction caches (no_instruction)."""
        wp.stats[NO_INSTRUCTION] += wait
        if wp.tracing:
            self._span(wp, "stall:no_instruction", "stall", t, t + wait)

    def _fetched(self, wp: _Warp, t: float, n: float, end: float) -> float:
        """When ``n`` instructions asked for at ``t``, issued by ``end`` if they were there, have issued: no sooner
        than the instruction fetch delivers them, ``fetch_cycles_per_instruction`` each after it delivered the
        previous ones. While the warp stalls the fetch goes on, up to ``fetch_ahead_instructions`` ahead of it
        (measured: validate/micro/run_icache.py --stall-every). The difference is the warp's no_instruction."""
        if self.fetch_cycles_per_instruction <= 0 or n <= 0:
            return end
        arrived = wp.fetch_free = self.fetch.arrival(wp.fetch_free, t, n)
        if arrived > end:
            self._fetch(wp, end, arrived - end)
            return arrived
        return end

    def _issue(self, wp: _Warp, t: float, n: float) -> tuple[float, float]:
        """``n`` instructions through the warp's issue slot from ``t``, as fetched: (start, end) of the issue, its
        wait for the slot charged to not_selected."""
        start, end = wp.slot.book(wp.work, t, n)
        stats = wp.stats
        if start > t:
            stats[NOT_SELECTED] += start - t
        if n > 0:
            stats[SELECTED] += n
        return start, self._fetched(wp, t, n, end)

    def _cause(self, wp: _Warp, reason: int, what: str, cycles: float) -> None:
        """Tally what a stall of ``reason`` waited on (:attr:`ChipResult.stall_causes`), weighted as the stalls are:
        by the real CTAs the warp's CTA stands for (when the CTA completes)."""
        key = (STALLS[reason], what)
        wp.causes[key] = wp.causes.get(key, 0.0) + cycles

    def _deps(self, wp: _Warp, after: tuple[str, ...], now: float) -> float:
        t, reason, on = now, None, ""
        ready = wp.ready
        for d in after:
            r = ready.get(d)
            if r is not None and r > t:
                t, reason, on = r, self.kind_of.get(d, WAIT), d
        if reason is not None:
            if t > now:
                wp.stats[reason] += t - now
                self._cause(wp, reason, self.cause_of.get(on, f"'{on}'"), t - now)
            if wp.tracing:
                self._span(wp, f"stall:{STALLS[reason]}", "stall", now, t)
        return t

    def _atomic_keys(self, works: list[CtaWork]) -> set:
        """The L2 atomic units' servers the representatives' global atomics load: (kind, id), each CTA's own."""
        return {tm.shifted(key, w.index) for ts in self.t for tm in ts.values() for key in tm.atomic_keys()
                for w in works}

    def _memory_side(self, wp: _Warp, op: Mem, tm: _OpTiming, arrive: float, l2_bytes: float, hbm_bytes: float,
                     write_cycles: float, read_cost: float, par: int = 0, j: int = 0) -> Request:
        """The request past the SM: ``l2_bytes`` bytes through the memory-side stages of the op's path (the chip's L2
        and HBM see them ``weight`` times), from ``arrive``. Returns the request, each stage's times filled in."""
        work = wp.cta.work
        req = Request(wp.work, work.weight, l2_bytes, hbm_bytes, write_cycles, read_cost, tm.hbm_cost)
        if tm.atomic is not None:  # a global atomic: its line and slice, loaded by the real CTAs sharing them
            load = tm.atomic[par][j][wp.lw]
            if load:  # the real CTAs it stands for that load its line (slice): itself and the others' share
                req.atomic = tuple((tm.shifted(key, work.index), ns * _sharers(work.weight, tm.sharing[key[0]]))
                                   for key, ns in load)
        walk(wp.cta.sm.memory_side[op.space, op.kind], req, arrive)
        return req

    # --- operations ----------------------------------------------------------------------------------
    def _async_store(self, wp: _Warp, op: Mem, l1tex_cycles: float):
        """The shared-memory write of a cp.async: done when its global load has landed; takes no issue slot."""
        t = self.env.now
        for d in op.after:
            r = wp.ready.get(d)
            if r is not None:
                t = max(t, r)
        _, end = wp.cta.sm.l1tex.write(wp.work, t, l1tex_cycles)
        wp.groups.join(op.group, end)
        if wp.tracing:
            self._span(wp, op.name, "shared_st_async", t, end)

    def _tma_issue(self, wp: _Warp, op: Mem) -> tuple[float, float]:
        """A TMA instruction's issue by one thread, once its operands are ready: (its issue slot's cycle, when the
        thread may go on, ``[tma] issue_cycles`` later)."""
        issue_cycles = wp.cta.sm.tma.issue_cycles
        t = self._deps(wp, op.after, self.env.now)
        start, _ = wp.slot.book(wp.work, t, 1)
        if start > t:
            wp.stats[NOT_SELECTED] += start - t
        wp.stats[SELECTED] += 1
        if issue_cycles > 1:  # [tma] issue_cycles less the selected cycle
            wp.stats[WAIT] += issue_cycles - 1
        return start, start + issue_cycles

    def _tma(self, wp: _Warp, op: Mem, tm: _OpTiming, l2_bytes: float, hbm_bytes: float, seq: int,
             read_cost: float) -> int:
        """One thread issues a TMA copy; the SM's copy engine moves it through L2/HBM into shared memory. Returns
        when the warp may go on."""
        cta = wp.cta
        tma = cta.sm.tma
        start, issue_end = self._tma_issue(wp, op)
        req = Request(wp.work, cta.work.weight, l2_bytes, hbm_bytes, 0.0, read_cost, tm.hbm_cost)
        eng_start = tma.serve(req, start)
        walk(cta.sm.memory_side[op.space, op.kind], req, eng_start)
        from_hbm = misses(wp.exec_count, op.name + "/l2", tm.l2_miss_fraction)
        # the latency of the level it came from, under the load that level had (measured)
        queued = self.mem.hbm.queued(req.hbm_arrive) if from_hbm else self.mem.l2.queued(req.l2_arrive)
        done = tma.respond(req, eng_start, from_hbm, queued)
        if wp.tracing:
            self._span(wp, op.name, "tma", start, done)
        self.mbarriers.arrive(cta.serial, op.arrive, seq, done)
        return math.ceil(issue_end)

    def _tma_store(self, wp: _Warp, op: Mem, tm: _OpTiming, l2_bytes: float, hbm_bytes: float,
                   write_cycles: float) -> int:
        """One thread issues a TMA store: the SM's TMA unit reads the box out of shared memory at its store rate
        (``[tma] store_bytes_per_cycle``, measured), then its bytes take the L2's write path. The warp goes on; the
        store's group (``cp.async``, SASS's SB0 that DEPBAR waits on) completes when the box has been read, and the
        warp's exit waits for its bytes to reach the L2, as a store's do. Returns when the warp may go on."""
        cta = wp.cta
        tma = cta.sm.tma
        start, issue_end = self._tma_issue(wp, op)
        req = Request(wp.work, cta.work.weight, l2_bytes, hbm_bytes, write_cycles, None, tm.hbm_cost)
        read = tma.store(wp.work, issue_end, l2_bytes)
        walk(cta.sm.memory_side[op.space, op.kind], req, read)
        wp.stores_done = max(wp.stores_done, req.l2_done)
        if op.group:
            wp.groups.join(op.group, read)
        if wp.tracing:
            self._span(wp, op.name, "tma", start, read)
        return math.ceil(issue_end)

    def _mem(self, wp: _Warp, op: Mem, it: int, j: int, phase: int) -> int | None:
        """A memory operation: books it on the units it uses and returns when the warp may go on (None: at once)."""
        tm = wp.t[op.name]
        par = pattern_row(tm.period, tm.last, it, self.trips)
        instructions, l1tex_cycles, l2_bytes, hbm_bytes, write_cycles, read_cost, conflict_pace = \
            tm.rows[par][j][wp.lw]
        if instructions == 0:
            return None
        if op.kind == "tma":
            return self._tma(wp, op, tm, l2_bytes, hbm_bytes, self._seq(wp, op, phase, j), read_cost)
        if op.kind == "tma_st":
            return self._tma_store(wp, op, tm, l2_bytes, hbm_bytes, write_cycles)
        if op.async_copy and op.group:
            self._async_store(wp, op, l1tex_cycles)
            return None
        cta = wp.cta
        now = self.env.now
        t = self._deps(wp, op.after, now) if op.after else now
        sm = cta.sm
        queue = sm.lsu.queue(op.space, wp.sub)
        admitted = queue.admit(t, now)  # the LSU queue in front of L1TEX is full: the warp waits to issue
        if admitted > t:
            wp.stats[STALL_INDEX[queue.stall]] += admitted - t
            self._cause(wp, STALL_INDEX[queue.stall], f"{queue.name} queue full ('{op.name}')", admitted - t)
            if wp.tracing:
                self._span(wp, "throttle", "stall", t, admitted)
            t = admitted
        if op.predicated and l1tex_cycles == 0 and not (op.space == "global" and l2_bytes):
            # every lane predicated off: the warp spends its issue slots and the memory pipe sees no work, but the
            # instruction still goes down the LSU path: a dependent instruction waits the load's whole latency
            # (measured: validate/micro/run_predld.py, 44.2 cycles per link off against 45.2 on)
            _, issue_end = self._issue(wp, t, instructions)
            if op.kind in LOADS:  # it reaches the pipe behind the work booked there, then the pipeline's latency
                pipe = sm.l1tex
                wp.ready[op.name] = (issue_end + pipe.issue_to_pipe_cycles + pipe.backlog(issue_end, 1.0)
                                     + tm.latency_hit_cycles)
            return math.ceil(issue_end)
        if op.operand_reuse and instructions > op.operand_reuse:  # never an async store (the IR's check)
            start, issue_end, l1_start, l1_end = self._reused_operands(wp, op.operand_reuse, t, instructions,
                                                                       l1tex_cycles)
        else:
            start = issue_end = t
            if op.async_copy:  # cp.async placed where the warp waits for it: the copy engine writes shared memory
                # as the data lands (when its global loads are done, maybe before the warp waits), not when the
                # warp comes to wait
                landed = [wp.ready[d] for d in op.after if d in wp.ready]
                if landed:
                    start = min(t, max(landed))
            else:
                start, issue_end = self._issue(wp, t, instructions)
            l1_start, l1_end = sm.l1tex.access(wp.work, start, l1tex_cycles)
        if op.stall_cycles and instructions:  # the control codes hold the warp's next issue back (ncu: wait)
            held = start + op.stall_cycles * instructions / op.repeat
            if held > issue_end:
                wp.stats[WAIT] += held - issue_end
                issue_end = held
        if op.space == "shared" and not op.async_copy:  # through the pipe at its own pace, after the warp's last
            l1_start, l1_end = sm.l1tex.paced(start, l1_start, l1_end, l1tex_cycles + instructions * conflict_pace,
                                              wp.shared_end)
            wp.shared_end = l1_end
        queue.enter(l1_start)
        done = l1_end + tm.latency_hit_cycles
        if op.space == "global" and l2_bytes > 0:
            req = self._memory_side(wp, op, tm, l1_end, l2_bytes, hbm_bytes, write_cycles, read_cost, par, j)
            # a load that misses the L1 waits for the L2's answer, one that misses the L2 too for HBM's
            if op.kind == "ld":
                pending = tm.l1_pending_share  # loads that can find their lines on the way: their first execution
                first = wp.cta.first_seen.setdefault((op.name, wp.tile, it, j), l1_end) if pending else l1_end
                if misses(wp.exec_count, op.name, tm.l1_miss_fraction):
                    done = self.mem.l2.respond(req, done)
                    if misses(wp.exec_count, op.name + "/l2", tm.l2_miss_fraction):
                        done = self.mem.hbm.respond(req, done)
                elif pending and misses(wp.exec_count, op.name + "/pending", pending):
                    done = self._pending(wp, op, tm, req, done, l1_end - first)
            elif op.kind == "st":
                wp.stores_done = max(wp.stores_done, req.l2_done)
                if op.atomic and not op.reduction:  # ATOMG: its old value comes back from the L2, where it ran
                    done = self.mem.l2.respond_atomic(req)
        load = op.kind in LOADS or bool(op.atomic) and not op.reduction  # an atomic's old value is a load's data
        if load:
            wp.ready[op.name] = done
        if op.group:
            wp.groups.join(op.group, done if load else l1_end)
        if wp.tracing:
            self._span(wp, op.name, f"{op.space}_{op.kind}", start, done if load else l1_end)
        return math.ceil(issue_end)

    def _pending(self, wp: _Warp, op: Mem, tm: _OpTiming, req: Request, done: float, late: float) -> float:
        """A hit on a line still on its way: the miss that brought it in was this operation's first execution in the
        CTA this iteration (``late`` cycles before this one reached the pipe; another warp's, where every warp of the
        CTA reads the same lines, or the same warp's, where the next instructions read the line the first missed).
        The data comes when that fill lands, from the L2 or HBM as the operation's misses do, or at once if it has
        landed (measured: validate/micro/l1_mix.cu MODE 3, every warp of a CTA reading the same new lines, 31 of 32
        requests counted hits, long_scoreboard 13.7 per issue where one miss in 32 to a private line gives 7.6)."""
        fill = self.mem.l2.respond(req, done)
        if misses(wp.exec_count, op.name + "/pending-l2", tm.l2_miss_fraction):
            fill = self.mem.hbm.respond(req, fill)
        return max(done, fill - late)

    def _reused_operands(self, wp: _Warp, every: int, t: float, n_instr: int,
                         l1cyc: float) -> tuple[float, float, float, float]:
        """A memory operation whose SASS reuses its operand registers every ``every`` instructions: each group
        after the first issues once the L1TEX pipe has taken the group before it (its registers read), the wait
        charged to long_scoreboard. Returns (issue start, issue end, pipe start, pipe end) of the whole."""
        pipe, stats = wp.cta.sm.l1tex, wp.stats
        per = l1cyc / n_instr
        first = first_l1 = None
        done = 0
        while done < n_instr:
            n = min(every, n_instr - done)
            s, issue_end = self._issue(wp, t, n)
            l1_start, l1_end = pipe.access(wp.work, s, per * n)
            if first is None:
                first, first_l1 = s, l1_start
            done += n
            if done < n_instr:
                read = l1_end - per  # the group's last instruction enters the pipe: its operands are read
                t = math.ceil(issue_end)
                if read > t:
                    stats[LONG_SCOREBOARD] += read - t
                    self._cause(wp, LONG_SCOREBOARD, "operands read by the L1TEX pipe", read - t)
                    t = read
        return first, issue_end, first_l1, l1_end

    def _compute_async(self, wp: _Warp, op: Compute, t: float) -> int:
        """An asynchronous compute operation (wgmma), ready at ``t``: issue and go on, the pipe works in the
        background. Returns when the warp may go on."""
        pipe = wp.pipes[op.pipe]
        n = op.count // op.units
        start, issue_end = self._issue(wp, t, n)
        _, pipe_end = pipe.book(wp.work, start, op.count)
        done = pipe_end + self.pipe_latency[op.pipe]
        wp.groups.join(op.group, done)
        wp.ready[op.name] = done
        if wp.tracing:
            self._span(wp, op.name, op.pipe, start, done)
        return math.ceil(issue_end)

    def _quantum(self, wp: _Warp, op: Compute, t: float, n: int, busy: float, issue: float) -> float:
        """``n`` instructions of a compute bundle, ready at ``t``, through the pipe and the issue slot: returns when
        the next can issue, ``busy`` cycles after they start (:func:`_quanta`: a dependent chain waits for the pipe's
        latency)."""
        stats, ledger = wp.stats, wp.work
        p_start, _ = wp.pipes[op.pipe].book(ledger, t, n * op.units)
        if p_start > t:  # held back by a busy pipe: the stall the pipes name (ExecutionPipes.throttle)
            stats[self.throttle_stall[op.pipe]] += p_start - t
        # ``issue``: cycles of the issue slot, one an instruction unless the register file is slower (the scheduler's)
        if issue != n:
            stats[DISPATCH_STALL] += issue - n
        start, _ = wp.slot.book(ledger, p_start, issue)
        if start > p_start:
            stats[NOT_SELECTED] += start - p_start
        if n > 0:
            stats[SELECTED] += n
        if busy > issue:  # a dependent chain waits on a fixed latency (wait), or on the MIO path for shuffles
            stats[SHORT_SCOREBOARD if op.pipe == "shfl" else WAIT] += busy - issue
        busy = max(busy, issue)
        if wp.tracing:
            self._span(wp, op.name, op.pipe, start, start + busy)
        return self._fetched(wp, t, n, start + busy)

    def _barrier(self, wp: _Warp, op: Barrier):
        env, cta = self.env, wp.cta
        now = env.now
        members = op.members or (self.wpc if op.warps is None else len(op.warps))
        ev, count = self.barriers.arrive((cta.serial, "__syncthreads" if op.warps is None else op.name), members)
        if op.arrive:  # bar.arrive: counted, and the warp goes on
            return
        self.waiting[(cta.serial, wp.lw)] = f"barrier '{op.name}' ({count} of {members} warps arrived)"
        yield ev
        self.waiting.pop((cta.serial, wp.lw), None)
        if env.now > now:
            wp.stats[BARRIER] += env.now - now
            self._cause(wp, BARRIER, "__syncthreads" if op.warps is None else f"named barrier '{op.name}'",
                        env.now - now)
        if wp.tracing:
            self._span(wp, "barrier", "barrier", now, env.now)

    def _wait_group(self, wp: _Warp, op: WaitGroup):
        env = self.env
        t = wp.groups.wait(op.queue, op.pending)
        if t > env.now:
            wake = math.ceil(t)
            if wake > env.now:
                # measured (validate/micro/run_stallmap.py): ncu charges cp.async.wait_group to long_scoreboard and
                # wgmma.wait_group to barrier
                wp.stats[BARRIER if op.queue == "wgmma" else LONG_SCOREBOARD] += wake - env.now
                self._cause(wp, BARRIER if op.queue == "wgmma" else LONG_SCOREBOARD, f"{op.queue}.wait_group",
                            wake - env.now)
            if wp.tracing:
                self._span(wp, f"wait:{op.queue}", "stall", env.now, wake)
            yield env.timeout(wake - env.now)

    def _mbar_wait(self, wp: _Warp, op: MbarWait, it: int, j: int):
        env, cta, mb = self.env, wp.cta, self.mbarriers
        seq = self._seq(wp, op, it, j)
        if mb.settled(cta.serial, op.bar, seq):  # never, or completed in skipped iterations
            return
        now = env.now
        ev = mb.completion(cta.serial, op.bar, seq)
        if not ev.triggered:
            self.waiting[(cta.serial, wp.lw)] = (cta.serial, op.bar, seq)
            yield ev
            self.waiting.pop((cta.serial, wp.lw), None)
        if env.now > now:  # an mbarrier try_wait loop: long_scoreboard in ncu (measured, run_stallmap.py)
            wp.stats[LONG_SCOREBOARD] += env.now - now
            self._cause(wp, LONG_SCOREBOARD, self.cause_of.get(f"mbarrier:{op.bar}", f"mbarrier '{op.bar}'"),
                        env.now - now)
            if wp.tracing:
                self._span(wp, f"wait:{op.bar}", "stall", now, env.now)

    def _sync(self, wp: _Warp, op, it: int, j: int):
        """A synchronisation operation. It is an instruction too (BAR.SYNC, SYNCS.*, LDGDEPBAR, DEPBAR, WARPGROUP.*),
        counted as issued, one each as :func:`gpusim.ir.instructions_per_warp` counts it (the kernels' SASS
        remainders are reckoned against that count). It does not book the issue slot: compute bundles hold the
        slot in quanta (``issue_quantum``), behind which a lone barrier would arrive up to a quantum late, where
        the hardware interleaves it within a cycle."""
        env = self.env
        wp.stats[SELECTED] += 1
        if isinstance(op, Barrier):
            yield from self._barrier(wp, op)
        elif isinstance(op, Commit):
            wp.groups.commit(op.queue, env.now)
        elif isinstance(op, WaitGroup):
            yield from self._wait_group(wp, op)
        elif isinstance(op, Arrive):
            self.mbarriers.arrive(wp.cta.serial, op.bar, self._seq(wp, op, it, j), env.now)
        elif isinstance(op, MbarWait):
            yield from self._mbar_wait(wp, op, it, j)
        elif isinstance(op, Fence):
            yield from self._fence(wp)

    def _fence(self, wp: _Warp):
        """``MEMBAR``: the warp waits for its stores' acknowledgement from the L2 and the fence's own round trip
        (ncu: membar)."""
        env = self.env
        now = env.now
        done = max(now + self.fence_cycles, wp.stores_done + self.fence_after_store_cycles)
        wait = math.ceil(done) - now
        if wait > 0:
            wp.stats[MEMBAR] += wait
            self._cause(wp, MEMBAR, "__threadfence: the warp's stores acknowledged by the L2", wait)
            if wp.tracing:
                self._span(wp, "fence", "stall", now, now + wait)
            yield env.timeout(wait)

    def _run(self, wp: _Warp, steps: tuple, it: int, phase_it: int | None = None):
        """Walk ``steps`` (a part of the program, :func:`_unrolled`) in iteration ``it`` of the outer loop, sleeping
        where the warp waits. Memory and compute operations book their work and say when the warp may go on.
        ``phase_it``: the iteration the mbarrier phases (``seq``) are taken at, where not ``it`` (the epilogue's: the
        CTA's trips, see :class:`gpusim.ir.MbarWait`)."""
        env, lw = self.env, wp.lw
        phase = it if phase_it is None else phase_it
        for step, op, j, quanta in steps:
            if step == _MEM:
                wake = self._mem(wp, op, it, j, phase)
                if wake is not None:
                    now = env.now
                    if wake > now:
                        yield env.timeout(wake - now)
            elif step == _COMPUTE:
                if (op.when is None or op.when(lw, j)) and (op.warps is None or lw in op.warps):
                    t = self._deps(wp, op.after, env.now) if op.after else env.now
                    if op.group:
                        wake = self._compute_async(wp, op, t)
                        if wake > env.now:
                            yield env.timeout(wake - env.now)
                        continue
                    for n, busy, issue in quanta:  # in quanta, so that other ready warps interleave
                        t = self._quantum(wp, op, t, n, busy, issue)
                        wake = math.ceil(t)
                        now = env.now
                        if wake > now:
                            yield env.timeout(wake - now)
                    wp.ready[op.name] = t + self.pipe_latency[op.pipe]
            elif op.warps is None or lw in op.warps:
                yield from self._sync(wp, op, phase, j)

    # --- the outer loop and its fast-forward ---------------------------------------------------------
    @staticmethod
    def _steady(m: list, n: int = WINDOW_ITERATIONS, warm: int = WARM_ITERATIONS, spike: float | None = None) -> bool:
        """Whether the last two windows of ``n`` marks (iterations or tiles) ran at the same period, and, with
        ``spike``, none of their iterations took more than ``spike`` times their median: two windows can agree by
        chance when a one-off stall straddles them (sgemm_vectorized 4096^3: 3,776-cycle iterations, then 6,362 and
        5,363 in one window and 7,228 in the next give 4,472 and 4,407 cycles an iteration, against 3,776-3,838
        around them)."""
        if len(m) < warm + 2 * n:
            return False
        t0, t1, t2 = m[-1 - 2 * n][0], m[-1 - n][0], m[-1][0]
        p1, p2 = (t1 - t0) / n, (t2 - t1) / n
        if not (p2 > 0 and abs(p2 - p1) <= STEADY_TOLERANCE * p2):
            return False
        if spike is None:
            return True
        d = [b[0] - a[0] for a, b in zip(m[-1 - 2 * n:-1], m[-2 * n:], strict=True)]
        return max(d) <= spike * float(np.median(d))

    def _mark(self, wp: _Warp) -> tuple[float, list, dict, dict]:
        """What the fast-forward extrapolates from, at the end of an iteration or a tile: the time, the warp's
        stall counts, its work per server and its stall causes so far."""
        return self.env.now, list(wp.stats), dict(wp.work), dict(wp.causes)

    def _skip(self, wp: _Warp, ls: _LoopState, extra: int, m: list, n: int, warm: int, members: int):
        """Skip ``extra`` iterations (or tiles). Each warp measured its period and its work per unit over the
        last window of marks ``m``; when the last of the ``members`` warps of the CTA gets here, the CTA's work
        over the skipped stretch is booked on every unit at once as a background reservation (stretched for all
        warps alike where a unit has less room), and every warp sleeps its own period times ``extra`` (times the
        stretch) from its arrival."""
        env = self.env
        # the period over both windows the steadiness test compared (twice the marks, half the noise of one
        # window's), as far as the marks past the warm-up go
        # (a CTA that skips with others of its SM: their common period, each warp's scaled as its CTA's; a young
        # one's, its warps' work per iteration over the iterations past its warm-up)
        common = ls.group_period  # None for a persistent CTA's tiles and a CTA that skips alone
        n = max(1 if common else n, min(2 * n, len(m) - 1 - warm))
        (ta, sa, wa, ca), (tb, sb, wb, cb) = m[-1 - n], m[-1]
        period = (tb - ta) / n
        if common:
            period = period * common / ls.own_period if ls.own_period else common
        work = {srv: (w - wa.get(srv, 0.0)) / n * extra for srv, w in wb.items()}
        stats = wp.stats
        for i, (a, b) in enumerate(zip(sa, sb, strict=True)):
            stats[i] += (b - a) / n * extra
        for key, c in cb.items():  # what the skipped stretch's stalls waited on, as the window's did
            if c > ca.get(key, 0.0):
                wp.causes[key] = wp.causes.get(key, 0.0) + (c - ca.get(key, 0.0)) / n * extra
        if self.first_period == 0.0:
            self.first_period = period
        ls.skips.append((wp.lw, env.now, extra * period, work))
        if len(ls.skips) < members:
            yield ls.event
            stretch = ls.event.value
        else:
            stretch = self._book_skip(ls)
            ls.event.succeed(stretch)
        arrived, length = next((a, d) for lw, a, d, _ in ls.skips if lw == wp.lw)
        # the skipped work goes into the warp's ledger as simulated work would: a persistent CTA's tile marks (and
        # the CTA's booked work, which the grid fast-forward extrapolates) count the skipped iterations' work too
        for srv, w in work.items():
            if w > 0:
                wp.work[srv] = wp.work.get(srv, 0.0) + w
        if stretch > 1.0 and length * (stretch - 1.0) > 0:
            wp.stats[LONG_SCOREBOARD] += length * (stretch - 1.0)
        wake = math.ceil(arrived + length * stretch)
        until = wp.cta.sm.skipped_until
        until[wp.cta.serial] = max(until.get(wp.cta.serial, 0.0), wake)
        # what was in flight at the skip (the last simulated iteration's loads, math, stores, async groups, fetched
        # instructions) is in flight at its end, as the last skipped iteration's would be: the code after the skip
        # waits for it (a tile's epilogue for the last wgmma, the warp's exit for its stores to drain)
        by = wake - arrived
        wp.ready = {name: r + by if r > arrived else r for name, r in wp.ready.items()}
        wp.groups.shift(arrived, by)
        if wp.stores_done > arrived:
            wp.stores_done += by
        if wp.fetch_free > arrived:
            wp.fetch_free += by
        if wp.shared_end > arrived:
            wp.shared_end += by
        if wp.tracing:  # the timeline shows the stretch as extrapolated, not as a warp with nothing to do
            self._span(wp, f"{extra} iterations extrapolated", EXTRAPOLATED, arrived, wake)
        if wake > env.now:
            yield env.timeout(wake - env.now)

    def _book_skip(self, ls: _LoopState) -> float:
        """Reserve the CTA's skipped work from now to its warps' latest wake-up; return the stretch (each warp puts
        its own share into its ledger)."""
        now = self.env.now
        end = max(a + d for _, a, d, _ in ls.skips)
        span = max(end - now, 1.0)
        total: dict[RateServer, float] = {}
        for *_, work in ls.skips:
            for srv, w in work.items():
                if w > 0:
                    total[srv] = total.get(srv, 0.0) + w
        stretch = 1.0
        for srv, w in total.items():
            took = srv.reserve(now, w, span) / span
            if srv not in self.atomic_servers:  # a queue at the L2's atomic units holds back no warp that does not
                stretch = max(stretch, took)  # wait for it (RED), and one that does waited in the measured period
        return stretch

    @staticmethod
    def _clean(cta: _Cta, since: float) -> bool:
        """Whether no other CTA on ``cta``'s SM was in a skipped stretch after ``since``: its iterations since then
        ran beside the others' iterations, as the steady state does, not beside a background reservation of them
        (an even load that the CTA meets otherwise than their bursts: fa2's CTAs ran 6% short beside one)."""
        return all(end <= since for serial, end in cta.sm.skipped_until.items() if serial != cta.serial)

    @staticmethod
    def _neighbours_skipped(cta: _Cta) -> list[float]:
        """When the skipped stretches of the other CTAs on ``cta``'s SM end."""
        return [end for serial, end in cta.sm.skipped_until.items() if serial != cta.serial]

    @staticmethod
    def _period(m: list, n: int) -> float:
        """Cycles an iteration over the last ``n`` of the marks ``m`` (0 for none)."""
        return (m[-1][0] - m[-1 - n][0]) / n if n > 0 else 0.0

    def _cleanable(self, cta: _Cta, m: list, it: int, trips: int, first: int = 0) -> bool:
        """Whether a window clean of the other CTAs' skipped stretches now on ``cta``'s SM can still be had before
        the loop is extrapolated anyway (MAX_LOOP_ITERATIONS) or ends, at its period over the marks ``m``. When it
        cannot, the window at that forced skip would run beside the same background reservations as the steady
        window now: waiting would only cost time (sgemm_1d_blocktiling BM=32,BN=32,TM=4 4096^3: eight CTAs an SM,
        one of them nearly always in a skipped stretch; 79 of its 81 simulated CTAs ran to the forced skip at 64
        iterations once joining asked for a steady window, 3088 iterations in detail without this test and 1498
        with it, 1527 before the loop windows had to be clean)."""
        others = ChipModel._neighbours_skipped(cta)
        if not others:
            return True
        n = 2 * WINDOW_ITERATIONS
        period = ChipModel._period(m, n)
        if period <= 0:
            return True
        clean_from = it + math.ceil((max(others) - self.env.now) / period) + n
        return clean_from <= min(first + MAX_LOOP_ITERATIONS, trips - 1)

    def _filling(self, sm: SmUnit) -> bool:
        """Whether a CTA will soon join those resident on ``sm``: a slot is free and CTAs wait in the queue, one of them
        for this SM (a partial wave's go to the SMs in turn: where the only one left goes to another SM, none comes;
        sgemm_2d_blocktiling BM=64 4096^3's front-end build waited for it, and its window took in that CTA's start on
        the other SM). A CTA that skipped alone would run its reservation at its own pace, and the one that comes
        would get what is left of the SM, where the two share it as equals (sgemm_bank_linearized 4096^3, the last
        wave: 2,656 cycles an iteration alone, 4,599 for the newcomer beside the reservation, 3,840 each when both run
        in detail: 3.5% short of the run without fast-forward)."""
        if not self.queue or len(sm.resident) >= self.ctas_per_sm:
            return False
        if self.queue[0].weight >= self.wave_weight:
            return True
        before = sum(s.partial_works < sm.partial_works for s in self.sms)  # the SMs whose turn comes first
        return len(self.queue) > before

    def _skip_end(self, cta: _Cta, m: list, it: int, skip_after: int, trips: int) -> int | None:
        """Where a skip decided at iteration ``it`` (to skip after ``skip_after``) ends: at the end of the loop
        (None) when no other CTA on ``cta``'s SM is in a skipped stretch; else the iteration by which the latest of
        those stretches ends, at the period of the marks ``m``: the window ran beside their background reservations,
        and its period holds only as long as they do (sgemm_bank_padded's front-end build 4096^3: the last wave's
        second CTA measured 10,784 cycles an iteration beside its neighbour's reservation, where the two share the SM
        at about 5,800 each, and extrapolated that over 496 iterations, far past the reservation's end: 22.8% over
        the run without fast-forward, 2.2% with the skip cut there). 0: too close to be worth a skip, so the loop
        goes on in detail."""
        until = max(ChipModel._neighbours_skipped(cta), default=0.0)
        if until <= self.env.now:
            return None
        period = ChipModel._period(m, min(2 * WINDOW_ITERATIONS, len(m) - 1))
        if period <= 0:
            return None
        end = it + int((until - self.env.now) // period)
        if end >= trips:
            return None
        return end if end - skip_after >= WINDOW_ITERATIONS else 0

    def _join(self, cta: _Cta, marks: list) -> None:
        """``cta`` skips the rest of its loop: the other CTAs on its SM that have run their warm-up and two more
        iterations beside this one's iterations (clean) skip theirs at their next iteration too (left alone, each
        would measure its window beside the skipped CTA's background reservation: fa2 8,16,2048,128 3.1% short).
        CTAs with the same trips skip at one period, the median of the periods of those that ran two full windows
        (the deciding one and any other): without fast-forward, CTAs resident together lock into one period within
        a few iterations (sgemm_2d_blocktiling BM=64 4096^3: 3,742-3,891 cycles an iteration over a wave's eight),
        where their twelve-iteration windows differ by up to 10% by chance (3,408-3,768) and the wave ends with the
        slowest; a CTA whose window took in a one-off stall (40k cycles) would set the mean. A younger CTA (fewer
        than two full windows), or one whose two windows differ (a 14k-cycle iteration among 2.1k ones), takes the
        common period, not its own: one still slowing from 2.9k to 7.3k cycles an iteration made
        sgemm_2d_blocktiling BM=64 4096^3 4.8% longer than its run without fast-forward. One whose windows ran
        beside a skipped stretch does not join."""
        n = 2 * WINDOW_ITERATIONS
        group = [cta.current]
        for other in cta.sm.resident.values():
            ls = other.current
            if other is cta or ls is None or ls.skip_after is not None or ls.started + 1 >= other.work.trips:
                continue
            ends = ls.began[1:]  # when each iteration it completed ended (the next one began)
            full = len(ends) >= WARM_ITERATIONS + n and self._clean(other, ends[-1 - n])
            young = (not full and other.work.trips == cta.work.trips and len(ends) >= WARM_ITERATIONS + 2
                     and self._clean(other, ends[WARM_ITERATIONS]))
            if full or young:
                ls.skip_after = ls.started + 1
                ls.window_end = self.env.now
                if other.work.trips == cta.work.trips:
                    group.append(ls)
                    if full and self._steady([(t,) for t in ends], spike=STEADY_SPIKE):
                        ls.own_period = (ends[-1] - ends[-1 - n]) / n
        if len(group) > 1:  # the deciding CTA's period: its deciding warp's ``marks``, over the windows it tested
            k = min(n, len(marks) - 1)
            group[0].own_period = (marks[-1][0] - marks[-1 - k][0]) / k
            common = float(np.median([ls.own_period for ls in group if ls.own_period]))
            for ls in group:
                ls.group_period = common

    @staticmethod
    def _window(wp: _Warp, ls: _LoopState) -> list:
        """The warp's marks its skip extrapolates from: up to the loop's window end, where it has one and a window
        of marks before it."""
        if ls.window_end is None:
            return wp.marks
        marks = [m for m in wp.marks if m[0] <= ls.window_end]
        return marks if len(marks) > WINDOW_ITERATIONS else wp.marks

    def _loop(self, wp: _Warp, tile: int):
        k, cta = self.k, wp.cta
        stretch = 0  # stretches of detailed iterations so far (a skip cut short starts another)
        detailed_before = 0  # iterations simulated in detail in the stretches before this one
        ls = cta.loop(tile, self.env)
        trips = cta.work.trips
        cta.current = ls
        it = 0
        while it < trips:
            ls.started = max(ls.started, it)
            if it - ls.first == len(ls.began):
                ls.began.append(self.env.now)
            yield from self._run(wp, self.body, it)
            wp.marks.append(self._mark(wp))
            it += 1
            if it >= trips:
                break
            # the first warp to get here decides for the whole CTA, at an iteration no warp has started yet; the
            # windows count only while every CTA on the SM ran its iterations in detail
            if ls.skip_after is None and "loop" in self.may_skip:
                # beside another CTA's skipped stretch only where no clean window can come before the forced skip
                steady = self._steady(wp.marks, spike=STEADY_SPIKE) and (
                    self._clean(cta, wp.marks[-1 - 2 * WINDOW_ITERATIONS][0])
                    or not self._cleanable(cta, wp.marks, it, trips, ls.first))
                filling = self._filling(cta.sm)
                if filling:
                    ls.settled = it
                forced = not steady and it - ls.settled >= MAX_LOOP_ITERATIONS and len(wp.marks) > WINDOW_ITERATIONS
                # not while a CTA about to join it on the SM would change its period
                if steady and not filling or forced:
                    after = max(it, ls.started + 1)
                    end = self._skip_end(cta, wp.marks, it, after, trips)
                    if end != 0:
                        ls.skip_after, ls.skip_end = after, end
                        cta.steady &= steady
                        if end is None:  # those that join skip to the end: not beside a stretch that ends before
                            self._join(cta, wp.marks)
            if ls.skip_after is not None and it >= ls.skip_after:
                self.loop_ff = True
                self.max_iterations = max(self.max_iterations, detailed_before + it - ls.first)
                if ls.skip_end is not None:  # up to where the stretch beside it ends, then on in detail
                    self._mbar_skipped(cta, it, ls.skip_end - 1, tile)
                    yield from self._skip(wp, ls, ls.skip_end - it, self._window(wp, ls), WINDOW_ITERATIONS,
                                          WARM_ITERATIONS, cta.loop_warps)
                    detailed_before += it - ls.first
                    it = ls.skip_end
                    stretch += 1
                    ls = cta.loop(tile, self.env, stretch, it)
                    cta.current = ls
                    wp.marks.clear()
                    continue
                if self.ragged_last and trips == k.loop.trips and trips - it > 1:
                    # skip to the last iteration and run it: its pattern differs (a ragged last tile)
                    self._mbar_skipped(cta, it, trips - 2, tile)
                    yield from self._skip(wp, ls, trips - 1 - it, self._window(wp, ls), WINDOW_ITERATIONS,
                                          WARM_ITERATIONS, cta.loop_warps)
                    it = trips - 1
                    yield from self._run(wp, self.body, it)
                    wp.marks.append(self._mark(wp))
                    break
                # the skipped iterations' phases are settled for what waits on them later (the next tile's ring)
                self._mbar_skipped(cta, it, trips - 1, tile)
                yield from self._skip(wp, ls, trips - it, self._window(wp, ls), WINDOW_ITERATIONS, WARM_ITERATIONS,
                                      cta.loop_warps)
                break
        self.max_iterations = max(self.max_iterations, detailed_before + min(it, trips) - ls.first)

    def _mbar_skipped(self, cta: _Cta, first: int, last: int, tile: int) -> None:
        """The mbarrier phases whose arrivals iterations ``first`` to ``last`` of ``tile`` would have made: the
        fast-forward skips them, so waits on them (later in the loop, or the next tile's ring) return at once."""
        for op, bar, inner in _loop_arrivals(self.k):
            base = tile * self.phases_per_tile.get(bar, 0)
            lo = min(op.seq(first, j) for j in range(inner)) + base
            hi = max(op.seq(last, j) for j in range(inner)) + base
            self.mbarriers.complete_skipped(cta.serial, bar, lo, hi)

    def _seq(self, wp: _Warp, op, it: int, j: int) -> int:
        """The mbarrier phase of ``op`` in iteration (``it``, ``j``) of the warp's tile. A persistent CTA's tiles
        go on counting phases where the last tile stopped, as the kernel's phase bits do: without that, a later
        tile's waits would find its phases completed by the first tile."""
        return op.seq(it, j) + wp.tile * self.phases_per_tile.get(_mbarrier_of(op), 0)

    def _warp(self, cta: _Cta, lw: int, tiles: int, done: simpy.Event, left: list):
        env, k = self.env, self.k
        # the SM numbers its warp slots CTA after CTA and deals them to the sub-partitions in turn: a CTA of two
        # warps in slot 1 uses sub-partitions 2 and 3, not 0 and 1 again
        wp = _Warp(lw, cta, (cta.slot * self.wpc + lw) % self.subpartitions, cta.traced)
        wp.t = self.t[self.class_of(cta.work.tiles[0] if cta.work.tiles else cta.work.index)]
        cta.start[lw] = env.now
        self.unfinished.add((cta.serial, lw))
        # a persistent CTA's tiles fast-forward like a loop once their durations are steady (decided for the whole
        # CTA by the first warp to finish a tile)
        tile_marks = [self._mark(wp)]
        ts = cta.loop(-1, env)  # the tiles' state (-1: no loop's)
        for tile in range(0 if self.tile_idle[lw] else tiles):
            ts.started = max(ts.started, tile)
            wp.tile = tile
            if tile:  # the next tile: fresh per-tile state, same warp
                wp.ready.clear()
                wp.marks.clear()
                wp.t = self.t[self.class_of(cta.work.tiles[tile])]
            yield from self._run(wp, self.prologue, 0)
            if k.loop is not None and not self.loop_idle[lw]:
                yield from self._loop(wp, tile)
            yield from self._run(wp, self.epilogue, 0, cta.work.trips if k.loop is not None else 0)
            if tiles == 1:
                break
            tile_marks.append(self._mark(wp))
            done_tiles = tile + 1
            if done_tiles >= tiles:
                break
            if ts.skip_after is None and "tile" in self.may_skip and self._steady(tile_marks, TILE_WINDOW, TILE_WARM):
                ts.skip_after = max(done_tiles, ts.started + 1)  # a tile no warp has begun
            if ts.skip_after is not None and done_tiles >= ts.skip_after:
                self.loop_ff = True
                yield from self._skip(wp, ts, tiles - done_tiles, tile_marks, TILE_WINDOW, TILE_WARM,
                                      self.wpc - sum(self.tile_idle))
                break
        if wp.stores_done > env.now:  # the warp retires once its stores have reached L2
            wait = math.ceil(wp.stores_done) - env.now
            if wait > 0:
                wp.stats[DRAIN] += wait
                self._cause(wp, DRAIN, "stores draining to L2 at exit", wait)
            if wp.tracing:
                self._span(wp, "drain", "stall", env.now, env.now + wait)
            yield env.timeout(wait)
        cta.end[lw] = env.now
        for srv, w in wp.work.items():
            cta.booked[srv] = cta.booked.get(srv, 0.0) + w
        for key, c in wp.causes.items():
            cta.causes[key] = cta.causes.get(key, 0.0) + c
        self.unfinished.discard((cta.serial, lw))
        left[0] -= 1
        if left[0] == 0:
            done.succeed()

    # --- CTAs, slots and the grid fast-forward ---------------------------------------------------------
    def _run_cta(self, work: CtaWork, sm: SmUnit, slot: int):
        env = self.env
        serial = self.serial
        self.serial += 1
        cta = _Cta(serial, work, sm, slot, self.wpc)
        # the timeline shows SM 0's first CTA in each slot (the CTAs resident together at the start)
        cta.traced = self.tracing and sm.index == 0 and slot not in self.traced_slots
        if cta.traced:
            self.traced_slots.add(slot)
        cta.loop_warps = self.wpc - sum(self.loop_idle)
        cta.began = env.now
        sm.resident[serial] = cta
        if self.cta_launch_cycles:
            yield env.timeout(self.cta_launch_cycles)
        done = env.event()
        left = [self.wpc]
        # a persistent CTA runs its tiles (none: it exits at once, as the twin's CTAs beyond the tile count do)
        tiles = len(work.tiles) if self.k.persistent_ctas else 1
        for lw in range(self.wpc):
            env.process(self._warp(cta, lw, tiles, done, left))
        yield done
        stats = np.array(cta.stats).sum(axis=0)
        self.stalls += stats * work.weight
        self.warp_cycles += float((cta.end - cta.start).sum()) * work.weight
        self.loop_steady &= cta.steady
        self.done_periods.append(env.now - self.slot_end.get((sm.index, slot), 0.0))
        self.slot_end[sm.index, slot] = env.now
        self.done_weight.append(work.weight)
        self.done_shape.append((work.trips, len(work.tiles)))
        self.done_stats.append((stats, float((cta.end - cta.start).sum())))
        self.done_work.append(cta.work_vector(self._index))
        self.done_causes.append(cta.causes)
        self._add_causes(cta.causes, work.weight)
        self.mbarriers.forget(serial)
        del sm.resident[serial]
        # a skipped stretch that ended before every resident CTA began overlaps none of their windows
        floor = min((c.began for c in sm.resident.values()), default=env.now)
        sm.skipped_until = {s: end for s, end in sm.skipped_until.items() if end > floor}
        for s in sm.servers():
            s.prune(env.now)

    def _slot(self, sm: SmUnit, slot: int):
        env = self.env
        while self.queue:
            if self.queue[0].weight < self.wave_weight and sm.partial_works > min(s.partial_works for s in self.sms):
                # a partial wave's CTAs (the tail) go to the SMs in turn: each representative stands for as many
                # real SMs, over which the CTA scheduler spreads them; taken by whichever slot frees first, they
                # piled onto the SM whose CTAs happened to end first (the same grid 8% slower or faster with a
                # fast-forward that moved those ends by 1%)
                if self.partial_turn is None:
                    self.partial_turn = env.event()
                yield self.partial_turn
                continue
            work = self.queue.popleft()
            if work.weight < self.wave_weight:
                sm.partial_works += 1
                if self.partial_turn is not None:
                    turn, self.partial_turn = self.partial_turn, None
                    turn.succeed()
            self._grid_fast_forward()
            launch = max(env.now, self.next_launch)
            self.next_launch = launch + self.cta_dispatch_interval_cycles * work.weight
            if launch > env.now:
                yield env.timeout(math.ceil(launch - env.now))
            sm.occupy(env.now, work.weight, self.sm_weight)
            yield from self._run_cta(work, sm, slot)
            sm.occupy(env.now, -work.weight, self.sm_weight)

    def _grid_fast_forward(self) -> None:
        """Once the slots' periods (a CTA's dispatch, launch and run) are steady, skip the middle of the queue (keep
        the tail's last rounds). Every slot is busy until the tail, so CTAs complete at slots / mean period per
        cycle."""
        slots = len(self.sms) * self.ctas_per_sm
        window = (GRID_WINDOW_ROUNDS if self.k.loop is not None else GRID_WINDOW_ROUNDS_NO_LOOP) * slots
        keep = GRID_TAIL_ROUNDS * slots
        periods = self.done_periods
        if "grid" not in self.may_skip or len(self.queue) <= keep or len(periods) < 4 * window:
            return
        # three windows in a row agree (two can agree by chance while the slots' phases still settle)
        d0, d1, d2 = (sum(periods[-(i + 1) * window:len(periods) - i * window]) / window for i in (2, 1, 0))
        if max(d0, d1, d2) - min(d0, d1, d2) > STEADY_TOLERANCE * d2:
            return
        skip = (len(self.queue) - keep) // slots * slots  # whole rounds: every slot skips as many CTAs
        if skip <= 0:
            return
        # the skipped CTAs are charged the window's mean period and work: only when they are alike on average
        # (as many trips and tiles per CTA within the steady tolerance); causal attention's CTAs may lengthen as
        # the queue goes on, however alike two neighbours are
        mean_w = np.mean([t * max(n, 1) for t, n in self.done_shape[-window:]])
        mean_q = np.mean([w.trips * max(len(w.tiles), 1) for w in itertools.islice(self.queue, 0, skip)])
        if abs(mean_q - mean_w) > STEADY_TOLERANCE * mean_w:
            return
        works = [self.queue.popleft() for _ in range(skip)]
        # each skipped CTA books on the units what a CTA of the window booked (its requests and its skipped
        # loop); the stretch lasts as long as the CTA rate says, and never less than its busiest unit needs
        busy = sum(self.done_work[-window:]) * (skip / window) / self._rates
        # the skipped CTAs go to every slot alike: an SM unit's share is its peers' mean, whichever SMs the window's
        # CTAs ran on (the last ``window`` CTAs to complete, three of four on one SM at times: sgemm_smem_blocking
        # 4096^3 ran 22% long, its busiest L1TEX pipe reckoned with 1.5 times its CTAs)
        for peers in self._sm_peers:
            busy[peers] = busy[peers].mean()
        length = max(skip * d2 / slots, float(busy.max()))
        self.skip_busy += busy
        self.skip_time += length
        self.skip_weight += sum(w.weight for w in works)
        recent = self.done_stats[-window:]
        wts = self.done_weight[-window:]
        scale = sum(w.weight for w in works) / max(sum(wts), 1e-12)
        self.skip_stats += sum(st * wt for (st, _), wt in zip(recent, wts, strict=True)) * scale
        self.skip_warp_cycles += sum(c * wt for (_, c), wt in zip(recent, wts, strict=True)) * scale
        for causes, wt in zip(self.done_causes[-window:], wts, strict=True):
            self._add_causes(causes, wt * scale)

    def _add_causes(self, causes: dict, weight: float) -> None:
        """Add a CTA's stall causes, each cycle standing for ``weight`` real ones (:attr:`ChipResult.stall_causes`)."""
        for key, c in causes.items():
            self.stall_causes[key] = self.stall_causes.get(key, 0.0) + c * weight

    # --- driver --------------------------------------------------------------------------------------
    def run(self) -> ChipResult:
        env = self.env
        # the CTA scheduler fills the SMs breadth first: a tail wave or a grid smaller than the chip has one CTA per
        # SM before any SM gets a second
        for slot in range(self.ctas_per_sm):
            for sm in self.sms:
                env.process(self._slot(sm, slot))
        env.run()
        if self.unfinished:
            self._deadlock()
        end = max([env.now, *(s.last_end for _, s, _ in self.mem.reported())])
        stalls = self.stalls + self.skip_stats
        totals = {s: float(stalls[i]) for i, s in enumerate(STALLS)}
        sm_active = sum(sm.active_cycles for sm in self.sms)
        if self.skip_time:  # every SM busy during the skipped stretch
            sm_active += self.skip_time * len(self.sms) * self.sm_weight
        return ChipResult(cycles=end + self.skip_time, warp_cycles=self.warp_cycles + self.skip_warp_cycles,
                          sm_active_cycles=sm_active, stalls=totals, issue_cycles=totals["selected"],
                          busy=self._busy(), instances=self._instances(),
                          fast_forward=self.loop_ff or self.skip_time > 0, loop_steady=self.loop_steady,
                          grid_skipped_ctas=self.skip_weight, simulated_iterations=self.max_iterations,
                          period=self.first_period, trace=self.trace,
                          stall_causes=dict(sorted(self.stall_causes.items())))

    def _instances(self) -> dict[str, int]:
        """How many of each unit the chip has, from what the units report: the chip-wide units' shares, and one
        representative SM's units times the SMs of the chip."""
        n = round(len(self.sms) * self.sm_weight)
        chip: dict[str, float] = {}
        for name, _, share in self.mem.reported():
            chip[name] = chip.get(name, 0.0) + share
        per_sm: dict[str, float] = {}
        for name, _, share in self.sms[0].reported():
            per_sm[name] = per_sm.get(name, 0.0) + share
        return {name: round(v) for name, v in chip.items()} | {name: round(v) * n for name, v in per_sm.items()}

    def _busy(self) -> dict[str, float]:
        """Busy cycles of every unit over the whole chip: the representatives' own units stand for
        ``sm_weight`` SMs each, the chip-wide ones are whole; the grid fast-forward's skipped stretch adds the
        busy time its measured window showed."""
        out: dict[str, float] = {}
        for key, s, mult in self._reported:
            skipped = self.skip_busy[self._index[s]]
            out[key] = out.get(key, 0.0) + (s.busy + skipped) * mult
        return out

    def _deadlock(self) -> None:
        seen: dict[str, tuple] = {}
        for key in sorted(self.unfinished):
            what = self.waiting.get(key, "an unfinished operation")
            if isinstance(what, tuple):
                what = self.mbarriers.describe(*what)
            seen.setdefault(what, key)
        waits = "; ".join(f"warp {lw} of CTA {serial} on {what}" for what, (serial, lw) in list(seen.items())[:3])
        raise DeadlockError(f"{self.k.name}: deadlock, {len(self.unfinished)} warps wait forever: {waits}")


def _sharers(weight: float, share: float) -> float:
    """Of the ``weight`` real CTAs a representative stands for, those whose request loads its line (slice): itself
    and, of the others, the ``share`` that load the same line (a part of one CTA for a tail's)."""
    return weight if weight < 1.0 else 1.0 + (weight - 1.0) * share


def _unrolled(ops, pipes: ExecutionPipes, slots: IssueSlots, j: int = 0) -> tuple:
    """``ops`` in the order a warp walks them, inner loops unrolled: (step kind, operation, inner-loop iteration,
    a compute bundle's quanta, :meth:`ExecutionPipes.quanta`, each with its issue cycles)."""
    out = []
    for op in ops:
        if isinstance(op, Loop):
            for jj in range(op.trips):
                out += _unrolled(op.body, pipes, slots, jj)
        elif isinstance(op, Compute):
            quanta = pipes.quanta(op.pipe, op.count, op.ilp, op.stall_cycles, slots.quantum_instructions,
                                  slots.instructions_per_cycle, op.units, op.waits_for_results)
            # each quantum with its cycles of the issue slot (IssueSlots.dispatch_cycles: register reads)
            out.append((_COMPUTE, op, j, tuple((n, busy, slots.dispatch_cycles(n, op.register_reads))
                                               for n, busy in quanta)))
        else:
            out.append((_MEM if isinstance(op, Mem) else _SYNC, op, j, ()))
    return tuple(out)


def _mbarrier_of(op) -> str:
    """The mbarrier an Arrive or MbarWait names, or that a TMA copy arrives on."""
    return op.arrive if isinstance(op, Mem) else op.bar


def _loop_arrivals(kernel: Kernel):
    """The outer loop's mbarrier arrivals: (operation, its mbarrier, the trips of the inner loop it sits in)."""
    def visit(ops, inner):
        for op in ops:
            if isinstance(op, Loop):
                yield from visit(op.body, op.trips)
            elif isinstance(op, Arrive) or (isinstance(op, Mem) and op.arrive):
                yield op, _mbarrier_of(op), inner
    if kernel.loop is not None:
        yield from visit(kernel.loop.body, 1)


def _phases_per_tile(kernel: Kernel) -> dict[str, int]:
    """Per mbarrier, the phases one tile's outer loop completes (its arrivals' highest sequence number, plus one)."""
    out: dict[str, int] = {}
    if kernel.loop is None or not kernel.persistent_ctas:
        return out
    last = kernel.loop.trips - 1
    for op, bar, inner in _loop_arrivals(kernel):
        out[bar] = max(out.get(bar, 0), max(op.seq(last, j) for j in range(inner)) + 1)
    return out


def _has_work(ops, timings: dict[str, MemTiming], lw: int) -> bool:
    """Whether local warp ``lw`` executes anything in ``ops``."""
    def has(ops) -> bool:
        for op in ops:
            if isinstance(op, Loop):
                if has(op.body):
                    return True
            elif isinstance(op, Mem):
                if int(timings[op.name].instructions[..., lw].sum()) > 0:
                    return True
            elif op.warps is None or lw in op.warps:
                return True
        return False

    return has(ops)
