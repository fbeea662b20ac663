"""The emulated kernel as the engine's IR: memory operations, compute bundles, barriers and the dependencies between
them (see :mod:`gpusim.frontend.trace` for how the steps were recorded and cut into a prologue, a loop and an
epilogue)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from gpusim import ir
from gpusim.frontend import hopper_lower as hopper
from gpusim.frontend.isa import Decoded, Imm
from gpusim.frontend.machine import WARP
from gpusim.frontend.memory import DATA
from gpusim.frontend.trace import (SYNC_MNEMONICS, AddressBook, Batch, LoweringError, Segments, compact_full,
                                   compact_uneven, cta_warps, key_rec, pipe_of, reads_of, ref_of, stride_pair,
                                   stride_steps, strided, warps_tuple, writes_of)
from gpusim.kernel_checks import MAX_UNROLLED_OPERATIONS

MEMORY_KINDS = {"LDG": "ld", "LD": "ld", "LDS": "ld", "LDL": "ld", "STG": "st", "ST": "st", "STS": "st", "STL": "st",
                "LDSM": "ldsm", "STSM": "stsm", "LDGSTS": "cp"}
ATOMICS = {"ATOMS", "ATOMG", "ATOM", "RED", "REDG"}
LOCAL_TENSOR = "__local"  # local memory (spills, stack arrays), interleaved by thread as the hardware lays it out
FLOPS = {"FFMA": 2, "FADD": 1, "FMUL": 1, "HFMA2": 4, "HADD2": 2, "HMUL2": 2, "DFMA": 2, "DADD": 1, "DMUL": 1}
MMA_FLOPS = {"16816": 2 * 16 * 8 * 16, "1688": 2 * 16 * 8 * 8, "884": 2 * 8 * 8 * 4}


@dataclass
class Position:
    """One instruction of the program: its recorded steps by iteration slot."""

    part: str  # p(rologue), l(oop), e(pilogue)
    inst: Decoded
    recs: dict  # slot -> Rec


@dataclass
class Context:
    batch: Batch
    seg: Segments
    tensor_names: list[str]
    threads: int
    warps: int  # per CTA
    base: int  # batch index of the CTA whose warps decide who executes a compute bundle
    local_bytes: int
    grid_threads: int
    lane_trips: list | None = None  # jumped loop: per batch CTA, (W, 32) trips of each lane
    trip_strides: dict | None = None  # grid dimension -> (W, 32) trips added per interior CTA of that dimension
    match_slots_per_distinct_value: float = 1.0  # the config's [pipes] figure (Builder._match_slots)

    def __post_init__(self) -> None:
        b = self.batch
        if b.lane_trips is None:
            return
        T = self.warps * WARP
        self.lane_trips = [b.lane_trips[i * T:(i + 1) * T].reshape(self.warps, WARP) for i in range(len(b.ctas))]
        index = {c: i for i, c in enumerate(b.ctas)}
        self.trip_strides = {}
        for d in range(3):
            if strided(b.grid, d):
                one, two = stride_pair(b.grid, d)
                self.trip_strides[d] = self.lane_trips[index[two]] - self.lane_trips[index[one]]


def positions(seg: Segments, program: list[Decoded]) -> list[Position]:
    out = [Position("p", program[r.index], {0: r}) for r in seg.prologue]
    for k, idx in enumerate(seg.template):
        out.append(Position("l", program[idx], {slot: recs[k] for slot, recs in seg.slots.items()}))
    out += [Position("e", program[r.index], {0: r}) for r in seg.epilogue]
    return out


def _kind(pos: Position) -> str:
    mn = pos.inst.mnemonic
    if hopper.lowered(pos.inst):
        return "hopper"
    if mn in MEMORY_KINDS or mn in ATOMICS:
        return "mem"
    if mn in SYNC_MNEMONICS:
        return "sync"
    return "compute"


def _mem_key(pos: Position):
    r = key_rec(pos)
    return (pos.part, pos.inst.mnemonic, pos.inst.mods, r.space, r.kind, r.width, r.tensor, r.matrices)


def units(ctx: Context, pos: list[Position]) -> list[list[Position]]:
    """Consecutive instructions the IR takes as one operation: alike memory instructions (one op with ``repeat``),
    compute instructions on one pipe executed by the same warps (one bundle)."""
    out: list[list[Position]] = []
    prev = None
    for p in pos:
        kind = _kind(p)
        if kind == "mem":
            key = ("mem", _mem_key(p))
        elif kind == "compute":
            w = cta_warps(ctx, key_rec(p), ctx.base)
            # a MATCH is a bundle of its own: its pipe slots per instruction come from its values (Builder.compute)
            key = ("compute", p.part, pipe_of(p.inst), w.tobytes(), p.inst.mnemonic == "MATCH")
        else:
            key = None
        if key is not None and key == prev and (kind != "mem" or len(out[-1]) < 32):
            out[-1].append(p)
        else:
            out.append([p])
        prev = key
    return out


def split_at_loads(units_list: list[list[Position]]) -> list[list[Position]]:
    """Compute bundles cut where an instruction first reads what a load earlier in the same part wrote: the scoreboard
    holds each instruction until its own operands are back, so the instructions before the cut go on while the later
    load is still on its way (a bundle waits for every operation any of its instructions reads). A part whose cuts
    would take it past the operations the engine simulates in one pass (``MAX_UNROLLED_OPERATIONS``, counting two for
    each memory run) keeps its bundles whole."""
    out: list[list[Position]] = []
    for _, part in itertools.groupby(units_list, key=lambda u: u[0].part):
        whole = list(part)
        cut = _cut_part(whole)
        mem = sum(_kind(u[0]) == "mem" for u in whole)
        out += cut if len(cut) + mem <= MAX_UNROLLED_OPERATIONS else whole
    return out


def _cut_part(units_list: list[list[Position]]) -> list[list[Position]]:
    """One part's units, its compute bundles cut at each load an instruction first reads (:func:`split_at_loads`)."""
    loaded: dict[str, int] = {}  # register -> the load unit (index) that last wrote it in this part
    out: list[list[Position]] = []
    for i, u in enumerate(units_list):
        kind = _kind(u[0])
        if kind == "compute" and len(u) > 1:
            seen: set[int] = set()
            cur: list[Position] = []
            for p in u:
                new = {loaded[r] for r in reads_of(p.inst) if r in loaded} - seen
                if new and cur:
                    out.append(cur)
                    cur = []
                seen |= new
                cur.append(p)
                for r in writes_of(p.inst):  # overwritten: a later read is this bundle's own value
                    loaded.pop(r, None)
            out.append(cur)
            continue
        out.append(u)
        load = kind == "mem" and key_rec(u[0]).kind in ("ld", "ldsm")
        for p in u:
            for r in writes_of(p.inst):
                if load:
                    loaded[r] = i
                else:
                    loaded.pop(r, None)
    return out


def _slots_of(unit: list[Position]) -> list:
    return list(unit[0].recs)


def _addresses(ctx: Context, unit: list[Position], field: str = "addr") -> list[dict]:
    """Per batch CTA, per slot: (repeat, warps, 32) offsets of a memory unit."""
    n = len(ctx.batch.ctas)
    T = ctx.warps * WARP
    out = []
    for i in range(n):
        per = {}
        for slot in _slots_of(unit):
            rows = [getattr(p.recs[slot], field)[i * T:(i + 1) * T].reshape(ctx.warps, WARP) for p in unit]
            per[slot] = np.stack(rows)
        out.append(per)
    return out


def _local(ctx: Context, per_cta: list[dict], width: int) -> list[dict]:
    """Local-memory offsets as addresses in the interleaved local tensor: the ``width``-byte chunk c of thread t of the
    grid at ``(c * grid threads + t) * width``, so a warp's same chunk is contiguous, as the hardware lays it out."""
    width = max(width, 4)
    out = []
    gx, gy, _ = ctx.batch.grid
    for i, per in enumerate(per_cta):
        cx, cy, cz = ctx.batch.ctas[i]
        linear = cx + gx * (cy + gy * cz)
        tid = np.arange(ctx.warps * WARP).reshape(ctx.warps, WARP)
        gt = linear * ctx.threads + tid
        new = {}
        for slot, a in per.items():
            new[slot] = np.where(a >= 0, ((a // width) * ctx.grid_threads + gt) * width + a % width, a)
        out.append(new)
    return out


def _narrow_shared(per_cta: list[dict], width: int) -> tuple[list[dict], int]:
    """Shared accesses narrower than a bank word as the word they touch (lanes in one word share it: a broadcast)."""
    if width >= 4:
        return per_cta, width
    return [{k: np.where(a >= 0, a & ~3, a) for k, a in per.items()} for per in per_cta], 4


class Builder:
    """Turns units into IR operations, keeping the register producers for ``after=``."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.names: set[str] = set()
        self.used_local = False
        self.books: list[AddressBook] = []
        self.varying: set[str] = set()  # memory ops whose addresses come from data (Kernel.varying)

    def _name(self, unit: list[Position], what: str) -> str:
        base = f"{unit[0].part}_{what}_{unit[0].inst.addr:x}"
        name, k = base, 1
        while name in self.names:
            k += 1
            name = f"{base}_{k}"
        self.names.add(name)
        return name

    def _note_varying(self, name: str, unit: list[Position]) -> None:
        if any(r.taint & DATA for p in unit for r in p.recs.values()):
            self.varying.add(name)

    def book(self, name: str, unit: list[Position], per_cta: list[dict]) -> AddressBook:
        self._note_varying(name, unit)
        b = self.ctx.batch
        in_loop = unit[0].part == "l"
        trips = strides = None
        if in_loop and not self.ctx.seg.full:
            trips, strides = self.ctx.lane_trips, self.ctx.trip_strides
        if in_loop and self.ctx.seg.full:
            per_cta = [compact_full(s) for s in per_cta]
        if in_loop and self.ctx.seg.uneven:
            per_cta = [compact_uneven(s, int(t.max())) for s, t in zip(per_cta, self.ctx.lane_trips, strict=True)]
        book = AddressBook(name, per_cta, b.grid, b.ctas, in_loop, trips, self.ctx.seg.peel_first,
                           self.ctx.seg.period, self.ctx.seg.full, strides, self.ctx.seg.uneven)
        if in_loop:
            book.verify_loop()
        self.books.append(book)
        return book

    def memory(self, unit: list[Position]) -> list:
        d = unit[0].inst
        rec = key_rec(unit[0])
        mn = d.mnemonic
        stall = sum(p.inst.stall_cycles or 0 for p in unit)
        if mn == "LDGSTS":
            gname = self._name(unit, "ldgsts")
            sname = gname + "_st"
            self.names.add(sname)
            tensor = self.ctx.tensor_names[rec.tensor] if rec.tensor >= 0 else self.ctx.tensor_names[0]  # none read
            g = ir.Mem(gname, "global", "ld", rec.width, self.book(gname, unit, _addresses(self.ctx, unit)),
                       tensor, repeat=len(unit), group="cp.async", stall_cycles=stall)
            shared, width = _narrow_shared(_addresses(self.ctx, unit, "saddr"), rec.width)
            s = ir.Mem(sname, "shared", "st", width, self.book(sname, unit, shared), repeat=len(unit),
                       after=(gname,), async_copy=True, group="cp.async")
            return [g, s]
        per_cta = _addresses(self.ctx, unit)
        space, kind, width = rec.space, MEMORY_KINDS.get(mn, "st"), rec.width
        atomic = mn in ATOMICS
        tensor = ""
        if space == "local":
            per_cta = _local(self.ctx, per_cta, width)
            space, tensor = "global", LOCAL_TENSOR
            self.used_local = True
        elif space == "global":
            if rec.tensor < 0:  # no lane ever executed it in the batch
                tensor = self.ctx.tensor_names[0] if self.ctx.tensor_names else LOCAL_TENSOR
            else:
                tensor = self.ctx.tensor_names[rec.tensor]
        else:
            per_cta, width = _narrow_shared(per_cta, width)
        name = self._name(unit, mn.lower())
        extra = {}
        if kind in ("ldsm", "stsm"):
            extra["matrices"] = rec.matrices
            width = 16
        if atomic:  # ATOMS.POPC.INC (atomicAdd(p, 1)) combines the lanes on one word; the others serialize them
            extra["atomic"] = "words" if d.has("POPC") and d.has("INC") else "lanes"
            extra["reduction"] = space == "global" and mn in ("RED", "REDG")  # no result: ncu's op_red
            # a floating-point add (RED.E.ADD.F32.FTZ.RN): the L2 takes longer to apply it to one word
            extra["float_atomic"] = space == "global" and any(d.has(t) for t in ("F16x2", "BF16x2", "F32", "F64"))
        return [ir.Mem(name, space, kind, width, self.book(name, unit, per_cta), tensor, repeat=len(unit),
                       stall_cycles=stall, **extra)]

    def compute(self, unit: list[Position]) -> ir.Compute:
        d0 = unit[0].inst
        pipe = pipe_of(d0)
        depth: list[int] = []
        for i, p in enumerate(unit):
            r = reads_of(p.inst)
            dep = [depth[j] for j in range(i) if writes_of(unit[j].inst) & r]
            depth.append(1 + max(dep, default=0))
        chain = max(depth)
        n = len(unit)
        ilp = max(1, round(n / chain))
        stall = sum(p.inst.stall_cycles or 0 for p in unit)
        reads = 0.0
        if pipe == "fp32":
            reads = float(np.mean([p.inst.inst.register_reads for p in unit])) if unit[0].inst.inst else 0.0
        warps = warps_tuple(self.ctx, cta_warps(self.ctx, key_rec(unit[0]), self.ctx.base))
        units = self._match_slots(unit) if d0.mnemonic == "MATCH" else 1
        return ir.Compute(self._name(unit, pipe), pipe, n * units + self._reissues(unit), ilp, warps=warps,
                          stall_cycles=stall, register_reads=min(reads, 8.0), units=units, waits_for_results=False)

    @staticmethod
    def _reissues(unit: list[Position]) -> int:
        """The issues of the unit's BSYNCs beyond one a warp: a warp whose lanes reach a convergence barrier in
        several groups issues it once per group (the mean over every warp and iteration the emulator ran)."""
        return round(sum(_warp_mean([p], "issues", 1.0) - 1.0 for p in unit))

    def _match_slots(self, unit: list[Position]) -> int:
        """Shuffle-pipe slots one MATCH.ANY takes: ``[pipes] match_slots_per_distinct_value`` times the distinct
        values among a warp's executing lanes (measured: validate/micro/match.cu), their mean over every warp and
        iteration the emulator ran."""
        return max(1, round(self.ctx.match_slots_per_distinct_value * _warp_mean(unit, "distinct", 1.0)))

    def sync(self, unit: list[Position]):
        p = unit[0]
        d = p.inst
        warps_arr = cta_warps(self.ctx, key_rec(p), self.ctx.base)
        warps = warps_tuple(self.ctx, warps_arr)
        if d.mnemonic == "BAR":
            if self._guarded_off(unit):  # issued, but its guard lets no lane arrive: no barrier
                return [ir.Compute(self._name(unit, "int32"), "int32", 1, warps=warps)]
            if len(d.ops) > 1:  # a named barrier with a thread count: bar.sync id, n / bar.arrive id, n (BAR.ARV)
                count = d.ops[1].bits if isinstance(d.ops[1], Imm) else self.ctx.threads
                # (the CTA's every warp naming it: warps=None, as the engine keys a whole-CTA barrier)
                return [ir.Barrier(f"bar{bid}", None if len(ws) == self.ctx.warps else ws, members=-(-count // WARP),
                                   arrive=d.has("ARV")) for bid, ws in self._bar_groups(unit, warps_arr)]
            if warps is None:
                return [ir.Barrier(self._name(unit, "bar"))]
            return [ir.Barrier("__syncthreads", warps, members=self.ctx.warps)]
        if d.mnemonic in ("LDGDEPBAR", "UTMACMDFLUSH"):  # cp.async's and TMA stores' groups: one scoreboard (SB0)
            return [ir.Commit("cp.async", warps)]
        if d.mnemonic == "DEPBAR":
            n = next((o.bits for o in d.ops if isinstance(o, Imm)), 0)
            return [ir.WaitGroup("cp.async", n, warps)]
        if d.mnemonic == "MEMBAR":  # __threadfence: waits for the warp's stores to reach the L2
            return [ir.Fence(warps)]
        raise LoweringError(f"{d.where}: no IR operation for it")

    @staticmethod
    def _guarded_off(unit: list[Position]) -> bool:
        """Whether a BAR's guard was off in every warp that issued it, in every recorded execution (FA3's ``if (w ==
        0) bar.arrive``, seen by the other consumer warpgroup lowered as a role of its own)."""
        recs = [r for r in unit[0].recs.values() if not r.padded and r.bar is not None and r.warps.any()]
        return bool(recs) and all((r.bar[r.warps] < 0).all() for r in recs)

    def _bar_groups(self, unit: list[Position], warps_arr: np.ndarray) -> list[tuple[int, tuple[int, ...]]]:
        """A named barrier instruction's (barrier id, warps of the base CTA naming it): one instruction names a
        register's barrier, which differs by warp (FA3's consumer warpgroups each sync on their own turn's), the same
        in every recorded execution."""
        d = unit[0].inst
        lo = self.ctx.base * self.ctx.warps
        named: dict[int, int] = {}
        for r in unit[0].recs.values():
            if r.bar is None or r.padded:
                continue
            for w in np.nonzero(r.bar[lo:lo + self.ctx.warps] >= 0)[0]:
                b = int(r.bar[lo + w])
                if named.setdefault(int(w), b) != b:
                    raise LoweringError(f"{d.where}: warp {w} names barrier {named[int(w)]} and then {b} (a barrier "
                                        "id that changes over the loop's iterations): not supported yet")
        if not named:  # not recorded (a stand-in): the immediate's
            bid = d.ops[0].bits if isinstance(d.ops[0], Imm) else 0
            return [(bid, tuple(int(w) for w in np.nonzero(warps_arr)[0]))]
        groups: dict[int, list[int]] = {}
        for w, b in sorted(named.items()):
            groups.setdefault(b, []).append(w)
        return sorted((b, tuple(ws)) for b, ws in groups.items())


def _warp_mean(unit: list[Position], field: str, default: float) -> float:
    """The mean of a per-warp count the emulator recorded (``Rec.distinct``, ``Rec.issues``) over every warp that
    executed the unit's instructions, in every iteration it ran; ``default`` where none did."""
    seen = [a[a > 0] for p in unit for r in p.recs.values() if (a := getattr(r, field)) is not None]
    seen = np.concatenate(seen) if seen else np.zeros(0, np.int32)
    return float(seen.mean()) if seen.size else default


def _after(units_ops: list[tuple[list[Position], list]]) -> list:
    """Each op waits for the ops that last wrote the registers it reads: in the loop body the writer of the same
    iteration, else the previous iteration's and the prologue's."""
    producers: dict[str, str] = {}  # register -> op name (before the loop, then as the walk goes)
    out = []
    loop = [(u, ops) for u, ops in units_ops if u[0].part == "l"]
    body_last: dict[str, str] = {}
    for u, ops in loop:
        for reg in _unit_writes(u, ops):
            body_last[reg] = _producer(ops)
    in_body: dict[str, str] = {}
    for u, ops in units_ops:
        part = u[0].part
        if part == "e" and in_body:  # after the loop: its last writers
            producers.update(in_body)
            in_body = {}
        reads = _unit_reads(u)
        deps: set[str] = set()
        for reg in reads:
            if part == "l" and reg in in_body:
                deps.add(in_body[reg])
                continue
            if reg in producers:
                deps.add(producers[reg])
            if part == "l" and reg in body_last:
                deps.add(body_last[reg])
        target = ops[0]
        name = _producer(ops)
        deps.discard(name)
        deps.discard(None)
        if deps and hasattr(target, "after"):
            import dataclasses

            ops[0] = dataclasses.replace(target, after=tuple(sorted(set(target.after) | deps)))
        out.extend(ops)
        writes = _unit_writes(u, ops)
        for reg in writes:
            (in_body if part == "l" else producers)[reg] = name
    return out


def _producer(ops: list) -> str | None:
    op = ops[0]
    if isinstance(op, ir.Mem) and (op.kind in ("ld", "ldsm") and not op.group or op.atomic and not op.reduction):
        return op.name  # a load's data, or the old value an atomic returns
    if isinstance(op, ir.Compute):
        return op.name
    return None


def _unit_reads(u: list[Position]) -> set[str]:
    seen: set[str] = set()
    out: set[str] = set()
    for p in u:
        out |= reads_of(p.inst) - seen
        seen |= writes_of(p.inst)
    return out


def _unit_writes(u: list[Position], ops: list) -> set[str]:
    if _producer(ops) is None:
        return set()
    out: set[str] = set()
    for p in u:
        out |= writes_of(p.inst)
    return out


def flops_per_cta(ctx: Context, pos: list[Position], trips: int) -> int:
    total = 0
    for p in pos:
        d = p.inst
        per = FLOPS.get(d.mnemonic, 0) * WARP
        if d.mnemonic == "HMMA":
            shape = next((k for k in d.mods if k[0].isdigit()), "16816")
            per = MMA_FLOPS.get(shape, 0)
        if d.mnemonic == "HGMMA":
            per = hopper.flops(d)
        if not per:
            continue
        warps = int(cta_warps(ctx, key_rec(p), ctx.base).sum())
        total += per * warps * (trips if p.part == "l" else 1)
    return total


def _trips_dimension(trips_by_cta: dict) -> int | None:
    """The one grid dimension the emulated CTAs' trips follow (CTAs alike in it run alike), where the others'
    coordinates vary among them; None otherwise (a one-dimensional grid: its CTAs in launch order)."""
    ctas = list(trips_by_cta)
    for d in range(3):
        if len({c[d] for c in ctas}) == len(ctas) or all(len({c[e] for c in ctas}) == 1 for e in range(3) if e != d):
            continue
        by: dict[int, set] = {}
        for c, t in trips_by_cta.items():
            by.setdefault(c[d], set()).add(t)
        if all(len(v) == 1 for v in by.values()):
            return d
    return None


def build(name: str, program: list[Decoded], ctx: Context, launch: ir.Launch, tensors: list[ir.Tensor],
          source: str, notes: str, loop_insts: int) -> ir.Kernel:
    seg = ctx.seg
    pos = positions(seg, program)
    b = Builder(ctx)
    hop = hopper.Lowering(ctx, pos) if any(_kind(p) == "hopper" for p in pos) else None
    units_ops = []
    for u in split_at_loads(units(ctx, pos)):
        kind = _kind(u[0])
        if kind == "hopper":
            ops = hop.ops(b, u)
            if not ops:  # WARPGROUP.ARRIVE: its issue slot is the Commit's
                continue
        elif kind == "mem":
            ops = b.memory(u)
        elif kind == "sync":
            ops = b.sync(u)
        else:
            ops = [b.compute(u)]
        units_ops.append((u, ops))
    checks = [c for c in ctx.batch.ctas if ref_of(c, ctx.batch.grid) != c]
    irregular = sorted({book.name for book in b.books if not book.verify_ctas(checks)})
    if irregular:
        why = ("data-dependent addresses" if any(n in b.varying for n in irregular) else
               "addresses computed from the block index other than linearly: a modulo, a reordered tile")
        notes = "; ".join(x for x in (notes, f"{len(irregular)} memory operations ({', '.join(irregular[:4])}"
                                              f"{', ...' if len(irregular) > 4 else ''}) address CTAs other than by a "
                                              f"constant stride per block ({why}): CTAs outside "
                                              f"the {len(ctx.batch.ctas)} emulated take their nearest emulated "
                                              "CTA's addresses") if x)
    ops = _after(units_ops)
    if hop is not None:
        ops = hopper.accumulate_in_pipe(ops)
    # operations no warp of the base CTA executes (a border CTA's own code: its compute is not simulated, its memory
    # operations keep their addresses) are left out, and so are the waits for them
    gone = {getattr(o, "name", None) for o in ops if getattr(o, "warps", None) == ()} - {None}
    if gone:
        import dataclasses

        ops = [o if not set(getattr(o, "after", ())) & gone else
               dataclasses.replace(o, after=tuple(a for a in o.after if a not in gone)) for o in ops]
    keep = [getattr(o, "warps", None) != () for o in ops]
    parts = [u[0].part for u, unit_ops in units_ops for _ in unit_ops]
    pro = tuple(o for o, u, k in zip(ops, parts, keep, strict=True) if u == "p" and k)
    body = tuple(o for o, u, k in zip(ops, parts, keep, strict=True) if u == "l" and k)
    epi = tuple(o for o, u, k in zip(ops, parts, keep, strict=True) if u == "e" and k)
    batch = ctx.batch
    trips_by_cta = {}
    loop = None
    trips_of = None
    if body:
        peel = int(seg.peel_first) + int(seg.peel_last)
        for i, c in enumerate(batch.ctas):
            if seg.full:
                lo = ctx.warps * i
                active = [k for k, recs in seg.slots.items() if any(r.warps[lo:lo + ctx.warps].any() for r in recs)]
                trips_by_cta[c] = max(active, default=-1) + 1 - int(seg.peel_first)
            else:
                trips_by_cta[c] = int(ctx.lane_trips[i].max()) - peel
        base_c = batch.ctas[ctx.base]
        trips = trips_by_cta[base_c]
        loop = ir.Loop(max(trips, 1), body)
        if len(set(trips_by_cta.values())) > 1:
            gx, gy, _ = batch.grid
            cta_strides = {}
            for d in range(3):
                if strided(batch.grid, d):
                    one, two = stride_pair(batch.grid, d)
                    cta_strides[d] = trips_by_cta[two] - trips_by_cta[one]

            def by_strides(c: tuple[int, int, int]) -> int:
                ref = ref_of(c, batch.grid)
                return trips_by_cta[ref] + sum(stride_steps(c, ref, batch.grid, d) * g for d, g in cta_strides.items())

            # the strides between CTAs 1 and 2 predict the interior probes (causal attention: trips grow by a CTA's
            # rows); where they do not (a grid-stride loop: the first CTAs one trip more than the rest, a step no
            # stride describes), each CTA takes the trips of the emulated CTAs around it in launch order, linearly
            # between them
            steps = all(by_strides(c) == t for c, t in trips_by_cta.items())
            # where the trips follow one grid dimension alone (causal attention's query block, blockIdx.x, when its
            # trips are not affine in it: a key block wider than a query block), between its emulated coordinates
            dim = _trips_dimension(trips_by_cta)
            sampled = sorted(((c[0] + gx * (c[1] + gy * c[2])) if dim is None else c[dim], t)
                             for c, t in trips_by_cta.items())
            xs, ys = np.array([x for x, _ in sampled], float), np.array([t for _, t in sampled], float)

            def trips_of(linear: int) -> int:
                c = (linear % gx, (linear // gx) % gy, linear // (gx * gy))
                if c in trips_by_cta:
                    return max(trips_by_cta[c], 0)
                if steps:
                    return max(by_strides(c), 0)
                return max(round(float(np.interp(linear if dim is None else c[dim], xs, ys))), 0)
    flops = flops_per_cta(ctx, pos, loop.trips if loop else 1) * math.prod(batch.grid)
    if b.used_local:
        tensors = [*tensors, ir.Tensor(LOCAL_TENSOR, max(ctx.local_bytes, 4) * ctx.grid_threads, local=True)]
    return ir.Kernel(name, "cuda", tuple(batch.grid), {}, launch, pro, loop, epi, tuple(tensors), flops, source,
                     notes, mbarriers=hop.mbarriers() if hop else {}, trips_of=trips_of,
                     loop_sass_instructions=loop_insts, varying=frozenset(b.varying))
