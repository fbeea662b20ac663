"""Global reductions onto a few words from a whole grid, on the H100: what the histograms' last loop costs.

    python3 validate/micro/run_red_contention.py --out validate/measurements/h100/redcontention-2026-11-28.json

validate/micro/red_contention.cu. ``red_words``: grid 1056 x 256 (8 CTAs per SM, as histogram.cu), thread t of every
CTA adds 1 to word (t % words) * stride, ``rounds`` times (0: the launch alone); words 1 .. 65536, stride 1 (words
packed in lines of 32) or 32 (a line each). ``hist_final`` / ``hist_nofinal``: histogram.cu's kernel with and
without its last loop (each CTA's 256 bins added to the global histogram), on the twin's 2^23 and 2^26 inputs
(uniform bins, one bin). CUDA events around single launches (the first a warm-up), median of 7; totals checked.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

GRID, BLOCK = 1056, 256
WORDS = (1, 32, 256, 2048, 65536)
STRIDES = (1, 32)
ROUNDS = (0, 1, 4, 16)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    mod = cp.RawModule(code=(HERE / "red_contention.cu").read_text(), options=("-std=c++17",))
    red = mod.get_function("red_words")
    data = common.cupy_header(cp, "redcontention-1")
    data["how"] = __doc__
    rows = []
    buf = cp.zeros(65536 * 32, dtype=cp.uint32)
    for stride in STRIDES:
        for words in WORDS:
            if words * stride > buf.size:
                continue
            for rounds in ROUNDS:
                def launch(words=words, stride=stride, rounds=rounds):
                    red((GRID,), (BLOCK,), (buf, np.int32(words), np.int32(stride), np.int32(rounds)))
                buf.fill(0)
                times = common.event_times_ns(cp, launch, n=7)
                total = int(cp.asnumpy(buf).astype(np.int64).sum())
                ok = total == 8 * GRID * BLOCK * rounds  # the warm-up and 7 timed launches
                rows.append({"kernel": "red_words", "words": words, "stride_words": stride, "rounds": rounds,
                             "reds": GRID * BLOCK * rounds, "time_ns": {"median": statistics.median(times),
                                                                         "min": min(times), "max": max(times)},
                             "total_ok": ok})
                common.log(f"red_words words={words} stride={stride} rounds={rounds}: "
                           f"{statistics.median(times):.0f} ns ok={ok}")
    hist = []
    for n in (1 << 23, 1 << 26):
        for bins in ("uniform", "one"):
            rng = np.random.default_rng(7)
            x = rng.integers(0, 256, n, dtype=np.int32) if bins == "uniform" else np.full(n, 7, np.int32)
            xin = cp.asarray(x)
            h = cp.zeros(256, dtype=cp.uint32)
            ref = np.bincount(x, minlength=256).astype(np.int64)
            for name in ("hist_final", "hist_nofinal"):
                f = mod.get_function(name)

                def launch(f=f, xin=xin, h=h, n=n):
                    f((GRID,), (BLOCK,), (xin, h, np.int32(n)))
                h.fill(0)
                times = common.event_times_ns(cp, launch, n=7)
                got = cp.asnumpy(h).astype(np.int64)
                ok = bool((got == 8 * ref).all()) if name == "hist_final" else bool((got == 0).all())
                hist.append({"kernel": name, "n": n, "bins": bins, "time_ns": {
                    "median": statistics.median(times), "min": min(times), "max": max(times)}, "total_ok": ok})
                common.log(f"{name} n={n} {bins}: {statistics.median(times):.0f} ns ok={ok}")
    data["red_words"] = rows
    data["histogram"] = hist
    Path(a.out).write_text(json.dumps(data, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
