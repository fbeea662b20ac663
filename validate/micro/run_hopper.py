"""Hopper-only micro-benchmarks for the H100 (kernels in validate/micro/hopper.cu).

    PYTHONUNBUFFERED=1 python3 validate/micro/run_hopper.py --out $OUT/hopper-2026-11-22.json

Sections (each one recorded, or its error recorded, independently of the others):
1. TMA / bulk copy engine, 1D ``cp.async.bulk`` global -> shared completing on an mbarrier:
   latency of one copy (16 B .. 16 KiB; L2-resident and cold from HBM) and chip-wide streaming throughput
   (4-32 KiB chunks, 1-4 ring stages, 1-16 CTAs per SM; HBM and L2-resident sources; plus one CTA alone);
2. wgmma m64nNk16 bf16 -> f32 (N = 64, 128, 256) from shared-memory descriptors: throughput with 1 and 2
   warpgroups per SM, and issue -> wait_group 0 latency of one (and of 8 back-to-back) on an idle GPU;
3. dependent-chain latency of ldmatrix.x4 and of mma.sync m16n8k16.
Timing: clock64 inside the kernels (SM cycles), CUDA events outside (median of repeated launches). The kernels
are built for sm_90a; which build route worked is recorded under raw.build.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

KERNELS = ["hop_tma_lat", "hop_tma_tp", "hop_tma_issue", "hop_ldsm_lat", "hop_mma_lat", "hop_clock"]
KERNELS += [f"hop_wgmma_tp_n{n}_b64" for n in (64, 128, 256)] + ["hop_wgmma_tp_n256_b8"]
KERNELS += [f"hop_wgmma_lat_n{n}_b{b}" for n in (64, 128, 256) for b in (1, 8)]

TMA_LAT_SIZES = [16 << i for i in range(11)]  # 16 B .. 16 KiB
TMA_LAT_REPS = 33
TMA_CHUNKS_KB = (4, 8, 16, 32)
TMA_STAGES = (1, 2, 3, 4)
TMA_CTAS = (1, 2, 4, 8, 16)
SMEM_PER_SM = 228 * 1024
SMEM_PER_BLOCK_MAX = 227 * 1024
HBM_BYTES = 1 << 30
L2_BYTES = 16 << 20
L2_TRAFFIC = 2 << 30
WG_NS = (64, 128, 256)


def np_() -> Any:
    import numpy as np

    return np


def i32(x: int) -> Any:
    return np_().int32(x)


def i64(x: int) -> Any:
    return np_().int64(x)


def u32(x: int) -> Any:
    return np_().uint32(x)


def rec_stats(rec: Any) -> dict[str, float]:
    """Timing records (n x 5: t0, t1, g0, g1, smid) -> per-SM span (first start to last end on that SM, cycles),
    median and max over SMs; clock (median own cycles / own ns); block count and distinct SMs."""
    np = np_()
    r = np.asarray(rec).reshape(-1, 5).astype(np.float64)
    per = {}
    for sm in np.unique(r[:, 4]):
        rr = r[r[:, 4] == sm]
        per[int(sm)] = float(rr[:, 1].max() - rr[:, 0].min())
    dt = r[:, 3] - r[:, 2]
    ok = dt > 0
    return {"blocks": int(r.shape[0]), "distinct_sms": len(per),
            "cycles_per_sm_median": float(statistics.median(per.values())),
            "cycles_per_sm_max": float(max(per.values())),
            "block_cycles_median": float(np.median(r[:, 1] - r[:, 0])),
            "clock_mhz": float(np.median((r[ok, 1] - r[ok, 0]) / dt[ok]) * 1e3) if ok.any() else float("nan")}


def build(cp: Any, work: Path) -> tuple[Any, dict[str, Any]]:
    """Load hopper.cu for sm_90a: NVRTC through CuPy first, then CuPy's nvcc backend, then nvcc -cubin."""
    code = (HERE / "hopper.cu").read_text()
    info: dict[str, Any] = {"tries": []}
    tries = [
        ("cupy RawModule, NVRTC, options ('-std=c++17', '--gpu-architecture=sm_90a')",
         lambda: cp.RawModule(code=code, options=("-std=c++17", "--gpu-architecture=sm_90a"))),
        ("cupy RawModule backend='nvcc', options ('-std=c++17', '-gencode=arch=compute_90a,code=sm_90a')",
         lambda: cp.RawModule(code=code, backend="nvcc",
                              options=("-std=c++17", "-gencode=arch=compute_90a,code=sm_90a"))),
    ]

    def by_nvcc() -> Any:
        cubin = work / "hopper.cubin"
        cmd = ["nvcc", "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a", "-cubin", "-o", str(cubin),
               str(HERE / "hopper.cu")]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            raise RuntimeError(p.stderr[-1500:])
        return cp.RawModule(path=str(cubin))

    tries.append(("nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin, cupy RawModule(path=cubin)",
                  by_nvcc))
    for how, fn in tries:
        t0 = time.time()
        try:
            mod = fn()
            for k in KERNELS:  # forces compilation and checks every kernel is there
                mod.get_function(k)
            info["tries"].append({"how": how, "ok": True, "seconds": round(time.time() - t0, 2)})
            info["used"] = how
            return mod, info
        except Exception as e:  # noqa: BLE001 - record and try the next route
            info["tries"].append({"how": how, "ok": False, "error": f"{type(e).__name__}: {str(e)[-1200:]}"})
            common.log(f"build failed: {how}: {type(e).__name__}: {str(e)[-300:]}")
    raise RuntimeError("no build route worked: " + repr(info))


SASS_OPS = ("HGMMA", "WARPGROUP.ARRIVE", "WARPGROUP.DEPBAR", "WARPSYNC", "UBLKCP", "SYNCS", "LDSM", "HMMA",
            "BAR.SYNC", "CS2R", "R2UR", "UMOV")


def sass_counts(work: Path) -> dict[str, Any]:
    """nvcc -cubin for sm_90a, cuobjdump -sass: per kernel, how many of the opcodes of interest (HGMMA = wgmma,
    UBLKCP = bulk copy, SYNCS = mbarrier ops, ...), and the opcode sequence of hop_wgmma_tp_n256_b8's loop."""
    cubin = work / "sass.cubin"
    p = subprocess.run(["nvcc", "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a", "-cubin", "-Xptxas", "-v",
                        "-o", str(cubin), str(HERE / "hopper.cu")], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return {"error": p.stderr[-1500:]}
    regs = {}
    cur = None
    for ln in p.stderr.splitlines():
        if "Compiling entry function" in ln:
            cur = ln.split("'")[1]
        elif cur and "Used" in ln and "registers" in ln:
            regs[cur] = ln.split("info    :")[-1].strip()
    q = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True, timeout=300)
    if q.returncode != 0:
        return {"error": q.stderr[-1500:], "ptxas": regs}
    out: dict[str, Any] = {}
    fn = None
    seq: list[str] = []
    for ln in q.stdout.splitlines():
        if "Function :" in ln:
            fn = ln.split("Function :")[1].strip()
            out[fn] = dict.fromkeys(SASS_OPS, 0)
            continue
        if fn is None or "/*" not in ln:
            continue
        body = ln.split("*/", 1)[-1].strip()
        if not body or body.startswith("/*"):
            continue
        toks = body.replace("{", " ").split()
        if toks and toks[0].startswith("@"):
            toks = toks[1:]
        if not toks:
            continue
        opc = toks[0].rstrip(";")
        for op in SASS_OPS:
            if opc == op or opc.startswith(op + "."):
                out[fn][op] += 1
        if fn == "hop_wgmma_tp_n256_b8" and len(seq) < 400:
            seq.append(opc)
    return {"counts": {k: {o: c for o, c in v.items() if c} for k, v in out.items()}, "ptxas": regs,
            "hop_wgmma_tp_n256_b8_opcodes": " ".join(seq)}


class Hopper:
    def __init__(self, cp: Any, torch: Any, work: Path) -> None:
        self.cp = cp
        self.torch = torch
        self.mod, self.build_info = build(cp, work)
        self.sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
        self.sink_u32 = cp.zeros(256, dtype=cp.uint32)
        self.sink_f32 = cp.zeros(256, dtype=cp.float32)
        self.stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
        self._hbm: Any = None

    def fn(self, name: str, shared: int = 0) -> Any:
        f = self.mod.get_function(name)
        if shared > 48 * 1024:
            f.max_dynamic_shared_size_bytes = shared
        return f

    def launch(self, name: str, grid: int, block: int, args: tuple, shared: int = 0) -> None:
        f = self.fn(name, shared)
        with self.stream:
            f((grid,), (block,), args, shared_mem=shared)

    def sync(self) -> None:
        self.torch.cuda.synchronize()

    def event_times(self, go: Any, n: int, warm: int = 1) -> list[float]:
        for _ in range(warm):
            go()
        self.sync()
        return common.time_launches(self.torch, lambda _i: go(), n, None)

    def hbm(self) -> Any:
        if self._hbm is None:
            self._hbm = self.cp.random.randint(0, 2**31 - 1, size=HBM_BYTES // 4, dtype=self.cp.int32)
        return self._hbm

    def flush_l2(self) -> None:
        scratch = self.cp.empty(256 << 20, dtype=self.cp.uint8)
        scratch.fill(1)
        self.sync()
        del scratch

    # ---------------------------------------------------------------------------------------------- clock
    def clock(self, spin: int = 100_000_000) -> dict[str, Any]:
        out = self.cp.zeros(4, dtype=self.cp.int64)
        self.launch("hop_clock", 1, 1, (i64(spin), out))
        self.sync()
        cyc, ns = (int(v) for v in out[:2].get())
        return {"cycles": cyc, "ns": ns, "mhz": cyc / ns * 1e3,
                "how": "hop_clock: one thread spins on clock64; ratio to %globaltimer ns"}

    # ---------------------------------------------------------------------------------------------- 1 TMA
    def tma_lat(self) -> dict[str, Any]:
        cp, np = self.cp, np_()
        small = cp.random.randint(0, 2**31 - 1, size=(64 << 10) // 4, dtype=cp.int32)
        big = self.hbm()
        out = cp.zeros(TMA_LAT_REPS, dtype=cp.int64)
        res: dict[str, Any] = {"l2": [], "hbm": []}
        stride_hbm = 256 << 10
        for size in TMA_LAT_SIZES:
            # L2-resident: same source bytes every rep (read once before by rep 0, which is dropped)
            self.launch("hop_tma_lat", 1, 32, (small, i64(0), i32(size), i32(TMA_LAT_REPS), out, self.sink_u32),
                        shared=128 + size)
            self.sync()
            v = out.get().astype(np.float64)
            w = v[1:]
            res["l2"].append({"bytes": size, "median": float(np.median(w)), "min": float(w.min()),
                              "p90": float(np.percentile(w, 90)), "first": float(v[0])})
            # cold: L2 flushed by writing 256 MiB elsewhere, copy r from a fresh 256 KiB-strided offset
            self.flush_l2()
            self.launch("hop_tma_lat", 1, 32, (big, i64(stride_hbm), i32(size), i32(TMA_LAT_REPS), out,
                                               self.sink_u32), shared=128 + size)
            self.sync()
            v = out.get().astype(np.float64)
            w = v[1:]
            res["hbm"].append({"bytes": size, "median": float(np.median(w)), "min": float(w.min()),
                               "p90": float(np.percentile(w, 90)), "first": float(v[0])})
        res["how"] = ("hop_tma_lat: one thread; per rep: clock64, mbarrier.arrive.expect_tx, cp.async.bulk "
                      "global->shared (complete_tx on the mbarrier), mbarrier.try_wait.parity spin, clock64; "
                      f"{TMA_LAT_REPS} reps, rep 0 dropped, median. L2: the same 16-B-aligned source every rep. "
                      f"HBM: L2 flushed (256 MiB written) before, rep r reads offset r*{stride_hbm >> 10} KiB of a "
                      "1 GiB buffer (each a first touch, a new 2 MiB page every 8 reps)")
        return res

    def _tma_run(self, src: Any, wrap: int, traffic: int, chunk: int, stages: int, ctas_per_sm: int,
                 grid: int | None = None, n_time: int = 3, touch: int = 1) -> dict[str, Any]:
        cp = self.cp
        grid = grid if grid is not None else self.sms * ctas_per_sm
        n_chunks = traffic // chunk
        shared = 128 + stages * chunk
        rec = cp.zeros(grid * 5, dtype=cp.int64)

        def go() -> None:
            self.launch("hop_tma_tp", grid, 32, (src, i64(wrap), i64(n_chunks), i32(chunk), i32(stages),
                                                 i32(touch), rec, self.sink_u32), shared=shared)

        t = common.summarize(self.event_times(go, n_time))
        rs = rec_stats(rec.get())
        nbytes = n_chunks * chunk
        sms_used = min(grid, self.sms) if grid < self.sms else self.sms
        return {"chunk_bytes": chunk, "stages": stages, "ctas_per_sm": ctas_per_sm, "grid": grid, "touch": touch,
                "copies_in_flight_per_sm": stages * ctas_per_sm, "bytes_in_flight_per_sm": stages * ctas_per_sm * chunk,
                "bytes": nbytes, "time_ns": t, "GBps": nbytes / t["median"],
                "bytes_per_clk_per_sm_events": nbytes / sms_used / (t["median"] * rs["clock_mhz"] / 1e3),
                "bytes_per_clk_per_sm_clock64": nbytes / sms_used / rs["cycles_per_sm_median"] if grid >= self.sms
                else nbytes / rs["cycles_per_sm_max"], **rs}

    def tma_tp(self) -> dict[str, Any]:
        cp = self.cp
        res: dict[str, Any] = {"hbm": [], "l2": [], "one_cta": []}
        l2buf = cp.random.randint(0, 2**31 - 1, size=L2_BYTES // 4, dtype=cp.int32)
        for kb in TMA_CHUNKS_KB:
            chunk = kb << 10
            for ctas in TMA_CTAS:
                for st in TMA_STAGES:
                    per_block = 128 + st * chunk
                    if per_block > SMEM_PER_BLOCK_MAX or ctas * (per_block + 1024) > SMEM_PER_SM:
                        continue
                    for name, src, wrap, traffic in (("hbm", self.hbm(), HBM_BYTES, HBM_BYTES),
                                                     ("l2", l2buf, L2_BYTES, L2_TRAFFIC)):
                        try:
                            res[name].append(self._tma_run(src, wrap, traffic, chunk, st, ctas))
                        except Exception as e:  # noqa: BLE001
                            res[name].append({"chunk_bytes": chunk, "stages": st, "ctas_per_sm": ctas,
                                              "error": f"{type(e).__name__}: {e}"})
        # one CTA alone (one SM), L2-resident source: the per-SM engine limit without chip-wide contention
        for kb, stages in ((4, (1, 2, 4, 8)), (16, (1, 2, 4, 8)), (32, (1, 2, 4, 6))):
            for st in stages:
                for touch in (1, 0):
                    res["one_cta"].append(self._tma_run(l2buf, L2_BYTES, 256 << 20, kb << 10, st, 1, grid=1,
                                                        touch=touch))
        res["how"] = ("hop_tma_tp: blocks of 32 threads, lane 0 streams chunks b, b+G, ... through a ring of "
                      "`stages` shared-memory slots (cp.async.bulk + mbarrier per slot; wait, read one word "
                      "(one_cta rows with touch 0: no read), re-issue), grid = SMs x ctas_per_sm; HBM: 1 GiB buffer "
                      "read once per launch; L2: a 16 MiB "
                      "buffer read 128 times (2 GiB) per launch; CUDA-event median of 3 after 1 warm-up; "
                      "bytes/clk/SM = bytes / 132 / (time x in-kernel clock)")
        return res

    def tma_issue(self) -> list[dict[str, Any]]:
        cp, np = self.cp, np_()
        src = cp.random.randint(0, 2**31 - 1, size=(1 << 20) // 4, dtype=cp.int32)
        reps = 17
        out = cp.zeros(2 * reps, dtype=cp.int64)
        res = []
        for chunk in (16, 1024, 4096, 16384):
            for n in (1, 2, 4, 8, 16):
                if n * chunk > 192 * 1024:
                    continue
                self.launch("hop_tma_issue", 1, 32, (src, i32(chunk), i32(n), i32(reps), out, self.sink_u32),
                            shared=128 + n * chunk)
                self.sync()
                v = out.get().astype(np.float64).reshape(reps, 2)[1:]
                iss, done = float(np.median(v[:, 0])), float(np.median(v[:, 1]))
                res.append({"chunk_bytes": chunk, "n": n, "issue_cycles": iss, "issue_cycles_per_copy": iss / n,
                            "done_cycles": done, "bytes_per_clk": n * chunk / done})
        return res

    # ---------------------------------------------------------------------------------------------- 2 wgmma
    def wgmma_tp(self) -> list[dict[str, Any]]:
        cp = self.cp
        res = []
        for n, b in [(64, 64), (128, 64), (256, 64), (256, 8)]:
            for k in (1, 2):
                iters = (200 * 256 // n) * (64 // b)
                grid = self.sms * k
                rec = cp.zeros(grid * 5, dtype=cp.int64)
                name = f"hop_wgmma_tp_n{n}_b{b}"

                def go(name: str = name, grid: int = grid, iters: int = iters, rec: Any = rec, n: int = n) -> None:
                    self.launch(name, grid, 128, (i32(iters), u32(12345), rec, self.sink_f32), shared=2048 + n * 32)

                t = common.summarize(self.event_times(go, 3))
                rs = rec_stats(rec.get())
                flop_one = 2 * 64 * n * 16
                flop = grid * iters * b * flop_one
                res.append({"n": n, "batch": b, "ctas_per_sm": k, "iters": iters, "grid": grid, "time_ns": t,
                            "TFLOPs": flop / t["median"] / 1e3,
                            "flop_per_clk_per_sm": k * iters * b * flop_one / rs["cycles_per_sm_median"],
                            "cycles_per_wgmma_per_sm": rs["cycles_per_sm_median"] / (k * iters * b), **rs})
        return res

    def wgmma_lat(self) -> list[dict[str, Any]]:
        cp, np = self.cp, np_()
        res = []
        reps = 32
        out = cp.zeros(reps, dtype=cp.int64)
        for n in WG_NS:
            for b in (1, 8):
                self.launch(f"hop_wgmma_lat_n{n}_b{b}", 1, 128, (i32(reps), u32(777), out, self.sink_f32),
                            shared=2048 + n * 32)
                self.sync()
                v = out.get().astype(np.float64)[1:]
                res.append({"n": n, "batch": b, "median": float(np.median(v)), "min": float(v.min()),
                            "max": float(v.max())})
        return res

    # ---------------------------------------------------------------------------------------------- 3 chains
    def chains(self) -> dict[str, Any]:
        cp = self.cp
        out = cp.zeros(4, dtype=cp.int64)
        steps = 1024
        self.launch("hop_ldsm_lat", 1, 32, (i32(steps), out, self.sink_u32))
        self.sync()
        self.launch("hop_ldsm_lat", 1, 32, (i32(steps), out, self.sink_u32))
        self.sync()
        ldsm = int(out[0].get()) / (steps * 16)
        self.launch("hop_mma_lat", 1, 32, (u32(99), i32(steps), out, self.sink_f32))
        self.sync()
        self.launch("hop_mma_lat", 1, 32, (u32(99), i32(steps), out, self.sink_f32))
        self.sync()
        mma = int(out[0].get()) / (steps * 16)
        return {"ldmatrix_x4_chain_cycles": ldsm, "mma_m16n8k16_chain_cycles": mma,
                "how_ldsm": "hop_ldsm_lat: one warp, 16384 ldmatrix.x4 in a chain (next address = address + first "
                            "loaded register, shared memory all zeros); clock64 / count; includes one IADD per step",
                "how_mma": "hop_mma_lat: one warp, 16384 mma.sync.m16n8k16.row.col.f32.bf16.bf16.f32 accumulating "
                           "into one accumulator (each waits on the last); clock64 / count"}


# -------------------------------------------------------------------------------------------------- derive
def saturation(rows: list[dict[str, Any]], frac: float = 0.9) -> dict[str, Any]:
    ok = [r for r in rows if "error" not in r]
    if not ok:
        return {}
    best = max(ok, key=lambda r: r["GBps"])
    out: dict[str, Any] = {"best": {k: best[k] for k in ("chunk_bytes", "stages", "ctas_per_sm", "GBps",
                                                         "bytes_per_clk_per_sm_events")}}
    per_chunk = {}
    for ch in sorted({r["chunk_bytes"] for r in ok}):
        rr = sorted([r for r in ok if r["chunk_bytes"] == ch], key=lambda r: (r["copies_in_flight_per_sm"],
                                                                               -r["GBps"]))
        top = max(r["GBps"] for r in rr)
        first = next((r for r in rr if r["GBps"] >= frac * best["GBps"]), None)
        per_chunk[ch] = {"max_GBps": top,
                         "min_copies_in_flight_per_sm_for_90pct_of_best": first["copies_in_flight_per_sm"]
                         if first else None,
                         "bytes_in_flight_per_sm_then": first["bytes_in_flight_per_sm"] if first else None,
                         "config_then": f"{first['ctas_per_sm']} CTA/SM x {first['stages']} stages" if first else None}
    out["per_chunk"] = per_chunk
    cand = [r for r in ok if r["GBps"] >= frac * best["GBps"]]
    m = min(cand, key=lambda r: r["bytes_in_flight_per_sm"])
    out["least_bytes_in_flight_for_90pct"] = {k: m[k] for k in ("chunk_bytes", "stages", "ctas_per_sm",
                                                                "copies_in_flight_per_sm", "bytes_in_flight_per_sm",
                                                                "GBps")}
    return out


def summary(raw: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    def add(q: str, v: Any, unit: str, how: str) -> None:
        if isinstance(v, float):
            v = round(v, 3) if abs(v) < 100 else round(v, 1)
        rows.append({"quantity": q, "value": v, "unit": unit, "how": how})

    def safe(fn: Any) -> None:
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            rows.append({"quantity": f"(summary error in {fn.__name__})", "value": None, "unit": "",
                         "how": f"{type(e).__name__}: {e}"})

    def clock() -> None:
        add("SM clock, measured (start)", raw["clock_start"]["mhz"], "MHz", raw["clock_start"]["how"])
        add("SM clock, measured (end)", raw["clock_end"]["mhz"], "MHz", raw["clock_end"]["how"])

    def tma_lat() -> None:
        t = raw["tma_latency"]
        for src in ("l2", "hbm"):
            for r in t[src]:
                add(f"TMA 1D bulk copy latency, {r['bytes']} B, {'L2-resident' if src == 'l2' else 'cold (HBM)'}",
                    r["median"], "cycles", t["how"])

    def tma_tp() -> None:
        t = raw["tma_throughput"]
        for src in ("hbm", "l2"):
            s = raw["tma_saturation"][src]
            b = s["best"]
            lbl = "HBM" if src == "hbm" else "L2-resident 16 MiB"
            add(f"TMA streaming, {lbl}: best chip-wide", b["GBps"] / 1e3, "TB/s",
                f"{b['chunk_bytes'] >> 10} KiB chunks, {b['ctas_per_sm']} CTA/SM x {b['stages']} stages; " + t["how"])
            add(f"TMA streaming, {lbl}: best per SM", b["bytes_per_clk_per_sm_events"], "B/clk/SM",
                "bytes / 132 SMs / (event time x in-kernel clock)")
            for ch, v in s["per_chunk"].items():
                add(f"TMA streaming, {lbl}, {ch >> 10} KiB chunks: max", v["max_GBps"] / 1e3, "TB/s", "over configs")
                add(f"TMA streaming, {lbl}, {ch >> 10} KiB chunks: copies in flight per SM for 90% of best",
                    v["min_copies_in_flight_per_sm_for_90pct_of_best"], "copies",
                    f"smallest ctas x stages reaching 90% of the best {lbl} rate ({v['config_then']}, "
                    f"{(v['bytes_in_flight_per_sm_then'] or 0) >> 10} KiB in flight); None = never")
            m = s["least_bytes_in_flight_for_90pct"]
            add(f"TMA streaming, {lbl}: least bytes in flight per SM for 90% of best",
                m["bytes_in_flight_per_sm"] / 1024, "KiB",
                f"{m['chunk_bytes'] >> 10} KiB x {m['copies_in_flight_per_sm']} copies "
                f"({m['ctas_per_sm']} CTA/SM x {m['stages']} stages)")
        one = [r for r in t["one_cta"] if "error" not in r]
        if one:
            b = max(one, key=lambda r: r["bytes_per_clk_per_sm_clock64"])
            add("TMA streaming, one CTA alone (L2-resident): best", b["bytes_per_clk_per_sm_clock64"], "B/clk/SM",
                f"grid 1, {b['chunk_bytes'] >> 10} KiB chunks x {b['stages']} stages; bytes / clock64 span")
            for r in one:
                tag = "" if r.get("touch", 1) else ", no smem read"
                add(f"TMA streaming, one CTA alone, {r['chunk_bytes'] >> 10} KiB x {r['stages']} stages{tag}",
                    r["bytes_per_clk_per_sm_clock64"], "B/clk/SM", "grid 1, L2-resident 16 MiB source; clock64")
                add(f"TMA streaming, one CTA alone, {r['chunk_bytes'] >> 10} KiB x {r['stages']} stages{tag}: "
                    "cycles per chunk", r["chunk_bytes"] / r["bytes_per_clk_per_sm_clock64"], "cycles", "as above")

    def tma_issue() -> None:
        for r in raw["tma_issue"]:
            tag = f"TMA issue, one thread, {r['n']} x {r['chunk_bytes']} B back to back (L2-resident)"
            how = ("hop_tma_issue: expect_tx + cp.async.bulk per copy, each on its own mbarrier; median of 16 reps")
            add(f"{tag}: issue cycles per copy", r["issue_cycles_per_copy"], "cycles", how)
            add(f"{tag}: cycles until all complete", r["done_cycles"], "cycles", how)

    def wg_tp() -> None:
        for r in raw["wgmma_throughput"]:
            tag = f"wgmma m64n{r['n']}k16 bf16->f32 (SS), {r['ctas_per_sm']} warpgroup/SM, batch {r['batch']}"
            how = (f"hop_wgmma_tp_n{r['n']}_b{r['batch']}: grid {r['grid']} x 128 threads, {r['iters']} x "
                   f"(wgmma.fence, {r['batch']} wgmma into one accumulator, commit, wait_group 0); clock64 per SM")
            add(f"{tag}: FLOP/clk/SM", r["flop_per_clk_per_sm"], "FLOP/clk/SM", how)
            add(f"{tag}: TFLOP/s", r["TFLOPs"], "TFLOP/s", "CUDA-event median of 3; clock "
                                                          f"{r['clock_mhz']:.0f} MHz in kernel")
            add(f"{tag}: cycles per wgmma per SM", r["cycles_per_wgmma_per_sm"], "cycles", how)

    def wg_lat() -> None:
        for r in raw["wgmma_latency"]:
            add(f"wgmma m64n{r['n']}k16 latency, {r['batch']} in a batch (fence -> wait_group 0)", r["median"],
                "cycles", "hop_wgmma_lat: one warpgroup on an idle GPU; clock64 around wgmma.fence, the batch, "
                          "commit_group, wait_group 0; median of 31 reps")

    def chains() -> None:
        c = raw["chains"]
        add("ldmatrix.x4 dependent latency", c["ldmatrix_x4_chain_cycles"], "cycles", c["how_ldsm"])
        add("mma.sync m16n8k16 bf16 dependent latency", c["mma_m16n8k16_chain_cycles"], "cycles", c["how_mma"])

    for fn in (clock, tma_lat, tma_issue, tma_tp, wg_tp, wg_lat, chains):
        safe(fn)
    return rows


# -------------------------------------------------------------------------------------------------- driver
def gpu_info(cp: Any, torch: Any) -> dict[str, Any]:
    props = cp.cuda.runtime.getDeviceProperties(0)
    smi = common.nvidia_smi()
    rt = cp.cuda.runtime.runtimeGetVersion()
    drv = cp.cuda.runtime.driverGetVersion()
    return {"name": props["name"].decode() if isinstance(props["name"], bytes) else props["name"],
            "sm_count": props["multiProcessorCount"], "cc": f"{props['major']}.{props['minor']}",
            "l2_bytes": props["l2CacheSize"], "smem_per_sm": props.get("sharedMemPerMultiprocessor"),
            "smem_per_block_optin": props.get("sharedMemPerBlockOptin"),
            "driver": smi.get("driver_version"), "cuda": f"driver API {drv // 1000}.{drv % 1000 // 10}, "
                                                         f"runtime {rt // 1000}.{rt % 1000 // 10}",
            "nvcc": common.nvcc_version(), "cupy": cp.__version__, "torch": torch.__version__,
            "nvidia_smi_at_start": smi}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    ap.add_argument("--date", default="2026-11-22")
    ap.add_argument("--only", default="", help="comma-separated sections to run (default all)")
    a = ap.parse_args()
    import cupy as cp
    import torch

    out = Path(a.out)
    data: dict[str, Any] = {"schema": 1, "date": a.date, "gpu": gpu_info(cp, torch), "summary": [], "raw": {},
                            "command": " ".join(sys.argv)}
    with tempfile.TemporaryDirectory() as td:
        hop = Hopper(cp, torch, Path(td))
        raw = data["raw"]
        raw["build"] = hop.build_info
        try:
            raw["sass"] = sass_counts(Path(td))
        except Exception as e:  # noqa: BLE001
            raw["sass"] = {"error": f"{type(e).__name__}: {e}"}
        common.log(f"built: {hop.build_info['used']}")
        sections = [("clock_start", hop.clock), ("chains", hop.chains), ("wgmma_latency", hop.wgmma_lat),
                    ("wgmma_throughput", hop.wgmma_tp), ("tma_latency", hop.tma_lat),
                    ("tma_issue", hop.tma_issue), ("tma_throughput", hop.tma_tp), ("clock_end", hop.clock)]
        only = {s for s in a.only.split(",") if s}
        for name, fn in sections:
            if only and name not in only and not name.startswith("clock"):
                continue
            t0 = time.time()
            try:
                raw[name] = fn()
            except Exception as e:  # noqa: BLE001 - one failing section must not hide the others
                raw[name] = {"error": f"{type(e).__name__}: {str(e)[-1500:]}"}
                try:
                    cp.cuda.runtime.deviceSynchronize()
                except Exception as e2:  # noqa: BLE001 - a sticky error ends the run
                    raw[name]["sticky"] = f"{type(e2).__name__}: {e2}"
                    common.log(f"{name}: sticky CUDA error, stopping")
                    break
            err = raw[name].get("error", "") if isinstance(raw[name], dict) else ""
            common.log(f"{name}: {time.time() - t0:.1f} s {'ERROR ' + err[:300] if err else ''}")
            common.write_json(out, data)
        if isinstance(raw.get("tma_throughput"), dict) and "hbm" in raw["tma_throughput"]:
            raw["tma_saturation"] = {s: saturation(raw["tma_throughput"][s]) for s in ("hbm", "l2")}
    data["summary"] = summary(data["raw"])
    common.write_json(out, data)
    w = max(len(r["quantity"]) for r in data["summary"])
    for r in data["summary"]:
        print(f"{r['quantity']:<{w}}  {r['value']}  {r['unit']}")


if __name__ == "__main__":
    main()
