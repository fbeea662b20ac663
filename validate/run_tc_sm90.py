"""Check, time and profile the CUDA twins of the Hopper GEMMs (validate/kernels/hgemm_{tma_wgmma,ws,ws_cluster,
persistent}.cu, sm_90a: TMA + mbarrier + wgmma) on an H100 and write a schema-1 measurement JSON.

    timeout 900 python3 validate/run_tc_sm90.py --out $OUT/hopper-gemm-2026-11-22.json [--quick] [--skip-ncu]

Steps:
1. correctness, in child processes of this script (a kernel whose barrier protocol is wrong traps after
   HANG_CYCLES instead of hanging, which kills the CUDA context of its process: the parent then records the
   case as failed and starts a new child for the remaining cases). Per (case, shape): two launches on fresh
   torch.randn bf16 inputs (A M x K, B N x K), C poisoned with NaN plus 4096 NaN canary elements after it;
   reference torch.matmul(A.float(), B.float().T) in fp32 (TF32 off); rel_err = ||C - ref|| / ||ref|| (max of
   the two) must be < 2e-2, C all finite (every element written) and the canary intact.
2. timing, in this process, of the cases that passed: one synchronous launch, 3 warm-ups, then per-launch CUDA
   events between back-to-back launches queued behind a ~10 ms spin kernel; median/min/max of 50 launches
   (20 when one takes > 5 ms); input sets rotated when A + B + C < 2x L2. torch.matmul bf16 (cuBLAS) rows as
   `reference`.
3. ncu, one child process per correct (case, shape): `ncu --clock-control none -k regex:^<name>$
   --launch-skip 2 --launch-count 1` (two warm-up launches skipped, the third profiled).

Build: CuPy RawModule (NVRTC) with options -std=c++17 --gpu-architecture=sm_90a and the knobs as -D defines;
hopper_common.cuh is pasted in place of its #include (so CuPy's cache key covers it). Tensor maps come from
validate/tma.py (ctypes cuTensorMapEncodeTiled) and are passed BY VALUE as `const __grid_constant__` 128-byte
struct parameters: CuPy passes a size-one numpy array by value, so tma.kernel_arg returns a shape-(1,) numpy
array of a 128-byte structured dtype. `--tmap global` builds the kernels with -DTMAP_GLOBAL instead and passes
a pointer to a device copy of the map (written by a copy before the launch, so no tensormap proxy fence is
needed). Clusters: hgemm_ws_cluster declares __cluster_dims__(2,1,1), so CuPy's ordinary launch forms them.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
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
import tma  # noqa: E402

KERNELS = ["hgemm_tma_wgmma", "hgemm_ws", "hgemm_ws_cluster", "hgemm_persistent"]
# knob defaults of each kernel (TC_DESIGNS.md), as IR knob values
DEFAULTS: dict[str, dict[str, Any]] = {
    "hgemm_tma_wgmma": {"stages": 1, "swizzle": "128B"},
    "hgemm_ws": {"stages": 3, "bn": 256, "swizzle": "128B"},
    "hgemm_ws_cluster": {"stages": 3, "bn": 256, "swizzle": "128B"},
    "hgemm_persistent": {"stages": 3, "bn": 256, "swizzle": "128B", "order": "grouped"},
}
SHAPES = [(4096, 4096, 4096), (2048, 8192, 4096), (512, 512, 512)]
QUICK_SHAPES = [(512, 512, 512), (256, 768, 640)]  # --quick also times the defaults at 4096^3
# non-default knob sets, timed at the first (4096^3) shape only
VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("hgemm_ws", {"stages": 2}), ("hgemm_ws", {"stages": 4}), ("hgemm_ws", {"bn": 128}),
    ("hgemm_tma_wgmma", {"swizzle": "64B"}),
    ("hgemm_persistent", {"order": "row"}), ("hgemm_persistent", {"order": "hilbert"}),
]
# --quick only: more knob sets, checked at the small shapes (not required by the contract; they exercise the
# code paths: a multi-stage ring in hgemm_tma_wgmma, 32B swizzle, bn=128 with multicast, persistent bn=128)
QUICK_EXTRA: list[tuple[str, dict[str, Any]]] = [
    ("hgemm_tma_wgmma", {"stages": 3}), ("hgemm_ws", {"swizzle": "32B"}), ("hgemm_ws_cluster", {"bn": 128}),
    ("hgemm_persistent", {"bn": 128, "order": "hilbert"}),
]
# diagnostics, full run only, at 4096^3: hgemm_ws_cluster with a switch that is not a design knob (see the
# kernel's header), to locate its cost: the partner arrive at .release.cluster scope; B loaded without multicast
DIAGNOSTICS: list[tuple[str, dict[str, Any]]] = [
    ("hgemm_ws_cluster", {"diag_arrive": "release.cluster"}), ("hgemm_ws_cluster", {"diag_multicast": 0}),
]
ORDERS = {"row": 0, "grouped": 1, "hilbert": 2}
REL_TOL = 2e-2
PAD = 4096  # NaN canary elements after C
L2_BYTES_NOMINAL = 50 * 1024 * 1024
ROTATE_BYTES = 200 * 1024 * 1024
TC_METRICS = [
    "sm__inst_executed_pipe_tensor_op_hmma.sum",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_tensor_op_gmma.sum",
    "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
    "smsp__inst_executed_op_ldsm.sum",
    "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum",
    # what this ncu calls some of the above (the l1tex__ ldsm names and the gmma cycles are not listed)
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
    "sm__pipe_tensor_op_gmma_cycles_active.avg", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_tensor.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    # beside the coalescer's metrics in run_h100.LADDER_METRICS: the sectors that did not coalesce
    "lrc__lrc2xbar_sectors_op_read_coalescing_none.sum",
]


# ------------------------------------------------------------------------------------------------ cases
def knobs_of(kernel: str, params: dict[str, Any]) -> dict[str, Any]:
    k = dict(DEFAULTS[kernel])
    k.update(params)
    return k


def swz(knobs: dict[str, Any]) -> int:
    return tma.swizzle_bytes(knobs["swizzle"])


def defines(kernel: str, knobs: dict[str, Any], tmap_mode: str) -> list[str]:
    d = [f"-DSTAGES={knobs['stages']}", f"-DSWIZZLE={swz(knobs)}"]
    if "bn" in knobs:
        d.append(f"-DBN={knobs['bn']}")
    if "order" in knobs:
        d.append(f"-DORDER={ORDERS[knobs['order']]}")
    if knobs.get("diag_arrive") == "release.cluster":
        d.append("-DARRIVE_CLUSTER_SCOPE=1")
    if knobs.get("diag_multicast") == 0:
        d.append("-DMULTICAST=0")
    if tmap_mode == "global":
        d.append("-DTMAP_GLOBAL")
    return d


def bn_of(kernel: str, knobs: dict[str, Any]) -> int:
    return int(knobs.get("bn", 128))


def smem_bytes(kernel: str, knobs: dict[str, Any]) -> int:
    """Dynamic shared memory asked at launch: the stage ring + 1 KiB so the kernel can align it to 1024 B +
    128 B of mbarriers (see the kernels' headers)."""
    stage = (128 + bn_of(kernel, knobs)) * 128
    return knobs["stages"] * stage + 1024 + 128


def divides(kernel: str, knobs: dict[str, Any], shape: tuple[int, int, int]) -> str | None:
    M, N, K = shape
    bm = 256 if kernel == "hgemm_ws_cluster" else 128
    bn = bn_of(kernel, knobs)
    if M % bm or N % bn or K % 64:
        return f"shape {shape} not divisible by (M % {bm}, N % {bn}, K % 64)"
    return None


def launch_geometry(kernel: str, knobs: dict[str, Any], shape: tuple[int, int, int], sms: int
                    ) -> tuple[tuple[int, int, int], tuple[int, int, int], list[int] | None]:
    M, N, K = shape
    bn = bn_of(kernel, knobs)
    if kernel == "hgemm_tma_wgmma":
        return (N // 128, M // 128, 1), (128, 1, 1), None
    if kernel == "hgemm_ws":
        return (N // bn, M // 128, 1), (384, 1, 1), None
    if kernel == "hgemm_ws_cluster":
        return (M // 128, N // bn, 1), (384, 1, 1), [2, 1, 1]
    if kernel == "hgemm_persistent":
        return (sms, 1, 1), (384, 1, 1), None
    raise KeyError(kernel)


def b_box_rows(kernel: str, knobs: dict[str, Any]) -> int:
    bn = bn_of(kernel, knobs)
    return bn // 2 if kernel == "hgemm_ws_cluster" and knobs.get("diag_multicast", 1) else bn


def hilbert_d2xy(n: int, d: int) -> tuple[int, int]:
    """Point d of the Hilbert curve over an n x n grid (n a power of two)."""
    x = y = 0
    s = 1
    t = d
    while s < n:
        rx = 1 & (t // 2)
        ry = 1 & (t ^ rx)
        if ry == 0:
            if rx == 1:
                x, y = s - 1 - x, s - 1 - y
            x, y = y, x
        x += s * rx
        y += s * ry
        t //= 4
        s *= 2
    return x, y


def hilbert_order(MT: int, NT: int) -> list[int]:
    """Tile sequence for ORDER=2: the Hilbert curve over the smallest power-of-two square covering the
    MT x NT tile grid, points outside skipped; (x, y) -> tile row tm = x, tile column tn = y; packed tm << 16 | tn."""
    n = 1
    while n < max(MT, NT):
        n *= 2
    out = []
    for d in range(n * n):
        x, y = hilbert_d2xy(n, d)
        if x < MT and y < NT:
            out.append((x << 16) | y)
    assert len(out) == MT * NT
    return out


def plan_cases(shapes: list[tuple[int, int, int]], quick: bool) -> list[dict[str, Any]]:
    """Every kernel at its defaults at every shape; the knob variants at 4096^3 (--quick: at the small
    shapes, and 4096^3 with the defaults only)."""
    cases = []
    for shape in shapes:
        for k in KERNELS:
            cases.append({"kernel": k, "params": {}, "shape": list(shape)})
        with_variants = shape in QUICK_SHAPES if quick else shape == SHAPES[0]
        if with_variants:
            for k, p in VARIANTS + (QUICK_EXTRA if quick else []):
                cases.append({"kernel": k, "params": dict(p), "shape": list(shape)})
        if not quick and shape == SHAPES[0]:
            for k, p in DIAGNOSTICS:
                cases.append({"kernel": k, "params": dict(p), "shape": list(shape), "diagnostic": True})
    for i, c in enumerate(cases):
        c["id"] = i
        c["knobs"] = knobs_of(c["kernel"], c["params"])
    return cases


# ------------------------------------------------------------------------------------------------ build
class Builder:
    def __init__(self, cp: Any, tmap_mode: str) -> None:
        self.cp = cp
        self.tmap_mode = tmap_mode
        self.header = (KDIR / "hopper_common.cuh").read_text()
        self.cache: dict[tuple, Any] = {}

    def source(self, kernel: str) -> str:
        src = (KDIR / f"{kernel}.cu").read_text()
        return src.replace('#include "hopper_common.cuh"', self.header)

    def get(self, kernel: str, knobs: dict[str, Any]) -> tuple[Any, list[str]]:
        d = defines(kernel, knobs, self.tmap_mode)
        key = (kernel, tuple(d))
        if key not in self.cache:
            opts = ("-std=c++17", "--gpu-architecture=sm_90a", *d)
            mod = self.cp.RawModule(code=self.source(kernel), options=opts)
            f = mod.get_function(kernel)
            f.attributes  # noqa: B018  (compiles and loads now)
            self.cache[key] = (mod, f)
        return self.cache[key][1], d


def dev_ptr(x: Any) -> int:
    return int(x.data_ptr()) if hasattr(x, "data_ptr") else int(x.data.ptr)


class Launcher:
    """Everything one (case, shape) needs to launch: function, geometry, tensor maps per input set."""

    def __init__(self, cp: Any, np: Any, builder: Builder, case: dict[str, Any], sms: int) -> None:
        self.cp, self.np = cp, np
        self.kernel = case["kernel"]
        self.knobs = case["knobs"]
        self.shape = tuple(case["shape"])
        self.f, self.defines = builder.get(self.kernel, self.knobs)
        self.smem = smem_bytes(self.kernel, self.knobs)
        if self.smem > 48 * 1024:
            self.f.max_dynamic_shared_size_bytes = self.smem
        self.grid, self.block, self.cluster = launch_geometry(self.kernel, self.knobs, self.shape, sms)
        self.tmap_mode = builder.tmap_mode
        self.order = None
        if self.kernel == "hgemm_persistent":
            M, N, _ = self.shape
            MT, NT = M // 128, N // bn_of(self.kernel, self.knobs)
            seq = hilbert_order(MT, NT) if self.knobs["order"] == "hilbert" else [0]
            self.order = cp.asarray(np.array(seq, dtype=np.int32))

    def maps(self, A: Any, B: Any) -> tuple[Any, Any]:
        M, N, K = self.shape
        sw = swz(self.knobs)
        ma = tma.encode_2d(dev_ptr(A), M, K, 2, 128, sw // 2, sw)
        mb = tma.encode_2d(dev_ptr(B), N, K, 2, b_box_rows(self.kernel, self.knobs), sw // 2, sw)
        if self.tmap_mode == "global":
            return tma.kernel_arg(ma, self.cp), tma.kernel_arg(mb, self.cp)
        return tma.kernel_arg(ma), tma.kernel_arg(mb)

    def args(self, maps: tuple[Any, Any], C: Any) -> tuple:
        np = self.np
        M, N, K = self.shape
        a = (maps[0], maps[1], np.uint64(dev_ptr(C)), np.int32(M), np.int32(N), np.int32(K))
        if self.kernel == "hgemm_persistent":
            a = a + (np.uint64(dev_ptr(self.order)),)
        return a

    def launch(self, args: tuple) -> None:
        self.f(self.grid, self.block, args, shared_mem=self.smem)

    def attrs(self) -> dict[str, Any]:
        at = self.f.attributes
        return {"registers_per_thread": int(at.get("num_regs", 0)),
                "static_shared_bytes": int(at.get("shared_size_bytes", 0)),
                "local_bytes_per_thread": int(at.get("local_size_bytes", 0)),
                "max_threads_per_block": int(at.get("max_threads_per_block", 0)),
                "binary_version": int(at.get("binary_version", 0))}


# ------------------------------------------------------------------------------------------------ check
def check_child(plan_path: Path, start: int, res_path: Path, tmap_mode: str) -> None:
    import cupy as cp
    import numpy as np
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    cases = json.loads(plan_path.read_text())
    builder = Builder(cp, tmap_mode)
    sms = int(cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"])
    stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
    with open(res_path, "a") as out:
        for c in cases[start:]:
            out.write(json.dumps({"begin": c["id"]}) + "\n")
            out.flush()
            r: dict[str, Any] = {"id": c["id"]}
            why = divides(c["kernel"], c["knobs"], tuple(c["shape"]))
            if why:
                r.update(correct=False, skipped=why)
                out.write(json.dumps(r) + "\n")
                out.flush()
                continue
            t0 = time.time()
            try:
                with stream:
                    L = Launcher(cp, np, builder, c, sms)
                r.update(L.attrs())
                r["compile_s"] = round(time.time() - t0, 2)
                M, N, K = L.shape
                rels, finite, canary = [], True, True
                for rep in range(2):
                    g = torch.Generator(device="cuda")
                    g.manual_seed(1000 * c["id"] + rep + 7)
                    A = torch.randn(M, K, device="cuda", generator=g).to(torch.bfloat16)
                    B = torch.randn(N, K, device="cuda", generator=g).to(torch.bfloat16)
                    buf = torch.full((M * N + PAD,), float("nan"), device="cuda", dtype=torch.bfloat16)
                    maps = L.maps(A, B)
                    torch.cuda.synchronize()
                    with stream:
                        L.launch(L.args(maps, buf))
                    torch.cuda.synchronize()
                    ref = torch.matmul(A.float(), B.float().T)
                    out_c = buf[: M * N].view(M, N).float()
                    finite = finite and bool(torch.isfinite(out_c).all())
                    canary = canary and bool(torch.isnan(buf[M * N:].float()).all())
                    rel = float(torch.linalg.vector_norm((out_c - ref).double()) /
                                torch.linalg.vector_norm(ref.double()))
                    rels.append(rel if math.isfinite(rel) else None)
                    del A, B, buf, ref, out_c
                ok = all(x is not None and x < REL_TOL for x in rels) and finite and canary
                r.update(correct=ok, rel_err=max((x for x in rels if x is not None), default=None),
                         rel_errs=rels, all_written_finite=finite, canary_intact=canary,
                         check_s=round(time.time() - t0, 2))
            except Exception:
                r.update(correct=False, error=traceback.format_exc()[-2500:])
            out.write(json.dumps(r) + "\n")
            out.flush()
            if "error" in r:
                sys.exit(3)  # the context may be dead (a trap): the parent starts a fresh process


def compile_child(kernel: str, knobs_json: str, tmap_mode: str) -> None:
    import cupy as cp

    Builder(cp, tmap_mode).get(kernel, json.loads(knobs_json))


def precompile(cases: list[dict[str, Any]], tmap_mode: str, timeout: float = 300.0) -> dict[str, str]:
    """Compile every (kernel, knobs) variant in parallel processes, filling CuPy's on-disk kernel cache, so the
    check, timing and ncu processes load the cubins instead of running NVRTC one variant after another."""
    todo: dict[tuple, tuple[str, str]] = {}
    for c in cases:
        todo[(c["kernel"], tuple(defines(c["kernel"], c["knobs"], tmap_mode)))] = (c["kernel"], json.dumps(c["knobs"]))
    procs = []
    t0 = time.time()
    for kernel, kj in todo.values():
        cmd = [*common.python_cmd(), str(Path(__file__).resolve()), "--compile-child", kernel, "--knobs", kj,
               "--tmap", tmap_mode]
        procs.append(((kernel, kj), subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                                     text=True)))
    errors = {}
    for key, p in procs:
        try:
            out, _ = p.communicate(timeout=max(1.0, timeout - (time.time() - t0)))
        except subprocess.TimeoutExpired:
            p.kill()
            out = "timeout"
        if p.returncode != 0:
            errors[f"{key[0]} {key[1]}"] = (out or "")[-3000:]
    common.log(f"precompiled {len(procs)} variants in {time.time() - t0:.0f} s; failures: {len(errors)}")
    for k, v in errors.items():
        common.log(f"  compile failure {k}: {v[-1500:]}")
    return errors


def run_checks(cases: list[dict[str, Any]], tmap_mode: str, work: Path, timeout: float) -> dict[int, dict]:
    plan = work / "plan.json"
    plan.write_text(json.dumps(cases))
    res = work / "check.jsonl"
    res.write_text("")
    results: dict[int, dict] = {}
    start = 0
    while start < len(cases):
        cmd = [*common.python_cmd(), str(Path(__file__).resolve()), "--check-child", str(plan), "--start",
               str(start), "--results", str(res), "--tmap", tmap_mode]
        t0 = time.time()
        rc, out = common.sh(cmd, timeout=timeout)
        common.log(f"check child from case {start}: rc={rc} in {time.time() - t0:.0f} s")
        if rc != 0:
            sys.stdout.write(out[-3000:] + "\n")
        begun = None
        for ln in res.read_text().splitlines():
            d = json.loads(ln)
            if "begin" in d:
                begun = d["begin"]
            else:
                results[d["id"]] = d
                begun = None
        if begun is not None and begun not in results:  # the child died inside this case
            results[begun] = {"id": begun, "correct": False,
                              "error": f"check process died (rc={rc}): trap/timeout/crash; tail: {out[-1500:]}"}
        if cases[start]["id"] not in results:  # no progress at all: give up on this case, go on
            results[cases[start]["id"]] = {"id": cases[start]["id"], "correct": False,
                                           "error": f"check process failed before this case (rc={rc}): {out[-1500:]}"}
        nxt = [i for i, c in enumerate(cases) if c["id"] not in results]
        if not nxt:
            break
        start = nxt[0]
    for c in cases:
        results.setdefault(c["id"], {"id": c["id"], "correct": False, "error": "not checked"})
        common.log(f"  check {c['kernel']:<18} {json.dumps(c['params']):<22} {c['shape']} "
                   f"correct={results[c['id']].get('correct')} rel={results[c['id']].get('rel_err')} "
                   f"{(results[c['id']].get('skipped') or results[c['id']].get('error') or '')[-200:]}")
    return results


# ------------------------------------------------------------------------------------------------ timing
SPIN_SRC = r"""
extern "C" __global__ void spin_wait(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
}
"""


def make_sets(torch: Any, shape: tuple[int, int, int], seed: int) -> list[tuple[Any, Any, Any]]:
    M, N, K = shape
    set_bytes = 2 * (M * K + N * K + M * N)
    n = 1 if set_bytes > 2 * L2_BYTES_NOMINAL else min(64, math.ceil(ROTATE_BYTES / set_bytes))
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    return [(torch.randn(M, K, device="cuda", generator=g).to(torch.bfloat16),
             torch.randn(N, K, device="cuda", generator=g).to(torch.bfloat16),
             torch.empty(M, N, device="cuda", dtype=torch.bfloat16)) for _ in range(n)]


def time_it(torch: Any, launch_i: Any, spin: Any) -> dict[str, float]:
    launch_i(0)
    torch.cuda.synchronize()  # one synchronous launch first
    for i in range(3):
        launch_i(i)
    torch.cuda.synchronize()
    est = common.time_launches(torch, launch_i, 3, spin)
    n = 20 if min(est) > 5e6 else 50
    return common.summarize(common.time_launches(torch, launch_i, n, spin))


# ------------------------------------------------------------------------------------------------ ncu
def ncu_child(plan_path: Path, case_id: int, tmap_mode: str) -> None:
    """Launch one case 3 times (ncu skips the first two) on cupy random bf16 inputs; no torch import."""
    import cupy as cp
    import numpy as np

    c = next(x for x in json.loads(plan_path.read_text()) if x["id"] == case_id)
    sms = int(cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"])
    builder = Builder(cp, tmap_mode)
    L = Launcher(cp, np, builder, c, sms)
    M, N, K = L.shape
    rs = cp.random.RandomState(1234 + case_id)

    def bf16(rows: int, cols: int) -> Any:
        x = rs.standard_normal((rows, cols), dtype=cp.float32)
        return (x.view(cp.uint32) >> 16).astype(cp.uint16)  # bf16 bits (truncated)

    A, B = bf16(M, K), bf16(N, K)
    C = cp.empty((M, N), dtype=cp.uint16)
    args = L.args(L.maps(A, B), C)
    for _ in range(3):
        L.launch(args)
        cp.cuda.runtime.deviceSynchronize()


def run_ncu_case(ncu: str, metrics: list[str], name: str, child: list[str], report: Path, timeout: float
                 ) -> tuple[dict[str, Any] | None, dict[str, str], str, list[str], str]:
    metrics = list(metrics)
    dropped: list[str] = []
    log = ""
    for _ in range(4):
        cmd = [ncu, "--clock-control", "none", "--target-processes", "all", "-k", f"regex:^{name}$",
               "--launch-skip", "2", "--launch-count", "1", "--metrics", ",".join(metrics), "-f", "-o",
               str(report), *child]
        rc, out = common.sh(cmd, timeout=timeout)
        log += f"$ {' '.join(cmd)}\nrc={rc}\n{out[-4000:]}\n"
        rep = Path(str(report) + ".ncu-rep")
        bad = [m for m in metrics if m in out and any(w in out.lower() for w in ("not found", "invalid",
                                                                                  "unknown", "failed to find"))]
        if rc != 0 and bad and not rep.exists():
            for m in bad:
                metrics.remove(m)
                dropped.append(m)
            continue
        break
    rep = Path(str(report) + ".ncu-rep")
    if not rep.exists():
        return None, {}, "", dropped, log
    rc, text = common.sh([ncu, "--import", str(rep), "--csv", "--page", "raw", "--print-units", "base"],
                         timeout=300)
    rows, units = common.parse_ncu_raw_csv(text)
    rows = [r for r in rows if str(r.get("Kernel Name", "")).split("(")[0].strip() == name]
    return (rows[-1] if rows else None), units, text, dropped, log


# ------------------------------------------------------------------------------------------------ main
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(REPO / "validate" / "measurements" / "h100" /
                                         f"hopper-gemm-{datetime.date.today().isoformat()}.json"))
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    ap.add_argument("--quick", action="store_true",
                    help="small shapes with every knob variant, 4096^3 with the defaults; ncu on --ncu-max cases")
    ap.add_argument("--ncu-max", type=int, default=None, help="profile at most this many cases (quick: 1)")
    ap.add_argument("--skip-ncu", action="store_true")
    ap.add_argument("--tmap", choices=["param", "global"], default="param",
                    help="tensor maps by value (__grid_constant__) or in global memory")
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--shapes", default=None,
                    help="M,N,K;M,N,K;... instead of the standard shapes (the defaults only, no knob variants)")
    ap.add_argument("--cases", default=None, help="JSON file: a list of {kernel, shape, params} measured instead of "
                                                  "the standard cases (knob sweeps, validate/run_knobs.sh)")
    ap.add_argument("--check-timeout", type=float, default=400.0)
    ap.add_argument("--ncu-timeout", type=float, default=120.0)
    ap.add_argument("--check-child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--ncu-child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--compile-child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--knobs", default="{}", help=argparse.SUPPRESS)
    ap.add_argument("--case", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--results", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()

    if a.check_child:
        check_child(Path(a.check_child), a.start, Path(a.results), a.tmap)
        return 0
    if a.ncu_child:
        ncu_child(Path(a.ncu_child), a.case, a.tmap)
        return 0
    if a.compile_child:
        compile_child(a.compile_child, a.knobs, a.tmap)
        return 0

    t_start = time.time()
    out_path = Path(a.out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    raw = out_path.parent
    stem = out_path.stem
    work = Path(tempfile.mkdtemp(prefix="tc_sm90_"))
    shapes = [*QUICK_SHAPES, SHAPES[0]] if a.quick else SHAPES
    if a.shapes:
        shapes = [tuple(int(x) for x in sh.split(",")) for sh in a.shapes.split(";") if sh]
    kernels = [k for k in a.kernels.split(",") if k]
    cases = [c for c in plan_cases(shapes, a.quick) if c["kernel"] in kernels
             and (not a.shapes or not c["params"])]
    if a.cases:
        cases = [{"kernel": c["kernel"], "params": dict(c.get("params") or {}), "shape": list(c["shape"])}
                 for c in json.loads(Path(a.cases).read_text())]
        for i, c in enumerate(cases):
            c["id"] = i
            c["knobs"] = knobs_of(c["kernel"], c["params"])
        shapes = list(dict.fromkeys(tuple(c["shape"]) for c in cases))
    common.log(f"{len(cases)} cases; tensor maps: {a.tmap}")

    # 1. correctness (child processes)
    compile_errors = precompile(cases, a.tmap)
    checks = run_checks(cases, a.tmap, work, a.check_timeout)

    # 2. timing (this process)
    import cupy as cp
    import numpy as np
    import torch

    import run_h100

    ncu = None if a.skip_ncu else common.find_ncu()
    ncu_max = a.ncu_max if a.ncu_max is not None else (1 if a.quick else 10**6)
    gpu = run_h100.gpu_info(cp, torch, common.find_ncu())
    sms = gpu["sm_count"]
    common.log(f"GPU: {gpu['name']}, {sms} SMs, driver {gpu['driver']}, nvrtc {gpu['nvrtc']}, cupy {gpu['cupy']}")
    stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
    spin_k = cp.RawModule(code=SPIN_SRC, options=("-std=c++17",)).get_function("spin_wait")

    def spin() -> None:
        with stream:
            spin_k((1,), (1,), (np.int64(20_000_000),))

    builder = Builder(cp, a.tmap)
    entries: list[dict[str, Any]] = []
    reference: list[dict[str, Any]] = []
    for si, shape in enumerate(shapes):
        M, N, K = shape
        sets = make_sets(torch, shape, 500 + si)
        common.log(f"shape {shape}: {len(sets)} input set(s)")
        for c in [c for c in cases if tuple(c["shape"]) == shape]:
            ck = checks[c["id"]]
            grid, block, cluster = launch_geometry(c["kernel"], c["knobs"], shape, sms)
            e: dict[str, Any] = {
                "kernel": c["kernel"], "shape": list(shape), "params": c["params"], "knobs": c["knobs"],
                "grid": list(grid), "block": list(block), "cluster": cluster,
                "twin": f"validate/kernels/{c['kernel']}.cu",
                "twin_header": (KDIR / f"{c['kernel']}.cu").read_text().splitlines()[0],
                "defines": defines(c["kernel"], c["knobs"], a.tmap), "tensor_maps": a.tmap,
            }
            if c.get("diagnostic"):
                e["diagnostic"] = "not a design knob: a switch of the twin to locate a cost (see its header)"
            if "registers_per_thread" in ck:
                e["registers_per_thread"] = ck["registers_per_thread"]
                e["dynamic_shared_bytes"] = smem_bytes(c["kernel"], c["knobs"])
                e["shared_bytes_per_block"] = e["dynamic_shared_bytes"] + ck.get("static_shared_bytes", 0)
                e["local_bytes_per_thread"] = ck.get("local_bytes_per_thread")
            if c["kernel"] != "hgemm_tma_wgmma":
                e["setmaxnreg"] = {"producer": 40, "consumers": 232}
            for f in ("correct", "rel_err", "rel_errs", "all_written_finite", "canary_intact", "skipped", "error"):
                if f in ck:
                    e[f] = ck[f]
            if ck.get("correct"):
                try:
                    with stream:
                        L = Launcher(cp, np, builder, c, sms)
                        packs = [L.args(L.maps(A, B), C) for A, B, C in sets]

                    def launch_i(i: int, L: Any = L, packs: list = packs) -> None:
                        with stream:
                            L.launch(packs[i % len(packs)])

                    e["time_ns"] = time_it(torch, launch_i, spin)
                    e["input_sets"] = len(sets)
                    e["tflops"] = 2 * M * N * K / e["time_ns"]["median"] / 1e3
                except Exception:
                    e["timing_error"] = traceback.format_exc()[-2000:]
            common.log(f"  {c['kernel']:<18} {json.dumps(c['params']):<20} correct={e.get('correct')} "
                       f"rel={e.get('rel_err')} t={e.get('time_ns', {}).get('median', float('nan')) / 1e3:.1f} us "
                       f"{e.get('tflops', float('nan')):.0f} TFLOP/s")
            entries.append(e)

        def ref_i(i: int, sets: list = sets) -> None:
            A, B, C = sets[i % len(sets)]
            torch.matmul(A, B.T, out=C)

        t = time_it(torch, ref_i, spin)
        reference.append({"name": "cublas_bf16", "shape": list(shape), "time_ns": t,
                          "tflops": 2 * M * N * K / t["median"] / 1e3, "input_sets": len(sets),
                          "how": "torch.matmul(A, B.T, out=C), A M x K and B N x K bf16, C bf16"})
        common.log(f"  cublas_bf16 t={t['median'] / 1e3:.1f} us {reference[-1]['tflops']:.0f} TFLOP/s")
        del sets
        torch.cuda.empty_cache()
    try:
        clk = run_h100.measured_clock(cp, np)
        gpu["sm_clock_mhz_measured"] = clk["mhz"]
        gpu["sm_clock_measured_how"] = "clock64 / %globaltimer of a spinning thread, right after the timings"
    except Exception:
        gpu["sm_clock_measured_error"] = traceback.format_exc()[-500:]
    gpu["nvidia_smi_after_timing"] = common.nvidia_smi()

    data: dict[str, Any] = {"schema": 1, "date": a.date, "gpu": gpu, "kernels": entries, "reference": reference}
    if compile_errors:
        data["compile_errors"] = compile_errors
    # 3. ncu
    data["ncu_units"], data["ncu_missing"] = {}, []
    if ncu:
        t0 = time.time()
        available, _ = common.ncu_available_metrics(ncu)
        common.log(f"ncu --query-metrics: {len(available)} names in {time.time() - t0:.0f} s")
        stalls = common.stall_metrics(available)
        wanted = run_h100.LADDER_METRICS + stalls + TC_METRICS
        present, missing = common.split_available(wanted, available)
        plan = work / "plan.json"
        ncu_csv, ncu_log = [], []
        all_dropped: set[str] = set()
        for c, e in zip([c for s in shapes for c in cases if tuple(c["shape"]) == s], entries, strict=True):
            if not e.get("correct") or "time_ns" not in e:
                continue
            if ncu_max <= 0:
                break
            ncu_max -= 1
            t1 = time.time()
            child = [*common.python_cmd(), str(Path(__file__).resolve()), "--ncu-child", str(plan), "--case",
                     str(c["id"]), "--tmap", a.tmap]
            row, units, text, dropped, nlog = run_ncu_case(ncu, present, c["kernel"], child,
                                                           work / f"case{c['id']}", a.ncu_timeout)
            all_dropped.update(dropped)
            ncu_log.append(f"# case {c['id']} {c['kernel']} {c['params']} {c['shape']}\n{nlog}")
            if text:
                ncu_csv.append(f"# case {c['id']} {c['kernel']} {json.dumps(c['params'])} {c['shape']}\n{text}")
            e["ncu"] = common.metric_values(row, [m for m in present if m not in dropped])
            if row is None:
                e["ncu_error"] = "no ncu row (see the ncu log)"
            elif str(row.get("Grid Size", "")).replace(" ", "") != "({},{},{})".format(*e["grid"]):
                e["ncu_error"] = f"grid mismatch: ncu {row.get('Grid Size')} vs {e['grid']}"
            data["ncu_units"].update({m: u for m, u in units.items() if m in wanted})
            common.log(f"  ncu {c['kernel']:<18} {json.dumps(c['params']):<20} {c['shape']}: "
                       f"{len(e['ncu'])} metrics in {time.time() - t1:.0f} s")
        data["ncu_missing"] = sorted(set(missing) | all_dropped)
        (raw / f"{stem}-ncu.csv").write_text("\n".join(ncu_csv))
        (raw / f"{stem}-ncu-log.txt").write_text("\n".join(ncu_log))
    data["method"] = {
        "correctness": "child processes of this script (a trap from a hung barrier kills only that process); per "
                       "(kernel, shape, knobs) two launches on fresh torch.randn bf16 inputs, A M x K and B N x K "
                       f"row-major, C poisoned with NaN and followed by {PAD} NaN canary elements; reference "
                       "torch.matmul(A.float(), B.float().T) fp32 with TF32 off; rel_err = ||C - ref||_2 / "
                       f"||ref||_2 (max of the two) < {REL_TOL}, every C element finite (written), canary intact",
        "timing": "CUDA events between back-to-back launches queued behind a ~10 ms spin kernel; one synchronous "
                  "launch and 3 warm-ups first; median/min/max of 50 launches (20 when one takes > 5 ms); input "
                  f"sets rotated when A+B+C < 2x L2 (enough for ~{ROTATE_BYTES >> 20} MiB); tflops = 2MNK / median",
        "build": "CuPy RawModule (NVRTC) -std=c++17 --gpu-architecture=sm_90a, knobs as -D defines, "
                 "hopper_common.cuh pasted in; registers from the loaded function's attributes (the entry "
                 "allocation; the warp-specialised kernels then run setmaxnreg 40 / 232)",
        "tensor_maps": "validate/tma.py: cuTensorMapEncodeTiled through ctypes, 2D bf16, box {swizzle/2, rows} "
                       "(A: 128 rows; B: 128, bn, or bn/2 for the cluster's multicast halves), L2 promotion "
                       "256B, passed " + ("by value as a __grid_constant__ 128-byte struct (a size-one numpy "
                                          "array, which CuPy passes by value)" if a.tmap == "param" else
                                          "as a pointer to a device copy (-DTMAP_GLOBAL)"),
        "ncu": "one child process per correct (kernel, shape, knobs): ncu --clock-control none -k regex:^name$ "
               "--launch-skip 2 --launch-count 1 (third launch profiled), cupy random bf16 inputs; metrics: "
               "run_h100.LADDER_METRICS + every stall reason ncu lists + tensor-pipe/ldsm/TMA metrics; raw CSV "
               f"in {stem}-ncu.csv",
        "command": " ".join(sys.argv), "host": platform.node(), "wall_s": round(time.time() - t_start, 1),
        "env": {k: v for k, v in os.environ.items() if k.startswith(("CUDA", "CUPY", "NVIDIA"))},
    }
    common.write_json(out_path, data)
    common.log(f"wrote {out_path} ({time.time() - t_start:.0f} s)")
    print_table(data)
    return 0


def print_table(data: dict[str, Any]) -> None:
    print(f"{'kernel':<18} {'params':<20} {'shape':<16} {'us':>9} {'TFLOP/s':>8} {'regs':>5} {'smem':>7} ok  rel")
    for e in data["kernels"]:
        t = e.get("time_ns", {}).get("median")
        print(f"{e['kernel']:<18} {json.dumps(e['params']):<20} {'x'.join(map(str, e['shape'])):<16} "
              f"{(t / 1e3 if t else float('nan')):>9.1f} {e.get('tflops', float('nan')):>8.0f} "
              f"{e.get('registers_per_thread', '-')!s:>5} {e.get('shared_bytes_per_block', '-')!s:>7} "
              f"{e.get('correct')!s:<5} {e.get('rel_err')} {(e.get('skipped') or e.get('error') or '')[-80:]}")
    for r in data["reference"]:
        print(f"{r['name']:<18} {'':<20} {'x'.join(map(str, r['shape'])):<16} {r['time_ns']['median'] / 1e3:>9.1f} "
              f"{r['tflops']:>8.0f}")


if __name__ == "__main__":
    sys.exit(main())
