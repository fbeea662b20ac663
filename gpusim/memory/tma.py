"""The Tensor Memory Accelerator (TMA): one per SM, copying tiles between global and shared memory.

A TMA store (``tma_st``) reads its box out of shared memory at the SM's store rate (``store_bytes_per_cycle``, the
SM's stores one after another; measured), its bulk group read ``store_latency_cycles`` after, and sends it to the L2's
write path (:data:`gpusim.request.PATHS`).

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
    store_bytes_per_cycle: float = spec_field(1, 4096, "the SM's rate of reading TMA stores' boxes out of shared "
                                                       "memory")
    store_latency_cycles: int = spec_field(0, 5000, "a TMA store's issue to its box read (wait_group.read), "
                                                    "less its bytes at store_bytes_per_cycle")

    def latency_cycles(self, nbytes: float, from_hbm: bool) -> float:
        base = self.hbm_latency_cycles if from_hbm else self.l2_latency_cycles
        return base + nbytes / self.bytes_per_cycle


class TmaEngine:
    """One SM's TMA copy engine at run time: starts one copy per ``copy_interval_cycles`` of ``spec``."""

    NAME = "TMA"

    def __init__(self, sm: int, spec: TmaSpec) -> None:
        self.spec = spec
        self.server = RateServer(1.0 / spec.copy_interval_cycles, f"SM{sm} {self.NAME}")
        # the stores' reads of their boxes out of shared memory, one after another at the SM's store rate
        self.store_server = RateServer(spec.store_bytes_per_cycle, f"SM{sm} {self.NAME} store")

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

    def store(self, ledger: dict, t: float, nbytes: float) -> float:
        """A TMA store of ``nbytes`` issued at ``t``: when its box has been read out of shared memory (its bulk
        group's ``wait_group.read``), the SM's stores read one after another at ``store_bytes_per_cycle``, then
        ``store_latency_cycles`` (measured: validate/micro/run_tma_store.py)."""
        _, end = self.store_server.book(ledger, t, nbytes)
        return end + self.spec.store_latency_cycles

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
        return [(self.NAME, self.server, 1.0), (self.NAME + " store", self.store_server, 1.0)]
