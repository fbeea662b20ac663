"""L2 cache (shared by all SMs): spec and a footprint model of its hit rate.

The model follows CTA waves in launch order. Each global operation's data is grouped into tiles by the
grid coordinates its addresses depend on (for a GEMM, A tiles by block row and B tiles by block column)
and by chunks of the K loop. All CTAs of a wave advance through the chunks together; within a wave and
chunk a tile is fetched from HBM at most once, and across waves it hits as far as the bytes touched since its
last use allow (``L2Spec.reuse_miss_fraction``, measured), a tile that SMs read counting a copy in each
partition (``L2Spec.read_copies``).
Stores allocate in L2 and are written back to HBM once, when evicted: what is still resident at the end of
the kernel stays dirty in L2 (ncu's dram__bytes_write does not see it). What pushes a dirty line out is what the
L2 allocates after it (misses and stores, not hits: ``L2Spec.dirty_kept_fraction``), and the L2 keeps at most
``L2Spec.dirty_max_bytes`` dirty (measured: validate/micro/run_l2_writeback.py). A tile a wave finds missing is
fetched once, and ncu counts the other CTAs' requests for it as hits, but they all wait for its fill: the latency
side (``L2Result.latency_miss_fraction``) counts every CTA that wants a missing tile.

Static costs (:class:`L2Spec`): what a read costs the read bandwidth (:meth:`L2Spec.read_cost_bytes`), a store the
write path (:meth:`L2Spec.write_cycles`), and the rule for tensors that fit in the L2 together
(:func:`fitting_footprint`, :func:`cap_reads_when_everything_fits`), and the bound no operation's HBM traffic passes:
what it requested (:func:`cap_at_requests`).

At run time (the engine's chip-wide memory side) the L2 is two units: :class:`L2Partitions`, its partitions, each
with an even share of the read bandwidth (addresses hash evenly over them: stage ``L2`` of a load's path), and
:class:`L2WritePath`, bound by the line and sector operations of stores (stage ``L2 write``) and by the fills that
write what a miss brings from HBM into the data array (stage ``fill``, :class:`L2Fill`). The SMs reach them
through their ports (:mod:`gpusim.memory.l2_port`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from gpusim.lazyjit import LazyJit
from gpusim.memory.l1 import ramp as _ramp
from gpusim.resources import LoadedLatency, RateServer
from gpusim.sm.clock import MEMORY_RATE, Clock, memory_clocked
from gpusim.specfield import spec_field

_jit = LazyJit(globals())  # numba.njit on first use (`gpusim list` never imports numba)


@dataclass(frozen=True)
class L2Spec:
    """L2 parameters (``[l2]`` in the hardware config)."""

    size_bytes: int = spec_field(1 << 20, 1 << 32, "L2 capacity")
    sector_bytes: int = spec_field(4, 1024, "sector size (equal to the L1's)")
    hit_latency_near_cycles: int = memory_clocked(spec_field(1, 5000, "load latency on a hit in the SM's near "
                                                             "partition"))
    hit_latency_far_cycles: int = memory_clocked(spec_field(1, 5000, "load latency on a hit in the far partition"))
    atomic_extra_latency_cycles: int = memory_clocked(spec_field(0, 5000, "what a global atomic's old value takes "
                                                                 "beyond a load's hit latency (its read-modify-write "
                                                                 "at the L2)"))
    atomic_request_min_ns: float = spec_field(0, 100, "the least time the L2 spends applying one integer atomic "
                                              "request to a line (a line's requests one at a time)")
    atomic_float_request_min_ns: float = spec_field(0, 100, "the least time it spends applying one floating-point "
                                                    "atomic request to a line")
    atomic_word_ns: float = spec_field(0, 10, "the time per distinct word an atomic request carries, past the least")
    atomic_slice_bytes: int = spec_field(128, 1 << 20, "bytes of adjacent lines whose atomics one slice applies "
                                         "(their requests share its throughput)")
    atomic_slice_request_ns: float = spec_field(0, 100, "the slice's time per atomic request, on any of its lines")
    atomic_slice_sector_ns: float = spec_field(0, 100, "the slice's time per 32-B sector an atomic request touches")
    fence_cycles: int = memory_clocked(spec_field(0, 10000, "what a memory fence (__threadfence) takes with no store "
                                                  "outstanding: its round trip to the L2"))
    fence_after_store_cycles: int = memory_clocked(spec_field(0, 10000, "what a fence takes after the warp's last "
                                                              "store reached the L2: the store's acknowledgement"))
    far_fraction_pct: float = spec_field(0, 100, "share of hits served by the far partition")
    miss_lookups_per_sector: float = spec_field(1, 4, "L2 tag lookups ncu counts per sector that misses to DRAM")
    store_lookups_per_sector: float = spec_field(1, 4, "L2 write lookups ncu counts per sector stored (hits)")
    bandwidth_bytes_per_cycle: float = memory_clocked(spec_field(64, 65536, "chip-wide L2 bandwidth per SM clock"),
                                                      MEMORY_RATE)
    partitions: int = spec_field(1, 8, "L2 partitions (addresses hashed evenly over them)")
    sm_port_bytes_per_cycle: float = spec_field(1, 4096, "bytes per cycle one SM can move to and from L2")
    write_cycles_per_line: float = memory_clocked(spec_field(0, 1, "chip cycles of the L2 write path per line a "
                                                             "store touches"))
    write_cycles_per_sector: float = memory_clocked(spec_field(0, 1, "chip cycles of the L2 write path per sector a "
                                                               "store touches"))
    write_peak_bytes_per_second: float = spec_field(1e11, 1e14, "the most the L2 write path was measured to carry, "
                                                    "in whole 128-B lines per second (its SOL peak)")
    read_line_op_bytes: float = spec_field(0, 128, "what one line of a read costs the L2 beyond its sectors, in "
                                           "bytes of its read bandwidth (a full line of 4 sectors costs 128 B)")
    loaded_utilization_pct: tuple[int, ...] = spec_field(1, 100, "utilizations of the L2 read bandwidth at which "
                                                         "the hit latency was measured under load")
    loaded_added_cycles: tuple[int, ...] = memory_clocked(spec_field(0, 20000, "hit latency added at those "
                                                                     "utilizations"))
    reuse_all_hit_footprint_ratio: float = spec_field(0.1, 10, "footprint between two uses of data, over the L2's "
                                                      "size, up to which the second use hits")
    reuse_all_miss_footprint_ratio: float = spec_field(0.1, 10, "footprint between two uses, over the L2's size, "
                                                       "from which the second use misses")
    writeback_all_kept_footprint_ratio: float = spec_field(0.05, 10, "bytes the L2 allocates after a store, over its "
                                                           "size, up to which the dirty line is still in L2 at the end")
    writeback_all_gone_footprint_ratio: float = spec_field(0.05, 10, "bytes the L2 allocates after a store, over its "
                                                           "size, from which the line has been written back")
    dirty_max_size_ratio: float = spec_field(0.01, 1, "most dirty data the L2 holds, over its size (the rest is "
                                             "written back as it comes)")

    def read_cost_bytes(self, lines, sectors, line_bytes: int):
        """What reading ``sectors`` spread over ``lines`` (of ``line_bytes``, the L1's) costs the L2's read
        bandwidth, in bytes: a line operation each and the sectors' share of a full line (measured: scattered
        single-sector reads run at half the byte rate of full lines)."""
        sector = (line_bytes - self.read_line_op_bytes) * self.sector_bytes / line_bytes
        return lines * self.read_line_op_bytes + sectors * sector

    def write_cycles(self, lines, sectors):
        """Cycles of the write path a store of ``sectors`` spread over ``lines`` takes (a line operation each and a
        sector operation each)."""
        return lines * self.write_cycles_per_line + sectors * self.write_cycles_per_sector

    def fill_cycles_per_byte(self, line_bytes: int) -> float:
        """The write path's cycles to fill one byte fetched from HBM: a fill writes whole sectors of a line into the
        L2 as a full-line store (lines of ``line_bytes``, the L1's) does (the measured write path)."""
        return (self.write_cycles_per_sector + self.write_cycles_per_line * self.sector_bytes / line_bytes) \
            / self.sector_bytes

    def reuse_miss_fraction(self, footprint_bytes: float) -> float:
        """Share of a re-read that misses when ``footprint_bytes`` (copies counted) were touched since the data was
        last used: none up to ``reuse_all_hit_footprint_ratio`` times the L2's size, all from
        ``reuse_all_miss_footprint_ratio``, a straight line between (measured: l2reuse-2026-11-24.json). The
        H100's L2 does not fall off a cliff at its capacity as an LRU would: a buffer read again and again by SMs
        of both partitions begins to miss at 25 MiB (two copies of 25 MiB fill the 50 MiB) and misses wholly only
        past 55 MiB."""
        return _ramp(footprint_bytes / self.size_bytes, self.reuse_all_hit_footprint_ratio,
                     self.reuse_all_miss_footprint_ratio)

    def dirty_kept_fraction(self, allocated_bytes: float) -> float:
        """Share of a store's dirty data still in the L2 at the kernel's end when the L2 allocated ``allocated_bytes``
        after it (misses, a copy in each partition for lines read, and stores; hits allocate nothing): all up to
        ``writeback_all_kept_footprint_ratio`` times the L2's size, none from ``writeback_all_gone_footprint_ratio``,
        a straight line between (measured: validate/micro/run_l2_writeback.py)."""
        return _ramp(allocated_bytes / self.size_bytes, self.writeback_all_gone_footprint_ratio,
                     self.writeback_all_kept_footprint_ratio)

    @property
    def dirty_max_bytes(self) -> float:
        """The most dirty data the L2 keeps: a stream of stores alone leaves this much dirty however long it is."""
        return self.dirty_max_size_ratio * self.size_bytes

    @property
    def read_copies(self) -> int:
        """Copies the L2 keeps of a line that SMs on both sides read: each partition keeps the lines it homes and
        a copy of the far lines its own SMs read, so such a line sits in every partition, while a store's line
        lives in its home partition only. Measured: one SM's pointer chase
        (validate/measurements/h100/micro-2026-11-22.json, pointer_chase) hits up to 24 MiB, misses half its
        loads at 32-48 MiB (the lines homed in the far partition still hit there) and all from 56 MiB: its near
        partition holds 25 MB of what it reads. CTAs in launch order run on SMs of both partitions, so the
        footprint model (:class:`TileReuse`) counts read tiles this many times their size."""
        return self.partitions

    @property
    def hit_latency_cycles(self) -> int:
        """Mean hit latency over the near and far partitions."""
        far = self.far_fraction_pct / 100
        return round(self.hit_latency_near_cycles * (1 - far) + self.hit_latency_far_cycles * far)


class L2Partitions:
    """The L2's partitions at run time: ``bytes_per_cycle`` chip-wide, split evenly over ``partitions``; a hit
    comes back ``hit_latency_cycles`` after its bytes have moved.

    Every request (and every background reservation) is split evenly over the partitions, so they are always in the
    same state: one server stands for each of them, booked once per request and reported once per partition. Under
    load a hit takes longer (``[l2] loaded_*``, measured: ``validate/micro/run_loaded_latency.py``)."""

    NAME = "L2"

    def __init__(self, bytes_per_cycle: float, partitions: int, hit_latency_cycles: int,
                 loaded: LoadedLatency | None = None, atomic_extra_cycles: int = 0) -> None:
        self.partitions = partitions
        self.partition = RateServer(bytes_per_cycle / partitions, "L2 partition")
        self.hit_latency_cycles = hit_latency_cycles
        self.loaded = loaded
        self.atomic_extra_cycles = atomic_extra_cycles

    @classmethod
    def from_spec(cls, spec: L2Spec, clock: Clock) -> L2Partitions:
        """The partitions as ``spec`` states them (its memory-side numbers already at ``clock``:
        :func:`gpusim.sm.clock.at_sm_clock`)."""
        return cls(spec.bandwidth_bytes_per_cycle, spec.partitions, spec.hit_latency_cycles,
                   LoadedLatency(spec.loaded_utilization_pct, spec.loaded_added_cycles),
                   spec.atomic_extra_latency_cycles)

    def queued(self, t: float) -> float:
        """What the measured queues add to a request reaching the L2 at ``t``, at the read bandwidth just used."""
        return self.loaded.cycles(self.partition, t) if self.loaded else 0.0

    def hit_latency(self, t: float) -> float:
        """Latency of a hit whose request reaches the L2 at ``t``."""
        return self.hit_latency_cycles + self.queued(t)

    def read(self, ledger: dict, arrive: float, nbytes: float) -> float:
        """``nbytes`` arriving at ``arrive``, spread over the partitions: when they are done."""
        return max(arrive, self.partition.book(ledger, arrive, nbytes / self.partitions)[1])

    def serve(self, request, t: float) -> float:
        """Stage ``L2``: the request's read cost (its bytes, or ``read_cost`` where its lines cost more) for each real
        CTA from ``t``; done when the partitions and the SM's port are."""
        request.l2_arrive = t
        cost = request.l2_bytes if request.read_cost is None else request.read_cost
        end = max(self.read(request.ledger, t, cost * request.weight), request.port_done)
        request.l2_done = end
        return end

    def respond(self, request, done: float) -> float:
        """When a load that misses the L1 has its data from the L2: the hit latency (under the load the partitions
        had as the request reached them) after its bytes moved."""
        return request.l2_done + self.hit_latency(request.l2_arrive)

    def respond_atomic(self, request) -> float:
        """When a global atomic that returns the old value (ATOMG) has it: the atomic runs at the L2, so a hit's
        latency after its write-path work, and its read-modify-write there (``[l2] atomic_extra_latency_cycles``),
        later by what it queued at the atomic units behind other requests to its lines
        (:class:`gpusim.memory.l2_atomics.L2Atomics`)."""
        queued = max(request.atomic_done - request.l2_done, 0.0)
        return self.respond(request, request.l2_done) + self.atomic_extra_cycles + queued

    def reported(self) -> list[tuple[str, RateServer, float]]:
        return [(self.NAME, self.partition, 1.0 / self.partitions)] * self.partitions


class L2WritePath:
    """The L2's write path at run time: one server whose work is in cycles (a store's line and sector operations,
    ``[l2] write_cycles_per_*``), shared by the fills of lines fetched from HBM (``fill_cycles_per_byte``)."""

    NAME = "L2 write"

    def __init__(self, fill_cycles_per_byte: float) -> None:
        self.server = RateServer(1.0, self.NAME)
        self.fill_cycles_per_byte = fill_cycles_per_byte

    @classmethod
    def from_spec(cls, spec: L2Spec, clock: Clock, line_bytes: int) -> L2WritePath:
        """The write path of ``spec`` (its cycles already at ``clock``), filling lines of ``line_bytes``."""
        return cls(spec.fill_cycles_per_byte(line_bytes))

    def write(self, ledger: dict, arrive: float, cycles: float) -> float:
        """A store's ``cycles`` of write-path work arriving at ``arrive``: when they are done."""
        return self.server.book(ledger, arrive, cycles)[1]

    def fill(self, ledger: dict, arrived: float, nbytes: float) -> float:
        """``nbytes`` from HBM written into the data array as they arrive (the last at ``arrived``): when the fill
        is done (later than ``arrived`` when the write path is full)."""
        if not self.fill_cycles_per_byte:
            return arrived
        fill = nbytes * self.fill_cycles_per_byte
        return self.server.book(ledger, arrived - fill, fill)[1]

    def serve(self, request, t: float) -> float:
        """Stage ``L2 write``: a store's line and sector operations for each real CTA from ``t``; done when the
        write path and the SM's port are."""
        request.l2_arrive = t
        end = max(self.write(request.ledger, t, request.write_cycles * request.weight), request.port_done)
        request.l2_done = end
        return end

    def reported(self) -> list[tuple[str, RateServer, float]]:
        return [(self.NAME, self.server, 1.0)]


class L2Fill:
    """Stage ``fill``: what a miss brings from HBM is written into the L2's data array as it arrives, on the write
    path stores take (:class:`L2WritePath`): when that path is full, the fill (and the load waiting for it) waits."""

    def __init__(self, write_path: L2WritePath) -> None:
        self.write_path = write_path

    def serve(self, request, t: float) -> float:
        hb = request.hbm_bytes
        if hb > 0:
            t = max(t, self.write_path.fill(request.ledger, t, hb * request.weight))
        request.hbm_done = t
        return t

    def reported(self) -> list[tuple[str, RateServer, float]]:
        return []  # its work is the write path's


class TileReuse:
    """Tiles of data through the L2, by the footprint between two uses: each access adds its bytes (times the copies
    the L2 keeps) to a running total; a tile used again finds the share :meth:`L2Spec.reuse_miss_fraction` gives
    for the bytes touched since its last use gone (an LRU's stack distance, counted in accesses: the model touches
    each tile once per chunk of a wave, so between two uses of a tile the others are distinct).

    What pushes a dirty line out is what the L2 allocates after it, not what hits: ``allocated_bytes`` (the missing
    share of every access) runs beside the total, for :func:`dirty_at_end`.

    A tile is named by an integer code (:meth:`access_many`'s caller makes it from the tile's data and chunk); the
    last use of each code is kept in an open-addressing hash table of numpy arrays, walked by compiled code
    (:func:`_access_tiles`): the model visits every tile of every wave and chunk, millions on a large grid."""

    def __init__(self, spec: L2Spec) -> None:
        self.spec = spec
        self._state = np.zeros(2)  # bytes touched, bytes allocated
        self._keys = np.full(_TABLE_START, -1, dtype=np.int64)  # codes (-1: an empty slot)
        self._last = np.zeros(_TABLE_START)  # bytes touched at each code's last use
        self._dirty = np.zeros(_TABLE_START, dtype=np.uint64)  # per tile, the store operations that left it dirty
        self._count = 0

    @property
    def touched_bytes(self) -> float:
        return float(self._state[0])

    @property
    def allocated_bytes(self) -> float:
        return float(self._state[1])

    def access_many(self, codes: np.ndarray, moved: np.ndarray, wanted: np.ndarray, fetched_bytes: float,
                    tile_bytes: float, copies: int, store: bool, sums: np.ndarray, store_bit: int = 0,
                    resident: bool = False, retouch_since: float = -1.0) -> None:
        """Use the tiles ``codes`` (distinct non-negative integers) one after another, ``moved`` of each (its share
        of the chunk; 0: not used) by ``wanted`` CTAs, each moving ``fetched_bytes`` from HBM on a miss for
        ``tile_bytes`` of data. Adds to ``sums`` (bytes read from HBM, wanted, wanted in missing tiles, stored).
        ``store_bit`` (0..63) names a store operation among those of the tile's data: its own bytes of the tile.
        ``resident``: each tile already used was used moments ago by its own CTA (a stack frame's later operations
        in a chunk), so it is found whatever the other CTAs touched since. ``retouch_since`` (>= 0): a tile used since
        that many bytes were touched (by an earlier load of the same data in this chunk: an unrolled loop's loads of
        one panel) is the same bytes again, adding nothing to the footprint between other tiles' uses (an LRU's stack
        distance counts distinct bytes)."""
        while 2 * (self._count + len(codes)) > len(self._keys):
            self._keys, self._last, self._dirty = _rehash(self._keys, self._last, self._dirty, 2 * len(self._keys))
        spec = self.spec
        self._count += _access_tiles(self._keys, self._last, self._dirty, self._state, codes, moved, wanted,
                                     float(fetched_bytes), float(tile_bytes), int(copies), bool(store),
                                     float(spec.size_bytes), float(spec.reuse_all_hit_footprint_ratio),
                                     float(spec.reuse_all_miss_footprint_ratio), sums,
                                     np.uint64(1) << np.uint64(store_bit), bool(resident), float(retouch_since))


_TABLE_START = 1024  # algorithmic: slots of a tile table before it first grows (it doubles, half full at most)
_FIBONACCI = 0x9E3779B97F4A7C15  # 2^64 over the golden ratio


@_jit(cache=True)
def _log2(n):
    k = 0
    while (1 << k) < n:
        k += 1
    return k


@_jit(cache=True)
def _slot(keys, code):
    """The slot of ``code`` in the table ``keys`` (linear probing), or of the empty slot where it would go."""
    mask = len(keys) - 1
    bits = np.uint64(64 - _log2(len(keys)))
    # Fibonacci hashing: the top bits of the code times 2^64 over the golden ratio, spread whatever the code's pattern
    i = np.int64((np.uint64(code) * np.uint64(_FIBONACCI)) >> bits)
    while keys[i] != -1 and keys[i] != code:
        i = (i + 1) & mask
    return i


@_jit(cache=True)
def _rehash(keys, last, dirty, size):
    new_keys = np.full(size, -1, dtype=np.int64)
    new_last = np.zeros(size)
    new_dirty = np.zeros(size, dtype=np.uint64)
    for i in range(len(keys)):
        if keys[i] != -1:
            j = _slot(new_keys, keys[i])
            new_keys[j] = keys[i]
            new_last[j] = last[i]
            new_dirty[j] = dirty[i]
    return new_keys, new_last, new_dirty


@_jit(cache=True)
def _access_tiles(keys, last, dirty, state, codes, moved, wanted, fetched, tile, copies, store, size_bytes, hit_at,
                  miss_at, sums, bit, resident, retouch_since):
    """:meth:`TileReuse.access_many`, tile by tile in order; returns how many codes were new. A store operation
    (``bit``) to a tile it left dirty, still resident, rewrites its dirty lines: only its share found gone (written
    back since) is new dirty data, to be written back once (a register spill stored again and again into one stack
    frame); other operations' stores to the tile write their own bytes."""
    new = 0
    for k in range(len(codes)):
        m = moved[k]
        if m <= 0:
            continue
        i = _slot(keys, codes[k])
        found = 0.0
        if keys[i] == -1:
            keys[i] = codes[k]
            new += 1
        elif resident:
            found = 1.0
        else:  # 1 - L2Spec.reuse_miss_fraction of the bytes touched since its last use
            found = 1.0 - min(max(((state[0] - last[i]) / size_bytes - hit_at) / (miss_at - hit_at), 0.0), 1.0)
        added = np.int64(fetched * m) * copies
        if retouch_since >= 0.0 and last[i] >= retouch_since and found > 0.0:
            added = np.int64(0)  # the same bytes again: no new distance (it is not moved up the stack either)
        else:
            touched = state[0] + added
            state[0] = touched
            last[i] = touched
        state[1] += added * (1.0 - found)
        if store:
            sums[3] += tile * m * (1.0 - found if dirty[i] & bit else 1.0)
            dirty[i] |= bit
        else:
            by = wanted[k]
            sums[0] += fetched * m * (1.0 - found)
            sums[1] += tile * by
            sums[2] += tile * by * (1.0 - found)
    return new


def dirty_at_end(spec: L2Spec, spans: list[tuple[float, float, float]], allocated_end: float,
                 tail_stored: float = 0.0, tail_allocated: float = 0.0, points: int = 16) -> float:
    """Bytes still dirty in the L2 when the kernel ends, before the L2's cap on dirty data (``l2_model`` applies it
    over every store op). ``spans``: (bytes stored, allocated before, allocated after) per stored stretch (a wave's
    chunk: its stores spread evenly over what it allocated); ``allocated_end``: the bytes allocated by the end. A
    stretch keeps :meth:`L2Spec.dirty_kept_fraction` of the bytes allocated after it, averaged over the stretch.
    Waves not simulated (``tail_stored`` bytes stored while ``tail_allocated`` were allocated, at the end) are the
    most recent."""
    offsets = (np.arange(points) + 0.5) / points

    def kept(lo: float, hi: float) -> float:  # mean kept share of stores spread over allocation [lo, hi]
        return float(np.mean([spec.dirty_kept_fraction(allocated_end - (lo + (hi - lo) * f)) for f in offsets]))

    out = sum(b * kept(a0, a1) for b, a0, a1 in spans if b > 0)
    if tail_allocated > 0 and tail_stored > 0:
        out += tail_stored * kept(allocated_end - tail_allocated, allocated_end)
    return out


@dataclass(frozen=True)
class L2Footprint:
    """One global operation as the L2 model sees it (per CTA)."""

    name: str
    tensor: str
    kind: str  # "ld" or "st"
    depends: tuple[bool, bool, bool]  # whether its data changes with blockIdx.x, .y, .z
    data: tuple  # what its tiles hold (first sector, size, dependence): ops with the same data share tiles
    tile_bytes_per_chunk: float  # distinct bytes one CTA touches in one chunk of the loop
    request_sectors_per_chunk: float  # sectors one CTA sends to L2 in one chunk (its L1 misses)
    fetch_ratio: float = 1.0  # bytes read from HBM per tile byte on a miss (the fetch granularity's neighbours)
    in_loop: bool = True  # in the outer loop: a CTA that runs fewer trips (causal attention) skips its last chunks
    isolated_share: float = 0.0  # of the blocks a miss fetches, the share with no other fetched block near them
    invariant: bool = False  # in the loop at addresses its iterations do not move: the same tiles in every chunk
    # outside the loop, reading bytes the loop reads: (a loop op of that data, chunk, share of the chunk's tile read),
    # in order, read before the loop's chunks (or after them: ``after_loop``) instead of spread over them
    phase_tiles: tuple = ()
    after_loop: bool = False
    # outside the loop, in a part whose loads read the loop's chunk tiles (``phase_tiles``): its own tiles are used in
    # that phase, in program order among those reads (a store between two passes over a row), not spread over chunks
    in_phase: bool = False


ALLOCATED = ""  # the per-wave key of the bytes the L2 allocated (no operation is named "")


@dataclass
class L2Result:
    request_sectors: dict[str, float]
    dram_read_bytes: dict[str, float]
    dram_write_bytes: dict[str, float]
    waves_simulated: int
    waves_total: int
    fetch_ratio: dict = None  # op -> HBM bytes per missed tile byte
    # op -> share of the bytes its CTAs want that lie in tiles found missing: every CTA that wants a tile in the
    # same chunk of a wave waits for that tile's fill, though only the first request counts as ncu's miss
    tile_miss: dict = None
    groups: dict = None  # op -> its data group: ops of one group share tiles (the first to use one pays its fetch)
    loads: frozenset | None = None  # the operations that read (set by :func:`cap_at_requests`)

    def latency_miss_fraction(self, name: str, sector_bytes: int) -> float:
        """Share of an op's executions that wait for HBM: its tiles' miss share (a request that finds its line's fill
        still pending waits for it), at least the share of its requests that miss."""
        tile = (self.tile_miss or {}).get(name)
        return max(1.0 - self.hit_fraction(name, sector_bytes), tile if tile is not None else 0.0)

    def hit_fraction(self, name: str, sector_bytes: int) -> float:
        req = self.request_sectors.get(name, 0.0)
        if req <= 0:
            return 1.0
        fetch = self.fetch_ratio.get(name, 1.0)
        return min(max(1.0 - self.dram_read_bytes.get(name, 0.0) / fetch / sector_bytes / req, 0.0), 1.0)

    def dram_bytes_per_request_byte(self, name: str, sector_bytes: int) -> float:
        """HBM bytes read per byte the op requests from L2 (above 1 when misses fetch unwanted neighbours, or when the
        op is the first of its data group to use the group's tiles: it is charged their fetch, the others hit them).
        At most what the op's group requests times its fetch ratios (:func:`cap_at_requests`'s bound), over the op's
        own requests: capped at the op's own fetch ratio, the first of stencil5's five loads booked HBM for its own
        182 MB of requests where the group reads 260 MB (the engine moved 457 of the 513 MB the report counts, 3.18
        TB/s, past HBM's sustained 3.07)."""
        req = self.request_sectors.get(name, 0.0)
        if req <= 0:
            return 0.0
        group = (self.groups or {}).get(name)
        fetch = self.fetch_ratio or {}
        loads = self.loads if self.loads is not None else {name}
        members = [n for n, g in (self.groups or {}).items() if g == group and n in loads or n == name]
        most = sum(self.request_sectors.get(n, 0.0) * fetch.get(n, 1.0) for n in members)
        return min(self.dram_read_bytes.get(name, 0.0) / sector_bytes / req, most / req)


def l2_model(ops: list[L2Footprint], grid: tuple[int, int, int], ctas_per_wave: int, chunks: int,
             spec: L2Spec, max_waves: int, order=None, keys_of=None, trips_share=None,
             footprint_bytes: float | None = None) -> L2Result:
    """Follow CTA waves in launch order (or the tile ``order`` of a persistent kernel's scheduler: a function
    from positions to linear CTA indices) through an LRU of tiles; see the module docstring.
    ``keys_of[name](linear CTA indices)``, where
    given, names each CTA's tile by its data (its first sector) instead of by the CTA coordinates the data
    depends on (cluster members that share a multicast tile). ``trips_share(linear CTA indices)``, where given,
    is each CTA's share of the loop's trips (causal attention): a CTA runs chunk ``q`` of ``chunks`` for the part
    of it its trips reach, and a tile moves the most that any CTA wanting it runs of the chunk.

    Beyond ``max_waves`` waves the per-wave traffic of the second half of the simulated waves is
    extrapolated (a steady-state fast-forward, reported by the caller). ``footprint_bytes``, where given, is all the
    L2 can allocate (every tensor the kernel touches fits, copies counted): the per-CTA tiles overcount what CTAs
    share without sharing tiles (a gather), so the allocations that push dirty lines out are scaled to it.
    """

    n = grid[0] * grid[1] * grid[2]
    waves = -(-n // ctas_per_wave)
    sim_waves = min(waves, max_waves)
    reuse = TileReuse(spec)
    wr = {o.name: 0.0 for o in ops}
    spans: dict[str, list] = {o.name: [] for o in ops}  # op -> (bytes stored, allocated before, after) per chunk
    per_wave_rd, per_wave_req, per_wave_want, per_wave_miss, per_wave_st = [], [], [], [], []
    # ops with the same data (and named the same way: by coordinates or by first sector) share tiles: a tile's code
    # is its row (coordinates or sector) times the groups, plus its group; times the chunks, plus its chunk
    group_of: dict[tuple, int] = {}
    groups = {o.name: group_of.setdefault((o.tensor, o.data, bool(keys_of and o.name in keys_of)), len(group_of))
              for o in ops}
    # ops of one data follow each other (a CTA's loads of the same bytes come close together; taken op by op over
    # the wave, the other ops' data in between would evict the tile before its next reader comes)
    by_data = sorted(ops, key=lambda o: groups[o.name])
    by_name = {o.name: o for o in ops}
    store_bits: dict[str, int] = {}  # each operation of a data group its own bit (their bytes of the tiles differ)
    in_group: Counter = Counter()
    for o in by_data:
        store_bits[o.name] = in_group[groups[o.name]] % 64
        in_group[groups[o.name]] += 1
    for w in range(sim_waves):
        lin = np.arange(w * ctas_per_wave, min((w + 1) * ctas_per_wave, n))
        if order is not None:
            lin = np.asarray(order(lin), dtype=np.int64)
        coords = (lin % grid[0], (lin // grid[0]) % grid[1], lin // (grid[0] * grid[1]))
        keys = {}
        for o in ops:
            if keys_of and o.name in keys_of:
                cols = np.asarray(keys_of[o.name](lin)).reshape(-1, 1)
            else:
                cols = np.stack([c if d else np.zeros_like(c) for c, d in zip(coords, o.depends, strict=True)], axis=1)
            uniq, inverse = np.unique(cols, axis=0, return_inverse=True)
            if cols.shape[1] == 1:  # a tile named by its first sector (-1: none)
                row = uniq[:, 0].astype(np.int64) + 1
            else:  # by its CTA coordinates
                row = uniq[:, 0] + grid[0] * (uniq[:, 1] + grid[1] * uniq[:, 2])
            keys[o.name] = (row.astype(np.int64) * len(groups) + groups[o.name], inverse.reshape(-1))
        share = np.ones(len(lin)) if trips_share is None else np.asarray(trips_share(lin), dtype=float)
        w_rd = {o.name: 0.0 for o in ops}
        w_req = {o.name: 0.0 for o in ops}
        w_want = {o.name: 0.0 for o in ops}  # bytes the CTAs want
        w_miss = {o.name: 0.0 for o in ops}  # of them, in tiles found missing
        w_st = {o.name: 0.0 for o in ops} | {ALLOCATED: reuse.allocated_bytes}
        totals = (w_rd, w_want, w_miss, w_st, spans)
        _phase_accesses(ops, False, keys, by_name, reuse, chunks, spec, store_bits, totals)
        for q in range(chunks):
            runs = np.clip(share * chunks - q, 0.0, 1.0)  # the part of chunk q each CTA runs
            before = reuse.allocated_bytes
            c_st = {o.name: 0.0 for o in ops}
            framed = set()  # stack-frame groups used in this chunk
            loaded: dict[int, float] = {}  # data group -> bytes touched when this chunk's first load of it began
            for o in by_data:
                part = runs if o.in_loop else np.ones(len(lin))
                w_req[o.name] += float(part.sum()) * o.request_sectors_per_chunk
                if o.in_phase or (o.phase_tiles and o.tile_bytes_per_chunk <= 0):  # used in its phase instead
                    continue
                tiles, inverse = keys[o.name]
                moved, wanted = _per_tile(inverse, len(tiles), part)
                store = o.kind == "st"
                sums = np.array([w_rd[o.name], w_want[o.name], w_miss[o.name], c_st[o.name]])
                code = tiles * chunks + (0 if o.invariant else q)
                # a stack frame (local memory: spills, arrays indexed at run time) is its CTA's own, stored and read
                # back within moments: after the chunk's first operation on it, the others find it, however much the
                # wave's other CTAs touched in between (measured: fa2's spills add no HBM reads, 203 -> 205 MB, and
                # validate/fresh's localarr reads 29 MB from HBM for 268 MB of frames stored and read back)
                resident = o.invariant and groups[o.name] in framed
                if o.invariant:
                    framed.add(groups[o.name])
                since = -1.0
                if not store and not o.invariant:  # a later load of the same data in this chunk: the same bytes
                    g = groups[o.name]
                    if g in loaded:
                        since = loaded[g]
                    else:
                        loaded[g] = reuse.touched_bytes
                _use(reuse, o, code, moved, wanted, spec, sums, store_bits[o.name], resident, since)
                w_rd[o.name], w_want[o.name], w_miss[o.name], c_st[o.name] = sums.tolist()
            for name, b in c_st.items():
                if b > 0:
                    spans[name].append((b, before, reuse.allocated_bytes))
                    w_st[name] += b
        _phase_accesses(ops, True, keys, by_name, reuse, chunks, spec, store_bits, totals)
        w_st[ALLOCATED] = reuse.allocated_bytes - w_st[ALLOCATED]
        per_wave_st.append(w_st)
        per_wave_rd.append(w_rd)
        per_wave_req.append(w_req)
        per_wave_want.append(w_want)
        per_wave_miss.append(w_miss)
    scale = (n - sim_waves * ctas_per_wave) / ctas_per_wave  # waves beyond the simulated ones

    def grid_total(per_wave: list[dict]) -> dict:
        """Over the whole grid: the simulated waves, and the later ones as the second half's mean."""
        total = {name: sum(w[name] for w in per_wave) for name in per_wave[0]}
        if waves > sim_waves:
            tail = per_wave[sim_waves // 2:]
            for name in total:
                total[name] += scale * sum(w[name] for w in tail) / len(tail)
        return total

    rd, req = grid_total(per_wave_rd), grid_total(per_wave_req)
    want, miss = grid_total(per_wave_want), grid_total(per_wave_miss)
    tile_miss = {name: miss[name] / want[name] for name in want if want[name] > 0}
    stored = grid_total(per_wave_st)
    # dirty data still in L2 when the kernel ends is not written back (each store op its share of what stays)
    end = stored[ALLOCATED]
    shrink = min(1.0, footprint_bytes / end) if footprint_bytes is not None and end > 0 else 1.0
    tail_alloc = (end - reuse.allocated_bytes) * shrink
    dirty = {}
    for o in ops:
        if o.kind == "st":
            wr[o.name] = stored[o.name]
            tail_st = wr[o.name] - sum(b for b, _, _ in spans[o.name])
            dirty[o.name] = dirty_at_end(spec, [(b, a0 * shrink, a1 * shrink) for b, a0, a1 in spans[o.name]],
                                         end * shrink, tail_st, tail_alloc)
    total = sum(dirty.values())
    kept = min(1.0, spec.dirty_max_bytes / total) if total > 0 else 1.0
    for name, d in dirty.items():
        wr[name] = max(wr[name] - d * kept, 0.0)
    return L2Result(req, rd, wr, sim_waves, waves, {o.name: o.fetch_ratio for o in ops}, tile_miss, groups)


def _use(reuse: TileReuse, o: L2Footprint, codes, moved, wanted, spec: L2Spec, sums, store_bit: int,
         resident: bool = False, since: float = -1.0) -> None:
    """:meth:`TileReuse.access_many` of ``o``'s tiles ``codes``: its bytes a chunk, what a miss fetches, a copy in each
    partition for a read."""
    store = o.kind == "st"
    reuse.access_many(codes, moved, wanted, o.tile_bytes_per_chunk * o.fetch_ratio, o.tile_bytes_per_chunk,
                      1 if store else spec.read_copies, store, sums, store_bit, resident, since)


def _per_tile(inverse: np.ndarray, tiles: int, part) -> tuple[np.ndarray, np.ndarray]:
    """From each CTA's ``part`` of a chunk (``inverse``: the tile each CTA wants), each tile's share moved (the most
    that any CTA wanting it runs) and how many CTAs want it (their requests wait alike)."""
    moved = np.zeros(tiles)
    np.maximum.at(moved, inverse, part)
    wanted = np.zeros(tiles)
    np.add.at(wanted, inverse, part)
    return moved, wanted


def _phase_accesses(ops, after: bool, keys, by_name, reuse: TileReuse, chunks: int, spec: L2Spec, store_bits,
                    totals) -> None:
    """The ops outside the loop that read the loop's chunk tiles (``L2Footprint.phase_tiles``) and the others of their
    part (``in_phase``: their own tiles), before the loop's chunks (``after`` False) or after them, in program order.
    An op's reads of a chunk tile that the last such read was of too (a pass unrolled into a load per element, the
    stores of the pass between them) are one use of it. Each op's HBM bytes, wanted and missing bytes, stored bytes
    and stores' allocation spans go to ``totals`` (per-op dicts: read, wanted, missing, stored; spans lists)."""
    seq: list = []
    last = None  # the position in seq of the last read of a chunk tile
    for o in ops:
        if o.after_loop != after:
            continue
        if o.in_phase:
            seq.append(["own", o])
            continue
        for rep, q, mv in o.phase_tiles:
            if last is not None and seq[last][1] == rep and seq[last][2] == q:
                seq[last][3] += mv
                seq[last][4].append((o.name, mv))
            else:
                seq.append(["map", rep, q, mv, [(o.name, mv)]])
                last = len(seq) - 1
    rd, want, miss, stored, spans = totals
    for entry in seq:
        if entry[0] == "own":
            o = entry[1]
            tiles, inverse = keys[o.name]
            moved, wanted = _per_tile(inverse, len(tiles), 1.0)
            for q in range(chunks):
                before = reuse.allocated_bytes
                sums = np.zeros(4)
                _use(reuse, o, tiles * chunks + (0 if o.invariant else q), moved, wanted, spec, sums,
                     store_bits[o.name])
                rd[o.name] += sums[0]
                want[o.name] += sums[1]
                miss[o.name] += sums[2]
                if sums[3] > 0:
                    spans[o.name].append((float(sums[3]), before, reuse.allocated_bytes))
                    stored[o.name] += float(sums[3])
            continue
        _, rep, q, mv, members = entry
        r = by_name[rep]
        tiles, inverse = keys[rep]
        moved, wanted = _per_tile(inverse, len(tiles), 1.0)
        moved *= min(mv, 1.0)
        sums = np.zeros(4)
        _use(reuse, r, tiles * chunks + q, moved, wanted, spec, sums, store_bits[rep])
        for name, m in members:
            rd[name] += sums[0] * m / mv
            want[name] += sums[1] * m / mv
            miss[name] += sums[2] * m / mv

def fitting_footprint(spec: L2Spec, tensors: list[tuple[int, bool]]) -> float | None:
    """The bytes the global tensors a kernel touches take in the L2 (``tensors``: each one's size and whether SMs
    read it; a tensor that SMs read keeps a copy in each partition, :attr:`L2Spec.read_copies`) when they fit
    together, else None."""
    total = sum(size * (spec.read_copies if read else 1) for size, read in tensors)
    return total if tensors and total <= spec.size_bytes else None


def cap_reads_when_everything_fits(result: L2Result, reads: list[tuple[int, list[str]]],
                                   fitting: float | None) -> None:
    """When every global tensor the kernel touches fits in the L2 together (:func:`fitting_footprint`; None: they do
    not), nothing is evicted: each byte comes from HBM at most once, so a tensor's reads are at most its size. The
    per-CTA tiles of the L2 model count a sector once per CTA that wants it, which overcounts when CTAs share sectors
    they do not share tiles of (a gather); this is the physical bound on that. ``reads``: per tensor, its size and
    the operations that read it."""
    if fitting is None:
        return
    for size, names in reads:
        total = sum(result.dram_read_bytes.get(n, 0.0) for n in names)
        if total > size:
            for n in names:
                result.dram_read_bytes[n] *= size / total
                if result.tile_miss and n in result.tile_miss:  # the tiles' misses were overcounted alike
                    result.tile_miss[n] *= size / total


def cap_at_requests(result: L2Result, loads: set[str], sector_bytes: int) -> None:
    """A miss fetches no more than was asked for: the HBM reads of operations that share data (``result.groups``: ops of
    one group share tiles, the first to use a tile is charged its fetch, the others hit it) are at most the sectors
    they request from the L2 times their fetch ratios (the neighbours a miss brings along), and their write-backs at
    most the sectors they stored. The per-CTA tiles charge a tile's whole bytes to the operation that finds it
    missing, which can exceed what the group requests where its tile is wider than its sectors (a local array
    indexed by data) and the tiles thrash; this is the physical bound, and it keeps the L2 hit rate within 0..100.
    ``loads``: the operations that read."""
    result.loads = frozenset(loads)
    groups = result.groups or {}
    members: dict = {}
    for name in result.request_sectors:
        members.setdefault((name in loads, groups.get(name, name)), []).append(name)
    fetch = result.fetch_ratio or {}
    for (is_load, _), names in members.items():
        d = result.dram_read_bytes if is_load else result.dram_write_bytes
        most = sum(result.request_sectors[n] * sector_bytes * (fetch.get(n, 1.0) if is_load else 1.0) for n in names)
        total = sum(d.get(n, 0.0) for n in names)
        if total > most:
            for n in names:
                if n in d:
                    d[n] *= most / total
                    if is_load and result.tile_miss and n in result.tile_miss:  # overcounted alike
                        result.tile_miss[n] *= most / total
