"""Local memory in the L1 and the L2 (register spills, arrays indexed at run time), on the H100.

    python3 validate/micro/run_local_frames.py --out validate/measurements/h100/localframes-2026-11-28.json

validate/micro/local_frames.cu: each thread stores a FRAME-float array (16..256 floats: 64 B .. 1 KiB a thread) and
reads it back ROUNDS times, permuted; 256 threads a CTA, a grid of 4 waves of 8 CTAs an SM (or of 2 CTAs an SM with
96 KiB of dynamic shared memory each, which leaves the L1 about 32 KiB). Per case: the median of 10 CUDA-event
launches, and one launch under ncu (--clock-control none): local-memory requests, sectors and L1 hit rates, the L2's
lookups and hit rate, DRAM bytes. Then, under ncu, the shared-memory carveout the driver configures for launches of
4 B .. 200 KiB of dynamic shared memory a CTA (launch__shared_mem_config_size).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

N = 1 << 20
CASES = [(frame, rounds, smem) for smem in (0, 96 << 10) for frame in (16, 32, 64, 128, 256) for rounds in (1,)] + \
    [(64, 4, 0), (64, 4, 96 << 10)]
METRICS = [
    "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sector_hit_rate.pct",
    "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum", "l1tex__t_sector_hit_rate.pct",
    "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    "l1tex__t_sector_pipe_lsu_mem_local_op_ld_hit_rate.pct", "l1tex__t_sector_pipe_lsu_mem_local_op_st_hit_rate.pct",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct",
    "l1tex__data_pipe_lsu_wavefronts_mem_lg.sum", "smsp__inst_executed.sum", "launch__registers_per_thread",
    "launch__occupancy_limit_shared_mem", "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
]


# --set 2: what else sets the local hit rate, one wave each (grid = SMs x CTAs an SM, placed breadth first): the warps
# an SM at one L1 size (2 CTAs, smem 4 B), four CTAs with 48 KiB (the L1 of the two-CTA 96 KiB series), and one wave of
# the 8-CTA series: (frame floats, dynamic smem bytes, CTAs an SM)
CASES2 = [(f, 4, 2) for f in (128, 256, 512)] + [(f, 48 << 10, 4) for f in (16, 32, 64)] + [(64, 4, 8)]


def build(cp, frame: int, rounds: int):
    src = (HERE / "local_frames.cu").read_text()
    return cp.RawModule(code=src, options=("-std=c++17", f"-DFRAME={frame}", f"-DROUNDS={rounds}")) \
        .get_function("local_frames")


def launch_args(cp, sms: int, smem: int):
    ctas_per_sm = 8 if smem == 0 else 2
    grid = sms * ctas_per_sm * 4
    x = cp.random.uniform(-1, 1, N).astype(cp.float32)
    y = cp.zeros(grid * 256, dtype=cp.float32)
    return grid, (x, y, cp.int32(N))


CARVEOUT_SMEM = (4, 8 << 10, 24 << 10, 40 << 10, 48 << 10, 64 << 10, 72 << 10, 96 << 10, 110 << 10, 150 << 10,
                 200 << 10)  # dynamic shared memory per CTA: what carveout does the driver give each?


def carveout_child() -> None:
    import cupy as cp

    f = build(cp, 16, 1)
    f.max_dynamic_shared_size_bytes = 227 << 10
    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    for smem in CARVEOUT_SMEM:
        grid, args = launch_args(cp, sms, 0)
        f((grid,), (256,), args, shared_mem=smem)
        cp.cuda.runtime.deviceSynchronize()


def set2_child() -> None:
    import cupy as cp

    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    for frame, smem, ctas in CASES2:
        f = build(cp, frame, 1)
        f.max_dynamic_shared_size_bytes = max(smem, 4)
        _, args = launch_args(cp, sms, 0)
        y = cp.zeros(sms * ctas * 256, dtype=cp.float32)
        f((sms * ctas,), (256,), (args[0], y, args[2]), shared_mem=max(smem, 4))
        cp.cuda.runtime.deviceSynchronize()


def set2(a, cp, res, sms, ncu) -> None:
    import tempfile

    rows = res["results"].setdefault("one_wave", {"rows": []})["rows"]
    for frame, smem, ctas in CASES2:
        f = build(cp, frame, 1)
        f.max_dynamic_shared_size_bytes = max(smem, 4)
        _, args = launch_args(cp, sms, 0)
        y = cp.zeros(sms * ctas * 256, dtype=cp.float32)
        ts = common.event_times_ns(cp, lambda f=f, y=y, args=args, smem=smem, ctas=ctas: f(
            (sms * ctas,), (256,), (args[0], y, args[2]), shared_mem=max(smem, 4)), n=10)
        rows.append({"frame_floats": frame, "smem_bytes": smem, "ctas_per_sm": ctas, "grid": sms * ctas,
                     "block": 256, "registers": int(f.attributes["num_regs"]), "time_ns": common.summarize(ts)})
    if ncu:
        wanted = METRICS + ["launch__shared_mem_config_size"]
        rep = Path(tempfile.mkdtemp(prefix="ncu_set2_")) / "set2"
        got_rows, _u, _t, dropped, logtxt = common.run_ncu(ncu, wanted, "^local_frames$",
                                                           [*common.python_cmd(), __file__, "--child", "2"], rep, 300)
        for row, r in zip(rows, got_rows, strict=False):
            row["ncu"] = common.metric_values(r, wanted)
        if not got_rows:
            res["one_wave_ncu_log"] = logtxt[-3000:]
    for r in rows:
        n = r.get("ncu", {})
        common.log(f"one wave: frame={r['frame_floats']} smem={r['smem_bytes']} ctas/SM={r['ctas_per_sm']}: "
                   f"{r['time_ns']['median'] / 1e3:.1f} us, LDL hit "
                   f"{n.get('l1tex__t_sector_pipe_lsu_mem_local_op_ld_hit_rate.pct')}%, carveout "
                   f"{n.get('launch__shared_mem_config_size')}")
    common.write_json(Path(a.out), res)


def child(case: int) -> None:
    import cupy as cp

    if case == 1:
        carveout_child()
        return
    if case == 2:
        set2_child()
        return
    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    for frame, rounds, smem in CASES:
        f = build(cp, frame, rounds)
        if smem:
            f.max_dynamic_shared_size_bytes = smem
        grid, args = launch_args(cp, sms, smem)
        f((grid,), (256,), args, shared_mem=max(smem, 4))
        cp.cuda.runtime.deviceSynchronize()


def main() -> int:
    got = common.child_or_main(__doc__, "local_frames", child)
    if got is None:
        return 0
    a, cp, np, res, sms, ncu = got
    res["how"] = __doc__
    if Path(a.out).name.startswith("localframes-wave"):  # the one-wave set alone (CASES2)
        set2(a, cp, res, sms, ncu)
        return 0
    rows = res["results"]["local_frames"]["rows"]
    for frame, rounds, smem in CASES:
        f = build(cp, frame, rounds)
        if smem:
            f.max_dynamic_shared_size_bytes = smem
        grid, args = launch_args(cp, sms, smem)
        ts = common.event_times_ns(cp, lambda: f((grid,), (256,), args, shared_mem=max(smem, 4)), n=10)
        row = {"frame_floats": frame, "rounds": rounds, "smem_bytes": smem, "grid": grid, "block": 256,
               "registers": int(f.attributes["num_regs"]), "local_bytes": int(f.attributes["local_size_bytes"]),
               "time_ns": common.summarize(ts)}
        rows.append(row)
        common.log(f"frame={frame} rounds={rounds} smem={smem}: {row['time_ns']['median'] / 1e3:.1f} us, "
                   f"{row['local_bytes']} B local")
    import tempfile

    if ncu:
        rep = Path(tempfile.mkdtemp(prefix="ncu_local_")) / "local"
        got_rows, _u, _t, dropped, logtxt = common.run_ncu(ncu, METRICS, "^local_frames$",
                                                           [*common.python_cmd(), __file__, "--child", "0"], rep, 300)
        for row, r in zip(rows, got_rows, strict=False):
            row["ncu"] = common.metric_values(r, METRICS)
        res["ncu_dropped"] = dropped
        if not got_rows:
            res["ncu_log_tail"] = logtxt[-3000:]
    if ncu:  # the shared-memory carveout the driver configures per launch (ncu: launch__shared_mem_config_size)
        wanted = ["launch__shared_mem_config_size", "launch__occupancy_limit_shared_mem", "launch__shared_mem_per_block",
                  "launch__occupancy_limit_registers", "launch__occupancy_limit_warps", "launch__waves_per_multiprocessor"]
        rep = Path(tempfile.mkdtemp(prefix="ncu_carve_")) / "carve"
        got_rows, _u, _t, dropped, logtxt = common.run_ncu(ncu, wanted, "^local_frames$",
                                                           [*common.python_cmd(), __file__, "--child", "1"], rep, 300)
        res["results"]["carveout"] = {"rows": [{"smem_per_cta_bytes": smem, "ncu": common.metric_values(r, wanted)}
                                               for smem, r in zip(CARVEOUT_SMEM, got_rows, strict=False)],
                                      "dropped": dropped}
        for row in res["results"]["carveout"]["rows"]:
            common.log(f"carveout: {row}")
    common.write_json(Path(a.out), res)
    for r in rows:
        n = r.get("ncu", {})
        common.log(f"frame={r['frame_floats']} rounds={r['rounds']} smem={r['smem_bytes']}: "
                   f"{r['time_ns']['median'] / 1e3:.1f} us, LDL hit {n.get('l1tex__t_sector_pipe_lsu_mem_local_op_ld_hit_rate.pct')}"
                   f"%, L2 hit {n.get('lts__t_sector_hit_rate.pct')}%, DRAM r/w {n.get('dram__bytes_read.sum')}/"
                   f"{n.get('dram__bytes_write.sum')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
