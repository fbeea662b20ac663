"""The L1TEX pipe's rate for global loads that mostly hit, with some misses or broadcasts (sgemm_coalesced's mix).

    python3 validate/micro/run_l1_mix.py --out validate/measurements/h200/l1mix-2026-11-28.json
    python3 validate/micro/run_l1_mix.py --out validate/measurements/h100/l1mix-2026-12-07.json  (SPAN, MODES 3-4)
    L1MIX_MODES=0,5 python3 validate/micro/run_l1_mix.py --out ...  (only those modes' cases)

validate/micro/l1_mix.cu, compiled per case: two CTAs of 1024 threads an SM (64 warps, as sgemm_coalesced), each warp
ITERS requests of 32 lanes in unrolled groups of 32: `miss` of each group read a line no other request reads (an L1
miss), the others a line of a 32-line L1-resident set. mode 0: full lines; 1: one word for all lanes (a broadcast); 2:
the two alternate; 3: no request misses alone, every warp of a CTA reads the same 32 lines of `cold` in a group, new
ones each group (sgemm_coalesced's B loads: hits on lines still on their way). SPAN (`span` in a row): a missing
request's lanes spread over that many lines (MODE 0); 4: `share` warps of a CTA share each line, lines of a
128-group window every CTA walks (L2-resident); 5: each warp reads its own new lines, `reuse` requests in a row to a
line (the first misses, the others find it on its way). Requests per cycle per SM: requests /
(CUDA-event time x 1980 MHz, the clock the GPU holds under load), median of 5 launches after a warm-up.
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

ITERS = 4096
CASES = [(mode, m, 1) for mode in (0, 1, 2) for m in (0, 1, 2, 4, 8, 16, 32)]
CASES += [(0, 1, span) for span in (2, 4, 8, 16, 32)] + [(0, 2, 4), (0, 2, 16), (3, 0, 1)]
SHARES = (1, 2, 4, 8, 16, 32)  # MODE 4: warps that share each line (L2-resident lines)
REUSES = (16, 32)  # MODE 5: a warp's requests in a row to each of its own new lines
CLOCK_MHZ = 1980.0


def main() -> int:
    a, cp, np, res, sms = common.micro_start(__doc__)
    code = (HERE / "l1_mix.cu").read_text()
    clock_mhz = CLOCK_MHZ
    ctas, threads = 2 * sms, 1024
    warps = ctas * threads // 32
    hot = cp.ones(ctas * 32 * 32, dtype=cp.float32)
    cold = cp.ones(warps * ITERS * 32, dtype=cp.float32)  # enough for 32 misses in 32
    sink = cp.zeros(ctas * threads, dtype=cp.float32)
    rows = []
    cases = [(*c, 32, 1) for c in CASES] + [(4, 0, 1, k, 1) for k in SHARES] + [(5, 0, 1, 32, k) for k in REUSES]
    modes = os.environ.get("L1MIX_MODES")  # e.g. "0,5": only those modes' cases (a short run)
    if modes:
        cases = [c for c in cases if str(c[0]) in modes.split(",")]
    for mode, miss, span, share, reuse in cases:
        f = cp.RawModule(code=code, options=(f"-DMISS={miss}", f"-DMODE={mode}", f"-DSPAN={span}",
                                             f"-DSHARE={share}", f"-DREUSE={reuse}")).get_function("l1mix")

        def launch(f=f):
            f((ctas,), (threads,), (hot, cold, np.int32(ITERS), np.int32(0), sink))
        ns = statistics.median(common.event_times_ns(cp, launch, n=5))
        requests_per_sm = 2 * 32 * ITERS
        lines_per_clk = requests_per_sm / (ns * 1e-9 * clock_mhz * 1e6)
        ok = bool(abs(float(sink[0].get()) - ITERS) < 0.5)
        rows.append({"mode": mode, "misses_per_32": miss, "span": span, "share": share, "reuse": reuse, "time_ns": ns,
                     "requests_per_cycle_per_sm": lines_per_clk, "sum_ok": ok})
        common.log(f"mode={mode} misses/32={miss} span={span} share={share} reuse={reuse}: {ns / 1e3:.1f} us, "
                   f"{lines_per_clk:.3f} requests/clk/SM ok={ok}")
    res["results"]["l1mix"] = {"rows": rows, "clock_mhz": clock_mhz, "iters": ITERS}
    res["how"] = __doc__
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
