"""Hopper's instructions lowered to the IR (the emulation half is :mod:`gpusim.frontend.hopper`): TMA copies, mbarrier
arrivals and waits, wgmma and its commit/wait groups become IR operations of their own; warp-specialized roles are
lowered apart and joined (:func:`merge_roles`)."""

from __future__ import annotations

import re

import numpy as np

from gpusim import ir
from gpusim.frontend.hopper import Issue, Record, WARP
from gpusim.frontend.isa import Decoded, Imm, Named
from gpusim.frontend.trace import LoweringError, compact_full, compact_uneven, cta_warps, key_rec, warps_tuple

# --- lowering -------------------------------------------------------------------------------------------------
def hgemm_shape(d: Decoded) -> tuple[int, int, int]:
    k = next(x for x in d.mods if re.fullmatch(r"\d+x\d+x\d+", x))
    m_, n, kk = (int(v) for v in k.split("x"))
    return m_, n, kk


def is_commit(d: Decoded) -> bool:
    return d.mnemonic == "HGMMA" and any(isinstance(o, Named) and o.text.startswith("gsb") for o in d.ops)




# (and SYNCS arrivals and waits) become IR operations of their own
LOWERED = {"UTMALDG", "UTMASTG", "UBLKCP", "HGMMA", "WARPGROUP"}


def lowered(d: Decoded) -> bool:
    """Whether an instruction becomes an IR operation of its own (the others are int32 work in a bundle)."""
    return d.mnemonic in LOWERED or (d.mnemonic == "SYNCS" and d.has("ARRIVE", "PHASECHK"))


class Lowering:
    """The IR mbarriers of a kernel's recorded Hopper steps (see the module docstring)."""

    def __init__(self, ctx, positions) -> None:
        self.ctx = ctx
        self.base = ctx.batch.ctas[ctx.base]
        self.commits = any(is_commit(p.inst) for p in positions)
        parent: dict[int, int] = {}

        def find(x):
            while parent.setdefault(x, x) != x:
                x = parent[x]
            return x

        by_inst: dict[int, set] = {}  # an instruction's barriers over the whole trace (a ring of stages)
        for r in ctx.batch.recs:
            if isinstance(r.extra, Record) and r.extra.kind != "init":
                by_inst.setdefault(r.index, set()).update(i.bar for i in r.extra.issues.values() if i.bar >= 0)
        for offs in by_inst.values():
            offs = sorted(offs)
            for o in offs[1:]:
                parent[find(o)] = find(offs[0])
            for o in offs[:1]:
                find(o)
        groups: dict[int, list[int]] = {}
        for o in parent:
            groups.setdefault(find(o), []).append(o)
        self.group_of: dict[int, tuple[str, int, int]] = {}  # offset -> (IR name, index in its group, group size)
        for offs in groups.values():
            offs.sort()
            for k, o in enumerate(offs):
                self.group_of[o] = (f"mbar_{offs[0]:x}", k, len(offs))
        self.arrivals: dict[tuple[str, int], int] = {}
        self.waited: set[tuple[str, int]] = set()

    def _seq(self, issue: Issue) -> tuple[str, int]:
        name, k, n = self.group_of[issue.bar]
        return name, issue.phase * n + k

    def _per_slot(self, pos) -> dict:
        """slot -> (IR mbarrier, seq, warps of the base CTA issuing), checked alike on every batch CTA."""
        ci = self.ctx.batch.ctas.index(self.base)
        out = {}
        for slot, r in pos.recs.items():
            rec = r.extra
            if not isinstance(rec, Record):
                continue
            mine = {w: i for (c, w), i in rec.issues.items() if c == ci}
            if not mine:
                continue
            seqs = {self._seq(i) for i in mine.values()}
            if len(seqs) > 1:
                raise _lowering_error(f"{pos.inst.where}: the warps of one CTA use different mbarrier phases")
            out[slot] = (*seqs.pop(), tuple(sorted(mine)))
        return out

    def seq_fn(self, pos, per: dict):
        """``seq(it, j)`` of a position from its slots' phases: a constant outside the loop, affine in the loop's
        iteration inside it (checked on every recorded iteration)."""
        seg = self.ctx.seg
        if pos.part == "e":
            after = self._after_loop(pos)
            if after is not None:
                return after
        if pos.part != "l":
            s = next(iter(per.values()))[1]
            return lambda it, j, s=s: s
        ints = {k: v[1] for k, v in per.items() if isinstance(k, int)}
        k1 = min((k for k in ints if k >= 1), default=None)
        if k1 is None:
            s = next(iter(per.values()))[1]
            return lambda it, j, s=s: s
        k2 = min((k for k in ints if k > k1), default=None)
        a = (ints[k2] - ints[k1]) // (k2 - k1) if k2 is not None else 0
        b = ints[k1] - a * k1
        peel = int(seg.peel_first)
        trips = None
        if self.ctx.lane_trips is not None:
            trips = int(self.ctx.lane_trips[self.ctx.base].max())
        checks = dict(ints)
        if trips is not None:
            for slot, back in (("pen", 2), ("last", 1)):
                if slot in per:
                    checks[trips - back] = per[slot][1]
        bad = [k for k, s in checks.items() if k >= 1 and s != a * k + b]
        if bad:
            raise _lowering_error(f"{pos.inst.where}: its mbarrier phase is not an affine function of the loop's "
                                  f"iteration (iteration {bad[0]})")
        # a wait the first iterations left out (trace._pad_head) must fall before the barrier's first phase there:
        # such a wait returns at once, as their leaving it out did
        late = [k for k, r in pos.recs.items() if isinstance(k, int) and r.padded and a * k + b >= 0]
        if late:
            raise _lowering_error(f"{pos.inst.where}: the loop's first iterations leave out this wait, but its phase "
                                  f"there would be {a * late[0] + b}, not one before the first: not supported yet")
        return lambda it, j, a=a, b=b, peel=peel: a * (it + peel) + b

    def cta_trips(self) -> list[int] | None:
        """The loop's trips in each batch CTA (as :func:`gpusim.frontend.lower.build` counts them), or None where it
        has no loop."""
        ctx, seg = self.ctx, self.ctx.seg
        if not seg.template:
            return None
        if seg.full:
            return seg.cta_trips(len(ctx.batch.ctas), ctx.warps)
        peel = int(seg.peel_first) + int(seg.peel_last)
        return [int(t.max()) - peel for t in ctx.lane_trips]

    def _after_loop(self, pos):
        """Where the batch CTAs run the loop different numbers of times, an mbarrier phase after it continues the
        loop's count (causal attention's consumers wait, in their last turn, for the block their producer's loop
        loaded last): ``seq`` is the CTA's trips (the epilogue's iteration, :data:`gpusim.ir.SeqFn`) plus an offset
        the same in every batch CTA that executes it (checked). None where the CTAs run the same trips (the phase is
        the same constant in all)."""
        trips = self.cta_trips()
        if trips is None or len(set(trips)) < 2:
            return None
        offsets = set()
        for r in pos.recs.values():
            if not isinstance(r.extra, Record):
                continue
            for (c, _), i in r.extra.issues.items():
                offsets.add(self._seq(i)[1] - trips[c])
        if len(offsets) != 1:
            raise _lowering_error(f"{pos.inst.where}: after the loop, its mbarrier phase is not the CTA's loop trips "
                                  "plus one offset in every CTA: not supported yet")
        offset = offsets.pop()
        return lambda it, j, o=offset: it + o

    def ops(self, builder, unit) -> list:
        p = unit[0]
        d = p.inst

        warps = warps_tuple(self.ctx, cta_warps(self.ctx, key_rec(p), self.ctx.base))
        if d.mnemonic == "HGMMA":
            _, n, _ = hgemm_shape(d)
            out = [ir.Compute(builder._name(unit, "wgmma"), "wgmma", n // 8, units=n // 8, group="wgmma",
                              warps=warps)]
            if is_commit(d):
                out.append(ir.Commit("wgmma", warps))
            return out
        if d.mnemonic == "WARPGROUP":
            if d.has("DEPBAR"):
                n = next((o.bits for o in d.ops if isinstance(o, Imm)), 0)
                return [ir.WaitGroup("wgmma", n, warps)]
            if self.commits:  # wgmma.fence: its issue slot is the group's Commit's (the gsb0 of the last HGMMA)
                return []
            return [ir.Compute(builder._name(unit, "int32"), "int32", 1, warps=warps)]
        if d.mnemonic == "UTMASTG" or _bulk_store(p):  # no mbarrier: its completion joins the bulk group
            # UTMACMDFLUSH commits
            return [self._tma(builder, unit, "", None, warps, store=True)]
        per = self._per_slot(p)
        if not per:
            return []
        name = next(iter(per.values()))[0]
        fn = self.seq_fn(p, per)
        warps = next(iter(per.values()))[2]
        self._count(p, per)
        if d.mnemonic == "SYNCS" and d.has("PHASECHK"):
            for v in per.values():
                self.waited.add((v[0], v[1]))
            return [ir.MbarWait(name, fn, warps)]
        if d.mnemonic == "SYNCS":
            return [ir.Arrive(name, fn, warps)]
        return [self._tma(builder, unit, name, fn, warps)]

    def _count(self, p, per) -> None:
        d = p.inst
        if d.mnemonic == "SYNCS" and d.has("PHASECHK"):
            return
        for v in per.values():
            key = (v[0], v[1])
            self.arrivals[key] = self.arrivals.get(key, 0) + len(v[2])

    def _tma(self, builder, unit, name, fn, warps, store: bool = False):
        W = WARP
        ctx = self.ctx
        p = unit[0]
        nw = ctx.warps
        size = max((len(i.chunks) for r in p.recs.values() if isinstance(r.extra, Record)
                    for i in r.extra.issues.values() if i.chunks is not None), default=32)
        rep = -(-size // W)
        tensor = next((i.tensor for r in p.recs.values() if isinstance(r.extra, Record)
                       for i in r.extra.issues.values() if i.tensor >= 0), 0)
        per_cta = []
        for ci in range(len(ctx.batch.ctas)):
            slots = {}
            for slot, r in p.recs.items():
                a = np.full((rep, nw, W), -1, dtype=np.int64)
                if isinstance(r.extra, Record):
                    for (c, w), i in r.extra.issues.items():
                        if c == ci and i.chunks is not None:
                            flat = np.full(rep * W, -1, dtype=np.int64)
                            flat[:len(i.chunks)] = i.chunks
                            a[:, w, :] = flat.reshape(rep, W)
                slots[slot] = a
            # a loop emulated in full: its iterations' boxes as a model where they step alike (compact_full)
            if p.part == "l" and ctx.seg.full:
                slots = compact_full(slots)
            elif p.part == "l" and ctx.seg.uneven:
                slots = compact_uneven(slots, int(ctx.lane_trips[ci].max()))
            per_cta.append(slots)
        op_name = builder._name(unit, "tmast" if store else "tma")
        book = builder.book(op_name, unit, per_cta)
        if store:
            return ir.Mem(op_name, "global", "tma_st", 16, book, ctx.tensor_names[tensor], repeat=rep, warps=warps,
                          group="cp.async")
        return ir.Mem(op_name, "global", "tma", 16, book, ctx.tensor_names[tensor], repeat=rep, warps=warps,
                      arrive=name, seq=fn)

    def mbarriers(self) -> dict:
        """IR mbarrier -> arrivals per phase (TMA copies and arriving warps), the same for every phase waited on."""
        out: dict[str, int] = {}
        for name in sorted({v[0] for v in self.group_of.values()}):
            counts = {s: n for (b, s), n in self.arrivals.items() if b == name}
            waited = {counts[s] for (b, s) in self.waited if b == name and s in counts}
            if len(waited) > 1:
                raise _lowering_error(f"mbarrier {name}: its phases take different numbers of arrivals "
                                      f"({sorted(waited)}): not supported yet")
            if waited:
                out[name] = waited.pop()
            elif counts:
                out[name] = max(counts.values())
        return out


def _bulk_store(p) -> bool:
    """A UBLKCP that stores (its recorded copies are ``tma_st``)."""
    return p.inst.mnemonic == "UBLKCP" and any(isinstance(r.extra, Record) and r.extra.kind == "tma_st"
                                               for r in p.recs.values())


def flops(d: Decoded) -> int:
    """Floating-point operations one warp's HGMMA stands for (a quarter of the warpgroup's m x n x k MMA)."""
    m_, n, k = hgemm_shape(d)
    return 2 * m_ * n * k // 4


def _lowering_error(msg: str):
    return LoweringError(msg)


def accumulate_in_pipe(ops: list) -> list:
    """wgmma operations chained on one accumulator wait for each other inside the tensor pipe, not in the warp: their
    register dependencies on one another are dropped (the warp waits for them at WARPGROUP.DEPBAR only)."""
    import dataclasses

    mma = {o.name for o in ops if isinstance(o, ir.Compute) and o.group == "wgmma"}
    return [dataclasses.replace(o, after=tuple(a for a in o.after if a not in mma))
            if isinstance(o, ir.Compute) and o.name in mma else o for o in ops]


# --- warp-specialized roles -------------------------------------------------------------------------------------
def roles(recs, warps_per_cta: int, base: int) -> list[tuple[int, ...]]:
    """The base CTA's warps grouped by the instructions they executed: a producer warp, idle producer warps and the
    consumer warps of a warp-specialized kernel are three roles."""
    lo = base * warps_per_cta
    seen: dict[int, set] = {w: set() for w in range(warps_per_cta)}
    for r in recs:
        for w in np.nonzero(r.warps[lo:lo + warps_per_cta])[0]:
            seen[int(w)].add(r.index)
    groups: dict[frozenset, list[int]] = {}
    for w, s in seen.items():
        groups.setdefault(frozenset(s), []).append(w)
    return sorted(tuple(ws) for ws in groups.values())


def role_recs(recs, role: tuple[int, ...], warps_per_cta: int, program, n_ctas: int, peel: int = 0):
    """The recorded steps as the warps of ``role`` (in every batch CTA) executed them, with each step's iteration of
    the role's loop (the back edge it takes most), and that loop as the recorder describes one. Where the role's warps
    run the loop different numbers of times (or ``peel`` of its first iterations go before it), each warp's steps
    are placed by where the warp is (:func:`_by_warp_phase`)."""
    import copy

    keep = np.zeros(warps_per_cta, dtype=bool)
    keep[list(role)] = True
    wmask = np.tile(keep, n_ctas)
    lmask = np.repeat(wmask, WARP)
    out = []
    for r in recs:
        if not (r.warps & wmask).any():
            continue
        c = copy.copy(r)
        c.warps = r.warps & wmask
        if r.addr is not None:
            c.addr = np.where(lmask, r.addr, -1)
        if r.saddr is not None:
            c.saddr = np.where(lmask, r.saddr, -1)
        if r.bar is not None:  # the barrier ids its own warps named (the lowering groups a BAR's warps by them)
            c.bar = np.where(wmask, r.bar, -1).astype(r.bar.dtype)
        if isinstance(r.extra, Record):
            c.extra = Record(r.extra.kind, {k: v for k, v in r.extra.issues.items() if keep[k[1]]})
        c.witer = None
        out.append(c)
    backs = {}
    for i, r in enumerate(out):
        d = program[r.index]
        if d.mnemonic in ("BRA", "JMP"):
            t = next((o.addr for o in d.ops if type(o).__name__ == "Target"), None)
            if t is not None and t <= d.addr:
                backs.setdefault(r.index, []).append(i)
    if not backs:
        return out, []
    index_of = {d.addr: d.index for d in program}

    def span(b: int) -> int:  # instructions the back edge's loop covers
        t = next(o.addr for o in program[b].ops if type(o).__name__ == "Target")
        return b - index_of[t]
    # the loop whose back edge runs most; of those, the outermost (an elect-one loop around each TMA copy in the
    # k-loop runs its back edge as often, untaken)
    back = max(backs, key=lambda b: (len(backs[b]), span(b)))
    tgt = next(o.addr for o in program[back].ops if type(o).__name__ == "Target")
    head = index_of[tgt]
    _refuse_enclosing_loop(out, backs, head, back, program, index_of, role)
    nw = len(wmask)
    counts = sum(r.warps.astype(np.int64) for r in out if r.index == back)
    if peel or len(set(counts[wmask].tolist())) > 1:  # the role's warps run different trips (causal attention)
        return _by_warp_phase(out, head, back, nw, peel, warps_per_cta)
    first = next(i for i, r in enumerate(out) if r.index == head)
    it = np.full(len(out[0].warps), -1, dtype=np.int32)
    it[wmask] = 0
    last = max(i for i, r in enumerate(out) if r.index == back)
    end = len(out)
    for i in range(first, len(out)):
        r = out[i]
        r.witer = np.where(r.warps, it, -1).astype(np.int32)
        if r.index == back:
            taken = r.warps  # every warp of the role goes round (a uniform loop), but the last time
            if i == last:
                end = i + 1
                break
            it = np.where(taken, it + 1, it)
    # a trailing iteration's steps after the last back edge belong to the code after the loop
    for r in out[end:]:
        r.witer = None
    loops = [{"head": head, "back": back, "start": first, "end": end, "jumped": False}]
    return out, loops


def _refuse_enclosing_loop(out: list, backs: dict, head: int, back: int, program, index_of: dict,
                           role: tuple[int, ...]) -> None:
    """A role's loop [head, back] inside another loop that some warp of the role goes round (a persistent kernel's
    loop over its tiles around the k-loop): the IR has one loop per program and the role's steps would be numbered
    across the outer loop's turns, so it is refused in one line, naming both loops."""
    for b in backs:
        t = next(o.addr for o in program[b].ops if type(o).__name__ == "Target")
        h = index_of[t]
        if b == back or not (h < head and b > back):
            continue
        turns = int(sum(out[i].warps.astype(np.int64) for i in backs[b]).max())  # its back edge's runs by a warp
        if turns > 1:
            raise _lowering_error(f"the warp-specialized role of warps {role}: its loop at instructions {head}-{back} "
                                  f"runs inside the loop at instructions {h}-{b}, of which a warp runs {turns} turns "
                                  "(a persistent kernel's loop over its tiles): two nested loops in a role are not "
                                  "supported yet")


def _split(r, w: np.ndarray, wpc: int):
    """A copy of step ``r`` restricted to the warps ``w`` (batch warps; ``wpc`` warps a CTA)."""
    import copy

    c = copy.copy(r)
    for name, off in (("distinct", 0), ("issues", 0), ("bar", -1)):  # per warp: of ``w`` alone
        a = getattr(r, name)
        if a is not None:
            setattr(c, name, np.where(w, a, off).astype(a.dtype))
    if not (r.warps & ~w).any():  # all of its warps: its lanes' offsets shared, not copied
        return c
    c.warps = r.warps & w
    lanes = np.repeat(w, WARP)
    if r.addr is not None:
        c.addr = np.where(lanes, r.addr, -1)
    if r.saddr is not None:
        c.saddr = np.where(lanes, r.saddr, -1)
    if r.witer is not None:
        c.witer = np.where(w, r.witer, -1).astype(np.int32)
    if isinstance(r.extra, Record):
        c.extra = Record(r.extra.kind, {k: v for k, v in r.extra.issues.items() if w[k[0] * wpc + k[1]]})
    return c


def _join(parts: list, wpc: int):
    """One step made of the same instruction's steps of several warps (``parts``: step, batch warps taken from it)."""
    out = _split(parts[0][0], parts[0][1], wpc)
    for name in ("addr", "saddr", "witer"):  # filled in below: its own arrays
        a = getattr(out, name)
        if a is not None:
            setattr(out, name, a.copy())
    if isinstance(out.extra, Record):
        out.extra = Record(out.extra.kind, dict(out.extra.issues))
    for r, w in parts[1:]:
        c = _split(r, w, wpc)
        out.warps = out.warps | c.warps
        lanes = np.repeat(w, WARP)
        for name in ("addr", "saddr"):
            a = getattr(c, name)
            if a is not None:
                getattr(out, name)[lanes] = a[lanes]
        for name in ("distinct", "issues", "bar", "witer"):
            a = getattr(c, name)
            if a is not None:
                getattr(out, name)[w] = a[w]
        out.taint |= c.taint
        out.tensor = max(out.tensor, c.tensor)
        if isinstance(c.extra, Record):
            out.extra.issues.update(c.extra.issues)
    return out


def _by_warp_phase(out: list, head: int, back: int, nw: int, peel: int, wpc: int):
    """A role's steps where its warps run the loop [head, back] different numbers of times: in the emulation a warp
    that leaves the loop early (or never enters it) runs the code after it while the others are still in the loop
    (the minimum-PC rule runs it while they wait on a barrier). Each warp's steps are placed by where the warp is:
    before the loop (its first ``peel`` iterations too), in it (numbered by the warp's own iterations) or after it,
    each step split by warps where they differ, and every warp's steps keep their order. The steps after the loop are
    joined across warps: the k-th execution of an instruction by each warp is one step, in an order that follows
    every warp's (a warp skipping the loop, such as the first query block of causal attention, passes from the code
    before it to the code after it at its first step past the back edge)."""
    import heapq

    phase = np.zeros(nw, np.int8)  # 0 before, 1 in, 2 after the loop
    it = np.full(nw, -1, np.int32)
    last = {}
    for i, r in enumerate(out):
        if r.index == back:
            for w in np.nonzero(r.warps)[0]:
                last[int(w)] = i
    pre, loop, post = [], [], []
    witers: dict = {}  # the iterations of the warps of a step, shared by the steps alike (a loop's 20,000)
    version = 0  # counts the changes of ``it``
    for i, r in enumerate(out):
        w = r.warps
        enter = w & (phase == 0) & (r.index == head)
        phase[enter] = 1
        it[enter] = 0
        version += bool(enter.any())
        skip = w & (phase == 0) & (r.index > back) & ~np.isin(np.arange(nw), list(last))
        phase[skip] = 2
        early = w & (phase == 1) & (it < peel)
        inside = w & (phase == 1) & (it >= peel)
        for part, mask in ((pre, w & ((phase == 0) | early)), (loop, inside), (post, w & (phase == 2))):
            if mask.any():
                c = _split(r, mask, wpc)
                c.witer = None
                if part is loop:
                    key = (mask.tobytes(), version)
                    if key not in witers:
                        witers[key] = np.where(mask, it - peel, -1).astype(np.int32)
                    c.witer = witers[key]
                part.append((i, c))
        if r.index == back:
            for x in np.nonzero(w)[0]:
                if last.get(int(x)) == i:
                    phase[x] = 2
                else:
                    it[x] += 1
            version += 1
    # the steps after the loop: joined by (instruction, its execution count in the warp), in an order every warp keeps
    occ: dict = {}
    nodes: dict = {}
    prev: dict = {}
    edges: dict = {}
    indeg: dict = {}
    for i, r in post:
        for w in np.nonzero(r.warps)[0]:
            w = int(w)
            k = (r.index, occ.setdefault((w, r.index), 0))
            occ[(w, r.index)] += 1
            node = nodes.setdefault(k, {"row": i, "parts": {}})
            node["parts"].setdefault(id(r), [r, np.zeros(nw, dtype=bool)])[1][w] = True
            indeg.setdefault(k, 0)
            p = prev.get(w)
            if p is not None and k not in edges.setdefault(p, set()):
                edges[p].add(k)
                indeg[k] += 1
            prev[w] = k
    heap = [(nodes[k]["row"], k) for k, d in indeg.items() if d == 0]
    heapq.heapify(heap)
    joined = []
    while heap:
        _, k = heapq.heappop(heap)
        joined.append(_join([tuple(v) for v in nodes[k]["parts"].values()], wpc))
        for n in edges.get(k, ()):
            indeg[n] -= 1
            if indeg[n] == 0:
                heapq.heappush(heap, (nodes[n]["row"], n))
    if len(joined) != len(nodes):
        raise _lowering_error(f"the code after the loop at instruction {head}: its warps run its instructions in "
                              "orders that do not agree: not supported yet")
    steps = [c for _, c in pre] + [c for _, c in loop] + joined
    loops = [{"head": head, "back": back, "start": len(pre), "end": len(pre) + len(loop), "jumped": False}]
    return steps, loops


def merge_roles(kernels: list, role_list: list) -> tuple:
    """One IR program from the roles' programs: each role's operations (their warps disjoint) one after another,
    renamed apart; the loops' bodies joined (their trip counts must agree)."""
    import dataclasses

    pro, body, epi = [], [], []
    trips = {k.loop.trips for k in kernels if k.loop is not None}
    looped = [k for k in kernels if k.loop is not None]
    if any(k.trips_of is not None for k in looped):  # CTAs of unequal trips: every role's loop runs each CTA's
        n = looped[0].launch.num_ctas
        runs = {tuple(k.trips_of(i) for i in range(n)) if k.trips_of else None for k in looped}
        if len(runs) > 1:
            raise _lowering_error("the warp-specialized roles' loops run different trips in some CTAs: not "
                                  "supported yet")
        trips = {max(trips)}
    if len(trips) > 1:
        raise _lowering_error(f"the warp-specialized roles' loops run {sorted(trips)} trips: not supported yet")

    def rename(ops, tag):
        names = {o.name for o in ops if isinstance(o, (ir.Mem, ir.Compute))}

        def fix(o):
            if isinstance(o, (ir.Mem, ir.Compute)):
                return dataclasses.replace(o, name=tag + o.name, after=tuple(tag + a if a in names else a
                                                                               for a in o.after))
            return o
        return [fix(o) for o in ops]

    for k, role in zip(kernels, role_list, strict=True):
        tag = f"w{role[0]}_"
        ops = list(k.prologue) + (list(k.loop.body) if k.loop else []) + list(k.epilogue)
        ren = rename(ops, tag)
        a, b = len(k.prologue), len(k.loop.body) if k.loop else 0
        pro += ren[:a]
        body += ren[a:a + b]
        epi += ren[a + b:]
    bars: dict[str, int] = {}
    for k in kernels:
        for name, n in k.mbarriers.items():
            bars[name] = bars.get(name, 0) + n
    return tuple(pro), (ir.Loop(trips.pop(), tuple(body)) if trips else None), tuple(epi), bars
