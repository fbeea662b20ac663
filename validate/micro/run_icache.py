"""Instruction fetch between 128 and 256 KiB of looped code, at 1, 2, 4 and 8 warps per sub-partition (the
instruction-cache model's step and its sharing between warps; `validate/micro/run_clocks.py` measured the steps).

    python3 validate/micro/run_icache.py --out validate/measurements/h100/icache-2026-11-24.json

validate/micro/icache.cu compiled with BODY = 8192 ... 16384 IMADs (16 B each: 128 ... 256 KiB); one CTA per SM of
128, 256, 512 or 1024 threads runs the body in a loop; clock64 per CTA, median over the SMs; cycles per instruction
per sub-partition.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

BODIES = (4096, 8192, 8704, 9216, 10240, 12288, 16384)


def measure(cp, np, sms: int, bodies, threads_list) -> list[dict]:
    """Cycles per warp instruction per SMSP for each body (IMADs) and CTA size (one CTA per SM)."""
    src = (HERE / "icache.cu").read_text()
    rows = []
    for body in bodies:
        k = cp.RawModule(code=src, options=("-std=c++17", "-arch=sm_90a", f"-DBODY={body}")).get_function("ic_body")
        usink = cp.zeros(4, dtype=cp.uint32)
        for threads in threads_list:
            iters = max((1 << 21) // body, 4)
            rec = cp.zeros(sms * 2, dtype=cp.int64)
            k((sms,), (threads,), (np.int32(2), np.uint32(7), usink, rec))  # warm-up
            k((sms,), (threads,), (np.int32(iters), np.uint32(7), usink, rec))
            cp.cuda.runtime.deviceSynchronize()
            r = rec.get().reshape(-1, 2)
            cyc = float(np.median(r[:, 1] - r[:, 0]))
            w = threads // 32 // 4
            cpi = cyc / (iters * body * w)
            rows.append({"body_instructions": body, "body_bytes": body * 16, "warps_per_smsp": w,
                         "cycles_per_instruction": cpi})
            common.log(f"icache body {body} ({body * 16 >> 10} KiB) warps/smsp {w}: {cpi:.3f}")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    res = common.cupy_header(cp, "micro-1") | {"results": {}}
    rows = measure(cp, np, res["gpu"]["sm_count"], BODIES, (128, 256, 512, 1024))
    res["results"]["icache"] = {"rows": rows, "unit": "cycles per warp instruction per SMSP (IMAD: 2.0 when fed)"}
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
