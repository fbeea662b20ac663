"""The "Your kernel" page's logic: a CUDA kernel as it is written, from its text to a prediction, without Streamlit.

- :data:`EXAMPLES`: ready launches (``examples/transpose.cu``'s kernels and validation twins of ``validate/kernels/``
  at a launch measured on the H100, from ``validate/launches.py``'s ``launch_of``).
- :class:`Run`: one launch as the page's widgets give it (hashable: the cache key of a prediction); the steps
  :func:`compile_kernels`, :func:`emulate` and :func:`simulate` raise the front-end's one-line errors.
- :func:`sass_lines`: each memory instruction of the SASS with what the launch did with it (instructions executed,
  sectors per request, wavefronts and bank conflicts), as Nsight Compute's Source page shows them. The front-end names
  each IR memory operation ``<part>_<mnemonic>_<hex address>`` after the first SASS instruction it stands for; a
  run of alike instructions is one operation (``repeat``), whose counts are split between its lines here.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from gpusim.app.catalog import REPO

COMPILERS = ("nvcc", "nvrtc")
FIELDS = ("instructions", "wavefronts", "ideal_wavefronts", "sectors", "lines")  # patterns.MemPattern's counts
PARTS = {"p": "before the loop", "l": "loop", "e": "after the loop"}
# the front-end's IR memory operation names (gpusim/frontend/lower.py, Builder._name): part, mnemonic, the first SASS
# instruction's address, a number when the same instruction starts several operations, "_st" for cp.async's shared side
OP_NAME = re.compile(r"^(?P<part>[ple])_(?P<mn>[a-z]+)_(?P<addr>[0-9a-f]+)(?:_\d+)?(?P<shared>_st)?$")
SPACE_OF = {"LDG": "global", "STG": "global", "ATOMG": "global", "RED": "global", "REDG": "global", "ATOM": "global",
            "LDS": "shared", "STS": "shared", "LDSM": "shared", "STSM": "shared", "ATOMS": "shared",
            "LDL": "local", "STL": "local", "LD": "generic", "ST": "generic", "LDGSTS": "global > shared"}
UPLOADS = Path(tempfile.gettempdir()) / "gpusim_uploads"
MAX_SOURCE_BYTES = 1 << 20


class InputError(ValueError):
    """A widget's text that cannot be a launch (one line)."""


@dataclass(frozen=True)
class Example:
    """A ready launch: a file of the repository, one of its kernels, its launch and arguments."""

    label: str
    path: str  # relative to the repository
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: tuple[str, ...]
    smem_dynamic: int = 0
    defines: tuple[str, ...] = ()
    compiler: str = "nvcc"
    about: str = ""
    # a validation twin measured at exactly this launch: (kernel, shape, params) of its row in validate/measurements
    measured: tuple | None = None


def _twin(label: str, kernel: str, shape: tuple[int, ...], about: str, params: dict | None = None,
          defines: dict | None = None) -> Example | None:
    """A validation twin at a measured launch (None where the repository's validate/ folder is not there)."""
    from gpusim.frontend.validate import _launches

    if not (REPO / "validate" / "launches.py").is_file():
        return None
    t = _launches().launch_of(kernel, shape, params or {}, defines)
    return Example(label, t.source, t.kernel, t.grid, t.block, tuple(t.args), t.smem_dynamic, tuple(t.defines),
                   "nvrtc", about, (kernel, shape, dict(params or {})))


def _examples() -> dict[str, Example]:
    n = 2048
    transpose = (f"in=f32[{n}*{n}]", f"out=f32[{n}*{n}]", f"n={n}")
    out = [
        Example("transpose.cu: transpose_shared (no padding)", "examples/transpose.cu", "transpose_shared",
                (n // 32, n // 32, 1), (32, 8, 1), transpose,
                about="docs/authoring.md's shared-memory transpose: the tile is read down its columns, every lane of "
                      "a warp in the same bank (32-way conflicts)."),
        Example("transpose.cu: transpose_shared -D PAD=1", "examples/transpose.cu", "transpose_shared",
                (n // 32, n // 32, 1), (32, 8, 1), transpose, defines=("PAD=1",),
                about="The same kernel with one float of padding per tile row: the column reads spread over the 32 "
                      "banks."),
        Example("transpose.cu: transpose_naive", "examples/transpose.cu", "transpose_naive",
                (n // 32, n // 32, 1), (32, 8, 1), transpose,
                about="No shared memory: the stores walk down columns, one 32-byte sector per lane."),
        _twin("twin: mem_transpose_padded (2048 x 2048)", "mem_transpose_padded", (2048,),
              "The validation twin of the padded transpose, measured on the H100 at this launch."),
        _twin("twin: sgemm_2d_blocktiling (512^3)", "sgemm_2d_blocktiling", (512, 512, 512),
              "Boehm's 2D-blocktiled FP32 GEMM (a rung of the ladder), measured on the H100 at this launch."),
        _twin("twin: histogram, uniform bins (8 M values)", "histogram", (8388608,),
              "A shared-memory histogram of 256 bins (ATOMS), the bins drawn uniformly; measured on the H100.",
              {"bins": "uniform"}),
        _twin("twin: histogram, one bin (8 M values)", "histogram", (8388608,),
              "The same histogram with every value in one bin: the atomics of a warp land on one word.",
              {"bins": "one"}),
        _twin("twin: stencil5 (2000 x 2000)", "stencil5", (2000,),
              "A 5-point stencil with border guards (the first and last blocks differ); measured on the H100."),
        _twin("twin: block_scan (4 M values)", "block_scan", (4194304,),
              "A Blelloch block scan in shared memory without conflict padding; measured on the H100."),
        _twin("twin: hgemm_mma_swizzled (512^3)", "hgemm_mma_swizzled", (512, 512, 512),
              "A bf16 GEMM on mma.sync with ldmatrix from a 128-B-swizzled tile; measured on the H100.",
              defines={"STAGES": 1, "SWIZZLE": 128}),
        _twin("twin: hgemm_ws_cluster (512^3)", "hgemm_ws_cluster", (512, 512, 512),
              "A warp-specialized TMA + wgmma GEMM in clusters of two CTAs: each loads half of the B tile and "
              "multicasts it into both, and releases a stage on its partner's barrier too; measured on the H100.",
              defines={"STAGES": 3, "SWIZZLE": 128, "BN": 256}),
    ]
    return {e.label: e for e in out if e is not None and (REPO / e.path).is_file()}


EXAMPLES = _examples()


@dataclass(frozen=True)
class Run:
    """One launch of a kernel of a source file: everything a prediction depends on (with the config)."""

    path: str
    digest: str  # of the source's bytes: an edited file is another run
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: tuple[str, ...]
    smem_dynamic: int = 0
    defines: tuple[str, ...] = ()
    compiler: str = "nvcc"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def write_source(data: bytes, name: str = "kernel.cu") -> Path:
    """A pasted or uploaded source as a file the compiler can read, in a folder named by its content."""
    if len(data) > MAX_SOURCE_BYTES:
        raise InputError(f"{name}: {len(data):,} bytes; the page takes sources up to {MAX_SOURCE_BYTES:,} bytes")
    base = Path(name).name or "kernel.cu"
    if not base.endswith(".cu"):
        raise InputError(f"{base}: expected a CUDA source (.cu)")
    folder = UPLOADS / digest(data)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / base
    if not path.is_file() or path.read_bytes() != data:
        path.write_bytes(data)
    return path


def parse_dims(text: str, what: str) -> tuple[int, int, int]:
    """``"128, 128"`` -> ``(128, 128, 1)``."""
    try:
        v = tuple(int(x) for x in re.split(r"[,x\s]+", text.strip()) if x)
    except ValueError:
        v = ()
    if not 1 <= len(v) <= 3 or any(x < 1 for x in v):
        raise InputError(f"{what} {text!r}: expected one to three positive integers, such as 128,128")
    return (*v, *(1,) * (3 - len(v)))


def parse_args(text: str) -> tuple[str, ...]:
    """One argument a line (``--arg`` before it is allowed): ``n=4096``, ``x=f32[4096*4096]``."""
    out = []
    for line in text.splitlines():
        line = line.strip().removeprefix("--arg").strip()
        if line and not line.startswith("#"):
            out.append(line)
    return tuple(out)


def parse_defines(text: str) -> tuple[str, ...]:
    """``"PAD=1 -DTILE=32"`` -> ``("PAD=1", "TILE=32")``."""
    out = []
    for word in re.split(r"[\s,]+", text.strip()):
        word = word.removeprefix("-D")
        if not word:
            continue
        if not re.fullmatch(r"[A-Za-z_]\w*(=\S*)?", word):
            raise InputError(f"define {word!r}: expected NAME or NAME=VALUE")
        out.append(word)
    return tuple(out)


def prefill_args(signature: list[tuple[str, str]] | None, elements: int) -> tuple[str, ...]:
    """Arguments for a kernel's parameters, from its signature: a pointer a tensor of ``elements`` of its type, an
    integer ``elements``, a float 1.0 (a start to edit, not a guess at the sizes the kernel needs)."""
    from gpusim.frontend.args import C_TYPES

    if not signature:
        return ()
    out = []
    for ctype, name in signature:
        base = re.sub(r"\b(const|volatile)\b", " ", ctype).strip()
        if base.endswith("*"):
            out.append(f"{name}={C_TYPES.get(' '.join(base[:-1].split()), 'f32')}[{elements}]")
            continue
        code = C_TYPES.get(" ".join(base.split()), "i32")
        out.append(f"{name}={'1.0' if code[0] == 'f' else '1' if code == 'bool' else elements}")
    return tuple(out)


def compile_kernels(path: str | Path, defines: tuple[str, ...] = (), compiler: str = "nvcc") -> list:
    """The kernels of a ``.cu`` file for sm_90 (``gpusim.frontend.build.CompiledKernel``, cached on disk by content)."""
    from gpusim.frontend import compile_source

    return compile_source(path, "sm_90", tuple(defines), compiler)


def emulate(run: Run, compiled: list, config):
    """The kernel description (IR) of the launch: its SASS emulated for the CTAs the model needs."""
    from gpusim.frontend import kernel_from_source

    return kernel_from_source(run.path, run.kernel, grid=run.grid, block=run.block, args=list(run.args),
                              smem_dynamic=run.smem_dynamic, defines=run.defines, compiler=run.compiler,
                              compiled=compiled, config=config)


def simulate(kernel, config, source: str):
    """(metrics keyed by ncu names, the traced simulation), labelled as ``gpusim run FILE.cu`` labels them."""
    from gpusim.chip import simulate as _simulate
    from gpusim.metrics import report

    sim = _simulate(kernel, config, trace=True)
    m = {"gpusim__kernel": kernel.name, "gpusim__source": source, "gpusim__grid": list(kernel.launch.grid),
         "gpusim__block": list(kernel.launch.block), **report(sim), "gpusim__validated": False}
    if kernel.notes:
        m["gpusim__notes"] = kernel.notes
    return m, sim


@dataclass
class SassLine:
    """One memory instruction of the SASS and what the whole launch did with it."""

    addr: int
    text: str
    mnemonic: str
    space: str
    ops: list[str] = field(default_factory=list)  # the IR operations it is part of
    parts: list[str] = field(default_factory=list)  # before the loop, loop, after the loop
    run: int = 1  # instructions of the largest run (one IR operation) it belongs to
    instructions: float = 0.0  # warp-level instructions executed
    wavefronts: float = 0.0  # shared memory
    ideal_wavefronts: float = 0.0
    sectors: float = 0.0  # global memory: 32-B sectors requested from L1
    lines: float = 0.0  # 128-B lines (cycles of the L1TEX pipe for global accesses)

    @property
    def conflicts(self) -> float:
        return max(self.wavefronts - self.ideal_wavefronts, 0.0)

    @property
    def l1_cycles(self) -> float:
        """The L1/shared pipe's cycles it took: global lines plus shared wavefronts (as the verdict counts them)."""
        return self.lines + self.wavefronts

    def per_instruction(self, count: float) -> float | None:
        return count / self.instructions if self.instructions else None


def _by_run(program, start: int, mnemonic: str, mods: tuple, repeat: int) -> list:
    """The ``repeat`` SASS instructions of a run starting at ``program[start]``: the alike ones that follow it (the
    front-end joins consecutive alike memory instructions); only the first when they do not follow it."""
    run = program[start:start + repeat]
    if len(run) == repeat and all(d.mnemonic == mnemonic and d.mods == mods for d in run):
        return run
    return [program[start]]


class _Fixed:
    """An address expression that returns one recorded instruction's addresses (see :func:`_shares`)."""

    def __init__(self, a: np.ndarray) -> None:
        self.a = a

    def __call__(self, ctx) -> np.ndarray:
        return self.a


def _shares(sim, op, n: int) -> np.ndarray:
    """(n, 5): each instruction's share of a run's counts (FIELDS order), in the middle CTA's first iteration."""
    from gpusim import patterns

    kernel = sim.kernel
    geo = patterns.AccessGeometry.of(sim.config)
    cta = tuple(g // 2 for g in kernel.launch.grid)
    a = patterns.eval_addresses(kernel, op, cta, 0, 0, geo.lanes)
    counts = np.array([patterns._counts(kernel, replace(op, repeat=1, addr=_Fixed(a[r])), cta, 0, 0, geo).sum(axis=1)
                       for r in range(n)], dtype=float)
    total = counts.sum(axis=0)
    return np.where(total > 0, counts / np.where(total > 0, total, 1), 1.0 / n)


def sass_lines(sim, program) -> tuple[list[SassLine], list[str]]:
    """Every memory instruction of ``program`` (the kernel's decoded SASS) with its counts over the whole launch, in
    address order; and the IR memory operations that no SASS line could be found for (none, normally)."""
    from gpusim.frontend.lower import ATOMICS, MEMORY_KINDS
    from gpusim.metrics import _op_total

    index = {d.addr: i for i, d in enumerate(program)}
    rows = {d.addr: SassLine(d.addr, d.text, d.mnemonic, SPACE_OF.get(d.mnemonic, "")) for d in program
            if d.mnemonic in MEMORY_KINDS or d.mnemonic in ATOMICS}
    lost = []
    for name, pat in sim.pats.items():
        m = OP_NAME.match(name)
        addr = int(m.group("addr"), 16) if m else -1
        if addr not in index or addr not in rows:
            lost.append(name)
            continue
        first = program[index[addr]]
        op = pat.op
        run = _by_run(program, index[addr], first.mnemonic, first.mods, op.repeat)
        totals = np.array([_op_total(sim, name, f) for f in FIELDS])
        shares = _shares(sim, op, op.repeat) if len(run) > 1 else np.ones((1, len(FIELDS)))
        for d, share in zip(run, shares, strict=True):
            row = rows[d.addr]
            if name not in row.ops:
                row.ops.append(name)
            part = PARTS[m.group("part")]
            if part not in row.parts:
                row.parts.append(part)
            row.run = max(row.run, len(run))
            for f, v in zip(FIELDS, totals * share, strict=True):
                setattr(row, f, getattr(row, f) + float(v))
    return sorted(rows.values(), key=lambda r: r.addr), lost


def line_table(lines: list[SassLine], loop_trips: int) -> list[dict]:
    """The rows the page shows: one per memory instruction, counts over the whole launch."""
    total = sum(x.l1_cycles for x in lines) or 1.0
    out = []
    for x in lines:
        row = {"address": f"0x{x.addr:04x}", "SASS": x.text, "IR op": ", ".join(x.ops) or "-"}
        if loop_trips:  # the kernel has a loop: whether the instruction is in it
            row["where"] = ", ".join(f"loop (x{loop_trips:,})" if p == "loop" else p for p in x.parts) or "-"
        out.append(row | {
            "instructions": round(x.instructions),
            "sectors/request": x.per_instruction(x.sectors) if x.sectors else None,
            "wavefronts/instruction": x.per_instruction(x.wavefronts) if x.wavefronts else None,
            "bank conflicts": round(x.conflicts) if x.wavefronts else None,
            "% of L1/shared pipe": 100.0 * x.l1_cycles / total, "space": x.space,
            "sectors": round(x.sectors) if x.sectors else None,
            "wavefronts": round(x.wavefronts) if x.wavefronts else None,
            "lines": round(x.lines) if x.lines else None,
            "ideal wavefronts/instruction": x.per_instruction(x.ideal_wavefronts) if x.wavefronts else None,
            "run": x.run})
    return out


def one_line(e: BaseException) -> str:
    """A user error's message as one line."""
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0]


def read_example(ex: Example) -> bytes:
    return (REPO / ex.path).read_bytes()
