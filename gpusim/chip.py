"""The builder: wires a hardware config and a kernel into the chip model and runs it.

Steps, each owned by its unit: occupancy (``sm.occupancy``), exact per-warp access counts
(``patterns``), L1 hit rates from the SM's sector stream (``memory.l1``), L2 hit rates and DRAM bytes
from CTA waves in launch order (``memory.l2``), each memory operation's static costs on the units of its path
(:func:`_timings`: the units' spec methods), then the discrete-event chip model (``engine``): a few
representative SMs, each CTA they run standing for the real CTAs it samples, against the chip-wide L2 and HBM. The
SM clock the kernel runs at is the clock model's (``sm.clock``).

Which CTAs the representatives run: for every full wave of the real chip (``sm_count x ctas_per_sm``
CTAs), ``representatives x ctas_per_sm`` CTAs sampled evenly from it, each standing for ``sm_count /
representatives`` real ones; for the tail wave of ``t`` CTAs, ``ceil(t / that)`` CTAs sampled from it, each
standing for an equal share of ``t`` (so a lone tail CTA is one real CTA with the chip to itself). A
persistent kernel's representatives are persistent CTAs with their real tile lists.
"""

from __future__ import annotations

from collections.abc import Callable

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from gpusim import patterns
from gpusim.config import HardwareConfig
from gpusim.engine import ChipModel, ChipResult, CtaWork, MemTiming
from gpusim.ir import STORES, Compute, Kernel, KernelError, Loop, Mem, instructions_per_warp
from gpusim.memory import l2_atomics
from gpusim.memory.l1 import L1Stats, l1_hit_model
from gpusim.memory.l2 import (L2Footprint, L2Result, cap_at_requests, cap_reads_when_everything_fits, fitting_footprint,
                              l2_model)
from gpusim.sm.clock import at_sm_clock, sm_clock_hz_for, tensor_activity
from gpusim.sm.occupancy import LaunchError, Occupancy, occupancy

# Algorithmic, not hardware (the hardware numbers come from the config): how much of the address stream the cache
# models replay. L1: loop iterations that warm the LRU before counting, and iterations replayed; L2: chunks the
# K loop is cut into, CTA waves followed before the rest is extrapolated, and loop iterations whose addresses are
# evaluated per chunk (the rest scaled).
L1_WARM_ITERATIONS = 8
L1_SAMPLE_ITERATIONS = 24
L2_CHUNKS = 16
L2_MAX_WAVES = 12
L2_SAMPLE_ITERATIONS = 8
REPRESENTATIVE_SMS = 2  # SMs simulated in detail (tests/test_chip_model.py shows the answer converges)
TRIP_SAMPLES = 4096  # CTAs whose loop trips are averaged when a grid is larger
ATOMIC_SHARING_SAMPLES = 32  # CTAs sampled evenly over the grid to tell how many share a global atomic's lines


@dataclass
class Simulation:
    """Everything one run produced; :mod:`gpusim.metrics` turns it into a report."""

    kernel: Kernel
    config: HardwareConfig
    occ: Occupancy
    pats: dict[str, patterns.MemPattern]  # the interior CTAs' (classes[0])
    l1: dict[str, L1Stats]
    l2: L2Result
    result: ChipResult
    representatives: int  # SMs simulated in detail
    in_loop: dict[str, bool]  # whether each memory op sits in the outer loop
    classes: list[patterns.CtaClass]  # CTAs by access pattern, the interior first
    trip_scale: float = 1.0  # mean over CTAs of their outer-loop trips / the kernel's loop trips
    clock_hz: float = 0.0  # the SM clock this run was simulated at (0: the config's)

    @property
    def total_cycles(self) -> float:
        return self.result.cycles


PROLOGUE, LOOP, EPILOGUE = "prologue", "loop", "epilogue"


def _structure(kernel: Kernel) -> dict[str, tuple[bool, int, str]]:
    """For each memory op: (in the outer loop, inner trips, part of the program)."""
    out = {}

    def visit(ops, part, inner):
        for op in ops:
            if isinstance(op, Loop):
                visit(op.body, part, op.trips)
            elif isinstance(op, Mem):
                out[op.name] = (part == LOOP, inner, part)

    visit(kernel.prologue, PROLOGUE, 1)
    if kernel.loop is not None:
        visit(kernel.loop.body, LOOP, 1)
    visit(kernel.epilogue, EPILOGUE, 1)
    return out


def per_warp_total(p: patterns.MemPattern, arr: np.ndarray, in_loop: bool, trips: int) -> np.ndarray:
    """Sum of a per-execution count over the whole kernel, per warp."""
    per_it = arr.sum(axis=1)  # (period [+ last], warps): inner iterations summed
    if not in_loop:
        return per_it[0]
    extra = 0
    if p.last and trips > 1:  # the ragged last iteration has its own row
        trips, extra = trips - 1, per_it[p.period]
    steady = per_it[:p.period]
    full, rest = divmod(trips, p.period)
    return full * steady.sum(axis=0) + steady[:rest].sum(axis=0) + extra


def class_totals(classes: list[patterns.CtaClass], name: str, field: str, in_loop: bool, trips: int) -> float:
    """One operation's count ``field`` summed over every real CTA of the grid, each class of CTAs with its own
    pattern."""
    return sum(float(per_warp_total(c.pats[name], getattr(c.pats[name], field), in_loop, trips).sum()) * c.count
               for c in classes)


def _l1_stream(kernel, pats, structure, ctas, sm_count, geo, iterations):
    local = kernel.local_tensors  # local loads: L1Spec.local_hit_fraction (chip._local_l1)
    ops = [p.op for p in pats.values() if p.op.space == "global" and p.op.kind == "ld" and p.op.tensor not in local]
    residents = [patterns.cta_coords(kernel, c * sm_count) for c in range(ctas)
                 if c * sm_count < kernel.launch.num_ctas]

    def part(name, its):
        for it in its:
            for op in (o for o in ops if structure[o.name][2] == name):
                for j in range(structure[op.name][1]):
                    for cta in residents:
                        yield it, op.name, patterns.warp_sector_ids(kernel, op, cta, it, j, geo)

    yield from part(PROLOGUE, [0])
    yield from part(LOOP, range(iterations))
    yield from part(EPILOGUE, [0])


def _local_l1(kernel, pats, structure, trips, spec, ctas_per_sm: int, capacity: int) -> dict[str, L1Stats]:
    """The L1 hits of each local-memory load (a stack frame read back by its own thread): the share
    :meth:`gpusim.memory.l1.L1Spec.local_hit_fraction` gives for the frames of the SM's resident CTAs, for its
    sectors and, alike, its requests (a warp's frame lines are resident or gone together)."""
    local = kernel.local_tensors
    if not local:
        return {}
    per_cta = sum(t.size_bytes for t in kernel.tensors if t.name in local) / kernel.launch.num_ctas
    h = spec.local_hit_fraction(per_cta * min(ctas_per_sm, kernel.launch.num_ctas), capacity)
    out = {}
    for name, p in pats.items():
        if p.op.space == "global" and p.op.kind == "ld" and p.op.tensor in local:
            in_loop = structure[name][0]
            sectors = round(float(per_warp_total(p, p.sectors, in_loop, trips).sum()))
            requests = round(float(per_warp_total(p, p.instructions, in_loop, trips).sum()))
            out[name] = L1Stats(sectors, round(sectors * h), requests, round(requests * h))
    return out


def _footprints(kernel, pats, structure, l1, trips, chunks, geo, hbm, l2spec) -> list[L2Footprint]:
    sector_bytes = geo.sector_bytes
    out = []
    per_chunk = max(trips // chunks, 1)
    gx, gy, gz = kernel.launch.grid
    probe = [(0, 0, 0), (1 % gx, 0, 0), (0, 1 % gy, 0), (0, 0, 1 % gz)]
    local = kernel.local_tensors
    seen = []  # per global op: (pattern, in loop, inner trips, sector ids of the first iteration, dependence,
    #            sector ids of the sampled iterations, of their first half)
    for p in pats.values():
        op = p.op
        if op.space != "global":
            continue
        in_loop, inner, _ = structure[op.name]
        sampled = min(per_chunk, L2_SAMPLE_ITERATIONS)
        its = range(sampled) if in_loop else [0]
        base0 = patterns.cta_sector_ids(kernel, op, probe[0], [0], inner, geo)
        depends = tuple(probe[d + 1] != probe[0] and not np.array_equal(
            base0, patterns.cta_sector_ids(kernel, op, probe[d + 1], [0], inner, geo)) for d in range(3))
        base = patterns.cta_sector_ids(kernel, op, probe[0], its, inner, geo)
        half = None
        if in_loop and per_chunk > sampled:
            half = patterns.cta_sector_ids(kernel, op, probe[0], range(sampled // 2), inner, geo)
        seen.append((p, in_loop, inner, base0, depends, base, half))
    # ops that touch the same fetch blocks of one tensor (a stencil's neighbouring loads, a loop unrolled into one
    # load per element) hold the same data: one tile of their union, so their bytes are counted once
    union = _shared_data(seen, sector_bytes, hbm.fetch_granularity_bytes)
    # a group's stores each write their own bytes of the union: each its share of it (by its own sectors), so that
    # the group writes the union once (loads share the union's tiles instead: the first fetches, the others hit)
    own_sectors: dict[int, int] = {}
    for i, merged in union.items():
        own_sectors[id(merged)] = own_sectors.get(id(merged), 0) + len(seen[i][5])
    members: dict[int, list] = {}  # a union's ops (by the union's identity)
    for i, merged in union.items():
        members.setdefault(id(merged), []).append(seen[i][0].op)
    for i, (p, in_loop, _, base0, depends, base, half) in enumerate(seen):
        op = p.op
        sampled = min(per_chunk, L2_SAMPLE_ITERATIONS)
        store_share = 1.0
        if i in union:
            if op.kind in STORES:
                store_share = len(base) / max(own_sectors[id(union[i])], 1)
            base0, base, half = union[i]
        if in_loop:  # distinct bytes of a chunk: exact when it is short, else the sampled iterations' and what
            # each further one adds (a two-point fit over the first half and all of the sample, so iterations
            # that share sectors in pairs or fours are counted right)
            distinct = float(len(base))
            if per_chunk > sampled:
                distinct += (len(base) - len(half)) / (sampled - sampled // 2) * (per_chunk - sampled)
            tile = distinct * sector_bytes * trips / (per_chunk * chunks)
        else:
            tile = len(base) * sector_bytes
            if op.kind == "ld" and any(depends) and op.tensor not in local:
                group = members.get(id(union[i]), [op]) if i in union else [op]
                tile *= _new_share(kernel, group, depends, structure[group[0].name][1], geo, l2spec, tile)
        # the data this op's tiles are: ops that read (or write) the same bytes share L2 tiles; local memory's are the
        # CTA's stack frame, the same in every chunk of the loop (a spill is reloaded from where it was stored)
        data = (int(base0[0]) if len(base0) else -1, len(base0), depends)
        invariant = op.tensor in local
        if invariant:
            data = ("stack frame",)
        req = float(per_warp_total(p, p.sectors, in_loop, trips).sum())
        if op.kind == "ld":
            st = l1.get(op.name)
            req *= 1 - (st.sector_hits / st.sectors if st and st.sectors else 0.0)
        scale = 1.0 / chunks if not in_loop else 1.0
        loads = op.kind in ("ld", "tma")
        fetch = hbm.fetch_ratio(base, sector_bytes) if loads else 1.0
        isolated = hbm.isolated_share(base, sector_bytes) if loads else 0.0
        # the L2 sees a write, whichever unit sends it (a TMA store's, as the LSU's)
        out.append(L2Footprint(op.name, op.tensor, "st" if op.kind in STORES else op.kind, depends, data,
                               tile_bytes_per_chunk=tile * scale * store_share,
                               request_sectors_per_chunk=req / chunks, fetch_ratio=fetch, in_loop=in_loop,
                               isolated_share=isolated, invariant=invariant))
    _map_onto_loop_chunks(kernel, seen, out, union, structure, trips, chunks, probe[0], geo)
    return _share_gathered_tensors(kernel, out, l2spec, chunks)


def _map_onto_loop_chunks(kernel, seen, out, union, structure, trips, chunks, cta, geo) -> None:
    """Loads before or after the loop that read bytes the loop reads (a norm's or a softmax's later passes over the
    row its loop read first, or earlier passes unrolled before a loop that reads the row again) read the loop's
    chunk tiles, in program order, before its chunks (prologue) or after them (epilogue), so that the L2 finds them
    as far as the bytes touched since their last use allow: spread over the chunks beside the loop, as other ops
    outside the loop are, a pass would find the row it read moments before whatever the rows of the wave in between.
    Each such op's ``phase_tiles`` name (a loop op of the tiles' data, chunk, share of the chunk's tile it reads); the
    share of its bytes the loop does not read stays its own tile."""
    loops: dict[tuple, dict] = {}  # (tensor, dependence) -> data group of the loop's loads -> their ops' indices
    for i, (p, in_loop, _, _, depends, _, _) in enumerate(seen):
        if in_loop and p.op.kind == "ld" and p.op.tensor not in kernel.local_tensors:
            group = id(union[i]) if i in union else i
            loops.setdefault((p.op.tensor, depends), {}).setdefault(group, []).append(i)
    if not loops or trips < 2:
        return
    chunk_sets: dict = {}  # data group -> its sector ids per chunk of the loop
    spans: dict = {}  # data group -> its first and last sector ids over the loop (no sectors: None)

    def span_of(members):
        key = members[0]
        if key not in spans:
            ends = patterns.cta_sector_ids(kernel, seen[key][0].op, cta, [0, trips - 1], seen[key][2], geo)
            spans[key] = (ends.min(), ends.max()) if len(ends) else None
        return spans[key]

    def sets_of(members):
        key = members[0]
        if key not in chunk_sets:
            bounds = [q * trips // chunks for q in range(chunks + 1)]
            chunk_sets[key] = [np.unique(np.concatenate([
                patterns.cta_sector_ids(kernel, seen[j][0].op, cta, range(bounds[q], bounds[q + 1]), seen[j][2], geo)
                for j in members])) for q in range(chunks)]
        return chunk_sets[key]

    for i, (p, in_loop, _, _, depends, own, _) in enumerate(seen):
        if in_loop or p.op.kind != "ld" or (p.op.tensor, depends) not in loops or not len(own):
            continue
        tiles, covered = [], 0
        for members in loops[(p.op.tensor, depends)].values():
            span = span_of(members)
            if span is None or own.max() < span[0] or own.min() > span[1]:
                continue
            for q, sectors in enumerate(sets_of(members)):
                n = np.intersect1d(own, sectors, assume_unique=True).size
                if n:
                    tiles.append((seen[members[0]][0].op.name, q, n / len(sectors)))
                    covered += n
        if tiles:
            rest = max(1.0 - covered / len(own), 0.0)
            out[i] = dataclasses.replace(out[i], tile_bytes_per_chunk=out[i].tile_bytes_per_chunk * rest,
                                         phase_tiles=tuple(tiles), after_loop=structure[p.op.name][2] == EPILOGUE)
    # the other ops of a part whose loads read the loop's tiles take their places among those reads (a row's stores
    # between its second and third passes push lines out between them)
    phased = {o.after_loop for o in out if o.phase_tiles}
    for i, (p, in_loop, _, _, _, _, _) in enumerate(seen):
        after = structure[p.op.name][2] == EPILOGUE
        if not in_loop and not out[i].phase_tiles and after in phased and p.op.tensor not in kernel.local_tensors:
            out[i] = dataclasses.replace(out[i], in_phase=True, after_loop=after)


def _new_share(kernel, ops, depends, inner: int, geo, l2spec, tile_bytes: float) -> float:
    """The share of a CTA's tile of loaded data (``ops``' sectors, outside the loop) that no CTA launched just before it
    loaded: a stencil's halo is its neighbours' data. For each grid dimension the tile depends on, the sectors it shares
    with the CTA one step back in that dimension, which the L2 still holds when that CTA's reuse distance (the CTAs
    launched between, a tile each, a copy in each partition) is short (:meth:`L2Spec.reuse_miss_fraction`). 1 where
    neighbours share nothing."""
    grid = kernel.launch.grid
    cta = tuple(min(1, g - 1) for g in grid)

    def sectors(c):
        return np.unique(np.concatenate([patterns.cta_sector_ids(kernel, op, c, [0], inner, geo) for op in ops]))

    mine = sectors(cta)
    if not len(mine):
        return 1.0
    shared = 0.0
    step = 1
    for d in range(3):
        if depends[d] and cta[d] >= 1:
            back = tuple(c - (k == d) for k, c in enumerate(cta))
            overlap = len(np.intersect1d(mine, sectors(back), assume_unique=True)) / len(mine)
            if overlap:
                distance = step * tile_bytes * l2spec.read_copies
                shared += overlap * (1.0 - l2spec.reuse_miss_fraction(distance))
        step *= grid[d]
    return max(1.0 - shared, 0.0)


def _share_gathered_tensors(kernel, fps: list[L2Footprint], spec, chunks: int) -> list[L2Footprint]:
    """Loads and stores whose addresses come from data (``Kernel.varying``: a gather's ``x[col[j]]``, a scatter's
    ``atomicAdd(&out[idx[i]], v)``) get a tile per CTA, as if no two CTAs touched the same bytes; every CTA's tile
    would be new data. Where their tensor fits in the L2 (its copies counted), the bytes all CTAs fetch (or dirty)
    together are at most the tensor: each CTA's tiles are scaled so that the grid's sum is no more than the tensor's
    size (what every CTA brings is, on the whole, what no earlier CTA brought), and the data other operations keep in
    the L2 is not pushed out by copies that do not exist."""
    varying = kernel.varying
    if not varying:
        return fps
    gx, gy, gz = kernel.launch.grid
    ctas = gx * gy * gz
    sizes = {t.name: t.size_bytes for t in kernel.tensors}
    per_data: dict[tuple, float] = {}  # ops with the same data share their tiles (chip._shared_data): once each
    gathered = [fp for fp in fps if fp.kind in ("ld", "st") and fp.name in varying]
    names = {fp.name for fp in gathered}
    for fp in gathered:
        # a CTA moves its tile in each of the chunks (what is outside the loop, a share in each)
        key = (fp.tensor, fp.kind, fp.data)
        per_data[key] = max(per_data.get(key, 0.0), fp.tile_bytes_per_chunk * fp.fetch_ratio * chunks)
    fetched: dict[tuple, float] = {}  # (tensor, direction) -> bytes per CTA
    for (tensor, kind, _), b in per_data.items():
        fetched[tensor, kind] = fetched.get((tensor, kind), 0.0) + b
    out = []
    for fp in fps:
        size = sizes.get(fp.tensor, 0)
        total = fetched.get((fp.tensor, fp.kind), 0.0) * ctas
        copies = spec.read_copies if fp.kind == "ld" else 1
        if fp.name in names and size and size * copies <= spec.size_bytes and total > size:
            fp = dataclasses.replace(fp, tile_bytes_per_chunk=fp.tile_bytes_per_chunk * size / total)
        out.append(fp)
    return out


def _shared_data(seen: list, sector_bytes: int, granularity_bytes: int) -> dict[int, tuple]:
    """Groups of global ops of one tensor, direction (loads, stores), loop part and block dependence whose first
    CTA's sampled sectors fall in common fetch blocks (``granularity_bytes``): for each op of a group of two or
    more, the union of the group's sector ids (first iteration, sampled iterations, their first half)."""
    per = max(granularity_bytes // sector_bytes, 1)
    keys: dict[tuple, list[int]] = {}
    for i, (p, in_loop, _, _, depends, _, _) in enumerate(seen):
        op = p.op
        keys.setdefault((op.tensor, op.kind in ("ld", "tma"), in_loop, depends), []).append(i)
    out: dict[int, tuple] = {}
    for members in keys.values():
        if len(members) < 2:
            continue
        parent = {i: i for i in members}

        def find(i, parent=parent):
            while parent[i] != i:
                i = parent[i]
            return i

        blocks = {i: np.unique(seen[i][5] // per) for i in members}
        for a, i in enumerate(members):
            for j in members[a + 1:]:
                if find(i) != find(j) and np.intersect1d(blocks[i], blocks[j], assume_unique=True).size:
                    parent[find(j)] = find(i)
        groups: dict[int, list[int]] = {}
        for i in members:
            groups.setdefault(find(i), []).append(i)
        for g in groups.values():
            if len(g) < 2:
                continue
            halves = [seen[i][6] for i in g]
            merged = (np.unique(np.concatenate([seen[i][3] for i in g])),
                      np.unique(np.concatenate([seen[i][5] for i in g])),
                      None if any(h is None for h in halves) else np.unique(np.concatenate(halves)))
            for i in g:
                out[i] = merged
    return out


def _live_bytes(kernel: Kernel, t, resident_ctas: int) -> int:
    """The bytes of tensor ``t`` that exist at once: all of it, or for local memory (``Tensor.local``) the frames of
    the CTAs resident together (the CTAs that follow reuse them)."""
    if not t.local:
        return t.size_bytes
    return t.size_bytes * min(resident_ctas, kernel.launch.num_ctas) // kernel.launch.num_ctas


def _fitting_footprint(kernel: Kernel, pats, spec, resident_ctas: int) -> float | None:
    """:func:`gpusim.memory.l2.fitting_footprint` of the global tensors the kernel touches."""
    used = {p.op.tensor for p in pats.values() if p.op.space == "global"}
    read = {p.op.tensor for p in pats.values() if p.op.space == "global" and p.op.kind in ("ld", "tma")}
    return fitting_footprint(spec, [(_live_bytes(kernel, t, resident_ctas), t.name in read) for t in kernel.tensors
                                    if t.name in used])


def _cap_reads_when_everything_fits(kernel: Kernel, pats, l2, fitting: float | None, resident_ctas: int) -> None:
    """:func:`gpusim.memory.l2.cap_reads_when_everything_fits` over the global tensors the kernel touches."""
    used = {p.op.tensor for p in pats.values() if p.op.space == "global"}
    reads = [(_live_bytes(kernel, t, resident_ctas),
              [n for n, p in pats.items() if p.op.tensor == t.name and p.op.kind in ("ld", "tma")])
             for t in kernel.tensors if t.name in used]
    cap_reads_when_everything_fits(l2, reads, fitting)


def _slot_keys(kernel: Kernel, pats, resident_ctas: int) -> dict:
    """Per operation on local memory (``Tensor.local``), a function from linear CTA indices to the thread slots whose
    frames they use: a CTA reuses the frames of the CTA ``resident_ctas`` before it (the slot it took over)."""
    local = kernel.local_tensors
    return {n: (lambda lin, r=resident_ctas: np.asarray(lin, dtype=np.int64) % r)
            for n, p in pats.items() if p.op.space == "global" and p.op.tensor in local}


def _shares_sectors_with_neighbours(kernel, op, geo) -> bool:
    """Whether neighbouring CTAs address different bytes of the same sectors (a CTA's data is smaller than a sector,
    as a reduction's one partial sum per CTA): keyed by CTA coordinates, each would hold a sector of its own."""
    gx, gy, gz = kernel.launch.grid
    base = patterns.eval_addresses(kernel, op, (0, 0, 0), 0, 0, geo.lanes)
    base = base[base >= 0]
    for probe in [(1, 0, 0)] * (gx > 1) + [(0, 1, 0)] * (gy > 1) + [(0, 0, 1)] * (gz > 1):
        other = patterns.eval_addresses(kernel, op, probe, 0, 0, geo.lanes)
        other = other[other >= 0]
        if base.size and other.size and not np.array_equal(base, other) and \
                np.array_equal(np.unique(base // geo.sector_bytes), np.unique(other // geo.sector_bytes)):
            return True
    return False


def _data_keys(kernel, pats, geo, names=None):
    """Per global op (of ``names``, or all), a function from linear CTA indices to the first sector each CTA's tile
    starts at."""
    out = {}
    for name, p in pats.items():
        if p.op.space != "global" or (names is not None and name not in names):
            continue

        def key(lin, op=p.op):
            firsts = []
            for i in np.asarray(lin).tolist():
                a = patterns.eval_addresses(kernel, op, patterns.cta_coords(kernel, i), 0, 0, geo.lanes)
                firsts.append(int(a[a >= 0].min()) // geo.sector_bytes if (a >= 0).any() else -1)
            return np.array(firsts, dtype=np.int64)
        out[name] = key
    return out


def _timings(cfg, pats, l1, l2, hbm_cost=None, local=frozenset()) -> dict[str, MemTiming]:
    """Each memory operation's static costs on the units of its path (:data:`gpusim.request.PATHS`), per pattern
    row, inner iteration and warp: the L1TEX pipe's cycles, the bytes it sends to the L2 and HBM, what they cost the
    L2's read bandwidth or write path, and the latency of the level that answers a hit."""
    out = {}
    sb = cfg.l2.sector_bytes
    for name, p in pats.items():
        op = p.op
        if op.space == "shared":  # the MIO queue and the L1TEX pipe: the access's wavefronts
            z = np.zeros_like(p.wavefronts, dtype=float)
            extra = None
            if op.kind in ("ld", "st") and not op.atomic:  # conflicting wavefronts follow slower than the pipe
                extra = cfg.shared_memory.conflict_pace_cycles(p.wavefronts, p.ideal_wavefronts, p.instructions)
            out[name] = MemTiming(l1tex_cycles=cfg.shared_memory.pipe_cycles(p.wavefronts),
                                  instructions=p.instructions, period=p.period, l2_bytes=z, hbm_bytes=z,
                                  l1_miss_fraction=0.0, l2_miss_fraction=0.0,
                                  latency_hit_cycles=cfg.shared_memory.latency_cycles(op.kind),
                                  conflict_pace_cycles=extra)
            continue
        if op.kind == "tma":  # one instruction; bypasses L1; bytes to L2, misses to HBM
            l2b = p.sectors * sb * 1.0
            # each row of the box is a line request of the L2, as an L1 miss is: narrow rows cost more per byte
            # (measured: validate/measurements/h100/tmabox-2026-11-24.json, all SMs from L2: 2.1 / 2.3 / 4.3 cycles
            # per row of 32 / 64 / 128 B per SM, the L2's line-request rate and then its bandwidth)
            cost = cfg.l2.read_cost_bytes(p.lines, p.sectors, cfg.l1.line_bytes)
            out[name] = MemTiming(l1tex_cycles=np.zeros_like(l2b), instructions=(p.instructions > 0).astype(np.int64),
                                  period=p.period, l2_bytes=l2b,
                                  hbm_bytes=l2b * l2.dram_bytes_per_request_byte(name, sb), l1_miss_fraction=1.0,
                                  l2_miss_fraction=l2.latency_miss_fraction(name, sb),
                                  latency_hit_cycles=cfg.tma.l2_latency_cycles, l2_read_cost=cost)
            continue
        if op.kind == "tma_st":  # one instruction; the copy engine reads the box out of shared memory and writes it
            # to the L2's write path (L1 bypassed), as a store's sectors; HBM sees the write-backs
            l2b = p.sectors * sb * 1.0
            written = l2.dram_write_bytes.get(name, 0.0)
            req = l2.request_sectors.get(name, 0.0) * sb
            out[name] = MemTiming(l1tex_cycles=np.zeros_like(l2b), instructions=(p.instructions > 0).astype(np.int64),
                                  period=p.period, l2_bytes=l2b, hbm_bytes=l2b * (written / req if req else 0.0),
                                  l1_miss_fraction=0.0, l2_miss_fraction=0.0,
                                  latency_hit_cycles=cfg.tma.l2_latency_cycles,
                                  l2_write_cycles=cfg.l2.write_cycles(p.lines, p.sectors))
            continue
        l1cyc = cfg.l1.pipe_cycles(p.lines, p.sectors, sb, local=op.tensor in local)
        if op.kind == "ld":
            st = l1.get(name) or L1Stats()
            h1 = st.sector_hits / st.sectors if st.sectors else 0.0
            m1 = 1 - st.requests_all_hit / st.requests if st.requests else 1.0
            pending = st.requests_pending / st.requests if st.requests else 0.0
            l2b = p.sectors * sb * (1 - h1)
            cost = cfg.l2.read_cost_bytes(p.lines, p.sectors, cfg.l1.line_bytes) * (1 - h1)
            out[name] = MemTiming(l1tex_cycles=l1cyc, instructions=p.instructions, period=p.period, l2_bytes=l2b,
                                  hbm_bytes=l2b * l2.dram_bytes_per_request_byte(name, sb), l1_miss_fraction=m1,
                                  l2_miss_fraction=l2.latency_miss_fraction(name, sb),
                                  latency_hit_cycles=cfg.l1.hit_latency_cycles, l2_read_cost=cost,
                                  hbm_cost=(hbm_cost or {}).get(name, 1.0), l1_pending_fraction=pending)
        else:
            l2b = p.sectors * sb * 1.0
            written = l2.dram_write_bytes.get(name, 0.0)
            req = l2.request_sectors.get(name, 0.0) * sb
            frac = written / req if req else 0.0
            out[name] = MemTiming(l1tex_cycles=l1cyc, instructions=p.instructions, period=p.period, l2_bytes=l2b,
                                  hbm_bytes=l2b * frac, l1_miss_fraction=0.0, l2_miss_fraction=0.0,
                                  latency_hit_cycles=cfg.l1.hit_latency_cycles,
                                  l2_write_cycles=cfg.l2.write_cycles(p.lines, p.sectors))
    # a ragged last iteration has a row of its own in every array
    return {n: dataclasses.replace(t, last=pats[n].last) if pats[n].last else t for n, t in out.items()}


def _atomics(kernel: Kernel, classes: list[patterns.CtaClass], timings: list[dict[str, MemTiming]], cfg,
             geo: patterns.AccessGeometry) -> None:
    """Each global atomic's load on the L2's atomic units (:mod:`gpusim.memory.l2_atomics`) joins its timing: per
    pattern row, inner iteration and warp of its class's CTA, the line and the slice it loads most and the nanoseconds
    of its requests on each, and the chance that another CTA's warp loads the same line or slice."""
    trips = patterns.loop_trips(kernel)
    shares: dict[str, tuple[float, float]] = {}
    for c, ts in zip(classes, timings, strict=True):
        for name, p in c.pats.items():
            op = p.op
            if op.space != "global" or not op.atomic:
                continue
            costs = l2_atomics.AtomicCosts.of(cfg.l2, geo.line_bytes, op.float_atomic)
            if name not in shares:
                shares[name] = _atomic_sharing(kernel, op, geo, costs.slice_bytes)
            base = kernel.tensor_base(op.tensor)
            shape = p.instructions.shape
            out = (np.full(shape, -1, dtype=np.int64), np.zeros(shape), np.full(shape, -1, dtype=np.int64),
                   np.zeros(shape))
            for r in range(shape[0]):
                it = trips - 1 if p.last and r == p.period else r  # the rows are iterations 0.., the last apart
                for j in range(shape[1]):
                    a = patterns.eval_addresses(kernel, op, c.cta, it, j, geo.lanes)
                    got = l2_atomics.hottest(np.where(a >= 0, a + base, -1), op.width_bytes, costs)
                    for arr, v in zip(out, got, strict=True):
                        arr[r, j] = v
            ts[name] = dataclasses.replace(ts[name], atomic_line=out[0], atomic_line_ns=out[1], atomic_slice=out[2],
                                           atomic_slice_ns=out[3], atomic_sharing=shares[name])


def _atomic_shifts(kernel: Kernel, classes, timings, works, geo, slice_bytes: int, class_of) -> None:
    """Each global atomic's lines (and slices) for each representative CTA, as a shift from its class's CTA's: the
    first executing lane's address in the two CTAs (a counter: none; ``out[blockIdx.x % 64]``: the CTA's own slot's
    line), so the representatives load the L2 atomic units' servers of their own lines."""
    for i, (c, ts) in enumerate(zip(classes, timings, strict=True)):
        for name, tm in ts.items():
            if tm.atomic_line is None:
                continue
            op = c.pats[name].op

            def first(cta, op=op):
                a = patterns.eval_addresses(kernel, op, cta, 0, 0, geo.lanes)
                a = a[a >= 0]
                return int(a[0]) if a.size else None

            own = first(c.cta)
            shifts = {}
            for w in works:
                at = first(patterns.cta_coords(kernel, w.index)) if class_of(w.index) == i else None
                if own is not None and at is not None and at != own:
                    shifts[w.index] = (at // geo.line_bytes - own // geo.line_bytes,
                                       at // slice_bytes - own // slice_bytes)
            ts[name] = dataclasses.replace(tm, atomic_shifts=shifts)


def _atomic_sharing(kernel: Kernel, op: Mem, geo: patterns.AccessGeometry, slice_bytes: int) -> tuple[float, float]:
    """The chance that another CTA's warp puts ``op``'s atomics on a line, and on a slice, one CTA's same warp loads
    (:func:`gpusim.memory.l2_atomics.sharing`), from :data:`ATOMIC_SHARING_SAMPLES` CTAs spread evenly over the grid
    at the loop's first iteration."""
    n = kernel.launch.num_ctas
    s = min(ATOMIC_SHARING_SAMPLES, n)
    lins = sorted({round(i * (n - 1) / (s - 1)) for i in range(s)}) if s > 1 else [0]
    base = kernel.tensor_base(op.tensor)
    arrays = [patterns.eval_addresses(kernel, op, patterns.cta_coords(kernel, lin), 0, 0, geo.lanes) for lin in lins]
    # CTAs outside those the front-end emulated copy one that was where their addresses follow no stride (data,
    # blockIdx % 64): pairs of identical addresses tell nothing unless every pair is one (a counter)
    identical = [[np.array_equal(x, y) for y in arrays] for x in arrays]

    def keys(unit: int) -> list[list[frozenset]]:
        return [[frozenset(((w[w >= 0] + base) // unit).tolist()) for w in np.moveaxis(a, 1, 0)] for a in arrays]

    return (l2_atomics.sharing(keys(geo.line_bytes), identical), l2_atomics.sharing(keys(slice_bytes), identical))


def loop_code_instructions(kernel: Kernel, warp_size: int) -> int:
    """SASS instructions of the outer loop: the kernel's own figure (``loop_sass_instructions``, from
    ``gpusim sass``) or, without one, the most instructions one warp issues per iteration, inner loops taken as
    unrolled (``gpusim.ir.instructions_per_warp``; exact for the fully unrolled FP32 rungs)."""
    if kernel.loop_sass_instructions or kernel.loop is None:
        return kernel.loop_sass_instructions
    warps = -(-kernel.launch.threads_per_block // warp_size)
    return max(instructions_per_warp(kernel.loop.body, w) for w in range(warps))


def _even(lo: int, count: int, span: float) -> list[int]:
    """``count`` indices spread evenly over ``[lo, lo + span)`` (the middle of each share)."""
    return [lo + int((i + 0.5) * span / count) for i in range(count)]


MERGED_WAVES = 8  # algorithmic: full waves of unequal CTAs simulated one by one before consecutive ones merge
MIN_MERGED_TRIPS = 64  # algorithmic: merge only CTAs whose loops dwarf their prologue and epilogue


def representative_works(kernel: Kernel, ctas_per_sm: int, sm_count: int, reps: int,
                         merged_waves: int | None = None) -> tuple[list[CtaWork], float]:
    """The CTAs the representative SMs run, in launch order, and the real SMs one representative stands for."""
    trips = kernel.loop.trips if kernel.loop is not None else 0

    def trips_of(i: int) -> int:
        return kernel.trips_of(i) if kernel.trips_of is not None else trips

    reps = max(1, min(reps, sm_count))
    sm_weight = sm_count / reps
    real_slots = sm_count * ctas_per_sm
    rep_slots = reps * ctas_per_sm
    n = kernel.launch.num_ctas
    if kernel.persistent_ctas:
        p_real = min(kernel.persistent_ctas, real_slots, n)  # CTAs beyond the tile count exit at once
        count = min(p_real, rep_slots)
        order = kernel.tile_order
        picked = []
        for p in _even(0, count, p_real):
            positions = np.arange(p, n, p_real)
            picked.append((p, tuple(int(x) for x in (order(positions) if order is not None else positions))))
        # the real CTAs run n // p_real or one more tiles: weigh the representatives so that they stand for the
        # n tiles (an even pick of a few CTAs may hold only the longer ones)
        weight = n / sum(len(tiles) for _, tiles in picked)
        works = [CtaWork(tiles[0] if tiles else p, weight, trips, tiles) for p, tiles in picked]
        return works, sm_weight
    works = []
    pick = _even if kernel.trips_of is None else _even_by_trips(trips_of)
    full_waves, tail = divmod(n, real_slots)
    per = real_slots / rep_slots
    # CTAs of unequal trips (causal attention) cannot be skipped by the grid fast-forward: past MERGED_WAVES full
    # waves, one simulated CTA runs the summed trips of the CTAs that follow each other in its slot over
    # ``group`` consecutive waves (their prologues, epilogues and launches are not repeated: a share of the time
    # below 1 / MIN_MERGED_TRIPS of the merged loop, as the stack's mean trips is at least that, whatever a few short
    # CTAs in it: each head's first query blocks); the simulated work stays bounded whatever the grid
    merged_waves = MERGED_WAVES if merged_waves is None else merged_waves
    group = -(-full_waves // merged_waves) if kernel.trips_of is not None and full_waves > merged_waves else 1
    for first in range(0, full_waves, group):
        waves = range(first, min(first + group, full_waves))
        if group > 1:  # slots picked evenly over the group's slots ranked by their stacks' trips, so that the
            # picks hold the group's spread and mean of trips (picked by position, with several heads, 2 of 264
            # slots once held 12% more trips than the grid's CTAs)
            span = range(first * real_slots, (first + 1) * real_slots)
            sums = {i: sum(trips_of(i + (w - first) * real_slots) for w in waves) for i in span}
            ranked = sorted(span, key=lambda i: (sums[i], i))
            slots = sorted(ranked[j - span[0]] for j in _even(span[0], rep_slots, real_slots))
        else:
            slots = _even(first * real_slots, rep_slots, real_slots)
        stacks = [[trips_of(i + (w - first) * real_slots) for w in waves] for i in slots]
        if min(sum(t) / len(t) for t in stacks) >= MIN_MERGED_TRIPS:
            works += [CtaWork(i, per, sum(t)) for i, t in zip(slots, stacks, strict=True)]
        else:  # short loops: every wave of the group on its own
            for w in waves:
                works += [CtaWork(i, per, trips_of(i)) for i in pick(w * real_slots, rep_slots, real_slots)]
    if tail:
        count = -(-tail // math.ceil(per)) if per > 1 else tail
        count = max(1, min(count, rep_slots))
        works += [CtaWork(i, tail / count, trips_of(i)) for i in pick(full_waves * real_slots, count, tail)]
    return works, sm_weight


def _even_by_trips(trips_of: Callable[[int], int]):
    """:func:`_even` over a wave's CTAs taken in order of their trips (ties in launch order), the picks then run in
    launch order: the sample holds the wave's spread of trips (causal attention: a CTA's trips follow its query block,
    so CTAs picked evenly by launch index can all be short ones when the grid's x size divides the step)."""
    def pick(lo: int, count: int, span: float) -> list[int]:
        ids = range(lo, lo + int(span))
        ranked = sorted(ids, key=lambda i: (trips_of(i), i))
        return sorted(ranked[j - lo] for j in _even(lo, count, span))
    return pick


def trip_scale(kernel: Kernel) -> float:
    """Mean outer-loop trips over the grid's CTAs over the kernel's loop trips (sampled on large grids)."""
    if kernel.trips_of is None or kernel.loop is None or not kernel.loop.trips:
        return 1.0
    n = kernel.launch.num_ctas
    idx = range(n) if n <= TRIP_SAMPLES else _even(0, TRIP_SAMPLES, n)
    return sum(kernel.trips_of(i) for i in idx) / (len(idx) * kernel.loop.trips)


CLOCK_TOLERANCE = 0.005  # algorithmic: a kernel's SM clock within this of the config's needs no second run
CLOCK_MERGED_WAVES = 1  # algorithmic: the clock's run merges unequal CTAs sooner (an average is all it needs)


def simulate(kernel: Kernel, cfg: HardwareConfig, trace: bool = False,
             representatives: int = REPRESENTATIVE_SMS) -> Simulation:
    """Run the whole model for one kernel launch at the SM clock it would hold: a kernel whose tensor work lowers
    the clock (:func:`gpusim.sm.clock.sm_clock_hz_for`) runs a second time at that clock
    (:func:`gpusim.sm.clock.at_sm_clock`: the memory side's rates unchanged in time)."""
    if not _has_tensor_work(kernel):  # nothing lowers the clock: one run
        sim = _simulate(kernel, cfg, trace, representatives)
        sim.clock_hz = cfg.chip.sm_clock_hz
        return sim
    # the tensor activity that sets the clock, from a cheaper run: one representative SM, and unequal CTAs
    # (causal attention) merged past CLOCK_MERGED_WAVES waves
    clock = sm_clock_hz_for(tensor_activity_of(_simulate(kernel, cfg, False, 1, CLOCK_MERGED_WAVES)), cfg.chip,
                            cfg.pipes)
    if abs(clock / cfg.chip.sm_clock_hz - 1.0) <= CLOCK_TOLERANCE:
        clock = cfg.chip.sm_clock_hz
    sim = _simulate(kernel, at_sm_clock(cfg, clock) if clock != cfg.chip.sm_clock_hz else cfg, trace,
                    representatives)
    sim.clock_hz = clock
    return sim


def tensor_activity_of(sim: Simulation) -> float:
    """:func:`gpusim.sm.clock.tensor_activity` of a run."""
    res = sim.result
    return tensor_activity(res.busy, res.instances, res.cycles, sim.config.pipes)


def _has_tensor_work(kernel: Kernel) -> bool:
    return any(isinstance(op, Compute) and op.pipe in ("tensor", "wgmma") for op in kernel.all_ops())


def _simulate(kernel: Kernel, cfg: HardwareConfig, trace: bool, representatives: int,
              merged_waves: int | None = None) -> Simulation:
    if kernel.tensor_bytes > cfg.hbm.capacity_bytes:  # also keeps every address well inside int64
        raise KernelError(f"{kernel.name}: the tensors take {kernel.tensor_bytes:,} B, more than the "
                          f"{cfg.hbm.capacity_bytes:,} B of HBM of the {cfg.name}")
    launch = kernel.launch
    try:
        occ = occupancy(cfg.sm, launch.threads_per_block, launch.regs_per_thread, launch.smem_bytes,
                        cfg.shared_memory.carveouts_bytes)
    except LaunchError as e:
        raise LaunchError(f"{kernel.name}: {e}") from None
    geo = patterns.AccessGeometry.of(cfg)
    classes = patterns.cta_classes(kernel, geo)
    pats = classes[0].pats
    structure = _structure(kernel)
    trips = patterns.loop_trips(kernel)
    sms = cfg.chip.sm_count
    sb = cfg.l1.sector_bytes
    l1_capacity = cfg.sm.unified_l1_smem_bytes - occ.smem_carveout_bytes
    warm = min(L1_WARM_ITERATIONS, trips // 2)
    l1 = l1_hit_model(_l1_stream(kernel, pats, structure, occ.ctas_per_sm, sms, geo,
                                 min(trips, L1_SAMPLE_ITERATIONS)), l1_capacity, sb, warm)
    l1.update(_local_l1(kernel, pats, structure, trips, cfg.l1, occ.ctas_per_sm, l1_capacity))
    chunks = min(trips, L2_CHUNKS)
    fps = _footprints(kernel, pats, structure, l1, trips, chunks, geo, cfg.hbm, cfg.l2)
    per_wave = sms * occ.ctas_per_sm
    if kernel.persistent_ctas:  # one tile per persistent CTA at a time, in the scheduler's order
        per_wave = min(kernel.persistent_ctas, sms * occ.ctas_per_sm)
    # tiles named by their data where CTAs share them without sharing grid coordinates: cluster members' multicast
    # tiles, and data smaller than a sector per CTA (neighbours write or read the same sectors)
    if kernel.cluster > 1:
        keys_of = _data_keys(kernel, pats, geo)
    else:
        shared = {n for n, p in pats.items() if p.op.space == "global" and _shares_sectors_with_neighbours(kernel, p.op,
                                                                                                            geo)}
        keys_of = _data_keys(kernel, pats, geo, shared) if shared else None
    resident = sms * occ.ctas_per_sm
    slots = _slot_keys(kernel, pats, resident)
    if slots:
        keys_of = {**(keys_of or {}), **slots}
    share = None
    if kernel.trips_of is not None and trips:  # CTAs of unequal trips: each runs its share of the loop's chunks

        def share(lin):
            return [kernel.trips_of(i) / trips for i in np.asarray(lin).tolist()]
    fitting = _fitting_footprint(kernel, pats, cfg.l2, resident)
    l2 = l2_model(fps, launch.grid, per_wave, chunks, cfg.l2, L2_MAX_WAVES, order=kernel.tile_order, keys_of=keys_of,
                  trips_share=share, footprint_bytes=fitting)
    scale = trip_scale(kernel)
    if len(classes) > 1:  # the L2 model follows interior CTAs: edge CTAs (partial tiles) move what their sectors say
        _scale_for_classes(classes, structure, trips, l2)
    _cap_reads_when_everything_fits(kernel, pats, l2, fitting, resident)
    cap_at_requests(l2, {n for n, p in pats.items() if p.op.space == "global" and p.op.kind in ("ld", "tma")},
                    cfg.l2.sector_bytes)
    # HBM time per fetched byte: a block fetched alone in its row costs what ``isolated_block_cost_ratio`` says
    hbm_cost = {fp.name: cfg.hbm.block_cost(fp.isolated_share) for fp in fps}
    timings = [_timings(cfg, c.pats, l1, l2, hbm_cost, kernel.local_tensors) for c in classes]
    _atomics(kernel, classes, timings, cfg, geo)

    def class_of(linear: int) -> int:
        return patterns.class_of(kernel, classes, linear)

    works, sm_weight = representative_works(kernel, occ.ctas_per_sm, sms, representatives, merged_waves)
    if representatives > 1 and kernel.loop is not None and any(w.trips > kernel.loop.trips for w in works):
        # CTAs merged over many waves (a grid far larger than the chip): one representative SM samples the
        # waves as well as two, at half the cost (tests/test_chip_model.py: the answer converges in SMs)
        works, sm_weight = representative_works(kernel, occ.ctas_per_sm, sms, 1, merged_waves)
    _atomic_shifts(kernel, classes, timings, works, geo, cfg.l2.atomic_slice_bytes, class_of)
    reps = round(sms / sm_weight)
    result = ChipModel(kernel, timings, cfg, reps, occ.ctas_per_sm, works, sm_weight, trace, class_of,
                       loop_code_instructions(kernel, cfg.sm.warp_size_threads)).run()
    in_loop = {name: structure[name][0] for name in pats}
    return Simulation(kernel, cfg, occ, pats, l1, l2, result, reps, in_loop, classes, trip_scale=scale)


def _scale_for_classes(classes: list[patterns.CtaClass], structure, trips: int, l2: L2Result) -> None:
    """Scale each global operation's L2 requests and DRAM bytes by its sectors over all CTAs against the interior
    CTAs' sectors taken for every CTA (what the L2 model assumed)."""
    n = sum(c.count for c in classes)
    for name, p in classes[0].pats.items():
        if p.op.space != "global":
            continue
        in_loop = structure[name][0]
        assumed = float(per_warp_total(p, p.sectors, in_loop, trips).sum()) * n
        if assumed <= 0:
            continue
        ratio = class_totals(classes, name, "sectors", in_loop, trips) / assumed
        for d in (l2.request_sectors, l2.dram_read_bytes, l2.dram_write_bytes):
            if name in d:
                d[name] *= ratio
