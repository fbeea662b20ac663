"""The Tensor Memory Accelerator (TMA): one per SM, copying tiles between global and shared memory.

A TMA copy is issued by one thread (``issue_cycles`` of that warp's time), queued on the SM's copy engine,
which starts one copy per ``copy_interval_cycles``; its bytes travel through the L2 (and HBM on a miss) like
any global load, bypassing L1, and it completes ``latency + bytes / bytes_per_cycle`` after it started by
arriving on an mbarrier. All numbers are from ``validate/micro/hopper.cu`` (bulk copies).

At run time (:class:`TmaEngine`) the copy engine is a server of one copy per ``copy_interval_cycles``; the engine's
warps book the copy's bytes on the SM's L2 port, the L2 and HBM themselves, from the copy's start.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.resources import RateServer
from gpusim.specfield import spec_field


@dataclass(frozen=True)
class TmaSpec:
    """The SM's TMA unit (``[tma]`` in the hardware config)."""

    issue_cycles: int = spec_field(1, 2000, "issuing thread's cost per copy instruction")
    copy_interval_cycles: int = spec_field(1, 5000, "cycles between the starts of successive copies of one SM")
    l2_latency_cycles: int = spec_field(1, 5000, "issue to mbarrier completion of a small L2-resident copy")
    hbm_latency_cycles: int = spec_field(1, 10000, "issue to mbarrier completion of a small copy from HBM")
    bytes_per_cycle: float = spec_field(1, 4096, "one copy's data rate (latency growth with size)")

    def latency_cycles(self, nbytes: float, from_hbm: bool) -> float:
        base = self.hbm_latency_cycles if from_hbm else self.l2_latency_cycles
        return base + nbytes / self.bytes_per_cycle


class TmaEngine:
    """One SM's TMA copy engine at run time: starts one copy per ``copy_interval_cycles`` of ``spec``."""

    def __init__(self, sm: int, spec: TmaSpec) -> None:
        self.spec = spec
        self.server = RateServer(1.0 / spec.copy_interval_cycles, f"SM{sm} TMA")

    @property
    def issue_cycles(self) -> int:
        return self.spec.issue_cycles

    def start(self, ledger: dict, t: float) -> float:
        """A copy issued at ``t``: when the engine starts it."""
        return self.server.book(ledger, t, 1.0)[0]

    def latency_cycles(self, nbytes: float, from_hbm: bool) -> float:
        """From the copy's start to its mbarrier arrival, when nothing it uses is busy."""
        return self.spec.latency_cycles(nbytes, from_hbm)

    def reported(self) -> list[tuple[str, RateServer, float]]:
        return [("TMA", self.server, 1.0)]
