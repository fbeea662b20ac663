"""Each warp's clock through the levels of a shared-memory tree reduction (reduce_levels.cu): which warps the H100
serves first after a level's barrier, how long a level takes, and where the warps with every lane off sit.

    python3 validate/micro/run_reduce_levels.py --out validate/measurements/h100/reducelevels-2026-12-07.json

The two Harris reductions of validate/kernels/ (interleaved and sequential addressing, 256 threads, 8 levels), built
by CuPy/NVRTC with lane 0 of each warp reading clock() after its level's store and after the level's barrier. Two
grids: 132 CTAs (one an SM: a level alone on its SM) and 16,384 (4M floats: the validation's shape, 8 CTAs an SM).
Per level: the level's span (the last warp's release from its barrier minus the last warp's release from the one
before), and per warp the cycles from the level's first release to its store, as medians over the CTAs. The raw clocks
of the 132-CTA grid and of SM 0's CTAs of the large grid are kept.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

LEVELS = 8
WARPS = 8
CASES = [("reduce_interleaved_clk", 132), ("reduce_interleaved_clk", 16384), ("reduce_sequential_clk", 132),
         ("reduce_sequential_clk", 16384)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    mod = cp.RawModule(code=(HERE / "reduce_levels.cu").read_text(), options=("-std=c++17",))
    res = common.cupy_header(cp, "micro-1") | {"method": __doc__.strip().splitlines()[3:], "results": []}
    per = 2 * LEVELS + 1
    for name, ctas in CASES:
        f = mod.get_function(name)
        x = cp.ones(ctas * 256, dtype=cp.float32)
        out = cp.zeros(ctas, dtype=cp.float32)
        clk = cp.zeros(ctas * WARPS * per, dtype=cp.uint32)
        smid = cp.zeros(ctas, dtype=cp.uint32)
        ms = []
        for _ in range(3):
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            e0.record()
            f((ctas,), (256,), (x, out, clk, smid))
            e1.record()
            e1.synchronize()
            ms.append(cp.cuda.get_elapsed_time(e0, e1))
        c = clk.get().astype(np.int64).reshape(ctas, WARPS, per)
        sm = smid.get().astype(np.int64)
        base = c[:, :, 0].min(axis=1)[:, None, None]
        rel = (c - base) % (1 << 32)  # cycles since the CTA's first warp left the first barrier
        pre = rel[:, :, 1::2]  # [cta, warp, level]: after the level's store
        post = rel[:, :, 2::2]  # after the level's barrier
        start = np.concatenate([rel[:, :, :1], post[:, :, :-1]], axis=2)  # each warp's release into the level
        first_release = start.min(axis=1)  # [cta, level]
        last_release = start.max(axis=1)
        span = post.max(axis=1) - last_release  # [cta, level]
        to_store = pre - first_release[:, None, :]  # [cta, warp, level]
        order = np.argsort(np.argsort(pre, axis=1, kind="stable"), axis=1, kind="stable")  # rank of each warp
        row = {"kernel": name, "ctas": ctas, "event_us": [round(v * 1000, 2) for v in ms],
               "level_span_median": np.median(span, axis=0).tolist(),
               "level_span_p90": np.percentile(span, 90, axis=0).tolist(),
               "release_skew_median": np.median(last_release - first_release, axis=0).tolist(),
               "warp_to_store_median": np.median(to_store, axis=0).T.tolist(),  # [level][warp]
               "warp_rank_mean": order.mean(axis=0).T.tolist(),  # [level][warp]
               "cta_cycles_median": float(np.median(post[:, :, -1].max(axis=1)))}
        keep = np.arange(ctas) if ctas <= 132 else np.nonzero(sm == 0)[0]
        row["raw"] = {"cta": keep.tolist(), "sm": sm[keep].tolist(), "clk": rel[keep].tolist()}
        res["results"].append(row)
        common.log(f"{name} {ctas}: events {row['event_us']} us, CTA {row['cta_cycles_median']:.0f} cycles; "
                   f"level spans {[round(v) for v in row['level_span_median']]}")
        for lv in range(LEVELS):
            common.log(f"  level {lv}: to store {[round(v) for v in row['warp_to_store_median'][lv]]}, "
                       f"rank {[round(v, 1) for v in row['warp_rank_mean'][lv]]}")
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
