"""Measure the FP32 rungs' tile knobs on the H100: the autotune sweeps `gpusim validate` checks.

    python3 validate/run_fp32_knobs.py --out validate/measurements/h100/fp32knobs-2026-11-24.json

sgemm_1d_blocktiling and sgemm_2d_blocktiling (validate/kernels/, tile sizes as -D defines) at 4096^3, each tile
configuration the IR accepts: C = A B (alpha 1, beta 0) on random floats, checked against CuPy's matmul (relative
error < 1e-3), timed with CUDA events around single launches (one warm-up, median of 7), a launch per case.
Writes schema 1 (the format `gpusim validate` reads); the default tiles are measured too, as every sweep's base.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import traceback
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "validate" / "micro"))

import common  # noqa: E402

SHAPE = (4096, 4096, 4096)
DEFAULTS = {"sgemm_1d_blocktiling": {"BM": 64, "BN": 64, "BK": 8, "TM": 8},
            "sgemm_2d_blocktiling": {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}}
CASES = [("sgemm_1d_blocktiling", p) for p in ({}, {"BM": 128, "BN": 128, "TM": 16}, {"BM": 32, "BN": 32, "TM": 4})] + \
    [("sgemm_2d_blocktiling", p) for p in ({}, {"BK": 16}, {"BM": 64}, {"BN": 64}, {"BM": 64, "BN": 64},
                                           {"TM": 4, "TN": 4})]


def threads(name: str, t: dict) -> int:
    if name == "sgemm_1d_blocktiling":
        return t["BM"] * t["BN"] // t["TM"]
    return t["BM"] * t["BN"] // (t["TM"] * t["TN"])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--shape", default=",".join(map(str, SHAPE)), help="M,N,K (default 4096,4096,4096)")
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    out = Path(a.out)
    data = common.cupy_header(cp, 1) | {
            "how": {"time": "CUDA events around one launch, one warm-up, median of 7",
                    "check": "relative error against cupy.matmul below 1e-3"}, "kernels": []}
    M, N, K = (int(x) for x in a.shape.split(","))
    A = cp.random.random((M, K), dtype=cp.float32)
    B = cp.random.random((K, N), dtype=cp.float32)
    C = cp.zeros((M, N), dtype=cp.float32)
    ref = A @ B
    for name, params in CASES:
        t = DEFAULTS[name] | params
        e = {"kernel": name, "shape": [M, N, K], "params": params, "twin": f"validate/kernels/{name}.cu"}
        try:
            src = (REPO / "validate" / "kernels" / f"{name}.cu").read_text()
            mod = cp.RawModule(code=src, options=("-std=c++17", *(f"-D{k}={v}" for k, v in t.items())))
            k = mod.get_function(name)
            e["registers_per_thread"] = int(k.attributes["num_regs"])
            grid, block = (N // t["BN"], M // t["BM"]), (threads(name, t),)
            args = (np.int32(M), np.int32(N), np.int32(K), np.float32(1.0), A, B, np.float32(0.0), C)
            C.fill(0.0)  # beta = 0 still reads C (beta * C): zeros, and an unwritten element fails the check
            k(grid, block, args)
            cp.cuda.runtime.deviceSynchronize()
            err = float(cp.max(cp.abs(C - ref)) / cp.max(cp.abs(ref)))
            e["correct"] = bool(err < 1e-3)
            e["max_rel_err"] = err
            # the check's launch above is the warm-up
            ts = common.event_times_ns(cp, partial(k, grid, block, args), n=7, warmup=False)
            e["time_ns"] = common.summarize(ts)
            common.log(f"{name} {params}: correct={e['correct']} t={statistics.median(ts) / 1e6:.3f} ms")
        except Exception:
            e["correct"] = False
            e["error"] = traceback.format_exc()[-2000:]
        data["kernels"].append(e)
        common.write_json(out, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
