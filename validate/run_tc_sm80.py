"""Check, time and profile the mma.sync (sm_80-instruction) twins on a real H100: the GEMM family
(validate/kernels/hgemm_mma*.cu) and FlashAttention-2 (validate/kernels/fa2.cu); designs in
validate/kernels/TC_DESIGNS.md.

    PYTHONUNBUFFERED=1 python3 validate/run_tc_sm80.py --out $OUT/mma-2026-11-22.json [--quick]

One invocation: compile every (kernel, knobs) variant with CuPy/NVRTC (the .cuh a twin includes is inlined);
per case check the output against a torch fp32 reference from the same bf16 inputs (output poisoned with NaN,
NaN canary after it, a second launch must give the same bits), time correct cases with CUDA events (input
sets rotated when one set fits in L2), time torch's own bf16 kernels (cuBLAS matmul, SDPA FLASH backend) as
reference rows, then profile each correct case once under ncu (one ncu process per case, --clock-control none,
-k ^name$, two warm-up launches skipped with --launch-skip 2, -c 1). ``--quick``: small extra shapes, checks of
every case, 5 timed launches of the full-size ones, no references, no ncu.

Output: schema 1 as validate/measurements/h100/2026-11-22.json (see ``method`` in the file).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
KDIR = REPO / "validate" / "kernels"
sys.path.insert(0, str(REPO / "validate"))
sys.path.insert(0, str(REPO / "validate" / "micro"))

import common  # noqa: E402

T_START = time.time()

# ------------------------------------------------------------------------------------------------ cases
GEMM_DEFAULTS = {
    "hgemm_mma": {"stages": 1, "swizzle": "none"},
    "hgemm_mma_swizzled": {"stages": 1, "swizzle": "128B"},
    "hgemm_mma_pipelined": {"stages": 3, "swizzle": "128B"},
}
SWIZZLE_BYTES = {"none": 0, "32B": 32, "64B": 64, "128B": 128}
GEMM_SHAPES = [(4096, 4096, 4096), (2048, 8192, 4096), (512, 512, 512)]
GEMM_QUICK_SHAPES = [(256, 384, 192), (128, 128, 64)]
FA_SHAPES = [((4, 16, 4096, 128), (0, 1)), ((8, 32, 2048, 64), (0, 1)), ((2, 16, 1024, 128), (0,))]
FA_QUICK_SHAPES = [((1, 2, 256, 64), (0, 1)), ((2, 3, 384, 128), (0, 1))]
REL_TOL = 2e-2
PAD = 4096  # NaN canary elements after the output
L2_BYTES_NOMINAL = 50 * 1024 * 1024
ROTATE_BYTES = 200 * 1024 * 1024
NCU_WARMUP = 2

TC_METRICS = [
    "sm__inst_executed_pipe_tensor_op_hmma.sum",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_tensor_op_gmma.sum",
    "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
    "smsp__inst_executed_op_ldsm.sum",
    "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum",
    # the SASS-counted ldsm twins that validate/micro used (present on this ncu), in case the two above are not
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
    "smsp__inst_executed_op_ldgsts.sum",
    # local memory (register spills: fa2 at bc=128 spills 520 B a thread): requests, sectors and L1 hit rates
    "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    "l1tex__t_sector_pipe_lsu_mem_local_op_ld_hit_rate.pct",
    "l1tex__t_sector_pipe_lsu_mem_local_op_st_hit_rate.pct",
]


def fa_defaults(d: int) -> dict[str, Any]:
    return {"br": 128, "bc": 128 if d == 64 else 64, "causal": 0, "swizzle": "128B"}


def build_cases(quick: bool, listed: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The standard cases, or (``listed``: --cases FILE) exactly the listed {kernel, shape, params}."""
    cases: list[dict[str, Any]] = []

    def gemm(name: str, shape: tuple, **over: Any) -> None:
        knobs = dict(GEMM_DEFAULTS[name], **over)
        cases.append({"kind": "gemm", "kernel": name, "shape": list(shape), "params": dict(over), "knobs": knobs,
                      "defines": {"STAGES": knobs["stages"], "SWIZZLE": SWIZZLE_BYTES[knobs["swizzle"]]}})

    def fa(shape: tuple, causal: int, **tiles: int) -> None:
        d = shape[3]
        knobs = dict(fa_defaults(d), causal=causal, **tiles)
        params = dict(tiles, **({"causal": 1} if causal else {}))
        defines = {"HEAD_DIM": d, "CAUSAL": causal}
        defines.update({k.upper(): v for k, v in tiles.items()})  # -DBR / -DBC
        cases.append({"kind": "fa2", "kernel": "fa2", "shape": list(shape), "params": params, "knobs": knobs,
                      "defines": defines})

    if listed is not None:
        for c in listed:
            p = dict(c.get("params") or {})
            if c["kernel"] == "fa2":
                fa(tuple(c["shape"]), int(p.pop("causal", 0)), **{k: int(v) for k, v in p.items()})
            else:
                gemm(c["kernel"], tuple(c["shape"]), **p)
        for c in cases:
            c["full_size"] = True
        return cases

    for shape in GEMM_SHAPES:
        for name in GEMM_DEFAULTS:
            gemm(name, shape)
    big = GEMM_SHAPES[0]
    for sw in ("32B", "64B", "128B"):
        gemm("hgemm_mma", big, swizzle=sw)
    for st in (2, 4):
        gemm("hgemm_mma_pipelined", big, stages=st)
    for shape, causals in FA_SHAPES:
        for c in causals:
            fa(shape, c)
    if quick:
        for shape in GEMM_QUICK_SHAPES:
            for name in GEMM_DEFAULTS:
                gemm(name, shape)
            for sw in ("32B", "64B"):
                gemm("hgemm_mma", shape, swizzle=sw)
            for st in (2, 4):
                gemm("hgemm_mma_pipelined", shape, stages=st)
        for shape, causals in FA_QUICK_SHAPES:
            for c in causals:
                fa(shape, c)
    for c in cases:
        c["full_size"] = (tuple(c["shape"]) in GEMM_SHAPES) if c["kind"] == "gemm" else any(
            tuple(c["shape"]) == s for s, _ in FA_SHAPES)
    return cases


def flops(case: dict[str, Any]) -> float:
    if case["kind"] == "gemm":
        M, N, K = case["shape"]
        return 2.0 * M * N * K
    B, H, N, d = case["shape"]
    f = 4.0 * B * H * N * N * d
    return f / 2 if case["knobs"]["causal"] else f


def launch_geometry(case: dict[str, Any]) -> tuple[tuple[int, int, int], tuple[int, int, int], int]:
    """(grid, block, dynamic shared bytes) as TC_DESIGNS.md specifies."""
    k = case["knobs"]
    if case["kind"] == "gemm":
        M, N, K = case["shape"]
        return (N // 128, M // 128, 1), (256, 1, 1), k["stages"] * 32768
    B, H, N, d = case["shape"]
    return (N // k["br"], H, B), (128, 1, 1), (k["br"] + 2 * k["bc"]) * d * 2


def tiles_ok(case: dict[str, Any]) -> bool:
    if case["kind"] == "gemm":
        M, N, K = case["shape"]
        return M % 128 == 0 and N % 128 == 0 and K % 64 == 0
    B, H, N, d = case["shape"]
    k = case["knobs"]
    return N % k["br"] == 0 and N % k["bc"] == 0 and d in (64, 128)


def twin_file(case: dict[str, Any]) -> Path:
    return KDIR / f"{case['kernel']}.cu"


def load_source(path: Path) -> str:
    """The twin's source with its `#include "x.cuh"` lines replaced by the headers' text (NVRTC then needs no
    include path, and CuPy's on-disk cache key covers the header too)."""
    def sub(m: re.Match) -> str:
        return load_source(path.parent / m.group(1))

    return re.sub(r'^\s*#include\s+"([^"]+)"\s*$', sub, path.read_text(), flags=re.M)


def options(case: dict[str, Any]) -> tuple[str, ...]:
    return ("-std=c++17", *(f"-D{k}={v}" for k, v in case["defines"].items()))


class Compiler:
    def __init__(self, cp: Any) -> None:
        self.cp = cp
        self.cache: dict[tuple, Any] = {}
        self.errors: dict[tuple, str] = {}

    def get(self, case: dict[str, Any]) -> Any:
        key = (case["kernel"], options(case))
        if key in self.cache:
            return self.cache[key]
        if key in self.errors:
            raise RuntimeError(self.errors[key])
        try:
            if os.environ.get("GPUSIM_NVRTC_CUBIN"):
                # the cubin NVRTC gives for the device's SASS (what the front-end builds and predicts), loaded as it
                # is: the binary a row measures is then the one `gpusim validate --frontend` emulates
                from measured_binary import nvrtc_compile
                from cupy_backends.cuda.libs import nvrtc

                cc = "".join(map(str, self.cp.cuda.Device().compute_capability))
                cubin = nvrtc_compile(nvrtc, load_source(twin_file(case)), [*options(case), f"-arch=sm_{cc}"],
                                      "cubin")
                path = Path(tempfile.mkdtemp()) / "twin.cubin"
                path.write_bytes(cubin)
                mod = self.cp.RawModule(path=str(path))
            else:
                mod = self.cp.RawModule(code=load_source(twin_file(case)), options=options(case))
            f = mod.get_function(case["kernel"])
            f.attributes  # noqa: B018  (compile and load now)
            _, _, smem = launch_geometry(case)
            if smem > 48 * 1024:
                f.max_dynamic_shared_size_bytes = smem
            self.cache[key] = f
            return f
        except Exception as e:
            self.errors[key] = f"{type(e).__name__}: {e}"[:3000]
            raise


def launch(cp: Any, np: Any, f: Any, case: dict[str, Any], bufs: tuple, stream: Any) -> None:
    grid, block, smem = launch_geometry(case)
    if case["kind"] == "gemm":
        M, N, K = case["shape"]
        args = (np.int32(M), np.int32(N), np.int32(K), *bufs)
    else:
        B, H, N, d = case["shape"]
        args = (np.int32(B), np.int32(H), np.int32(N), *bufs)
    with stream:
        f(grid, block, args, shared_mem=smem)


# ------------------------------------------------------------------------------------------------ torch side
def cpv(cp: Any, torch: Any, t: Any) -> Any:
    """A CuPy view (int16) of a contiguous bf16 torch tensor, for passing its pointer to a RawKernel."""
    return cp.asarray(t.view(torch.int16))


def make_inputs(torch: Any, case: dict[str, Any], seed: int) -> tuple:
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    bf = torch.bfloat16
    if case["kind"] == "gemm":
        M, N, K = case["shape"]
        A = torch.randn(M, K, device="cuda", generator=g).to(bf)
        B = torch.randn(N, K, device="cuda", generator=g).to(bf)
        return A, B
    B_, H, N, d = case["shape"]
    return tuple(torch.randn(B_, H, N, d, device="cuda", generator=g).to(bf) for _ in range(3))


def out_numel(case: dict[str, Any]) -> int:
    if case["kind"] == "gemm":
        M, N, K = case["shape"]
        return M * N
    return math.prod(case["shape"])


def reference(torch: Any, case: dict[str, Any], ins: tuple) -> Any:
    if case["kind"] == "gemm":
        A, B = ins
        return torch.matmul(A.float(), B.float().T)
    q, k, v = ins
    return torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                                            is_causal=bool(case["knobs"]["causal"]))


def check(cp: Any, np: Any, torch: Any, f: Any, case: dict[str, Any], seed: int, stream: Any) -> dict[str, Any]:
    ins = make_inputs(torch, case, seed)
    n = out_numel(case)
    outs = []
    canary = True
    for _ in range(2):  # two launches on fresh poisoned buffers: results must be bitwise equal
        buf = torch.full((n + PAD,), float("nan"), device="cuda", dtype=torch.bfloat16)
        torch.cuda.synchronize()
        launch(cp, np, f, case, tuple(cpv(cp, torch, t) for t in ins) + (cpv(cp, torch, buf),), stream)
        torch.cuda.synchronize()
        canary = canary and bool(torch.isnan(buf[n:]).all())
        outs.append(buf[:n])
    ref = reference(torch, case, ins).reshape(-1).double()
    out = outs[0].double()
    finite = bool(torch.isfinite(out).all())
    rel = float(torch.linalg.vector_norm(out - ref) / torch.linalg.vector_norm(ref))
    same = bool(torch.equal(outs[0].view(torch.int16), outs[1].view(torch.int16)))
    max_abs = float((out - ref).abs().max()) if finite else None
    ok = finite and canary and same and math.isfinite(rel) and rel < REL_TOL
    return {"correct": ok, "rel_err": rel if math.isfinite(rel) else None,
            "checks": {"finite": finite, "canary_intact": canary, "repeat_bitwise_equal": same,
                       "max_abs_err": max_abs, "ref_rms": float(ref.pow(2).mean().sqrt()), "seed": seed,
                       "reference": ("torch.matmul(A.float(), B.float().T)" if case["kind"] == "gemm" else
                                     "F.scaled_dot_product_attention(q.float(), k.float(), v.float(), "
                                     f"is_causal={bool(case['knobs']['causal'])})")}}


def input_sets(torch: Any, case: dict[str, Any], seed: int) -> list[tuple]:
    """Enough (inputs..., output) sets that one pass over them is >= ~2x L2 (one set if a set is already)."""
    n_out = out_numel(case)
    ins = make_inputs(torch, case, seed)
    set_bytes = 2 * (sum(t.numel() for t in ins) + n_out)
    n = 1 if set_bytes > 2 * L2_BYTES_NOMINAL else min(64, math.ceil(ROTATE_BYTES / set_bytes))
    sets = []
    for i in range(n):
        if i:
            ins = make_inputs(torch, case, seed + i)
        out = torch.empty(n_out, device="cuda", dtype=torch.bfloat16)
        sets.append((*ins, out))
    return sets


SPIN_SRC = r"""
extern "C" __global__ void spin_wait(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
}
"""


class Timer:
    def __init__(self, cp: Any, torch: Any, np: Any, stream: Any) -> None:
        self.torch, self.np, self.stream = torch, np, stream
        self.spin_k = cp.RawModule(code=SPIN_SRC, options=("-std=c++17",)).get_function("spin_wait")

    def spin(self, cycles: int = 20_000_000) -> None:
        with self.stream:
            self.spin_k((1,), (1,), (self.np.int64(cycles),))

    def time(self, launch_i: Any, quick: bool = False) -> dict[str, float]:
        """>= 3 warm-ups, then per-launch CUDA-event times of back-to-back launches queued behind a ~10 ms spin;
        median of 20 (launches > 5 ms) or 50; quick: 5."""
        torch = self.torch
        for i in range(3):
            launch_i(i)
        torch.cuda.synchronize()
        if quick:
            return common.summarize(common.time_launches(torch, launch_i, 5, self.spin))
        est = common.time_launches(torch, launch_i, 3, self.spin)
        n = 20 if min(est) > 5e6 else 50
        return common.summarize(common.time_launches(torch, launch_i, n, self.spin))


# ------------------------------------------------------------------------------------------------ ncu
def ncu_metric_list(available: set[str]) -> tuple[list[str], list[str], list[str]]:
    import run_h100

    stalls = common.stall_metrics(available) or [
        f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in run_h100.STALL_REASONS]
    wanted = list(dict.fromkeys(run_h100.LADDER_METRICS + TC_METRICS + stalls))
    present, missing = common.split_available(wanted, available)
    return wanted, present, missing


def ncu_case(ncu: str, metrics: list[str], idx: int, case: dict[str, Any], quick: bool, timeout: float,
             logf: Any, cases_file: str | None = None) -> tuple[dict[str, Any] | None, dict[str, str], list[str], str]:
    """Profile case `idx` (of ``cases_file``'s list where given) in a child process: (row or None, units, metrics
    dropped, log text)."""
    metrics = list(metrics)
    dropped: list[str] = []
    text = ""
    for _attempt in range(3):
        cmd = [ncu, "--clock-control", "none", "--target-processes", "all", "-k", f"regex:^{case['kernel']}$",
               "--launch-skip", str(NCU_WARMUP), "--launch-count", "1", "--metrics", ",".join(metrics),
               "--csv", "--page", "raw", "--print-units", "base",
               *common.python_cmd(), str(Path(__file__).resolve()), "--ncu-case", str(idx)]
        if quick:
            cmd.append("--quick")
        if cases_file:  # the child indexes the same list as the parent
            cmd += ["--cases", cases_file]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            out, err, rc = p.stdout or "", p.stderr or "", p.returncode
        except subprocess.TimeoutExpired as e:
            out, err, rc = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (
                e.stdout or ""), "timeout", -1
        text += f"$ {' '.join(cmd[:12])} ... case {idx}\nrc={rc}\n" + "\n".join(
            ln for ln in (out + "\n" + err).splitlines() if not ln.startswith('"'))[-3000:] + "\n"
        rows, units = common.parse_ncu_raw_csv(out)
        if rows:
            return rows[0], units, dropped, text
        bad = [m for m in metrics if m in (out + err)]
        if rc != 0 and bad and re.search(r"(?i)(not found|invalid|unknown|failed to find)", out + err):
            for m in bad:
                metrics.remove(m)
                dropped.append(m)
            logf(f"ncu: dropped {bad}, retrying")
            continue
        break
    return None, {}, dropped, text


def ncu_child(idx: int, quick: bool, cases_file: str | None = None) -> int:
    """Launch case idx NCU_WARMUP + 1 times on random inputs (CuPy only: no torch import, quick start)."""
    import cupy as cp
    import numpy as np

    case = build_cases(quick, json.loads(Path(cases_file).read_text()) if cases_file else None)[idx]
    f = Compiler(cp).get(case)
    rs = cp.random.RandomState(4321 + idx)

    def bf16(shape: tuple) -> Any:  # bf16 bits = the high half of fp32 (truncation is fine for random data)
        x = rs.standard_normal(shape, dtype=cp.float32)
        return (x.view(cp.uint32) >> 16).astype(cp.uint16)

    if case["kind"] == "gemm":
        M, N, K = case["shape"]
        bufs = (bf16((M, K)), bf16((N, K)), cp.empty((M, N), dtype=cp.uint16))
    else:
        shp = tuple(case["shape"])
        bufs = (bf16(shp), bf16(shp), bf16(shp), cp.empty(shp, dtype=cp.uint16))
    cp.cuda.runtime.deviceSynchronize()
    stream = cp.cuda.Stream.null
    for _ in range(NCU_WARMUP + 1):
        launch(cp, np, f, case, bufs, stream)
    cp.cuda.runtime.deviceSynchronize()
    return 0


# ------------------------------------------------------------------------------------------------ main
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(REPO / "validate" / "measurements" / "h100" /
                                         f"mma-{datetime.date.today().isoformat()}.json"))
    ap.add_argument("--quick", action="store_true", help="small shapes too; checks, 5 timed launches, no ncu")
    ap.add_argument("--skip-ncu", action="store_true")
    ap.add_argument("--only", default="", help="regex on 'kernel shape params' to select cases")
    ap.add_argument("--cases", default=None, help="JSON file: a list of {kernel, shape, params} measured instead "
                                                  "of the standard cases (knob sweeps, validate/run_knobs.sh)")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    ap.add_argument("--deadline", type=float, default=540.0,
                    help="seconds after start past which no further ncu child is started")
    ap.add_argument("--ncu-timeout", type=float, default=120.0, help="per case")
    ap.add_argument("--ncu-case", type=int, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.ncu_case is not None:
        return ncu_child(a.ncu_case, a.quick, a.cases)

    import cupy as cp
    import numpy as np
    import torch

    import run_h100

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    out_path = Path(a.out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    cases = build_cases(a.quick, json.loads(Path(a.cases).read_text()) if a.cases else None)
    sel = [i for i, c in enumerate(cases)
           if not a.only or re.search(a.only, f"{c['kernel']} {c['shape']} {c['params']}")]

    ncu = None if a.quick or a.skip_ncu else common.find_ncu()
    query = None
    if ncu:  # the metric list query takes ~30 s: run it while compiling and timing
        qf = tempfile.NamedTemporaryFile("w+", suffix=".txt", delete=False)
        query = (subprocess.Popen([ncu, "--query-metrics", "--query-metrics-mode", "all"], stdout=qf,
                                  stderr=subprocess.STDOUT, text=True), qf)
    gpu = run_h100.gpu_info(cp, torch, ncu or common.find_ncu())
    common.log(f"GPU: {gpu['name']}, {gpu['sm_count']} SMs, nvrtc {gpu['nvrtc']}, cupy {gpu['cupy']}, "
               f"torch {gpu['torch']}, ncu {gpu['ncu']}; {len(sel)} cases")

    comp = Compiler(cp)
    t0 = time.time()
    for i in sel:
        try:
            comp.get(cases[i])
        except Exception:
            pass
    common.log(f"compiled {len(comp.cache)} variants in {time.time() - t0:.1f} s; "
               f"errors: {[(k[0], k[1][1:]) for k in comp.errors]}")
    for k, e in comp.errors.items():
        print(f"COMPILE ERROR {k}: {e[:1500]}", flush=True)

    stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
    timer = Timer(cp, torch, np, stream)
    entries: list[dict[str, Any]] = []
    for i in sel:
        c = cases[i]
        grid, block, smem = launch_geometry(c)
        e: dict[str, Any] = {"kernel": c["kernel"], "shape": c["shape"], "params": c["params"], "knobs": c["knobs"],
                             "grid": list(grid), "block": list(block), "cluster": None,
                             "twin": f"validate/kernels/{c['kernel']}.cu",
                             "twin_header": twin_file(c).read_text().splitlines()[0],
                             "defines": c["defines"], "flops": flops(c), "case_index": i}
        if c["kind"] == "fa2":
            e["shape_names"] = ["B", "H", "N", "d"]
        try:
            f = comp.get(c)
        except Exception as ex:
            e.update(correct=False, error="compile: " + str(ex)[:2000])
            entries.append(e)
            continue
        at = f.attributes
        e["registers_per_thread"] = int(at.get("num_regs", 0))
        e["static_shared_bytes"] = int(at.get("shared_size_bytes", 0))
        e["dynamic_shared_bytes"] = smem
        e["shared_bytes_per_block"] = e["static_shared_bytes"] + smem
        e["local_bytes_per_thread"] = int(at.get("local_size_bytes", 0))
        e["binary_version"] = int(at.get("binary_version", 0))
        if not tiles_ok(c):
            e.update(correct=False, error="shape does not tile")
            entries.append(e)
            continue
        try:
            chk = check(cp, np, torch, f, c, seed=17 + 101 * i, stream=stream)
            e.update(correct=chk["correct"], rel_err=chk["rel_err"], checks=chk["checks"])
            if chk["correct"] and (c["full_size"] or not a.quick):
                sets = input_sets(torch, c, seed=5000 + 37 * i)
                views = [tuple(cpv(cp, torch, t) for t in s) for s in sets]

                def launch_i(j: int, f: Any = f, c: dict = c, views: list = views) -> None:
                    launch(cp, np, f, c, views[j % len(views)], stream)

                e["time_ns"] = timer.time(launch_i, quick=a.quick)
                e["timing"] = {"input_sets": len(sets)}
                e["tflops"] = e["flops"] / e["time_ns"]["median"] / 1e3
                del sets, views
        except Exception:
            e.update(correct=False, error=traceback.format_exc()[-2500:])
        torch.cuda.empty_cache()
        common.log(f"  {c['kernel']:<20} {'x'.join(map(str, c['shape'])):<16} {str(c['params']):<28} "
                   f"regs={e.get('registers_per_thread')} correct={e.get('correct')} rel={e.get('rel_err')} "
                   f"t={e.get('time_ns', {}).get('median', float('nan')) / 1e3:.1f} us "
                   f"{e.get('tflops', float('nan')):.1f} TFLOP/s")
        entries.append(e)

    reference_rows: list[dict[str, Any]] = []
    if not a.quick:
        reference_rows = torch_references(torch, timer, cases, sel)
    clk = run_h100.measured_clock(cp, np)
    gpu["sm_clock_mhz_measured"] = clk["mhz"]
    gpu["sm_clock_measured_how"] = f"clock64 / %globaltimer over {clk['cycles']} cycles of a spinning thread"
    gpu["nvidia_smi_after_timing"] = common.nvidia_smi()
    data: dict[str, Any] = {"schema": 1, "date": a.date, "gpu": gpu, "kernels": entries, "reference": reference_rows,
                            "quick": a.quick}
    data["method"] = method_text(a)
    data["ncu_units"], data["ncu_missing"] = {}, []
    common.write_json(out_path, data)
    common.log(f"wrote {out_path} (before ncu), {time.time() - T_START:.0f} s since start")

    if ncu:
        run_ncu_pass(a, ncu, query, data, cases, out_path)
        common.write_json(out_path, data)
        common.log(f"wrote {out_path}")
    print_table(data)
    return 0


def torch_references(torch: Any, timer: Timer, cases: list[dict[str, Any]], sel: list[int]) -> list[dict]:
    rows = []
    F = torch.nn.functional
    done = set()
    for i in sel:
        c = cases[i]
        key = (c["kind"], tuple(c["shape"]), c["knobs"].get("causal", 0))
        if key in done or not c["full_size"]:
            continue
        done.add(key)
        try:
            sets = input_sets(torch, c, seed=9000 + i)
            if c["kind"] == "gemm":
                M, N, K = c["shape"]

                def go(j: int, sets: list = sets, M: int = M, N: int = N) -> None:
                    A, B, C = sets[j % len(sets)]
                    torch.matmul(A, B.T, out=C.view(M, N))

                t = timer.time(go)
                rows.append({"name": "cublas_bf16", "shape": c["shape"], "params": {}, "time_ns": t,
                             "tflops": flops(c) / t["median"] / 1e3,
                             "how": "torch.matmul(A, B.T, out=C), bf16 in/out (cuBLAS), same input rotation"})
            else:
                from torch.nn.attention import SDPBackend, sdpa_kernel

                causal = bool(c["knobs"]["causal"])

                def go(j: int, sets: list = sets, causal: bool = causal) -> None:
                    q, k, v, _ = sets[j % len(sets)]
                    F.scaled_dot_product_attention(q, k, v, is_causal=causal)

                with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                    t = timer.time(go)
                rows.append({"name": "sdpa_flash", "shape": c["shape"], "params": c["params"], "time_ns": t,
                             "tflops": flops(c) / t["median"] / 1e3,
                             "how": "torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal) bf16 "
                                    "under sdpa_kernel(SDPBackend.FLASH_ATTENTION); output allocated per call"})
            common.log(f"  ref {rows[-1]['name']:<12} {'x'.join(map(str, c['shape'])):<16} "
                       f"t={rows[-1]['time_ns']['median'] / 1e3:.1f} us {rows[-1]['tflops']:.1f} TFLOP/s")
            del sets
        except Exception:
            rows.append({"name": "cublas_bf16" if c["kind"] == "gemm" else "sdpa_flash", "shape": c["shape"],
                         "params": c["params"], "error": traceback.format_exc()[-1500:]})
        torch.cuda.empty_cache()
    return rows


def run_ncu_pass(a: argparse.Namespace, ncu: str, query: Any, data: dict[str, Any], cases: list[dict[str, Any]],
                 out_path: Path) -> None:
    available: set[str] = set()
    if query is not None:
        proc, qf = query
        try:
            proc.wait(timeout=max(10.0, 200 - (time.time() - T_START)))
            qf.seek(0)
            qtext = qf.read()
            available = {tok for ln in qtext.splitlines() for tok in ln.split()[:1]
                         if re.match(r"^[a-z][a-z0-9]*__[A-Za-z0-9_.]+$", tok)}
        except subprocess.TimeoutExpired:
            proc.kill()
        common.log(f"ncu --query-metrics: {len(available)} names")
    wanted, present, missing = ncu_metric_list(available)
    raw_log = out_path.parent / (out_path.stem + "-ncu-log.txt")
    units_all: dict[str, str] = {}
    dropped_all: list[str] = []
    logs = []
    for e in data["kernels"]:
        if not e.get("correct"):
            continue
        if time.time() - T_START > a.deadline:
            e["ncu_error"] = f"skipped: past the --deadline of {a.deadline:.0f} s"
            continue
        t0 = time.time()
        row, units, dropped, text = ncu_case(ncu, [m for m in present if m not in dropped_all], e["case_index"],
                                             cases[e["case_index"]], a.quick, a.ncu_timeout, common.log, a.cases)
        logs.append(text)
        dropped_all += [m for m in dropped if m not in dropped_all]
        units_all.update(units)
        if row is None:
            e["ncu_error"] = "no ncu row (see the ncu log)"
        else:
            e["ncu"] = common.metric_values(row, [m for m in present if m not in dropped_all])
            if str(row.get("Grid Size", "")).replace(" ", "") != "({},{},{})".format(*e["grid"]):
                e["ncu_error"] = f"grid mismatch: ncu {row.get('Grid Size')} vs {e['grid']}"
        common.log(f"  ncu {e['kernel']:<20} {'x'.join(map(str, e['shape'])):<16} {str(e['params']):<24} "
                   f"{time.time() - t0:.1f} s, {len(e.get('ncu', {}))} values")
    raw_log.write_text("\n".join(logs))
    miss = missing + dropped_all
    data["ncu_units"] = {m: u for m, u in units_all.items() if m in wanted}
    data["ncu_missing"] = miss
    data["ncu_metrics_available_count"] = len(available)
    per_s = [e["ncu"].get("sm__cycles_elapsed.avg.per_second") for e in data["kernels"] if e.get("ncu")]
    per_s = [v for v in per_s if isinstance(v, (int, float))]
    if per_s:
        data["gpu"]["sm_clock_mhz_ncu_median"] = sorted(per_s)[len(per_s) // 2] / 1e6


def method_text(a: argparse.Namespace) -> dict[str, Any]:
    return {
        "correctness": "per case fresh torch.randn inputs (fp32 draws rounded to bf16); the output buffer is filled "
                       f"with bf16 NaN and followed by {PAD} NaN canary elements; the kernel runs twice on fresh "
                       "poisoned buffers (the two outputs must be bitwise equal, every element finite, the canary "
                       "intact). Reference in fp32 from the same bf16 inputs: GEMM torch.matmul(A.float(), "
                       "B.float().T) with TF32 off; attention F.scaled_dot_product_attention(q.float(), k.float(), "
                       "v.float(), is_causal). rel_err = ||out - ref||_2 / ||ref||_2 (in float64), must be < "
                       f"{REL_TOL}.",
        "timing": "CUDA events between back-to-back launches (CuPy RawKernel on torch's current stream) queued "
                  "behind a ~10 ms spin kernel so that the host runs ahead; 3 warm-ups; median/min/max of 20 "
                  "launches (50 when a launch < 5 ms); input/output sets rotated when one set (inputs + output) "
                  f"is < 2x the 50 MB L2 (enough sets for ~{ROTATE_BYTES >> 20} MiB, at most 64). tflops = flops / "
                  "median time; flops 2*M*N*K for GEMM, 4*B*H*N^2*d for attention (halved when causal). "
                  "Reference rows: torch bf16 cuBLAS matmul A @ B.T and SDPA with the FLASH backend, timed "
                  "the same way." + (" QUICK RUN: 5 timed launches only." if a.quick else ""),
        "ncu": "one ncu process per (kernel, shape, params): ncu --clock-control none -k regex:^<kernel>$ "
               f"--launch-skip {NCU_WARMUP} --launch-count 1 --metrics ... on a child process of this script "
               f"(--ncu-case i) that launches the case {NCU_WARMUP + 1} times on CuPy random bf16 inputs; kernel "
               "replay with ncu's default cache flush between passes; metrics: run_h100.LADDER_METRICS, the "
               "tensor-pipe / ldmatrix / TMA counters named in TC_METRICS, and every "
               "smsp__average_warps_issue_stalled_<r>_per_issue_active.ratio that ncu --query-metrics lists "
               "(except the _not_issued twins); names ncu does not list are in ncu_missing.",
        "build": "CuPy RawModule (NVRTC, -std=c++17, arch from the device), the twin's .cuh inlined, knobs as -D "
                 "defines; dynamic shared memory limit raised with max_dynamic_shared_size_bytes above 48 KiB",
        "command": " ".join(sys.argv), "host": platform.node(),
        "env": {k: v for k, v in os.environ.items() if k.startswith(("CUDA", "CUPY"))},
    }


def print_table(data: dict[str, Any]) -> None:
    print(f"{'kernel':<20} {'shape':<16} {'params':<26} {'regs':>4} {'smem':>6} {'ok':>5} {'rel_err':>9} "
          f"{'us':>9} {'TFLOP/s':>8} {'ncu':>4}")
    for e in data["kernels"]:
        t = e.get("time_ns", {}).get("median")
        rel = e.get("rel_err")
        print(f"{e['kernel']:<20} {'x'.join(map(str, e['shape'])):<16} {str(e['params']):<26} "
              f"{e.get('registers_per_thread', '-')!s:>4} {e.get('shared_bytes_per_block', '-')!s:>6} "
              f"{e.get('correct')!s:>5} {(rel if rel is not None else float('nan')):>9.2e} "
              f"{(t / 1e3 if t else float('nan')):>9.1f} {e.get('tflops', float('nan')):>8.1f} "
              f"{len(e.get('ncu', {})):>4} {e.get('error', '')[:80]}")
    for r in data.get("reference", []):
        t = r.get("time_ns", {}).get("median")
        print(f"{r['name']:<20} {'x'.join(map(str, r['shape'])):<16} {str(r.get('params', {})):<26} "
              f"{'':>4} {'':>6} {'':>5} {'':>9} {(t / 1e3 if t else float('nan')):>9.1f} "
              f"{r.get('tflops', float('nan')):>8.1f} {r.get('error', '')[:60]}")


if __name__ == "__main__":
    sys.exit(main())
