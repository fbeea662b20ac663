"""Latency of a dependent shared load by its width: LDS.32, LDS.64, LDS.128 (the model gives every shared load the
LDS.32 chain's latency plus its wavefronts; sgemm_autotuned's rolled dotIdx loop waits on LDS.128s each step).

    python3 validate/micro/run_lds_width_chain.py --out validate/measurements/h100/ldswidth-<date>.json

validate/micro/lds_width_chain.cu: one warp per SM (one CTA of 32 threads on each SM) walks ITERS x 16 dependent
loads, each conflict-free; cycles per load from clock64, median over the SMs and 5 launches after a warm-up. The
chain's end value is checked (every lane ends on its own slot).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

WIDTHS = (4, 8, 16)
ITERS = 64
UNROLL = 16


def main() -> int:
    a, cp, np, res, sms = common.micro_start(__doc__)
    code = (HERE / "lds_width_chain.cu").read_text()
    rows = []
    for width in WIDTHS:
        f = cp.RawModule(code=code, options=(f"-DWIDTH={width}",)).get_function("lds_width")
        cycles = cp.zeros(sms, dtype=cp.int64)
        sink = cp.zeros(sms * 32, dtype=cp.uint32)
        per = []
        for launch in range(6):
            f((sms,), (32,), (np.int32(ITERS), np.uint32(0), cycles, sink))
            cp.cuda.Device().synchronize()
            if launch:
                per.append(float(statistics.median(cycles.get())) / (ITERS * UNROLL))
        ok = bool((sink.get().reshape(sms, 32) == np.arange(32, dtype=np.uint32) * 4).all())
        rows.append({"width_bytes": width, "cycles_per_load": statistics.median(per), "per_launch": per,
                     "value_ok": ok})
        common.log(f"LDS width {width} B: {statistics.median(per):.2f} cycles a load ok={ok}")
    res["results"]["lds_width_chain"] = {"rows": rows, "how": __doc__}
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
