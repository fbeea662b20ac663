"""Global reductions onto a few lines from a whole grid: what the L2 serializes (by line, by word, by slice).

    python3 validate/micro/run_red_lines.py --out validate/measurements/h200/redlines-2026-11-28.json

validate/micro/red_lines.cu: grid 1056 x 256 (8 CTAs per SM), warp g of the grid reduces onto line g % `lines`, its
lane l onto word l % `wpl` of that line (32 / wpl lanes share a word); `spread`: lane l onto line (32 g + l) % lines,
one word each. Lines `gap` bytes apart (128: adjacent lines; 64 KiB + 128: lines far apart). Each thread adds 1
`rounds` times; a case's cost is the difference between 16 and 4 rounds over 12 (launch and ramp cancel), per round
of 270,336 reductions (8,448 warp instructions). CUDA events around single launches (the first a warm-up), median
of 7; totals checked. With ncu (--clock-control none), one launch of a few cases: the L2's reduction requests and
sectors against the warp instructions. Also the cases of redcontention-2026-11-28.json (red_contention.cu's
red_words) that these repeat, to compare the GPU this runs on with the H100 those were measured on.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

GRID, BLOCK = 1056, 256
ROUNDS = (4, 16)
FAR = 16384 + 32  # words: 64 KiB + 128 B between lines
CASES = (  # (lines, gap words, words per line, spread)
    # the gap between 8 lines a warp each, 32 words a warp
    *[(8, g, 32, 0) for g in (32, 128, 1024, 16384, FAR, 262144)],
    # how many lines, far apart
    *[(n, FAR, 32, 0) for n in (1, 2, 4, 16, 64, 256)],
    # how many distinct words in a warp's line (32 / wpl lanes per word), one line and 64 far apart
    *[(1, FAR, k, 0) for k in (1, 2, 4, 8, 16)],
    *[(64, FAR, k, 0) for k in (1, 2, 4, 8, 16)],
    # every lane its own line, one word each
    *[(n, g, 1, 1) for n in (32, 256, 2048) for g in (32, FAR)],
)
NCU_CASES = ((8, 32, 32, 0), (1, FAR, 32, 0), (1, FAR, 1, 0), (256, 32, 1, 1))
NCU_METRICS = ("gpu__time_duration.sum", "smsp__inst_executed_op_global_red.sum",
               "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
               "lts__t_requests_op_red.sum", "lts__t_sectors_op_red.sum", "lts__t_requests_srcunit_tex_op_red.sum",
               "lts__t_sectors_srcunit_tex_op_red.sum", "lts__cycles_elapsed.avg.per_second",
               "sm__cycles_elapsed.avg.per_second")


def _module(cp):
    return cp.RawModule(code=(HERE / "red_lines.cu").read_text(), options=("-std=c++17",))


def _launcher(cp, np, mod, buf, case, rounds):
    lines, gap, wpl, spread = case
    f = mod.get_function("red_lines")

    def launch():
        f((GRID,), (BLOCK,), (buf, np.int32(lines), np.int64(gap), np.int32(wpl), np.int32(spread),
                              np.int32(rounds)))
    return launch


def _buffer(cp):
    most = max(c[0] * c[1] for c in CASES) + 32
    return cp.zeros(most, dtype=cp.uint32)


def child(case_index: int) -> None:
    import cupy as cp
    import numpy as np

    mod = _module(cp)
    buf = _buffer(cp)
    _launcher(cp, np, mod, buf, NCU_CASES[case_index], 4)()
    cp.cuda.runtime.deviceSynchronize()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--child", type=int)
    ap.add_argument("--skip-ncu", action="store_true")
    a = ap.parse_args()
    if a.child is not None:
        child(a.child)
        return 0
    import cupy as cp
    import numpy as np

    data = common.cupy_header(cp, "redlines-1")
    data["how"] = __doc__
    mod = _module(cp)
    buf = _buffer(cp)
    rows = []
    for case in CASES:
        lines, gap, wpl, spread = case
        row = {"lines": lines, "gap_bytes": 4 * gap, "words_per_line": wpl, "spread": spread, "time_ns": {}}
        ok = True
        for rounds in (0, *ROUNDS):
            buf.fill(0)
            times = common.event_times_ns(cp, _launcher(cp, np, mod, buf, case, rounds), n=7)
            total = int(cp.asnumpy(buf).astype(np.int64).sum())
            ok = ok and total == 8 * GRID * BLOCK * rounds
            row["time_ns"][str(rounds)] = {"median": statistics.median(times), "min": min(times), "max": max(times)}
        row["total_ok"] = ok
        hi, lo = row["time_ns"][str(ROUNDS[1])]["median"], row["time_ns"][str(ROUNDS[0])]["median"]
        row["ns_per_round"] = (hi - lo) / (ROUNDS[1] - ROUNDS[0])
        rows.append(row)
        common.log(f"lines={lines} gap={4 * gap} wpl={wpl} spread={spread}: {row['ns_per_round']:.0f} ns a round "
                   f"ok={ok}")
    data["red_lines"] = rows
    # red_contention.cu's cases these repeat (H100: redcontention-2026-11-28.json)
    old = cp.RawModule(code=(HERE / "red_contention.cu").read_text(), options=("-std=c++17",))
    red = old.get_function("red_words")
    again = []
    for words, stride in ((1, 1), (32, 1), (256, 1), (32, 32), (256, 32)):
        row = {"words": words, "stride_words": stride, "time_ns": {}}
        for rounds in (0, *ROUNDS):
            def launch(words=words, stride=stride, rounds=rounds):
                red((GRID,), (BLOCK,), (buf, np.int32(words), np.int32(stride), np.int32(rounds)))
            times = common.event_times_ns(cp, launch, n=7)
            row["time_ns"][str(rounds)] = {"median": statistics.median(times), "min": min(times), "max": max(times)}
        hi, lo = row["time_ns"][str(ROUNDS[1])]["median"], row["time_ns"][str(ROUNDS[0])]["median"]
        row["ns_per_round"] = (hi - lo) / (ROUNDS[1] - ROUNDS[0])
        again.append(row)
        common.log(f"red_words words={words} stride={stride}: {row['ns_per_round']:.0f} ns a round")
    data["red_words"] = again
    ncu = None if a.skip_ncu else common.find_ncu()
    prof = []
    if ncu:
        data["ncu_version"] = common.ncu_version(ncu)
        for i, case in enumerate(NCU_CASES):
            row = {"lines": case[0], "gap_bytes": 4 * case[1], "words_per_line": case[2], "spread": case[3],
                   "rounds": 4}
            rep = Path(tempfile.mkdtemp(prefix="ncu_red_")) / f"case{i}"
            got, _u, _t, dropped, logtxt = common.run_ncu(ncu, NCU_METRICS, "^red_lines$",
                                                          [sys.executable, __file__, "--child", str(i)], rep, 300)
            row["ncu"] = common.metric_values(got[0] if got else None, NCU_METRICS)
            row["ncu_dropped"] = dropped
            if not got:
                row["ncu_log_tail"] = logtxt[-2000:]
            prof.append(row)
            common.log(f"ncu case {case}: {row['ncu']}")
    data["ncu_cases"] = prof
    common.write_json(Path(a.out), data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
