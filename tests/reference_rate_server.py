"""The rate server as plain Python over dicts, as gpusim had it before its bins moved into numba-compiled pages
(gpusim/resources.py at commit 686204d): the reference ``tests/test_chip_model.py`` holds the compiled server to, bit
for bit, on mixes of requests, reservations, probes and prunes."""

from __future__ import annotations

import bisect
import math

from gpusim.resources import BIN_CYCLES, CATCH_UP_CYCLES, EPS, LOAD_WINDOW_BINS


class RateServer:
    """``rate`` units of work per cycle, shared in time bins; see the module docstring."""

    __slots__ = ("rate", "name", "_cap", "_used", "_top", "_next", "_bg_t", "_bg_rate", "_bg_end", "_bg_bin", "busy",
                 "last_end", "_floor")

    def __init__(self, rate: float, name: str = "") -> None:
        if not rate > 0:
            raise ValueError(f"{name}: rate {rate} must be positive")
        self.rate = float(rate)
        self.name = name
        self._cap = self.rate * BIN_CYCLES
        self._used: dict[int, float] = {}  # bin -> work booked by requests
        self._top = -1  # the latest bin holding requests
        self._next: dict[int, int] = {}  # a bin that requests filled -> a later bin to look at instead
        # background reservations as a step function of time: change points and the reserved rate after each
        self._bg_t: list[float] = [0.0]
        self._bg_rate: list[float] = [0.0]
        self._bg_end = 0.0  # no background load from here on
        self._bg_bin: dict[int, float] = {}  # bin -> background work over it (a cache, cleared by every reservation)
        self.busy = 0.0  # cycles of work done (work / rate), requests and reservations together
        self.last_end = 0.0  # completion time of the latest work booked
        self._floor = 0  # bins below this were pruned (they lie before every live warp's clock)

    # --- background ------------------------------------------------------------------------------------
    def _bg_at(self, t: float) -> float:
        return self._bg_rate[bisect.bisect_right(self._bg_t, t) - 1]

    def _bg_work(self, a: float, b: float) -> float:
        """Background work reserved over [a, b)."""
        ts, rs = self._bg_t, self._bg_rate
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
        top = self._top
        if top >= b0:
            for k, free in enumerate(self._room(b0, top)):
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
            for k in range(ts.index(a), ts.index(b)):
                rs[k] += rate
        self._bg_end = max(self._bg_end, t)
        self._forget_bg(int(pieces[0][0] // BIN_CYCLES), int(t // BIN_CYCLES))
        self.busy += work / self.rate
        self.last_end = max(self.last_end, t)
        return t - start

    def _room(self, b0: int, b1: int) -> list[float]:
        """Per bin from ``b0`` to ``b1``: the work its requests and the background leave free."""
        out = []
        for b in range(b0, b1 + 1):
            lo = b * BIN_CYCLES
            taken = self._used.get(b, 0.0)
            if lo < self._bg_end:
                taken += self._bg_work(float(lo), float(lo + BIN_CYCLES))
            out.append(max(self._cap - taken, 0.0))
        return out

    def _forget_bg(self, first: int, last: int) -> None:
        """Drop the cached background work of bins ``first`` to ``last`` (a reservation changed it there)."""
        cache = self._bg_bin
        if len(cache) <= last - first:
            for b in [b for b in cache if first <= b <= last]:
                del cache[b]
        else:
            for b in range(first, last + 1):
                cache.pop(b, None)

    # --- requests -------------------------------------------------------------------------------------
    def _find(self, b: int) -> int:
        """The first bin from ``b`` on that requests have not filled (with path compression)."""
        nxt = self._next
        if b not in nxt:
            return b
        path = []
        while b in nxt:
            path.append(b)
            b = nxt[b]
        for p in path:
            nxt[p] = b
        return b

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
        b = math.floor(arrive) // BIN_CYCLES  # = floor(arrive / BIN_CYCLES), in integers
        if b < self._floor:
            b = self._floor
        nxt = self._next
        if b in nxt:
            b = self._find(b)
        rate, cap, used = self.rate, self._cap, self._used
        bg_end, bg_bin = self._bg_end, self._bg_bin
        remaining = work
        # the first bin with room: the request may arrive inside it
        while True:
            lo = b * BIN_CYCLES
            booked = used.get(b, 0.0)
            taken = booked
            if lo < bg_end:
                bg = bg_bin.get(b)
                taken += self._bg_in(b, lo) if bg is None else bg
            avail = cap - taken
            b1 = b + 1
            if avail <= EPS:  # full for good (work is never taken back)
                nxt[b] = b1
                b = self._find(b1) if b1 in nxt else b1
                continue
            t_in = arrive if arrive > lo else lo
            room = rate * (lo + BIN_CYCLES - t_in)
            if room < avail:
                avail = room
            if avail > EPS:
                break
            b = self._find(b1) if b1 in nxt else b1
        fill = lo + taken / rate  # the bin's booked work packed from its start
        start = t_in if t_in > fill else fill
        take = remaining if remaining < avail else avail
        if commit:
            filled = booked + take
            used[b] = filled
            if b > self._top:
                self._top = b
            if filled >= cap - EPS:
                nxt[b] = b1
        remaining -= take
        if remaining <= EPS:
            end = start + take / rate
        else:
            b = self._find(b1) if b1 in nxt else b1
            # the bins after it: the request is there from their start, so only their free work limits it
            while True:
                lo = b * BIN_CYCLES
                booked = used.get(b, 0.0)
                taken = booked
                if lo < bg_end:
                    bg = bg_bin.get(b)
                    taken += self._bg_in(b, lo) if bg is None else bg
                avail = cap - taken
                b1 = b + 1
                if avail <= EPS:
                    nxt[b] = b1
                    b = self._find(b1) if b1 in nxt else b1
                    continue
                take = remaining if remaining < avail else avail
                if commit:
                    filled = booked + take
                    used[b] = filled
                    if b > self._top:
                        self._top = b
                    if filled >= cap - EPS:
                        nxt[b] = b1
                remaining -= take
                if remaining <= EPS:
                    end = lo + taken / rate + take / rate
                    break
                b = self._find(b1) if b1 in nxt else b1
        if commit:
            self.busy += work / rate
            if end > self.last_end:
                self.last_end = end
        return start, end

    def load(self, t: float, bins: int) -> float:
        """The share of its capacity booked (requests and reservations) over the ``bins`` bins before the one ``t``
        falls in: how busy the resource has just been."""
        b = int(t // BIN_CYCLES)
        lo = max(b - bins, 0)
        if b <= lo:
            return 0.0
        used = self._used
        work = 0.0
        for i in range(lo, b):
            work += used.get(i, 0.0)
        if lo * BIN_CYCLES < self._bg_end:
            work += self._bg_work(lo * BIN_CYCLES, b * BIN_CYCLES)
        return work / (self._cap * (b - lo))

    def _bg_in(self, b: int, lo: int) -> float:
        """Background work reserved over bin ``b`` (starting at ``lo``), cached."""
        bg = self._bg_bin.get(b)
        if bg is None:
            bg = self._bg_bin[b] = self._bg_work(lo, lo + BIN_CYCLES)
        return bg

    def prune(self, before: float) -> None:
        """Forget bins that end before ``before`` (no request can arrive there any more)."""
        floor = int(before // BIN_CYCLES) - 1 - LOAD_WINDOW_BINS  # keep what :meth:`load` looks back over
        if floor > self._floor + 4096:
            self._used = {b: v for b, v in self._used.items() if b >= floor}
            self._next = {b: v for b, v in self._next.items() if b >= floor}
            self._bg_bin = {b: v for b, v in self._bg_bin.items() if b >= floor}
            self._floor = floor
