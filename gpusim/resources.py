"""Rate-limited resources shared inside the simulation: the building block of every unit's timing.

A :class:`RateServer` does ``rate`` units of work per cycle (instructions, bytes, wavefronts) for whoever asks.
Its time is cut into bins of ``bin_cycles``; a request takes free capacity from the bin it arrives in onwards,
so a request made later for an earlier time uses capacity left free earlier instead of queueing behind work
booked for the future, and no bin ever holds more work than the rate allows: a resource can never be busier
than its peak, whatever order the units call it in.

Work that a fast-forward skips over (a warp's steady-state loop) is booked as a *background* reservation: a
constant rate over an interval, taken from the capacity of every bin it overlaps (the bins requests already
hold give it what they leave free). Where the resource has less than that rate free, the reservation falls
behind and catches up as soon as there is room, as the requests it stands for would queue and drain; one that
still cannot finish in its interval is stretched, and the caller is told how long it really took.

Simulated time is in cycles; arrivals may be fractional (a 1/rate instruction slot), bins are integers.

The bins live in one numpy array per server, walked by numba-compiled functions (a request costs the interpreter
one call, where the event loop makes millions), in pages found through a hash table: a request far past the others
costs a page, not the gap. ``tests/test_chip_model.py`` holds them to the answers of the plain Python bins they
replaced (``tests/reference_rate_server.py``).

Every hardware unit of the chip model (``gpusim.sm`` and ``gpusim.memory``) is built from rate servers; a unit
lists them with its ``reported()`` method (the name its busy cycles go under, and the share of one instance of that
name each server is), so the engine collects every unit's busy time in one place. A requester that must know what
it asked of each server (a warp: the fast-forward extrapolates its work per server) passes a *ledger* to
:meth:`RateServer.book`.
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from gpusim.lazyjit import LazyJit

_jit = LazyJit(globals())  # numba.njit on first use (`gpusim list` never imports numba)

# algorithmic, not hardware: the width of a capacity bin (the granularity at which the order of requests can be
# reshuffled), and the work below which a reservation counts as none
BIN_CYCLES = 32
EPS = 1e-9
# algorithmic: how far back (in bins) a loaded latency looks at its resource's utilization (256 cycles, shorter
# than the latencies it adds to)
LOAD_WINDOW_BINS = 8
# algorithmic: a reservation less than this many cycles of its rate behind its even spread has caught up
CATCH_UP_CYCLES = 1e-6


# algorithmic: bins to a page of a server's array, and the pages its pool starts with (it doubles when full)
PAGE_SHIFT = 8
PAGE_BINS = 1 << PAGE_SHIFT
INITIAL_PAGES = 16
INITIAL_CHANGE_POINTS = 64

# --- one float64 array per server ----------------------------------------------------------------------------
# its header: the latest bin holding requests, busy cycles, completion of the latest work, the end of the
# background load, the rate, a bin's capacity, the background's change points (how many, where they start, room
# for how many), the page table (where it starts, its entries as a power of two), the pool of pages (where it
# starts, how many), the free pages (how many, where their stack starts), and the first bin a request may use (the
# bins before it are pruned)
(_TOP, _BUSY, _LAST, _BG_END, _RATE, _CAP, _NBG, _BG_OFF, _BG_ROOM, _PT_OFF, _PT_BITS, _POOL_OFF, _POOL_PAGES,
 _NFREE, _FREE_OFF, _FLOOR) = range(16)
_HEADER = 16
# after the header: the change points of the background (time, rate after it: two rows of _BG_ROOM); the page table,
# an open-addressing hash table of twice the pool's pages (per entry: a page's number plus one, 0: empty, and its
# slot in the pool); the stack of free slots; the pool. A page holds four rows of PAGE_BINS, all zero in a bin never
# written: work booked by requests, the later bin to look at instead of a full one (plus one; 0: none), the background
# work over the bin, and whether that is computed (1). Only pages with something written take room: a request far
# past the others costs a page, not the gap.
_USED, _LINK, _BGW, _BGSET = range(4)
_ROWS = 4
_PAGE_FLOATS = _ROWS * PAGE_BINS
_FIBONACCI = 0x9E3779B97F4A7C15  # 2^64 over the golden ratio: spreads page numbers over the table


def _dense(rate: float, n_bg: int, n_pages: int) -> np.ndarray:
    """A fresh array: no background, no page used, every page of the pool free (``n_pages`` a power of two)."""
    bits = n_pages.bit_length()  # a table of 2 * n_pages entries
    pt = _HEADER + 2 * n_bg
    free = pt + 2 * (1 << bits)
    pool = free + n_pages
    a = np.zeros(pool + n_pages * _PAGE_FLOATS)
    a[_TOP], a[_RATE], a[_CAP] = -1.0, rate, rate * BIN_CYCLES
    a[_BG_OFF], a[_BG_ROOM], a[_PT_OFF], a[_PT_BITS] = _HEADER, n_bg, pt, bits
    a[_POOL_OFF], a[_POOL_PAGES], a[_NFREE], a[_FREE_OFF] = pool, n_pages, n_pages, free
    a[free:free + n_pages] = np.arange(n_pages - 1, -1, -1)  # slot 0 on top
    return a


@_jit(cache=True)
def _entry(a, page):
    """The table entry of ``page``, or the empty one where it would go."""
    bits = int(a[_PT_BITS])
    mask = (1 << bits) - 1
    pt = int(a[_PT_OFF])
    i = np.int64((np.uint64(page) * np.uint64(_FIBONACCI)) >> np.uint64(64 - bits))
    while a[pt + 2 * i] != 0.0 and a[pt + 2 * i] != page + 1:
        i = (i + 1) & mask
    return pt + 2 * i


@_jit(cache=True)
def _page(a, b):
    """Where bin ``b``'s row 0 lies, or -1 when its page holds nothing."""
    e = _entry(a, b >> PAGE_SHIFT)
    if a[e] == 0.0:
        return -1
    return int(a[_POOL_OFF]) + int(a[e + 1]) * _PAGE_FLOATS + (b & (PAGE_BINS - 1))


@_jit(cache=True)
def _allocate(a, b):
    """Give bin ``b``'s page a slot of the pool (one is free: the caller made sure); where its row 0 lies."""
    n = int(a[_NFREE]) - 1
    a[_NFREE] = n
    slot = int(a[int(a[_FREE_OFF]) + n])
    e = _entry(a, b >> PAGE_SHIFT)
    a[e], a[e + 1] = (b >> PAGE_SHIFT) + 1, slot
    return int(a[_POOL_OFF]) + slot * _PAGE_FLOATS + (b & (PAGE_BINS - 1))


@_jit(cache=True)
def _rebuild_table(a, src, src_off, src_entries, below):
    """Fill ``a``'s (empty) table with the entries of the table of ``src_entries`` entries at ``src[src_off:]`` whose
    page is at least ``below``; the others' slots are cleared and freed."""
    free, pool = int(a[_FREE_OFF]), int(a[_POOL_OFF])
    for i in range(src_entries):
        key, slot = src[src_off + 2 * i], int(src[src_off + 2 * i + 1])
        if key == 0.0:
            continue
        if key - 1 < below:
            a[pool + slot * _PAGE_FLOATS:pool + (slot + 1) * _PAGE_FLOATS] = 0.0
            a[free + int(a[_NFREE])] = slot
            a[_NFREE] += 1
        else:
            e = _entry(a, int(key) - 1)
            a[e], a[e + 1] = key, slot


@_jit(cache=True)
def _bisect_right(ts, n, x):
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if x < ts[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@_jit(cache=True)
def _bg_work(a, lo, hi):
    """Background work reserved over [lo, hi)."""
    off, room, n = int(a[_BG_OFF]), int(a[_BG_ROOM]), int(a[_NBG])
    ts, rs = a[off:off + room], a[off + room:off + 2 * room]
    i = _bisect_right(ts, n, lo) - 1
    if i == n - 1 or ts[i + 1] >= hi:
        return rs[i] * (hi - lo)
    total, t = 0.0, lo
    while t < hi:
        nxt = ts[i + 1] if i + 1 < n else np.inf
        seg = min(nxt, hi)
        total += rs[i] * (seg - t)
        t, i = seg, i + 1
    return total


@_jit(cache=True)
def _find(a, b):
    """The first bin from ``b`` on that requests have not filled (with path compression)."""
    root = b
    while True:
        o = _page(a, root)
        if o < 0 or a[o + _LINK * PAGE_BINS] <= 0.0:
            break
        root = int(a[o + _LINK * PAGE_BINS]) - 1
    c = b
    while c != root:
        o = _page(a, c) + _LINK * PAGE_BINS
        c = int(a[o]) - 1
        a[o] = root + 1
    return root


@_jit(cache=True)
def _walk(a, arrive, work, commit):
    """One request (:meth:`RateServer.book`): (start, end, pages it would need). Without ``commit`` it books nothing
    and writes only into pages already held (a full bin's link, a bin's background), which hold whatever is
    booked."""
    rate, cap, bg_end = a[_RATE], a[_CAP], a[_BG_END]
    b = math.floor(arrive) // BIN_CYCLES
    floor = int(a[_FLOOR])
    if b < floor:
        b = floor
    b = _find(a, b)
    remaining = work
    first = True
    start = end = 0.0
    need = 0
    counted = -1  # the last page counted in ``need``
    while True:
        o = _page(a, b)
        lo = b * BIN_CYCLES
        booked = a[o + _USED * PAGE_BINS] if o >= 0 else 0.0
        taken = booked
        if lo < bg_end:
            if o >= 0 and a[o + _BGSET * PAGE_BINS] != 0.0:
                taken += a[o + _BGW * PAGE_BINS]
            else:
                bg = _bg_work(a, float(lo), float(lo + BIN_CYCLES))
                if o >= 0:
                    a[o + _BGW * PAGE_BINS] = bg
                    a[o + _BGSET * PAGE_BINS] = 1.0
                taken += bg
        avail = cap - taken
        b1 = b + 1
        if avail <= EPS:  # full for good (work is never taken back)
            if o >= 0:
                a[o + _LINK * PAGE_BINS] = b1 + 1
            b = _find(a, b1)
            continue
        if first:  # the request may arrive inside its first bin
            t_in = arrive if arrive > lo else float(lo)
            room = rate * (lo + BIN_CYCLES - t_in)
            if room < avail:
                avail = room
            if avail <= EPS:
                b = _find(a, b1)
                continue
            fill = lo + taken / rate  # the bin's booked work packed from its start
            start = t_in if t_in > fill else fill
        take = remaining if remaining < avail else avail
        if o < 0 and (b >> PAGE_SHIFT) != counted:
            need += 1
            counted = b >> PAGE_SHIFT
        if commit:
            if o < 0:
                o = _allocate(a, b)
                if lo < bg_end:  # the background it just computed
                    a[o + _BGW * PAGE_BINS] = taken - booked
                    a[o + _BGSET * PAGE_BINS] = 1.0
            filled = booked + take
            a[o + _USED * PAGE_BINS] = filled
            if b > a[_TOP]:
                a[_TOP] = b
            if filled >= cap - EPS:
                a[o + _LINK * PAGE_BINS] = b1 + 1
        remaining -= take
        if remaining <= EPS:
            end = start + take / rate if first else lo + taken / rate + take / rate
            break
        first = False  # the bins after it: the request is there from their start, only their free work limits it
        b = _find(a, b1)
    if commit:
        a[_BUSY] += work / rate
        if end > a[_LAST]:
            a[_LAST] = end
    return start, end, need


@_jit("UniTuple(float64, 2)(float64[::1], float64, float64, boolean)", cache=True)
def _book(a, arrive, work, commit):
    """:func:`_walk`, all or nothing: (start, end), or (-1, pages) when the pool lacks the free pages the request
    needs; then nothing is booked (grow the pool, and ask again)."""
    start, end, need = _walk(a, arrive, work, False)
    if not commit:
        return start, end
    if need > a[_NFREE]:
        return -1.0, float(need)
    start, end, need = _walk(a, arrive, work, True)
    return start, end


@_jit("float64(float64[::1], float64, int64)", cache=True)
def _load(a, t, bins):
    b = int(t // BIN_CYCLES)
    lo = max(b - bins, 0)
    if b <= lo:
        return 0.0
    work = 0.0
    for i in range(max(lo, int(a[_FLOOR])), b):  # pruned bins count as empty
        o = _page(a, i)
        if o >= 0:
            work += a[o + _USED * PAGE_BINS]
    if lo * BIN_CYCLES < a[_BG_END]:
        work += _bg_work(a, float(lo * BIN_CYCLES), float(b * BIN_CYCLES))
    return work / (a[_CAP] * (b - lo))


@_jit(cache=True)
def _room(a, b0, b1):
    """Per bin from ``b0`` to ``b1``: the work its requests and the background leave free."""
    out = np.empty(b1 - b0 + 1)
    cap, bg_end = a[_CAP], a[_BG_END]
    for b in range(b0, b1 + 1):
        o = _page(a, b)
        lo = b * BIN_CYCLES
        taken = a[o + _USED * PAGE_BINS] if o >= 0 else 0.0
        if lo < bg_end:
            taken += _bg_work(a, float(lo), float(lo + BIN_CYCLES))
        out[b - b0] = max(cap - taken, 0.0)
    return out


@_jit(cache=True)
def _prune(a, floor):
    """Free the pages wholly before bin ``floor`` (the table is rebuilt without them)."""
    pt, entries = int(a[_PT_OFF]), 1 << int(a[_PT_BITS])
    old = a[pt:pt + 2 * entries].copy()
    a[pt:pt + 2 * entries] = 0.0
    _rebuild_table(a, old, 0, entries, floor >> PAGE_SHIFT)
    a[_FLOOR] = floor


@_jit(cache=True)
def _forget_bg(a, first, last):
    """The background of bins ``first`` to ``last`` is to be computed again (a reservation changed it)."""
    pt, entries = int(a[_PT_OFF]), 1 << int(a[_PT_BITS])
    lo = max(first, int(a[_FLOOR]))
    for i in range(entries):
        key = a[pt + 2 * i]
        if key == 0.0:
            continue
        page = (int(key) - 1) << PAGE_SHIFT
        if page + PAGE_BINS <= lo or page > last:
            continue
        row = int(a[_POOL_OFF]) + int(a[pt + 2 * i + 1]) * _PAGE_FLOATS + _BGSET * PAGE_BINS
        for b in range(max(lo, page), min(last + 1, page + PAGE_BINS)):
            a[row + (b & (PAGE_BINS - 1))] = 0.0


class RateServer:
    """``rate`` units of work per cycle, shared in time bins; see the module docstring."""

    __slots__ = ("rate", "name", "_a", "_bg_t", "_bg_rate")

    def __init__(self, rate: float, name: str = "") -> None:
        if not rate > 0:
            raise ValueError(f"{name}: rate {rate} must be positive")
        self.rate = float(rate)
        self.name = name
        # background reservations as a step function of time: change points and the reserved rate after each
        self._bg_t: list[float] = [0.0]
        self._bg_rate: list[float] = [0.0]
        self._a = _dense(self.rate, INITIAL_CHANGE_POINTS, INITIAL_PAGES)

    @property
    def busy(self) -> float:
        """Cycles of work done (work / rate), requests and reservations together."""
        return float(self._a[_BUSY])

    @property
    def last_end(self) -> float:
        """Completion time of the latest work booked."""
        return float(self._a[_LAST])

    # --- background ------------------------------------------------------------------------------------
    def reserve(self, start: float, work: float, duration: float) -> float:
        """Book ``work`` spread evenly from ``start`` over ``duration`` cycles as background load; return the
        duration it really takes. Where requests already booked or other reservations leave less than that rate
        free, it takes what is free there and finishes later."""
        if work <= EPS or duration <= 0:
            return max(duration, 0.0)
        want = work / duration
        b0 = int(start // BIN_CYCLES)
        ts, rs = self._bg_t, self._bg_rate
        pieces: list[tuple[float, float, float]] = []  # (from, to, rate)
        t, left = start, work

        def take(seg: float, rate: float) -> None:  # ``rate`` from ``t`` for ``seg`` cycles
            nonlocal left, t
            if pieces and pieces[-1][1] == t and pieces[-1][2] == rate:
                pieces[-1] = (pieces[-1][0], t + seg, rate)
            else:
                pieces.append((t, t + seg, rate))
            left = left - rate * seg if left - rate * seg > EPS else 0.0
            t += seg

        # it keeps up with ``want`` where it can: work it could not do where the unit was full is done as soon as
        # there is room (faster than ``want``), as the requests it stands for would have queued and caught up.
        # First the bins that already hold requests from ``start`` on (booked first, they keep their capacity)...
        top = int(self._a[_TOP])
        if top >= b0:
            for k, free in enumerate(_room(self._a, b0, top).tolist()):
                hi = (b0 + k + 1) * BIN_CYCLES
                due = min(want * (hi - start), work) - (work - left)  # behind the even spread, at the bin's end
                got = min(free, due, self.rate * (hi - t))
                if got > EPS:
                    rate = got / (hi - t)
                    take(hi - t if left - got > EPS else left / rate, rate)
                else:
                    t = hi
                if left <= EPS:
                    break
        # ... then what the other reservations leave free
        i = bisect.bisect_right(ts, t) - 1
        while left > EPS:
            nxt = ts[i + 1] if i + 1 < len(ts) else math.inf
            free = max(self.rate - rs[i], 0.0)
            behind = want * (t - start) - (work - left)
            if free > want + EPS and behind > want * CATCH_UP_CYCLES:  # catching up, at the rate free
                take(min(nxt - t, behind / (free - want), left / free), free)
            elif min(want, free) > EPS:
                take(min(nxt - t, left / min(want, free)), min(want, free))
            elif nxt == math.inf:  # nothing left for it even after every reservation ends
                take(left / self.rate, self.rate)
            else:
                t = nxt
            if t >= nxt:
                i += 1
        for a, b, rate in pieces:
            for x in (a, b):  # split the step function at both ends
                k = bisect.bisect_right(ts, x) - 1
                if ts[k] != x:
                    ts.insert(k + 1, x)
                    rs.insert(k + 1, rs[k])
            for k in range(bisect.bisect_left(ts, a), bisect.bisect_left(ts, b)):  # ts is sorted, a and b in it
                rs[k] += rate
        a = self._a
        if len(ts) > a[_BG_ROOM]:  # more change points than the array has room for
            a = self._a = self._relaid(n_bg=2 * len(ts))
        off, room, n = int(a[_BG_OFF]), int(a[_BG_ROOM]), len(ts)
        a[off:off + n], a[off + room:off + room + n], a[_NBG] = ts, rs, n
        a[_BG_END] = max(a[_BG_END], t)
        _forget_bg(a, int(pieces[0][0] // BIN_CYCLES), int(t // BIN_CYCLES))  # the bins whose background changed
        a[_BUSY] += work / self.rate
        a[_LAST] = max(a[_LAST], t)
        return t - start

    def _relaid(self, n_bg: int | None = None, n_pages: int | None = None) -> np.ndarray:
        """The array laid out anew with room for ``n_bg`` change points and ``n_pages`` pages (each at least what it
        has), what it holds copied."""
        old = self._a
        o_bg, o_pages = int(old[_BG_ROOM]), int(old[_POOL_PAGES])
        n_bg, n_pages = max(n_bg or 0, o_bg), max(n_pages or 0, o_pages)
        a = _dense(self.rate, n_bg, n_pages)
        for k in (_TOP, _BUSY, _LAST, _BG_END, _NBG, _FLOOR):
            a[k] = old[k]
        n, ooff = int(old[_NBG]), int(old[_BG_OFF])
        a[_HEADER:_HEADER + n] = old[ooff:ooff + n]
        a[_HEADER + n_bg:_HEADER + n_bg + n] = old[ooff + o_bg:ooff + o_bg + n]
        # the free slots: the old ones (in the same order), then the new pages, the lowest on top
        free, ofree, nfree = int(a[_FREE_OFF]), int(old[_FREE_OFF]), int(old[_NFREE])
        a[free:free + n_pages - o_pages] = np.arange(n_pages - 1, o_pages - 1, -1)
        a[free + n_pages - o_pages:free + n_pages - o_pages + nfree] = old[ofree:ofree + nfree]
        a[_NFREE] = n_pages - o_pages + nfree
        pool, opool = int(a[_POOL_OFF]), int(old[_POOL_OFF])
        a[pool:pool + o_pages * _PAGE_FLOATS] = old[opool:opool + o_pages * _PAGE_FLOATS]
        _rebuild_table(a, old, int(old[_PT_OFF]), 1 << int(old[_PT_BITS]), 0)  # the pages keep their slots
        return a

    # --- requests -------------------------------------------------------------------------------------
    def queue_delay(self, arrive: float, work: float) -> float:
        """Cycles a request of ``work`` arriving at ``arrive`` would wait beyond its own service time: the work
        booked ahead of it (nothing is booked)."""
        return self.book(None, arrive, work, False)[1] - arrive - work / self.rate

    def serve(self, arrive: float, work: float, book: bool = True) -> tuple[float, float]:
        """Do ``work`` arriving at ``arrive``: returns (start, end) of its service (``book=False``: only say so)."""
        return self.book(None, arrive, work, book)

    def book(self, ledger: dict | None, arrive: float, work: float, commit: bool = True) -> tuple[float, float]:
        """Do ``work`` arriving at ``arrive``: returns (start, end) of its service, the work added to the requester's
        ``ledger`` (server -> work) when there is one (``commit=False``: only say when, book nothing)."""
        if ledger is not None:
            ledger[self] = ledger.get(self, 0.0) + work
        if work <= EPS:
            return arrive, arrive
        start, end = _book(self._a, arrive, work, commit)
        if start < 0.0:  # it needs ``end`` pages and the pool has fewer free: a pool twice as large (or more)
            a = self._a
            pages = 2 * int(a[_POOL_PAGES])
            while pages - int(a[_POOL_PAGES]) + int(a[_NFREE]) < end:
                pages *= 2
            self._a = self._relaid(n_pages=pages)
            start, end = _book(self._a, arrive, work, commit)
        return start, end

    def load(self, t: float, bins: int) -> float:
        """The share of its capacity booked (requests and reservations) over the ``bins`` bins before the one ``t``
        falls in: how busy the resource has just been."""
        return _load(self._a, t, bins)

    def prune(self, before: float) -> None:
        """Forget bins that end before ``before`` (no request can arrive there any more)."""
        floor = int(before // BIN_CYCLES) - 1 - LOAD_WINDOW_BINS  # keep what :meth:`load` looks back over
        if floor > self._a[_FLOOR] + 4096:
            _prune(self._a, floor)


class LoadedLatency:
    """A unit's latency growth under load: extra cycles piecewise linear in the utilization of its server over the
    last :data:`LOAD_WINDOW_BINS` bins, through measured points (``utilization_pct``, ``added_cycles``) from none
    at an idle unit, held past the last point (there the server's own queue delays requests). A rate server alone
    delays a request only once its capacity is used up; the measured queues of a real unit grow before that."""

    __slots__ = ("_x", "_y")

    def __init__(self, utilization_pct, added_cycles) -> None:
        self._x = [0.0] + [u / 100.0 for u in utilization_pct]
        self._y = [0.0] + [float(c) for c in added_cycles]

    def cycles(self, server: RateServer, t: float) -> float:
        """Extra latency of a request reaching ``server`` at ``t``."""
        xs, ys = self._x, self._y
        u = server.load(t, LOAD_WINDOW_BINS)
        if u >= xs[-1]:
            return ys[-1]
        i = bisect.bisect_right(xs, u)
        x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
        return y0 + (y1 - y0) * (u - x0) / (x1 - x0)
