"""Check, time and profile the CUDA twin of FA3 (validate/kernels/fa3.cu: Hopper FlashAttention forward, TMA +
mbarrier + wgmma + ping-pong named barriers, sm_90a) on an H100 and write a schema-1 measurement JSON.

    timeout 700 python3 validate/run_fa3.py --out $OUT/fa3-2026-11-22.json [--quick] [--skip-ncu]

Steps:
0. build: nvcc -gencode=arch=compute_90a,code=sm_90a -cubin -O3 -Xptxas -v with the knobs as -D defines, one
   cubin per (head dim, causal, bc, ...) variant, in parallel; ptxas report and cuobjdump SASS opcode counts kept.
   Cubins are loaded and launched through libcuda with ctypes (cuModuleLoadData, cuLaunchKernel on torch's
   current stream), so the three 128-byte tensor maps (validate/tma.py, cuTensorMapEncodeTiled) go by value
   as `const __grid_constant__` parameters without relying on how CuPy packs arguments.
1. smoke: every variant once, synchronously, on small shapes (N = 256 / 384, also a key count that is no
   multiple of bc), against the reference; printed at once, so a broken barrier protocol shows early (fa3.cu's
   mbarrier waits give up after FA3_WAIT_LIMIT tries instead of hanging).
2. correctness per (variant, shape): fresh torch.randn bf16 Q, K, V; O poisoned with NaN plus PAD NaN canary
   elements after it; reference torch scaled_dot_product_attention in fp32 on the upcast bf16 inputs (TF32 off);
   rel_err = ||O - ref|| / ||ref|| must be < 2e-2, O all finite and the canary intact.
3. timing of correct variants: CUDA events between back-to-back launches queued behind a ~10 ms spin
   (torch.cuda._sleep); 3 warm-ups; median/min/max of 50 launches (20 when one takes > 5 ms); input sets
   rotated when Q+K+V+O < 2x L2 (enough sets for ~200 MiB). torch SDPA bf16 with the FLASH and the cuDNN
   backends as `reference` rows, timed the same way.
4. ncu: one child process of this script launches every correct (variant, shape) once on random inputs under
   ncu --clock-control none -k regex:^fa3$ (every launch of the child profiled once; ncu flushes the caches
   before each replay pass, so no warm-up launch is needed); the rows are matched to the plan by launch order.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import ctypes
import json
import math
import platform
import re
import shutil
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

NAME = "fa3"
SRC = KDIR / "fa3.cu"
# IR knob defaults of fa3 (TC_DESIGNS.md); `params` in the JSON lists only the knobs that differ from these
DEFAULTS: dict[str, Any] = {"br": 128, "bc": 128, "stages": 2, "swizzle": "128B", "causal": 0}
# (B, H, N, d) and the causal settings measured at each
SHAPES: list[tuple[tuple[int, int, int, int], tuple[int, ...]]] = [
    ((4, 16, 4096, 128), (0, 1)), ((8, 32, 2048, 64), (0, 1)), ((2, 16, 1024, 128), (0,))]
BC_ALL = (128, 64, 176)
EXTRA_METRICS = [
    "sm__inst_executed_pipe_tensor_op_hmma.sum",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_tensor_op_gmma.sum",
    "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
    "smsp__inst_executed_op_ldsm.sum",
    "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum",
]
STALL_REASONS = ["long_scoreboard", "short_scoreboard", "mio_throttle", "lg_throttle", "barrier",
                 "math_pipe_throttle", "wait", "not_selected", "selected", "no_instructions", "dispatch_stall",
                 "drain", "imc_miss", "membar", "misc", "sleeping", "tex_throttle", "branch_resolving"]
REL_TOL = 2e-2
PAD = 4096
L2_BYTES_NOMINAL = 50 * 1024 * 1024
ROTATE_BYTES = 200 * 1024 * 1024
SASS_OPS = ("HGMMA", "UTMALDG", "SYNCS", "BAR", "WARPGROUP", "MUFU.EX2", "SHFL", "LDL", "STL", "STG", "USETMAXREG",
            "F2FP", "FMNMX")


def log(msg: str) -> None:
    common.log(msg)


# ------------------------------------------------------------------------------------------------ variants
def variant_key(v: dict[str, Any]) -> str:
    return (f"d{v['d']}_bc{v['bc']}_c{v['causal']}_s{v['stages']}" + ("_pvsplit" if v.get("pv_split") else "")
            + ("" if v.get("pingpong", 1) else "_nopp"))


def defines(v: dict[str, Any]) -> list[str]:
    return [f"-DBR={v['br']}", f"-DBC={v['bc']}", f"-DHEAD_DIM={v['d']}", f"-DCAUSAL={v['causal']}",
            f"-DSTAGES={v['stages']}", f"-DPV_SPLIT={v.get('pv_split', 0)}", f"-DPINGPONG={v.get('pingpong', 1)}"]


def params_of(v: dict[str, Any]) -> dict[str, Any]:
    knobs = {"br": v["br"], "bc": v["bc"], "stages": v["stages"], "swizzle": "128B", "causal": v["causal"]}
    out = {k: val for k, val in knobs.items() if DEFAULTS.get(k) != val}
    if v.get("pv_split"):
        out["pv_split"] = v["pv_split"]
    if not v.get("pingpong", 1):
        out["pingpong"] = 0
    return out


def make_variant(d: int, causal: int, bc: int = 128, stages: int = 2, pv_split: int = 0, pingpong: int = 1
                 ) -> dict[str, Any]:
    return {"br": 128, "bc": bc, "d": d, "causal": causal, "stages": stages, "pv_split": pv_split,
            "pingpong": pingpong}


# ------------------------------------------------------------------------------------------------ build
def nvcc_path() -> str:
    return shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"


def build_one(v: dict[str, Any], work: Path) -> dict[str, Any]:
    key = variant_key(v)
    cubin = work / f"fa3_{key}.cubin"
    flags = ["-std=c++17", "-O3", "-gencode=arch=compute_90a,code=sm_90a", "-cubin", "-Xptxas", "-v",
             *defines(v)]
    cmd = [nvcc_path(), *flags, "-o", str(cubin), str(SRC)]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    info: dict[str, Any] = {"key": key, "flags": " ".join(flags), "seconds": round(time.time() - t0, 1),
                            "ok": p.returncode == 0 and cubin.exists()}
    txt = (p.stdout or "") + (p.stderr or "")
    info["ptxas"] = [ln.strip() for ln in txt.splitlines() if "ptxas" in ln or "spill" in ln or "warning" in ln
                     or "error" in ln][-12:]
    m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", txt)
    if m:
        info["spill_stores"], info["spill_loads"] = int(m.group(1)), int(m.group(2))
    info["wgmma_serialized_warning"] = "C7512" in txt or "C7520" in txt or "C7510" in txt
    if not info["ok"]:
        info["error"] = txt[-3000:]
        return info
    info["cubin"] = str(cubin)
    cuobjdump = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
    try:
        q = subprocess.run([cuobjdump, "-sass", str(cubin)], capture_output=True, text=True, timeout=300)
    except OSError as e:
        info["sass_error"] = f"{type(e).__name__}: {e}"
        return info
    if q.returncode == 0:
        counts = dict.fromkeys(SASS_OPS, 0)
        for ln in q.stdout.splitlines():
            if "/*" not in ln:
                continue
            body = ln.split("*/", 1)[-1].strip()
            toks = body.replace("{", " ").split()
            if toks and toks[0].startswith("@"):
                toks = toks[1:]
            if not toks:
                continue
            opc = toks[0].rstrip(";")
            for op in SASS_OPS:
                if opc == op or opc.startswith(op + "."):
                    counts[op] += 1
        info["sass_counts"] = {k: c for k, c in counts.items() if c}
    else:
        info["sass_error"] = q.stderr[-500:]
    return info


def build_all(variants: list[dict[str, Any]], work: Path) -> dict[str, dict[str, Any]]:
    uniq = {variant_key(v): v for v in variants}
    with cf.ThreadPoolExecutor(max_workers=min(12, len(uniq))) as ex:
        res = list(ex.map(lambda v: build_one(v, work), uniq.values()))
    return {r["key"]: r for r in res}


# ------------------------------------------------------------------------------------------------ driver API
class Driver:
    """The few libcuda entry points needed to load a cubin and launch it with by-value 128-byte parameters."""

    def __init__(self) -> None:
        self.lib = tma.libcuda()
        L = self.lib
        vp, i32, u32 = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint
        L.cuCtxGetCurrent.argtypes = [ctypes.POINTER(vp)]
        L.cuModuleLoadData.argtypes = [ctypes.POINTER(vp), vp]
        L.cuModuleGetFunction.argtypes = [ctypes.POINTER(vp), vp, ctypes.c_char_p]
        L.cuModuleGetGlobal_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_size_t), vp,
                                           ctypes.c_char_p]
        L.cuMemcpyDtoH_v2.argtypes = [vp, ctypes.c_uint64, ctypes.c_size_t]
        L.cuFuncSetAttribute.argtypes = [vp, i32, i32]
        L.cuFuncGetAttribute.argtypes = [ctypes.POINTER(i32), i32, vp]
        L.cuLaunchKernel.argtypes = [vp, u32, u32, u32, u32, u32, u32, u32, vp, ctypes.POINTER(vp), ctypes.POINTER(vp)]
        for f in ("cuCtxGetCurrent", "cuModuleLoadData", "cuModuleGetFunction", "cuModuleGetGlobal_v2",
                  "cuMemcpyDtoH_v2", "cuFuncSetAttribute", "cuFuncGetAttribute", "cuLaunchKernel"):
            getattr(L, f).restype = ctypes.c_int

    def check(self, rc: int, what: str) -> None:
        if rc != 0:
            raise RuntimeError(f"{what}: {tma._err(rc)}")

    def current_context(self) -> int:
        c = ctypes.c_void_p()
        self.check(self.lib.cuCtxGetCurrent(ctypes.byref(c)), "cuCtxGetCurrent")
        if not c.value:
            raise RuntimeError("no current CUDA context (torch has not initialised the device?)")
        return c.value


class Fa3Kernel:
    ATTR = {"max_threads_per_block": 0, "shared_size_bytes": 1, "const_size_bytes": 2, "local_size_bytes": 3,
            "num_regs": 4, "ptx_version": 5, "binary_version": 6}

    def __init__(self, drv: Driver, cubin: str) -> None:
        self.drv = drv
        drv.current_context()
        self.image = ctypes.create_string_buffer(Path(cubin).read_bytes())
        mod = ctypes.c_void_p()
        drv.check(drv.lib.cuModuleLoadData(ctypes.byref(mod), self.image), "cuModuleLoadData")
        self.mod = mod
        fn = ctypes.c_void_p()
        drv.check(drv.lib.cuModuleGetFunction(ctypes.byref(fn), mod, NAME.encode()), "cuModuleGetFunction")
        self.fn = fn
        dptr, size = ctypes.c_uint64(), ctypes.c_size_t()
        drv.check(drv.lib.cuModuleGetGlobal_v2(ctypes.byref(dptr), ctypes.byref(size), mod, b"fa3_config"),
                  "cuModuleGetGlobal(fa3_config)")
        cfg = (ctypes.c_int * 8)()
        drv.check(drv.lib.cuMemcpyDtoH_v2(ctypes.cast(cfg, ctypes.c_void_p), dptr.value, 32), "cuMemcpyDtoH")
        self.smem, self.br, self.bc, self.d, self.causal, self.stages, self.pv_split, self.threads = list(cfg)
        drv.check(drv.lib.cuFuncSetAttribute(fn, 8, self.smem), "cuFuncSetAttribute(max dynamic smem)")
        self.attributes = {}
        for k, a in self.ATTR.items():
            val = ctypes.c_int()
            drv.check(drv.lib.cuFuncGetAttribute(ctypes.byref(val), a, fn), f"cuFuncGetAttribute({k})")
            self.attributes[k] = val.value

    def args(self, q: Any, k: Any, v: Any, o: Any) -> tuple[Any, ...]:
        """Argument storage for cuLaunchKernel (kept alive by the caller): 3 tensor maps, O, N, scale_log2."""
        B, H, N, d = q.shape
        assert d == self.d and N % self.br == 0 and q.is_contiguous() and k.is_contiguous() and v.is_contiguous()

        def tmap(t: Any, rows: int) -> Any:
            m = tma.encode(t.data_ptr(), "bfloat16", [d, N, B * H], [d * 2, N * d * 2], [64, rows, 1], 128,
                           l2_promotion=256)
            return ctypes.create_string_buffer(m, 128)

        store = [tmap(q, self.br), tmap(k, self.bc), tmap(v, self.bc), ctypes.c_uint64(o.data_ptr()),
                 ctypes.c_int(N), ctypes.c_float(math.log2(math.e) / math.sqrt(d))]
        ptrs = (ctypes.c_void_p * len(store))(*[ctypes.cast(ctypes.pointer(s), ctypes.c_void_p) if not isinstance(
            s, ctypes.Array) else ctypes.cast(s, ctypes.c_void_p) for s in store])
        return (store, ptrs, (N // self.br, H, B))

    def launch(self, a: tuple[Any, ...], stream: int) -> None:
        store, ptrs, grid = a
        rc = self.drv.lib.cuLaunchKernel(self.fn, grid[0], grid[1], grid[2], self.threads, 1, 1, self.smem,
                                         ctypes.c_void_p(stream), ptrs, None)
        self.drv.check(rc, "cuLaunchKernel")


# ------------------------------------------------------------------------------------------------ checks
def flops(shape: tuple[int, int, int, int], causal: int) -> float:
    B, H, N, d = shape
    f = 4.0 * B * H * N * N * d
    return f / 2 if causal else f


def reference(torch: Any, q: Any, k: Any, v: Any, causal: int) -> Any:
    import torch.nn.functional as F

    return F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=bool(causal))


def check(torch: Any, kern: Fa3Kernel, shape: tuple[int, int, int, int], causal: int, seed: int) -> dict[str, Any]:
    B, H, N, d = shape
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    q, k, v = (torch.randn(B, H, N, d, device="cuda", generator=g, dtype=torch.float32).to(torch.bfloat16)
               for _ in range(3))
    buf = torch.full((B * H * N * d + PAD,), float("nan"), device="cuda", dtype=torch.bfloat16)
    o = buf[: B * H * N * d].view(B, H, N, d)
    a = kern.args(q, k, v, o)
    torch.cuda.synchronize()
    t0 = time.time()
    kern.launch(a, torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    wall = time.time() - t0
    ref = reference(torch, q, k, v, causal)
    of = o.float()
    finite = bool(torch.isfinite(of).all())
    nonfinite = int((~torch.isfinite(of)).sum())
    diff = torch.nan_to_num(of - ref, nan=1e30, posinf=1e30, neginf=1e30)
    rel = float(torch.linalg.vector_norm(diff.double()) / torch.linalg.vector_norm(ref.double()))
    canary = bool(torch.isnan(buf[B * H * N * d:]).all())
    ok = finite and canary and math.isfinite(rel) and rel < REL_TOL
    return {"correct": ok, "rel_err": rel, "finite": finite, "nonfinite_elements": nonfinite,
            "canary_intact": canary, "first_launch_wall_s": round(wall, 4)}


def spin(torch: Any) -> None:
    torch.cuda._sleep(20_000_000)  # ~10 ms at ~1.98 GHz


def time_fn(torch: Any, launch_i: Any) -> dict[str, float]:
    for i in range(3):
        launch_i(i)
    torch.cuda.synchronize()
    est = common.time_launches(torch, launch_i, 3, lambda: spin(torch))
    n = 20 if min(est) > 5e6 else 50
    return common.summarize(common.time_launches(torch, launch_i, n, lambda: spin(torch)))


def make_sets(torch: Any, shape: tuple[int, int, int, int], seed: int, quick: bool) -> list[tuple[Any, ...]]:
    B, H, N, d = shape
    set_bytes = 4 * B * H * N * d * 2
    n = 1 if set_bytes > 2 * L2_BYTES_NOMINAL else min(16, math.ceil(ROTATE_BYTES / set_bytes))
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    sets = []
    for _ in range(n):
        q, k, v = (torch.randn(B, H, N, d, device="cuda", generator=g, dtype=torch.float32).to(torch.bfloat16)
                   for _ in range(3))
        sets.append((q, k, v, torch.empty_like(q)))
    return sets


# ------------------------------------------------------------------------------------------------ ncu child
def ncu_child(plan_path: str) -> None:
    import torch

    plan = json.loads(Path(plan_path).read_text())
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    drv = Driver()
    kerns: dict[str, Fa3Kernel] = {}
    for item in plan:
        if item["cubin"] not in kerns:
            kerns[item["cubin"]] = Fa3Kernel(drv, item["cubin"])
        kern = kerns[item["cubin"]]
        B, H, N, d = item["shape"]
        g = torch.Generator(device="cuda")
        g.manual_seed(4321)
        q, k, v = (torch.randn(B, H, N, d, device="cuda", generator=g).to(torch.bfloat16) for _ in range(3))
        o = torch.empty_like(q)
        a = kern.args(q, k, v, o)
        torch.cuda.synchronize()
        kern.launch(a, torch.cuda.current_stream().cuda_stream)
        torch.cuda.synchronize()
        del q, k, v, o
        torch.cuda.empty_cache()


def ncu_pass(ncu: str, data: dict[str, Any], entries: list[dict[str, Any]], available: set[str], work: Path,
             raw: Path, timeout: float) -> None:
    import run_h100

    stalls = common.stall_metrics(available) or [
        f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in STALL_REASONS]
    wanted = list(dict.fromkeys(run_h100.LADDER_METRICS + EXTRA_METRICS + stalls))
    present, missing = common.split_available(wanted, available)
    todo = [e for e in entries if e.get("correct") and e.get("_cubin")]
    if not todo:
        return
    plan = [{"cubin": e["_cubin"], "shape": e["shape"]} for e in todo]
    plan_path = work / "ncu_plan.json"
    plan_path.write_text(json.dumps(plan))
    child = [*common.python_cmd(), str(Path(__file__).resolve()), "--ncu-child", str(plan_path)]
    t0 = time.time()
    rows, units, csv_text, dropped, nlog = common.run_ncu(ncu, present, f"^{NAME}$", child, work / "fa3",
                                                          timeout)
    log(f"ncu: {len(rows)} rows for {len(plan)} launches in {time.time() - t0:.0f} s")
    (raw / "ncu_fa3.csv").write_text(csv_text)
    (raw / "ncu_fa3_log.txt").write_text(nlog[-200000:])
    matched = common.assign_rows(rows, [NAME] * len(plan))
    used = [m for m in present if m not in dropped]
    for e, r in zip(todo, matched, strict=True):
        e["ncu"] = common.metric_values(r, used)
        if r is None:
            e["ncu_error"] = "no ncu row for this launch (see ncu_fa3_log.txt)"
        elif str(r.get("Grid Size", "")).replace(" ", "") != "({},{},{})".format(*e["grid"]):
            e["ncu_error"] = f"grid mismatch: ncu {r.get('Grid Size')} vs {e['grid']}"
    data["ncu_units"] = {m: u for m, u in units.items() if m in wanted}
    data["ncu_missing"] = missing + dropped
    data["ncu_how"] = (f"one child process, every correct (variant, shape) launched once on random inputs; "
                       f"ncu --clock-control none -k regex:^{NAME}$; {len(used)} metrics; "
                       f"{round(time.time() - t0)} s")


# ------------------------------------------------------------------------------------------------ main
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=False, default=str(REPO / "validate" / "measurements" / "h100" /
                                                         "fa3-2026-11-22.json"))
    ap.add_argument("--quick", action="store_true", help="bc=128 only, no ncu, no reference rows")
    ap.add_argument("--skip-ncu", action="store_true")
    ap.add_argument("--skip-smoke", action="store_true")
    ap.add_argument("--no-ablations", action="store_true", help="skip the pingpong=0 / stages=1,3 rows")
    ap.add_argument("--bc", default=",".join(map(str, BC_ALL)), help="bc values to measure (default 128,64,176)")
    ap.add_argument("--smoke-extra", action="store_true", help="also smoke-test pv_split=1 and stages=3 variants")
    ap.add_argument("--cases", default=None, help="JSON file: a list of {kernel: fa3, shape, params} measured instead "
                                                  "of the standard variants, no ablations (knob sweeps, "
                                                  "validate/run_knobs.sh)")
    ap.add_argument("--date", default="2026-11-22")
    ap.add_argument("--ncu-timeout", type=float, default=400.0)
    ap.add_argument("--ncu-child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.ncu_child:
        ncu_child(a.ncu_child)
        return 0

    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    out_path = Path(a.out)
    raw = out_path.parent
    raw.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="fa3_"))
    bcs = [128] if a.quick else [int(x) for x in a.bc.split(",") if x]

    # -------- variants
    measured: list[tuple[dict[str, Any], tuple[int, int, int, int]]] = []
    for shape, causals in SHAPES:
        for c in causals:
            for bc in bcs:
                measured.append((make_variant(shape[3], c, bc), shape))
    # ablations (timed and checked, not profiled; JSON `ablations`): no ping-pong, 1 and 3 stages, at bc = 128
    ablations: list[tuple[dict[str, Any], tuple[int, int, int, int]]] = []
    if a.cases:
        measured = []
        for c in json.loads(Path(a.cases).read_text()):
            p = {k: int(v) for k, v in (c.get("params") or {}).items()}
            shape = tuple(c["shape"])
            measured.append((make_variant(shape[3], p.get("causal", 0), p.get("bc", 128), p.get("stages", 2)), shape))
    if not a.quick and not a.no_ablations and not a.cases:
        for shape, causals in SHAPES:
            for c in causals:
                ablations += [(make_variant(shape[3], c, 128, pingpong=0), shape),
                              (make_variant(shape[3], c, 128, stages=1), shape),
                              (make_variant(shape[3], c, 128, stages=3), shape)]
    smoke_variants = [v for v, _ in measured + ablations]
    if a.smoke_extra:
        smoke_variants += [make_variant(128, 0, 128, 2, 1), make_variant(128, 1, 128, 3), make_variant(64, 0, 128, 1)]
    t0 = time.time()
    builds = build_all(smoke_variants, work)
    log(f"built {sum(b['ok'] for b in builds.values())}/{len(builds)} variants in {time.time() - t0:.0f} s")
    for b in builds.values():
        log(f"  {b['key']}: ok={b['ok']} spills={b.get('spill_stores')} serialized={b['wgmma_serialized_warning']} "
            f"sass={b.get('sass_counts')} {b.get('error', '')[:800]}")

    drv = Driver()
    kerns: dict[str, Fa3Kernel] = {}
    load_err: dict[str, str] = {}
    for key, b in builds.items():
        if b["ok"]:
            try:
                kerns[key] = Fa3Kernel(drv, b["cubin"])
            except Exception as e:  # noqa: BLE001
                load_err[key] = f"{type(e).__name__}: {e}"
                log(f"load {key}: {load_err[key]}")

    # -------- smoke
    smoke: list[dict[str, Any]] = []
    if not a.skip_smoke:
        seen = set()
        for v in smoke_variants:
            key = variant_key(v)
            if key in seen or key not in kerns:
                continue
            seen.add(key)
            for shape in ((1, 2, 256, v["d"]), (2, 3, 384, v["d"])):
                try:
                    r = check(torch, kerns[key], shape, v["causal"], seed=99)
                except Exception as e:  # noqa: BLE001
                    r = {"correct": False, "error": f"{type(e).__name__}: {e}"[:500]}
                r.update(variant=key, shape=list(shape))
                smoke.append(r)
                log(f"smoke {key} {shape}: correct={r.get('correct')} rel={r.get('rel_err')} "
                    f"nonfinite={r.get('nonfinite_elements')} wall={r.get('first_launch_wall_s')} {r.get('error', '')}")
                if "error" in r:
                    try:
                        torch.cuda.synchronize()
                    except Exception as e2:  # noqa: BLE001
                        log(f"sticky CUDA error after {key}: {e2}; stopping")
                        return 2

    # -------- correctness + timing
    ncu = None if (a.quick or a.skip_ncu) else common.find_ncu()
    import cupy as cp
    import run_h100

    gpu = run_h100.gpu_info(cp, torch, ncu)
    entries: list[dict[str, Any]] = []
    abl_entries: list[dict[str, Any]] = []
    stream = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    sets_cache: dict[tuple[int, ...], list[tuple[Any, ...]]] = {}
    n_main = len(measured)
    shape_order = list(dict.fromkeys([sh for sh, _ in SHAPES] + [sh for _, sh in measured + ablations]))
    todo = sorted(enumerate(measured + ablations), key=lambda t: shape_order.index(t[1][1]))
    for i, (v, shape) in todo:
        key = variant_key(v)
        B, H, N, d = shape
        e: dict[str, Any] = {"kernel": NAME, "shape": list(shape), "params": params_of(v),
                             "grid": [N // v["br"], H, B], "block": [384, 1, 1], "cluster": None,
                             "twin": "validate/kernels/fa3.cu", "twin_header": SRC.read_text().splitlines()[0],
                             "variant": key, "build": {k: val for k, val in builds.get(key, {}).items()
                                                       if k not in ("cubin",)}}
        if key not in kerns:
            e.update(correct=False, error=load_err.get(key) or builds.get(key, {}).get("error", "not built"))
            entries.append(e)
            continue
        kern = kerns[key]
        at = kern.attributes
        e["registers_per_thread"] = at["num_regs"]
        e["registers_note"] = ("launch count (168 = 65536 / 384 rounded down to 8); setmaxnreg then moves the "
                               "producer warpgroup to 24 and the two consumer warpgroups to 240")
        e["shared_bytes_per_block"] = kern.smem + at["shared_size_bytes"]
        e["local_bytes_per_thread"] = at["local_size_bytes"]
        e["binary_version"] = at["binary_version"]
        e["_cubin"] = builds[key]["cubin"]
        try:
            chk = check(torch, kern, shape, v["causal"], seed=1000 + i)
            e.update(correct=chk["correct"], rel_err=chk["rel_err"], checks=chk)
            if chk["correct"]:
                sk = tuple(shape)
                if sk not in sets_cache:
                    sets_cache.clear()
                    torch.cuda.empty_cache()
                    sets_cache[sk] = make_sets(torch, shape, 7 + i, a.quick)
                sets = sets_cache[sk]
                argv = [kern.args(*s) for s in sets]
                e["time_ns"] = time_fn(torch, lambda j, argv=argv, kern=kern: kern.launch(argv[j % len(argv)],
                                                                                        stream()))
                e["timing"] = {"input_sets": len(sets)}
                e["tflops"] = flops(shape, v["causal"]) / e["time_ns"]["median"] / 1e3
        except Exception:  # noqa: BLE001
            e.update(correct=False, error=traceback.format_exc()[-2000:])
        log(f"{key:<22} {shape} correct={e.get('correct')} rel={e.get('rel_err')} "
            f"t={e.get('time_ns', {}).get('median', float('nan')) / 1e3:.1f} us tflops={e.get('tflops', 0):.0f}")
        if i < n_main:
            entries.append(e)
        else:
            e.pop("_cubin", None)
            abl_entries.append(e)

    # -------- reference rows: torch SDPA bf16, FLASH and cuDNN backends
    ref_rows: list[dict[str, Any]] = []
    if not a.quick and not a.cases:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        import torch.nn.functional as F

        for si, (shape, causals) in enumerate(SHAPES):
            sets_cache.clear()
            torch.cuda.empty_cache()
            sets = make_sets(torch, shape, 500 + si, False)
            for c in causals:
                ref = reference(torch, *sets[0][:3], c)
                for name, be in (("torch_sdpa_flash", SDPBackend.FLASH_ATTENTION),
                                 ("torch_sdpa_cudnn", SDPBackend.CUDNN_ATTENTION)):
                    row: dict[str, Any] = {"name": name, "shape": list(shape), "causal": c,
                                           "how": f"torch.nn.functional.scaled_dot_product_attention on bf16 "
                                                  f"[B,H,N,d] under sdpa_kernel({be.name}), is_causal={bool(c)}"}
                    try:
                        with sdpa_kernel(be):
                            o = F.scaled_dot_product_attention(*sets[0][:3], is_causal=bool(c))
                            torch.cuda.synchronize()
                            row["rel_err"] = float(torch.linalg.vector_norm((o.float() - ref).double()) /
                                                   torch.linalg.vector_norm(ref.double()))

                            def go(j: int, sets: list = sets, c: int = c) -> None:
                                s = sets[j % len(sets)]
                                F.scaled_dot_product_attention(s[0], s[1], s[2], is_causal=bool(c))

                            row["time_ns"] = time_fn(torch, go)
                            row["tflops"] = flops(shape, c) / row["time_ns"]["median"] / 1e3
                    except Exception as ex:  # noqa: BLE001
                        row["error"] = f"{type(ex).__name__}: {ex}"[:500]
                    ref_rows.append(row)
                    log(f"{name} {shape} causal={c}: {row.get('time_ns', {}).get('median', float('nan')) / 1e3:.1f}"
                        f" us {row.get('tflops', 0):.0f} TFLOP/s rel={row.get('rel_err')} {row.get('error', '')}")
        sets_cache.clear()
        torch.cuda.empty_cache()

    data: dict[str, Any] = {"schema": 1, "date": a.date, "gpu": gpu, "kernels": entries, "reference": ref_rows,
                            "ablations": abl_entries, "smoke": smoke, "ncu_units": {}, "ncu_missing": []}
    data["method"] = {
        "build": "nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -cubin with -DBR/-DBC/-DHEAD_DIM/"
                 "-DCAUSAL/-DSTAGES/-DPV_SPLIT; loaded with cuModuleLoadData and launched with cuLaunchKernel "
                 "(ctypes) on torch's current stream; tensor maps (validate/tma.py) 3D {d, N, B*H}, box {64, rows, 1}"
                 ", 128B swizzle, L2 promotion 256B, passed by value",
        "correctness": "fresh torch.randn bf16 Q, K, V per (variant, shape); O filled with NaN and followed by "
                       f"{PAD} NaN canary elements; reference torch SDPA in fp32 on the upcast inputs (TF32 off); "
                       f"rel_err = ||O - ref||_2 / ||ref||_2 < {REL_TOL}, O finite, canary intact. Smoke checks "
                       "on (1,2,256,d) and (2,3,384,d) first (results under `smoke`)",
        "timing": "CUDA events between back-to-back launches queued behind a ~10 ms torch.cuda._sleep; 3 warm-ups; "
                  "median/min/max of 50 launches (20 when one takes > 5 ms); input sets rotated when Q+K+V+O < 2x L2 "
                  f"(enough for ~{ROTATE_BYTES >> 20} MiB); FLOPs 4*B*H*N^2*d, halved for causal",
        "ncu": "see ncu_how",
        "command": " ".join(sys.argv), "host": platform.node(),
    }
    data["gpu"]["nvidia_smi_after_timing"] = common.nvidia_smi()
    common.write_json(out_path, {**data, "kernels": [{k: val for k, val in e.items() if k != "_cubin"}
                                                     for e in entries]})  # in case ncu does not finish
    if ncu:
        available, _ = common.ncu_available_metrics(ncu)
        log(f"ncu --query-metrics: {len(available)} names")
        try:
            ncu_pass(ncu, data, entries, available, work, raw, a.ncu_timeout)
        except Exception:  # noqa: BLE001
            data["ncu_error"] = traceback.format_exc()[-3000:]
            log(data["ncu_error"])
    else:
        data["ncu_missing"] = ["(ncu not run: --quick/--skip-ncu or not found)"]
    for e in entries:
        e.pop("_cubin", None)
    common.write_json(out_path, data)
    log(f"wrote {out_path}")
    print(f"{'variant':<24} {'shape':<18} {'median us':>10} {'TFLOP/s':>8} {'regs':>5} {'smem':>7} correct rel_err")
    for e in entries:
        t = e.get("time_ns", {}).get("median")
        print(f"{e['variant']:<24} {'x'.join(map(str, e['shape'])):<18} {(t / 1e3 if t else float('nan')):>10.1f} "
              f"{e.get('tflops', float('nan')):>8.0f} {e.get('registers_per_thread', '-')!s:>5} "
              f"{e.get('shared_bytes_per_block', '-')!s:>7} {e.get('correct')} {e.get('rel_err')}")
    for e in abl_entries:
        t = e.get("time_ns", {}).get("median")
        print(f"{e['variant']:<24} {'x'.join(map(str, e['shape'])):<18} {(t / 1e3 if t else float('nan')):>10.1f} "
              f"{e.get('tflops', float('nan')):>8.0f} (ablation) {e.get('correct')} {e.get('rel_err')}")
    for r in ref_rows:
        t = r.get("time_ns", {}).get("median")
        print(f"{r['name'] + ' c' + str(r['causal']):<24} {'x'.join(map(str, r['shape'])):<18} "
              f"{(t / 1e3 if t else float('nan')):>10.1f} {r.get('tflops', float('nan')):>8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
