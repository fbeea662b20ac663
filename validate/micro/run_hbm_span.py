"""HBM read bandwidth against the contiguous span read at each random position (``[hbm] span_*``).

    python3 validate/micro/run_hbm_span.py --out validate/measurements/h100/hbmspan-2026-11-26.json
    python3 validate/micro/run_hbm_span.py --gaps --out validate/measurements/h100/hbmgap-2026-11-26.json

validate/micro/hbm_span.cu: every SM full of warps (8 CTAs of 256 threads), each warp reading positions of a 4 GiB
buffer at random multiples of `span` bytes and `span` contiguous bytes at each (32 B to 64 KiB), about 1 GiB per case,
16 independent line loads in flight per warp whatever the span.
CUDA-event time, the median of 5 launches: bytes requested per second, and the bytes HBM fetches (64-B blocks:
a 32-B span fetches 64, ``[hbm] fetch_granularity_bytes``). A stream reads every byte of a DRAM page it opens; a
scattered gather reads one 64-B block per page: this says what that costs.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

SPANS = (32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 65536)
GAPS = (64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
BUFFER = 4 << 30
CASE_BYTES = 1 << 30
CTAS_PER_SM, THREADS = 8, 256


def gaps(f, cp, np, res, sms, buf, sink, out: Path) -> int:
    warps = sms * CTAS_PER_SM * THREADS // 32
    rows = []
    for gap in GAPS:
        reps = max(1, CASE_BYTES // (warps * 16 * 128))  # 128 B requested per load, whatever the gap
        requested = warps * reps * 16 * 128

        def launch(gap=gap, reps=reps):
            f((sms * CTAS_PER_SM,), (THREADS,), (buf, np.uint64(BUFFER), np.int32(gap), np.int32(reps), sink))

        times = common.event_times_ns(cp, launch, n=5)
        t = sorted(times)[len(times) // 2]
        rows.append({"gap_bytes": gap, "reps_per_warp": reps, "fetched_bytes": requested, "time_ns_median": t,
                     "times_ns": times, "fetched_gb_per_s": requested / t})
        common.log(f"gap {gap:6d} B: {t / 1e3:9.1f} us, fetched {requested / t:7.1f} GB/s")
    res["results"]["hbm_gap"] = {"rows": rows, "buffer_bytes": BUFFER, "ctas_per_sm": CTAS_PER_SM, "threads": THREADS}
    common.write_json(out, res)
    return 0


def main() -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--gaps", action="store_true", help="64-B blocks at fixed gaps (hbm_gap)")
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    res = common.cupy_header(cp, "micro-1") | {"results": {}}
    sms = res["gpu"]["sm_count"]
    mod = cp.RawModule(code=(HERE / "hbm_span.cu").read_text(), options=("-std=c++17",))
    buf = cp.ones(BUFFER // 4, dtype=cp.float32)
    sink = cp.zeros(1, dtype=cp.float32)
    if a.gaps:
        return gaps(mod.get_function("hbm_gap"), cp, np, res, sms, buf, sink, Path(a.out))
    f = mod.get_function("hbm_span")
    warps = sms * CTAS_PER_SM * THREADS // 32
    rows = []
    for span in SPANS:
        per_rep = 16 * 128  # bytes a warp requests per round: 16 loads, 4 bytes a lane
        reps = max(1, CASE_BYTES // (warps * per_rep))
        requested = warps * reps * per_rep
        fetched = requested * max(1, 64 // span)

        seeds = iter(range(1, 100))  # fresh positions every launch: none left in the L2 by the one before

        def launch(span=span, reps=reps, seeds=seeds):
            f((sms * CTAS_PER_SM,), (THREADS,), (buf, np.uint64(BUFFER), np.int32(span), np.int32(reps),
                                                 np.uint64(next(seeds) * 7919), sink))

        times = common.event_times_ns(cp, launch, n=5)
        t = sorted(times)[len(times) // 2]
        row = {"span_bytes": span, "reps_per_warp": reps, "requested_bytes": requested, "fetched_bytes": fetched,
               "time_ns_median": t, "times_ns": times, "requested_gb_per_s": requested / t,
               "fetched_gb_per_s": fetched / t}
        rows.append(row)
        common.log(f"span {span:6d} B: {t / 1e3:9.1f} us, requested {requested / t:7.1f} GB/s, fetched "
                   f"{fetched / t:7.1f} GB/s")
    res["results"]["hbm_span"] = {"rows": rows, "buffer_bytes": BUFFER, "ctas_per_sm": CTAS_PER_SM,
                                  "threads": THREADS}
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
