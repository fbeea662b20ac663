"""Shared-memory bank conflicts: the exact wavefront count of one warp instruction, as a pure function.

Hardware rules (``/work/shared/reference/h100.md`` §3):

* Shared memory has ``banks`` banks of ``bank_width_bytes`` (32 of 4 bytes on the H100); consecutive words
  map to consecutive banks, so the bank of byte address ``a`` is ``(a // bank_width_bytes) % banks`` [PG].
* One request per shared-memory instruction on sm_70 and later; the request is split into conflict-free
  *wavefronts*, each costing one cycle of the shared-memory pipe [NCU] §2.3.7, §2.11.1.
* Lanes reading the same 32-bit word are served once (broadcast); for stores one lane wins, which costs
  the same as a broadcast [PG], [NCU].
* A wavefront moves at most one word per bank, i.e. ``banks * bank_width_bytes`` (128 on the H100) bytes,
  so the ideal count on the H100 is 1 / 2 / 4 wavefronts for a full warp of 32 / 64 / 128-bit accesses
  [F1], [F2].
* Wide accesses are served in *phases*: 128-bit accesses by quarter warps (lanes 0-7, 8-15, ...),
  64-bit accesses by half warps (community claim, unverified on sm_90); conflicts count only within a
  phase [GTC19], cutlass#328. The rule lives in :func:`phase_lanes` alone, so a microbenchmark that
  measures something different on sm_90 changes one function.
* ncu's ``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}`` equals wavefronts minus the ideal
  count [F2].
* ldmatrix / stmatrix: eight lanes give the eight 16-byte row addresses of each 8x8 b16 matrix, one
  matrix per 128-byte phase [PTX], [LC] (inference, unverified on hardware).

Conventions: ``addresses`` holds the ``lanes`` byte addresses of one warp instruction in lane order; a
negative address marks an inactive (predicated-off) lane. The hardware numbers (``banks``,
``bank_width_bytes``, ``lanes`` = threads per warp) are required keyword arguments: the caller passes the
config's ``[shared_memory]`` and ``[sm]`` values, so they have one source, ``configs/``. The module constants
below are instruction-set facts (PTX access widths and ldmatrix shapes) and the cache's own sizes.

The scalar functions are cached per distinct pattern. Bank conflicts are invariant under shifting all
addresses by a multiple of ``banks * bank_width_bytes`` (128 B on the H100), so the cache key is the
pattern shifted so that its lowest active address lies in the first ``banks * bank_width_bytes`` bytes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from gpusim.specfield import spec_field

SHARED_ACCESS_BYTES = (4, 8, 16)  # ld.shared / st.shared widths per lane: 32, 64, 128 bit
LDMATRIX_ROWS = 8  # rows of one 8x8 b16 matrix [PTX]
LDMATRIX_ROW_BYTES = 16  # bytes of one row: 8 b16 elements [PTX]
LDMATRIX_COUNTS = (1, 2, 4)  # .x1, .x2, .x4 [PTX]
# algorithmic, not hardware: how many distinct patterns each cached function remembers, and how many warp
# instructions one vectorized block holds (keeps the temporaries cache-sized: 6x faster)
PATTERN_CACHE_SIZE = 1 << 16
BATCH_ROWS = 4096

Addresses = np.ndarray | Sequence[int]


def warp_addresses(addresses: Addresses, access_bytes: int, widths: tuple[int, ...], *, lanes: int,
                   batch: bool = False) -> np.ndarray:
    """Check lane addresses and return them as an int64 array of shape ``(n, lanes)``.

    ``batch=False`` expects one warp instruction (``lanes`` addresses), ``batch=True`` an ``(n, lanes)``
    array of them. Raises ``ValueError`` (one line) for a wrong shape, non-integer addresses, an access
    width not in ``widths``, or an active address not aligned to the access width.
    """
    a = np.asarray(addresses)
    want = (a.ndim == 2 and a.shape[1] == lanes) if batch else a.shape == (lanes,)
    if not want:
        what = f"an (n, {lanes}) array of lane addresses" if batch else f"{lanes} lane addresses"
        raise ValueError(f"expected {what}, got shape {a.shape}")
    if a.size and a.dtype.kind not in "iu":
        raise ValueError(f"lane addresses must be integers, got dtype {a.dtype}")
    if access_bytes not in widths:
        raise ValueError(f"access_bytes={access_bytes} is not an allowed access width "
                         f"(allowed: {', '.join(map(str, widths))})")
    a = a.astype(np.int64).reshape(-1, lanes)
    bad = (a >= 0) & (a % access_bytes != 0)
    if bad.any():
        row, lane = (int(i) for i in np.argwhere(bad)[0])
        where = f"row {row} lane {lane}" if batch else f"lane {lane}"
        raise ValueError(f"{where} address {a[row, lane]} is not aligned to the {access_bytes}-byte access width")
    return a


def _check_banks(banks: int, bank_width_bytes: int) -> None:
    if banks < 1 or bank_width_bytes < 1:
        raise ValueError(f"banks={banks} and bank_width_bytes={bank_width_bytes} must both be >= 1")


def _check_lanes(active_lanes: int, lanes: int) -> None:
    if not 0 <= active_lanes <= lanes:
        raise ValueError(f"active_lanes={active_lanes} is outside 0..{lanes}")


def phase_lanes(access_bytes: int, *, banks: int, bank_width_bytes: int, lanes: int) -> int:
    """Lanes served together in one phase: as many as fill one wavefront of ``banks * bank_width_bytes``.

    On the H100 this gives 32 lanes for 32-bit accesses (one phase), 16 for 64-bit (half warps: lanes
    0-15, 16-31) and 8 for 128-bit (quarter warps) [GTC19], cutlass#328 (h100.md §3, "Thread grouping"),
    confirmed for sm_90 by our strided LDS.64/LDS.128 microbenchmarks. Accesses whose lanes come in
    uniform-address pairs get phases twice as wide (:func:`uniform_pairs`). These two functions are the
    only place the phase rule lives.
    """
    return max(1, min(lanes, banks * bank_width_bytes // access_bytes))


def _lane_words(a: np.ndarray, access_bytes: int, bank_width_bytes: int) -> np.ndarray:
    """Bank words each lane touches: shape ``a.shape + (k,)``, -1 where the lane is inactive."""
    k = -(-access_bytes // bank_width_bytes)
    words = (a // bank_width_bytes)[..., None] + np.arange(k, dtype=np.int64)
    return np.where((a >= 0)[..., None], words, -1)


def uniform_pairs(a: np.ndarray) -> np.ndarray:
    """Rows whose every lane shares its address with lane ``n ^ 1``, or every lane with lane ``n ^ 2``.

    Such a 64- or 128-bit access needs half as many distinct addresses, and the hardware serves it in
    phases of twice as many lanes: LDS.128 broadcast costs 2 wavefronts and LDS.64 broadcast 1, measured
    on our H100 (validate/micro, ``micro-2026-11-22.json``), matching the "uniform-address pairs" rule
    h100.md §3 quotes for CC 7.x ([F1]).
    """
    lanes = np.arange(a.shape[1])
    return (a == a[:, lanes ^ 1]).all(axis=1) | (a == a[:, lanes ^ 2]).all(axis=1)


def _phase_words(a: np.ndarray, access_bytes: int, banks: int, bank_width_bytes: int,
                 per: int | None = None) -> np.ndarray:
    """Words of each phase, lane-major: shape ``(n, phases, lanes_per_phase * k)``, -1 for inactive."""
    n, lanes = a.shape
    if per is None:
        per = phase_lanes(access_bytes, banks=banks, bank_width_bytes=bank_width_bytes, lanes=lanes)
    phases = -(-lanes // per)
    if phases * per != lanes:  # a bank geometry whose phases do not divide the warp: pad with idle lanes
        a = np.concatenate([a, np.full((n, phases * per - lanes), -1, dtype=np.int64)], axis=1)
    words = _lane_words(a, access_bytes, bank_width_bytes)
    return words.reshape(n, phases, per * words.shape[2])


def _phase_costs(words: np.ndarray, banks: int) -> np.ndarray:
    """Wavefronts of each phase: max over banks of the number of distinct words in that bank.

    ``words`` has shape ``(n, phases, m)`` with -1 for unused slots; returns shape ``(n, phases)``; a phase
    with no word costs 0. Identical words count once (broadcast on loads, one winner on stores).
    Vectorized as two sorts per phase: by word (to drop repeats), then by bank (the longest run of one
    bank is the phase's cost).
    """
    w = np.sort(words, axis=2)
    repeat = np.zeros(w.shape, dtype=bool)
    repeat[:, :, 1:] = w[:, :, 1:] == w[:, :, :-1]
    bank = np.where(repeat | (w < 0), banks, w % banks)  # ``banks`` marks a slot that costs nothing
    bank.sort(axis=2)
    pos = np.arange(w.shape[2])
    starts = np.ones(w.shape, dtype=bool)
    starts[:, :, 1:] = bank[:, :, 1:] != bank[:, :, :-1]
    run = pos - np.maximum.accumulate(np.where(starts, pos, 0), axis=2) + 1  # length of the bank run so far
    return np.where(bank < banks, run, 0).max(axis=2, initial=0)


def _phase_split(a: np.ndarray, access_bytes: int, banks: int, bank_width_bytes: int):
    """Yield (row mask, lanes per phase): uniform-pair rows of a wide access get phases twice as wide."""
    lanes = a.shape[1]
    per = phase_lanes(access_bytes, banks=banks, bank_width_bytes=bank_width_bytes, lanes=lanes)
    paired = uniform_pairs(a) if per < lanes else np.zeros(len(a), dtype=bool)
    yield ~paired, per
    yield paired, min(2 * per, lanes)


def _per_phase(a: np.ndarray, access_bytes: int, banks: int, bank_width_bytes: int, reduce) -> np.ndarray:
    out = np.zeros(len(a), dtype=np.int64)
    for mask, per in _phase_split(a, access_bytes, banks, bank_width_bytes):
        if mask.any():
            out[mask] = reduce(_phase_words(a[mask], access_bytes, banks, bank_width_bytes, per))
    return out


def _wavefronts_2d(a: np.ndarray, access_bytes: int, banks: int, bank_width_bytes: int) -> np.ndarray:
    return _per_phase(a, access_bytes, banks, bank_width_bytes,
                      lambda w: _phase_costs(w, banks).sum(axis=1))


def _active_phases_2d(a: np.ndarray, access_bytes: int, banks: int, bank_width_bytes: int) -> np.ndarray:
    return _per_phase(a, access_bytes, banks, bank_width_bytes, lambda w: (w >= 0).any(axis=2).sum(axis=1))


def ideal_wavefronts_batch(addr2d: np.ndarray, access_bytes: int, *, banks: int, bank_width_bytes: int,
                           lanes: int) -> np.ndarray:
    """Conflict-free wavefronts of each row: one per phase with an active lane (what ncu subtracts).

    Matches ncu on our H100: ``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld`` equals wavefronts
    minus this count for the SGEMM ladder (validate/measurements/h100).
    """
    _check_banks(banks, bank_width_bytes)
    a = warp_addresses(addr2d, access_bytes, SHARED_ACCESS_BYTES, lanes=lanes, batch=True)
    return in_blocks(lambda block: _active_phases_2d(block, access_bytes, banks, bank_width_bytes), a)


def atomic_wavefronts_batch(addr2d: np.ndarray, access_bytes: int, *, banks: int, bank_width_bytes: int,
                            lanes: int) -> np.ndarray:
    """Wavefronts of each row of shared-memory atomics whose lanes each do their own read-modify-write (ATOMS.ADD,
    ``atomicAdd(p, v)``): every active lane takes its bank once, lanes on one word included (no broadcast), so a row
    costs the most lanes any bank serves. Measured (validate/micro/atomics.cu, 32 warps per SM): k distinct words in k
    banks take 32/k cycles per warp instruction, k words in one bank 32 whatever k, 32 banks 1
    (validate/measurements/h100/irregular-2026-11-27.json, "micro")."""
    _check_banks(banks, bank_width_bytes)
    a = warp_addresses(addr2d, access_bytes, SHARED_ACCESS_BYTES, lanes=lanes, batch=True)
    bank = np.where(a >= 0, (a // bank_width_bytes) % banks, banks)
    counts = np.zeros((len(a), banks + 1), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(len(a)), a.shape[1]), bank.reshape(-1)), 1)
    return counts[:, :banks].max(axis=1) * max(access_bytes // bank_width_bytes, 1)


def in_blocks(fn: Callable[[np.ndarray], np.ndarray], a: np.ndarray, rows: int = BATCH_ROWS) -> np.ndarray:
    """``fn`` (vectorized over the rows of ``a``) applied block by block of ``rows`` rows."""
    if len(a) <= rows:
        return fn(a)
    return np.concatenate([fn(a[i:i + rows]) for i in range(0, len(a), rows)])


def _canonical_key(a: np.ndarray, period_bytes: int) -> bytes:
    """Pattern shifted so that its lowest active address lies in ``[0, period_bytes)``, as bytes."""
    active = a >= 0
    shift = int(a[active].min()) // period_bytes * period_bytes
    return np.where(active, a - shift, -1).tobytes()


@functools.lru_cache(maxsize=PATTERN_CACHE_SIZE)
def _wavefronts_cached(key: bytes, access_bytes: int, banks: int, bank_width_bytes: int) -> int:
    a = np.frombuffer(key, dtype=np.int64).reshape(1, -1)
    return int(_wavefronts_2d(a, access_bytes, banks, bank_width_bytes)[0])


def wavefronts(addresses: Addresses, access_bytes: int, *, banks: int, bank_width_bytes: int, lanes: int) -> int:
    """Shared-memory wavefronts of one warp ``ld.shared`` / ``st.shared`` of ``access_bytes`` per lane.

    The warp is split into phases (:func:`phase_lanes`); within a phase each active lane touches
    ``access_bytes / bank_width_bytes`` consecutive words, identical words are served once, and the phase
    costs the largest number of distinct words mapping to one bank. The instruction costs the sum over
    its phases; an instruction with no active lane costs 0 (h100.md §3: [PG], [NCU], [F1], [GTC19]).
    Cached per distinct pattern (see the module docstring).
    """
    _check_banks(banks, bank_width_bytes)
    a = warp_addresses(addresses, access_bytes, SHARED_ACCESS_BYTES, lanes=lanes)[0]
    if not (a >= 0).any():
        return 0
    return _wavefronts_cached(_canonical_key(a, banks * bank_width_bytes), access_bytes, banks, bank_width_bytes)


def wavefronts_batch(addr2d: np.ndarray, access_bytes: int, *, banks: int, bank_width_bytes: int,
                     lanes: int) -> np.ndarray:
    """:func:`wavefronts` of each row of an ``(n, lanes)`` array of warp instructions, fully vectorized."""
    _check_banks(banks, bank_width_bytes)
    a = warp_addresses(addr2d, access_bytes, SHARED_ACCESS_BYTES, lanes=lanes, batch=True)
    return in_blocks(lambda block: _wavefronts_2d(block, access_bytes, banks, bank_width_bytes), a)


def ideal_wavefronts(access_bytes: int, active_lanes: int | None = None, *, banks: int, bank_width_bytes: int,
                     lanes: int) -> int:
    """Conflict-free wavefronts for ``active_lanes`` lanes: one per ``banks * bank_width_bytes`` bytes.

    1 / 2 / 4 for a full warp of 32 / 64 / 128-bit accesses (h100.md §3 "Ideal wavefronts": [F1], [F2]);
    ``ceil(active_lanes * access_bytes / (banks * bank_width_bytes))`` for a partial warp, 0 for none.
    """
    _check_banks(banks, bank_width_bytes)
    if access_bytes not in SHARED_ACCESS_BYTES:
        raise ValueError(f"access_bytes={access_bytes} is not an allowed access width "
                         f"(allowed: {', '.join(map(str, SHARED_ACCESS_BYTES))})")
    active_lanes = lanes if active_lanes is None else active_lanes
    _check_lanes(active_lanes, lanes)
    return -(-active_lanes * access_bytes // (banks * bank_width_bytes))


def bank_conflicts(addresses: Addresses, access_bytes: int, *, banks: int, bank_width_bytes: int,
                   lanes: int) -> int:
    """Excess wavefronts, ncu's ``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}``.

    Wavefronts minus one per phase with an active lane (:func:`ideal_wavefronts_batch`; h100.md §3: [F2];
    checked against ncu on the SGEMM ladder).
    """
    a = warp_addresses(addresses, access_bytes, SHARED_ACCESS_BYTES, lanes=lanes)
    kw = {"banks": banks, "bank_width_bytes": bank_width_bytes, "lanes": lanes}
    return wavefronts(addresses, access_bytes, **kw) - int(ideal_wavefronts_batch(a, access_bytes, **kw)[0])


def bank_map(addresses: Addresses, access_bytes: int, *, banks: int, bank_width_bytes: int,
             lanes: int) -> np.ndarray:
    """Per lane, the bank of its first word and the 0-based wavefront that serves it (for visualisation).

    Returns an int64 array of shape (lanes, 2): column 0 the bank, column 1 the wavefront; -1 for inactive
    lanes. Within each phase, wavefront slots are assigned greedily in lane order: the j-th distinct word
    (in order of first appearance) of a bank goes to slot j, a repeated word to its first slot, and a lane
    is served in the latest slot among its words. Phases are numbered consecutively, so the largest index
    plus one equals :func:`wavefronts`.
    """
    _check_banks(banks, bank_width_bytes)
    a = warp_addresses(addresses, access_bytes, SHARED_ACCESS_BYTES, lanes=lanes)
    per = next(per for mask, per in _phase_split(a, access_bytes, banks, bank_width_bytes) if mask[0])
    words = _phase_words(a, access_bytes, banks, bank_width_bytes, per)[0]  # (phases, m)
    m = words.shape[1]
    bank = words % banks
    valid = words >= 0
    same = words[:, :, None] == words[:, None, :]  # [p, i, j]: slot i holds the same word as slot j
    idx = np.arange(m)
    first_of = np.argmax(same, axis=1)  # [p, j]: first slot holding slot j's word
    is_first = (first_of == idx) & valid  # [p, i]
    earlier = idx[:, None] < first_of[:, None, :]  # [p, i, j]: slot i comes before slot j's first appearance
    same_bank = bank[:, :, None] == bank[:, None, :]
    slot = (is_first[:, :, None] & same_bank & earlier).sum(axis=1)  # [p, j]
    costs = _phase_costs(words[None], banks)[0]
    offset = np.concatenate([[0], np.cumsum(costs)[:-1]])
    k = -(-access_bytes // bank_width_bytes)
    lane_slot = (slot + offset[:, None]).reshape(-1, k).max(axis=1)[:lanes]
    lane_bank = bank.reshape(-1, k)[:lanes, 0]
    active = a[0] >= 0
    return np.stack([np.where(active, lane_bank, -1), np.where(active, lane_slot, -1)], axis=1)


def _matrix_row_addresses(row_addresses: Addresses, num_matrices: int, op: str) -> np.ndarray:
    if num_matrices not in LDMATRIX_COUNTS:
        raise ValueError(f"{op}: num_matrices={num_matrices} is not one of {LDMATRIX_COUNTS} (.x1/.x2/.x4)")
    a = np.asarray(row_addresses)
    rows = LDMATRIX_ROWS * num_matrices
    if a.shape != (rows,):
        raise ValueError(f"{op}: expected {rows} row addresses for .x{num_matrices}, got shape {a.shape}")
    if a.dtype.kind not in "iu":
        raise ValueError(f"{op}: row addresses must be integers, got dtype {a.dtype}")
    a = a.astype(np.int64)
    bad = (a < 0) | (a % LDMATRIX_ROW_BYTES != 0)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{op}: row {i} address {a[i]} is not a non-negative multiple of "
                         f"{LDMATRIX_ROW_BYTES} bytes")
    return a


@functools.lru_cache(maxsize=PATTERN_CACHE_SIZE)
def _matrix_wavefronts_cached(key: bytes, num_matrices: int, banks: int, bank_width_bytes: int) -> int:
    a = np.frombuffer(key, dtype=np.int64).reshape(1, num_matrices, LDMATRIX_ROWS)
    words = _lane_words(a, LDMATRIX_ROW_BYTES, bank_width_bytes).reshape(1, num_matrices, -1)
    return int(_phase_costs(words, banks).sum())


def _matrix_wavefronts(row_addresses: Addresses, num_matrices: int, banks: int, bank_width_bytes: int,
                       op: str) -> int:
    _check_banks(banks, bank_width_bytes)
    a = _matrix_row_addresses(row_addresses, num_matrices, op)
    return _matrix_wavefronts_cached(_canonical_key(a, banks * bank_width_bytes), num_matrices, banks,
                                     bank_width_bytes)


def ldmatrix_wavefronts(row_addresses: Addresses, num_matrices: int, *, banks: int, bank_width_bytes: int,
                        trans: bool = False) -> int:
    """Wavefronts of one ``ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].b16``.

    ``row_addresses`` holds the ``8 * num_matrices`` 16-byte row start addresses that lanes
    ``0 .. 8*num_matrices-1`` supply, in order. Each 8x8 matrix is 8 rows of 16 B, one 128-byte phase;
    the instruction costs, summed over matrices, the largest number of distinct words of that matrix's
    rows in one bank (h100.md §3 "ldmatrix / stmatrix": [PTX], [LC]; the phase rule is an inference).
    ``.trans`` only transposes in registers, so ``trans`` does not change the count.
    """
    return _matrix_wavefronts(row_addresses, num_matrices, banks, bank_width_bytes, "ldmatrix")


def stmatrix_wavefronts(row_addresses: Addresses, num_matrices: int, *, banks: int, bank_width_bytes: int,
                        trans: bool = False) -> int:
    """Wavefronts of one ``stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].b16``: the rule of
    :func:`ldmatrix_wavefronts` (h100.md §3: [PTX], [LC])."""
    return _matrix_wavefronts(row_addresses, num_matrices, banks, bank_width_bytes, "stmatrix")


@dataclass(frozen=True)
class SharedMemorySpec:
    """Shared-memory parameters (``[shared_memory]`` in the hardware config)."""

    banks: int = spec_field(1, 64, "banks")
    bank_width_bytes: int = spec_field(4, 8, "bytes per bank per cycle")
    wavefronts_per_cycle: int = spec_field(1, 4, "wavefronts the shared-memory pipe serves per cycle")
    load_latency_cycles: int = spec_field(1, 500, "ld.shared latency")
    conflict_pace_cycles_per_wavefront: float = spec_field(0, 16, "cycles a bank-conflicted load's own wavefronts "
                                                           "take beyond the pipe's one each, per wavefront past the "
                                                           "conflict-free ones")
    ldmatrix_latency_cycles: int = spec_field(1, 500, "ldmatrix.x4 latency")
    carveouts_bytes: tuple[int, ...] = spec_field(0, 1 << 22, "shared-memory carve-outs the driver may pick")

    def pipe_cycles(self, wavefronts):
        """Cycles of the L1TEX pipe ``wavefronts`` (the bank-conflict count of an access) take."""
        return wavefronts / self.wavefronts_per_cycle

    def conflict_pace_cycles(self, wavefronts, ideal_wavefronts, instructions):
        """What bank conflicts add to the time one of ``instructions`` loads takes through the pipe beyond its
        wavefronts' cycles: their mean excess wavefronts times ``conflict_pace_cycles_per_wavefront`` (measured: a
        lone warp's k-way conflicted LDS takes 2 cycles a wavefront, while the pipe serves 1 wavefront a cycle to
        32 warps; :meth:`gpusim.memory.lsu.L1TexPipe.paced_end` lets other instructions fill the gaps)."""
        excess = np.maximum(wavefronts - ideal_wavefronts, 0)
        return np.where(instructions > 0, excess / np.maximum(instructions, 1), 0.0) \
            * self.conflict_pace_cycles_per_wavefront

    def latency_cycles(self, kind: str) -> int:
        """From an access of ``kind`` (``ldsm``: ldmatrix; otherwise a load or store) entering the pipe's end to its
        data in registers."""
        return self.ldmatrix_latency_cycles if kind == "ldsm" else self.load_latency_cycles
