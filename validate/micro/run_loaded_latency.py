"""Loaded latency: one warp's dependent-load latency while the rest of the chip streams from L2 or from HBM.

    python3 validate/micro/run_loaded_latency.py --out validate/measurements/h100/loadlat-2026-11-24.json
    python3 validate/micro/run_loaded_latency.py --dry    # the planned cases only (no GPU, no CuPy)

validate/micro/loaded_latency.cu runs one CTA of 1024 threads per SM (120 KiB of dynamic shared memory keeps a second
CTA off). Lane 0 of warp 0 of CTA 0 chases pointers: int offsets forming one random cycle (Sattolo's algorithm,
seeded NumPy) over 128-B lines, each hop one `ld.global.cg.u32` (L1 bypassed) whose address depends on the previous
load; after a ~20 us spin on %globaltimer (the loaders reach full rate) and WARM_HOPS untimed hops it times `hops`
hops with clock64 and %globaltimer. Meanwhile warps 1..L of every CTA (of CTA 0 too, or not) stream float4 with
`ld.global.cg` (coalesced, grid-strided, wrapping around the buffer), counting the bytes of the batches of 32 loads
that start inside the chase's timed window, until the chase raises the stop flag.

Cases: stream buffer L2-resident (16 MiB, read once before each launch) or HBM-resident (2 GiB); chase over every
line of a 4 MiB region read before each launch ("l2"), and with the HBM stream also over every line of a 1 GiB region
(every hop misses L2, "hbm") and over 16 lines scattered in the 4 MiB region ("l2hot": the cycle comes round every
16 hops, so its lines stay in L2 although the HBM stream replaces the L2's contents within ~10 us, which a 4 MiB
region's lines, each visited once, do not survive); L = 0, 1, 2, 4, 8, 16, 31 loader warps per SM, CTA 0 streaming
or not (L = 0 once). Each case runs 3 times (median kept, each field separately), then once more recording every
hop's cycles (shared memory; a dependent shared store and a clock read add a few cycles per hop) for percentiles.

Reported per case: cycles per hop (clock64), ns per hop, the SM clock (clock64 delta / globaltimer delta), and the
stream's bandwidth over the chase's window: counted bytes / globaltimer interval (B/ns = GB/s), and per SM cycle
(chip-wide, and per streaming SM). Per hop the chase also does one IMAD.WIDE (offset to address), ~4 cycles that a
chase of stored addresses (micro.cu's micro_chase) does not have.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

KIB, MIB = 1 << 10, 1 << 20
LINE = 128
THREADS = 1024
SMEM = 120 * KIB  # dynamic shared memory: one CTA per SM (two would need 240 KiB of the 228)
LOADERS = (0, 1, 2, 4, 8, 16, 31)
STREAM_BYTES = {"l2": 16 * MIB, "hbm": 2048 * MIB}
# chase kind -> (region bytes, lines in the cycle (None: every line of the region), timed hops)
CHASES = {"l2": (4 * MIB, None, 2000), "l2hot": (4 * MIB, 16, 2000), "hbm": (1024 * MIB, None, 1000)}
PAIRS = (("l2", "l2"), ("hbm", "l2"), ("hbm", "l2hot"), ("hbm", "hbm"))  # (stream, chase)
WARM_HOPS = 300
SPIN_NS = 20_000  # the chase waits this long after the launch before its warm-up hops
GUARD_NS = 50_000_000  # a loader stops after 50 ms whatever the flag says ...
MAX_BATCHES = 1 << 20  # ... or after this many batches of 32 loads (~16 KiB per warp each)
BATCH_BYTES = 32 * 32 * 16
SEED = 20261124


def sattolo(n: int, seed: int):
    """A uniformly random cyclic permutation of range(n) (Sattolo's algorithm): succ[k] follows k, one cycle."""
    import numpy as np

    rng = np.random.default_rng(seed)
    a = list(range(n))
    js = rng.integers(0, np.arange(n - 1, 0, -1)).tolist() if n > 1 else []  # j uniform in [0, i) for i = n-1..1
    for i, j in zip(range(n - 1, 0, -1), js, strict=True):
        a[i], a[j] = a[j], a[i]
    return np.array(a, dtype=np.int64)


def cycle_length(succ, start: int = 0) -> int:
    s = succ.tolist()
    k, n = s[start], 1
    while k != start:
        k, n = s[k], n + 1
    return n


def plan(loaders=LOADERS, pairs=PAIRS) -> list[dict]:
    cases = []
    for stream, chase in pairs:
        region, lines, hops = CHASES[chase]
        for nl in loaders:
            for cta0 in ((0,) if nl == 0 else (0, 1)):
                cases.append({"stream": stream, "chase": chase, "stream_bytes": STREAM_BYTES[stream],
                              "chase_region_bytes": region, "chase_lines": lines or region // LINE, "hops": hops,
                              "loaders_per_sm": nl, "chase_cta_streams": cta0})
    return cases


def dry(cases: list[dict], reps: int) -> None:
    print(f"{len(cases)} cases x ({reps} timed + 1 sampled) launches = {len(cases) * (reps + 1)} launches; "
          f"grid = SM count x {THREADS} threads, {SMEM // KIB} KiB dynamic shared memory, warm-up {WARM_HOPS} hops, "
          f"spin {SPIN_NS} ns")
    print(f"{'stream':>6} {'stream MiB':>10} {'chase':>6} {'region MiB':>10} {'lines':>8} {'hops':>5} "
          f"{'loaders/SM':>10} {'CTA0 streams':>12}")
    for c in cases:
        print(f"{c['stream']:>6} {c['stream_bytes'] / MIB:>10.0f} {c['chase']:>6} "
              f"{c['chase_region_bytes'] / MIB:>10.3f} {c['chase_lines']:>8} {c['hops']:>5} "
              f"{c['loaders_per_sm']:>10} {c['chase_cta_streams']:>12}")
    try:
        import numpy as np  # noqa: F401
    except ImportError:
        print("numpy missing: Sattolo self-check skipped")
        return
    for n in (1, 2, 3, 16, 1000, 32768):
        succ = sattolo(n, SEED + n)
        assert sorted(succ.tolist()) == list(range(n)) and cycle_length(succ) == n, n
        assert n == 1 or all(int(succ[k]) != k for k in range(n)), n
    print("Sattolo self-check: one cycle through every element for n = 1, 2, 3, 16, 1000, 32768")


def build_chase(cp, region: int, lines: int | None, seed: int) -> dict:
    """Device words of a region whose chosen lines form one cycle: word 32*L of line L holds the next line's word
    offset. Returns the buffer, the chosen lines (host) and the successor order over them."""
    import numpy as np

    nlines = region // LINE
    rng = np.random.default_rng(seed)
    chosen = np.arange(nlines, dtype=np.int64) if lines is None else np.sort(
        rng.choice(nlines, size=lines, replace=False)).astype(np.int64)
    succ = sattolo(chosen.size, seed + 1)
    if chosen.size <= (1 << 20):
        assert cycle_length(succ) == chosen.size
    words = 32 * chosen
    assert int(words.max()) < 2**32
    buf = cp.zeros(region // 4, dtype=cp.uint32)
    buf[cp.asarray(words)] = cp.asarray(words[succ].astype(np.uint32))
    return {"buf": buf, "chosen": chosen, "succ": succ}


def median_fields(rows: list[dict], keys: list[str]) -> dict:
    return {k: float(statistics.median(r[k] for r in rows)) for k in keys}


def run(args) -> int:
    import cupy as cp
    import numpy as np

    out = Path(args.out)
    props = cp.cuda.runtime.getDeviceProperties(0)
    sms = props["multiProcessorCount"]
    cases = plan(args.loaders, PAIRS if not args.no_l2hot else tuple(p for p in PAIRS if p[1] != "l2hot"))
    k = cp.RawModule(code=(HERE / "loaded_latency.cu").read_text(), options=("-std=c++17", f"-I{HERE}")).get_function(
        "loaded_latency")
    k.max_dynamic_shared_size_bytes = SMEM
    res: dict = common.cupy_header(cp, "micro-1") | {
        "what": "latency of one thread's dependent ld.global.cg.u32 (random cycle over 128-B lines) while warps of "
                "every SM stream float4 with ld.global.cg from an L2- or HBM-resident buffer",
        "how": "loaded_latency.cu, one CTA of 1024 threads per SM (120 KiB dynamic shared memory); clock64 and "
               "%globaltimer around the timed hops inside the kernel; stream bytes counted for the batches of 32 "
               "loads that start inside the chase's window, over that window's globaltimer interval; median of "
               f"{args.reps} launches per field, then one launch recording every hop (samples_*)",
        "config": {"sms": sms, "threads": THREADS, "dynamic_smem": SMEM, "warm_hops": WARM_HOPS, "spin_ns": SPIN_NS,
                   "guard_ns": GUARD_NS, "max_batches": MAX_BATCHES, "batch_bytes_per_warp": BATCH_BYTES,
                   "reps": args.reps, "seed": SEED, "stream_bytes": STREAM_BYTES,
                   "chases": {c: {"region_bytes": r, "lines": n or r // LINE, "hops": h}
                              for c, (r, n, h) in CHASES.items()}},
        "results": []}
    ctrl = cp.zeros(4, dtype=cp.uint32)
    nbytes = cp.zeros(1, dtype=cp.uint64)
    rec = cp.zeros(8, dtype=cp.int64)
    sink = cp.zeros(sms * THREADS, dtype=cp.float32)
    samples = cp.zeros(max(h for _, _, h in CHASES.values()), dtype=cp.uint32)
    rng = np.random.default_rng(SEED)
    streams: dict = {}
    chases: dict = {}

    def launch(c: dict, ch: dict, stream_buf, start_idx: int, record: int) -> dict:
        hops = c["hops"]
        assert (hops + 1) * 4 <= SMEM
        n_vec = stream_buf.size // 4
        assert sms * max(c["loaders_per_sm"], 1) * 32 <= n_vec < 2**31
        if c["chase"] != "hbm":
            int(ch["buf"].sum())  # read the chase region into L2
        if c["stream"] == "l2":
            float(stream_buf.sum())  # and the L2-resident stream buffer
        ctrl.fill(0)
        nbytes.fill(0)
        rec.fill(0)
        samples.fill(0)
        cp.cuda.Device().synchronize()
        start = int(ch["chosen"][start_idx]) * 32
        k((sms,), (THREADS,),
          (ch["buf"], np.uint32(start), np.int32(WARM_HOPS), np.int32(hops), np.int32(record), samples, stream_buf,
           np.uint32(n_vec), np.int32(c["loaders_per_sm"]), np.int32(c["chase_cta_streams"]), ctrl, nbytes,
           np.int64(MAX_BATCHES), np.int64(GUARD_NS), np.int64(SPIN_NS), rec, sink), shared_mem=SMEM)
        cp.cuda.Device().synchronize()
        t0, t1, g0, g1, j_end = (int(v) for v in rec[:5].get())
        kk = start_idx  # where the chase must end: WARM_HOPS + hops steps along the cycle
        for _ in range(WARM_HOPS + hops):
            kk = int(ch["succ"][kk])
        cyc, ns = t1 - t0, g1 - g0
        b = int(nbytes.get()[0])
        streaming_sms = (sms - (0 if c["chase_cta_streams"] else 1)) if c["loaders_per_sm"] else 0
        r = {"cycles_per_hop": cyc / hops, "ns_per_hop": ns / hops, "sm_clock_hz": cyc / ns * 1e9 if ns else 0.0,
             "stream_bytes": b, "stream_bytes_per_ns": b / ns if ns else 0.0,
             "stream_bytes_per_cycle": b / cyc if cyc else 0.0,
             "stream_bytes_per_cycle_per_streaming_sm": b / cyc / streaming_sms if streaming_sms and cyc else 0.0,
             "guard_stops": int(ctrl[1].get()), "chase_end_ok": j_end == int(ch["chosen"][kk]) * 32}
        if record:
            v = samples[:hops].get().astype(np.float64)
            r["samples"] = {f"p{p}": float(np.percentile(v, p)) for p in (10, 50, 90, 99)} | {
                "mean": float(v.mean()), "max": float(v.max())}
        return r

    keys = ["cycles_per_hop", "ns_per_hop", "sm_clock_hz", "stream_bytes_per_ns", "stream_bytes_per_cycle",
            "stream_bytes_per_cycle_per_streaming_sm"]
    t_start = time.time()
    for c in cases:
        if c["stream"] not in streams:
            common.log(f"stream buffer {c['stream']}: {c['stream_bytes'] / MIB:.0f} MiB")
            streams[c["stream"]] = cp.ones(c["stream_bytes"] // 4, dtype=cp.float32)
        if c["chase"] not in chases:
            region, lines, _ = CHASES[c["chase"]]
            common.log(f"chase {c['chase']}: cycle over {lines or region // LINE} lines of {region / MIB:g} MiB")
            chases[c["chase"]] = build_chase(cp, region, lines, SEED + len(chases) * 1000)
        ch, sb = chases[c["chase"]], streams[c["stream"]]
        n = ch["chosen"].size
        reps = [launch(c, ch, sb, int(rng.integers(n)), 0) for _ in range(args.reps)]
        rs = launch(c, ch, sb, int(rng.integers(n)), 1)
        row = {k_: c[k_] for k_ in ("stream", "chase", "loaders_per_sm", "chase_cta_streams")} | median_fields(
            reps, keys) | {
            "loader_warps": c["loaders_per_sm"] * (sms - (0 if c["chase_cta_streams"] else 1)),
            "hops": c["hops"], "stream_buffer_bytes": c["stream_bytes"], "chase_region_bytes": c["chase_region_bytes"],
            "chase_lines": c["chase_lines"],
            "reps": {k_: [r[k_] for r in reps] for k_ in ("cycles_per_hop", "stream_bytes_per_ns", "sm_clock_hz")},
            "guard_stops": sum(r["guard_stops"] for r in [*reps, rs]),
            "chase_end_ok": all(r["chase_end_ok"] for r in [*reps, rs]),
            "samples_cycles": rs["samples"], "sampled_cycles_per_hop": rs["cycles_per_hop"]}
        res["results"].append(row)
        common.log(f"{row['stream']:>4} stream, {row['chase']:>5} chase, {row['loaders_per_sm']:2d} loaders/SM, "
                   f"CTA0 {row['chase_cta_streams']}: {row['cycles_per_hop']:7.1f} cyc/hop, "
                   f"{row['stream_bytes_per_ns']:7.1f} GB/s" + ("" if row["chase_end_ok"] else "  CHASE END WRONG")
                   + (f"  {row['guard_stops']} guard stops" if row["guard_stops"] else ""))
        common.write_json(out, res)
    res["elapsed_s"] = time.time() - t_start
    common.write_json(out, res)

    print(f"\n{'stream':>6} {'chase':>6} {'L/SM':>4} {'CTA0':>4} | {'cyc/hop':>8} {'ns/hop':>7} {'GHz':>5} | "
          f"{'GB/s':>7} {'B/clk':>7} {'B/clk/SM':>8} | {'p10':>5} {'p50':>5} {'p90':>5} {'p99':>5} | ok")
    for r in res["results"]:
        s = r["samples_cycles"]
        flag = ("" if r["chase_end_ok"] else " END?") + (f" guard{r['guard_stops']}" if r["guard_stops"] else "")
        print(f"{r['stream']:>6} {r['chase']:>6} {r['loaders_per_sm']:>4} {r['chase_cta_streams']:>4} | "
              f"{r['cycles_per_hop']:>8.1f} {r['ns_per_hop']:>7.1f} {r['sm_clock_hz'] / 1e9:>5.2f} | "
              f"{r['stream_bytes_per_ns']:>7.1f} {r['stream_bytes_per_cycle']:>7.1f} "
              f"{r['stream_bytes_per_cycle_per_streaming_sm']:>8.2f} | "
              f"{s['p10']:>5.0f} {s['p50']:>5.0f} {s['p90']:>5.0f} {s['p99']:>5.0f} | {flag or 'yes'}")
    print(f"\n{len(res['results'])} cases in {res['elapsed_s']:.0f} s; written to {out}")
    bad = [r for r in res["results"] if not r["chase_end_ok"] or r["guard_stops"]]
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="JSON to write (required unless --dry)")
    ap.add_argument("--dry", action="store_true", help="print the planned cases (and check Sattolo) and exit")
    ap.add_argument("--reps", type=int, default=3, help="timed launches per case (median kept)")
    ap.add_argument("--loaders", type=int, nargs="+", default=list(LOADERS), help="loader warps per SM (<= 31)")
    ap.add_argument("--no-l2hot", action="store_true", help="leave out the 16-line L2 chase under the HBM stream")
    a = ap.parse_args()
    if any(not 0 <= n <= 31 for n in a.loaders):
        ap.error("--loaders: 0..31 (warp 0 is the chase's or idle)")
    if a.dry:
        dry(plan(a.loaders, PAIRS if not a.no_l2hot else tuple(p for p in PAIRS if p[1] != "l2hot")), a.reps)
        return 0
    if not a.out:
        ap.error("--out is required")
    return run(a)


if __name__ == "__main__":
    sys.exit(main())
