"""SASS as the emulator reads it: each instruction's operands parsed once into small records.

The text is ``cuobjdump -sass`` (or ``nvdisasm``) output, read by :func:`gpusim.sass.parse_sass`; this module turns
each :class:`gpusim.sass.Inst` into a :class:`Decoded` instruction: its guard predicate, its opcode's modifiers and
its operands as :class:`Reg`, :class:`Pred`, :class:`Imm`, :class:`Const`, :class:`Addr`, :class:`Special` or a
branch target. What an instruction *does* lives in :mod:`gpusim.frontend.semantics`, one function per mnemonic.
"""

from __future__ import annotations

from gpusim.ir import KernelError

import re
import struct
from dataclasses import dataclass, field

from gpusim.sass import Inst

RZ, URZ, PT, UPT = 255, 63, 7, 7  # the zero registers and the always-true predicates


class SassDecodeError(KernelError):
    """An instruction or operand the front-end cannot read (one line naming it and its SASS line)."""


@dataclass(frozen=True)
class Reg:
    """A general (``R``) or uniform (``UR``) register operand."""

    uniform: bool
    idx: int
    neg: bool = False  # -R: arithmetic negation
    absolute: bool = False  # |R|
    inv: bool = False  # ~R: bitwise not
    wide: bool = False  # R2.64: a register pair (addresses)
    zext: bool = False  # R2.U32 in an address: zero-extended 32-bit offset
    half: str = ""  # .H0_H0 / .H1_H1 / .H1 selectors of the half-precision instructions
    scale: int = 1  # [R2.X4]: index scaled by the access width

    @property
    def zero(self) -> bool:
        return self.idx == (URZ if self.uniform else RZ)


@dataclass(frozen=True)
class Pred:
    uniform: bool
    idx: int
    neg: bool = False

    @property
    def const_true(self) -> bool:
        return self.idx == (UPT if self.uniform else PT) and not self.neg

    @property
    def const_false(self) -> bool:
        return self.idx == (UPT if self.uniform else PT) and self.neg


@dataclass(frozen=True)
class Imm:
    bits: int  # the 32-bit pattern as the instruction uses it (a float immediate of a float instruction as fp32)
    text: str
    value: float  # the number as written


@dataclass(frozen=True)
class Const:
    bank: int
    offset: int
    reg: Reg | None = None  # c[0x0][R2+0x10]


@dataclass(frozen=True)
class Addr:
    """A memory operand ``[R2.64+UR4+0x10]`` (``desc[URx]`` prefixes are dropped: they select a cache policy)."""

    reg: Reg | None
    ureg: Reg | None
    offset: int


@dataclass(frozen=True)
class Special:
    name: str  # SR_TID.X, SRZ, ...


@dataclass(frozen=True)
class Target:
    addr: int  # a branch or call target (byte address)


@dataclass(frozen=True)
class Named:
    text: str  # B0 (convergence barrier), SB0 (scoreboard), PR (the predicate file), a literal keyword


Operand = Reg | Pred | Imm | Const | Addr | Special | Target | Named


@dataclass(frozen=True)
class Decoded:
    """One SASS instruction, decoded."""

    index: int  # position in the function
    addr: int  # byte address
    text: str  # the SASS line (for errors)
    mnemonic: str
    mods: tuple[str, ...]
    guard: Pred | None  # None: unguarded (@PT)
    ops: tuple[Operand, ...]
    stall_cycles: int | None
    inst: Inst = field(repr=False, compare=False, default=None)

    def has(self, *mods: str) -> bool:
        return any(m in self.mods for m in mods)

    @property
    def where(self) -> str:
        return f"0x{self.addr:04x} '{self.text}'"


# mnemonics of instructions whose numeric operands are floats (immediates written as decimal numbers)
FLOAT_MNEMONICS = {"FADD", "FMUL", "FFMA", "FMNMX", "FSETP", "FSEL", "FSET", "MUFU", "FCHK", "FRND", "F2I", "F2F",
                   "FMUL32I", "FADD32I", "FFMA32I", "FSWZADD", "DADD", "DMUL", "DFMA", "DSETP", "F2FP"}
HALF_MNEMONICS = {"HFMA2", "HADD2", "HMUL2", "HMNMX2", "HSETP2", "HSET2"}

_REG = re.compile(r"^(?P<pre>[-~!|]*)(?P<u>U?)R(?P<n>\d+|Z)(?P<bar0>\|?)(?P<sfx>(?:\.[A-Z0-9_]+)*)(?P<bar>\|?)$")
_PRED = re.compile(r"^(?P<neg>!?)(?P<u>U?)P(?P<n>[0-6T])$")
_CONST = re.compile(r"^(?P<neg>-?)(?P<abs>\|?)c\[(0x[0-9a-f]+)\]\[(.+)\]\|?$")


def _int(text: str) -> int:
    t = text.strip()
    neg = t.startswith("-")
    if neg or t.startswith("+"):
        t = t[1:]
    v = int(t, 16) if t.lower().startswith("0x") else int(t)
    return -v if neg else v


def _float_bits(text: str) -> tuple[int, float]:
    t = text.strip().replace(" ", "")
    specials = {"+INF": float("inf"), "INF": float("inf"), "-INF": float("-inf"), "+QNAN": float("nan"),
                "QNAN": float("nan"), "-QNAN": float("nan"), "NAN": float("nan")}
    if t.upper() in specials:
        v = specials[t.upper()]
    elif t.lower().startswith(("0x", "-0x")):
        bits = _int(t) & 0xFFFFFFFF
        return bits, struct.unpack("<f", struct.pack("<I", bits))[0]
    else:
        v = float(t)
    return struct.unpack("<I", struct.pack("<f", v))[0], v


def _reg(text: str) -> Reg | None:
    m = _REG.match(text)
    if not m:
        return None
    pre = m.group("pre")
    uniform = bool(m.group("u"))
    idx = (URZ if uniform else RZ) if m.group("n") == "Z" else int(m.group("n"))
    sfx = [s for s in m.group("sfx").split(".") if s]
    half = ".".join(s for s in sfx if s.startswith(("H0", "H1", "F32", "B0", "B1", "B2", "B3")))
    scale = 1
    for s in sfx:
        if s.startswith("X") and s[1:].isdigit():
            scale = int(s[1:])
    return Reg(uniform, idx, neg="-" in pre, absolute="|" in pre or bool(m.group("bar") or m.group("bar0")),
               inv="~" in pre, wide="64" in sfx, zext="U32" in sfx, half=half, scale=scale)


def _addr(text: str, where: str) -> Addr:
    body = text.strip()
    if not (body.startswith("[") and body.endswith("]")):
        raise SassDecodeError(f"{where}: cannot read the memory operand {text!r}")
    body = body[1:-1].replace("+-", "-")
    reg = ureg = None
    offset = 0
    for term in re.findall(r"[+-]?[^+-]+", body):
        t = term.lstrip("+")
        r = _reg(t)
        if r is not None and not r.neg:
            if r.uniform:
                ureg = r
            else:
                reg = r
            continue
        try:
            offset += _int(t)
        except ValueError:
            raise SassDecodeError(f"{where}: cannot read the address term {t!r} of {text!r}") from None
    return Addr(reg, ureg, offset)


def _split_operands(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_operand(text: str, mnemonic: str, where: str) -> Operand:
    t = text.strip().replace(".reuse", "")
    if not t:
        raise SassDecodeError(f"{where}: empty operand")
    if t.startswith("gdesc["):  # HGMMA gdesc[UR8](.tnspA/.tnspB): the uniform registers holding the wgmma matrix
        return _addr(t[5:t.index("]") + 1], where)  # descriptors (the suffix: an operand stored transposed)
    if t.startswith("desc["):  # desc[UR6][R2.64+0x10]: the descriptor selects caching, the second bracket addresses
        return _addr(t[t.index("]") + 1:], where)
    if t.startswith("["):
        return _addr(t, where)
    p = _PRED.match(t)
    if p:
        n = p.group("n")
        return Pred(bool(p.group("u")), 7 if n == "T" else int(n), bool(p.group("neg")))
    r = _reg(t)
    if r is not None:
        return r
    c = _CONST.match(t)
    if c:
        inner = c.group(4)
        creg = None
        off = 0
        for term in re.findall(r"[+-]?[^+-]+", inner.replace("+-", "-")):
            rr = _reg(term.lstrip("+"))
            if rr is not None:
                creg = rr
            else:
                off += _int(term)
        return Const(int(c.group(3), 16), off, creg)
    if t.startswith("SR_") or t == "SRZ":
        return Special(t)
    if t in ("PR",) or re.fullmatch(r"S?B\d+|gsb\d", t) or t.isalpha():
        return Named(t)
    if mnemonic in FLOAT_MNEMONICS or mnemonic in HALF_MNEMONICS:
        try:
            bits, v = _float_bits(t)
            return Imm(bits, t, v)
        except ValueError:
            pass
    try:
        v = _int(t)
        return Imm(v & 0xFFFFFFFF, t, float(v))
    except ValueError:
        pass
    try:
        bits, v = _float_bits(t)
        return Imm(bits, t, v)
    except ValueError:
        raise SassDecodeError(f"{where}: cannot read the operand {t!r}") from None


BRANCHES = {"BRA", "CALL", "JMP", "BRX", "JMX", "RET", "EXIT", "BREAK", "KILL"}


def decode(inst: Inst, index: int) -> Decoded:
    """One :class:`gpusim.sass.Inst` as the emulator needs it."""
    text = f"{inst.guard + ' ' if inst.guard else ''}{inst.opcode} {inst.operands}".strip()
    where = f"0x{inst.addr:04x} '{text}'"
    parts = inst.opcode.split(".")
    mnemonic, mods = parts[0], tuple(parts[1:])
    guard = None
    if inst.guard:
        g = _PRED.match(inst.guard.lstrip("@"))
        if not g:
            raise SassDecodeError(f"{where}: cannot read the guard {inst.guard!r}")
        n = g.group("n")
        guard = Pred(bool(g.group("u")), 7 if n == "T" else int(n), bool(g.group("neg")))
        if guard.const_true:
            guard = None
    raw = inst.operands.strip()
    shape = re.match(r"^(x\d+x\d+(?:\.[A-Z0-9_]+)*)\s+", raw)  # HGMMA.64x128x16.F32.BF16: the listing parser
    if shape and mnemonic == "HGMMA":  # cuts the opcode at the lowercase x of the shape
        mods = (mods[0] + shape.group(1).split(".")[0], *shape.group(1).split(".")[1:], *mods[1:])
        raw = raw[shape.end():]
        text = f"{inst.guard + ' ' if inst.guard else ''}HGMMA.{'.'.join(mods)} {raw}".strip()
        where = f"0x{inst.addr:04x} '{text}'"
    ops: list[Operand] = []
    if mnemonic in BRANCHES:
        # BRA 0x520 / BRA.U !UP0, 0x120 / RET.REL.NODEC R2 0x0 / CALL.REL.NOINC 0x7350
        for tok in re.split(r"[,\s]+", raw):
            if not tok:
                continue
            if re.fullmatch(r"-?0x[0-9a-f]+|\d+", tok) and mnemonic not in ("RET",):
                ops.append(Target(_int(tok)))
            else:
                ops.append(parse_operand(tok, mnemonic, where))
    elif raw:
        toks = _split_operands(raw)
        # HFMA2 R2, -RZ, RZ, 0, 0: the last two immediates are the halves of one operand
        for tok in toks:
            ops.append(parse_operand(tok, mnemonic, where))
    return Decoded(index, inst.addr, text, mnemonic, mods, guard, tuple(ops), inst.stall_cycles, inst)
