"""The L2 between two reads of a row by its own CTA (l2_rowreuse.cu): the row kernels of validate/fresh's batch
"passes" read each row two or three times, and the L2 kept less of it between the passes than the model's reuse ramp
(validate/micro/run_l2_reuse.py: one buffer swept by every SM) says.

    python3 validate/micro/run_l2_rowreuse.py --out validate/measurements/h100/l2rowreuse-2026-12-08.json

Rows of R KiB (8-128), one CTA of 256 threads each, 2 / 4 / 8 CTAs an SM (dynamic shared memory sets it), four waves
of rows; each CTA sums its row, then sums it again. One launch per case under ncu (--clock-control none; ncu clears
the caches before it): dram__bytes_read.sum over the bytes of one read of every row, less one, is the share of the
second reads that missed. The footprint between a line's two reads is about the resident CTAs' rows (132 x CTAs an
SM x R).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

CASES = [(kib, per_sm) for per_sm in (2, 4, 8) for kib in (8, 16, 32, 64)] + [(128, 2), (128, 4)]
SMEM_PER_SM = 228 * 1024  # the H100's shared memory an SM (228 KiB); each CTA also takes 1 KiB the system reserves
WAVES = 4


def launch_of(cp, np, sms, kib, per_sm):
    rows = sms * per_sm * WAVES
    row4 = kib * 1024 // 16
    smem = SMEM_PER_SM // per_sm - 1024 - 1024  # a little under the share, so that exactly per_sm fit
    return rows, row4, smem


def child() -> None:
    import cupy as cp
    import numpy as np

    f = cp.RawModule(code=(HERE / "l2_rowreuse.cu").read_text(), options=("-std=c++17",)).get_function("row_twice")
    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    for kib, per_sm in CASES:
        rows, row4, smem = launch_of(cp, np, sms, kib, per_sm)
        f.max_dynamic_shared_size_bytes = smem
        x = cp.ones(rows * row4 * 4, dtype=cp.float32)
        out = cp.zeros(rows, dtype=cp.float32)
        f((rows,), (256,), (x, np.int32(row4), out), shared_mem=smem)
        cp.cuda.runtime.deviceSynchronize()
        del x


def main() -> int:
    a = common.out_or_child(child)
    if a is None:
        return 0
    import cupy as cp
    import numpy as np

    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    res = common.cupy_header(cp, "micro-1") | {"method": __doc__.strip().splitlines()[4:], "results": []}
    ncu = common.find_ncu()
    metrics = ["dram__bytes_read.sum", "lts__t_sector_hit_rate.pct", "lts__t_sectors_op_read.sum",
               "gpu__time_duration.sum", "sm__warps_active.avg.pct_of_peak_sustained_active",
               "launch__occupancy_limit_shared_mem"]
    rows, _, _, dropped, log = common.run_ncu(ncu, metrics, "row_twice", [*common.python_cmd(), __file__, "--child"],
                                              Path(a.out).parent / "l2rowreuse", timeout=500)
    for (kib, per_sm), row in zip(CASES, rows, strict=False):
        vals = common.metric_values(row, metrics)
        n, row4, smem = launch_of(cp, np, sms, kib, per_sm)
        once = n * row4 * 16
        miss = (vals.get("dram__bytes_read.sum") or 0) / once - 1
        wave = sms * per_sm * kib * 1024
        res["results"].append({"row_kib": kib, "ctas_per_sm": per_sm, "rows": n, "smem_per_cta": smem,
                               "resident_rows_bytes": wave, "bytes_one_read": once, **vals,
                               "second_read_miss_share": miss})
        common.log(f"rows of {kib} KiB, {per_sm} CTAs an SM (resident rows {wave / 2**20:.1f} MiB): second read "
                   f"misses {miss:.3f}, L2 hit {vals.get('lts__t_sector_hit_rate.pct')}, occupancy limit (shared) "
                   f"{vals.get('launch__occupancy_limit_shared_mem')}")
    res["ncu_missing"] = dropped
    common.write_json(Path(a.out), res)
    (Path(a.out).parent / "l2rowreuse-ncu-log.txt").write_text(log[-20000:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
