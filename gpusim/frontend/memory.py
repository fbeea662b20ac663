"""The emulator's memories: global tensors (contents generated lazily, page by page), shared and local memory.

Global memory holds the kernel's tensors at the addresses :class:`gpusim.ir.Kernel` lays them out at (one after
another, 1 MiB aligned, from :data:`GLOBAL_BASE`). A tensor's contents are what the user gave (a ``.npy`` file, a
named distribution) or, where they gave none, deterministic pseudo-random values of its dtype; the page holding an
address is generated the first time it is touched, so a 4 GB tensor costs only the pages the emulated CTAs read.
Values loaded from a tensor whose contents were not given are *unknown*: an address computed from them is an error
(the kernel's addresses depend on data the user must describe), a branch on them is noted.
"""

from __future__ import annotations

from gpusim.ir import KernelError

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

GLOBAL_BASE = 0x7F00_0000_0000  # device addresses of the tensors: base + Kernel.tensor_base(name)
PAGE_BYTES = 1 << 14
ALIGN_BYTES = 1 << 20  # as gpusim.ir.Kernel.tensor_base lays tensors out

# taint bits a value carries (per register): DATA, read from memory (addresses built from it change with the data);
# UNKNOWN, read from memory whose contents the user did not give (or an instruction whose result is not modelled);
# ORDER, returned by a global atomic (a ticket, a counter: which CTA gets which value depends on the order they run)
DATA, UNKNOWN, ORDER = 1, 2, 4


class EmulationError(KernelError):
    """The emulated kernel did something gpusim cannot follow or a GPU would fault on (one line)."""


@dataclass
class TensorBuf:
    name: str
    size_bytes: int
    dtype: np.dtype
    pages_of: Callable[[int], np.ndarray]  # page index -> PAGE_BYTES bytes of initial contents
    given: bool  # contents given by the user (loads from it are DATA, not UNKNOWN)
    base: int = 0
    pages: dict = field(default_factory=dict)

    def page(self, p: int) -> np.ndarray:
        arr = self.pages.get(p)
        if arr is None:
            arr = self.pages[p] = self.pages_of(p)
        return arr


class GlobalMemory:
    """The tensors of one launch, at their device addresses."""

    def __init__(self, tensors: list[TensorBuf]) -> None:
        base = GLOBAL_BASE
        for t in tensors:
            t.base = base
            base += -(-max(t.size_bytes, 1) // ALIGN_BYTES) * ALIGN_BYTES
        self.tensors = tensors
        self._bases = np.array([t.base for t in tensors], dtype=np.uint64)
        self.frozen = False  # while probing a loop's trip count: stores are dropped

    def locate(self, addr: np.ndarray, width: int, where: str) -> tuple[int, np.ndarray]:
        """(tensor index, byte offsets) of lane addresses that must all fall in one tensor, in bounds."""
        if not len(self.tensors):
            raise EmulationError(f"{where}: accesses global memory, but the launch passes no tensor")
        a = addr.astype(np.uint64)
        k = np.searchsorted(self._bases, a, side="right").astype(np.int64) - 1
        if (k < 0).any():
            bad = int(a[k < 0][0])
            raise EmulationError(f"{where}: address 0x{bad:x} is outside every tensor (an out-of-bounds access)")
        first = int(k[0])
        if (k != first).any():
            names = sorted({self.tensors[int(i)].name for i in np.unique(k)})
            raise EmulationError(f"{where}: one instruction touches several tensors ({', '.join(names)}); gpusim "
                                 "needs each memory instruction to address one tensor")
        t = self.tensors[first]
        off = (a - np.uint64(t.base)).astype(np.int64)
        over = off + width > t.size_bytes
        if over.any():
            o = int(off[over][0])
            raise EmulationError(f"{where}: reads or writes bytes {o}..{o + width} of tensor '{t.name}', which has "
                                 f"{t.size_bytes} (an out-of-bounds access)")
        if (off % min(width, 16)).any():
            o = int(off[(off % min(width, 16)) != 0][0])
            raise EmulationError(f"{where}: a {width}-byte access at byte {o} of tensor '{t.name}' is misaligned")
        return first, off

    def read(self, ti: int, off: np.ndarray, width: int) -> np.ndarray:
        """(lanes, width) bytes."""
        t = self.tensors[ti]
        pg = off // PAGE_BYTES
        inpage = off % PAGE_BYTES
        uniq, inv = np.unique(pg, return_inverse=True)
        stack = np.stack([t.page(int(p)) for p in uniq])
        return stack[inv.reshape(-1, 1), inpage.reshape(-1, 1) + np.arange(width)]

    def write(self, ti: int, off: np.ndarray, data: np.ndarray) -> None:
        if self.frozen:
            return
        t = self.tensors[ti]
        width = data.shape[1]
        pg = off // PAGE_BYTES
        inpage = off % PAGE_BYTES
        for p in np.unique(pg):
            sel = pg == p
            page = t.page(int(p))
            page[inpage[sel].reshape(-1, 1) + np.arange(width)] = data[sel]


# --- contents --------------------------------------------------------------------------------------------------------
DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16, "i8": np.int8, "u8": np.uint8,
          "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64}


def _rng(seed: int, tensor: int, page: int) -> np.random.Generator:
    return np.random.default_rng([seed, tensor, page])


def generated(kind: str, dtype: np.dtype, size_bytes: int, tensor: int, args: tuple = (), seed: int = 0,
              bf16: bool = False) -> Callable[[int], np.ndarray]:
    """Pages of a named distribution: ``uniform(lo, hi)`` (default -1, 1), ``normal(mu, sigma)``, ``randint(lo, hi)``,
    ``zeros``, ``ones``, ``const(v)``, ``arange``, each element drawn from a generator seeded by (seed, tensor, page):
    deterministic whatever order pages are touched in."""
    itemsize = np.dtype(dtype).itemsize
    per = PAGE_BYTES // itemsize

    def page(p: int) -> np.ndarray:
        first = p * per
        n = per
        rng = _rng(seed, tensor, p)
        if kind == "zeros":
            vals = np.zeros(n)
        elif kind == "ones":
            vals = np.ones(n)
        elif kind == "const":
            vals = np.full(n, args[0])
        elif kind == "arange":  # element i holds start + i * step
            step = args[0] if len(args) > 0 else 1
            start = args[1] if len(args) > 1 else 0
            vals = start + np.arange(first, first + n, dtype=np.float64) * step
        elif kind == "uniform":
            lo, hi = args if args else (-1.0, 1.0)
            vals = rng.uniform(lo, hi, n)
        elif kind == "normal":
            mu, sigma = args if args else (0.0, 1.0)
            vals = rng.normal(mu, sigma, n)
        elif kind == "randint":
            lo, hi = args
            vals = rng.integers(int(lo), int(hi), n)
        elif kind == "divmod":  # element i holds ((i div d) * a + (i mod d) * b + c) mod m, in [0, m)
            dv, a, b, c, mod = (int(x) for x in args)
            i = np.arange(first, first + n, dtype=np.int64)
            vals = ((i // dv) * a + (i % dv) * b + c) % mod
        elif kind == "mulmod":  # element i holds (i * a) mod m: a permutation of 0..m-1 for odd a and m a power of 2
            a, mod = (int(x) for x in args)
            vals = (np.arange(first, first + n, dtype=np.uint64) * np.uint64(a % (1 << 64))) % np.uint64(mod)
        else:
            raise EmulationError(f"unknown distribution {kind!r}")
        if bf16:
            f = vals.astype(np.float32).view(np.uint32)
            out = (f >> 16).astype(np.uint16)
        else:
            out = vals.astype(dtype)
        return np.frombuffer(out.tobytes(), dtype=np.uint8).copy()

    return page


def from_array(array: np.ndarray) -> Callable[[int], np.ndarray]:
    """Pages of a given array (a ``.npy`` file), zero-padded past its end."""
    raw = np.ascontiguousarray(array).view(np.uint8).reshape(-1)

    def page(p: int) -> np.ndarray:
        out = np.zeros(PAGE_BYTES, dtype=np.uint8)
        chunk = raw[p * PAGE_BYTES:(p + 1) * PAGE_BYTES]
        out[:len(chunk)] = chunk
        return out

    return page


# constant bank 0 as the driver fills it on sm_90: blockDim, gridDim, the local-memory stack top, the global
# memory descriptor (read only as ULDC.64 for desc[URx] operands) and the kernel parameters from PARAM_BASE
CONST_BLOCK_DIM, CONST_GRID_DIM, CONST_STACK, CONST_DESC, PARAM_BASE = 0x0, 0xC, 0x28, 0x208, 0x210
# the launch's cluster where the kernel does not declare it (cudaLaunchKernelEx), as ptxas reads them on sm_90 (each
# checked by compiling the special register's read): %is_explicit_cluster (1 in a cluster), %cluster_nctaid.x/y/z,
# the reciprocals of cluster_nctaid.x/y as float32 (clusterid = ctaid * them, truncated), %nclusterid.x/y,
# %cluster_nctarank
CONST_EXPLICIT_CLUSTER, CONST_CLUSTER_DIM, CONST_CLUSTER_RCP, CONST_NCLUSTER, CONST_CLUSTER_CTAS = \
    0x140, 0x144, 0x150, 0x15C, 0x188


@dataclass
class MemAccess:
    """What one memory step touched."""

    space: str  # global, shared, local
    kind: str  # ld, st, ldsm, stsm, atom (read-modify-write), cp (LDGSTS: global load + shared store)
    width: int  # bytes per lane (per row for ldsm/stsm)
    addr: np.ndarray  # (lanes,) int64: byte offset in the tensor / the CTA's shared memory; -1 where not executed
    tensor: int = -1  # global: index into the memory's tensors
    taint: int = 0  # the address registers' taint
    shared_addr: np.ndarray | None = None  # LDGSTS: the shared destination offsets
    matrices: int = 0  # ldsm/stsm .x1/.x2/.x4
    extra: object = None  # a Hopper instruction's record (gpusim.frontend.hopper.Record)


def set_words_taint(taints: np.ndarray, off: np.ndarray, width: int, t: int) -> None:
    if len(off):
        words = (off[:, None] + np.arange(0, max(width, 4), 4)) // 4
        taints[np.clip(words, 0, len(taints) - 1)] = t
