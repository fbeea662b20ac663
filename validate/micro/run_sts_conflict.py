"""Bank-conflicted shared stores on the H100: their rate through the pipe and a load-add-store chain.

    python3 validate/micro/run_sts_conflict.py --out validate/measurements/h100/stsconflict-2026-11-28.json

validate/micro/sts_conflict.cu: one CTA per SM of 32 warps, of which 1, 4 or 32 work; lane l writes word
(l % ways) * 32 + l // ways (a ways-way conflict; 1: none). sts_rate: ITERS x 16 independent volatile STS a warp;
cycles per store. sts_rmw: ITERS x 16 times s[w] = s[w] + 1 a lane (a volatile load, an add, a store, the next load
after the store); cycles per step (with several warps their lanes share words: the sum is not checked then). Cycles:
clock64 per warp, median over warps and 3 launches (the first launch a warm-up). A wavefront rate per SM is warps x
ways / cycles per store.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

WAYS = (1, 2, 4, 8, 16, 32)
WARPS = (1, 4, 32)
ITERS = 64
UNROLL = 16


def main() -> int:
    a, cp, np, data, sms = common.micro_start(__doc__, "stsconflict-1", results=False)
    mod = cp.RawModule(code=(HERE / "sts_conflict.cu").read_text())
    data["how"] = __doc__
    rows = []
    for kernel in ("sts_rate", "sts_rmw"):
        def check(warps, ways, sink, kernel=kernel):  # each word stepped once a step by its lane (one warp), or
            if kernel == "sts_rmw":  # the last value stored (any number of warps)
                return warps > 1 or (sink == ITERS * UNROLL).all()
            return (sink == ITERS * UNROLL - 1).all()

        for warps, ways, cyc, per, ok in common.warp_clock_rows(cp, np, mod.get_function(kernel), sms, 32,
                                                              [(w, k) for w in WARPS for k in WAYS], ITERS, UNROLL,
                                                              check):
            rows.append({"kernel": kernel, "warps_per_sm": warps, "ways": ways, "cycles_per_op": cyc,
                         "wavefronts_per_cycle": warps * ways / cyc, "per_launch": per, "value_ok": ok})
            common.log(f"{kernel} warps={warps} ways={ways}: {cyc:.2f} cycles per op, "
                       f"{warps * ways / cyc:.2f} wavefronts/clk ok={ok}")
    data["rows"] = rows
    common.write_json(Path(a.out), data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
