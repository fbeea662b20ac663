"""Shared-memory atomics and global reductions on the H100: cycles or ns per warp instruction by address pattern.

    python3 validate/micro/run_atomics.py --out validate/measurements/h100/atomics-2026-11-27.json [--skip-ncu]

(``validate/run_irregular.py`` runs the same measurement into the ``micro`` section of its file.)

validate/micro/atomics.cu. Shared: one CTA per SM of 1 warp, 4 warps (one per SM sub-partition) or 32 warps (a full
SM); lane l of every warp works on word (l % k) * stride: k = 1..32 distinct addresses in k banks (stride 1) or in one
bank (stride 32), and 32 lanes in 32 banks and 32 rows (k = 32, stride 33). Three operations: ``atomicAdd(p, 1u)``
(ATOMS.POPC.INC, as in histogram.cu), ``atomicAdd(p, inc)`` with a run-time inc (ATOMS.ADD, as in
histogram_aggregated.cu) and a volatile store (STS). clock64 per warp around ``iters`` x 16 operations (the loop
closed by a __syncthreads): cycles per warp instruction for a warp, and for the SM (divided by the warps). Global:
``atomicAdd`` whose result is unused (REDG.E.ADD) from 8 CTAs of 256 threads per SM: every thread of the grid to one
word, each warp to its own 128-B line, each lane to its own word (32 consecutive words per warp), random words over
1 MiB and over 1 GiB; CUDA events around single launches sized to about 1 ms (median of 5): ns per warp instruction
for the whole chip and thread operations per second. Each case's total is checked. With ncu, one child run profiles
the 32-warp shared cases and the global cases once each (shared wavefronts and bank conflicts of op_atom / op_st,
L1 and L2 requests and sectors of op_red / op_atom).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

SMEM_KERNELS = ("smem_atom_inc", "smem_atom_add", "smem_sts")
SMEM_UNROLL = 16  # atomics.cu's SMEM_UNROLL
RED_UNROLL = 8  # atomics.cu's RED_UNROLL
SMEM_WARPS = (1, 4, 32)
SMEM_PATTERNS = [(k, 1) for k in (1, 2, 4, 8, 16, 32)] + [(k, 32) for k in (1, 2, 4, 8, 16, 32)] + [(32, 33)]
SMEM_ITERS = 128  # 2048 operations per warp
SMEM_NCU_ITERS = 16
SMEM_NCU_WARPS = 32
# (name, mode, mask in words): atomics.cu's red_pattern modes
RED_CASES = [("one_address", 0, 0), ("warp_line", 1, 0), ("lane_coalesced", 2, 0),
             ("random_1MiB", 3, (1 << 18) - 1), ("random_1GiB", 3, (1 << 28) - 1)]
RED_BUF_WORDS = 1 << 28  # 1 GiB: the largest span
RED_CTAS_PER_SM, RED_THREADS = 8, 256
RED_TARGET_NS = 1e6  # each timed launch about 1 ms
RED_MAX_ITERS = 512  # one-address total stays below 2**32: 132 * 2048 threads * 512 * 8 < 2**32
RED_TIMED = 5
NCU_REGEX = "^(smem_atom_inc|smem_atom_add|smem_sts|red_pattern)$"
NCU_METRICS = [
    "gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "lts__cycles_elapsed.avg.per_second",
    "smsp__inst_executed.sum", "smsp__inst_executed_op_shared_atom.sum", "smsp__inst_executed_op_shared_st.sum",
    "smsp__inst_executed_op_global_red.sum", "smsp__sass_inst_executed_op_shared_atom.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
    "lts__t_requests_op_red.sum", "lts__t_sectors_op_red.sum", "lts__t_requests_op_atom.sum",
    "lts__t_sectors_op_atom.sum", "lts__t_sector_op_red_hit_rate.pct", "dram__bytes_read.sum", "dram__bytes_write.sum",
    "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
]


def build(cp: Any) -> dict[str, Any]:
    mod = cp.RawModule(code=(HERE / "atomics.cu").read_text(), options=("-std=c++17",))
    return {n: mod.get_function(n) for n in (*SMEM_KERNELS, "red_pattern")}


def smem_cases() -> list[tuple[str, int, int, int]]:
    """(kernel, warps per CTA, k, stride) in measuring order."""
    return [(kern, w, k, s) for kern in SMEM_KERNELS for w in SMEM_WARPS for k, s in SMEM_PATTERNS]


def smem_expected_total(kernel: str, warps: int, k: int, iters: int, inc: int = 1) -> int:
    """What thread 0 of each CTA sums over the array (mod 2**32): every atomic adds 1 (inc); the stores leave
    inc + 15 (the last unrolled store) in each of the k words."""
    if kernel == "smem_sts":
        return (k * (inc + SMEM_UNROLL - 1)) % (1 << 32)
    return (warps * 32 * iters * SMEM_UNROLL * inc) % (1 << 32)


def smem_launch(cp: Any, np: Any, f: Any, sms: int, warps: int, k: int, stride: int, iters: int) -> tuple[Any, Any]:
    """One launch, one CTA per SM: (per-warp (t0, t1, SM id) records, per-CTA array totals) as NumPy arrays."""
    rec = cp.zeros(sms * warps * 3, dtype=cp.int64)
    out = cp.zeros(sms, dtype=cp.uint32)
    f((sms,), (32 * warps,), (np.int32(k), np.int32(stride), np.int32(iters), np.uint32(1), rec, out))
    cp.cuda.runtime.deviceSynchronize()
    return cp.asnumpy(rec).reshape(-1, 3), cp.asnumpy(out)


def smem_row(kernel: str, warps: int, k: int, stride: int, iters: int, runs: list[tuple[Any, Any]],
             np: Any) -> dict[str, Any]:
    """The row of one shared case from its recorded launches."""
    per_launch = [float(np.median(r[:, 1] - r[:, 0])) for r, _ in runs]
    cycles = statistics.median(per_launch)
    ops = iters * SMEM_UNROLL
    want = smem_expected_total(kernel, warps, k, iters)
    ok = all(bool((tot == want).all()) for _, tot in runs)
    banks = len({(lane % k) * stride % 32 for lane in range(32)})
    sms_used = min(len(np.unique(r[:, 2])) for r, _ in runs)  # one CTA per SM, as meant, when this is the grid
    return {"kernel": kernel, "warps_per_sm": warps, "k": k, "stride_words": stride, "distinct_addresses": k,
            "distinct_banks": banks, "iters": iters, "ops_per_warp": ops, "cycles_median": cycles,
            "cycles_per_launch": per_launch, "cycles_per_warp_instr": cycles / ops,
            "sm_cycles_per_warp_instr": cycles / (ops * warps), "total_ok": ok, "distinct_sms": sms_used}


def red_grid(sms: int) -> tuple[int, int]:
    return sms * RED_CTAS_PER_SM, RED_THREADS


def red_launch(cp: Any, np: Any, f: Any, buf: Any, sms: int, mode: int, mask: int, iters: int) -> None:
    grid, block = red_grid(sms)
    f((grid,), (block,), (buf, np.int32(mode), np.int32(iters), np.uint32(mask), np.uint32(1)))


def red_iters_for(t_one_ns: float) -> int:
    """Iterations (x RED_UNROLL reductions per thread) for a launch of about RED_TARGET_NS, from the time of one."""
    return int(min(RED_MAX_ITERS, max(1, round(RED_TARGET_NS / max(t_one_ns, 1.0)))))


def red_row(name: str, mode: int, mask: int, iters: int, sms: int, times_ns: list[float],
            ok: bool) -> dict[str, Any]:
    grid, block = red_grid(sms)
    threads = grid * block
    warp_instr = threads // 32 * iters * RED_UNROLL
    t = statistics.median(times_ns)
    return {"case": name, "mode": mode, "span_words": (mask + 1) if mode == 3 else None, "grid": grid, "block": block,
            "iters": iters, "reds_per_thread": iters * RED_UNROLL, "warp_instructions": warp_instr,
            "time_ns": common.summarize(times_ns), "ns_per_warp_instr_chip": t / warp_instr,
            "warp_instr_per_ns_chip": warp_instr / t, "thread_ops_per_s": threads * iters * RED_UNROLL / t * 1e9,
            "total_ok": ok}


def measure(cp: Any, np: Any, sms: int, log: Callable[[str], None] = common.log) -> dict[str, Any]:
    """Every shared and global case, timed and checked: the ``micro`` section's content (without ncu)."""
    fs = build(cp)
    shared = []
    for kern, w, k, s in smem_cases():
        smem_launch(cp, np, fs[kern], sms, w, k, s, 2)  # warm-up (instruction cache, CTA launch)
        runs = [smem_launch(cp, np, fs[kern], sms, w, k, s, SMEM_ITERS) for _ in range(3)]
        row = smem_row(kern, w, k, s, SMEM_ITERS, runs, np)
        shared.append(row)
    for w in SMEM_WARPS:
        log(f"shared, {w} warps/SM, SM cycles per warp instruction (atom_inc / atom_add / sts) by (k, stride): " +
            ", ".join(f"({k},{s}) " + "/".join(f"{r['sm_cycles_per_warp_instr']:.2f}" for r in shared
                                               if r["warps_per_sm"] == w and r["k"] == k and r["stride_words"] == s)
                      for k, s in SMEM_PATTERNS))
    f = fs["red_pattern"]
    buf = cp.zeros(RED_BUF_WORDS, dtype=cp.uint32)
    grid, block = red_grid(sms)
    reds = []
    for name, mode, mask in RED_CASES:
        red_launch(cp, np, f, buf, sms, mode, mask, 1)  # warm-up
        one = common.event_times_ns(cp, partial(red_launch, cp, np, f, buf, sms, mode, mask, 1), n=3, warmup=False)
        iters = red_iters_for(statistics.median(one))
        buf.fill(0)
        red_launch(cp, np, f, buf, sms, mode, mask, iters)
        cp.cuda.runtime.deviceSynchronize()
        ok = int(cp.sum(buf, dtype=cp.uint64)) == grid * block * iters * RED_UNROLL
        ts = common.event_times_ns(cp, partial(red_launch, cp, np, f, buf, sms, mode, mask, iters), n=RED_TIMED,
                                   warmup=False)
        row = red_row(name, mode, mask, iters, sms, ts, ok)
        row["one_iter_time_ns"] = common.summarize(one)
        reds.append(row)
        log(f"RED {name}: {row['ns_per_warp_instr_chip']:.4f} ns per warp instruction (chip), "
            f"{row['thread_ops_per_s'] / 1e9:.1f} G ops/s, iters {iters}, total ok {ok}")
    buf = None
    cp.get_default_memory_pool().free_all_blocks()
    return {"how": __doc__.split("\n\n", 2)[2].strip(),
            "shared": {"unit": "clock64 cycles; cycles_per_warp_instr: one warp's loop over its operations; "
                               "sm_cycles_per_warp_instr: divided by the warps per SM (the SM's rate)",
                       "rows": shared},
            "global_red": {"unit": "CUDA-event ns of whole launches; ns_per_warp_instr_chip: over all warp "
                                   "instructions of the grid", "rows": reds}}


def ncu_plan() -> list[tuple[str, tuple]]:
    """The launches the ncu child makes, in order: (kernel, case)."""
    plan: list[tuple[str, tuple]] = [(kern, (w, k, s)) for kern, w, k, s in smem_cases() if w == SMEM_NCU_WARPS]
    plan += [("red_pattern", (name, mode, mask)) for name, mode, mask in RED_CASES]
    return plan


def ncu_child(cp: Any, np: Any, sms: int) -> None:
    """One launch of each profiled case (short: the counts per instruction do not depend on the length)."""
    fs = build(cp)
    buf = cp.zeros(RED_BUF_WORDS, dtype=cp.uint32)
    for kern, case in ncu_plan():
        if kern == "red_pattern":
            _, mode, mask = case
            red_launch(cp, np, fs[kern], buf, sms, mode, mask, 1)
        else:
            w, k, s = case
            smem_launch(cp, np, fs[kern], sms, w, k, s, SMEM_NCU_ITERS)
    cp.cuda.runtime.deviceSynchronize()


def attach_ncu(micro: dict[str, Any], rows: list[dict[str, Any] | None], metrics: list[str], sms: int) -> None:
    """ncu's values (plan order) into the micro rows, with per-instruction ratios."""
    shared = {(r["kernel"], r["warps_per_sm"], r["k"], r["stride_words"]): r for r in micro["shared"]["rows"]}
    reds = {r["case"]: r for r in micro["global_red"]["rows"]}
    grid, block = red_grid(sms)
    for (kern, case), row in zip(ncu_plan(), rows, strict=True):
        vals = {m: v for m, v in common.metric_values(row, metrics).items() if _finite(v)}
        if kern == "red_pattern":
            target = reds.get(case[0])
            instr = grid * block // 32 * 1 * RED_UNROLL
            per = {"ncu_iters": 1, "warp_instructions_profiled": instr}
            for m in ("lts__t_requests_op_red.sum", "lts__t_sectors_op_red.sum",
                      "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
                      "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"):
                if m in vals:
                    per[m.replace(".sum", "") + "_per_warp_instr"] = vals[m] / instr
        else:
            w, k, s = case
            target = shared.get((kern, w, k, s))
            instr = sms * w * SMEM_NCU_ITERS * SMEM_UNROLL
            per = {"ncu_iters": SMEM_NCU_ITERS, "warp_instructions_profiled": instr}
            op = "st" if kern == "smem_sts" else "atom"
            for m in (f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum",
                      f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"):
                if m in vals:
                    per[m.replace(".sum", "") + "_per_warp_instr"] = vals[m] / instr
        if target is not None:
            target["ncu"] = vals
            target |= per


def _finite(v: Any) -> bool:
    import math

    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def profile(ncu: str, avail: set[str], script: str, child_flag: list[str], work: Path,
            timeout: float) -> tuple[list, list, str]:
    """ncu over ``script *child_flag`` (which runs :func:`ncu_child`), the metrics of NCU_METRICS that ``avail`` (ncu's
    list) holds: (rows in plan order, metrics asked, log)."""
    present, _missing = common.split_available(NCU_METRICS, avail)
    rows, _, _, dropped, nlog = common.run_ncu(ncu, present, NCU_REGEX, [*common.python_cmd(), script, *child_flag],
                                               work, timeout=timeout)
    asked = [m for m in present if m not in dropped]
    return common.assign_rows(rows, [k for k, _ in ncu_plan()]), asked, nlog


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--skip-ncu", action="store_true")
    ap.add_argument("--ncu-child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    if a.ncu_child:
        ncu_child(cp, np, sms)
        return 0
    if not a.out:
        ap.error("--out is required")
    out = Path(a.out)
    res = common.cupy_header(cp, "micro-1") | {"results": {}}
    res["results"]["atomics"] = measure(cp, np, sms)
    common.write_json(out, res)
    ncu = None if a.skip_ncu else common.find_ncu()
    if ncu:
        avail, _ = common.ncu_available_metrics(ncu)
        rows, asked, nlog = profile(ncu, avail, str(Path(__file__).resolve()), ["--ncu-child"],
                                    out.parent / "atomics-ncu" / "atomics", 300)
        attach_ncu(res["results"]["atomics"], rows, asked, sms)
        out.with_name(out.stem + "-ncu-log.txt").write_text(nlog[-200000:])
        common.write_json(out, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
