"""Which Nsight Compute stall reason the H100 charges each kind of asynchronous wait to.

    python3 validate/micro/run_stallmap.py --out validate/measurements/h100/stallmap-2026-11-24.json

validate/micro/stallmap.cu has one kernel per kind of wait (mbarrier try_wait on a TMA bulk copy, with and without
a CTA barrier in the loop; mbarrier try_wait on a thread's arrive; __syncthreads; a named barrier, bar.sync and
bar.arrive; wgmma.wait_group; cp.async.wait_group; a dependent global load; fence.proxy.async) plus a control
(the spinning warp alone). Each runs one CTA of 256 threads per SM (grid = SM count) for about 1 ms, with the
warps named spending nearly all their time in that wait. A first child process (no ncu) builds the kernels
(NVRTC, sm_90a, -I validate/kernels), times each with CUDA events and sets its trips so that it runs ~1 ms; a second
child runs each kernel twice (a short warm-up, then the calibrated launch) under ncu (common.run_ncu:
--clock-control none, kernel replay, -k regex:^wait_) collecting every
smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio ncu lists (common.stall_metrics) plus
instructions, duration, SM clock, issue-active and warps-active per cycle; the last launch of each kernel is kept.
Per kernel the JSON holds every metric and the stall reasons ranked, top first, each with its share of all stall
ratios and its share of warp time (ratio x issue_active / warps_active). Stall ratios are averages over the four
sub-partitions of every SM, so the kernels where warp 0 spins on clock64 (wait_mbar_arrive, wait_syncthreads,
wait_named_barrier*, wait_wgmma_skew) mix the spinner's stalls into the ranking; wait_spin_only gives that
spinner's signature alone. --dry prints the plan and needs neither CuPy nor a GPU.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

SRC = HERE / "stallmap.cu"
INCLUDE = HERE.parent / "kernels"
BLOCK = 256
BUF_BYTES = 1 << 30  # HBM-resident source: 20x the L2
LINE = 128
LCG_A, LCG_C = 1103515245, 12345  # full period mod 2^k (A = 1 mod 4, C odd): the pointer chain visits every line
TARGET_MS = 1.0
WARMUP_REPS = 4
SINK_WORDS = 1024
SINK_FLAG, SINK_NO_SM90A = 1023, 0xBAD090A0
STALL_PREFIX, STALL_SUFFIX = "smsp__average_warps_issue_stalled_", "_per_issue_active.ratio"
EXTRA_METRICS = ["smsp__inst_executed.sum", "gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second",
                 "sm__cycles_elapsed.avg", "smsp__issue_active.avg.per_cycle_active",
                 "smsp__warps_active.avg.per_cycle_active"]

# (kernel, what the waiting warps wait on, which warps wait, estimated SM cycles per trip for the dry plan and the
# calibration's first launch)
KERNELS: list[tuple[str, str, str, int]] = [
    ("wait_mbar_tma", "mbarrier try_wait on a 16 KiB TMA bulk copy from HBM, then __syncwarp + __syncthreads",
     "all 8 (thread 0 issues)", 1300),
    ("wait_mbar_tma_nosync", "mbarrier try_wait on the copy, full/empty mbarriers, no CTA barrier",
     "all 8 on full; thread 0 also on empty", 1300),
    ("wait_mbar_arrive", "mbarrier try_wait on warp 0's arrive (after a 2000-cycle spin)", "warps 1-7", 2100),
    ("wait_syncthreads", "__syncthreads (bar.sync 0) waiting for warp 0's 2000-cycle spin", "warps 1-7", 2050),
    ("wait_named_barrier", "bar.sync 1, 256 waiting for warp 0's 2000-cycle spin", "warps 1-7", 2050),
    ("wait_named_barrier_arrive", "bar.sync 1, 256 waiting for warp 0's bar.arrive after its spin", "warps 1-7",
     2050),
    ("wait_wgmma", "wgmma.wait_group 0 after 4 x wgmma m64n256k16 bf16", "warps 0-3 (warps 4-7 exit)", 700),
    ("wait_wgmma_skew", "the same, warp 0 spinning 1000 cycles before each batch", "warps 1-3 (warp 0 spins)",
     1700),
    ("wait_cp_async", "cp.async.wait_group 0 on a 16-B cp.async.cg from HBM", "all 8", 800),
    ("wait_global_load", "dependent ld.global.u64 pointer chase through HBM", "all 8", 700),
    ("wait_fence_proxy", "fence.proxy.async.shared::cta after st.shared", "all 8", 50),
    ("wait_spin_only", "control: warp 0 spins on clock64 (the SPIN loop), warps 1-7 exit", "none", 2000),
]
NAMES = [k[0] for k in KERNELS]


def reason_of(metric: str) -> str | None:
    if metric.startswith(STALL_PREFIX) and metric.endswith(STALL_SUFFIX):
        return metric[len(STALL_PREFIX):-len(STALL_SUFFIX)]
    return None


# ------------------------------------------------------------------------------------------------ child
def build(cp: Any) -> tuple[Any, str]:
    """stallmap.cu for sm_90a: NVRTC through CuPy, else nvcc -cubin."""
    code = SRC.read_text()
    try:
        mod = cp.RawModule(code=code, options=("-std=c++17", "-arch=sm_90a", f"-I{INCLUDE}"))
        for n in NAMES:
            mod.get_function(n)
        return mod, "cupy RawModule (NVRTC) -std=c++17 -arch=sm_90a -I validate/kernels"
    except Exception as e:  # noqa: BLE001 - try nvcc next
        common.log(f"NVRTC build failed ({type(e).__name__}: {str(e)[-300:]}); trying nvcc")
    cubin = Path(tempfile.mkdtemp()) / "stallmap.cubin"
    cmd = ["nvcc", "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a", f"-I{INCLUDE}", "-cubin", "-o",
           str(cubin), str(SRC)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-2000:])
    return cp.RawModule(path=str(cubin)), " ".join(cmd[:-3])


def setup(cp: Any) -> tuple[Any, Any, Any, int, str]:
    """(module, 1 GiB source, sink, SM count, build route). The source's line i holds at its first 8 bytes the
    byte offset of line (A i + C) mod lines (the pointer chain of wait_global_load)."""
    mod, how = build(cp)
    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    src = cp.zeros(BUF_BYTES, dtype=cp.uint8)
    lines = BUF_BYTES // LINE
    idx = cp.arange(lines, dtype=cp.uint64)
    src.view(cp.uint64).reshape(lines, LINE // 8)[:, 0] = ((idx * cp.uint64(LCG_A) + cp.uint64(LCG_C))
                                                           & cp.uint64(lines - 1)) * cp.uint64(LINE)
    del idx
    sink = cp.zeros(SINK_WORDS, dtype=cp.uint32)
    cp.cuda.runtime.deviceSynchronize()
    return mod, src, sink, sms, how


def launcher(cp: Any, mod: Any, src: Any, sink: Any, sms: int, name: str) -> Any:
    import numpy as np

    fn = mod.get_function(name)

    def launch(reps: int) -> None:
        fn((sms,), (BLOCK,), (src, np.int64(BUF_BYTES), np.int32(reps), sink))

    return launch


def check_flag(cp: Any, sink: Any, name: str) -> None:
    flag = int(sink[SINK_FLAG].get())
    if flag == SINK_NO_SM90A:
        sink[SINK_FLAG] = 0
        raise RuntimeError(f"{name}: built without sm_90a features (no wgmma in the kernel)")


def child_calibrate(plan_path: Path) -> int:
    """Time each kernel (CUDA events) and choose its trips for ~TARGET_MS; write the plan."""
    import cupy as cp

    mod, src, sink, sms, how = setup(cp)
    plan: dict[str, Any] = {"build": how, "sms": sms, "target_ms": TARGET_MS, "kernels": {}}
    clock_hz = 1.8e9
    for name, _what, _who, est in KERNELS:
        launch = launcher(cp, mod, src, sink, sms, name)
        try:
            base = max(WARMUP_REPS, int(TARGET_MS / 4 * 1e-3 * clock_hz / est))
            t_base = common.event_times_ns(cp, lambda b=base, f=launch: f(b), n=1, warmup=True)[0]
            check_flag(cp, sink, name)
            reps = int(min(max(base * TARGET_MS * 1e6 / t_base, WARMUP_REPS), 2_000_000))
            t = common.event_times_ns(cp, lambda r=reps, f=launch: f(r), n=1, warmup=False)[0]
            plan["kernels"][name] = {"reps": reps, "time_ns": t, "ns_per_rep": t / reps, "base_reps": base,
                                     "base_time_ns": t_base}
            common.log(f"{name:<26} reps {reps:>8}  {t / 1e3:8.1f} us  {t / reps:8.1f} ns/trip")
        except Exception as e:  # noqa: BLE001 - a trap leaves the context unusable: record and stop
            plan["kernels"][name] = {"error": f"{type(e).__name__}: {str(e)[-800:]}"}
            common.log(f"{name}: {plan['kernels'][name]['error']}")
            if "built without sm_90a" not in str(e):
                break
    plan_path.write_text(json.dumps(plan, indent=1) + "\n")
    return 0


def child_profile(plan_path: Path) -> int:
    """Under ncu: each planned kernel once with WARMUP_REPS trips, then once with its calibrated trips."""
    import cupy as cp

    plan = json.loads(plan_path.read_text())
    mod, src, sink, sms, _ = setup(cp)
    for name in NAMES:
        reps = plan["kernels"].get(name, {}).get("reps")
        if not reps:
            continue
        launch = launcher(cp, mod, src, sink, sms, name)
        for r in (WARMUP_REPS, reps):
            launch(r)
            cp.cuda.runtime.deviceSynchronize()
    return 0


# ------------------------------------------------------------------------------------------------ parent
def rank(vals: dict[str, Any]) -> list[dict[str, Any]]:
    """Stall reasons by ratio, top first: ratio, share of the sum of ratios, share of warp time."""
    st = {r: float(v) for m, v in vals.items() if (r := reason_of(m)) and isinstance(v, int | float)}
    total = sum(st.values()) or 1.0
    issue = vals.get("smsp__issue_active.avg.per_cycle_active")
    warps = vals.get("smsp__warps_active.avg.per_cycle_active")
    scale = float(issue) / float(warps) if isinstance(issue, int | float) and isinstance(warps, int | float) \
        and warps else None
    return [{"reason": r, "ratio": v, "share_of_stalls": v / total,
             "warp_time_share": v * scale if scale is not None else None}
            for r, v in sorted(st.items(), key=lambda kv: -kv[1])]


def last_rows(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for r in sorted(rows, key=lambda r: int(r.get("ID", 0) or 0)):
        out[str(r.get("Kernel Name", "")).split("(")[0].strip()] = r
    return out


def dry(out: str | None) -> int:
    found = re.findall(r'extern "C" __global__ void __launch_bounds__\(256, 1\)\s+(\w+)\(', SRC.read_text())
    print(f"source {SRC.relative_to(HERE.parent.parent)}: kernels {found}")
    if sorted(found) != sorted(NAMES):
        print(f"MISMATCH with the plan: {sorted(set(found) ^ set(NAMES))}")
        return 1
    print(f"build: NVRTC -std=c++17 -arch=sm_90a -I{INCLUDE} (nvcc -gencode=arch=compute_90a,code=sm_90a -cubin "
          "if that fails)")
    print(f"grid = SM count (132 on the H100), block {BLOCK}; source buffer {BUF_BYTES >> 20} MiB (pointer chain, "
          f"LCG {LCG_A} i + {LCG_C} over {BUF_BYTES // LINE} lines)")
    print(f"1. calibration child (no ncu): {' '.join(common.python_cmd())} {__file__} --child --calibrate PLAN.json: "
          f"trips for ~{TARGET_MS} ms each")
    print("2. ncu child: ncu --clock-control none --target-processes all -k regex:^wait_ --metrics <every "
          f"{STALL_PREFIX}<reason>{STALL_SUFFIX} listed by ncu --query-metrics>,{','.join(EXTRA_METRICS)} "
          f"-f -o REPORT {' '.join(common.python_cmd())} {__file__} --child --plan PLAN.json")
    print(f"   each kernel launched twice ({WARMUP_REPS} trips, then the calibrated trips); the last row of each "
          "name is kept")
    print(f"{'kernel':<26} {'est trips':>9}  {'waiting warps':<38} wait")
    for name, what, who, est in KERNELS:
        print(f"{name:<26} {int(TARGET_MS * 1e-3 * 1.8e9 / est):>9}  {who:<38} {what}")
    print(f"out: {out or '(--out not given)'}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="JSON to write")
    ap.add_argument("--dry", action="store_true", help="print the plan; no CuPy, no GPU")
    ap.add_argument("--report", help="ncu report path without .ncu-rep (default: a temporary directory)")
    ap.add_argument("--ncu-timeout", type=float, default=400.0)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--calibrate", help=argparse.SUPPRESS)
    ap.add_argument("--plan", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.dry:
        return dry(a.out)
    if a.child:
        return child_calibrate(Path(a.calibrate)) if a.calibrate else child_profile(Path(a.plan))
    if not a.out:
        ap.error("--out is required")
    import cupy as cp

    t_start = time.time()
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="stallmap-"))
    res = common.cupy_header(cp, "micro-1") | {"results": {}}
    res["command"] = " ".join(sys.argv)
    plan_path = work / "plan.json"
    rc, text = common.sh([*common.python_cmd(), __file__, "--child", "--calibrate", str(plan_path)], timeout=300)
    common.log(f"calibration rc={rc}\n{text[-3000:]}")
    if not plan_path.exists():
        res["error"] = f"calibration failed (rc={rc}): {text[-4000:]}"
        common.write_json(out, res)
        return 1
    plan = json.loads(plan_path.read_text())
    res["calibration"] = plan
    ncu = common.find_ncu()
    if not ncu:
        res["error"] = "ncu not found"
        common.write_json(out, res)
        return 1
    res["ncu_version"] = common.ncu_version(ncu)
    available, _ = common.ncu_available_metrics(ncu)
    stalls = common.stall_metrics(available)
    common.log(f"ncu --query-metrics: {len(available)} names, {len(stalls)} stall reasons")
    present, missing = common.split_available(stalls + EXTRA_METRICS, available)
    report = Path(a.report) if a.report else work / "stallmap"
    rows, units, _, dropped, nlog = common.run_ncu(ncu, present, "^wait_",
                                                   [*common.python_cmd(), __file__, "--child", "--plan",
                                                    str(plan_path)], report, timeout=a.ncu_timeout)
    out.with_name(out.stem + "-ncu-log.txt").write_text(nlog[-20000:])
    metrics = [m for m in present if m not in dropped]
    res["ncu_missing"] = sorted(set(missing) | set(dropped))
    res["ncu_units"] = {m: u for m, u in units.items() if m in metrics}
    by_name = last_rows(rows)
    for name, what, who, _ in KERNELS:
        entry: dict[str, Any] = {"what": what, "waiting_warps": who, "grid": plan.get("sms"), "block": BLOCK,
                                 **plan["kernels"].get(name, {})}
        row = by_name.get(name)
        if row is None:
            entry["ncu_error"] = "no ncu row (see the ncu log)"
        else:
            vals = common.metric_values(row, metrics)
            entry["metrics"] = vals
            entry["stalls_ranked"] = rank(vals)
        res["results"][name] = entry
    res["method"] = {
        "kernels": "validate/micro/stallmap.cu (header comment), one CTA of 256 threads per SM, grid = SM count",
        "calibration": f"child process without ncu: CUDA events, trips scaled for ~{TARGET_MS} ms per launch",
        "ncu": f"common.run_ncu: --clock-control none, kernel replay, -k regex:^wait_; each kernel {WARMUP_REPS} "
               "trips then the calibrated trips; the last launch of each kernel kept",
        "ranking": "stall reasons by smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio; "
                   "share_of_stalls = ratio / sum of ratios; warp_time_share = ratio x "
                   "smsp__issue_active.avg.per_cycle_active / smsp__warps_active.avg.per_cycle_active",
        "caveat": "averages over all sub-partitions: spinning warps (warp 0 in the SPIN kernels) add their own "
                  "stalls; wait_spin_only is that signature alone",
        "seconds": round(time.time() - t_start, 1),
    }
    common.write_json(out, res)
    print(f"\n{'kernel':<26} {'us':>8}  top three stall reasons (ratio, share of stalls)")
    for name in NAMES:
        e = res["results"][name]
        t = e.get("metrics", {}).get("gpu__time_duration.sum")
        top = "  ".join(f"{s['reason']} {s['ratio']:.2f} ({100 * s['share_of_stalls']:.0f}%)"
                        for s in e.get("stalls_ranked", [])[:3]) or e.get("ncu_error") or e.get("error", "")
        us = f"{t / 1e3:8.1f}" if isinstance(t, int | float) else f"{'-':>8}"
        print(f"{name:<26} {us}  {top}")
    common.log(f"wrote {out} in {time.time() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
