"""SASS on the way in: compile a ``.cu`` file, read its SASS, and count what a kernel description needs.

Pure parsing (:func:`parse_sass`, :func:`parse_res_usage`, :func:`parse_ptxas`, :func:`summarize`) is separate
from running the toolkit (:func:`compile_and_dump`), so the parser is tested on committed SASS text.
Loops are found by backward branches: a ``BRA`` whose target lies before it closes a loop whose body is the
instructions from the target to the branch.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

# the classes a kernel description cares about, by SASS mnemonic (the text before the first '.')
CLASSES = ("LDG", "STG", "LDS", "STS", "LDSM", "STSM", "LDGSTS", "UTMALDG", "UTMASTG", "LDC", "LDL", "STL",
           "FFMA", "FADD", "FMUL", "FMNMX", "MUFU", "HFMA2", "HMMA", "HGMMA", "IMAD", "IADD3", "LEA", "SHF", "LOP3",
           "ISETP", "MOV", "S2R", "SHFL", "BAR", "SYNCS", "RED", "ATOM", "ATOMS", "BRA", "EXIT")
# what each IR operation stands for (for the comparison with a kernel file)
IR_CLASSES = {"ld global": ("LDG",), "st global": ("STG",), "ld shared": ("LDS",), "st shared": ("STS",),
              "ldsm": ("LDSM",), "stsm": ("STSM",), "fp32": ("FFMA", "FADD", "FMUL"), "bar": ("BAR",)}
INSTALL = {"nvcc": "install the CUDA toolkit (https://developer.nvidia.com/cuda-downloads) or "
                   "'pip install nvidia-cuda-nvcc' and put its bin/ on PATH",
           "cuobjdump": "'pip install nvidia-cuda-cuobjdump' (or 'pip install -e .[sass]')",
           "nvdisasm": "'pip install nvidia-cuda-nvdisasm' (or 'pip install -e .[sass]')"}

_LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);")
_FUNC = re.compile(r"^\s*Function\s*:\s*(\S+)")
_RES = re.compile(r"Function\s+(\S+):\s*$")
_CONTROL = re.compile(r"^\s*/\*\s*0x([0-9a-f]{16})\s*\*/\s*$")  # an encoding's second word, on a line alone
_REG = re.compile(r"REG:(\d+).*?SHARED:(\d+)")


class SassError(ValueError):
    """A toolkit that is missing or a source that does not compile (one line)."""


_REG_READ = re.compile(r"^-?\|?R\d+\b")  # a general register operand other than RZ, maybe negated or absolute


@dataclass(frozen=True)
class Inst:
    addr: int
    opcode: str  # full opcode with modifiers, e.g. LDG.E.128
    operands: str
    predicated: bool  # guarded by a predicate other than PT
    guard: str = ""  # the predicate as written (@P0, @!P1), empty when none
    # cycles the scheduler waits after issuing it before the warp's next instruction (the stall count of its
    # control code: bits 41-44 of the encoding's second word); None where the dump shows no encodings
    stall_cycles: int | None = None

    @property
    def mnemonic(self) -> str:
        return self.opcode.split(".")[0]

    @property
    def register_reads(self) -> int:
        """Source operands read from the register file: general registers other than RZ, not marked ``.reuse``
        (served by the operand reuse cache). The first operand is the destination for the arithmetic
        instructions this is asked of."""
        srcs = [o.strip() for o in self.operands.split(",")[1:]]
        return sum(1 for o in srcs if _REG_READ.match(o) and ".reuse" not in o)


@dataclass
class Function:
    mangled: str
    insts: list[Inst] = field(default_factory=list)
    regs: int | None = None
    smem_bytes: int | None = None

    @property
    def name(self) -> str:
        return demangle(self.mangled)


@dataclass(frozen=True)
class LoopBody:
    start: int  # address of the branch target
    end: int  # address of the backward branch
    insts: tuple[Inst, ...]

    def taken_path(self) -> tuple[Inst, ...]:
        """The instructions one iteration executes when every forward branch inside the body is taken (a guard such
        as ``if (need_mask) {...}`` compiled to ``@!P BRA`` past its block skips it) and every inner backward
        branch falls through (a polling loop that succeeds at once): the common path of a loop whose rare cases sit
        behind branches. NOPs are not counted."""
        index = {x.addr: i for i, x in enumerate(self.insts)}
        out, i = [], 0
        while i < len(self.insts):
            x = self.insts[i]
            if x.mnemonic != "NOP":
                out.append(x)
            target = _branch_target(x)
            if target is not None and x.addr < target <= self.end and target in index:
                i = index[target]
            else:
                i += 1
        return tuple(out)


def _branch_target(x: Inst) -> int | None:
    if x.mnemonic != "BRA":
        return None
    m = re.search(r"0x([0-9a-f]+)", x.operands)
    return int(m.group(1), 16) if m else None


_BUILTIN = {"i": "int", "j": "unsigned int", "l": "long", "m": "unsigned long", "x": "long long",
            "y": "unsigned long long", "s": "short", "t": "unsigned short", "c": "char", "a": "signed char",
            "h": "unsigned char", "b": "bool", "f": "float", "d": "double", "v": "void"}


def _template_args(s: str) -> str | None:
    """``<...>`` of an Itanium template-argument list ``I...E`` at the start of ``s`` (literals and builtin or named
    types: ``ILi256ELb1EfE`` -> ``<256, true, float>``); None for forms it does not read."""
    if not s.startswith("I"):
        return None
    i, out = 1, []
    while i < len(s) and s[i] != "E":
        if s[i] == "L":  # a literal: L <type> <value> E
            m = re.match(r"L([a-z])(n?)(\d+)E", s[i:])
            if not m or m.group(1) not in _BUILTIN:
                return None
            v = ("-" if m.group(2) else "") + m.group(3)
            out.append(("true" if v == "1" else "false") if m.group(1) == "b" else v)
            i += m.end()
        elif s[i] in _BUILTIN:
            out.append(_BUILTIN[s[i]])
            i += 1
        elif s[i].isdigit():  # a named type
            m = re.match(r"(\d+)", s[i:])
            n = int(m.group(1))
            out.append(s[i + m.end():i + m.end() + n])
            i += m.end() + n
        else:
            return None
    return "<" + ", ".join(out) + ">" if i < len(s) else None


def demangle(mangled: str) -> str:
    """The function name of an Itanium-mangled symbol (``_Z15transpose_naivePKfPfi`` -> ``transpose_naive``), with
    its template arguments where it has them (``_Z9block_sumILi256EEvPKfPdi`` -> ``block_sum<256>``)."""
    if mangled.startswith("_ZN"):  # a nested name (a namespace's kernel): its last component
        i, name = 3, None
        while i < len(mangled) and (m := re.match(r"\d+", mangled[i:])):
            n = int(m.group(0))
            name, i = mangled[i + m.end():i + m.end() + n], i + m.end() + n
        if name is None:
            return mangled
        return name + (_template_args(mangled[i:]) or "")
    m = re.match(r"_Z(\d+)", mangled)
    if not m:
        return mangled
    n = int(m.group(1))
    name = mangled[m.end():m.end() + n]
    return name + (_template_args(mangled[m.end() + n:]) or "")


def bare_name(name: str) -> str:
    """A kernel's name without its template arguments (``block_sum<256>`` -> ``block_sum``)."""
    return name.split("<", 1)[0]


def parse_sass(text: str) -> list[Function]:
    """Functions and their instructions from ``cuobjdump -sass`` (or ``nvdisasm``) text."""
    funcs: list[Function] = []
    for line in text.splitlines():
        fm = _FUNC.match(line)
        if fm:
            funcs.append(Function(fm.group(1)))
            continue
        m = _LINE.search(line)
        if m and funcs:
            pred = (m.group(2) or "").strip()
            funcs[-1].insts.append(Inst(int(m.group(1), 16), m.group(3), m.group(4).strip(),
                                        bool(pred) and pred.lstrip("@!") not in ("PT", "UPT"), pred))
            continue
        c = _CONTROL.match(line)
        if c and funcs and funcs[-1].insts and funcs[-1].insts[-1].stall_cycles is None:
            funcs[-1].insts[-1] = replace(funcs[-1].insts[-1], stall_cycles=(int(c.group(1), 16) >> 41) & 0xF)
    return funcs


def stall_means(insts, classes: dict[str, tuple[str, ...]], skip: tuple[str, ...] = ()) -> dict[str, tuple[int, float]]:
    """Per class of ``classes`` (name -> mnemonics), and ``other`` for the mnemonics in no class and not in ``skip``:
    (instructions, mean control-code stall cycles per instruction) over ``insts``, NOPs excluded; a class with no
    instruction gets a mean of 1 (one issue a cycle)."""
    known = {m: c for c, ms in classes.items() for m in ms}
    tally: dict[str, list] = {c: [0, 0] for c in (*classes, "other")}
    for x in insts:
        if x.mnemonic == "NOP" or (x.mnemonic in skip and x.mnemonic not in known):
            continue
        if x.stall_cycles is None:
            raise SassError(f"0x{x.addr:04x} {x.opcode}: the SASS shows no encoding to read its stall count from")
        t = tally[known.get(x.mnemonic, "other")]
        t[0] += 1
        t[1] += x.stall_cycles
    return {c: (n, s / n if n else 1.0) for c, (n, s) in tally.items()}


def stall_cycles(insts) -> int | None:
    """The cycles the control codes make one warp wait between issues over ``insts`` (NOPs excluded): the least
    time a warp alone takes to issue them, before any wait on memory or a pipe's scoreboard. None where an
    instruction's encoding is missing."""
    s = [x.stall_cycles for x in insts if x.mnemonic != "NOP"]
    return None if any(v is None for v in s) else sum(s)


def parse_res_usage(text: str) -> dict[str, tuple[int, int]]:
    """``cuobjdump -res-usage``: mangled name -> (registers per thread, static shared bytes)."""
    out = {}
    name = None
    for line in text.splitlines():
        fm = _RES.search(line)
        if fm:
            name = fm.group(1)
            continue
        rm = _REG.search(line)
        if rm and name:
            out[name] = (int(rm.group(1)), int(rm.group(2)))
            name = None
    return out


def parse_ptxas(text: str) -> dict[str, tuple[int, int]]:
    """``nvcc -Xptxas -v`` output: mangled name -> (registers per thread, static shared bytes)."""
    out = {}
    name = None
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line) or re.search(r"Function properties for (\S+)",
                                                                                  line)
        if m:
            name = m.group(1)
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and name:
            smem = re.search(r"(\d+) bytes smem", line)
            out[name] = (int(m.group(1)), int(smem.group(1)) if smem else 0)
    return out


def loops(func: Function) -> list[LoopBody]:
    """Loop bodies, one per backward branch, innermost (shortest) first."""
    out = []
    for i, inst in enumerate(func.insts):
        target = _branch_target(inst)
        if target is None:
            continue
        if target < inst.addr:  # (a branch to itself after EXIT is the end-of-code trap, not a loop)
            body = tuple(x for x in func.insts[:i + 1] if x.addr >= target)
            out.append(LoopBody(target, inst.addr, body))
    return sorted(out, key=lambda lb: (lb.end - lb.start, lb.start))


def classify(insts) -> tuple[Counter, Counter]:
    """Instruction counts by class (mnemonics outside :data:`CLASSES` count as ``other``), and predicated ones."""
    counts, pred = Counter(), Counter()
    for x in insts:
        if x.mnemonic == "NOP":
            continue
        c = x.mnemonic if x.mnemonic in CLASSES else "other"
        counts[c] += 1
        pred[c] += x.predicated
    return counts, pred


def summarize(funcs: list[Function], only: str | None = None) -> str:
    """The report ``gpusim sass`` prints."""
    lines = []
    for f in funcs:
        if only and only not in (f.name, f.mangled):
            continue
        regs = "?" if f.regs is None else f.regs
        smem = "?" if f.smem_bytes is None else f.smem_bytes
        lines.append(f"{f.name} ({f.mangled}): {regs} registers, {smem} B static shared memory, "
                     f"{len(f.insts)} instructions")
        lines.append("  whole kernel: " + _fmt_counts(*classify(f.insts)))
        for k, lb in enumerate(loops(f)):
            path = lb.taken_path()
            taken = "" if len(path) == len([x for x in lb.insts if x.mnemonic != "NOP"]) else \
                f"; {len(path)} when every forward branch is taken"
            lines.append(f"  loop {k + 1} [0x{lb.start:04x}..0x{lb.end:04x}] ({len(lb.insts)} instructions{taken}): "
                         + _fmt_counts(*classify(lb.insts)))
            stalls = stall_cycles(path)
            if stalls is not None and path:
                lines.append(f"    control-code stalls on that path: {stalls} cycles ({stalls / len(path):.2f} per "
                             f"instruction), the least time one warp alone issues an iteration in")
    if not lines:
        names = ", ".join(f.name for f in funcs) or "none"
        raise SassError(f"no kernel named {only!r} in the SASS (kernels: {names})")
    return "\n".join(lines)


def listing(funcs: list[Function], only: str | None = None) -> str:
    """The SASS of each kernel (or of ``only``), one instruction per line, loop bodies marked: what
    ``cuobjdump -sass`` prints, without the encodings."""
    lines = []
    for f in funcs:
        if only and only not in (f.name, f.mangled):
            continue
        found = loops(f)
        starts = {lb.start: k + 1 for k, lb in enumerate(found)}
        ends = {lb.end: k + 1 for k, lb in enumerate(found)}
        lines.append(f"{f.name} ({f.mangled}):")
        for x in f.insts:
            if x.mnemonic == "NOP":
                continue
            mark = f"  <- loop {starts[x.addr]} starts" if x.addr in starts else ""
            mark += f"  <- loop {ends[x.addr]} branches back" if x.addr in ends else ""
            lines.append(f"  0x{x.addr:04x}  {x.guard:>5} {x.opcode} {x.operands}".rstrip() + mark)
    if not lines:
        names = ", ".join(f.name for f in funcs) or "none"
        raise SassError(f"no kernel named {only!r} in the SASS (kernels: {names})")
    return "\n".join(lines)


def _fmt_counts(counts: Counter, pred: Counter) -> str:
    order = [c for c in (*CLASSES, "other") if counts[c]]
    return ", ".join(f"{c} {counts[c]}" + (f" ({pred[c]} predicated)" if pred[c] else "") for c in order)


def find_tool(name: str) -> str:
    """Path of a CUDA toolkit program: PATH, /usr/local/cuda*/bin, then NVIDIA's pip wheels."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/local/cuda*/bin/{name}"), reverse=True)
    for base in sys.path:
        candidates += sorted(glob.glob(os.path.join(base, "nvidia", "*", "bin", name)))
    for c in candidates:
        if os.access(c, os.X_OK):
            return c
    raise SassError(f"{name} not found on PATH, under /usr/local/cuda*/bin or in NVIDIA's pip wheels: "
                    f"{INSTALL[name]}")


# bounds on the toolkit's run (gpusim's, not the hardware's): the guide's sources and the twins compile in about a
# second in some 100 MB; a source that includes /dev/zero or loops the preprocessor must not take the machine
NVCC_TIMEOUT_S = 300
NVCC_MEMORY_BYTES = 4 << 30  # address space of nvcc and each tool it runs (the twins take some 100 MB)


def _bounded() -> None:
    """In the toolkit's process before it runs: its address space and the files it writes are capped."""
    import resource

    for limit, value in ((resource.RLIMIT_AS, NVCC_MEMORY_BYTES), (resource.RLIMIT_FSIZE, NVCC_MEMORY_BYTES)):
        soft, hard = resource.getrlimit(limit)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(limit, (cap if soft == resource.RLIM_INFINITY else min(soft, cap), hard))


def _tool(cmd: list[str], cu: Path, what: str, **kw) -> subprocess.CompletedProcess:
    """``cmd`` run with the time and memory bounds; its output decoded whatever bytes it prints."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, errors="replace", check=False,
                              timeout=NVCC_TIMEOUT_S, preexec_fn=_bounded if os.name == "posix" else None, **kw)
    except subprocess.TimeoutExpired:
        raise SassError(f"{cu}: {what} ran past {NVCC_TIMEOUT_S} s; stopped") from None
    except OSError as e:
        raise SassError(f"{cu}: cannot run {what}: {e.strerror or e}") from None


def compile_and_dump(cu: Path, arch: str = "sm_90a", defines: tuple[str, ...] = ()) -> list[Function]:
    """Compile ``cu`` to a cubin with nvcc (bounded in time and memory) and read its SASS and resource usage."""
    from gpusim.inputs import check_regular_file

    check_regular_file(cu, "CUDA source", SassError)  # a FIFO, a folder or a device is named as such
    if not re.fullmatch(r"sm_\d+[a-z]?", arch):
        raise SassError(f"--arch {arch!r}: expected e.g. sm_90a")
    nvcc = find_tool("nvcc")
    cuobjdump = find_tool("cuobjdump")
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / "k.cubin"
        cmd = [nvcc, "-cubin", f"-arch={arch}", "-Xptxas", "-v", *[f"-D{d}" for d in defines], "-o", str(cubin),
               str(cu)]
        r = _tool(cmd, cu, "nvcc")
        if r.returncode:
            first = next((ln for ln in r.stderr.splitlines() if "error" in ln), r.stderr.strip()[:200]).strip()
            if r.returncode < 0 or "bad_alloc" in r.stderr or "out of memory" in r.stderr.lower():
                first += f" (its memory is capped at {NVCC_MEMORY_BYTES >> 30} GiB)"
            raise SassError(f"{cu}: nvcc failed: {first}")
        ptxas = parse_ptxas(r.stderr)
        # cuobjdump -sass runs nvdisasm: let it find the one beside it or in NVIDIA's pip wheels
        env = dict(os.environ)
        try:
            env["PATH"] = os.path.dirname(find_tool("nvdisasm")) + os.pathsep + env.get("PATH", "")
        except SassError:
            pass  # cuobjdump reports the missing nvdisasm itself, and the error below says so
        sass = _tool([cuobjdump, "-sass", str(cubin)], cu, "cuobjdump", env=env)
        res = _tool([cuobjdump, "-res-usage", str(cubin)], cu, "cuobjdump")
        if sass.returncode:
            raise SassError(f"{cu}: cuobjdump failed: {sass.stderr.strip()[:200]}")
    usage = {**parse_res_usage(res.stdout), **ptxas}  # ptxas: shared memory without the 1 KB system reserve
    funcs = parse_sass(sass.stdout)
    if not funcs:
        raise SassError(f"{cu}: no kernel (__global__ function) in the compiled code")
    for f in funcs:
        if f.mangled in usage:
            f.regs, f.smem_bytes = usage[f.mangled]
    return funcs


def split_source(source: str) -> tuple[Path, str | None]:
    """``file.cu`` or ``file.cu:function``."""
    path, _, func = source.partition(".cu:")
    return (Path(path + ".cu"), func) if func else (Path(source), None)


def ir_counts(kernel) -> Counter:
    """Static instruction counts of a kernel description, by the classes of :data:`IR_CLASSES`: prologue,
    one outer-loop body (inner loops unrolled) and epilogue, as ptxas lays them out."""
    from gpusim.ir import Barrier, Compute, Loop, Mem

    out = Counter()

    def walk(ops, times):
        for op in ops:
            if isinstance(op, Loop):
                walk(op.body, times * (op.trips if op.var != "it" else 1))
            elif isinstance(op, Mem) and not op.async_copy:
                key = op.kind if op.kind in ("ldsm", "stsm") else f"{op.kind} {op.space}"
                out[key] += op.repeat * times
            elif isinstance(op, Compute) and op.pipe == "fp32":
                out["fp32"] += op.count * times
            elif isinstance(op, Barrier):
                out["bar"] += times

    walk(kernel.prologue, 1)
    if kernel.loop is not None:
        walk((kernel.loop,), 1)
    walk(kernel.epilogue, 1)
    return out


def compare(kernel, source: str, arch: str = "sm_90a") -> list[str]:
    """Mismatches between a kernel description and the SASS of the ``.cu`` it names (one line each)."""
    cu, func_name = split_source(source)
    funcs = compile_and_dump(cu, arch)
    if func_name:
        funcs = [f for f in funcs if func_name in (f.name, f.mangled)]
    if len(funcs) != 1:
        raise SassError(f"{cu}: {len(funcs)} kernels match; name one as '{cu.name}:FUNCTION' in source=")
    f = funcs[0]
    out = []
    where = f"{kernel.name} vs {cu.name}:{f.name}"
    if f.regs is not None and f.regs != kernel.launch.regs_per_thread:
        out.append(f"{where}: the IR launches {kernel.launch.regs_per_thread} registers per thread, "
                   f"ptxas allocates {f.regs}")
    if f.smem_bytes and f.smem_bytes > kernel.launch.smem_bytes:
        out.append(f"{where}: the IR declares {kernel.launch.smem_bytes} B of shared memory, the SASS uses "
                   f"{f.smem_bytes} B static")
    sass_counts, _ = classify(f.insts)
    mine = ir_counts(kernel)
    for key, classes in IR_CLASSES.items():
        s = sum(sass_counts[c] for c in classes)
        if s != mine[key]:
            out.append(f"{where}: {key} instructions: IR {mine[key]}, static SASS {s} ({'/'.join(classes)}; "
                       "every code path counted once, loops once)")
    return out


def skeleton(func: Function, cu: Path, name: str) -> str:
    """A starting kernel file: launch, registers, the memory and compute operations in SASS order."""
    ops: list[str] = []
    fns: list[str] = []
    serial = [0]  # names stay unique across prologue, body and epilogue

    def uid() -> int:
        serial[0] += 1
        return serial[0]

    mem = {"LDG": ("global", "ld"), "STG": ("global", "st"), "LDS": ("shared", "ld"), "STS": ("shared", "st"),
           "LDSM": ("shared", "ldsm"), "STSM": ("shared", "stsm")}
    body_loops = loops(func)
    outer = body_loops[-1] if body_loops else None

    def width(opcode: str) -> int:
        m = re.search(r"\.(32|64|128|U8|S8|U16|S16)\b", opcode)
        return {"64": 8, "128": 16, "U8": 1, "S8": 1, "U16": 2, "S16": 2}.get(m.group(1), 4) if m else 4

    def section(insts, indent):
        run: list[str] = []
        count = 0
        pad = " " * indent

        def flush():
            nonlocal count
            if count:
                ops.append(f"{pad}Compute('{run[0]}_{uid()}', '{run[0]}', {count}),")
            count = 0
            run.clear()

        for x in insts:
            m = x.mnemonic
            if m in mem:
                flush()
                space, kind = mem[m]
                fn = f"addr_{len(fns)}"
                fns.append(f"def {fn}(c):  # {m} {x.operands} (0x{x.addr:04x}){' predicated' if x.predicated else ''}\n"
                           f"    raise NotImplementedError('{name}: fill in the per-lane byte address of {m} at "
                           f"0x{x.addr:04x} (c.tid, c.lane, c.warp, c.bx, c.by, c.it, c.r)')\n")
                tensor = ", 'TENSOR'" if space == "global" else ""
                extra = ", matrices=4" if kind in ("ldsm", "stsm") else ""
                extra += ", predicated=True" if x.predicated else ""  # an @P instruction: every warp issues it
                ops.append(f"{pad}Mem('{m.lower()}_{uid()}', '{space}', '{kind}', {width(x.opcode)}, {fn}"
                           f"{tensor}{extra}),")
            elif m == "BAR":
                flush()
                ops.append(f"{pad}Barrier(),")
            elif m in ("FFMA", "FADD", "FMUL", "FMNMX", "IMAD", "IADD3", "LEA", "SHF", "LOP3", "ISETP", "HMMA",
                       "MUFU"):
                pipe = {"FFMA": "fp32", "FADD": "fp32", "FMUL": "fp32", "FMNMX": "fp32", "HMMA": "tensor",
                        "MUFU": "sfu"}.get(m, "int32")
                if run and run[0] != pipe:
                    flush()
                run[:1] = [pipe]
                count += 1
        flush()

    pro = [x for x in func.insts if outer is None or x.addr < outer.start]
    body = list(outer.insts) if outer else []
    epi = [x for x in func.insts if outer is not None and x.addr > outer.end]
    section(pro, 8)
    pro_ops, ops[:] = list(ops), []
    section(body, 8)
    body_ops, ops[:] = list(ops), []
    section(epi, 8)
    epi_ops = list(ops)
    regs = func.regs if func.regs is not None else 32
    smem = func.smem_bytes or 0
    join = "\n".join
    return f'''"""{name}: IR skeleton generated by `gpusim sass {cu.name} --skeleton` from {func.name}.

Fill in every address function (they raise NotImplementedError), the grid and block, the tensors and the loop
trip count; merge repeated operations into ``repeat=``. See docs/authoring.md. The counts are the static SASS:
where the trip count is known only at run time, ptxas emits several code paths (an unrolled loop and remainder
blocks after it); keep the ones your shape executes.
"""

from gpusim.authoring import Barrier, Compute, Kernel, Launch, Loop, Mem, Tensor, register


{join(fns)}

@register("{name}", shape_names=("N",), source="{cu.name}:{func.name}")
def build(shape):
    (n,) = shape
    grid, block = (n // 256, 1, 1), (256, 1, 1)  # TODO: the launch of {func.name}
    prologue = (
{join(pro_ops)}
    )
    body = (
{join(body_ops)}
    )
    epilogue = (
{join(epi_ops)}
    )
    return Kernel("{name}", shape, Launch(grid, block, {regs}, {smem}), tensors=(Tensor("TENSOR", 4 * n),),
                  prologue=prologue, loop=Loop(1, body) if body else None, epilogue=epilogue)
'''
