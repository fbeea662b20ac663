"""Shared loads and stores mixed: do they share the L1TEX pipe's one wavefront a cycle? (ldstmix.cu)

    python3 validate/micro/run_ldstmix.py --out validate/measurements/h100/ldstmix-2026-12-07.json

One CTA per SM, 8 / 16 / 32 warps, each looping over NLD independent shared loads and NST stores (conflict-free
stores; loads conflict-free or 8-way conflicted). Per case the median over 5 launches of each warp's clock64
cycles over its loop, the slowest warp's: the SM's shared instructions and wavefronts a cycle. Loads alone and stores
alone run at 1.0 a cycle (validate/measurements/h100/offlane-2026-12-07.json); a mix above 1.0 means they do not share
one wavefront a cycle.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

ITERS = 1024
MIXES = ((8, 0), (0, 8), (4, 4), (6, 2), (2, 6), (2, 1), (4, 0), (0, 4))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    mod = cp.RawModule(code=(HERE / "ldstmix.cu").read_text(), options=("-std=c++17", "-arch=sm_90a"))
    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    res = common.cupy_header(cp, "micro-1") | {"results": {"ldstmix": {"iters": ITERS, "rows": []}}}
    rows = res["results"]["ldstmix"]["rows"]
    sink = cp.zeros(4, dtype=cp.float32)
    for stride in (1, 8):
        for nld, nst in MIXES:
            if stride == 8 and nld == 0:
                continue
            f = mod.get_function(f"mix_{nld}_{nst}")
            for warps in (8, 16, 32):
                out = cp.zeros(sms * 32, dtype=cp.int64)

                def launch(f=f, warps=warps, stride=stride, out=out):
                    f((sms,), (32 * warps,), (np.int32(ITERS), np.int32(stride), sink, out))
                    cp.cuda.runtime.deviceSynchronize()

                # per SM, warp
                cyc = common.median_of_launches(np, launch, lambda w=warps, o=out: o.get().reshape(sms, 32)[:, :w])
                slowest = float(np.median(cyc.max(axis=1)))
                inst = warps * ITERS * (nld + nst)
                wf = warps * ITERS * (nld * (8 if stride == 8 else 1) + nst)
                row = {"loads": nld, "stores": nst, "load_stride_words": stride, "warps": warps,
                       "cycles": slowest, "sm_instructions_per_cycle": inst / slowest,
                       "sm_wavefronts_per_cycle": wf / slowest}
                rows.append(row)
                common.log(f"ld {nld} st {nst} stride {stride} warps {warps}: {slowest:.0f} cycles, "
                           f"{inst / slowest:.3f} instr/cycle, {wf / slowest:.3f} wavefronts/cycle")
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
