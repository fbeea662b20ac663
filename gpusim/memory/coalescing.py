"""Global-memory coalescing: sectors, lines and requests of one warp instruction, as pure functions.

Hardware rules (``/work/shared/reference/h100.md`` §4 and §1):

* A warp access costs as many sectors as its lanes' byte ranges touch; L1 caching is on by default with a
  32-byte access unit on the H100 [BPG]. Lines are 128 bytes of 4 sectors [NCU] §2.3.7.
* One request per global instruction per warp on sm_70 and later [NCU] §2.11.2.
* Ideal sectors per request: 4 / 8 / 16 for a full warp of 32 / 64 / 128-bit accesses [NCU] §2.11.2.

Conventions as in :mod:`gpusim.memory.shared`: ``lanes`` byte addresses in lane order, negative for an
inactive lane; the hardware numbers (``sector_bytes``, ``line_bytes``, ``lanes``) are required keyword
arguments, passed by the caller from the config's ``[l1]`` and ``[sm]`` tables. The scalar functions are
not cached: a count is one sort of at most 64 integers, about as cheap as building a cache key.
:func:`wavefronts_batch` (shared memory) is re-exported here so that both batched forms can be imported from
one place.
"""

from __future__ import annotations

import numpy as np

from gpusim.memory.shared import Addresses, in_blocks, warp_addresses, wavefronts_batch

GLOBAL_ACCESS_BYTES = (1, 2, 4, 8, 16)  # ld.global / st.global widths per lane: 8 to 128 bit

__all__ = [
    "GLOBAL_ACCESS_BYTES", "ideal_sectors", "lines", "lines_batch", "requests",
    "sector_ids", "sectors", "sectors_batch", "wavefronts_batch",
]


def _check_unit(unit_bytes: int, name: str) -> None:
    if unit_bytes < 1:
        raise ValueError(f"{name}={unit_bytes} must be >= 1")


def _touched_units(a: np.ndarray, access_bytes: int, unit_bytes: int) -> np.ndarray:
    """Indices of the ``unit_bytes`` units each lane's range ``[a, a+access_bytes)`` touches.

    Shape ``(n, lanes * span)``; -1 for inactive lanes and for the unused tail of a short range.
    """
    span = (access_bytes - 1) // unit_bytes + 2  # upper bound on units one range can touch
    first = a // unit_bytes
    last = (a + access_bytes - 1) // unit_bytes
    ids = first[..., None] + np.arange(span, dtype=np.int64)
    ids = np.where((a >= 0)[..., None] & (ids <= last[..., None]), ids, -1)
    return ids.reshape(a.shape[0], a.shape[1] * span)


def _count_distinct(ids: np.ndarray) -> np.ndarray:
    """Distinct non-negative values per row of ``ids``."""
    s = np.sort(ids, axis=1)
    first = np.ones(s.shape, dtype=bool)
    first[:, 1:] = s[:, 1:] != s[:, :-1]
    return (first & (s >= 0)).sum(axis=1)


def sectors_batch(addr2d: np.ndarray, access_bytes: int, *, sector_bytes: int, lanes: int) -> np.ndarray:
    """:func:`sectors` of each row of an ``(n, lanes)`` array of warp instructions, fully vectorized."""
    _check_unit(sector_bytes, "sector_bytes")
    a = warp_addresses(addr2d, access_bytes, GLOBAL_ACCESS_BYTES, lanes=lanes, batch=True)
    return in_blocks(lambda block: _count_distinct(_touched_units(block, access_bytes, sector_bytes)), a)


def lines_batch(addr2d: np.ndarray, access_bytes: int, *, line_bytes: int, lanes: int) -> np.ndarray:
    """:func:`lines` of each row of an ``(n, lanes)`` array of warp instructions, fully vectorized."""
    _check_unit(line_bytes, "line_bytes")
    a = warp_addresses(addr2d, access_bytes, GLOBAL_ACCESS_BYTES, lanes=lanes, batch=True)
    return in_blocks(lambda block: _count_distinct(_touched_units(block, access_bytes, line_bytes)), a)


def sectors(addresses: Addresses, access_bytes: int, *, sector_bytes: int, lanes: int) -> int:
    """Distinct ``sector_bytes`` sectors (32 B on the H100) touched by the active lanes' byte ranges
    ``[a, a + access_bytes)``.

    ncu: ``l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}`` per request (h100.md §4: [BPG], [NCU]).
    """
    _check_unit(sector_bytes, "sector_bytes")
    a = warp_addresses(addresses, access_bytes, GLOBAL_ACCESS_BYTES, lanes=lanes)
    return int(_count_distinct(_touched_units(a, access_bytes, sector_bytes))[0])


def lines(addresses: Addresses, access_bytes: int, *, line_bytes: int, lanes: int) -> int:
    """Distinct ``line_bytes`` cache lines (128 B on the H100) touched by the active lanes' byte ranges
    (h100.md §1, §4: [NCU])."""
    _check_unit(line_bytes, "line_bytes")
    a = warp_addresses(addresses, access_bytes, GLOBAL_ACCESS_BYTES, lanes=lanes)
    return int(_count_distinct(_touched_units(a, access_bytes, line_bytes))[0])


def requests(addresses: Addresses, access_bytes: int, *, lanes: int) -> int:
    """1 if any lane is active, else 0: one request per warp instruction on sm_70+ (h100.md §4: [NCU]).

    ncu: ``l1tex__t_requests_pipe_lsu_mem_global_op_{ld,st}``.
    """
    a = warp_addresses(addresses, access_bytes, GLOBAL_ACCESS_BYTES, lanes=lanes)
    return int((a >= 0).any())


def ideal_sectors(access_bytes: int, active_lanes: int | None = None, *, sector_bytes: int, lanes: int) -> int:
    """Sectors of a perfectly coalesced access: ``ceil(active_lanes * access_bytes / sector_bytes)``.

    4 / 8 / 16 for a full warp of 4 / 8 / 16-byte accesses (h100.md §4 "Ideal sectors": [NCU] §2.11.2).
    """
    _check_unit(sector_bytes, "sector_bytes")
    if access_bytes not in GLOBAL_ACCESS_BYTES:
        raise ValueError(f"access_bytes={access_bytes} is not an allowed access width "
                         f"(allowed: {', '.join(map(str, GLOBAL_ACCESS_BYTES))})")
    active_lanes = lanes if active_lanes is None else active_lanes
    if not 0 <= active_lanes <= lanes:
        raise ValueError(f"active_lanes={active_lanes} is outside 0..{lanes}")
    return -(-active_lanes * access_bytes // sector_bytes)


def sector_ids(addresses: Addresses, access_bytes: int, *, sector_bytes: int, lanes: int) -> np.ndarray:
    """Sorted distinct sector indices (``address // sector_bytes``) the active lanes touch, as int64.

    The cache models consume these; ``len(sector_ids(...)) == sectors(...)``.
    """
    _check_unit(sector_bytes, "sector_bytes")
    a = warp_addresses(addresses, access_bytes, GLOBAL_ACCESS_BYTES, lanes=lanes)
    ids = _touched_units(a, access_bytes, sector_bytes)
    return np.unique(ids[ids >= 0])
