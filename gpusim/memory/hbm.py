"""HBM: device memory bandwidth, shared by the active SMs, and its load latency.

At run time (:class:`Hbm`) one server of the chip's sustained bytes per SM cycle moves the L2's misses and
write-backs; a load that misses the L2 comes back ``latency_cycles`` after its bytes have moved.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.resources import RateServer
from gpusim.specfield import spec_field


@dataclass(frozen=True)
class HbmSpec:
    """HBM parameters (``[hbm]`` in the hardware config)."""

    capacity_bytes: int = spec_field(1 << 30, 1 << 40, "device memory size")
    peak_bandwidth_bytes_per_second: float = spec_field(1e11, 1e14, "datasheet bandwidth")
    achievable_bandwidth_bytes_per_second: float = spec_field(1e11, 1e14, "sustained bandwidth (copy)")
    load_latency_cycles: int = spec_field(1, 10000, "load latency of an L2 miss, end to end")
    fetch_granularity_bytes: int = spec_field(
        32, 256, "bytes the L2 reads from HBM for a missed sector: the aligned block around it")


class Hbm:
    """The chip's HBM at run time: ``bytes_per_cycle`` (sustained) and a miss's load latency."""

    def __init__(self, bytes_per_cycle: float, latency_cycles: int) -> None:
        self.server = RateServer(bytes_per_cycle, "HBM")
        self.latency_cycles = latency_cycles

    def transfer(self, ledger: dict, arrive: float, nbytes: float) -> float:
        """``nbytes`` read or written back from ``arrive`` on: when they have moved."""
        return self.server.book(ledger, arrive, nbytes)[1]

    def reported(self) -> list[tuple[str, RateServer, float]]:
        return [("HBM", self.server, 1.0)]
