"""Host-side TMA tensor maps (CUtensorMap) for the sm_90a twins, through ctypes and libcuda's
``cuTensorMapEncodeTiled``: no CUDA Python bindings needed, only the driver library (present wherever a GPU is).

A tensor map is an opaque 128-byte, 64-byte-aligned blob describing a global tensor (base address, sizes,
strides), the box that one ``cp.async.bulk.tensor`` copies, and the shared-memory swizzle. Two ways to hand it
to a kernel, both supported by :func:`kernel_arg`:

* by value, as a ``const __grid_constant__`` kernel parameter of a 128-byte struct (the default of the twins:
  ``struct alignas(128) TmaMap { unsigned long long w[16]; }``). CuPy passes a *size-one numpy array* by value
  (it hands the driver a pointer to the array's bytes and the driver copies as many bytes as the kernel's
  parameter is wide), so ``kernel_arg(m)`` returns a shape-(1,) numpy array of a 128-byte structured dtype;
* in global memory (twins compiled with ``-DTMAP_GLOBAL``): ``kernel_arg(m, cp=cupy)`` copies the bytes into a
  cupy array and returns it; the kernel takes ``const TmaMap*``. The copy finishes before the launch (same
  stream), so no ``fence.proxy.tensormap`` is needed in the kernel.

Usage (row-major bf16 matrix A of M x K, tiles of 128 rows x 64 columns, 128B swizzle)::

    import tma
    m = tma.encode_2d(A.data_ptr(), rows=M, cols=K, elem_bytes=2, box_rows=128, box_cols=64, swizzle=128)
    kern(grid, block, (tma.kernel_arg(m), ...))

General form: :func:`encode` (rank 1..5, dims innermost first, strides in bytes for dims 1..rank-1).
Enum values are those of CUDA 12/13 ``cuda.h`` (``CUtensorMapDataType`` etc.).
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Sequence
from typing import Any

# CUtensorMapDataType
DTYPE = {"uint8": 0, "uint16": 1, "uint32": 2, "int32": 3, "uint64": 4, "int64": 5, "float16": 6, "float32": 7,
         "float64": 8, "bfloat16": 9, "float32_ftz": 10, "tfloat32": 11, "tfloat32_ftz": 12}
DTYPE_BYTES = {"uint8": 1, "uint16": 2, "uint32": 4, "int32": 4, "uint64": 8, "int64": 8, "float16": 2,
               "float32": 4, "float64": 8, "bfloat16": 2, "float32_ftz": 4, "tfloat32": 4, "tfloat32_ftz": 4}
# CUtensorMapSwizzle (by span in bytes; 0 = none)
SWIZZLE = {0: 0, 32: 1, 64: 2, 128: 3}
# CUtensorMapL2promotion (by bytes; 0 = none)
L2_PROMOTION = {0: 0, 64: 1, 128: 2, 256: 3}
INTERLEAVE_NONE = 0
OOB_FILL_NONE = 0
OOB_FILL_NAN_REQUEST_ZERO_FMA = 1

MAP_BYTES = 128
_lib: Any = None


def swizzle_bytes(s: int | str) -> int:
    """128, '128B', 'none', 0 -> span in bytes (0 for none)."""
    if isinstance(s, str):
        t = s.strip().lower().rstrip("b")
        s = 0 if t in ("none", "no", "") else int(t)
    if s not in SWIZZLE:
        raise ValueError(f"swizzle must be one of none/32B/64B/128B, not {s!r}")
    return int(s)


def libcuda() -> Any:
    global _lib
    if _lib is None:
        for name in ("libcuda.so.1", "libcuda.so", ctypes.util.find_library("cuda")):
            if not name:
                continue
            try:
                _lib = ctypes.CDLL(name)
                break
            except OSError:
                continue
        if _lib is None:
            raise OSError("libcuda not found (no NVIDIA driver on this machine?)")
        f = _lib.cuTensorMapEncodeTiled
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p,
                      ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64),
                      ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint32),
                      ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    return _lib


def _err(code: int) -> str:
    try:
        s = ctypes.c_char_p()
        libcuda().cuGetErrorString(code, ctypes.byref(s))
        return f"CUresult {code}: {s.value.decode() if s.value else '?'}"
    except Exception:  # noqa: BLE001
        return f"CUresult {code}"


def encode(ptr: int, dtype: str, dims: Sequence[int], strides_bytes: Sequence[int], box: Sequence[int],
           swizzle: int | str = 128, elem_strides: Sequence[int] | None = None, l2_promotion: int = 256,
           oob_fill: int = OOB_FILL_NONE) -> bytes:
    """cuTensorMapEncodeTiled -> the 128 map bytes.

    dims: sizes, innermost (contiguous) first; strides_bytes: byte strides of dims 1..rank-1 (multiples of 16);
    box: box size per dim (each <= 256; box[0] * elem bytes <= the swizzle span when swizzled);
    ptr: device address (16-byte aligned)."""
    rank = len(dims)
    if not 1 <= rank <= 5 or len(box) != rank or len(strides_bytes) != rank - 1:
        raise ValueError("rank 1..5 with len(box) == rank and len(strides_bytes) == rank - 1")
    sw = swizzle_bytes(swizzle)
    eb = DTYPE_BYTES[dtype]
    if sw and box[0] * eb > sw:
        raise ValueError(f"box inner dimension {box[0]} x {eb} B exceeds the {sw}B swizzle span")
    es = list(elem_strides) if elem_strides is not None else [1] * rank
    buf = ctypes.create_string_buffer(MAP_BYTES + 64)
    addr = (ctypes.addressof(buf) + 63) // 64 * 64  # the API wants a 64-byte-aligned CUtensorMap
    u64 = ctypes.c_uint64 * rank
    u32 = ctypes.c_uint32 * rank
    rc = libcuda().cuTensorMapEncodeTiled(
        ctypes.c_void_p(addr), DTYPE[dtype], rank, ctypes.c_void_p(int(ptr)), u64(*dims),
        (ctypes.c_uint64 * max(1, rank - 1))(*strides_bytes), u32(*box), u32(*es), INTERLEAVE_NONE,
        SWIZZLE[sw], L2_PROMOTION[l2_promotion], oob_fill)
    if rc != 0:
        raise RuntimeError(f"cuTensorMapEncodeTiled failed: {_err(rc)} (dims={list(dims)}, "
                           f"strides={list(strides_bytes)}, box={list(box)}, swizzle={sw})")
    return ctypes.string_at(addr, MAP_BYTES)


def encode_2d(ptr: int, rows: int, cols: int, elem_bytes: int = 2, box_rows: int = 128, box_cols: int = 64,
              swizzle: int | str = 128, dtype: str | None = None, l2_promotion: int = 256) -> bytes:
    """Row-major matrix rows x cols (leading dimension = cols); box of box_rows x box_cols elements."""
    dt = dtype or {1: "uint8", 2: "bfloat16", 4: "float32"}[elem_bytes]
    return encode(ptr, dt, [cols, rows], [cols * elem_bytes], [box_cols, box_rows], swizzle,
                  l2_promotion=l2_promotion)


def struct_dtype() -> Any:
    import numpy as np

    return np.dtype([("w", "<u8", (16,))])


def kernel_arg(map_bytes: bytes, cp: Any = None) -> Any:
    """By value (default): a shape-(1,) numpy array of a 128-byte struct, which CuPy passes by value.
    With cp (cupy module): a device copy (uint8 cupy array of 128 bytes) for kernels built with -DTMAP_GLOBAL."""
    import numpy as np

    if len(map_bytes) != MAP_BYTES:
        raise ValueError("a tensor map is 128 bytes")
    if cp is not None:
        return cp.asarray(np.frombuffer(map_bytes, dtype=np.uint8).copy())
    return np.frombuffer(map_bytes, dtype=struct_dtype()).copy()
