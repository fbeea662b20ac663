"""Exact per-warp costs of each memory operation, from its lane addresses.

For every :class:`~gpusim.ir.Mem` operation the address expression is evaluated for whole CTAs and fed to
the pure functions of :mod:`gpusim.memory.shared` (wavefronts) and :mod:`gpusim.memory.coalescing`
(sectors, lines). The counts are computed for a few outer-loop iterations and two CTAs: the simulator
requires them to repeat with a period in the loop (1 or 2 for most kernels: double buffering; up to 16, or every
iteration of a short loop, where a stride walks across sectors) and to be equal across CTAs,
which holds for the divisible shapes the kernels accept, and says so when it does not. The hardware
numbers the counts depend on (warp size, banks, bank width, sector and line size) come from the config
(:class:`AccessGeometry`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from gpusim.ir import AddrCtx, Kernel, KernelError, Loop, Mem
from gpusim.memory import coalescing, shared

MAX_PERIOD = 16  # algorithmic: the longest period of a loop operation's counts looked for (each seen twice)
VARYING_SAMPLES = 8  # loop iterations sampled of an operation whose addresses come from data (Kernel.varying)
PREDICATED_OFF = -2  # an address expression's value for a lane whose warp issues the instruction with the lane off

if TYPE_CHECKING:
    from gpusim.config import HardwareConfig


@dataclass(frozen=True)
class AccessGeometry:
    """The hardware numbers the access counts depend on, as the config gives them."""

    lanes: int  # threads per warp ([sm] warp_size_threads)
    banks: int  # [shared_memory] banks
    bank_width_bytes: int  # [shared_memory] bank_width_bytes
    sector_bytes: int  # [l1] sector_bytes
    line_bytes: int  # [l1] line_bytes

    @classmethod
    def of(cls, cfg: HardwareConfig) -> AccessGeometry:
        return cls(lanes=cfg.sm.warp_size_threads, banks=cfg.shared_memory.banks,
                   bank_width_bytes=cfg.shared_memory.bank_width_bytes, sector_bytes=cfg.l1.sector_bytes,
                   line_bytes=cfg.l1.line_bytes)

    @property
    def banks_kw(self) -> dict[str, int]:
        """Keyword arguments of the bank-conflict functions in :mod:`gpusim.memory.shared`."""
        return {"banks": self.banks, "bank_width_bytes": self.bank_width_bytes, "lanes": self.lanes}


@dataclass(frozen=True)
class MemPattern:
    """Per-warp counts of one memory operation for each (loop parity, inner iteration).

    Arrays have shape ``(period, inner_trips, warps)`` (one more row when the last iteration differs: see
    :func:`pattern_row`) and count one execution of the operation by one warp (its ``repeat`` instructions
    together).
    """

    op: Mem
    period: int
    instructions: np.ndarray  # warp instructions with at least one active lane
    wavefronts: np.ndarray  # shared: wavefronts; global: 0
    ideal_wavefronts: np.ndarray
    sectors: np.ndarray  # global: sectors (32 B on the H100); shared: 0
    lines: np.ndarray  # global: cache lines (128 B on the H100); shared: 0
    last: bool = False  # the last loop iteration differs: arrays have a row ``period`` for it

    @property
    def l1tex_cycles(self) -> np.ndarray:
        """Cycles of the L1TEX pipe per execution: lines (global) or wavefronts (shared)."""
        return self.lines if self.op.space == "global" else self.wavefronts


def cta_coords(kernel: Kernel, linear: int) -> tuple[int, int, int]:
    gx, gy, _ = kernel.launch.grid
    return linear % gx, (linear // gx) % gy, linear // (gx * gy)


def eval_addresses(kernel: Kernel, op: Mem, cta: tuple[int, int, int], it: int, j: int,
                   lanes: int) -> np.ndarray:
    """Byte addresses of one execution of ``op`` by every warp of a CTA: shape (repeat, warps, lanes)."""
    block = kernel.launch.block
    threads = kernel.launch.threads_per_block
    warps = -(-threads // lanes)
    warp = np.arange(warps).reshape(1, warps, 1)
    lane = np.arange(lanes).reshape(1, 1, lanes)
    tid = warp * lanes + lane
    ctx = AddrCtx(r=np.arange(op.repeat).reshape(op.repeat, 1, 1), warp=warp, lane=lane, tid=tid,
                  block=block, bx=cta[0], by=cta[1], bz=cta[2], it=it, j=j)
    try:
        a = np.asarray(op.addr(ctx), dtype=np.int64)
        a = np.broadcast_to(a, (op.repeat, warps, lanes))
    except Exception as e:  # an address expression is user code: name it in the error
        raise KernelError(f"{kernel.name}: address expression of '{op.name}' failed: {e}") from None
    a = np.where(tid < threads, a, -1)  # threads beyond the block are not launched
    if op.warps is not None:  # warps outside the operation's role do not execute it
        a = np.where(np.isin(warp, op.warps), a, -1)
    if op.space == "global":
        tensor = next((t for t in kernel.tensors if t.name == op.tensor), None)
        if tensor is None:
            raise KernelError(f"{kernel.name}: '{op.name}' names unknown tensor '{op.tensor}'")
        hi = int(a.max()) + op.width_bytes
        if hi > tensor.size_bytes:
            raise KernelError(f"{kernel.name}: '{op.name}' reads past the end of tensor {op.tensor} "
                              f"({hi} > {tensor.size_bytes} bytes) at block {cta}, iteration {it}")
    elif int(a.max()) + op.width_bytes > -(-max(kernel.launch.smem_bytes, 1) // 4) * 4:  # whole 4-B bank words
        raise KernelError(f"{kernel.name}: '{op.name}' addresses shared byte {int(a.max())} beyond the "
                          f"{kernel.launch.smem_bytes} B the launch declares")
    return a


def _counts(kernel: Kernel, op: Mem, cta, it: int, j: int, geo: AccessGeometry) -> np.ndarray:
    """(5, warps) counts: instructions, wavefronts, ideal wavefronts, sectors, lines."""
    a = eval_addresses(kernel, op, cta, it, j, geo.lanes)
    rows = a.reshape(-1, geo.lanes)
    # a lane at PREDICATED_OFF is at the instruction with its guard off: its warp issues the instruction, the lane
    # does no memory work (the front-end's per-CTA form of ``predicated``)
    out = np.zeros((5, rows.shape[0]), dtype=np.int64)
    out[0] = ((rows >= 0) | (rows == PREDICATED_OFF)).any(axis=1)
    if op.predicated:  # a guarded instruction: every executing warp issues it, lanes on or off
        warps = a.shape[1]
        executing = np.ones(warps, dtype=bool) if op.warps is None else np.isin(np.arange(warps), op.warps)
        out[0] |= np.tile(executing, op.repeat)
    if op.kind in ("ldsm", "stsm"):  # one 128-B phase per 8x8 matrix, row addresses from the first lanes
        n_rows = shared.LDMATRIX_ROWS * op.matrices
        fn = shared.ldmatrix_wavefronts if op.kind == "ldsm" else shared.stmatrix_wavefronts
        out[1] = [fn(r[:n_rows], op.matrices, banks=geo.banks, bank_width_bytes=geo.bank_width_bytes)
                  if (r[:n_rows] >= 0).all() else 0 for r in rows]
        out[2] = np.where(out[1] > 0, op.matrices, 0)
    elif op.space == "shared" and op.atomic == "lanes":
        out[1] = shared.atomic_wavefronts_batch(rows, op.width_bytes, **geo.banks_kw)
        out[2] = shared.ideal_wavefronts_batch(rows, op.width_bytes, **geo.banks_kw)
    elif op.space == "shared":
        out[1] = shared.wavefronts_batch(rows, op.width_bytes, **geo.banks_kw)
        out[2] = shared.ideal_wavefronts_batch(rows, op.width_bytes, **geo.banks_kw)
    else:
        out[3] = coalescing.sectors_batch(rows, op.width_bytes, sector_bytes=geo.sector_bytes, lanes=geo.lanes)
        out[4] = coalescing.lines_batch(rows, op.width_bytes, line_bytes=geo.line_bytes, lanes=geo.lanes)
    return out.reshape(5, op.repeat, -1).sum(axis=1)


def loop_trips(kernel: Kernel) -> int:
    return kernel.loop.trips if kernel.loop is not None else 1


def pattern_row(period: int, last: bool, it: int, trips: int) -> int:
    """The row of a pattern's arrays that iteration ``it`` of ``trips`` uses: its parity, or the distinct last
    row of a loop whose last iteration is ragged."""
    return period if last and it == trips - 1 else it % period


def analyze(kernel: Kernel, geo: AccessGeometry, cta: tuple[int, int, int] = (0, 0, 0)) -> dict[str, MemPattern]:
    """Exact per-warp counts of every memory operation of one CTA of ``kernel`` (the first by default) on hardware
    of geometry ``geo``. In the outer loop the counts must repeat with a period (1 or 2 for most kernels; up to
    :data:`MAX_PERIOD`, as a stride that walks across sectors, or every iteration of a short loop), except that the
    last iteration may differ (a ragged last tile: a K or KV remainder), which gets a row of its own."""
    out: dict[str, MemPattern] = {}
    trips = loop_trips(kernel)
    # the steady iterations sampled for the period, and the last one apart from them
    samples = list(range(min(trips - 1 if trips > 1 else trips, 4)))

    def visit(ops, in_loop: bool, inner: int):
        for op in ops:
            if isinstance(op, Loop):
                visit(op.body, in_loop, op.trips)
            elif isinstance(op, Mem):
                if op.name in out:
                    raise KernelError(f"{kernel.name}: two memory operations are named '{op.name}'")
                varying = in_loop and op.name in kernel.varying
                its = (list(range(min(trips, VARYING_SAMPLES))) if varying else samples) if in_loop else [0]
                per_it = [np.stack([_counts(kernel, op, cta, it, j, geo) for j in range(inner)]) for it in its]
                if varying:  # a sample of its iterations, cycled through (no period to find, no last row)
                    c = np.stack(per_it)
                    out[op.name] = MemPattern(op, len(per_it), *(c[:, :, k, :] for k in range(5)))
                    continue
                period = _period(kernel, op, per_it, strict=False)
                if period is None:  # a longer period (a stride that walks across sectors: 7 floats, period 8)
                    more = range(min(trips, 2 * MAX_PERIOD))  # every iteration of a short loop: its own rows
                    per_it = [np.stack([_counts(kernel, op, cta, it, j, geo) for j in range(inner)]) for it in more]
                    period = _period(kernel, op, per_it, whole=len(per_it) == trips)
                rows = per_it[:period]
                last = False
                if in_loop and trips > 1:
                    final = np.stack([_counts(kernel, op, cta, trips - 1, j, geo) for j in range(inner)])
                    if not np.array_equal(final, rows[(trips - 1) % period]):
                        rows, last = [*rows, final], True
                c = np.stack(rows)  # (period [+ last], inner, 5, warps)
                out[op.name] = MemPattern(op, period, *(c[:, :, k, :] for k in range(5)), last=last)

    visit(kernel.prologue, False, 1)
    if kernel.loop is not None:
        visit(kernel.loop.body, True, 1)
    visit(kernel.epilogue, False, 1)
    return out


@dataclass(frozen=True)
class CtaClass:
    """CTAs that share one access pattern: the interior, or the last (or first) CTA of some grid dimensions (a partial
    tile or block behind a bounds guard, a border guard at index 0)."""

    edges: tuple[int, int, int]  # per grid dimension: INTERIOR, LAST or FIRST
    count: int  # real CTAs of the class
    pats: dict[str, MemPattern]
    cta: tuple[int, int, int] = (0, 0, 0)  # the CTA whose patterns were analysed
    # interior CTAs whose patterns alternate (each CTA's tile 64 B along a row of 128-B lines, at an offset: every other
    # CTA's rows cross a line): the CTA coordinates' parities (PHASE_PERIOD) the class holds; None: every phase
    phase: tuple[int, int, int] | None = None
    phase_dims: tuple[bool, bool, bool] = (False, False, False)  # the grid dimensions along which they alternate


INTERIOR, LAST, FIRST = 0, 1, 2
PHASE_PERIOD = 2  # interior CTAs may alternate with this period along each grid dimension (and no other)


def _phase(cta, dims) -> tuple[int, int, int]:
    """A CTA's phase: its coordinates' parities (PHASE_PERIOD) along the dimensions ``dims`` whose CTAs alternate."""
    return tuple(c % PHASE_PERIOD if alt else 0 for c, alt in zip(cta, dims, strict=True))


def _phased(kernel: Kernel, geo: AccessGeometry, ref, base, probes) -> tuple | None:
    """Interior CTAs whose counts alternate with the parity of their coordinates along some dimensions: (those
    dimensions, {phase: representative CTA}), each phase's counts checked on two CTAs of it and every probe on its
    phase's; None when that does not explain them."""
    grid = kernel.launch.grid
    step = lambda c, d, k: tuple(x + k if i == d else x for i, x in enumerate(c))  # noqa: E731
    # a dimension long enough that a CTA of each phase and the one a period after it are interior (ref <= 1)
    dims = tuple(g >= 2 * PHASE_PERIOD + 2 and _differs(base, _first_counts(kernel, geo, step(ref, d, 1)))
                 is not None for d, g in enumerate(grid))
    if not any(dims):
        return None
    reps, counts = {}, {}
    for bits in range(1 << 3):
        if any(bits >> d & 1 and not dims[d] for d in range(3)):
            continue
        rep = ref
        for d in range(3):
            rep = step(rep, d, bits >> d & 1)
        ph = _phase(rep, dims)
        reps[ph] = rep
        counts[ph] = _first_counts(kernel, geo, rep)
        twin = rep
        for d in range(3):
            twin = step(twin, d, PHASE_PERIOD if dims[d] else 0)
        if _differs(counts[ph], _first_counts(kernel, geo, twin)) is not None:
            return None
    if any(_differs(counts[_phase(p, dims)], _first_counts(kernel, geo, p)) is not None for p in probes):
        return None
    return dims, reps


def _first_counts(kernel: Kernel, geo: AccessGeometry, cta: tuple[int, int, int]) -> dict[str, np.ndarray]:
    """Every memory operation's counts in the first iteration of the loops of one CTA (a cheap fingerprint; the
    operations whose addresses come from data differ between any two CTAs and are left out)."""
    return {op.name: _counts(kernel, op, cta, 0, 0, geo) for op in kernel.all_ops()
            if isinstance(op, Mem) and op.name not in kernel.varying}


def _differs(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> str | None:
    return next((n for n in a if not np.array_equal(a[n], b[n])), None)


def cta_classes(kernel: Kernel, geo: AccessGeometry) -> list[CtaClass]:
    """The CTAs of the grid grouped by access pattern, the interior first. Only the last CTA of a grid dimension
    may differ from the interior (a partial last tile or block, a bounds guard), and the first where a border guard
    makes it differ (then the interior is analysed at CTA 1 of each dimension of more than two CTAs). CTAs are told
    apart by their first iteration's counts: interior CTAs at the middle and the far end of the grid must match, and
    each edge (the last or first CTA of some dimensions) whose counts differ gets its own class, analysed whole."""
    grid = kernel.launch.grid
    first = _first_counts(kernel, geo, (0, 0, 0))
    inner_cta = tuple(1 if g > 2 else 0 for g in grid)
    firsts = inner_cta != (0, 0, 0) and _differs(first, _first_counts(kernel, geo, inner_cta)) is not None
    ref = inner_cta if firsts else (0, 0, 0)
    base = _first_counts(kernel, geo, ref) if firsts else first
    probes = [p for p in sorted({tuple(max(g // 2 - 1, 0) for g in grid), tuple(max(g - 2, 0) for g in grid)} - {ref})
              if not (firsts and any(c == 0 < g - 1 for c, g in zip(p, grid, strict=True)))]  # a first CTA: its own
    phases = None
    for probe in probes:
        name = _differs(base, _first_counts(kernel, geo, probe))
        if name and phases is None:
            phases = _phased(kernel, geo, ref, base, probes)
            if phases is None:
                why = ("; the kernel branches on a global atomic's result (a work queue, a ticket): which blocks do "
                       "the work depends on the order they reach it, which gpusim does not model"
                       if "a global atomic returned" in (kernel.notes or "") else "")
                raise KernelError(f"{kernel.name}: the access pattern of '{name}' differs between blocks {ref} and "
                                  f"{probe}; gpusim lets only the first and last block of a grid dimension differ (a "
                                  f"partial tile, a border guard), and interior blocks alternate every other one{why}")
    interior = analyze(kernel, geo, ref)
    dims = [d for d in range(3) if grid[d] > 1]
    classes: list[CtaClass] = []
    rest = kernel.launch.num_ctas
    if not firsts:
        combos = [tuple(LAST if any(dims[i] == d and mask >> i & 1 for i in range(len(dims))) else INTERIOR
                        for d in range(3)) for mask in range(1, 1 << len(dims))]
    else:
        choices = [(INTERIOR, LAST, FIRST) if grid[d] > 2 else (INTERIOR, LAST) if grid[d] > 1 else (INTERIOR,)
                   for d in range(3)]
        combos = [(x, y, z) for z in choices[2] for y in choices[1] for x in choices[0] if (x, y, z) != (0, 0, 0)]
    for edges in combos:
        cta = tuple(grid[d] - 1 if edges[d] == LAST else 0 if edges[d] == FIRST else ref[d] for d in range(3))
        if _differs(base, _first_counts(kernel, geo, cta)) is None:
            continue
        inner = [grid[d] - (1 if grid[d] > 1 else 0) - (1 if firsts and grid[d] > 2 else 0) for d in range(3)]
        count = math.prod(1 if edges[d] != INTERIOR else inner[d] for d in range(3))
        classes.append(CtaClass(edges, count, analyze(kernel, geo, cta), cta))
        rest -= count
    if phases is None:
        return [CtaClass((INTERIOR, INTERIOR, INTERIOR), rest, interior, ref), *classes]
    # alternating interior CTAs: a class per phase but the reference's, which keeps the edge CTAs of no class
    dims, reps = phases
    lo = [1 if firsts and g > 2 else 0 for g in grid]
    hi = [g - 2 if g > 1 else 0 for g in grid]
    others = []
    for ph, rep in sorted(reps.items()):
        if ph == _phase(ref, dims):
            continue
        count = math.prod(len(range(lo[d] + (ph[d] - lo[d]) % PHASE_PERIOD, hi[d] + 1, PHASE_PERIOD))
                          if dims[d] else hi[d] - lo[d] + 1 for d in range(3))
        others.append(CtaClass((INTERIOR, INTERIOR, INTERIOR), count, analyze(kernel, geo, rep), rep, ph, dims))
        rest -= count
    return [CtaClass((INTERIOR, INTERIOR, INTERIOR), rest, interior, ref, _phase(ref, dims), dims), *others,
            *classes]


def class_of(kernel: Kernel, classes: list[CtaClass], linear: int) -> int:
    """Index in ``classes`` of the CTA with linear index ``linear`` (0, the interior, when its edges match none)."""
    if len(classes) == 1:
        return 0
    firsts = any(FIRST in c.edges for c in classes)
    coords = cta_coords(kernel, linear)
    edges = tuple(LAST if c == g - 1 and g > 1 else FIRST if firsts and c == 0 and g > 2 else INTERIOR
                  for c, g in zip(coords, kernel.launch.grid, strict=True))
    if classes[0].phase is not None and edges == (INTERIOR, INTERIOR, INTERIOR):
        ph = _phase(coords, classes[0].phase_dims)
        return next((i for i, c in enumerate(classes) if c.phase == ph), 0)
    return next((i for i, c in enumerate(classes) if c.edges == edges and c.phase is None), 0)


def _period(kernel: Kernel, op: Mem, per_it: list[np.ndarray], strict: bool = True, whole: bool = False) -> int | None:
    """The smallest period the sampled iterations' counts repeat with (each period seen twice; ``whole``: the sample
    is every iteration of the loop, which is its own period at worst); None, or (``strict``) an error, when they have
    none."""
    for p in range(1, len(per_it) // 2 + 1):
        if all(np.array_equal(per_it[i], per_it[i % p]) for i in range(len(per_it))):
            return p
    if len(per_it) == 1 or whole:
        return len(per_it)
    if not strict:
        return None
    raise KernelError(f"{kernel.name}: the access pattern of '{op.name}' changes from one loop iteration to "
                      f"the next without a period of at most {len(per_it) // 2} (only the last iteration may differ)")


def warp_sector_ids(kernel: Kernel, op: Mem, cta, it: int, j: int, geo: AccessGeometry) -> list[np.ndarray]:
    """Distinct sector ids each warp touches in one execution (for the cache models)."""
    sector_bytes = geo.sector_bytes
    a = eval_addresses(kernel, op, cta, it, j, geo.lanes)  # (R, W, lanes)
    a = np.where(a >= 0, a + kernel.tensor_base(op.tensor), -1)
    warps = a.shape[1]
    first = a // sector_bytes
    last = (a + op.width_bytes - 1) // sector_bytes
    ids = []
    for w in range(warps):
        f = first[:, w, :].ravel()
        lst = last[:, w, :].ravel()
        m = a[:, w, :].ravel() >= 0
        ids.append(np.unique(np.concatenate([f[m], lst[m]])))
    return ids


def cta_sector_ids(kernel: Kernel, op: Mem, cta, its, inner: int, geo: AccessGeometry) -> np.ndarray:
    """Distinct sector ids a whole CTA touches over iterations ``its`` (all inner iterations)."""
    sector_bytes = geo.sector_bytes
    chunks = []
    base = kernel.tensor_base(op.tensor)
    for it in its:
        for j in range(inner):
            a = eval_addresses(kernel, op, cta, it, j, geo.lanes).ravel()
            a = a[a >= 0] + base
            chunks.append(a // sector_bytes)
            chunks.append((a + op.width_bytes - 1) // sector_bytes)
    return np.unique(np.concatenate(chunks))
