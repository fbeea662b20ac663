"""Compile a CUDA kernel for sm_90 (or read a cubin or SASS listing) and collect what the emulator needs: the SASS of
each kernel, its registers, static shared memory, stack frame and the layout of its parameters.

Builds are cached by content (``$GPUSIM_CACHE_DIR/build`` or ``~/.cache/gpusim/build``): the source and every local
header it includes, the options and the compiler's version. nvcc runs with a time and a memory bound. A cache entry is
written to a temporary folder and renamed, so an interrupted build never leaves half an entry.
"""

from __future__ import annotations

from gpusim.ir import KernelError

import hashlib
import json
import os
import re
import resource
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from gpusim import sass
from gpusim.frontend.isa import Decoded, SassDecodeError, decode

NVCC_TIMEOUT_S = 300
NVCC_MEMORY_BYTES = 8 << 30
ARCHES = ("sm_90", "sm_90a")
# ptxas on an sm_90a instruction built for sm_90 (then rebuilt for sm_90a): refused (wgmma, setmaxnreg), or an
# advisory that fails NVRTC's build (TMA multicast)
SM_90A_ONLY = ("not supported on .target 'sm_90'", "should be used on .target 'sm_90a")


class BuildError(KernelError):
    """A source that does not compile, a missing toolkit, an unreadable cubin (one line)."""


@dataclass(frozen=True)
class Param:
    ordinal: int
    offset: int  # bytes from the start of the parameter block
    size: int


@dataclass(frozen=True)
class Module:
    """What a kernel finds beside its own code in the cubin: constant bank 3 (``__constant__`` variables, as the module
    initialises them), and the slots of constant bank 4 that the loader fills with addresses: of ``__device__``
    variables (``globals``: name -> (size, initial bytes)) or of device-runtime functions (``printf``'s vprintf)."""

    const3: bytes = b""
    const4_size: int = 0
    slots: tuple[tuple[int, str, int], ...] = ()  # (offset in bank 4, symbol, addend): a 64-bit address
    globals: dict = field(default_factory=dict)  # __device__ variable -> (size in bytes, initial contents)
    const2: dict = field(default_factory=dict)  # mangled kernel name -> its constant bank 2 (jump tables)


MODULE_KEY = " module"  # kernels.json: the module's data (no kernel's mangled name starts with a space)


@dataclass
class CompiledKernel:
    """One kernel of a build."""

    name: str  # the function name (demangled)
    mangled: str
    program: list[Decoded]
    regs: int
    static_smem_bytes: int
    stack_bytes: int
    params: list[Param]
    source: str  # the file it came from
    arch: str
    signature: list[tuple[str, str]] | None = None  # (C type, name) of each parameter, where the source was read
    cluster: tuple[int, int, int] = (1, 1, 1)  # __cluster_dims__ (EIATTR_CTA_PER_CLUSTER): the CTAs of a cluster
    module: Module = field(default_factory=lambda: Module())  # the module's __constant__ and __device__ data
    # an instruction the decoder cannot read: the error, raised when this kernel is picked (the file's other kernels
    # still go through); its program is then empty
    decode_error: str = ""

    @property
    def param_bytes(self) -> int:
        return max((p.offset + p.size for p in self.params), default=0)


def cache_dir() -> Path:
    base = os.environ.get("GPUSIM_CACHE_DIR")
    return (Path(base) if base else Path.home() / ".cache" / "gpusim") / "build"


def _limit_memory() -> None:  # runs in nvcc's child process before exec
    resource.setrlimit(resource.RLIMIT_AS, (NVCC_MEMORY_BYTES, NVCC_MEMORY_BYTES))


def _run(cmd: list[str], what: str, env=None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, check=False, timeout=NVCC_TIMEOUT_S,
                              preexec_fn=_limit_memory, env=env)
    except subprocess.TimeoutExpired:
        raise BuildError(f"{what}: {Path(cmd[0]).name} did not finish within {NVCC_TIMEOUT_S} s") from None
    except OSError as e:
        raise BuildError(f"{what}: cannot run {cmd[0]}: {e.strerror}") from None


def _text(b: bytes) -> str:
    return b.decode("utf-8", errors="replace")


def _local_includes(path: Path, seen: set[Path] | None = None) -> list[Path]:
    seen = set() if seen is None else seen
    out = []
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return out
    for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, flags=re.M):
        p = (path.parent / inc).resolve()
        if p.is_file() and p not in seen:
            seen.add(p)
            out.append(p)
            out.extend(_local_includes(p, seen))
    return out


def _tool_env() -> dict:
    env = dict(os.environ)
    try:  # cuobjdump -sass runs nvdisasm: let it find the one in NVIDIA's pip wheels
        env["PATH"] = os.path.dirname(sass.find_tool("nvdisasm")) + os.pathsep + env.get("PATH", "")
    except sass.SassError:
        pass
    return env


COMPILERS = ("nvcc", "nvrtc", "nvrtc-plain")
# NVRTC's options as CuPy's RawModule compiles (its compile cache adds -ftz=true: denormals flushed, so expf, rsqrtf and
# division lose their denormal scaling; measured: validate/fresh's sfu_mix runs 24 fewer instructions an iteration on
# the H100 than the build without it, validate/measurements/h100/fresh-2026-11-28.json); "nvrtc-plain": NVRTC alone,
# as validate/run_tc_sm80.py's GPUSIM_NVRTC_CUBIN builds the binaries of frontend-binary-*.json
NVRTC_OPTIONS = {"nvrtc": ("-std=c++17", "-ftz=true"), "nvrtc-plain": ("-std=c++17",)}


def compile_cuda(cu: Path, arch: str = "sm_90", defines: tuple[str, ...] = (),
                 options: tuple[str, ...] = (), compiler: str = "nvcc") -> list[CompiledKernel]:
    """Every kernel of ``cu`` compiled for ``arch`` (cached by content) by nvcc, or by NVRTC as CuPy's RawModule
    compiles (:data:`NVRTC_OPTIONS`; ``nvrtc-plain``: without CuPy's ``-ftz=true``)."""
    cu = Path(cu)
    if not cu.is_file():
        raise BuildError(f"{cu}: no such file")
    if arch not in ARCHES:
        raise BuildError(f"--arch {arch!r}: the front-end targets {' or '.join(ARCHES)} (the H100)")
    try:
        src = cu.read_bytes()
    except OSError as e:
        raise BuildError(f"{cu}: cannot read: {e.strerror}") from None
    if b"\0" in src:
        raise BuildError(f"{cu}: not a text file")
    if compiler not in COMPILERS:
        raise BuildError(f"--compiler {compiler!r}: one of {', '.join(COMPILERS)}")
    nvcc = _find("nvcc") if compiler == "nvcc" else "nvrtc"
    h = hashlib.sha256()
    h.update(src)
    for inc in _local_includes(cu.resolve()):
        h.update(inc.name.encode())
        h.update(inc.read_bytes())
    nvrtc_options = NVRTC_OPTIONS.get(compiler, ())
    h.update(b"entry format 4: module data, bank 2")  # kernels.json holds the module's constants (older rebuilt)
    h.update(json.dumps([arch, list(defines), list(options), compiler, _version(nvcc)]
                        + ([list(nvrtc_options)] if nvrtc_options else [])).encode())
    entry = cache_dir() / h.hexdigest()[:32]
    if (entry / SM_90A_MARK).is_file():  # an earlier build for sm_90 needed sm_90a: straight there
        return compile_cuda(cu, "sm_90a", defines, options, compiler)
    if not (entry / "kernels.json").is_file():
        try:
            _build_entry(cu, nvcc, arch, defines, (*nvrtc_options, *options), entry)
        except BuildError as e:  # wgmma, setmaxnreg: sm_90a's arch-specific instructions (Hopper's own)
            if arch != "sm_90" or not any(h in str(e) for h in SM_90A_ONLY):
                raise
            _mark_sm_90a(entry)
            return compile_cuda(cu, "sm_90a", defines, options, compiler)
    return _load_entry(entry, cu, arch)


SM_90A_MARK = "needs-sm_90a"  # in a cache entry for sm_90: the source needs sm_90a (saves a failing build a run)


def _mark_sm_90a(entry: Path) -> None:
    """Remember in ``entry`` that its source needs sm_90a (written whole, by a rename, or not at all)."""
    try:
        entry.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=entry)
        os.close(fd)
        os.replace(tmp, entry / SM_90A_MARK)
    except OSError:  # a cache that cannot be written costs the failing build again next run, nothing else
        pass


def load_cubin(path: Path) -> list[CompiledKernel]:
    """The kernels of an existing cubin (``nvcc -cubin``)."""
    path = Path(path)
    if not path.is_file():
        raise BuildError(f"{path}: no such file")
    with tempfile.TemporaryDirectory() as tmp:
        entry = Path(tmp) / "e"
        entry.mkdir()
        shutil.copyfile(path, entry / "k.cubin")
        _describe(entry, ptxas_text="", what=str(path))
        return _load_entry(entry, path, "sm_90")


def cubin_functions(path: Path) -> list[sass.Function]:
    """The SASS functions of a cubin, with their registers and shared memory (``gpusim sass FILE.cubin``)."""
    path = Path(path)
    if not path.is_file():
        raise BuildError(f"{path}: no such file")
    with tempfile.TemporaryDirectory() as tmp:
        entry = Path(tmp)
        shutil.copyfile(path, entry / "k.cubin")
        _describe(entry, ptxas_text="", what=str(path))
        funcs = sass.parse_sass((entry / "sass.txt").read_text())
        meta = json.loads((entry / "kernels.json").read_text())
    for f in funcs:
        if f.mangled in meta:
            f.regs, f.smem_bytes = meta[f.mangled]["regs"], meta[f.mangled]["smem"]
    return funcs


def load_sass(path: Path) -> list[CompiledKernel]:
    """The kernels of a ``cuobjdump -sass`` listing. Registers and shared memory are unknown (the listing does not
    say them): give them with --set regs_per_thread=... smem_bytes=...; parameters are read as the listing's
    constant-bank reads."""
    path = Path(path)
    try:
        text = path.read_text(errors="replace")
    except OSError as e:
        raise BuildError(f"{path}: cannot read: {e.strerror}") from None
    funcs = sass.parse_sass(text)
    if not funcs or not any(f.insts for f in funcs):
        raise BuildError(f"{path}: no SASS functions found (expected `cuobjdump -sass` output)")
    out = []
    for f in funcs:
        program, error = _decoded(f, str(path))
        out.append(CompiledKernel(f.name, f.mangled, program, 0, 0, 0, [], str(path), "sm_90", decode_error=error))
    return out


def _find(tool: str) -> str:
    try:
        return sass.find_tool(tool)
    except sass.SassError as e:
        raise BuildError(str(e)) from None


_VERSIONS: dict[str, str] = {}


def _version(nvcc: str) -> str:
    if nvcc == "nvrtc":
        from gpusim.frontend import nvrtc

        lib = nvrtc.find_library()
        if lib is None:
            raise BuildError("--compiler nvrtc: libnvrtc not found; 'pip install nvidia-cuda-nvrtc' (or "
                             "'pip install gpusim[cuda]')")
        import ctypes

        return "nvrtc " + nvrtc.version(ctypes.CDLL(lib))
    if nvcc not in _VERSIONS:
        r = _run([nvcc, "--version"], "nvcc --version")
        _VERSIONS[nvcc] = _text(r.stdout).strip().splitlines()[-1] if r.returncode == 0 else "?"
    return _VERSIONS[nvcc]


def _build_entry(cu: Path, nvcc: str, arch: str, defines, options, entry: Path) -> None:
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=entry.parent))
    try:
        cubin = tmp / "k.cubin"
        if nvcc == "nvrtc":
            import sys

            from gpusim.frontend import nvrtc

            cmd = [sys.executable, "-m", "gpusim.frontend.nvrtc", str(cu), str(cubin), f"-arch={arch}",
                   f"-I{cu.resolve().parent}", *[f"-D{d}" for d in defines], *options]
            env = dict(os.environ)  # libnvrtc loads its builtins library from beside it
            env["LD_LIBRARY_PATH"] = os.path.dirname(nvrtc.find_library()) + os.pathsep + env.get("LD_LIBRARY_PATH", "")
        else:
            gencode = f"-gencode=arch=compute_{arch[3:]},code={arch}"
            cmd = [nvcc, "-cubin", gencode, "-Xptxas", "-v", *[f"-D{d}" for d in defines], *options,
                   "-o", str(cubin), str(cu)]
            env = None
        r = _run(cmd, str(cu), env)
        err = _text(r.stderr)
        if r.returncode:
            lines = err.splitlines()  # an sm_90a-only instruction's error first (the caller rebuilds for sm_90a),
            # ahead of ptxas's advisory warnings
            first = next((ln for ln in lines if any(h in ln for h in SM_90A_ONLY)), None) or next(
                (ln for ln in lines if "error" in ln), err.strip()[:300])
            raise BuildError(f"{cu}: {'NVRTC' if nvcc == 'nvrtc' else 'nvcc'} failed: {first.strip()}")
        if nvcc == "nvrtc":
            err = ""
        _describe(tmp, err, str(cu))
        try:
            tmp.rename(entry)
        except OSError:  # another process built the same entry meanwhile
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _describe(folder: Path, ptxas_text: str, what: str) -> None:
    """Write the SASS listing and the kernels' resources and parameters beside the cubin in ``folder``."""
    cuobjdump = _find("cuobjdump")
    env = _tool_env()
    cubin = folder / "k.cubin"
    dump = _run([cuobjdump, "-sass", str(cubin)], what, env)
    if dump.returncode:
        raise BuildError(f"{what}: cuobjdump -sass failed: {_text(dump.stderr).strip()[:200]}")
    elf = _run([cuobjdump, "-elf", str(cubin)], what, env)
    res = _run([cuobjdump, "-res-usage", str(cubin)], what, env)
    (folder / "sass.txt").write_text(_text(dump.stdout))
    usage = _res_usage(_text(res.stdout))
    ptxas = sass.parse_ptxas(ptxas_text)
    params = _kparams(_text(elf.stdout))
    clusters = _kclusters(_text(elf.stdout))
    kernels: dict = {MODULE_KEY: _module_data(_text(elf.stdout))}
    for f in sass.parse_sass(_text(dump.stdout)):
        regs, smem, stack = usage.get(f.mangled, (0, 0, 0))
        if f.mangled in ptxas:  # ptxas -v: static shared memory without the 1 KB the system reserves
            regs, smem = ptxas[f.mangled]
        elif smem >= 1024:
            smem -= 1024
        kernels[f.mangled] = {"regs": regs, "smem": smem, "stack": stack,
                              "params": [list(p) for p in params.get(f.mangled, [])],
                              "cluster": list(clusters.get(f.mangled, (1, 1, 1)))}
    (folder / "kernels.json").write_text(json.dumps(kernels, indent=1, sort_keys=True))


def _res_usage(text: str) -> dict[str, tuple[int, int, int]]:
    out, name = {}, None
    for line in text.splitlines():
        m = re.search(r"Function\s+(\S+):\s*$", line)
        if m:
            name = m.group(1)
            continue
        m = re.search(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)", line)
        if m and name:
            out[name] = (int(m.group(1)), int(m.group(3)), int(m.group(2)))
            name = None
    return out


def _kparams(text: str) -> dict[str, list[tuple[int, int, int]]]:
    """EIATTR_KPARAM_INFO of each kernel's .nv.info section: (ordinal, offset, size)."""
    out: dict[str, list] = {}
    cur = None
    for line in text.splitlines():
        m = re.match(r"^\.nv\.info\.(\S+)", line.strip())
        if m:
            cur = m.group(1)
            out.setdefault(cur, [])
            continue
        m = re.search(r"Ordinal\s*:\s*(0x[0-9a-f]+)\s+Offset\s*:\s*(0x[0-9a-f]+)\s+Size\s*:\s*(0x[0-9a-f]+)", line)
        if m and cur:
            out[cur].append(tuple(int(g, 16) for g in m.groups()))
    return {k: sorted(v) for k, v in out.items()}


def _kclusters(text: str) -> dict[str, tuple[int, int, int]]:
    """EIATTR_CTA_PER_CLUSTER of each kernel's .nv.info section (``__cluster_dims__``): its cluster's CTAs."""
    out: dict[str, tuple[int, int, int]] = {}
    cur, attr = None, False
    for line in text.splitlines():
        t = line.strip()
        m = re.match(r"^\.nv\.info\.(\S+)", t)
        if m:
            cur, attr = m.group(1), False
            continue
        if t.startswith("Attribute:"):
            attr = "EIATTR_CTA_PER_CLUSTER" in t
            continue
        m = re.match(r"Value:\s*((?:0x[0-9a-f]+\s*){3})$", t)
        if attr and cur and m:
            out[cur] = tuple(int(v, 16) for v in m.group(1).split())
            attr = False
    return out


def _hex_bytes(tokens: list[str]) -> bytes:
    """cuobjdump -elf's dump of a section: little-endian words (``0x3dcccccd``), a short tail as bytes (``0x0a``)."""
    out = bytearray()
    for t in tokens:
        digits = t[2:]
        out += int(digits, 16).to_bytes(max(len(digits) // 2, 1), "little")
    return bytes(out)


def _module_data(text: str) -> dict:
    """Constant bank 3's initial contents, bank 4's address slots, and the ``__device__`` variables they point at,
    and each kernel's constant bank 2 (by mangled name: ptxas's jump tables for a switch's ``BRX``), from
    ``cuobjdump -elf``."""
    sections: dict[int, str] = {}
    symbols: dict[str, tuple[str, int, int, int]] = {}  # name -> (type, value, size, section index)
    dumps: dict[str, list[str]] = {}
    slots: list[list] = []
    part, cur = "", None
    for line in text.splitlines():
        t = line.strip()
        if t.startswith("Sections:"):
            part = "sections"
            continue
        if t.startswith(".section .symtab"):
            part = "symtab"
            continue
        if t.startswith(".section .rela.nv.constant4"):
            part = "rela4"
            continue
        if not t:
            if part in ("dump", "rela4"):
                part = ""
            continue
        cols = t.split()
        if part == "sections" and len(cols) >= 9 and re.fullmatch(r"[0-9a-f]+", cols[0]):
            sections[int(cols[0], 16)] = cols[-1]
            continue
        if part == "symtab" and len(cols) >= 8 and cols[3] in ("OBJECT", "FUNC", "NOTYPE", "SECTION"):
            try:
                symbols[cols[-1]] = (cols[3], int(cols[1], 0), int(cols[2], 0), int(cols[-2], 0))
            except ValueError:
                pass
            continue
        if part == "rela4" and len(cols) >= 4 and cols[2].startswith("R_CUDA_64"):
            slots.append([int(cols[0], 16), cols[1], int(cols[3], 16)])
            continue
        if t in (".nv.constant3", ".nv.constant4", ".nv.global.init") or t.startswith(".nv.constant2."):
            # a section's contents follow (bank 2: a kernel's own, ptxas's jump tables for BRX)
            part, cur = "dump", t
            dumps[cur] = []
            continue
        if part == "dump" and cur and all(re.fullmatch(r"0x[0-9a-f]+", c) for c in cols):
            dumps[cur] += cols
    init = _hex_bytes(dumps.get(".nv.global.init", []))
    globals_: dict[str, list] = {}
    for _, name, _ in slots:
        kind, value, size, ndx = symbols.get(name, ("", 0, 0, 0))
        where = sections.get(ndx, "")
        if kind == "OBJECT" and where in (".nv.global", ".nv.global.init"):
            data = init[value:value + size] if where == ".nv.global.init" else b""
            globals_[name] = [size, data.hex()]
    const4 = _hex_bytes(dumps.get(".nv.constant4", []))
    const2 = {k[len(".nv.constant2."):]: _hex_bytes(v).hex() for k, v in dumps.items()
              if k.startswith(".nv.constant2.")}
    return {"const3": _hex_bytes(dumps.get(".nv.constant3", [])).hex(), "const4_size": len(const4),
            "slots": slots, "globals": globals_, "const2": const2}


def _decoded(f: sass.Function, what: str) -> tuple[list[Decoded], str]:
    """(program, "") of a function, or ([], the error) where an instruction cannot be decoded: the kernel is refused
    only when it is picked (:func:`pick`), the file's others go through."""
    try:
        return _decode(f, what), ""
    except BuildError as e:
        return [], str(e)


def _decode(f: sass.Function, what: str) -> list[Decoded]:
    insts = list(f.insts)
    try:
        return [decode(x, i) for i, x in enumerate(insts)]
    except SassDecodeError as e:
        raise BuildError(f"{what}: {f.name}: {e}") from None


def _load_entry(entry: Path, src: Path, arch: str) -> list[CompiledKernel]:
    text = (entry / "sass.txt").read_text()
    meta = json.loads((entry / "kernels.json").read_text())
    out = []
    source_text = src.read_text(errors="replace") if src.suffix in (".cu", ".cuh") else ""
    md = meta.pop(MODULE_KEY, {})
    module = Module(bytes.fromhex(md.get("const3", "")), md.get("const4_size", 0),
                    tuple((o, name, add) for o, name, add in md.get("slots", [])),
                    {name: (size, bytes.fromhex(data)) for name, (size, data) in md.get("globals", {}).items()},
                    {name: bytes.fromhex(data) for name, data in md.get("const2", {}).items()})
    for f in sass.parse_sass(text):
        info = meta.get(f.mangled, {"regs": 0, "smem": 0, "stack": 0, "params": []})
        program, error = _decoded(f, str(src))
        k = CompiledKernel(f.name, f.mangled, program, info["regs"], info["smem"], info["stack"],
                           [Param(*p) for p in info["params"]], str(src), arch,
                           cluster=tuple(info.get("cluster", (1, 1, 1))), module=module, decode_error=error)
        k.signature = parse_signature(source_text, sass.bare_name(f.name)) if source_text else None
        if k.signature is not None and len(k.signature) != len(k.params):
            k.signature = None
        out.append(k)
    return out


def pick(kernels: list[CompiledKernel], name: str | None, where: str) -> CompiledKernel:
    """The kernel ``name`` of a build (the only one when ``name`` is None); one whose SASS could not be decoded
    raises its error here."""
    k = _pick(kernels, name, where)
    if k.decode_error:
        raise BuildError(k.decode_error)
    return k


def _pick(kernels: list[CompiledKernel], name: str | None, where: str) -> CompiledKernel:
    if name is None:
        if len(kernels) != 1:
            names = ", ".join(k.name for k in kernels) or "none"
            raise BuildError(f"{where} has {len(kernels)} kernels ({names}): name one with --kernel")
        return kernels[0]
    for k in kernels:
        if name.replace(" ", "") in (k.name.replace(" ", ""), k.mangled):
            return k
    bare = [k for k in kernels if sass.bare_name(k.name) == name]
    if len(bare) == 1:  # a template's name, where one instantiation was built
        return bare[0]
    if bare:
        raise BuildError(f"{where}: {name!r} has {len(bare)} instantiations ({', '.join(k.name for k in bare)}): "
                         "name one with --kernel")
    import difflib

    names = [k.name for k in kernels]
    close = difflib.get_close_matches(name, names, 1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise BuildError(f"{where}: no kernel named {name!r} (kernels: {', '.join(names) or 'none'}){hint}")


_SIG = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(?:static\s+)?void\s+"
                  r"(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(([^)]*)\)", re.S)


def parse_signature(source: str, name: str) -> list[tuple[str, str]] | None:
    """(type, name) of each parameter of ``__global__ void name(...)`` in ``source`` (None when not found or not
    plain: templates, macros)."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", source, flags=re.S)
    for m in _SIG.finditer(text):
        if m.group(1) != name:
            continue
        params = [p.strip() for p in m.group(2).split(",") if p.strip()]
        if params == ["void"]:
            return []
        out = []
        for p in params:
            p = re.sub(r"\b(__restrict__|__restrict|restrict|__grid_constant__)\b", " ", p)
            p = re.sub(r"\s+", " ", p.replace("*", " * ")).strip()
            mm = re.match(r"(.+?)\s*(\w+)$", p)
            if not mm or "[" in p:
                return None
            out.append((mm.group(1).replace(" *", "*").strip(), mm.group(2)))
        return out
    return None
