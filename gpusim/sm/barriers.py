"""Synchronisation inside a CTA at run time: ``bar.sync`` barriers, mbarriers and asynchronous groups.

- :class:`CtaBarriers`: ``__syncthreads`` and named barriers (``bar.sync id, count``). A barrier releases its
  members ``latency_cycles`` after the last one arrives (``[pipes] barrier_*_cycles``, measured per CTA size), then
  starts over for its next use.
- :class:`Mbarriers`: Hopper's mbarriers, one state per phase. A phase completes when the arrivals the kernel
  declares for the barrier are in, at the latest arrival's time (a TMA copy arrives when its bytes have landed);
  a warp waiting on a phase sleeps until then. Phases whose arrivals a loop fast-forward skipped count as complete.
- :class:`AsyncGroups`: one warp's groups of asynchronous work (``cp.async``, ``wgmma``). Each operation joins the
  open group of its queue; ``commit`` closes the group, ``wait_group N`` waits until all but the newest ``N``
  committed groups are done.

The warps' waits (and the stall reasons they are charged to) are the engine's; these units keep the state and say
when a wait ends.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import simpy

if TYPE_CHECKING:
    from gpusim.chip_spec import ChipSpec
    from gpusim.sm.clock import Clock
    from gpusim.sm.pipes import PipesSpec


def release(env: simpy.Environment, event: simpy.Event, delay: int):
    """A process that triggers ``event`` ``delay`` cycles from now."""
    if delay:
        yield env.timeout(delay)
    event.succeed()


class CtaBarriers:
    """The bar.sync barriers of the resident CTAs, by key (a CTA and the barrier's name)."""

    def __init__(self, env: simpy.Environment, latency_cycles: int) -> None:
        self.env = env
        self.latency_cycles = latency_cycles
        self._count: dict = {}  # key -> warps arrived at its current use
        self._event: dict = {}  # key -> event of its current use

    @classmethod
    def from_spec(cls, spec: PipesSpec, clock: Clock, env: simpy.Environment, warps_per_cta: int) -> CtaBarriers:
        """The barriers of CTAs of ``warps_per_cta`` warps (their release latency, ``[pipes] barrier_*_cycles``)."""
        return cls(env, spec.barrier_cycles(warps_per_cta))

    def arrive(self, key: tuple, members: int) -> tuple[simpy.Event, int]:
        """One of ``members`` warps arrives at barrier ``key``: the event that releases it, and how many have
        arrived (itself included)."""
        env = self.env
        count = self._count.get(key, 0) + 1
        ev = self._event.setdefault(key, env.event())
        if count == members:  # the last one: release them all, the next use starts afresh
            self._count[key] = 0
            self._event[key] = env.event()
            env.process(release(env, ev, self.latency_cycles))
        else:
            self._count[key] = count
        return ev, count


def mbarrier_setup_cycles(chip: ChipSpec, count: int) -> int:
    """A CTA's set-up of its ``count`` mbarriers (one thread initialises each, then fences): measured per count."""
    if not count:
        return 0
    return round(chip.mbarrier_init_first_cycles + (count - 1) * chip.mbarrier_init_each_more_cycles)


class Mbarriers:
    """The mbarrier phases of the resident CTAs; ``expected`` gives each barrier's arrivals per phase."""

    def __init__(self, env: simpy.Environment, expected: dict[str, int]) -> None:
        self.env = env
        self.expected = expected
        self._phases: dict = {}  # (cta, bar, seq) -> [arrivals, latest arrival time, completion event]
        self._skipped: dict = {}  # (cta, bar) -> [(first, last)]: phases whose arrivals a fast-forward skipped

    def _phase(self, cta: int, bar: str, seq: int) -> list:
        key = (cta, bar, seq)
        st = self._phases.get(key)
        if st is None:
            st = self._phases[key] = [0, 0.0, self.env.event()]
        return st

    def arrive(self, cta: int, bar: str, seq: int, at: float) -> None:
        """An arrival on phase ``seq`` of CTA ``cta``'s ``bar``, effective at ``at``."""
        st = self._phase(cta, bar, seq)
        st[0] += 1
        st[1] = max(st[1], at)
        if st[0] == self.expected[bar]:
            self.env.process(release(self.env, st[2], max(math.ceil(st[1]) - self.env.now, 0)))

    def complete_skipped(self, cta: int, bar: str, first: int, last: int) -> None:
        """Phases ``first`` to ``last`` belong to iterations a fast-forward skipped: their arrivals never come, and a
        wait on them returns at once. The phases before ``first`` still complete by their own arrivals."""
        ranges = self._skipped.setdefault((cta, bar), [])
        if last >= first and (first, last) not in ranges:  # every warp of the CTA reports the same skip
            ranges.append((first, last))

    def settled(self, cta: int, bar: str, seq: int) -> bool:
        """Whether a wait on phase ``seq`` returns at once: a phase before the first, or one of skipped
        iterations."""
        return seq < 0 or any(a <= seq <= b for a, b in self._skipped.get((cta, bar), ()))

    def completion(self, cta: int, bar: str, seq: int) -> simpy.Event:
        """The event that triggers when phase ``seq`` completes."""
        return self._phase(cta, bar, seq)[2]

    def forget(self, cta: int) -> None:
        """CTA ``cta`` has finished: drop its phases."""
        for key in [key for key in self._phases if key[0] == cta]:
            del self._phases[key]
        for key in [key for key in self._skipped if key[0] == cta]:
            del self._skipped[key]

    def describe(self, cta: int, bar: str, seq: int) -> str:
        return f"mbarrier '{bar}' phase {seq} ({self._phases[(cta, bar, seq)][0]} of {self.expected[bar]} arrivals)"


class AsyncGroups:
    """One warp's asynchronous groups, per queue (``cp.async``, a wgmma group)."""

    __slots__ = ("_open", "_committed")

    def __init__(self) -> None:
        self._open: dict[str, float] = {}  # queue -> when the open group's work is done so far
        self._committed: dict[str, list[float]] = {}  # queue -> completion times of committed groups, oldest first

    def join(self, queue: str, done: float) -> None:
        """Work done at ``done`` joins ``queue``'s open group (no queue: synchronous work, nothing to join)."""
        if queue:
            self._open[queue] = max(self._open.get(queue, 0.0), done)

    def commit(self, queue: str, now: float) -> None:
        """Close ``queue``'s open group (an empty group is done ``now``)."""
        self._committed.setdefault(queue, []).append(self._open.pop(queue, now))

    def shift(self, after: float, by: float) -> None:
        """Completions later than ``after`` come ``by`` cycles later (a fast-forward skipped ``by`` cycles of the
        warp's time: the work in flight at the skip is in flight at its end)."""
        self._open = {q: t + by if t > after else t for q, t in self._open.items()}
        self._committed = {q: [t + by if t > after else t for t in ts] for q, ts in self._committed.items()}

    def wait(self, queue: str, pending: int) -> float:
        """``wait_group pending``: when all but the newest ``pending`` committed groups are done (0.0: at once);
        those groups are retired."""
        done = self._committed.get(queue, [])
        settled = done[:len(done) - pending] if pending else done
        self._committed[queue] = done[len(settled):]
        return max(settled, default=0.0)
