"""Where the irregular twins' time goes: block_scan.cu's parts (validate/micro/scan_levels.cu: the up-sweep, the
down-sweep, the barriers, the padding) and stencil5.cu's neighbour loads at pitches 8192, 8224 and 4096
(validate/micro/stencil_rows.cu), each variant timed beside the twin itself in the same run.

    python3 validate/micro/run_irregular_parts.py --out validate/measurements/h100/parts-2026-12-07.json
    python3 validate/micro/run_irregular_parts.py --launch scan 1,1,1,0   (one launch after a warm-up, for ncu)

The front-end predicts every variant from the same sources (`gpusim run validate/micro/scan_levels.cu -D UP=0 ...`):
a part whose measured time the model misses is where a twin's error lies. CUDA-event time, median of 20 launches.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

SCAN_N = 1 << 26
SCAN_CASES = [(1, 1, 1, 0), (1, 1, 1, 1), (0, 0, 1, 0), (1, 0, 1, 0), (0, 1, 1, 0), (1, 0, 1, 1), (0, 1, 1, 1),
              (1, 1, 0, 0), (1, 1, 0, 1)]  # (UP, DOWN, SYNC, PAD)
STENCIL_NS = (8192, 8224, 4096)
STENCIL_CASES = [(1, 1), (0, 0), (1, 0), (0, 1)]  # (H, V)
KERNELS = HERE.parent / "kernels"


def _scan(cp, flags):
    up, down, sync, pad = flags
    code = (HERE / "scan_levels.cu").read_text()
    return cp.RawModule(code=code, options=(f"-DUP={up}", f"-DDOWN={down}", f"-DSYNC={sync}",
                                            f"-DPAD={pad}")).get_function("scan_levels")


def _stencil(cp, flags):
    h, v = flags
    code = (HERE / "stencil_rows.cu").read_text()
    return cp.RawModule(code=code, options=(f"-DH={h}", f"-DV={v}")).get_function("stencil_rows")


def _launch_one(which: str, flags: tuple[int, ...], n: int | None) -> None:
    import cupy as cp
    import numpy as np

    if which == "scan":
        f = _scan(cp, flags)
        x, y = cp.ones(SCAN_N, dtype=cp.float32), cp.zeros(SCAN_N, dtype=cp.float32)
        args = ((SCAN_N // 1024,), (512,), (x, y))
    else:
        n = n or 8192
        f = _stencil(cp, flags)
        x, y = cp.ones(n * n, dtype=cp.float32), cp.zeros(n * n, dtype=cp.float32)
        g = (n + 31) // 32
        args = ((g, g), (32, 8), (x, y, np.int32(n)))
    for _ in range(2):
        f(*args)
    cp.cuda.Device().synchronize()


def main() -> int:
    if len(sys.argv) >= 4 and sys.argv[1] == "--launch":
        n = int(sys.argv[4]) if len(sys.argv) > 4 else None
        _launch_one(sys.argv[2], tuple(int(v) for v in sys.argv[3].split(",")), n)
        return 0
    a, cp, np, res, sms = common.micro_start(__doc__)
    rows = []

    def timed(kind, label, f, args):
        ns = statistics.median(common.event_times_ns(cp, lambda: f(*args), n=20))
        common.log(f"{kind} {label}: {ns / 1e3:.1f} us")
        return ns

    x = cp.random.uniform(0, 1, SCAN_N, dtype=cp.float32)
    y = cp.zeros(SCAN_N, dtype=cp.float32)
    twin = cp.RawModule(code=(KERNELS / "block_scan.cu").read_text()).get_function("block_scan")
    grid = (SCAN_N // 1024,)
    rows.append({"kernel": "block_scan.cu", "n": SCAN_N,
                 "time_ns": timed("scan", "block_scan.cu", twin, (grid, (512,), (x, y)))})
    for flags in SCAN_CASES:
        f = _scan(cp, flags)
        label = "UP={} DOWN={} SYNC={} PAD={}".format(*flags)
        defines = dict(zip(("UP", "DOWN", "SYNC", "PAD"), flags, strict=True))
        rows.append({"kernel": "scan_levels.cu", "n": SCAN_N, "defines": defines,
                     "time_ns": timed("scan", label, f, (grid, (512,), (x, y)))})
    del x, y
    for n in STENCIL_NS:
        x = cp.random.uniform(0, 1, n * n, dtype=cp.float32)
        y = cp.zeros(n * n, dtype=cp.float32)
        g = (n + 31) // 32
        twin = cp.RawModule(code=(KERNELS / "stencil5.cu").read_text()).get_function("stencil5")
        rows.append({"kernel": "stencil5.cu", "n": n,
                     "time_ns": timed("stencil", f"stencil5.cu n={n}", twin, ((g, g), (32, 8), (x, y, np.int32(n))))})
        for flags in STENCIL_CASES:
            f = _stencil(cp, flags)
            rows.append({"kernel": "stencil_rows.cu", "n": n, "defines": dict(zip(("H", "V"), flags, strict=True)),
                         "time_ns": timed("stencil", "n={} H={} V={}".format(n, *flags), f,
                                          ((g, g), (32, 8), (x, y, np.int32(n))))})
        del x, y
    res["results"]["irregular_parts"] = {"rows": rows, "how": __doc__}
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
