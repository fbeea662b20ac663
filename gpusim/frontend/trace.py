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
        r = Rec(s.inst.index, warps, witer)
        if s.distinct is not None:
            r.distinct = np.where(warps, s.distinct, 0).astype(np.int32)
        if s.issues is not None:
            r.issues = np.where(warps, s.issues, 0).astype(np.int32)
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
    """The record that speaks for a program position: its second iteration slot's, else its first's, else any."""
    return pos.recs.get(1, pos.recs.get(0, next(iter(pos.recs.values()))))


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
SYNC_MNEMONICS = {"BAR", "LDGDEPBAR", "DEPBAR", "MEMBAR"}


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


def stride_pair(grid: tuple[int, int, int], d: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """The two interior batch CTAs one apart in grid dimension ``d`` (coordinates 1 and 2 there, interior in the
    others where they have an interior), whose difference is the per-CTA stride of that dimension: CTAs on a border
    of another dimension may take other paths (a guard at index 0)."""
    base = tuple(1 if g > 2 else 0 for g in grid)
    return (tuple(1 if e == d else base[e] for e in range(3)), tuple(2 if e == d else base[e] for e in range(3)))


def ref_of(c: tuple[int, int, int], grid: tuple[int, int, int]) -> tuple[int, int, int]:
    """The batch CTA whose addresses a CTA's are moved from: the same coordinate where it is first or last in a
    dimension, 1 where it is interior."""
    return tuple(v if v == 0 or v == g - 1 else 1 for v, g in zip(c, grid, strict=True))


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


def segment(recs: list[Rec], loops: list[dict], jump: LoopJump | None) -> Segments:
    lp = choose_loop(loops, recs)
    if lp is None:
        return Segments(recs, (), {}, [])
    lo, hi = lp["start"], lp["end"] if lp["end"] is not None else len(recs)
    in_loop = [lo <= i < hi and r.witer is not None and bool((r.witer >= 0).any()) for i, r in enumerate(recs)]
    if True not in in_loop:
        return Segments(recs, (), {}, [])
    first = in_loop.index(True)
    last = len(in_loop) - 1 - in_loop[::-1].index(True)
    if not all(in_loop[first:last + 1]):
        raise LoweringError("the loop's iterations are interleaved with code outside it (CTAs of the batch take "
                            "different paths around the loop, or warps of one CTA run loops of their own: "
                            "warp-specialized roles): not supported yet")
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
    if any(_seq(b) != template for b in middle):
        if lp["jumped"]:
            raise LoweringError("the loop's iterations run different instruction paths", retry_without_jump=True)
        trips = _warp_trips(recs[first:last + 1], lp["back"])
        if len(trips) > 1:  # written out, every CTA would run the base CTA's iterations
            raise LoweringError(f"the loop at instruction {lp['head']} runs {min(trips)} to {max(trips)} iterations "
                                "in the emulated warps and its iterations take different instruction paths (causal "
                                "attention's diagonal blocks): it cannot be summarised as one loop, and written out "
                                "every CTA would run the same iterations; not supported yet")
        return Segments(recs, (), {}, [])  # written out in full
    peel_first = _seq(pre[0]) != template
    peel_last = _seq(tail) != template
    if lp["jumped"]:
        slots = {k: b for k, b in enumerate(pre) if k > 0 or not peel_first}
        slots["pen"] = post[0]
        if not peel_last:
            slots["last"] = post[1]
    else:
        slots = {k: b for k, b in enumerate(blocks) if (k > 0 or not peel_first) and
                 (k < len(blocks) - 1 or not peel_last)}
    prologue = recs[:first] + (pre[0] if peel_first else [])
    epilogue = (tail if peel_last else []) + recs[last + 1:]
    return Segments(prologue, template, slots, epilogue, peel_first, peel_last,
                    jump.period if lp["jumped"] else 1, not lp["jumped"])


# --- addresses of the CTAs and iterations the engine asks for -----------------------------------------------------
class AddressBook:
    """The recorded offsets of one IR memory operation (``repeat`` SASS instructions) and how every CTA and loop
    iteration's offsets follow from them (see the module docstring)."""

    def __init__(self, name: str, per_cta: list[dict], grid, ctas, in_loop: bool, lane_trips: list | None,
                 peel_first: bool, period: int, full: bool = False, trip_strides: dict | None = None) -> None:
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
        if in_loop and not full:
            self.model = [self._model_arrays(i) for i in range(len(ctas))]
        self._cta_strides(ctas)

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
        s = self.per_cta[i]
        return s.get(1 if self.in_loop else 0)

    def _cta_strides(self, ctas) -> None:
        """The interior CTAs' stride in each grid dimension (checked: the two CTAs execute the same lanes)."""
        for d in range(3):
            if self.grid[d] >= 4:
                stride = self._stride(stride_pair(self.grid, d)[0], d)
                if stride is not None:
                    self.strides[d] = stride

    def _stride(self, ref, d: int) -> np.ndarray | None:
        """The stride along grid dimension ``d`` of the CTAs of ``ref``'s kind in the other dimensions (a border
        row's CTAs have a stride of their own where their border lanes work): between the batch CTAs with
        coordinates 1 and 2 in ``d``; None where they differ in which lanes execute."""
        key = (tuple(v for e, v in enumerate(ref) if e != d), d)
        if key not in self._strides:
            one = tuple(1 if e == d else v for e, v in enumerate(ref))
            two = tuple(2 if e == d else v for e, v in enumerate(ref))
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
                shift = shift + (c[d] - ref[d]) * g
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
                out = s.get(k, np.full(any_slot.shape, INACTIVE))
            else:
                trips = self.lane_trips[i] + self._trip_shift(c, ref)
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
                shift = shift + (c[d] - ref[d]) * g
        return shift
