"""The SM's load/store path at run time: the L1TEX pipe and the LSU's instruction queues in front of it.

Stages ``LSU`` and ``L1TEX`` of a request's path (:data:`gpusim.request.PATHS`). A memory instruction reaches the
L1TEX pipe ``issue_to_pipe_cycles`` after it issues (``[l1]`` in the config). The pipe resolves one cache line
(global) or one shared-memory wavefront per cycle: its work is in cycles of the pipe (``MemTiming.l1tex_cycles``:
:meth:`gpusim.memory.l1.L1Spec.pipe_cycles` for global accesses,
:meth:`gpusim.memory.shared.SharedMemorySpec.pipe_cycles` for shared ones), so :class:`L1TexPipe` is a server of one
unit per cycle. A cp.async's write of its data into shared memory takes the pipe too, with no issue in front of it.
A shared-memory access also goes at its own pace (:meth:`L1TexPipe.paced`): after the warp's previous one, and a
bank-conflicted one at ``[shared_memory] conflict_pace_cycles_per_wavefront`` past its wavefronts' cycles.

In front of the pipe sit the LSU's queues (:class:`LsuQueue`): LG for global accesses, one per SM, and MIO for
shared memory, one per sub-partition. A queue holds a number of requests waiting for the pipe, whatever their size
(``[l1] lg_queue_requests``, ``mio_queue_requests``, measured by ``validate/micro/run_queues.py``); a warp whose
request finds it full waits to issue, charged to the queue's ncu stall reason (``lg_throttle``, ``mio_throttle``).
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

from gpusim.resources import RateServer

if TYPE_CHECKING:
    from gpusim.memory.l1 import L1Spec
    from gpusim.sm.clock import Clock


class L1TexPipe:
    """One SM's L1TEX pipe: ``per_cycle`` units of work per cycle, entered ``issue_to_pipe_cycles`` after issue."""

    NAME = "L1TEX"
    WORK_PER_CYCLE = 1.0  # its work is in cycles of the pipe already (lines, sectors or wavefronts: the costs)

    def __init__(self, sm: int, per_cycle: float, issue_to_pipe_cycles: int) -> None:
        self.server = RateServer(per_cycle, f"SM{sm} {self.NAME}")
        self.issue_to_pipe_cycles = issue_to_pipe_cycles

    @classmethod
    def from_spec(cls, spec: L1Spec, clock: Clock, sm: int = 0) -> L1TexPipe:
        return cls(sm, cls.WORK_PER_CYCLE, spec.issue_to_pipe_cycles)

    def backlog(self, issued: float, work: float) -> float:
        """Cycles a request of ``work`` issued at ``issued`` would wait for the work booked ahead of it."""
        return self.server.queue_delay(issued + self.issue_to_pipe_cycles, work)

    def access(self, ledger: dict, issued: float, work: float) -> tuple[float, float]:
        """A memory instruction issued at ``issued``: (start, end) of its ``work`` in the pipe."""
        return self.server.book(ledger, issued + self.issue_to_pipe_cycles, work)

    def paced(self, issued: float, start: float, end: float, own_cycles: float, after: float) -> tuple[float, float]:
        """(entry, end) of a shared-memory access issued at ``issued`` whose wavefronts the pipe serves from
        ``start`` to ``end``: it enters no sooner than the warp's previous shared access left (``after``: a warp's
        accesses go through in order) and leaves no sooner than ``own_cycles`` after it entered. The pipe serves a
        wavefront a cycle whoever's it is, but one instruction's conflicting wavefronts follow each other more
        slowly (measured: a lone warp's k-way loads or stores take 2 cycles a wavefront, four or 32 warps still
        1.0 wavefront a cycle): the gaps go to other warps' wavefronts, so the pace only shows where the pipe has
        little else to do. A warp waiting to enter holds its place in the LSU queue."""
        entry = max(issued + self.issue_to_pipe_cycles, after)
        return max(start, entry), max(end, entry + own_cycles)

    def write(self, ledger: dict, t: float, work: float) -> tuple[float, float]:
        """An asynchronous copy's write into shared memory, its data there at ``t``: (start, end) in the pipe."""
        return self.server.book(ledger, t, work)

    def reported(self) -> list[tuple[str, RateServer, float]]:
        return [(self.NAME, self.server, 1.0)]


class LsuQueue:
    """An LSU queue in front of ``pipe``: it holds up to ``depth_requests`` requests that have issued and wait for the
    pipe, whatever their size (measured: ``validate/micro/run_queues.py``). A warp whose request finds it full
    waits to issue until enough of the waiting ones have entered the pipe; ``stall`` is the ncu stall reason of
    that wait."""

    def __init__(self, name: str, stall: str, depth_requests: int, pipe: L1TexPipe) -> None:
        self.name = name
        self.stall = stall
        self.depth_requests = depth_requests
        self.pipe = pipe
        self._entries: list[float] = []  # when each admitted request enters the pipe, sorted

    def admit(self, t: float, now: float) -> float:
        """When a request ready to issue at ``t`` (at simulated time ``now`` <= ``t``) finds room: ``t``, or the
        time the request ``depth_requests`` places ahead of the last one waiting enters the pipe."""
        entries = self._entries
        gone = bisect.bisect_right(entries, now)  # entered the pipe already: no request can wait on them again
        if gone:
            del entries[:gone]
        depth = self.depth_requests
        if len(entries) < depth:  # room whenever it issues
            return t
        waiting = len(entries) - bisect.bisect_right(entries, t)
        if waiting < depth:
            return t
        return entries[len(entries) - depth]

    def enter(self, at: float) -> None:
        """An admitted request enters the pipe at ``at`` (it waits in the queue until then)."""
        bisect.insort(self._entries, at)


class Lsu:
    """One SM's LSU queues in front of its L1TEX pipe: LG for global accesses (one per SM), MIO for shared memory (one
    per sub-partition)."""

    def __init__(self, lg: LsuQueue, mio: list[LsuQueue]) -> None:
        self.lg = lg
        self.mio = mio

    @classmethod
    def from_spec(cls, spec: L1Spec, clock: Clock, pipe: L1TexPipe, subpartitions: int) -> Lsu:
        return cls(LsuQueue("LG", "lg_throttle", spec.lg_queue_requests, pipe),
                   [LsuQueue("MIO", "mio_throttle", spec.mio_queue_requests, pipe) for _ in range(subpartitions)])

    def queue(self, space: str, sub: int) -> LsuQueue:
        """The queue a request of ``space`` from sub-partition ``sub`` waits in."""
        return self.lg if space == "global" else self.mio[sub]

    def reported(self) -> list:
        return []  # queues hold requests; their waits are the warps' stalls (lg_throttle, mio_throttle)
