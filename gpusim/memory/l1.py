"""L1 data cache (the L1TEX unit) of one SM, shared with shared memory.

Two parts: a spec of throughputs and latencies used by the discrete-event model, and a pure hit-rate
model: an LRU over the exact 32-byte sector stream of the SM's resident CTAs during a window of loop
iterations. Global stores write through to L2 and do not allocate in L1. Local memory (a thread's stack frame:
spills, arrays indexed at run time) is stored and read back by its own thread moments later, whatever the other
warps do in lockstep: its loads hit as long as the frames of the SM's resident threads are not many times the L1
(:meth:`L1Spec.local_hit_fraction`, measured), and its requests go through the pipe at their own rate
(:meth:`L1Spec.pipe_cycles`, ``local=True``).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from gpusim.specfield import spec_field


def ramp(x: float, zero_at: float, one_at: float) -> float:
    """0 on ``zero_at``'s side, 1 on ``one_at``'s side, a straight line between (the measured curves of
    :class:`L1Spec` and :class:`gpusim.memory.l2.L2Spec`)."""
    return min(max((x - zero_at) / (one_at - zero_at), 0.0), 1.0)


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
    local_lines_per_cycle: float = spec_field(0.5, 8, "lines of local-memory accesses (LDL, STL) the tag stage "
                                                      "resolves per cycle")
    local_all_hit_frame_ratio: float = spec_field(0.1, 20, "local frames of an SM's resident threads, over the L1's "
                                                           "capacity, up to which every local load hits")
    local_all_miss_frame_ratio: float = spec_field(0.1, 20, "local frames of an SM's resident threads, over the L1's "
                                                            "capacity, from which no local load hits")

    def pipe_cycles(self, lines, sectors, sector_bytes: int, local: bool = False):
        """Cycles of the L1TEX pipe a global access of ``sectors`` over ``lines`` takes: its tag stage resolves
        ``lines_per_cycle`` lines (``local_lines_per_cycle`` for local memory), its data stage moves
        ``data_bytes_per_cycle``; the slower of the two."""
        per = self.local_lines_per_cycle if local else self.lines_per_cycle
        return np.maximum(lines / per, sectors * sector_bytes / self.data_bytes_per_cycle)

    def local_hit_fraction(self, frame_bytes_per_sm: float, capacity_bytes: float) -> float:
        """Share of local-memory load sectors that hit the L1 when the SM's resident threads' frames take
        ``frame_bytes_per_sm``: all up to ``local_all_hit_frame_ratio`` times the L1's capacity, none from
        ``local_all_miss_frame_ratio``, a straight line between (measured: validate/micro/run_local_frames.py).
        Each thread reads back what it stored moments before, so an LRU walked in lockstep (every warp's store, then
        every warp's load) would miss as soon as the frames passed the capacity; the H100 still hits 92% at twice
        it."""
        return 1.0 - ramp(frame_bytes_per_sm / max(capacity_bytes, 1.0), self.local_all_hit_frame_ratio,
                          self.local_all_miss_frame_ratio)


@dataclass
class L1Stats:
    """What the L1 hit-rate model saw for one memory operation."""

    sectors: int = 0
    sector_hits: int = 0
    requests: int = 0
    requests_all_hit: int = 0
    # requests whose sectors all hit, one or more of them in a line a miss brought in during the same iteration: the
    # request counts as a hit (ncu's) but waits for that fill
    requests_pending: int = 0


class SectorLRU:
    """A fully associative LRU of sector ids with a capacity in sectors."""

    def __init__(self, capacity_sectors: int) -> None:
        self.capacity_sectors = max(int(capacity_sectors), 1)
        self._lines: OrderedDict[int, None] = OrderedDict()

    def access(self, sector_ids, stamp: int = 0) -> tuple[int, int]:
        """Touch ``sector_ids`` in order, a miss stamped with ``stamp``; return how many were already present, and
        how many of those a miss brought in under the same stamp (still on their way)."""
        hits = pending = 0
        lines = self._lines
        for s in sector_ids:
            if s in lines:
                lines.move_to_end(s)
                hits += 1
                pending += lines[s] == stamp
            else:
                lines[s] = stamp
                if len(lines) > self.capacity_sectors:
                    lines.popitem(last=False)
        return hits, pending


def l1_hit_model(stream, capacity_bytes: int, sector_bytes: int, warm_iterations: int) -> dict[str, L1Stats]:
    """Replay an SM's global-load sector stream through an LRU and count hits per operation.

    ``stream`` yields ``(iteration, op_name, per_warp_sector_ids)`` in execution order; iterations below
    ``warm_iterations`` fill the cache but are not counted (steady state), unless nothing else is.
    """
    lru = SectorLRU(capacity_bytes // sector_bytes)
    warm: dict[str, L1Stats] = {}
    steady: dict[str, L1Stats] = {}
    # one stamp for each run of the stream in one iteration (the prologue's loads share the first iteration's, which
    # follow them at once; the epilogue's get their own)
    stamp, last = 0, None
    for it, name, per_warp in stream:
        if it != last:
            stamp, last = stamp + 1, it
        st = (steady if it >= warm_iterations else warm).setdefault(name, L1Stats())
        for ids in per_warp:
            if len(ids) == 0:
                continue
            h, pend = lru.access(ids.tolist(), stamp)
            st.sectors += len(ids)
            st.sector_hits += h
            st.requests += 1
            st.requests_all_hit += h == len(ids)
            st.requests_pending += h == len(ids) and pend > 0
    return {name: steady.get(name, st) for name, st in warm.items()} | steady
