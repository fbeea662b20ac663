"""Memory-system and launch micro-benchmarks on the H100 (kernels in validate/micro/memsys.cu).

    python3 validate/micro/run_memsys.py --out validate/measurements/h100/memsys-2026-11-23.json

Measures, each with what, unit and how in the JSON:
- CTA launch: cycles from one CTA's exit to the next CTA's entry on the same SM (one CTA per SM, clock64), and
  the chip's CTA launch rate (a grid of many empty CTAs, CUDA events);
- HBM read-only, write-only and copy bandwidth (1 GiB, 16-B accesses, CUDA events, median of 10);
- store throughput against sectors per warp store (1..32, 4-B lanes, HBM-sized footprint);
- one SM alone and n SMs together pulling from L2 (a shared 4 MiB region) and from HBM (own regions): bytes per
  cycle per SM (clock64 inside each CTA);
- shfl.sync latency (dependent chain) and throughput (8 chains x 32 warps).
Each part runs in its own try block; the JSON is rewritten after every part.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

GIB = 1 << 30


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    out = Path(a.out)
    import cupy as cp
    import numpy as np

    props = cp.cuda.runtime.getDeviceProperties(0)
    sms = props["multiProcessorCount"]
    res: dict = common.cupy_header(cp, "memsys-1") | {"results": {}, "errors": {}}
    mod = cp.RawModule(code=(HERE / "memsys.cu").read_text(), options=("-std=c++17",))
    k = {n: mod.get_function(n) for n in ("cta_stamp", "hbm_read", "hbm_write", "hbm_copy", "store_sectors",
                                          "sm_pull", "shfl_chain", "shfl_throughput")}
    smem_one = 120 * 1024  # dynamic shared memory that allows one CTA per SM
    for name in ("cta_stamp", "sm_pull"):
        k[name].max_dynamic_shared_size_bytes = smem_one

    def save():
        common.write_json(out, res)

    def events(fn, n=10):
        return common.event_times_ns(cp, fn, n, warmup=False)

    def part(name, fn):
        common.log(name)
        try:
            res["results"][name] = fn()
        except Exception:
            res["errors"][name] = traceback.format_exc()[-3000:]
        save()

    # --- clock ----------------------------------------------------------------------------------------
    def clock():
        spin = 200_000_000
        rec = cp.zeros(3 * sms, dtype=cp.uint64)
        t = events(lambda: k["cta_stamp"]((sms,), (32,), (rec, np.int64(spin)), shared_mem=smem_one), 3)
        cyc = (rec[2::3] - rec[1::3]).get().astype(float)
        return {"what": "SM clock under a clock64 spin on every SM", "unit": "Hz",
                "value": float(np.median(cyc)) / (statistics.median(t) * 1e-9),
                "how": f"{sms} CTAs spinning {spin} cycles; clock64 cycles over CUDA-event time"}

    part("sm_clock_hz", clock)

    # --- CTA launch --------------------------------------------------------------------------------------
    def cta_launch():
        out_ = {}
        for spin in (0, 20000):
            n = sms * 64
            rec = cp.zeros(3 * n, dtype=cp.uint64)
            k["cta_stamp"]((n,), (128,), (rec, np.int64(spin)), shared_mem=smem_one)
            cp.cuda.runtime.deviceSynchronize()
            r = rec.get().reshape(n, 3).astype(np.int64)
            gaps = []
            for s in np.unique(r[:, 0]):
                rows = r[r[:, 0] == s]
                rows = rows[np.argsort(rows[:, 1])]
                gaps += list(rows[1:, 1] - rows[:-1, 2])
            gaps = np.array(gaps, dtype=float)
            out_[f"spin{spin}"] = {"ctas": n, "gap_cycles_median": float(np.median(gaps)),
                                   "gap_cycles_p10": float(np.percentile(gaps, 10)),
                                   "gap_cycles_p90": float(np.percentile(gaps, 90))}
        for threads in (32, 256, 1024):
            n = sms * 512
            rec = cp.zeros(3 * n, dtype=cp.uint64)
            t = events(lambda n=n, rec=rec, threads=threads: k["cta_stamp"]((n,), (threads,), (rec, np.int64(0))), 10)
            out_[f"empty_grid_{threads}"] = {"ctas": n, "time_ns_median": statistics.median(t),
                                             "ns_per_cta": statistics.median(t) / n}
        return {"what": "cycles from a CTA's exit to the next CTA's entry on the same SM (one CTA per SM), and "
                        "the chip's rate for grids of empty CTAs", "unit": "cycles; ns per CTA", "value": out_,
                "how": "cta_stamp: clock64 at entry/exit and %smid per CTA; 120 KiB dynamic shared memory; "
                       "empty grids timed with CUDA events (median of 10)"}

    part("cta_launch", cta_launch)

    # --- HBM -------------------------------------------------------------------------------------------
    def hbm():
        n = GIB // 16
        a = cp.random.random(n * 4, dtype=cp.float32)
        b = cp.empty_like(a)
        acc = cp.zeros(1, dtype=cp.float32)
        grid = (sms * 8,)
        rd = events(lambda: k["hbm_read"](grid, (512,), (a, np.uint64(n), acc)))
        wr = events(lambda: k["hbm_write"](grid, (512,), (b, np.uint64(n), np.float32(1.5))))
        cpy = events(lambda: k["hbm_copy"](grid, (512,), (a, b, np.uint64(n))))
        ok = bool(cp.all(b == a))
        return {"what": "HBM bandwidth, 1 GiB, 16-B accesses (read: ld.global.cg), grid-stride, sms x 8 CTAs of 512",
                "unit": "bytes/s (copy counts read + write)", "copy_correct": ok,
                "value": {"read": GIB / (statistics.median(rd) * 1e-9), "write": GIB / (statistics.median(wr) * 1e-9),
                          "copy": 2 * GIB / (statistics.median(cpy) * 1e-9)},
                "times_ns": {"read": rd, "write": wr, "copy": cpy}, "how": "CUDA events, median of 10"}

    part("hbm_bandwidth", hbm)

    # --- stores against sectors per request --------------------------------------------------------------
    def stores():
        words = GIB // 4
        buf = cp.zeros(words, dtype=cp.float32)
        grid, block = sms * 8, 512
        warps = grid * block // 32
        out_ = {}
        for sectors in (1, 2, 4, 8, 16, 32):
            span = sectors * 4 * 8
            reps = max(words // (warps * span), 1)
            t = events(lambda s=sectors, r=reps: k["store_sectors"]((grid,), (block,),
                                                                 (buf, np.uint64(words), np.int32(s), np.int32(r))), 5)
            instr = warps * reps
            med = statistics.median(t)
            out_[str(sectors)] = {"warp_stores": instr, "time_ns": med,
                                  "useful_bytes_per_s": instr * 128 / (med * 1e-9),
                                  "sectors_per_s": instr * sectors / (med * 1e-9)}
        return {"what": "4-B-per-lane warp stores touching 1..32 sectors each, over a 1 GiB buffer", "unit": "see keys",
                "value": out_, "how": "store_sectors; CUDA events, median of 5"}

    part("store_sectors", stores)

    def stores_l2():
        words = (8 << 20) // 4  # 8 MiB: L2-resident
        buf = cp.zeros(words, dtype=cp.float32)
        grid, block, reps = sms * 8, 512, 256
        warps = grid * block // 32
        out_ = {}
        for groups in (1, 4, 8, 16, 32):
            fn = lambda g=groups: k["store_sectors"]((grid,), (block,),  # noqa: E731
                                                     (buf, np.uint64(words), np.int32(g), np.int32(reps)))
            fn()
            t = statistics.median(events(fn, 5))
            sectors = max(groups, 4)  # 32 lanes x 4 B: 4 full sectors, or one partial sector per group
            out_[str(groups)] = {"sectors_per_request": sectors, "bytes_per_sector": 128 // sectors,
                                 "time_ns": t, "sectors_per_ns": warps * reps * sectors / t}
        return {"what": "4-B-per-lane warp stores into an 8 MiB (L2-resident) buffer: 32 lanes over 4 full sectors or "
                        "over 8/16/32 partially written sectors", "unit": "sectors per ns (chip)", "value": out_,
                "how": "store_sectors with the buffer wrapping, after one warm-up launch; CUDA events, median of 5"}

    part("store_sectors_l2", stores_l2)

    # --- one SM and n SMs pulling from L2 and HBM ---------------------------------------------------------
    def pull():
        out_ = {}
        vec_l2 = (4 << 20) // 16  # 4 MiB shared region: L2-resident
        vec_hbm = (64 << 20) // 16  # 64 MiB per CTA: from HBM
        a = cp.random.random((vec_hbm * 16 // 4) * 16, dtype=cp.float32)  # 16 x 64 MiB
        acc = cp.zeros(1, dtype=cp.float32)
        for src, vec, passes, shared in (("l2", vec_l2, 8, 1), ("hbm", vec_hbm, 1, 0)):
            for n in (1, 2, 4, 8, 16):
                if not shared and n * vec * 16 > a.nbytes:
                    continue
                rec = cp.zeros(2 * n, dtype=cp.uint64)
                if shared:  # warm the region into L2
                    k["sm_pull"]((n,), (1024,), (a, np.uint64(vec), np.int32(1), np.int32(1), rec, acc),
                                 shared_mem=smem_one)
                k["sm_pull"]((n,), (1024,), (a, np.uint64(vec), np.int32(passes), np.int32(shared), rec, acc),
                             shared_mem=smem_one)
                cp.cuda.runtime.deviceSynchronize()
                cyc = rec.get().reshape(n, 2)[:, 0].astype(float)
                out_[f"{src}_{n}sm"] = {"bytes_per_cycle_per_sm": float(np.median(vec * 16 * passes / cyc)),
                                        "sms": n}
        return {"what": "bytes per SM cycle one CTA of 1024 threads pulls (4 independent 16-B ld.global.cg per "
                        "thread), with n SMs active", "unit": "B/clk/SM", "value": out_,
                "how": "sm_pull: clock64 around the loop in each CTA; L2: all CTAs read one 4 MiB region 8 times "
                       "after a warm-up pass; HBM: each CTA reads its own 64 MiB once"}

    part("sm_pull", pull)

    # --- shfl ----------------------------------------------------------------------------------------
    def shfl():
        rec = cp.zeros(64, dtype=cp.uint64)
        o = cp.zeros(1, dtype=cp.int32)
        iters = 4096
        k["shfl_chain"]((1,), (32,), (np.int32(iters), rec, o))
        cp.cuda.runtime.deviceSynchronize()
        lat = float(rec[0].get()) / iters
        k["shfl_throughput"]((1,), (1024,), (np.int32(iters), rec, o))
        cp.cuda.runtime.deviceSynchronize()
        tp = 32 * 8 * iters / float(rec[0].get())
        return {"what": "shfl.sync.bfly.b32: dependent-chain latency; warp instructions per cycle per SM with 32 "
                        "warps x 8 independent chains", "unit": "cycles; warp instructions/clk/SM",
                "value": {"latency_cycles": lat, "warp_instructions_per_cycle": tp},
                "how": "clock64 around 4096 iterations"}

    part("shfl", shfl)
    common.log("done")
    print(f"errors: {list(res['errors'])}")
    for name, r in res["results"].items():
        print(name, r.get("value"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
