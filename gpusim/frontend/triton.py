"""Triton kernels: a ``@triton.jit`` function of a ``.py`` file compiled for sm_90 without a GPU, then the CUDA path.

    from gpusim.frontend.triton import kernel_from_triton
    k = kernel_from_triton("kernels.py", "add", grid=(64,), args=["x=f32[65536]", "y=f32[65536]",
                           "out=f32[65536]", "n=65536"], constexprs={"BLOCK_SIZE": 1024})

Triton's own compiler builds the kernel (``triton.compile`` with ``GPUTarget("cuda", 90, 32)``), specialised as
Triton's launcher specialises it on an H100: the pointer arguments 16-byte aligned, an integer argument divisible by 16
marked so, an integer argument equal to 1 folded into the code. The argument texts give the signature (``f32[...]``
is a ``*fp32``, ``f16[...]`` a ``*fp16``, ``1024`` an ``i32``, ``0.5`` an ``fp32``, ``i64:7`` an ``i64``). The cubin
is described as any other (:mod:`~gpusim.frontend.build`); the parameters Triton appends (the global and profile
scratch pointers) are bound to scratch tensors here. The block is ``32 * num_warps`` threads; all of a Triton kernel's
shared memory is dynamic (the compiler's ``shared``).
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from gpusim import ir
from gpusim.frontend import FrontendError, kernel_from_source
from gpusim.frontend import args as fargs
from gpusim.frontend import build as fbuild

NUM_WARPS_DEFAULT = 4  # Triton's defaults on CUDA (triton.backends.nvidia.compiler.CUDAOptions)
NUM_STAGES_DEFAULT = 3
WARP_SIZE = 32
TARGET_CAPABILITY = 90  # the H100 (sm_90)
POINTER_ALIGN_BYTES = 16  # Triton's launcher marks a pointer (and an integer) divisible by 16 as such
INSTALL_HINT = "pip install 'gpusim[triton]'"
# gpusim's dtype names -> Triton's type names (pointers: '*' + the element type)
TRITON_TYPES = {"f32": "fp32", "f64": "fp64", "f16": "fp16", "bf16": "bf16", "i8": "i8", "u8": "u8", "i16": "i16",
                "u16": "u16", "i32": "i32", "u32": "u32", "i64": "i64", "u64": "u64", "bool": "i1"}
# a scalar's C type for gpusim.frontend.args (a key of args.C_TYPES naming the same code)
C_TYPE_OF = {"f32": "float", "f64": "double", "f16": "half", "i8": "int8_t", "u8": "uint8_t", "i16": "int16_t",
             "u16": "uint16_t", "i32": "int", "u32": "unsigned", "i64": "int64_t", "u64": "uint64_t", "bool": "bool"}
HIDDEN_NAMES = fargs.COMPILER_SCRATCH  # what Triton 3.x appends to every kernel's parameters


class TritonError(FrontendError):
    """A Triton file that does not import, a missing or non-jit kernel, a missing constexpr, a compile error."""


@dataclass(frozen=True)
class TritonBuild:
    """One compiled Triton kernel and what its launch needs."""

    kernel: fbuild.CompiledKernel
    args: list[str]  # NAME=VALUE for every parameter of the cubin, Triton's hidden scratch pointers included
    block: tuple[int, int, int]
    smem_dynamic_bytes: int
    signature: dict  # Triton's signature as compiled (name -> "*fp32", "i32", "constexpr")
    notes: str


def _triton():
    try:
        import triton  # noqa: F401
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
    except ImportError as e:
        raise TritonError(f"a Triton kernel needs the triton package ({INSTALL_HINT}): {e}") from None
    return triton, ASTSource, GPUTarget


def load_module(path: str | Path):
    """Import the user's file as a fresh module (its folder first on ``sys.path``, its prints sent to stderr); any
    failure is one line."""
    p = Path(path)
    if not p.is_file():
        raise TritonError(f"{p}: no such file")
    _triton()
    name = "gpusim_triton_" + hashlib.sha256(str(p.resolve()).encode()).hexdigest()[:16]
    spec = importlib.util.spec_from_file_location(name, p)
    if spec is None or spec.loader is None:
        raise TritonError(f"{p}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    folder = str(p.resolve().parent)
    sys.path.insert(0, folder)
    sys.modules[name] = module  # Triton reads a kernel's globals through its module
    try:
        with contextlib.redirect_stdout(sys.stderr):
            spec.loader.exec_module(module)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # SystemExit too: a user's file must not end gpusim
        sys.modules.pop(name, None)
        raise TritonError(f"{p}: importing it failed: {_where(e, p)}{type(e).__name__}: {_first_line(e)}") from None
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(folder)
    return module


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else "(no message)"


def _where(e: BaseException, p: Path) -> str:
    """``line N: `` of the deepest frame of ``e`` inside ``p`` (for syntax errors, their line)."""
    if isinstance(e, SyntaxError) and e.lineno:
        return f"line {e.lineno}: "
    tb, line = e.__traceback__, None
    target = str(p.resolve())
    while tb is not None:
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == target:
            line = tb.tb_lineno
        tb = tb.tb_next
    return f"line {line}: " if line else ""


def find_kernel(module, name: str | None, path: str | Path):
    """The ``@triton.jit`` function ``name`` of ``module`` (the only one when ``name`` is None); autotune and
    heuristics wrappers are looked through (their configs are not applied: give the constexprs with --const)."""
    from triton.runtime.jit import JITFunction

    def unwrap(obj):
        for _ in range(8):
            if isinstance(obj, JITFunction):
                return obj
            obj = getattr(obj, "fn", None)
            if obj is None:
                return None
        return None

    jitted = {k: v for k, v in vars(module).items()
              if unwrap(v) is not None and getattr(unwrap(v).fn, "__module__", None) == module.__name__}
    if name is None:
        if len(jitted) != 1:
            raise TritonError(f"{path} has {len(jitted)} @triton.jit kernels ({', '.join(jitted) or 'none'}): name "
                              "one with --kernel")
        name = next(iter(jitted))
    obj = vars(module).get(name)
    if obj is None:
        close = difflib.get_close_matches(name, list(jitted), 1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise TritonError(f"{path}: no kernel named {name!r} (@triton.jit kernels: {', '.join(jitted) or 'none'})"
                          f"{hint}")
    fn = unwrap(obj)
    if fn is None:
        raise TritonError(f"{path}: {name} is a {type(obj).__name__}, not a @triton.jit function")
    return fn


def parse_constexpr(text: str):
    """A ``--const`` value: an integer, a float, True/False/None, a Triton dtype (``tl.float16``/``float16``), else the
    text as a string (an activation's name)."""
    t = text.strip()
    for conv in (lambda s: int(s, 0), float):
        try:
            return conv(t)
        except ValueError:
            pass
    if t in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[t]
    import triton.language as tl

    dt = getattr(tl, t[3:] if t.startswith("tl.") else t, None)
    if isinstance(dt, tl.dtype):
        return dt
    return t


def _split_args(fn, texts: list[str], where: str) -> dict[str, str]:
    """The text of each runtime (non-constexpr) parameter, by name or in order; defaults filled in."""
    runtime = [p for p in fn.params if not p.is_constexpr]
    names = [p.name for p in runtime]
    consts = [p.name for p in fn.params if p.is_constexpr]
    given: dict[str, str] = {}
    pos = 0
    for text in texts:
        key, value = None, text
        if "=" in text:
            k, v = text.split("=", 1)
            if k.strip().isidentifier() and k.strip() not in fargs.SCALAR_CODES:
                key, value = k.strip(), v
        if key is not None:
            if key in consts:
                raise fargs.ArgError(f"{where} {text!r}: {key} is a tl.constexpr of {fn.__name__}: give it with "
                                     f"--const {key}=VALUE")
            if key not in names:
                raise fargs.ArgError(f"{where} {text!r}: {fn.__name__} has no parameter {key!r} (parameters: "
                                     f"{', '.join(names) or 'none'})")
            if key in given:
                raise fargs.ArgError(f"{where}: parameter {key} given twice")
            given[key] = value
        else:
            while pos < len(names) and names[pos] in given:
                pos += 1
            if pos >= len(names):
                raise fargs.ArgError(f"{where} {text!r}: {fn.__name__} takes {len(names)} arguments "
                                     f"({', '.join(names)}) besides its constexprs")
            given[names[pos]] = value
            pos += 1
    for p in runtime:
        if p.name not in given and p.has_default and isinstance(p.default, (int, float)):
            given[p.name] = repr(p.default)
    missing = [nm for nm in names if nm not in given]
    if missing:
        raise fargs.ArgError(f"{fn.__name__}: missing argument{'s' if len(missing) > 1 else ''}: "
                             f"{', '.join(missing)} (a tensor such as f32[1024], or a number)")
    return given


def _constexprs(fn, consts: dict, path) -> dict[str, object]:
    names = [p.name for p in fn.params]
    out = {}
    for k, v in consts.items():
        if k not in names:
            raise TritonError(f"--const {k}: {fn.__name__} has no parameter {k!r} (constexprs: "
                              f"{', '.join(p.name for p in fn.params if p.is_constexpr) or 'none'})")
        if not fn.params[names.index(k)].is_constexpr:
            raise TritonError(f"--const {k}: {k} is not a tl.constexpr of {fn.__name__}; pass it with --arg {k}=...")
        out[k] = parse_constexpr(v) if isinstance(v, str) else v
    for p in fn.params:
        if p.is_constexpr and p.name not in out:
            if not p.has_default:
                raise TritonError(f"{path}: {fn.__name__}: constexpr {p.name} has no value: give --const "
                                  f"{p.name}=VALUE")
            out[p.name] = p.default
    return out


def specialise(fn, texts: list[str], consts: dict, path, where: str = "--arg"):
    """Triton's signature, constexprs and attributes for the launch, as Triton's launcher would specialise it, and
    the runtime parameters left in the cubin as (C type, name, argument text)."""
    given = _split_args(fn, texts, where)
    constexprs = _constexprs(fn, consts, path)
    signature: dict[str, str] = {}
    attrs: dict[tuple, list] = {}
    runtime: list[tuple[str, str, str]] = []
    divisible = [["tt.divisibility", POINTER_ALIGN_BYTES]]
    for i, p in enumerate(fn.params):
        if p.is_constexpr:
            signature[p.name] = "constexpr"
            continue
        text = given[p.name]
        a = fargs.parse_arg(text, p.name, None, f"{where} {p.name}={text}")
        annotated = p.annotation_type or ""
        if isinstance(a, fargs.TensorArg):
            if annotated and not annotated.startswith("*"):
                raise fargs.ArgError(f"{where} {p.name}: annotated {annotated}, not a pointer; pass a number")
            signature[p.name] = annotated or "*" + TRITON_TYPES[a.dtype]
            if not p.do_not_specialize_on_alignment and not p.do_not_specialize:
                attrs[(i,)] = divisible
            runtime.append(("void*", p.name, text))
            continue
        if annotated.startswith("*"):
            raise fargs.ArgError(f"{where} {p.name}: annotated {annotated}, a pointer; pass a tensor such as f32[1024]")
        code = a.code
        explicit = ":" in text and text.split(":", 1)[0].strip() in fargs.SCALAR_CODES
        if isinstance(a.value, int) and not explicit and not -(2 ** 31) <= a.value < 2 ** 31:
            code = "i64" if a.value < 2 ** 63 else "u64"  # as Triton types a Python int
        ty = annotated or TRITON_TYPES[code]
        if isinstance(a.value, int) and not p.do_not_specialize and not ty.startswith(("fp", "bf")):
            if a.value == 1 and not annotated:  # Triton folds an integer argument equal to 1 into the code
                signature[p.name] = "constexpr"
                constexprs[p.name] = 1
                continue
            if a.value % POINTER_ALIGN_BYTES == 0 and not p.do_not_specialize_on_alignment:
                attrs[(i,)] = divisible
        code = next((k for k, v in TRITON_TYPES.items() if v == ty), code)
        signature[p.name] = ty
        runtime.append((C_TYPE_OF.get(code, "int"), p.name, f"{code}:{a.value!r}" if not explicit else text))
    return signature, constexprs, attrs, runtime


def compile_triton(path: str | Path, kernel: str | None, args: list[str], constexprs: dict | None = None, *,
                   num_warps: int = NUM_WARPS_DEFAULT, num_stages: int = NUM_STAGES_DEFAULT,
                   grid=(1, 1, 1)) -> TritonBuild:
    """Compile ``kernel`` of the Triton file ``path`` for sm_90 with ``args`` (argument texts, as for a CUDA kernel)
    and ``constexprs`` (name -> value or its text)."""
    if not isinstance(num_warps, int) or num_warps < 1 or num_warps & (num_warps - 1) or num_warps * WARP_SIZE > 1024:
        raise TritonError(f"--num-warps {num_warps}: a power of two from 1 to 32")
    if not isinstance(num_stages, int) or num_stages < 1:
        raise TritonError(f"--num-stages {num_stages}: a positive integer")
    triton, ASTSource, GPUTarget = _triton()
    module = load_module(path)
    fn = find_kernel(module, kernel, path)
    signature, consts, attrs, runtime = specialise(fn, list(args), dict(constexprs or {}), path)
    src = ASTSource(fn, signature, consts, attrs)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            cc = triton.compile(src, target=GPUTarget("cuda", TARGET_CAPABILITY, WARP_SIZE),
                                options={"num_warps": num_warps, "num_stages": num_stages})
    except KeyboardInterrupt:
        raise
    except Exception as e:
        raise TritonError(_compile_message(e, fn, path)) from None
    meta = cc.metadata
    entry = _describe(cc.asm["cubin"], f"{path}:{fn.__name__}")
    kernels = fbuild._load_entry(entry, Path(path), "sm_90")
    ck = fbuild.pick(kernels, meta.name, str(path))
    hidden = len(ck.params) - len(runtime)
    if hidden < 0 or any(p.size != 8 for p in ck.params[len(runtime):]):
        raise TritonError(f"{path}: {fn.__name__}: the cubin's {len(ck.params)} parameters do not match the "
                          f"{len(runtime)} runtime arguments (triton {triton.__version__} is not one gpusim knows)")
    programs = int(grid[0]) * int(grid[1]) * int(grid[2]) * getattr(meta, "num_ctas", 1)
    texts = [f"{name}={text}" for _, name, text in runtime]
    sig = [(ctype, name) for ctype, name, _ in runtime]
    sizes = (getattr(meta, "global_scratch_size", 0), getattr(meta, "profile_scratch_size", 0))
    for j in range(hidden):
        name = HIDDEN_NAMES[j] if j < len(HIDDEN_NAMES) else f"scratch{j}"
        per_program = sizes[j] if j < len(sizes) else 0
        texts.append(f"{name}=u8[{max(per_program * programs, POINTER_ALIGN_BYTES)}]")
        sig.append(("void*", name))
    ck.signature = sig
    notes = []
    if any(d.mnemonic == "HMMA" for d in ck.program) and \
            os.environ.get("DISABLE_MMA_V3", "").lower() in ("1", "true", "on", "yes"):
        notes.append("Triton compiled with DISABLE_MMA_V3: tl.dot as mma.sync (HMMA), not wgmma")
    return TritonBuild(ck, texts, (num_warps * WARP_SIZE, 1, 1), int(meta.shared), dict(signature), "; ".join(notes))


def _compile_message(e: Exception, fn, path) -> str:
    """One line for a Triton compile error: the kernel's source line and the message."""
    node = getattr(e, "node", None)
    msg = getattr(e, "error_message", None) or ""
    if not msg:
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
        msg = next((ln for ln in lines if "error" in ln.lower()), lines[-1] if lines else type(e).__name__)
    msg = msg.strip().splitlines()[0] if msg.strip() else type(e).__name__
    where = f"{path}"
    lineno = getattr(node, "lineno", None)
    if lineno:
        try:
            from triton.runtime.jit import get_jit_fn_file_line

            where = f"{path}:{get_jit_fn_file_line(fn)[1] + lineno - 1}"
        except (ImportError, AttributeError):
            where = f"{path} (line {lineno} of {fn.__name__})"
    return f"{where}: {fn.__name__} does not compile: {msg}"


def _describe(cubin: bytes, what: str) -> Path:
    """The cache entry describing a Triton cubin (its SASS, resources and parameters), written once per cubin (keyed
    by its hash, beside the CUDA builds)."""
    entry = fbuild.cache_dir() / ("triton-" + hashlib.sha256(cubin).hexdigest()[:32])
    if not (entry / "kernels.json").is_file():
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=entry.parent))
        try:
            (tmp / "k.cubin").write_bytes(cubin)
            with _triton_tools_last_on_path():
                fbuild._describe(tmp, "", what)
            try:
                tmp.rename(entry)
            except OSError:  # another process described it meanwhile
                shutil.rmtree(tmp, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return entry


@contextlib.contextmanager
def _triton_tools_last_on_path():
    """The cuobjdump and nvdisasm Triton ships, found last on PATH: a toolkit's or NVIDIA's wheels' come first."""
    import triton

    tools = Path(triton.__file__).parent / "backends" / "nvidia" / "bin"
    old = os.environ.get("PATH", "")
    if tools.is_dir():
        os.environ["PATH"] = old + os.pathsep + str(tools)
    try:
        yield
    finally:
        os.environ["PATH"] = old


def kernel_from_triton(source: str | Path, kernel: str | None = None, *, grid, args: list[str],
                       constexprs: dict | None = None, num_warps: int = NUM_WARPS_DEFAULT,
                       num_stages: int = NUM_STAGES_DEFAULT, seed: int = 0, config=None) -> ir.Kernel:
    """Compile the Triton kernel ``kernel`` of ``source`` for sm_90, emulate it for the launch and describe it in the
    IR (the block is ``32 * num_warps`` threads)."""
    from gpusim.frontend import _dims

    g = _dims(grid, "grid")
    b = compile_triton(source, kernel, list(args), constexprs, num_warps=num_warps, num_stages=num_stages, grid=g)
    k = kernel_from_source(source, b.kernel.name, grid=g, block=b.block, args=b.args,
                           smem_dynamic=b.smem_dynamic_bytes, compiled=[b.kernel], seed=seed, config=config)
    notes = "; ".join(x for x in (b.notes, k.notes) if x)
    return replace(k, notes=notes) if notes != k.notes else k
