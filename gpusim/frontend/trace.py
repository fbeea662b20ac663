"""From emulated steps to the engine's kernel description (:class:`gpusim.ir.Kernel`).

:class:`Recorder` keeps, for each step the emulator executed, the instruction, the warps at it and, for a memory
instruction, every lane's byte offset (``-1``: the lane is not at the instruction; ``-2``: it is, but its guard
predicate is off, so its warp still issues the instruction). :func:`lower` then cuts the steps into a prologue, one
loop body and an epilogue, and turns them into IR operations: each memory instruction (or run of alike ones) a
:class:`gpusim.ir.Mem` whose address function returns the emulated offsets, each run of compute instructions on one
pipe a :class:`gpusim.ir.Compute` bundle with the SASS's control-code stalls, and each op waiting (``after=``) for the
operations that wrote the registers it reads.

The CTAs the emulator ran (a *batch*) are the first, second, third and last of every grid dimension and two
interior CTAs to check with. A CTA outside the batch gets the addresses of its nearest batch CTA of the same kind
(first, interior or last in each dimension) moved by the per-CTA strides the batch shows; :func:`lower` checks those
strides on the two check CTAs. In the loop, addresses are those of iteration 1 moved by the stride between
iterations 1 and 2, checked on iteration 0 and on the last two iterations, which the emulator ran for real.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from gpusim.frontend.isa import Decoded
from gpusim.frontend.regs import reads_of, writes_of  # noqa: F401  (the lowering's register def-use)
from gpusim.frontend.machine import WARP, LoopJump, Step
from gpusim.frontend.memory import EmulationError
from gpusim.patterns import PREDICATED_OFF

INACTIVE = -1


@dataclass
class Rec:
    """One recorded step."""

    index: int  # instruction index
    warps: np.ndarray  # (batch warps,) bool: warps with a lane at the instruction
    witer: np.ndarray | None  # (batch warps,) iteration of the tracked loop each warp is in (-1: none)
    addr: np.ndarray | None = None  # (lanes,) offsets, INACTIVE / PREDICATED_OFF
    saddr: np.ndarray | None = None  # LDGSTS: shared destination offsets
    space: str = ""
    kind: str = ""
    width: int = 0
    tensor: int = -1
    matrices: int = 0
    taint: int = 0
    distinct: np.ndarray | None = None  # MATCH: (batch warps,) distinct values per warp (0: not there)
    issues: np.ndarray | None = None  # BSYNC: (batch warps,) times each warp issued it (0: not there)
    extra: object = None  # a Hopper instruction's record (gpusim.frontend.hopper.Record)
    mnemonic: str = ""
    # a stand-in for a step a loop's first iterations leave out (:func:`_pad_head`): no warp executed it
    padded: bool = False
    bar: np.ndarray | None = None  # BAR: (batch warps,) the barrier id each warp named (-1: not there)


class Recorder:
    """Collects the steps of one emulation (see the module docstring)."""

    def __init__(self) -> None:
        self.recs: list[Rec] = []
        self.loops: list[dict] = []  # loops whose iterations were counted: head, back, start, end (recs), jumped

    def step(self, s: Step) -> None:
        nw = len(s.group) // WARP
        warps = s.group.reshape(nw, WARP).any(axis=1)
        witer = None
        if s.iters is not None:
            witer = np.where(s.group, s.iters, -1).reshape(nw, WARP).max(axis=1).astype(np.int32)
        r = Rec(s.inst.index, warps, witer, mnemonic=s.inst.mnemonic)
        if s.distinct is not None:
            r.distinct = np.where(warps, s.distinct, 0).astype(np.int32)
        if s.issues is not None:
            r.issues = np.where(warps, s.issues, 0).astype(np.int32)
        if s.bar is not None:
            r.bar = np.where(warps, s.bar, -1).astype(np.int32)
        m = s.mem
        if m is not None:
            r.addr = np.where(s.exec, m.addr, np.where(s.group, PREDICATED_OFF, INACTIVE))
            if m.shared_addr is not None:
                r.saddr = np.where(s.exec, m.shared_addr, np.where(s.group, PREDICATED_OFF, INACTIVE))
            r.space, r.kind, r.width, r.tensor, r.matrices, r.taint = (m.space, m.kind, m.width, m.tensor,
                                                                      m.matrices, m.taint)
            r.extra = m.extra
        self.recs.append(r)

    def loop_start(self, head: int, back: int, lanes: np.ndarray) -> None:
        """The loop [head, back] is tracked from now: the steps since its lanes last entered it are iteration 0."""
        nw = len(lanes) // WARP
        warps = lanes.reshape(nw, WARP).any(axis=1)
        start = None
        for i in range(len(self.recs) - 1, -1, -1):
            r = self.recs[i]
            if r.index == head and (r.warps & warps).any():
                start = i
                break
        if start is None:
            start = len(self.recs)
        for r in self.recs[start:]:
            r.witer = np.where(r.warps & warps, 0, -1).astype(np.int32)
        self.loops.append({"head": head, "back": back, "start": start, "end": None, "jumped": False})

    def loop_end(self, jumped: bool) -> None:
        if self.loops and self.loops[-1]["end"] is None:
            self.loops[-1]["end"] = len(self.recs)
            self.loops[-1]["jumped"] = jumped


# --- helpers the lowerings share (gpusim.frontend.lower, hopper_lower) ------------------------------------------
def key_rec(pos) -> Rec:
    """The record that speaks for a program position: its second iteration slot's, else its first's, else any (of
    the iterations that executed it, where the first left it out: :func:`_pad_head`)."""
    r = pos.recs.get(1, pos.recs.get(0, next(iter(pos.recs.values()))))
    if r.padded:
        r = next((x for x in pos.recs.values() if not x.padded), r)
    return r


def cta_warps(ctx, rec: Rec, i: int) -> np.ndarray:
    """Which warps of batch CTA ``i`` executed the recorded step."""
    return rec.warps[i * ctx.warps:(i + 1) * ctx.warps]


def warps_tuple(ctx, w: np.ndarray) -> tuple[int, ...] | None:
    """The IR's warp set of a mask: None for all of the CTA's warps."""
    if w.all():
        return None
    return tuple(int(i) for i in np.nonzero(w)[0])


# --- what each instruction is for the engine ----------------------------------------------------------------------
PIPE_OF = {"FFMA": "fp32", "FADD": "fp32", "FMUL": "fp32", "FMNMX": "fp32", "FSEL": "fp32", "FSETP": "fp32",
           "HFMA2": "fp32", "HADD2": "fp32", "HMUL2": "fp32", "HMNMX2": "fp32", "FCHK": "fp32", "FRND": "fp32",
           "F2FP": "fp32", "MUFU": "sfu", "SHFL": "shfl", "MATCH": "shfl", "HMMA": "tensor", "IMMA": "tensor",
           "DMMA": "tensor"}
SYNC_MNEMONICS = {"BAR", "LDGDEPBAR", "DEPBAR", "MEMBAR", "UTMACMDFLUSH"}


def pipe_of(d: Decoded) -> str:
    return PIPE_OF.get(d.mnemonic, "int32")


# --- lowering -----------------------------------------------------------------------------------------------------
@dataclass
class Batch:
    """What the emulator ran: its CTAs and their recorded steps."""

    ctas: list[tuple[int, int, int]]
    grid: tuple[int, int, int]
    warps_per_cta: int
    recs: list[Rec]
    jump: LoopJump | None
    lane_trips: np.ndarray | None  # (lanes,) trips of the tracked loop


def cta_refs(grid: tuple[int, int, int]) -> list[tuple[int, int, int]]:
    """The CTAs the emulator runs for a grid (see the module docstring): per dimension the first, second, third and
    last, and two interior CTAs (the middle and the one before the last) to check the strides on."""
    per = [sorted({0, min(1, g - 1), min(2, g - 1), g - 1}) for g in grid]
    out = [(x, y, z) for z in per[2] for y in per[1] for x in per[0]]
    for probe in (tuple(g // 2 for g in grid), tuple(max(g - 2, 0) for g in grid)):
        if probe not in out:
            out.append(probe)
    return out


class Grid(tuple):
    """A launch's grid (x, y, z) that knows its cluster (``__cluster_dims__``): a CTA's addresses may depend on its
    rank in the cluster (the half of a tile it multicasts), so CTAs of one rank are each other's references and the
    strides are taken a cluster apart (``period``: the cluster's CTAs per dimension)."""

    period: tuple[int, int, int]

    def __new__(cls, dims, period=(1, 1, 1)):
        g = super().__new__(cls, tuple(dims))
        g.period = tuple(period)
        return g


def period_of(grid) -> tuple[int, int, int]:
    """The CTAs a stride spans in each grid dimension: the cluster's (1 without clusters)."""
    return getattr(grid, "period", (1, 1, 1))


def strided(grid, d: int) -> bool:
    """Whether grid dimension ``d`` has two interior batch CTAs a stride apart (:func:`stride_pair`)."""
    return grid[d] >= 3 + period_of(grid)[d]


def stride_pair(grid, d: int, base=None) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """The two interior batch CTAs one stride apart in grid dimension ``d`` (coordinates 1 and 1 + the cluster's
    CTAs there; in the others ``base``'s, by default interior where they have an interior), whose difference is the
    stride of that dimension: CTAs on a border of another dimension may take other paths (a guard at index 0)."""
    base = tuple(1 if g > 2 else 0 for g in grid) if base is None else base
    two = 1 + period_of(grid)[d]
    return (tuple(1 if e == d else base[e] for e in range(3)), tuple(two if e == d else base[e] for e in range(3)))


def ref_of(c: tuple[int, int, int], grid) -> tuple[int, int, int]:
    """The batch CTA whose addresses a CTA's are moved from: the same coordinate where it is first or last in a
    dimension; where it is interior, 1 (in a cluster: the first interior coordinate of the same rank)."""
    return tuple(v if v == 0 or v == g - 1 else (v % p or p) for v, g, p in zip(c, grid, period_of(grid), strict=True))


def stride_steps(c, ref, grid, d: int) -> int:
    """The strides of dimension ``d`` between CTA ``c`` and its reference ``ref`` (a whole number of clusters)."""
    return (c[d] - ref[d]) // period_of(grid)[d]


class LoweringError(EmulationError):
    """The emulated steps do not fit the engine's one-loop program (one line); ``retry_without_jump`` when a
    loop's addresses were not the affine (or periodic) function of its iteration the jump assumed."""

    def __init__(self, msg: str, retry_without_jump: bool = False) -> None:
        super().__init__(msg)
        self.retry_without_jump = retry_without_jump


def _blocks(recs: list[Rec], back: int) -> list[list[Rec]]:
    out, cur = [], []
    for r in recs:
        cur.append(r)
        if r.index == back:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def _warp_trips(recs: list[Rec], back: int) -> set[int]:
    """The different numbers of times the warps that reach the loop's back-edge branch execute it."""
    counts = sum(r.warps.astype(np.int64) for r in recs if r.index == back)
    return set(np.unique(counts[counts > 0]).tolist()) if not np.isscalar(counts) else set()


def _seq(block: list[Rec]) -> tuple[int, ...]:
    return tuple(r.index for r in block)


@dataclass
class Segments:
    """The recorded steps cut into the engine's program: prologue, one loop (its iterations' steps by slot) and
    epilogue."""

    prologue: list[Rec]
    template: tuple[int, ...]  # instruction indices of one loop iteration (empty: no loop)
    slots: dict  # iteration slot -> list[Rec] (slot: the iteration number, or "pen"/"last" per lane after a jump)
    epilogue: list[Rec]
    peel_first: bool = False  # iteration 0 runs another path: moved to the prologue
    peel_last: bool = False  # the last iteration runs another path: moved to the epilogue
    period: int = 1
    full: bool = False  # every iteration was emulated (the slots are 0..trips-1), no jump
    # the last iterations of each warp (``tail`` at most) add compute to the common path (causal attention's diagonal
    # blocks, :func:`split_tail`): it follows the loop, and the loop runs each lane's trips (``lane_trips``, per lane)
    tail: int = 0
    lane_trips: np.ndarray | None = None
    # every iteration was emulated and the CTAs run different trips (``lane_trips``): the addresses are modelled per
    # lane over the recorded iterations (:meth:`AddressBook._tail_models`)
    uneven: bool = False

    def cta_trips(self, n_ctas: int, warps_per_cta: int) -> list[int] | None:
        """The loop's iterations each of the ``n_ctas`` batch CTAs runs, where the batch records them: the most of
        its lanes' (``lane_trips``), or, emulated in full, the recorded iterations any of its warps ran; None
        otherwise (no loop, or a loop jumped over: every CTA runs the kernel's trips)."""
        if self.lane_trips is not None:
            return [int(t) for t in self.lane_trips.reshape(n_ctas, -1).max(axis=1)]
        if self.full and self.template:
            w = warps_per_cta
            return [sum(any(r.warps[i * w:(i + 1) * w].any() for r in rs) for rs in self.slots.values())
                    for i in range(n_ctas)]
        return None


def _iterations(recs: list[Rec], lp: dict) -> tuple[list[int], np.ndarray, np.ndarray]:
    """The rows of the tracked loop's range and, per row and batch warp, the warp's iteration there (-1: the warp is
    not at that row, or not in the loop). A warp whose loop runs once never takes the back edge, so the emulator
    never counts it in: its steps at the loop's instructions within the range are its iteration 0."""
    lo, hi = lp["start"], lp["end"] if lp["end"] is not None else len(recs)
    rows = list(range(lo, hi))
    warps = np.stack([recs[i].warps for i in rows])
    it = np.stack([recs[i].witer if recs[i].witer is not None else np.full(len(recs[i].warps), -1, np.int32)
                   for i in rows])
    body = np.array([lp["head"] <= recs[i].index <= lp["back"] for i in rows])
    counted = (it >= 0).any(axis=0)
    once = warps & body[:, None] & ~counted[None, :]
    it = np.where(warps & (it >= 0), it, np.where(once, 0, -1))
    return rows, warps, it


def _merge(parts: list[tuple[Rec, np.ndarray]], nw: int) -> Rec:
    """One step made of the same instruction's steps of several warps (``parts``: step, warps taken from it)."""
    first = parts[0][0]
    warps = np.zeros(nw, dtype=bool)
    out = Rec(first.index, warps, np.full(nw, -1, np.int32), space=first.space, kind=first.kind, width=first.width,
              tensor=max(r.tensor for r, _ in parts), matrices=first.matrices, taint=0, extra=first.extra,
              mnemonic=first.mnemonic)
    for name in ("addr", "saddr"):
        if getattr(first, name) is not None:
            setattr(out, name, np.full(len(getattr(first, name)), INACTIVE, dtype=getattr(first, name).dtype))
    for name in ("distinct", "issues"):
        if getattr(first, name) is not None:
            setattr(out, name, np.zeros(nw, np.int32))
    for r, w in parts:
        warps |= w
        out.taint |= r.taint
        lanes = np.repeat(w, WARP)
        for name in ("addr", "saddr"):
            a = getattr(r, name)
            if a is not None:
                getattr(out, name)[lanes] = a[lanes]
        for name in ("distinct", "issues"):
            a = getattr(r, name)
            if a is not None:
                getattr(out, name)[w] = a[w]
    return out


def split_tail(recs: list[Rec], lp: dict) -> tuple[list[Rec], dict, int, np.ndarray] | None:
    """A loop emulated in full whose warps run different trip counts and whose last iterations take another path than
    the others (causal attention: the blocks that cross the diagonal are masked, the last skips the next block's
    prefetch; how many are masked may differ by warp: FA3's two consumer warpgroups of 64 query rows against key
    blocks of 64). Where each tail path is the common path with compute inserted (and instructions left out), the
    steps are rewritten (:func:`_extra_after_loop`): the loop holds every iteration of every warp on the common path,
    and the inserted compute of each tail iteration follows the loop, for the warps whose tail reaches back to it.
    Returns (steps, loop, the longest tail, per-lane trips), or None where the iterations do not split so."""
    rows, warps, it = _iterations(recs, lp)
    if (warps & (it < 0)).any():  # code outside the loop among its iterations
        return None
    nw = warps.shape[1]
    index = np.array([recs[i].index for i in rows])
    trips = it.max(axis=0) + 1  # per warp (0: not in the loop)
    inloop = trips > 0
    if len(set(trips[inloop].tolist())) < 2:
        return None
    paths: dict[int, list[tuple[int, ...]]] = {}
    where: dict[int, list[np.ndarray]] = {}
    for w in np.nonzero(inloop)[0]:
        col = it[:, w]
        order = np.nonzero(col >= 0)[0]
        ks = col[order]
        cut = np.searchsorted(ks, np.arange(trips[w] + 1))
        where[w] = [order[cut[k]:cut[k + 1]] for k in range(trips[w])]
        paths[w] = [tuple(index[r].tolist()) for r in where[w]]
    counts: dict[tuple[int, ...], int] = {}
    for ps in paths.values():
        for p in ps:
            counts[p] = counts.get(p, 0) + 1
    main = max(counts, key=lambda p: (counts[p], len(p)))
    tails: dict[int, int] = {}  # warp -> its tail iterations (the warps of one CTA may cross the diagonal in
    # different numbers of blocks: FA3's two consumer warpgroups own 64 query rows each, a key block is 64 wide)
    for w, ps in paths.items():
        n = len(ps)
        while n > 0 and ps[n - 1] != main:
            n -= 1
        if any(p != main for p in ps[:n]):
            return None
        tails[w] = len(ps) - n
    if not any(tails.values()):
        return None
    tail_paths = tuple({p for w, ps in paths.items() for p in ps[len(ps) - tails[w]:]})
    extra = _extra_compute(recs, rows, main, tail_paths)
    if extra is None:  # the tail iterations access memory or synchronise on their own: not summarised
        return None
    return _extra_after_loop(recs, rows, it, where, trips, tails, extra, lp, nw, main)


def _extra_compute(recs: list[Rec], rows: list[int], main: tuple, tail_paths: tuple) -> set[int] | None:
    """The instructions the tail iterations run besides the common path, where each tail path is the common path with
    compute instructions inserted (causal attention's mask: compares and selects, no memory access or barrier); None
    otherwise."""
    common = set(main)
    if any(not _subsequence(tuple(i for i in path if i in common), main) for path in tail_paths):
        return None
    extra = {i for path in tail_paths for i in path if i not in common}
    for i in rows:
        r = recs[i]
        if r.index in extra and (r.addr is not None or r.extra is not None or r.mnemonic in SYNC_MNEMONICS):
            return None
    return extra


def _subsequence(a: tuple, b: tuple) -> bool:
    """Whether ``a`` is ``b`` with some of its items left out (a tail iteration that skips a prefetch)."""
    pos = 0
    for x in a:
        while pos < len(b) and b[pos] != x:
            pos += 1
        if pos == len(b):
            return False
        pos += 1
    return True


def _fill_blocks(steps: list[Rec], back: int, main: tuple, nw: int) -> list[Rec]:
    """The loop's steps, each iteration (cut at the back edge) given every instruction of the common path: where no
    warp of the batch ran one in an iteration (every warp there in a last iteration that skips a prefetch), a step
    with no warp at it stands in."""
    proto: dict[int, Rec] = {}
    for r in steps:
        proto.setdefault(r.index, r)
    out, block = [], []
    for r in steps + [None]:
        if r is not None:
            block.append(r)
        if r is not None and r.index != back:
            continue
        if not block:
            break
        seq = tuple(x.index for x in block)
        if seq != main and _subsequence(seq, main) and all(i in proto for i in main):
            it = next((x.witer for x in block if x.witer is not None), np.zeros(nw, np.int32))
            filled, pos = [], 0
            for idx in main:
                if pos < len(block) and block[pos].index == idx:
                    filled.append(block[pos])
                    pos += 1
                else:
                    empty = _merge([(proto[idx], np.zeros(nw, dtype=bool))], nw)
                    empty.witer = np.full(nw, int(it.max()), np.int32)
                    filled.append(empty)
            block = filled
        out += block
        block = []
    return out


def _extra_after_loop(recs, rows, it, where, trips, tails, extra, lp, nw, main):
    """:func:`split_tail`'s rewrite: the loop keeps every iteration of every warp (its loads at the addresses the
    iterations advance by: a prefetch the last iteration skips is counted there too, a few instructions a CTA), and
    the compute the last ``tail`` iterations add follows the loop, each iteration's as the steps every warp took in
    its own (its issue is the same; it overlaps the loop's last loads less than on the hardware)."""
    out = recs[:rows[0]]
    for j, i in enumerate(rows):
        r = recs[i]
        if r.index in extra:
            continue
        if r.witer is None or ((it[j] >= 0) != (r.witer >= 0)).any():  # a warp whose loop runs once: iteration 0
            r = dataclasses.replace(r, witer=it[j].astype(np.int32))
        out.append(r)
    out = out[:rows[0]] + _fill_blocks(out[rows[0]:], lp["back"], main, nw)
    lp = dict(lp, start=rows[0], end=len(out))
    tail = max(tails.values())
    for t in range(tail):  # the t-th of the last ``tail`` iterations, of the warps whose tail reaches back to it
        per_warp = {w: [row for row in rs[trips[w] - tail + t] if recs[rows[row]].index in extra]
                    for w, rs in where.items() if tails[w] >= tail - t}
        n = {len(v) for v in per_warp.values()}
        if len(n) != 1:
            return None
        for pos in range(n.pop()):
            parts = []
            for w, rs in per_warp.items():
                one = np.zeros(nw, dtype=bool)
                one[w] = True
                parts.append((recs[rows[rs[pos]]], one))
            out.append(_merge(parts, nw))
    out += recs[rows[-1] + 1:]
    return out, lp, tail, np.repeat(np.where(trips > 0, trips, 0), WARP)


def choose_loop(loops: list[dict], recs: list[Rec]) -> dict | None:
    """The loop the IR summarises: the one the emulator jumped, else the one with the most steps (at least three
    iterations); the others are written out in full."""
    jumped = [lp for lp in loops if lp["jumped"]]
    if jumped:
        return jumped[0]
    best = None
    for lp in loops:
        end = lp["end"] if lp["end"] is not None else len(recs)
        iters = sum(1 for r in recs[lp["start"]:end] if r.index == lp["back"])
        if iters >= 3 and (best is None or end - lp["start"] > best[0]):
            best = (end - lp["start"], lp)
    return best[1] if best else None


def segment(recs: list[Rec], loops: list[dict], jump: LoopJump | None, split: bool = True,
            trips: int | None = None, uneven: bool = False) -> Segments:
    """The recorded steps cut into prologue, one loop and epilogue. ``trips``: a loop emulated in full keeps at most
    that many iterations, the ones after it written out after the loop (a warp-specialized producer that loads one
    block more than its consumers' loop runs: the consumers' last turn comes after their loop). ``uneven``: a loop
    emulated in full whose CTAs run different trips runs each CTA's own, its addresses modelled per lane
    (:func:`_uneven`; a warp-specialized role's loop); otherwise it keeps every recorded iteration (a grid-stride
    loop whose addresses depend on data: the histograms' atomics)."""
    lp = choose_loop(loops, recs)
    if lp is None:
        return Segments(recs, (), {}, [])
    rewritten = None if lp["jumped"] or not split else split_tail(recs, lp)
    if rewritten is not None:
        recs, lp, tail, lane_trips = rewritten
        seg = segment(recs, [lp], None, split=False)
        if not seg.template or seg.peel_first or seg.peel_last:
            raise LoweringError(f"the loop at instruction {lp['head']}: its CTAs run different trips, its last {tail} "
                                "iterations add compute, and its other iterations do not repeat one path: not "
                                "supported yet")
        seg.full, seg.tail, seg.lane_trips, seg.uneven = False, tail, lane_trips, True
        return seg
    lo, hi = lp["start"], lp["end"] if lp["end"] is not None else len(recs)
    in_loop = [lo <= i < hi and r.witer is not None and bool((r.witer >= 0).any()) for i, r in enumerate(recs)]
    if True not in in_loop:
        return Segments(recs, (), {}, [])
    first = in_loop.index(True)
    last = len(in_loop) - 1 - in_loop[::-1].index(True)
    if not all(in_loop[first:last + 1]):
        raise LoweringError("the loop's iterations are interleaved with code outside it (CTAs of the batch take "
                            "different paths around the loop, or warps of one CTA run loops of their own: "
                            "warp-specialized roles): not supported yet", retry_without_jump=lp["jumped"])
    blocks = _blocks(recs[first:last + 1], lp["back"])
    if lp["jumped"]:
        warm = jump.arrivals
        pre, post = blocks[:warm], blocks[warm:]
        if len(post) != 2 or len(pre) != warm:
            raise LoweringError(f"the loop at instruction {jump.head} did not run {warm} warm-up iterations and two "
                                "final ones", retry_without_jump=True)
        middle = pre[1:] + post[:1]
        tail = post[1]
    else:  # emulated in full: every iteration recorded
        pre, post = blocks, []
        middle, tail = blocks[1:-1], blocks[-1]
    template = _seq(middle[0]) if middle else _seq(tail)
    if any(_seq(b) != template for b in middle) and not lp["jumped"]:
        padded = _pad_head(blocks)
        if padded is not None:  # the first iterations leave out a wait they need not do (a producer's free slots)
            pre = blocks = padded
            middle, tail = blocks[1:-1], blocks[-1]
            template = _seq(middle[-1])
    if any(_seq(b) != template for b in middle):
        if lp["jumped"]:
            raise LoweringError("the loop's iterations run different instruction paths", retry_without_jump=True)
        trips = _warp_trips(recs[first:last + 1], lp["back"])
        if len(trips) > 1:  # written out, every CTA would run the base CTA's iterations
            raise LoweringError(f"the loop at instruction {lp['head']} runs {min(trips)} to {max(trips)} iterations "
                                "in the emulated warps and its iterations take different instruction paths that are "
                                "not the common one with compute added in the last iterations (causal attention's "
                                "masked diagonal blocks are): it cannot be summarised as one loop, and written out "
                                "every CTA would run the same iterations; not supported yet")
        return Segments(recs, (), {}, [])  # written out in full
    peel_first = _seq(pre[0]) != template
    if uneven and peel_first and not lp["jumped"] and len(_warp_trips(recs[first:last + 1], lp["back"])) > 1:
        # CTAs of unequal trips: a peeled first iteration would be run by every CTA, those that run none too
        padded = _pad_head(blocks)
        if padded is not None:
            pre = blocks = padded
            middle, tail = blocks[1:-1], blocks[-1]
            peel_first = False
    peel_last = _seq(tail) != template
    if lp["jumped"]:
        slots = {k: b for k, b in enumerate(pre) if k > 0 or not peel_first}
        slots["pen"] = post[0]
        if not peel_last:
            slots["last"] = post[1]
    else:
        slots = {k: b for k, b in enumerate(blocks) if (k > 0 or not peel_first) and
                 (k < len(blocks) - 1 or not peel_last)}
    moved: list[Rec] = []
    if trips is not None and not lp["jumped"] and len(slots) > trips:
        for k in sorted(slots)[trips:]:
            moved += slots.pop(k)
    prologue = recs[:first] + (pre[0] if peel_first else [])
    epilogue = moved + (tail if peel_last else []) + recs[last + 1:]
    seg = Segments(prologue, template, slots, epilogue, peel_first, peel_last,
                   jump.period if lp["jumped"] else 1, not lp["jumped"])
    if uneven and not lp["jumped"] and len(_warp_trips(recs[first:last + 1], lp["back"])) > 1:
        _uneven(seg, lp)
    return seg


def _uneven(seg: Segments, lp: dict) -> None:
    """A loop emulated in full whose warps run different trips (a warp-specialized producer of causal attention,
    every iteration on the common path): each lane's trips are the iterations its warp ran, from the first on; its
    addresses are modelled per lane (``uneven``), so that a CTA answers for the iterations another runs further."""
    if seg.peel_first or seg.peel_last:
        raise LoweringError(f"the loop at instruction {lp['head']}: its CTAs run different trips and its first or "
                            "last iteration another path: not supported yet")
    nw = len(next(iter(seg.slots.values()))[0].warps)
    active = np.stack([np.any([r.warps for r in seg.slots[k]], axis=0) for k in sorted(seg.slots)])
    trips = active.sum(axis=0)
    if (active != (np.arange(len(active))[:, None] < trips[None, :])).any():
        raise LoweringError(f"the loop at instruction {lp['head']}: a warp leaves out an iteration between others: "
                            "not supported yet")
    seg.full, seg.uneven, seg.lane_trips = False, True, np.repeat(trips, WARP).reshape(nw * WARP)


def _pad_head(blocks: list[list[Rec]]) -> list[list[Rec]] | None:
    """A loop emulated in full whose first iterations run its common path with an mbarrier wait left out, and with it
    only control and compute, no access, arrival or barrier (a warp-specialized producer: its first ``STAGES``
    iterations fill free slots without waiting on the "empty" barrier; the wait's retry path and clock reads go with
    it, counted as issued there: a few instructions), the other iterations but the last the common path: the blocks
    with the left-out steps padded with stand-ins no warp executed (:attr:`Rec.padded`), so that every iteration
    takes the common path. The wait's phase follows the loop's other iterations
    (:meth:`gpusim.frontend.hopper_lower.Lowering.seq_fn`, which checks that it falls before the first in every
    padded iteration: such a wait returns at once). None otherwise."""
    if len(blocks) < 4:
        return None
    template = _seq(blocks[-2])
    h = len(blocks) - 2
    while h > 0 and _seq(blocks[h - 1]) == template:
        h -= 1
    if h == 0 or h > len(blocks) - 3:  # nothing to pad, or too few iterations on the common path to follow
        return None
    ref = blocks[h]  # a block on the common path: what each left-out step is
    out = []
    waits = 0
    for b in blocks[:h]:
        path = _seq(b)
        if not _subsequence(path, template):
            return None
        aligned, k = [], 0
        for pos, idx in enumerate(template):
            if k < len(b) and b[k].index == idx:
                aligned.append(b[k])
                k += 1
                continue
            r = ref[pos]
            wait = getattr(r.extra, "kind", None) == "wait"
            if not wait and (r.addr is not None or r.extra is not None or r.mnemonic in SYNC_MNEMONICS):
                return None  # a left-out access, arrival or barrier: its iterations differ in what they do
            waits += wait
            aligned.append(Rec(idx, np.zeros_like(r.warps), None, mnemonic=r.mnemonic, padded=True))
        if k != len(b):
            return None
        out.append(aligned)
    if not waits:  # only a skipped wait (with the control and the few instructions around it) is taken as one
        return None
    return out + blocks[h:]


# --- addresses of the CTAs and iterations the engine asks for -----------------------------------------------------
AFFINE = "affine"  # a compacted slot dict's model of its iterations (compact_full)


def compact_full(slots: dict) -> dict:
    """The recorded offsets of one CTA's operation over a loop emulated in full (slot k: iteration k), kept whole
    unless every iteration from the first on is the first's offsets plus a constant step per iteration (lanes that
    execute it the same in all): then the prologue's slot and iterations 1 and 2 are kept with the model
    (``AFFINE``: first, step, iterations), which answers for the others (a warp-specialized producer's TMA boxes:
    64 iterations of 12 warps' arrays held 357 MB at 4096^3)."""
    if AFFINE in slots:
        return slots
    ks = sorted(k for k in slots if isinstance(k, int) and k >= 1)
    if len(ks) < 4 or ks != list(range(1, len(ks) + 1)) or len(ks) != len(slots) - (0 in slots):
        return slots
    a = slots[1]
    on = a >= 0
    step = np.where(on, slots[2] - a, 0)
    for k in ks[2:]:
        s = slots[k]
        if not np.array_equal(s >= 0, on) or not np.array_equal(np.where(on, s, 0), np.where(on, a + (k - 1) * step,
                                                                                                  0)):
            return slots
        if not np.array_equal(np.where(on, 0, s), np.where(on, 0, a)):  # the lanes off, off alike
            return slots
    kept = {k: v for k, v in slots.items() if not isinstance(k, int) or k <= 2}
    kept[AFFINE] = (a, step, ks[-1])
    return kept


def compact_uneven(slots: dict, trips: int) -> dict:
    """A CTA's recorded offsets of an operation in a loop of uneven trips (:attr:`Segments.uneven`): the iterations
    past the CTA's ``trips`` (no lane there; the first kept, all off in a CTA that runs none) left out and the rest
    compacted as :func:`compact_full` does (causal
    FA3's producer: 32 iterations of 66 CTAs' boxes held 830 MB)."""
    return compact_full({k: v for k, v in slots.items() if not isinstance(k, int) or k < max(trips, 1)})


class AddressBook:
    """The recorded offsets of one IR memory operation (``repeat`` SASS instructions) and how every CTA and loop
    iteration's offsets follow from them (see the module docstring)."""

    def __init__(self, name: str, per_cta: list[dict], grid, ctas, in_loop: bool, lane_trips: list | None,
                 peel_first: bool, period: int, full: bool = False, trip_strides: dict | None = None,
                 uneven: bool = False) -> None:
        self.name = name
        self.grid = grid
        self.index = {c: i for i, c in enumerate(ctas)}
        self.per_cta = per_cta  # batch CTA -> {slot: (R, W, 32)} (slot 0 alone outside the loop)
        self.in_loop = in_loop
        self.full = full  # every iteration recorded: the slots are the iterations
        self.lane_trips = lane_trips  # batch CTA -> (W, 32) trips of each lane
        self.trip_strides = trip_strides or {}  # grid dimension -> (W, 32) trips added per CTA of that dimension
        self.peel = 1 if peel_first else 0
        self.p = period
        self.strides: dict[int, np.ndarray] = {}
        self._strides: dict = {}  # (the other coordinates, dimension) -> stride, or None
        self.affine = True  # CTAs outside the batch follow the strides (False: they take their reference's offsets)
        self.outside = 0  # lookups of CTAs outside the batch while not affine
        self.uneven = uneven  # every iteration recorded, trips per CTA (Segments.uneven)
        if in_loop and not full:
            if uneven:
                self.model = self._tail_models()
            else:
                self.model = [self._model_arrays(i) for i in range(len(ctas))]
        self._cta_strides(ctas)
        if uneven and in_loop:
            self._fill_idle(ctas)

    # the loop model: iteration k >= 1 of a lane is A[1 + j] + q * step[j], j = (k - 1) % p, q = (k - 1) // p
    def _model_arrays(self, i: int):
        s = self.per_cta[i]
        p = self.p
        if any(k not in s for k in range(1, 2 * p + 1)):
            raise LoweringError(f"{self.name}: too few warm-up iterations for a period of {p}", True)
        a = np.stack([s[1 + j] for j in range(p)])
        b = np.stack([s[1 + j + p] for j in range(p)])
        if ((a < 0) != (b < 0)).any() or ((a < 0) & (a != b)).any():
            raise LoweringError(f"{self.name}: which lanes execute it changes from one loop iteration to the next",
                                True)
        return a, np.where(a >= 0, b - a, 0)

    def _tail_models(self) -> list:
        """Every batch CTA's iteration model where the loop was emulated in full and its CTAs run different trips
        (:func:`split_tail`): each lane's offsets advance by the step between the first two iterations it executes
        the operation in; a lane that executes it once takes the step of the same lane of the CTA with the most trips
        (its CTAs outside the batch run further). Checked here on every recorded iteration."""
        fits = []
        for s, t in zip(self.per_cta, self.lane_trips, strict=True):
            model = s.get(AFFINE)  # compacted (compact_uneven): iterations 1.. from the model
            ks = sorted({k for k in s if isinstance(k, int)} | (set(range(1, model[2] + 1)) if model else set()))
            if not ks:
                raise LoweringError(f"{self.name}: no recorded iteration", True)
            arr = np.stack([s[k] if k in s else np.where(model[0] >= 0, model[0] + (k - 1) * model[1], model[0])
                            for k in ks])  # (iterations, R, W, 32)
            kk = np.array(ks).reshape(-1, 1, 1, 1)
            valid = (arr >= 0) & (kk < np.broadcast_to(t, arr.shape[1:])[None])
            n = valid.sum(axis=0)
            k1 = np.argmax(valid, axis=0)
            rest = valid.copy()
            np.put_along_axis(rest, k1[None], False, axis=0)
            k2 = np.argmax(rest, axis=0)
            a1 = np.take_along_axis(arr, k1[None], axis=0)[0]
            a2 = np.take_along_axis(arr, k2[None], axis=0)[0]
            x1, x2 = np.asarray(ks)[k1], np.asarray(ks)[k2]
            gap = np.maximum(x2 - x1, 1)
            step = np.where(n >= 2, (a2 - a1) // gap, 0)
            exact = (n < 2) | ((a2 - a1) % gap == 0)
            if not exact.all():
                raise LoweringError(f"{self.name}: addresses that do not advance by a whole step per iteration", True)
            # every recorded iteration on the model (a lane executing it once is, whatever step it takes)
            if (valid & (n >= 2)[None] & (a1[None] + (kk - x1[None]) * step[None] != arr)).any():
                raise LoweringError(f"{self.name}: an iteration's addresses do not advance by one step per "
                                    "iteration", True)
            fits.append((n, a1, x1, step))
        most = max(range(len(fits)), key=lambda i: int(self.lane_trips[i].max()))
        donor = fits[most][3]
        self._executed = [f[0] for f in fits]  # per batch CTA: iterations each lane executed the operation in
        out = []
        for n, a1, x1, step in fits:
            step = np.where(n >= 2, step, donor)
            a = np.where(n >= 1, a1 + (1 - x1) * step, INACTIVE)
            out.append((a[None], step[None]))
        return out

    def _at(self, i: int, k: np.ndarray | int) -> np.ndarray:
        """Model offsets of batch CTA ``i`` at iteration ``k`` (a number, or (W, 32) per lane)."""
        a, step = self.model[i]
        k = np.asarray(k)
        j = (k - 1) % self.p
        q = (k - 1) // self.p
        if k.ndim == 0:
            return np.where(a[int(j)] >= 0, a[int(j)] + int(q) * step[int(j)], a[int(j)])
        jj = np.broadcast_to(j, a.shape[1:])[None]
        aj = np.take_along_axis(a, jj, axis=0)[0]
        sj = np.take_along_axis(step, jj, axis=0)[0]
        return np.where(aj >= 0, aj + q * sj, aj)

    def verify_loop(self) -> None:
        if self.full:
            return
        p = self.p
        if self.uneven:  # checked where the models are fitted (_tail_models)
            return
        for i, s in enumerate(self.per_cta):
            for k in sorted(x for x in s if isinstance(x, int) and x > 2 * p):
                if not np.array_equal(self._at(i, k), s[k]):
                    raise LoweringError(f"{self.name}: iteration {k}'s addresses are not those the strides of "
                                        "iterations 1..{2 * p} predict", True)
            trips = self.lane_trips[i]
            for slot, back in (("pen", 2), ("last", 1)):
                if slot not in s:
                    continue
                k = np.maximum(trips - back, 1)
                want = self._at(i, k)
                got = s[slot]
                both = (want >= 0) & (got >= 0)
                active = trips > back
                bad = (both & (want != got)) | (((want < 0) != (got < 0)) & active if slot == "pen" else False)
                if (bad & active).any():
                    raise LoweringError(f"{self.name}: the {'next-to-last' if back == 2 else 'last'} iteration's "
                                        "addresses are not those the warm-up's strides predict", True)

    # the CTA model: a CTA outside the batch is its reference CTA moved by the strides between interior CTAs
    def _slot1(self, i: int) -> np.ndarray | None:
        if self.uneven and self.in_loop:  # the model's iteration 1 (recorded only where the CTA runs it)
            return self.model[i][0][0]
        s = self.per_cta[i]
        return s.get(1 if self.in_loop else 0)

    def _fill_idle(self, ctas) -> None:
        """Tail split: lanes of a batch CTA whose iterations never reach the operation (causal attention's first query
        block runs one iteration, which skips the next block's prefetch) take the model of the CTA next to them in a
        grid dimension that runs more, less that dimension's stride, so that every CTA answers for every iteration as
        a hand-written address function does (the L2 model's footprints sample the first CTA)."""
        for i, c in enumerate(ctas):
            idle = self._executed[i] == 0  # (R, W, 32): lanes whose iterations never reached the operation
            if not idle.any():
                continue
            for d in range(3):
                j = self.index.get(tuple(v + 1 if e == d else v for e, v in enumerate(c)))
                g = self.strides.get(d)
                if j is None or g is None:
                    continue
                more = np.broadcast_to(self.lane_trips[i] < self.lane_trips[j], idle.shape)
                if not (idle & more).any():
                    continue
                a, step = self.model[i]
                aj, sj = self.model[j]
                take = (idle & more)[None] & (aj >= 0)
                self.model[i] = (np.where(take, aj - g, a), np.where(take, sj, step))
                break

    def _cta_strides(self, ctas) -> None:
        """The interior CTAs' stride in each grid dimension (checked: the two CTAs execute the same lanes)."""
        for d in range(3):
            if strided(self.grid, d):
                stride = self._stride(stride_pair(self.grid, d)[0], d)
                if stride is not None:
                    self.strides[d] = stride

    def _stride(self, ref, d: int) -> np.ndarray | None:
        """The stride along grid dimension ``d`` of the CTAs of ``ref``'s kind in the other dimensions (a border
        row's CTAs have a stride of their own where their border lanes work): between the batch CTAs with
        coordinates 1 and 2 in ``d`` (1 and 1 + the cluster's CTAs in a cluster); None where they differ in which
        lanes execute."""
        key = (tuple(v for e, v in enumerate(ref) if e != d), d)
        if key not in self._strides:
            one, two = stride_pair(self.grid, d, ref)
            a, b = self._slot1(self.index[one]), self._slot1(self.index[two])
            if a is None or b is None or a.shape != b.shape or ((a < 0) != (b < 0)).any():
                self.affine = False
                self._strides[key] = None
            else:
                self._strides[key] = np.where(a >= 0, b - a, 0)
        return self._strides[key]

    def verify_ctas(self, checks: list[tuple[int, int, int]]) -> bool:
        """Whether the batch CTAs that are not their own reference have the offsets the strides give them."""
        if not self.affine:
            return False
        for c in checks:
            i = self.index[c]
            ref = ref_of(c, self.grid)
            if ref == c:
                continue
            mine, theirs = self.per_cta[i], self.per_cta[self.index[ref]]
            slots = [k for k in mine if k in theirs and (not self.in_loop or (isinstance(k, int) and k >= 1))]
            for k in slots:
                if self.uneven and self.in_loop:  # compared where both CTAs run the iteration and the operation (a
                    # CTA's last iteration skips the next block's prefetch)
                    live = (k < self.lane_trips[i]) & (k < self.lane_trips[self.index[ref]]) & (mine[k] >= 0) & \
                        (theirs[k] >= 0)
                    if (live & (self._shifted(theirs[k], c, ref) != mine[k])).any():
                        self.affine = False
                        return False
                    continue
                if not np.array_equal(self._shifted(theirs[k], c, ref), mine[k]):
                    self.affine = False
                    return False
        return True

    def _shifted(self, a: np.ndarray, c, ref) -> np.ndarray:
        shift = 0
        for d in range(3):
            if c[d] != ref[d]:
                g = self._stride(ref, d)
                if g is None:
                    return a
                shift = shift + stride_steps(c, ref, self.grid, d) * g
        return np.where(a >= 0, a + shift, a)

    def __call__(self, ctx) -> np.ndarray:
        c = (int(ctx.bx), int(ctx.by), int(ctx.bz))
        i = self.index.get(c)
        ref = c
        if i is None:
            ref = ref_of(c, self.grid)
            i = self.index[ref]
            if not self.affine:
                self.outside += 1
        if not self.in_loop:
            out = self.per_cta[i][0]
        else:
            k = int(ctx.it) + self.peel
            s = self.per_cta[i]
            any_slot = next(iter(s.values()))
            if self.full:
                out = s.get(k)
                if out is None:
                    model = s.get(AFFINE)
                    if model is not None and 1 <= k <= model[2]:  # compact_full's model
                        a, step, _ = model
                        out = np.where(a >= 0, a + (k - 1) * step, a)
                    else:
                        out = np.full(any_slot.shape, INACTIVE)
            else:
                trips = self.lane_trips[i] + self._trip_shift(c, ref)
                if self.uneven:  # every iteration from the model (checked on every recorded one), past its CTA's
                    # trips too (the engine never runs them; the pattern analysis samples them, as a hand-written
                    # address function answers), lanes off only where they leave before their CTA's longest
                    out = self._at(i, k)
                    out = np.where((k >= trips) & (trips < int(trips.max())), INACTIVE, out)
                    return out if ref == c or not self.affine else self._shifted(out, c, ref)
                out = s[k] if k in s and ref == c else self._at(i, k)
                pen, last = s.get("pen"), s.get("last")
                if pen is not None:
                    out = np.where(trips - 2 == k, pen if ref == c else self._at(i, k), out)
                if last is not None:
                    out = np.where(trips - 1 == k, last if ref == c else self._at(i, k), out)
                out = np.where(k >= trips, INACTIVE, out)
        return out if ref == c or not self.affine else self._shifted(out, c, ref)

    def _trip_shift(self, c, ref):
        shift = 0
        for d, g in self.trip_strides.items():
            if c[d] != ref[d]:
                shift = shift + stride_steps(c, ref, self.grid, d) * g
        return shift
