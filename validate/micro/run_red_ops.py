"""Global atomics by operation: what one request costs the L2 (integer or float add; the value unused, RED, or read,
ATOMG), by the words it carries, and what requests to adjacent lines cost together.

    python3 validate/micro/run_red_ops.py --out validate/measurements/h200/redops-2026-11-28.json

validate/micro/red_ops.cu: grid 1056 x 256 (8 CTAs per SM). Per kernel (red_u32, red_f32, atom_u32, atom_f32) the
cases: one line with every lane on one word (32 requests an instruction); one line, 32 distinct words (one request of
32 words); one line, 4 lanes on 4 words (one request of 4 words); 8 adjacent lines, each warp on one line with 32
words (mode 0); 8 adjacent lines, each instruction on all 8 with 4 words each (mode 1: a uniform histogram's 256
bins). A case's cost is the difference between 16 and 4 rounds over 12 (launch and ramp cancel), per round (one
atomic a taking-part thread). CUDA events around single launches (the first a warm-up), median of 7; totals checked
(integer sums exactly, float sums to the exact integer they reach). With ncu (--clock-control none), one launch of the
integer and float one-word cases: L2 requests against warp instructions.
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
WARPS = GRID * BLOCK // 32
ROUNDS = (4, 16)
KERNELS = ("red_u32", "red_f32", "atom_u32", "atom_f32")
CASES = (  # (name, lines, gap words, words per line, active lanes, mode)
    ("one_word", 1, 0, 1, 32, 0),
    ("line_32_words", 1, 0, 32, 32, 0),
    ("line_4_words", 1, 0, 4, 4, 0),
    ("8_lines_32_words", 8, 32, 32, 32, 0),
    ("8_lines_4_words_each", 8, 32, 4, 32, 1),
)
NCU_CASES = (("red_u32", 0), ("red_f32", 0), ("atom_u32", 0), ("red_u32", 4), ("red_f32", 4))
NCU_METRICS = ("gpu__time_duration.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
               "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "lts__t_requests_op_red.sum",
               "lts__t_requests_op_atom.sum", "lts__t_sectors_op_red.sum", "lts__t_sectors_op_atom.sum",
               "lts__cycles_elapsed.avg.per_second", "sm__cycles_elapsed.avg.per_second")


def _launcher(np, fn, buf, sink, case, rounds):
    _, lines, gap, wpl, active, mode = case

    def launch():
        fn((GRID,), (BLOCK,), (buf, sink, np.int32(lines), np.int64(gap), np.int32(wpl), np.int32(active),
                               np.int32(mode), np.int32(rounds)))
    return launch


def _setup(cp):
    mod = cp.RawModule(code=(HERE / "red_ops.cu").read_text(), options=("-std=c++17",))
    return mod, cp.zeros(1024, dtype=cp.uint32), cp.zeros(4, dtype=cp.uint32)


def child(i: int) -> None:
    import cupy as cp
    import numpy as np

    mod, buf, sink = _setup(cp)
    name, c = NCU_CASES[i]
    _launcher(np, mod.get_function(name), buf, sink, CASES[c], 4)()
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

    data = common.cupy_header(cp, "redops-1")
    data["how"] = __doc__
    mod, buf, sink = _setup(cp)
    rows = []
    for name in KERNELS:
        fn = mod.get_function(name)
        for case in CASES:
            cname, lines, gap, wpl, active, mode = case
            row = {"kernel": name, "case": cname, "lines": lines, "gap_bytes": 4 * gap, "words_per_line": wpl,
                   "active_lanes": active, "mode": mode, "time_ns": {}}
            ok = True
            for rounds in (0, *ROUNDS):
                buf.fill(0)
                times = common.event_times_ns(cp, _launcher(np, fn, buf, sink, case, rounds), n=7)
                got = cp.asnumpy(buf.view(cp.float32) if name.endswith("f32") else buf).astype(np.float64).sum()
                want = 8 * WARPS * active * rounds  # eight launches (a warm-up and seven)
                # a float32 word summing ones stops being exact past 2^24: there, within its rounding
                ok = ok and (got == want or name.endswith("f32") and abs(got - want) <= 0.01 * want)
                row["time_ns"][str(rounds)] = {"median": statistics.median(times), "min": min(times),
                                               "max": max(times)}
            row["total_ok"] = bool(ok)
            hi, lo = row["time_ns"][str(ROUNDS[1])]["median"], row["time_ns"][str(ROUNDS[0])]["median"]
            row["ns_per_round"] = (hi - lo) / (ROUNDS[1] - ROUNDS[0])
            row["ns_per_warp_instruction_chip"] = row["ns_per_round"] / WARPS
            rows.append(row)
            common.log(f"{name} {cname}: {row['ns_per_round']:.0f} ns a round, "
                       f"{row['ns_per_warp_instruction_chip']:.3f} ns a warp instruction, ok={ok}")
    data["cases"] = rows
    ncu = None if a.skip_ncu else common.find_ncu()
    prof = []
    if ncu:
        data["ncu_version"] = common.ncu_version(ncu)
        for i, (name, c) in enumerate(NCU_CASES):
            row = {"kernel": name, "case": CASES[c][0], "rounds": 4}
            rep = Path(tempfile.mkdtemp(prefix="ncu_redops_")) / f"case{i}"
            got, _u, _t, dropped, logtxt = common.run_ncu(ncu, NCU_METRICS, f"^{name}$",
                                                          [sys.executable, __file__, "--child", str(i)], rep, 300)
            row["ncu"] = common.metric_values(got[0] if got else None, NCU_METRICS)
            row["ncu_dropped"] = dropped
            if not got:
                row["ncu_log_tail"] = logtxt[-2000:]
            prof.append(row)
            common.log(f"ncu {name} {CASES[c][0]}: {row['ncu']}")
    data["ncu_cases"] = prof
    common.write_json(Path(a.out), data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
