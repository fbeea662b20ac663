"""Warp match (MATCH.ANY) against shuffles on the H100: cycles per warp instruction, for a warp and for the SM.

    python3 validate/micro/run_match.py --out validate/measurements/h100/match-2026-11-28.json

validate/micro/match.cu: one CTA per SM of 1, 4, 16 or 32 warps; lane l holds l % k (k = 1, 2, 8, 32 distinct values
per warp); each thread runs ITERS x 16 operations in 1 chain (dependent: the latency) or 8 independent chains (the
issue rate), each followed by a LOP3 that feeds the result back (``v ^= r & noise``, noise = 0 at run time).
clock64 around the loop per warp (closed by a __syncthreads), median over warps and over 3 launches. Kernels:
MATCH.ANY alone, SHFL.BFLY alone, and the two alternating (if they share a unit, the mix runs at the sum of their
costs). The results are checked (noise = 0 leaves every lane's value l % k).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

OPS = ("match", "shfl", "mix")
CHAINS = (1, 8)
WARPS = (1, 4, 16, 32)
KS = (1, 2, 8, 32)
ITERS = 64
UNROLL = 16  # match.cu's UNROLL


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    dev = cp.cuda.Device()
    sms = dev.attributes["MultiProcessorCount"]
    mod = cp.RawModule(code=(HERE / "match.cu").read_text(), options=("-std=c++17",))
    rows = []
    for op in OPS:
        for chains in CHAINS:
            f = mod.get_function(f"warp_{op}_c{chains}")
            for warps in WARPS:
                for k in KS:
                    per_launch, ok = [], True
                    for _ in range(4):  # the first launch warms up; 3 kept
                        rec = cp.zeros(sms * warps * 3, dtype=cp.int64)
                        out = cp.zeros(sms * warps * 32, dtype=cp.uint32)
                        f((sms,), (32 * warps,), (np.int32(k), np.int32(ITERS), np.uint32(0), rec, out))
                        cp.cuda.runtime.deviceSynchronize()
                        r = cp.asnumpy(rec).reshape(-1, 3)
                        lanes = np.arange(sms * warps * 32) % 32
                        ok &= bool((cp.asnumpy(out) == (lanes % k) * chains).all())
                        per_launch.append(float(np.median(r[:, 1] - r[:, 0])))
                    cyc = statistics.median(per_launch[1:])
                    ops = ITERS * UNROLL * chains
                    rows.append({"op": op, "chains": chains, "warps_per_sm": warps, "k": k, "iters": ITERS,
                                 "ops_per_warp": ops, "cycles_median": cyc, "cycles_per_launch": per_launch[1:],
                                 "cycles_per_warp_instr": cyc / ops, "sm_cycles_per_warp_instr": cyc / (ops * warps),
                                 "result_ok": ok})
                    common.log(f"{op} c{chains} w{warps} k{k}: {cyc / ops:.2f} cyc/warp-op, "
                               f"{cyc / (ops * warps):.3f} cyc/SM-op ok={ok}")
    doc = common.cupy_header(cp, "match-1") | {
        "script": "validate/micro/run_match.py", "source": "validate/micro/match.cu", "rows": rows,
        "note": "each operation is followed by one dependent LOP3 (v ^= r & noise)"}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
