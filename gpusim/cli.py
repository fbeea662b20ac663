"""Command line: ``gpusim run | list | ladder | trace | validate | sweep | sass``."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time

from gpusim.config import ConfigError
from gpusim.ir import KernelError
from gpusim.sm.occupancy import LaunchError

DEFAULT_SHAPES = {"sgemm": "4096,4096,4096", "hgemm": "4096,4096,4096", "attention": "4,16,4096,128"}
# extra rows a family's ladder shows: (label suffix, overrides) per kernel
LADDER_VARIANTS = {"attention": (("", {}), (" causal", {"causal": "1"}))}
USER_ERRORS = (ConfigError, KernelError, LaunchError)


class UserError(Exception):
    """Bad command-line input (one line, exit status 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse's convention), no usage dump
        raise UserError(f"{message} ({self.prog})")


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


def cmd_run(a) -> int:
    from gpusim.api import predict

    m, sim = predict(a.kernel, _shape(a.shape), _sets(a.set), a.config)
    _check_sass(a.kernel, sim.kernel)
    m = {"gpusim__kernel": a.kernel, "gpusim__shape": list(sim.kernel.shape), **m}
    if a.json:
        print(json.dumps(m, indent=1, sort_keys=False))
        return 0
    print(f"{a.kernel} {sim.kernel.shape} on {sim.config.name}, SM clock "
          f"{m['sm__cycles_elapsed.avg.per_second'] / 1e6:,.0f} MHz")
    print(f"  {m['gpu__time_duration.sum'] / 1e6:.3f} ms, {_rate(m, sim.kernel)}; {m['gpusim__verdict']}")
    width = max(len(k) for k in m)
    for k, v in m.items():
        if k.startswith("smsp__average_warps_issue_stalled") or k == "gpusim__utilization_pct":
            continue
        print(f"  {k:<{width}}  {_fmt(v)}")
    print("  stall breakdown (warps per issue):")
    stalls = sorted(((v, k) for k, v in m.items() if k.startswith("smsp__average_warps_issue_stalled")),
                    reverse=True)
    for v, k in stalls:
        print(f"    {k:<{width}}  {v:.3f}")
    print("  utilization: " + ", ".join(f"{k} {v:.0f}%" for k, v in m["gpusim__utilization_pct"].items()))
    return 0


def dram_gbytes_per_s(m: dict) -> float:
    """DRAM bytes (read + written) over the kernel's time, in GB/s."""
    t = m["gpu__time_duration.sum"]
    return (m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]) / t if t else 0.0


def _rate(m: dict, kernel) -> str:
    """The headline rate: FLOP/s for a kernel that declares its FLOPs, DRAM bytes/s for one that does not."""
    if kernel.flops:
        return f"{m['gpusim__gflops']:,.0f} GFLOP/s"
    return f"{dram_gbytes_per_s(m):,.0f} GB/s DRAM"


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


def cmd_list(a) -> int:
    from gpusim.ir import REGISTRY

    for kd in sorted(REGISTRY.values(), key=lambda d: (d.family, list(REGISTRY).index(d.name))):
        params = ", ".join(f"{k}={v}" for k, v in kd.defaults.items()) or "-"
        print(f"{kd.name:<26} {kd.family:<9} shape {','.join(kd.shape_names):<8} params: {params}")
        if kd.doc:
            print(f"{'':<26} {kd.doc}")
        print(f"{'':<26} from {kd.origin}")
    return 0


def ladder_rows(family: str, shape, config, progress=None, workers: int | None = None,
                kernel_paths: tuple[str, ...] = ()) -> list[tuple[str, dict]]:
    """Predict every kernel of ``family`` (its variants too): (label, metrics) in ladder order. The kernels are
    independent, so they run on ``workers`` processes (default: one per core; 1: in this process); the rows are
    the same whatever the number."""
    from gpusim.api import predict_many
    from gpusim.ir import REGISTRY

    cases = [(n + label, n, o) for n, d in REGISTRY.items() if d.family == family
             for label, o in LADDER_VARIANTS.get(family, (("", {}),))]
    if progress:
        progress(0, len(cases), "")
    results = predict_many([(name, shape, overrides or None) for _, name, overrides in cases], config, workers,
                           kernel_paths, progress)
    for r in results:
        if isinstance(r, Exception):
            raise r
    return [(label, m) for (label, _, _), m in zip(cases, results, strict=True)]


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
    rows = ladder_rows(a.family, shape, a.config, _progress, a.workers, tuple(a.kernels or ()))
    if a.json:
        print(json.dumps(dict(rows), indent=1))
        return 0
    has = _contents(a.family, shape)
    rate = (("GFLOP/s", lambda m: f"{m['gpusim__gflops']:.0f}") if has["flops"] and not has["tensor"] else
            ("TFLOP/s", lambda m: f"{m['gpusim__tflops']:.0f}") if has["flops"] else
            ("DRAM GB/s", lambda m: f"{dram_gbytes_per_s(m):.0f}"))
    cols = [("time ms", lambda m: f"{m['gpu__time_duration.sum'] / 1e6:.3f}"), rate,
            ("DRAM rd MB", lambda m: f"{m['dram__bytes_read.sum'] / 1e6:.0f}"),
            ("L2 hit%", lambda m: f"{m['lts__t_sector_hit_rate.pct']:.1f}"),
            ("L1 hit%", lambda m: f"{m['l1tex__t_sector_hit_rate.pct']:.1f}"),
            ("sect/req", lambda m: _ratio(m, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                                          "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")),
            ("lds confl", lambda m: f"{m['l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum']:.3g}"),
            ("sts confl", lambda m: f"{m['l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum']:.3g}"),
            ("ldsm confl", lambda m: f"{m['sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum']:.3g}"),
            ("tensor%", lambda m: f"{m['gpusim__utilization_pct'].get('tensor peak', 0):.0f}"),
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
    table = [["kernel"] + [c for c, _ in cols]] + [[n] + [f(m) for _, f in cols] for n, m in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    print(f"{a.family} ladder at {','.join(map(str, shape))}")
    for k, r in enumerate(table):
        cells = zip(r, widths, strict=True)
        print("  ".join(c.ljust(w) if i in (0, len(r) - 1) else c.rjust(w) for i, (c, w) in enumerate(cells)))
        if k == 0:
            print("  ".join("-" * w for w in widths))
    print()
    for name, m in rows:
        print(f"{name:<26} {m['gpusim__verdict']}")
    if any(m["gpusim__fast_forward"] for _, m in rows):
        print("\n(steady-state fast-forward used: loop iterations and CTA waves beyond the simulated window "
              "are extrapolated)")
    print(f"simulated in {time.perf_counter() - t0:.2f} s", file=sys.stderr)
    return 0


def _contents(family: str, shape) -> dict[str, bool]:
    """What the family's kernels contain (at their default parameters): the ladder shows the columns that
    matter for them."""
    from gpusim.ir import REGISTRY, Compute, Mem, build_kernel

    has = dict.fromkeys(("flops", "global_ld", "lds", "sts", "ldsm", "tensor"), False)
    for name, kd in REGISTRY.items():
        if kd.family != family:
            continue
        k = build_kernel(name, shape)
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


def cmd_trace(a) -> int:
    from gpusim.api import predict
    from gpusim.trace import write_trace

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
    if a.report or a.figure:
        print("wrote " + " and ".join(x for x in (a.report, a.figure) if x))
    if a.check:
        bad = v.check(summary, v.load_tolerances())
        for line in bad:
            print(f"gpusim: accuracy regression: {line}", file=sys.stderr)
        return 1 if bad else 0
    return 0


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


def cmd_sass(a) -> int:
    from pathlib import Path

    from gpusim import sass

    cu = Path(a.file)
    _output("--skeleton", a.skeleton)
    if a.skeleton is not None and Path(a.skeleton).suffix != ".py":
        raise UserError(f"--skeleton {a.skeleton!r}: expected a .py file")
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

    def kernels(sp):
        sp.add_argument("--kernels", action="append", metavar="PATH",
                        help="load kernels from a .py file or a folder of them (repeatable; also GPUSIM_KERNELS)")

    def common(sp, shape_required=True):
        kernels(sp)
        sp.add_argument("--shape", required=shape_required, help="problem shape, e.g. 4096,4096,4096 (M,N,K)")
        sp.add_argument("--config", default=None, help="hardware config TOML (default configs/h100_sxm.toml)")

    r = sub.add_parser("run", help="predict one kernel")
    r.add_argument("kernel")
    common(r)
    r.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a kernel parameter")
    r.add_argument("--json", action="store_true", help="one JSON object keyed by ncu metric names")
    r.set_defaults(fn=cmd_run)
    lst = sub.add_parser("list", help="list the registered kernels and their parameters")
    kernels(lst)
    lst.set_defaults(fn=cmd_list)
    lad = sub.add_parser("ladder", help="predict a whole ladder as a table")
    common(lad, shape_required=False)
    lad.add_argument("--family", default="sgemm", help="sgemm (default), hgemm or attention")
    lad.add_argument("--json", action="store_true")
    lad.add_argument("--workers", type=int, default=None,
                     help="processes the kernels run on (default: one per core; the table is the same)")
    lad.set_defaults(fn=cmd_ladder)
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
    val.add_argument("--config", default=None)
    val.add_argument("--workers", type=int, default=None,
                     help="processes the rows are predicted on (default: one per core; the report is the same)")
    kernels(val)
    val.add_argument("--report", default=None, help="write a markdown report here")
    val.add_argument("--figure", default=None, help="write a predicted-vs-measured PNG here")
    val.add_argument("--check", action="store_true", help="exit 1 if validate/tolerances.toml is exceeded")
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
    sa = sub.add_parser("sass", help="compile a .cu file and count its SASS instructions per loop body")
    sa.add_argument("file", help="CUDA source (.cu)")
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
    try:
        a = build_parser().parse_args(_negative_shapes(sys.argv[1:] if argv is None else argv))
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
