"""Rate-limited resources shared inside the simulation: the building block of every unit's timing.

A :class:`RateServer` does ``rate`` units of work per cycle (instructions, bytes, wavefronts) for whoever asks.
Its time is cut into bins of ``bin_cycles``; a request takes free capacity from the bin it arrives in onwards,
so a request made later for an earlier time uses capacity left free earlier instead of queueing behind work
booked for the future, and no bin ever holds more work than the rate allows: a resource can never be busier
than its peak, whatever order the units call it in.

Work that a fast-forward skips over (a warp's steady-state loop) is booked as a *background* reservation: a
constant rate over an interval, taken from the capacity of every bin it overlaps. A reservation that would
push the resource past its rate is stretched (same work at the rate still free), and the caller is told how
long it really took.

Simulated time is in cycles; arrivals may be fractional (a 1/rate instruction slot), bins are integers.

The bins live in one numpy array per server, walked by numba-compiled functions (a request costs the interpreter
one call, where the event loop makes millions). A server whose requests come to span more than ``MAX_DENSE_BINS``
bins (a long fast-forwarded stretch between two of them) moves to sparse bins in dicts, walked by the same
algorithm in Python (:class:`_SparseBins`); ``tests/test_units.py`` holds the two to the same answers.

Every hardware unit of the chip model (``gpusim.sm`` and ``gpusim.memory``) is built from rate servers; a unit
lists them with its ``reported()`` method (the name its busy cycles go under, and the share of one instance of that
name each server is), so the engine collects every unit's busy time in one place. A requester that must know what
it asked of each server (a warp: the fast-forward extrapolates its work per server) passes a *ledger* to
:meth:`RateServer.book`.
"""

from __future__ import annotations

import bisect
import math

import numba
import numpy as np

# algorithmic, not hardware: the width of a capacity bin (the granularity at which the order of requests can be
# reshuffled), and the work below which a reservation counts as none
BIN_CYCLES = 32
EPS = 1e-9
# algorithmic: how far back (in bins) a loaded latency looks at its resource's utilization (256 cycles, shorter
# than the latencies it adds to)
LOAD_WINDOW_BINS = 8


# algorithmic: the bins a server's array starts with and the most it spans before the server moves to sparse bins
# (4 x 8 B a bin: 8 MiB at most, of which only the bins written take memory: the array is calloc'ed)
INITIAL_BINS = 4096
INITIAL_CHANGE_POINTS = 64
MAX_DENSE_BINS = 1 << 18

# --- dense bins: one float64 array per server ----------------------------------------------------------------
# its header: the latest bin holding requests, busy cycles, completion of the latest work, the end of the
# background load, the rate, a bin's capacity, the background's change points (how many, where they start, room
# for how many), where the bins start and how many there are (a power of two), the first bin a request may use
# (the bins before it are pruned) and the last bin written
(_TOP, _BUSY, _LAST, _BG_END, _RATE, _CAP, _NBG, _BG_OFF, _BG_ROOM, _BIN_OFF, _NBINS, _FLOOR, _HI) = range(13)
_HEADER = 13
# after the header: the change points of the background (time, rate after it: two rows of _BG_ROOM), then per bin
# four rows of _NBINS, a ring: bin b is at b mod _NBINS, and the array holds bins _FLOOR to _FLOOR + _NBINS - 1 (a
# bin is cleared when it is pruned). All zero in a bin never written, so a fresh array (calloc'ed) takes memory only
# where used: work booked by requests, the later bin to look at instead of a full one (plus one; 0: none), the
# background work over the bin, and whether that is computed yet (1)
_USED, _LINK, _BGW, _BGSET = range(4)
_ROWS = 4


def _dense(rate: float, n_bg: int, n_bins: int, floor: int = 0) -> np.ndarray:
    a = np.zeros(_HEADER + 2 * n_bg + _ROWS * n_bins)
    a[_TOP], a[_RATE], a[_CAP], a[_FLOOR], a[_HI] = -1.0, rate, rate * BIN_CYCLES, floor, floor - 1
    a[_BG_OFF], a[_BG_ROOM], a[_BIN_OFF], a[_NBINS] = _HEADER, n_bg, _HEADER + 2 * n_bg, n_bins
    return a


def _slots(a: np.ndarray, first: int, last: int) -> np.ndarray:
    """Where bins ``first`` to ``last`` lie in each row of the ring."""
    return np.arange(first, last + 1) & (int(a[_NBINS]) - 1)


@numba.njit(cache=True)
def _ring_copy(src, dst, first, last):
    """Bins ``first`` to ``last``, every row, from the ring of array ``src`` into that of ``dst``."""
    soff, ssize, doff, dsize = int(src[_BIN_OFF]), int(src[_NBINS]), int(dst[_BIN_OFF]), int(dst[_NBINS])
    for b in range(first, last + 1):
        i, j = b & (ssize - 1), b & (dsize - 1)
        for row in range(_ROWS):
            x = src[soff + row * ssize + i]
            if x != 0.0:  # only what was written: the rest of a fresh array stays untouched (no memory)
                dst[doff + row * dsize + j] = x


@numba.njit(cache=True)
def _ring_clear(a, first, last, row_from, row_to):
    """Rows ``row_from`` to ``row_to - 1`` of bins ``first`` to ``last`` back to zero."""
    off, size = int(a[_BIN_OFF]), int(a[_NBINS])
    for b in range(first, last + 1):
        for row in range(row_from, row_to):
            k = off + row * size + (b & (size - 1))
            if a[k] != 0.0:  # a bin never written stays untouched (reading it takes no memory)
                a[k] = 0.0


@numba.njit(cache=True)
def _bisect_right(ts, n, x):
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if x < ts[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@numba.njit(cache=True)
def _bg_work_dense(a, lo, hi):
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


@numba.njit(cache=True)
def _find(link, floor, b):
    """The first bin from ``b`` on that requests have not filled (with path compression)."""
    size = link.shape[0]
    mask = size - 1
    root = b
    while root - floor < size and link[root & mask] > 0:
        root = int(link[root & mask]) - 1
    c = b
    while c != root:
        k = c & mask
        c = int(link[k]) - 1
        link[k] = root + 1
    return root


@numba.njit(cache=True)
def _walk(a, arrive, work, commit):
    """One request (:meth:`RateServer.book`): (start, end), or (-1, bin) when it reaches a bin past the ring."""
    off, size, floor = int(a[_BIN_OFF]), int(a[_NBINS]), int(a[_FLOOR])
    mask = size - 1
    used, link = a[off:off + size], a[off + size:off + 2 * size]
    bgw, bgset = a[off + 2 * size:off + 3 * size], a[off + 3 * size:off + 4 * size]
    rate, cap, bg_end = a[_RATE], a[_CAP], a[_BG_END]
    b = math.floor(arrive) // BIN_CYCLES
    if b < floor:
        b = floor
    if b - floor < size and link[b & mask] > 0:
        b = _find(link, floor, b)
    remaining = work
    first = True
    start = end = 0.0
    while True:
        if b - floor >= size:
            return -1.0, float(b)
        k = b & mask
        lo = b * BIN_CYCLES
        booked = used[k]
        taken = booked
        if lo < bg_end:
            if bgset[k] == 0.0:  # not computed yet
                bgw[k] = _bg_work_dense(a, float(lo), float(lo + BIN_CYCLES))
                bgset[k] = 1.0
                if b > a[_HI]:
                    a[_HI] = b
            taken += bgw[k]
        avail = cap - taken
        b1 = b + 1
        if avail <= EPS:  # full for good (work is never taken back)
            link[k] = b1 + 1
            if b > a[_HI]:
                a[_HI] = b
            b = _find(link, floor, b1)
            continue
        if first:  # the request may arrive inside its first bin
            t_in = arrive if arrive > lo else float(lo)
            room = rate * (lo + BIN_CYCLES - t_in)
            if room < avail:
                avail = room
            if avail <= EPS:
                b = _find(link, floor, b1)
                continue
            fill = lo + taken / rate  # the bin's booked work packed from its start
            start = t_in if t_in > fill else fill
        take = remaining if remaining < avail else avail
        if commit:
            filled = booked + take
            used[k] = filled
            if b > a[_TOP]:
                a[_TOP] = b
            if b > a[_HI]:
                a[_HI] = b
            if filled >= cap - EPS:
                link[k] = b1 + 1
        remaining -= take
        if remaining <= EPS:
            end = start + take / rate if first else lo + taken / rate + take / rate
            break
        first = False  # the bins after it: the request is there from their start, only their free work limits it
        b = _find(link, floor, b1)
    if commit:
        a[_BUSY] += work / rate
        if end > a[_LAST]:
            a[_LAST] = end
    return start, end


@numba.njit("UniTuple(float64, 2)(float64[::1], float64, float64, boolean)", cache=True)
def _book_dense(a, arrive, work, commit):
    """:func:`_walk`, all or nothing: a request that reaches past the array books nothing (a booking first walks
    without booking; what that walk writes, links past full bins and computed background, holds either way)."""
    if commit:
        start, end = _walk(a, arrive, work, False)
        if start < 0.0:
            return start, end
    return _walk(a, arrive, work, commit)


@numba.njit("float64(float64[::1], float64, int64)", cache=True)
def _load_dense(a, t, bins):
    b = int(t // BIN_CYCLES)
    lo = max(b - bins, 0)
    if b <= lo:
        return 0.0
    off, size, floor = int(a[_BIN_OFF]), int(a[_NBINS]), int(a[_FLOOR])
    work = 0.0
    for i in range(max(lo, floor), b):  # pruned bins count as empty
        if i - floor < size:
            work += a[off + (i & (size - 1))]
    if lo * BIN_CYCLES < a[_BG_END]:
        work += _bg_work_dense(a, float(lo * BIN_CYCLES), float(b * BIN_CYCLES))
    return work / (a[_CAP] * (b - lo))


class _SparseBins:
    """A server's bins in dicts, for a server whose requests span more bins than an array should hold: the same
    algorithm as :func:`_walk` and :func:`_load_dense`, in Python."""

    __slots__ = ("rate", "cap", "used", "next", "bg_bin", "top", "floor", "busy", "last_end", "bg_end", "bg_t",
                 "bg_rate")

    def __init__(self, a: np.ndarray, bg_t: list[float], bg_rate: list[float]) -> None:
        off, size, floor = int(a[_BIN_OFF]), int(a[_NBINS]), int(a[_FLOOR])
        # the bins written, from the floor on, in bin order
        slots = _slots(a, floor, int(a[_HI]))
        used, link, bgw, bgset = (a[off + row * size:off + (row + 1) * size][slots] for row in range(_ROWS))
        self.rate, self.cap = float(a[_RATE]), float(a[_CAP])
        self.used = {floor + int(k): float(used[k]) for k in np.flatnonzero(used)}
        self.next = {floor + int(k): int(link[k]) - 1 for k in np.flatnonzero(link)}
        self.bg_bin = {floor + int(k): float(bgw[k]) for k in np.flatnonzero(bgset)}
        self.top, self.floor = int(a[_TOP]), floor
        self.busy, self.last_end, self.bg_end = float(a[_BUSY]), float(a[_LAST]), float(a[_BG_END])
        self.bg_t, self.bg_rate = bg_t, bg_rate  # the server's own lists: reservations change them

    def _bg_work(self, a: float, b: float) -> float:
        ts, rs = self.bg_t, self.bg_rate
        i = bisect.bisect_right(ts, a) - 1
        if i == len(ts) - 1 or ts[i + 1] >= b:
            return rs[i] * (b - a)
        total, t = 0.0, a
        while t < b:
            nxt = ts[i + 1] if i + 1 < len(ts) else math.inf
            seg = min(nxt, b)
            total += rs[i] * (seg - t)
            t, i = seg, i + 1
        return total

    def _find(self, b: int) -> int:
        nxt = self.next
        path = []
        while b in nxt:
            path.append(b)
            b = nxt[b]
        for p in path:
            nxt[p] = b
        return b

    def _taken(self, b: int, lo: int) -> tuple[float, float]:
        booked = self.used.get(b, 0.0)
        if lo >= self.bg_end:
            return booked, booked
        bg = self.bg_bin.get(b)
        if bg is None:
            bg = self.bg_bin[b] = self._bg_work(float(lo), float(lo + BIN_CYCLES))
        return booked, booked + bg

    def book(self, arrive: float, work: float, commit: bool) -> tuple[float, float]:
        b = max(math.floor(arrive) // BIN_CYCLES, self.floor)
        b = self._find(b)
        rate, cap, used, nxt = self.rate, self.cap, self.used, self.next
        remaining, first = work, True
        start = end = 0.0
        while True:
            lo = b * BIN_CYCLES
            booked, taken = self._taken(b, lo)
            avail = cap - taken
            b1 = b + 1
            if avail <= EPS:
                nxt[b] = b1
                b = self._find(b1)
                continue
            if first:
                t_in = arrive if arrive > lo else float(lo)
                room = rate * (lo + BIN_CYCLES - t_in)
                if room < avail:
                    avail = room
                if avail <= EPS:
                    b = self._find(b1)
                    continue
                fill = lo + taken / rate
                start = t_in if t_in > fill else fill
            take = remaining if remaining < avail else avail
            if commit:
                filled = booked + take
                used[b] = filled
                self.top = max(self.top, b)
                if filled >= cap - EPS:
                    nxt[b] = b1
            remaining -= take
            if remaining <= EPS:
                end = start + take / rate if first else lo + taken / rate + take / rate
                break
            first = False
            b = self._find(b1)
        if commit:
            self.busy += work / rate
            self.last_end = max(self.last_end, end)
        return float(start), float(end)

    def load(self, t: float, bins: int) -> float:
        b = int(t // BIN_CYCLES)
        lo = max(b - bins, 0)
        if b <= lo:
            return 0.0
        work = 0.0
        for i in range(lo, b):
            work += self.used.get(i, 0.0)
        if lo * BIN_CYCLES < self.bg_end:
            work += self._bg_work(float(lo * BIN_CYCLES), float(b * BIN_CYCLES))
        return work / (self.cap * (b - lo))

    def forget_bg(self, first: int, last: int) -> None:
        cache = self.bg_bin
        for b in [b for b in cache if first <= b <= last]:
            del cache[b]

    def prune(self, floor: int) -> None:
        if floor > self.floor + 4096:
            self.used = {b: v for b, v in self.used.items() if b >= floor}
            self.next = {b: v for b, v in self.next.items() if b >= floor}
            self.bg_bin = {b: v for b, v in self.bg_bin.items() if b >= floor}
            self.floor = floor


class RateServer:
    """``rate`` units of work per cycle, shared in time bins; see the module docstring."""

    __slots__ = ("rate", "name", "_a", "_sparse", "_bg_t", "_bg_rate")

    def __init__(self, rate: float, name: str = "") -> None:
        if not rate > 0:
            raise ValueError(f"{name}: rate {rate} must be positive")
        self.rate = float(rate)
        self.name = name
        # background reservations as a step function of time: change points and the reserved rate after each
        self._bg_t: list[float] = [0.0]
        self._bg_rate: list[float] = [0.0]
        self._a = _dense(self.rate, INITIAL_CHANGE_POINTS, INITIAL_BINS)  # the bins (None once sparse)
        self._sparse: _SparseBins | None = None

    @property
    def busy(self) -> float:
        """Cycles of work done (work / rate), requests and reservations together."""
        return self._sparse.busy if self._sparse is not None else float(self._a[_BUSY])

    @property
    def last_end(self) -> float:
        """Completion time of the latest work booked."""
        return self._sparse.last_end if self._sparse is not None else float(self._a[_LAST])

    # --- background ------------------------------------------------------------------------------------
    def reserve(self, start: float, work: float, duration: float) -> float:
        """Book ``work`` spread evenly from ``start`` over ``duration`` cycles as background load; return the
        duration it really takes. It starts after the bins that already hold requests, and where other
        reservations leave less than that rate free, it takes what is free there and finishes later."""
        if work <= EPS or duration <= 0:
            return max(duration, 0.0)
        want = work / duration
        b0 = int(start // BIN_CYCLES)
        booked = 0.0
        ts, rs = self._bg_t, self._bg_rate
        pieces: list[tuple[float, float, float]] = []  # (from, to, rate)
        # after the bins holding requests already booked from ``start`` on: it never shares a bin with them
        top = self._sparse.top if self._sparse is not None else int(self._a[_TOP])
        t = max(start, (top + 1) * BIN_CYCLES) if top >= b0 else start
        left = work
        i = bisect.bisect_right(ts, t) - 1
        while left > EPS:
            nxt = ts[i + 1] if i + 1 < len(ts) else math.inf
            rate = min(want, max(self.rate - rs[i] - booked, 0.0))
            if rate > EPS:
                seg = min(nxt - t, left / rate)
                pieces.append((t, t + seg, rate))
                left -= rate * seg
                t += seg
            else:
                t = nxt
            if t >= nxt:
                i += 1
            if nxt == math.inf and rate <= EPS:  # nothing left for it even after every reservation ends
                rate = max(self.rate - booked, self.rate * 0.5)
                pieces.append((t, t + left / rate, rate))
                t += left / rate
                left = 0.0
        for a, b, rate in pieces:
            for x in (a, b):  # split the step function at both ends
                k = bisect.bisect_right(ts, x) - 1
                if ts[k] != x:
                    ts.insert(k + 1, x)
                    rs.insert(k + 1, rs[k])
            for k in range(ts.index(a), ts.index(b)):
                rs[k] += rate
        first, last = int(pieces[0][0] // BIN_CYCLES), int(t // BIN_CYCLES)  # bins whose background changed
        if self._sparse is not None:
            sp = self._sparse
            sp.bg_end = max(sp.bg_end, t)
            sp.forget_bg(first, last)
            sp.busy += work / self.rate
            sp.last_end = max(sp.last_end, t)
            return t - start
        a = self._a
        if len(ts) > a[_BG_ROOM]:  # more change points than the array has room for
            a = self._a = self._relaid(2 * len(ts), int(a[_NBINS]))
        off, room, n = int(a[_BG_OFF]), int(a[_BG_ROOM]), len(ts)
        a[off:off + n], a[off + room:off + room + n], a[_NBG] = ts, rs, n
        a[_BG_END] = max(a[_BG_END], t)
        lo, hi = max(first, int(a[_FLOOR])), min(last, int(a[_HI]))  # no bin past _HI holds any
        _ring_clear(a, lo, hi, _BGSET, _BGSET + 1)
        a[_BUSY] += work / self.rate
        a[_LAST] = max(a[_LAST], t)
        return t - start

    def _relaid(self, n_bg: int, n_bins: int) -> np.ndarray:
        """The array laid out anew with room for ``n_bg`` change points and a ring of ``n_bins`` bins, what it holds
        copied."""
        old = self._a
        floor, hi = int(old[_FLOOR]), int(old[_HI])
        a = _dense(self.rate, n_bg, n_bins, floor)
        a[:_BG_OFF] = old[:_BG_OFF]
        a[_HI] = hi
        n, ooff, oroom = int(old[_NBG]), int(old[_BG_OFF]), int(old[_BG_ROOM])
        a[_HEADER:_HEADER + n] = old[ooff:ooff + n]
        a[_HEADER + n_bg:_HEADER + n_bg + n] = old[ooff + oroom:ooff + oroom + n]
        _ring_copy(old, a, floor, hi)
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
        while self._sparse is None:
            start, end = _book_dense(self._a, arrive, work, commit)
            if start >= 0.0:
                return start, end
            self._make_room(int(end))  # it reaches bin ``end``, past the array
        return self._sparse.book(arrive, work, commit)

    def _make_room(self, bin_: int) -> None:
        """A request reaches bin ``bin_``, past the ring: a ring twice as large (or as large as needed), or sparse bins
        past MAX_DENSE_BINS."""
        a = self._a
        floor = int(a[_FLOOR])
        if bin_ - floor + 1 > MAX_DENSE_BINS:
            self._sparse = _SparseBins(a, self._bg_t, self._bg_rate)
            self._a = None
            return
        size = int(a[_NBINS])
        while size < bin_ - floor + 1:
            size *= 2
        self._a = self._relaid(int(a[_BG_ROOM]), size)

    def load(self, t: float, bins: int) -> float:
        """The share of its capacity booked (requests and reservations) over the ``bins`` bins before the one ``t``
        falls in: how busy the resource has just been."""
        if self._sparse is not None:
            return self._sparse.load(t, bins)
        return _load_dense(self._a, t, bins)

    def prune(self, before: float) -> None:
        """Forget bins that end before ``before`` (no request can arrive there any more)."""
        floor = int(before // BIN_CYCLES) - 1 - LOAD_WINDOW_BINS  # keep what :meth:`load` looks back over
        if self._sparse is not None:
            self._sparse.prune(floor)
            return
        a = self._a
        if floor <= a[_FLOOR] + 4096:
            return
        old, hi = int(a[_FLOOR]), int(a[_HI])
        # clear the pruned bins' slots: later bins take them
        _ring_clear(a, old, min(hi, floor - 1, old + int(a[_NBINS]) - 1), 0, _ROWS)
        a[_FLOOR] = floor
        a[_HI] = max(hi, floor - 1)


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
