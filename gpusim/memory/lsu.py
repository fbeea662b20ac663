"""The SM's load/store path at run time: the L1TEX pipe and the LSU's instruction queues in front of it.

A memory instruction reaches the L1TEX pipe ``issue_to_pipe_cycles`` after it issues (``[l1]`` in the config). The
pipe resolves one cache line (global) or one shared-memory wavefront per cycle: its work is in cycles of the pipe
(``MemTiming.l1tex_cycles``, from the access patterns), so :class:`L1TexPipe` is a server of one unit per cycle.
A cp.async's write of its data into shared memory takes the pipe too, with no issue in front of it.

In front of the pipe sit the LSU's queues (:class:`LsuQueue`): LG for global accesses, MIO for shared memory. A
queue is full while more than its depth of work (in cycles of the pipe) is booked ahead of a request; the warp then
waits to issue, and the wait is charged to the queue's ncu stall reason (``lg_throttle``, ``mio_throttle``). Both
queues measure the backlog of the one pipe and both have the depth ``[l1] lsu_queue_cycles``: a per-queue depth is
one more number the builder (:class:`gpusim.engine.SmUnit`) gives each queue.
"""

from __future__ import annotations

from gpusim.resources import RateServer


class L1TexPipe:
    """One SM's L1TEX pipe: ``per_cycle`` units of work per cycle, entered ``issue_to_pipe_cycles`` after issue."""

    def __init__(self, sm: int, per_cycle: float, issue_to_pipe_cycles: int) -> None:
        self.server = RateServer(per_cycle, f"SM{sm} L1TEX")
        self.issue_to_pipe_cycles = issue_to_pipe_cycles

    def backlog(self, issued: float, work: float) -> float:
        """Cycles a request of ``work`` issued at ``issued`` would wait for the work booked ahead of it."""
        return self.server.queue_delay(issued + self.issue_to_pipe_cycles, work)

    def access(self, ledger: dict, issued: float, work: float) -> tuple[float, float]:
        """A memory instruction issued at ``issued``: (start, end) of its ``work`` in the pipe."""
        return self.server.book(ledger, issued + self.issue_to_pipe_cycles, work)

    def write(self, ledger: dict, t: float, work: float) -> tuple[float, float]:
        """An asynchronous copy's write into shared memory, its data there at ``t``: (start, end) in the pipe."""
        return self.server.book(ledger, t, work)

    def reported(self) -> list[tuple[str, RateServer, float]]:
        return [("L1TEX", self.server, 1.0)]


class LsuQueue:
    """An LSU queue in front of ``pipe``: full while more than ``depth_cycles`` of the pipe's work is booked ahead of
    a request. ``stall`` is the ncu stall reason of a warp waiting for room."""

    def __init__(self, name: str, stall: str, depth_cycles: int, pipe: L1TexPipe) -> None:
        self.name = name
        self.stall = stall
        self.depth_cycles = depth_cycles
        self.pipe = pipe

    def admit(self, t: float, work: float) -> float:
        """When a request of ``work`` ready to issue at ``t`` finds room: ``t``, or later while the queue is full."""
        ok = t + self.pipe.backlog(t, work) - self.depth_cycles
        return ok if ok > t else t
