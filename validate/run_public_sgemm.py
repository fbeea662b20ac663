"""Time the public SGEMM ladder (siboehm/SGEMM_CUDA kernels 1-12, validate/public/siboehm_sgemm/) beside our
twins of it (validate/kernels/sgemm_*.cu) on the same GPU in the same process, at 4096^3 (and --shapes).

    python3 validate/run_public_sgemm.py --out $OUT/public-sgemm-2026-11-28.json [--shapes 4096,4096,4096]

The public kernels are built as their repository builds them (nvcc -O3, here -arch=sm_90 for the H100; the
launch settings of its src/runner.cu, "Settings for A6000", the ones its README uses), from the unchanged kernel
files and validate/public/siboehm_sgemm/instantiate.cu; our twins as validate/run_h100.py builds them (CuPy /
NVRTC, -std=c++17), with run_h100.launch_config. Each kernel: C = A B (alpha 1, beta 0) on random floats,
checked against cupy.matmul (relative error < 1e-3), then one warm-up and CUDA events around each of 7 launches
(median, min, max). Rows go to `public` (the public kernels) and `twins` (ours): not schema-1 `kernels`, so
`gpusim validate` does not read them as rows; `gpusim ladder --family sgemm` prints the comparison
(kernels_ir/sgemm_public.py).
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
import sys
import time
import traceback
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PUB = REPO / "validate" / "public" / "siboehm_sgemm"
sys.path.insert(0, str(REPO / "validate"))
sys.path.insert(0, str(REPO / "validate" / "micro"))

import common  # noqa: E402

# public kernel number -> (mangled name in the cubin, grid(M, N), block, our twin)
PUBLIC = {
    1: ("_Z11sgemm_naiveiiifPKfS0_fPf", lambda M, N: (M // 32, N // 32, 1), (32, 32, 1), "sgemm_naive"),
    2: ("_Z25sgemm_global_mem_coalesceILj32EEviiifPKfS1_fPf", lambda M, N: (M // 32, N // 32, 1), (1024, 1, 1),
        "sgemm_coalesced"),
    3: ("_Z22sgemm_shared_mem_blockILi32EEviiifPKfS1_fPf", lambda M, N: (M // 32, N // 32, 1), (1024, 1, 1),
        "sgemm_smem_blocking"),
    4: ("_Z18sgemm1DBlocktilingILi64ELi64ELi8ELi8EEviiifPKfS1_fPf", lambda M, N: (N // 64, M // 64, 1), (512, 1, 1),
        "sgemm_1d_blocktiling"),
    5: ("_Z18sgemm2DBlocktilingILi128ELi128ELi8ELi8ELi8EEviiifPKfS1_fPf", lambda M, N: (N // 128, M // 128, 1),
        (256, 1, 1), "sgemm_2d_blocktiling"),
    6: ("_Z14sgemmVectorizeILi128ELi128ELi8ELi8ELi8EEviiifPfS0_fS0_", lambda M, N: (N // 128, M // 128, 1),
        (256, 1, 1), "sgemm_vectorized"),
    7: ("_Z25sgemmResolveBankConflictsILi128ELi128ELi8ELi8ELi8EEviiifPfS0_fS0_", lambda M, N: (N // 128, M // 128, 1),
        (256, 1, 1), "sgemm_bank_linearized"),
    8: ("_Z24sgemmResolveBankExtraColILi128ELi128ELi8ELi8ELi8EEviiifPfS0_fS0_", lambda M, N: (N // 128, M // 128, 1),
        (256, 1, 1), "sgemm_bank_padded"),
    9: ("_Z14sgemmAutotunedILi128ELi128ELi16ELi8ELi8EEviiifPfS0_fS0_", lambda M, N: (N // 128, M // 128, 1),
        (256, 1, 1), "sgemm_autotuned"),
    10: ("_Z15sgemmWarptilingILi128ELi128ELi16ELi64ELi64ELi4ELi8ELi4ELi128EEviiifPfS0_fS0_",
         lambda M, N: (N // 128, M // 128, 1), (128, 1, 1), "sgemm_warptiling"),
    11: ("_Z20sgemmDoubleBufferingILi128ELi256ELi16ELi128ELi32ELi1ELi8ELi8ELi256EEviiifPfS0_fS0_",
         lambda M, N: (N // 256, M // 128, 1), (256, 1, 1), "sgemm_double_buffered"),
    12: ("_Z24runSgemmDoubleBuffering2ILi128ELi128ELi16ELi64ELi64ELi4ELi8ELi4ELi128EEviiifPfS0_fS0_",
         lambda M, N: (N // 128, M // 128, 1), (128, 1, 1), "sgemm_memcpy_async"),
}
BUILD = ["-O3", "-std=c++17", "-arch=sm_90", "-Istub", "-cubin", "-Xptxas", "-v"]


def build_public(out: Path) -> dict:
    cmd = ["nvcc", *BUILD, "-o", str(out), "instantiate.cu"]
    t0 = time.time()
    p = subprocess.run(cmd, cwd=PUB, capture_output=True, text=True, timeout=300)
    return {"command": " ".join(cmd), "returncode": p.returncode, "seconds": round(time.time() - t0, 1),
            "ptxas": [ln.strip() for ln in (p.stdout + p.stderr).splitlines() if "Used" in ln or "spill" in ln
                      or "error" in ln][-40:]}


def time_one(cp, np, k, grid, block, M, N, K, A, B, C, ref) -> dict:
    args = (np.int32(M), np.int32(N), np.int32(K), np.float32(1.0), A, B, np.float32(0.0), C)
    e: dict = {"grid": list(grid), "block": list(block)}
    try:
        e["registers_per_thread"] = int(k.attributes["num_regs"])
        C.fill(0.0)
        k(grid, block, args)
        cp.cuda.runtime.deviceSynchronize()
        err = float(cp.max(cp.abs(C - ref)) / cp.max(cp.abs(ref)))
        e["correct"], e["max_rel_err"] = bool(err < 1e-3), err
        # the check's launch above is the warm-up
        ts = common.event_times_ns(cp, partial(k, grid, block, args), n=7, warmup=False)
        e["time_ns"] = common.summarize(ts)
    except Exception:
        e["correct"] = False
        e["error"] = traceback.format_exc()[-1500:]
    return e


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--shapes", default="4096,4096,4096")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    import run_h100

    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    cubin = out.parent / "public_sgemm.cubin"
    data = common.cupy_header(cp, 1) | {
        "date": a.date,
        "source": "https://github.com/siboehm/SGEMM_CUDA @ 60cba6f9b20a198116c76f18de8047f44df8c8b8 (MIT), "
                  "src/kernels/*.cuh unchanged in validate/public/siboehm_sgemm/kernels/",
        "how": {"time": "CUDA events around one launch, one warm-up, median of 7",
                "check": "relative error against cupy.matmul below 1e-3",
                "public_build": " ".join(BUILD) + " (nvcc, as the repository's CMake Release build, for sm_90)",
                "twin_build": "CuPy RawModule (NVRTC) -std=c++17, as validate/run_h100.py"},
        "public": [], "twins": []}
    data["public_build"] = build_public(cubin)
    common.log(f"public build: rc={data['public_build']['returncode']} in {data['public_build']['seconds']} s")
    mod = cp.RawModule(path=str(cubin)) if data["public_build"]["returncode"] == 0 else None
    twins, errors = run_h100.compile_kernels(cp, [t for _, _, _, t in PUBLIC.values()])
    data["twin_compile_errors"] = errors
    for sh in a.shapes.split(";"):
        M, N, K = (int(x) for x in sh.split(","))
        A = cp.random.random((M, K), dtype=cp.float32)
        B = cp.random.random((K, N), dtype=cp.float32)
        C = cp.zeros((M, N), dtype=cp.float32)
        ref = A @ B
        for num, (mangled, grid, block, twin) in PUBLIC.items():
            e = {"kernel": f"siboehm_{num}", "number": num, "twin": twin, "shape": [M, N, K], "function": mangled}
            if mod is None:
                e.update(correct=False, error="public build failed")
            else:
                k = mod.get_function(mangled)
                if num == 3:
                    e["carveout"] = run_h100.set_carveout("sgemm_smem_blocking", k)
                e |= time_one(cp, np, k, grid(M, N), block, M, N, K, A, B, C, ref)
            data["public"].append(e)
            t = {"kernel": twin, "shape": [M, N, K], "twin": f"validate/kernels/{twin}.cu",
                 "twin_header": run_h100.twin_header(twin)}
            if twin in twins:
                g, b = run_h100.launch_config(twin, M, N, K)
                if twin == "sgemm_smem_blocking":
                    t["carveout"] = run_h100.set_carveout(twin, twins[twin])
                t |= time_one(cp, np, twins[twin], g, b, M, N, K, A, B, C, ref)
            else:
                t.update(correct=False, error=errors.get(twin, "not compiled"))
            data["twins"].append(t)
            pm = e.get("time_ns", {}).get("median", float("nan")) / 1e6
            tm = t.get("time_ns", {}).get("median", float("nan")) / 1e6
            common.log(f"{M}x{N}x{K} #{num:<2} public {pm:8.3f} ms (ok={e.get('correct')}, regs "
                       f"{e.get('registers_per_thread')})  twin {twin:<22} {tm:8.3f} ms (ok={t.get('correct')}, "
                       f"regs {t.get('registers_per_thread')})  ratio {tm / pm:.2f}")
            common.write_json(out, data)
        del A, B, C, ref
    data["nvidia_smi_after"] = common.nvidia_smi()
    common.write_json(out, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
