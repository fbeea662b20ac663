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
- ``UTMASTG.nD [URs], [URm]``: the tuple is the source's shared address, then the box's coordinates; the box is read
  from shared memory with the map's swizzle and written to the tensor. ``UTMACMDFLUSH`` commits the thread's TMA
  stores as a bulk group and ``DEPBAR.LE SB0, n`` waits for all but ``n`` (``cp.async.bulk.commit_group`` /
  ``wait_group[.read]``: the same scoreboard as cp.async's groups).
- ``UBLKCP`` (``cp.async.bulk``, no tensor map): contiguous bytes, a load into shared memory completing an
  mbarrier's transactions as ``UTMALDG``'s box does, a store as ``UTMASTG``'s.
- ``HGMMA`` (wgmma.mma_async) and ``WARPGROUP.*`` change no address or control: their values are not computed.

Lowering: a ``UTMALDG`` is an :class:`gpusim.ir.Mem` of kind ``tma`` (its 16-byte chunks over ``repeat`` x 32
lanes of the issuing warp), arriving on an IR mbarrier; a ``UTMASTG`` one of kind ``tma_st`` in the ``cp.async``
group (``UTMACMDFLUSH`` its :class:`gpusim.ir.Commit`, ``DEPBAR`` the :class:`gpusim.ir.WaitGroup`);
``SYNCS.ARRIVE`` an :class:`gpusim.ir.Arrive`, the wait an :class:`gpusim.ir.MbarWait`; ``HGMMA`` a ``wgmma``
bundle of ``N/8`` pipe units; the ``gsb0`` of the group's last ``HGMMA`` a :class:`gpusim.ir.Commit` (it takes the
issue slot of the group's ``WARPGROUP.ARRIVE``, so the count stays the SASS's); ``WARPGROUP.DEPBAR.LE gsb0, n`` a
:class:`gpusim.ir.WaitGroup`. The physical mbarriers one instruction uses over the loop (a ring of stages) are one
IR mbarrier whose phases are numbered ``phase * barriers + index``.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

import numpy as np

from gpusim.frontend import semantics as S
from gpusim.frontend.isa import Addr, Decoded, Imm, Pred, Reg
from gpusim.frontend.memory import DATA, PARAM_BASE, UNKNOWN, EmulationError, MemAccess, set_words_taint

MNEMONICS = {"SYNCS", "UTMALDG", "UTMASTG", "UBLKCP", "UTMACCTL", "HGMMA", "WARPGROUP", "ELECT", "USETMAXREG"}
REFUSED = {
    "UTMAREDG": "TMA reductions are not emulated yet",
    "UCGABAR_INIT": "a cluster barrier's initialisation is not emulated",
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
    elif mn == "UTMASTG":
        rec = _tma_store(m, st, d, em)
    elif mn == "UBLKCP":
        rec = _bulk_copy(m, st, d, em)
    elif mn == "USETMAXREG" and d.ops and isinstance(d.ops[0], Pred):  # .TRY_ALLOC: the emulator has no register
        S.put_p(m, d.ops[0], np.ones(m.N, dtype=bool), em, 0)  # pool to run out of: the allocation succeeds
    mem = _mem(m, rec) if rec.kind != "other" else None
    m._record(d, mask, em, mem, cond_taint)
    m._goto(nxt, mask)


def _mem(m, rec: Record):

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
        # .RED: mbarrier.arrive.shared::cluster on the barrier of the CTA of the cluster the address's rank names
        ranks = m.cluster_rank(d, a) if d.has("RED") else None
        txr = next((o for o in ops[1:] if isinstance(o, Reg)), None)
        mult = re.search(r"A(\d+)T(\d+)", ".".join(d.mods))
        per = int(mult.group(1)) if mult else 1
        rec = Record("arrive")
        touched = set()
        for c, w, lane in _warps(m, em):
            lanes = em & (m.cta_of == c) & (m.warp == w)
            o = int(off[lane])
            if ranks is not None and len(set(ranks[lanes].tolist())) > 1:
                raise EmulationError(f"{d.where}: the lanes of one warp arrive on the mbarriers of different CTAs of "
                                     "the cluster")
            t = m.partner(c, int(ranks[lane]), d) if ranks is not None else c
            b = st.bar(t, o, d)
            # the IR takes a partner's arrival as one on the same barrier of the CTA's own (its partner, symmetric,
            # arrives on it)
            rec.issues[(c, w)] = Issue(o, b.completions)
            if m.probing:
                continue
            b.arrived += per * int(lanes.sum())
            if txr is not None and not txr.zero:
                v = (m.UR[txr.idx] if txr.uniform else m.R[txr.idx])[lanes]
                b.tx += int(v.astype(np.int64).sum())
            touched.add((t, o))
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


def _box(m, st: State, d: Decoded, tup, mp, lane: int, first_coord: int):
    """A tensor copy's box as ``lane`` names it: the map (``[URm]``), its tensor, the shared byte offset (the tuple's
    first register), the box's 16-byte chunks in the tensor (coordinates from the tuple's ``first_coord``-th
    register: 2 for a load, after its mbarrier; 1 for a store) and its bytes, checked inside the CTA's shared
    memory."""
    rank = next((int(k[0]) for k in d.mods if re.fullmatch(r"[1-5]D", k)), 0)
    u = tup.ureg.idx
    tm, tensor = _tmap(m, st, d, _ur(m, mp.ureg.idx, lane) | (_ur(m, mp.ureg.idx + 1, lane) << 32))
    if rank != len(tm.dims):
        raise EmulationError(f"{d.where}: a {rank}D copy with the {len(tm.dims)}D tensor map {tm.name}")
    soff = (_ur(m, u, lane) & 0xFFFFFF) - 0x400
    chunks, _ = _box_chunks(tm, [np.int32(np.uint32(_ur(m, u + first_coord + k, lane))) for k in range(rank)])
    nbytes = int(np.prod(tm.box)) * tm.elem_bytes
    if soff < 0 or soff + nbytes > m.launch.smem_bytes:
        raise EmulationError(f"{d.where}: the box of {nbytes} B at shared byte {soff} is outside the CTA's "
                             f"{m.launch.smem_bytes} B")
    return tm, tensor, soff, chunks, nbytes


def _tma_load(m, st: State, d: Decoded, em) -> Record:
    """``UTMALDG.nD [URd], [URm]`` (``.MULTICAST [URd], [URm], URk``: the box lands at the same shared byte of every
    CTA of the cluster whose bit is set in ``URk``'s upper half-word, ``cp.async.bulk.tensor...multicast::cluster``,
    and completes its bytes on each one's mbarrier there). The IR books the copy on the issuing CTA alone, whose
    partners' copies (symmetric: each loads its share and multicasts it) land with it."""
    dst, mp = d.ops[0], d.ops[1]
    multicast = d.has("MULTICAST")
    if len(d.ops) > 2 and not multicast or multicast and (len(d.ops) < 3 or not isinstance(d.ops[2], Reg)):
        raise S.unsupported(d, "this form of TMA load")
    rec = Record("tma")
    for c, w, lane in _warps(m, em):
        tm, tensor, sdst, chunks, nbytes = _box(m, st, d, dst, mp, lane, 2)
        bar = (_ur(m, dst.ureg.idx + 1, lane) & 0xFFFFFF) - 0x400
        rec.issues[(c, w)] = Issue(bar, 0, chunks, tensor)
        if m.probing:
            continue
        targets = [c]
        if multicast:
            bits = (_ur(m, d.ops[2].idx, lane) >> 16) & 0xFFFF
            targets = [m.partner(c, r, d) for r in range(16) if bits >> r & 1]
        rec.issues[(c, w)].phase = st.bar(targets[0] if c not in targets else c, bar, d).completions
        for t in targets:
            b = st.bar(t, bar, d)
            if not m.skip_values:
                _copy_box(m, t, tm, tensor, chunks, sdst)
            b.tx -= nbytes
            st.settle(t, bar)
    return rec


def _tma_store(m, st: State, d: Decoded, em) -> Record:
    """``UTMASTG.nD [URs], [URm]``: ``URs`` .. are the source's shared address, then the box's coordinates (no
    mbarrier: a store's completion is waited for as a bulk group, ``UTMACMDFLUSH`` then ``DEPBAR.LE SB0``). The box is
    read from shared memory with the map's swizzle and written to the tensor, rows outside it dropped."""
    src, mp = d.ops[0], d.ops[1]
    rec = Record("tma_st")
    for c, w, lane in _warps(m, em):
        tm, tensor, ssrc, chunks, _ = _box(m, st, d, src, mp, lane, 1)
        rec.issues[(c, w)] = Issue(-1, 0, chunks, tensor)
        if not m.probing and not m.skip_values:
            _store_box(m, c, tm, tensor, chunks, ssrc)
    return rec


def _bulk_copy(m, st: State, d: Decoded, em) -> Record:
    """``UBLKCP.S.G [URd], [URg], URn`` (``cp.async.bulk.shared::cluster.global``: ``URd`` the shared destination then
    the mbarrier, ``URg`` the global source, ``URn`` the size in 16-byte units) copies contiguous bytes into shared
    memory and completes their transactions on the mbarrier, as a one-row tensor box does; ``UBLKCP.G.S [URg], [URs],
    URn`` (``cp.async.bulk.global.shared::cta``) stores them, its completion a bulk group's, as ``UTMASTG``'s."""
    if "S" not in d.mods or "G" not in d.mods:
        raise S.unsupported(d, "a bulk copy other than global -> shared or shared -> global")
    load = d.mods.index("S") < d.mods.index("G")  # UBLKCP.S.G: into shared memory
    a0, a1, size = d.ops[0], d.ops[1], d.ops[2]
    rec = Record("tma" if load else "tma_st")
    for c, w, lane in _warps(m, em):
        n16 = _ur(m, size.idx, lane) if size.uniform else int(m.R[size.idx, lane])
        nbytes = 16 * n16
        g = a1 if load else a0
        gaddr = _ur(m, g.ureg.idx, lane) | (_ur(m, g.ureg.idx + 1, lane) << 32)
        sh = (_ur(m, (a0 if load else a1).ureg.idx, lane) & 0xFFFFFF) - 0x400
        if nbytes <= 0 or sh < 0 or sh + nbytes > m.launch.smem_bytes:
            raise EmulationError(f"{d.where}: a bulk copy of {nbytes} B at shared byte {sh} is outside the CTA's "
                                 f"{m.launch.smem_bytes} B")
        addrs = gaddr + 16 * np.arange(n16, dtype=np.int64)
        tensor, chunks = m.gmem.locate(addrs, 16, d.where)
        bar = (_ur(m, a0.ureg.idx + 1, lane) & 0xFFFFFF) - 0x400 if load else -1
        rec.issues[(c, w)] = Issue(bar, 0, chunks, tensor)
        if m.probing:
            continue
        soff = sh + 16 * np.arange(n16, dtype=np.int64)
        if load:
            b = st.bar(c, bar, d)
            rec.issues[(c, w)].phase = b.completions
            if not m.skip_values:
                _land_chunks(m, c, tensor, chunks, soff)
            b.tx -= nbytes
            st.settle(c, bar)
        elif not m.skip_values:
            _store_chunks(m, c, tensor, chunks, soff)
    return rec


def _store_box(m, c, tm, tensor, chunks, ssrc) -> None:
    _store_chunks(m, c, tensor, chunks, swizzled(ssrc + np.arange(len(chunks), dtype=np.int64) * 16, tm.swizzle))


def _store_chunks(m, c, tensor, chunks, soff) -> None:
    """CTA ``c``'s 16-byte chunks of shared memory at ``soff`` written to the tensor at ``chunks`` (-1: dropped)."""
    valid = chunks >= 0
    if valid.any():
        data = m.smem.reshape(-1)[(c * m.smem.shape[1] + soff)[:, None] + np.arange(16)]
        m.gmem.write(tensor, chunks[valid], data[valid])


def _land_chunks(m, c, tensor, chunks, soff) -> None:
    """The tensor's 16-byte chunks at ``chunks`` (-1: zeros, read from nowhere) landed in CTA ``c``'s shared memory at
    ``soff``, their taint the tensor's."""
    valid = chunks >= 0
    data = np.zeros((len(chunks), 16), dtype=np.uint8)
    if valid.any():
        data[valid] = m.gmem.read(tensor, chunks[valid], 16)
    m.smem.reshape(-1)[(c * m.smem.shape[1] + soff)[:, None] + np.arange(16)] = data
    set_words_taint(m.smem_taint, soff, 16, DATA | (0 if m.gmem.tensors[tensor].given else UNKNOWN))


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
    _land_chunks(m, c, tensor, chunks, swizzled(sdst + np.arange(len(chunks), dtype=np.int64) * 16, tm.swizzle))
