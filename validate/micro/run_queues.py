"""Depth of the LG (global) and MIO (shared) queues in front of the L1TEX pipe on the H100 (issue "the SM side",
item 4).

    python3 validate/micro/run_queues.py --out validate/measurements/h100/queues-2026-11-24.json

validate/micro/queues.cu: one CTA of 128 threads on one SM; 1 or 4 warps (one per sub-partition) each issue 40
independent loads of the same 32 lane addresses back to back and read %clock after each. Per case: the cycles
between successive loads for warp 0, median over 9 launches. Global loads hit in L1 (warmed first); the lane stride
sets the L1TEX work per request: 1 word (one line, one wavefront), 8 (8 lines; shared: 8-way bank conflict), 32
(32 lines; 32-way conflict). Then `smem_step`: the step of a shared-memory tree reduction (two LDS, FADD, STS,
__syncthreads) in a loop, 1 or 8 CTAs of 256 threads per SM: cycles per step. Issue runs a few cycles per load
until the queue in front of the pipe is full, then at the pipe's rate; "accepted" is the number of loads issued
before the gap first reaches half the steady gap (the median of the last 10), "steady_cycles" that gap.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

NLD = 40


def knee(gaps: list[float]) -> tuple[int, float]:
    """(loads issued before the first gap of at least half the steady gap, the steady gap)."""
    steady = statistics.median(gaps[-10:])
    first = next((i for i, g in enumerate(gaps) if g >= steady / 2), len(gaps))
    return first, steady


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    res = common.cupy_header(cp, "micro-1") | {"results": {}}
    props_sms = res["gpu"]["sm_count"]
    k = cp.RawModule(code=(HERE / "queues.cu").read_text(), options=("-std=c++17", f"-DNLD={NLD}")) \
        .get_function("queue_burst")
    buf = cp.arange(4096, dtype=cp.float32)
    zeros = cp.zeros(NLD, dtype=cp.int32)
    out = cp.zeros(4 * NLD, dtype=cp.uint32)
    sink = cp.zeros(128, dtype=cp.float32)
    rows = []
    for space in ("global", "shared"):
        for stride in (1, 2, 8, 32):
            for warps in (1, 4):
                runs = []
                for _ in range(9):
                    k((1,), (128,), (buf, zeros, np.int32(stride), np.int32(warps), np.int32(space == "shared"),
                                     out, sink))
                    cp.cuda.runtime.deviceSynchronize()
                    runs.append(cp.asnumpy(out[:NLD]).astype(float))
                gaps = [float(statistics.median(r[i] for r in runs)) for i in range(NLD)]
                accepted, steady = knee(gaps)
                rows.append({"space": space, "stride_words": stride, "warps": warps, "gaps_cycles": gaps,
                             "accepted": accepted, "steady_cycles": steady})
                common.log(f"{space} stride {stride} warps {warps}: accepted {accepted}, steady {steady:.1f} "
                           f"cycles; gaps {[int(g) for g in gaps[:24]]}")
    res["results"]["queues"] = {"what": "cycles between successive independent loads of one warp", "rows": rows,
                                "loads": NLD}
    step = cp.RawModule(code=(HERE / "queues.cu").read_text(), options=("-std=c++17",)).get_function("smem_step")
    per_iter = cp.zeros(132 * 8, dtype=cp.float32)
    srows = []
    for stride in (1, 2, 8, 32):
        for ctas_per_sm in (1, 8):
            grid = props_sms * ctas_per_sm
            meds = []
            for _ in range(5):
                step((grid,), (256,), (np.int32(2000), np.int32(stride), sink, per_iter))
                cp.cuda.runtime.deviceSynchronize()
                meds.append(float(cp.median(per_iter[:grid])))
            srows.append({"stride_words": stride, "ctas_per_sm": ctas_per_sm,
                          "cycles_per_step": statistics.median(meds)})
            common.log(f"smem_step stride {stride} ctas/SM {ctas_per_sm}: {srows[-1]['cycles_per_step']:.1f} cycles")
    res["results"]["smem_step"] = {"what": "LDS, LDS, FADD, STS, __syncthreads in a loop, 256 threads per CTA",
                                   "rows": srows, "unit": "SM cycles per iteration (clock64, thread 0)"}
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
