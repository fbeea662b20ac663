"""L1 data cache (the L1TEX unit) of one SM, shared with shared memory.

Two parts: a spec of throughputs and latencies used by the discrete-event model, and a pure hit-rate
model: an LRU over the exact 32-byte sector stream of the SM's resident CTAs during a window of loop
iterations. Global stores write through to L2 and do not allocate in L1; stores to local memory (a thread's stack
frame: spills, arrays indexed at run time) write through and allocate, so the loads that read the frame back can hit
(measured, ncu's local-memory hit rates: fa2's spills at its default tile 99.9% of LDL sectors hit, 98.6% of STL
sectors find their line; validate/measurements/h100/frontend-binary-knobs-2026-11-28.json).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from gpusim.specfield import spec_field


@dataclass(frozen=True)
class L1Spec:
    """L1TEX parameters (``[l1]`` in the hardware config)."""

    hit_latency_cycles: int = spec_field(1, 500, "global load latency on an L1 hit")
    lines_per_cycle: int = spec_field(1, 8, "cache lines the tag stage resolves per cycle")
    data_bytes_per_cycle: int = spec_field(32, 1024, "bytes the data stage moves per cycle")
    sector_bytes: int = spec_field(4, 1024, "sector size (a power of two; the L2's sector size too)")
    line_bytes: int = spec_field(4, 4096, "cache line size (a power-of-two multiple of sector_bytes)")
    lg_queue_requests: int = spec_field(1, 1024, "global requests one SM's LG queue holds waiting for L1TEX")
    mio_queue_requests: int = spec_field(1, 1024, "shared requests a sub-partition's MIO queue holds waiting for L1TEX")
    issue_to_pipe_cycles: int = spec_field(0, 100, "cycles from a memory instruction's issue to the L1TEX pipe")

    def pipe_cycles(self, lines, sectors, sector_bytes: int):
        """Cycles of the L1TEX pipe a global access of ``sectors`` over ``lines`` takes: its tag stage resolves
        ``lines_per_cycle`` lines, its data stage moves ``data_bytes_per_cycle``; the slower of the two."""
        return np.maximum(lines / self.lines_per_cycle, sectors * sector_bytes / self.data_bytes_per_cycle)


@dataclass
class L1Stats:
    """What the L1 hit-rate model saw for one memory operation."""

    sectors: int = 0
    sector_hits: int = 0
    requests: int = 0
    requests_all_hit: int = 0


class SectorLRU:
    """A fully associative LRU of sector ids with a capacity in sectors."""

    def __init__(self, capacity_sectors: int) -> None:
        self.capacity_sectors = max(int(capacity_sectors), 1)
        self._lines: OrderedDict[int, None] = OrderedDict()

    def access(self, sector_ids) -> int:
        """Touch ``sector_ids`` in order; return how many were already present."""
        hits = 0
        lines = self._lines
        for s in sector_ids:
            if s in lines:
                lines.move_to_end(s)
                hits += 1
            else:
                lines[s] = None
                if len(lines) > self.capacity_sectors:
                    lines.popitem(last=False)
        return hits


def l1_hit_model(stream, capacity_bytes: int, sector_bytes: int, warm_iterations: int,
                 allocate_only: frozenset = frozenset()) -> dict[str, L1Stats]:
    """Replay an SM's global-load sector stream through an LRU and count hits per operation.

    ``stream`` yields ``(iteration, op_name, per_warp_sector_ids)`` in execution order; iterations below
    ``warm_iterations`` fill the cache but are not counted (steady state), unless nothing else is. The operations of
    ``allocate_only`` (local-memory stores) put their sectors in the cache and are not counted.
    """
    lru = SectorLRU(capacity_bytes // sector_bytes)
    warm: dict[str, L1Stats] = {}
    steady: dict[str, L1Stats] = {}
    for it, name, per_warp in stream:
        if name in allocate_only:
            for ids in per_warp:
                lru.access(ids.tolist())
            continue
        st = (steady if it >= warm_iterations else warm).setdefault(name, L1Stats())
        for ids in per_warp:
            if len(ids) == 0:
                continue
            h = lru.access(ids.tolist())
            st.sectors += len(ids)
            st.sector_hits += h
            st.requests += 1
            st.requests_all_hit += h == len(ids)
    return {name: steady.get(name, st) for name, st in warm.items()} | steady
