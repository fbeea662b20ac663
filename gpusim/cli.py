"""Command line: ``gpusim run | list | ladder | roofline | trace | validate | sweep | sass``."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time

from gpusim import ladder_shapes
from gpusim.config import ConfigError
from gpusim.ladder_shapes import DEFAULT_SHAPES, SQUARE_PREFIXES
from gpusim.ir import KernelError
from gpusim.sm.occupancy import LaunchError
from gpusim.ncu import TIME

# extra rows a family's ladder shows: (label suffix, overrides) per kernel
LADDER_VARIANTS = {"attention": (("", {}), (" causal", {"causal": "1"}))}
USER_ERRORS = (ConfigError, KernelError, LaunchError)


class UserError(Exception):
    """Bad command-line input (one line, exit status 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse's convention), no usage dump
        raise UserError(f"{message}{_did_you_mean(self, message)} ({self.prog})")


def _options(parser: argparse.ArgumentParser) -> list[str]:
    """Every option string of ``parser`` and of its subcommands."""
    out = list(parser._option_string_actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out += _options(sub)
    return sorted(set(out))


def _subcommands(parser: argparse.ArgumentParser) -> list[str]:
    return [c for a in parser._actions if isinstance(a, argparse._SubParsersAction) for c in a.choices]


_ARGV: list[str] = []  # the command line being parsed (for the hints of a parse error)


def _did_you_mean(parser: argparse.ArgumentParser, message: str) -> str:
    """"; --shpe: did you mean --shape?" for every misspelled option of the command line (whatever argparse complains
    of first: a required option the misspelling left out), or for a misspelled subcommand."""
    import difflib
    import re

    m = re.search(r"invalid choice: '([^']*)'", message)
    if m:
        near = difflib.get_close_matches(m.group(1), _subcommands(parser) or [], n=1, cutoff=0.5)
        return f"; did you mean {near[0]!r}?" if near else ""
    top = build_parser()
    known = _options(top)
    hints = []
    for w in (t.split("=")[0] for t in _ARGV if t.startswith("--")):
        if w in known or any(k.startswith(w) for k in known):  # argparse takes a unique prefix
            continue
        near = difflib.get_close_matches(w, known, n=1, cutoff=0.6)
        hints.append(f"{w}: did you mean {near[0]}?" if near else f"{w}: no such option")
    return "; " + "; ".join(hints) if hints else ""


def _known_kernel(name: str) -> None:
    """An unknown kernel name is one line with the nearest registered names."""
    import difflib

    from gpusim.ir import REGISTRY

    if name in REGISTRY:
        return
    near = difflib.get_close_matches(name, list(REGISTRY), n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(near)}?" if near else "no registered kernel is close"
    raise UserError(f"unknown kernel {name!r}: {hint} ('gpusim list' shows all {len(REGISTRY)})")


def resolve_config(text: str | None) -> str | None:
    """A ``--config`` as given, or a bundled config by name: ``h200``, ``h200.toml`` or ``configs/h200.toml`` from any
    folder (the bundled ones live beside the package, not in the working directory)."""
    from pathlib import Path

    from gpusim.config import CONFIG_DIR

    if text is None or Path(text).exists():
        return text
    name = Path(text).name
    for cand in (CONFIG_DIR / name, CONFIG_DIR / f"{name}.toml"):
        if cand.is_file():
            return str(cand)
    if "/" not in text and not text.endswith(".toml"):
        import difflib

        bundled = sorted(p.stem for p in CONFIG_DIR.glob("*.toml"))
        near = difflib.get_close_matches(name, bundled, n=1, cutoff=0.4)
        raise UserError(f"--config {text!r}: no such file and no bundled config of that name"
                        + (f"; did you mean {near[0]!r}?" if near else "") + f" (bundled: {', '.join(bundled)})")
    return text


def _shape(text: str) -> tuple[int, ...]:
    from gpusim.inputs import parse_shape

    return parse_shape(text, "--shape", UserError)  # the one reading of a shape (sweep's too)


def _output(flag: str, path: str | None) -> None:
    """An output path that cannot be written is refused before any work (and an empty one at all)."""
    from gpusim.inputs import check_writable

    if path is not None:
        check_writable(path, flag, UserError)


def _sets(items: list[str]) -> dict:
    out = {}
    for item in items or []:
        if "=" not in item:
            raise UserError(f"--set {item!r}: expected KEY=VALUE")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:,.2f}" if abs(v) < 1e6 else f"{v:,.0f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


SOURCE_SUFFIXES = (".cu", ".cubin", ".sass", ".py")  # .py: a Triton file


def is_source(name: str) -> bool:
    """Whether ``gpusim run NAME`` names a CUDA file for the front-end rather than a registered kernel."""
    return name.lower().endswith(SOURCE_SUFFIXES) or os.sep in name


def _run_source(a):
    """``gpusim run FILE.cu --kernel K --grid ... --block ... --arg ...``: the front-end's prediction."""
    from gpusim.api import predict_source

    if a.shape or a.set:
        raise UserError(f"{a.kernel}: --shape and --set are for registered kernels; a CUDA file takes --grid, "
                        "--block and --arg")
    if a.kernel.lower().endswith(".py"):
        return _run_triton(a)
    for flag in ("const", "num_warps", "num_stages"):
        if getattr(a, flag) is not None:
            raise UserError(f"--{flag.replace('_', '-')} is for a Triton file (gpusim run FILE.py)")
    if not a.grid or not a.block:
        raise UserError(f"{a.kernel}: give the launch with --grid X[,Y,Z] and --block X[,Y,Z]")
    for flag in ("grid", "block", "cluster"):
        if getattr(a, flag):
            _dims_text(getattr(a, flag), flag)
    m, sim = predict_source(a.kernel, a.name, grid=a.grid, block=a.block, args=a.arg or [], smem_dynamic=a.smem,
                            defines=tuple(a.D or ()), compiler=a.compiler, config=a.config, cluster=a.cluster)
    return _source_metrics(a, m, sim, f"{sim.kernel.name} ({a.kernel})")


def _source_metrics(a, m: dict, sim, label: str):
    """(metrics headed by the kernel, its file and launch, and the emulation's notes; the simulation; its label) of a
    kernel from source."""
    m = {"gpusim__kernel": sim.kernel.name, "gpusim__source": a.kernel, "gpusim__grid": list(sim.kernel.launch.grid),
         "gpusim__block": list(sim.kernel.launch.block), **m}
    if sim.kernel.notes:
        m["gpusim__notes"] = sim.kernel.notes
    return m, sim, label


def _run_triton(a):
    """``gpusim run FILE.py --kernel K --grid ... --arg ... --const NAME=VALUE [--num-warps W] [--num-stages S]``."""
    from gpusim.api import predict_triton

    for flag, option, why in (("block", "--block", "its block is 32 * --num-warps threads"),
                              ("smem", "--smem", "Triton sizes its shared memory"), ("D", "-D", "give --const"),
                              ("cluster", "--cluster", "gpusim takes Triton's kernels without clusters")):
        if getattr(a, flag):
            raise UserError(f"{a.kernel}: {option} is for a CUDA file; for a Triton kernel {why}")
    if not a.grid:
        raise UserError(f"{a.kernel}: give the launch with --grid X[,Y,Z] (the programs)")
    _dims_text(a.grid, "grid")
    consts = {}
    for item in a.const or []:
        if "=" not in item:
            raise UserError(f"--const {item!r}: expected NAME=VALUE")
        k, v = item.split("=", 1)
        consts[k.strip()] = v.strip()
    m, sim = predict_triton(a.kernel, a.name, grid=a.grid, args=a.arg or [], constexprs=consts,
                            num_warps=4 if a.num_warps is None else a.num_warps,
                            num_stages=3 if a.num_stages is None else a.num_stages, config=a.config)
    return _source_metrics(a, m, sim, f"{sim.kernel.name} ({a.kernel}, Triton)")


def _dims_text(text: str, flag: str) -> None:
    parts = text.split(",")
    if not 1 <= len(parts) <= 3 or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
        raise UserError(f"--{flag} {text!r}: expected one to three positive integers, e.g. 128,128")


def cmd_run(a) -> int:
    from gpusim import sections
    from gpusim.api import predict
    from gpusim.validation import unvalidated_note

    if is_source(a.kernel):
        m, sim, label = _run_source(a)
        note = ("a kernel from source: the front-end's accuracy on the validation twins is "
                "`gpusim validate --frontend`'s; this kernel itself has no committed measurement")
        m["gpusim__validated"] = False
    else:
        for flag in ("grid", "block", "arg", "name"):
            if getattr(a, flag):
                raise UserError(f"--{'kernel' if flag == 'name' else flag} is for a CUDA file (gpusim run FILE.cu); "
                                f"{a.kernel!r} is a registered kernel: give --shape")
        _known_kernel(a.kernel)
        if not a.shape:
            from gpusim.ir import REGISTRY

            names = ",".join(REGISTRY[a.kernel].shape_names)
            raise UserError(f"{a.kernel}: the following arguments are required: --shape ({names})")
        m, sim = predict(a.kernel, _shape(a.shape), _sets(a.set), a.config)
        _check_sass(a.kernel, sim.kernel)
        label = a.kernel
        note = unvalidated_note(sim.config, a.kernel)
        m = {"gpusim__kernel": a.kernel, "gpusim__shape": list(sim.kernel.shape), **m, "gpusim__validated": not note}
    try:
        chosen = sections.select(m, a.metrics) if a.metrics else None
    except sections.MetricsError as e:
        raise UserError(str(e)) from None
    if a.json:
        print(json.dumps(chosen if chosen is not None else m, indent=1, sort_keys=False))
        return 0
    if a.csv:
        sys.stdout.write(sections.csv_text(label, sim.kernel.shape, m, chosen))
        return 0
    if chosen is not None:
        if note:
            print(f"gpusim: {note}", file=sys.stderr)
        rows = [(k, sections.unit_of(k), sections.value_text(k, v)) for k, v in chosen.items()]
        width = [max(len(r[i]) for r in rows) for i in range(2)]
        for k, unit, v in rows:
            print(f"{k:<{width[0]}}  {unit:<{width[1]}}  {v}")
        return 0
    print("\n".join(sections.report_lines(m, sim.config, label, sim.kernel.shape, note)))
    return 0


def dram_gbytes_per_s(m: dict) -> float:
    """DRAM bytes (read + written) over the kernel's time, in GB/s."""
    t = m[TIME]
    return (m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]) / t if t else 0.0


def _check_sass(kernel_name: str, kernel) -> None:
    """Warn (stderr, one line per mismatch) where a user kernel disagrees with the SASS of its ``source``."""
    from gpusim.ir import REGISTRY

    kd = REGISTRY[kernel_name]
    if not kd.source:
        return
    from gpusim import sass

    try:
        for line in sass.compare(kernel, kd.source):
            print(f"gpusim: warning: {line}", file=sys.stderr)
    except sass.SassError as e:
        print(f"gpusim: warning: {kernel_name}: cannot compare with the SASS of {kd.source}: {e}", file=sys.stderr)


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    k = text.find(". ")
    return text[:k + 1] if k > 0 else text


def knob_text(kd, name: str) -> str:
    """A knob as ``gpusim list`` shows it: its default and its allowed values."""
    default = kd.defaults[name]
    choices = kd.choices.get(name)
    if choices:
        return f"{name}={default} ({'|'.join(map(str, choices))})"
    if isinstance(default, bool):
        return f"{name}={int(default)} (0|1)"
    return f"{name}={default} ({type(default).__name__})"


def cmd_list(a) -> int:
    import shutil
    import textwrap

    from gpusim.ir import LAUNCH_KNOBS, REGISTRY

    names = a.names or []
    for n in names:
        _known_kernel(n)
    chosen = [REGISTRY[n] for n in names] if names else \
        sorted(REGISTRY.values(), key=lambda d: (d.family, list(REGISTRY).index(d.name)))
    width = max(shutil.get_terminal_size((100, 24)).columns, 60)
    long = a.long or bool(names)
    name_w = max(len(d.name) for d in chosen)
    fam_w = max(len(d.family) for d in chosen)
    shape_w = max(len(",".join(d.shape_names)) for d in chosen)
    head = f"{'kernel':<{name_w}}  {'family':<{fam_w}}  {'shape':<{shape_w}}  knobs (default (allowed values))"
    print(head)
    print("-" * min(len(head), width))
    indent = " " * (name_w + 2)
    for d in chosen:
        first = f"{d.name:<{name_w}}  {d.family:<{fam_w}}  {','.join(d.shape_names):<{shape_w}}  "
        lines = [""]
        for item in [knob_text(d, k) for k in d.defaults] or ["-"]:  # a knob is never split over two lines
            if lines[-1] and len(lines[-1]) + 3 + len(item) > max(width - len(first), 30):  # 3: ", " and ","
                lines[-1] += ","
                lines.append(item)
            else:
                lines[-1] += (", " if lines[-1] else "") + item
        print(first + lines[0])
        for line in lines[1:]:
            print(" " * len(first) + line)
        doc = " ".join(d.doc.split()) if long else _first_sentence(d.doc)
        for line in textwrap.wrap(doc, width=max(width - len(indent), 30)):
            print(indent + line)
        print(f"{indent}from {d.origin}")
    print()
    print(textwrap.fill(f"every kernel also takes the launch knobs {', '.join(LAUNCH_KNOBS)} (ptxas -v's registers per "
                        "thread, shared memory per CTA in bytes); set knobs with --set KEY=VALUE"
                        + ("" if long else "; --long (or gpusim list NAME) for full descriptions"), width=width))
    if not names:
        _list_configs()
    return 0


def _list_configs() -> None:
    """The bundled hardware configs (``--config NAME``): the GPU, what it has of Hopper's features, and whether
    kernel measurements of it are committed (validated) or not."""
    from gpusim.config import CONFIG_DIR, FEATURES, bundled_configs, load_config
    from gpusim.validation import MEASUREMENTS, measured_kernels

    print("\nhardware configs (--config NAME):")
    if not MEASUREMENTS.is_dir():  # an installed package without the repository's validate/
        print(f"  (no validation measurements installed: {MEASUREMENTS} is in the source repository; every config "
              "below reads as unvalidated here)")
    names = bundled_configs()
    width = max(map(len, names))
    for name in names:
        cfg = load_config(CONFIG_DIR / f"{name}.toml")
        n = len(measured_kernels(cfg))
        status = f"{n} kernels measured on it (predictions of other families unvalidated)" if n else \
            "UNVALIDATED: no kernel measurements of it are committed"
        lacks = [f for f in FEATURES if not cfg.has(f)]
        base = f"; inherits {', '.join(os.path.basename(p)[:-5] for p in cfg.inherits)}" if cfg.inherits else ""
        print(f"  {name:<{width}}  {cfg.name}; {status}" + (f"; no {', '.join(lacks)}" if lacks else "") + base)


def rung_shape(name: str, shape: tuple[int, ...]) -> tuple[int, ...]:
    """:func:`gpusim.ladder_shapes.rung_shape`, its refusal a command-line error."""
    try:
        return ladder_shapes.rung_shape(name, shape)
    except ladder_shapes.ShapeError as e:
        raise UserError(str(e)) from None


def ladder_rows(family: str, shape, config, progress=None, workers: int | None = None,
                kernel_paths: tuple[str, ...] = (), skipped: list | None = None) -> list[tuple[str, dict]]:
    """Predict every kernel of ``family`` (its variants too): (label, metrics) in ladder order, each at
    :func:`rung_shape`. The kernels are independent, so they run on ``workers`` processes (default: one per core; 1:
    in this process); the rows are the same whatever the number. With a ``skipped`` list, a rung that needs what the
    config's GPU lacks (wgmma, TMA or clusters on an A100) is left out and listed there as (label, why)."""
    from gpusim.api import predict_many
    from gpusim.ir import REGISTRY
    from gpusim.kernel_checks import MissingFeatureError

    cases = [(n + label, n, o) for n, d in REGISTRY.items() if d.family == family
             for label, o in LADDER_VARIANTS.get(family, (("", {}),))]
    if progress:
        progress(0, len(cases), "")
    results = predict_many([(name, rung_shape(name, shape), overrides or None) for _, name, overrides in cases],
                           config, workers, kernel_paths, progress)
    for (label, _, _), r in zip(cases, results, strict=True):
        if isinstance(r, MissingFeatureError) and skipped is not None:
            skipped.append((label, str(r)))
        elif isinstance(r, Exception):
            raise r
    return [(label, {"gpusim__kernel": name, "gpusim__shape": list(rung_shape(name, shape)), **m})
            for (label, name, _), m in zip(cases, results, strict=True) if not isinstance(m, Exception)]


def _progress(i: int, n: int, name: str) -> None:
    if not sys.stderr.isatty():
        return
    bar = "#" * (20 * i // n) + "." * (20 - 20 * i // n)
    end = "\n" if i == n else ""
    sys.stderr.write(f"\r[{bar}] {i}/{n} {name:<28}{end}")
    sys.stderr.flush()


def cmd_ladder(a) -> int:
    shape = _shape(a.shape or DEFAULT_SHAPES.get(a.family, "4096,4096,4096"))
    t0 = time.perf_counter()
    if a.workers is not None and a.workers < 1:
        raise UserError(f"--workers {a.workers}: must be at least 1")
    from gpusim.config import load_config
    from gpusim.validation import unvalidated_note

    skipped: list[tuple[str, str]] = []
    rows = ladder_rows(a.family, shape, a.config, _progress, a.workers, tuple(a.kernels or ()), skipped)
    cfg = load_config(a.config)
    if not rows:
        raise UserError(f"no rung of the {a.family} ladder runs on the {cfg.name}: {skipped[0][1]}")
    notes = {unvalidated_note(cfg, m["gpusim__kernel"]) for _, m in rows} - {""}
    if a.json:
        print(json.dumps(dict(rows), indent=1))
        return 0
    has = _contents(a.family, shape)
    tera = max((m["gpusim__tflops"] for _, m in rows), default=0.0) >= 1.0  # the prefix that reads naturally
    rate = [("TFLOP/s", lambda m: f"{m['gpusim__tflops']:.1f}") if tera else
            ("GFLOP/s", lambda m: f"{m['gpusim__gflops']:.1f}")] if has["flops"] and a.family != "membound" else []
    cols = [("time ms", lambda m: f"{m['gpu__time_duration.sum'] / 1e6:.3f}"), *rate,
            ("DRAM TB/s", lambda m: f"{dram_gbytes_per_s(m) / 1e3:.2f}"),
            ("DRAM rd MB", lambda m: f"{m['dram__bytes_read.sum'] / 1e6:.0f}"),
            ("L2 hit%", lambda m: f"{m['lts__t_sector_hit_rate.pct']:.1f}"),
            ("L1 hit%", lambda m: f"{m['l1tex__t_sector_hit_rate.pct']:.1f}"),
            ("sect/req", lambda m: _ratio(m, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                                          "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")),
            ("lds confl", lambda m: f"{m['l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum']:.3g}"),
            ("sts confl", lambda m: f"{m['l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum']:.3g}"),
            ("ldsm confl", lambda m: f"{m['sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum']:.3g}"),
            ("tensor%", lambda m: f"{m['gpusim__sol_pct'].get('tensor pipe', 0):.0f}"),
            ("occ%", lambda m: f"{m['sm__warps_active.avg.pct_of_peak_sustained_active']:.0f}"),
            ("regs", lambda m: str(m["launch__registers_per_thread"])),
            ("top stall", _top_stall)]
    drop = set()
    if not has["global_ld"]:
        drop |= {"L1 hit%", "sect/req"}
    if not has["lds"]:
        drop.add("lds confl")
    if not has["sts"]:
        drop.add("sts confl")
    if not has["ldsm"]:
        drop.add("ldsm confl")
    if not has["tensor"]:
        drop.add("tensor%")
    cols = [c for c in cols if c[0] not in drop]
    if len({tuple(m["gpusim__shape"]) for _, m in rows}) > 1:  # rungs at their own shapes: say which
        cols.insert(0, ("shape", _shape_text))
    table = [["kernel"] + [c for c, _ in cols]] + [[n] + [f(m) for _, f in cols] for n, m in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    print(f"{a.family} ladder at {','.join(map(str, shape))}"
          + (" elements (square-matrix rungs at the same elements)" if a.family == "membound" else "")
          + f" on {cfg.name}")
    for note in sorted(notes):
        print(f"NOTE: {note}")
    for k, r in enumerate(table):
        cells = zip(r, widths, strict=True)
        print("  ".join(c.ljust(w) if i in (0, len(r) - 1) else c.rjust(w) for i, (c, w) in enumerate(cells)))
        if k == 0:
            print("  ".join("-" * w for w in widths))
    print("\nverdicts (the limiting unit's share of its peak, and the work that explains it):")
    for name, m in rows:
        print(f"{name:<26} {m['gpusim__verdict']}")
    if skipped:
        print(f"\nleft out, the {cfg.name} lacks what they need:")
        for label, why in skipped:
            print(f"{label:<26} {why.split(': ', 1)[-1]}")
    if any(m["gpusim__fast_forward"] for _, m in rows):
        print("\n(steady-state fast-forward used: loop iterations and CTA waves beyond the simulated window "
              "are extrapolated)")
    if a.family == "sgemm" and tuple(shape) == (4096, 4096, 4096) and cfg.gpu_model == "H100":
        from gpusim import public_ladder

        print()
        print("\n".join(public_ladder.lines({m["gpusim__kernel"]: m[TIME] for _, m in rows})))
    print(f"simulated in {time.perf_counter() - t0:.2f} s", file=sys.stderr)
    return 0


def _shape_text(m: dict) -> str:
    """A rung's shape as the ladder shows it: ``8192x8192`` for a square-matrix kernel's ``(8192,)``."""
    shape = list(m["gpusim__shape"])
    if len(shape) == 1 and m["gpusim__kernel"].startswith(SQUARE_PREFIXES):
        shape *= 2
    return "x".join(map(str, shape))


def _contents(family: str, shape) -> dict[str, bool]:
    """What the family's kernels contain (at their default parameters): the ladder shows the columns that
    matter for them."""
    from gpusim.ir import REGISTRY, Compute, Mem
    from gpusim.registry import build_kernel

    has = dict.fromkeys(("flops", "global_ld", "lds", "sts", "ldsm", "tensor"), False)
    for name, kd in REGISTRY.items():
        if kd.family != family:
            continue
        k = build_kernel(name, rung_shape(name, shape))
        has["flops"] |= k.flops > 0
        for op in k.all_ops():
            if isinstance(op, Mem):
                has["global_ld"] |= op.space == "global" and op.kind == "ld"
                has["lds"] |= op.space == "shared" and op.kind == "ld"
                has["sts"] |= op.space == "shared" and op.kind == "st" and not op.async_copy
                has["ldsm"] |= op.kind == "ldsm"
            elif isinstance(op, Compute):
                has["tensor"] |= op.pipe in ("tensor", "wgmma")
    return has


def _ratio(m: dict, a: str, b: str) -> str:
    return f"{m[a] / m[b]:.1f}" if m[b] else "-"


def _top_stall(m: dict) -> str:
    stalls = {k.split("stalled_")[1].split("_per_issue")[0]: v for k, v in m.items()
              if k.startswith("smsp__average_warps_issue_stalled") and "selected" not in k}
    top = max(stalls, key=stalls.get)
    return f"{top} {stalls[top]:.1f}"


def cmd_roofline(a) -> int:
    """The hierarchical roofline of some kernels (a family's ladder, or named kernels) as a PNG or SVG."""
    from pathlib import Path

    from gpusim import roofline
    from gpusim.api import predict_many
    from gpusim.config import load_config
    from gpusim.ir import REGISTRY
    from gpusim.registry import build_kernel
    from gpusim.validation import unvalidated_note

    if not a.output.lower().endswith((".png", ".svg")):
        raise UserError(f"-o {a.output!r}: expected a .png or .svg file")
    names = [k.strip() for k in (a.kernel or "").split(",") if k.strip()]
    for n in names:
        _known_kernel(n)
    if not names:
        names = [n for n, d in REGISTRY.items() if d.family == a.family]
    if a.shape:
        shape = _shape(a.shape)
    else:
        fam = REGISTRY[names[0]].family
        shape = _shape(DEFAULT_SHAPES.get(fam, "4096,4096,4096"))
    cfg = load_config(a.config)
    jobs = [(n, rung_shape(n, shape), None) for n in names]
    results = predict_many(jobs, cfg, a.workers, tuple(a.kernels or ()), _progress)
    pts = []
    for (n, s, _), m in zip(jobs, results, strict=True):
        if isinstance(m, Exception):
            raise m
        flops = build_kernel(n, s, None, cfg).flops
        if not flops:
            print(f"gpusim: {n} declares no FLOPs: it has no point on a roofline", file=sys.stderr)
        pts += roofline.points(n, m, flops, cfg)
    if not pts:
        raise UserError("none of these kernels declares FLOPs: nothing to draw (a roofline is FLOP/s against FLOP "
                        "per byte)")
    notes = {unvalidated_note(cfg, n) for n in names} - {""}
    title = f"Hierarchical roofline, {cfg.name}, shape {','.join(map(str, shape))}" + (
        " (UNVALIDATED)" if notes else "")
    with _writing("-o", a.output) as out:  # a temporary file, renamed once complete: the format from -o
        roofline.figure(pts, cfg, Path(out), title, fmt=Path(a.output).suffix[1:])
    for c in roofline.ceilings(cfg):
        unit = "TFLOP/s" if c.kind == "compute" else "TB/s"
        print(f"{c.name:<20} {c.value / 1e12:9.2f} {unit:<8} {c.note}")
    for p in pts:
        print(f"  {p.kernel:<28} {p.level:<10} {p.intensity:10.3g} FLOP/B  {p.flops_per_second / 1e12:8.2f} TFLOP/s")
    for note in sorted(notes):
        print(f"NOTE: {note}")
    print(f"wrote {a.output}")
    return 0


def cmd_trace(a) -> int:
    from gpusim.api import predict
    from gpusim.trace import write_trace

    _known_kernel(a.kernel)
    _output("-o", a.output)
    _, sim = predict(a.kernel, _shape(a.shape), _sets(a.set), a.config, trace=True)
    with _writing("-o", a.output) as out:
        write_trace(sim, out)
    print(f"wrote {a.output}: open it in https://ui.perfetto.dev or chrome://tracing")
    return 0


def cmd_validate(a) -> int:
    from pathlib import Path

    from gpusim import validation as v
    from gpusim.config import load_config

    _output("--report", a.report)  # before anything is simulated or written
    _output("--figure", a.figure)
    if a.figure is not None:
        v.check_figure_path(a.figure)
    explanations = v.load_explanations()  # a malformed validate/misses.toml is refused before the simulations
    cfg = load_config(a.config)
    if a.measurements:
        paths = list(a.measurements)
    else:
        main = v.latest_measurements(cfg.gpu_model)
        paths = [main, *v.companion_files(main)]
    path = ", ".join(v.repo_relative(p) for p in paths)
    data = v.load_all(paths, cfg)
    skipped: list[str] = []
    if a.workers is not None and a.workers < 1:
        raise UserError(f"--workers {a.workers}: must be at least 1")
    rows = v.compare(cfg, data, _progress, skipped, a.workers, tuple(a.kernels or ()))
    if not rows:
        raise v.ValidationError(f"{path}: no correct measurement of a registered kernel")
    summary = v.summarize(rows)
    report = v.markdown(rows, summary, str(path), cfg, explanations)
    report = v.add_section(report, "## Goals", _limiter_markdown(rows, cfg))
    frontend = _validate_frontend(cfg, data, a.workers) if a.frontend else None
    if frontend:
        report = report.rstrip("\n") + "\n\n" + "\n".join(frontend[1]) + "\n"
    if a.report:
        with _writing("--report", a.report) as out:
            Path(out).write_text(report)
    if a.figure:
        with _writing("--figure", a.figure) as out:
            v.figure(rows, Path(out))
    print(f"{'kernel':<26} {'shape':<16} {'pred ms':>9} {'meas ms':>9} {'error':>7}  top stall pred / ncu")
    for r in rows:
        print(f"{r.label:<26} {','.join(map(str, r.shape)):<16} {r.predicted[v.TIME] / 1e6:>9.3f} "
              f"{r.measured[v.TIME] / 1e6:>9.3f} {r.errors.get(v.TIME, float('nan')):>+6.1f}%  "
              f"{r.top_stall[0]} / {r.top_stall[1] or '-'}")
    for line in skipped:
        print(f"not modelled: {line}")
    print(f"\ntime MAPE {summary['time_mape_pct']:.1f}%, worst {summary['time_max_err_pct']:.1f}% "
          f"({summary['time_worst']}), top stall match {summary['top_stall_match_pct']:.0f}%")
    for fam, f in summary["families"].items():
        print(f"time MAPE {fam}: {f['mape']:.1f}% over {f['n']} rows, worst {f['worst']:.1f}% ({f['worst_row']})")
    for ladder, rho in summary["spearman"].items():
        print(f"Spearman rank correlation {ladder}: {rho:.3f}")
    from gpusim import bottleneck as bn

    limit = bn.limiter_summary(rows, cfg)
    ncu_dram = bn.ncu_dram_sol(rows, cfg)
    for line in bn.limiter_lines(limit, ncu_dram):
        print(line)
    print(f"busiest predicted unit: {summary['max_utilization_pct']:.1f}% of its peak "
          f"({summary['max_utilization_where']}; physics allows at most 100%)")
    for metric, st in summary["per_metric"].items():
        print(f"  {metric:<58} mean {st['mean']:6.1f} {st['unit']:<3} worst {st['max']:6.1f} {st['unit']}")
    knobs = v.knob_sensitivity(rows)
    if knobs:
        print("\nknob sensitivity (time change against the kernel's defaults, predicted / measured):")
        for k in knobs:
            print(f"  {k.kernel:<22} {','.join(map(str, k.shape)):<16} {k.knobs:<22} {k.predicted_pct:+7.1f}% / "
                  f"{k.measured_pct:+7.1f}%  {'' if k.same_direction else 'wrong direction'}")
    checks = v.autotune(rows)
    if checks:
        print("\nautotune check (each measured knob sweep: the predicted best setting, and how much slower it measured "
              "than the measured best):")
        for line in v.autotune_lines(checks):
            print(f"  {line}")
    print("\ngoals:")
    for line in v.goal_lines(summary, knobs, v.load_tolerances()):
        print(f"  {line}")
    print("\nwhat misses a goal (why: validate/misses.toml, the report's \"What misses a goal, and why\"):")
    for line in v.misses_lines(v.explain(v.goal_misses(rows, summary, knobs), explanations)):
        print(f"  {line}")
    if frontend:
        from gpusim.frontend.validate import irregular_lines as fv_irregular_lines

        fs = frontend[0]
        print(f"\nCUDA front-end ({fs['taken']} of {fs['rows']} twin rows taken from their .cu): time MAPE "
              f"{fs['time_mape_pct']:.1f}% (goal <= 8%; hand IR on the same rows {fs['hand_time_mape_pct']:.1f}%), "
              f"worst {fs['time_worst_pct']:.1f}% (goal <= 20%; {fs.get('time_worst_row', '')}), instructions worst "
              f"{fs['inst_worst_pct']:.1f}% of ncu's (goal <= 5%; {fs.get('inst_worst_row', '')}); per row: the "
              "report's front-end section")
        for line in fv_irregular_lines(fs):
            print(f"  {line}")
    if a.report or a.figure:
        print("wrote " + " and ".join(x for x in (a.report, a.figure) if x))
    if a.check:
        bad = v.check(summary, v.load_tolerances())
        for line in bad:
            print(f"gpusim: accuracy regression: {line}", file=sys.stderr)
        return 1 if bad else 0
    return 0


def _validate_frontend(cfg, data, workers):
    """(summary, report lines) of the twins sent through the CUDA front-end (``gpusim validate --frontend``)."""
    from gpusim.frontend import validate as fv

    rows = fv.compare(cfg, data, workers, _progress)
    summary = fv.summarize(rows)
    return summary, fv.lines(rows, summary)


def _limiter_markdown(rows, cfg) -> list[str]:
    from gpusim import bottleneck as bn

    return bn.limiter_markdown(bn.limiter_summary(rows, cfg), bn.ncu_dram_sol(rows, cfg))


def cmd_sweep(a) -> int:
    from gpusim.sweep import SweepError

    try:
        return _sweep(a)
    except SweepError as e:
        raise UserError(str(e)) from None


def _sweep(a) -> int:
    from gpusim import sweep

    kernels = [k.strip() for k in a.kernel.split(",") if k.strip()]
    if a.workers is not None and a.workers < 1:
        raise UserError(f"--workers {a.workers}: must be at least 1")
    max_points = sweep.DEFAULT_MAX_POINTS if a.max_points is None else a.max_points
    if max_points < 1:
        raise UserError(f"--max-points {max_points}: must be at least 1")
    shapes = [sweep.parse_shape(t) for t in a.shape or ()]
    if a.shapes is not None:
        shapes += sweep.read_shapes(a.shapes, max_points)
    for flag, out, suffix in (("-o", a.output, ".parquet"), ("--figure", a.figure, ".png")):
        _output(flag, out)  # before a point runs: a sweep's work is not lost to a path it cannot write
        if out is not None and not out.endswith(suffix):
            raise UserError(f"{flag} {out!r}: expected a {suffix} file")
    if a.scheduler is not None and not a.scheduler.strip():
        raise UserError("--scheduler '': an empty address (expected e.g. tcp://HOST:8786)")
    plan = sweep.plan(kernels, shapes, sweep.parse_vary(a.vary or (), max_points), _sets(a.set),
                      a.config or [None], max_points, tuple(a.kernels or ()))
    client = sweep.connect(a.scheduler) if a.scheduler else None  # unreachable: one line now, not mid-sweep
    cache = sweep.Cache(None if a.no_cache else sweep.default_cache_dir(),
                        warn=lambda line: print(f"gpusim: warning: {_one_line(line)}", file=sys.stderr))
    where = f"the Dask cluster at {a.scheduler}" if client else f"{a.workers or os.cpu_count() or 1} local worker(s)"
    if sys.stderr.isatty():  # a status line for a person watching; a log gets the same in the last line
        print(f"sweeping {len(plan.points)} points on {where}", file=sys.stderr)
    t0 = time.perf_counter()
    with _sweep_progress() as progress:
        outcome = sweep.run(plan, a.workers, client=client, cache=cache, progress=progress)
    if client is not None:
        client.close()
    elapsed = time.perf_counter() - t0
    columns, rows = sweep.rows(plan, outcome)
    if outcome.interrupted:  # the partial table goes beside -o, never over a complete one already there
        partial = sweep.partial_path(a.output) if a.output else None
        if partial:
            with _writing("-o", partial) as out:
                sweep.write_parquet(columns, rows, out, plan.varied, plan.dims)
        kept = f"; wrote them to {partial}" if partial else ""
        print(f"gpusim: interrupted: {outcome.done} of {len(plan.points)} points done"
              f"{' (cached)' if cache.enabled else ''}{kept}; rerun the same command to compute the rest",
              file=sys.stderr)
        return 130
    if a.output:
        with _writing("-o", a.output) as out:
            sweep.write_parquet(columns, rows, out, plan.varied, plan.dims)
        stale = sweep.partial_path(a.output)  # a partial table beside it, of an earlier interrupted run, is superseded
        if stale != a.output:
            with contextlib.suppress(OSError):
                os.unlink(stale)
    if a.figure:  # the outputs before the report: a failure to write them is the only thing printed
        with _writing("--figure", a.figure) as out:
            sweep.figure(rows, plan.varied, out)
    from gpusim.config import load_config
    from gpusim.validation import unvalidated_note

    notes = {unvalidated_note(load_config(c), k) for c in (a.config or [None]) for k in kernels} - {""}
    for note in sorted(notes):
        print(f"NOTE: {note}")
    for line in sweep.report_lines(rows, plan.varied):
        print(line)
    wrote = " and ".join(x for x in (a.output, a.figure) if x)
    print(f"\n{outcome.computed} points computed, {outcome.cached} from the cache in {elapsed:.1f} s on {where}"
          + (f"; wrote {wrote}" if wrote else "; -o FILE.parquet keeps the table"))
    return 0


class _sweep_progress:  # noqa: N801 (a context manager used like a function)
    """A progress bar on stderr: tqdm when installed (and stderr is a terminal), else a plain one."""

    def __enter__(self):
        try:
            from tqdm import tqdm
        except ImportError:
            tqdm = None
        self.bar = None

        def progress(done: int, total: int) -> None:
            if tqdm is not None:
                if self.bar is None:
                    self.bar = tqdm(total=total, initial=done, file=sys.stderr, unit="pt", disable=None,
                                    dynamic_ncols=True)
                self.bar.update(done - self.bar.n)
            else:
                _progress(done, total, "")

        return progress

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.close()
        return False


def inputs_text(path) -> str:
    """A text file's contents, or a one-line error naming it."""
    try:
        return path.read_text(errors="replace")
    except OSError as e:
        raise UserError(f"{path}: cannot read: {e.strerror}") from None


def cmd_sass(a) -> int:
    from pathlib import Path

    from gpusim import sass

    cu = Path(a.file)
    _output("--skeleton", a.skeleton)
    if a.skeleton is not None and Path(a.skeleton).suffix != ".py":
        raise UserError(f"--skeleton {a.skeleton!r}: expected a .py file")
    suffix = cu.suffix.lower()
    if suffix in (".sass", ".cubin"):  # an existing listing or binary: read, not compiled
        from gpusim.frontend import build as fbuild

        if suffix == ".sass":
            funcs = sass.parse_sass(inputs_text(cu))
            if not any(f.insts for f in funcs):
                raise UserError(f"{cu}: no SASS functions found (expected `cuobjdump -sass` output)")
        else:
            funcs = fbuild.cubin_functions(cu)
    else:
        funcs = sass.compile_and_dump(cu, a.arch, tuple(a.D or ()))
    chosen = [f for f in funcs if not a.kernel or a.kernel in (f.name, f.mangled)]
    if a.skeleton and len(chosen) != 1:  # before anything is printed: an error is the only output
        raise UserError(f"--skeleton: {cu} has {len(chosen)} kernels; pick one with --kernel")
    summary = sass.summarize(funcs, a.kernel)
    listing = sass.listing(funcs, a.kernel) if a.listing else None
    name = ""
    if a.skeleton:  # written before anything is printed: a failure to write it is the only output
        name = "my_" + "".join(ch if ch.isalnum() else "_" for ch in chosen[0].name)
        with _writing("--skeleton", a.skeleton) as tmp:
            Path(tmp).write_text(sass.skeleton(chosen[0], cu, name))
    print(summary)
    if listing is not None:
        print(listing)
    if a.skeleton:
        out = Path(a.skeleton)
        print(f"wrote {out}: fill in the functions marked NotImplementedError, then "
              f"'gpusim run {name} --shape N --kernels {out}'")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="gpusim", description="Cycle-approximate H100 simulator: predict a kernel's time and "
                                           "its Nsight Compute metrics, and say why.")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    from gpusim.config import bundled_configs

    def kernels(sp):
        sp.add_argument("--kernels", action="append", metavar="PATH",
                        help="load kernels from a .py file or a folder of them (repeatable; also GPUSIM_KERNELS)")

    def common(sp, shape_required=True):
        kernels(sp)
        sp.add_argument("--shape", required=shape_required, help="problem shape, e.g. 4096,4096,4096 (M,N,K)")
        sp.add_argument("--config", default=None,
                        help=f"hardware config: a bundled one by name ({', '.join(bundled_configs())}; gpusim list "
                             "says which are validated) or a TOML file (default h100_sxm)")

    r = sub.add_parser("run", help="predict one kernel: a registered one (--shape) or a CUDA file (--grid, --block, "
                                   "--arg)")
    r.add_argument("kernel", help="a registered kernel, a .cu / .cubin / .sass file or a Triton .py file")
    common(r, shape_required=False)
    r.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a kernel parameter")
    r.add_argument("--kernel", dest="name", default=None, metavar="NAME",
                   help="the kernel of the CUDA file (needed when it has several)")
    r.add_argument("--grid", default=None, metavar="X[,Y,Z]", help="CUDA file: gridDim")
    r.add_argument("--block", default=None, metavar="X[,Y,Z]", help="CUDA file: blockDim")
    r.add_argument("--arg", action="append", metavar="[NAME=]VALUE",
                   help="CUDA file: a kernel argument, by name or in order: 4096, 0.5, f32[1024], "
                        "i32[N]:randint(0,N), f32[N]@x.npy (repeatable; see docs/your-kernel.md)")
    r.add_argument("--smem", type=int, default=0, metavar="BYTES", help="CUDA file: dynamic shared memory per block")
    r.add_argument("--cluster", default=None, metavar="X[,Y,Z]",
                   help="CUDA file: the launch's thread-block cluster (cudaLaunchKernelEx's cluster dimension), for a "
                        "kernel without __cluster_dims__")
    r.add_argument("-D", action="append", metavar="MACRO[=VALUE]", help="CUDA file: a preprocessor definition")
    r.add_argument("--compiler", default="nvcc", choices=("nvcc", "nvrtc"),
                   help="CUDA file: nvcc (default) or NVRTC (as CuPy's RawModule compiles: -ftz=true)")
    r.add_argument("--const", action="append", metavar="NAME=VALUE",
                   help="Triton file: a tl.constexpr value, e.g. BLOCK_SIZE=1024 (repeatable)")
    r.add_argument("--num-warps", type=int, default=None, metavar="W",
                   help="Triton file: warps per program (default 4); the block is 32*W threads")
    r.add_argument("--num-stages", type=int, default=None, metavar="S",
                   help="Triton file: software-pipelining stages of its loops (default 3)")
    r.add_argument("--json", action="store_true", help="one JSON object keyed by ncu metric names")
    r.add_argument("--metrics", default=None, metavar="NAMES",
                   help="only these metrics: comma-separated names, shell patterns (dram__*) or regex:EXPR, as ncu's "
                        "--metrics")
    r.add_argument("--csv", action="store_true",
                   help="one CSV row per metric (section, name, unit, value), as ncu --csv")
    r.set_defaults(fn=cmd_run)
    lst = sub.add_parser("list", help="list the registered kernels, their shapes and knobs (defaults, allowed values)")
    lst.add_argument("names", nargs="*", metavar="KERNEL", help="only these kernels, with their full descriptions")
    lst.add_argument("--long", action="store_true", help="full descriptions and where each kernel comes from")
    kernels(lst)
    lst.set_defaults(fn=cmd_list)
    lad = sub.add_parser("ladder", help="predict a whole ladder as a table")
    common(lad, shape_required=False)
    lad.add_argument("--family", default="sgemm",
                     help="sgemm (default), hgemm, attention, membound (STREAM, transposes, reductions: one element "
                          "count, the square-matrix rungs at the same elements) or user")
    lad.add_argument("--json", action="store_true")
    lad.add_argument("--workers", type=int, default=None,
                     help="processes the kernels run on (default: one per core; the table is the same)")
    lad.set_defaults(fn=cmd_ladder)
    rf = sub.add_parser("roofline", help="draw the hierarchical roofline (FP32/tensor roofs, HBM/L2/L1 ceilings) of "
                                         "a ladder or of some kernels, PNG or SVG")
    rf.add_argument("kernel", nargs="?", default=None, help="kernels (comma-separated; default: the --family ladder)")
    common(rf, shape_required=False)
    rf.add_argument("--family", default="sgemm", help="the ladder to draw when no kernel is named (default sgemm)")
    rf.add_argument("-o", "--output", required=True, metavar="OUT.png|OUT.svg")
    rf.add_argument("--workers", type=int, default=None)
    rf.set_defaults(fn=cmd_roofline)
    t = sub.add_parser("trace", help="write the simulated timeline of one SM (Chrome trace JSON)")
    t.add_argument("kernel")
    common(t)
    t.add_argument("--set", action="append", metavar="KEY=VALUE")
    t.add_argument("-o", "--output", required=True, help="output .json file")
    t.set_defaults(fn=cmd_trace)
    val = sub.add_parser("validate", help="compare predictions with H100 measurements (offline)")
    val.add_argument("--measurements", default=None, nargs="+", metavar="PATH",
                     help="measurement JSON files (default: the newest run in validate/measurements and its "
                          "companion <family>-<date>.json files)")
    val.add_argument("--config", default=None, help="hardware config: a bundled one by name or a TOML file")
    val.add_argument("--workers", type=int, default=None,
                     help="processes the rows are predicted on (default: one per core; the report is the same)")
    kernels(val)
    val.add_argument("--report", default=None, help="write a markdown report here")
    val.add_argument("--figure", default=None, help="write a predicted-vs-measured PNG here")
    val.add_argument("--check", action="store_true", help="exit 1 if validate/tolerances.toml is exceeded")
    val.add_argument("--frontend", action="store_true",
                     help="also send every twin without Hopper-only instructions through the CUDA front-end (its .cu "
                          "compiled by NVRTC, emulated) and compare with the H100 and the hand IR (minutes)")
    val.set_defaults(fn=cmd_validate)
    sw = sub.add_parser("sweep", help="predict every combination of knobs, shapes and GPU configs (a tidy table)")
    sw.add_argument("kernel", help="kernel to sweep (several: comma-separated)")
    kernels(sw)
    sw.add_argument("--shape", action="append", help="problem shape, e.g. 1024,1024,1024 (repeatable)")
    sw.add_argument("--shapes", metavar="FILE", help="a file of shapes, one per line")
    sw.add_argument("--vary", action="append", metavar="KEY=V1,V2,...",
                    help="a knob and its values; ranges such as stages=1..8 (repeatable: every combination)")
    sw.add_argument("--set", action="append", metavar="KEY=VALUE", help="fix a knob for every point")
    sw.add_argument("--config", nargs="+", default=None, metavar="TOML",
                    help="hardware configs: the same sweep on each, side by side (default configs/h100_sxm.toml)")
    sw.add_argument("-o", "--output", default=None, metavar="OUT.parquet", help="write the table (Parquet)")
    sw.add_argument("--figure", default=None, metavar="OUT.png", help="time against each knob, or a heatmap of two")
    sw.add_argument("--workers", type=int, default=None, help="local worker processes (default: one per core)")
    sw.add_argument("--scheduler", default=None, metavar="ADDRESS",
                    help="run on the Dask cluster at ADDRESS, e.g. tcp://host:8786 (pip install 'gpusim[cluster]')")
    sw.add_argument("--max-points", type=int, default=None, metavar="N",
                    help="refuse a grid larger than N points (default 10,000)")
    sw.add_argument("--no-cache", action="store_true",
                    help="compute every point (default: reuse results cached in ~/.cache/gpusim/sweep or "
                         "$GPUSIM_CACHE_DIR)")
    sw.set_defaults(fn=cmd_sweep)
    sa = sub.add_parser("sass", help="compile a .cu file (or read a cubin or a cuobjdump -sass listing) and count its "
                                     "SASS instructions per loop body")
    sa.add_argument("file", help="CUDA source (.cu), cubin (.cubin) or SASS listing (.sass)")
    sa.add_argument("--arch", default="sm_90a", help="target architecture (default sm_90a)")
    sa.add_argument("--kernel", default=None, help="only this kernel (function name)")
    sa.add_argument("-D", action="append", metavar="MACRO[=VALUE]", help="preprocessor definition for nvcc")
    sa.add_argument("--listing", action="store_true",
                    help="also print the SASS, one instruction per line, loop bodies marked (no cuobjdump on PATH "
                         "needed)")
    sa.add_argument("--skeleton", default=None, metavar="OUT.py", help="write a starting kernel file")
    sa.set_defaults(fn=cmd_sass)
    return p


@contextlib.contextmanager
def _writing(flag: str, path: str):
    """Yields the path to write for ``path``: a temporary file that replaces it once complete (a full disk or an
    interrupt leaves what was there); names the output path when writing fails (a full disk, /dev/full)."""
    from gpusim.inputs import atomic_output

    try:
        with atomic_output(path) as out:
            yield out
    except OSError as e:
        raise UserError(f"{flag} {path!r}: cannot write: {e.strerror or e}") from None


def _negative_shapes(argv: list[str]) -> list[str]:
    """``--shape -1,4,4`` as ``--shape=-1,4,4``: argparse takes a value starting with '-' for an option, and
    the shape's own check then says what is wrong with it."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] == "--shape" and i + 1 < len(argv) and argv[i + 1][:1] == "-" and argv[i + 1][1:2].isdigit():
            out.append(f"--shape={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def _one_line(message: str) -> str:
    """Every error is one line, whatever a message quotes (a user's exception text, a file's content)."""
    return message.replace("\r", "\\r").replace("\n", "\\n")


def _sass_error():
    from gpusim.sass import SassError

    return SassError


def _validation_error():
    from gpusim.validation import ValidationError

    return ValidationError


def main(argv: list[str] | None = None) -> int:
    if hasattr(sys.stdout, "reconfigure"):  # a name the terminal cannot encode is escaped, not a traceback
        sys.stdout.reconfigure(errors="backslashreplace")
    args = sys.argv[1:] if argv is None else argv
    if not args:  # `gpusim` alone: what it can do
        build_parser().print_help()
        return 0
    _ARGV[:] = args
    try:
        a = build_parser().parse_args(_negative_shapes(args))
        if isinstance(getattr(a, "config", None), list):
            a.config = [resolve_config(c) for c in a.config]
        elif hasattr(a, "config"):
            a.config = resolve_config(a.config)
        from gpusim import loader

        loader.load(getattr(a, "kernels", None) or ())
        if getattr(a, "family", None) is not None:
            from gpusim.ir import REGISTRY

            fams = sorted({d.family for d in REGISTRY.values()})
            if a.family not in fams:
                raise UserError(f"--family {a.family!r}: known families are {', '.join(fams)}")
        return a.fn(a)
    except KeyboardInterrupt:
        print("gpusim: interrupted", file=sys.stderr)
        return 130
    except UserError as e:
        print(f"gpusim: error: {_one_line(str(e))}", file=sys.stderr)
        return 2
    except (*USER_ERRORS, _validation_error(), _sass_error()) as e:
        print(f"gpusim: error: {_one_line(str(e))}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into e.g. `head`, which closed early: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        where = f"{e.filename!r}: " if e.filename is not None else ""
        print(f"gpusim: error: {_one_line(where + str(e.strerror or e))}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
