"""The Tensor Memory Accelerator (TMA): one per SM, copying tiles between global and shared memory.

A TMA store (``tma_st``) takes the same engine: it starts one copy per ``copy_interval_cycles``, reads its box out of
shared memory at ``bytes_per_cycle`` and sends it to the L2's write path (:data:`gpusim.request.PATHS`); its rates
are the loads' (a store's own are not yet measured).

A TMA copy is issued by one thread (``issue_cycles`` of that warp's time), queued on the SM's copy engine,
which starts one copy per ``copy_interval_cycles``; its bytes travel through the L2 (and HBM on a miss) like
any global load, bypassing L1, and it completes ``latency + bytes / bytes_per_cycle`` after it started by
arriving on an mbarrier. All numbers are from ``validate/micro/hopper.cu`` (bulk copies).

At run time (:class:`TmaEngine`, stage ``TMA`` of a copy's path) the copy engine is a server of one copy per
``copy_interval_cycles``; from the copy's start its bytes go down the rest of the path (the SM's L2 port, the L2,
HBM: :data:`gpusim.request.PATHS`), and the engine says when the copy arrives on its mbarrier
(:meth:`TmaEngine.respond`). The latencies to the L2 and HBM are the memory side's: they keep their time when the SM
clock changes (:func:`gpusim.sm.clock.memory_clocked`).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.resources import RateServer
from gpusim.sm.clock import Clock, memory_clocked
from gpusim.specfield import spec_field


@dataclass(frozen=True)
class TmaSpec:
    """The SM's TMA unit (``[tma]`` in the hardware config)."""

    issue_cycles: int = spec_field(1, 2000, "issuing thread's cost per copy instruction")
    copy_interval_cycles: int = spec_field(1, 5000, "cycles between the starts of successive copies of one SM")
    l2_latency_cycles: int = memory_clocked(spec_field(1, 5000, "issue to mbarrier completion of a small "
                                                       "L2-resident copy"))
    hbm_latency_cycles: int = memory_clocked(spec_field(1, 10000, "issue to mbarrier completion of a small copy "
                                                        "from HBM"))
    bytes_per_cycle: float = spec_field(1, 4096, "one copy's data rate (latency growth with size)")

    def latency_cycles(self, nbytes: float, from_hbm: bool) -> float:
        base = self.hbm_latency_cycles if from_hbm else self.l2_latency_cycles
        return base + nbytes / self.bytes_per_cycle


class TmaEngine:
    """One SM's TMA copy engine at run time: starts one copy per ``copy_interval_cycles`` of ``spec``."""

    NAME = "TMA"

    def __init__(self, sm: int, spec: TmaSpec) -> None:
        self.spec = spec
        self.server = RateServer(1.0 / spec.copy_interval_cycles, f"SM{sm} {self.NAME}")

    @classmethod
    def from_spec(cls, spec: TmaSpec, clock: Clock, sm: int = 0) -> TmaEngine:
        return cls(sm, spec)

    @property
    def issue_cycles(self) -> int:
        return self.spec.issue_cycles

    def start(self, ledger: dict, t: float) -> float:
        """A copy issued at ``t``: when the engine starts it."""
        return self.server.book(ledger, t, 1.0)[0]

    def latency_cycles(self, nbytes: float, from_hbm: bool) -> float:
        """From the copy's start to its mbarrier arrival, when nothing it uses is busy."""
        return self.spec.latency_cycles(nbytes, from_hbm)

    def read_cycles(self, nbytes: float) -> float:
        """A store's box read out of shared memory at one copy's data rate (not measured for stores: the loads'
        ``bytes_per_cycle``)."""
        return nbytes / self.spec.bytes_per_cycle

    def serve(self, request, t: float) -> float:
        """Stage ``TMA``: a copy issued at ``t`` waits for the engine; when it starts (the rest of its path from
        then)."""
        return self.start(request.ledger, t)

    def respond(self, request, started: float, from_hbm: bool, queued: float) -> float:
        """When a copy started at ``started`` arrives on its mbarrier: its latency (from HBM or the L2, ``queued``
        cycles more under the load that level had), and no sooner than its bytes have moved through the L2 and,
        for a miss, HBM."""
        return max(started + self.latency_cycles(request.l2_bytes, from_hbm) + queued, request.l2_done,
                   request.hbm_done)

    def reported(self) -> list[tuple[str, RateServer, float]]:
        return [(self.NAME, self.server, 1.0)]
