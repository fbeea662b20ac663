"""HBM: device memory bandwidth, shared by the active SMs, and its load latency.

Static costs (:class:`HbmSpec`): what a miss fetches (the aligned block around a sector,
:meth:`HbmSpec.fetch_ratio`) and what a block fetched alone in its DRAM row costs (:meth:`HbmSpec.isolated_share`,
:meth:`HbmSpec.block_cost`).

At run time (:class:`Hbm`, stage ``HBM`` of a request's path) one server of the chip's sustained bytes per SM cycle
moves the L2's misses and write-backs; a load that misses the L2 comes back ``latency_cycles`` after its bytes have
moved, more under load (``[hbm] loaded_*``, measured: ``validate/micro/run_loaded_latency.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpusim.resources import LoadedLatency, RateServer
from gpusim.sm.clock import Clock, memory_clocked
from gpusim.specfield import spec_field


@dataclass(frozen=True)
class HbmSpec:
    """HBM parameters (``[hbm]`` in the hardware config)."""

    capacity_bytes: int = spec_field(1 << 30, 1 << 40, "device memory size")
    peak_bandwidth_bytes_per_second: float = spec_field(1e11, 1e14, "datasheet bandwidth")
    achievable_bandwidth_bytes_per_second: float = spec_field(1e11, 1e14, "sustained bandwidth (copy)")
    load_latency_cycles: int = memory_clocked(spec_field(1, 10000, "load latency of an L2 miss, end to end"))
    loaded_utilization_pct: tuple[int, ...] = spec_field(1, 100, "utilizations of the sustained HBM bandwidth at "
                                                         "which the miss latency was measured under load")
    loaded_added_cycles: tuple[int, ...] = memory_clocked(spec_field(0, 20000, "miss latency added at those "
                                                                     "utilizations"))
    fetch_granularity_bytes: int = spec_field(
        32, 256, "bytes the L2 reads from HBM for a missed sector: the aligned block around it")
    isolated_block_cost_ratio: float = spec_field(
        1, 10, "HBM time of a fetched block that no other fetched block is near (a DRAM row opened for it alone), "
        "over the time its bytes take in a stream")
    near_block_bytes: int = spec_field(
        64, 65536, "fetched blocks in one aligned region of this many bytes share a DRAM row opening")

    def fetch_ratio(self, sectors: np.ndarray, sector_bytes: int) -> float:
        """HBM bytes per wanted byte when every missed sector brings its aligned ``fetch_granularity_bytes`` block:
        the blocks the sectors (ids) fall in against the sectors themselves (1 when the neighbours are wanted too)."""
        per = max(self.fetch_granularity_bytes // sector_bytes, 1)
        if per == 1 or not len(sectors):
            return 1.0
        return len(np.unique(sectors // per)) * per / len(sectors)

    def isolated_share(self, sectors: np.ndarray, sector_bytes: int) -> float:
        """Of the blocks (``fetch_granularity_bytes``) the sectors fall in, the share that no other of those blocks
        shares an aligned ``near_block_bytes`` region with: HBM opens a row for each of them alone (measured: a
        scattered gather's 64-B blocks, ``isolated_block_cost_ratio``)."""
        blocks = np.unique(sectors // max(self.fetch_granularity_bytes // sector_bytes, 1))
        if not len(blocks):
            return 0.0
        _, counts = np.unique(blocks // max(self.near_block_bytes // self.fetch_granularity_bytes, 1),
                              return_counts=True)
        return float((counts == 1).sum()) / len(blocks)

    def block_cost(self, isolated_share: float) -> float:
        """HBM time per fetched byte over a stream's when ``isolated_share`` of the blocks are fetched alone in their
        rows (each costs ``isolated_block_cost_ratio``)."""
        return 1.0 + (self.isolated_block_cost_ratio - 1.0) * isolated_share


class Hbm:
    """The chip's HBM at run time: ``bytes_per_cycle`` (sustained) and a miss's load latency."""

    NAME = "HBM"

    def __init__(self, bytes_per_cycle: float, latency_cycles: int, loaded: LoadedLatency | None = None) -> None:
        self.server = RateServer(bytes_per_cycle, self.NAME)
        self.latency_cycles = latency_cycles
        self.loaded = loaded

    @classmethod
    def from_spec(cls, spec: HbmSpec, clock: Clock) -> Hbm:
        """The sustained rate per SM cycle at ``clock``; the latencies as ``spec`` states them (already at that
        clock: :func:`gpusim.sm.clock.at_sm_clock`)."""
        return cls(clock.per_cycle(spec.achievable_bandwidth_bytes_per_second), spec.load_latency_cycles,
                   LoadedLatency(spec.loaded_utilization_pct, spec.loaded_added_cycles))

    def queued(self, t: float) -> float:
        """What the measured queues add to a request reaching HBM at ``t``, at the bandwidth used just before."""
        return self.loaded.cycles(self.server, t) if self.loaded else 0.0

    def latency(self, t: float) -> float:
        """Latency of a miss whose request reaches HBM at ``t``."""
        return self.latency_cycles + self.queued(t)

    def transfer(self, ledger: dict, arrive: float, nbytes: float) -> float:
        """``nbytes`` read or written back from ``arrive`` on: when they have moved."""
        return self.server.book(ledger, arrive, nbytes)[1]

    def serve(self, request, t: float) -> float:
        """Stage ``HBM``: the request's HBM bytes (a miss's fetch or a store's write-backs, each real CTA's, at
        ``hbm_cost`` times a stream's time per byte) from ``t``; when they have moved."""
        request.hbm_arrive = t
        hb = request.hbm_bytes
        end = self.server.book(request.ledger, t, hb * request.weight * request.hbm_cost)[1] if hb > 0 else t
        request.hbm_done = end
        return end

    def respond(self, request, done: float) -> float:
        """When a load that misses the L2 (and would otherwise be done at ``done``) has its data: the miss latency
        (under the load HBM had as the request reached it) after its bytes moved."""
        return max(done, request.hbm_done + self.latency(request.hbm_arrive))

    def reported(self) -> list[tuple[str, RateServer, float]]:
        return [(self.NAME, self.server, 1.0)]
