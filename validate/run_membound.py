"""Measure the memory-bound twins (validate/kernels/mem_*.cu) on the H100: correctness, time, ncu counters.

    python3 validate/run_membound.py --out validate/measurements/h100/membound-2026-11-24.json
    python3 validate/run_membound.py --only mem_transpose_naive_guarded,mem_transpose_padded_guarded \
        --out validate/measurements/h100/guarded-2026-11-24.json

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
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KDIR = REPO / "validate" / "kernels"
sys.path.insert(0, str(REPO / "validate" / "micro"))
sys.path.insert(0, str(REPO / "validate"))

import common  # noqa: E402

STREAM = ("mem_copy", "mem_scale", "mem_add", "mem_triad")
TRANSPOSES = ("mem_transpose_naive", "mem_transpose_shared", "mem_transpose_padded", "mem_transpose_swizzled")
GUARDED = ("mem_transpose_naive_guarded", "mem_transpose_padded_guarded")  # any N: partial last tiles
REDUCTIONS = ("mem_reduce_interleaved", "mem_reduce_sequential", "mem_reduce_shuffle")
# (kernel, N, params): sizes that fit in the 50 MB L2 and sizes that do not
CASES = [("mem_copy", n, {}) for n in (4 << 20, 64 << 20, 256 << 20)] + \
    [(k, n, {}) for k in STREAM[1:] for n in (1 << 20, 16 << 20, 64 << 20)] + \
    [(k, n, {}) for k in TRANSPOSES for n in (1024, 2048, 8192)] + \
    [(k, n, {}) for k in REDUCTIONS for n in (4 << 20, 64 << 20)] + \
    [("mem_strided", 4 << 20, {"stride": s}) for s in (1, 2, 4, 8, 32)] + \
    [("mem_gather", n, {}) for n in (1 << 20, 16 << 20)] + \
    [(k, n, {}) for k in GUARDED for n in (1000, 2050, 8191)]
FLUSH_BYTES = 256 << 20


def build(cp):
    out = {}
    for name in sorted({k for k, _, _ in CASES}):
        mod = cp.RawModule(code=(KDIR / f"{name}.cu").read_text(), options=("-std=c++17",))
        out[name] = mod.get_function(name)
    return out


def launcher(cp, np, kern, name, n, params):
    """(launch(), check() -> (correct, rel_err)) for one case."""
    f32 = cp.float32
    if name in STREAM or name in ("mem_strided", "mem_gather") or name in REDUCTIONS:
        grid, block = ((n // 1024,) if name in STREAM or name == "mem_reduce_shuffle" else (n // 256,)), (256,)
        s = np.float32(3.0)
        if name in STREAM:
            ins = [cp.random.random(n, dtype=f32) for _ in range(1 if name in ("mem_copy", "mem_scale") else 2)]
            out = cp.full(n, cp.nan, dtype=f32)
            args = {"mem_copy": lambda: (ins[0], out), "mem_scale": lambda: (ins[0], out, s),
                    "mem_add": lambda: (ins[0], ins[1], out), "mem_triad": lambda: (out, ins[0], ins[1], s)}[name]()
            ref = {"mem_copy": lambda: ins[0], "mem_scale": lambda: s * ins[0], "mem_add": lambda: ins[0] + ins[1],
                   "mem_triad": lambda: ins[0] + s * ins[1]}[name]
        elif name == "mem_strided":
            st = params["stride"]
            x = cp.random.random(n * st, dtype=f32)
            out = cp.full(n, cp.nan, dtype=f32)
            args, ref = (x, out, np.int32(st)), lambda: x[::st]
        elif name == "mem_gather":
            x = cp.random.random(n, dtype=f32)
            idx = ((cp.arange(n, dtype=cp.uint64) * 2654435761) % n).astype(cp.uint32)
            out = cp.full(n, cp.nan, dtype=f32)
            args, ref = (x, idx, out), lambda: x[idx]
        else:  # reductions: one partial sum per block
            x = cp.random.random(n, dtype=f32)
            per = 1024 if name == "mem_reduce_shuffle" else 256
            out = cp.full(n // per, cp.nan, dtype=f32)
            args, ref = (x, out), lambda: x.reshape(-1, per).sum(axis=1)

        def launch():
            kern(grid, block, args)

        def check():
            out.fill(cp.nan)
            launch()
            cp.cuda.runtime.deviceSynchronize()
            want = ref()
            if name in REDUCTIONS or name == "mem_triad":  # sums in another order, FFMA rounding once: relative
                err = float(cp.max(cp.abs(out - want) / cp.abs(want)))
                return bool(err < 1e-4), err
            return bool(cp.array_equal(out, want)), 0.0
        return launch, check
    a = cp.random.random((n, n), dtype=f32)
    b = cp.full((n, n), cp.nan, dtype=f32)
    grid, block = (-(-n // 32), -(-n // 32)), (32, 8)  # the guarded twins round up

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
    for name, n, params in CASES:
        launch, _ = launcher(cp, np, kerns[name], name, n, params)
        cp.cuda.runtime.deviceSynchronize()
        launch()
        cp.cuda.runtime.deviceSynchronize()
        cp.get_default_memory_pool().free_all_blocks()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--only", help="comma-separated kernel names: measure only their cases")
    ap.add_argument("--ncu-child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.only:
        keep = set(a.only.split(","))
        CASES[:] = [c for c in CASES if c[0] in keep]
    if a.ncu_child:
        ncu_child()
        return 0
    import cupy as cp
    import numpy as np

    out = Path(a.out)
    data = common.cupy_header(cp, 1) | {
            "how": {"time": "CUDA events around one launch after writing one 256 MiB scratch buffer and reading "
                            "another (cold, clean L2), median of 30",
                    "check": "output poisoned with NaN, compared exactly with CuPy (reductions: relative error "
                             "< 1e-4)",
                    "ncu": "one launch per case in a child process, --clock-control none"},
            "kernels": []}
    kerns = build(cp)
    scratch = cp.empty(FLUSH_BYTES // 4, dtype=cp.float32)
    clean = cp.ones(FLUSH_BYTES // 4, dtype=cp.float32)
    for name, n, params in CASES:
        e = {"kernel": name, "shape": [n], "params": params, "twin": f"validate/kernels/{name}.cu"}
        try:
            e["registers_per_thread"] = int(kerns[name].attributes["num_regs"])
            launch, check = launcher(cp, np, kerns[name], name, n, params)
            ok, err = check()
            ok2, err2 = check()
            e["correct"] = ok and ok2
            e["max_rel_err"] = max(err, err2)
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
        child = [*common.python_cmd(), str(Path(__file__).resolve()), "--ncu-child",
                 *(["--only", a.only] if a.only else [])]
        work = out.parent / "membound-ncu"
        work.mkdir(parents=True, exist_ok=True)
        rows, _, _, dropped, nlog = common.run_ncu(ncu, present, "mem_", child, work / "membound", timeout=500)
        (out.parent / "membound-ncu-log.txt").write_text(nlog[-200000:])
        for e, row in zip(data["kernels"], common.assign_rows(rows, [k for k, _, _ in CASES]), strict=True):
            e["ncu"] = common.metric_values(row, present)
        data["ncu"] = {"version": common.ncu_version(ncu), "missing": missing + dropped}
        common.write_json(out, data)
    for e in data["kernels"]:
        t = e.get("time_ns", {}).get("median", float("nan"))
        nc = e.get("ncu", {})
        print(f"{e['kernel']:22s} {e['shape'][0]:>10d} {e['params']} ok={e.get('correct')} {t / 1e3:9.1f} us  "
              f"dram rd {nc.get('dram__bytes_read.sum', '-')} wr {nc.get('dram__bytes_write.sum', '-')} "
              f"l2hit {nc.get('lts__t_sector_hit_rate.pct', '-')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
