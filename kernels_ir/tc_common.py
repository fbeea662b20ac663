"""Pieces shared by the tensor-core kernels (``hgemm.py``, ``attention.py``): bf16 shared-memory panels with
the TMA swizzle, ldmatrix fragment addresses, TMA box copies and cp.async copies, as TC_DESIGNS.md fixes them
(``validate/kernels/TC_DESIGNS.md``)."""

from __future__ import annotations

import numpy as np

from gpusim.config import HardwareConfig
from gpusim.ir import Compute, KernelError, Mem
from gpusim.memory.swizzle import SWIZZLE_SPAN_BYTES, swizzle_bytes

BF16 = 2
PANEL_BYTES = 128  # a 64-element bf16 row of one panel
CHUNK = 16  # bytes per ldmatrix row / cp.async copy / swizzle chunk
SWIZZLES = tuple(SWIZZLE_SPAN_BYTES)
STAGES = tuple(range(1, 9))


def check_smem(name: str, smem: int, why: str, hw: HardwareConfig) -> None:
    """A knob combination whose shared memory cannot fit one block of ``hw`` (``[sm] smem_per_block_max_bytes``,
    227 KB on the H100) is an error at build time, naming the bytes."""
    limit = hw.sm.smem_per_block_max_bytes
    if smem > limit:
        raise KernelError(f"{name}: {why} asks for {smem} B ({smem / 1024:.0f} KB) of shared memory per block, "
                          f"more than the {limit} B ({limit // 1024} KB) a block may have on the {hw.gpu_model}")


def panel_offset(rows: int, r, c16, swizzle: str):
    """Byte offset of 16-byte chunk ``c16`` of row ``r`` in a tile of ``rows`` rows stored as 64-column panels."""
    r = np.asarray(r)
    c16 = np.asarray(c16)
    panel, cc = c16 // 8, c16 % 8
    return panel * rows * PANEL_BYTES + swizzle_bytes((r * PANEL_BYTES + cc * CHUNK).astype(np.int64), swizzle)


def sass_rest(name: str, count: int, warps, pipe: str = "int32", stall_cycles: int = 0) -> Compute:
    """``count`` instructions per warp of the twin's SASS beyond the modelled operations (address, loop control,
    conversions, polling), as independent work (``gpusim sass`` gives the loop's size), taking at least
    ``stall_cycles`` to issue (the control codes' stalls the modelled operations leave to it)."""
    return Compute(name, pipe, max(count, 0), ilp=8, warps=warps, stall_cycles=max(stall_cycles, 0))


def when(cond, addr):
    """``addr`` where ``cond`` holds, else an inactive lane (-1)."""
    return np.where(cond, addr, -1)


def cp_async_tile(name: str, tensor: str, rows: int, row_bytes: int, threads: int, gaddr, saddr,
                  warps=None) -> tuple[Mem, Mem]:
    """A tile of ``rows`` x ``row_bytes`` copied with 16-byte cp.async: thread t moves chunks t, t+threads, ...

    ``gaddr(c, row, c16)`` and ``saddr(c, row, c16)`` give global and shared byte addresses."""
    per_row = row_bytes // CHUNK
    total = rows * per_row
    if total % threads:
        raise KernelError(f"{name}: a {rows}x{row_bytes} B tile is not a whole number of 16-B copies per thread")
    rep = total // threads

    def idx(c):
        i = c.tid + threads * c.r
        return i // per_row, i % per_row

    ld = Mem(name, "global", "ld", CHUNK, lambda c: gaddr(c, *idx(c)), tensor, repeat=rep, warps=warps,
             group="cp.async")
    st = Mem(name + "_st", "shared", "st", CHUNK, lambda c: saddr(c, *idx(c)), repeat=rep, after=(name,),
             warps=warps, async_copy=True, group="cp.async")
    return ld, st


def tma_boxes(name: str, tensor: str, rows: int, cols16: int, swizzle: str, gaddr, arrive: str, seq,
              warp: int = 0) -> tuple[Mem, ...]:
    """TMA copies of a ``rows`` x ``cols16`` 16-byte-chunk tile: one box per swizzle span of each row (the box
    inner dimension is at most the span: 128 B for 128B, 64 B for 64B, 32 B for 32B), issued by one thread of
    ``warp``. ``gaddr(c, row, c16)`` is the global byte address of a chunk."""
    span = SWIZZLE_SPAN_BYTES[swizzle]
    if not span:
        raise KernelError(f"{name}: TMA tiles need a swizzle mode (32B, 64B or 128B), got 'none'")
    per_box = span // CHUNK
    boxes = cols16 // per_box
    chunks = rows * per_box
    rep = -(-chunks // 32)
    ops = []
    for b in range(boxes):
        def addr(c, b=b):
            q = c.r * 32 + c.lane
            row, cc = q // per_box, q % per_box
            return np.where(q < chunks, gaddr(c, np.minimum(row, rows - 1), b * per_box + cc), -1)
        ops.append(Mem(f"{name}{b}", "global", "tma", CHUNK, addr, tensor, repeat=rep, warps=(warp,),
                       arrive=arrive, seq=seq))
    return tuple(ops)
