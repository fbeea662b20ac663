"""Hopper's asynchronous instructions in the emulator and in the IR: TMA tensor copies (``UTMALDG``), mbarriers
(``SYNCS.*``), wgmma (``HGMMA``, ``WARPGROUP.ARRIVE`` / ``WARPGROUP.DEPBAR``), ``ELECT``, ``UTMACCTL`` (a tensor-map
prefetch) and ``USETMAXREG``.

Emulation (facts from the PTX ISA 8.x: mbarrier, cp.async.bulk.tensor, wgmma; the SASS nvcc 13.0 writes for them):

- An mbarrier is an 8-byte word of shared memory. ``SYNCS.EXCH.64`` initialises it (``mbarrier.init``: the low word
  holds ``(2^20 - count) << 1``); a phase completes when ``count`` arrivals are in and its transaction count is back
  to zero. ``SYNCS.ARRIVE.TRANS64[.A1T0]`` arrives once per thread and, with a register operand, adds that many bytes
  to the expected transactions (``mbarrier.arrive.expect_tx``).
- ``SYNCS.PHASECHK.TRANS64[.TRYWAIT] P, [bar], R`` tests whether the phase of parity ``R >> 31`` has completed. The
  ``try_wait`` retry loop around it is not emulated as a spin: lanes whose phase has not completed *wait at the
  instruction* (as at a barrier) and execute it again when the barrier completes a phase, so the test passes at its
  first try, as the hand IR and the SASS instruction counts take it.
- ``UTMALDG.nD [URd], [URm]``: ``URd`` .. are the destination's shared address, the mbarrier's, then the box's
  coordinates; ``URm`` the tensor map's generic address (a ``__grid_constant__`` parameter: in the parameter window
  ``c[0x0][0x198]`` points to; or global memory). The map is read from its 128 bytes (:mod:`gpusim.frontend.args`:
  ``tmap(...)``); the box is copied into shared memory with the map's swizzle, and its bytes complete the mbarrier's
  transactions at once (the copy's time is the engine's).
- ``HGMMA`` (wgmma.mma_async) and ``WARPGROUP.*`` change no address or control: their values are not computed.

Lowering: a ``UTMALDG`` is an :class:`gpusim.ir.Mem` of kind ``tma`` (its 16-byte chunks over ``repeat`` x 32
lanes of the issuing warp), arriving on an IR mbarrier; ``SYNCS.ARRIVE`` an :class:`gpusim.ir.Arrive`, the wait an
:class:`gpusim.ir.MbarWait`; ``HGMMA`` a ``wgmma`` bundle of ``N/8`` pipe units; the ``gsb0`` of the group's last
``HGMMA`` a :class:`gpusim.ir.Commit` (it takes the issue slot of the group's ``WARPGROUP.ARRIVE``, so the count stays
the SASS's); ``WARPGROUP.DEPBAR.LE gsb0, n`` a :class:`gpusim.ir.WaitGroup`. The physical mbarriers one instruction
uses over the loop (a ring of stages) are one IR mbarrier whose phases are numbered ``phase * barriers + index``.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

import numpy as np

from gpusim import ir
from gpusim.frontend import semantics as S
from gpusim.frontend.isa import Addr, Decoded, Imm, Named, Pred, Reg
from gpusim.frontend.memory import EmulationError

MNEMONICS = {"SYNCS", "UTMALDG", "UTMACCTL", "HGMMA", "WARPGROUP", "ELECT", "USETMAXREG"}
REFUSED = {
    "UTMASTG": "TMA tensor stores are not lowered yet (the IR has no TMA store)",
    "UBLKCP": "TMA bulk (non-tensor) copies are not emulated yet",
    "UTMAREDG": "TMA reductions are not emulated yet",
    **dict.fromkeys(("CGAERRBAR", "UCGABAR_ARV", "UCGABAR_WAIT", "UCGABAR_INIT"),
                    "thread-block clusters (barrier.cluster, distributed shared memory) need the cluster's CTAs "
                    "emulated together: not supported yet"),
}
PARAM_WINDOW = 0x7D00_0000_0000  # the generic address of c[0x0][PARAM_BASE] (the __grid_constant__ parameters)
COUNT_LIMIT = 1 << 20  # mbarrier arrival counts are below 2^20 (PTX)
WARP = 32


@dataclass
class Mbar:
    count: int
    arrived: int = 0
    tx: int = 0
    completions: int = 0

    def done(self) -> bool:
        return self.arrived >= self.count and self.tx <= 0


@dataclass
class Issue:
    """What one warp's Hopper instruction did (per batch CTA and warp), for the lowering."""

    bar: int = -1  # shared offset of the mbarrier
    phase: int = 0  # the phase it arrived on / waited for
    chunks: np.ndarray | None = None  # UTMALDG: byte offsets of the box's 16-byte chunks in the tensor (-1: outside)
    tensor: int = -1


@dataclass
class Record:
    """The payload of a recorded Hopper step: ``issues[(cta, warp)]``."""

    kind: str  # tma, arrive, wait, init, other
    issues: dict = field(default_factory=dict)


class State:
    """The mbarriers of the emulated CTAs, the lanes waiting on them, and the launch's tensor maps."""

    def __init__(self, m) -> None:
        self.m = m
        self.bars: dict[tuple[int, int], Mbar] = {}
        self.waiting: dict[tuple[int, int], dict[int, np.ndarray]] = {}
        self.tmaps = getattr(m.gmem, "tmaps", [])
        self.history: list[dict] = []  # completions of every barrier at each warm-up iteration of the tracked loop

    # --- loops: the mbarriers' phases follow the induction variables over a jump ---------------------------------
    def snapshot(self) -> None:
        self.history.append({k: b.completions for k, b in self.bars.items()})

    def reset_history(self) -> None:
        self.history = []

    def jump(self, lanes: np.ndarray, resume: np.ndarray, period: int) -> None:
        """The loop jumps to iteration ``resume`` (per lane): each barrier has completed the phases the warm-up's last
        period predicts (as :meth:`Machine._set_iteration` extrapolates the registers)."""
        a_max = len(self.history)
        for (c, off), b in self.bars.items():
            cl = lanes & (self.m.cta_of == c)
            if not cl.any():
                continue
            n = int(resume[cl].max())
            nn = max(n, 1)
            last = a_max - ((a_max - nn) % period)
            if last - 1 - period < 0:
                continue
            now = self.history[last - 1].get((c, off), 0)
            before = self.history[last - 1 - period].get((c, off), 0)
            b.completions = now + (now - before) * ((nn - last) // period)

    def may_jump(self, lanes: np.ndarray) -> bool:
        """Whether a loop may be jumped: not while other live threads of its CTAs run code of their own (a producer
        beside consumers), whose mbarrier phases the jump would leave behind."""
        ctas = np.isin(self.m.cta_of, np.unique(self.m.cta_of[lanes]))
        return not (ctas & ~self.m.exited & ~lanes).any()

    def check_done(self) -> None:
        for (c, off), waiting in self.waiting.items():
            if waiting:
                where = ", ".join(f"0x{self.m.program[pc].addr:04x}" for pc in waiting)
                b = self.bars.get((c, off))
                state = f"{b.arrived} of {b.count} arrivals, {b.tx} bytes pending" if b else "never initialised"
                raise EmulationError(f"CTA {self.m.ctas[c]}: the mbarrier at shared byte {off} never completes the "
                                     f"phase warps wait for at {where} ({state})")

    # --- the barrier state -------------------------------------------------------------------------------------
    def bar(self, c: int, off: int, d: Decoded) -> Mbar:
        b = self.bars.get((c, off))
        if b is None:
            raise EmulationError(f"{d.where}: CTA {self.m.ctas[c]} uses the mbarrier at shared byte {off} before "
                                 "initialising it (mbarrier.init)")
        return b

    def settle(self, c: int, off: int) -> None:
        b = self.bars[(c, off)]
        if b.done():
            b.completions += 1
            b.arrived = 0
            b.tx = 0
            for pc, lanes in self.waiting.pop((c, off), {}).items():
                self.m._goto(pc, lanes)


# --- emulation ------------------------------------------------------------------------------------------------
def _warps(m, em: np.ndarray):
    """(cta, warp, first lane) of each warp with an executing lane."""
    nw = m.N // WARP
    act = em.reshape(nw, WARP)
    out = []
    for w in np.nonzero(act.any(axis=1))[0]:
        first = int(w * WARP + np.argmax(act[w]))
        out.append((int(m.cta_of[first]), int(m.warp[first]), first))
    return out


def _shared(m, d: Decoded, a: Addr) -> np.ndarray:
    return m._address(d, a, "shared")


def _ur(m, idx: int, lane: int) -> int:
    return int(m.UR[idx, lane]) if idx != 63 else 0


def execute(m, d: Decoded, mask: np.ndarray, em: np.ndarray, cond_taint: int) -> None:
    """Execute a Hopper instruction (see the module docstring), record it and move its lanes on."""
    st: State = m.hopper
    mn = d.mnemonic
    nxt = d.index + 1
    rec = Record("other")
    if mn == "ELECT":  # ELECT Pd, URd, Pg: one lane (the lowest) of each warp's executing lanes is the leader
        pd = d.ops[0]
        nw = m.N // WARP
        act = em.reshape(nw, WARP)
        leader = np.zeros_like(act)
        has = act.any(axis=1)
        leader[np.arange(nw)[has], np.argmax(act, axis=1)[has]] = True
        S.put_p(m, pd, leader.reshape(-1), em, 0)
        if len(d.ops) > 1 and isinstance(d.ops[1], Reg) and not d.ops[1].zero:
            S.put(m, d.ops[1], np.repeat(np.argmax(act, axis=1), WARP).astype(np.uint32), em, 0)
    elif mn == "SYNCS":
        rec = _syncs(m, st, d, mask, em, cond_taint)
        if rec is None:  # lanes wait at the instruction (their step is recorded when they pass)
            return
    elif mn == "UTMALDG":
        rec = _tma_load(m, st, d, em)
    elif mn == "USETMAXREG" and d.ops and isinstance(d.ops[0], Pred):  # .TRY_ALLOC: the emulator has no register
        S.put_p(m, d.ops[0], np.ones(m.N, dtype=bool), em, 0)  # pool to run out of: the allocation succeeds
    mem = _mem(m, rec) if rec.kind != "other" else None
    m._record(d, mask, em, mem, cond_taint)
    m._goto(nxt, mask)


def _mem(m, rec: Record):
    from gpusim.frontend.machine import MemAccess

    return MemAccess("hopper", rec.kind, 16, np.full(m.N, -1, dtype=np.int64), extra=rec)


def _syncs(m, st: State, d: Decoded, mask, em, cond_taint) -> Record | None:
    ops = d.ops
    a = next(o for o in ops if isinstance(o, Addr))
    off = _shared(m, d, a)
    if d.has("EXCH"):  # mbarrier.init: SYNCS.EXCH.64 URZ, [bar], URv
        src = ops[-1]
        rec = Record("init")
        for c, w, lane in _warps(m, em):
            lo = int(m.UR[src.idx, lane] if src.uniform else m.R[src.idx, lane])
            count = (COUNT_LIMIT - ((lo >> 1) & (COUNT_LIMIT - 1))) & (COUNT_LIMIT - 1)
            if not m.probing:
                st.bars[(c, int(off[lane]))] = Mbar(max(count, 1))
            rec.issues[(c, w)] = Issue(int(off[lane]))
        return rec
    if d.has("ARRIVE"):  # mbarrier.arrive[.expect_tx]: each executing thread arrives (and expects its bytes)
        if d.has("RED"):
            raise S.unsupported(d, "arrivals on a cluster partner's mbarrier need the cluster emulated together: "
                                   "not supported yet")
        txr = next((o for o in ops[1:] if isinstance(o, Reg)), None)
        mult = re.search(r"A(\d+)T(\d+)", ".".join(d.mods))
        per = int(mult.group(1)) if mult else 1
        rec = Record("arrive")
        touched = set()
        for c, w, lane in _warps(m, em):
            lanes = em & (m.cta_of == c) & (m.warp == w)
            o = int(off[lane])
            b = st.bar(c, o, d)
            rec.issues[(c, w)] = Issue(o, b.completions)
            if m.probing:
                continue
            b.arrived += per * int(lanes.sum())
            if txr is not None and not txr.zero:
                v = (m.UR[txr.idx] if txr.uniform else m.R[txr.idx])[lanes]
                b.tx += int(v.astype(np.int64).sum())
            touched.add((c, o))
        for key in touched:
            st.settle(*key)
        if len(ops) and isinstance(ops[0], Reg) and not ops[0].zero:  # the state it returns: not modelled
            S.put(m, ops[0], np.zeros(m.N, np.uint32), em, 0)
        return rec
    if d.has("PHASECHK"):  # try_wait.parity / test_wait: passes where the phase of that parity has completed
        pd = ops[0]
        par = ops[-1]
        pv = ((m.UR[par.idx] if par.uniform else m.R[par.idx]) >> 31) & 1 if isinstance(par, Reg) else \
            np.full(m.N, (par.bits >> 31) & 1 if isinstance(par, Imm) else 0)
        ok = em.copy()
        rec = Record("wait")
        if not m.probing:
            for c, w, lane in _warps(m, em):
                o = int(off[lane])
                b = st.bar(c, o, d)
                lanes = em & (m.cta_of == c) & (m.warp == w)
                passed = (b.completions & 1) != pv[lanes]
                if passed.all():
                    rec.issues[(c, w)] = Issue(o, b.completions - 1)
                    continue
                if passed.any():
                    raise EmulationError(f"{d.where}: the lanes of one warp wait on different phases of one mbarrier")
                ok &= ~lanes
                waiting = st.waiting.setdefault((c, o), {})
                waiting[d.index] = waiting[d.index] | lanes if d.index in waiting else lanes
        S.put_p(m, pd, np.ones(m.N, dtype=bool), ok, 0)
        go = (mask & ~em) | ok
        if not go.any():
            return None
        if not ok.all() and ok.any() or (em & ~ok).any():  # some lanes wait: record and move the others only
            m._record(d, go, ok, _mem(m, rec), cond_taint)
            m._goto(d.index + 1, go)
            return None
        return rec
    raise S.unsupported(d, "this SYNCS operation")


def _tmap(m, st: State, d: Decoded, addr: int):
    """The tensor map at generic address ``addr`` (a parameter or global memory)."""
    from gpusim.frontend.machine import PARAM_BASE

    if PARAM_WINDOW <= addr < PARAM_WINDOW + (1 << 24):
        o = PARAM_BASE + addr - PARAM_WINDOW
        raw = m.const0[o:o + 12]
    else:
        ti, off = m.gmem.locate(np.array([addr], dtype=np.int64), 12, d.where)
        raw = bytes(m.gmem.read(ti, off, 12)[0])
    from gpusim.frontend.args import TMAP_MAGIC

    if len(raw) < 12 or raw[:8] != TMAP_MAGIC:
        raise EmulationError(f"{d.where}: reads a tensor map at 0x{addr:x} that is none of the launch's: pass it as "
                             "--arg NAME=tmap(TENSOR,DTYPE,[DIMS],[BOX],swizzle=S)")
    slot = struct.unpack("<I", raw[8:12])[0]
    return st.tmaps[slot]


def swizzled(off: np.ndarray, span: int) -> np.ndarray:
    """Shared byte offsets under the TMA swizzle of ``span`` bytes: address bits [4, 4+log2(span/16)) XOR bits
    [7, ...) (the 128B, 64B and 32B modes; 0: none)."""
    if not span:
        return off
    mask = (span // 16 - 1) << 4
    return off ^ ((off >> 3) & mask)


def _tma_load(m, st: State, d: Decoded, em) -> Record:
    dst, mp = d.ops[0], d.ops[1]
    if d.has("MULTICAST") or len(d.ops) > 2:
        raise S.unsupported(d, "TMA multicast needs the cluster's CTAs emulated together: not supported yet")
    rank = next((int(k[0]) for k in d.mods if re.fullmatch(r"[1-5]D", k)), 0)
    rec = Record("tma")
    for c, w, lane in _warps(m, em):
        u = dst.ureg.idx
        addr = _ur(m, mp.ureg.idx, lane) | (_ur(m, mp.ureg.idx + 1, lane) << 32)
        tm, tensor = _tmap(m, st, d, addr)
        if rank != len(tm.dims):
            raise EmulationError(f"{d.where}: a {rank}D copy with the {len(tm.dims)}D tensor map {tm.name}")
        sdst = (_ur(m, u, lane) & 0xFFFFFF) - 0x400
        bar = (_ur(m, u + 1, lane) & 0xFFFFFF) - 0x400
        coords = [np.int32(np.uint32(_ur(m, u + 2 + k, lane))) for k in range(rank)]
        chunks, _ = _box_chunks(tm, coords)
        nbytes = int(np.prod(tm.box)) * tm.elem_bytes
        if sdst < 0 or sdst + nbytes > m.launch.smem_bytes:
            raise EmulationError(f"{d.where}: the box of {nbytes} B at shared byte {sdst} is outside the CTA's "
                                 f"{m.launch.smem_bytes} B")
        rec.issues[(c, w)] = Issue(bar, 0, chunks, tensor)
        if m.probing:
            continue
        b = st.bar(c, bar, d)
        rec.issues[(c, w)].phase = b.completions
        if not m.skip_values:
            _copy_box(m, c, tm, tensor, chunks, sdst)
        b.tx -= nbytes
        st.settle(c, bar)
    return rec


def _box_chunks(tm, coords):
    """Byte offsets in the tensor of the box's 16-byte chunks, row by row (-1 where the row is outside the tensor:
    TMA fills it with zeros and reads nothing), and a row's bytes."""
    dims, box, eb = tm.dims, tm.box, tm.elem_bytes
    row_bytes = box[0] * eb
    per_row = row_bytes // 16
    outer = [np.arange(b) + c for b, c in zip(box[1:], coords[1:], strict=True)]
    rows = int(np.prod(box[1:])) if len(box) > 1 else 1
    lin = np.zeros(rows, dtype=np.int64)
    ok = np.ones(rows, dtype=bool)
    stride = dims[0]
    # the box's rows in memory order: the first outer dimension fastest
    idx = [g.reshape(-1) for g in reversed(np.meshgrid(*reversed(outer), indexing="ij"))] if outer else []
    for k, v in enumerate(idx):
        ok &= (v >= 0) & (v < dims[k + 1])
        lin += v.astype(np.int64) * stride
        stride *= dims[k + 1]
    x0 = int(coords[0])
    col = x0 + np.arange(per_row) * (16 // eb)
    col_ok = (col >= 0) & (col < dims[0])
    off = (lin[:, None] + col[None, :]) * eb
    chunks = np.where(ok[:, None] & col_ok[None, :], off, -1).reshape(-1)
    return chunks, row_bytes


def _copy_box(m, c, tm, tensor, chunks, sdst) -> None:
    valid = chunks >= 0
    data = np.zeros((len(chunks), 16), dtype=np.uint8)
    if valid.any():
        data[valid] = m.gmem.read(tensor, chunks[valid], 16)
    soff = sdst + np.arange(len(chunks), dtype=np.int64) * 16
    soff = swizzled(soff, tm.swizzle)
    flat = m.smem.reshape(-1)
    base = c * m.smem.shape[1] + soff
    flat[base[:, None] + np.arange(16)] = data
    from gpusim.frontend.machine import _set_words_taint
    from gpusim.frontend.memory import DATA, UNKNOWN

    _set_words_taint(m.smem_taint, soff, 16, DATA | (0 if m.gmem.tensors[tensor].given else UNKNOWN))


# --- lowering -------------------------------------------------------------------------------------------------
def hgemm_shape(d: Decoded) -> tuple[int, int, int]:
    k = next(x for x in d.mods if re.fullmatch(r"\d+x\d+x\d+", x))
    m_, n, kk = (int(v) for v in k.split("x"))
    return m_, n, kk


def is_commit(d: Decoded) -> bool:
    return d.mnemonic == "HGMMA" and any(isinstance(o, Named) and o.text.startswith("gsb") for o in d.ops)




LOWERED = {"UTMALDG", "HGMMA", "WARPGROUP"}  # (and SYNCS arrivals and waits) become IR operations of their own


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
        return lambda it, j, a=a, b=b, peel=peel: a * (it + peel) + b

    def ops(self, builder, unit) -> list:
        p = unit[0]
        d = p.inst
        from gpusim.frontend.lower import _cta_warps, _key_rec, _warps_tuple

        warps = _warps_tuple(self.ctx, _cta_warps(self.ctx, _key_rec(p), self.ctx.base))
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

    def _tma(self, builder, unit, name, fn, warps):
        from gpusim.frontend.lower import WARP as W

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
            per_cta.append(slots)
        op_name = builder._name(unit, "tma")
        book = builder.book(op_name, unit, per_cta)
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


def flops(d: Decoded) -> int:
    """Floating-point operations one warp's HGMMA stands for (a quarter of the warpgroup's m x n x k MMA)."""
    m_, n, k = hgemm_shape(d)
    return 2 * m_ * n * k // 4


def _lowering_error(msg: str):
    from gpusim.frontend.trace import LoweringError

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


def role_recs(recs, role: tuple[int, ...], warps_per_cta: int, program, n_ctas: int):
    """The recorded steps as the warps of ``role`` (in every batch CTA) executed them, with each step's iteration of
    the role's loop (the back edge it takes most), and that loop as the recorder describes one."""
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
    back = max(backs, key=lambda b: len(backs[b]))
    index_of = {d.addr: d.index for d in program}
    tgt = next(o.addr for o in program[back].ops if type(o).__name__ == "Target")
    head = index_of[tgt]
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


def merge_roles(kernels: list, role_list: list) -> tuple:
    """One IR program from the roles' programs: each role's operations (their warps disjoint) one after another,
    renamed apart; the loops' bodies joined (their trip counts must agree)."""
    import dataclasses

    pro, body, epi = [], [], []
    trips = {k.loop.trips for k in kernels if k.loop is not None}
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
