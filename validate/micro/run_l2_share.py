"""Whether CTAs that read the same data at the same time share its fetch from DRAM (issue "memory system at chip
scale": the DRAM reads of the first FP32 rungs, twice what the L2 model predicts).

    python3 validate/micro/run_l2_share.py --out validate/measurements/h100/l2share-2026-11-25.json

validate/micro/l2_share.cu: a grid of two 1024-thread CTAs per SM; each CTA reads a panel of 32 rows x 4096
floats (512 KiB) once, one row per warp; P CTAs read each panel (1, 2, 4, 8), launched next to each other or n/P
apart; one sector per request (all lanes one word) or a whole line. One launch per case under ncu
(--clock-control none, caches flushed before each): dram__bytes_read.sum over the distinct bytes read. Then, outside
ncu, one launch per case with %globaltimer stamps: when warp 0 of each CTA begins each quarter of its row, and its SM
(results.progress).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

K = 4096
CASES = [(mode, p, far) for mode in (0, 1) for p in (1, 2, 4, 8) for far in (0, 1) if not (p == 1 and far)]


def child() -> None:
    import cupy as cp
    import numpy as np

    k = cp.RawModule(code=(HERE / "l2_share.cu").read_text(), options=("-std=c++17",)).get_function("l2_share")
    n = 2 * cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    buf = cp.ones(n * 32 * K, dtype=cp.float32)
    sink = cp.zeros(1024, dtype=cp.float32)
    for mode, p, far in CASES:
        k((n,), (1024,), (buf, np.int32(K), np.int32(p), np.int32(far), np.int32(mode), sink, np.uint64(0)))
        cp.cuda.runtime.deviceSynchronize()


def progress(cp, np) -> list[dict]:
    """Outside ncu: per case, when warp 0 of each CTA began each quarter of its row and ended (ns from the first
    CTA's start), and its SM."""
    k = cp.RawModule(code=(HERE / "l2_share.cu").read_text(), options=("-std=c++17",)).get_function("l2_share")
    n = 2 * cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    buf = cp.ones(n * 32 * K, dtype=cp.float32)
    scratch = cp.ones(64 << 20, dtype=cp.float32)
    sink = cp.zeros(1024, dtype=cp.float32)
    stamps = cp.zeros(n * 6, dtype=cp.uint64)
    out = []
    for mode, p, far in CASES:
        cp.sum(scratch)
        k((n,), (1024,), (buf, np.int32(K), np.int32(p), np.int32(far), np.int32(mode), sink, stamps))
        cp.cuda.runtime.deviceSynchronize()
        st = stamps.get().astype(np.int64).reshape(n, 6)
        t = st[:, :5] - st[:, 0].min()
        out.append({"mode": ["sector", "line"][mode], "readers": p, "far": far, "quarters_ns": t.tolist(),
                    "sm": st[:, 5].tolist()})
        first, rest = (np.median(x, axis=0).astype(int).tolist() for x in (t[: n // 2], t[n // 2:]))
        common.log(f"{out[-1]['mode']:6s} P={p} far={far}: median ns at quarters, first {n // 2} CTAs {first}, "
                   f"the others {rest}")
    return out


def main() -> int:
    a = common.out_or_child(child)
    if a is None:
        return 0
    import cupy as cp

    res = common.cupy_header(cp, "micro-1") | {"results": {}}
    n = 2 * cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    ncu = common.find_ncu()
    metrics = ["dram__bytes_read.sum", "lts__t_sector_hit_rate.pct", "lts__t_sectors_op_read.sum",
               "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum", "gpu__time_duration.sum"]
    rows, _, _, dropped, log = common.run_ncu(ncu, metrics, "l2_share", [*common.python_cmd(), __file__, "--child"],
                                              Path(a.out).parent / "l2share", timeout=500)
    out = []
    for (mode, p, far), row in zip(CASES, rows, strict=False):
        vals = common.metric_values(row, metrics)
        distinct = (n // p) * 32 * K * 4
        out.append({"mode": ["sector", "line"][mode], "readers": p, "far": far, "ctas": n, "distinct_bytes": distinct,
                    **vals, "dram_over_distinct": (vals.get("dram__bytes_read.sum") or 0) / distinct})
        common.log(f"{out[-1]['mode']:6s} P={p} far={far}: DRAM {out[-1]['dram_over_distinct']:.3f} x the distinct "
                   f"bytes, L2 hit {vals.get('lts__t_sector_hit_rate.pct')}")
    res["results"]["progress"] = progress(cp, __import__("numpy"))
    res["results"]["l2_share"] = {"rows": out, "ncu_missing": dropped,
                                  "what": "P CTAs read each 512 KiB panel at the same time"}
    common.write_json(Path(a.out), res)
    (Path(a.out).parent / "l2share-ncu-log.txt").write_text(log[-20000:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
