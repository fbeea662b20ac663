"""Which registers an instruction reads and writes (the def-use the lowering's dependencies and the emulator's
skipping of data-only instructions rest on)."""

from __future__ import annotations

from gpusim.frontend.isa import Addr, Decoded, Pred, Reg

NO_DEST = {"STG", "STS", "STL", "ST", "RED", "REDG", "LDGSTS", "BRA", "EXIT", "BAR", "CALL", "RET", "BSSY", "BSYNC",
           "WARPSYNC", "NOP", "DEPBAR", "LDGDEPBAR", "MEMBAR", "R2P", "FENCE", "ERRBAR", "CGAERRBAR", "CCTL", "YIELD",
           "BMOV", "JMP", "BRX", "NANOSLEEP", "STSM", "UTMALDG", "UTMASTG", "UTMACCTL", "WARPGROUP", "USETMAXREG",
           "UTMACMDFLUSH", "UBLKCP", "BREAK"}
TWO_PREDS = {"ISETP", "UISETP", "FSETP", "DSETP", "PLOP3", "UPLOP3", "HSETP2"}


def _leading_preds(ops, start: int = 0) -> int:
    k = start
    while k < len(ops) and isinstance(ops[k], Pred):
        k += 1
    return k - start


def dest_operands(d: Decoded) -> int:
    """How many of an instruction's leading operands it writes."""
    mn = d.mnemonic
    if mn in NO_DEST:
        return 0
    if mn in ("VOTE", "VOTEU"):  # VOTE.ANY R0, P0, P1 writes two; VOTEU.ALL UP0, P1 one (the last is the source)
        return min(2, len(d.ops) - 1)
    if mn in TWO_PREDS or mn in ("SHFL", "ELECT"):
        return 2
    if mn == "B2R":  # B2R.RESULT R7 / B2R.RESULT RZ, P0: a register and a predicate
        return len(d.ops)
    if mn in ("LOP3", "ULOP3", "ATOMS", "ATOMG", "ATOM", "MATCH", "FLO", "UFLO"):
        return _leading_preds(d.ops) + 1
    if mn in ("IADD3", "UIADD3", "LEA", "ULEA"):
        return 1 + _leading_preds(d.ops, 1)
    return 1


def _wide_mods(d: Decoded) -> int:
    return next((int(k) // 32 for k in d.mods if k in ("64", "128")), 1)


def _regs_of(d: Decoded, i: int, dest: bool) -> int:
    """Registers operand ``i`` spans (vector loads and stores, MMA fragments, 64-bit values)."""
    mn = d.mnemonic
    if mn in ("DADD", "DMUL", "DFMA", "DSETP") or (mn in ("F2F", "I2F", "F2I") and d.has("F64", "S64", "U64")):
        return 2
    if dest and i == 0:
        if mn in ("LDG", "LDS", "LDL", "LD", "LDC", "ULDC", "ATOMS", "ATOMG", "ATOM"):
            return _wide_mods(d)
        if mn == "LDSM":
            return int(d.mods[-1]) if d.mods and d.mods[-1].isdigit() else 1
        if mn in ("HMMA", "IMMA", "DMMA"):
            return 4 if d.has("F32") or mn != "HMMA" else 2
        if mn in ("IMAD", "UIMAD") and d.has("WIDE") or mn == "CS2R":
            return 2
    if not dest:
        if mn in ("STG", "STS", "STL", "ST") and i == 1:
            return _wide_mods(d)
        if mn == "HMMA":
            return {1: 4, 2: 2, 3: 4}.get(i, 1)
        if mn == "STSM" and i == 1:
            return int(d.mods[-1]) if d.mods and d.mods[-1].isdigit() else 1
        if mn in ("IMAD", "UIMAD") and d.has("WIDE") and i == 3:
            return 2
    return 1


def _names(r: Reg, n: int) -> list[str]:
    if r.zero:
        return []
    return [f"{'U' if r.uniform else ''}R{r.idx + k}" for k in range(n)]


def reads_of(d: Decoded) -> set[str]:
    """Registers (``R5``, ``UR4``, ``P0``) an instruction reads."""
    out: set[str] = set()
    for i, o in enumerate(d.ops[dest_operands(d):], start=dest_operands(d)):
        if isinstance(o, Reg):
            out.update(_names(o, 2 if o.wide else _regs_of(d, i, False)))
        elif isinstance(o, Pred) and o.idx != 7:
            out.add(f"{'U' if o.uniform else ''}P{o.idx}")
        elif isinstance(o, Addr):
            for r in (o.reg, o.ureg):
                if r is not None:
                    out.update(_names(r, _tuple_regs(d, i) or (2 if r.wide else 1)))
    if d.guard is not None:
        out.add(f"{'U' if d.guard.uniform else ''}P{d.guard.idx}")
    return out


def _tuple_regs(d: Decoded, i: int) -> int:
    """Uniform registers a TMA operand spans: the destination tuple (shared address, mbarrier, coordinates), the
    tensor map's 64-bit address."""
    if d.mnemonic == "UBLKCP":  # [shared, mbarrier] or [64-bit global] first, then the other
        load = d.mods.index("S") < d.mods.index("G") if "S" in d.mods and "G" in d.mods else True
        return 2 if i == 0 or (i == 1 and load) else 1
    if d.mnemonic in ("UTMALDG", "UTMASTG", "UTMACCTL"):
        rank = next((int(k[0]) for k in d.mods if len(k) == 2 and k[1] == "D" and k[0].isdigit()), 0)
        if i == 1 or d.mnemonic == "UTMACCTL":
            return 2
        return (1 if d.mnemonic == "UTMASTG" else 2) + rank  # a store's tuple has no mbarrier
    return 0


def writes_of(d: Decoded) -> set[str]:
    out: set[str] = set()
    for i, o in enumerate(d.ops[:dest_operands(d)]):
        if isinstance(o, Reg):
            out.update(_names(o, _regs_of(d, i, True)))
        elif isinstance(o, Pred) and o.idx != 7:
            out.add(f"{'U' if o.uniform else ''}P{o.idx}")
    return out


LOADS = {"LDG", "LD", "LDS", "LDL", "LDSM", "ATOMS", "ATOMG", "ATOM"}
ACCESSES = LOADS | {"STG", "ST", "STS", "STL", "LDGSTS", "RED", "REDG", "STSM"}
# TMA copies and mbarriers: every register they read matters
HOPPER = {"UTMALDG", "UTMASTG", "UBLKCP", "UTMACCTL", "SYNCS"}
FLOW = {"BRA", "JMP", "BRX", "JMX", "CALL", "RET", "EXIT", "BAR"}
# instructions whose cost depends on their operands' values (MATCH: its distinct values, Machine.distinct): their
# sources are needed like a branch's, and they are never skipped
COSTED = {"MATCH"}
ALL_PREDICATES = {f"P{k}" for k in range(7)}


def _reads(d: Decoded) -> set[str]:
    out = reads_of(d)
    if d.mnemonic == "P2R":
        out |= ALL_PREDICATES
    return out


def _writes(d: Decoded) -> set[str]:
    out = writes_of(d)
    if d.mnemonic == "R2P":
        out |= ALL_PREDICATES
    return out


def _successors(program: list[Decoded]) -> list[list[int]]:
    """Each instruction's possible next instructions (a RET may return after any CALL)."""
    index = {d.addr: d.index for d in program}
    returns = [d.index + 1 for d in program if d.mnemonic == "CALL"]
    out = []
    for d in program:
        nxt = [d.index + 1] if d.index + 1 < len(program) else []
        target = next((o.addr for o in d.ops if hasattr(o, "addr") and type(o).__name__ == "Target"), None)
        if d.mnemonic in ("BRA", "JMP", "CALL"):
            t = index.get(target)
            if d.guard is None and not any(isinstance(o, Pred) for o in d.ops):
                nxt = []  # unconditional
            if t is not None:
                nxt.append(t)
        elif d.mnemonic in ("RET", "BRX", "JMX"):
            nxt = list(returns) if d.mnemonic == "RET" else list(range(len(program)))
        elif d.mnemonic == "EXIT" and d.guard is None:
            nxt = []
        out.append(nxt)
    return out


def control_liveness(program: list[Decoded]) -> tuple[list[int], dict[str, int]]:
    """Backward liveness of the registers that decide addresses, branches and barriers: for each instruction the
    bitset of registers whose value after it can still reach such a use (directly, or through an instruction whose
    result does). Bits index the returned name -> bit map."""
    names: dict[str, int] = {}

    def bits(regs: set[str]) -> int:
        b = 0
        for r in regs:
            b |= 1 << names.setdefault(r, len(names))
        return b

    reads = [bits(_reads(d)) for d in program]
    writes = [bits(_writes(d)) for d in program]
    direct = []
    for d in program:
        if d.mnemonic in ACCESSES:
            regs = {f"{'U' if r.uniform else ''}R{r.idx + k}" for o in d.ops if isinstance(o, Addr)
                    for r in (o.reg, o.ureg) if r is not None and not r.zero for k in range(2 if r.wide else 1)}
            if d.guard is not None:
                regs.add(f"{'U' if d.guard.uniform else ''}P{d.guard.idx}")
            if d.mnemonic == "LDGSTS":  # its source-size predicate decides which lanes read (Machine._ldgsts)
                regs |= {f"{'U' if o.uniform else ''}P{o.idx}" for o in d.ops[2:] if isinstance(o, Pred) and o.idx != 7}
            direct.append(bits(regs))
        elif d.mnemonic in FLOW or d.mnemonic in HOPPER or d.mnemonic in COSTED:
            direct.append(bits(_reads(d)))
        else:
            direct.append(0)
    succ = _successors(program)
    preds: list[list[int]] = [[] for _ in program]
    for i, ss in enumerate(succ):
        for j in ss:
            preds[j].append(i)
    live_out = [0] * len(program)
    live_in = [0] * len(program)
    work = list(range(len(program) - 1, -1, -1))
    queued = set(work)
    while work:
        i = work.pop()
        queued.discard(i)
        out = 0
        for j in succ[i]:
            out |= live_in[j]
        live_out[i] = out
        d = program[i]
        kill = 0 if d.guard is not None else writes[i]
        needed = direct[i]
        if writes[i] & out and d.mnemonic not in LOADS:
            needed |= reads[i]
        new_in = (out & ~kill) | needed
        if new_in != live_in[i]:
            live_in[i] = new_in
            for p in preds[i]:
                if p not in queued:
                    queued.add(p)
                    work.append(p)
    return live_out, names


def data_only(program: list[Decoded], supported) -> tuple[set[int], bool]:
    """Instructions whose results never reach an address, a branch or a barrier, and whether loads may skip
    reading their values: both only where no loaded value can reach one (memory contents then feed control and
    every stored value matters). The emulator may skip them: the steps, addresses and trip counts come out the
    same, the data (stores' values) does not."""
    live_out, names = control_liveness(program)
    writes = [sum(1 << names[r] for r in _writes(d) if r in names) for d in program]
    if any(writes[d.index] & live_out[d.index] for d in program if d.mnemonic in LOADS):
        return set(), False
    kept = ACCESSES | FLOW | COSTED
    skip = {d.index for d in program if d.mnemonic in supported and d.mnemonic not in kept and _writes(d)
            and not (writes[d.index] & live_out[d.index])}
    return skip, True
