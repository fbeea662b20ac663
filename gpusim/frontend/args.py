"""Kernel arguments as a user writes them on the command line (``--arg``) or in Python.

Scalars are passed by value: ``4096``, ``-1``, ``0.5``, ``0x10`` (the type from the kernel's signature where the
source says it, else an integer unless written with a point or exponent; ``f32:1``, ``i64:7`` force one).
Pointers are tensors: ``f32[4096*4096]`` or ``f32[4096,4096]`` (dtype and elements), optionally with contents:
``:uniform(0,1)``, ``:normal``, ``:randint(0,256)``, ``:zeros``, ``:ones``, ``:const(3)``, ``:arange(step, start)``,
``:mulmod(a,m)`` (element i holds i*a mod m), ``:divmod(d,a,b,c,m)`` (((i div d)*a + (i mod d)*b + c) mod m), or
``@file.npy`` (dtype and size from the file unless written before it). A tensor whose contents are not given holds
generated values (uniform in [-1, 1) for floats, zeros for integers) that an address may not depend on.
Arguments go by name (``A=f32[...]``, where the signature is known) or in order.

A TMA tensor map (``CUtensorMap``, which the host builds with ``cuTensorMapEncodeTiled``) is described by what that
call is given: ``tmap(A,bf16,[K,M],[64,128],swizzle=128)`` is a map of the tensor ``A`` (bf16, dimensions innermost
first: K columns, M rows; row-major, packed), loaded in boxes of 64 x 128 elements with the 128-byte swizzle (32, 64,
128 or 0). ``A`` is another pointer argument of the kernel or, where the kernel has none of that name, a tensor of its
own. The parameter may be the map itself (``const __grid_constant__ CUtensorMap``) or a pointer to one in global memory.
"""

from __future__ import annotations

from gpusim.ir import KernelError

import re
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpusim.frontend.build import CompiledKernel
from gpusim.frontend.memory import DTYPES, TensorBuf, from_array, generated

COMPILER_SCRATCH = ("global_scratch", "profile_scratch")  # buffers Triton 3.x appends to a kernel's parameters
MAX_GIVEN_BYTES = 1 << 30  # contents the user gives are held whole: a bound on them
SCALAR_CODES = {"f32": ("<f", 4), "f64": ("<d", 8), "i32": ("<i", 4), "u32": ("<I", 4), "i64": ("<q", 8),
                "u64": ("<Q", 8), "i16": ("<h", 2), "u16": ("<H", 2), "i8": ("<b", 1), "u8": ("<B", 1),
                "f16": ("<e", 2), "bool": ("<?", 1)}
C_TYPES = {"float": "f32", "double": "f64", "int": "i32", "unsigned": "u32", "unsigned int": "u32", "uint32_t": "u32",
           "int32_t": "i32", "long": "i64", "long long": "i64", "int64_t": "i64", "size_t": "u64", "uint64_t": "u64",
           "unsigned long": "u64", "unsigned long long": "u64", "short": "i16", "unsigned short": "u16",
           "char": "i8", "unsigned char": "u8", "int8_t": "i8", "uint8_t": "u8", "bool": "bool", "half": "f16",
           "__half": "f16", "__nv_bfloat16": "bf16", "nv_bfloat16": "bf16", "int16_t": "i16", "uint16_t": "u16"}
_TENSOR = re.compile(r"^(?P<dtype>[a-z0-9]+)\[(?P<size>[^\]]+)\](?::(?P<dist>[a-z]+)(?:\((?P<args>[^)]*)\))?)?"
                     r"(?:@(?P<file>.+))?$")


class ArgError(KernelError):
    """A malformed or missing kernel argument (one line naming it)."""


@dataclass(frozen=True)
class TensorArg:
    name: str
    dtype: str
    elements: int
    dist: str = ""
    dist_args: tuple = ()
    file: str = ""

    @property
    def size_bytes(self) -> int:
        return self.elements * (2 if self.dtype == "bf16" else np.dtype(DTYPES[self.dtype]).itemsize)


@dataclass(frozen=True)
class TmapArg:
    """A TMA tensor map (see the module docstring); ``slot``: its index among the launch's maps."""

    name: str
    tensor: str
    dtype: str
    dims: tuple[int, ...]  # elements, innermost first
    box: tuple[int, ...]
    swizzle: int
    slot: int = 0
    by_pointer: bool = False  # the parameter points to the map in global memory

    @property
    def elem_bytes(self) -> int:
        return 2 if self.dtype == "bf16" else np.dtype(DTYPES[self.dtype]).itemsize


TMAP_MAGIC = b"GPUSIMTM"  # the first bytes of a map as the emulator lays it out (then the map's slot, u32)
TMAP_BYTES = 128
_TMAP = re.compile(r"^tmap\((?P<tensor>[A-Za-z_]\w*),\s*(?P<dtype>[a-z0-9]+),\s*\[(?P<dims>[^\]]*)\],\s*"
                   r"\[(?P<box>[^\]]*)\](?:,\s*swizzle=(?P<swz>\d+))?\)$")


def parse_tmap(text: str, name: str, where: str) -> TmapArg:
    m = _TMAP.match(text.replace(" ", ""))
    if not m:
        raise ArgError(f"{where}: expected tmap(TENSOR,DTYPE,[DIMS innermost first],[BOX],swizzle=128)")
    dtype = m.group("dtype")
    if dtype not in DTYPES:
        raise ArgError(f"{where}: unknown dtype {dtype!r} (known: {', '.join(DTYPES)})")
    dims = tuple(_size(x, where) for x in m.group("dims").split(","))
    box = tuple(_size(x, where) for x in m.group("box").split(","))
    swz = int(m.group("swz") or 0)
    if not 1 <= len(dims) <= 5 or len(box) != len(dims):
        raise ArgError(f"{where}: a tensor map has 1 to 5 dimensions and a box of as many ({len(dims)} and {len(box)})")
    if any(b > 256 for b in box):
        raise ArgError(f"{where}: a box dimension is at most 256 elements (cuTensorMapEncodeTiled)")
    if swz not in (0, 32, 64, 128):
        raise ArgError(f"{where}: swizzle={swz}: one of 0, 32, 64, 128 (bytes)")
    t = TmapArg(name, m.group("tensor"), dtype, dims, box, swz)
    inner = box[0] * t.elem_bytes
    if inner % 16 or (swz and inner > swz):
        raise ArgError(f"{where}: the box's inner dimension is {inner} B: a multiple of 16 B, at most the swizzle span "
                       f"({swz} B)")
    return t


@dataclass(frozen=True)
class ScalarArg:
    name: str
    code: str
    value: float | int


def _size(text: str, where: str) -> int:
    dims = re.split(r"[,x]", text.replace(" ", ""))
    total = 1
    for d in dims:
        factors = d.split("*")
        for f in factors:
            if not re.fullmatch(r"\d+|0x[0-9a-fA-F]+", f):
                raise ArgError(f"{where}: size {text!r} must be whole numbers joined by '*' or ','")
            total *= int(f, 0)
    if total <= 0:
        raise ArgError(f"{where}: a tensor needs at least one element (got {text!r})")
    return total


def _number(text: str, where: str) -> float | int:
    t = text.strip()
    try:
        return int(t, 0)
    except ValueError:
        pass
    try:
        v = float(t)
    except ValueError:
        raise ArgError(f"{where}: {text!r} is neither a number nor a tensor such as f32[1024]") from None
    return v


def parse_arg(text: str, name: str, ctype: str | None, where: str):
    """One argument's text for the parameter ``name`` (C type ``ctype`` when the signature is known)."""
    t = text.strip()
    if t.startswith("tmap("):
        return parse_tmap(t, name, where)
    is_ptr = ctype is not None and ctype.endswith("*")
    base = None if ctype is None else ctype.replace("const", "").replace("volatile", "").replace("*", "").strip()
    if t.startswith("@") or _TENSOR.match(t):
        if ctype is not None and not is_ptr:
            raise ArgError(f"{where}: parameter {name} is a {ctype}, not a pointer; pass a number")
        if t.startswith("@"):
            return _from_file(name, t[1:], None, where)
        m = _TENSOR.match(t)
        dtype = m.group("dtype")
        if dtype not in DTYPES:
            raise ArgError(f"{where}: unknown dtype {dtype!r} (known: {', '.join(DTYPES)})")
        elements = _size(m.group("size"), where)
        if m.group("file"):
            return _from_file(name, m.group("file"), (dtype, elements), where)
        dist = m.group("dist") or ""
        known = ("uniform", "normal", "randint", "zeros", "ones", "const", "arange", "mulmod", "divmod")
        if dist and dist not in known:
            raise ArgError(f"{where}: unknown contents {dist!r} (known: {', '.join(known)} or @file.npy)")
        args = tuple(_number(x, where) for x in (m.group("args") or "").split(",") if x.strip())
        if dist == "randint" and len(args) != 2:
            raise ArgError(f"{where}: randint needs (low, high)")
        if dist == "divmod" and len(args) != 5:
            raise ArgError(f"{where}: divmod needs (d, a, b, c, m): element i holds ((i div d)*a + (i mod d)*b + c) "
                           "mod m")
        if dist == "mulmod" and len(args) != 2:
            raise ArgError(f"{where}: mulmod needs (multiplier, modulus)")
        if dist == "const" and len(args) != 1:
            raise ArgError(f"{where}: const needs one value")
        return TensorArg(name, dtype, elements, dist, args)
    if is_ptr:
        raise ArgError(f"{where}: parameter {name} is a pointer ({ctype}); pass a tensor such as f32[1024]")
    code = None
    if ":" in t and t.split(":", 1)[0] in SCALAR_CODES:
        code, t = t.split(":", 1)
    value = _number(t, where)
    if code is None:
        code = C_TYPES.get(base or "", None) if base else None
        if code is None:
            code = "f32" if isinstance(value, float) else "i32"
    if code in ("bf16",):
        code = "u16"
    if code.startswith(("i", "u")) and isinstance(value, float):
        raise ArgError(f"{where}: parameter {name} ({ctype or code}) needs an integer, got {text!r}")
    return ScalarArg(name, code, value)


def _from_file(name: str, path: str, declared, where: str) -> TensorArg:
    p = Path(path)
    try:
        arr = np.load(p, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as e:
        raise ArgError(f"{where}: cannot read {path!r} as a .npy file: {e}") from None
    dtype = next((k for k, v in DTYPES.items() if np.dtype(v) == arr.dtype and k != "bf16"), None)
    if dtype is None:
        raise ArgError(f"{where}: {path}: dtype {arr.dtype} is not one of {', '.join(DTYPES)}")
    elements = int(arr.size)
    if declared is not None:
        if declared[0] != dtype or declared[1] > elements:
            raise ArgError(f"{where}: {path} holds {elements} {dtype}, the argument declares {declared[1]} "
                           f"{declared[0]}")
        elements = declared[1]
    return TensorArg(name, dtype, elements, "file", (), str(p))


def bind(kernel: CompiledKernel, texts: list[str], where: str = "--arg") -> list[TensorArg | ScalarArg]:
    """The arguments of ``kernel`` from their texts (``NAME=VALUE`` or in order)."""
    sig = kernel.signature
    n = len(kernel.params)
    names = [s[1] for s in sig] if sig else [f"arg{i}" for i in range(n)]
    types = [s[0] for s in sig] if sig else [None] * n
    given: dict[int, str] = {}
    pos = 0
    for text in texts:
        m = re.match(r"^([A-Za-z_]\w*)=(.*)$", text.strip())
        if m and not m.group(2).startswith("=") and m.group(1) not in SCALAR_CODES:
            key = m.group(1)
            if key not in names:
                raise ArgError(f"{where} {text!r}: {kernel.name} has no parameter {key!r} "
                               f"(parameters: {', '.join(names) or 'none'})")
            i = names.index(key)
            if i in given:
                raise ArgError(f"{where}: parameter {key} given twice")
            given[i] = m.group(2)
        else:
            while pos in given:
                pos += 1
            if pos >= n:
                raise ArgError(f"{where} {text!r}: {kernel.name} takes {n} arguments")
            given[pos] = text
            pos += 1
    missing = [names[i] for i in range(n) if i not in given]
    if missing:
        shown = ", ".join(f"{nm} ({types[names.index(nm)] or 'type unknown'})" for nm in missing)
        raise ArgError(f"{kernel.name}: missing argument{'s' if len(missing) > 1 else ''}: {shown}")
    out = []
    for i in range(n):
        a = parse_arg(given[i], names[i], types[i], f"{where} {names[i]}={given[i]}")
        size = kernel.params[i].size
        if isinstance(a, TmapArg):
            if size not in (8, TMAP_BYTES):
                raise ArgError(f"{where} {names[i]}: the kernel's parameter {i} is {size} bytes: neither a tensor map "
                               f"({TMAP_BYTES} B, __grid_constant__) nor a pointer to one")
            import dataclasses

            a = dataclasses.replace(a, slot=sum(isinstance(x, TmapArg) for x in out), by_pointer=size == 8)
        if isinstance(a, TensorArg) and size != 8:
            raise ArgError(f"{where} {names[i]}: the kernel's parameter {i} is {size} bytes, not a pointer")
        if isinstance(a, ScalarArg) and SCALAR_CODES[a.code][1] != size:
            raise ArgError(f"{where} {names[i]}={given[i]}: the kernel's parameter {i} takes {size} bytes, a "
                           f"{a.code} is {SCALAR_CODES[a.code][1]}")
        out.append(a)
    return out


def param_block(kernel: CompiledKernel, args, bases: dict[str, int]) -> bytes:
    """The parameter bytes as constant bank 0 holds them (pointers as the tensors' device addresses)."""
    buf = bytearray(kernel.param_bytes)
    for p, a in zip(kernel.params, args, strict=True):
        if isinstance(a, TmapArg):
            raw = struct.pack("<Q", bases[a.name]) if a.by_pointer else tmap_bytes(a)
        elif isinstance(a, TensorArg):
            raw = struct.pack("<Q", bases[a.name])
        else:
            fmt, size = SCALAR_CODES[a.code]
            try:
                raw = struct.pack(fmt, a.value)
            except (struct.error, OverflowError):
                raise ArgError(f"--arg {a.name}={a.value}: does not fit a {a.code}") from None
        buf[p.offset:p.offset + p.size] = raw[:p.size]
    return bytes(buf)


def tmap_bytes(a: TmapArg) -> bytes:
    """The 128 bytes of a tensor map as the emulator lays it out: a tag and the map's slot (what the map describes is
    kept beside, :func:`tmap_args`)."""
    return (TMAP_MAGIC + struct.pack("<I", a.slot)).ljust(TMAP_BYTES, b"\0")


def tmap_args(args) -> list[TmapArg]:
    return [a for a in args if isinstance(a, TmapArg)]


def tensor_args(args) -> list[TensorArg]:
    """The tensors of a launch: its pointer arguments, then the tensors its tensor maps name that no pointer argument
    is (and, for a map passed by pointer, the map's own 128 bytes)."""
    out = [a for a in args if isinstance(a, TensorArg)]
    names = {a.name for a in out}
    for m in tmap_args(args):
        elements = int(np.prod(m.dims))
        if m.tensor in names:
            t = next(a for a in out if a.name == m.tensor)
            if t.size_bytes < elements * m.elem_bytes:
                raise ArgError(f"--arg {m.name}: the map covers {elements * m.elem_bytes:,} B of {m.tensor}, which "
                               f"holds {t.size_bytes:,}")
        else:
            out.append(TensorArg(m.tensor, m.dtype, elements))
            names.add(m.tensor)
        if m.by_pointer:
            out.append(TensorArg(m.name, "u8", TMAP_BYTES, "tmap", (m.slot,)))
    return out


def tensor_buffers(args, seed: int = 0) -> list[TensorBuf]:
    """The memory of each tensor argument, in parameter order (then the tensors of the tensor maps)."""
    out = []
    for i, a in enumerate(tensor_args(args)):
        if a.dist == "tmap":  # a tensor map in global memory
            raw = np.frombuffer(tmap_bytes(TmapArg(a.name, "", "u8", (1,), (1,), 0, int(a.dist_args[0]))), np.uint8)
            out.append(TensorBuf(a.name, a.size_bytes, np.dtype(np.uint8), from_array(raw), True))
            continue
        bf16 = a.dtype == "bf16"
        dtype = np.dtype(np.uint16 if bf16 else DTYPES[a.dtype])
        if a.dist == "file":
            if a.size_bytes > MAX_GIVEN_BYTES:
                raise ArgError(f"--arg {a.name}: {a.file} is {a.size_bytes:,} bytes, more than the "
                               f"{MAX_GIVEN_BYTES:,} the emulator holds")
            arr = np.load(a.file, mmap_mode="r", allow_pickle=False).reshape(-1)[:a.elements]
            pages = from_array(np.asarray(arr))
            given = True
        elif a.dist:
            pages = generated(a.dist, dtype, a.size_bytes, i, a.dist_args, seed, bf16)
            given = True
        else:
            default = "uniform" if dtype.kind == "f" or bf16 else "zeros"
            pages = generated(default, dtype, a.size_bytes, i, (), seed, bf16)
            given = False
        out.append(TensorBuf(a.name, a.size_bytes, dtype, pages, given))
    return out



def device_buffers(module, taken: set[str]) -> dict[str, TensorBuf]:
    """A tensor for each ``__device__`` variable the kernel addresses (through constant bank 4), by symbol, holding
    what the module initialises it with (zeros where it does not), as the loader writes it. Named as the variable
    (``NAME (__device__)`` where a kernel argument has its name)."""
    out = {}
    for name, (size, init) in sorted(module.globals.items()):
        data = np.zeros(max(size, 1), dtype=np.uint8)
        data[:len(init)] = np.frombuffer(init, dtype=np.uint8)
        label = f"{name} (__device__)" if name in taken else name
        out[name] = TensorBuf(label, max(size, 1), np.dtype(np.uint8), from_array(data), True)
    return out


def const4_block(module, device: dict[str, TensorBuf]) -> tuple[bytes, tuple]:
    """Constant bank 4 as the loader fills it: each slot the address of its ``__device__`` variable (placed, plus the
    relocation's addend); and the slots that hold functions (``vprintf``), which the kernel would call."""
    block = bytearray(module.const4_size)
    calls = []
    for off, name, addend in module.slots:
        if name in device:
            block[off:off + 8] = (device[name].base + addend).to_bytes(8, "little")
        else:
            calls.append((off, name))
    return bytes(block), tuple(calls)
