"""When each CTA of a GEMM twin starts and ends, and on which SM (issue "memory system at chip scale": CTAs
dispatched as slots free, waves that overlap, starts that stagger).

    python3 validate/micro/run_cta_times.py --out validate/measurements/h100/ctatimes-2026-11-25b.json

Each twin of validate/kernels/ is built as measured (CuPy/NVRTC, the same options), with its kernel wrapped: the
wrapper's thread 0 reads %globaltimer and %smid before the twin's body, and again after a __syncthreads() that
follows it, into a global array indexed by the CTA's linear index (blockIdx.x fastest). Three launches per case
on fresh inputs; the last one is recorded (times in ns from the first CTA's start), with the CUDA-event time of
every launch. Each warp's lane 0 also stamps when it leaves the body (before the closing barrier): kept for
every warp of the first 528 CTAs, as quantiles for the others. The L2's hit rate and the DRAM bytes of a GEMM
depend on which CTAs (and warps) run together: this file says how far the H100's drift from the lockstep waves
the L2 model follows.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "validate"))

import common  # noqa: E402

MAX_CTAS = 1 << 16
MAX_WARPS = 1 << 20
WARP_CTAS = 528  # CTAs (the first two waves at two per SM) whose every warp's end is kept; the others: quantiles

PRELUDE = r"""
__device__ unsigned long long gpusim_cta_t0[%(n)d];
__device__ unsigned long long gpusim_cta_t1[%(n)d];
__device__ unsigned int gpusim_cta_sm[%(n)d];
__device__ unsigned long long gpusim_warp_t1[%(w)d];
__device__ __forceinline__ unsigned long long gpusim_now() {
  unsigned long long t; asm volatile("mov.u64 %%0, %%%%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ unsigned int gpusim_lin() {
  return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); }
"""


def instrument(src: str, name: str) -> str:
    """The twin's source with kernel ``name`` renamed to a device function and a wrapper kernel of that name that
    times it."""
    pat = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(__launch_bounds__\s*\([^)]*\)\s*)?' + name + r"\s*\(")
    m = pat.search(src)
    if not m:
        raise ValueError(f"kernel {name} not found")
    depth, i = 1, m.end()
    while depth:
        depth += {"(": 1, ")": -1}.get(src[i], 0)
        i += 1
    params = src[m.end():i - 1]
    names = [re.findall(r"[A-Za-z_]\w*", p)[-1] for p in params.split(",") if p.strip()]
    bounds = m.group(1) or ""
    body = src[:m.start()] + f"__device__ __forceinline__ void {name}_gpusim_body(" + src[m.end():]
    wrapper = f"""
extern "C" __global__ void {bounds}{name}({params}) {{
  const bool lead = threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
  if (lead) {{ unsigned int s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    gpusim_cta_t0[gpusim_lin()] = gpusim_now(); gpusim_cta_sm[gpusim_lin()] = s; }}
  {name}_gpusim_body({", ".join(names)});
  {{ const unsigned int tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned int wpc = (blockDim.x * blockDim.y * blockDim.z + 31) / 32;
    if ((tid & 31) == 0 && gpusim_lin() * wpc + tid / 32 < {MAX_WARPS}u)
      gpusim_warp_t1[gpusim_lin() * wpc + tid / 32] = gpusim_now(); }}
  __syncthreads();
  if (lead) gpusim_cta_t1[gpusim_lin()] = gpusim_now();
}}
"""
    return PRELUDE % {"n": MAX_CTAS, "w": MAX_WARPS} + body + wrapper


FP32 = [("sgemm_naive", (4096, 4096, 4096)), ("sgemm_coalesced", (4096, 4096, 4096)),
        ("sgemm_coalesced", (3072, 1536, 2048)), ("sgemm_smem_blocking", (4096, 4096, 4096)),
        ("sgemm_1d_blocktiling", (4096, 4096, 4096)), ("sgemm_2d_blocktiling", (4096, 4096, 4096)),
        ("sgemm_warptiling", (4096, 4096, 4096)), ("sgemm_autotuned", (3072, 1536, 2048)),
        ("sgemm_autotuned", (4096, 4096, 4096)), ("sgemm_2d_blocktiling", (3072, 1536, 2048))]
MMA = [("hgemm_mma", (4096, 4096, 4096), {}), ("hgemm_mma_pipelined", (4096, 4096, 4096), {}),
       ("hgemm_mma_pipelined", (4096, 4096, 4096), {"stages": 2}),
       ("hgemm_mma_pipelined", (4096, 4096, 4096), {"stages": 4}),
       ("hgemm_mma_pipelined", (2048, 8192, 4096), {}), ("hgemm_mma_swizzled", (4096, 4096, 4096), {})]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np
    import run_h100 as h
    import run_tc_sm80 as t
    import torch

    res = common.cupy_header(cp, "ctatimes-1") | {"method": __doc__.strip().splitlines()[3:], "results": []}
    stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)

    def record(mod, name, shape, params, grid, block, launch_i):
        n = grid[0] * grid[1] * grid[2]
        ms = []
        for i in range(3):
            ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            ev0.record()
            launch_i(i)
            ev1.record()
            torch.cuda.synchronize()
            ms.append(ev0.elapsed_time(ev1))
        get = lambda sym, dt: cp.ndarray((n,), dt, mod.get_global(sym))[:n].get().astype(np.int64)  # noqa: E731
        t0, t1, sm = get("gpusim_cta_t0", cp.uint64), get("gpusim_cta_t1", cp.uint64), get("gpusim_cta_sm", cp.uint32)
        wpc = -(-block[0] * block[1] * block[2] // 32)
        wt = cp.ndarray((n * wpc,), cp.uint64, mod.get_global("gpusim_warp_t1"))[:min(n * wpc, MAX_WARPS)].get()
        wt = wt.astype(np.int64).reshape(-1, wpc) - t0[: len(wt) // wpc, None]  # each warp's end from its CTA's start
        base = int(t0.min())
        row = {"kernel": name, "shape": list(shape), "params": params, "grid": list(grid), "block": list(block),
               "event_us": [round(x * 1000, 1) for x in ms], "span_us": round((int(t1.max()) - base) / 1000, 1),
               "start_ns": (t0 - base).tolist(), "end_ns": (t1 - base).tolist(), "sm": sm.tolist(),
               "warp_end_ns": wt[:WARP_CTAS].tolist(),
               "warp_end_quantiles_ns": np.quantile(wt, [0, 0.25, 0.5, 0.75, 1], axis=1).T.astype(np.int64).tolist()}
        dur = (t1 - t0) / 1000
        common.log(f"{name} {shape} {params}: events {row['event_us']} us, span {row['span_us']} us, CTA "
                   f"{np.median(dur):.1f} us median ({dur.min():.1f}..{dur.max():.1f}), SMs {len(set(sm.tolist()))}")
        res["results"].append(row)

    for name, shape in FP32:
        try:
            src = instrument((h.KDIR / f"{name}.cu").read_text(), name)
            mod = cp.RawModule(code=src, options=("-std=c++17",))
            k = mod.get_function(name)
            M, N, K = shape
            g = torch.Generator(device="cuda")
            g.manual_seed(1)
            dims = ((M, K), (K, N), (M, N))
            sets = [tuple(cp.asarray(torch.randn(r, c, device="cuda", generator=g)) for r, c in dims) for _ in range(3)]
            grid, block = h.launch_config(name, M, N, K)

            def launch_i(i, k=k, sets=sets, grid=grid, block=block, M=M, N=N, K=K):
                A, B, C = sets[i]
                with stream:
                    k(grid, block, (np.int32(M), np.int32(N), np.int32(K), np.float32(1), A, B, np.float32(0), C))

            record(mod, name, shape, {}, grid, block, launch_i)
        except Exception as e:  # one case failing keeps the others
            common.log(f"{name} {shape}: {type(e).__name__}: {e}")
            res["results"].append({"kernel": name, "shape": list(shape), "error": f"{type(e).__name__}: {e}"[:500]})
    for name, shape, over in MMA:
        try:
            knobs = dict(t.GEMM_DEFAULTS[name], **over)
            case = {"kind": "gemm", "kernel": name, "shape": list(shape), "params": over, "knobs": knobs,
                    "defines": {"STAGES": knobs["stages"], "SWIZZLE": t.SWIZZLE_BYTES[knobs["swizzle"]]}}
            mod = cp.RawModule(code=instrument(t.load_source(t.twin_file(case)), name), options=t.options(case))
            f = mod.get_function(name)
            grid, block, smem = t.launch_geometry(case)
            if smem > 48 * 1024:
                f.max_dynamic_shared_size_bytes = smem
            sets = []
            for s in range(3):
                A, B = t.make_inputs(torch, case, s + 1)
                C = torch.empty(shape[0] * shape[1], device="cuda", dtype=torch.bfloat16)
                sets.append(tuple(t.cpv(cp, torch, x) for x in (A, B, C)))

            def launch_i(i, f=f, case=case, sets=sets):
                t.launch(cp, np, f, case, sets[i], stream)

            record(mod, name, shape, over, grid, block, launch_i)
        except Exception as e:
            common.log(f"{name} {shape} {over}: {type(e).__name__}: {e}")
            res["results"].append({"kernel": name, "shape": list(shape), "params": over,
                                   "error": f"{type(e).__name__}: {e}"[:500]})
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(res, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
