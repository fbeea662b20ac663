"""Measure the CUDA twins of the SGEMM ladder (validate/kernels/*.cu) and the micro-benchmarks on a real GPU.

One invocation: compile every kernel with CuPy/NVRTC; per kernel and shape check the result against
torch.matmul (FP32, TF32 off), time correct kernels with CUDA events, record registers/shared memory/launch
configuration; time cuBLAS FP32 as a reference row; then profile every correct (kernel, shape) once under ncu
(a child process of this script, --clock-control none) and merge the counters. ``--micro`` also runs the
micro-benchmark suite (validate/micro/run_micro.py) and writes its JSON next to the ladder JSON.

    python3 validate/run_h100.py --out validate/measurements/h100/2026-11-22.json --micro

The output follows the schema read by ``gpusim validate`` (schema 1).
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
KDIR = REPO / "validate" / "kernels"
sys.path.insert(0, str(REPO / "validate" / "micro"))

import common  # noqa: E402
import run_micro  # noqa: E402

KERNELS = [
    "sgemm_naive", "sgemm_coalesced", "sgemm_smem_blocking", "sgemm_1d_blocktiling", "sgemm_2d_blocktiling",
    "sgemm_vectorized", "sgemm_bank_linearized", "sgemm_bank_padded", "sgemm_autotuned", "sgemm_warptiling",
    "sgemm_double_buffered", "sgemm_memcpy_async",
]
SHAPES = [(4096, 4096, 4096), (3072, 1536, 2048), (512, 512, 512)]
# (M, N, K) multiples each kernel needs
DIVISORS = {
    "sgemm_naive": (32, 32, 1), "sgemm_coalesced": (32, 32, 1), "sgemm_smem_blocking": (32, 32, 32),
    "sgemm_1d_blocktiling": (64, 64, 8), "sgemm_2d_blocktiling": (128, 128, 8), "sgemm_vectorized": (128, 128, 8),
    "sgemm_bank_linearized": (128, 128, 8), "sgemm_bank_padded": (128, 128, 8), "sgemm_autotuned": (128, 128, 16),
    "sgemm_warptiling": (128, 128, 16), "sgemm_double_buffered": (128, 256, 16), "sgemm_memcpy_async": (128, 128, 16),
}
LADDER_METRICS = [
    # the GPC-side L2 request coalescer (validate/micro/run_l2_merge.py): read sectors sent on to the L2, those that
    # coalesced, and the average coalescing rate
    "lrc__lrc2xbar_sectors_op_read.sum", "lrc__lrc2xbar_sectors_op_read_coalescing_achieved.sum",
    "lrc__average_xbar2gpc_sectors_op_read.ratio",
    "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sector_hit_rate.pct",
    "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum", "l1tex__t_sector_hit_rate.pct",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active", "launch__registers_per_thread",
    "launch__occupancy_limit_registers", "launch__shared_mem_per_block", "sm__cycles_elapsed.avg.per_second",
    "smsp__inst_executed.sum", "smsp__cycles_active.avg",
]
# stall reasons named in h100.md section 8; used only when ncu's metric list could not be read
STALL_REASONS = ["long_scoreboard", "short_scoreboard", "mio_throttle", "lg_throttle", "barrier",
                 "math_pipe_throttle", "wait", "not_selected", "selected", "no_instructions", "dispatch_stall",
                 "drain", "imc_miss", "membar", "misc", "sleeping", "tex_throttle", "branch_resolving",
                 "warpgroup_arrive"]
REL_TOL = 1e-4
L2_BYTES_NOMINAL = 50 * 1024 * 1024
ROTATE_BYTES = 200 * 1024 * 1024  # when one input set is smaller, rotate among enough sets to cover ~2x L2
PAD = 4096  # NaN canary floats after C: must survive the kernel (catches out-of-bounds writes)
SPIN_SRC = r"""
extern "C" __global__ void spin_wait(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
}
"""


def launch_config(name: str, M: int, N: int, K: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(grid, block) exactly as Boehm's runner launches each kernel (validate/kernels/README.md)."""
    cdiv = lambda a, b: (a + b - 1) // b  # noqa: E731
    if name in ("sgemm_naive",):
        return (cdiv(M, 32), cdiv(N, 32), 1), (32, 32, 1)
    if name in ("sgemm_coalesced", "sgemm_smem_blocking"):
        return (cdiv(M, 32), cdiv(N, 32), 1), (1024, 1, 1)
    if name == "sgemm_1d_blocktiling":
        return (cdiv(N, 64), cdiv(M, 64), 1), (512, 1, 1)
    if name in ("sgemm_2d_blocktiling", "sgemm_vectorized", "sgemm_bank_linearized", "sgemm_bank_padded",
                "sgemm_autotuned"):
        return (cdiv(N, 128), cdiv(M, 128), 1), (256, 1, 1)
    if name in ("sgemm_warptiling", "sgemm_memcpy_async"):
        return (cdiv(N, 128), cdiv(M, 128), 1), (128, 1, 1)
    if name == "sgemm_double_buffered":
        return (cdiv(N, 256), cdiv(M, 128), 1), (256, 1, 1)
    raise KeyError(name)


def tiles(name: str, shape: tuple[int, int, int]) -> bool:
    return all(d % m == 0 for d, m in zip(shape, DIVISORS[name], strict=True))


def twin_header(name: str) -> str:
    return (KDIR / f"{name}.cu").read_text().splitlines()[0]


def compile_kernels(cp: Any, names: list[str]) -> tuple[dict[str, Any], dict[str, str]]:
    kerns, errors = {}, {}
    for n in names:
        try:
            mod = cp.RawModule(code=(KDIR / f"{n}.cu").read_text(), options=("-std=c++17",))
            k = mod.get_function(n)
            k.attributes  # noqa: B018  (forces compilation and loading now)
            kerns[n] = k
        except Exception as e:
            errors[n] = f"{type(e).__name__}: {e}"[:2000]
    return kerns, errors


def set_carveout(name: str, k: Any) -> str | None:
    """Boehm's runner asks kernel 3 for the max-shared carve-out; do the same where CuPy allows it."""
    if name != "sgemm_smem_blocking":
        return None
    try:
        k.preferred_shared_memory_carveout = 100
        return "preferred_shared_memory_carveout=100"
    except Exception as e:
        return f"not set ({type(e).__name__}: {e})"


def ptr_args(cp: Any, t: Any) -> Any:
    return cp.asarray(t)


class Ladder:
    def __init__(self, cp: Any, torch: Any, np: Any) -> None:
        self.cp, self.torch, self.np = cp, torch, np
        self.stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
        spin_mod = cp.RawModule(code=SPIN_SRC, options=("-std=c++17",))
        self.spin_k = spin_mod.get_function("spin_wait")

    def spin(self, cycles: int = 20_000_000) -> None:
        with self.stream:
            self.spin_k((1,), (1,), (self.np.int64(cycles),))

    def launch(self, k: Any, name: str, shape: tuple[int, int, int], alpha: float, beta: float, A: Any, B: Any,
               C: Any) -> None:
        M, N, K = shape
        grid, block = launch_config(name, M, N, K)
        np = self.np
        with self.stream:
            k(grid, block, (np.int32(M), np.int32(N), np.int32(K), np.float32(alpha), A, B, np.float32(beta), C))

    def check(self, k: Any, name: str, shape: tuple[int, int, int], seed: int) -> dict[str, Any]:
        """Two fresh-input runs: (1) alpha=1, beta=0, C poisoned with 1e30 (an unwritten element stays 1e30);
        (2) alpha=0.75, beta=-1.25 on random C (tests the epilogue). NaN canary after C in both."""
        torch, cp = self.torch, self.cp
        M, N, K = shape
        g = torch.Generator(device="cuda")
        g.manual_seed(seed)
        A = torch.randn(M, K, device="cuda", generator=g)
        B = torch.randn(K, N, device="cuda", generator=g)
        C0 = torch.randn(M, N, device="cuda", generator=g)
        buf = torch.full((M * N + PAD,), float("nan"), device="cuda")
        C = buf[: M * N].view(M, N)
        res: dict[str, Any] = {}
        AB = torch.matmul(A, B)
        for tag, alpha, beta, init in (("poison", 1.0, 0.0, None), ("epilogue", 0.75, -1.25, C0)):
            if init is None:
                C.fill_(1e30)
                ref = AB
            else:
                C.copy_(init)
                ref = torch.addmm(C0, A, B, beta=beta, alpha=alpha)
            torch.cuda.synchronize()
            self.launch(k, name, shape, alpha, beta, ptr_args(cp, A), ptr_args(cp, B), ptr_args(cp, C))
            torch.cuda.synchronize()
            out = C.double()
            finite = bool(torch.isfinite(C).all())
            rel = float(torch.linalg.vector_norm(out - ref.double()) / torch.linalg.vector_norm(ref.double()))
            canary = bool(torch.isnan(buf[M * N:]).all())
            res[tag] = {"rel_err": rel if math.isfinite(rel) else None, "finite": finite, "canary_intact": canary}
            if tag == "poison":
                ref64 = torch.matmul(A.double(), B.double())
                res[tag]["rel_err_vs_fp64"] = float(torch.linalg.vector_norm(out - ref64) /
                                                    torch.linalg.vector_norm(ref64))
        rels = [r["rel_err"] for r in res.values()]
        ok = all(r is not None and r < REL_TOL for r in rels) and all(r["finite"] and r["canary_intact"]
                                                                     for r in res.values())
        return {"correct": ok, "rel_err": max((r for r in rels if r is not None), default=None), "checks": res}

    def make_sets(self, shape: tuple[int, int, int], seed: int) -> list[tuple[Any, Any, Any]]:
        torch = self.torch
        M, N, K = shape
        set_bytes = 4 * (M * K + K * N + M * N)
        n = 1 if set_bytes > 2 * L2_BYTES_NOMINAL else min(64, math.ceil(ROTATE_BYTES / set_bytes))
        g = torch.Generator(device="cuda")
        g.manual_seed(seed)
        sets = []
        for _ in range(n):
            A = torch.randn(M, K, device="cuda", generator=g)
            B = torch.randn(K, N, device="cuda", generator=g)
            C = torch.randn(M, N, device="cuda", generator=g)
            sets.append((A, B, C))
        return sets

    def time(self, launch_i: Any) -> dict[str, float]:
        """Warm up, estimate, then per-launch CUDA-event times of back-to-back launches; median of >= 20."""
        torch = self.torch
        for i in range(2):
            launch_i(i)
        torch.cuda.synchronize()
        est = common.time_launches(torch, launch_i, 3, self.spin)
        n = 20 if min(est) > 5e6 else 50
        return common.summarize(common.time_launches(torch, launch_i, n, self.spin))


def gpu_info(cp: Any, torch: Any, ncu: str | None) -> dict[str, Any]:
    rt = cp.cuda.runtime
    props = rt.getDeviceProperties(0)
    tp = torch.cuda.get_device_properties(0)

    def attr(name: str, num: int) -> int | None:
        try:
            return int(rt.deviceGetAttribute(getattr(rt, name, num), 0))
        except Exception:
            return None

    clock_khz = attr("cudaDevAttrClockRate", 13)
    smi = common.nvidia_smi()
    drv = rt.driverGetVersion()
    rtv = rt.runtimeGetVersion()
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    return {
        "name": name, "sm_count": int(props["multiProcessorCount"]),
        "sm_clock_mhz_nominal": clock_khz / 1e3 if clock_khz else None,
        "sm_clock_mhz_nominal_source": "cudaDeviceGetAttribute(cudaDevAttrClockRate)",
        "sm_clock_mhz_max_nvidia_smi": smi.get("clocks.max.sm"),
        "sm_clock_mhz_measured": None,
        "l2_bytes": attr("cudaDevAttrL2CacheSize", 38) or int(getattr(tp, "L2_cache_size", 0)),
        "memory_bytes": int(tp.total_memory), "cc": f"{tp.major}.{tp.minor}",
        "mem_clock_khz": attr("cudaDevAttrMemoryClockRate", 36),
        "mem_bus_width_bits": attr("cudaDevAttrGlobalMemoryBusWidth", 37),
        "driver": smi.get("driver_version") or f"{drv // 1000}.{drv % 1000 // 10}",
        "cuda_driver_api": f"{drv // 1000}.{drv % 1000 // 10}",
        "cuda_runtime": f"{rtv // 1000}.{rtv % 1000 // 10}",
        "nvrtc": ".".join(str(v) for v in cp.cuda.nvrtc.getVersion()),
        "nvcc": common.nvcc_version(), "cupy": cp.__version__, "torch": torch.__version__,
        "ncu": common.ncu_version(ncu) if ncu else "not found",
        "python": platform.python_version(), "nvidia_smi_at_start": smi,
    }


def measured_clock(cp: Any, np: Any) -> dict[str, Any]:
    micro = REPO / "validate" / "micro"
    mod = cp.RawModule(code=(micro / "micro.cu").read_text(), options=("-std=c++17", f"-I{micro}"))
    out = cp.zeros(4, dtype=cp.int64)
    mod.get_function("micro_clock")((1,), (1,), (np.int64(200_000_000), out))
    cp.cuda.runtime.deviceSynchronize()
    cyc, ns = (int(v) for v in out[:2].get())
    return {"mhz": cyc / ns * 1e3, "cycles": cyc, "ns": ns}


# ---------------------------------------------------------------------------------------------------- ncu child
def ncu_child_ladder(kernels: list[str], shapes: list[tuple[int, int, int]]) -> None:
    import cupy as cp
    import numpy as np

    kerns, errors = compile_kernels(cp, kernels)
    for n in errors:
        print(f"compile error {n}", file=sys.stderr)
    for shape in shapes:
        M, N, K = shape
        rs = cp.random.RandomState(1234)
        A = rs.standard_normal((M, K), dtype=cp.float32)
        B = rs.standard_normal((K, N), dtype=cp.float32)
        C = rs.standard_normal((M, N), dtype=cp.float32)
        cp.cuda.runtime.deviceSynchronize()
        for n in kernels:
            if n not in kerns or not tiles(n, shape):
                continue
            set_carveout(n, kerns[n])
            grid, block = launch_config(n, M, N, K)
            kerns[n](grid, block, (np.int32(M), np.int32(N), np.int32(K), np.float32(1.0), A, B, np.float32(0.0), C))
        cp.cuda.runtime.deviceSynchronize()
        del A, B, C
        cp.get_default_memory_pool().free_all_blocks()


# ---------------------------------------------------------------------------------------------------- main
def parse_shapes(s: str) -> list[tuple[int, int, int]]:
    out = []
    for part in s.split(";"):
        dims = tuple(int(x) for x in part.lower().replace("x", ",").split(",") if x.strip())
        if len(dims) != 3:
            raise argparse.ArgumentTypeError(f"bad shape {part!r}: want M,N,K")
        out.append(dims)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", default=",".join(KERNELS), help="comma-separated kernel names")
    ap.add_argument("--shapes", default=";".join(",".join(map(str, s)) for s in SHAPES),
                    help="';'-separated M,N,K triples (default: the three validation shapes)")
    ap.add_argument("--skip-ncu", action="store_true", help="no ncu pass")
    ap.add_argument("--micro", action="store_true", help="also run the micro-benchmark suite")
    ap.add_argument("--skip-ladder", action="store_true", help="only the micro suite (with --micro)")
    ap.add_argument("--out", default=str(REPO / "validate" / "measurements" / "h100" /
                                         f"{datetime.date.today().isoformat()}.json"))
    ap.add_argument("--micro-out", default=None, help="default: micro-<date>.json next to --out")
    ap.add_argument("--raw-dir", default=None, help="ncu CSVs and logs (default: next to --out)")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    ap.add_argument("--ncu-timeout", type=float, default=420.0)
    ap.add_argument("--ncu-child", choices=["ladder", "micro"], default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    kernels = [k for k in a.kernels.split(",") if k]
    shapes = parse_shapes(a.shapes)

    if a.ncu_child == "ladder":
        ncu_child_ladder(kernels, shapes)
        return 0
    if a.ncu_child == "micro":
        import cupy as cp

        run_micro.ncu_child(cp)
        return 0

    import cupy as cp
    import numpy as np
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    out_path = Path(a.out)
    raw = Path(a.raw_dir) if a.raw_dir else out_path.parent
    raw.mkdir(parents=True, exist_ok=True)
    ncu = common.find_ncu()
    common.log(f"ncu: {ncu}")
    gpu = gpu_info(cp, torch, ncu)
    common.log(f"GPU: {gpu['name']}, {gpu['sm_count']} SMs, L2 {gpu['l2_bytes']}, driver {gpu['driver']}, "
               f"nvrtc {gpu['nvrtc']}, cupy {gpu['cupy']}, torch {gpu['torch']}, ncu {gpu['ncu']}")
    available: set[str] = set()
    if ncu and not a.skip_ncu:
        available, qtext = common.ncu_available_metrics(ncu)
        common.log(f"ncu --query-metrics: {len(available)} metric names")
        used = {m.split(".")[0] for m in LADDER_METRICS + run_micro.MICRO_METRICS}
        keep = [ln[:200] for ln in qtext.splitlines() if ln.split()[:1] and (
            ln.split()[0].split(".")[0] in used or "_per_issue_active" in ln.split()[0])][:400]
        with open(raw / "ncu_log.txt", "a") as f:
            f.write(f"# ncu --query-metrics --query-metrics-mode all: {len(available)} names; lines naming the "
                    "metrics used here:\n" + "\n".join(keep[:3000]) + "\n\n")

    work = Path(tempfile.mkdtemp(prefix="gpusim_ncu_"))  # ncu reports (large) stay out of raw/
    if not a.skip_ladder:
        data = run_ladder(a, cp, torch, np, gpu, kernels, shapes, ncu, available, raw, work)
        common.write_json(out_path, data)
        common.log(f"wrote {out_path}")
        print_table(data)
    if a.micro:
        t0 = time.time()
        micro: dict[str, Any] = {"schema": 1, "date": a.date, "gpu": gpu}
        micro["timing"] = run_micro.run_timing(cp, torch)
        if ncu and not a.skip_ncu:
            try:
                micro["ncu"] = run_micro.ncu_pass(ncu, available, raw, work, Path(__file__).resolve(),
                                                  a.ncu_timeout)
            except Exception:
                micro["ncu"] = {"error": traceback.format_exc()[-3000:]}
        micro["summary"] = run_micro.summary(micro)
        micro["command"] = " ".join(sys.argv)
        mp = Path(a.micro_out) if a.micro_out else out_path.parent / f"micro-{a.date}.json"
        common.write_json(mp, micro)
        common.log(f"micro suite {time.time() - t0:.0f} s; wrote {mp}")
        for row in micro["summary"]:
            print(f"  {row['quantity']:<60} {row['value']!s:>14} {row['unit']}")
    return 0


def run_ladder(a: argparse.Namespace, cp: Any, torch: Any, np: Any, gpu: dict[str, Any], kernels: list[str],
               shapes: list[tuple[int, int, int]], ncu: str | None, available: set[str], raw: Path,
               work: Path) -> dict[str, Any]:
    lad = Ladder(cp, torch, np)
    t0 = time.time()
    kerns, cerr = compile_kernels(cp, kernels)
    common.log(f"compiled {len(kerns)}/{len(kernels)} kernels in {time.time() - t0:.1f} s; errors: {list(cerr)}")
    entries: list[dict[str, Any]] = []
    reference: list[dict[str, Any]] = []
    for si, shape in enumerate(shapes):
        M, N, K = shape
        sets = lad.make_sets(shape, seed=1000 + si)
        views = [(ptr_args(cp, A), ptr_args(cp, B), ptr_args(cp, C)) for A, B, C in sets]
        common.log(f"shape {shape}: {len(sets)} input set(s)")
        for ki, name in enumerate(kernels):
            grid, block = launch_config(name, M, N, K)
            e: dict[str, Any] = {"kernel": name, "shape": list(shape), "grid": list(grid), "block": list(block),
                                 "twin": f"validate/kernels/{name}.cu", "twin_header": twin_header(name)}
            if name in cerr:
                e.update(correct=False, error="compile: " + cerr[name])
                entries.append(e)
                continue
            k = kerns[name]
            at = k.attributes
            e["registers_per_thread"] = int(at.get("num_regs", 0))
            e["shared_bytes_per_block"] = int(at.get("shared_size_bytes", 0))
            e["local_bytes_per_thread"] = int(at.get("local_size_bytes", 0))
            e["max_threads_per_block"] = int(at.get("max_threads_per_block", 0))
            e["binary_version"] = int(at.get("binary_version", 0))
            co = set_carveout(name, k)
            if co:
                e["carveout"] = co
            if not tiles(name, shape):
                e.update(correct=False, error=f"shape not divisible by {DIVISORS[name]}")
                entries.append(e)
                continue
            try:
                chk = lad.check(k, name, shape, seed=7 + 100 * si + ki)
                e.update(correct=chk["correct"], rel_err=chk["rel_err"], checks=chk["checks"])
                if chk["correct"]:
                    def launch_i(i: int, k: Any = k, name: str = name, shape: tuple = shape,
                                 views: list = views) -> None:
                        A, B, C = views[i % len(views)]
                        lad.launch(k, name, shape, 1.0, 0.0, A, B, C)

                    e["time_ns"] = lad.time(launch_i)
                    e["timing"] = {"alpha": 1.0, "beta": 0.0, "input_sets": len(sets)}
                    e["gflops"] = 2 * M * N * K / e["time_ns"]["median"]
            except Exception:
                e.update(correct=False, error=traceback.format_exc()[-2000:])
            common.log(f"  {name:<24} correct={e.get('correct')} rel={e.get('rel_err')} "
                       f"t={e.get('time_ns', {}).get('median', float('nan')) / 1e3:.1f} us")
            entries.append(e)
        # cuBLAS FP32 reference (torch.matmul, TF32 off)
        def cublas_i(i: int, sets: list = sets) -> None:
            A, B, C = sets[i % len(sets)]
            torch.matmul(A, B, out=C)

        t = lad.time(cublas_i)
        reference.append({"name": "cublas_fp32", "shape": list(shape), "time_ns": t,
                          "gflops": 2 * M * N * K / t["median"],
                          "how": "torch.matmul(A, B, out=C), allow_tf32=False, float32_matmul_precision=highest"})
        common.log(f"  cublas_fp32 t={t['median'] / 1e3:.1f} us")
        sets, views = [], []  # free this shape's inputs before the next
        torch.cuda.empty_cache()
    clk = measured_clock(cp, np)
    gpu = dict(gpu)
    gpu["sm_clock_mhz_measured"] = clk["mhz"]
    gpu["sm_clock_measured_how"] = (f"clock64 / %globaltimer over {clk['cycles']} cycles of a spinning thread, "
                                    "right after the ladder timings")
    gpu["nvidia_smi_after_timing"] = common.nvidia_smi()
    data: dict[str, Any] = {"schema": 1, "date": a.date, "gpu": gpu, "kernels": entries, "reference": reference}
    if ncu and not a.skip_ncu:
        ncu_ladder(a, data, kernels, shapes, ncu, available, raw, work)
    data["method"] = {
        "correctness": "fresh torch.randn inputs per (kernel, shape); check 1: alpha=1, beta=0, C filled with 1e30 "
                       "(an unwritten element keeps it); check 2: alpha=0.75, beta=-1.25, random C. Reference "
                       "torch.matmul/addmm FP32 with TF32 off; rel_err = ||out-ref||_2/||ref||_2 (max of the two), "
                       f"must be < {REL_TOL}; {PAD} NaN floats after C must stay NaN. (C is also an input of "
                       "these kernels, so a NaN poison cannot be used: beta*NaN = NaN even for beta = 0.)",
        "timing": "CUDA events between back-to-back launches queued behind a ~10 ms spin kernel (so the host "
                  "is ahead of the GPU); 2 warm-ups; median/min/max of 20 launches (50 when a launch < 5 ms); "
                  f"input sets rotated when A+B+C < 2x L2 (enough sets for ~{ROTATE_BYTES >> 20} MiB); "
                  "alpha=1, beta=0",
        "ncu": "one launch per (kernel, shape) in a child process of this script under "
               "ncu --clock-control none -k regex:<names> --metrics ...; fresh cupy random inputs; raw CSV in "
               "ncu_ladder.csv; stall reasons: every smsp__average_warps_issue_stalled_<r>_per_issue_active.ratio "
               "that ncu --query-metrics lists, except the _not_issued twins",
        "command": " ".join(sys.argv), "host": platform.node(),
        "env": {k: v for k, v in os.environ.items() if k.startswith(("CUDA", "CUPY", "NVIDIA"))},
    }
    return data


def ncu_ladder(a: argparse.Namespace, data: dict[str, Any], kernels: list[str],
               shapes: list[tuple[int, int, int]], ncu: str, available: set[str], raw: Path,
               work: Path) -> None:
    stalls = common.stall_metrics(available) or [
        f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in STALL_REASONS]
    wanted = LADDER_METRICS + stalls
    present, missing = common.split_available(wanted, available)
    good = [(e["kernel"], tuple(e["shape"])) for e in data["kernels"] if e.get("correct")]
    ok_kernels = [k for k in kernels if any(g[0] == k for g in good)]  # the child launches these at every shape
    if not ok_kernels:
        return
    regex = "^(" + "|".join(ok_kernels) + ")$"
    child = [*common.python_cmd(), str(Path(__file__).resolve()), "--ncu-child", "ladder",
             "--kernels", ",".join(ok_kernels), "--shapes", ";".join(",".join(map(str, s)) for s in shapes)]
    t0 = time.time()
    rows, units, csv_text, dropped, nlog = common.run_ncu(ncu, present, regex, child, work / "ladder",
                                                          a.ncu_timeout)
    common.log(f"ncu ladder: {len(rows)} rows in {time.time() - t0:.0f} s")
    (raw / "ncu_ladder.csv").write_text(csv_text)
    with open(raw / "ncu_log.txt", "a") as f:
        f.write("# ladder\n" + nlog + "\n")
    plan = [k for s in shapes for k in ok_kernels if tiles(k, s)]
    plan_shapes = [s for s in shapes for k in ok_kernels if tiles(k, s)]
    matched = common.assign_rows(rows, plan)
    by_key = {(k, s): r for k, s, r in zip(plan, plan_shapes, matched, strict=True)}
    miss = missing + dropped
    for e in data["kernels"]:
        key = (e["kernel"], tuple(e["shape"]))
        if not e.get("correct"):
            continue
        r = by_key.get(key)
        e["ncu"] = common.metric_values(r, [m for m in present if m not in dropped])
        e["ncu_missing"] = miss
        if r is None:
            e["ncu_error"] = "no ncu row for this launch (see ncu_log.txt)"
        elif str(r.get("Grid Size", "")).replace(" ", "") != "({},{},{})".format(*e["grid"]):
            e["ncu_error"] = f"grid mismatch: ncu {r.get('Grid Size')} vs {e['grid']}"
    data["ncu_units"] = {m: u for m, u in units.items() if m in wanted}
    data["ncu_missing"] = miss
    per_s = [e["ncu"].get("sm__cycles_elapsed.avg.per_second") for e in data["kernels"] if e.get("ncu")]
    per_s = [v for v in per_s if isinstance(v, (int, float))]
    if per_s:
        data["gpu"]["sm_clock_mhz_ncu_median"] = sorted(per_s)[len(per_s) // 2] / 1e6


def print_table(data: dict[str, Any]) -> None:
    print(f"{'kernel':<24} {'shape':<18} {'median us':>10} {'GFLOP/s':>9} {'regs':>5} {'smem':>6} correct")
    for e in data["kernels"]:
        t = e.get("time_ns", {}).get("median")
        print(f"{e['kernel']:<24} {'x'.join(map(str, e['shape'])):<18} "
              f"{(t / 1e3 if t else float('nan')):>10.1f} {e.get('gflops', float('nan')):>9.0f} "
              f"{e.get('registers_per_thread', '-')!s:>5} {e.get('shared_bytes_per_block', '-')!s:>6} "
              f"{e.get('correct')} {e.get('error', '')[:60]}")
    for r in data["reference"]:
        print(f"{r['name']:<24} {'x'.join(map(str, r['shape'])):<18} {r['time_ns']['median'] / 1e3:>10.1f} "
              f"{r['gflops']:>9.0f}")


if __name__ == "__main__":
    sys.exit(main())
