"""SM clock under load, per pipe mix, and start-up costs on the H100 (kernels in validate/micro/clocks.cu).

    python3 validate/micro/run_clocks.py --out validate/measurements/h100/clocks-2026-11-24.json

Measures, each with what, unit and how in the JSON:
- the SM clock while every SM runs one pipe mix (idle timer spin, FP32 FFMA, tensor mma.sync bf16, HBM-streaming
  loads) for 200 ms: per block d(clock64) / d(%globaltimer), in MHz; the tensor mix five times in a row (does it
  fall as the chip heats?); nvidia-smi's clock and power before and after;
- kernel launch: back-to-back empty launches from Python (CUDA events over 2,000: host-bound), one launch alone
  (events around it, median of 200), and the GPU's own launch-to-launch gap (empty kernels back to back in a
  CUDA graph, %globaltimer at each entry);
- cluster launch: an empty grid of 528 CTAs without clusters and with compile-time clusters of 2 and 4 (median of
  50 launches, CUDA events);
- mbarrier set-up: cycles from CTA entry to past __syncthreads() with thread 0 initialising 0, 1, 4, 16 mbarriers;
- the SM clock under wgmma (one warpgroup per SM, m64n256k16 back to back), the second point of the clock model;
- the instruction caches: cycles per instruction of a looped straight-line body of 256..32768 SASS instructions
  (validate/micro/icache.cu), 1 and 4 warps per SMSP;
- mbarrier polling: polls of the twins' wait loop per cycle waited (validate/micro/mbarpoll.cu).
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

SMS_WAVE = 4  # CTAs per SM in the clock kernels
RUN_NS = 200_000_000


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    out = Path(a.out)
    import cupy as cp
    import numpy as np

    props = cp.cuda.runtime.getDeviceProperties(0)
    sms = props["multiProcessorCount"]
    res = common.cupy_header(cp, "micro-1") | {"results": {}}
    mod = cp.RawModule(code=(HERE / "clocks.cu").read_text(), options=("-std=c++17", "-arch=sm_90a", f"-I{HERE}"))
    fn = {k: mod.get_function(k) for k in ("clk_ffma", "clk_hmma", "clk_mem", "clk_idle", "st_empty", "st_cluster2",
                                           "st_cluster4", "st_mbar", "st_stamp")}
    sink = cp.zeros(16, dtype=cp.float32)
    buf = cp.ones((2 << 30) // 16 * 4, dtype=cp.float32)  # 2 GiB

    def part(name, f):
        common.log(name)
        try:
            res["results"][name] = f()
        except Exception:
            res["results"][name] = {"error": traceback.format_exc()[-2000:]}
        common.write_json(out, res)

    def clock(kind):
        blocks = sms if kind == "idle" else sms * SMS_WAVE
        threads = 32 if kind == "idle" else (512 if kind == "mem" else 256)
        rec = cp.zeros(blocks * 5, dtype=cp.int64)
        ns = np.int64(RUN_NS)
        smi0 = common.nvidia_smi()
        if kind == "ffma":
            fn["clk_ffma"]((blocks,), (threads,), (ns, np.float32(0.999), np.float32(0.001), sink, rec))
        elif kind == "hmma":
            fn["clk_hmma"]((blocks,), (threads,), (ns, np.uint32(12345), sink, rec))
        elif kind == "mem":
            fn["clk_mem"]((blocks,), (threads,), (ns, buf, np.int64(buf.size // 4), sink, rec))
        else:
            fn["clk_idle"]((blocks,), (threads,), (ns, rec))
        cp.cuda.runtime.deviceSynchronize()
        smi1 = common.nvidia_smi()
        r = rec.get().reshape(-1, 5)
        mhz = (r[:, 1] - r[:, 0]) / (r[:, 3] - r[:, 2]) * 1e3
        return {"what": f"SM clock with every SM running the {kind} mix, {RUN_NS / 1e6:.0f} ms", "unit": "MHz",
                "median": float(np.median(mhz)), "min": float(mhz.min()), "max": float(mhz.max()),
                "blocks": int(blocks), "threads": int(threads),
                "nvidia_smi_before": {k: smi0.get(k) for k in ("clocks.sm", "power.draw", "temperature.gpu")},
                "nvidia_smi_after": {k: smi1.get(k) for k in ("clocks.sm", "power.draw", "temperature.gpu")}}

    for kind in ("idle", "ffma", "mem", "hmma"):
        part(f"clock_{kind}", lambda kind=kind: clock(kind))
    part("clock_hmma_repeated", lambda: [clock("hmma")["median"] for _ in range(5)])
    part("clock_ffma_after_hmma", lambda: clock("ffma"))

    def events(f, n):
        return common.event_times_ns(cp, f, n, warmup=False)

    def launches():
        k = fn["st_empty"]
        for _ in range(100):
            k((1,), (32,), ())
        cp.cuda.runtime.deviceSynchronize()
        n = 2000
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        for _ in range(n):
            k((1,), (32,), ())
        e.record()
        e.synchronize()
        single = events(lambda: k((1,), (32,), ()), 200)
        return {"back_to_back_ns_per_launch": cp.cuda.get_elapsed_time(s, e) * 1e6 / n,
                "single_launch_ns": common.summarize(single),
                "what": "empty kernel, 1 CTA of 32 threads: GPU time per launch back to back (2,000 launches "
                        "between two events), and events around one launch (median of 200)", "unit": "ns"}

    part("kernel_launch", launches)

    def graph_launches():
        n = 200
        rec = cp.zeros(n, dtype=cp.int64)
        stream = cp.cuda.Stream(non_blocking=True)
        k = fn["st_stamp"]
        with stream:
            stream.begin_capture()
            for i in range(n):
                k((1,), (32,), (rec, np.int32(i)))
            graph = stream.end_capture()
        gaps = []
        for _ in range(5):
            graph.launch(stream)
            stream.synchronize()
            g = rec.get()
            gaps.extend(np.diff(g).tolist())
        return {"what": "empty kernels (1 CTA) launched back to back from a CUDA graph: ns between consecutive "
                        "kernels' entries (%globaltimer), 5 x 199 gaps", "unit": "ns",
                "median": float(np.median(gaps)), "min": float(min(gaps)), "p90": float(np.percentile(gaps, 90))}

    part("kernel_launch_graph", graph_launches)

    def clusters():
        out_ = {}
        for key, k in (("none", "st_empty"), ("cluster2", "st_cluster2"), ("cluster4", "st_cluster4")):
            f = fn[k]
            f((sms * 4,), (128,), ())
            cp.cuda.runtime.deviceSynchronize()
            out_[key] = common.summarize(events(lambda f=f: f((sms * 4,), (128,), ()), 50))
        out_["what"] = f"empty grid of {sms * 4} CTAs x 128 threads, events around one launch, median of 50"
        out_["unit"] = "ns"
        return out_

    part("cluster_launch", clusters)

    def mbar():
        out_ = {}
        rec = cp.zeros(sms, dtype=cp.int64)
        for n in (0, 1, 4, 16):
            vals = []
            for _ in range(20):
                fn["st_mbar"]((sms,), (128,), (np.int32(n), rec))
                cp.cuda.runtime.deviceSynchronize()
                vals.extend(rec.get().tolist())
            out_[str(n)] = {"median": float(statistics.median(vals)), "min": float(min(vals))}
        out_["what"] = "cycles from CTA entry to past __syncthreads() (128 threads), thread 0 initialising n " \
                       "mbarriers + fence.mbarrier_init first; one CTA per SM, 20 launches"
        out_["unit"] = "cycles"
        return out_

    part("mbarrier_setup", mbar)

    def wgmma_clock():
        hop = cp.RawModule(code=(HERE / "hopper.cu").read_text(), options=("-std=c++17", "--gpu-architecture=sm_90a"))
        k = hop.get_function("hop_wgmma_tp_n256_b64")
        rec = cp.zeros(sms * 5, dtype=cp.int64)
        k((sms,), (128,), (np.int32(100), np.uint32(12345), rec, sink), shared_mem=2048 + 256 * 32)  # warm-up
        cp.cuda.runtime.deviceSynchronize()
        out_ = {"runs_mhz": []}
        for _ in range(3):
            k((sms,), (128,), (np.int32(40000), np.uint32(12345), rec, sink), shared_mem=2048 + 256 * 32)
            cp.cuda.runtime.deviceSynchronize()
            r = rec.get().reshape(-1, 5)
            mhz = (r[:, 1] - r[:, 0]) / (r[:, 3] - r[:, 2]) * 1e3
            cyc = float(np.median(r[:, 1] - r[:, 0]))
            out_["runs_mhz"].append(float(np.median(mhz)))
            out_["flop_per_clk_per_sm"] = 40000 * 64 * 2 * 64 * 256 * 16 / cyc
            out_["seconds"] = float(np.median(r[:, 3] - r[:, 2])) / 1e9
        out_["median_mhz"] = float(np.median(out_["runs_mhz"]))
        out_["what"] = ("SM clock with one warpgroup per SM running wgmma m64n256k16 bf16 back to back "
                        "(hop_wgmma_tp_n256_b64 of validate/micro/hopper.cu, 40,000 x 64 wgmmas), three runs")
        out_["unit"] = "MHz"
        return out_

    part("clock_wgmma", wgmma_clock)

    def icache():
        import run_icache

        return {"what": "cycles per warp instruction per SMSP over a looped straight-line body of BODY IMADs "
                        "(validate/micro/icache.cu), one CTA per SM, 1 or 4 warps per SMSP; 16 B per SASS "
                        "instruction", "unit": "cycles per instruction per SMSP",
                "rows": run_icache.measure(cp, np, sms, (256, 512, 1024, 2048, 4096, 8192, 16384, 32768),
                                           (128, 512))}

    part("icache", icache)

    def polling():
        mod = cp.RawModule(code=(HERE / "mbarpoll.cu").read_text(),
                           options=("-std=c++17", "-arch=sm_90a", f"-I{HERE.parent / 'kernels'}"))
        k = mod.get_function("poll_wait")
        rec = cp.zeros(sms * 2, dtype=cp.int64)
        out_ = {"what": "the twins' mbarrier wait loop (mbar_wait, validate/kernels/hopper_common.cuh) polling while "
                        "lane 0 of warp 0 spins `delay` cycles before it arrives; one CTA per SM; polls and cycles "
                        "waited by warp 1 (medians over the SMs)", "unit": "cycles per poll", "rows": []}
        for waiters in (1, 4, 8):
            for delay in (2000, 20000, 200000):
                k((sms,), (32 * (1 + waiters),), (np.int64(delay), rec))
                cp.cuda.runtime.deviceSynchronize()
                r = rec.get().reshape(-1, 2)
                polls, cyc = float(np.median(r[:, 0])), float(np.median(r[:, 1]))
                out_["rows"].append({"waiting_warps": waiters, "delay_cycles": delay, "polls": polls,
                                     "cycles_waited": cyc, "cycles_per_poll": cyc / max(polls, 1.0)})
                common.log(f"polling {waiters} warps, delay {delay}: {polls:.0f} polls in {cyc:.0f} cycles")
        return out_

    part("mbarrier_polling", polling)
    for k, v in res["results"].items():
        print(k, v if not isinstance(v, dict) else {kk: vv for kk, vv in v.items() if kk != "what"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
