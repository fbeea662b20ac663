"""Latency of bank-conflicted shared loads on the H100 (what a k-way conflict adds to a dependent LDS).

    python3 validate/micro/run_lds_conflict_chain.py --out validate/measurements/h100/ldsconflict-2026-11-28.json

validate/micro/lds_conflict_chain.cu: one CTA per SM of 32 warps, of which 1, 4 or 32 walk a chain of ITERS x 16
dependent LDS (each word holds its own offset); lane l reads word (l % ways) * 32 + l // ways, so the 32 lanes fall
on ways distinct words of each bank they touch: a ways-way conflict (1: none). Cycles per load: clock64 around the
chain per warp, median over warps and 3 launches (the first launch a warm-up). The chain's end value is checked.
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
    a, cp, np, data, sms = common.micro_start(__doc__, "ldsconflict-1", results=False)
    f = cp.RawModule(code=(HERE / "lds_conflict_chain.cu").read_text()).get_function("lds_chain")
    data["how"] = __doc__
    lanes = np.arange(32)

    def check(warps, ways, sink):  # warp 0 of each CTA ends its chain where it began
        return (sink[:, :32] == (lanes % ways) * 32 + lanes // ways).all()

    rows = []
    for warps, ways, cyc, per, ok in common.warp_clock_rows(cp, np, f, sms, 1024, [(w, k) for w in WARPS for k in WAYS],
                                                          ITERS, UNROLL, check):
        rows.append({"warps_per_sm": warps, "ways": ways, "cycles_per_load": cyc, "per_launch": per, "value_ok": ok})
        common.log(f"warps={warps} ways={ways}: {cyc:.2f} cycles per dependent LDS ok={ok}")
    data["rows"] = rows
    common.write_json(Path(a.out), data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
