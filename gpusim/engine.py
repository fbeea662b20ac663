"""Discrete-event model of one SM running its resident CTAs (SimPy, integer cycles).

Each warp is a SimPy process that walks the kernel's program. Shared hardware is a set of FIFO servers
(:class:`Server`), each tracking when it is next free: the issue slot and the FP32/INT32 pipes of every
sub-partition, the SM's L1TEX pipe (lines for global accesses, wavefronts for shared ones), and the SM's
shares of L2 and HBM bandwidth (chip bandwidth over the active SMs). A warp computes when it can go on
and sleeps until then, so one operation costs one event. Every cycle a warp spends not issuing is
charged to one of Nsight Compute's stall reasons.

The outer loop runs for a warm-up and a measurement window; when it has more trips, the rest is
extrapolated from the measured steady-state period (the fast-forward; ``SmResult.fast_forward``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import simpy

from gpusim.ir import LOADS, Barrier, Compute, Kernel, Loop, Mem

STALLS = ("long_scoreboard", "short_scoreboard", "lg_throttle", "mio_throttle", "barrier",
          "math_pipe_throttle", "wait", "not_selected", "selected")
WARM_ITERATIONS = 4
MEASURE_ITERATIONS = 12
ISSUE_QUANTUM_INSTRUCTIONS = 32  # a compute bundle yields the issue slot after this many instructions


class Server:
    """A FIFO server with a fixed rate: work queued behind ``next_free``."""

    __slots__ = ("busy", "next_free")

    def __init__(self) -> None:
        self.next_free = 0.0
        self.busy = 0.0

    def serve(self, arrive: float, work: float) -> tuple[float, float]:
        start = max(arrive, self.next_free)
        self.next_free = start + work
        self.busy += work
        return start, self.next_free


@dataclass(frozen=True)
class MemTiming:
    """Per-operation numbers the model needs beyond the pattern counts."""

    l1tex_cycles: np.ndarray  # (period, inner, warps)
    instructions: np.ndarray  # (period, inner, warps)
    period: int
    l2_bytes: np.ndarray  # (period, inner, warps) expected bytes sent to L2 per execution
    hbm_bytes: np.ndarray  # expected bytes read from HBM per execution
    l1_miss_fraction: float  # executions that miss L1 (request level)
    l2_miss_fraction: float  # of those, executions that miss L2
    latency_hit_cycles: int


@dataclass(frozen=True)
class SmParams:
    """What the SM model needs from the config, resolved to cycles and bytes per cycle."""

    subpartitions: int
    warp_size: int
    issue_per_cycle: float
    pipe_rate: dict  # pipe -> warp instructions per cycle per sub-partition
    pipe_latency: dict
    barrier_latency: int
    lsu_queue_cycles: int
    l2_latency: int
    hbm_latency: int
    l2_bytes_per_cycle: float  # this SM's share
    hbm_bytes_per_cycle: float  # this SM's share
    cta_launch_cycles: int


@dataclass
class SmResult:
    cycles: float
    warp_cycles: float  # sum over warps of resident cycles (for achieved occupancy)
    stalls: dict[str, float]  # reason -> warp-cycles, summed over all warps
    issue_cycles: float  # warp instructions issued, all sub-partitions
    l1tex_busy: float
    l2_bytes: float
    hbm_bytes: float
    fast_forward: bool
    simulated_iterations: int
    trace: list = field(default_factory=list)


class SmModel:
    """One SM with ``ctas`` resident CTAs of ``kernel`` starting together."""

    def __init__(self, kernel: Kernel, timings: dict[str, MemTiming], params: SmParams, ctas: int,
                 trace: bool = False) -> None:
        self.k = kernel
        self.t = timings
        self.p = params
        self.ctas = ctas
        self.env = simpy.Environment()
        self.warps_per_cta = -(-kernel.launch.threads_per_block // params.warp_size)
        sp = params.subpartitions
        self.issue = [Server() for _ in range(sp)]
        self.pipes = {name: [Server() for _ in range(sp)] for name in params.pipe_rate}
        self.l1tex = Server()
        self.l2 = Server()
        self.hbm = Server()
        self.trips = kernel.loop.trips if kernel.loop is not None else 0
        self.sim_trips = min(self.trips, WARM_ITERATIONS + MEASURE_ITERATIONS)
        self.tracing = trace
        self.trace: list = []
        nw = ctas * self.warps_per_cta
        self.stats = np.zeros((nw, len(STALLS)))
        self.iter_marks: list[list[tuple[float, np.ndarray]]] = [[] for _ in range(nw)]
        self.ready = [{} for _ in range(nw)]
        self.kind_of = {op.name: ("long_scoreboard" if op.space == "global" else "short_scoreboard")
                        for op in kernel.all_ops() if isinstance(op, Mem) and op.kind in LOADS}
        self.exec_count = [{} for _ in range(nw)]
        self.barrier_count = [0] * ctas
        self.barrier_event = [self.env.event() for _ in range(ctas)]
        self.start = [0.0] * nw
        self.end = [0.0] * nw

    # --- helpers -------------------------------------------------------------------------------
    def _charge(self, w: int, reason: str, cycles: float) -> None:
        if cycles > 0:
            self.stats[w, STALLS.index(reason)] += cycles

    def _span(self, w: int, name: str, cat: str, t0: float, t1: float) -> None:
        if self.tracing and t1 > t0:
            self.trace.append((w, name, cat, t0, t1))

    def _deps(self, w: int, after: tuple[str, ...], now: float) -> float:
        t, reason = now, None
        for d in after:
            r = self.ready[w].get(d)
            if r is not None and r > t:
                t, reason = r, self.kind_of.get(d, "wait")
        if reason:
            self._charge(w, reason, t - now)
            self._span(w, f"stall:{reason}", "stall", now, t)
        return t

    def _bresenham(self, w: int, key: str, frac: float) -> bool:
        """Deterministically true for a ``frac`` share of successive executions."""
        n = self.exec_count[w].get(key, 0)
        self.exec_count[w][key] = n + 1
        return math.floor((n + 1) * frac + 1e-9) > math.floor(n * frac + 1e-9)

    # --- operations ------------------------------------------------------------------------------
    def _mem(self, w: int, op: Mem, it: int, j: int):
        env, p = self.env, self.p
        now = env.now
        tm = self.t[op.name]
        lw = w % self.warps_per_cta
        par = it % tm.period
        n_instr = int(tm.instructions[par, j, lw])
        if n_instr == 0:
            return
        t = self._deps(w, op.after, now)
        backlog_ok = self.l1tex.next_free - p.lsu_queue_cycles
        if backlog_ok > t:
            self._charge(w, "lg_throttle" if op.space == "global" else "mio_throttle", backlog_ok - t)
            self._span(w, "throttle", "stall", t, backlog_ok)
            t = backlog_ok
        if op.async_copy:  # the copy engine writes shared memory; the warp issues nothing here
            start = issue_end = t
        else:
            sp = self.issue[w % p.subpartitions]
            start, issue_end = sp.serve(t, n_instr / p.issue_per_cycle)
            self._charge(w, "not_selected", start - t)
            self._charge(w, "selected", n_instr)
        _, l1_end = self.l1tex.serve(start + 1, float(tm.l1tex_cycles[par, j, lw]))
        done = l1_end + tm.latency_hit_cycles
        if op.space == "global":
            l2b = float(tm.l2_bytes[par, j, lw])
            if l2b > 0:
                _, l2_end = self.l2.serve(l1_end, l2b / p.l2_bytes_per_cycle)
                hb = float(tm.hbm_bytes[par, j, lw])
                hbm_end = self.hbm.serve(l2_end, hb / p.hbm_bytes_per_cycle)[1] if hb > 0 else l2_end
                if op.kind == "ld" and self._bresenham(w, op.name, tm.l1_miss_fraction):
                    done = l2_end + p.l2_latency
                    if self._bresenham(w, op.name + "/l2", tm.l2_miss_fraction):
                        done = max(done, hbm_end + p.hbm_latency)
        if op.kind in LOADS:
            self.ready[w][op.name] = done
        self._span(w, op.name, f"{op.space}_{op.kind}", start, done if op.kind in LOADS else l1_end)
        end = math.ceil(issue_end)
        if end > now:
            yield env.timeout(end - now)

    def _compute(self, w: int, op: Compute):
        env, p = self.env, self.p
        if op.warps is not None and w % self.warps_per_cta not in op.warps:
            return
        now = env.now
        t = self._deps(w, op.after, now)
        sub = w % p.subpartitions
        rate = p.pipe_rate[op.pipe]
        lat = p.pipe_latency[op.pipe]
        remaining = op.count
        while remaining > 0:
            n = min(remaining, ISSUE_QUANTUM_INSTRUCTIONS)
            remaining -= n
            pipe = self.pipes[op.pipe][sub]
            slot = self.issue[sub]
            ready = max(t, slot.next_free)
            if pipe.next_free > ready:
                self._charge(w, "math_pipe_throttle", pipe.next_free - ready)
            self._charge(w, "not_selected", ready - t)
            start = max(ready, pipe.next_free)
            slot.serve(start, n / p.issue_per_cycle)
            pipe.serve(start, n / rate)
            chain = math.ceil(n / max(op.ilp, 1)) * lat
            busy = max(n / min(rate, p.issue_per_cycle), chain)
            self._charge(w, "selected", n)
            self._charge(w, "wait", busy - n)
            self._span(w, op.name, op.pipe, start, start + busy)
            t = start + busy
            end = math.ceil(t)
            if end > env.now:
                yield env.timeout(end - env.now)
        self.ready[w][op.name] = t + lat

    def _barrier(self, w: int, cta: int):
        env = self.env
        now = env.now
        self.barrier_count[cta] += 1
        ev = self.barrier_event[cta]
        if self.barrier_count[cta] == self.warps_per_cta:
            self.barrier_count[cta] = 0
            self.barrier_event[cta] = env.event()
            delay = self.p.barrier_latency
            env.process(self._release(ev, delay))
        yield ev
        self._charge(w, "barrier", env.now - now)
        self._span(w, "barrier", "barrier", now, env.now)

    def _release(self, ev, delay: int):
        if delay:
            yield self.env.timeout(delay)
        ev.succeed()

    def _run(self, w: int, cta: int, ops, it: int, j: int):
        for op in ops:
            if isinstance(op, Mem):
                yield from self._mem(w, op, it, j)
            elif isinstance(op, Compute):
                yield from self._compute(w, op)
            elif isinstance(op, Barrier):
                yield from self._barrier(w, cta)
            elif isinstance(op, Loop):
                for jj in range(op.trips):
                    yield from self._run(w, cta, op.body, it, jj)

    def _warp(self, w: int, cta: int):
        if self.p.cta_launch_cycles:
            yield self.env.timeout(self.p.cta_launch_cycles)
        self.start[w] = self.env.now
        yield from self._run(w, cta, self.k.prologue, 0, 0)
        if self.k.loop is not None:
            for it in range(self.sim_trips):
                yield from self._run(w, cta, self.k.loop.body, it, 0)
                self.iter_marks[w].append((self.env.now, self.stats[w].copy(), self._busy()))
        yield from self._run(w, cta, self.k.epilogue, 0, 0)
        self.end[w] = self.env.now

    def _busy(self) -> np.ndarray:
        return np.array([self.l1tex.busy, self.l2.busy, self.hbm.busy])

    # --- driver ----------------------------------------------------------------------------------
    def run(self) -> SmResult:
        for cta in range(self.ctas):
            for lw in range(self.warps_per_cta):
                self.env.process(self._warp(cta * self.warps_per_cta + lw, cta))
        self.env.run()
        nw = len(self.end)
        extra_trips = self.trips - self.sim_trips
        stats = self.stats.copy()
        end = np.array(self.end)
        ff = extra_trips > 0
        busy = self._busy()
        if ff:
            a, b = WARM_ITERATIONS - 1, self.sim_trips - 1
            t_a = max(m[a][0] for m in self.iter_marks)
            last = max(range(nw), key=lambda w: self.iter_marks[w][b][0])
            t_b = self.iter_marks[last][b][0]
            period = (t_b - t_a) / (b - a)
            for w in range(nw):
                stats[w] += extra_trips * (self.iter_marks[w][b][1] - self.iter_marks[w][a][1]) / (b - a)
            end = end + extra_trips * period
            # servers' busy time grows per iteration like the slowest warp's window (all CTAs advance together)
            first = max(range(nw), key=lambda w: self.iter_marks[w][a][0])
            busy = busy + extra_trips * (self.iter_marks[last][b][2] - self.iter_marks[first][a][2]) / (b - a)
        l1b, l2b, hbmb = (float(x) for x in busy)
        cycles = float(end.max())
        totals = {s: float(stats[:, i].sum()) for i, s in enumerate(STALLS)}
        return SmResult(cycles=cycles, warp_cycles=float((end - np.array(self.start)).sum()), stalls=totals,
                        issue_cycles=totals["selected"], l1tex_busy=l1b,
                        l2_bytes=l2b * self.p.l2_bytes_per_cycle, hbm_bytes=hbmb * self.p.hbm_bytes_per_cycle,
                        fast_forward=ff, simulated_iterations=self.sim_trips, trace=self.trace)
