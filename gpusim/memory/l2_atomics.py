"""The L2's atomic units: where global atomics on the same lines wait for each other.

Measured on the H100's die (``validate/micro/run_red_lines.py``, ``validate/micro/run_red_ops.py``;
``validate/measurements/h200/redlines-2026-11-28.json``, ``redops-2026-11-28.json``), the whole grid's atomics on a
few lines:

- a warp instruction sends one request per line for the distinct words its lanes touch there; lanes on one word
  are separate requests (32 lanes on one word: 32 requests);
- **a line** applies its requests one at a time: ``[l2] atomic_word_ns`` per distinct word, at least
  ``[l2] atomic_request_min_ns`` (integers; ``atomic_float_request_min_ns`` for a float add): one word 0.73 ns
  (float 1.76), 32 words 2.5 ns;
- **a slice** serves the requests of its lines at ``atomic_slice_request_ns`` plus ``atomic_slice_sector_ns`` per
  sector a request touches, whatever the line: 8 adjacent lines (``atomic_slice_bytes``) with a request of 32 words
  each take 1.17 ns a request, where one line alone takes 2.5.

The line-to-slice hash is not known, so lines farther apart than a slice's bytes are taken to be served apart (a
lower bound where the hash puts them in one slice: eight lines 512 B apart measure 6.4 us a round where the model
says 2.6).

The builder (:mod:`gpusim.chip`) says, for each execution of a global atomic by a warp, the line and the slice it
loads most and the nanoseconds of its requests on each (:func:`hottest`), and the chance that another CTA's warp loads
the same line or slice (:func:`sharing`); the unit books them at run time, each request times the real CTAs its CTA
stands for that share its line or slice.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from gpusim.resources import RateServer
from gpusim.sm.clock import Clock


@dataclass(frozen=True)
class AtomicCosts:
    """What one request costs a line and a slice (``[l2] atomic_*``), for one operation (integer or float)."""

    request_min_ns: float
    word_ns: float
    slice_request_ns: float
    slice_sector_ns: float
    line_bytes: int
    sector_bytes: int
    slice_bytes: int

    @classmethod
    def of(cls, spec, line_bytes: int, float_op: bool) -> AtomicCosts:
        """The costs ``spec`` (an :class:`~gpusim.memory.l2.L2Spec`) states, for a float add or an integer op."""
        return cls(spec.atomic_float_request_min_ns if float_op else spec.atomic_request_min_ns, spec.atomic_word_ns,
                   spec.atomic_slice_request_ns, spec.atomic_slice_sector_ns, line_bytes, spec.sector_bytes,
                   spec.atomic_slice_bytes)

    def line(self, addresses, word_bytes: int) -> tuple[float, float]:
        """(the line's nanoseconds, the slice's) for one line's share of a warp instruction: ``addresses`` are the
        active lanes' byte addresses in the line. Request ``i`` carries the words with more than ``i`` lanes on
        them."""
        words = Counter(int(a) // word_bytes for a in addresses)
        mult = sorted(words.values(), reverse=True)
        line_ns = slice_ns = 0.0
        for i in range(mult[0] if mult else 0):
            carried = [w for w, m in words.items() if m > i]
            line_ns += max(self.request_min_ns, self.word_ns * len(carried))
            sectors = len({w * word_bytes // self.sector_bytes for w in carried})
            slice_ns += self.slice_request_ns + self.slice_sector_ns * sectors
        return line_ns, slice_ns


def hottest(addresses: np.ndarray, word_bytes: int, costs: AtomicCosts) -> tuple[np.ndarray, ...]:
    """Per warp of one execution (``addresses``: (repeat, warps, lanes) absolute byte addresses, negative off): the
    line its instructions load most and their nanoseconds there, and the slice they load most and theirs there;
    (-1, 0, -1, 0) for a warp with no lane on."""
    reps, warps, _ = addresses.shape
    out = (np.full(warps, -1, dtype=np.int64), np.zeros(warps), np.full(warps, -1, dtype=np.int64), np.zeros(warps))
    for w in range(warps):
        per_line: dict[int, float] = {}
        per_slice: dict[int, float] = {}
        for r in range(reps):
            lanes = addresses[r, w]
            on = lanes[lanes >= 0]
            lines = on // costs.line_bytes
            for line in np.unique(lines).tolist():
                ln, sn = costs.line(on[lines == line], word_bytes)
                s = line * costs.line_bytes // costs.slice_bytes
                per_line[line] = per_line.get(line, 0.0) + ln
                per_slice[s] = per_slice.get(s, 0.0) + sn
        for k, per in ((0, per_line), (2, per_slice)):
            if per:
                key = min(per, key=lambda x, per=per: (-per[x], x))
                out[k][w], out[k + 1][w] = key, per[key]
    return out


def sharing(keys_of: list[list[frozenset]], identical: list[list[bool]] | None) -> float:
    """The chance that another CTA's warp puts its atomic on a line (or slice) one CTA's same warp loads, from an evenly
    spaced sample of CTAs: ``keys_of[i][w]`` the lines (or slices) warp ``w`` of sampled CTA ``i`` touches; the share of
    them the same warp of each other sampled CTA touches too. ``identical[i][j]``: the two CTAs' addresses are copies
    (an operation whose addresses come from data, outside the CTAs emulated): such pairs tell nothing and are left
    out, unless every pair is one. 1 for a global counter, about 0 for a scatter over many lines."""
    n = len(keys_of)
    pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
    if identical is not None:
        told = [(i, j) for i, j in pairs if not identical[i][j]]
        pairs = told or pairs
    shares = [len(a & b) / len(a) for i, j in pairs for a, b in zip(keys_of[i], keys_of[j], strict=True) if a]
    return sum(shares) / len(shares) if shares else 0.0


class L2Atomics:
    """Stage ``L2 atomics``: a server per line and per slice the simulated CTAs' atomics load (known before the run:
    the builder's, each CTA's own), each request's nanoseconds times the real CTAs its CTA stands for that share
    them. A request is applied when its line and its slice have (``atomic_done``): an ATOMG's old value
    waits for that, a RED's warp does not (the kernel ends when the units are done)."""

    NAME = "L2 atomics"
    LINES, SLICES = "L2 atomics (lines)", "L2 atomics (slices)"  # what their servers' busy time is reported under

    def __init__(self, keys, cycles_per_ns: float) -> None:
        self.servers = {k: RateServer(1.0, self.NAME) for k in sorted(keys)}
        self.cycles_per_ns = cycles_per_ns

    @classmethod
    def from_spec(cls, clock: Clock, keys) -> L2Atomics:
        """Servers for ``keys`` (("line" | "slice", id)), at ``clock``."""
        return cls(keys, clock.cycles_of_ns(1.0))

    def serve(self, request, t: float) -> float:
        if request.atomic is None:
            return t
        for key, ns in request.atomic:
            end = self.servers[key].book(request.ledger, t, ns * self.cycles_per_ns)[1]
            request.atomic_done = max(request.atomic_done, end)
        return t

    def reported(self) -> list[tuple[str, RateServer, float]]:
        """The lines' servers and the slices', each kind as a share of one unit (its servers' mean busy time)."""
        out = []
        for kind, name in (("line", self.LINES), ("slice", self.SLICES)):
            mine = [s for k, s in self.servers.items() if k[0] == kind]
            out += [(name, s, 1.0 / len(mine)) for s in mine]
        return out
