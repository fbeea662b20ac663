"""How long a CTA's burst of 16-B global loads takes on a chip with nothing else running (issue "the SM side":
hgemm_mma_swizzled at 512^3 waits about 2000 cycles per k-tile on its loads, the model about 800).

    python3 validate/micro/run_ld_burst.py --out validate/measurements/h100/ldburst-2026-11-25.json

validate/micro/ld_burst.cu: 1, 16 or 132 CTAs of 256 threads (one per SM), 8 rounds; in each round every thread loads
NLOAD = 1..16 16-B chunks (unrolled) of a tile of NLOAD*32 rows x 128 B (row pitch 1 KiB, as A's k-tile at 512^3),
the next 128 B of every row each round, stores them to shared memory (LDG -> STS, interleaved by ptxas as in the
twin), and the CTA meets at a barrier; thread 0's clock64 around each round. Data from HBM (first touch after a
256 MiB read has emptied the L2) and from L2 (the same launch repeated at once). Median over rounds 1-7 and over the
CTAs; 5 launches per case, the median. The order ptxas gave each build's loads and stores is in the SASS
(`gpusim sass validate/micro/ld_burst.cu -DNLOAD=8 --listing`).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

ROUNDS = 8
PITCH = 1024


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    res = common.cupy_header(cp, "micro-1") | {"results": {"ld_burst": {"rows": []}}}
    code = (HERE / "ld_burst.cu").read_text()
    funcs = {n: cp.RawModule(code=code, options=("-std=c++17", f"-DNLOAD={n}")).get_function("ld_burst")
             for n in (1, 2, 4, 8, 16)}
    for n, f in funcs.items():
        f.max_dynamic_shared_size_bytes = n * 256 * 16
    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    scratch = cp.ones(64 << 20, dtype=cp.float32)
    sink = cp.zeros(256, dtype=cp.float32)
    for ctas in (1, 16, sms):
        for nload in (1, 2, 4, 8, 16):
            region = nload * 32 * PITCH
            src = cp.ones(ctas * region // 4, dtype=cp.float32)
            cycles = cp.zeros(ctas * ROUNDS, dtype=cp.int64)
            per = {"hbm": [], "l2": []}
            for _ in range(5):
                cp.sum(scratch)
                cp.cuda.runtime.deviceSynchronize()
                for where in ("hbm", "l2"):  # the second launch finds the tiles in L2
                    funcs[nload]((ctas,), (256,), (src, np.int64(region), np.int64(PITCH), np.int32(ROUNDS), sink,
                                                   cycles), shared_mem=nload * 256 * 16)
                    cp.cuda.runtime.deviceSynchronize()
                    c = cycles.get().reshape(ctas, ROUNDS)[:, 1:]
                    per[where].append(float(np.median(c)))
            for where, v in per.items():
                row = {"ctas": ctas, "loads_per_thread": nload, "bytes_per_cta": nload * 256 * 16, "from": where,
                       "cycles_per_round": statistics.median(v), "launches": v}
                res["results"]["ld_burst"]["rows"].append(row)
                common.log(f"{ctas:3d} CTAs, {nload:2d} loads/thread ({nload * 4:2d} KiB/CTA) from {where}: "
                           f"{row['cycles_per_round']:.0f} cycles per round")
            del src
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
