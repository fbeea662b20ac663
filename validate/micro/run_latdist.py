"""The spread of a single load's latency from the L2 and from HBM (latdist.cu), as quantiles.

    python3 validate/micro/run_latdist.py --out validate/measurements/h100/latdist-2026-12-07.json

One thread of one CTA chases a random ring of 128-B lines (a line's first word holds the next line's index) over
16 MiB (L2-resident after two passes) and 256 MiB (one pass, after 256 MiB written over the L2: HBM), 8192 hops, each hop's clock64 cycles kept (the clock
reads add a few cycles to each). Quantiles 1..99 of the hops after the first 256.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

HOPS = 8192
QS = (1, 5, 10, 25, 50, 75, 90, 95, 99)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    f = cp.RawModule(code=(HERE / "latdist.cu").read_text(), options=("-std=c++17",)).get_function("chase")
    res = common.cupy_header(cp, "micro-1") | {"results": {"latdist": {"hops": HOPS, "quantiles": list(QS),
                                                                        "rows": []}}}
    rows = res["results"]["latdist"]["rows"]
    rng = np.random.default_rng(1)
    flush = cp.zeros(64 << 20, dtype=cp.float32)  # 256 MiB written over the L2 before the HBM pass
    for label, mib in (("l2", 16), ("hbm", 256)):
        lines = mib * (1 << 20) // 128
        order = rng.permutation(lines).astype(np.uint32)
        nxt = np.zeros(lines * 32, dtype=np.uint32)
        nxt[order * 32] = np.roll(order, -1) * 32  # line order[i] points at line order[i+1] (word index)
        d_next = cp.asarray(nxt)
        out = cp.zeros(HOPS, dtype=cp.uint32)
        sink = cp.zeros(1, dtype=cp.uint32)
        for rep in range(3 if label == "l2" else 1):  # the L2 case: passes that leave the lines in the L2
            if label == "hbm":
                flush.fill(1.0)
                cp.cuda.runtime.deviceSynchronize()
            f((1,), (1,), (d_next, np.uint32(order[0] * 32), np.int32(HOPS), out, sink))
            cp.cuda.runtime.deviceSynchronize()
        c = out.get()[256:].astype(np.float64)
        q = [float(np.percentile(c, x)) for x in QS]
        rows.append({"level": label, "footprint_mib": mib, "mean_cycles": float(c.mean()), "quantile_cycles": q,
                     "std_cycles": float(c.std())})
        common.log(f"{label} {mib} MiB: mean {c.mean():.0f}, std {c.std():.0f}, quantiles {dict(zip(QS, [round(x) for x in q]))}")
        del d_next
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
