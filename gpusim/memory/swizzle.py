"""Shared-memory layouts usable by any kernel: CuTe swizzles, the TMA swizzle modes, padding.

Hardware rules (``/work/shared/reference/h100.md`` §3):

* The TMA swizzle moves 16-byte chunks within 128-byte rows: 128B mode XORs the chunk index with
  ``row % 8`` and repeats every 1024 B; 64B mode with ``row % 4`` (every 512 B); 32B mode with ``row % 2``
  (every 256 B). The box inner dimension must not exceed the span [PG] (TMA swizzle section, Table 25).
* As address bits: ``bits[6:4] ^= bits[9:7]`` (128B), ``bits[5:4] ^= bits[8:7]`` (64B),
  ``bit[4] ^= bit[7]`` (32B), i.e. CuTe ``Swizzle<3,4,3>``, ``<2,4,3>``, ``<1,4,3>`` on byte offsets
  [CUTE].

Units: every function here takes and returns *byte* offsets. CuTe's ``Swizzle<B,M,S>`` acts on an
*element* index; :func:`cute_swizzle` converts with ``element_bytes`` (so ``Swizzle<3,3,3>`` on 2-byte
elements is the 128B mode on bytes). The swizzle is a function of the address bits, so offsets are taken
relative to a base aligned to the mode's repeat (``8 * span`` bytes: 1024 B for 128B).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SWIZZLE_CHUNK_BYTES = 16  # unit the TMA swizzle permutes [PG]
SWIZZLE_ROW_BYTES = 128  # a TMA swizzle row [PG]
SWIZZLE_SPAN_BYTES = {"none": 0, "32B": 32, "64B": 64, "128B": 128}  # TMA swizzle modes [PG] Table 25

IntOrArray = int | np.ndarray


def _bits(n_bytes: int) -> int:
    return n_bytes.bit_length() - 1


def swizzle_params(mode: str) -> tuple[int, int, int]:
    """CuTe ``(B, M, S)`` of a TMA swizzle mode on byte offsets: 128B -> (3, 4, 3), none -> (0, 4, 3).

    ``M = log2(16)``: the 16-byte chunk bits; ``M + S = log2(128)``: the row bits; ``B = log2(span/16)``.
    """
    if mode not in SWIZZLE_SPAN_BYTES:
        raise ValueError(f"unknown swizzle mode {mode!r} (allowed: {', '.join(SWIZZLE_SPAN_BYTES)})")
    span = SWIZZLE_SPAN_BYTES[mode]
    b = _bits(span // SWIZZLE_CHUNK_BYTES) if span else 0
    return b, _bits(SWIZZLE_CHUNK_BYTES), _bits(SWIZZLE_ROW_BYTES // SWIZZLE_CHUNK_BYTES)


def _offsets(offset_bytes: IntOrArray, name: str = "offset_bytes") -> np.ndarray:
    a = np.asarray(offset_bytes)
    if a.size and a.dtype.kind not in "iu":
        raise ValueError(f"{name} must be integers, got dtype {a.dtype}")
    a = a.astype(np.int64)
    if (a < 0).any():
        raise ValueError(f"{name} must be non-negative, got {int(a.min())}")
    return a


def _like(result: np.ndarray, *inputs: IntOrArray) -> IntOrArray:
    """A Python int when every input was a scalar, else the array."""
    return int(result) if all(np.ndim(x) == 0 for x in inputs) else result


def cute_swizzle(offset_bytes: IntOrArray, B: int, M: int, S: int, *, element_bytes: int = 1) -> IntOrArray:
    """CuTe ``Swizzle<B,M,S>`` applied to the element index of a byte offset; returns a byte offset.

    The element index ``i = offset_bytes // element_bytes`` becomes ``i ^ ((i & yyy) >> S)`` with
    ``yyy = ((1 << B) - 1) << (M + S)``: bits ``[M+S, M+S+B)`` XOR into bits ``[M, M+B)`` [CUTE]. The
    result is multiplied back by ``element_bytes``. With the default ``element_bytes=1`` the swizzle acts
    on byte offsets directly. Vectorized over numpy arrays; a scalar in gives an int out.
    """
    if B < 0 or M < 0 or S < B:
        raise ValueError(f"Swizzle<{B},{M},{S}> needs B >= 0, M >= 0 and S >= B (non-overlapping bit fields)")
    if element_bytes < 1:
        raise ValueError(f"element_bytes={element_bytes} must be >= 1")
    a = _offsets(offset_bytes)
    if (a % element_bytes).any():
        raise ValueError(f"offset_bytes must be multiples of element_bytes={element_bytes}")
    i = a // element_bytes
    yyy = ((1 << B) - 1) << (M + S)
    return _like((i ^ ((i & yyy) >> S)) * element_bytes, offset_bytes)


def swizzle_bytes(offset_bytes: IntOrArray, mode: str) -> IntOrArray:
    """TMA swizzle ``mode`` (``none``, ``32B``, ``64B``, ``128B``) applied to byte offsets.

    128B: ``bits[6:4] ^= bits[9:7]``; 64B: ``bits[5:4] ^= bits[8:7]``; 32B: ``bit[4] ^= bit[7]``
    (h100.md §3 "Swizzle as address bits": [CUTE], [PG]). Vectorized; a bijection on each block of
    ``8 * span`` bytes that keeps every byte inside its ``span``-byte segment.
    """
    b, m, s = swizzle_params(mode)
    return cute_swizzle(offset_bytes, b, m, s)


def padded_offset(row: IntOrArray, col: IntOrArray, row_elems: int, pad_elems: int,
                  element_bytes: int) -> IntOrArray:
    """Byte offset of ``(row, col)`` in a row-major tile whose rows hold ``row_elems`` elements followed by
    ``pad_elems`` unused ones: ``(row * (row_elems + pad_elems) + col) * element_bytes``. Vectorized."""
    if row_elems < 1 or pad_elems < 0 or element_bytes < 1:
        raise ValueError(f"padded_offset needs row_elems >= 1, pad_elems >= 0 and element_bytes >= 1, got "
                         f"{row_elems}, {pad_elems}, {element_bytes}")
    r, c = _offsets(row, "row"), _offsets(col, "col")
    if (c >= row_elems).any():
        raise ValueError(f"col {int(c.max())} is outside a row of {row_elems} elements")
    return _like((r * (row_elems + pad_elems) + c) * element_bytes, row, col)


@dataclass(frozen=True)
class SmemLayout:
    """A ``rows x cols`` row-major shared-memory tile of ``element_bytes`` elements, optionally padded by
    ``pad_elems`` per row or swizzled with a TMA mode (``none``, ``32B``, ``64B``, ``128B``).

    A swizzled row must be a whole number of swizzle spans (at least one): the swizzle permutes 16-byte
    chunks within each span-sized segment, so a shorter or ragged row would trade chunks with the next
    row. Rows of exactly one span (e.g. 128 B for 128B) make column reads of 8 consecutive rows
    conflict-free; wider rows get what their address bits give. Validated at construction.
    """

    rows: int
    cols: int
    element_bytes: int
    swizzle: str = "none"
    pad_elems: int = 0

    def __post_init__(self) -> None:
        self.validate()

    @property
    def row_bytes(self) -> int:
        """Bytes of one row's elements (without padding)."""
        return self.cols * self.element_bytes

    @property
    def size_bytes(self) -> int:
        """Bytes the tile occupies, padding included."""
        return self.rows * (self.cols + self.pad_elems) * self.element_bytes

    def validate(self) -> None:
        """Raise ``ValueError`` naming the problem if the combination is impossible."""
        for name in ("rows", "cols", "element_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"SmemLayout: {name}={getattr(self, name)} must be >= 1")
        if self.pad_elems < 0:
            raise ValueError(f"SmemLayout: pad_elems={self.pad_elems} must be >= 0")
        if self.swizzle not in SWIZZLE_SPAN_BYTES:
            raise ValueError(f"SmemLayout: unknown swizzle {self.swizzle!r} "
                             f"(allowed: {', '.join(SWIZZLE_SPAN_BYTES)})")
        span = SWIZZLE_SPAN_BYTES[self.swizzle]
        if not span:
            return
        if self.pad_elems:
            raise ValueError(f"SmemLayout: padding (pad_elems={self.pad_elems}) together with the "
                             f"{self.swizzle} swizzle; use one or the other")
        if SWIZZLE_CHUNK_BYTES % self.element_bytes:
            raise ValueError(f"SmemLayout: element_bytes={self.element_bytes} does not divide the "
                             f"{SWIZZLE_CHUNK_BYTES}-byte swizzle chunk")
        if self.row_bytes < span:
            raise ValueError(f"SmemLayout: the {self.swizzle} swizzle spans {span} B but a row is only "
                             f"{self.row_bytes} B ({self.cols} x {self.element_bytes} B)")
        if self.row_bytes % span:
            raise ValueError(f"SmemLayout: a row of {self.row_bytes} B is not a whole number of "
                             f"{span}-byte {self.swizzle} swizzle spans")

    def offset(self, row: IntOrArray, col: IntOrArray) -> IntOrArray:
        """Byte offset of element ``(row, col)`` from the tile base (vectorized)."""
        r = _offsets(row, "row")
        if (r >= self.rows).any():
            raise ValueError(f"SmemLayout: row {int(r.max())} is outside {self.rows} rows")
        linear = padded_offset(r, col, self.cols, self.pad_elems, self.element_bytes)
        return _like(np.asarray(swizzle_bytes(linear, self.swizzle)), row, col)
