"""Do the CTAs resident on one SM run in lockstep, or drift apart? (the conflicted-shared family: the model's CTAs of
a reduction fall into step, so every CTA's global loads wait at once and then every CTA's tree steps queue for the
L1TEX pipe at once: validate/DEVIATIONS.md "2026-12-07 g").

    python3 validate/micro/run_cta_phase.py --out validate/measurements/h100/ctaphase-2026-12-07.json

Each twin is built as validate/run_membound.py builds it (CuPy/NVRTC) with its kernel wrapped by
validate/micro/run_cta_times.py's instrument(): thread 0 reads %globaltimer (32 ns steps) and %smid before the body
and after a __syncthreads() that follows it. Two launches (the first a warm-up); the second's per-CTA start, end and
SM are kept, with the CUDA-event time. Per SM, the CTAs resident together at each start show whether they move in
step (starts bunched within a small part of a CTA's lifetime) or spread over it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "validate"))

import common  # noqa: E402

CASES = [("mem_reduce_sequential", 4 << 20), ("mem_reduce_interleaved", 4 << 20), ("mem_transpose_shared", 2048),
         ("mem_transpose_padded", 2048), ("mem_copy", 4 << 20)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np
    import run_cta_times as ct
    import run_membound as mb

    res = common.cupy_header(cp, "ctaphase-1") | {"method": __doc__.strip().splitlines()[3:], "results": []}
    for name, n in CASES:
        try:
            src = ct.instrument((mb.KDIR / f"{name}.cu").read_text(), name)
            mod = cp.RawModule(code=src, options=("-std=c++17",))
            kern = mod.get_function(name)
            launch, _ = mb.launcher(cp, np, kern, name, n, {})
            ms = []
            for _ in range(2):
                e0, e1 = cp.cuda.Event(), cp.cuda.Event()
                e0.record()
                launch()
                e1.record()
                e1.synchronize()
                ms.append(cp.cuda.get_elapsed_time(e0, e1))
            get = lambda sym, dt: cp.ndarray((ct.MAX_CTAS,), dt, mod.get_global(sym)).get().astype(np.int64)  # noqa: E731
            t0, t1, sm = get("gpusim_cta_t0", cp.uint64), get("gpusim_cta_t1", cp.uint64), get("gpusim_cta_sm", cp.uint32)
            used = t0 > 0
            ctas = int(used.sum())
            t0, t1, sm = t0[used], t1[used], sm[used]
            base = int(t0.min())
            dur = (t1 - t0)
            row = {"kernel": name, "n": n, "ctas": ctas, "event_us": [round(x * 1000, 1) for x in ms],
                   "start_ns": (t0 - base).tolist(), "end_ns": (t1 - base).tolist(), "sm": sm.tolist()}
            res["results"].append(row)
            common.log(f"{name} {n}: {ctas} CTAs, events {row['event_us']} us, CTA {np.median(dur):.0f} ns median "
                       f"({dur.min()}..{dur.max()})")
        except Exception as e:  # one case failing keeps the others
            common.log(f"{name} {n}: {type(e).__name__}: {e}")
            res["results"].append({"kernel": name, "n": n, "error": f"{type(e).__name__}: {e}"[:500]})
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(res, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
