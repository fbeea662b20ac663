"""Swizzle and padding layouts: the bit formulas of h100.md §3, bijectivity, CuTe equivalences, and the
bank-conflict behaviour a kernel writer relies on."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpusim.config import load_config
from gpusim.memory import shared
from gpusim.memory.swizzle import SmemLayout, cute_swizzle, padded_offset, swizzle_bytes, swizzle_params

# the H100's numbers, as the simulator passes them from the config
H100 = load_config()
BANKS = {"banks": H100.shared_memory.banks, "bank_width_bytes": H100.shared_memory.bank_width_bytes}
WARP = {"lanes": H100.sm.warp_size_threads}
SMEM = BANKS | WARP

LANE = np.arange(32)
PROPERTY = settings(max_examples=200, deadline=None)
MODES = ("none", "32B", "64B", "128B")


def bits(x: int, lo: int, n: int) -> int:
    return (x >> lo) & ((1 << n) - 1)


def ref_swizzle(x: int, mode: str) -> int:
    """h100.md §3 as written: 128B bits[6:4] ^= bits[9:7]; 64B bits[5:4] ^= bits[8:7]; 32B bit[4] ^= bit[7]."""
    n = {"none": 0, "32B": 1, "64B": 2, "128B": 3}[mode]
    return x ^ (bits(x, 7, n) << 4)


def ref_tma_chunks(x: int, mode: str) -> int:
    """h100.md §3 as the TMA describes it: in 128-B rows, 16-B chunk ^= row % (span / 16)."""
    period = {"none": 1, "32B": 2, "64B": 4, "128B": 8}[mode]
    row, chunk, byte = x // 128, x % 128 // 16, x % 16
    return row * 128 + (chunk ^ (row % period)) * 16 + byte


def test_hand_worked_swizzles():
    # 128B: offset 0x80 = row 1, chunk 0 -> chunk 0 ^ 1 = 1 -> 0x90; 0x3F0 = row 7, chunk 7 -> chunk 0.
    assert swizzle_bytes(0x80, "128B") == 0x90
    assert swizzle_bytes(0x3F0, "128B") == 0x380
    # 64B: 0x180 = row 3: bits[8:7] = 3 -> chunk 0 ^ 3 = 3 -> 0x1B0. 32B: 0x80 -> bit 7 set -> 0x90.
    assert swizzle_bytes(0x180, "64B") == 0x1B0
    assert swizzle_bytes(0x80, "32B") == 0x90
    assert swizzle_bytes(0x180, "none") == 0x180
    # the pattern repeats every 1024 B: 0x480 behaves like 0x80.
    assert swizzle_bytes(0x480, "128B") == 0x490


def test_modes_are_cute_swizzles_on_bytes():
    assert [swizzle_params(m) for m in MODES] == [(0, 4, 3), (1, 4, 3), (2, 4, 3), (3, 4, 3)]


@pytest.mark.parametrize("mode", MODES)
def test_swizzle_is_a_bijection_on_a_1024_byte_block(mode):
    out = swizzle_bytes(np.arange(1024), mode)
    assert sorted(out) == list(range(1024))
    span = {"none": 1, "32B": 32, "64B": 64, "128B": 128}[mode]
    assert (out // span == np.arange(1024) // span).all()  # every byte stays inside its span segment


@pytest.mark.parametrize("mode", MODES)
def test_vectorized_swizzle_equals_both_formulations(mode):
    x = np.arange(8192)
    out = swizzle_bytes(x, mode)
    assert list(out) == [ref_swizzle(int(v), mode) for v in x] == [ref_tma_chunks(int(v), mode) for v in x]


@PROPERTY
@given(st.integers(0, 2**40), st.sampled_from(MODES))
def test_scalar_swizzle_equals_bit_formula(x, mode):
    assert swizzle_bytes(x, mode) == ref_swizzle(x, mode)
    assert isinstance(swizzle_bytes(x, mode), int)


@PROPERTY
@given(st.integers(0, 2**30))
def test_cute_swizzle_on_elements_equals_the_byte_mode(x):
    # Swizzle<3,3,3> on 2-byte elements and Swizzle<3,2,3> on 4-byte elements are the 128B byte mode.
    assert cute_swizzle(2 * x, 3, 3, 3, element_bytes=2) == swizzle_bytes(2 * x, "128B")
    assert cute_swizzle(4 * x, 3, 2, 3, element_bytes=4) == swizzle_bytes(4 * x, "128B")
    assert cute_swizzle(x, 2, 4, 3) == swizzle_bytes(x, "64B")


@PROPERTY
@given(st.integers(0, 4), st.integers(0, 5), st.integers(0, 4))
def test_cute_swizzle_is_an_involution_and_a_bijection(b, m, extra):
    s = b + extra  # CuTe requires S >= B
    x = np.arange(1 << (b + m + s))
    y = cute_swizzle(x, b, m, s)
    assert sorted(y) == list(x)
    assert (cute_swizzle(y, b, m, s) == x).all()


def test_padded_offset():
    # row 1, col 0 of 32 floats padded by 1: (1 * 33 + 0) * 4 = 132; row 2, col 5: (66 + 5) * 4 = 284.
    assert padded_offset(1, 0, 32, 1, 4) == 132
    assert padded_offset(2, 5, 32, 1, 4) == 284
    assert list(padded_offset(LANE[:3], 0, 32, 1, 4)) == [0, 132, 264]


@pytest.mark.parametrize("mode, plain, swizzled", [
    # lane i reads 16 B at row i, chunk 0, rows of one span. Unswizzled, a phase of 8 rows puts
    # 32-B rows: row r in banks 8(r%4)..+3 -> r, r+4 collide -> 2 per phase -> 8;
    # 64-B rows: banks 16(r%2)..+3 -> 4-way -> 16; 128-B rows: all in banks 0..3 -> 8-way -> 32.
    # Swizzled, the chunk index is XORed with the row bits, so the 8 rows of a phase hit 8 disjoint
    # groups of 4 banks -> 1 per phase -> 4.
    ("32B", 8, 4), ("64B", 16, 4), ("128B", 32, 4),
])
def test_swizzle_removes_column_conflicts(mode, plain, swizzled):
    span = int(mode.rstrip("B"))
    cols = span // 4
    assert shared.wavefronts(SmemLayout(32, cols, 4).offset(LANE, 0), 16, **SMEM) == plain
    for chunk in range(span // 16):
        col = chunk * 4
        assert shared.wavefronts(SmemLayout(32, cols, 4, swizzle=mode).offset(LANE, col), 16, **SMEM) == swizzled


def test_layout_offsets():
    tile = SmemLayout(rows=16, cols=64, element_bytes=2, swizzle="128B")
    # row 1, col 8 (byte 16 = chunk 1 of row 1): chunk 1 ^ 1 = 0 -> byte 128 + 0.
    assert tile.offset(1, 8) == 128
    assert tile.size_bytes == 16 * 128
    r, c = np.meshgrid(np.arange(16), np.arange(64), indexing="ij")
    offs = tile.offset(r, c)
    assert sorted(offs.ravel()) == list(range(0, tile.size_bytes, 2))  # a bijection onto the tile
    assert offs[3, 5] == tile.offset(3, 5)
    assert SmemLayout(4, 32, 4, pad_elems=1).offset(3, 2) == (3 * 33 + 2) * 4


@pytest.mark.parametrize("kwargs, match", [
    ({"rows": 8, "cols": 16, "element_bytes": 4, "swizzle": "128B"}, "128B swizzle spans 128 B but a row is only 64 B"),
    ({"rows": 8, "cols": 8, "element_bytes": 2, "swizzle": "32B"}, "32B swizzle spans 32 B but a row is only 16 B"),
    ({"rows": 8, "cols": 48, "element_bytes": 4, "swizzle": "128B"}, "192 B is not a whole number of 128-byte"),
    ({"rows": 8, "cols": 32, "element_bytes": 4, "swizzle": "128B", "pad_elems": 4}, "padding .* together with"),
    ({"rows": 8, "cols": 32, "element_bytes": 4, "swizzle": "256B"}, "unknown swizzle '256B'"),
    ({"rows": 8, "cols": 32, "element_bytes": 12, "swizzle": "128B"}, "element_bytes=12 does not divide"),
    ({"rows": -1, "cols": 32, "element_bytes": 4}, "rows=-1 must be >= 1"),
    ({"rows": 8, "cols": 0, "element_bytes": 4}, "cols=0 must be >= 1"),
    ({"rows": 8, "cols": 32, "element_bytes": 4, "pad_elems": -2}, "pad_elems=-2 must be >= 0"),
])
def test_impossible_layouts_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SmemLayout(**kwargs)


@pytest.mark.parametrize("call, match", [
    (lambda: SmemLayout(8, 32, 4).offset(8, 0), "row 8 is outside 8 rows"),
    (lambda: SmemLayout(8, 32, 4).offset(0, 32), "col 32 is outside a row of 32"),
    (lambda: SmemLayout(8, 32, 4).offset(-1, 0), "row must be non-negative"),
    (lambda: swizzle_bytes(16, "16B"), "unknown swizzle mode '16B'"),
    (lambda: swizzle_bytes(-16, "128B"), "non-negative"),
    (lambda: swizzle_bytes(1.5, "128B"), "must be integers"),
    (lambda: cute_swizzle(0, 3, 4, 2), "S >= B"),
    (lambda: cute_swizzle(3, 3, 3, 3, element_bytes=2), "multiples of element_bytes=2"),
    (lambda: padded_offset(0, 0, 0, 0, 4), "row_elems >= 1"),
])
def test_errors_name_the_problem(call, match):
    with pytest.raises(ValueError, match=match):
        call()
