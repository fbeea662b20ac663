"""What each SASS instruction does to the emulated registers and memories: one function per mnemonic.

Every function takes the machine (:class:`gpusim.frontend.machine.Machine`), the decoded instruction and the mask of
lanes that execute it (their group is at this instruction and its guard predicate holds), reads its sources as
vectors over all lanes of the emulated CTAs and writes its destinations where the mask is set. Integer registers are
``uint32`` vectors, floats their fp32 view; 64-bit values live in register pairs. The table :data:`SEMANTICS` is the
explicit list of what the front-end supports: an instruction outside it is an error naming it, never a no-op.
Control flow (branches, calls, exit) is the machine's; memory instructions return what they touched so the machine can
record it.
"""

from __future__ import annotations


import numpy as np

from gpusim.frontend.isa import Addr, Const, Decoded, Imm, Pred, Reg, Special
from gpusim.frontend.memory import UNKNOWN, EmulationError

U32 = np.uint32
MASK32 = np.uint64(0xFFFFFFFF)


def unsupported(d: Decoded, why: str = "") -> EmulationError:
    return EmulationError(f"{d.where}: unsupported instruction {d.mnemonic}{('.' + '.'.join(d.mods)) if d.mods else ''}"
                          f"{': ' + why if why else ''} (see docs/your-kernel.md for what the front-end emulates)")


# --- operand access -----------------------------------------------------------------------------------------------
def raw(m, op) -> np.ndarray:
    """The 32-bit pattern of an operand over all lanes (no modifiers applied)."""
    if isinstance(op, Reg):
        return (m.UR if op.uniform else m.R)[op.idx]
    if isinstance(op, Imm):
        return np.full(m.N, op.bits, dtype=U32)
    if isinstance(op, Const):
        return m.const32(op)
    if isinstance(op, Special):
        return m.special(op.name)
    raise EmulationError(f"cannot read {op!r} as a value")


def u32(m, op) -> np.ndarray:
    """An integer operand with its modifiers: ``~`` (not), ``-`` (two's complement), ``|x|``."""
    v = raw(m, op)
    if isinstance(op, Reg | Const):
        if getattr(op, "absolute", False):
            v = np.abs(v.view(np.int32)).view(U32)
        if getattr(op, "inv", False):
            v = ~v
        if getattr(op, "neg", False):
            v = (U32(0) - v).astype(U32)
    return v


def s32(m, op) -> np.ndarray:
    return u32(m, op).view(np.int32)


def f32(m, op) -> np.ndarray:
    """A float operand with ``-`` and ``|x|`` applied."""
    v = raw(m, op).view(np.float32)
    if isinstance(op, Reg):
        if op.absolute:
            v = np.abs(v)
        if op.neg:
            v = -v
    elif isinstance(op, Const) and op.reg is None:
        pass
    return v


def f64(m, op) -> np.ndarray:
    if isinstance(op, Reg):
        arr = m.UR if op.uniform else m.R
        lo = arr[op.idx].astype(np.uint64) if not op.zero else np.zeros(m.N, np.uint64)
        hi = arr[op.idx + 1].astype(np.uint64) if not op.zero else np.zeros(m.N, np.uint64)
        v = (lo | (hi << np.uint64(32))).view(np.float64)
        if op.absolute:
            v = np.abs(v)
        if op.neg:
            v = -v
        return v
    if isinstance(op, Imm):  # a double immediate is written as a decimal number
        return np.full(m.N, op.value, dtype=np.float64)
    if isinstance(op, Const):
        lo = m.const32(op).astype(np.uint64)
        hi = m.const32(Const(op.bank, op.offset + 4, op.reg)).astype(np.uint64)
        return (lo | (hi << np.uint64(32))).view(np.float64)
    raise EmulationError(f"cannot read {op!r} as a double")


def u64(m, op) -> np.ndarray:
    """A register pair (or a 32-bit operand zero-extended) as uint64."""
    if isinstance(op, Reg) and not op.zero:
        arr = m.UR if op.uniform else m.R
        return arr[op.idx].astype(np.uint64) | (arr[op.idx + 1].astype(np.uint64) << np.uint64(32))
    if isinstance(op, Const):
        lo = m.const32(op).astype(np.uint64)
        hi = m.const32(Const(op.bank, op.offset + 4, op.reg)).astype(np.uint64)
        return lo | (hi << np.uint64(32))
    return u32(m, op).astype(np.uint64)


def pred(m, op) -> np.ndarray:
    if isinstance(op, Pred):
        v = (m.UP if op.uniform else m.P)[op.idx]
        return ~v if op.neg else v
    raise EmulationError(f"expected a predicate, got {op!r}")


def tor(a, b):
    """The union of two taints, each a number (the same for every lane) or a per-lane vector."""
    if isinstance(a, int) and isinstance(b, int):
        return a | b
    return np.bitwise_or(a, b, dtype=np.uint8)


def any_taint(t, mask=None) -> int:
    """The bits a taint has on any lane (of ``mask``)."""
    if isinstance(t, int):
        return t
    v = t if mask is None else t[mask]
    return int(np.bitwise_or.reduce(v)) if len(v) else 0


def taint(m, *ops):
    """The taint of an instruction's sources: a number, or a per-lane vector where lanes differ."""
    t = 0
    for op in ops:
        if isinstance(op, Reg):
            tt = m.URt if op.uniform else m.Rt
            t = tor(t, tt[op.idx])
            if op.wide and not op.zero:
                t = tor(t, tt[op.idx + 1])
        elif isinstance(op, Pred):
            t = tor(t, (m.UPt if op.uniform else m.Pt)[op.idx])
        elif isinstance(op, Addr):
            t = tor(t, taint(m, *(r for r in (op.reg, op.ureg) if r is not None)))
        elif isinstance(op, Const) and op.reg is not None:
            t = tor(t, taint(m, op.reg))
    return t


def _set_taint(m, tt: list, idx: int, t, em) -> None:
    old = tt[idx]
    if m.full or (isinstance(old, int) and isinstance(t, int) and old == t):
        tt[idx] = t
    else:
        tt[idx] = np.where(em, t, old).astype(np.uint8)


def put(m, reg, val, em, t: int = 0) -> None:
    """Write ``val`` (uint32 or int32 or float32 vector, taken as its 32 bits) to ``reg`` where ``em``."""
    if not isinstance(reg, Reg):
        raise EmulationError(f"expected a destination register, got {reg!r}")
    if reg.zero:
        return
    arr = m.UR if reg.uniform else m.R
    v = np.asarray(val)
    if v.dtype != U32:
        v = v.astype(v.dtype.newbyteorder("=")).view(U32) if v.dtype.itemsize == 4 else v.astype(U32)
    v = np.broadcast_to(v, (m.N,))
    if m.full:
        arr[reg.idx] = v
    else:
        arr[reg.idx] = np.where(em, v, arr[reg.idx])
    _set_taint(m, m.URt if reg.uniform else m.Rt, reg.idx, t, em)


def put_f(m, reg, val, em, t: int = 0) -> None:
    put(m, reg, np.asarray(val, dtype=np.float32).view(U32), em, t)


def put64(m, reg, val, em, t: int = 0) -> None:
    v = np.asarray(val).astype(np.uint64)
    put(m, reg, (v & MASK32).astype(U32), em, t)
    if not reg.zero:
        put(m, Reg(reg.uniform, reg.idx + 1), (v >> np.uint64(32)).astype(U32), em, t)


def put_p(m, p, val, em, t: int = 0) -> None:
    if not isinstance(p, Pred):
        raise EmulationError(f"expected a destination predicate, got {p!r}")
    if p.idx == 7:  # PT / UPT: discarded
        return
    arr = m.UP if p.uniform else m.P
    v = np.broadcast_to(np.asarray(val, dtype=bool), (m.N,))
    arr[p.idx] = v if m.full else np.where(em, v, arr[p.idx])
    _set_taint(m, m.UPt if p.uniform else m.Pt, p.idx, t, em)


def _lut(a, b, c, lut: int):
    out = np.zeros_like(a)
    for k in range(8):
        if lut >> k & 1:
            x = a if k & 4 else ~a
            y = b if k & 2 else ~b
            z = c if k & 1 else ~c
            out |= x & y & z
    return out


def _imm(op, d: Decoded) -> int:
    if not isinstance(op, Imm):
        raise unsupported(d, "expected an immediate")
    return op.bits


# --- integer ------------------------------------------------------------------------------------------------------
def mov(m, d, em):
    dst, src = d.ops[0], d.ops[1]
    put(m, dst, raw(m, src), em, taint(m, src))


def imad(m, d, em):
    ops = d.ops
    t = taint(m, *ops[1:])
    if d.has("WIDE"):
        a, b = ops[1], ops[2]
        if d.has("U32"):
            prod = u32(m, a).astype(np.uint64) * u32(m, b).astype(np.uint64)
        else:
            prod = (s32(m, a).astype(np.int64) * s32(m, b).astype(np.int64)).astype(np.uint64)
        c = u64(m, ops[3]) if isinstance(ops[3], Reg) else u32(m, ops[3]).astype(np.uint64)
        put64(m, ops[0], prod + c, em, t)
        return
    a, b, c = (u32(m, o) for o in ops[1:4])
    if d.has("HI"):
        # the high word of a * b plus the 64-bit addend {c+1 : c} (a register pair; an immediate zero-extended)
        c64 = u64(m, ops[3]) if isinstance(ops[3], Reg) else c.astype(np.uint64)
        if d.has("U32"):
            prod = a.astype(np.uint64) * b.astype(np.uint64)
        else:
            prod = (a.view(np.int32).astype(np.int64) * b.view(np.int32).astype(np.int64)).astype(np.uint64)
        v = ((prod + c64) >> np.uint64(32)) & MASK32
        if d.has("X") and len(ops) > 4:
            v = (v + pred(m, ops[4]).astype(np.uint64)) & MASK32
        put(m, ops[0], v.astype(U32), em, t)
        return
    v = (a.astype(np.uint64) * b.astype(np.uint64) + c.astype(np.uint64))
    if d.has("X") and len(ops) > 4:
        v = v + pred(m, ops[4]).astype(np.uint64)
    put(m, ops[0], (v & MASK32).astype(U32), em, t)


def iadd3(m, d, em):
    ops = list(d.ops)
    dst = ops.pop(0)
    couts = []
    while ops and isinstance(ops[0], Pred):
        couts.append(ops.pop(0))
    srcs, cins = ops[:3], ops[3:]
    t = taint(m, *srcs, *cins)
    total = np.zeros(m.N, dtype=np.uint64)
    for s in srcs:
        v = raw(m, s)
        if isinstance(s, Reg | Const) and getattr(s, "inv", False):
            total += (~v).astype(np.uint64)
        elif isinstance(s, Reg | Const) and getattr(s, "neg", False):
            total += (~v).astype(np.uint64) + np.uint64(1)
        else:
            total += v.astype(np.uint64)
    if d.has("X"):
        for c in cins:
            total += pred(m, c).astype(np.uint64)
    put(m, dst, (total & MASK32).astype(U32), em, t)
    carry = total >> np.uint64(32)
    for k, p in enumerate(couts):
        put_p(m, p, ((carry >> np.uint64(k)) & np.uint64(1)).astype(bool), em, t)


def viadd(m, d, em):
    a, b = d.ops[1], d.ops[2]
    put(m, d.ops[0], (u32(m, a) + u32(m, b)).astype(U32), em, taint(m, a, b))


def lea(m, d, em):
    ops = list(d.ops)
    dst = ops.pop(0)
    cout = ops.pop(0) if ops and isinstance(ops[0], Pred) else None
    t = taint(m, *ops)
    if d.has("HI"):
        # LEA.HI d, a, b, c, s[, P]: the high word of ({c, a} << s) plus b (plus the carry P with .X); .SX32: c is
        # a's sign
        if d.has("SX32"):
            a, b, s = ops[0], ops[1], ops[2]
            hi = (s32(m, a) >> 31).view(U32)
            rest = ops[3:]
        else:
            a, b, c, s = ops[0], ops[1], ops[2], ops[3]
            hi = u32(m, c)
            rest = ops[4:]
        sh = _imm(s, d) & 63
        wide = (hi.astype(np.uint64) << np.uint64(32)) | u32(m, a).astype(np.uint64)
        v = ((wide << np.uint64(sh)) >> np.uint64(32)) & MASK32
        v = v + u32(m, b).astype(np.uint64)
        if d.has("X") and rest:
            v = v + pred(m, rest[0]).astype(np.uint64)
    else:
        a, b, s = ops[0], ops[1], ops[2]
        sh = _imm(s, d) & 31
        v = ((u32(m, a).astype(np.uint64) << np.uint64(sh)) & MASK32) + u32(m, b).astype(np.uint64)
        if d.has("X") and len(ops) > 3:
            v = v + pred(m, ops[3]).astype(np.uint64)
    put(m, dst, (v & MASK32).astype(U32), em, t)
    if cout is not None:
        put_p(m, cout, (v >> np.uint64(32)).astype(bool), em, t)


def lop3(m, d, em):
    ops = list(d.ops)
    pout = None
    if isinstance(ops[0], Pred):  # LOP3.LUT P0, RZ, a, b, c, lut, !PT
        pout = ops.pop(0)
    dst, a, b, c, lut = ops[:5]
    rest = ops[5:]
    if rest and not (isinstance(rest[0], Pred) and rest[0].const_false):
        raise unsupported(d, "a predicate input other than !PT")
    t = taint(m, a, b, c)
    v = _lut(u32(m, a), u32(m, b), u32(m, c), _imm(lut, d))
    put(m, dst, v, em, t)
    if pout is not None:
        put_p(m, pout, v != 0, em, t)


def plop3(m, d, em):
    p0, p1, a, b, c, lut, lut2 = d.ops[:7]
    va, vb, vc = (pred(m, x).astype(np.uint8) for x in (a, b, c))
    t = taint(m, a, b, c)
    put_p(m, p0, _lut(va, vb, vc, _imm(lut, d)) & 1 != 0, em, t)
    put_p(m, p1, _lut(va, vb, vc, _imm(lut2, d)) & 1 != 0, em, t)


def shf(m, d, em):
    dst, lo, s, hi = d.ops[:4]
    t = taint(m, lo, s, hi)
    sh = u32(m, s).astype(np.uint64)
    signed = d.has("S32", "S64")
    wide64 = d.has("U64", "S64")
    lo_v, hi_v = u32(m, lo).astype(np.uint64), u32(m, hi)
    if d.has("L"):
        val = (hi_v.astype(np.uint64) << np.uint64(32)) | lo_v
        sh = np.minimum(sh, np.uint64(63 if wide64 else 32))
        res = (val << sh) & np.uint64(0xFFFFFFFFFFFFFFFF)
        out = (res >> np.uint64(32)) if d.has("HI") else (res & MASK32)
    else:
        sh = np.minimum(sh, np.uint64(63 if wide64 else 32))
        if signed:
            val = ((hi_v.view(np.int32).astype(np.int64) << 32) | lo_v.astype(np.int64))
            res = (val >> sh.astype(np.int64)).astype(np.uint64)
        else:
            val = (hi_v.astype(np.uint64) << np.uint64(32)) | lo_v
            res = val >> sh
        out = (res >> np.uint64(32)) & MASK32 if d.has("HI") else res & MASK32
    put(m, dst, out.astype(U32), em, t)


def shl_shr(m, d, em):  # SHL / SHR (older encodings)
    dst, a, s = d.ops[:3]
    sh = np.minimum(u32(m, s), U32(32)).astype(np.uint64)
    if d.mnemonic == "SHL":
        v = (u32(m, a).astype(np.uint64) << sh) & MASK32
    elif d.has("S32"):
        v = (s32(m, a).astype(np.int64) >> sh.astype(np.int64)).astype(np.uint64) & MASK32
    else:
        v = u32(m, a).astype(np.uint64) >> sh
    put(m, dst, v.astype(U32), em, taint(m, a, s))


_CMP = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
        "GE": np.greater_equal}


def _combine(d: Decoded, r: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if d.has("AND"):
        return r & c, ~r & c
    if d.has("OR"):
        return r | c, ~r | c
    if d.has("XOR"):
        return r ^ c, ~r ^ c
    return r, ~r


def isetp(m, d, em):
    cmp = next((k for k in d.mods if k in _CMP), None)
    if cmp is None:
        raise unsupported(d, "comparison")
    p0, p1, a, b, c = d.ops[:5]
    t = taint(m, a, b, c)
    unsigned = d.has("U32")
    va, vb = (u32(m, a), u32(m, b)) if unsigned else (s32(m, a), s32(m, b))
    r = _CMP[cmp](va, vb)
    if d.has("EX"):  # the high words of a 64-bit compare: equal high words defer to the low words' result
        low = pred(m, d.ops[5])
        strict = {"GE": "GT", "LE": "LT"}.get(cmp, cmp)
        r = np.where(va == vb, low if cmp not in ("EQ", "NE") else (low if cmp == "EQ" else low), _CMP[strict](va, vb))
        if cmp == "EQ":
            r = (va == vb) & low
        elif cmp == "NE":
            r = (va != vb) | low
    x, y = _combine(d, r, pred(m, c))
    put_p(m, p0, x, em, t)
    put_p(m, p1, y, em, t)


def _fcmp(d: Decoded, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    nan = np.isnan(a) | np.isnan(b)
    for k in d.mods:
        if k in _CMP:
            return _CMP[k](a, b) & ~nan if k != "NE" else (a != b) & ~nan
        if k.endswith("U") and k[:-1] in _CMP:  # unordered: true on NaN
            return _CMP[k[:-1]](a, b) | nan
        if k == "NAN":
            return nan
        if k == "NUM":
            return ~nan
    raise unsupported(d, "comparison")


def fsetp(m, d, em):
    """FSETP (fp32) and DSETP (fp64, register pairs): an IEEE compare combined with a predicate."""
    p0, p1, a, b, c = d.ops[:5]
    t = taint(m, a, b, c)
    read = f64 if d.mnemonic == "DSETP" else f32
    with np.errstate(all="ignore"):
        r = _fcmp(d, read(m, a), read(m, b))
    x, y = _combine(d, r, pred(m, c))
    put_p(m, p0, x, em, t)
    put_p(m, p1, y, em, t)


def sel(m, d, em):
    dst, a, b, p = d.ops[:4]
    put(m, dst, np.where(pred(m, p), u32(m, a), u32(m, b)), em, taint(m, a, b, p))


def imnmx(m, d, em):
    dst, a, b, p = d.ops[:4]
    va, vb = (u32(m, a), u32(m, b)) if d.has("U32") else (s32(m, a), s32(m, b))
    v = np.where(pred(m, p), np.minimum(va, vb), np.maximum(va, vb))
    put(m, dst, v, em, taint(m, a, b, p))


def viaddmnmx(m, d, em):
    """``VIADDMNMX Rd, Ra, Rb, Rc, P``: min (P true) or max of ``Ra + Rb`` (32-bit, wrapping) and ``Rc``, signed
    unless ``.U32`` (nvcc for ``min(a + k, n)``)."""
    dst, a, b, c, p = d.ops[:5]
    total = (u32(m, a).astype(np.uint64) + u32(m, b)).astype(U32)
    vs, vc = (total, u32(m, c)) if d.has("U32") else (total.view(np.int32), s32(m, c))
    v = np.where(pred(m, p), np.minimum(vs, vc), np.maximum(vs, vc))
    put(m, dst, v, em, taint(m, a, b, c, p))


def iabs(m, d, em):
    put(m, d.ops[0], np.abs(s32(m, d.ops[1])), em, taint(m, d.ops[1]))


def popc(m, d, em):
    v = u32(m, d.ops[1])
    bits = np.unpackbits(v.view(np.uint8).reshape(-1, 4), axis=1).sum(axis=1)
    put(m, d.ops[0], bits.astype(U32), em, taint(m, d.ops[1]))


def flo(m, d, em):
    ops = list(d.ops)
    dst = ops.pop(0)
    if isinstance(ops[0], Pred):
        ops.pop(0)
    v = u32(m, ops[0])
    if not d.has("U32"):
        s = v.view(np.int32)
        v = np.where(s < 0, ~v, v)
    with np.errstate(divide="ignore"):
        pos = np.where(v == 0, -1, np.floor(np.log2(np.maximum(v, 1).astype(np.float64))).astype(np.int64))
    if d.has("SH"):
        pos = np.where(pos < 0, -1, 31 - pos)
    put(m, dst, pos.astype(np.int64).astype(np.uint64).astype(U32), em, taint(m, ops[0]))


def brev(m, d, em):
    v = u32(m, d.ops[1])
    b = np.unpackbits(v.view(np.uint8).reshape(-1, 4)[:, ::-1], axis=1)[:, ::-1]
    out = np.packbits(b, axis=1)[:, ::-1].copy().view(U32).reshape(-1)
    put(m, d.ops[0], out, em, taint(m, d.ops[1]))


def sgxt(m, d, em):
    """``SGXT[.U32][.W] Rd, Ra, Rb``: the low ``b`` bits of ``a`` sign- (``.U32``: zero-) extended to 32 bits (PTX
    ``szext``; ``b`` clamped to 0..32, or taken modulo 32 with ``.W``)."""
    dst, a, b = d.ops[:3]
    v = u32(m, a).astype(np.int64)
    n = u32(m, b).astype(np.int64)
    n = n % 32 if d.has("W") else np.minimum(n, 32)
    low = v & ((np.int64(1) << n) - 1)
    if not d.has("U32"):
        sign = (n > 0) & (((low >> np.maximum(n - 1, 0)) & 1) == 1)
        low = np.where(sign, low - (np.int64(1) << n), low)
    put(m, dst, np.where(n >= 32, v, low).astype(np.uint64).astype(U32), em, taint(m, a, b))


def prmt(m, d, em):
    dst, a, s, b = d.ops[:4]
    va, vb = u32(m, a), u32(m, b)
    sel_ = u32(m, s)
    bytes_ = np.stack([(va >> U32(8 * k)) & U32(0xFF) for k in range(4)] + [(vb >> U32(8 * k)) & U32(0xFF)
                                                                          for k in range(4)])
    out = np.zeros(m.N, dtype=U32)
    lanes = np.arange(m.N)
    for k in range(4):
        nib = (sel_ >> U32(4 * k)) & U32(0xF)
        byte = bytes_[(nib & U32(7)).astype(np.int64), lanes]
        sign = (nib & U32(8)) != 0
        byte = np.where(sign, np.where(byte & U32(0x80), U32(0xFF), U32(0)), byte)
        out |= byte << U32(8 * k)
    put(m, dst, out, em, taint(m, a, s, b))


def p2r(m, d, em):
    dst, _pr, a, mask = d.ops[:4]
    bits = np.zeros(m.N, dtype=U32)
    for k in range(7):
        bits |= m.P[k].astype(U32) << U32(k)
    mk = U32(_imm(mask, d))
    v = (u32(m, a) & ~mk) | (bits & mk)
    put(m, dst, v, em, tor(taint(m, a), taint(m, *(Pred(False, k) for k in range(7)))))


def r2p(m, d, em):
    _pr, a, mask = d.ops[:3]
    v = u32(m, a)
    mk = _imm(mask, d)
    for k in range(7):
        if mk >> k & 1:
            put_p(m, Pred(False, k), (v >> U32(k)) & U32(1) != 0, em, taint(m, a))


def s2r(m, d, em):
    put(m, d.ops[0], m.special(d.ops[1].name), em, UNKNOWN if "CLOCK" in d.ops[1].name or "TIMER" in
        d.ops[1].name else 0)


def cs2r(m, d, em):
    dst, src = d.ops[:2]
    if src.name == "SRZ":
        put64(m, dst, np.zeros(m.N, np.uint64), em)
    else:
        put64(m, dst, m.special(src.name).astype(np.uint64), em, UNKNOWN)


def idp(m, d, em):
    """IDP.4A.{S8,U8}.{S8,U8} d, a, b, c (``__dp4a``): c plus the four products of a's and b's bytes."""
    if not d.has("4A"):
        raise unsupported(d, "IDP.2A (the 16-bit by 8-bit dot product)")
    dst, a, b, c = d.ops[:4]
    signs = [x for x in d.mods if x in ("S8", "U8")]
    if len(signs) != 2:
        raise unsupported(d, "an IDP.4A without its two operand types")
    def lanes(v, signed):  # (4, lanes) bytes of each lane's word
        by = u32(m, v).view(np.uint8).reshape(-1, 4).T.astype(np.int64)
        return np.where(by >= 128, by - 256, by) if signed else by
    acc = u32(m, c).view(np.int32).astype(np.int64) + (lanes(a, signs[0] == "S8") * lanes(b, signs[1] == "S8")).sum(0)
    put(m, dst, (acc & 0xFFFFFFFF).astype(U32), em, taint(m, a, b, c))


def b2r(m, d, em):
    """B2R.RESULT R[, P]: the result of the CTA's last barrier reduction (``__syncthreads_count``'s count, or
    ``_or`` / ``_and``'s 0 or 1), and the predicate that it is not zero."""
    if not d.has("RESULT"):
        raise unsupported(d, "B2R other than a barrier reduction's result")
    res = np.zeros(m.N, dtype=U32)
    t = 0
    for c, (v, tc) in m.bar_result.items():
        res[m.cta_of == c] = v
        t |= tc
    dst = d.ops[0]
    if isinstance(dst, Reg) and not dst.zero:
        put(m, dst, res, em, t)
    p = next((o for o in d.ops[1:] if isinstance(o, Pred)), None)
    if p is not None:
        put_p(m, p, res != 0, em, t)


def lepc(m, d, em):
    """LEPC R, 0x140: the address a CALL.ABS returns to (the emulator's addresses are the listing's)."""
    dst, target = d.ops[:2]
    put64(m, dst, np.full(m.N, int(target.bits), dtype=np.uint64), em)


def ldc(m, d, em):
    dst, c = d.ops[:2]
    t = taint(m, c)
    if d.has("64"):
        put(m, dst, m.const32(c, em), em, t)
        put(m, Reg(dst.uniform, dst.idx + 1), m.const32(Const(c.bank, c.offset + 4, c.reg), em), em, t)
    else:
        if d.has("U8", "S8", "U16", "S16"):
            raise unsupported(d, "sub-word constant loads")
        put(m, dst, m.const32(c, em), em, t)


# --- floating point -----------------------------------------------------------------------------------------------
def fadd(m, d, em):
    dst, a, b = d.ops[:3]
    with np.errstate(all="ignore"):
        v = f32(m, a) + f32(m, b)
        if d.has("SAT"):
            v = np.clip(v, 0, 1)
    put_f(m, dst, v, em, taint(m, a, b))


def fmul(m, d, em):
    dst, a, b = d.ops[:3]
    with np.errstate(all="ignore"):
        v = f32(m, a) * f32(m, b)
        if d.has("SAT"):
            v = np.clip(v, 0, 1)
    put_f(m, dst, v, em, taint(m, a, b))


def ffma(m, d, em):
    dst, a, b, c = d.ops[:4]
    with np.errstate(all="ignore"):
        # the product rounded to fp32 separately: numpy has no fused multiply-add; exact to within one rounding
        v = (f32(m, a).astype(np.float64) * f32(m, b).astype(np.float64) + f32(m, c).astype(np.float64))
        v = v.astype(np.float32)
        if d.has("SAT"):
            v = np.clip(v, 0, 1)
    put_f(m, dst, v, em, taint(m, a, b, c))


def fmnmx(m, d, em):
    dst, a, b, p = d.ops[:4]
    va, vb = f32(m, a), f32(m, b)
    v = np.where(pred(m, p), np.fmin(va, vb), np.fmax(va, vb))
    put_f(m, dst, v, em, taint(m, a, b, p))


def fsel(m, d, em):
    dst, a, b, p = d.ops[:4]
    put(m, dst, np.where(pred(m, p), f32(m, a), f32(m, b)).view(U32), em, taint(m, a, b, p))


def fchk(m, d, em):
    # FCHK P, a, b: whether a / b needs the slow path of the division routine (special or extreme operands)
    p, a, b = d.ops[:3]
    va, vb = f32(m, a), f32(m, b)
    with np.errstate(all="ignore"):
        ea = np.frexp(va)[1]
        eb = np.frexp(vb)[1]
        slow = ~np.isfinite(va) | ~np.isfinite(vb) | (vb == 0) | (np.abs(ea - eb) > 125) | (np.abs(vb) < 1.2e-38) \
            | (np.abs(va) < 1.2e-38) & (va != 0)
    put_p(m, p, slow, em, taint(m, a, b))


def mufu(m, d, em):
    dst, a = d.ops[:2]
    x = f32(m, a).astype(np.float64)
    fn = next((k for k in d.mods), "")
    with np.errstate(all="ignore"):
        v = {"EX2": lambda: np.exp2(x), "LG2": lambda: np.log2(x), "RCP": lambda: 1.0 / x,
             "RSQ": lambda: 1.0 / np.sqrt(x), "SQRT": lambda: np.sqrt(x), "SIN": lambda: np.sin(x),
             "COS": lambda: np.cos(x), "TANH": lambda: np.tanh(x)}.get(fn)
        if v is None:
            if fn == "RCP64H":
                hi = u32(m, a).astype(np.uint64) << np.uint64(32)
                r = (1.0 / hi.view(np.float64)).view(np.uint64) >> np.uint64(32)
                put(m, dst, r.astype(U32), em, taint(m, a))
                return
            if fn == "RSQ64H":
                hi = u32(m, a).astype(np.uint64) << np.uint64(32)
                r = (1.0 / np.sqrt(hi.view(np.float64))).view(np.uint64) >> np.uint64(32)
                put(m, dst, r.astype(U32), em, taint(m, a))
                return
            raise unsupported(d, f"MUFU function {fn}")
        put_f(m, dst, v().astype(np.float32), em, taint(m, a))


def frnd(m, d, em):
    dst, a = d.ops[:2]
    x = f32(m, a)
    fn = np.floor if d.has("FLOOR") else np.ceil if d.has("CEIL") else np.trunc if d.has("TRUNC") else np.rint
    put_f(m, dst, fn(x), em, taint(m, a))


def _src_float(m, d, op, wide: bool):
    return f64(m, op) if wide else f32(m, op)


def f2i(m, d, em):
    dst, a = d.ops[:2]
    src64 = d.has("F64")
    x = _src_float(m, d, a, src64)
    fn = np.floor if d.has("FLOOR") else np.ceil if d.has("CEIL") else np.rint if d.has("RN") else np.trunc
    with np.errstate(all="ignore"):
        r = fn(np.nan_to_num(x.astype(np.float64)))
        if d.has("S64", "U64"):
            put64(m, dst, np.clip(r, -2.0 ** 63, 2.0 ** 63 - 1).astype(np.int64).astype(np.uint64), em, taint(m, a))
            return
        if d.has("U32"):
            v = np.clip(r, 0, 2.0 ** 32 - 1).astype(np.uint64).astype(U32)
        else:
            v = np.clip(r, -2.0 ** 31, 2.0 ** 31 - 1).astype(np.int32).view(U32)
    put(m, dst, v, em, taint(m, a))


def i2f(m, d, em):
    dst, a = d.ops[:2]
    if d.has("S64", "U64") and isinstance(a, Reg):
        v64 = u64(m, Reg(a.uniform, a.idx, wide=True))
        x = v64.view(np.int64).astype(np.float64) if d.has("S64") else v64.astype(np.float64)
    elif d.has("U32") or d.has("U16") or d.has("U8"):
        x = u32(m, a).astype(np.float64)
    else:
        x = s32(m, a).astype(np.float64)
    if d.has("F64"):
        put64(m, dst, x.view(np.uint64), em, taint(m, a))
    elif d.has("F16"):
        put(m, dst, x.astype(np.float16).view(np.uint16).astype(U32), em, taint(m, a))
    else:
        put_f(m, dst, x.astype(np.float32), em, taint(m, a))


def f2f(m, d, em):
    dst, a = d.ops[:2]
    t = taint(m, a)
    mods = [k for k in d.mods if k in ("F16", "F32", "F64", "BF16")]
    if len(mods) < 2:
        raise unsupported(d, "conversion types")
    to, frm = mods[0], mods[1]
    if frm == "F64":
        x = f64(m, a)
    elif frm == "F16":
        x = (u32(m, a) & U32(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float64)
    elif frm == "BF16":
        x = ((u32(m, a) & U32(0xFFFF)) << U32(16)).view(np.float32).astype(np.float64)
    else:
        x = f32(m, a).astype(np.float64)
    if to == "F64":
        put64(m, dst, x.view(np.uint64), em, t)
    elif to == "F16":
        put(m, dst, x.astype(np.float16).view(np.uint16).astype(U32), em, t)
    elif to == "BF16":
        put(m, dst, (x.astype(np.float32).view(U32) >> U32(16)), em, t)
    else:
        put_f(m, dst, x.astype(np.float32), em, t)


def f2fp(m, d, em):
    # F2FP.BF16.F32.PACK_AB d, a, b: d.hi = a, d.lo = b (bf16 or f16)
    dst, a, b = d.ops[:3]
    fa, fb = f32(m, a), f32(m, b)
    if d.has("BF16"):
        ha = (fa.view(U32) + U32(0x7FFF) + ((fa.view(U32) >> U32(16)) & U32(1))) >> U32(16)
        hb = (fb.view(U32) + U32(0x7FFF) + ((fb.view(U32) >> U32(16)) & U32(1))) >> U32(16)
    else:
        ha = fa.astype(np.float16).view(np.uint16).astype(U32)
        hb = fb.astype(np.float16).view(np.uint16).astype(U32)
    put(m, dst, ((ha & U32(0xFFFF)) << U32(16)) | (hb & U32(0xFFFF)), em, taint(m, a, b))


def _halves(m, op, d) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) halves of an operand of the half2 instructions as float64 (selectors H0_H0, H1_H1, F32 applied)."""
    if isinstance(op, Imm):
        h = np.float16(op.value).view(np.uint16)
        v = np.full(m.N, h, dtype=np.uint16).view(np.float16).astype(np.float64)
        return v, v
    bits = raw(m, op)
    lo = (bits & U32(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float64)
    hi = (bits >> U32(16)).astype(np.uint16).view(np.float16).astype(np.float64)
    sel_ = getattr(op, "half", "")
    if sel_ == "F32":
        f = bits.view(np.float32).astype(np.float64)
        lo = hi = f
    elif sel_.startswith("H0_H0"):
        hi = lo
    elif sel_.startswith("H1_H1"):
        lo = hi
    if isinstance(op, Reg):
        if op.absolute:
            lo, hi = np.abs(lo), np.abs(hi)
        if op.neg:
            lo, hi = -lo, -hi
    return lo, hi


def _put_half2(m, dst, lo, hi, em, t, d):
    if d.has("F32"):  # HADD2.F32 / HFMA2.F32: one fp32 result
        put_f(m, dst, lo.astype(np.float32), em, t)
        return
    hl = lo.astype(np.float16).view(np.uint16).astype(U32)
    hh = hi.astype(np.float16).view(np.uint16).astype(U32)
    put(m, dst, (hh << U32(16)) | hl, em, t)


def hfma2(m, d, em):
    ops = list(d.ops)
    if len(ops) == 5 and isinstance(ops[3], Imm) and isinstance(ops[4], Imm):  # c given as two half immediates,
        # the high half first (``HFMA2.MMA R5, -RZ, RZ, 0, 5.96e-08`` is 0x00000001, ``..., 1.875, 0`` 0x3f800000)
        dst, a, b = ops[:3]
        chi = np.full(m.N, ops[3].value)
        clo = np.full(m.N, ops[4].value)
        t = taint(m, a, b)
    else:
        dst, a, b, c = ops[:4]
        clo, chi = _halves(m, c, d)
        t = taint(m, a, b, c)
    alo, ahi = _halves(m, a, d)
    blo, bhi = _halves(m, b, d)
    with np.errstate(all="ignore"):
        _put_half2(m, dst, alo * blo + clo, ahi * bhi + chi, em, t, d)


def _second_halves(m, d, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) of the half2 operand at ``d.ops[k]``: a register, one immediate for both halves, or a pair of
    immediates, the high half first (``HADD2 R0, R2, -0.5, 1``)."""
    ops = d.ops
    if k + 1 < len(ops) and isinstance(ops[k], Imm) and isinstance(ops[k + 1], Imm):
        return np.full(m.N, ops[k + 1].value), np.full(m.N, ops[k].value)
    return _halves(m, ops[k], d)


def hadd2(m, d, em):
    dst, a, b = d.ops[:3]
    alo, ahi = _halves(m, a, d)
    blo, bhi = _second_halves(m, d, 2)
    with np.errstate(all="ignore"):
        if d.mnemonic == "HMUL2":
            _put_half2(m, dst, alo * blo, ahi * bhi, em, taint(m, a, b), d)
        else:
            _put_half2(m, dst, alo + blo, ahi + bhi, em, taint(m, a, b), d)


def hmnmx2(m, d, em):
    dst, a, b = d.ops[:3]
    p = d.ops[-1]
    alo, ahi = _halves(m, a, d)
    blo, bhi = _second_halves(m, d, 2)
    mn = pred(m, p)
    _put_half2(m, dst, np.where(mn, np.fmin(alo, blo), np.fmax(alo, blo)),
               np.where(mn, np.fmin(ahi, bhi), np.fmax(ahi, bhi)), em, taint(m, a, b, p), d)


def _half_operands(m, d):
    """The two compared operands of HSET2 / HSETP2 (the second a register, one immediate or an immediate pair), the
    predicate they combine with, and their taint."""
    k = 2 if d.mnemonic == "HSETP2" else 1  # the operands after the destinations
    a = d.ops[k]
    return _halves(m, a, d), _second_halves(m, d, k + 1), d.ops[-1], taint(m, *d.ops[k:-1])


def hset2(m, d, em):
    """HSET2[.BF].cmp.{AND,OR} R, A, B, P: per half, the compare combined with P, as 1.0 (``.BF``) or all ones."""
    (alo, ahi), (blo, bhi), p, t = _half_operands(m, d)
    c = pred(m, p)
    with np.errstate(all="ignore"):
        rlo, rhi = (_combine(d, _fcmp(d, x, y), c)[0] for x, y in ((alo, blo), (ahi, bhi)))
    one = U32(0x3C00) if d.has("BF") else U32(0xFFFF)
    put(m, d.ops[0], (np.where(rhi, one, U32(0)) << U32(16)) | np.where(rlo, one, U32(0)), em, t | taint(m, p))


def hsetp2(m, d, em):
    """HSETP2.cmp.{AND,OR} P, Q, A, B, C: both halves' compares combined with C (``.H_AND``: the two halves ANDed
    into P); Q the complement."""
    p0, p1 = d.ops[:2]
    (alo, ahi), (blo, bhi), c, t = _half_operands(m, d)
    with np.errstate(all="ignore"):
        rlo, rhi = _fcmp(d, alo, blo), _fcmp(d, ahi, bhi)
    if not d.has("H_AND"):
        raise unsupported(d, "a half-pair compare into two predicates (HSETP2 without .H_AND)")
    x, y = _combine(d, rlo & rhi, pred(m, c))
    put_p(m, p0, x, em, t | taint(m, c))
    put_p(m, p1, y, em, t | taint(m, c))


def dop(m, d, em):
    ops = d.ops
    with np.errstate(all="ignore"):
        if d.mnemonic == "DADD":
            v = f64(m, ops[1]) + f64(m, ops[2])
        elif d.mnemonic == "DMUL":
            v = f64(m, ops[1]) * f64(m, ops[2])
        else:
            v = f64(m, ops[1]) * f64(m, ops[2]) + f64(m, ops[3])
    put64(m, ops[0], v.view(np.uint64), em, taint(m, *ops[1:]))


def opaque(m, d, em):
    """An instruction whose result the timing model does not need (tensor-core MMA): its destination registers are
    marked unknown; an address or branch computed from them is an error."""
    dst = d.ops[0]
    n = m.dest_regs(d)
    for k in range(n):
        put(m, Reg(dst.uniform, dst.idx + k), np.zeros(m.N, U32), em, UNKNOWN)


def _mma_maps() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Index maps of ``mma.m16n8k16``'s fragments (see :func:`hmma`): for each element of the row-major A (16 x 16),
    B (16 x 8) and C (16 x 8), the column of the stacked register halves (register, half, lane) that holds it, and
    for each C/D register the element each lane holds."""
    lane = np.arange(32)
    g, t = lane // 4, lane % 4
    a_src, b_src, c_src = np.empty(256, np.int64), np.empty(128, np.int64), np.empty(128, np.int64)
    for k, (r_off, c_off) in enumerate(((0, 0), (8, 0), (0, 8), (8, 8))):
        for h in (0, 1):
            a_src[(g + r_off) * 16 + 2 * t + c_off + h] = (2 * k + h) * 32 + lane
    for k, r_off in enumerate((0, 8)):
        for h in (0, 1):
            b_src[(2 * t + r_off + h) * 8 + g] = (2 * k + h) * 32 + lane
    d_at = np.empty((4, 32), np.int64)
    for k, (r_off, c_off) in enumerate(((0, 0), (0, 1), (8, 0), (8, 1))):
        d_at[k] = (g + r_off) * 8 + 2 * t + c_off
        c_src[d_at[k]] = k * 32 + lane
    return a_src, b_src, c_src, d_at


_MMA_A, _MMA_B, _MMA_C, _MMA_D = _mma_maps()


def _mma_halves(words: np.ndarray, bf16: bool) -> np.ndarray:
    """(warps, registers, 32) 32-bit words as (warps, registers * 2 * 32) float32: each register's low half, then its
    high half (bf16 or fp16)."""
    lo, hi = words & U32(0xFFFF), words >> U32(16)
    if bf16:
        pair = np.stack([lo << U32(16), hi << U32(16)], axis=2).view(np.float32)
    else:
        pair = np.stack([lo, hi], axis=2).astype(np.uint16).view(np.float16).astype(np.float32)
    return pair.reshape(words.shape[0], -1)


def hmma(m, d, em):
    """``mma.sync.m16n8k16`` with bf16 or fp16 inputs and fp32 accumulators (HMMA.16816.F32[.BF16]), per warp with
    the PTX fragment layout (lane = 4 * group + thread in group): A rows group and group + 8, columns 2t, 2t + 1 and
    8 + 2t, 9 + 2t; B rows 2t, 2t + 1, 8 + 2t, 9 + 2t, column group; C/D rows group and group + 8, columns 2t, 2t + 1.
    Computed for the warps with a lane at it (:data:`_MMA_A` ... place the fragments). Other shapes and accumulator
    types keep their results unknown (:func:`opaque`)."""
    if not (d.has("16816") and d.has("F32")):
        return opaque(m, d, em)
    bf16 = d.has("BF16")
    dst, a, b, c = d.ops[:4]
    nw = m.N // 32
    on = np.nonzero(em.reshape(nw, 32).any(axis=1))[0]

    def regs(op, n):
        arr = m.UR if op.uniform else m.R
        if op.zero:
            return np.zeros((len(on), n, 32), U32)
        return np.stack([arr[op.idx + k].reshape(nw, 32)[on] for k in range(n)], axis=1)

    A = _mma_halves(regs(a, 4), bf16)[:, _MMA_A].reshape(-1, 16, 16)
    B = _mma_halves(regs(b, 2), bf16)[:, _MMA_B].reshape(-1, 16, 8)
    C = np.zeros((len(on), 16, 8), np.float32)
    if not c.zero:
        C = regs(c, 4).reshape(len(on), -1).view(np.float32)[:, _MMA_C].reshape(-1, 16, 8)
    with np.errstate(all="ignore"):
        D = (np.matmul(A, B) + C).reshape(len(on), 128)
    tt = taint(m, a, b, c)
    out = np.zeros((nw, 32), np.float32)
    for k in range(4):
        out[on] = D[:, _MMA_D[k]]
        put(m, Reg(dst.uniform, dst.idx + k), out.reshape(-1).view(U32), em, tt)


def nop(m, d, em):
    return None


# --- warp-wide ----------------------------------------------------------------------------------------------------
def shfl(m, d, em):
    pout, dst, a, b, c = d.ops[:5]
    mode = next((k for k in d.mods if k in ("IDX", "UP", "DOWN", "BFLY")), None)
    if mode is None:
        raise unsupported(d, "shuffle mode")
    val = raw(m, a).reshape(-1, 32)
    lane = np.arange(32, dtype=np.int64)
    bb = u32(m, b).astype(np.int64).reshape(-1, 32)
    cc = u32(m, c).astype(np.int64).reshape(-1, 32)
    segmask = (cc >> 8) & 0x1F
    clamp = cc & 0x1F
    minl = lane & segmask
    maxl = minl | (clamp & ~segmask)
    if mode == "IDX":
        j = minl | (bb & ~segmask & 0x1F)
        ok = j <= maxl
    elif mode == "UP":
        j = lane - bb
        ok = j >= minl
    elif mode == "DOWN":
        j = lane + bb
        ok = j <= maxl
    else:
        j = lane ^ bb
        ok = j <= maxl
    j = np.where(ok, j, lane) & 31
    out = np.take_along_axis(val, j, axis=1).reshape(-1)
    t = taint(m, a, b, c)
    put(m, dst, out, em, t)
    put_p(m, pout, ok.reshape(-1), em, t)


def vote(m, d, em):
    ops = list(d.ops)
    dst = ops.pop(0)
    if isinstance(dst, Reg) and d.has("ANY") and len(ops) == 2:  # VOTE.ANY R, PT, P: ballot
        ops.pop(0)
    p = pred(m, ops[-1]) & em
    bal = (p.reshape(-1, 32).astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=1).astype(U32)
    act = em.reshape(-1, 32)
    t = taint(m, ops[-1])
    if isinstance(dst, Reg):
        put(m, dst, np.repeat(bal, 32), em, t)
        return
    pb = p.reshape(-1, 32)
    if d.has("ALL"):
        r = (pb | ~act).all(axis=1)
    elif d.has("ANY"):
        r = pb.any(axis=1)
    else:
        r = (pb == pb[:, :1]).all(axis=1)
    put_p(m, dst, np.repeat(r, 32), em, t)


def redux(m, d, em):
    dst, a = d.ops[:2]
    v = u32(m, a).reshape(-1, 32)
    act = em.reshape(-1, 32)
    if d.has("SUM"):
        r = np.where(act, v, 0).astype(np.uint64).sum(axis=1) & MASK32
    elif d.has("MIN"):
        vv = v.view(np.int32) if d.has("S32") else v
        r = np.where(act, vv, np.iinfo(vv.dtype).max).min(axis=1).astype(np.int64).astype(np.uint64)
    elif d.has("MAX"):
        vv = v.view(np.int32) if d.has("S32") else v
        r = np.where(act, vv, np.iinfo(vv.dtype).min).max(axis=1).astype(np.int64).astype(np.uint64)
    elif d.has("AND"):
        r = np.bitwise_and.reduce(np.where(act, v, U32(0xFFFFFFFF)), axis=1).astype(np.uint64)
    elif d.has("OR"):
        r = np.bitwise_or.reduce(np.where(act, v, U32(0)), axis=1).astype(np.uint64)
    elif d.has("XOR"):
        r = np.bitwise_xor.reduce(np.where(act, v, U32(0)), axis=1).astype(np.uint64)
    else:
        raise unsupported(d, "reduction")
    put(m, dst, np.repeat((r & MASK32).astype(U32), 32), em, taint(m, a))


def match(m, d, em):
    ops = list(d.ops)
    if isinstance(ops[0], Pred):
        ops.pop(0)
    dst, a = ops[:2]
    v = raw(m, a).reshape(-1, 32)
    act = em.reshape(-1, 32)
    eq = (v[:, :, None] == v[:, None, :]) & act[:, None, :]
    weights = (np.uint64(1) << np.arange(32, dtype=np.uint64))
    mask = (eq.astype(np.uint64) * weights).sum(axis=2).astype(U32)
    put(m, dst, mask.reshape(-1), em, taint(m, a))
    # the distinct values among each warp's executing lanes: what the instruction costs (validate/micro/match.cu)
    first = act & ~np.tril(eq, -1).any(axis=2)  # no earlier executing lane holds its value
    m.distinct = first.sum(axis=1).astype(np.int32)


# --- the table ----------------------------------------------------------------------------------------------------
# memory, barrier and control instructions are the machine's (gpusim.frontend.machine): listed there
SEMANTICS = {
    "MOV": mov, "UMOV": mov, "IMAD": imad, "UIMAD": imad, "IADD3": iadd3, "UIADD3": iadd3, "VIADD": viadd,
    "IADD": iadd3, "LEA": lea, "ULEA": lea, "LOP3": lop3, "ULOP3": lop3, "PLOP3": plop3, "UPLOP3": plop3,
    "SHF": shf, "USHF": shf, "SHL": shl_shr, "SHR": shl_shr, "ISETP": isetp, "UISETP": isetp, "SEL": sel,
    "USEL": sel, "IMNMX": imnmx, "VIMNMX": imnmx, "IABS": iabs, "POPC": popc, "UPOPC": popc, "FLO": flo, "UFLO": flo,
    "BREV": brev, "UBREV": brev, "PRMT": prmt, "UPRMT": prmt, "P2R": p2r, "R2P": r2p, "S2R": s2r, "S2UR": s2r,
    "LEPC": lepc, "IDP": idp, "B2R": b2r, "CS2R": cs2r, "LDC": ldc, "ULDC": ldc, "R2UR": mov, "MOV32I": mov,
    "SGXT": sgxt, "USGXT": sgxt,
    "FADD": fadd, "FMUL": fmul, "FFMA": ffma, "FMNMX": fmnmx, "FSEL": fsel, "FSETP": fsetp, "FCHK": fchk,
    "MUFU": mufu, "FRND": frnd, "F2I": f2i, "I2F": i2f, "I2FP": i2f, "F2IP": f2i, "F2F": f2f, "F2FP": f2fp,
    "HFMA2": hfma2, "HADD2": hadd2, "HMUL2": hadd2, "HMNMX2": hmnmx2, "HSET2": hset2, "HSETP2": hsetp2,
    "DADD": dop, "DMUL": dop, "DFMA": dop,
    "DSETP": fsetp, "HMMA": hmma, "IMMA": opaque, "DMMA": opaque,
    "SHFL": shfl, "VOTE": vote, "VOTEU": vote, "REDUX": redux, "MATCH": match,
    "VIADDMNMX": viaddmnmx,
    # BREAK takes its lanes out of a convergence barrier (a loop's break, a switch's case): the emulator reconverges
    # lanes by running the lowest address first, so it needs no barrier state (nor BSSY, BSYNC, BMOV)
    "BREAK": nop,
    "NOP": nop, "BSSY": nop, "BSYNC": nop, "WARPSYNC": nop, "YIELD": nop, "BMOV": nop, "MEMBAR": nop, "FENCE": nop,
    "ERRBAR": nop, "CGAERRBAR": nop, "CCTL": nop, "CCTLL": nop, "DEPBAR": nop, "LDGDEPBAR": nop, "NANOSLEEP": nop,
    # barrier.cluster.arrive / wait: the emulator runs a cluster's CTAs together, and what a cluster barrier orders
    # (mbarrier set-up before remote arrivals, shared memory kept until the partner's last arrival) needs no wait there
    "UCGABAR_ARV": nop, "UCGABAR_WAIT": nop,
    "UTMACMDFLUSH": nop,
}
