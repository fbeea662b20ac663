"""Discrete-event model of one SM running its resident CTAs (SimPy, integer cycles).

Each warp is a SimPy process that walks the kernel's program. Shared hardware is a set of FIFO servers
(:class:`Server`), each tracking when it is next free: the issue slot and the FP32/INT32 pipes of every
sub-partition, the SM's L1TEX pipe (lines for global accesses, wavefronts for shared ones), and the SM's
shares of L2 and HBM bandwidth (chip bandwidth over the active SMs). A warp computes when it can go on
and sleeps until then, so one operation costs one event. Every cycle a warp spends not issuing is
charged to one of Nsight Compute's stall reasons.

Asynchronous work (Hopper and Ampere pipelines): ``cp.async`` copies and ``wgmma`` join the warp's open
group of their queue and the warp goes on; ``WaitGroup`` waits for all but the newest groups. TMA copies
run on the SM's copy engine and arrive on an mbarrier phase; ``MbarWait`` sleeps until the phase has all
its arrivals. A wait that can never be satisfied ends the simulation with a :class:`DeadlockError`.

The outer loop runs for a warm-up and a measurement window; when it has more trips, the rest is
extrapolated from the measured steady-state period (the fast-forward; ``SmResult.fast_forward``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import simpy

from gpusim.ir import LOADS, Arrive, Barrier, Commit, Compute, Kernel, KernelError, Loop, MbarWait, Mem, WaitGroup

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


class DeadlockError(KernelError):
    """A barrier or mbarrier wait that no remaining work can complete."""


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
    tma: object = None  # TmaSpec


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
    period: float = 0.0  # cycles per outer-loop iteration in the measured window (0: not measured)
    trace: list = field(default_factory=list)


class SmModel:
    """One SM with ``ctas`` resident CTAs of ``kernel`` starting together."""

    def __init__(self, kernel: Kernel, timings: dict[str, MemTiming], params: SmParams, ctas: int,
                 trace: bool = False, trips: int | None = None) -> None:
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
        self.trips = (trips if trips is not None else kernel.loop.trips) if kernel.loop is not None else 0
        self.tma = Server()
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
        self.barrier_count: dict = {}
        self.barrier_event: dict = {}
        self.open_group = [{} for _ in range(nw)]  # queue -> completion time of the open group
        self.groups = [{} for _ in range(nw)]  # queue -> completion times of committed groups
        self.mbar: dict = {}  # (cta, bar, seq) -> [arrivals, latest arrival time, event]
        self.waiting: dict = {}  # warp -> what it waits on (text, or an mbarrier phase key)
        self.finished = [False] * nw
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
    def _join(self, w: int, queue: str, done: float) -> None:
        if queue:
            og = self.open_group[w]
            og[queue] = max(og.get(queue, 0.0), done)

    def _async_store(self, w: int, op: Mem, tm: MemTiming, par: int, j: int, lw: int):
        """The shared-memory write of a cp.async: done when its global load has landed; takes no issue slot."""
        t = self.env.now
        for d in op.after:
            r = self.ready[w].get(d)
            if r is not None:
                t = max(t, r)
        cyc = float(tm.l1tex_cycles[par, j, lw])
        self.l1tex.busy += cyc  # bandwidth accounted; the write does not hold up the warp's own queue
        self._join(w, op.group, t + cyc)
        self._span(w, op.name, "shared_st_async", t, t + cyc)
        return
        yield  # a generator like the other operations

    def _tma(self, w: int, cta: int, op: Mem, tm: MemTiming, par: int, j: int, lw: int, it: int):
        """One thread issues a TMA copy; the SM's copy engine moves it through L2/HBM into shared memory."""
        env, p = self.env, self.p
        now = env.now
        t = self._deps(w, op.after, now)
        sp = self.issue[w % p.subpartitions]
        start, _ = sp.serve(t, 1 / p.issue_per_cycle)
        self._charge(w, "not_selected", start - t)
        self._charge(w, "selected", 1)
        issue_end = start + p.tma.issue_cycles
        self._charge(w, "wait", p.tma.issue_cycles - 1)
        eng_start, _ = self.tma.serve(start, p.tma.copy_interval_cycles)
        l2b = float(tm.l2_bytes[par, j, lw])
        hb = float(tm.hbm_bytes[par, j, lw])
        _, l2_end = self.l2.serve(eng_start, l2b / p.l2_bytes_per_cycle)
        hbm_end = self.hbm.serve(l2_end, hb / p.hbm_bytes_per_cycle)[1] if hb > 0 else l2_end
        from_hbm = self._bresenham(w, op.name + "/l2", tm.l2_miss_fraction)
        done = max(eng_start + p.tma.latency_cycles(l2b, from_hbm), l2_end, hbm_end)
        self._span(w, op.name, "tma", start, done)
        self._mbar_arrive(cta, op.arrive, op.seq(it, j), done)
        end = math.ceil(issue_end)
        if end > now:
            yield env.timeout(end - now)

    def _mem(self, w: int, op: Mem, it: int, j: int, cta: int = 0):
        env, p = self.env, self.p
        now = env.now
        tm = self.t[op.name]
        lw = w % self.warps_per_cta
        par = it % tm.period
        n_instr = int(tm.instructions[par, j, lw])
        if n_instr == 0:
            return
        if op.kind == "tma":
            yield from self._tma(w, cta, op, tm, par, j, lw, it)
            return
        if op.async_copy and op.group:
            yield from self._async_store(w, op, tm, par, j, lw)
            return
        t = self._deps(w, op.after, now)
        backlog_ok = self.l1tex.next_free - p.lsu_queue_cycles
        if backlog_ok > t:
            self._charge(w, "lg_throttle" if op.space == "global" else "mio_throttle", backlog_ok - t)
            self._span(w, "throttle", "stall", t, backlog_ok)
            t = backlog_ok
        if op.async_copy:  # cp.async placed where the warp waits for it: the copy engine writes shared memory
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
        self._join(w, op.group, done if op.kind in LOADS else l1_end)
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
        if op.group:  # asynchronous (wgmma): issue and go on; the pipe works in the background
            n = op.count // op.units
            slot = self.issue[sub]
            start, issue_end = slot.serve(t, n / p.issue_per_cycle)
            self._charge(w, "not_selected", start - t)
            self._charge(w, "selected", n)
            _, pipe_end = self.pipes[op.pipe][sub].serve(start, op.count / rate)
            done = pipe_end + lat
            self._join(w, op.group, done)
            self.ready[w][op.name] = done
            self._span(w, op.name, op.pipe, start, done)
            end = math.ceil(issue_end)
            if end > env.now:
                yield env.timeout(end - env.now)
            return
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

    def _barrier(self, w: int, cta: int, op: Barrier):
        env = self.env
        now = env.now
        members = self.warps_per_cta if op.warps is None else len(op.warps)
        key = (cta, "__syncthreads" if op.warps is None else op.name)
        count = self.barrier_count.get(key, 0) + 1
        ev = self.barrier_event.setdefault(key, env.event())
        if count == members:
            self.barrier_count[key] = 0
            self.barrier_event[key] = env.event()
            env.process(self._release(ev, self.p.barrier_latency))
        else:
            self.barrier_count[key] = count
        self.waiting[w] = f"barrier '{op.name}' ({count} of {members} warps arrived)"
        yield ev
        self.waiting.pop(w, None)
        self._charge(w, "barrier", env.now - now)
        self._span(w, "barrier", "barrier", now, env.now)

    def _commit(self, w: int, op: Commit):
        og = self.open_group[w]
        self.groups[w].setdefault(op.queue, []).append(og.pop(op.queue, self.env.now))
        return
        yield

    def _wait_group(self, w: int, op: WaitGroup):
        env = self.env
        done = self.groups[w].get(op.queue, [])
        settled = done[:len(done) - op.pending] if op.pending else done
        t = max(settled, default=0.0)
        if t > env.now:
            reason = "long_scoreboard" if op.queue == "cp.async" else "wait"
            self._charge(w, reason, math.ceil(t) - env.now)
            self._span(w, f"wait:{op.queue}", "stall", env.now, math.ceil(t))
            yield env.timeout(math.ceil(t) - env.now)
        # groups older than the ones still allowed in flight are retired
        self.groups[w][op.queue] = done[len(settled):]

    def _mbar_state(self, cta: int, bar: str, seq: int) -> list:
        key = (cta, bar, seq)
        st = self.mbar.get(key)
        if st is None:
            st = self.mbar[key] = [0, 0.0, self.env.event()]
        return st

    def _mbar_arrive(self, cta: int, bar: str, seq: int, at: float) -> None:
        st = self._mbar_state(cta, bar, seq)
        st[0] += 1
        st[1] = max(st[1], at)
        if st[0] == self.k.mbarriers[bar]:
            self.env.process(self._release(st[2], max(math.ceil(st[1]) - self.env.now, 0)))

    def _arrive(self, w: int, cta: int, op: Arrive, it: int, j: int):
        self._mbar_arrive(cta, op.bar, op.seq(it, j), self.env.now)
        return
        yield

    def _mbar_wait(self, w: int, cta: int, op: MbarWait, it: int, j: int):
        seq = op.seq(it, j)
        if seq < 0:
            return
        env = self.env
        now = env.now
        st = self._mbar_state(cta, op.bar, seq)
        if not st[2].triggered:
            self.waiting[w] = (cta, op.bar, seq)
            yield st[2]
            self.waiting.pop(w, None)
        if env.now > now:
            self._charge(w, "barrier", env.now - now)
            self._span(w, f"wait:{op.bar}", "stall", now, env.now)

    def _release(self, ev, delay: int):
        if delay:
            yield self.env.timeout(delay)
        ev.succeed()

    def _run(self, w: int, cta: int, ops, it: int, j: int):
        lw = w % self.warps_per_cta
        for op in ops:
            if isinstance(op, Mem):
                yield from self._mem(w, op, it, j, cta)
            elif isinstance(op, Compute):
                yield from self._compute(w, op)
            elif getattr(op, "warps", None) is not None and lw not in op.warps:
                continue
            elif isinstance(op, Barrier):
                yield from self._barrier(w, cta, op)
            elif isinstance(op, Commit):
                yield from self._commit(w, op)
            elif isinstance(op, WaitGroup):
                yield from self._wait_group(w, op)
            elif isinstance(op, Arrive):
                yield from self._arrive(w, cta, op, it, j)
            elif isinstance(op, MbarWait):
                yield from self._mbar_wait(w, cta, op, it, j)
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
        self.finished[w] = True

    def _busy(self) -> np.ndarray:
        return np.array([self.l1tex.busy, self.l2.busy, self.hbm.busy])

    # --- driver ----------------------------------------------------------------------------------
    def run(self) -> SmResult:
        for cta in range(self.ctas):
            for lw in range(self.warps_per_cta):
                self.env.process(self._warp(cta * self.warps_per_cta + lw, cta))
        self.env.run()
        stuck = [w for w, f in enumerate(self.finished) if not f]
        if stuck:
            seen: dict[str, int] = {}
            for w in stuck:  # the first warp stuck on each distinct wait
                what = self.waiting.get(w, "an unfinished operation")
                if isinstance(what, tuple):
                    cta, bar, seq = what
                    what = f"mbarrier '{bar}' phase {seq} ({self.mbar[what][0]} of {self.k.mbarriers[bar]} arrivals)"
                seen.setdefault(what, w)
            waits = "; ".join(f"warp {w % self.warps_per_cta} of CTA {w // self.warps_per_cta} on {what}"
                              for what, w in list(seen.items())[:3])
            raise DeadlockError(f"{self.k.name}: deadlock, {len(stuck)} warps wait forever: {waits}")
        nw = len(self.end)
        extra_trips = self.trips - self.sim_trips
        stats = self.stats.copy()
        end = np.array(self.end)
        ff = extra_trips > 0
        busy = self._busy()
        period = 0.0
        if self.sim_trips >= 2:
            a0 = min(WARM_ITERATIONS - 1, self.sim_trips // 2)
            b0 = self.sim_trips - 1
            if b0 > a0:
                period = (max(m[b0][0] for m in self.iter_marks) - max(m[a0][0] for m in self.iter_marks)) / (b0 - a0)
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
                        fast_forward=ff, simulated_iterations=self.sim_trips, period=period, trace=self.trace)
