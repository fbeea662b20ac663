"""What a TMA kernel pays to start (issue "the SM side": start-up costs, each measured).

    python3 validate/micro/run_tma_start.py --out validate/measurements/h100/tmastart-2026-11-24.json

validate/micro/tma_start.cu: an empty kernel; one that sets up an mbarrier; and TMA kernels that set it up and
issue 1 or 8 TMA 2D loads (64 x 64 bf16 boxes, 128B swizzle, from a 64 MiB tensor: first touches come from HBM),
one after another, with and without prefetching the tensor map first, the map passed by value (as the twins) or
from global memory (-DTMAP_GLOBAL). Grids of 1, 132 and 528 CTAs (one CTA per SM
at a time: 120 KiB of dynamic shared memory). CUDA-event time per launch (median of 30 back-to-back launches after
3 warm-ups) and, inside, clock64 from CTA entry to the set-up's end and to each load's landing (medians over CTAs).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import common  # noqa: E402

REC = 11
SMEM = 120 * 1024
GRIDS = (1, 132, 528)
PLAN = [("ts_empty", 0, 0), ("ts_mbar", 0, 0), ("ts_tma", 0, 0), ("ts_tma", 0, 1), ("ts_tma", 1, 0), ("ts_tma", 1, 1),
        ("ts_tma", 8, 0), ("ts_tma", 8, 1)]
MAPS = ("param", "global")  # the tensor map by value (__grid_constant__, as the twins) or in global memory


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--dry", action="store_true", help="print the plan only")
    a = ap.parse_args()
    if a.dry:
        for g in GRIDS:
            for p in PLAN:
                for m in MAPS if p[0] == "ts_tma" else MAPS[:1]:
                    print(g, *p, m)
        return 0
    import cupy as cp
    import numpy as np
    import tma

    res = common.cupy_header(cp, "micro-1") | {"results": {"rows": []}}
    src = (HERE / "tma_start.cu").read_text()
    inc = f"-I{HERE.parent / 'kernels'}"
    mods = {"param": cp.RawModule(code=src, options=("-std=c++17", "-arch=sm_90a", inc)),
            "global": cp.RawModule(code=src, options=("-std=c++17", "-arch=sm_90a", inc, "-DTMAP_GLOBAL"))}
    tensor = cp.zeros((32768, 1024), dtype=cp.uint16)  # 64 MiB of bf16
    tmap = tma.encode_2d(int(tensor.data.ptr), rows=32768, cols=1024, elem_bytes=2, box_rows=64, box_cols=64,
                         swizzle=128, dtype="bfloat16")
    margs = {"param": tma.kernel_arg(tmap), "global": tma.kernel_arg(tmap, cp)}
    for grid, name, loads, prefetch, where in [(g, *p, m) for g in GRIDS for p in PLAN for m in MAPS]:
        if name != "ts_tma" and where != "param":
            continue
        rec = cp.zeros(grid * REC, dtype=cp.int64)
        marg = margs[where]
        f = mods[where].get_function(name)
        f.max_dynamic_shared_size_bytes = SMEM
        args = (rec,) if name != "ts_tma" else (marg, np.int32(loads), np.int32(prefetch), rec)

        def launch(f=f, args=args, grid=grid):
            f((grid,), (128,), args, shared_mem=SMEM)

        times = common.event_times_ns(cp, launch, n=30)
        r = rec.get().reshape(-1, REC)
        row = {"kernel": name, "grid": grid, "loads": loads, "prefetch_map": prefetch, "map": where,
               "time_ns_median": float(np.median(times)), "time_ns_min": float(np.min(times))}
        if name != "ts_empty":
            row["setup_cycles"] = float(np.median(r[:, 1] - r[:, 0]))
        if loads:
            landed = r[:, 2:2 + loads] - r[:, 1:1 + loads]
            row["load_cycles"] = [float(x) for x in np.median(landed, axis=0)]
        res["results"]["rows"].append(row)
        us = row["time_ns_median"] / 1e3
        common.log(f"grid {grid:4d} {name:9s} map {where:6s} loads {loads} prefetch {prefetch}: {us:7.2f} us, "
                   f"set-up {row.get('setup_cycles')}, loads {row.get('load_cycles')}")
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
