"""HBM: device memory bandwidth, shared by the active SMs, and its load latency.

At run time (:class:`Hbm`) one server of the chip's sustained bytes per SM cycle moves the L2's misses and
write-backs; a load that misses the L2 comes back ``latency_cycles`` after its bytes have moved, more under load
(``[hbm] loaded_*``, measured: ``validate/micro/run_loaded_latency.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.resources import LoadedLatency, RateServer
from gpusim.specfield import spec_field


@dataclass(frozen=True)
class HbmSpec:
    """HBM parameters (``[hbm]`` in the hardware config)."""

    capacity_bytes: int = spec_field(1 << 30, 1 << 40, "device memory size")
    peak_bandwidth_bytes_per_second: float = spec_field(1e11, 1e14, "datasheet bandwidth")
    achievable_bandwidth_bytes_per_second: float = spec_field(1e11, 1e14, "sustained bandwidth (copy)")
    load_latency_cycles: int = spec_field(1, 10000, "load latency of an L2 miss, end to end")
    loaded_utilization_pct: tuple[int, ...] = spec_field(1, 100, "utilizations of the sustained HBM bandwidth at "
                                                         "which the miss latency was measured under load")
    loaded_added_cycles: tuple[int, ...] = spec_field(0, 20000, "miss latency added at those utilizations")
    fetch_granularity_bytes: int = spec_field(
        32, 256, "bytes the L2 reads from HBM for a missed sector: the aligned block around it")
    isolated_block_cost_ratio: float = spec_field(
        1, 10, "HBM time of a fetched block that no other fetched block is near (a DRAM row opened for it alone), "
        "over the time its bytes take in a stream")
    near_block_bytes: int = spec_field(
        64, 65536, "fetched blocks in one aligned region of this many bytes share a DRAM row opening")


class Hbm:
    """The chip's HBM at run time: ``bytes_per_cycle`` (sustained) and a miss's load latency."""

    def __init__(self, bytes_per_cycle: float, latency_cycles: int, loaded: LoadedLatency | None = None) -> None:
        self.server = RateServer(bytes_per_cycle, "HBM")
        self.latency_cycles = latency_cycles
        self.loaded = loaded

    def queued(self, t: float) -> float:
        """What the measured queues add to a request reaching HBM at ``t``, at the bandwidth used just before."""
        return self.loaded.cycles(self.server, t) if self.loaded else 0.0

    def latency(self, t: float) -> float:
        """Latency of a miss whose request reaches HBM at ``t``."""
        return self.latency_cycles + self.queued(t)

    def transfer(self, ledger: dict, arrive: float, nbytes: float) -> float:
        """``nbytes`` read or written back from ``arrive`` on: when they have moved."""
        return self.server.book(ledger, arrive, nbytes)[1]

    def reported(self) -> list[tuple[str, RateServer, float]]:
        return [("HBM", self.server, 1.0)]
