"""Helpers shared by validate/run_h100.py and validate/micro/run_micro.py.

ncu discovery and metric availability, running a profiled child process under ncu and parsing its raw CSV,
CUDA-event timing, environment facts (versions, clocks). No GPU work happens at import time.
"""

from __future__ import annotations

import csv
import glob
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ID_COLUMNS = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
              "Grid Size", "Device", "CC")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def sh(cmd: Sequence[str] | str, timeout: float = 120.0) -> tuple[int, str]:
    """Run a command, return (returncode, stdout+stderr); never raises."""
    try:
        p = subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=True, text=True, timeout=timeout)
        return p.returncode, (p.stdout or "") + (p.stderr or "")
    except (OSError, subprocess.TimeoutExpired) as e:
        return -1, f"{type(e).__name__}: {e}"


# ------------------------------------------------------------------------------------------------ ncu
def find_ncu() -> str | None:
    cand = [shutil.which("ncu")]
    cand += sorted(glob.glob("/usr/local/cuda*/bin/ncu"))
    cand += sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"), reverse=True)
    for c in cand:
        if c and os.access(c, os.X_OK):
            return c
    return None


def ncu_version(ncu: str) -> str:
    rc, out = sh([ncu, "--version"], timeout=60)
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    return lines[-1] if lines else f"unknown (rc={rc})"


_METRIC_TOKEN = re.compile(r"^[a-z][a-z0-9]*__[A-Za-z0-9_.]+$")


def ncu_available_metrics(ncu: str) -> tuple[set[str], str]:
    """Full metric names ncu reports for the attached GPU (`--query-metrics-mode all`), plus the raw text."""
    rc, out = sh([ncu, "--query-metrics", "--query-metrics-mode", "all"], timeout=180)
    names = {tok for ln in out.splitlines() for tok in ln.split()[:1] if _METRIC_TOKEN.match(tok)}
    return names, out


def split_available(wanted: Sequence[str], available: set[str]) -> tuple[list[str], list[str]]:
    """(present, missing). When the query gave nothing (it failed), everything is tried."""
    if not available:
        return list(wanted), []
    # launch__* values are launch attributes that --query-metrics does not list; ncu still reports them
    ok = [m for m in wanted if m in available or m.split(".")[0] in available or m.startswith("launch__")]
    return ok, [m for m in wanted if m not in ok]


def stall_metrics(available: set[str]) -> list[str]:
    """Every smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio ncu lists, without the
    `_not_issued` twins (they would double the counter passes)."""
    pat = re.compile(r"^smsp__average_warps_issue_stalled_([a-z0-9_]+)_per_issue_active(\.ratio)?$")
    out = set()
    for m in available:
        g = pat.match(m)
        if g and not g.group(1).endswith("_not_issued"):
            out.add(m if m.endswith(".ratio") else m + ".ratio")
    return sorted(out)


def _to_number(s: str) -> Any:
    t = s.strip()
    if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", t):  # thousands separators
        t = t.replace(",", "")
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return float(t)
    except ValueError:
        return t


def parse_ncu_raw_csv(text: str) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Rows of `ncu --import R --csv --page raw --print-units base` (one per profiled launch) and the units."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"ID"')), None)
    if start is None:
        return [], {}
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header = rows[0]
    units: dict[str, str] = {}
    body = rows[1:]
    if body and (not body[0] or body[0][0] == ""):  # the units row has an empty ID
        units = {h: u for h, u in zip(header, body[0], strict=False) if u}
        body = body[1:]
    out = []
    for r in body:
        if len(r) != len(header):
            continue
        out.append({h: (v if h in ID_COLUMNS else _to_number(v)) for h, v in zip(header, r, strict=False)})
    return out, units


def run_ncu(ncu: str, metrics: Sequence[str], kernel_regex: str, child_argv: Sequence[str], report: Path,
            timeout: float, logf: Callable[[str], None] = log) -> tuple[list[dict[str, Any]], dict[str, str],
                                                                         str, list[str], str]:
    """Profile `child_argv` under ncu; returns (rows, units, csv_text, metrics_dropped, ncu_log).

    --clock-control none (the GPU runs at its own clocks, as in the timed runs), kernel replay, caches flushed
    between passes (ncu default), only kernels whose name matches kernel_regex. If ncu rejects a metric name,
    that name is dropped and the run is retried (at most 3 times).
    """
    metrics = list(metrics)
    dropped: list[str] = []
    full_log = ""
    for _attempt in range(4):
        cmd = [ncu, "--clock-control", "none", "--target-processes", "all", "-k", f"regex:{kernel_regex}",
               "--metrics", ",".join(metrics), "-f", "-o", str(report), *child_argv]
        logf("ncu: " + " ".join(cmd[:9]) + f" ... ({len(metrics)} metrics) " + " ".join(child_argv[:3]))
        rc, out = sh(cmd, timeout=timeout)
        full_log += f"$ {' '.join(cmd)}\nrc={rc}\n{out[-6000:]}\n"
        bad = [m for m in metrics if m in out and re.search(r"(?i)(not found|invalid|unknown|failed to find)", out)]
        rep = report.with_suffix(".ncu-rep") if report.suffix != ".ncu-rep" else report
        if rc != 0 and bad and not rep.exists():
            for m in bad:
                metrics.remove(m)
                dropped.append(m)
            continue
        break
    rep = report if str(report).endswith(".ncu-rep") else Path(str(report) + ".ncu-rep")
    if not rep.exists():
        return [], {}, "", dropped, full_log
    rc, text = sh([ncu, "--import", str(rep), "--csv", "--page", "raw", "--print-units", "base"], timeout=600)
    full_log += f"$ ncu --import {rep} --csv --page raw --print-units base\nrc={rc}\n"
    rows, units = parse_ncu_raw_csv(text)
    return rows, units, text, dropped, full_log


def profile_child(ncu: str | None, metrics: Sequence[str], kernel_regex: str, script: str, case: int,
                  extra: Sequence[str], row: dict[str, Any]) -> None:
    """ncu on one child launch (``script --child case *extra``) of a micro-benchmark's case: its metric values into
    ``row["ncu"]`` (with the names ncu dropped, and the log's tail when no row came back). No ncu: nothing."""
    if not ncu:
        return
    import tempfile

    rep = Path(tempfile.mkdtemp(prefix="ncu_case_")) / f"case{case}"
    rows, _units, _text, dropped, logtxt = run_ncu(
        ncu, metrics, kernel_regex, [*python_cmd(), script, "--child", str(case), *extra], rep, 300)
    row["ncu"] = metric_values(rows[0] if rows else None, metrics)
    row["ncu_dropped"] = dropped
    if not rows:
        row["ncu_log_tail"] = logtxt[-2000:]


def assign_rows(rows: list[dict[str, Any]], plan: Sequence[str]) -> list[dict[str, Any] | None]:
    """Match ncu rows to the plan (kernel names in launch order): the i-th row of kernel k is its i-th launch."""
    by_kernel: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(rows, key=lambda r: int(r.get("ID", 0) or 0)):
        name = str(r.get("Kernel Name", "")).split("(")[0].strip()
        by_kernel.setdefault(name, []).append(r)
    seen: dict[str, int] = {}
    out: list[dict[str, Any] | None] = []
    for k in plan:
        i = seen.get(k, 0)
        seen[k] = i + 1
        lst = by_kernel.get(k, [])
        out.append(lst[i] if i < len(lst) else None)
    return out


def metric_values(row: dict[str, Any] | None, metrics: Sequence[str]) -> dict[str, Any]:
    if row is None:
        return {}
    return {m: row[m] for m in metrics if m in row}


# ------------------------------------------------------------------------------------------------ timing
def summarize(times_ns: Sequence[float]) -> dict[str, float]:
    return {"median": float(statistics.median(times_ns)), "min": float(min(times_ns)),
            "max": float(max(times_ns)), "n": len(times_ns)}


def time_launches(torch: Any, launch: Callable[[int], None], n: int, spin: Callable[[], None] | None) -> list[float]:
    """Per-launch GPU times (ns) with CUDA events between back-to-back launches on the current stream.

    `spin` (a ~2 ms busy kernel) is queued first so that the host runs ahead of the GPU and the events
    bracket the kernels rather than the host's launch overhead.
    """
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
    if spin is not None:
        spin()
    ev[0].record()
    for i in range(n):
        launch(i)
        ev[i + 1].record()
    torch.cuda.synchronize()
    return [ev[i].elapsed_time(ev[i + 1]) * 1e6 for i in range(n)]


# ------------------------------------------------------------------------------------------------ env
def nvidia_smi() -> dict[str, str]:
    fields = "name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power.limit," \
             "temperature.gpu,pstate,clocks_throttle_reasons.active"
    rc, out = sh(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader"], timeout=30)
    if rc != 0:
        return {"error": out.strip()[:300]}
    vals = [v.strip() for v in out.strip().splitlines()[0].split(",")]
    return dict(zip(fields.split(","), vals, strict=False))


def nvcc_version() -> str:
    nvcc = shutil.which("nvcc") or next(iter(sorted(glob.glob("/usr/local/cuda*/bin/nvcc"))), None)
    if not nvcc:
        return "not found"
    rc, out = sh([nvcc, "--version"], timeout=30)
    lines = [ln for ln in out.splitlines() if "release" in ln]
    return lines[0].strip() if lines else out.strip()[-100:]


def event_times_ns(cp: Any, launch: Callable[[], None], n: int = 5, warmup: bool = True) -> list[float]:
    """``launch()`` once to warm up (unless ``warmup`` is false), then ``n`` times between CUDA events: the elapsed
    nanoseconds of each."""
    if warmup:
        launch()
        cp.cuda.runtime.deviceSynchronize()
    out = []
    for _ in range(n):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        launch()
        e.record()
        e.synchronize()
        out.append(cp.cuda.get_elapsed_time(s, e) * 1e6)
    return out


def cupy_header(cp: Any, schema: Any) -> dict[str, Any]:
    """The head every measurement file starts with: schema, date, the GPU (name, SMs, L2, nvidia-smi's clocks and
    state) and the software (CuPy, CUDA runtime and driver, nvcc, Python)."""
    import platform

    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    return {"schema": schema, "date": time.strftime("%Y-%m-%d"),
            "gpu": {"name": name, "sm_count": props["multiProcessorCount"], "l2_bytes": props["l2CacheSize"],
                    "nvidia_smi": nvidia_smi()},
            "software": {"cupy": cp.__version__, "cuda_runtime": cp.cuda.runtime.runtimeGetVersion(),
                         "driver": cp.cuda.runtime.driverGetVersion(), "nvcc": nvcc_version(),
                         "python": platform.python_version()}}


def micro_start(doc: str | None = None, schema: str = "micro-1",
                results: bool = True) -> tuple[Any, Any, Any, dict[str, Any], int]:
    """The start of a one-kernel micro-benchmark script: its parsed ``--out``, CuPy and NumPy, the measurement file's
    head (:func:`cupy_header` with ``schema``, and an empty ``results`` unless ``results`` is false: files of their
    own schema keep their rows at the top) and the GPU's SM count."""
    import argparse

    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    res = cupy_header(cp, schema) | ({"results": {}} if results else {})
    return a, cp, np, res, res["gpu"]["sm_count"]


def micro_results(name: str) -> tuple[Any, Any, dict[str, Any], int]:
    """CuPy, NumPy, a measurement file's head (:func:`cupy_header`, schema micro-1) with an empty ``results[name]``
    row list, and the GPU's SM count: for scripts that parse their own arguments (see :func:`micro_start`)."""
    import cupy as cp
    import numpy as np

    res = cupy_header(cp, "micro-1") | {"results": {name: {"rows": []}}}
    return cp, np, res, res["gpu"]["sm_count"]


def out_or_child(child: Callable[[], None], doc: str | None = None) -> Any:
    """The arguments of a micro-benchmark whose launches ncu profiles in one child run of the script: --out, and the
    hidden --child, which runs ``child()`` and returns None (the caller returns 0). Otherwise the parsed arguments."""
    import argparse

    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("--out")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child()
        return None
    return a


def child_or_main(doc: str | None, name: str, child: Callable[[int], None]) -> tuple[Any, ...] | None:
    """The arguments of a micro-benchmark whose cases ncu profiles in child runs: --out, --skip-ncu and the hidden
    --child CASE, which runs ``child(CASE)`` and returns None. Otherwise (the parsed arguments, CuPy, NumPy, the
    measurement file's head with an empty ``results[name]`` row list, the SM count, ncu's path or None)."""
    import argparse

    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("--out")
    ap.add_argument("--skip-ncu", action="store_true")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child is not None:
        child(a.child)
        return None
    if not a.out:
        ap.error("--out is required")
    cp, np, res, sms = micro_results(name)
    return a, cp, np, res, sms, None if a.skip_ncu else find_ncu()


def sm_cycles(cp: Any, kernel: Any, sms: int, threads: int, *args: Any) -> Any:
    """One launch of ``kernel``, one CTA of ``threads`` per SM, its arguments ``args`` and then a record array in which
    thread 0 of each CTA puts its clock64 at start and end: each CTA's cycles (a NumPy array, one per SM)."""
    rec = cp.zeros(sms * 2, dtype=cp.int64)
    kernel((sms,), (threads,), (*args, rec))
    cp.cuda.runtime.deviceSynchronize()
    r = rec.get().reshape(-1, 2)
    return r[:, 1] - r[:, 0]


def median_of_launches(np: Any, launch: Callable[[], None], read: Callable[[], Any], runs: int = 5) -> Any:
    """A warm-up launch, then ``runs`` more, each ``launch()`` (synchronised) followed by ``read()`` (a NumPy
    array): their median, element by element."""
    launch()
    return np.median(np.stack([(launch(), read())[1] for _ in range(runs)]), axis=0)


def windowed_runs(launch: Callable[[], Any], nbytes: float, warm: int, runs: int) -> dict[str, Any]:
    """``warm`` + ``runs`` launches of a one-CTA-per-SM kernel whose thread 0 records (clock64 start, end,
    %globaltimer start, end) per CTA (``launch()`` returns that (CTAs, 4) array), moving ``nbytes`` in all: per
    recorded launch the SM clock (median over CTAs), the window (first start to last end), the rate over it (B/ns
    and B per SM cycle), each SM's own duration (min, median, max) and the sum of the SMs' own rates; and the
    medians of those over the launches, with the launches under ``runs``."""
    import numpy as np

    out = []
    for i in range(warm + runs):
        r = launch()
        if i < warm:
            continue
        ns = r[:, 3] - r[:, 2]
        window = float(r[:, 3].max() - r[:, 2].min())
        mhz = float(np.median((r[:, 1] - r[:, 0]) / ns * 1e3))
        out.append({"sm_clock_mhz": mhz, "window_ns": window, "bytes_per_ns": nbytes / window,
                    "bytes_per_sm_cycle": nbytes / window / (mhz / 1e3), "sm_ns_min": float(ns.min()),
                    "sm_ns_median": float(np.median(ns)), "sm_ns_max": float(ns.max()),
                    "sum_of_sm_bytes_per_ns": float((nbytes / len(ns) / ns).sum())})
    return {k: statistics.median(x[k] for x in out) for k in out[0]} | {"runs": out}


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=False, default=str) + "\n")


def python_cmd() -> list[str]:
    return [sys.executable, "-u"]


def warp_clock_rows(cp: Any, np: Any, f: Any, sms: int, sink_per_cta: int, cases: Sequence[tuple[int, int]],
                    iters: int, ops_per_iter: int, check: Callable[[int, int, Any], bool]) -> list[tuple]:
    """Per (warps, ways) of ``cases``: four launches of ``f(ways, iters, warps, cycles, sink)``, one CTA of 1024
    threads per SM, of which ``warps`` warps record their clock64 cycles; the cycles per op (median over the warps,
    ``iters`` x ``ops_per_iter`` ops each, then over the last three launches), the per-launch figures, and whether
    ``check(warps, ways, sink)`` held for every launch (``sink``: a NumPy array, ``sink_per_cta`` words per CTA).
    Returns (warps, ways, cycles per op, per-launch list, ok) tuples."""
    rows = []
    for warps, ways in cases:
        per, ok = [], True
        for _ in range(4):
            cyc = cp.zeros(sms * 32, dtype=cp.int64)
            sink = cp.zeros(sms * sink_per_cta, dtype=cp.uint32)
            f((sms,), (1024,), (np.int32(ways), np.int32(iters), np.int32(warps), cyc, sink))
            cp.cuda.runtime.deviceSynchronize()
            c = cp.asnumpy(cyc).reshape(sms, 32)[:, :warps]
            per.append(float(np.median(c)) / (iters * ops_per_iter))
            ok &= bool(check(warps, ways, cp.asnumpy(sink).reshape(sms, sink_per_cta)))
        rows.append((warps, ways, statistics.median(per[1:]), per, ok))
    return rows
