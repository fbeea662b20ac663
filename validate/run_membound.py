"""Measure the memory-bound twins (validate/kernels/mem_*.cu) on the H100: correctness, time, ncu counters.

    python3 validate/run_membound.py --out validate/measurements/h100/membound-2026-11-23.json

Per kernel and size: inputs of random floats, the output poisoned with NaN before each check and compared with
CuPy's copy / transpose; time with CUDA events around single launches, each after the L2 was flushed by writing a
256 MiB scratch buffer and reading another (every launch starts cold and clean, as under ncu's default cache
control), median of 30; then one
launch per (kernel, size) in a child process of this script under ncu (--clock-control none). Writes schema 1,
the format `gpusim validate` reads; the JSON is rewritten after every step.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KDIR = REPO / "validate" / "kernels"
sys.path.insert(0, str(REPO / "validate" / "micro"))
sys.path.insert(0, str(REPO / "validate"))

import common  # noqa: E402

CASES = [("mem_copy", n) for n in (4 << 20, 64 << 20, 256 << 20)] + \
    [(k, n) for k in ("mem_transpose_naive", "mem_transpose_shared", "mem_transpose_padded")
     for n in (1024, 2048, 8192)]
FLUSH_BYTES = 256 << 20


def build(cp):
    out = {}
    for name in sorted({k for k, _ in CASES}):
        mod = cp.RawModule(code=(KDIR / f"{name}.cu").read_text(), options=("-std=c++17",))
        out[name] = mod.get_function(name)
    return out


def launcher(cp, np, kern, name, n):
    """(launch(), check() -> (correct, rel_err), buffers) for one case."""
    if name == "mem_copy":
        x = cp.random.random(n, dtype=cp.float32)
        y = cp.full(n, cp.nan, dtype=cp.float32)
        grid, block = (n // 1024,), (256,)

        def launch():
            kern(grid, block, (x, y))

        def check():
            y.fill(cp.nan)
            launch()
            cp.cuda.runtime.deviceSynchronize()
            return bool(cp.array_equal(x, y)), 0.0
        return launch, check
    a = cp.random.random((n, n), dtype=cp.float32)
    b = cp.full((n, n), cp.nan, dtype=cp.float32)
    grid, block = (n // 32, n // 32), (32, 8)

    def launch():
        kern(grid, block, (a, b, np.int32(n)))

    def check():
        b.fill(cp.nan)
        launch()
        cp.cuda.runtime.deviceSynchronize()
        return bool(cp.array_equal(a.T, b)), 0.0
    return launch, check


def ncu_child() -> None:
    import cupy as cp
    import numpy as np

    kerns = build(cp)
    for name, n in CASES:
        launch, _ = launcher(cp, np, kerns[name], name, n)
        cp.cuda.runtime.deviceSynchronize()
        launch()
        cp.cuda.runtime.deviceSynchronize()
        cp.get_default_memory_pool().free_all_blocks()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--ncu-child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.ncu_child:
        ncu_child()
        return 0
    import cupy as cp
    import numpy as np

    out = Path(a.out)
    props = cp.cuda.runtime.getDeviceProperties(0)
    name_ = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    data = {"schema": 1, "date": time.strftime("%Y-%m-%d"),
            "gpu": {"name": name_, "sm_count": props["multiProcessorCount"], "nvidia_smi": common.nvidia_smi()},
            "software": {"cupy": cp.__version__, "cuda_runtime": cp.cuda.runtime.runtimeGetVersion(),
                         "driver": cp.cuda.runtime.driverGetVersion(), "nvcc": common.nvcc_version()},
            "how": {"time": "CUDA events around one launch after writing one 256 MiB scratch buffer and reading "
                            "another (cold, clean L2), median of 30", "check": "output poisoned with NaN, compared exactly with CuPy",
                    "ncu": "one launch per case in a child process, --clock-control none"},
            "kernels": []}
    kerns = build(cp)
    scratch = cp.empty(FLUSH_BYTES // 4, dtype=cp.float32)
    clean = cp.ones(FLUSH_BYTES // 4, dtype=cp.float32)
    for name, n in CASES:
        e = {"kernel": name, "shape": [n], "params": {}, "twin": f"validate/kernels/{name}.cu"}
        try:
            e["registers_per_thread"] = int(kerns[name].attributes["num_regs"])
            launch, check = launcher(cp, np, kerns[name], name, n)
            ok, _ = check()
            ok2, _ = check()
            e["correct"] = ok and ok2
            ts = []
            for _ in range(30):
                scratch.fill(1.0)  # evict the kernel's data ...
                cp.sum(clean)  # ... and leave clean lines, so no write-back of the flush lands in the kernel
                s, f = cp.cuda.Event(), cp.cuda.Event()
                s.record()
                launch()
                f.record()
                f.synchronize()
                ts.append(cp.cuda.get_elapsed_time(s, f) * 1e6)
            e["time_ns"] = common.summarize(ts)
            common.log(f"{name} {n}: correct={e['correct']} t={statistics.median(ts) / 1e3:.1f} us")
        except Exception:
            e["correct"] = False
            e["error"] = traceback.format_exc()[-2000:]
        data["kernels"].append(e)
        cp.get_default_memory_pool().free_all_blocks()
        common.write_json(out, data)
    del scratch, clean
    cp.get_default_memory_pool().free_all_blocks()
    ncu = common.find_ncu()
    if ncu:
        import run_h100

        avail, _ = common.ncu_available_metrics(ncu)
        wanted = list(run_h100.LADDER_METRICS) + common.stall_metrics(avail)
        present, missing = common.split_available(wanted, avail)
        child = [*common.python_cmd(), str(Path(__file__).resolve()), "--ncu-child"]
        work = out.parent / "membound-ncu"
        work.mkdir(parents=True, exist_ok=True)
        rows, _, _, dropped, nlog = common.run_ncu(ncu, present, "mem_", child, work / "membound", timeout=500)
        (out.parent / "membound-ncu-log.txt").write_text(nlog[-200000:])
        for e, row in zip(data["kernels"], common.assign_rows(rows, [k for k, _ in CASES]), strict=True):
            e["ncu"] = common.metric_values(row, present)
        data["ncu"] = {"version": common.ncu_version(ncu), "missing": missing + dropped}
        common.write_json(out, data)
    for e in data["kernels"]:
        t = e.get("time_ns", {}).get("median", float("nan"))
        nc = e.get("ncu", {})
        print(f"{e['kernel']:22s} {e['shape'][0]:>10d} ok={e.get('correct')} {t / 1e3:9.1f} us  "
              f"dram rd {nc.get('dram__bytes_read.sum', '-')} wr {nc.get('dram__bytes_write.sum', '-')} "
              f"l2hit {nc.get('lts__t_sector_hit_rate.pct', '-')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
