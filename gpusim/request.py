"""What the units share: the :class:`Unit` protocol, the :class:`Request` a memory instruction sends down its path,
and the registry of paths (:data:`PATHS`), keyed by (space, kind).

A unit is built from its spec (``from_spec(spec, clock)``), says what a pattern of accesses costs it before the
simulation starts (a static cost, in its own units of work: cycles of a pipe, bytes of a bandwidth), serves requests
during the simulation (``serve(request, t) -> done``) and lists what it reports (``reported()``: the name its busy
cycles go under, its rate servers and the share of one instance each is).

A memory instruction visits the stages its path names, in order. The engine walks the path: the SM's front (the
LSU queue and the L1TEX pipe, or the TMA engine), then the memory side, where each stage's ``serve`` takes the
request at ``t`` and says when it passes it on. A load whose data is not in a level waits for the next level's
answer: the levels a load may be answered from are the path's ``levels``, nearest first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

# the stages a path may name
LSU, L1TEX, TMA, L2_PORT, L2, L2_WRITE, L2_ATOMICS, HBM, FILL = ("LSU", "L1TEX", "TMA", "L2 port", "L2", "L2 write",
                                                                  "L2 atomics", "HBM", "fill")


@dataclass(frozen=True)
class Path:
    """The stages a request visits, in order, and the levels a load's data may come from, nearest first."""

    stages: tuple[str, ...]
    levels: tuple[str, ...] = ()

    @property
    def front(self) -> tuple[str, ...]:
        """The SM's stages before the memory side."""
        return tuple(s for s in self.stages if s in (LSU, L1TEX, TMA))

    @property
    def memory_side(self) -> tuple[str, ...]:
        """The stages past the SM (its port to the L2, the L2, HBM, the L2's fill of what HBM brought)."""
        return tuple(s for s in self.stages if s not in (LSU, L1TEX, TMA))


_SHARED = Path((LSU, L1TEX), (L1TEX,))
PATHS: dict[tuple[str, str], Path] = {
    # a global load: through the LG queue and the L1TEX pipe; a miss crosses the SM's port to the L2, the L2's read
    # bandwidth, HBM on an L2 miss, and the L2's write path takes what HBM brings (the fill)
    ("global", "ld"): Path((LSU, L1TEX, L2_PORT, L2, HBM, FILL), (L1TEX, L2, HBM)),
    # a store writes through the L1 to the L2's write path; HBM sees the write-backs of evicted dirty lines; a global
    # atomic (kind ``st``) also waits for its lines' turn at the L2's atomic units
    ("global", "st"): Path((LSU, L1TEX, L2_PORT, L2_WRITE, L2_ATOMICS, HBM)),
    # a TMA copy: the SM's copy engine, then the L2 (bypassing L1) and HBM as a load's miss
    ("global", "tma"): Path((TMA, L2_PORT, L2, HBM, FILL), (L2, HBM)),
    # a TMA store: the copy engine reads the box out of shared memory and sends it to the L2's write path, as a
    # store's sectors (bypassing L1); HBM sees the write-backs
    ("global", "tma_st"): Path((TMA, L2_PORT, L2_WRITE, HBM)),
    # shared memory: the MIO queue and the L1TEX pipe (its wavefronts)
    ("shared", "ld"): _SHARED, ("shared", "st"): _SHARED, ("shared", "ldsm"): _SHARED, ("shared", "stsm"): _SHARED,
}


def path_of(space: str, kind: str) -> Path:
    """The path of a memory instruction of ``space`` and ``kind`` (the IR checks them: :data:`gpusim.ir.SPACES`)."""
    return PATHS[(space, kind)]


class Request:
    """One memory instruction's traffic past the SM, as the memory side sees it: what it asks of each stage and
    when each stage took and passed it (filled in by the stages' ``serve``).

    ``weight``: the real CTAs the requesting CTA stands for (the chip-wide stages see the request that many times;
    the SM's own port once). ``ledger``: the requesting warp's work per rate server (the fast-forward's)."""

    __slots__ = ("ledger", "weight", "l2_bytes", "hbm_bytes", "write_cycles", "read_cost", "hbm_cost",
                 "port_done", "l2_arrive", "l2_done", "hbm_arrive", "hbm_done", "atomic", "atomic_done")

    def __init__(self, ledger: dict, weight: float, l2_bytes: float, hbm_bytes: float, write_cycles: float = 0.0,
                 read_cost: float | None = None, hbm_cost: float = 1.0) -> None:
        self.ledger = ledger
        self.weight = weight
        self.l2_bytes = l2_bytes  # bytes through the port (and, unless ``read_cost`` says otherwise, the L2)
        self.hbm_bytes = hbm_bytes  # bytes HBM moves per real CTA (reads of a miss, or write-backs)
        self.write_cycles = write_cycles  # a store's cycles of the L2 write path per real CTA
        self.read_cost = read_cost  # a load's bytes of the L2 read bandwidth per real CTA (None: its bytes)
        self.hbm_cost = hbm_cost  # HBM time per byte over a stream's
        self.port_done = self.l2_arrive = self.l2_done = self.hbm_arrive = self.hbm_done = 0.0
        # a global atomic: the servers of the L2's atomic units it loads (its line, its slice) and the nanoseconds of
        # requests it puts on each for every real CTA sharing them (:mod:`gpusim.memory.l2_atomics`); None: none
        self.atomic = None
        self.atomic_done = 0.0  # when the L2's atomic units have applied it


def walk(stages: tuple, request: Request, t: float) -> float:
    """Send ``request`` through the memory-side ``stages`` (units) from ``t``; when the last passes it on. A request
    with no bytes for the L2 (its data all in the L1, a copy of nothing) leaves the SM not at all."""
    request.port_done = request.l2_arrive = request.l2_done = request.hbm_arrive = request.hbm_done = t
    if request.l2_bytes <= 0:
        return t
    for stage in stages:
        t = stage.serve(request, t)
    return t


def misses(counts: dict, key: str, fraction: float) -> bool:
    """Deterministically true for a ``fraction`` share of successive calls with ``key`` (a Bresenham counter in
    ``counts``): which executions of an instruction miss a level, at the level's miss fraction."""
    n = counts.get(key, 0)
    counts[key] = n + 1
    return math.floor((n + 1) * fraction + 1e-9) > math.floor(n * fraction + 1e-9)


class Unit(Protocol):
    """A hardware unit of the chip model (the module docstring)."""

    @classmethod
    def from_spec(cls, spec: Any, clock: Any) -> Unit: ...

    def serve(self, request: Any, t: float) -> float: ...

    def reported(self) -> list[tuple[str, Any, float]]: ...
