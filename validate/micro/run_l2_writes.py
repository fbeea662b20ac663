"""How the L2 counts stores (issue "memory system at chip scale": the store path; ``[l2]`` store lookups).

    python3 validate/micro/run_l2_writes.py --out validate/measurements/h100/l2writes-2026-11-24.json

validate/micro/l2_writes.cu stores one float per thread at a stride of 1, 2, 4, 8 or 32 floats (4 to 32 sectors per
warp request) into a buffer of 8 MiB (fits the L2) or 256 MiB (does not), 2M stores each, and copies 8 MiB and
256 MiB (out[i] = in[i]). One launch per case under ncu (--clock-control none; caches flushed between passes):
lts__t_sectors_op_write.sum and its lookup hits and misses against the sectors stored
(l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum), the L2 hit rate, DRAM bytes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

STRIDES = (1, 2, 4, 8, 32)
BUFFERS_MIB = (8, 256)
STORES = 1 << 21
PLAN = [("l2w_store", mib, s) for mib in BUFFERS_MIB for s in STRIDES] + [("l2w_copy", mib, 1) for mib in BUFFERS_MIB]
METRICS = ["lts__t_sectors_op_write.sum", "lts__t_sectors_op_write_lookup_hit.sum",
           "lts__t_sectors_op_write_lookup_miss.sum", "lts__t_sectors_op_read.sum",
           "lts__t_sectors_op_read_lookup_miss.sum", "lts__t_sector_hit_rate.pct", "dram__bytes_write.sum",
           "dram__bytes_read.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
           "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
           "gpu__time_duration.sum"]


def child() -> None:
    import cupy as cp
    import numpy as np

    mod = cp.RawModule(code=(HERE / "l2_writes.cu").read_text(), options=("-std=c++17",))
    store, copy = mod.get_function("l2w_store"), mod.get_function("l2w_copy")
    bufs = {mib: cp.zeros((mib << 20) // 4, dtype=cp.float32) for mib in BUFFERS_MIB}
    src = {mib: cp.ones((mib << 20) // 4, dtype=cp.float32) for mib in BUFFERS_MIB}
    for kernel, mib, stride in PLAN:
        out = bufs[mib]
        if kernel == "l2w_store":
            store((STORES // 256,), (256,), (out, np.int64(out.size), np.int32(stride)))
        else:
            copy((out.size // 256,), (256,), (src[mib], out, np.int64(out.size)))
        cp.cuda.runtime.deviceSynchronize()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--dry", action="store_true", help="print the plan only")
    a = ap.parse_args()
    if a.dry:
        for p in PLAN:
            print(*p)
        return 0
    if a.child:
        child()
        return 0
    import cupy as cp

    res = common.cupy_header(cp, "micro-1") | {"results": {}}
    ncu = common.find_ncu()
    rows, _, _, dropped, log = common.run_ncu(ncu, METRICS, "l2w_", [*common.python_cmd(), __file__, "--child"],
                                              Path(a.out).parent / "l2writes", timeout=500)
    out = []
    for (kernel, mib, stride), row in zip(PLAN, common.assign_rows(rows, [k for k, _, _ in PLAN]), strict=True):
        vals = common.metric_values(row, METRICS)
        st = vals.get("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum") or 0
        wr = vals.get("lts__t_sectors_op_write.sum") or 0
        out.append({"kernel": kernel, "buffer_mib": mib, "stride_floats": stride, **vals,
                    "write_lookups_per_stored_sector": wr / st if st else None})
        common.log(f"{kernel} {mib:4d} MiB stride {stride:2d}: {out[-1]['write_lookups_per_stored_sector']} lookups "
                   f"per stored sector, L2 hit {vals.get('lts__t_sector_hit_rate.pct')}, "
                   f"DRAM write {vals.get('dram__bytes_write.sum')}")
    res["results"]["l2_writes"] = {"rows": out, "ncu_missing": dropped}
    common.write_json(Path(a.out), res)
    (Path(a.out).parent / "l2writes-ncu-log.txt").write_text(log[-20000:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
