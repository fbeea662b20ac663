"""The swizzle lab: one warp instruction on a shared-memory tile, lane by lane and wavefront by wavefront.

A tile is ``rows x cols`` elements of one dtype, stored row-major under a layout (plain, padded rows, a TMA
XOR swizzle or a CuTe ``Swizzle<B,M,S>``). An access pattern says which elements the 32 lanes of one warp
instruction read. The wavefront count comes from ``gpusim.memory.shared`` (the simulator's own rule); this
module adds the picture: which bank each lane's words fall in and which wavefront serves them.

Access patterns (lane ``l``, ``v`` elements per lane):

* row-wise: lanes read consecutive vectors along the rows: element ``l*v`` of the tile in row-major order;
* column-wise: lanes walk down a column: row ``l % rows``, columns ``(l // rows) * v ..``;
* ldmatrix.x4: the A-fragment load of ``mma.m16n8k16``: lane ``l`` gives the 16-byte row
  ``(l % 16, chunk l // 16)``; four 8x8 b16 matrices, one 128-byte phase each;
* wgmma operand: the 8-row x 16-byte core matrices of one k-slice of a wgmma operand, four of them down
  the rows (row ``l % R``, chunk ``l // R``, ``R = min(32, rows)``), each one 128-byte phase like ldmatrix.
  The order in which the hardware walks a descriptor is not documented; gpusim counts core-matrix phases.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gpusim.memory import shared
from gpusim.memory.swizzle import SWIZZLE_SPAN_BYTES, SmemLayout, cute_swizzle, swizzle_params

DTYPES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}
ACCESSES = ("row-wise", "column-wise", "ldmatrix.x4", "wgmma operand")
MATRIX_ACCESSES = ("ldmatrix.x4", "wgmma operand")
XOR_MODES = tuple(m for m in SWIZZLE_SPAN_BYTES if m != "none")
ROW_BYTES_16 = shared.LDMATRIX_ROW_BYTES  # ldmatrix rows and wgmma core-matrix rows: 16 bytes
MATRIX_ROWS = shared.LDMATRIX_ROWS
MATRICES = 4  # ldmatrix.x4; four core matrices for the wgmma pattern


@dataclass(frozen=True)
class Geometry:
    """The shared memory the lab draws, from the GPU chosen (its config): lanes of a warp, banks, bank width and
    the shared memory one block may use."""

    lanes: int
    banks: int
    word_bytes: int
    max_tile_bytes: int

    @classmethod
    def of(cls, cfg) -> Geometry:
        return cls(cfg.sm.warp_size_threads, cfg.shared_memory.banks, cfg.shared_memory.bank_width_bytes,
                   cfg.sm.smem_per_block_max_bytes)

    @property
    def banks_kw(self) -> dict:
        return {"banks": self.banks, "bank_width_bytes": self.word_bytes}


@dataclass(frozen=True)
class Tile:
    rows: int
    cols: int
    dtype: str
    geo: Geometry  # the GPU's shared memory it lives in

    @property
    def element_bytes(self) -> int:
        return DTYPES[self.dtype]

    @property
    def row_bytes(self) -> int:
        return self.cols * self.element_bytes


@dataclass(frozen=True)
class Layout:
    """``kind``: ``none``, ``pad`` (``pad_elems`` unused elements after each row), ``xor`` (TMA ``mode``
    32B/64B/128B) or ``cute`` (``Swizzle<B,M,S>`` on the element index)."""

    kind: str = "none"
    pad_elems: int = 0
    mode: str = "none"
    bms: tuple[int, int, int] = (0, 0, 0)

    def describe(self) -> str:
        if self.kind == "pad":
            return f"padding by {self.pad_elems}"
        if self.kind == "xor":
            return f"XOR swizzle {self.mode}"
        if self.kind == "cute":
            return "CuTe Swizzle<{},{},{}>".format(*self.bms)
        return "no swizzle"


OffsetFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


def offset_fn(tile: Tile, layout: Layout) -> OffsetFn:
    """``(row, col) -> byte offset`` of the layout; raises ``ValueError`` naming an impossible combination."""
    eb = tile.element_bytes
    if tile.rows < 1 or tile.cols < 1:
        raise ValueError(f"a tile needs at least one row and one column (got {tile.rows} x {tile.cols})")
    if layout.kind in ("none", "pad", "xor"):
        lay = SmemLayout(tile.rows, tile.cols, eb, swizzle=layout.mode if layout.kind == "xor" else "none",
                         pad_elems=layout.pad_elems if layout.kind == "pad" else 0)
        size = lay.size_bytes
        fn = lay.offset
    elif layout.kind == "cute":
        b, m, s = layout.bms
        if b < 0 or m < 0 or s < b:
            raise ValueError(f"Swizzle<{b},{m},{s}> needs B >= 0, M >= 0 and S >= B (the XOR's source and "
                             f"target bit fields must not overlap)")
        block = 1 << (m + b)  # elements the swizzle permutes among (bits [0, M+B) change)
        if b and (block > tile.cols or tile.cols % block):
            raise ValueError(f"Swizzle<{b},{m},{s}> permutes blocks of 2^(M+B) = {block} elements "
                             f"({block * eb} B) but a row holds {tile.cols} elements ({tile.row_bytes} B): the "
                             f"swizzle is wider than the tile row")
        size = tile.rows * tile.row_bytes

        def fn(row, col):
            return cute_swizzle((np.asarray(row) * tile.cols + np.asarray(col)) * eb, b, m, s, element_bytes=eb)
    else:
        raise ValueError(f"unknown layout kind {layout.kind!r}")
    cap = tile.geo.max_tile_bytes
    if size > cap:
        raise ValueError(f"the tile takes {size:,} B of shared memory, more than the {cap:,} B "
                         f"({cap // 1024} KB) one block may use")
    return fn


@dataclass(frozen=True)
class Access:
    """What the 32 lanes of one instruction read: lane ``l`` reads ``vector`` elements from
    ``(rows[l], cols[l])`` on, ``width_bytes`` in all (16 for the matrix patterns: one row address)."""

    name: str
    rows: np.ndarray
    cols: np.ndarray
    vector: int
    width_bytes: int


def lane_elements(tile: Tile, access: str, access_bytes: int = 4) -> Access:
    """The elements each lane reads; raises ``ValueError`` if the tile cannot serve the pattern."""
    eb = tile.element_bytes
    n = tile.geo.lanes  # the warp's lanes
    lanes = np.arange(n)
    if access in MATRIX_ACCESSES:
        width = ROW_BYTES_16
    elif access in ("row-wise", "column-wise"):
        width = access_bytes
        if width not in shared.SHARED_ACCESS_BYTES:
            raise ValueError(f"a lane loads 4, 8 or 16 bytes, not {width}")
    else:
        raise ValueError(f"unknown access pattern {access!r} (allowed: {', '.join(ACCESSES)})")
    if width < eb:
        raise ValueError(f"a {8 * width}-bit access cannot load one {eb}-byte {tile.dtype} element")
    v = width // eb
    if tile.cols % v:
        raise ValueError(f"a row of {tile.cols} {tile.dtype} elements is not a whole number of {width}-byte "
                         f"vectors ({v} elements)")
    if access == "row-wise":
        if tile.rows * tile.cols < n * v:
            raise ValueError(f"a row-wise warp read takes {n} x {v} = {n * v} elements, but the tile has "
                             f"only {tile.rows * tile.cols}")
        e = lanes * v
        return Access(access, e // tile.cols, e % tile.cols, v, width)
    if access == "column-wise":
        per_col = min(tile.rows, n)
        if -(-n // per_col) * v > tile.cols:
            raise ValueError(f"a column-wise warp read of {tile.rows} rows needs {-(-n // per_col) * v} "
                             f"columns, but the tile has {tile.cols}")
        return Access(access, lanes % per_col, (lanes // per_col) * v, v, width)
    if access == "ldmatrix.x4":
        if tile.rows < 2 * MATRIX_ROWS or tile.row_bytes < 2 * ROW_BYTES_16:
            raise ValueError(f"ldmatrix.x4 reads a 16-row x 32-byte block (four 8x8 b16 matrices); the tile has "
                             f"{tile.rows} rows of {tile.row_bytes} B")
        return Access(access, lanes % (2 * MATRIX_ROWS), (lanes // (2 * MATRIX_ROWS)) * v, v, width)
    rows_used = min(n, tile.rows // MATRIX_ROWS * MATRIX_ROWS)
    chunks = n // rows_used if rows_used else 0
    if not rows_used or chunks * ROW_BYTES_16 > tile.row_bytes:
        raise ValueError(f"the wgmma pattern reads four 8-row x 16-byte core matrices; the tile has {tile.rows} "
                         f"rows of {tile.row_bytes} B")
    return Access(access, lanes % rows_used, (lanes // rows_used) * v, v, width)


@dataclass(frozen=True)
class Cell:
    """One 4-byte word a lane reads, and the wavefront that serves it."""

    lane: int
    bank: int
    wavefront: int
    address: int


@dataclass
class Analysis:
    tile: Tile
    layout: Layout
    access: Access
    addresses: np.ndarray  # (32,) byte address of each lane's first element (row address for matrices)
    lane_wavefront: np.ndarray  # (32,) the wavefront that completes each lane
    cells: list[Cell]
    phases: list[tuple[int, int, int]]  # (first lane, last lane, wavefronts)
    wavefronts: int  # from gpusim.memory.shared
    ideal: int  # one per phase with an active lane (what ncu subtracts)

    @property
    def conflicts(self) -> int:
        return self.wavefronts - self.ideal


def analyse(tile: Tile, layout: Layout, access: str, access_bytes: int = 4) -> Analysis:
    """Wavefronts and the lane-by-bank picture of one warp instruction; ``ValueError`` for bad input."""
    fn = offset_fn(tile, layout)
    geo = tile.geo
    acc = lane_elements(tile, access, access_bytes)
    eb = tile.element_bytes
    if access == "wgmma operand" and kernel_swizzle_mode(layout, eb) is None:
        raise ValueError(f"wgmma reads shared memory through a matrix descriptor, which knows only the canonical "
                         f"layouts (no swizzle, 32B, 64B, 128B); {layout.describe()} is not one of them")
    addr = np.asarray(fn(acc.rows, acc.cols), dtype=np.int64)
    # every element of a lane's vector must sit right after the previous one, or the access is not one load
    step = np.arange(acc.vector)
    vec = np.asarray(fn(np.repeat(acc.rows, acc.vector), (acc.cols[:, None] + step).ravel()))
    split = vec.reshape(geo.lanes, acc.vector) != addr[:, None] + step * eb
    if split.any():
        lane = int(np.argwhere(split)[0][0])
        raise ValueError(f"{layout.describe()} does not keep a {acc.width_bytes}-byte vector contiguous: lane {lane}'s "
                         f"elements ({acc.rows[lane]}, {acc.cols[lane]}..{acc.cols[lane] + acc.vector - 1}) are "
                         f"scattered; choose a narrower access or a swizzle that moves larger units")
    bad = addr % acc.width_bytes != 0
    if bad.any():
        lane = int(np.argmax(bad))
        raise ValueError(f"lane {lane} would load {acc.width_bytes} B from address {addr[lane]}, which is not "
                         f"{acc.width_bytes}-byte aligned: with {layout.describe()} a row is not a multiple of "
                         f"{acc.width_bytes} B (pad by a multiple of {max(1, acc.width_bytes // eb)} elements)")
    if access in MATRIX_ACCESSES:
        per = MATRIX_ROWS
        wavefronts = shared.ldmatrix_wavefronts(addr, MATRICES, **geo.banks_kw)
    else:
        per = shared.phase_lanes(acc.width_bytes, **geo.banks_kw, lanes=geo.lanes)
        if per < geo.lanes and shared.uniform_pairs(addr[None])[0]:
            per = min(2 * per, geo.lanes)
        wavefronts = shared.wavefronts(addr, acc.width_bytes, **geo.banks_kw, lanes=geo.lanes)
    cells, lane_wf, phases = _picture(addr, acc.width_bytes, per, geo)
    return Analysis(tile, layout, acc, addr, lane_wf, cells, phases, wavefronts, len(phases))


def _picture(addr: np.ndarray, width: int, per: int, geo: Geometry):
    """Greedy slot assignment per phase: the j-th distinct word of a bank goes to the phase's j-th wavefront,
    a repeated word (broadcast) to its first slot; a phase costs its deepest bank."""
    words_per_lane = width // geo.word_bytes
    cells: list[Cell] = []
    lane_wf = np.zeros(geo.lanes, dtype=np.int64)
    phases = []
    offset = 0
    for first in range(0, geo.lanes, per):
        slots: dict[int, list[int]] = {}
        for lane in range(first, first + per):
            deepest = 0
            for k in range(words_per_lane):
                word = int(addr[lane]) // geo.word_bytes + k
                bank = word % geo.banks
                column = slots.setdefault(bank, [])
                if word not in column:
                    column.append(word)
                slot = column.index(word)
                deepest = max(deepest, slot)
                cells.append(Cell(lane, bank, offset + slot, word * geo.word_bytes))
            lane_wf[lane] = offset + deepest
        cost = max(len(c) for c in slots.values())
        phases.append((first, first + per - 1, cost))
        offset += cost
    return cells, lane_wf, phases


TILE_MAX_ROWS = 128  # rows the tile picture draws (a taller tile is cut, and the page says so)
TILE_MAX_WORDS = 64  # 4-byte words per row it draws


def tile_banks(tile: Tile, layout: Layout, access: Access | None = None, max_rows: int = TILE_MAX_ROWS,
               max_words: int = TILE_MAX_WORDS) -> list[dict]:
    """The tile's 4-byte words (rows x words, clipped to ``max_rows`` x ``max_words``) with the bank each lands in
    under the layout, and whether the access reads it: the picture of what a swizzle does to a tile."""
    fn = offset_fn(tile, layout)
    per_word = tile.geo.word_bytes // tile.element_bytes  # elements in one 4-byte word (DTYPES are at most 4 bytes)
    rows = min(tile.rows, max_rows)
    words = min(-(-tile.cols // per_word), max_words)
    touched = set()
    if access is not None:
        for r, c in zip(access.rows, access.cols, strict=True):
            for i in range(0, access.vector, per_word):
                touched.add((int(r), (int(c) + i) // per_word))
    out = []
    for r in range(rows):
        addr = np.asarray(fn(np.full(words, r), np.arange(words) * per_word))
        for w in range(words):
            out.append({"row": r, "word": w, "bank": int(addr[w] // tile.geo.word_bytes % tile.geo.banks),
                        "read": (r, w) in touched})
    return out


def kernel_swizzle_mode(layout: Layout, element_bytes: int) -> str | None:
    """The TMA swizzle mode (a kernel's ``swizzle`` knob) equal to the layout, or None if there is none."""
    if layout.kind == "none":
        return "none"
    if layout.kind == "xor":
        return layout.mode
    if layout.kind == "cute":
        b, m, s = layout.bms
        if b == 0:
            return "none"
        shift = element_bytes.bit_length() - 1  # Swizzle on element indices = Swizzle<B, M+log2(bytes), S> on bytes
        for mode in XOR_MODES:
            if swizzle_params(mode) == (b, m + shift, s):
                return mode
    return None
