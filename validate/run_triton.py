"""Measure the Triton examples (examples/triton_kernels.py: vector add, fused softmax, blocked matmul) on the H100, as
`gpusim run examples/triton_kernels.py ...` predicts them (docs/your-kernel.md's commands).

    python3 validate/run_triton.py --out $OUT/triton-2026-11-28.json        # on the GPU machine (Triton, torch, ncu)

Each case: correct against torch, time as the memory-bound twins are timed (validate/run_membound.py: CUDA events
around one launch after writing a 256 MiB scratch buffer and reading a clean one, median of 30; until 2026-11-27
triton.testing.do_bench, whose per-launch figure carried 4-10 us more than ncu's gpu__time_duration), then one ncu
child run (--clock-control none) with the ladder metrics. The matmul is built with DISABLE_MMA_V3=1
(mma.sync, not wgmma), the build gpusim emulates. Schema-1 JSON: one entry per case with the gpusim --arg / --const
texts that reproduce it.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "validate" / "micro"))
sys.path.insert(0, str(REPO / "validate"))

import common  # noqa: E402

# (kernel, shape, grid, num_warps, num_stages, constexprs)
CASES = [("add", (1 << 24,), (16384, 1, 1), 4, 3, {"BLOCK_SIZE": 1024}),
         ("add", (1 << 20,), (1024, 1, 1), 4, 3, {"BLOCK_SIZE": 1024}),
         ("softmax", (4096, 4096), (4096, 1, 1), 8, 3, {"BLOCK_SIZE": 4096}),
         ("softmax", (8192, 1024), (8192, 1, 1), 4, 3, {"BLOCK_SIZE": 1024}),
         ("matmul", (4096, 4096, 4096), (32, 32, 1), 8, 3, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}),
         ("matmul", (2048, 2048, 2048), (16, 16, 1), 8, 3, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}),
         # added 2026-12-07, predicted before it was measured (validate/PREDICTED.md)
         ("layernorm", (4096, 4096), (4096, 1, 1), 8, 3, {"BLOCK_SIZE": 4096}),
         ("layernorm", (2048, 16384), (2048, 1, 1), 8, 3, {"BLOCK_SIZE": 4096})]


def gpusim_args(kernel: str, shape: tuple) -> list[str]:
    """The --arg texts of a case (as docs/your-kernel.md writes them)."""
    if kernel == "add":
        (n,) = shape
        return [f"x=f32[{n}]", f"y=f32[{n}]", f"out=f32[{n}]", f"n={n}"]
    if kernel == "softmax":
        rows, cols = shape
        return [f"out=f32[{rows * cols}]", f"inp=f32[{rows * cols}]", f"in_row_stride={cols}",
                f"out_row_stride={cols}", f"n_cols={cols}"]
    if kernel == "layernorm":
        rows, cols = shape
        return [f"x=f32[{rows * cols}]", f"y=f32[{rows * cols}]", f"w=f32[{cols}]", f"b=f32[{cols}]",
                f"stride={cols}", f"n_cols={cols}", "eps=1e-5"]
    M, N, K = shape
    return [f"a=f16[{M * K}]", f"b=f16[{K * N}]", f"c=f16[{M * N}]", f"M={M}", f"N={N}", f"K={K}",
            f"stride_am={K}", "stride_ak=1", f"stride_bk={N}", "stride_bn=1", f"stride_cm={N}", "stride_cn=1"]


def _module():
    spec = importlib.util.spec_from_file_location("triton_kernels", REPO / "examples" / "triton_kernels.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def launcher(torch, mod, case):
    kernel, shape, grid, warps, stages, consts = case
    dev = "cuda"
    if kernel == "add":
        (n,) = shape
        x, y = torch.rand(n, device=dev), torch.rand(n, device=dev)
        out = torch.full((n,), float("nan"), device=dev)

        def launch():
            mod.add[grid](x, y, out, n, num_warps=warps, num_stages=stages, **consts)

        def check():
            return float((out - (x + y)).abs().max())
    elif kernel == "softmax":
        rows, cols = shape
        inp = torch.randn(rows, cols, device=dev)
        out = torch.full_like(inp, float("nan"))

        def launch():
            mod.softmax[grid](out, inp, inp.stride(0), out.stride(0), cols, num_warps=warps, num_stages=stages,
                              **consts)

        def check():
            return float((out - torch.softmax(inp, dim=1)).abs().max())
    elif kernel == "layernorm":
        rows, cols = shape
        x = torch.randn(rows, cols, device=dev)
        w, b = torch.rand(cols, device=dev), torch.rand(cols, device=dev)
        y = torch.full_like(x, float("nan"))

        def launch():
            mod.layernorm[grid](x, y, w, b, x.stride(0), cols, 1e-5, num_warps=warps, num_stages=stages, **consts)

        def check():
            return float((y - torch.nn.functional.layer_norm(x, (cols,), w, b, 1e-5)).abs().max())
    else:
        M, N, K = shape
        a = torch.randn(M, K, device=dev, dtype=torch.float16)
        b = torch.randn(K, N, device=dev, dtype=torch.float16)
        c = torch.full((M, N), float("nan"), device=dev, dtype=torch.float16)

        def launch():
            mod.matmul[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                             c.stride(1), num_warps=warps, num_stages=stages, **consts)

        def check():
            ref = a.float() @ b.float()
            return float((c.float() - ref).norm() / ref.norm())
    return launch, check


def child(index: int) -> None:
    import torch

    mod = _module()
    launch, _ = launcher(torch, mod, CASES[index])
    launch()
    torch.cuda.synchronize()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--child", type=int, default=None)
    ap.add_argument("--only", default="", help="comma-separated kernels (add, softmax, matmul, layernorm): those cases")
    a = ap.parse_args()
    os.environ["DISABLE_MMA_V3"] = "1"  # mma.sync matmul: the build gpusim emulates
    if a.child is not None:
        child(a.child)
        return 0
    import torch
    import triton
    mod = _module()
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    props = torch.cuda.get_device_properties(0)
    import datetime

    data = {"schema": 1, "date": datetime.date.today().isoformat(),
            "gpu": {"name": props.name, "sm_count": props.multi_processor_count,
                    "nvidia_smi": common.nvidia_smi()},
            "software": {"triton": triton.__version__, "torch": torch.__version__,
                         "env": {"DISABLE_MMA_V3": "1"}},
            "how": {"time": "CUDA events around one launch after writing one 256 MiB scratch buffer and reading a "
                            "clean one (validate/run_membound.py's method), median of 30",
                    "ncu": "one launch per case in a child process, --clock-control none"},
            "kernels": []}
    scratch = torch.empty(64 << 20, dtype=torch.float32, device="cuda")  # 256 MiB: evicts the kernel's data
    clean = torch.ones(16 << 20, dtype=torch.float32, device="cuda")  # leaves clean lines (no flush write-back)
    for index, case in enumerate(CASES):
        kernel, shape, grid, warps, stages, consts = case
        if a.only and kernel not in a.only.split(","):
            continue
        e = {"case": index, "kernel": f"triton_{kernel}", "shape": list(shape), "params": {},
             "twin": "examples/triton_kernels.py",
             "grid": list(grid), "block": [32 * warps, 1, 1], "num_warps": warps, "num_stages": stages,
             "constexprs": consts, "args": gpusim_args(kernel, shape)}
        try:
            launch, check = launcher(torch, mod, case)
            launch()
            torch.cuda.synchronize()
            err = check()
            e["correct"] = bool(err < (2e-2 if kernel == "matmul" else 1e-5))
            e["max_err"] = err
            ts = []
            for _ in range(30):
                scratch.fill_(1.0)
                clean.sum()
                s, f = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                launch()
                f.record()
                f.synchronize()
                ts.append(s.elapsed_time(f) * 1e6)
            e["time_ns"] = {"median": statistics.median(ts), "min": min(ts), "max": max(ts), "n": len(ts)}
            t_us = e["time_ns"]["median"] / 1e3
            common.log(f"{kernel} {shape}: correct={e['correct']} err={err:.2e} t={t_us:.1f} us")
        except Exception:
            e["correct"] = False
            e["error"] = traceback.format_exc()[-2000:]
        data["kernels"].append(e)
        common.write_json(out, data)
    ncu = common.find_ncu()
    if ncu:
        import run_h100

        avail, _ = common.ncu_available_metrics(ncu)
        present, missing = common.split_available(list(run_h100.LADDER_METRICS) + common.stall_metrics(avail), avail)
        for e in data["kernels"]:
            i = e["case"]
            rows, _, _, dropped, log = common.run_ncu(ncu, present, f"^{e['kernel'][len('triton_'):]}$",
                                                      [*common.python_cmd(), str(Path(__file__).resolve()), "--child",
                                                       str(i)], out.parent / f"triton-ncu-{i}", timeout=240)
            e["ncu"] = common.metric_values(rows[-1] if rows else None, present)
            common.write_json(out, data)
        data["ncu"] = {"version": common.ncu_version(ncu), "missing": missing}
        common.write_json(out, data)
    for e in data["kernels"]:
        nc = e.get("ncu", {})
        t_us = e.get("time_ns", {}).get("median", float("nan")) / 1e3
        print(f"{e['kernel']:16s} {str(e['shape']):22s} ok={e.get('correct')} {t_us:9.1f} us  "
              f"inst {nc.get('smsp__inst_executed.sum')} dram rd {nc.get('dram__bytes_read.sum')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
