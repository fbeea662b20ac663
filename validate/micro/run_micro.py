"""Micro-benchmark suite for the H100 (kernels in validate/micro/micro.cu).

Run through ``python3 validate/run_h100.py --micro`` (or this file directly). Two passes:
1. timing, in this process: clock64 (SM cycles) inside the kernels, CUDA events outside;
2. counters: the same kernels launched once each by a child process under ncu (--clock-control none),
   giving wavefronts, sectors, requests and instruction counts per pattern.
Every result records what was measured, the number, the unit and how (see ``how`` fields).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

SMEM_WIDTHS = (4, 8, 16)
SMEM_STRIDES = (0, 1, 2, 3, 4, 8, 16, 32)  # in elements of the access width; 0 = broadcast
GLD_STRIDES = (1, 2, 3, 4, 6, 8, 16, 32)
L1_PATTERNS = ((4, 1), (4, 2), (4, 4), (4, 8), (4, 32), (8, 1), (16, 1))  # (width, stride in elements)
CHASE_KB = (8, 16, 32, 64, 128, 192, 256, 384, 512, 1024, 2048, 4096, 8192, 16384, 24576, 32768, 40960, 49152,
            57344, 65536, 98304, 131072, 262144, 524288, 1048576)
SAMPLE_KB = (64, 16384, 1048576)
SYNC_THREADS = (32, 128, 256, 512, 1024)
UNROLL = 16  # unrolled loads per trip in the shared-memory stride kernels and the pipe kernels
COPIES = 8  # unrolled loads per trip in the L1 and ldmatrix kernels (distinct addresses, see micro.cu)
L1_REGION = 69632  # bytes per block: 16 copies 4 KB apart + the widest pattern (4 KB)
GLD_BYTES = 512 << 20
THREADS_TP = 1024  # threads per block of the pipe-throughput kernels (one block per SM)

MICRO_METRICS = [
    "gpu__time_duration.sum",
    "smsp__inst_executed.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "smsp__inst_executed_op_global_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
    "l1tex__t_sector_hit_rate.pct",
    "l1tex__data_pipe_lsu_wavefronts_mem_lg.sum",
    "lts__t_sectors_op_read.sum",
    "lts__t_sector_hit_rate.pct",
    "dram__bytes_read.sum",
    "smsp__inst_executed_op_ldsm.sum",
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
    "sm__inst_executed_pipe_fma.sum",
    "sm__inst_executed_pipe_fmaheavy.sum",
    "sm__inst_executed_pipe_alu.sum",
    "sm__inst_executed_pipe_xu.sum",
    "sm__inst_executed_pipe_tensor.sum",
    "sm__inst_executed_pipe_lsu.sum",
    "sm__cycles_elapsed.avg",
    "sm__cycles_elapsed.avg.per_second",
]


def load_module(cp: Any) -> Any:
    return cp.RawModule(code=(HERE / "micro.cu").read_text(), options=("-std=c++17", f"-I{HERE}"))


def i32(x: int) -> Any:
    import numpy as np

    return np.int32(x)


def i64(x: int) -> Any:
    import numpy as np

    return np.int64(x)


def f32(x: float) -> Any:
    import numpy as np

    return np.float32(x)


def u32(x: int) -> Any:
    import numpy as np

    return np.uint32(x)


def u64(x: int) -> Any:
    import numpy as np

    return np.uint64(x)


def rec_span(rec: Any, per_sm: bool = False) -> dict[str, float]:
    """From timing records (n x 5: t0, t1, g0, g1, smid): cycles from the first start to the last end (valid
    only when all records come from one SM: clock64 counters of different SMs are not aligned), ns, and the
    clock ratio (median over records of own cycles / own ns)."""
    import numpy as np

    r = np.asarray(rec).reshape(-1, 5).astype(np.float64)
    out: dict[str, float] = {"cycles": float(r[:, 1].max() - r[:, 0].min()), "ns": float(r[:, 3].max() - r[:, 2].min())}
    dt = r[:, 3] - r[:, 2]
    ok = dt > 0
    out["clock_mhz"] = float(np.median((r[ok, 1] - r[ok, 0]) / dt[ok]) * 1e3) if ok.any() else float("nan")
    if per_sm:
        per = {}
        for sm in np.unique(r[:, 4]):
            rr = r[r[:, 4] == sm]
            per[int(sm)] = float(rr[:, 1].max() - rr[:, 0].min())
        out["distinct_sms"] = len(per)
        out["cycles_per_sm_median"] = float(statistics.median(per.values()))
        out["cycles_per_sm_max"] = float(max(per.values()))
    return out


class Micro:
    def __init__(self, cp: Any, torch: Any) -> None:
        self.cp = cp
        self.torch = torch
        self.mod = load_module(cp)
        self.sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
        self.out_u32 = cp.zeros(16, dtype=cp.uint32)
        self.out_f32 = cp.zeros(16, dtype=cp.float32)
        self.stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)

    def fn(self, name: str) -> Any:
        return self.mod.get_function(name)

    def launch(self, name: str, grid: int, block: int, args: tuple, shared: int = 0) -> None:
        with self.stream:
            self.fn(name)((grid,), (block,), args, shared_mem=shared)

    def sync(self) -> None:
        self.torch.cuda.synchronize()

    def event_times(self, fn: Any, n: int, warm: int = 1) -> list[float]:
        for _ in range(warm):
            fn()
        self.sync()
        return common.time_launches(self.torch, lambda _i: fn(), n, None)

    # ---------------------------------------------------------------------------------------------- clock
    def clock(self, spin: int = 100_000_000) -> dict[str, Any]:
        out = self.cp.zeros(4, dtype=self.cp.int64)
        self.launch("micro_clock", 1, 1, (i64(spin), out))
        self.sync()
        cyc, ns = (int(v) for v in out[:2].get())
        return {"cycles": cyc, "ns": ns, "mhz": cyc / ns * 1e3,
                "how": "micro_clock: one thread spins on clock64 for `cycles`; ratio to %globaltimer ns"}

    # ---------------------------------------------------------------------------------------------- 1 smem
    def smem(self) -> list[dict[str, Any]]:
        res = []
        iters = 256
        for w in SMEM_WIDTHS:
            for s in SMEM_STRIDES:
                row: dict[str, Any] = {"width_bytes": w, "stride_elems": s, "stride_bytes": s * w,
                                       "broadcast": s == 0}
                for nwarps in (1, 16):
                    rec = self.cp.zeros(nwarps * 5, dtype=self.cp.int64)
                    self.launch(f"micro_smem_ld_w{w}", 1, 32 * nwarps, (i32(s), i32(iters), self.out_u32, rec))
                    self.sync()
                    span = rec_span(rec.get())
                    n_inst = nwarps * iters * UNROLL
                    row[f"cycles_per_inst_{nwarps}w"] = span["cycles"] / n_inst
                res.append(row)
        return res

    # ---------------------------------------------------------------------------------------------- 2 global
    def gld(self) -> list[dict[str, Any]]:
        cp = self.cp
        buf = cp.random.randint(0, 2**31 - 1, size=GLD_BYTES // 4, dtype=cp.int32)
        res = []
        for w in SMEM_WIDTHS:
            for s in GLD_STRIDES:
                n_access = GLD_BYTES // (32 * s * w)

                def go(w: int = w, s: int = s, n_access: int = n_access) -> None:
                    self.launch(f"micro_gld_w{w}", self.sms * 8, 256, (buf, i64(n_access), i32(s), self.out_u32))

                t = common.summarize(self.event_times(go, 5))
                useful = n_access * 32 * w
                lines, sectors = pattern_counts(w, s)
                res.append({"width_bytes": w, "stride_elems": s, "requests": n_access,
                            "lines_per_request_expected": lines, "sectors_per_request_expected": sectors,
                            "useful_bytes": useful, "span_bytes": GLD_BYTES, "time_ns": t,
                            "useful_GBps": useful / t["median"]})
        return res

    def l1(self) -> list[dict[str, Any]]:
        cp = self.cp
        region = L1_REGION
        buf = cp.random.randint(0, 2**31 - 1, size=self.sms * region // 4, dtype=cp.int32)
        iters, nwarps = 512, 16
        res = []
        for w, s in L1_PATTERNS:
            rec = cp.zeros(self.sms * nwarps * 5, dtype=cp.int64)
            self.launch(f"micro_l1_ld_w{w}", self.sms, 32 * nwarps,
                        (buf, i64(region), i32(s), i32(iters), self.out_u32, rec))
            self.sync()
            span = rec_span(rec.get(), per_sm=True)
            n_req = nwarps * iters * COPIES
            cpr = span["cycles_per_sm_median"] / n_req
            lines, sectors = pattern_counts(w, s)
            res.append({"width_bytes": w, "stride_elems": s, "lines_per_request_expected": lines,
                        "sectors_per_request_expected": sectors,
                        "cycles_per_request_per_sm": cpr, "requests_per_cycle_per_sm": 1 / cpr,
                        "sectors_per_cycle_per_sm": sectors / cpr, "lines_per_cycle_per_sm": lines / cpr,
                        "bytes_per_cycle_per_sm_useful": 32 * w / cpr,
                        "distinct_sms": span["distinct_sms"], "clock_mhz": span["clock_mhz"]})
        return res

    # ---------------------------------------------------------------------------------------------- 3 chase
    def _chain(self, kb: int) -> tuple[Any, int, int]:
        """A random cyclic order of the 128-B lines of a `kb` KiB buffer; the first 8 bytes of each line hold
        the address of the next line."""
        cp = self.cp
        nbytes = kb * 1024
        nlines = nbytes // 128
        perm = cp.random.permutation(nlines).astype(cp.uint64)
        nxt = cp.zeros(nbytes // 8, dtype=cp.uint64)
        base = nxt.data.ptr
        nxt[perm * 16] = cp.uint64(base) + cp.roll(perm, -1) * cp.uint64(128)
        start = base + int(perm[0].get()) * 128
        return nxt, start, nlines

    def chase(self) -> list[dict[str, Any]]:
        cp = self.cp
        res = []
        steps = 8192
        for kb in CHASE_KB:
            nxt, start, nlines = self._chain(kb)
            warm = nlines if nlines <= (1 << 20) else (1 << 16)
            out = cp.zeros(4, dtype=cp.int64)
            self.launch("micro_chase", 1, 1, (u64(start), i64(warm), i64(steps), out))
            self.sync()
            cyc, _j, ns = (int(v) for v in out[:3].get())
            res.append({"footprint_bytes": kb * 1024, "lines": nlines, "warm_steps": warm, "steps": steps,
                        "cycles_per_load": cyc / steps, "ns_per_load": ns / steps})
            del nxt
            cp.get_default_memory_pool().free_all_blocks()
        return res

    def chase_samples(self) -> list[dict[str, Any]]:
        import numpy as np

        cp = self.cp
        res = []
        for kb in SAMPLE_KB:
            nxt, start, nlines = self._chain(kb)
            warm = nlines if nlines <= (1 << 20) else (1 << 16)
            lat = cp.zeros(2048, dtype=cp.uint32)
            sink = cp.zeros(1, dtype=cp.uint64)
            self.launch("micro_chase_samples", 1, 1, (u64(start), i64(warm), lat, sink))
            self.sync()
            v = np.sort(lat.get().astype(np.float64))
            pct = {f"p{p}": float(np.percentile(v, p)) for p in (1, 10, 25, 50, 75, 90, 99)}
            lo, hi = two_means(v)
            res.append({"footprint_bytes": kb * 1024, "n": int(v.size), "mean": float(v.mean()), **pct,
                        "cluster_low": lo, "cluster_high": hi,
                        "histogram_16cyc": histogram(v, 16)})
            del nxt
            cp.get_default_memory_pool().free_all_blocks()
        return res

    def smem_chase(self) -> dict[str, Any]:
        cp = self.cp
        n = 1024
        perm = cp.random.permutation(n).astype(cp.uint32)
        nxt = cp.zeros(n, dtype=cp.uint32)
        nxt[perm] = cp.roll(perm, -1)
        out = cp.zeros(4, dtype=cp.int64)
        steps = 8192
        self.launch("micro_smem_chase", 1, 32, (nxt, i32(n), i32(steps), out))
        self.sync()
        cyc = int(out[0].get())
        return {"cycles_per_load": cyc / steps, "steps": steps, "words": n,
                "how": "one thread, j = *j (ld.volatile.shared.u32 of a word holding the next word's shared "
                       "address) over a random cycle of 1024 words, clock64 / 8192 loads"}

    # ---------------------------------------------------------------------------------------------- 4 bandwidth
    def bandwidth(self, clock_mhz: float) -> dict[str, Any]:
        cp = self.cp
        res: dict[str, Any] = {}
        grid, block = self.sms * 8, 256
        nbytes = 1 << 30
        a = cp.random.randint(0, 2**31 - 1, size=nbytes // 4, dtype=cp.int32)
        rec = cp.zeros(grid * 5, dtype=cp.int64)

        def rd(n16: int, reps: int, buf: Any = a) -> None:
            self.launch("micro_read", grid, block, (buf, i64(n16), i32(reps), self.out_u32, rec))

        t = common.summarize(self.event_times(lambda: rd(nbytes // 16, 1), 10))
        span = rec_span(rec.get())
        res["hbm_read"] = {"bytes": nbytes, "time_ns": t, "TBps": nbytes / t["median"] / 1e3,
                           "bytes_per_cycle": nbytes / t["median"] / (clock_mhz / 1e3),
                           "clock_mhz_in_kernel": span["clock_mhz"],
                           "how": f"micro_read: 1 GiB, 16-B ld.global.cg, grid {grid}x{block}, 4 loads in flight "
                                  "per thread; CUDA events, median of 10"}
        b = cp.empty_like(a)

        def cpy() -> None:
            self.launch("micro_copy", grid, block, (a, b, i64(nbytes // 16)))

        t = common.summarize(self.event_times(cpy, 10))
        res["hbm_copy"] = {"bytes_read_plus_written": 2 * nbytes, "time_ns": t,
                           "TBps": 2 * nbytes / t["median"] / 1e3,
                           "bytes_per_cycle": 2 * nbytes / t["median"] / (clock_mhz / 1e3),
                           "how": "micro_copy: 1 GiB -> 1 GiB, 16-B loads/stores, counting read + written bytes; "
                                  "CUDA events, median of 10"}
        for mb in (8, 16, 24):
            n = mb << 20
            reps = 40
            rd(n // 16, 2)  # bring into L2
            t = common.summarize(self.event_times(lambda n=n, reps=reps: rd(n // 16, reps), 5))
            span = rec_span(rec.get())
            tot = n * reps
            res[f"l2_read_{mb}MiB"] = {"footprint_bytes": n, "reps": reps, "time_ns": t,
                                       "TBps": tot / t["median"] / 1e3,
                                       "bytes_per_cycle": tot / t["median"] / (clock_mhz / 1e3),
                                       "clock_mhz_in_kernel": span["clock_mhz"],
                                       "how": f"micro_read over a {mb} MiB buffer {reps} times in one kernel, "
                                              "ld.global.cg (L1 bypassed); CUDA events, median of 5"}
            rot = grid * block * 4 * 7 + 16  # vectors; moves every SM onto data it did not read last pass

            def rr(n: int = n, reps: int = reps, rot: int = rot) -> None:
                self.launch("micro_read_rot", grid, block, (a, i64(n // 16), i32(reps), i64(rot), self.out_u32, rec))

            t = common.summarize(self.event_times(rr, 5))
            res[f"l2_read_rotating_{mb}MiB"] = {
                "footprint_bytes": n, "reps": reps, "time_ns": t, "TBps": tot / t["median"] / 1e3,
                "bytes_per_cycle": tot / t["median"] / (clock_mhz / 1e3),
                "clock_mhz_in_kernel": rec_span(rec.get())["clock_mhz"],
                "how": f"micro_read_rot over a {mb} MiB buffer {reps} times, plain 16-B loads (L1-cached), each "
                       "pass shifted so no SM re-reads its previous data; CUDA events, median of 5"}
        return res

    # ---------------------------------------------------------------------------------------------- 5 pipes
    def pipes(self) -> dict[str, Any]:
        cp = self.cp
        res: dict[str, Any] = {}
        rec = cp.zeros(self.sms * 5, dtype=cp.int64)
        specs = {
            "ffma": ("micro_ffma_tp", lambda it: (f32(0.999), f32(0.001), i32(it), self.out_f32, rec), 2048,
                     UNROLL * 8, 1),
            "iadd": ("micro_iadd_tp", lambda it: (u32(12345), i32(it), self.out_u32, rec), 2048, UNROLL * 4, 1),
            "ex2": ("micro_ex2_tp", lambda it: (i32(it), self.out_f32, rec), 512, UNROLL * 8, 1),
            "mma_bf16_m16n8k16": ("micro_mma_bf16_tp", lambda it: (u32(7), i32(it), self.out_f32, rec), 512,
                                  16, 4096),
        }
        for key, (kname, args, iters, per_iter, _flop) in specs.items():
            self.launch(kname, self.sms, THREADS_TP, args(8))  # warm-up
            self.launch(kname, self.sms, THREADS_TP, args(iters))
            self.sync()
            span = rec_span(rec.get(), per_sm=True)
            cyc = span["cycles_per_sm_median"]
            if key == "mma_bf16_m16n8k16":
                warp_ops = THREADS_TP // 32 * iters * per_iter
                res[key] = {"mma_per_sm_per_cycle": warp_ops / cyc, "flop_per_sm_per_cycle": warp_ops * 4096 / cyc,
                            "distinct_sms": span["distinct_sms"], "clock_mhz": span["clock_mhz"],
                            "how": "micro_mma_bf16_tp: 1 block of 1024 threads per SM, 4 independent accumulators per "
                                   "warp, mma.sync.m16n8k16 bf16->f32; clock64 per SM"}
            else:
                lane_ops = THREADS_TP * iters * per_iter
                res[key] = {"lane_ops_per_sm_per_cycle": lane_ops / cyc,
                            "warp_inst_per_sm_per_cycle": lane_ops / 32 / cyc,
                            "distinct_sms": span["distinct_sms"], "clock_mhz": span["clock_mhz"],
                            "how": f"{kname}: 1 block of 1024 threads per SM, 8 independent chains per thread, "
                                   "clock64 per SM (op count assumes one SASS instruction per source op; ncu pipe "
                                   "counts in the ncu section check that)"}
        res["ffma"]["flop_per_sm_per_cycle"] = 2 * res["ffma"]["lane_ops_per_sm_per_cycle"]
        # FFMA dependent-chain latency
        cyc = cp.zeros(2, dtype=cp.int64)
        steps = 1024
        self.launch("micro_ffma_lat", 1, 1, (f32(0.999), f32(0.001), i32(steps), self.out_f32, cyc))
        self.sync()
        res["ffma_latency"] = {"cycles": int(cyc[0].get()) / (steps * UNROLL),
                               "how": "one thread, x = fmaf(x, a, b) chain of 16384, clock64 (loop overhead amortised "
                                      "over 16 unrolled FFMAs)"}
        # __syncthreads
        sync = {}
        for nt in SYNC_THREADS:
            c = cp.zeros(1, dtype=cp.int64)
            it = 256
            self.launch("micro_syncthreads", 1, nt, (i32(it), c))
            self.sync()
            sync[str(nt)] = int(c[0].get()) / (it * UNROLL)
        res["syncthreads_cycles"] = {"by_block_threads": sync,
                                     "how": "one block, 4096 back-to-back __syncthreads, clock64 in thread 0"}
        return res

    # ---------------------------------------------------------------------------------------------- 6 ldmatrix
    def ldsm(self) -> list[dict[str, Any]]:
        res = []
        iters, nwarps = 256, 16
        for x in (1, 2, 4):
            for swz in (0, 1):
                rec = self.cp.zeros(nwarps * 5, dtype=self.cp.int64)
                self.launch(f"micro_ldsm_x{x}", 1, 32 * nwarps, (i32(swz), i32(iters), self.out_u32, rec))
                self.sync()
                span = rec_span(rec.get())
                res.append({"x": x, "swizzle_128B": bool(swz),
                            "cycles_per_inst_16w": span["cycles"] / (nwarps * iters * COPIES)})
        return res


# -------------------------------------------------------------------------------------------------- helpers
def pattern_counts(width: int, stride: int) -> tuple[int, int]:
    """Distinct 128-B lines and 32-B sectors touched by one warp access (lane l -> element l*stride)."""
    addrs = [lane * stride * width + k for lane in range(32) for k in range(width)]
    return len({a // 128 for a in addrs}), len({a // 32 for a in addrs})


def two_means(v: Any) -> tuple[dict[str, float], dict[str, float]]:
    """1-D 2-means split of latency samples (near / far L2 partition, or hit / miss)."""
    import numpy as np

    lo_c, hi_c = float(np.percentile(v, 10)), float(np.percentile(v, 90))
    mask = v < (lo_c + hi_c) / 2
    for _ in range(50):
        if mask.all() or not mask.any():
            break
        lo_c, hi_c = float(v[mask].mean()), float(v[~mask].mean())
        new = v < (lo_c + hi_c) / 2
        if (new == mask).all():
            break
        mask = new

    def desc(m: Any) -> dict[str, float]:
        return {"mean": float(v[m].mean()) if m.any() else float("nan"),
                "median": float(np.median(v[m])) if m.any() else float("nan"), "fraction": float(m.mean())}

    return desc(mask), desc(~mask)


def histogram(v: Any, width: int) -> dict[str, int]:
    import numpy as np

    b = (np.asarray(v) // width * width).astype(int)
    keys, counts = np.unique(b, return_counts=True)
    return {str(int(k)): int(c) for k, c in zip(keys, counts, strict=False)}


# -------------------------------------------------------------------------------------------------- ncu plan
def ncu_plan(sms: int) -> list[dict[str, Any]]:
    """The launches profiled by ncu, in order (pure data; the child launches exactly these)."""
    plan: list[dict[str, Any]] = []
    for w in SMEM_WIDTHS:
        for s in SMEM_STRIDES:
            plan.append({"group": "smem", "kernel": f"micro_smem_ld_w{w}", "width_bytes": w, "stride_elems": s,
                         "warps": 16, "iters": 16})
    for w in SMEM_WIDTHS:
        for s in GLD_STRIDES:
            plan.append({"group": "gld", "kernel": f"micro_gld_w{w}", "width_bytes": w, "stride_elems": s,
                         "requests": GLD_BYTES // (32 * s * w)})
    for w, s in L1_PATTERNS:
        plan.append({"group": "l1", "kernel": f"micro_l1_ld_w{w}", "width_bytes": w, "stride_elems": s,
                     "warps_per_sm": 16, "iters": 64, "blocks": sms})
    for x in (1, 2, 4):
        for swz in (0, 1):
            plan.append({"group": "ldsm", "kernel": f"micro_ldsm_x{x}", "x": x, "swizzle_128B": bool(swz),
                         "warps": 16, "iters": 16})
    for k in ("micro_ffma_tp", "micro_iadd_tp", "micro_ex2_tp", "micro_mma_bf16_tp"):
        plan.append({"group": "pipe", "kernel": k, "blocks": sms, "threads": THREADS_TP, "iters": 64})
    return plan


def ncu_child(cp: Any) -> None:
    """Launch every planned kernel once (runs under ncu)."""
    mod = load_module(cp)
    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    out_u = cp.zeros(16, dtype=cp.uint32)
    out_f = cp.zeros(16, dtype=cp.float32)
    rec = cp.zeros(sms * 64 * 5, dtype=cp.int64)
    gbuf = cp.random.randint(0, 2**31 - 1, size=GLD_BYTES // 4, dtype=cp.int32)
    l1buf = cp.random.randint(0, 2**31 - 1, size=sms * L1_REGION // 4, dtype=cp.int32)
    cp.cuda.runtime.deviceSynchronize()
    for p in ncu_plan(sms):
        f = mod.get_function(p["kernel"])
        g = p["group"]
        if g == "smem":
            f((1,), (32 * p["warps"],), (i32(p["stride_elems"]), i32(p["iters"]), out_u, rec))
        elif g == "gld":
            f((sms * 8,), (256,), (gbuf, i64(p["requests"]), i32(p["stride_elems"]), out_u))
        elif g == "l1":
            f((sms,), (32 * p["warps_per_sm"],), (l1buf, i64(L1_REGION), i32(p["stride_elems"]), i32(p["iters"]),
                                                  out_u, rec))
        elif g == "ldsm":
            f((1,), (32 * p["warps"],), (i32(int(p["swizzle_128B"])), i32(p["iters"]), out_u, rec))
        elif p["kernel"] == "micro_ffma_tp":
            f((sms,), (THREADS_TP,), (f32(0.999), f32(0.001), i32(p["iters"]), out_f, rec))
        elif p["kernel"] == "micro_iadd_tp":
            f((sms,), (THREADS_TP,), (u32(12345), i32(p["iters"]), out_u, rec))
        elif p["kernel"] == "micro_ex2_tp":
            f((sms,), (THREADS_TP,), (i32(p["iters"]), out_f, rec))
        else:
            f((sms,), (THREADS_TP,), (u32(7), i32(p["iters"]), out_f, rec))
    cp.cuda.runtime.deviceSynchronize()


def ncu_pass(ncu: str, available: set[str], raw: Path, work: Path, script: Path, timeout: float) -> dict[str, Any]:
    import cupy as cp

    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    plan = ncu_plan(sms)
    present, missing = common.split_available(MICRO_METRICS, available)
    rows, units, csv_text, dropped, nlog = common.run_ncu(
        ncu, present, "^micro_", [*common.python_cmd(), str(script), "--ncu-child", "micro"], work / "micro_ncu",
        timeout)
    (raw / "ncu_micro.csv").write_text(csv_text)
    with open(raw / "ncu_log.txt", "a") as f:
        f.write("# micro\n" + nlog + "\n")
    matched = common.assign_rows(rows, [p["kernel"] for p in plan])
    entries = []
    for p, r in zip(plan, matched, strict=False):
        m = common.metric_values(r, present)
        e = dict(p)
        e["ncu"] = m
        derive(e)
        entries.append(e)
    return {"metrics_missing": missing + dropped, "units": units, "launches": entries,
            "profiled_rows": len(rows),
            "how": "ncu --clock-control none --metrics ... -k regex:^micro_ python3 validate/run_h100.py --ncu-child "
                   "micro; one launch per pattern; raw page CSV in ncu_micro.csv"}


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) else None


def derive(e: dict[str, Any]) -> None:
    """Per-instruction ratios from the counters of one launch."""
    m = e["ncu"]
    g = e["group"]
    if g == "smem":
        inst = _num(m.get("smsp__inst_executed_op_shared_ld.sum"))
        wf = _num(m.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"))
        bc = _num(m.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"))
        if inst:
            e["wavefronts_per_inst"] = wf / inst if wf is not None else None
            e["bank_conflicts_per_inst"] = bc / inst if bc is not None else None
    elif g in ("gld", "l1"):
        req = _num(m.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"))
        sec = _num(m.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"))
        if req:
            e["sectors_per_request"] = sec / req if sec is not None else None
        t = _num(m.get("gpu__time_duration.sum"))
        dram = _num(m.get("dram__bytes_read.sum"))
        if g == "gld" and t:
            if sec is not None:
                e["sector_GBps"] = sec * 32 / t
            if dram is not None:
                e["dram_GBps"] = dram / t
    elif g == "ldsm":
        inst = _num(m.get("smsp__inst_executed_op_ldsm.sum"))
        wf = _num(m.get("sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum"))
        if inst and wf is not None:
            e["wavefronts_per_inst"] = wf / inst
    elif g == "pipe":
        cyc = _num(m.get("sm__cycles_elapsed.avg"))
        for pipe in ("fma", "fmaheavy", "alu", "xu", "tensor", "lsu"):
            v = _num(m.get(f"sm__inst_executed_pipe_{pipe}.sum"))
            if v is not None and cyc:
                e[f"pipe_{pipe}_warp_inst_per_sm_per_cycle"] = v / cyc / e["blocks"]


# -------------------------------------------------------------------------------------------------- driver
def run_timing(cp: Any, torch: Any) -> dict[str, Any]:
    mic = Micro(cp, torch)
    res: dict[str, Any] = {}
    sections = [
        ("clock_start", mic.clock),
        ("smem_strides", mic.smem),
        ("global_strides", mic.gld),
        ("l1_throughput", mic.l1),
        ("pointer_chase", mic.chase),
        ("pointer_chase_samples", mic.chase_samples),
        ("smem_latency", mic.smem_chase),
        ("pipes", mic.pipes),
        ("ldmatrix", mic.ldsm),
    ]
    for name, fn in sections:
        t0 = time.time()
        try:
            res[name] = fn()
        except Exception as e:  # record and go on: one failing section must not hide the others
            res[name] = {"error": f"{type(e).__name__}: {e}"}
        common.log(f"micro {name}: {time.time() - t0:.1f} s")
    clock = res.get("clock_start", {}).get("mhz") or 1980.0
    t0 = time.time()
    try:
        res["bandwidth"] = mic.bandwidth(clock)
    except Exception as e:
        res["bandwidth"] = {"error": f"{type(e).__name__}: {e}"}
    common.log(f"micro bandwidth: {time.time() - t0:.1f} s")
    res["clock_end"] = mic.clock()
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--ncu-child", choices=["micro"], default=None)
    a = ap.parse_args()
    import cupy as cp

    if a.ncu_child:
        ncu_child(cp)
        return
    import torch

    common.write_json(Path("micro_timing.json"), run_timing(cp, torch))


if __name__ == "__main__":
    main()


# -------------------------------------------------------------------------------------------------- summary
def summary(micro: dict[str, Any]) -> list[dict[str, Any]]:
    """The numbers a simulator config needs, one row each: quantity, value, unit, how."""
    rows: list[dict[str, Any]] = []
    tm = micro.get("timing", {})
    nc = micro.get("ncu", {}).get("launches", []) if isinstance(micro.get("ncu"), dict) else []

    def add(q: str, v: Any, unit: str, how: str) -> None:
        if isinstance(v, float):
            v = round(v, 4) if abs(v) < 100 else round(v, 1)
        rows.append({"quantity": q, "value": v, "unit": unit, "how": how})

    def safe(fn: Any) -> None:
        try:
            fn()
        except Exception as e:  # a missing section leaves its rows out, and says so
            rows.append({"quantity": f"(summary error in {fn.__name__})", "value": None, "unit": "",
                         "how": f"{type(e).__name__}: {e}"})

    def clock() -> None:
        add("SM clock, measured (start of micro suite)", tm["clock_start"]["mhz"], "MHz", tm["clock_start"]["how"])
        add("SM clock, measured (end of micro suite)", tm["clock_end"]["mhz"], "MHz", tm["clock_end"]["how"])

    def smem_counts() -> None:
        for e in nc:
            if e["group"] == "smem":
                s = "broadcast" if e["stride_elems"] == 0 else f"stride {e['stride_elems']}"
                add(f"LDS.{8 * e['width_bytes']} {s}: wavefronts / instruction", e.get("wavefronts_per_inst"),
                    "wavefronts", "ncu l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum / "
                                  "smsp__inst_executed_op_shared_ld.sum, 16 warps x 256 LDS")

    def smem_cycles() -> None:
        for r in tm["smem_strides"]:
            s = "broadcast" if r["stride_elems"] == 0 else f"stride {r['stride_elems']}"
            add(f"LDS.{8 * r['width_bytes']} {s}: SM cycles / warp instruction (16 warps)",
                r["cycles_per_inst_16w"], "cycles", "clock64 around 4096 ld.volatile.shared per warp, 16 warps, "
                                                    "1 block; (last - first clock) / instructions")

    def gld_counts() -> None:
        for e in nc:
            if e["group"] == "gld":
                add(f"LDG.{8 * e['width_bytes']} stride {e['stride_elems']}: sectors / request",
                    e.get("sectors_per_request"), "sectors", "ncu l1tex__t_sectors / l1tex__t_requests "
                                                             "(pipe_lsu_mem_global_op_ld), 512 MiB span")
        for r in tm["global_strides"]:
            add(f"LDG.{8 * r['width_bytes']} stride {r['stride_elems']}: useful bandwidth", r["useful_GBps"] / 1e3,
                "TB/s", "bytes the threads asked for / CUDA-event median time (5 runs), 512 MiB span from DRAM")

    def l1() -> None:
        for r in tm["l1_throughput"]:
            tag = f"L1 hit LDG.{8 * r['width_bytes']} stride {r['stride_elems']} ({r['lines_per_request_expected']} " \
                  f"lines, {r['sectors_per_request_expected']} sectors / request)"
            add(f"{tag}: requests / cycle / SM", r["requests_per_cycle_per_sm"], "req/clk",
                "clock64, 16 warps per SM re-reading one pattern (16 copies 4 KB apart, 8 per trip) with plain "
                "ld.global, "
                "median over SMs")
            add(f"{tag}: sectors / cycle / SM", r["sectors_per_cycle_per_sm"], "sectors/clk", "as above")
            add(f"{tag}: lines / cycle / SM", r["lines_per_cycle_per_sm"], "lines/clk", "as above")
        for e in nc:
            if e["group"] == "l1":
                add(f"L1 hit LDG.{8 * e['width_bytes']} stride {e['stride_elems']}: L1 sector hit rate",
                    e["ncu"].get("l1tex__t_sector_hit_rate.pct"), "%", "ncu l1tex__t_sector_hit_rate.pct")

    def chase() -> None:
        for r in tm["pointer_chase"]:
            add(f"pointer-chase latency, footprint {r['footprint_bytes'] >> 10} KiB", r["cycles_per_load"], "cycles",
                "one thread, p = *p over a random cyclic permutation of 128-B lines, ld.global.u64 (LDG.E.64), "
                "clock64 / 8192 loads after a warm-up lap (TLB misses included at large footprints)")
        for r in tm["pointer_chase_samples"]:
            kb = r["footprint_bytes"] >> 10
            add(f"per-load latency samples, {kb} KiB: median", r["p50"], "cycles",
                "2048 single-load samples (clock64 before the load and after a dependent volatile store; "
                "includes ~10 cycles of clock-read and store overhead)")
            add(f"per-load latency samples, {kb} KiB: low cluster mean (fraction)",
                f"{r['cluster_low']['mean']:.0f} ({r['cluster_low']['fraction']:.2f})", "cycles", "1-D 2-means")
            add(f"per-load latency samples, {kb} KiB: high cluster mean (fraction)",
                f"{r['cluster_high']['mean']:.0f} ({r['cluster_high']['fraction']:.2f})", "cycles", "1-D 2-means")

    def bandwidth() -> None:
        b = tm["bandwidth"]
        for k, v in b.items():
            if "TBps" in v:
                add(f"{k} bandwidth", v["TBps"], "TB/s", v["how"])
                add(f"{k} bandwidth per SM clock", v["bytes_per_cycle"], "B/clk (chip)",
                    "bytes / time / measured SM clock")

    def pipes() -> None:
        p = tm["pipes"]
        add("FFMA throughput", p["ffma"]["lane_ops_per_sm_per_cycle"], "lane-FMA/clk/SM", p["ffma"]["how"])
        add("FFMA dependent latency", p["ffma_latency"]["cycles"], "cycles", p["ffma_latency"]["how"])
        add("IADD (IADD3) throughput", p["iadd"]["lane_ops_per_sm_per_cycle"], "lane-op/clk/SM", p["iadd"]["how"])
        add("MUFU ex2.approx throughput", p["ex2"]["lane_ops_per_sm_per_cycle"], "lane-op/clk/SM", p["ex2"]["how"])
        m = p["mma_bf16_m16n8k16"]
        add("mma.sync m16n8k16 bf16 throughput", m["flop_per_sm_per_cycle"], "FLOP/clk/SM", m["how"])
        for nt, c in p["syncthreads_cycles"]["by_block_threads"].items():
            add(f"__syncthreads, {nt} threads", c, "cycles", p["syncthreads_cycles"]["how"])
        add("shared load latency (LDS dependent chain)", tm["smem_latency"]["cycles_per_load"], "cycles",
            tm["smem_latency"]["how"])
        for e in nc:
            if e["group"] == "pipe":
                for k, v in e.items():
                    if k.startswith("pipe_") and v:
                        add(f"{e['kernel']}: {k}", v, "warp-inst/clk/SM", "ncu sm__inst_executed_pipe_*.sum / "
                            "sm__cycles_elapsed.avg / blocks (one block per SM)")

    def ldsm() -> None:
        for e in nc:
            if e["group"] == "ldsm":
                add(f"ldmatrix.x{e['x']} {'128B-swizzled' if e['swizzle_128B'] else 'unswizzled'} (128-B rows): "
                    "wavefronts / instruction", e.get("wavefronts_per_inst"), "wavefronts",
                    "ncu sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum / "
                    "smsp__inst_executed_op_ldsm.sum")
        for r in tm["ldmatrix"]:
            add(f"ldmatrix.x{r['x']} {'swizzled' if r['swizzle_128B'] else 'unswizzled'}: cycles / instruction "
                "(16 warps)", r["cycles_per_inst_16w"], "cycles", "clock64, 16 warps, 1 block")

    for fn in (clock, smem_counts, smem_cycles, gld_counts, l1, chase, bandwidth, pipes, ldsm):
        safe(fn)
    return rows
