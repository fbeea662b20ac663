"""Global-memory coalescing: hand-worked sector and line counts, a brute-force reference, errors.

Rules (h100.md §4): a warp instruction is one request; it costs the distinct 32-B sectors (and 128-B
lines) its active lanes' byte ranges [a, a + width) touch.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from gpusim.config import load_config
from gpusim.memory import coalescing, shared

# the H100's numbers, as the simulator passes them from the config
H100 = load_config()
BANKS = {"banks": H100.shared_memory.banks, "bank_width_bytes": H100.shared_memory.bank_width_bytes}
WARP = {"lanes": H100.sm.warp_size_threads}
SMEM = BANKS | WARP
SECTORS = {"sector_bytes": H100.l1.sector_bytes} | WARP
LINES = {"line_bytes": H100.l1.line_bytes} | WARP

LANE = np.arange(32)
INACTIVE = -1
PROPERTY = settings(max_examples=200, deadline=None)


def ref_units(addresses, width: int, unit: int) -> set[int]:
    """Deliberately simple: every byte of every active lane, divided by the unit size."""
    touched = set()
    for a in addresses:
        if a >= 0:
            for byte in range(int(a), int(a) + width):
                touched.add(byte // unit)
    return touched


@st.composite
def warps(draw, width=None):
    """A warp instruction with aligned addresses in a small range (shared sectors are common)."""
    w = draw(st.sampled_from((1, 2, 4, 8, 16))) if width is None else width
    span = draw(st.sampled_from((2, 32, 512)))
    k = draw(arrays(np.int64, 32, elements=st.integers(-3, span - 1)))  # k < 0: inactive lane
    return np.where(k < 0, INACTIVE, k * w), w

@st.composite
def batches(draw):
    """An (n, 32) array of warp instructions of one width, n = 0..8."""
    w = draw(st.sampled_from((1, 2, 4, 8, 16)))
    span = draw(st.sampled_from((2, 32, 512)))
    n = draw(st.integers(0, 8))
    k = draw(arrays(np.int64, (n, 32), elements=st.integers(-3, span - 1)))  # k < 0: inactive lane
    return np.where(k < 0, INACTIVE, k * w), w



@pytest.mark.parametrize("addresses, width, n_sectors, n_lines", [
    (LANE * 4, 4, 4, 1),          # 32 x 4 B = bytes 0..127: sectors 0..3, line 0
    (LANE * 8, 8, 8, 2),          # 32 x 8 B = bytes 0..255: 8 sectors, 2 lines
    (LANE * 16, 16, 16, 4),       # 32 x 16 B = bytes 0..511: 16 sectors, 4 lines
    (LANE * 8, 4, 8, 2),          # stride-2 floats: lanes at 0, 8, .., 248 -> sectors 0..7, lines 0..1
    (LANE * 128, 4, 32, 32),      # stride-32 floats: one lane per 128-B line -> 32 sectors, 32 lines
    (np.zeros(32, int), 4, 1, 1),  # broadcast: one sector
    (LANE * 4 + 4, 4, 5, 2),      # start 4 B past a sector: bytes 4..131 -> sectors 0..4, lines 0..1
    (LANE * 4 + 96, 4, 4, 2),     # bytes 96..223: sector-aligned, sectors 3..6 -> 4, but lines 0..1 -> 2
    (LANE, 1, 1, 1),              # 32 x 1 B = one sector
    (LANE * 2, 2, 2, 1),          # 32 x 2 B = 64 B -> 2 sectors
    (np.where(LANE % 2 == 0, LANE * 4, INACTIVE), 4, 4, 1),  # even lanes at 0, 8, .., 120: still 4 sectors
    (np.where(LANE < 8, LANE * 4, INACTIVE), 4, 1, 1),       # lanes 0..7: bytes 0..31 -> 1 sector
    (np.full(32, INACTIVE), 4, 0, 0),                        # no active lane
])
def test_hand_worked_sectors_and_lines(addresses, width, n_sectors, n_lines):
    assert coalescing.sectors(addresses, width, **SECTORS) == n_sectors == len(ref_units(addresses, width, 32))
    assert coalescing.lines(addresses, width, **LINES) == n_lines == len(ref_units(addresses, width, 128))


def test_requests_and_ideal_sectors():
    assert coalescing.requests(LANE * 4, 4, **WARP) == 1
    assert coalescing.requests(np.where(LANE == 7, 28, INACTIVE), 4, **WARP) == 1
    assert coalescing.requests(np.full(32, INACTIVE), 4, **WARP) == 0
    # 32 lanes x width / 32 B: 4 B -> 4, 8 B -> 8, 16 B -> 16; 1 B -> 1; 10 lanes x 4 B = 40 B -> 2.
    assert [coalescing.ideal_sectors(w, **SECTORS) for w in (4, 8, 16, 1, 2)] == [4, 8, 16, 1, 2]
    assert coalescing.ideal_sectors(4, 10, **SECTORS) == 2
    assert coalescing.ideal_sectors(16, 0, **SECTORS) == 0


def test_sector_ids_are_sorted_address_over_32():
    # lanes at 4i + 4 (bytes 4..131) -> sectors 0..4; reversed lane order gives the same sorted ids.
    assert list(coalescing.sector_ids(LANE * 4 + 4, 4, **SECTORS)) == [0, 1, 2, 3, 4]
    assert list(coalescing.sector_ids((LANE * 4 + 4)[::-1], 4, **SECTORS)) == [0, 1, 2, 3, 4]
    assert list(coalescing.sector_ids(np.full(32, INACTIVE), 4, **SECTORS)) == []


def test_configured_unit_sizes_are_used():
    # 64-B "sectors": 32 x 4 B = 128 B -> 2; 256-B "lines": 32 x 16 B = 512 B -> 2.
    assert coalescing.sectors(LANE * 4, 4, sector_bytes=64, lanes=SECTORS["lanes"]) == 2
    assert coalescing.lines(LANE * 16, 16, line_bytes=256, lanes=LINES["lanes"]) == 2


@PROPERTY
@given(warps())
def test_counts_equal_brute_force(warp):
    a, w = warp
    assert coalescing.sectors(a, w, **SECTORS) == len(ref_units(a, w, 32))
    assert coalescing.lines(a, w, **LINES) == len(ref_units(a, w, 128))
    assert list(coalescing.sector_ids(a, w, **SECTORS)) == sorted(ref_units(a, w, 32))
    assert coalescing.requests(a, w, **WARP) == int((a >= 0).any())


@PROPERTY
@given(warps(), st.integers(-1000, 10**6))
def test_sectors_invariant_under_32b_shifts_and_lines_under_128b(warp, k):
    a, w = warp
    active = a >= 0
    by_sector = np.where(active, a + 32 * k, INACTIVE)
    by_line = np.where(active, a + 128 * k, INACTIVE)
    if (by_sector[active] < 0).any() or (by_line[active] < 0).any():
        return
    assert coalescing.sectors(by_sector, w, **SECTORS) == coalescing.sectors(a, w, **SECTORS)
    assert coalescing.lines(by_line, w, **LINES) == coalescing.lines(a, w, **LINES)


@PROPERTY
@given(batches())
def test_batch_equals_scalar(batch):
    a2d, w = batch
    assert list(coalescing.sectors_batch(a2d, w, **SECTORS)) == [coalescing.sectors(a, w, **SECTORS) for a in a2d]
    assert list(coalescing.lines_batch(a2d, w, **LINES)) == [coalescing.lines(a, w, **LINES) for a in a2d]
    if w >= 4:  # the shared-memory batch is importable from here too
        assert list(coalescing.wavefronts_batch(a2d, w, **SMEM)) == [shared.wavefronts(a, w, **SMEM) for a in a2d]


def test_large_batch_equals_scalar_across_blocks():
    rng = np.random.default_rng(1)
    a2d = rng.integers(0, 4096, size=(shared.BATCH_ROWS + 900, 32)) * 8
    a2d[::5, ::3] = INACTIVE
    assert list(coalescing.sectors_batch(a2d, 8, **SECTORS)) == [coalescing.sectors(a, 8, **SECTORS) for a in a2d]
    assert list(coalescing.lines_batch(a2d, 8, **LINES)) == [coalescing.lines(a, 8, **LINES) for a in a2d]


@pytest.mark.parametrize("call, match", [
    (lambda: coalescing.sectors(np.arange(33) * 4, 4, **SECTORS), "expected 32 lane addresses, got shape"),
    (lambda: coalescing.lines([], 4, **LINES), "expected 32 lane addresses"),
    (lambda: coalescing.sectors(LANE * 4, 3, **SECTORS), "access_bytes=3 is not an allowed access width"),
    (lambda: coalescing.sectors(LANE * 32, 32, **SECTORS), "access_bytes=32"),
    (lambda: coalescing.sectors(LANE * 4 + 2, 4, **SECTORS), "lane 0 address 2 is not aligned to the 4-byte"),
    (lambda: coalescing.requests(LANE * 8 + 4, 8, **WARP), "address 4 is not aligned to the 8-byte"),
    (lambda: coalescing.sector_ids(LANE * 16 + 8, 16, **SECTORS), "not aligned to the 16-byte"),
    (lambda: coalescing.sectors_batch(LANE * 4, 4, **SECTORS), r"expected an \(n, 32\) array"),
    (lambda: coalescing.lines_batch(np.stack([LANE * 4, LANE * 4 + 2]), 4, **LINES), "row 1 lane 0 address 2"),
    (lambda: coalescing.ideal_sectors(4, -1, **SECTORS), "active_lanes=-1"),
    (lambda: coalescing.ideal_sectors(6, **SECTORS), "access_bytes=6"),
    (lambda: coalescing.sectors(LANE * 4, 4, sector_bytes=0, lanes=SECTORS["lanes"]), "sector_bytes=0"),
])
def test_errors_name_the_problem(call, match):
    with pytest.raises(ValueError, match=match):
        call()
