"""Shared-memory bank conflicts: hand-worked wavefront counts, a brute-force reference, error messages.

Rules (h100.md §3): 32 banks of 4 B, bank = (address // 4) % 32; phases of 32 / 16 / 8 lanes for
32 / 64 / 128-bit accesses; within a phase a bank costs one wavefront per distinct word; identical words
are served once; total = sum over phases.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from gpusim.config import load_config
from gpusim.memory import shared
from gpusim.memory.swizzle import SmemLayout

# the H100's numbers, as the simulator passes them from the config
H100 = load_config()
BANKS = {"banks": H100.shared_memory.banks, "bank_width_bytes": H100.shared_memory.bank_width_bytes}
WARP = {"lanes": H100.sm.warp_size_threads}
SMEM = BANKS | WARP

LANE = np.arange(32)
INACTIVE = -1
PROPERTY = settings(max_examples=200, deadline=None)


# ---------------------------------------------------------------- brute-force reference (plain loops)

def ref_lanes_per_phase(addresses, width: int) -> int:
    """32 / 16 / 8 lanes for 4 / 8 / 16 B; doubled for a wide access whose lanes come in uniform-address
    pairs (every lane n equal to lane n^1, or every lane to lane n^2), as measured on our H100."""
    lanes = {4: 32, 8: 16, 16: 8}[width]
    pairs = any(all(int(addresses[n]) == int(addresses[n ^ m]) for n in range(32)) for m in (1, 2))
    return min(32, 2 * lanes) if pairs else lanes


def ref_ideal(addresses, width: int) -> int:
    """One wavefront per phase with an active lane."""
    per = ref_lanes_per_phase(addresses, width)
    return sum(any(int(addresses[n]) >= 0 for n in range(s, s + per)) for s in range(0, 32, per))


def ref_wavefronts(addresses, width: int) -> int:
    """Deliberately simple: loop over phases, lanes and words; count distinct words per bank."""
    lanes_per_phase = ref_lanes_per_phase(addresses, width)
    total = 0
    for start in range(0, 32, lanes_per_phase):
        words_of_bank: dict[int, set[int]] = {}
        for lane in range(start, start + lanes_per_phase):
            a = int(addresses[lane])
            if a < 0:
                continue
            for k in range(width // 4):
                word = a // 4 + k
                words_of_bank.setdefault(word % 32, set()).add(word)
        total += max((len(words) for words in words_of_bank.values()), default=0)
    return total


def ref_matrix_wavefronts(rows) -> int:
    """ldmatrix: each group of 8 rows of 16 B is one phase."""
    total = 0
    for m in range(0, len(rows), 8):
        words_of_bank: dict[int, set[int]] = {}
        for a in rows[m:m + 8]:
            for k in range(4):
                word = int(a) // 4 + k
                words_of_bank.setdefault(word % 32, set()).add(word)
        total += max(len(words) for words in words_of_bank.values())
    return total


@st.composite
def warps(draw, width=None):
    """A warp instruction with aligned addresses in a small range (conflicts and broadcasts are common)."""
    w = draw(st.sampled_from((4, 8, 16))) if width is None else width
    span = draw(st.sampled_from((4, 32, 256)))  # number of distinct width-sized slots the lanes pick from
    k = draw(arrays(np.int64, 32, elements=st.integers(-3, span - 1)))  # k < 0: inactive lane
    return np.where(k < 0, INACTIVE, k * w), w

@st.composite
def batches(draw):
    """An (n, 32) array of warp instructions of one width, n = 0..8."""
    w = draw(st.sampled_from((4, 8, 16)))
    span = draw(st.sampled_from((4, 32, 256)))
    n = draw(st.integers(0, 8))
    k = draw(arrays(np.int64, (n, 32), elements=st.integers(-3, span - 1)))  # k < 0: inactive lane
    return np.where(k < 0, INACTIVE, k * w), w



# ---------------------------------------------------------------- hand-worked cases

@pytest.mark.parametrize("addresses, width, expected", [
    # 32-bit, stride s words: lane i -> word i*s, bank (i*s) % 32; cost = lanes per bank.
    (LANE * 4 * 1, 4, 1),    # stride 1: banks 0..31 once each
    (LANE * 4 * 2, 4, 2),    # stride 2: even banks only, 32 lanes / 16 banks = 2
    (LANE * 4 * 3, 4, 1),    # stride 3: gcd(3, 32) = 1, every bank once
    (LANE * 4 * 4, 4, 4),    # stride 4: banks 0,4,..,28, 32 / 8 = 4
    (LANE * 4 * 32, 4, 32),  # stride 32: all in bank 0, 32 distinct words
    (np.zeros(32, int), 4, 1),         # one word for all lanes: broadcast
    (np.full(32, 4 * 7), 4, 1),        # broadcast of any word
    (LANE // 2 * 4, 4, 1),             # pairs of lanes share a word: 16 distinct words, 16 banks
    # 64-bit: half-warp phases, each lane 2 words.
    (LANE * 8, 8, 2),        # stride 1: phase 0 = words 0..31 (1), phase 1 = words 32..63 (1): 1 + 1
    (LANE * 16, 8, 4),       # stride 2: phase 0 = words 4i, 4i+1 (i < 16): lanes i, i+8 share banks -> 2; x2
    (np.zeros(32, int), 8, 1),         # broadcast: uniform pairs -> one 32-lane phase (measured: 1)
    # 128-bit: quarter-warp phases, each lane 4 words.
    (LANE * 16, 16, 4),      # stride 1: each phase = 32 consecutive words (1); 4 phases
    (LANE * 32, 16, 8),      # stride 2: words 8i..8i+3 (i < 8): lanes i, i+4 share banks -> 2; x4
    (LANE * 128, 16, 32),    # column of 128-B rows: 8 lanes of a phase all in banks 0..3 -> 8; x4
    (np.zeros(32, int), 16, 2),        # broadcast: uniform pairs -> two 16-lane phases (measured: 2)
])
def test_hand_worked_wavefronts(addresses, width, expected):
    assert shared.wavefronts(addresses, width, **SMEM) == expected
    assert ref_wavefronts(addresses, width) == expected


def test_128b_swizzle_makes_column_access_conflict_free():
    # Rows of 128 B (32 floats), lane i reads the first 16-B chunk of row i. Unswizzled: row i's chunk 0
    # is banks 0..3 for every i, 8 distinct words per bank per phase, 4 phases -> 32. With the 128B
    # swizzle, row i's chunk 0 moves to chunk i % 8, so a phase's 8 lanes cover banks 0..31 once -> 4.
    plain = SmemLayout(rows=32, cols=32, element_bytes=4)
    swizzled = SmemLayout(rows=32, cols=32, element_bytes=4, swizzle="128B")
    assert shared.wavefronts(plain.offset(LANE, 0), 16, **SMEM) == 32
    assert shared.wavefronts(swizzled.offset(LANE, 0), 16, **SMEM) == 4
    assert shared.bank_conflicts(swizzled.offset(LANE, 0), 16, **SMEM) == 0


def test_padding_makes_column_access_conflict_free():
    # 32-bit column read of a 32x32 float tile: unpadded words 32i -> all bank 0 -> 32 wavefronts;
    # padded by one float, words 33i -> bank i -> 1 wavefront.
    assert shared.wavefronts(SmemLayout(32, 32, 4).offset(LANE, 0), 4, **SMEM) == 32
    assert shared.wavefronts(SmemLayout(32, 32, 4, pad_elems=1).offset(LANE, 0), 4, **SMEM) == 1


def test_half_active_warps():
    first_half = np.where(LANE < 16, LANE * 4, INACTIVE)
    # 16 lanes, words 0..15, one each -> 1 wavefront; ideal ceil(16 * 4 / 128) = 1.
    assert shared.wavefronts(first_half, 4, **SMEM) == 1
    assert shared.bank_conflicts(first_half, 4, **SMEM) == 0
    even_stride2 = np.where(LANE % 2 == 0, LANE * 8, INACTIVE)
    # even lanes i -> word 2i: words 0, 4, .., 124 -> banks 0, 4, .., 28 twice -> 2; ideal 1 -> 1 conflict.
    assert shared.wavefronts(even_stride2, 4, **SMEM) == 2
    assert shared.bank_conflicts(even_stride2, 4, **SMEM) == 1
    # 64-bit, lanes 0..15 only: phase 0 costs 1, phase 1 has no active lane and costs 0.
    assert shared.wavefronts(np.where(LANE < 16, LANE * 8, INACTIVE), 8, **SMEM) == 1


def test_each_active_phase_costs_a_wavefront():
    # 64-bit, lanes 0..7 -> words 0..15 (phase 0) and lanes 16..23 -> words 16..31 (phase 1): no bank
    # is shared, but the two half-warp phases cost 1 each -> 2; both phases are active, so the ideal
    # (one per active phase, as ncu counts) is 2 and there is no conflict.
    a = np.full(32, INACTIVE)
    a[0:8] = np.arange(8) * 8
    a[16:24] = 64 + np.arange(8) * 8
    assert shared.wavefronts(a, 8, **SMEM) == 2
    assert shared.bank_conflicts(a, 8, **SMEM) == 0


def test_no_active_lane_costs_nothing():
    none = np.full(32, INACTIVE)
    for width in (4, 8, 16):
        assert shared.wavefronts(none, width, **SMEM) == 0
        assert shared.bank_conflicts(none, width, **SMEM) == 0
        assert (shared.bank_map(none, width, **SMEM) == -1).all()
    assert list(shared.wavefronts_batch(np.full((3, 32), INACTIVE), 8, **SMEM)) == [0, 0, 0]


@pytest.mark.parametrize("width, lanes, ideal", [
    (4, 32, 1), (8, 32, 2), (16, 32, 4),   # 128 B per wavefront: 32*4/128, 32*8/128, 32*16/128
    (4, 16, 1), (8, 16, 1), (16, 16, 2),   # ceil(16*4/128)=1, ceil(128/128)=1, ceil(256/128)=2
    (16, 1, 1), (4, 0, 0),
])
def test_ideal_wavefronts(width, lanes, ideal):
    assert shared.ideal_wavefronts(width, lanes, **SMEM) == ideal


def test_bank_conflicts_is_wavefronts_minus_ideal():
    # 32-bit stride 32: 32 wavefronts - 1 ideal = 31; 128-bit stride 2: 8 - 4 = 4.
    assert shared.bank_conflicts(LANE * 128, 4, **SMEM) == 31
    assert shared.bank_conflicts(LANE * 32, 16, **SMEM) == 4


def test_bank_map_of_a_stride2_warp():
    # 32-bit stride 2: lane i -> word 2i, bank 2i % 32. Lanes 0..15 are the first word of banks 0..30
    # (slot 0); lanes 16..31 the second (slot 1).
    m = shared.bank_map(LANE * 8, 4, **SMEM)
    assert m.shape == (32, 2)
    assert list(m[:, 0]) == list(LANE * 2 % 32)
    assert list(m[:, 1]) == [0] * 16 + [1] * 16


def test_bank_map_numbers_phases_consecutively():
    # 128-bit stride 2: each phase costs 2 (lanes i, i+4 share banks); phase p's lanes get 2p, 2p+1.
    m = shared.bank_map(LANE * 32, 16, **SMEM)
    assert list(m[:, 1]) == [2 * (i // 8) + (i % 8 >= 4) for i in range(32)]


# ---------------------------------------------------------------- ldmatrix / stmatrix

@pytest.mark.parametrize("rows, num, expected", [
    (np.arange(8) * 16, 1, 1),     # x1, 8 contiguous 16-B rows = 32 consecutive words -> 1
    (np.arange(16) * 64, 2, 8),    # x2, row stride 64 B: rows r, r+2, r+4, r+6 share banks -> 4 per matrix
    (np.arange(32) * 128, 4, 32),  # x4, row stride 128 B: 8 rows per matrix in banks 0..3 -> 8 per matrix
    (np.zeros(32, int), 4, 4),     # x4, all rows equal: 4 words once per matrix -> 1 per matrix
])
def test_hand_worked_ldmatrix(rows, num, expected):
    assert shared.ldmatrix_wavefronts(rows, num, **BANKS) == expected
    assert shared.ldmatrix_wavefronts(rows, num, trans=True, **BANKS) == expected
    assert shared.stmatrix_wavefronts(rows, num, **BANKS) == expected


def test_ldmatrix_of_a_128b_swizzled_tile_is_conflict_free():
    # fp16 tile with 128-B rows (64 halves); .x4 reads rows 0..31 at column 0: swizzled -> 1 per matrix.
    tile = SmemLayout(rows=32, cols=64, element_bytes=2, swizzle="128B")
    assert shared.ldmatrix_wavefronts(tile.offset(LANE, 0), 4, **BANKS) == 4


# ---------------------------------------------------------------- properties

@PROPERTY
@given(warps())
def test_wavefronts_equal_brute_force(warp):
    a, w = warp
    assert shared.wavefronts(a, w, **SMEM) == ref_wavefronts(a, w)
    assert shared.wavefronts(list(map(int, a)), w, **SMEM) == ref_wavefronts(a, w)  # plain sequences work too


@PROPERTY
@given(warps())
def test_bank_conflicts_equal_brute_force(warp):
    a, w = warp
    assert shared.bank_conflicts(a, w, **SMEM) == ref_wavefronts(a, w) - ref_ideal(a, w) >= 0


@PROPERTY
@given(warps(), st.integers(-1000, 10**6))
def test_wavefronts_invariant_under_128b_shifts(warp, k):
    a, w = warp
    shifted = np.where(a >= 0, a + 128 * k, INACTIVE)
    if (shifted[a >= 0] < 0).any():
        return
    assert shared.wavefronts(shifted, w, **SMEM) == shared.wavefronts(a, w, **SMEM)


@PROPERTY
@given(batches())
def test_batch_equals_scalar(batch):
    a2d, w = batch
    assert list(shared.wavefronts_batch(a2d, w, **SMEM)) == [shared.wavefronts(a, w, **SMEM) for a in a2d]


def test_large_batch_equals_scalar_across_blocks():
    # more rows than one vectorized block, with inactive lanes and all three widths
    rng = np.random.default_rng(0)
    for w in (4, 8, 16):
        a2d = rng.integers(0, 512, size=(shared.BATCH_ROWS + 900, 32)) * w
        a2d[::5, ::3] = INACTIVE
        assert list(shared.wavefronts_batch(a2d, w, **SMEM)) == [shared.wavefronts(a, w, **SMEM) for a in a2d]


@PROPERTY
@given(warps())
def test_bank_map_consistent_with_wavefronts(warp):
    a, w = warp
    m = shared.bank_map(a, w, **SMEM)
    active = a >= 0
    assert (m[~active] == -1).all()
    assert list(m[active, 0]) == list(a[active] // 4 % 32)
    assert m[:, 1].max() + 1 == shared.wavefronts(a, w, **SMEM)
    if w == 4:  # a valid schedule: lanes served together in one bank read the same word
        for i in np.flatnonzero(active):
            for j in np.flatnonzero(active):
                if m[i, 1] == m[j, 1] and m[i, 0] == m[j, 0]:
                    assert a[i] // 4 == a[j] // 4


@PROPERTY
@given(st.sampled_from((1, 2, 4)).flatmap(
    lambda n: st.lists(st.integers(0, 31).map(lambda k: 16 * k), min_size=8 * n, max_size=8 * n)))
def test_ldmatrix_equals_brute_force_and_the_128bit_rule(rows):
    rows = np.array(rows, dtype=np.int64)
    num = len(rows) // 8
    assert shared.ldmatrix_wavefronts(rows, num, **BANKS) == ref_matrix_wavefronts(rows)
    # on the H100 a matrix is one quarter-warp phase of 16-B accesses (unless LDS.128's pair rule applies)
    padded = np.concatenate([rows, np.full(32 - len(rows), INACTIVE)])
    if not shared.uniform_pairs(padded[None])[0]:
        assert shared.ldmatrix_wavefronts(rows, num, **BANKS) == shared.wavefronts(padded, 16, **SMEM)


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("call, match", [
    (lambda: shared.wavefronts(np.arange(31) * 4, 4, **SMEM), "expected 32 lane addresses"),
    (lambda: shared.wavefronts(np.zeros((2, 32), int), 4, **SMEM), "expected 32 lane addresses"),
    (lambda: shared.wavefronts(LANE * 4, 2, **SMEM), "access_bytes=2 is not an allowed access width"),
    (lambda: shared.wavefronts(LANE * 4, 32, **SMEM), "access_bytes=32 is not an allowed access width"),
    (lambda: shared.wavefronts(LANE * 4 + 4, 8, **SMEM), "lane 0 address 4 is not aligned to the 8-byte"),
    (lambda: shared.wavefronts(np.where(LANE == 5, 6, LANE * 4), 4, **SMEM), "lane 5 address 6 is not aligned"),
    (lambda: shared.wavefronts(LANE * 4.0, 4, **SMEM), "must be integers"),
    (lambda: shared.bank_conflicts(LANE * 4, 3, **SMEM), "access_bytes=3"),
    (lambda: shared.bank_map(LANE, 4, **SMEM), "lane 1 address 1 is not aligned"),
    (lambda: shared.wavefronts_batch(np.zeros((3, 16), int), 4, **SMEM), r"expected an \(n, 32\) array"),
    (lambda: shared.wavefronts_batch(np.where(LANE == 3, 2, 0)[None].repeat(2, 0), 4, **SMEM), "row 0 lane 3"),
    (lambda: shared.ideal_wavefronts(4, 33, **SMEM), "active_lanes=33"),
    (lambda: shared.ideal_wavefronts(12, **SMEM), "access_bytes=12"),
    (lambda: shared.ldmatrix_wavefronts(np.arange(8) * 16, 3, **BANKS), "num_matrices=3"),
    (lambda: shared.ldmatrix_wavefronts(np.arange(8) * 16, 2, **BANKS), "expected 16 row addresses"),
    (lambda: shared.ldmatrix_wavefronts(np.arange(8) * 8, 1, **BANKS),
     "row 1 address 8 is not a non-negative multiple"),
    (lambda: shared.stmatrix_wavefronts(np.full(8, -16), 1, **BANKS), "stmatrix: row 0 address -16"),
])
def test_errors_name_the_problem(call, match):
    with pytest.raises(ValueError, match=match):
        call()
