"""The L2's capacity for data read again (issue "memory system at chip scale", item 1: partitions and slices).

    python3 validate/micro/run_l2_reuse.py --out validate/measurements/h100/l2reuse-2026-11-24.json

validate/micro/l2_reuse.cu reads a buffer of W MiB 8 times from every SM (4 CTAs of 512 threads per SM, 16-B
ld.global.cg) with the same line-to-SM mapping each pass, or with the mapping rotated each pass (every line read by
SMs of both partitions). One launch per case under ncu (--clock-control none): dram__bytes_read.sum and the L2 hit
rate. The L2 was cleared before each launch by reading a 256 MiB scratch buffer.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

SIZES_MIB = (8, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 128)
PASSES = 8


def child() -> None:
    import cupy as cp
    import numpy as np

    k = cp.RawModule(code=(HERE / "l2_reuse.cu").read_text(), options=("-std=c++17",)).get_function("l2_reuse")
    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    scratch = cp.ones(64 << 20, dtype=cp.float32)
    sink = cp.zeros(512, dtype=cp.float32)
    for rotate in (0, 1):
        for mib in SIZES_MIB:
            buf = cp.ones((mib << 20) // 4, dtype=cp.float32)
            cp.sum(scratch)
            cp.cuda.runtime.deviceSynchronize()
            k((sms * 4,), (512,), (buf, np.int64(buf.size // 4), np.int32(PASSES), np.int32(rotate), sink))
            cp.cuda.runtime.deviceSynchronize()
            del buf


def main() -> int:
    a = common.out_or_child(child)
    if a is None:
        return 0
    import cupy as cp

    res = common.cupy_header(cp, "micro-1") | {"results": {}}
    ncu = common.find_ncu()
    metrics = ["dram__bytes_read.sum", "lts__t_sector_hit_rate.pct", "lts__t_sectors_op_read.sum",
               "gpu__time_duration.sum"]
    rows, _, _, dropped, log = common.run_ncu(ncu, metrics, "l2_reuse", [*common.python_cmd(), __file__, "--child"],
                                              Path(a.out).parent / "l2reuse", timeout=500)
    out = []
    plan = [(r, m) for r in (0, 1) for m in SIZES_MIB]
    for (rotate, mib), row in zip(plan, rows, strict=False):
        vals = common.metric_values(row, metrics)
        read = (mib << 20) * PASSES
        out.append({"rotate": rotate, "buffer_mib": mib, "passes": PASSES, "bytes_requested": read, **vals,
                    "dram_share": (vals.get("dram__bytes_read.sum") or 0) / read})
        common.log(f"rotate {rotate} {mib:4d} MiB: DRAM {out[-1]['dram_share']:.3f} of the requested bytes, "
                   f"L2 hit {vals.get('lts__t_sector_hit_rate.pct')}")
    res["results"]["l2_reuse"] = {"rows": out, "ncu_missing": dropped, "what": "8 passes over a W MiB buffer"}
    common.write_json(Path(a.out), res)
    (Path(a.out).parent / "l2reuse-ncu-log.txt").write_text(log[-20000:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
