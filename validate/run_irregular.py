"""Measure the irregular twins (CSR SpMV, histograms, block scans, a 5-point stencil) and the atomics micro-benchmarks
on the H100: correctness, time, ncu counters.

    python3 validate/run_irregular.py --out $OUT/irregular-2026-11-27.json
    python3 validate/run_irregular.py --only histogram,histogram_aggregated --skip-micro --out ...

Every case is launched as ``validate/launches.py`` says (``irregular_launch``: grid, block and the ``--arg`` texts that
``gpusim run`` takes), and its tensors are built from those texts: contents given by formula (``arange(step)``,
``mulmod(a,m)``, ``divmod(d,a,b,c,m)``, ``const(v)``, ``zeros``) are computed as gpusim's front-end computes them, and
``randint`` pages are drawn from the same generator seeded by (seed 0, tensor, page), so the addresses measured are
the addresses gpusim emulates; float contents (``uniform``, or none given) come from CuPy's generator (no address
depends on them). Per case: the output poisoned (NaN for floats; the histogram zeroed, it accumulates), two checks
against a reference computed on the device in float64 / exactly, then 30 launches between CUDA events, each after the
L2 was flushed by writing a 256 MiB scratch buffer and reading another (cold, clean L2), median; then one launch per
case in a child process of this script under ncu (--clock-control none, the ladder's metrics, every stall reason and
the atomics' counters). ``validate/micro/run_atomics.py`` measures the atomics into the ``micro`` section, with its
own ncu child run. Writes schema 1 (``gpusim validate`` reads the ``kernels``), rewritten after every step; a case
that raises goes to ``failed``, not ``kernels``. ``--budget-s`` bounds the whole run: an ncu pass that would not fit
is skipped (noted).
"""

from __future__ import annotations

import argparse
import functools
import math
import re
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "validate" / "micro"))
sys.path.insert(0, str(REPO / "validate"))

import common  # noqa: E402
import launches  # noqa: E402

NNZ = 16  # entries per CSR row
CASES: list[tuple[str, tuple[int, ...], dict[str, str]]] = [
    # x fits in L2 (1 MiB) / does not (64 MiB); 35 MB / 608 MB in all
    ("spmv_csr", (1 << 18, 1 << 18, NNZ), {"cols": "scattered"}),
    ("spmv_csr", (1 << 22, 1 << 24, NNZ), {"cols": "scattered"}),
    ("spmv_csr", (1 << 18, 1 << 18, NNZ), {"cols": "banded"}),
    ("spmv_csr", (1 << 22, 1 << 22, NNZ), {"cols": "banded"}),
    # 32 MiB / 256 MiB of input
    *[(k, (n,), {"bins": b}) for k in ("histogram", "histogram_aggregated") for b in ("uniform", "one")
      for n in (8 << 20, 64 << 20)],
    # 16 + 16 MiB / 256 + 256 MiB
    *[(k, (n,), {}) for k in ("block_scan", "block_scan_padded") for n in (4 << 20, 64 << 20)],
    # 2000^2: partial edge tiles, 16 + 16 MB; 8192^2: 256 + 256 MiB
    *[("stencil5", (n,), {}) for n in (2000, 8192)],
]
OUTPUT = {"spmv_csr": "y", "histogram": "hist", "histogram_aggregated": "hist", "block_scan": "out",
          "block_scan_padded": "out", "stencil5": "out"}
ACCUMULATES = ("histogram", "histogram_aggregated")  # the output is added to: zeroed, not poisoned
REL_TOL = {"spmv_csr": 1e-5, "block_scan": 1e-5, "block_scan_padded": 1e-5, "stencil5": 1e-6}
TIMED = 30
FLUSH_BYTES = 256 << 20
SEED = 0  # gpusim run's default --seed
PAGE_BYTES = 1 << 14  # gpusim.frontend.memory.PAGE_BYTES: the unit its generators seed
DTYPES = {"f32": "float32", "i32": "int32", "u32": "uint32", "f64": "float64", "i64": "int64", "u64": "uint64"}
_TENSOR = re.compile(r"^(?P<dtype>[a-z0-9]+)\[(?P<size>[0-9*]+)\](?::(?P<dist>[a-z]+)(?:\((?P<args>[^)]*)\))?)?$")
ATOMIC_METRICS = [
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum", "smsp__inst_executed_op_shared_atom.sum",
    "smsp__inst_executed_op_global_red.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum", "lts__t_requests_op_red.sum", "lts__t_sectors_op_red.sum",
    "lts__t_requests_op_atom.sum", "lts__t_sectors_op_atom.sum",
]


# ------------------------------------------------------------------------------------------------ arguments
def parse_args_text(texts: tuple[str, ...]) -> list[tuple[str, Any]]:
    """``NAME=VALUE`` texts (gpusim's --arg syntax, the subset the irregular twins use): (name, spec) in order, spec
    an int (a scalar) or (dtype, elements, distribution, its arguments)."""
    out = []
    for t in texts:
        name, value = t.split("=", 1)
        m = _TENSOR.match(value)
        if m is None:
            out.append((name, int(value, 0)))
            continue
        n = math.prod(int(f) for f in m.group("size").split("*"))
        args = tuple(int(a, 0) if re.fullmatch(r"-?\d+", a.strip()) else float(a)
                     for a in (m.group("args") or "").split(",") if a.strip())
        out.append((name, (m.group("dtype"), n, m.group("dist") or "", args)))
    return out


@functools.lru_cache(maxsize=2)  # the two histograms of a size share their input
def randint_pages(lo: int, hi: int, dtype: str, n: int, tensor: int, seed: int = SEED) -> Any:
    """``randint(lo, hi)`` contents as gpusim's front-end draws them (gpusim.frontend.memory.generated): each page of
    PAGE_BYTES from numpy's default_rng([seed, tensor, page]). Read-only (cached)."""
    import numpy as np

    per = PAGE_BYTES // np.dtype(DTYPES[dtype]).itemsize
    pages = -(-n // per)
    out = np.empty(pages * per, dtype=DTYPES[dtype])
    for p in range(pages):
        out[p * per:(p + 1) * per] = np.random.default_rng([seed, tensor, p]).integers(int(lo), int(hi), per)
    out = out[:n]
    out.flags.writeable = False
    return out


def contents(xp: Any, dtype: str, n: int, dist: str, args: tuple, tensor: int) -> Any:
    """A tensor's contents on ``xp`` (NumPy or CuPy). Formula contents as gpusim computes them; ``uniform`` and
    ``normal`` from xp's own generator; no contents: random floats in [-1, 1) or integer zeros (gpusim's defaults)."""
    dt = DTYPES[dtype]
    if dist == "randint":
        return xp.asarray(randint_pages(args[0], args[1], dtype, n, tensor))
    if dist == "arange":  # start + i * step: arange, arange(step), arange(step, start)
        step, start = tuple(args[:2]) + (1, 0)[len(args[:2]):]
        return (start + xp.arange(n, dtype=xp.float64) * step).astype(dt)
    if dist == "mulmod":  # (i * a) mod m in 64-bit unsigned arithmetic
        a, m = (int(v) for v in args)
        return ((xp.arange(n, dtype=xp.uint64) * xp.uint64(a % (1 << 64))) % xp.uint64(m)).astype(dt)
    if dist == "divmod":  # ((i div d) * a + (i mod d) * b + c) mod m, in [0, m)
        d, a, b, c, m = (int(v) for v in args)
        i = xp.arange(n, dtype=xp.int64)
        return (((i // d) * a + (i % d) * b + c) % m).astype(dt)
    if dist in ("const", "zeros", "ones"):
        v = args[0] if dist == "const" else (1 if dist == "ones" else 0)
        return xp.full(n, v, dtype=dt)
    if dist in ("uniform", "") and dt.startswith("float"):
        lo, hi = args if args else (-1.0, 1.0)
        return xp.random.uniform(lo, hi, n).astype(dt)
    if dist == "normal":
        mu, sigma = args if args else (0.0, 1.0)
        return xp.random.normal(mu, sigma, n).astype(dt)
    if dist == "":
        return xp.zeros(n, dtype=dt)
    raise ValueError(f"contents {dist!r} not known to run_irregular.py")


def poison(xp: Any, arr: Any) -> None:
    arr.fill(xp.nan if arr.dtype.kind == "f" else 0xFFFFFFFF if arr.dtype.itemsize == 4 else -1)


# ------------------------------------------------------------------------------------------------ references
def ref_spmv(xp: Any, row_ptr: Any, col: Any, val: Any, x: Any) -> tuple[Any, Any]:
    """(y in float64, the scale of each row's rounding: the sum of |val * x| over the row)."""
    prod = val.astype(xp.float64) * x.astype(xp.float64)[col]
    zero = xp.zeros(1, dtype=xp.float64)
    cs = xp.concatenate([zero, xp.cumsum(prod)])
    ca = xp.concatenate([zero, xp.cumsum(xp.abs(prod))])
    lo, hi = row_ptr[:-1], row_ptr[1:]
    scale = ca[hi] - ca[lo] + 1e-12 * (1.0 + float(xp.abs(cs).max()))  # the cumsum's own rounding
    return cs[hi] - cs[lo], scale


def ref_histogram(xp: Any, values: Any, bins: int = 256) -> Any:
    return xp.bincount(values, minlength=bins)


def ref_scan(xp: Any, values: Any, segment: int = launches.SCAN_SEGMENT) -> tuple[Any, Any]:
    v = values.reshape(-1, segment).astype(xp.float64)
    return xp.cumsum(v, axis=1).reshape(-1), xp.cumsum(xp.abs(v), axis=1).reshape(-1) + 1e-30


def ref_stencil(xp: Any, values: Any, n: int) -> tuple[Any, Any]:
    a = values.reshape(n, n).astype(xp.float64)
    out, scale = a.copy(), xp.abs(a) + 1e-30
    if n > 2:
        c = (slice(1, -1), slice(1, -1))
        nb = (a[1:-1, :-2], a[1:-1, 2:], a[:-2, 1:-1], a[2:, 1:-1])
        out[c] = 0.5 * a[c] + 0.125 * (nb[0] + nb[1] + nb[2] + nb[3])
        scale[c] = 0.5 * xp.abs(a[c]) + 0.125 * sum(xp.abs(b) for b in nb) + 1e-30
    return out.reshape(-1), scale.reshape(-1)


def reference(xp: Any, kernel: str, shape: tuple[int, ...], arrays: dict[str, Any]) -> tuple[Any, Any | None]:
    """(expected output, per-element rounding scale, or None for an exact comparison)."""
    if kernel == "spmv_csr":
        return ref_spmv(xp, arrays["row_ptr"], arrays["col"], arrays["val"], arrays["x"])
    if kernel in ACCUMULATES:
        return ref_histogram(xp, arrays["in"]), None
    if kernel in ("block_scan", "block_scan_padded"):
        return ref_scan(xp, arrays["in"])
    return ref_stencil(xp, arrays["in"], shape[0])


def compare(xp: Any, got: Any, want: Any, scale: Any | None, tol: float) -> tuple[bool, float]:
    """(within tolerance, worst error relative to the scale; exact comparisons report 0 or 1)."""
    if scale is None:
        same = bool(xp.array_equal(got.astype(xp.int64), want.astype(xp.int64)))
        return same, 0.0 if same else 1.0
    err = xp.abs(got.astype(xp.float64) - want) / scale
    worst = float(xp.nan_to_num(err, nan=xp.inf).max())
    return worst <= tol, worst


# ------------------------------------------------------------------------------------------------ one case
class Case:
    """One measured launch: its arrays on the device, launch(), check() and the JSON entry's static fields."""

    def __init__(self, cp: Any, np: Any, kern: Any, kernel: str, shape: tuple[int, ...], params: dict[str, str],
                 with_reference: bool = True) -> None:
        self.cp, self.np, self.kern, self.kernel, self.shape = cp, np, kern, kernel, tuple(shape)
        self.launch_spec = launches.launch_of(kernel, self.shape, params)
        specs = parse_args_text(self.launch_spec.args)
        self.arrays: dict[str, Any] = {}
        self.contents_source: dict[str, str] = {}
        argv = []
        tensor = 0
        for name, spec in specs:
            if isinstance(spec, int):
                argv.append(np.int32(spec))
                continue
            dtype, n, dist, args = spec
            self.arrays[name] = contents(cp, dtype, n, dist, args, tensor)
            self.contents_source[name] = ("cupy random" if dist in ("uniform", "normal", "") and
                                          DTYPES[dtype].startswith("float") else "as gpusim generates it")
            argv.append(self.arrays[name])
            tensor += 1
        self.out = self.arrays[OUTPUT[kernel]]
        self.contents_source[OUTPUT[kernel]] = "output (zeroed)" if kernel in ACCUMULATES else "output (poisoned)"
        self.argv = tuple(argv)
        self.want, self.scale = reference(cp, kernel, self.shape, self.arrays) if with_reference else (None, None)

    def launch(self) -> None:
        self.kern(self.launch_spec.grid, self.launch_spec.block, self.argv)

    def check(self) -> tuple[bool, float]:
        if self.kernel in ACCUMULATES:
            self.out.fill(0)
        else:
            poison(self.cp, self.out)
        self.launch()
        self.cp.cuda.runtime.deviceSynchronize()
        return compare(self.cp, self.out, self.want, self.scale, REL_TOL.get(self.kernel, 0.0))

    def entry(self, params: dict[str, str]) -> dict[str, Any]:
        ls = self.launch_spec
        return {"kernel": self.kernel, "shape": list(self.shape), "params": dict(params),
                "twin": f"validate/kernels/{self.kernel}.cu", "grid": list(ls.grid), "block": list(ls.block),
                "args": list(ls.args), "contents": self.contents_source}


def build(cp: Any, names: set[str]) -> dict[str, Any]:
    out = {}
    for name in sorted(names):
        mod = cp.RawModule(code=(REPO / "validate" / "kernels" / f"{name}.cu").read_text(), options=("-std=c++17",))
        out[name] = mod.get_function(name)
    return out


def measure_case(cp: Any, np: Any, kern: Any, kernel: str, shape: tuple[int, ...], params: dict[str, str],
                 flush: tuple[Any, Any]) -> dict[str, Any]:
    """One case's entry: checks, then TIMED launches each after an L2 flush."""
    case = Case(cp, np, kern, kernel, shape, params)
    e = case.entry(params)
    e["registers_per_thread"] = int(kern.attributes["num_regs"])
    if kern.attributes.get("shared_size_bytes") is not None:
        e["static_smem_bytes"] = int(kern.attributes["shared_size_bytes"])
    ok1, err1 = case.check()
    ok2, err2 = case.check()
    e["correct"] = ok1 and ok2
    e["max_rel_err"] = max(err1, err2)
    scratch, clean = flush
    ts = []
    for _ in range(TIMED):
        scratch.fill(1.0)  # evict the case's data ...
        cp.sum(clean)  # ... and leave clean lines, so no write-back of the flush lands in the kernel
        s, f = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        case.launch()
        f.record()
        f.synchronize()
        ts.append(cp.cuda.get_elapsed_time(s, f) * 1e6)
    e["time_ns"] = common.summarize(ts)
    return e


# ------------------------------------------------------------------------------------------------ ncu
def ncu_twins_child(indices: list[int]) -> None:
    """One launch of each case CASES[i], in order."""
    import cupy as cp
    import numpy as np

    kerns = build(cp, {CASES[i][0] for i in indices})
    for i in indices:
        kernel, shape, params = CASES[i]
        case = Case(cp, np, kerns[kernel], kernel, shape, params, with_reference=False)
        if kernel in ACCUMULATES:
            case.out.fill(0)
        cp.cuda.runtime.deviceSynchronize()
        case.launch()
        cp.cuda.runtime.deviceSynchronize()
        del case
        cp.get_default_memory_pool().free_all_blocks()


def finite_values(row: dict[str, Any] | None, metrics: list[str]) -> dict[str, float]:
    """ncu's numeric values (the schema wants finite numbers; ncu writes 'n/a' for some)."""
    return {m: v for m, v in common.metric_values(row, metrics).items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}


def twin_metrics(avail: set[str]) -> tuple[list[str], list[str]]:
    import run_h100

    wanted = list(dict.fromkeys(list(run_h100.LADDER_METRICS) + common.stall_metrics(avail) + ATOMIC_METRICS))
    return common.split_available(wanted, avail)


# ------------------------------------------------------------------------------------------------ main
def print_table(data: dict[str, Any]) -> None:
    print(f"{'kernel':21s} {'shape':>21s} {'variant':9s} {'ok':5s} {'median us':>10s} {'DRAM rd MB':>10s} "
          f"{'DRAM wr MB':>10s} {'L2 hit':>6s} {'ATOMS wavefr.':>13s} {'L2 RED req':>10s}")
    for e in data["kernels"]:
        nc = e.get("ncu", {})
        cells = [f"{nc[k] / 1e6:10.1f}" if k in nc else f"{'-':>10s}"
                 for k in ("dram__bytes_read.sum", "dram__bytes_write.sum")]
        cells += [f"{nc[k]:{w}.{p}f}" if k in nc else f"{'-':>{w}s}"
                  for k, w, p in (("lts__t_sector_hit_rate.pct", 6, 1),
                                  ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum", 13, 0),
                                  ("lts__t_requests_op_red.sum", 10, 0))]
        variant = str(e["params"].get("cols") or e["params"].get("bins") or "")
        print(f"{e['kernel']:21s} {'x'.join(map(str, e['shape'])):>21s} {variant:9s} {str(e.get('correct')):5s} "
              f"{e['time_ns']['median'] / 1e3:10.1f} " + " ".join(cells))
    for f in data.get("failed", []):
        print(f"FAILED {f['kernel']} {f['shape']} {f['params']}: {f['error'].strip().splitlines()[-1][:120]}")
    micro = data.get("micro") or {}
    rows = (micro.get("shared") or {}).get("rows", [])
    if rows:
        print("shared, 32 warps per SM: SM cycles per warp instruction for k = 1 2 4 8 16 32 distinct addresses "
              "(stride 1 | stride 32) and 32 lanes at stride 33")
    for kern in sorted({r["kernel"] for r in rows}):
        by = {(r["k"], r["stride_words"]): r for r in rows if r["kernel"] == kern and r["warps_per_sm"] == 32}
        cells = [" ".join(f"{by[k, s]['sm_cycles_per_warp_instr']:.2f}" for k in (1, 2, 4, 8, 16, 32) if (k, s) in by)
                 for s in (1, 32, 33)]
        ok = all(r["total_ok"] for r in by.values())
        print(f"  {kern:13s} {cells[0]} | {cells[1]} | {cells[2]}  total ok {ok}")
    for r in (micro.get("global_red") or {}).get("rows", []):
        print(f"RED {r['case']:15s}: {r['ns_per_warp_instr_chip']:.4f} ns per warp instr (chip), "
              f"{r['thread_ops_per_s'] / 1e9:8.2f} G ops/s, total ok {r['total_ok']}")


def selected(only: str | None) -> list[int]:
    """Indices into CASES of the cases to measure (``--only`` kernel names)."""
    keep = set(only.split(",")) if only else None
    return [i for i, c in enumerate(CASES) if keep is None or c[0] in keep]


def header(cp: Any) -> dict[str, Any]:
    return common.cupy_header(cp, 1) | {
        "how": {"launch": "validate/launches.py irregular_launch: grid, block and the gpusim --arg texts (args); the "
                          "tensors built from those texts (contents: which follow gpusim's own generators)",
                "time": f"CUDA events around one launch after writing one 256 MiB scratch buffer and reading "
                        f"another (cold, clean L2), median of {TIMED}",
                "check": "output poisoned with NaN (histograms: zeroed), compared with a float64 reference on the "
                         "device, the error relative to the sum of the magnitudes rounded (spmv, scan < 1e-5, "
                         "stencil < 1e-6); histograms exactly",
                "ncu": "one launch per case in a child process, --clock-control none; micro: run_atomics.py's "
                       "child run"},
        "kernels": [], "failed": []}


def run_ncu_passes(ncu: str, data: dict[str, Any], measured: list[int], sms: int, out: Path, deadline: float) -> None:
    """The twins' ncu pass (one launch per measured case) and the micro pass, each skipped if the budget is spent."""
    import run_atomics

    data["ncu"] = {"version": common.ncu_version(ncu), "skipped": []}
    avail, _ = common.ncu_available_metrics(ncu)
    work = Path(tempfile.mkdtemp(prefix="gpusim_irr_ncu_"))  # reports (large) stay out of $OUT
    logs = ""
    left = deadline - time.time()
    if measured and left > 60:
        present, missing = twin_metrics(avail)
        child = [*common.python_cmd(), str(Path(__file__).resolve()), "--ncu-child", "twins",
                 "--cases", ",".join(map(str, measured))]
        rows, _, _, dropped, nlog = common.run_ncu(ncu, present, "^(" + "|".join(launches.IRREGULAR) + ")$", child,
                                                   work / "twins", timeout=min(300.0, left - 30))
        logs += nlog
        for e, row in zip(data["kernels"], common.assign_rows(rows, [CASES[i][0] for i in measured]), strict=True):
            e["ncu"] = finite_values(row, present)
        data["ncu"]["missing"] = missing + dropped
        common.write_json(out, data)
    elif measured:
        data["ncu"]["skipped"].append(f"twins: {left:.0f} s left of the budget")
    left = deadline - time.time()
    if "micro" in data and left > 45:
        rows, asked, nlog = run_atomics.profile(ncu, avail, str(Path(__file__).resolve()), ["--ncu-child", "micro"],
                                                work / "micro", min(200.0, left - 15))
        logs += nlog
        run_atomics.attach_ncu(data["micro"], rows, asked, sms)
    elif "micro" in data:
        data["ncu"]["skipped"].append(f"micro: {left:.0f} s left of the budget")
    out.with_name(out.stem + "-ncu-log.txt").write_text(logs[-200000:])
    common.write_json(out, data)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--only", help="comma-separated kernel names: measure only their cases")
    ap.add_argument("--skip-ncu", action="store_true")
    ap.add_argument("--skip-micro", action="store_true")
    ap.add_argument("--budget-s", type=float, default=450.0, help="start no ncu pass that would end past this")
    ap.add_argument("--ncu-child", choices=("twins", "micro"), help=argparse.SUPPRESS)
    ap.add_argument("--cases", help=argparse.SUPPRESS)
    a = ap.parse_args()
    deadline = time.time() + a.budget_s
    if a.ncu_child == "twins":
        ncu_twins_child([int(i) for i in a.cases.split(",")])
        return 0
    import cupy as cp
    import numpy as np

    import run_atomics

    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    if a.ncu_child == "micro":
        run_atomics.ncu_child(cp, np, sms)
        return 0
    if not a.out:
        ap.error("--out is required")
    out = Path(a.out)
    t0 = time.time()
    data = header(cp)
    todo = selected(a.only)
    kerns = build(cp, {CASES[i][0] for i in todo})
    flush = (cp.empty(FLUSH_BYTES // 4, dtype=cp.float32), cp.ones(FLUSH_BYTES // 4, dtype=cp.float32))
    measured = []  # indices of the cases in data["kernels"], in order (the ncu child runs these)
    for i in todo:
        kernel, shape, params = CASES[i]
        try:
            e = measure_case(cp, np, kerns[kernel], kernel, shape, params, flush)
            data["kernels"].append(e)
            measured.append(i)
            common.log(f"{kernel} {shape} {params}: correct={e['correct']} err={e['max_rel_err']:.1e} "
                       f"t={e['time_ns']['median'] / 1e3:.1f} us")
        except Exception:
            data["failed"].append({"kernel": kernel, "shape": list(shape), "params": params,
                                   "error": traceback.format_exc()[-2000:]})
            common.log(f"{kernel} {shape} {params}: FAILED\n{traceback.format_exc()[-600:]}")
        cp.get_default_memory_pool().free_all_blocks()
        common.write_json(out, data)
    flush = None
    cp.get_default_memory_pool().free_all_blocks()
    if not a.skip_micro:
        try:
            data["micro"] = run_atomics.measure(cp, np, sms)
        except Exception:
            data["micro_error"] = traceback.format_exc()[-2000:]
            common.log(f"micro: FAILED\n{traceback.format_exc()[-600:]}")
        common.write_json(out, data)
    ncu = None if a.skip_ncu else common.find_ncu()
    if ncu:
        run_ncu_passes(ncu, data, measured, sms, out, deadline)
    data["wall_s"] = round(time.time() - t0, 1)
    common.write_json(out, data)
    print_table(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
